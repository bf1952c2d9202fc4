"""``cli.py evolve``: start or resume a search and say how it ended."""
from __future__ import annotations

import sys
from pathlib import Path

from ..search.options import (BUILT_IN_OPTIONS, DEFAULT_GRAMMAR, EVOLVE_SETTINGS, UsageError, add_evolve_arguments,
                              declared_parameters, run_config)
from ._common import EXIT_INPUT, EXIT_OK, load_grammar_file, print_warnings


def run(args) -> int:
    from ggp_automl.search import RunConfig, load_run_data, resume, start
    from ggp_automl.search.progress import RichProgress

    observers = [] if args.quiet else [RichProgress()]
    if args.resume:
        given = [f"--{k.replace('_', '-')}" for k in EVOLVE_SETTINGS if getattr(args, k) is not None]
        given += [p.option for p in declared_parameters()
                  if p.option not in BUILT_IN_OPTIONS and getattr(args, p.name, None) is not None]
        if given:
            raise UsageError(f"--resume continues a run with its own settings; {', '.join(given)} cannot be "
                             "changed (only --workers and --scheduler can)")
        try:  # the options' own rules, before the run directory is touched
            RunConfig(workers=args.workers, scheduler=args.scheduler)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        out = args.run_dir = Path(args.resume)
        outcome = resume(out, observers, workers=args.workers, scheduler=args.scheduler)
    else:
        from ggp_automl.search.run_data import N_FOLDS, grammar_task

        config = run_config(args)
        grammar = load_grammar_file(args.grammar or DEFAULT_GRAMMAR)
        print_warnings(grammar)
        fold, folds = args.fold or (None, N_FOLDS)
        data = load_run_data(args.data, args.test, fold, args.target, grammar_task(grammar), folds)
        if config.fitness is not None:
            try:
                data.train.task.check_fitness(config.fitness)
            except ValueError as exc:
                raise UsageError(f"--fitness: {exc}") from None
        from ggp_automl.search.rundir import default_run_name

        out = args.run_dir = Path(args.out) if args.out else Path("runs") / default_run_name(config.method)
        outcome = start(config, grammar, data, out, observers, argv=sys.argv,
                        warn=lambda line: print(line, file=sys.stderr))
    return _report_outcome(outcome, out)


def _report_outcome(outcome, out: Path) -> int:
    final = outcome.final
    print(f"\nrun directory: {out}")
    if outcome.winner is None:
        print(f"no model: {final['status']}"
              + (f" ({final['refit_failure']})" if final.get("refit_failure") else ""), file=sys.stderr)
        print(f"see the failure reasons with: python cli.py inspect {out}", file=sys.stderr)
        return EXIT_INPUT
    from ggp_automl.evaluation.task import task_of_record

    task = task_of_record(final.get("task"))
    fitness = final.get("fitness") or task.default_fitness
    w = final["winner"]
    c = final["counts"]
    print(f"best:         {w['phenotype']}")
    print(f"validation:   {fitness} {w['valid_fitness']:.4f} (re-evaluated on a fresh split)")
    returned = final.get("model") or {}
    if returned.get("refit") is False:  # issue 25: the final re-evaluation's model, not refit on all rows
        print(f"fitted on:    {returned['rows']} of {returned['of']} training rows ({returned['fitted_on']}): "
              f"not refit on all rows ({returned.get('refit_failure')})")
    if final.get("test_failure"):
        print(f"test:         {final['test_failure']}")
    if final.get("test"):
        m = final["test"]["measures"]
        print(f"test:         {fitness} {m.get(fitness, float('nan')):.4f}  {task.summary(m)}"
              f"  ({final['test']['n_instances']} instances, {final['test']['source']})")
    print(f"evaluations:  {c['evaluations']} ({c['failed']} failed, {c['cached']} cache hits) in "
          f"{c['generations']} generations, {final['time']:.0f} s")
    for warning in final.get("warnings", []):
        print(f"warning: {warning}", file=sys.stderr)
    print(f"model:        {out / 'best' / 'model.joblib'} (code: {out / 'best' / 'model.py'})")
    print(f"inspect:      python cli.py inspect {out}")
    return EXIT_OK


#: the sub-command, and its line in ``--help`` (the parser lists every command without importing them)
NAME, HELP = 'evolve', "search the grammar's space for the best model of a dataset"


def register(sub) -> None:
    """Add ``evolve`` to the command line's sub-commands (its options: search/options.py)."""
    p = sub.add_parser(NAME, help=HELP,
                       description="Search a grammar's space of classifiers (multi-label methods, e.g. "
                                   "grammars/large.bnf, or single-label classifiers, e.g. grammars/ensembles.bnf) "
                                   "for a dataset of the same task. Without --data the embedded synthetic dataset "
                                   "of the grammar's task is used; without --grammar, grammars/large.bnf.")
    add_evolve_arguments(p)
    p.set_defaults(func=run)
