"""``python -m ggp_automl …``: the command line (the same as ``ggp-automl …`` and ``python cli.py …``)."""
import sys

try:
    from ggp_automl.commands.main import main
except KeyboardInterrupt:  # Ctrl-C while the program loads: the documented 130, not a traceback
    print("interrupted", file=sys.stderr)
    sys.exit(130)

sys.exit(main())
