"""The grammar engine: .bnf -> Lark -> grammar model -> derivation trees, generation, operators and the
sampling-policy seam. The bottom layer: it imports nothing else of ggp_automl."""
from .analysis import GrammarAnalysis  # first: it and binding set Grammar.analysis_type / binding_type
from .binding import BoundGrammar, DatasetMeta
from .bnf_parser import load_grammar, parse_grammar
from .errors import GrammarError, PhenotypeError
from .generate import TreeGenerator
from .grammar import Grammar
from .phenotype import parse_phenotype
from .policy import ChoiceContext, SamplingPolicy, UniformPolicy
from .tree import Leaf, Node

__all__ = ["BoundGrammar", "ChoiceContext", "DatasetMeta", "Grammar", "GrammarAnalysis", "GrammarError", "Leaf",
           "Node", "PhenotypeError", "SamplingPolicy", "TreeGenerator", "UniformPolicy", "load_grammar",
           "parse_grammar", "parse_phenotype"]

