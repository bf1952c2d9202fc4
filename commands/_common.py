"""What several commands share: exit codes, loading a grammar, the dataset options, a run's plug-ins."""
from __future__ import annotations

import argparse
import sys

from ..search.options import UsageError, positive_int


EXIT_OK, EXIT_INPUT, EXIT_USAGE = 0, 1, 2


def load_grammar_file(path: str):
    from ggp_automl.gp.bnf_parser import load_grammar

    return load_grammar(path)


def load_checked_grammar(path: str):
    """The grammar file at ``path`` checked as every command and both estimators check one: BNF, bounds and
    annotations (the parser), then every token against the mapper's registry
    (:func:`spaces.grammar_check.registry_check`, which ``evolve`` and the estimators call in
    ``search.run.start``). Returns the grammar, the mapper's warnings and the kind of model it builds."""
    from ggp_automl.spaces.grammar_check import registry_check

    grammar = load_grammar_file(path)
    warnings, produced = registry_check(grammar)
    return grammar, warnings, produced


def print_warnings(grammar, more=()) -> None:
    for w in [*grammar.warnings, *more]:
        print(w.render(), file=sys.stderr)


def fmt_count(value) -> str:
    from ggp_automl.gp.analysis import COUNT_CAP

    if value == float("inf"):
        return "infinite (recursive grammar)"
    if value >= COUNT_CAP:  # counts saturate there (gp/analysis.py)
        return f"more than {COUNT_CAP:.0e}"
    if isinstance(value, int) and value < 10**7:
        return f"{value:,}"
    return f"{float(value):.4g}"


def add_dataset_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("dataset (for bounds such as floor(L/2); default: the embedded synthetic dataset)")
    g.add_argument("--data", metavar="FILE", help="ARFF dataset (single-label, MULAN with .xml, or MEKA with -C q) or "
                                                   "CSV (with --target)")
    g.add_argument("--target", metavar="NAME[,NAME…]", help="the class attribute, or the label attributes, of --data")
    g.add_argument("--labels", type=positive_int, metavar="L", help="number of labels (single-label: classes)")
    g.add_argument("--features", type=positive_int, metavar="M", help="number of features")
    g.add_argument("--instances", type=positive_int, metavar="N", default=None, help="number of instances")


def dataset_meta(args, grammar=None):
    """(meta, where the meta comes from, the loaded Dataset or None). Without data, the embedded default
    of the grammar's task (a grammar the mapper cannot read gets the multi-label default)."""
    from ggp_automl.evaluation.data import load_dataset
    from ggp_automl.evaluation.task import task_of_record
    from ggp_automl.gp.binding import DatasetMeta
    from ggp_automl.gp.errors import GrammarError

    if args.data and (args.labels or args.features):
        raise UsageError("give either --data or --labels/--features, not both")
    if args.target and not args.data:
        raise UsageError("--target names attributes of --data")
    if args.data:
        dataset = load_dataset(args.data, unlabelled=True, target=args.target)
        return dataset.meta, args.data, dataset
    if args.labels or args.features:
        if not (args.labels and args.features):
            raise UsageError("--labels and --features go together")
        return DatasetMeta(args.labels, args.features, args.instances or 0), "command line", None
    task = None  # the multi-label default, as for a record without a task
    if grammar is not None:
        from ggp_automl.search.run_data import grammar_task

        try:
            task = grammar_task(grammar)
        except GrammarError:
            pass
    default = task_of_record(task).default_data
    return default.meta, default.name, None


def csv_cell(text: str) -> str:
    return f'"{text}"' if any(c in text for c in ',"\n') else text
