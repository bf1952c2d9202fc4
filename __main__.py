"""``python -m ggp_automl …``: the command line (the same as ``ggp-automl …`` and ``python cli.py …``)."""
import sys

from ggp_automl.commands.main import main

sys.exit(main())
