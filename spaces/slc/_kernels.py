"""WEKA's kernel functions, vectorised, for SMO and VotedPerceptron.

scikit-learn's SVC only takes an integer polynomial degree and has no Puk kernel, while
WEKA's PolyKernel, NormalizedPolyKernel and VotedPerceptron take real exponents (search-space
notes §0.2, §1.1.15, §1.1.21). These functions compute whole Gram blocks ``K(A, B)`` with
one matrix product each, so both learners can hand libsvm a precomputed kernel or build
perceptrons from kernel rows.

Real exponents and negative bases: ``Math.pow(negative, 1.5)`` is NaN in Java, so WEKA
builds a garbage model there. :func:`real_power` keeps the kernel finite instead, using
the odd extension ``sign(b)·|b|^e`` for non-integral exponents (integral exponents use the
ordinary power, so every integer-degree kernel is exactly WEKA's).
"""
from __future__ import annotations

import numpy as np

#: kernel names as the grammar spells them
POLY, NORMALIZED_POLY, PUK, RBF = "PolyKernel", "NormalizedPolyKernel", "Puk", "RBFKernel"
KERNELS = (POLY, NORMALIZED_POLY, PUK, RBF)


def real_power(base: np.ndarray, exponent: float) -> np.ndarray:
    """``base ** exponent``; for a non-integral exponent, the odd extension on negative bases."""
    if exponent == 1.0:
        return base
    if float(exponent).is_integer():
        return np.power(base, exponent)
    return np.sign(base) * np.power(np.abs(base), exponent)


def poly_kernel(A: np.ndarray, B: np.ndarray, exponent: float, lower_order: bool) -> np.ndarray:
    """WEKA PolyKernel: ``(a·b)^E``, or ``(a·b + 1)^E`` with lower-order terms."""
    dot = A @ B.T
    if lower_order:
        dot += 1.0
    return real_power(dot, exponent)


def _poly_diag(A: np.ndarray, exponent: float, lower_order: bool) -> np.ndarray:
    d = np.einsum("ij,ij->i", A, A)
    if lower_order:
        d = d + 1.0
    return real_power(d, exponent)


def normalized_poly_kernel(A: np.ndarray, B: np.ndarray, exponent: float,
                           lower_order: bool) -> np.ndarray:
    """WEKA NormalizedPolyKernel: ``K(a,b) / sqrt(K(a,a)·K(b,b))``, 0 where the divisor is 0."""
    num = poly_kernel(A, B, exponent, lower_order)
    div = np.sqrt(np.outer(_poly_diag(A, exponent, lower_order), _poly_diag(B, exponent, lower_order)))
    out = np.zeros_like(num)
    np.divide(num, div, out=out, where=div != 0)
    return out


def squared_distances(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """``‖a − b‖²`` for all pairs, clipped at 0 against rounding."""
    d = np.einsum("ij,ij->i", A, A)[:, None] + np.einsum("ij,ij->i", B, B)[None, :] - 2.0 * (A @ B.T)
    return np.maximum(d, 0.0)


def puk_kernel(A: np.ndarray, B: np.ndarray, omega: float, sigma: float) -> np.ndarray:
    """WEKA Puk (Pearson VII): ``1 / (1 + (2·‖a−b‖·sqrt(2^(1/ω) − 1)/σ)²)^ω``."""
    factor = 2.0 * np.sqrt(2.0 ** (1.0 / omega) - 1.0) / sigma
    return 1.0 / np.power(1.0 + factor * factor * squared_distances(A, B), omega)


def rbf_kernel(A: np.ndarray, B: np.ndarray, gamma: float) -> np.ndarray:
    """WEKA RBFKernel: ``exp(−γ·‖a − b‖²)``."""
    return np.exp(-gamma * squared_distances(A, B))


def kernel_matrix(name: str, A: np.ndarray, B: np.ndarray, *, exponent: float = 1.0,
                  lower_order: bool = False, omega: float = 1.0, sigma: float = 1.0,
                  gamma: float = 0.01) -> np.ndarray:
    """The Gram block ``K(A, B)`` of the named WEKA kernel."""
    if name == POLY:
        return poly_kernel(A, B, exponent, lower_order)
    if name == NORMALIZED_POLY:
        return normalized_poly_kernel(A, B, exponent, lower_order)
    if name == PUK:
        return puk_kernel(A, B, omega, sigma)
    if name == RBF:
        return rbf_kernel(A, B, gamma)
    raise ValueError(f"unknown kernel {name!r}; expected one of {KERNELS}")
