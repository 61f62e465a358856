"""Shared parameter checks and exact model quantities for the buffling analysis.

Model (seed 004): ``k`` publishers each hold a Bloom filter of ``m`` bits; every bit is
flipped independently with probability ``p``; the ``m`` columns ("logos", k-bit words) are
shuffled. ``q = 1 - p``. Flip probabilities are restricted to (0, 1/2]: above 1/2 the
mechanism is the complement of one below it, and at 0 it has no privacy at all.
"""

from __future__ import annotations

import math
from fractions import Fraction

from vetdp.core.validation import check_float, check_int, check_interval

__all__ = [
    "check_flip_prob",
    "check_delta",
    "check_epsilon",
    "check_n_pub",
    "check_n_bit",
    "exact_flip_prob",
    "hamming",
    "transition_matrix_exact",
    "column_weight_law",
    "loss_weights",
]


def check_flip_prob(p: object, name: str = "flip_prob") -> float:
    """``p`` as a float in (0, 0.5]; TypeError/ValueError naming the parameter otherwise."""
    x = check_float(name, p)
    check_interval(name, x, 0, Fraction(1, 2), lo_closed=False, hi_closed=True)
    return x


def check_delta(delta: object, name: str = "delta") -> float:
    x = check_float(name, delta)
    check_interval(name, x, 0, 1, lo_closed=False, hi_closed=False)
    return x


def check_epsilon(epsilon: object, name: str = "epsilon") -> float:
    x = check_float(name, epsilon)
    check_interval(name, x, 0, None, lo_closed=True, hi_closed=False)
    return x


def check_n_pub(k: object, hi: int = 16, name: str = "n_pub") -> int:
    return check_int(name, k, lo=1, hi=hi)


def check_n_bit(m: object, lo: int = 1, hi: int = 10**8, name: str = "n_bit") -> int:
    return check_int(name, m, lo=lo, hi=hi)


def exact_flip_prob(p: float) -> tuple[Fraction, Fraction]:
    """``(p, q)`` as exact rationals (every float is a dyadic rational)."""
    fp = Fraction(p)
    return fp, 1 - fp


def hamming(i: int, j: int) -> int:
    """Hamming distance of the binary representations of ``i`` and ``j``."""
    return (i ^ j).bit_count()


def transition_matrix_exact(k: int, p: float) -> list[list[Fraction]]:
    """The 2^k × 2^k logo transition matrix, entry [i][j] = Pr[logo i becomes logo j].

    Entry = p^H q^(k−H), H = Hamming distance of i and j (exact rationals). Row i is the
    input logo, column j the output logo; every row sums to 1.
    """
    fp, fq = exact_flip_prob(p)
    powers = [fp**h * fq ** (k - h) for h in range(k + 1)]
    n = 1 << k
    return [[powers[hamming(i, j)] for j in range(n)] for i in range(n)]


def column_weight_law(k: int, p: Fraction) -> list[Fraction]:
    """Pr[an output column has y ones] for an input column of zeros: Binomial(k, p) pmf."""
    return [math.comb(k, y) * p**y * (1 - p) ** (k - y) for y in range(k + 1)]


def loss_weights(k: int, p: Fraction) -> list[Fraction]:
    """w_y = (q/p)^(2y−k): the likelihood ratio Pr[1…1 → logo]/Pr[0…0 → logo] for a logo with y ones."""
    r = (1 - p) / p
    return [r ** (2 * y - k) for y in range(k + 1)]
