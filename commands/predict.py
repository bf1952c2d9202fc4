"""``cli.py predict``: a run's final model applied to new data (the work: results/predict.py)."""
from __future__ import annotations

from pathlib import Path

from ..search.options import UsageError, path_arg
from ._common import EXIT_OK, csv_cell


def run(args) -> int:
    import numpy as np

    from ggp_automl.results.predict import predict_run

    result = predict_run(args.run, args.data, args.scores)
    out = Path(args.out) if args.out else Path(args.run) / f"predictions-{Path(args.data).name.split('.')[0]}.csv"
    try:
        np.savetxt(out, result.table, delimiter=",", header=",".join(csv_cell(h) for h in result.header),
                   comments="", fmt=result.fmt)
    except OSError as exc:
        raise UsageError(f"cannot write {out}: {exc.strerror or exc}") from None
    print(f"{len(result.predictions)} predictions written to {out}")
    what = "classes" if result.single_label else "labels"
    if result.measures is not None:
        print(f"measures against the file's {what} ({result.n_known} of {result.n_rows} rows have them): "
              + result.summary)
    else:
        print(f"the file's {what} are unknown ('?'): no measures")
    return EXIT_OK


#: the sub-command, and its line in ``--help`` (the parser lists every command without importing them)
NAME, HELP = 'predict', "predict the labels of a dataset with a run's final model"


def register(sub) -> None:
    """Add ``predict`` to the command line's sub-commands."""
    p = sub.add_parser(NAME, help=HELP)
    p.add_argument("run", type=path_arg, metavar="DIR",
                   help="a finished run directory; its best/model.joblib is a pickle, and loading it runs the code "
                        "it holds: use run directories you trust (a model file whose checksum differs from the one "
                        "the run recorded is refused)")
    p.add_argument("--data", required=True, metavar="FILE", help="data with the training data's features, matched by column name")
    p.add_argument("--out", type=path_arg, metavar="FILE", help="CSV to write (default DIR/predictions-<data>.csv)")
    p.add_argument("--scores", action="store_true", help="also write each label's score")
    p.set_defaults(func=run)
