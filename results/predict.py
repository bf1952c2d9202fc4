"""A run's final model applied to new data: ``cli.py predict`` is this function and a print.

Why here and not in the command: a notebook, a scheduler or a test predicts from a run directory the
same way, with the same checks — the directory is a finished run, its config says what data the model
was trained on, the new data has the same features (matched by name: evaluation/data/schema.py), shape
and task, the run's plug-ins are imported before the
model is unpickled. Loading ``best/model.joblib`` executes code (as any pickle): open run directories
you trust only.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..evaluation.data import FeatureSchema, load_dataset, load_new_data, recode_classes
from ..evaluation.task import task_of_record
from ..gp.errors import DataError
from ..search.health import json_object
from ..search.rundir import RunDirectory, recorded_plugins
from ..spaces.plugins import load_plugins


@dataclass
class Predictions:
    """What :func:`predict_run` made: the predicted labels (or classes), their scores, and what to write."""
    predictions: np.ndarray
    scores: np.ndarray
    header: list
    table: np.ndarray
    fmt: object
    #: the measures against the file's own labels (None when every row's labels are unknown)
    measures: dict | None
    summary: str
    n_known: int
    n_rows: int
    single_label: bool


def import_run_plugins(run: Path) -> None:
    """Import the plug-ins a run directory's config.json names: its model may hold their estimators."""
    plugins = recorded_plugins(run)
    if plugins:
        load_plugins(plugins)


def _check_model_checksum(run_dir: RunDirectory, model_path: Path) -> None:
    """Refuse a model file that is not the one the run wrote (final.json records its SHA-256; runs before
    issue 24 recorded none): unpickling it would run whatever code it holds."""
    import hashlib

    final, _ = json_object(run_dir.path / "final.json")
    recorded = (final or {}).get("model_sha256")
    if not isinstance(recorded, str):
        return
    try:
        actual = hashlib.sha256(model_path.read_bytes()).hexdigest()
    except OSError as exc:
        raise run_dir.damaged("best/model.joblib", f"unreadable: {exc.strerror or exc}", "the model cannot be used") \
            from None
    if actual != recorded:
        owner = _writer(model_path)
        whose = f"it belongs to another run ({owner})" if owner and owner != run_dir.run_id else \
            "it is not this run's model"
        raise run_dir.damaged("best/model.joblib", f"its checksum differs from the one final.json recorded when the "
                                                   f"run wrote it: {whose}, and loading it would run the code it "
                                                   "holds", "the model is not used (best/model.py has the run's "
                                                            "code, to fit it again)")


def _writer(model_path: Path) -> str | None:
    """The run id a model file carries (search/finish.py ``RUN_MARK``), read from its bytes, never unpickled."""
    import re

    from ..search.finish import RUN_MARK

    m = re.search(re.escape(RUN_MARK.encode()) + rb"([0-9a-f]{16})", model_path.read_bytes())
    return m.group(1).decode() if m else None


def predict_run(run: str | Path, data: str | Path, with_scores: bool = False) -> Predictions:
    """Predict the rows of ``data`` with the final model of the run directory ``run``.

    Raises DataError (or the run directory's own error) with a message that says what is wrong: not a
    run, an unfinished run, a damaged file, data of another shape or task.
    """
    run = Path(run)
    model_path = run / "best" / "model.joblib"
    if not (run / "config.json").is_file():
        raise DataError(f"{run} is not a run directory (no config.json)")
    if not model_path.exists():
        raise DataError(f"{run} has no fitted model yet ({model_path} is missing): the run is unfinished; "
                        f"continue it with `python cli.py evolve --resume {run}`")
    run_dir = RunDirectory(run)
    trained = run_dir.config().get("data")
    if not isinstance(trained, dict) or not all(type(trained.get(k)) is int for k in ("n_features", "n_labels")):
        raise run_dir.damaged("config.json", "the training data's shape is missing",
                              "new data cannot be checked against the model")
    task_class = task_of_record(trained.get("task"))
    single = task_class.single_label
    classes_ok = isinstance(trained.get("classes"), list) and all(isinstance(c, str) for c in trained["classes"])
    if single and not classes_ok:
        raise run_dir.damaged("config.json", "the training data's classes are missing", "predictions cannot be named")
    from ..spaces.model import ModelFileError, load_model, model_file_problem  # scikit-learn: not for `inspect`

    problem = model_file_problem(model_path)
    if problem:
        raise run_dir.damaged("best/model.joblib", problem, "the model cannot be used (best/model.py has its code, "
                                                            "to fit it again)")
    _check_model_checksum(run_dir, model_path)
    import_run_plugins(run)  # the model may hold estimators of the run's plug-ins
    try:
        model = load_model(model_path)
    except ModelFileError as exc:
        raise run_dir.damaged("best/model.joblib", exc.reason, "the model cannot be used (best/model.py has its "
                                                                "code, to fit it again)") from None
    target = trained.get("target") if isinstance(trained.get("target"), str) else None
    if "features" in trained:  # columns by name (runs before issue 24 recorded only their number)
        try:
            schema = FeatureSchema.from_record(trained["features"])
        except ValueError as exc:
            raise run_dir.damaged("config.json", str(exc), "new data cannot be checked against the model") from None
        if len(schema.names) != trained["n_features"]:
            raise run_dir.damaged("config.json", f"{len(schema.names)} feature names for {trained['n_features']} "
                                                 "features", "new data cannot be checked against the model")
        new = load_new_data(data, schema, f"the run's training data ({trained.get('name', 'config.json')})",
                            unlabelled=True, target=target)
    else:
        new = load_dataset(data, unlabelled=True, target=target)
    if single != (new.Y.ndim == 1):
        raise DataError(f"{data}: {new.task.name} data, but the model was trained on {trained.get('task')} data")
    if new.n_features != trained["n_features"] or new.n_labels != trained["n_labels"]:
        raise DataError(f"{data}: {new.n_features} features and {new.n_labels} target column(s), but the model "
                        f"was trained on {trained['n_features']} features and {trained['n_labels']}")
    if single:
        task, Y = task_class(tuple(trained["classes"])), recode_classes(new, trained["classes"], str(data))
    else:
        task, Y = task_class(new.label_names), new.Y
    predictions, scores = task.outputs(model, new.X)
    header, table, fmt = task.prediction_table(predictions, scores, with_scores, new.label_names)
    known = task.labelled(Y)
    measures = task.measures(Y[known], predictions[known], scores[known]) if known.any() else None
    return Predictions(predictions, scores, header, table, fmt, measures,
                       task.summary(measures) if measures else "", int(known.sum()), len(known), single)
