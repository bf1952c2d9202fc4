"""Count import lines that run upward in the stack, and the import circles, in a source tree (issue 23).

usage: python benchmarks/count_imports.py ROOT old|new  — ``old`` maps the layout before issue 23 (gp/search inside gp,
evaluation/experiments, cli.py; e.g. a worktree of 24c0eb0) onto the stack of the README's Layout section; ``new`` reads
the ggp_automl layout (ROOT = the checkout). Every import statement counts, those inside functions too (as grimp counts
them). CI checks the same with lint-imports and tests/test_architecture.py."""
import ast, sys, pathlib, collections
import networkx as nx
root, kind = pathlib.Path(sys.argv[1]), sys.argv[2]
ORDER = ["gp", "spaces", "evaluation", "search", "results", "experiments", "commands", "cli"]
def layer(mod):
    parts = mod.split(".")
    if kind == "new":
        if parts[0] != "ggp_automl" or len(parts) < 2: return None
        parts = parts[1:]
        return parts[0] if parts[0] in ORDER else None
    if parts[0] == "gp" and len(parts) > 1 and parts[1] in ("search", "automl"):
        if len(parts) > 2 and parts[2] in ("report", "render"): return "results"
        return "search"
    if parts[0] == "evaluation" and len(parts) > 1 and parts[1] == "experiments": return "experiments"
    if parts[0] == "cli": return "commands"
    return parts[0] if parts[0] in ORDER else None
files = [p for p in root.rglob("*.py") if not any(x in p.parts for x in ("tests", "benchmarks", "docs", ".venv", "build"))]
def modname(p):
    rel = p.relative_to(root).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__": parts = parts[:-1]
    return ".".join((["ggp_automl"] if kind == "new" else []) + parts)
mods = {modname(p): p for p in files}
G = nx.DiGraph(); up = collections.Counter(); examples = []
for m, p in mods.items():
    is_pkg = p.name == "__init__.py"
    for node in ast.walk(ast.parse(p.read_text())):
        targets = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = m.split(".") if is_pkg else m.split(".")[:-1]
            if node.level:
                base = base[:len(base) - node.level + 1]
                prefix = ".".join(base + ([node.module] if node.module else []))
            else:
                prefix = node.module
            targets = [prefix + "." + a.name if (prefix + "." + a.name) in mods else prefix for a in node.names]
        for t in set(targets):
            while t and t not in mods: t = t.rpartition(".")[0]
            if not t or t == m: continue
            G.add_edge(m, t)
            a, b = layer(m), layer(t)
            if a and b and ORDER.index(b) > ORDER.index(a):
                up[(a, b)] += 1; examples.append(f"{m} -> {t} (l.{node.lineno})")
sccs = [c for c in nx.strongly_connected_components(G) if len(c) > 1]
print(f"{kind}: {len(mods)} modules; upward import lines {sum(up.values())} {dict(up)}; import circles {len(sccs)}")
for c in sorted(sccs, key=len, reverse=True): print("  circle of", len(c), sorted(c)[:6], "…" if len(c) > 6 else "")
