"""The report of an experiment: the tables, tests and figures the field prints, in Markdown and LaTeX.

Why this shape: the Auto-MEKA thesis and the PBIL-Auto-Ens paper report each measure as a
table of datasets × methods (mean ± sd over the folds, the best in bold) with the average ranks,
then the Friedman test (with Iman–Davenport's F) and, when it rejects, the Nemenyi post-hoc test
drawn as a critical-difference diagram. A reader of our report can set it beside theirs. Beside
the measures it says what the numbers cost (evaluations per minute, failures, time against the
budget) and how the searches got there (anytime curves), because two methods with one final
number can differ completely in how soon they reach it.

Ranks are computed per dataset on the mean over its folds and seeds (the thesis's blocks);
``blocks="fold"`` ranks each (dataset, fold, seed) instead, for grids with few datasets.
A grid with both tasks is reported per task: their measures differ.
"""
from __future__ import annotations

import datetime as _dt
import re
from itertools import combinations
from pathlib import Path

import numpy as np

from ..evaluation.task import TASK_CLASSES
from .curves import anytime_png
from .stats import cd_diagram_png, rank_test, wilcoxon_test
from .tables import cell_table, effort_table, latex_table, markdown_table, value_of
from .collect import collect, read_manifest


def make_report(experiment_dir: str | Path, out: str | Path | None = None, measures: tuple[str, ...] = (),
                alpha: float = 0.05, blocks: str | None = None) -> Path:
    """Write ``report.md``, ``report.tex`` and the figures into ``out`` (default ``EXPERIMENT_DIR/report``).

    ``measures`` and ``blocks`` default to the experiment file's ``[report]`` table, then to each
    task's :attr:`~evaluation.task.Task.report_measures` and "dataset"."""
    experiment_dir = Path(experiment_dir)
    manifest = read_manifest(experiment_dir)
    settings = manifest.get("report") or {}
    measures = tuple(measures) or tuple(settings.get("measures") or ())
    blocks = blocks or settings.get("blocks") or "dataset"
    published = settings.get("published") or {}
    out = Path(out) if out is not None else experiment_dir / "report"
    out.mkdir(parents=True, exist_ok=True)
    records = collect(experiment_dir)
    done = [r for r in records if r["status"] == "done"]
    md = _header(experiment_dir, manifest, records)
    tex = ["% made by: python cli.py report " + str(experiment_dir), "% needs \\usepackage{booktabs}", ""]
    for task in [t for t in TASK_CLASSES.values() if any(r.get("task") == t.name for r in done)]:
        group = [r for r in records if r.get("task", task.name) == task.name or r["status"] != "done"]
        group = [r for r in group if r["dataset"] in {d["dataset"] for d in done if d.get("task") == task.name}]
        if len({r.get("task") for r in done}) > 1:
            md += [f"## {task.title.capitalize()} datasets", ""]
        for measure in measures or task.report_measures:
            sec_md, sec_tex = _measure_section(group, measure, "test", alpha, blocks, out, task.name, published)
            md += sec_md
            tex += sec_tex
        sec_md, sec_tex = _measure_section(group, "fitness", "valid", alpha, blocks, out, task.name)
        md += sec_md
        tex += sec_tex
    md += _curves_section(records, manifest, out)
    md += ["## What the runs cost", "", "Per compared configuration, over all its runs: search evaluations, "
           "their failures (errors, timeouts, memory), and the run's time against its budget "
           "(the budget includes the final re-evaluation and refit).", "",
           effort_table([r for r in records if r["status"] in ("done", "failed")]), ""]
    md += _failures(records)
    (out / "report.md").write_text("\n".join(md) + "\n", encoding="utf-8")
    (out / "report.tex").write_text("\n".join(tex) + "\n", encoding="utf-8")
    return out / "report.md"


def _header(experiment_dir: Path, manifest: dict, records: list[dict]) -> list[str]:
    states = [r["status"] for r in records]
    configs = list(dict.fromkeys(r["config"] for r in records))
    datasets = list(dict.fromkeys(r["dataset"] for r in records))
    return [f"# Experiment {manifest['name']}", "",
            f"Made by `python cli.py bench {_shown(manifest['source'])}` and `python cli.py report "
            f"{_shown(experiment_dir)}` "
            f"({_dt.date.today().isoformat()}).", "",
            f"- budget per run: {manifest['budget']}, {manifest['workers']} evaluation worker(s) per run, "
            f"{manifest['parallel']} run(s) at a time",
            f"- compared: {', '.join(configs)}",
            f"- datasets: {', '.join(datasets)}",
            f"- runs: {len(records)} in the grid — {states.count('done')} done, {states.count('failed')} failed, "
            f"{states.count('unfinished')} unfinished (running or interrupted), {states.count('missing')} not run yet",
            *_not_done(records, manifest), ""]


def _not_done(records: list[dict], manifest: dict) -> list[str]:
    """The runs that did not finish, named, and how to finish them: the tables below hold only the others."""
    late = [r for r in records if r["status"] != "done"]
    if not late:
        return []
    shown = ", ".join(f"`{r['id']}` ({r['status']})" for r in late[:20])
    more = f" and {len(late) - 20} more" if len(late) > 20 else ""
    return [f"- not in the tables below: {shown}{more}; `python cli.py bench {_shown(manifest['source'])}` "
            "continues the unfinished ones and runs the missing ones"]


def _shown(path) -> str:
    """A path as a reader would type it here: relative to the working directory when it is below it."""
    import os

    relative = os.path.relpath(path)
    return str(path) if relative.startswith("..") else relative


def _measure_section(records: list[dict], measure: str, source: str, alpha: float, blocks: str, out: Path,
                     task: str, published: dict | None = None) -> tuple[list[str], list[str]]:
    table = cell_table(records, measure, source)
    if not table.cells:
        known = sorted({k for r in records if r["status"] == "done" for k in (r.get("test") or {})})
        return ([f"No run of this grid has a test measure `{measure}`"
                 + (f" (they have: {', '.join(known)})." if known else " (the runs have no test set)."), ""]
                if source == "test" else []), []
    hib = table.higher_is_better
    title = ("validation fitness of the returned model (its final re-evaluation)" if source == "valid"
             else f"test {measure} ({'higher' if hib else 'lower'} is better)")
    matrix, names = _blocks(records, table, measure, source, blocks)
    test = rank_test(matrix, names, higher_is_better=hib, alpha=alpha) if len(names) >= 2 else None
    ranks = test.average_ranks if test is not None else None
    slug = re.sub(r"[^A-Za-z0-9]+", "-", f"{task}-{source}-{measure}").strip("-")
    md = [f"### {title.capitalize()}", "", markdown_table(table, ranks=ranks)]
    if test is not None:
        md += _test_lines(test, blocks)
        if test.critical_difference is not None:
            png = cd_diagram_png(test, out / f"cd-{slug}.png", title=f"{measure} ({source})",
                                       blocks="datasets" if blocks == "dataset" else "runs")
            md += [f"![critical-difference diagram, {measure}]({png.name})", ""]
        md += _pairs(matrix, names, hib, alpha, test)
    if source == "test" and measure in (published or {}):
        md += _published(table, measure, published)
    caption = f"{title.capitalize()}: mean $\\pm$ sd over folds and seeds; best in bold"
    tex = [latex_table(table, caption, f"tab:{slug}", ranks=ranks), ""]
    return md, tex


def _blocks(records, table, measure, source, blocks) -> tuple[np.ndarray, list[str]]:
    """The block × config matrix the rank tests run on: datasets (means over folds and seeds) or runs."""
    names = list(table.configs)
    if blocks == "dataset":
        return table.block_matrix(), names
    cells: dict[tuple, dict] = {}
    for r in records:
        if r["status"] == "done":
            cells.setdefault((r["dataset"], r["fold"], r["seed"]), {})[r["config"]] = value_of(r, measure,
                                                                                                     source)
    rows = [[np.nan if row.get(c) is None else row[c] for c in names] for row in cells.values()]
    return np.asarray(rows, dtype=float).reshape(-1, len(names)), names


def _published(table, measure: str, published: dict) -> list[str]:
    """Our mean over the datasets and average rank (of ``table``) beside the published ones (the thesis
    prints exactly these two numbers per method), with the source's own words on where they come from."""
    names = [c for c in table.configs if c in published[measure]]
    if not names:
        return []
    matrix = table.block_matrix()[:, [table.configs.index(c) for c in names]]
    complete = matrix[~np.isnan(matrix).any(axis=1)]
    ranks = rank_test(complete, names, table.higher_is_better).average_ranks if len(complete) else {}
    ours = [f"{np.mean(complete[:, i]):.3f} ({ranks.get(c, float('nan')):.3f})" if len(complete) else "—"
            for i, c in enumerate(names)]
    theirs = [f"{published[measure][c][0]:.3f} ({published[measure][c][1]:.3f})" for c in names]
    return [f"Beside the published numbers — mean over datasets (average rank); ours over {len(complete)} "
            f"dataset(s) of this grid, theirs: {published['source']}", "",
            "| | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|",
            "| this grid | " + " | ".join(ours) + " |", "| published | " + " | ".join(theirs) + " |", ""]


def _test_lines(test, blocks: str) -> list[str]:
    what = "datasets" if blocks == "dataset" else "dataset × fold × seed blocks"
    lines = [f"Average ranks over {test.n_blocks} {what} (1 = best): "
             + ", ".join(f"{m} {r:.2f}" for m, r in sorted(test.average_ranks.items(), key=lambda kv: kv[1])) + "."
             + (f" {test.dropped_blocks} block(s) with a missing run left out." if test.dropped_blocks else "")]
    if test.friedman_chi2 is None:
        lines.append("Too few methods or blocks for the Friedman test.")
    else:
        verdict = "reject" if test.significant() else "do not reject"
        lines.append(f"Friedman χ²_F = {test.friedman_chi2:.3f} (p = {test.friedman_p:.4f}); Iman–Davenport "
                     f"F_F = {test.iman_davenport_f:.3f} (p = {test.iman_davenport_p:.4f}): {verdict} "
                     f"equal performance at α = {test.alpha}.")
        if test.critical_difference is not None:
            lines.append(f"Nemenyi critical difference CD = {test.critical_difference:.3f}"
                         + (": " + _nemenyi_pairs(test) if test.significant() else
                            " (shown for reference: the pre-test did not reject)."))
        if test.n_blocks < 5:
            lines.append(f"With {test.n_blocks} blocks the tests' approximations are rough and their power low.")
    return [" ".join(lines), ""]


def _nemenyi_pairs(test) -> str:
    ranks = test.average_ranks
    better = [f"{a} ≻ {b}" if ranks[a] < ranks[b] else f"{b} ≻ {a}"
              for a, b in combinations(test.methods, 2) if abs(ranks[a] - ranks[b]) >= test.critical_difference]
    return ("significantly different: " + ", ".join(better) + ".") if better else "no pair differs by more than CD."


def _pairs(matrix: np.ndarray, names: list[str], hib: bool, alpha: float, test) -> list[str]:
    """Wilcoxon signed-rank: the two methods, or every method against the best-ranked (Holm-adjusted)."""
    if len(names) == 2:
        pairs = [(names[0], names[1])]
    else:
        best = min(test.average_ranks, key=test.average_ranks.get)
        pairs = [(best, m) for m in names if m != best]
    results = [wilcoxon_test(matrix[:, names.index(a)], matrix[:, names.index(b)], a, b,
                                   higher_is_better=hib, alpha=alpha) for a, b in pairs]
    if not results or results[0].n < 2:
        return []
    adjusted = _holm([r.p for r in results])
    head = "Wilcoxon signed-rank test" + ("" if len(results) == 1 else
                                          f" of the best-ranked ({pairs[0][0]}) against each other, Holm-adjusted")
    lines = [f"{head}:", "", "| pair | wins/losses/ties | R+ | R− | p | significant |", "|---|---|---|---|---|---|"]
    for r, p in zip(results, adjusted):
        lines.append(f"| {r.a} vs {r.b} | {r.wins}/{r.losses}/{r.ties} | {r.r_plus:g} | {r.r_minus:g} | {p:.4f} | "
                     f"{'yes' if p < alpha else 'no'} |")
    return lines + [""]


def _holm(ps: list[float]) -> list[float]:
    """Holm's step-down adjustment (monotone, capped at 1)."""
    order = np.argsort(ps)
    out, running = [0.0] * len(ps), 0.0
    for i, idx in enumerate(order):
        running = max(running, min(1.0, (len(ps) - i) * ps[idx]))
        out[idx] = running
    return out


def _curves_section(records: list[dict], manifest: dict, out: Path) -> list[str]:
    budget = max((r["budget"] for r in records), default=0.0)
    lines = ["## Anytime curves", "", "Mean over a dataset's runs of the best validation fitness the search had "
             "found by each second (full-data evaluations only), and — where the runs traced their test set "
             "(`evolve --trace-test`) — the test fitness of that incumbent as fitted during the search (on the "
             "learning part of the training data; the returned model is refit on all of it).", ""]
    made = False
    for dataset in dict.fromkeys(r["dataset"] for r in records):
        slug = re.sub(r"[^A-Za-z0-9]+", "-", dataset)
        for which in ("valid", "test"):
            what = "best validation fitness" if which == "valid" else "test fitness of the incumbent"
            png = anytime_png(records, dataset, out / f"anytime-{slug}-{which}.png", budget, which,
                                     title=f"{dataset}: {what}")
            if png is not None:
                lines.append(f"![{dataset} {which}]({png.name})")
                made = True
    return lines + [""] if made else []


def _failures(records: list[dict]) -> list[str]:
    bad = [r for r in records if r["status"] == "failed"]
    if not bad:
        return []
    lines = ["## Runs without a result", "", "| run | why |", "|---|---|"]
    lines += [f"| {r['id']} | {(r.get('error') or 'unknown').replace('|', '/')} |" for r in bad]
    return lines + [""]
