"""The command line: one parser whose sub-commands are the modules of this package, and the exit codes.

Exit codes: 0 success; 1 a grammar, dataset, run-directory or other input problem (the message says
where: ``file:line:col``), a run that found no working model, or an internal error (a bug in
ggp-automl: one line says so and where the traceback was written — the run directory when there is
one, else the system's temporary folder); 2 bad command-line usage; 130 interrupted (an interrupted
``evolve`` resumes with ``--resume``). No command prints a Python traceback.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..search.rundir import recorded_plugins
from ..search.options import UsageError, import_plugins
from . import bench, check, evolve, inspect, portfolio, predict, report, sample, species
from ._common import EXIT_INPUT, EXIT_OK, EXIT_USAGE

#: the sub-commands, in the order ``--help`` lists them
COMMANDS = (evolve, inspect, predict, check, sample, bench, report, portfolio, species)
#: the program's name in messages: ``cli.py`` from the checkout, ``ggp-automl`` when installed
PROG = "ggp-automl" if sys.argv and Path(sys.argv[0]).name == "ggp-automl" else "cli.py"


def preload_plugins(argv: list[str]) -> None:
    """Import the plug-ins the command line names (``--plugin``) or the run it resumes recorded, before
    the parser is built: a plug-in that registers a search method makes ``--method NAME`` and that
    method's parameters valid options. Anything else on the line is left to the real parser."""
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--plugin", action="append", default=[])
    pre.add_argument("--resume")
    try:
        known, _ = pre.parse_known_args(argv)
    except SystemExit:  # a malformed line: the real parser says what is wrong
        return
    specs = [s for s in known.plugin if s]
    if known.resume:
        specs += recorded_plugins(Path(known.resume))
    if specs:
        import_plugins(specs)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The whole command line; with ``command``, only that sub-command's options (the others, and all of
    them for ``command=""``, are listed by name and help line). Why: the options of ``evolve`` come from every registered search method and
    measure, which import scikit-learn and the methods' libraries (seconds on a laptop); ``check``,
    ``inspect``, ``--help`` or a usage error should not wait for them."""
    parser = argparse.ArgumentParser(prog=PROG, description="Grammar-guided AutoML.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in COMMANDS:
        if command is None or module.NAME == command:
            module.register(sub)
        else:
            sub.add_parser(module.NAME, help=module.HELP)
    return parser


def chosen_command(argv: list[str]) -> str | None:
    """The sub-command ``argv`` names (its first word, as argparse reads it: the program has no options
    of its own but ``--help``); None when it names none."""
    names = {module.NAME for module in COMMANDS}
    return argv[0] if argv and argv[0] in names else None


def main(argv: list[str] | None = None) -> int:
    seen: dict = {}  # what _main got to, for the messages below
    try:
        return _main(argv, seen)
    except KeyboardInterrupt:
        from ggp_automl.evaluation.isolation import kill_running_children

        kill_running_children()
        run_dir = getattr(seen.get("args"), "run_dir", None)
        hint = f"; continue with: python cli.py evolve --resume {run_dir}" \
            if run_dir and (Path(run_dir) / "config.json").is_file() else ""
        experiment_dir = getattr(seen.get("args"), "experiment_dir_made", None)
        if experiment_dir:
            hint = f"; continue with: python cli.py bench {experiment_dir}"
        print(f"interrupted{hint}", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into `head` and closed early: not an error
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except Exception as exc:  # noqa: BLE001 - a bug in this program: one line and a log, not a traceback
        log = _crash_log(argv, getattr(seen.get("args"), "run_dir", None))
        where = f"the traceback is in {log}" if log else "the traceback could not be written to a file"
        what = (str(exc).splitlines() or [""])[0][:200]
        print(f"internal error (a bug in ggp-automl, not a problem with your input): {type(exc).__name__}: {what}\n"
              f"{where}; please report it with that file", file=sys.stderr)
        return EXIT_INPUT


def _crash_log(argv, run_dir) -> str | None:
    """Write the current exception's traceback to the run directory (if it is one), else the temp folder."""
    import datetime
    import os
    import tempfile
    import traceback

    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    text = (f"ggp-automl internal error, {datetime.datetime.now().isoformat()}\n"
            f"command: {' '.join(sys.argv[:1] + list(sys.argv[1:] if argv is None else argv))}\n"
            f"python {sys.version.split()[0]}\n\n{traceback.format_exc()}")
    places = [Path(run_dir)] if run_dir and (Path(run_dir) / "config.json").is_file() else []
    for place in places + [Path(tempfile.gettempdir())]:
        path = place / f"ggp-automl-crash-{stamp}-{os.getpid()}.log"
        try:
            path.write_text(text, encoding="utf-8", errors="backslashreplace")
            return str(path.resolve())
        except OSError:
            continue
    return None


def _main(argv: list[str] | None, seen: dict) -> int:
    for stream in (sys.stdout, sys.stderr):  # paths with undecodable bytes print as they came
        try:
            stream.reconfigure(errors="surrogateescape")
        except (AttributeError, ValueError):
            pass
    from ggp_automl.spaces.plugins import PluginError

    try:  # a plug-in may register a method: its name and parameters must be options of the parser
        preload_plugins(sys.argv[1:] if argv is None else argv)
    except PluginError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_INPUT
    try:
        words = sys.argv[1:] if argv is None else argv
        args = seen["args"] = build_parser(chosen_command(words) or "").parse_args(words)
    except SystemExit as exc:  # argparse's usage errors (2) and --help (0), as a return value
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    # the input errors of every layer derive from InputError (gp/errors.py): catching them imports none of
    # those layers, so that `check` or `inspect` never wait for the search's libraries to say "no such file"
    from ggp_automl.gp.errors import GrammarError, InputError

    try:
        return args.func(args)
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_INPUT
    except GrammarError as exc:
        for d in exc.diagnostics:
            print(d.render(), file=sys.stderr)
        n = sum(1 for d in exc.diagnostics if d.severity == "error")  # not the "… more not shown" note
        print(f"{n} error{'s' if n != 1 else ''}", file=sys.stderr)
        return EXIT_INPUT
    except UsageError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        raise
    except OSError as exc:  # the machine refused something (disk full, permissions) on a file it names
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"error: {where}{exc.strerror or exc}", file=sys.stderr)
        return EXIT_INPUT
