"""What a run directory says: ``python cli.py inspect runs/NAME`` and its Python twin.

Why a separate reader: a run directory must be readable while the run is still going,
after it was killed (no ``final.json``, a half-written last log line), with a damaged file
(whatever is readable is shown, and what is not is named: :mod:`ggp_automl.search.health`), and years
later without the code that wrote it. So everything here is derived from the files of the
fixed run-directory schema alone — ``config.json``, ``evaluations.jsonl``,
``generations.jsonl``, ``final.json`` and ``best/`` — never from a checkpoint or live
objects. :func:`summarise` gathers the numbers (for tests and the Python API);
:func:`render_inspect` (:mod:`ggp_automl.results.render`) prints them with rich.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Optional, Sequence, Union

from rich.text import Text

from ..evaluation.task import MultiLabel, task_of_record
from ..search.health import as_dict, checkpoint_problem, clean_evaluation, finite, json_object
from ..search.rundir import read_jsonl
from ..gp.errors import InputError

__all__ = ["ReportError", "summarise", "MEASURES", "RUN_FILES"]

PathLike = Union[str, Path]

#: The multi-label measures shown in the top-10 table: column title → key in an evaluation's "measures"
#: (each task's are its :attr:`~evaluation.task.Task.columns`: :func:`measure_columns`).
MEASURES = dict(MultiLabel.columns)
#: Files of a run directory worth pointing at, in the order they are listed (a method's own files, such
#: as PBIL's pbil-vectors.json and pbil-entropy.png, are listed after them).
RUN_FILES = ("best/phenotype.txt", "best/tree.txt", "best/tree.dot", "best/tree.png", "best/model.joblib",
             "best/model.py", "convergence.png", "evaluations.jsonl", "generations.jsonl", "final.json",
             "checkpoint.pkl")
#: Settings shown on their own line; other RunConfig fields are listed compactly after them.
MAIN_SETTINGS = ("seed", "mode", "population", "budget_seconds", "workers", "fitness", "eval_timeout",
                  "adaptive_timeout", "screening", "memory_bytes", "warm_start")
TOP_N = 10
PHENOTYPE_WIDTH = 70
REASON_WIDTH = 80


class ReportError(InputError, ValueError):
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


def truncate(text: str, width: int = PHENOTYPE_WIDTH) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def plain(text: Any) -> Text:
    """``text`` as a rich Text, so brackets in phenotypes, paths or reasons are not read as markup."""
    return Text(str(text))


def fmt(value: Any, digits: int = 4) -> str:
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
    if final is not None and isinstance(final.get("status"), str) and "winner" in final and not final["winner"]:
        # the run ended without a model (nothing was fitted that could be returned): say why
        return {"state": "no model", "last_generation": last, "resume": None, "reason": final["status"],
                "refit_failure": final.get("refit_failure")}
    if (run / "final.json").exists():
        return {"state": "damaged", "last_generation": last, "resume": None}
    return {"state": "interrupted", "last_generation": last,
            "resume": f"python cli.py evolve --resume {run}" if resumable else None}


def _limits(config: dict, evaluations: Sequence[dict], final: Optional[dict]) -> dict:
    """Time limits: the hard cap, and how many candidates the adaptive limit stopped and what that saved."""
    from ..search.timekeeper import TimeKeeper

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


def _cost_model(evaluations: Sequence[dict]) -> Optional[dict]:
    """How well the cost model predicted the ok evaluations' wall times (None: no record carries a prediction)."""
    from ..search.cost_model import accuracy

    return accuracy(evaluations)


def _warm_start(config: dict, evaluations: Sequence[dict]) -> Optional[dict]:
    """How the run's portfolio members fared: evaluated (on any screening rung), with a full-fidelity fitness,
    and where the best of them ranks among every candidate the search scored at full fidelity (None: the run
    started cold)."""
    from ..search.portfolio import NONE, Portfolio

    path = as_dict(config.get("config")).get("warm_start")
    if not isinstance(path, str) or path in (NONE, "portfolio"):
        return None
    try:
        members = {_tokens(m.phenotype) for m in Portfolio.load(path).members}
    except InputError as exc:
        return {"file": path, "problem": str(exc)}
    best: dict[tuple, float] = {}
    statuses: dict[tuple, str] = {}
    for r in evaluations:
        if r.get("phase") == "search" and isinstance(r.get("phenotype"), str):
            key = _tokens(r["phenotype"])
            statuses.setdefault(key, r.get("status"))  # a screening rung's too: it was evaluated
            if (r.get("level") or 0) == 0 and r.get("status") == "ok" and finite(r.get("fitness")) is not None:
                best[key] = max(best.get(key, float("-inf")), float(r["fitness"]))
    scored = sorted(best.values(), reverse=True)
    mine = [best[k] for k in members if k in best]
    return {"file": path, "members": len(members), "evaluated": sum(1 for k in members if k in statuses),
            "ok": len(mine), "best_fitness": max(mine) if mine else None,
            "best_rank": 1 + scored.index(max(mine)) if mine else None, "of": len(scored)}


def _tokens(phenotype: str) -> tuple:
    """A phenotype's tokens, numbers to 10 significant digits: BO's configurations round the members' reals."""
    out = []
    for t in phenotype.split():
        try:
            out.append(f"{float(t):.10g}")
        except ValueError:
            out.append(t)
    return tuple(out)


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
    ``status`` ({state: finished|no model|interrupted|damaged, last_generation, resume (None when the
    run cannot be resumed); "no model" adds the run's ``reason`` and ``refit_failure``}),
    ``best`` (phenotype, fitness, measures, species, source; or None), ``top`` (up to 10
    distinct search-phase phenotypes, best first), ``failures`` ([{status, reason, count}],
    up to 10), ``counts`` (evaluations, failed, cached, generations, elapsed_seconds,
    evaluations_per_minute), ``limits`` (hard_cap, adaptive, timeouts, skipped, capped, saved_seconds,
    adaptive_limits), ``cost_model`` (n, spearman, median_ratio, skipped: the cost model's predicted against
    the actual wall times of the ok evaluations; None when no record carries a prediction), ``warm_start``
    (file, members, evaluated, ok, best_fitness, best_rank, of: how the portfolio's members fared; None for a
    cold start), ``work``
    (final.json's worker utilisation block or None), ``species`` ({id:
    {evaluations, failures, best_fitness, mean_fitness, best_phenotype}}, empty for unspeciated runs),
    ``test`` (final.json's test block or None), ``ensemble`` (final.json's ensemble block or None),
    ``model`` (final.json's model block: which rows the returned model was fitted on — ``fitted_on``,
    ``rows``, ``of``, ``refit`` and, when it was not refit, ``refit_failure`` — or None), ``test_failure``
    (why the returned model has no test measures, or None),
    ``winner_measures`` (the single best's validation measures) and ``files`` (relative name → path,
    existing files only).
    Raises :class:`ReportError` when ``run_dir`` is not a run directory; damaged files are not
    errors: the summary holds whatever is readable, and ``problems`` says what is not.
    """
    run = Path(run_dir)
    config, problems = _read_config(run)
    logged = read_jsonl(run / "evaluations.jsonl")
    run_id = config.get("run_id") if isinstance(config.get("run_id"), str) else None
    if run_id is None and problems:  # config.json unreadable: the log's first record says whose it is
        run_id = next((r.get("run") for r in logged if isinstance(r.get("run"), str)), None)
    foreign = [r for r in logged if r.get("run") not in (None, run_id)]
    if foreign:  # a log copied from another run directory (issue 24): its records are not this run's
        problems.append(f"evaluations.jsonl holds {len(foreign)} record{'s' if len(foreign) != 1 else ''} of another "
                        f"run ({foreign[0].get('run')}), not of this one ({run_id or 'a run without an id'}): they "
                        "are left out, and the run cannot be resumed")
    evaluations = [clean_evaluation(r) for r in logged if r.get("run") in (None, run_id)]
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
        "cost_model": _cost_model(evaluations),
        "warm_start": _warm_start(config, evaluations),
        "species": _species_stats(evaluations),
        "test": as_dict(as_dict(final).get("test")) or None,
        "task": task_of_record(as_dict(config.get("data")).get("task")).name,
        "method_report": _method_report(final),
        "ensemble": as_dict(as_dict(final).get("ensemble")) or None,
        "model": as_dict(as_dict(final).get("model")) or None,
        "test_failure": as_dict(final).get("test_failure") if isinstance(as_dict(final).get("test_failure"), str)
        else None,
        "winner_measures": as_dict(as_dict(as_dict(final).get("winner")).get("valid_measures")),
        "files": {name: str(run / name) for name in [*RUN_FILES, *_method_files(run)] if (run / name).is_file()},
    }


def measure_columns(task: str) -> dict[str, str]:
    """Column title → measure key of the measures a task's run report shows (the fitness has a column of its
    own); ``task``: the stored name."""
    return dict(task_of_record(task).columns)


def _method_report(final: Optional[dict]) -> Optional[dict]:
    """final.json's "method_report" when it is a well-formed table (a method's learned state)."""
    report = as_dict(as_dict(final).get("method_report"))
    rows = report.get("rows")
    if not isinstance(rows, list) or not isinstance(report.get("columns"), list):
        return None
    return {"title": str(report.get("title", "method")), "columns": [str(c) for c in report["columns"]],
            "rows": [[str(x) for x in row] for row in rows if isinstance(row, list)]}


def _method_files(run: Path) -> list[str]:
    """Files a method wrote at the top of the run directory beyond the schema's (sorted)."""
    known = set(RUN_FILES) | {"config.json", ".lock"}
    try:
        return sorted(p.name for p in run.iterdir() if p.is_file() and p.name not in known
                      and p.suffix in (".png", ".json") and not p.name.startswith("ggp-automl-crash"))
    except OSError:
        return []

