"""``python cli.py inspect``: the report of a run directory, printed with rich.

The numbers come from :func:`ggp_automl.results.report.summarise` (files only, never live objects);
this module only lays them out: configuration, status, the best individual, the top ten,
failures, counts, limits, species, the test set, the method's learned state (PBIL's
probability vectors) and the files.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Iterable

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ..evaluation.task import task_of_record
from ..search.health import as_dict
from .report import MAIN_SETTINGS, TOP_N, PathLike, Text, fmt, plain, truncate, measure_columns, summarise

#: rows of a method's report shown by ``inspect`` (the whole table is in final.json)
METHOD_ROWS = 30


# -- rendering ----------------------------------------------------------------------------


def _kv_table(title: str, rows: Iterable[tuple[str, str]]) -> Table:
    table = Table(title=f"{title}", title_justify="left", title_style="bold", show_header=False, box=None,
                  pad_edge=False)
    table.add_column(style="bold", no_wrap=True)
    table.add_column(overflow="fold")
    for key, value in rows:
        table.add_row(plain(key), plain(value))
    return table


def _data_line(data: dict) -> str:
    targets = task_of_record(data.get("task")).targets_of(data)
    shape = f"{data.get('n_instances', '?')} instances × {data.get('n_features', '?')} features, {targets}"
    where = f" ({data['path']})" if data.get("path") else ""
    test = f"; test: {data['test']}" if data.get("test") else ""
    return f"{data.get('name', '?')}{where}: {shape}{test}"


def _config_rows(s: dict) -> list[tuple[str, str]]:
    cfg = s["config"]
    params = cfg.get("method_params") if isinstance(cfg.get("method_params"), dict) else {}
    rows = [("method", str(s["method"] or "unknown")
             + (f" ({', '.join(f'{k}={v}' for k, v in params.items())})" if params else "")),
            ("grammar", str(s["grammar"] or "unknown")), ("data", _data_line(s["data"]) if s["data"] else "unknown")]
    rows += [(key, str(cfg[key])) for key in MAIN_SETTINGS if key in cfg]
    others = ", ".join(f"{k}={v}" for k, v in cfg.items() if k not in MAIN_SETTINGS and k != "method_params")
    if others:
        rows.append(("other settings", others))
    if s["versions"]:
        rows.append(("versions", ", ".join(f"{k} {v}" for k, v in s["versions"].items())))
    if s["started"]:
        rows.append(("started", str(s["started"])))
    return rows


def _status_text(s: dict) -> str:
    st = s["status"]
    if st["state"] == "finished":
        return "[green]finished[/green]"
    if st["state"] == "no model":
        why = escape(str(st.get("reason")))
        if st.get("refit_failure"):
            why += f" ({escape(str(st['refit_failure']))})"
        return f"[red]ended without a model[/red]: {why}"
    if st["state"] == "damaged":
        return "[red]unknown (final.json is damaged)[/red]"
    where = (f"at generation {escape(str(st['last_generation']))}" if st["last_generation"] is not None
             else "before the first generation finished")
    if st["resume"] is None:
        return f"[yellow]interrupted {where}[/yellow]; it cannot be resumed (see above): start a fresh run"
    return f"[yellow]interrupted {where}[/yellow]\n  resume with: [bold]{escape(st['resume'])}[/bold]"


def _render_best(s: dict, run: Path, console: Console) -> None:
    best = s["best"]
    console.print("\n[bold]Best individual[/bold]")
    if best is None:
        console.print("  none yet (no successful evaluation)")
        return
    species = f", species {best['species']}" if best.get("species") is not None else ""
    console.print(Text(f"  fitness {fmt(best['fitness'])} (from {best['source']}{species})"))
    measures = "  ".join(f"{col} {fmt(best['measures'].get(key))}" for col, key in measure_columns(s["task"]).items())
    console.print(Text(f"  {measures}"))
    console.print(Text(f"  phenotype: {best['phenotype']}"), overflow="fold")
    model = s.get("model")
    if model and model.get("fitted_on"):
        line = f"  returned model: fitted on {model.get('rows')} of {model.get('of')} training rows ({model['fitted_on']})"
        if model.get("refit") is False:
            line += f"; not refit on all rows: {model.get('refit_failure')}"
        console.print(Text(line), overflow="fold")
    if s.get("test_failure"):
        console.print(Text(f"  test set: {s['test_failure']}"), overflow="fold")
    tree_file = run / "best" / "tree.txt"
    try:
        tree = tree_file.read_text(encoding="utf-8", errors="replace").rstrip("\n")
    except OSError:
        tree = None
    if tree is not None:
        console.print(Text("\n".join("    " + line for line in tree.splitlines())))
    else:
        console.print("  tree: none yet (best/tree.txt is written when the run finishes)")


_NUMBER = re.compile(r"(?<![\w.])-?\d+\.\d{5,}(?:[eE][-+]?\d+)?(?![\w.])")


def _compact(phenotype: str) -> str:
    """Long reals shortened to 4 significant digits, for tables (the full text is in the logs)."""
    return _NUMBER.sub(lambda m: f"{float(m.group(0)):.4g}", phenotype)


def _top_table(s: dict, width: int = 160) -> Table:
    """Measures only when the console is wide enough; the phenotype always gets the room left."""
    measures = measure_columns(s["task"]) if width >= 120 else {}
    has_species = any(row["species"] is not None for row in s["top"])
    table = Table(title=f"Top {TOP_N} distinct phenotypes (search phase, validation fitness)",
                  title_justify="left", title_style="bold")
    for col in ("#", "fitness", *measures, "fit s", "gen", *(("sp",) if has_species else ())):
        table.add_column(col, justify="right", no_wrap=True, min_width=len(col))
    table.add_column("phenotype", overflow="fold", ratio=1)
    for row in s["top"]:
        table.add_row(str(row["rank"]), fmt(row["fitness"]),
                      *(fmt(row["measures"].get(key)) for key in measures.values()),
                      fmt(row["fit_time"], 2), str(row["generation"] if row["generation"] is not None else "—"),
                      *((str(row["species"] if row["species"] is not None else "—"),) if has_species else ()),
                      plain(truncate(_compact(str(row["phenotype"])))))
    return table


def _failure_table(s: dict) -> Table:
    table = Table(title="Failures by reason", title_justify="left", title_style="bold")
    table.add_column("count", justify="right")
    table.add_column("status")
    table.add_column("reason", overflow="fold", ratio=1)
    for row in s["failures"]:
        table.add_row(str(row["count"]), plain(row["status"]), plain(row["reason"]))
    return table


def _count_rows(s: dict) -> list[tuple[str, str]]:
    c = s["counts"]
    elapsed = c["elapsed_seconds"]
    rate = c["evaluations_per_minute"]
    return [("evaluations", str(c["evaluations"])), ("failed", str(c["failed"])), ("cached", str(c["cached"])),
            ("generations", str(c["generations"])),
            ("elapsed", "—" if elapsed is None else f"{elapsed / 60:.1f} min"),
            ("evaluations per minute", "—" if rate is None else f"{rate:.1f}")]


def cost_line(acc: dict) -> str:
    """The cost model's accuracy in one line: rank correlation and median ratio over the ok evaluations."""
    rho = acc.get("spearman")
    line = (f"Spearman {'—' if rho is None else f'{rho:.2f}'}, median predicted/actual "
            f"{acc['median_ratio']:.2f} over {acc['n']} ok evaluations")
    if acc.get("skipped"):
        line += f"; {acc['skipped']} not started"
    return line


def warm_line(w: dict) -> str:
    """The portfolio's members in this run: how many were evaluated and worked, where the best of them ranks."""
    if w.get("problem"):
        return w["problem"]
    line = f"{w['file']}: {w['members']} members, {w['evaluated']} evaluated, {w['ok']} with a full-fidelity fitness"
    if w.get("best_rank"):
        line += f"; the best of them ({w['best_fitness']:.4f}) ranks {w['best_rank']} of {w['of']} candidates"
    return line


def _limit_rows(s: dict) -> list[tuple[str, str]]:
    lim, work = s["limits"], s["work"]
    rows = [("hard cap per candidate", f"{lim['hard_cap']:.0f} s"),
            ("adaptive limit", "on" if lim["adaptive"] else "off"),
            ("time-outs", str(lim["timeouts"])),
            ("stopped by the adaptive limit", f"{lim['capped']} (saving up to {lim['saved_seconds']:.0f} "
                                              "worker-seconds against the hard cap)"),
            ("not started (predicted too slow)", str(lim["skipped"]))]
    if s.get("warm_start"):
        rows.append(("warm start", warm_line(s["warm_start"])))
    if s.get("screening"):
        rows.append(("screening", s["screening"]))
    if s.get("cost_model"):
        rows.append(("cost model (predicted vs actual time)", cost_line(s["cost_model"])))
    if lim["adaptive_limits"]:
        rows.append(("adaptive limits at the end", ", ".join(f"{v:.1f} s" for v in lim["adaptive_limits"].values())))
    if work:
        rows += [("worker utilisation (search)", "—" if work.get("utilisation") is None
                  else f"{100 * work['utilisation']:.1f} % of {work.get('workers')} workers"),
                 ("useful work (search)", "—" if work.get("useful_work") is None
                  else f"{100 * work['useful_work']:.1f} % of busy worker-seconds ended with a fitness")]
    return rows


def _species_table(s: dict) -> Table:
    table = Table(title="Species", title_justify="left", title_style="bold")
    for col in ("species", "evaluations", "failures", "best", "mean ok"):
        table.add_column(col, justify="right", no_wrap=True, min_width=len(col))
    table.add_column("best phenotype", overflow="fold", ratio=1)
    for sid, st in s["species"].items():
        table.add_row(str(sid), str(st["evaluations"]), str(st["failures"]), fmt(st["best_fitness"]),
                      fmt(st["mean_fitness"]), plain(truncate(str(st["best_phenotype"] or "—"))))
    return table


def _test_rows(test: dict) -> list[tuple[str, str]]:
    rows = [("source", str(test.get("source", "?"))), ("instances", str(test.get("n_instances", "?")))]
    measures = as_dict(test.get("measures"))
    rows += [(name, fmt(value)) for name, value in measures.items()]
    return rows


def _method_table(report: dict) -> Table:
    rows = report["rows"]
    more = f" (the first {METHOD_ROWS} of {len(rows)}; all in final.json)" if len(rows) > METHOD_ROWS else ""
    table = Table(title=f"{report['title']}{more}", title_justify="left", title_style="bold")
    for i, col in enumerate(report["columns"]):
        table.add_column(col, overflow="fold", ratio=1 if i == len(report["columns"]) - 1 else None)
    for row in rows[:METHOD_ROWS]:
        table.add_row(*(plain(cell) for cell in row))
    return table


def _ensemble_tables(s: dict) -> list:
    """The returned ensemble: its members, and its measures beside the single best's."""
    e = s["ensemble"]
    if not e.get("returned"):
        return [Text(f"Ensemble ({e.get('kind', '?')}) not built: {e.get('reason', 'no reason recorded')}; the single "
                     "best is the model.")]
    members = Table(title=f"Ensemble ({e.get('kind')}, size {e.get('size')}: {len(e.get('members', []))} members of "
                          f"{e.get('pool')} re-evaluated; {fmt(e.get('seconds'), 1)} s) — the returned model",
                    title_justify="left", title_style="bold")
    for col in ("weight", "picks", "valid fitness"):
        members.add_column(col, justify="right")
    members.add_column("phenotype", overflow="fold", ratio=1)
    for m in e.get("members", []):
        m = as_dict(m)
        members.add_row(fmt(m.get("weight"), 3), str(m.get("picks", "")), fmt(m.get("valid_fitness")),
                        plain(truncate(str(m.get("phenotype", "")))))
    for d in e.get("dropped", []):
        d = as_dict(d)
        members.add_row("—", "", "", plain(f"left out ({d.get('reason')}): {truncate(str(d.get('phenotype')))}"))
    single_test = as_dict(as_dict(s.get("test")).get("measures"))
    ens_valid, ens_test = as_dict(e.get("valid_measures")), as_dict(e.get("test"))
    compare = Table(title="Ensemble vs single best", title_justify="left", title_style="bold")
    compare.add_column("measure")
    for col in ("single best (validation)", "ensemble (validation)", "single best (test)", "ensemble (test)"):
        compare.add_column(col, justify="right")
    fitness = s["config"].get("fitness") or "fitness"
    keys = [fitness] + [k for k in measure_columns(s["task"]).values() if k != fitness]
    for key in keys:
        compare.add_row(key, fmt(s["winner_measures"].get(key)), fmt(ens_valid.get(key)),
                        fmt(single_test.get(key)), fmt(ens_test.get(key)))
    return [members, compare]


def render_inspect(run_dir: PathLike, console: Console) -> None:
    """Print the report of a run directory on a ``rich.console.Console``.

    Raises :class:`ReportError` when ``run_dir`` is missing or holds none of a run's files.
    """
    s = summarise(run_dir)
    run = Path(run_dir)
    console.print(f"[bold]Run {escape(str(run))}[/bold]", highlight=False)
    for problem in s["problems"]:
        console.print(Text(f"damaged: {problem}", style="red"))
    console.print(_kv_table("Configuration", _config_rows(s)))
    console.print(f"\n[bold]Status:[/bold] {_status_text(s)}", highlight=False)
    _render_best(s, run, console)
    sections = [
        _top_table(s, console.width) if s["top"] else "No successful search-phase evaluation yet.",
        _failure_table(s) if s["failures"] else "No failed evaluations.",
        _kv_table("Counts", _count_rows(s)),
        _kv_table("Time limits and workers", _limit_rows(s)),
        _species_table(s) if s["species"] else None,
        _kv_table("Test set", _test_rows(s["test"])) if s["test"] else None,
        _method_table(s["method_report"]) if s["method_report"] else None,
        *(_ensemble_tables(s) if s["ensemble"] else ()),
        _kv_table("Files", list(s["files"].items()) or [("none", "")]),
    ]
    for section in sections:
        if section is not None:
            console.print()
            console.print(section)
