"""``cli.py report``: tables, rank tests and curves of an experiment directory (experiments/report.py)."""
from __future__ import annotations


from ..search.options import alpha, path_arg
from ._common import EXIT_OK


def run(args) -> int:
    from ggp_automl.experiments import make_report

    path = make_report(args.experiment_dir, args.out, tuple(args.measure or ()), args.alpha, args.blocks)
    print(path.read_text(encoding="utf-8"))
    print(f"report: {path} (LaTeX: {path.with_suffix('.tex')})")
    return EXIT_OK


#: the sub-command, and its line in ``--help`` (the parser lists every command without importing them)
NAME, HELP = "report", ("tables, rank tests, critical-difference diagrams and anytime curves of an experiment "
                        "directory")


def register(sub) -> None:
    """Add ``report`` to the command line's sub-commands."""
    p = sub.add_parser(NAME, help=HELP)
    p.add_argument("experiment_dir", type=path_arg, metavar="DIR")
    p.add_argument("--out", type=path_arg, metavar="DIR", help="where report.md, report.tex and figures go "
                                                            "(default DIR/report)")
    p.add_argument("--measure", action="append", metavar="NAME",
                   help="a test measure to report (repeatable; default: fitness, exact_match, hamming_loss, f1_macro, "
                        "ranking_loss for multi-label data, error_rate and macro_f_measure for single-label)")
    p.add_argument("--alpha", type=alpha, default=0.05, help="significance level (default 0.05)")
    p.add_argument("--blocks", choices=["dataset", "fold"], default="dataset",
                   help="rank per dataset (mean over folds and seeds; the thesis's way, default) or per run")
    p.set_defaults(func=run)
