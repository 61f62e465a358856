"""Optimized Unary Encoding (OUE; Wang, Blocki, Li, Jha, "Locally Differentially Private Protocols for Frequency
Estimation", USENIX Security 2017, section 4.4), its frequency estimator and the estimator's variance.

Spec: src/oue_example/specs/oue.py · Proof: proofs/oue.md
"""

from __future__ import annotations

import dataclasses
import numbers
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from vetdp.api import (
    ONE,
    DiscreteDistance,
    Domain,
    DomainError,
    DomainTypeError,
    MaxDivergence,
    Measurement,
    PrivacyConstant,
    as_bit_tuple,
    check_bool,
    check_float,
    check_int,
    check_interval,
    register_constant,
    sample_bernoulli_float,
    var,
)

__all__ = ["OUE_FLIP_PROBABILITY", "OUE_EPSILON", "IndexDomain", "make_oue", "oue_flip_probability",
           "estimate_oue_counts", "oue_count_variance", "MAX_EPSILON", "MAX_D"]

KEEP = 0.5  # p: the bit of the true value is 1 with probability exactly 1/2
MAX_EPSILON = 700.0  # e^ε stays a finite float64 and q a normal float
MAX_D = 2**24  # the output has d bits

epsilon, q = var("epsilon"), var("q")

# q = 1/(e^ε + 1). e^ε and the sum are rounded down, the reciprocal up, so q_float >= q: every other bit is
# flipped on at least as often as ε asks, which can only add noise.
OUE_FLIP_PROBABILITY = register_constant(
    "oue.flip_probability", ONE.inf_div(epsilon.neg_inf_exp().neg_inf_add(ONE)),
    ranges={"epsilon": (5e-324, MAX_EPSILON)}, bound="upper", result=(0, 0.5),
    source="oue_example.oue.OUE_FLIP_PROBABILITY")

Q_MIN = OUE_FLIP_PROBABILITY.to_float({"epsilon": MAX_EPSILON})  # q_float is decreasing in ε: its least value

# The loss of the q actually used (p = 1/2): ln(p(1−q) / ((1−p)q)) = ln((1−q)/q). 1−q and the quotient are
# rounded up, then the logarithm up: an upper bound, and within a few ulps of the exact loss.
OUE_EPSILON = register_constant(
    "oue.epsilon", ONE.inf_sub(q).inf_div(q).inf_ln(),
    ranges={"q": (Q_MIN, 0.5)}, bound="upper", result=(0, 711),  # ln of a float is < 710, plus its rounding
    source="oue_example.oue.OUE_EPSILON")


@dataclasses.dataclass(frozen=True)
class IndexDomain(Domain):
    """The values 0, 1, ..., size − 1 (Python or NumPy ints; bools are not values)."""

    size: int

    def check_member(self, x: Any) -> int:
        if isinstance(x, bool) or not isinstance(x, numbers.Integral):
            raise DomainTypeError(f"x={x!r} must be an int in [0, {self.size}), not {type(x).__name__}")
        if not 0 <= int(x) < self.size:
            raise DomainError(f"x={x!r} must be in [0, {self.size})")
        return int(x)


def oue_flip_probability(epsilon_value: float) -> float:
    """q: the probability that a bit other than the true value's is reported as 1, rounded up."""
    eps = check_float("epsilon", epsilon_value)
    check_interval("epsilon", eps, 0, MAX_EPSILON, lo_closed=False, hi_closed=True)
    return OUE_FLIP_PROBABILITY.to_float({"epsilon": eps})


def _signal_flip(epsilon_value: float) -> Fraction:
    """q as an exact rational, for the estimator: q < 1/2 is required (q = 1/2 carries no signal)."""
    flip = oue_flip_probability(epsilon_value)
    if flip >= KEEP:
        raise ValueError(f"epsilon={epsilon_value!r} gives q = {flip!r} = p: the reports carry no signal; "
                         f"epsilon must be at least 2**-52")
    return Fraction(flip)


def make_oue(d: int, epsilon: float, constant_time: bool = False) -> Measurement:
    """ε-LDP Optimized Unary Encoding of a value in [0, d): a d-bit report, bit v (the true value) 1 with
    probability 1/2, every other bit 1 with probability q = 1/(e^ε + 1).

    Preconditions: ``d`` an int in [2, 2**24]; ``epsilon`` a float in (0, 700]; ``constant_time`` a bool (the
    sampler then reads the same number of bytes for every input).

    Privacy: map(0) = 0; map(d_in >= 1) = ln((1−q)/q) rounded up for the q actually used
    (:data:`OUE_EPSILON`), which is at most ε since q is rounded up (:data:`OUE_FLIP_PROBABILITY`).

    Proof: proofs/oue.md
    """
    size = check_int("d", d, lo=2, hi=MAX_D)
    flip = oue_flip_probability(epsilon)
    check_bool("constant_time", constant_time)
    constant = PrivacyConstant(OUE_EPSILON, {"q": flip})
    loss = constant.value

    def privacy_map(d_in: int) -> float:
        return 0.0 if d_in == 0 else loss

    def function(v: int) -> tuple[bool, ...]:
        return tuple(sample_bernoulli_float(KEEP if i == v else flip, constant_time) for i in range(size))

    return Measurement(
        input_domain=IndexDomain(size),
        input_metric=DiscreteDistance(),
        output_measure=MaxDivergence(),
        function=function,
        privacy_map=privacy_map,
        privacy_constant=constant,
        parameters={"d": size, "epsilon": float(epsilon), "constant_time": constant_time},
        name="make_oue",
    )


def _column_sums(reports: Any) -> tuple[int, list[int]]:
    if isinstance(reports, (str, bytes)) or not isinstance(reports, Sequence):
        raise TypeError(f"reports must be a sequence of bit vectors, not {type(reports).__name__}")
    if len(reports) == 0:
        raise ValueError("reports must hold at least one report, got none")
    sums: list[int] = []
    for i, row in enumerate(reports):
        bits = as_bit_tuple(f"reports[{i}]", row)
        if i == 0:
            if len(bits) < 2:
                raise ValueError(f"reports[0] has length {len(bits)}; a report has d >= 2 bits")
            sums = [0] * len(bits)
        elif len(bits) != len(sums):
            raise ValueError(f"reports[{i}] has length {len(bits)}; reports[0] has length {len(sums)}")
        for j, b in enumerate(bits):
            sums[j] += b
    return len(reports), sums


def estimate_oue_counts(reports: Any, epsilon: float, exact: bool = False) -> list:
    """Unbiased estimates of how many users hold each value: ĉ(i) = (C(i) − n·q)/(p − q), C(i) the number of
    reports with bit i set, p = 1/2, q the flip probability used (:func:`oue_flip_probability`).

    Preconditions: at least one report; all reports of one length d >= 2, made of bits; ``epsilon`` as for
    :func:`make_oue` and large enough that q < 1/2 (at least about 2**-52). Floats are the exact rationals rounded
    to nearest (``exact=True`` returns Fractions).
    Proof: proofs/oue.md
    """
    flip = _signal_flip(epsilon)
    n, sums = _column_sums(reports)
    counts = [(c - n * flip) / (Fraction(KEEP) - flip) for c in sums]
    return counts if exact else [float(c) for c in counts]


def oue_count_variance(n: int, count: int, epsilon: float, exact: bool = False) -> float | Fraction:
    """Var[ĉ(i)] for n reports of which ``count`` hold value i:
    (count·p(1−p) + (n − count)·q(1−q)) / (p − q)².

    With count = 0 this is the paper's n·q(1−q)/(p − q)² = n·4e^ε/(e^ε − 1)²; since q(1−q) < p(1−p) = 1/4, an
    item held by someone has a larger variance than the paper's formula.
    Preconditions: ``n`` an int >= 1, ``count`` an int in [0, n], ``epsilon`` as for :func:`estimate_oue_counts`.
    """
    n = check_int("n", n, lo=1)
    count = check_int("count", count, lo=0, hi=n)
    flip = _signal_flip(epsilon)
    p = Fraction(KEEP)
    v = (count * p * (1 - p) + (n - count) * flip * (1 - flip)) / (p - flip) ** 2
    return v if exact else float(v)
