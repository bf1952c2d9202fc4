"""The search methods — each a way of sampling the grammar — behind one ask/tell seam (:mod:`.base`),
found by name through :mod:`.registry` (built-ins, entry points, plug-ins)."""
from .registry import BUILT_IN, METHODS, known_methods, make_method, method_class, register_method, supports_async

__all__ = ["BUILT_IN", "METHODS", "known_methods", "make_method", "method_class", "register_method",
           "supports_async"]
