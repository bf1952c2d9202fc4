"""The time-keeper's rules: hard cap from the budget, the adaptive limit, probes, the final plan; and
the final stage keeping to the budget (issue 9), with a fake engine and once with real workers."""
from __future__ import annotations

import pytest

from ggp_automl.evaluation.candidate import EvaluationResult
from ggp_automl.search.run import search
from ggp_automl.search import timekeeper as tk
from ggp_automl.search.timekeeper import TimeKeeper


def ok(wall: float, fitness: float = 0.5) -> EvaluationResult:
    return EvaluationResult("p", "ok", fitness, {}, wall, 0.0, wall)


def timeout(limit: float) -> EvaluationResult:
    return EvaluationResult("p", "timeout", 0.0, wall_time=limit, limit=limit)


def limits(keeper: TimeKeeper, n: int, level=None) -> list[float]:
    return [keeper.limit(level) for _ in range(n)]


def test_the_hard_cap_is_a_tenth_of_the_budget_unless_given():
    assert TimeKeeper(600).hard_cap == 60.0
    assert TimeKeeper(180).hard_cap == 18.0
    assert TimeKeeper(20).hard_cap == tk.FLOOR_SECONDS  # never below the floor
    assert TimeKeeper(600, eval_timeout=180).hard_cap == 180.0


def test_no_adaptive_limit_before_enough_successes():
    keeper = TimeKeeper(3600)  # hard cap 360 s
    for _ in range(tk.MIN_OBSERVATIONS - 1):
        keeper.observe(ok(1.0))
    assert set(limits(keeper, 5)) == {360.0}
    keeper.observe(ok(1.0))
    assert keeper.adaptive_limit() == pytest.approx(tk.SPREAD * 1.0)


def test_the_adaptive_limit_follows_the_typical_successful_time():
    keeper = TimeKeeper(3600)
    for wall in [0.5] * 8 + [10.0, 20.0]:  # heavy-tailed: the median is 0.5 s
        keeper.observe(ok(wall, fitness=0.1))
    assert keeper.adaptive_limit() == pytest.approx(tk.SPREAD * 0.5)
    # a candidate far slower than the typical successful one is stopped at that limit ...
    assert limits(keeper, tk.PROBE_EVERY - 1) == [pytest.approx(5.0)] * (tk.PROBE_EVERY - 1)
    # ... except every PROBE_EVERY-th, which may run to the hard cap
    assert keeper.limit() == 360.0


def test_the_limit_has_a_floor():
    keeper = TimeKeeper(3600)
    for _ in range(10):
        keeper.observe(ok(0.05))
    assert keeper.adaptive_limit() == tk.FLOOR_SECONDS


def test_a_slow_excellent_candidate_keeps_its_kind_in():
    """A 300-tree random forest under BR takes 100 s and is the best seen: its kind may take
    GOOD_SLACK x that, although the typical successful candidate takes 1 s — and only its kind."""
    keeper = TimeKeeper(3600)
    forest, other = {"BR", "RandomForest"}, {"BR", "J48"}
    for _ in range(20):
        keeper.observe(ok(1.0, fitness=0.4), algorithms=other)
    assert keeper.adaptive_limit(algorithms=forest) == pytest.approx(10.0)
    keeper.observe(ok(100.0, fitness=0.9), algorithms=forest)
    assert keeper.adaptive_limit(algorithms=forest) == pytest.approx(tk.GOOD_SLACK * 100.0)
    assert keeper.adaptive_limit(algorithms=other) == pytest.approx(10.0)  # one slow winner lifts no other kind
    assert keeper.adaptive_limit(algorithms={"CC", "RandomForest"}) == pytest.approx(10.0)
    for i in range(tk.TOP_KINDS):  # pushed out of the fittest kinds: the protection ends
        keeper.observe(ok(1.0, fitness=0.95), algorithms={"LC", f"A{i}"})
    assert keeper.adaptive_limit(algorithms=forest) == pytest.approx(10.0)


def test_the_limit_never_exceeds_the_hard_cap_and_is_off_when_asked():
    keeper = TimeKeeper(100)  # hard cap 10 s
    for _ in range(10):
        keeper.observe(ok(8.0))
    assert keeper.adaptive_limit() == 10.0
    fixed = TimeKeeper(100, eval_timeout=180, adaptive=False)
    for _ in range(10):
        fixed.observe(ok(1.0))
    assert fixed.adaptive_limit() is None and set(limits(fixed, 12)) == {180.0}


def test_limits_are_learned_per_fidelity_level():
    keeper = TimeKeeper(3600)
    for _ in range(10):
        keeper.observe(ok(2.0), level=(1, 0))
    assert keeper.adaptive_limit((1, 0)) == pytest.approx(20.0)
    assert keeper.adaptive_limit((1, 1)) is None  # a new level starts at the hard cap


def test_capped_candidates_and_saved_time_are_counted():
    keeper = TimeKeeper(600)  # hard cap 60 s
    assert keeper.observe(timeout(20.0)) == {"limit": 20.0, "capped": True}
    assert keeper.observe(timeout(60.0)) == {"limit": 60.0}  # the hard cap stopped it: not capped
    summary = keeper.summary()
    assert (summary["timeouts"], summary["capped"], summary["saved_seconds"]) == (2, 1, 40.0)


def test_search_end_leaves_time_for_the_best_candidates():
    keeper = TimeKeeper(1000, workers=2)  # the last 150 s are the final stage's anyway
    assert keeper.search_end() == 850.0
    keeper.observe_full(0.9, 100.0, keep=10)
    keeper.observe_full(0.8, 150.0, keep=10)
    # re-evaluating the two best in parallel (1.2 x 150) and refitting whichever wins: the slower one
    # could (1.5 x 150; issue 25: a slow runner-up won the re-evaluation and had no time to be refit)
    assert keeper.search_end() == pytest.approx(1000 - 180 - 225)


def test_a_short_budget_still_keeps_time_for_the_refit():
    assert TimeKeeper(5).search_end() == pytest.approx(5 - tk.MIN_FINAL_RESERVE)  # not 85 % (0.75 s left)
    assert TimeKeeper(3).search_end() == pytest.approx(tk.MIN_SEARCH_SHARE * 0.85 * 3)  # the search keeps half


def test_the_final_plan_takes_candidates_in_order_within_the_refit_reserve():
    keeper = TimeKeeper(100, eval_timeout=100, workers=1)
    chosen, end = keeper.final_plan([10.0, 50.0, 2.0, 2.0], now=60.0)
    # refit reserve 1.5 x 10 = 15 s: the window is 60..85 s; 12 s for the first, the 60 s one does not fit
    assert chosen == [0, 2, 3] and end == pytest.approx(85.0)


def test_no_re_evaluation_when_the_best_one_would_eat_the_refits_time():
    keeper = TimeKeeper(100, eval_timeout=100, workers=1)
    # the best needs 48 s to re-evaluate and 60 s to refit, with 20 s left: the refit gets them all,
    # and the fast runner-up is not re-evaluated either (it could win without a fair comparison)
    chosen, end = keeper.final_plan([40.0, 1.0], now=80.0)
    assert chosen == [] and 80.0 <= end <= 100.0
    assert keeper.final_plan([], now=99.0) == ([], 99.0)
    late = keeper.final_plan([1.0, 1.0], now=200.0)  # past the budget (a resumed run): nothing, no negative time
    assert late == ([], 200.0)


def test_the_refit_gets_the_time_left_and_never_more():
    keeper = TimeKeeper(30, eval_timeout=20)  # the old rule gave a failed candidate 1.25 x 20 s here
    assert keeper.refit_timeout(4.5, None) == 4.5
    assert keeper.refit_timeout(4.5, 2.0) == 4.5
    assert keeper.refit_timeout(4.5, 6.0) is None  # measured 6 s on fewer rows: it cannot end in 4.5 s
    assert keeper.refit_timeout(tk.MIN_REFIT_SECONDS - 0.1, None) is None and keeper.refit_timeout(-3.0, None) is None


# -- the runtime screen --------------------------------------------------------------------------

def test_the_screen_skips_only_on_enough_evidence():
    from ggp_automl.search.runtime import MIN_EVIDENCE, RuntimeScreen

    screen = RuntimeScreen()
    for _ in range(MIN_EVIDENCE - 1):
        screen.observe({"PMCC", "J48"}, "timeout", 4.0, limit=4.0)
    assert screen.verdict({"PMCC", "NaiveBayes"}, 4.0) is None  # one case too few
    screen.observe({"PMCC", "J48"}, "ok", 30.0, limit=360.0)  # finished, but past 4 s: evidence too
    reason = screen.verdict({"PMCC", "NaiveBayes"}, 4.0)
    assert reason is not None and f"{MIN_EVIDENCE} of {MIN_EVIDENCE} earlier candidates with PMCC" in reason
    for _ in range(MIN_EVIDENCE):  # J48 was only ever seen beside PMCC; in fast trees it is cleared again
        screen.observe({"BR", "J48"}, "ok", 0.5, limit=4.0)
    assert screen.verdict({"BR", "J48"}, 4.0) is None
    assert screen.skipped == 1


def test_the_screen_weighs_finished_and_censored_runs_by_the_limit():
    from ggp_automl.search.runtime import RuntimeScreen

    screen = RuntimeScreen()
    for _ in range(10):
        screen.observe({"MCC"}, "timeout", 3.0, limit=3.0)  # past 3 s: says nothing about 20 s
    assert screen.verdict({"MCC"}, 3.0) is not None
    assert screen.verdict({"MCC"}, 20.0) is None
    for _ in range(10):
        screen.observe({"MCC"}, "ok", 1.0, limit=3.0)  # half of them finish within 3 s
    assert screen.verdict({"MCC"}, 3.0) is None
    for _ in range(10):
        screen.observe({"LWL"}, "error", 0.1, limit=3.0)  # failures say nothing about time
    assert screen.verdict({"LWL"}, 3.0) is None


def test_probes_and_the_first_candidates_are_never_skipped():
    keeper = TimeKeeper(3600)
    for _ in range(20):
        keeper.observe(ok(0.2), algorithms={"BR"})
        keeper.observe(timeout(3.0), algorithms={"PMCC"})
    decisions = [keeper.assign(algorithms={"PMCC"}) for _ in range(2 * tk.PROBE_EVERY)]
    skipped = [d for d in decisions if d[1] is not None]
    probes = [d for d in decisions if d[0] == 360.0]
    assert len(probes) == 2 and all(d[1] is None for d in probes)
    assert len(skipped) == len(decisions) - 2 and all(d[0] == tk.FLOOR_SECONDS for d in skipped)
    fresh = TimeKeeper(3600)
    assert fresh.assign(algorithms={"PMCC"}) == (360.0, None)  # nothing learned yet: run it


# -- the final stage keeps to the budget (issue 9) ----------------------------------------------

@pytest.fixture
def refits(monkeypatch):
    """fit_final replaced by a recorder: (phenotype, its time limit) of every refit started."""
    from ggp_automl.evaluation.final import FinalFit

    calls = []

    def fake_fit(tree, grammar, X, Y, categorical_features=(), X_test=None, Y_test=None, limits=None, task=None,
                 random_state=0):
        calls.append((tree.phenotype, limits.timeout))
        return FinalFit("ok", model={"phenotype": tree.phenotype})

    monkeypatch.setattr("ggp_automl.search.finish.fit_final", fake_fit)
    return calls


def searched_loop(grammars, budget: float, left: float, engine_class=None, **engine):
    """A random search run with the fake engine (or ``engine_class``), then its clock set to ``left``
    seconds before the end."""
    import time

    from ggp_automl.search import RunConfig, make_method
    from ggp_automl.search.loop import SearchLoop, SearchState
    from ggp_automl.search.run import default_dataset

    from .test_search import FakeEngine

    config = RunConfig(method="random", batch_size=6, max_generations=3, budget_seconds=budget, eval_timeout=20,
                       mode="generational", screening="off")
    fake = (engine_class or FakeEngine)(**engine)
    train = default_dataset()
    method = make_method(config, grammars["small"], train.meta)
    loop = SearchLoop(config=config, grammar=grammars["small"], train=train, engine=fake,
                      state=SearchState.initial(method, config, fake.workers))
    search(loop)
    loop.t0 = time.time() - (budget - left)
    return loop, fake


def test_candidates_that_all_failed_are_not_refit(grammars, refits):
    """The hostile-user report: every candidate timed out, and the refit of three of them with
    1.25 x the hard cap each turned a 30 s budget into 59 s."""
    from ggp_automl.search.finish import finish

    loop, _ = searched_loop(grammars, 30, 4.5, cost=lambda p: 1e9)
    outcome = finish(loop)
    assert refits == [] and outcome.winner is None
    assert outcome.final["status"] == "every candidate failed" and outcome.final["overrun_seconds"] == 0.0


def test_the_refit_gets_at_most_the_time_left(grammars, refits):
    from ggp_automl.search.finish import finish

    loop, _ = searched_loop(grammars, 600, 10.0)
    outcome = finish(loop)
    assert outcome.winner is not None and len(refits) == 1
    assert 8.0 < refits[0][1] <= 10.0


def test_no_time_left_means_no_refit_and_a_clear_status(grammars, refits):
    from ggp_automl.search.finish import finish

    loop, fake = searched_loop(grammars, 600, 1.5, cost=lambda p: 2.0)
    searched = len(fake.calls)
    outcome = finish(loop)
    assert len(fake.calls) == searched  # no re-evaluation either: it would have eaten the refit's time
    assert refits == [] and outcome.winner is None
    assert outcome.final["status"] == "no model could be refit within the budget"
    assert "1.5 s of the budget were left" in outcome.final["refit_failure"]
    assert "took 2.0 s on the learning rows alone; give a larger --budget" in outcome.final["refit_failure"]


def test_a_winner_too_slow_for_the_time_left_gives_way_to_a_faster_runner_up(grammars, refits):
    from ggp_automl.search.finish import finish

    slow = {}

    def cost(phenotype):  # every other phenotype takes 6 s
        return slow.setdefault(phenotype, 6.0 if len(slow) % 2 else 0.05)

    loop, _ = searched_loop(grammars, 600, 4.0, cost=cost)
    outcome = finish(loop)
    ranked = [c.phenotype for c in loop.candidates()]
    assert len(refits) == 1 and slow[refits[0][0]] == 0.05 and refits[0][1] <= 4.0
    assert all(slow[p] == 6.0 for p in ranked[: ranked.index(refits[0][0])])  # the ones passed over were slow
    assert outcome.winner.phenotype == refits[0][0]


SLOW_GRAMMAR = """\
# Every candidate is a large ML-BPNN trained for thousands of epochs: each one times out.
<Start>        ::= <ML-BPNN> <pred_tshd>
<ML-BPNN>      ::= BPNN <ne> <nhu_bpnn> <lr_bpnn> <m_bpnn>
<ne>           ::= RANDOM-INT(5000, 10000)                       #@ type=int default=5000
<nhu_bpnn>     ::= RANDOM-INT(max(1, round(0.8*M)), M)           #@ type=int default=10 sentinel
<lr_bpnn>      ::= RANDOM-REAL(0.001, 0.1)                       #@ type=real default=0.1
<m_bpnn>       ::= RANDOM-REAL(0.2, 0.8)                         #@ type=real default=0.1 sentinel
<pred_tshd>    ::= PCut1                                         #@ type=cat default=PCut1
"""


def test_a_real_run_whose_every_candidate_times_out_keeps_to_its_budget(tmp_path):
    """End to end with real worker processes: 10 s of budget, a 4 s cap, every candidate past it. The
    old final stage refit two of them for 5 s each after the budget had run out (18 s in all)."""
    import time

    from ggp_automl.search import RunConfig, start
    from ggp_automl.search.run import default_dataset, describe_data

    grammar = tmp_path / "slow.bnf"
    grammar.write_text(SLOW_GRAMMAR)
    config = RunConfig(method="ggp", budget_seconds=10, eval_timeout=4, workers=1, screening=False)
    data = describe_data(default_dataset(), None, None, None, None, "synthetic default")
    t0 = time.monotonic()
    outcome = start(config, grammar, data, write=False)
    wall = time.monotonic() - t0
    assert outcome.winner is None and outcome.final["status"] == "every candidate failed"
    assert wall <= 10 + 1.5, f"{wall:.1f} s for a 10 s budget"
