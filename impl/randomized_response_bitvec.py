"""Bit-vector randomized response (basic RAPPOR) and its debiasing estimators.

Spec: specs/randomized_response_bitvec.py · Proof: proofs/randomized_response_bitvec.md
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from vetdp.arith.expr import ONE, ZERO, var
from vetdp.core.measurement import (
    BitVectorDomain,
    DiscreteDistance,
    MaxDivergence,
    Measurement,
    PrivacyConstant,
    as_bit_rows,
    as_bit_tuple,
)
from vetdp.core.validation import check_bool, check_float, check_int, check_interval
from vetdp.sampling.batch import sample_bernoulli_batch
from vetdp.sampling.primitives import sample_bernoulli_float

__all__ = [
    "RANDOMIZED_RESPONSE_BITVEC_EPSILON",
    "FLIP_PROBABILITY",
    "make_randomized_response_bitvec",
    "make_rappor",
    "flip_probability",
    "debias_randomized_response_bitvec",
    "debias_randomized_response_bitvec_frequencies",
    "randomized_response_bitvec_count_variance",
    "randomized_response_bitvec_count_mse",
    "randomized_response_bitvec_frequency_mse",
]

f, q, d = var("f"), var("q"), var("d", "int")

# Each bit is flipped with probability q = f/2, rounded up: rounding may only add noise. It
# is exact for f >= 2**-1021; below, f = n·2**-1074 with n odd rounds up by 2**-1075.
FLIP_PROBABILITY = f.inf_div(2)

# ε = d·ln((1−q)/q) for the flip probability q actually used, d = min(2m, k) the largest
# Hamming distance between two inputs. It equals the seeds' d·ln((2−f)/f) whenever f/2 is
# a float, and stays tight when it is not (f = 2**-1074 flips with q = f, not f/2).
# Written as d·(−ln r) with r = q/(1−q): 1−q rounded up and the quotient down make r a
# lower bound, so −ln↓(r) is an upper bound. r <= 1 cannot overflow, r >= q > 0 for every
# subnormal q, and q = 1/2 (f = 1) gives r = 1 exactly, hence a map of exactly 0.
RANDOMIZED_RESPONSE_BITVEC_EPSILON = d.inf_mul(ZERO.inf_sub(q.neg_inf_div(ONE.inf_sub(q)).neg_inf_ln()))


def flip_probability(f_value: float) -> float:
    """The probability with which each bit is flipped for noise parameter ``f``."""
    return FLIP_PROBABILITY.to_float({"f": f_value})


def _check_f(f_value: object, allow_one: bool = True) -> float:
    x = check_float("f", f_value)
    check_interval("f", x, 0, 1, lo_closed=False, hi_closed=allow_one)
    return x


def make_randomized_response_bitvec(input_domain: BitVectorDomain, input_metric: DiscreteDistance, f: float,
                                    constant_time: bool = False) -> Measurement:
    """ε-DP randomized response on a bit vector: every bit flipped independently with probability f/2.

    Preconditions: ``input_domain`` a BitVectorDomain with ``max_weight`` m and ``length`` k
    (the output has the domain's length, never the input's); ``input_metric`` a
    DiscreteDistance; ``f`` a float in (0, 1]; ``constant_time`` a bool.

    Privacy: map(0) = 0; map(1) = min(2m, k)·ln((1−q)/q) rounded up, q the flip probability
    (:data:`RANDOMIZED_RESPONSE_BITVEC_EPSILON`; = min(2m, k)·ln((2−f)/f) whenever f/2 is
    a float); map(d_in > 1) raises, as in the 2025 proof.

    Proof: proofs/randomized_response_bitvec.md
    """
    if not isinstance(input_domain, BitVectorDomain):
        raise TypeError(f"input_domain={input_domain!r} must be a BitVectorDomain")
    if not isinstance(input_metric, DiscreteDistance):
        raise TypeError(f"input_metric={input_metric!r} must be a DiscreteDistance")
    f_value = _check_f(f)
    check_bool("constant_time", constant_time)
    m = input_domain.max_weight
    if m is None:
        raise ValueError("input_domain.max_weight=None: make_randomized_response_bitvec requires a max_weight "
                         "in [1, inf) to bound the privacy loss")
    k = input_domain.length
    if k is None:
        raise ValueError("input_domain.length=None: make_randomized_response_bitvec requires a fixed length "
                         "in [1, inf) so that an output's length never reveals its input's")
    hamming_bound = min(2 * m, k)
    flip = flip_probability(f_value)
    constant = PrivacyConstant(RANDOMIZED_RESPONSE_BITVEC_EPSILON, {"q": flip, "d": hamming_bound})
    epsilon = constant.value

    def privacy_map(d_in: int) -> float:
        if d_in == 0:
            return 0.0
        if d_in > 1:
            raise ValueError(f"d_in={d_in} must be 0 or 1 under the discrete distance")
        return epsilon

    def function(bits: tuple[bool, ...]) -> tuple[bool, ...]:
        return tuple(b ^ sample_bernoulli_float(flip, constant_time) for b in bits)

    def batch(rows: Any) -> np.ndarray:
        """Randomise an (n, k) array of bits at once; every row is checked against the domain first."""
        arr = as_bit_rows(rows, k, m)
        return arr ^ sample_bernoulli_batch(flip, arr.size).reshape(arr.shape)

    return Measurement(
        input_domain=input_domain,
        input_metric=input_metric,
        output_measure=MaxDivergence(),
        function=function,
        privacy_map=privacy_map,
        output_domain=BitVectorDomain(length=k),
        privacy_constant=constant,
        parameters={"input_domain": input_domain, "input_metric": input_metric, "f": f_value,
                    "constant_time": constant_time},
        batch=batch,
        name="make_randomized_response_bitvec",
    )


make_rappor = make_randomized_response_bitvec


# ------------------------------------------------------------------ estimators

def _column_sums(answers: Any) -> tuple[int, list[int]]:
    if isinstance(answers, np.ndarray):
        if answers.ndim != 2:
            raise ValueError(f"answers must be a 2-D array (n, k), got shape {answers.shape}")
        rows: Sequence = answers
    elif isinstance(answers, (str, bytes)) or not isinstance(answers, Sequence):
        raise TypeError(f"answers must be a sequence of bit vectors, not {type(answers).__name__}")
    else:
        rows = answers
    if len(rows) == 0:
        raise ValueError("answers must hold at least one bit vector, got none")
    if isinstance(rows, np.ndarray) and rows.dtype == np.bool_:
        return rows.shape[0], [int(s) for s in rows.sum(axis=0)]
    length = None
    sums: list[int] = []
    for i, row in enumerate(rows):
        bits = as_bit_tuple(f"answers[{i}]", row)
        if length is None:
            length, sums = len(bits), [0] * len(bits)
        elif len(bits) != length:
            raise ValueError(f"answers[{i}] has length {len(bits)}; answers[0] has length {length} "
                             "(all answers must have one length)")
        for j, b in enumerate(bits):
            sums[j] += b
    return len(rows), sums


def _debias_counts(answers: Any, f_value: object) -> tuple[int, list[Fraction]]:
    fv = _check_f(f_value, allow_one=False)
    flip = Fraction(flip_probability(fv))
    n, sums = _column_sums(answers)
    return n, [(y - n * flip) / (1 - 2 * flip) for y in sums]


def debias_randomized_response_bitvec(answers: Any, f: float, exact: bool = False) -> list:
    """Unbiased estimates of how many inputs had each bit set: (Y_j − n·q)/(1 − 2q), q the flip
    probability (q = f/2, so this is (Y_j − n·f/2)/(1 − f)).

    Preconditions: ``f`` in (0, 1) (f = 1 carries no signal); at least one answer; all
    answers the same length and made of bits. Floats are the exact rationals rounded to
    nearest (``exact=True`` returns the Fractions).
    Proof: proofs/randomized_response_bitvec.md
    """
    _, counts = _debias_counts(answers, f)
    return counts if exact else [float(c) for c in counts]


def debias_randomized_response_bitvec_frequencies(answers: Any, f: float, exact: bool = False) -> list:
    """Unbiased estimates of the fraction of inputs with each bit set (the counts divided by n)."""
    n, counts = _debias_counts(answers, f)
    freqs = [c / n for c in counts]
    return freqs if exact else [float(c) for c in freqs]


def randomized_response_bitvec_count_variance(n: int, f: float, exact: bool = False) -> float | Fraction:
    """Variance of one coordinate of :func:`debias_randomized_response_bitvec` for n answers:
    n·q(1−q)/(1−2q)², which is n(f − f²/2)/(2(1−f)²) when q = f/2, whatever the true count."""
    n = check_int("n", n, lo=1)
    flip = Fraction(flip_probability(_check_f(f, allow_one=False)))
    v = n * flip * (1 - flip) / (1 - 2 * flip) ** 2
    return v if exact else float(v)


def randomized_response_bitvec_count_mse(n: int, k: int, f: float, exact: bool = False) -> float | Fraction:
    """E‖N̂ − N‖² over k coordinates of the count estimator: k·n(f − f²/2)/(2(1−f)²) (the 2025 proof's form)."""
    k = check_int("k", k, lo=1)
    v = k * randomized_response_bitvec_count_variance(n, f, exact=True)
    return v if exact else float(v)


def randomized_response_bitvec_frequency_mse(n: int, k: int, f: float, exact: bool = False) -> float | Fraction:
    """E‖q̂ − q‖² of the frequency estimator: k(f − f²/2)/(2n(1−f)²) (the 2024 proof's form)."""
    n = check_int("n", n, lo=1)
    v = randomized_response_bitvec_count_mse(n, k, f, exact=True) / n**2
    return v if exact else float(v)
