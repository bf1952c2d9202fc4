"""The generational driver (``--mode generational``, the thesis's protocol).

Each generation: choose the data view (redrawn every ``resample_every`` generations for
methods that resample; the multi-fidelity period from the clock), ask the method for the
whole batch, evaluate it — with screening, by successive halving over the rungs
(:mod:`ggp_automl.search.screening`) — tell the method, log the generation, checkpoint. Every
worker waits for the generation's slowest candidate; the asynchronous driver
(:mod:`ggp_automl.search.asynchronous`) is the remedy, this one is kept for reproduction.

Resume replays the interrupted generation: the restored rng asks for the same batch, and
evaluations logged after the checkpoint are served from the log (:meth:`SearchLoop.evaluate`).
"""
from __future__ import annotations

import time

from ggp_automl.evaluation.engine import MIN_START_SECONDS
from ggp_automl.evaluation.splits import draw_seed

from .individual import Individual
from .loop import SearchLoop
from .state import new_stats
from .screening import survivors


def run_generational(loop: SearchLoop) -> None:
    st, cfg = loop.state, loop.config
    step_clock = st.elapsed if loop.resumed else None
    while True:
        if cfg.max_generations is not None and st.generation >= cfg.max_generations:
            break
        deadline = loop.search_deadline()
        if time.time() >= deadline - MIN_START_SECONDS:
            break
        g = st.generation
        period = st.method.resample_period
        if period and g > 0 and g % period == 0:
            st.resample += 1
            st.split_seed = draw_seed(st.rng)
        clock = step_clock if step_clock is not None else loop.now()
        step_clock = None  # a resumed run replays its first generation in the period it was in
        step = loop.period(clock)
        key, split = loop.view(step)
        st.cache.use_view(key)
        batch = st.method.ask(st.rng)
        evaluated, stats, complete = evaluate_generation(loop, batch, key, split, step, deadline, g)
        if not complete:
            st.partial = evaluated
            break
        st.method.tell(evaluated)
        loop.log_generation(g, key, evaluated, stats)
        loop.checkpoint()


def evaluate_generation(loop: SearchLoop, batch: list[Individual], key: str, split, step: int, deadline: float,
                        g: int) -> tuple[list[Individual], dict, bool]:
    """The batch with fitness set, the generation's counts, and whether it finished before the deadline.

    Without screening: one evaluation each. With screening: successive halving — everyone on
    the cheapest rung, the top ⌈n/η⌉ of the ones that worked on the next, and so on; each
    keeps the level and fitness of the last rung it reached.
    """
    rungs = loop.rungs(key, split)
    top = len(rungs) - 1
    measured: dict[int, tuple[float, int]] = {}
    alive = list(range(len(batch)))
    stats = new_stats()
    for r, (rkey, rsplit) in enumerate(rungs):
        results, rstats = loop.evaluate([batch[i] for i in alive], rkey, rsplit, deadline, "search", g,
                                        level=r - top, timing=(step, r))
        for name in stats:
            stats[name] += rstats[name]
        for i, res in zip(alive, results):
            if res is not None:
                measured[i] = (res.fitness, r - top)
        if any(res is None for res in results):  # the deadline cut this generation short
            return [batch[i].with_fitness(*measured[i]) for i in sorted(measured)], stats, False
        if r < top:
            alive = survivors([(i, res.ok, res.fitness) for i, res in zip(alive, results)], loop.screening.eta)
    return [ind.with_fitness(*measured[i]) for i, ind in enumerate(batch)], stats, True
