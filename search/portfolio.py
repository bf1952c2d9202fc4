"""A portfolio: candidates learned across datasets, which a search evaluates before anything else.

Why: on the budgets people give a search (minutes on a laptop) a run that starts from a random
population spends most of its time rediscovering what runs on other datasets already found. A
portfolio (auto-sklearn 2.0, Feurer et al., JMLR 2022) is an ordered list of candidates chosen
greedily so that, over many datasets, the best of them is as good as possible; a run starts from
it (``--warm-start``, :meth:`~ggp_automl.search.methods.base.SearchMethod.warm_start`) and its
members are then ordinary candidates: evaluated under the ordinary limits, bred, modelled, or
dropped when they fail on the user's data. ``cli.py portfolio build`` makes one
(:mod:`ggp_automl.experiments.portfolio`).

A portfolio belongs to one grammar: the file records the grammar's sha256 and a run refuses a
portfolio of another grammar. The one that ships for a grammar lies beside it as
``NAME.portfolio.json`` (``grammars/large.portfolio.json``), which is what ``--warm-start
portfolio`` (the default) means; a grammar of one's own gets one the same way.

The file (JSON)::

    {"format": "ggp-automl portfolio", "version": 1,
     "grammar": "large.bnf", "grammar_sha256": "…",
     "members": [{"phenotype": "BR RandomForest 100 0 0 PCut1", "source": "sample",
                  "gain": 0.41, "mean": 0.83}, …],          # in the order they were chosen
     "datasets": ["Emotions", …], "held_out": null,        # a leave-one-dataset-out portfolio names D
     "folds": {"Emotions": [1, 2], …}, "budget": {…}, "command": "python cli.py portfolio build …",
     "created": "2026-11-28T…", "machine_seconds": 1234.5}
"""
from __future__ import annotations

import datetime as _dt
import hashlib
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from ..gp.errors import InputError, PhenotypeError
from ..gp.phenotype import parse_phenotype
from .errors import RunError

FORMAT, VERSION = "ggp-automl portfolio", 1
#: a shipped (or one's own) grammar's portfolio: ``large.bnf`` → ``large.portfolio.json`` beside it
SUFFIX = ".portfolio.json"
#: ``--warm-start`` values besides a file
SHIPPED, NONE = "portfolio", "none"
#: members a portfolio may hold (a run evaluates all of them first)
MAX_MEMBERS = 10_000


class PortfolioError(InputError, ValueError):
    """A portfolio file that cannot be used (the message names the file and what is wrong); exit 1."""


@dataclass(frozen=True)
class Member:
    """One candidate of a portfolio: its phenotype, where it came from (``sample``, or ``run:DATASET``
    for a finished run's candidate), what adding it gained (the greedy rule's step) and its mean
    normalised fitness over the portfolio's datasets."""

    phenotype: str
    source: str = "sample"
    gain: float | None = None
    mean: float | None = None

    def to_dict(self) -> dict:
        return {"phenotype": self.phenotype, "source": self.source, "gain": self.gain, "mean": self.mean}


@dataclass(frozen=True)
class Portfolio:
    members: tuple[Member, ...]
    grammar: str
    grammar_sha256: str
    datasets: tuple[str, ...] = ()
    #: the dataset a leave-one-dataset-out portfolio was built without (None: built from all)
    held_out: str | None = None
    folds: dict = field(default_factory=dict)
    budget: dict = field(default_factory=dict)
    command: str = ""
    created: str = ""
    machine_seconds: float | None = None

    @property
    def phenotypes(self) -> list[str]:
        return [m.phenotype for m in self.members]

    def to_dict(self) -> dict:
        return {"format": FORMAT, "version": VERSION, "grammar": self.grammar, "grammar_sha256": self.grammar_sha256,
                "members": [m.to_dict() for m in self.members], "datasets": list(self.datasets),
                "held_out": self.held_out, "folds": self.folds, "budget": self.budget, "command": self.command,
                "created": self.created or _dt.datetime.now().isoformat(timespec="seconds"),
                "machine_seconds": self.machine_seconds}

    def save(self, path: str | Path) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(self.to_dict(), indent=1) + "\n", encoding="utf-8")
        tmp.replace(path)
        return path

    @classmethod
    def load(cls, path: str | Path) -> "Portfolio":
        """The portfolio in ``path``; :class:`PortfolioError` saying what is wrong with the file."""
        path = Path(path)
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise PortfolioError(f"{path}: cannot read the portfolio: {exc.strerror or exc}") from None
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            where = f"{path}:{exc.lineno}:{exc.colno}" if isinstance(exc, json.JSONDecodeError) else str(path)
            raise PortfolioError(f"{where}: not a portfolio file (not valid JSON: {getattr(exc, 'msg', exc)})") \
                from None
        problems = _problems(doc)
        if problems:
            raise PortfolioError(f"{path}: not a usable portfolio: {'; '.join(problems)}")
        members = tuple(Member(m["phenotype"], str(m.get("source", "sample")), _number(m.get("gain")),
                               _number(m.get("mean"))) for m in doc["members"])
        return cls(members, doc["grammar"], doc["grammar_sha256"], tuple(doc.get("datasets") or ()),
                   doc.get("held_out"), doc.get("folds") or {}, doc.get("budget") or {}, str(doc.get("command", "")),
                   str(doc.get("created", "")), _number(doc.get("machine_seconds")))


def _number(value) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) \
        and math.isfinite(value) else None


def _problems(doc) -> list[str]:
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        return [f'no "format": "{FORMAT}"']
    p = []
    if doc.get("version") != VERSION:
        p.append(f"version {doc.get('version')!r}; this ggp-automl reads version {VERSION}")
    for key in ("grammar", "grammar_sha256"):
        if not isinstance(doc.get(key), str) or not doc[key]:
            p.append(f'"{key}" is missing')
    members = doc.get("members")
    if not isinstance(members, list) or not members:
        p.append('"members" is not a list of candidates')
    elif len(members) > MAX_MEMBERS:
        p.append(f"{len(members):,} members; at most {MAX_MEMBERS:,}")
    else:
        bad = [i for i, m in enumerate(members, 1)
               if not isinstance(m, dict) or not isinstance(m.get("phenotype"), str) or not m["phenotype"].strip()]
        if bad:
            p.append(f"member(s) {', '.join(map(str, bad[:5]))} have no phenotype")
    if doc.get("held_out") is not None and not isinstance(doc["held_out"], str):
        p.append('"held_out" is not a dataset name')
    return p


def sha256(path: str | Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def shipped_portfolio(grammar_path: str | Path) -> Path:
    """Where the portfolio of the grammar in ``grammar_path`` lies (it may not exist)."""
    grammar_path = Path(grammar_path)
    return grammar_path.with_name(grammar_path.name.removesuffix(".bnf") + SUFFIX)


def resolve(spec: str | None, grammar_path: str | Path) -> tuple[Path | None, list[str]]:
    """The portfolio file ``--warm-start spec`` means for the grammar in ``grammar_path``, and warnings.

    ``none`` (or None): no warm start. ``portfolio``: the grammar's own (:func:`shipped_portfolio`)
    when there is one; when it was made for another version of the grammar (the file was edited
    since) the run starts cold and says so. A FILE must exist and be of this grammar:
    :class:`PortfolioError` otherwise."""
    if spec is None or spec == NONE:
        return None, []
    if spec == SHIPPED:
        path = shipped_portfolio(grammar_path)
        if not path.is_file():
            return None, []
        portfolio = Portfolio.load(path)
        if Path(grammar_path).is_file() and portfolio.grammar_sha256 != sha256(grammar_path):
            return None, [f"{path} was made for another version of {Path(grammar_path).name} (the grammar has "
                          "changed since); the run starts without a warm start (build a new one with `cli.py "
                          "portfolio build`, or give --warm-start none to silence this)"]
        return path.resolve(), []
    path = Path(spec)
    portfolio = Portfolio.load(path)  # a missing or broken file: PortfolioError
    check_grammar(portfolio, path, grammar_path)
    return path.resolve(), []


def check_grammar(portfolio: Portfolio, path: str | Path, grammar_path: str | Path) -> None:
    """:class:`PortfolioError` unless ``portfolio`` was made for the grammar in ``grammar_path``."""
    if Path(grammar_path).is_file() and portfolio.grammar_sha256 != sha256(grammar_path):
        raise PortfolioError(f"{path} is a portfolio of another grammar ({portfolio.grammar}, sha256 "
                             f"{portfolio.grammar_sha256[:12]}…), not of {grammar_path} (sha256 "
                             f"{sha256(grammar_path)[:12]}…): a portfolio's candidates are trees of its own grammar. "
                             "Build one for this grammar (`cli.py portfolio build`) or give --warm-start none")


def member_trees(portfolio: Portfolio, bound, max_depth: int | None = None) -> tuple[list, list[str]]:
    """The members' derivation trees under ``bound`` (the run's grammar bound to its data), in order,
    and a warning for the members this data rules out (a hyper-parameter's range bound to the data's
    shape, a tree deeper than the run's depth limit): those are left out, the rest is used."""
    trees, left_out = [], []
    for m in portfolio.members:
        try:
            tree = parse_phenotype(m.phenotype, bound)
        except PhenotypeError:
            left_out.append(m.phenotype)
            continue
        if max_depth is not None and tree.depth > max_depth:
            left_out.append(m.phenotype)
            continue
        trees.append(tree)
    warnings = []
    if left_out:
        shown = "; ".join(p if len(p) <= 60 else p[:59] + "…" for p in left_out[:3])
        warnings.append(f"{len(left_out)} of the portfolio's {len(portfolio.members)} members cannot be derived for "
                        f"this data or depth limit and are left out ({shown}{'; …' if len(left_out) > 3 else ''})")
    return trees, warnings


def warm_started(method, config) -> list[str]:
    """Hand the run's portfolio (``config.warm_start``, resolved to a file or ``none``) to ``method``, attached
    to the run's grammar and data; the warnings to print (members this data rules out)."""
    if config.warm_start == NONE:
        return []
    trees, warnings = member_trees(Portfolio.load(config.warm_start), method.variation.bound, config.max_depth)
    method.warm_start(trees)
    return warnings


def verify(path: str | Path, grammar, meta) -> str:
    """``cli.py check --portfolio``: the portfolio in ``path`` against ``grammar`` (a loaded Grammar) bound to
    ``meta``; a line saying it is fine, or :class:`PortfolioError` naming every member that does not derive."""
    portfolio = Portfolio.load(path)
    check_grammar(portfolio, path, grammar.path)
    bound = grammar.bind(meta)
    bad = []
    for i, m in enumerate(portfolio.members, 1):
        try:
            parse_phenotype(m.phenotype, bound)
        except PhenotypeError as exc:
            bad.append(f"member {i}: {exc}")
    if bad:
        raise PortfolioError(f"{path}: {len(bad)} of {len(portfolio.members)} members are not trees of "
                             f"{grammar.path} for this data: " + "; ".join(bad[:5]) + ("; …" if len(bad) > 5 else ""))
    made = f", made from {len(portfolio.datasets)} dataset(s)" if portfolio.datasets else ""
    return f"{path}: OK ({len(portfolio.members)} members of {Path(grammar.path).name}{made})"


def check_unchanged(config, record: dict) -> None:
    """A resumed run's portfolio exists and is the file it started with (``config.json``'s sha256), as its
    grammar must be: :class:`RunError` otherwise."""
    if config.warm_start == NONE:
        return
    if not Path(config.warm_start).is_file():
        raise RunError(f"the run's portfolio {config.warm_start} no longer exists")
    if record.get("warm_start_sha256") and sha256(config.warm_start) != record["warm_start_sha256"]:
        raise RunError(f"portfolio {config.warm_start} has changed since the run started; a resumed run must use the "
                       "same warm start (restore the file, or start a new run)")
