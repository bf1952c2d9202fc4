"""What a search holds between evaluations: the state a checkpoint keeps, and what the loop hands back.

Why apart from the loop (:mod:`ggp_automl.search.loop`): the drivers, the run and the final stage read and
build these records without needing the loop's machinery, and the loop's module stays one concern. A
checkpoint pickles :class:`SearchState`; :mod:`~ggp_automl.search.loop` still exposes these names, so a
checkpoint written before they moved here loads.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from deap import tools

from ggp_automl.evaluation.candidate import EvaluationResult
from ggp_automl.evaluation.splits import draw_seed

from .cache import EvaluationCache
from .config import RunConfig
from .ensemble_spec import ensemble_refits
from .individual import Individual
from .methods.base import SearchMethod
from .screening import Promotions
from .timekeeper import TimeKeeper


def new_stats() -> dict:
    return {"evaluated": 0, "failed": 0, "cached": 0}


@dataclass
class SearchState:
    """Everything a checkpoint holds."""

    rng: np.random.Generator
    final_rng: np.random.Generator
    method: SearchMethod
    keeper: TimeKeeper
    generation: int = 0
    resample: int = 0
    split_seed: int = 0
    elapsed: float = 0.0
    #: evaluation records written so far (their "n" are 0 .. logged-1)
    logged: int = 0
    generations_logged: int = 0
    counts: dict = field(default_factory=lambda: {"evaluations": 0, "failed": 0, "cached": 0})
    cache: EvaluationCache = field(default_factory=EvaluationCache)
    logbook: tools.Logbook = field(default_factory=tools.Logbook)
    #: evaluated members of a generation the deadline cut short
    partial: list[Individual] = field(default_factory=list)
    #: phenotype -> (search fitness, wall time) of the best full-fidelity evaluations
    walls: dict = field(default_factory=dict)
    #: asynchronous mode: the fidelity period of the current view, the candidates in flight
    #: at the checkpoint, what the open generation has told so far, and ASHA's promotions
    step: int = 1
    in_flight: list = field(default_factory=list)
    window: list[Individual] = field(default_factory=list)
    window_stats: dict = field(default_factory=new_stats)
    promotions: Promotions | None = None
    #: worker-seconds spent in search evaluations (any outcome) and in those that ended with a fitness
    busy_seconds: float = 0.0
    useful_seconds: float = 0.0
    #: the run directory's run id (``config.json``) when the checkpoint was written: resume refuses another's
    run_id: str | None = None
    #: budget seconds at which the search phase ended
    search_ended: float | None = None

    @classmethod
    def initial(cls, method: SearchMethod, config: RunConfig, workers: int) -> "SearchState":
        rng = np.random.default_rng(config.seed)
        final_rng = rng.spawn(1)[0]  # its own stream: the final split does not depend on where the search stopped
        refits = method.ensemble_refits() if config.ensemble_spec is None else ensemble_refits(config.ensemble_spec)
        keeper = TimeKeeper(config.budget_seconds, config.search_fraction, config.eval_timeout,
                            config.adaptive_timeout, workers, refits)
        return cls(rng=rng, final_rng=final_rng, method=method, keeper=keeper, split_seed=draw_seed(rng))


def result_from_record(record: dict) -> EvaluationResult:
    return EvaluationResult(record["phenotype"], record["status"], float(record["fitness"]),
                            dict(record.get("measures") or {}), float(record.get("fit_time", 0.0)),
                            float(record.get("predict_time", 0.0)), float(record.get("wall_time", 0.0)),
                            record.get("reason", ""), float(record.get("limit") or 0.0),
                            test_fitness=record.get("test_fitness"))


@dataclass
class KeptModel:
    """The model the final re-evaluation fitted for a candidate (:meth:`SearchLoop.choose`): what the
    run returns when no candidate can be refit on all the training rows."""

    candidate: Individual
    result: EvaluationResult
    #: the fitted model, pickled (:attr:`EvaluationResult.model`)
    model: bytes
    #: rows it was fitted on: the final split's learning rows, or its last fold's train rows
    rows: int
    #: rows it was scored on (validation rows, or every row out of fold) and the folds (0: hold-out)
    scored_rows: int
    folds: int


@dataclass
class SearchOutcome:
    """What a finished loop hands back (also written to ``final.json`` and ``best/``)."""

    winner: Individual | None
    final: dict
    model: object = None
    #: the generation records of this session (the run directory holds every session's)
    history: list[dict] = field(default_factory=list)
