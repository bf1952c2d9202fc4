#!/usr/bin/env python3
"""ggp-automl command line.

    python cli.py evolve  [--grammar FILE] [--data FILE [--target NAME[,NAME…]] [--test FILE | --fold K]]
                          [--method ggp|spggp|random|beam|pbil] [--budget 10m] [--eval-timeout 60s] [--memory 2GB]
                          [--workers N] [--seed S] [--mode async|generational] [--screening on|off]
                          [--adaptive-timeout on|off] [--thesis] [--fitness NAME] [--cv K] [--out DIR]
                          [--scheduler tcp://HOST:PORT] [--species S[,S…]] [--plugin MODULE|FILE.py …]
                          [the method's own options, e.g. --learning-rate 0.3]
    python cli.py evolve  --resume DIR [--workers N] [--scheduler ADDR]
    python cli.py inspect DIR
    python cli.py predict DIR --data FILE [--out FILE] [--scores]
    python cli.py check   --grammar FILE [--data FILE [--target NAME[,NAME…]] | --labels L --features M]
                          [--rules] [--plugin MODULE|FILE.py …]
    python cli.py sample  --grammar FILE -n N --seed S [--data FILE [--target …] | --labels L --features M]
    python cli.py species --grammar FILE [--out DIR]
    python cli.py bench   EXPERIMENT.toml|DIR [--out DIR] [--scheduler tcp://HOST:PORT] [--dry-run] [--quiet]
    python cli.py report  DIR [--out DIR] [--measure NAME …] [--alpha 0.05] [--blocks dataset|fold]

Exit codes: 0 success; 1 a grammar, dataset, run-directory or other input problem (the
message says where: ``file:line:col``), a run that found no working model, or an internal
error (a bug in ggp-automl: one line says so and where the traceback was written — the run
directory when there is one, else the system's temporary folder); 2 bad command-line usage;
130 interrupted (an interrupted ``evolve`` resumes with ``--resume``). No command prints a
Python traceback.
"""
from __future__ import annotations

import sys

if __name__ == "__main__" and not __package__:
    # run as a script from the checkout (``python cli.py``): the checkout is the ggp_automl package
    from pathlib import Path

    _here = str(Path(__file__).resolve().parent)
    try:
        import ggp_automl  # noqa: F401 - installed (pip install -e . or .) or importable already
    except ImportError:
        import importlib.util

        _spec = importlib.util.spec_from_file_location("ggp_automl", Path(_here) / "__init__.py",
                                                       submodule_search_locations=[_here])
        sys.modules["ggp_automl"] = importlib.util.module_from_spec(_spec)
        _spec.loader.exec_module(sys.modules["ggp_automl"])

try:
    from ggp_automl.commands.main import build_parser, main  # noqa: E402
except KeyboardInterrupt:  # Ctrl-C while the program loads: the documented 130, not a traceback
    if __name__ != "__main__":
        raise
    print("interrupted", file=sys.stderr)
    sys.exit(130)

__all__ = ["build_parser", "main"]

if __name__ == "__main__":
    sys.exit(main())
