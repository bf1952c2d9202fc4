"""Result tables of an experiment grid (methods × datasets × folds × seeds), as the thesis prints them.

Why a separate, pure module: ``cli.py report`` and the statistics both need the same
per-cell numbers (mean ± sd over folds and seeds), and the tables must be testable from
hand-written run records without running a search. Everything here takes the run records
(one dict per finished or failed run) and returns numbers or text; nothing reads or writes
files.

* :func:`cell_table` — one measure, cells (dataset, config) -> (mean, sd, n); failed runs
  are skipped, cells with no value are absent (shown as "—" / "--").
* :func:`markdown_table` / :func:`latex_table` — datasets as rows, configs as columns, the best
  mean of each row in bold (ties all bold), an optional "average rank" row and an "n" row
  when the grid has holes, so a reader never mistakes a mean over 3 runs for one over 30.
* :func:`effort_table` — what each config cost: evaluations, failures, time against budget.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

import numpy as np

__all__ = ["LOWER_IS_BETTER", "CellTable", "cell_table", "effort_table", "higher_is_better", "latex_table",
           "markdown_table"]

#: Measures where a smaller value is better (the names of :mod:`evaluation.metrics`);
#: every other measure, and every fitness, is maximised.
LOWER_IS_BETTER = frozenset({"hamming_loss", "ranking_loss", "one_error", "coverage", "error_rate", "log_loss"})

#: The name :func:`cell_table` gives the validation fitness (which is always maximised).
VALID_FITNESS = "valid fitness"

_MISSING_MD = "—"
_MISSING_TEX = "--"
# Ties are decided on the means up to float noise: the same runs summed in another order
# must not lose their bold.
_TIE_RTOL, _TIE_ATOL = 1e-9, 1e-12


def higher_is_better(measure: str) -> bool:
    """Whether a larger value of ``measure`` is better (False only for the losses in LOWER_IS_BETTER)."""
    return measure not in LOWER_IS_BETTER


@dataclass(frozen=True)
class CellTable:
    """One measure over the grid: (dataset, config) -> (mean, sd, n) over folds and seeds.

    ``runs_per_cell`` is the number of distinct (fold, seed) pairs seen in all records
    (failed runs included), i.e. how many runs a complete cell has; 0 means unknown.
    """

    measure: str
    higher_is_better: bool
    configs: tuple[str, ...]
    datasets: tuple[str, ...]
    cells: dict[tuple[str, str], tuple[float, float, int]]
    runs_per_cell: int = 0

    def block_matrix(self) -> np.ndarray:
        """Datasets × configs of the means, NaN where a cell is missing (the Friedman test's blocks)."""
        m = np.full((len(self.datasets), len(self.configs)), np.nan)
        for i, d in enumerate(self.datasets):
            for j, c in enumerate(self.configs):
                if (d, c) in self.cells:
                    m[i, j] = self.cells[(d, c)][0]
        return m

    def best(self, dataset: str) -> set[str]:
        """The configs whose mean is best on ``dataset`` (all of them on a tie; empty if the row is empty)."""
        means = {c: self.cells[(dataset, c)][0] for c in self.configs if (dataset, c) in self.cells}
        means = {c: v for c, v in means.items() if not math.isnan(v)}
        if not means:
            return set()
        top = max(means.values()) if self.higher_is_better else min(means.values())
        return {c for c, v in means.items() if v == top or math.isclose(v, top, rel_tol=_TIE_RTOL, abs_tol=_TIE_ATOL)}

    def expected_n(self) -> int:
        """Runs a complete cell has: the grid's fold × seed count, else the largest n seen."""
        return self.runs_per_cell or max((n for _, _, n in self.cells.values()), default=0)

    def has_missing_runs(self) -> bool:
        """True when some cell is absent or holds fewer runs than a complete one."""
        full = self.expected_n()
        return any(self.cells.get((d, c), (0, 0, 0))[2] < full for d in self.datasets for c in self.configs)


def value_of(record: Mapping[str, Any], measure: str, source: str) -> float | None:
    """The record's number for the table, or None when it has none (no model, no test set, NaN)."""
    if source == "valid":
        v = record.get("valid_fitness")
    else:
        v = (record.get("test") or {}).get(measure)
    if v is None:
        return None
    v = float(v)
    # NaN is "no value"; an infinite loss is a real (terrible) result and is kept.
    return None if math.isnan(v) else v


def cell_table(records: Iterable[Mapping[str, Any]], measure: str, source: str = "test") -> CellTable:
    """Mean, sd (ddof=1; 0.0 for a single run) and n of ``measure`` per (dataset, config).

    ``source="test"`` reads ``record["test"][measure]``; ``source="valid"`` reads
    ``record["valid_fitness"]`` and names the table's measure "valid fitness" (maximised).
    Configs and datasets keep their first-seen order over *all* records, failed ones
    included, so a config whose runs all failed still shows as a column of gaps.
    """
    if source not in ("test", "valid"):
        raise ValueError(f"source must be 'test' or 'valid', not {source!r}")
    records = list(records)
    configs: dict[str, None] = {}   # dicts as ordered sets: first-seen order
    datasets: dict[str, None] = {}
    grid: set[tuple[Any, Any]] = set()
    values: dict[tuple[str, str], list[float]] = {}
    for r in records:
        configs.setdefault(r["config"], None)
        datasets.setdefault(r["dataset"], None)
        grid.add((r.get("fold"), r.get("seed")))
        if r.get("status") != "done":
            continue
        v = value_of(r, measure, source)
        if v is not None:
            values.setdefault((r["dataset"], r["config"]), []).append(v)
    cells = {}
    for key, vs in values.items():
        a = np.asarray(vs, dtype=float)
        with np.errstate(invalid="ignore"):   # inf - inf in the sd of infinite losses -> NaN, said as NaN
            sd = float(np.std(a, ddof=1)) if len(a) > 1 else 0.0
        cells[key] = (float(np.mean(a)), sd, len(a))
    name, hib = (VALID_FITNESS, True) if source == "valid" else (measure, higher_is_better(measure))
    return CellTable(name, hib, tuple(configs), tuple(datasets), cells, len(grid))


# -- text ---------------------------------------------------------------------------------


def _fmt(mean: float, sd: float, digits: int, pm: str) -> str:
    return f"{mean:.{digits}f}{pm}{sd:.{digits}f}"


def _best_ranks(table: CellTable, ranks: Mapping[str, float]) -> set[str]:
    """Configs with the lowest average rank (rank 1 = best, whatever the measure's direction)."""
    known = [ranks[c] for c in table.configs if c in ranks]
    if not known:
        return set()
    top = min(known)
    return {c for c in table.configs if c in ranks and math.isclose(ranks[c], top, rel_tol=_TIE_RTOL,
                                                                    abs_tol=_TIE_ATOL)}


def _n_row(table: CellTable) -> list[str]:
    """Per config: runs counted over all datasets / runs a complete grid has."""
    full = table.expected_n() * len(table.datasets)
    return [f"{sum(table.cells.get((d, c), (0, 0, 0))[2] for d in table.datasets)}/{full}" for c in table.configs]


def _md_escape(name: str) -> str:
    return str(name).replace("|", "\\|")


def _md_row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def markdown_table(table: CellTable, digits: int = 4, ranks: Mapping[str, float] | None = None) -> str:
    """Datasets × configs as a Markdown table of "mean ± sd", each row's best in bold.

    With ``ranks`` (config -> average rank) a last row "average rank" is added, its lowest
    value bold; a final row "n" (runs counted / runs expected per config) appears only when
    some runs are missing, since the means then rest on fewer runs than the grid promises.
    """
    body, footer = _cells(table, ranks, digits, " ± ", _MISSING_MD, lambda t: f"**{t}**", _md_escape,
                          "average rank", "n")
    lines = [_md_row(["dataset"] + [_md_escape(c) for c in table.configs]),
             _md_row(["---"] + ["---:"] * len(table.configs))]
    lines += [_md_row(r) for r in body + footer]
    return "\n".join(lines) + "\n"


def _cells(table: CellTable, ranks, digits: int, pm: str, missing: str, bold, escape, rank_label: str,
           n_label: str):
    """The rows of either format: ``(body, footer)``, each a list of cell lists; the footer holds the
    average ranks (with ``ranks``) and the runs counted when some are missing."""
    body = []
    for d in table.datasets:
        best = table.best(d)
        row = [escape(d)]
        for c in table.configs:
            if (d, c) not in table.cells:
                row.append(missing)
                continue
            text = _fmt(*table.cells[(d, c)][:2], digits, pm)
            row.append(bold(text) if c in best else text)
        body.append(row)
    footer = []
    if ranks is not None:
        best = _best_ranks(table, ranks)
        row = [rank_label]
        for c in table.configs:
            text = f"{ranks[c]:.2f}" if c in ranks else missing
            row.append(bold(text) if c in best else text)
        footer.append(row)
    if table.has_missing_runs():
        footer.append([n_label] + _n_row(table))
    return body, footer


# Backslash first, or the other replacements' backslashes would be escaped again.
_TEX_ESCAPES = [("\\", r"\textbackslash{}"), ("&", r"\&"), ("%", r"\%"), ("#", r"\#"), ("_", r"\_"),
                ("$", r"\$"), ("{", r"\{"), ("}", r"\}"), ("~", r"\textasciitilde{}"),
                ("^", r"\textasciicircum{}")]


def latex_escape(text: str) -> str:
    """``text`` safe in LaTeX running text (dataset and config names such as ``ggp_large``)."""
    out = []
    for ch in str(text):
        for raw, esc in _TEX_ESCAPES:
            if ch == raw:
                out.append(esc)
                break
        else:
            out.append(ch)
    return "".join(out)


def latex_table(table: CellTable, caption: str, label: str, digits: int = 4,
                ranks: Mapping[str, float] | None = None) -> str:
    """The same table in LaTeX (booktabs; needs ``\\usepackage{booktabs}``), best in ``\\textbf``.

    ``caption`` is LaTeX and is not escaped (it may hold math); names in the table are.
    """
    def row(cells: list[str]) -> str:
        return " & ".join(cells) + r" \\"

    lines = [r"\begin{table}[htbp]", r"\centering", rf"\caption{{{caption}}}", rf"\label{{{label}}}",
             r"\begin{tabular}{l" + "r" * len(table.configs) + "}", r"\toprule",
             row(["Dataset"] + [latex_escape(c) for c in table.configs]), r"\midrule"]
    body, footer = _cells(table, ranks, digits, r" $\pm$ ", _MISSING_TEX, lambda t: rf"\textbf{{{t}}}", latex_escape,
                          "Average rank", "$n$")
    lines += [row(r) for r in body]
    footer = [row(r) for r in footer]
    if footer:
        lines += [r"\midrule"] + footer
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
    return "\n".join(lines) + "\n"


# -- effort -------------------------------------------------------------------------------


def _mean(xs: list[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


def _num(r: Mapping[str, Any], key: str) -> float | None:
    v = r.get(key)
    return None if v is None else float(v)


def effort_table(records: Iterable[Mapping[str, Any]]) -> str:
    """Markdown: what each config spent — runs, failed runs, evaluations, failures, time vs budget.

    Each mean is over the runs that report the number (a failed run often reports none).
    The failure rate is failed / evaluations per run, then averaged; runs with no
    evaluation have no rate. "over budget" counts runs whose time exceeded their budget
    and gives the largest overrun, because a method that overruns had more time than the
    others and its results are not comparable.
    """
    by_config: dict[str, list[Mapping[str, Any]]] = {}
    for r in records:
        by_config.setdefault(r["config"], []).append(r)

    def num(x: float | None, fmt: str) -> str:
        return _MISSING_MD if x is None else format(x, fmt)

    lines = [_md_row(["config", "runs", "failed runs", "mean evaluations", "mean evaluations/min",
                      "mean failure rate", "mean time / budget (s)", "over budget"]),
             _md_row(["---"] + ["---:"] * 7)]
    for config, runs in by_config.items():
        failed_runs = sum(1 for r in runs if r.get("status") != "done")
        evals = [v for r in runs if (v := _num(r, "evaluations")) is not None]
        rate = [v for r in runs if (v := _num(r, "evals_per_minute")) is not None]
        fail_rate = [float(r.get("failed") or 0) / e for r in runs
                     if (e := _num(r, "evaluations")) is not None and e > 0]
        timed = [(t, b) for r in runs if (t := _num(r, "time")) is not None and (b := _num(r, "budget")) is not None]
        over = [t - b for t, b in timed if t > b]
        if timed:
            time_text = f"{_mean([t for t, _ in timed]):.1f} / {_mean([b for _, b in timed]):.1f}"
        else:
            time_text = _MISSING_MD
        over_text = f"{len(over)} (max +{max(over):.1f} s)" if over else "0"
        lines.append(_md_row([_md_escape(config), str(len(runs)), str(failed_runs), num(_mean(evals), ".1f"),
                              num(_mean(rate), ".1f"), num(_mean(fail_rate), ".1%"), time_text, over_text]))
    return "\n".join(lines) + "\n"
