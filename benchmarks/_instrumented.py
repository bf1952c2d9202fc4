"""Run ``cli.py`` with every candidate evaluation timed from the outside (used by bench_throughput.py).

    PYTHONPATH=TREE python benchmarks/_instrumented.py TIMING.jsonl evolve ARGS...

Why a wrapper: worker utilisation and useful work must be measured the same way for the code
before and after a change, without trusting either version's own accounting. The wrapper
replaces ``evaluation.engine.evaluate_one`` (the call every local worker thread makes per
candidate, in both versions) with a timed twin, and records when the search phase starts
(``SearchLoop.search``) and ends (``SearchLoop.choose``). It imports whatever tree is first on
``PYTHONPATH``, so the same wrapper measures a worktree of an older commit.
"""
from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path


#: where an old tree (before issue 23) kept the command line, the engine and the loop
_OLD_LAYOUT = ("cli", "evaluation.engine", "gp.search.loop")


def main() -> int:
    out_path, argv = sys.argv[1], sys.argv[2:]
    sys.argv = ["cli.py"] + argv
    tree = Path(os.environ.get("PYTHONPATH", ".").split(os.pathsep)[0])
    if (tree / "gp" / "search" / "loop.py").exists():
        # A tree from before issue 23 (another checkout, first on PYTHONPATH): its modules had bare
        # top-level names, which this checkout's own code never imports (tests/test_architecture.py).
        import importlib

        cli, engine, loop = (importlib.import_module(name) for name in _OLD_LAYOUT)
    else:
        from ggp_automl import cli
        from ggp_automl.evaluation import engine
        from ggp_automl.search import loop

    lock = threading.Lock()
    events: list[dict] = []
    phases: dict[str, float] = {}
    original = engine.evaluate_one

    def timed(*args, **kwargs):
        t0 = time.time()
        result = original(*args, **kwargs)
        t1 = time.time()
        with lock:
            events.append({"start": t0, "end": t1, "status": None if result is None else result.status})
        return result

    engine.evaluate_one = timed

    def mark(name, fn):
        def wrapper(self, *a, **k):
            phases.setdefault(name, time.time())
            return fn(self, *a, **k)
        return wrapper

    if hasattr(loop.SearchLoop, "search"):  # before issue 23 the search phase was a method of the loop
        loop.SearchLoop.search = mark("search_start", loop.SearchLoop.search)
    else:  # since, a function of search/run.py (run_loop looks it up by name when it calls it)
        from ggp_automl.search import run as run_module

        search = run_module.search

        def search_marked(the_loop):
            phases.setdefault("search_start", time.time())
            return search(the_loop)

        run_module.search = search_marked
    loop.SearchLoop.choose = mark("search_end", loop.SearchLoop.choose)
    try:
        code = cli.main(argv)
    finally:
        with open(out_path, "w") as f:
            json.dump({"phases": phases, "events": events}, f)
    return code


if __name__ == "__main__":
    sys.exit(main())
