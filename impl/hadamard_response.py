"""Hadamard response (Acharya, Sun, Zhang, "Hadamard Response: Estimating Distributions Privately, Efficiently, and
with Little Communication", AISTATS 2019), with its frequency estimator.

A value x in [0, k) owns row x + 1 of the K × K Sylvester–Hadamard matrix, K the smallest power of two above k;
C_x = {y in [0, K) : H[x + 1, y] = +1} holds half of the outputs. The report is uniform on C_x with probability
p = e^ε/(e^ε + 1), else uniform on its complement.

Spec: specs/hadamard_response.py · Proof: proofs/hadamard_response.md
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from vetdp.arith.constants import register_constant
from vetdp.arith.expr import ONE, ZERO, var
from vetdp.core.measurement import DiscreteDistance, IndexDomain, MaxDivergence, Measurement, PrivacyConstant
from vetdp.core.validation import check_float, check_int, check_interval
from vetdp.impl.randomized_response import RANDOMIZED_RESPONSE_EPSILON
from vetdp.sampling.primitives import sample_bernoulli_float
from vetdp.sampling.public import sample_uniform_member

__all__ = ["HADAMARD_KEEP_PROBABILITY", "MAX_K", "MIN_EPSILON", "MAX_EPSILON", "hadamard_keep_probability",
           "hadamard_entry", "hadamard_member", "output_size", "make_hadamard_response",
           "estimate_hadamard_response_counts", "hadamard_response_count_variance"]

MAX_K = 2**20
MIN_EPSILON = 2.0**-40
MAX_EPSILON = 700.0

epsilon = var("epsilon")

# p = e^ε/(e^ε + 1) = 1/(1 + e^{−ε}): −ε exact, e^{−ε} and the sum rounded up, the reciprocal down, so p_float <= p
# and ln(p/(1−p)) <= ε.
HADAMARD_KEEP_PROBABILITY = register_constant(
    "hadamard.keep_probability", ONE.neg_inf_div(ONE.inf_add(ZERO.inf_sub(epsilon).inf_exp())),
    ranges={"epsilon": (MIN_EPSILON, MAX_EPSILON)}, bound="lower", result=(0.5, 1),
    source="vetdp.impl.hadamard_response.HADAMARD_KEEP_PROBABILITY")


def hadamard_keep_probability(epsilon_value: float) -> float:
    """p = e^ε/(e^ε + 1) rounded down (:data:`HADAMARD_KEEP_PROBABILITY`); above 1/2 for ε >= 2**-40."""
    eps = check_float("epsilon", epsilon_value)
    check_interval("epsilon", eps, MIN_EPSILON, MAX_EPSILON, lo_closed=True, hi_closed=True)
    return HADAMARD_KEEP_PROBABILITY.to_float({"epsilon": eps})


def hadamard_entry(row: int, column: int) -> int:
    """H[row, column] of the Sylvester–Hadamard matrix: (−1)^popcount(row & column)."""
    return -1 if (row & column).bit_count() & 1 else 1


def hadamard_member(y: int, x: int) -> int:
    """1 when output y is in C_x (H[x + 1, y] = +1), else 0."""
    return 1 if hadamard_entry(x + 1, y) == 1 else 0


def output_size(k: int) -> int:
    """K: the smallest power of two above k (row x + 1 <= k exists, and row 0 is never used)."""
    return 1 << k.bit_length()


def make_hadamard_response(k: int, epsilon: float) -> Measurement:
    """ε-LDP Hadamard response of a value in [0, k): an output in [0, K), uniform on C_x with probability p,
    else uniform on the other half.

    Preconditions: ``k`` an int in [2, 2**20]; ``epsilon`` a float in [2**-40, 700].

    Privacy: map(0) = 0; map(d_in >= 1) = ln(p/(1−p)) rounded up for the p used
    (:data:`~vetdp.impl.randomized_response.RANDOMIZED_RESPONSE_EPSILON` at t = 2), at most ε: every output has
    probability 2p/K or 2(1−p)/K, and two rows differ on half of the outputs.

    Proof: proofs/hadamard_response.md
    """
    size = check_int("k", k, lo=2, hi=MAX_K)
    keep = hadamard_keep_probability(epsilon)
    outputs = output_size(size)
    constant = PrivacyConstant(RANDOMIZED_RESPONSE_EPSILON, {"prob": keep, "t": 2})
    loss = constant.value

    def privacy_map(d_in: int) -> float:
        return 0.0 if d_in == 0 else loss

    def function(x: int) -> int:
        inside = sample_bernoulli_float(keep)
        return sample_uniform_member(hadamard_member, x, outputs, 1 if inside else 0)

    return Measurement(
        input_domain=IndexDomain(size),
        input_metric=DiscreteDistance(),
        output_measure=MaxDivergence(),
        function=function,
        privacy_map=privacy_map,
        privacy_constant=constant,
        parameters={"k": size, "epsilon": float(epsilon)},
        name="make_hadamard_response",
    )


def _reports(reports: Any, outputs: int) -> list[int]:
    if isinstance(reports, (str, bytes)) or not isinstance(reports, Sequence):
        raise TypeError(f"reports must be a sequence of outputs, not {type(reports).__name__}")
    if len(reports) == 0:
        raise ValueError("reports must hold at least one report, got none")
    return [check_int(f"reports[{i}]", r, lo=0, hi=outputs - 1) for i, r in enumerate(reports)]


def estimate_hadamard_response_counts(reports: Any, k: int, epsilon: float, exact: bool = False) -> list:
    """Unbiased estimates of how many users hold each value x in [0, k): (C(x) − n/2)/(p − 1/2), C(x) the number of
    reports in C_x (a report of another value lands in C_x with probability exactly 1/2: two rows agree on half of
    the outputs). Floats are the exact rationals rounded to nearest (``exact=True`` returns Fractions)."""
    size = check_int("k", k, lo=2, hi=MAX_K)
    p = Fraction(hadamard_keep_probability(epsilon))
    rows = _reports(reports, output_size(size))
    half = Fraction(1, 2)
    estimates = [(sum(hadamard_member(y, x) for y in rows) - len(rows) * half) / (p - half) for x in range(size)]
    return estimates if exact else [float(e) for e in estimates]


def hadamard_response_count_variance(n: int, count: int, epsilon: float, exact: bool = False) -> float | Fraction:
    """Var of :func:`estimate_hadamard_response_counts` for a value held by ``count`` of ``n`` users:
    [count·p(1−p) + (n − count)/4] / (p − 1/2)²."""
    n = check_int("n", n, lo=1)
    count = check_int("count", count, lo=0, hi=n)
    p = Fraction(hadamard_keep_probability(epsilon))
    var = (count * p * (1 - p) + (n - count) * Fraction(1, 4)) / (p - Fraction(1, 2)) ** 2
    return var if exact else float(var)
