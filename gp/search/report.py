"""What a run directory says: ``python cli.py inspect runs/NAME`` and its Python twin.

Why a separate reader: a run directory must be readable while the run is still going,
after it was killed (no ``final.json``, a half-written last log line), with a damaged file
(whatever is readable is shown, and what is not is named: :mod:`gp.search.health`), and years
later without the code that wrote it. So everything here is derived from the files of the
fixed run-directory schema alone — ``config.json``, ``evaluations.jsonl``,
``generations.jsonl``, ``final.json`` and ``best/`` — never from a checkpoint or live
objects. :func:`summarise` gathers the numbers (for tests and the Python API);
:func:`render_inspect` prints them with rich.
"""
from __future__ import annotations

import re

from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Iterable, Optional, Sequence, Union

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from .health import as_dict, checkpoint_problem, clean_evaluation, finite, json_object
from .rundir import read_jsonl

__all__ = ["ReportError", "summarise", "render_inspect", "MEASURES", "RUN_FILES"]

PathLike = Union[str, Path]

#: The measures shown in the top-10 table: column title → key in an evaluation's "measures".
MEASURES = {"EM": "exact_match", "HL": "hamming_loss", "FM": "f1_macro", "RL": "ranking_loss"}
#: Files of a run directory worth pointing at, in the order they are listed.
RUN_FILES = ("best/phenotype.txt", "best/tree.txt", "best/tree.dot", "best/tree.png", "best/model.joblib",
             "best/model.py", "convergence.png", "evaluations.jsonl", "generations.jsonl", "final.json",
             "checkpoint.pkl")
#: Settings shown on their own line; other RunConfig fields are listed compactly after them.
_MAIN_SETTINGS = ("seed", "mode", "population", "budget_seconds", "workers", "fitness", "eval_timeout",
                  "adaptive_timeout", "screening", "memory_bytes")
TOP_N = 10
PHENOTYPE_WIDTH = 70
REASON_WIDTH = 80


class ReportError(ValueError):
    """The directory is not a readable run directory (the CLI exits with code 1)."""


# -- reading ------------------------------------------------------------------------------


def _read_config(run: Path) -> tuple[dict, list[str]]:
    """``config.json`` (or {} when it cannot be used) and what is wrong with the directory's files.

    A directory is a run directory when it holds any of the run's files, so a run whose
    ``config.json`` is lost or damaged is still reported from its logs."""
    if not run.exists():
        raise ReportError(f"{run}: no such run directory")
    if not run.is_dir():
        raise ReportError(f"{run}: not a directory (a run directory holds config.json, evaluations.jsonl, …)")
    if not any((run / name).is_file() for name in ("config.json", "evaluations.jsonl", "final.json",
                                                   "checkpoint.pkl")):
        raise ReportError(f"{run}: not a run directory (no config.json)")
    config, problem = json_object(run / "config.json")
    problems = []
    if config is None:
        problems.append(f"config.json is {'missing' if problem is None else f'corrupted ({problem})'}: the run's "
                        "settings are unknown and it cannot be resumed")
    final, problem = json_object(run / "final.json")
    if problem:
        problems.append(f"final.json is corrupted ({problem}): the run's final results are unknown")
    problem = checkpoint_problem(run / "checkpoint.pkl")
    if problem and final is None:
        problems.append(f"checkpoint.pkl is corrupted ({problem}): the run cannot be resumed")
    return config or {}, problems


# -- small helpers ------------------------------------------------------------------------


def _is_ok(rec: dict) -> bool:
    return rec.get("status") == "ok" and finite(rec.get("fitness")) is not None


def short_reason(reason: Any, width: int = REASON_WIDTH) -> str:
    """The first non-empty line of a failure reason, cut to ``width`` characters."""
    lines = [ln.strip() for ln in str(reason or "").splitlines() if ln.strip()]
    text = lines[0] if lines else "(no reason given)"
    return text if len(text) <= width else text[: width - 1] + "…"


def _truncate(text: str, width: int = PHENOTYPE_WIDTH) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _plain(text: Any) -> Text:
    """``text`` as a rich Text, so brackets in phenotypes, paths or reasons are not read as markup."""
    return Text(str(text))


def _fmt(value: Any, digits: int = 4) -> str:
    x = finite(value)
    return "—" if x is None else f"{x:.{digits}f}"


# -- the numbers --------------------------------------------------------------------------


def _top(evaluations: Sequence[dict], n: int = TOP_N) -> list[dict]:
    """The ``n`` best distinct phenotypes of the search phase (each at its best evaluation)."""
    best: dict[str, dict] = {}
    for rec in evaluations:
        if rec.get("phase", "search") != "search" or not _is_ok(rec):
            continue
        key = str(rec.get("phenotype", ""))
        if key not in best or float(rec["fitness"]) > float(best[key]["fitness"]):
            best[key] = rec
    ranked = sorted(best.values(), key=lambda r: (-float(r["fitness"]), r.get("n") or 0))[:n]
    return [{"rank": i, "phenotype": r.get("phenotype", ""), "fitness": float(r["fitness"]),
             "measures": dict(r.get("measures") or {}), "fit_time": finite(r.get("fit_time")),
             "generation": r.get("generation"), "species": r.get("species"), "n": r.get("n")}
            for i, r in enumerate(ranked, start=1)]


def _failures(evaluations: Sequence[dict], n: int = TOP_N) -> list[dict]:
    counts = Counter((str(r.get("status")), short_reason(r.get("reason")))
                     for r in evaluations if r.get("status") != "ok")
    return [{"status": s, "reason": reason, "count": c} for (s, reason), c in counts.most_common(n)]


def _species_stats(evaluations: Sequence[dict]) -> dict[int, dict]:
    """Per species of the search phase: evaluations, failures, best and mean ok fitness."""
    groups: dict[Any, list[dict]] = defaultdict(list)
    for rec in evaluations:
        if rec.get("species") is not None and rec.get("phase", "search") == "search":
            groups[rec["species"]].append(rec)
    stats = {}
    for sid in sorted(groups, key=lambda s: (str(type(s)), s)):
        recs = groups[sid]
        ok = [r for r in recs if _is_ok(r)]
        top = max(ok, key=lambda r: float(r["fitness"]), default=None)
        stats[sid] = {"evaluations": len(recs), "failures": sum(r.get("status") != "ok" for r in recs),
                      "best_fitness": float(top["fitness"]) if top else None,
                      "mean_fitness": sum(float(r["fitness"]) for r in ok) / len(ok) if ok else None,
                      "best_phenotype": top.get("phenotype") if top else None}
    return stats


def _elapsed(final: Optional[dict], evaluations: Sequence[dict], generations: Sequence[dict]) -> Optional[float]:
    if final and finite(final.get("time")) is not None:
        return float(final["time"])
    times = [t for t in (finite(r.get("time")) for r in (*evaluations, *generations)) if t is not None]
    return max(times) if times else None


def _counts(final: Optional[dict], evaluations: Sequence[dict], generations: Sequence[dict]) -> dict:
    """Final counts when the run finished, otherwise counted from the logs."""
    derived = {"evaluations": len(evaluations),
               "failed": sum(r.get("status") != "ok" for r in evaluations),
               "cached": int(sum(finite(g.get("cached")) or 0 for g in generations)),
               "generations": len(generations)}
    recorded = as_dict(as_dict(final).get("counts"))
    counts = {k: int(finite(recorded.get(k))) if finite(recorded.get(k)) is not None else v
              for k, v in derived.items()}
    elapsed = _elapsed(final, evaluations, generations)
    counts["elapsed_seconds"] = elapsed
    counts["evaluations_per_minute"] = counts["evaluations"] / (elapsed / 60.0) if elapsed else None
    return counts


def _best(final: Optional[dict], top: Sequence[dict]) -> Optional[dict]:
    winner = (final or {}).get("winner")
    if isinstance(winner, dict) and winner.get("phenotype"):
        return {"phenotype": str(winner["phenotype"]), "fitness": finite(winner.get("valid_fitness")),
                "measures": as_dict(winner.get("valid_measures")), "species": winner.get("species"),
                "source": "final.json"}
    if top:
        t = top[0]
        return {"phenotype": t["phenotype"], "fitness": t["fitness"], "measures": t["measures"],
                "species": t["species"], "source": "evaluations.jsonl", "generation": t["generation"]}
    return None


def _status(run: Path, final: Optional[dict], generations: Sequence[dict], resumable: bool) -> dict:
    last = generations[-1].get("generation") if generations else None
    if final is not None and final.get("status") == "finished":
        return {"state": "finished", "last_generation": last, "resume": None}
    if (run / "final.json").exists():
        return {"state": "damaged", "last_generation": last, "resume": None}
    return {"state": "interrupted", "last_generation": last,
            "resume": f"python cli.py evolve --resume {run}" if resumable else None}


def _limits(config: dict, evaluations: Sequence[dict], final: Optional[dict]) -> dict:
    """Time limits: the hard cap, and how many candidates the adaptive limit stopped and what that saved."""
    from .timekeeper import TimeKeeper

    cfg = as_dict(config.get("config"))
    recorded = (final or {}).get("limits") if isinstance((final or {}).get("limits"), dict) else {}
    hard = finite(recorded.get("hard_cap"))
    if hard is None:
        hard = TimeKeeper(finite(cfg.get("budget_seconds")) or 600.0, finite(cfg.get("search_fraction")) or 0.85,
                          finite(cfg.get("eval_timeout"))).hard_cap
    capped = [r for r in evaluations if r.get("capped")]
    return {"hard_cap": hard, "adaptive": bool(cfg.get("adaptive_timeout", False)),
            "timeouts": sum(1 for r in evaluations if r.get("status") == "timeout"),
            "skipped": sum(1 for r in evaluations if r.get("status") == "skipped"),
            "capped": len(capped),
            "saved_seconds": sum(max(hard - (finite(r.get("limit")) or hard), 0.0) for r in capped),
            "adaptive_limits": {str(k): finite(v) for k, v in as_dict(recorded.get("adaptive_limits")).items()
                                if finite(v) is not None}}


def _screening(evaluations: Sequence[dict], final: Optional[dict]) -> Optional[str]:
    """One line on the screening rungs: off, off for this data, or how many were screened."""
    sc = (final or {}).get("screening")
    if not isinstance(sc, dict) or sc.get("active") is None:
        return None
    if not sc["active"]:
        rows = sc.get("learning_rows")
        return "off for this data" + ("" if rows is None else
                                      f" (1/{sc.get('eta')} of {rows} learning rows is under {sc.get('min_rows')})")
    fractions = ", ".join(f"{100 * finite(f):.0f} %" for f in sc.get("fractions") or [] if finite(f) is not None) \
        if isinstance(sc.get("fractions"), list) else "?"
    screened = sum(1 for r in evaluations if r.get("phase") == "search" and (r.get("level") or 0) < 0)
    full = sum(1 for r in evaluations if r.get("phase") == "search" and r.get("level") == 0)
    return f"rungs at {fractions} of the learning rows: {screened} screened fits, {full} at full fidelity"


def summarise(run_dir: PathLike) -> dict:
    """Everything ``inspect`` shows, as plain data.

    Keys: ``run_dir``, ``problems`` (one line per damaged file: which, why, what it costs),
    ``method``, ``grammar``, ``data``, ``config``, ``versions``, ``argv``, ``started``,
    ``status`` ({state: finished|interrupted|damaged, last_generation, resume (None when the
    run cannot be resumed)}),
    ``best`` (phenotype, fitness, measures, species, source; or None), ``top`` (up to 10
    distinct search-phase phenotypes, best first), ``failures`` ([{status, reason, count}],
    up to 10), ``counts`` (evaluations, failed, cached, generations, elapsed_seconds,
    evaluations_per_minute), ``limits`` (hard_cap, adaptive, timeouts, skipped, capped, saved_seconds,
    adaptive_limits), ``work`` (final.json's worker utilisation block or None), ``species`` ({id: {evaluations, failures, best_fitness,
    mean_fitness, best_phenotype}}, empty for unspeciated runs), ``test`` (final.json's
    test block or None) and ``files`` (relative name → path, existing files only).
    Raises :class:`ReportError` when ``run_dir`` is not a run directory; damaged files are not
    errors: the summary holds whatever is readable, and ``problems`` says what is not.
    """
    run = Path(run_dir)
    config, problems = _read_config(run)
    evaluations = [clean_evaluation(r) for r in read_jsonl(run / "evaluations.jsonl")]
    generations = read_jsonl(run / "generations.jsonl")
    final, _ = json_object(run / "final.json")
    top = _top(evaluations)
    work = as_dict(as_dict(final).get("work"))
    return {
        "run_dir": str(run),
        "problems": problems,
        "method": config.get("method"),
        "grammar": config.get("grammar"),
        "data": as_dict(config.get("data")),
        "config": as_dict(config.get("config")),
        "versions": as_dict(config.get("versions")),
        "argv": list(config["argv"]) if isinstance(config.get("argv"), list) else [],
        "started": config.get("started"),
        "status": _status(run, final, generations, resumable=not problems),
        "best": _best(final, top),
        "top": top,
        "failures": _failures(evaluations),
        "counts": _counts(final, evaluations, generations),
        "limits": _limits(config, evaluations, final),
        "work": {**work, **{k: finite(work.get(k)) for k in ("utilisation", "useful_work")}} if work else None,
        "screening": _screening(evaluations, final),
        "species": _species_stats(evaluations),
        "test": as_dict(as_dict(final).get("test")) or None,
        "files": {name: str(run / name) for name in RUN_FILES if (run / name).is_file()},
    }


# -- rendering ----------------------------------------------------------------------------


def _kv_table(title: str, rows: Iterable[tuple[str, str]]) -> Table:
    table = Table(title=f"{title}", title_justify="left", title_style="bold", show_header=False, box=None, pad_edge=False)
    table.add_column(style="bold", no_wrap=True)
    table.add_column(overflow="fold")
    for key, value in rows:
        table.add_row(_plain(key), _plain(value))
    return table


def _data_line(data: dict) -> str:
    shape = (f"{data.get('n_instances', '?')} instances × {data.get('n_features', '?')} features, "
             f"{data.get('n_labels', '?')} labels")
    where = f" ({data['path']})" if data.get("path") else ""
    test = f"; test: {data['test']}" if data.get("test") else ""
    return f"{data.get('name', '?')}{where}: {shape}{test}"


def _config_rows(s: dict) -> list[tuple[str, str]]:
    cfg = s["config"]
    rows = [("method", str(s["method"] or "unknown")), ("grammar", str(s["grammar"] or "unknown")),
            ("data", _data_line(s["data"]) if s["data"] else "unknown")]
    rows += [(key, str(cfg[key])) for key in _MAIN_SETTINGS if key in cfg]
    others = ", ".join(f"{k}={v}" for k, v in cfg.items() if k not in _MAIN_SETTINGS)
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
    console.print(Text(f"  fitness {_fmt(best['fitness'])} (from {best['source']}{species})"))
    measures = "  ".join(f"{col} {_fmt(best['measures'].get(key))}" for col, key in MEASURES.items())
    console.print(Text(f"  {measures}"))
    console.print(Text(f"  phenotype: {best['phenotype']}"), overflow="fold")
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
    measures = MEASURES if width >= 120 else {}
    has_species = any(row["species"] is not None for row in s["top"])
    table = Table(title=f"Top {TOP_N} distinct phenotypes (search phase, validation fitness)",
                  title_justify="left", title_style="bold")
    for col in ("#", "fitness", *measures, "fit s", "gen", *(("sp",) if has_species else ())):
        table.add_column(col, justify="right", no_wrap=True, min_width=len(col))
    table.add_column("phenotype", overflow="fold", ratio=1)
    for row in s["top"]:
        table.add_row(str(row["rank"]), _fmt(row["fitness"]),
                      *(_fmt(row["measures"].get(key)) for key in measures.values()),
                      _fmt(row["fit_time"], 2), str(row["generation"] if row["generation"] is not None else "—"),
                      *((str(row["species"] if row["species"] is not None else "—"),) if has_species else ()),
                      _plain(_truncate(_compact(str(row["phenotype"])))))
    return table


def _failure_table(s: dict) -> Table:
    table = Table(title="Failures by reason", title_justify="left", title_style="bold")
    table.add_column("count", justify="right")
    table.add_column("status")
    table.add_column("reason", overflow="fold", ratio=1)
    for row in s["failures"]:
        table.add_row(str(row["count"]), _plain(row["status"]), _plain(row["reason"]))
    return table


def _count_rows(s: dict) -> list[tuple[str, str]]:
    c = s["counts"]
    elapsed = c["elapsed_seconds"]
    rate = c["evaluations_per_minute"]
    return [("evaluations", str(c["evaluations"])), ("failed", str(c["failed"])), ("cached", str(c["cached"])),
            ("generations", str(c["generations"])),
            ("elapsed", "—" if elapsed is None else f"{elapsed / 60:.1f} min"),
            ("evaluations per minute", "—" if rate is None else f"{rate:.1f}")]


def _limit_rows(s: dict) -> list[tuple[str, str]]:
    lim, work = s["limits"], s["work"]
    rows = [("hard cap per candidate", f"{lim['hard_cap']:.0f} s"),
            ("adaptive limit", "on" if lim["adaptive"] else "off"),
            ("time-outs", str(lim["timeouts"])),
            ("stopped by the adaptive limit", f"{lim['capped']} (saving up to {lim['saved_seconds']:.0f} "
                                              "worker-seconds against the hard cap)"),
            ("not started (predicted too slow)", str(lim["skipped"]))]
    if s.get("screening"):
        rows.append(("screening", s["screening"]))
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
        table.add_row(str(sid), str(st["evaluations"]), str(st["failures"]), _fmt(st["best_fitness"]),
                      _fmt(st["mean_fitness"]), _plain(_truncate(str(st["best_phenotype"] or "—"))))
    return table


def _test_rows(test: dict) -> list[tuple[str, str]]:
    rows = [("source", str(test.get("source", "?"))), ("instances", str(test.get("n_instances", "?")))]
    measures = as_dict(test.get("measures"))
    rows += [(name, _fmt(value)) for name, value in measures.items()]
    return rows


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
        _kv_table("Files", list(s["files"].items()) or [("none", "")]),
    ]
    for section in sections:
        if section is not None:
            console.print()
            console.print(section)
