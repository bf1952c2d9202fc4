"""The options of ``evolve``: argument types, the evolve parser's options and the RunConfig they make.

Why a module of its own, beneath both the command line and the experiment harness: ``cli.py evolve``
parses these options, and ``cli.py bench`` checks every run of an experiment file against the very same
parser and rules before anything runs, so a misspelt option fails in the file, not an hour later.
The search layer owns them because every option becomes a :class:`~ggp_automl.search.config.RunConfig`
field or a method's declared parameter (``search/parameters.py``).
"""
from __future__ import annotations

import argparse
from pathlib import Path

from ..gp.shipped import DEFAULT_GRAMMAR


class UsageError(Exception):
    pass


def int_at_least(minimum: int, what: str):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"expected a number ≥ {minimum}, got {value}")
        return value
    return parse


positive_int = int_at_least(1, "a whole number")


seed_number = int_at_least(0, "an integer seed")


def species_list(text: str) -> list:
    """``1,8,grammars/species/large-trees.bnf`` → [1, 8, 'grammars/species/large-trees.bnf'] (the numbers are
    generated species; a file is checked when the run starts). A file whose name holds a comma is one entry."""
    if Path(text).is_file():
        return [text]
    out = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            raise argparse.ArgumentTypeError(f"expected species numbers 1-8 and species files separated by commas, "
                                             f"got {text!r}")
        if part.isdigit():
            if not 1 <= int(part) <= 8:
                raise argparse.ArgumentTypeError(f"the generated species are numbered 1 to 8, got {part} (a species "
                                                 "of your own is a grammar file)")
            out.append(int(part))
        else:
            out.append(part)
    return out


def fold_spec(text: str) -> tuple[int, int]:
    """``K`` (fold K of 5) or ``K/N`` (fold K of an outer N-fold)."""
    from ggp_automl.search.run_data import MAX_FOLDS, N_FOLDS

    k, _, n = text.partition("/")
    folds = int_at_least(2, "a number of folds")(n) if n else N_FOLDS
    if folds > MAX_FOLDS:
        raise argparse.ArgumentTypeError(f"at most {MAX_FOLDS} folds, got {folds}")
    value = positive_int(k)
    if value > folds:
        raise argparse.ArgumentTypeError(f"folds are numbered 1 to {folds}, got {value}")
    return value, folds


_DURATION_UNITS = {"s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600, "d": 86400}


_MEMORY_UNITS = {"": 2 ** 20, "b": 1, "k": 2 ** 10, "kb": 2 ** 10, "m": 2 ** 20, "mb": 2 ** 20, "g": 2 ** 30,
                 "gb": 2 ** 30, "kib": 2 ** 10, "mib": 2 ** 20, "gib": 2 ** 30}


def duration(text: str) -> float:
    """``90``, ``90s``, ``10m``, ``1.5h``, ``1h30m`` → seconds (> 0)."""
    import re

    t = text.strip().lower()
    parts = re.findall(r"(\d+(?:\.\d+)?)\s*([a-z]*)", t)
    if not parts or re.sub(r"(\d+(?:\.\d+)?)\s*([a-z]*)", "", t).strip():
        raise argparse.ArgumentTypeError(f"expected a duration such as 90s, 10m, 1h or 1h30m, got {text!r}")
    total = 0.0
    for number, unit in parts:
        if unit not in _DURATION_UNITS and unit != "":
            raise argparse.ArgumentTypeError(f"unknown time unit {unit!r} in {text!r} (use s, m or h)")
        total += float(number) * _DURATION_UNITS.get(unit, 1)
    if total <= 0:
        raise argparse.ArgumentTypeError(f"a duration must be positive, got {text!r}")
    return total


def memory_size(text: str) -> int:
    """``2GB``, ``512MB``, ``2048`` (MB) → bytes (the range is RunConfig's and the machine's: run_config)."""
    import math
    import re

    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*", text)
    if not m or m.group(2).lower() not in _MEMORY_UNITS:
        raise argparse.ArgumentTypeError(f"expected a memory size such as 2GB or 512MB, got {text!r}")
    value = float(m.group(1)) * _MEMORY_UNITS[m.group(2).lower()]
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a memory size such as 2GB or 512MB, got {text!r}")
    return int(value)


def path_arg(text: str) -> str:
    """A file or directory argument: an empty one would silently mean the current or a default folder."""
    if not text or "\0" in text:
        raise argparse.ArgumentTypeError(f"expected a file or directory name, got {text!r}")
    return text


def alpha(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a significance level is a number, got {text!r}") from None
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"a significance level lies between 0 and 1, got {text}")
    return value


def ensemble_spec(text: str) -> str:
    from ggp_automl.search.ensemble_spec import parse_ensemble

    try:
        parse_ensemble(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text.strip()


def scheduler_address(text: str) -> str:
    from ggp_automl.evaluation.engine import check_scheduler_address

    try:
        return check_scheduler_address(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def import_plugins(specs) -> tuple[str, ...]:
    """Import the user's algorithm modules (``--plugin``; spaces/plugins.py) before any grammar is checked."""
    from ggp_automl.spaces.plugins import load_plugins

    return load_plugins(specs or ())


def add_plugin_argument(p) -> None:
    p.add_argument("--plugin", action="append", type=path_arg, metavar="MODULE|FILE.py",
                   help="import a module that registers algorithms of your own (spaces/README.md, \"Plug-in "
                        "algorithms\"); repeatable; recorded with the run, imported in every worker")


EVOLVE_SETTINGS = ("grammar", "data", "test", "fold", "target", "method", "budget", "eval_timeout", "memory",
                    "seed", "fitness", "cv", "out", "population", "fidelity", "generations", "mode", "screening",
                    "adaptive_timeout", "thesis", "ensemble", "trace_test", "plugin", "species", "warm_start")


#: evolve option -> RunConfig field, for the options passed on as given (RunConfig holds the defaults)
_CONFIG_FIELDS = {"method": "method", "budget": "budget_seconds", "eval_timeout": "eval_timeout",
                  "memory": "memory_bytes", "workers": "workers", "scheduler": "scheduler", "seed": "seed",
                  "fitness": "fitness", "cv": "cv", "generations": "max_generations", "fidelity": "fidelity",
                  "mode": "mode", "ensemble": "ensemble", "trace_test": "trace_test",
                  "warm_start": "warm_start"}


def run_config(args):
    from ggp_automl.search import RunConfig
    from ggp_automl.search.config import THESIS_SETTINGS

    settings = dict(THESIS_SETTINGS) if args.thesis else {}  # explicit options below win over --thesis
    settings.update({field: getattr(args, option) for option, field in _CONFIG_FIELDS.items()
                     if getattr(args, option) is not None})
    if args.screening is not None:
        settings["screening"] = args.screening == "on"
    if args.adaptive_timeout is not None:
        settings["adaptive_timeout"] = args.adaptive_timeout == "on"
    params: dict = {}  # the GGP family's knobs given by the built-in options, for the methods that declare them
    if args.species:
        if settings.get("method") != "spggp":
            raise UsageError("--species goes with --method spggp")
        params["species"] = tuple(s for given in args.species for s in given)
    if args.population:
        n = args.population
        settings.update(population=n, batch_size=n)
        if settings.get("method") == "spggp":
            from ggp_automl.search.methods import method_class

            k = len(params.get("species", method_class("spggp").declared("species").default))
            if n % k:
                raise UsageError(f"--population for spggp must be a multiple of the {k} species (it is split "
                                 f"evenly between them), got {n}")
            params["species_size"] = n // k
    settings["method_params"] = {**method_params(args, settings.get("method", "ggp")), **params}
    if args.plugin:  # imported now, so that a broken one is said before anything else happens
        settings["plugins"] = import_plugins(args.plugin)
    try:
        config = RunConfig(**settings)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    check_memory(args.memory, config.scheduler)
    return config


def method_params(args, method: str) -> dict:
    """The chosen method's declared parameters given on the command line (ggp_automl.search.parameters); an
    option that belongs only to other methods is a usage error."""
    from ggp_automl.search.methods import METHODS, known_methods

    known_methods()
    declared = {p.name for p in METHODS[method].parameters}
    for other in declared_parameters():
        if getattr(args, other.name, None) is not None and other.name not in declared and \
                other.option not in BUILT_IN_OPTIONS:
            raise UsageError(f"{other.option} is a parameter of {', '.join(owners(other.name))}, not of {method}")
    return {name: getattr(args, name) for name in declared if getattr(args, name, None) is not None}


def declared_parameters():
    """Every registered method's parameters, one per name (the first declaration's type and help)."""
    from ggp_automl.search.methods import METHODS, known_methods

    known_methods()
    seen = {}
    for cls in METHODS.values():
        for p in cls.parameters:
            seen.setdefault(p.name, p)
    return list(seen.values())


def owners(name: str) -> list[str]:
    from ggp_automl.search.methods import METHODS

    return [m for m, cls in METHODS.items() if any(p.name == name for p in cls.parameters)]


def parameter_type(p):
    def parse(text: str):
        try:
            return p.parse(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    return parse


#: options of `evolve` that exist whatever the method; a method parameter of the same name receives their value
BUILT_IN_OPTIONS: set[str] = set()


def check_memory(memory: int | None, scheduler: str | None) -> None:
    """A --memory above this machine's memory limits nothing (the candidates run here unless a cluster does)."""
    from ggp_automl.evaluation.isolation import machine_memory
    from ggp_automl.search.config import format_bytes

    if memory is not None and scheduler is None and memory > machine_memory():
        raise UsageError(f"--memory {format_bytes(memory)} is more than this machine's "
                         f"{format_bytes(machine_memory())} of memory; give at most {machine_memory() // 2**30}GB")


def add_evolve_arguments(p: argparse.ArgumentParser) -> None:
    """Every option of ``evolve``, the declared parameters of every registered method among them."""

    from ggp_automl.evaluation.metrics import fitness_names
    from ggp_automl.search.methods import known_methods

    p.add_argument("--grammar", metavar="FILE", help=f"search space (default {DEFAULT_GRAMMAR.name})")
    p.add_argument("--data", metavar="FILE", help="training data: ARFF (single-label: the last attribute is the "
                                                   "class; multi-label: MULAN with .xml, MEKA with -C q), CSV (with "
                                                   "--target) or openml:NAME (default: the embedded synthetic dataset)")
    held_out = p.add_mutually_exclusive_group()
    held_out.add_argument("--test", metavar="FILE", help="test set, measured once with the final model")
    held_out.add_argument("--fold", type=fold_spec, metavar="K[/N]",
                          help="hold out fold K of a stratified 5-fold split of --data as the test set (K/N: "
                               "fold K of N, an outer N-fold; iterative stratification for multi-label data)")
    p.add_argument("--method", choices=known_methods(), help="search method (default ggp)")
    p.add_argument("--budget", type=duration, metavar="TIME", help="whole-run time budget, e.g. 90s, 10m, 1h "
                                                                    "(default 10m)")
    p.add_argument("--eval-timeout", type=duration, metavar="TIME",
                   help="hard cap on a candidate's time (default: a tenth of the budget); below it the limit "
                        "adapts to how long successful candidates take (see --adaptive-timeout)")
    p.add_argument("--adaptive-timeout", choices=["on", "off"],
                   help="stop a candidate that runs far longer than the successful ones did (default on)")
    p.add_argument("--mode", choices=["async", "generational"],
                   help="async: a free worker at once gets the next candidate (default where the method has it: "
                        "ggp, spggp, random); generational: the thesis's generations (beam search)")
    p.add_argument("--screening", choices=["on", "off"],
                   help="fit new candidates on a stratified third of the learning rows first and promote the "
                        "best third to all of them (successive halving; default on)")
    p.add_argument("--thesis", action="store_true", default=None,
                   help="the Auto-MEKA thesis's exact settings: generational, a fixed 180 s limit per candidate, "
                        "no screening (options given with it win)")
    p.add_argument("--memory", type=memory_size, metavar="SIZE",
                   help="memory a candidate may add to its worker's own (default 2GB; at least 64MB, at most this "
                        "machine's memory)")
    p.add_argument("--workers", type=positive_int, metavar="N",
                   help="candidates evaluated at a time (default: every core)")
    p.add_argument("--scheduler", type=scheduler_address, metavar="ADDR",
                   help="evaluate on a Dask cluster (tcp://HOST:PORT) instead of local processes")
    p.add_argument("--seed", type=seed_number, help="random seed (default 0)")
    p.add_argument("--target", metavar="NAME[,NAME…]",
                   help="the class attribute (single-label) or the label attributes (multi-label) of --data; "
                        "default: a MULAN .xml or MEKA -C for multi-label ARFF, else the last attribute as the "
                        "class; CSV files need it")
    p.add_argument("--fitness", choices=fitness_names(), metavar="NAME",
                   help="what the search maximises (default: multi-label fitness, Auto-MEKA's Eq. 5.1; "
                        "single-label accuracy = 1 - error rate); multi-label: "
                        + ", ".join(fitness_names("multilabel")) + "; single-label: "
                        + ", ".join(fitness_names("singlelabel")))
    p.add_argument("--cv", type=int_at_least(0, "a number of folds"), metavar="K",
                   help="evaluate each candidate by K-fold internal cross-validation of the training data "
                        "(0: the 80/20 learning/validation hold-out; default 10 for single-label data, as "
                        "PBIL-Auto-Ens, and 0 for multi-label data, as Auto-MEKA)")
    p.add_argument("--population", type=positive_int, metavar="N",
                   help="population (GGP), number of species x species size (spGGP: 8 x 10 unless --species) or "
                        "batch size (random, beam); default 80")
    p.add_argument("--species", action="append", type=species_list, metavar="S[,S…]",
                   help="spGGP's species (default 1,2,…,8): a number 1-8 is a species generated from the grammar's "
                        "hyper-parameter annotations (gp/species.py), anything else a species grammar file of your "
                        "own, labelled in the records by its name without .bnf (search/README.md, 'Writing a "
                        "species'); comma-separated or repeated, e.g. --species 1,8,grammars/species/large-trees.bnf; "
                        "--population is split evenly between them")
    p.add_argument("--fidelity", choices=["NAS-NIS", "PAS-PIS", "EAS-PIS", "NAS-PIS", "PAS-NIS", "EAS-NIS"],
                   help="multi-fidelity schedule (thesis §5.4; default NAS-NIS: none)")
    p.add_argument("--generations", type=positive_int, metavar="N", help="stop after N generations at most")
    p.add_argument("--ensemble", type=ensemble_spec, metavar="caruana[:SIZE]",
                   help="return an ensemble of the evaluated candidates instead of the single best: Caruana's "
                        "greedy selection with replacement (SIZE picks, default 25) on the validation scores of "
                        "the final re-evaluation, members refit on all the training data")
    p.add_argument("--trace-test", action="store_true", default=None,
                   help="also score every evaluated candidate on the test set (--test or --fold), recorded as "
                        "test_fitness for anytime test curves and never shown to the search")
    p.add_argument("--warm-start", type=path_arg, metavar="portfolio|FILE|none",
                   help="evaluate a portfolio's candidates first (search/portfolio.py): 'portfolio' (default) the one "
                        "that ships beside the grammar (NAME.portfolio.json) if any, a portfolio FILE of the same "
                        "grammar (cli.py portfolio build), or 'none' to start from nothing")
    add_plugin_argument(p)
    p.add_argument("--out", type=path_arg, metavar="DIR", help="run directory (default runs/<date>-<time>-<method>)")
    p.add_argument("--resume", type=path_arg, metavar="DIR", help="continue an interrupted run from its directory")
    p.add_argument("--quiet", action="store_true", help="no progress display")
    BUILT_IN_OPTIONS.update(p._option_string_actions)
    group = p.add_argument_group("method parameters (declared by each method; search/README.md)")
    for param in declared_parameters():
        if param.option not in BUILT_IN_OPTIONS:
            flag = {"nargs": "?", "const": True} if param.type is bool else {}  # --reshuffle alone means on
            group.add_argument(param.option, dest=param.name, type=parameter_type(param), metavar="VALUE",
                               help=f"{param.help} (default {param.default}; {', '.join(owners(param.name))})",
                               **flag)
        else:  # an option every method has, passed on to the methods that declare it: say so in its help
            action = p._option_string_actions[param.option]
            action.help = f"{action.help}; {param.help} (default {param.default})"


def evolve_parser() -> argparse.ArgumentParser:
    """A parser of evolve's options alone (what ``cli.py bench`` checks an experiment's runs with)."""
    p = argparse.ArgumentParser(prog="cli.py evolve")
    add_evolve_arguments(p)
    return p
