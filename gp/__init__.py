"""Grammar engine, derivation trees, operators, search methods and sampling policies."""
from .binding import BoundGrammar, DatasetMeta
from .bnf_parser import load_grammar, parse_grammar
from .errors import GrammarError, PhenotypeError
from .generate import TreeGenerator
from .grammar import Grammar
from .phenotype import parse_phenotype
from .policy import ChoiceContext, SamplingPolicy, UniformPolicy
from .tree import Leaf, Node

__all__ = ["BoundGrammar", "ChoiceContext", "DatasetMeta", "Grammar", "GrammarError", "Leaf", "Node",
           "PhenotypeError", "SamplingPolicy", "TreeGenerator", "UniformPolicy", "load_grammar",
           "parse_grammar", "parse_phenotype"]


def __getattr__(name: str):
    # The estimator pulls in the search stack (scikit-learn, DEAP, Dask); import it on demand.
    if name in ("GrammarAutoML", "GrammarAutoMLClassifier"):
        from . import automl

        return getattr(automl, name)
    raise AttributeError(f"module 'gp' has no attribute {name!r}")
