"""Optimized local hashing (OLH; Wang, Blocki, Li, Jha, "Locally Differentially Private Protocols for Frequency
Estimation", USENIX Security 2017), its frequency estimator and the estimator's exact variance.

Each report is (s, y): a fresh public seed s uniform on [0, 2**32) and randomized response over g buckets around
the bucket H_s(x) = hash_bucket(s, x, g) of the value.

Spec: specs/olh.py · Proof: proofs/olh.md
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from vetdp.arith.constants import register_constant
from vetdp.arith.expr import ONE, ZERO, var
from vetdp.core.measurement import DiscreteDistance, IndexDomain, MaxDivergence, Measurement, PrivacyConstant
from vetdp.core.validation import check_bool, check_float, check_int, check_interval
from vetdp.impl.randomized_response import RANDOMIZED_RESPONSE_EPSILON
from vetdp.sampling.primitives import sample_bernoulli_float, sample_uniform_int_below
from vetdp.sampling.public import hash_bucket, sample_public_uniform_int_below

__all__ = ["OLH_KEEP_PROBABILITY", "SEEDS", "MAX_BUCKETS", "MAX_D", "MIN_EPSILON", "MAX_EPSILON", "olh_buckets",
           "olh_keep_probability", "make_olh", "estimate_olh_counts", "olh_count_variance",
           "wang_olh_variance"]

SEEDS = 2**32  # the public seed of a report is uniform on [0, SEEDS)
MAX_BUCKETS = 2**16
MAX_D = 2**53
MIN_EPSILON = 2.0**-40  # below it the rounded keep probability may not exceed 1/g
MAX_EPSILON = 700.0  # e^ε stays a finite float64

epsilon, g = var("epsilon"), var("g", "int")

# p = e^ε / (e^ε + g − 1) = 1 / (1 + (g − 1)·e^{−ε}), the probability of reporting the true bucket. −ε is exact,
# e^{−ε}, the product and the sum are rounded up and the reciprocal down, so p_float <= p: the lie is at least as
# likely as ε asks, and the loss of p_float is <= ε.
OLH_KEEP_PROBABILITY = register_constant(
    "olh.keep_probability", ONE.neg_inf_div(ONE.inf_add(g.inf_sub(ONE).inf_mul(ZERO.inf_sub(epsilon).inf_exp()))),
    ranges={"epsilon": (MIN_EPSILON, MAX_EPSILON), "g": (2, MAX_BUCKETS)}, bound="lower", result=(0, 1),
    source="vetdp.impl.olh.OLH_KEEP_PROBABILITY")


def olh_buckets(epsilon_value: float) -> int:
    """Wang et al.'s g = round(e^ε) + 1 (any g >= 2 is private; this one minimises the paper's variance)."""
    eps = check_float("epsilon", epsilon_value)
    check_interval("epsilon", eps, MIN_EPSILON, MAX_EPSILON, lo_closed=True, hi_closed=True)
    buckets = int(round(math.exp(eps))) + 1
    if buckets > MAX_BUCKETS:
        raise ValueError(f"epsilon={epsilon_value!r} gives g = round(e^epsilon) + 1 = {buckets} buckets, more than "
                         f"{MAX_BUCKETS}; pass g explicitly")
    return buckets


def _params(epsilon_value: float, buckets: int | None) -> tuple[float, int, float]:
    eps = check_float("epsilon", epsilon_value)
    check_interval("epsilon", eps, MIN_EPSILON, MAX_EPSILON, lo_closed=True, hi_closed=True)
    gg = olh_buckets(eps) if buckets is None else check_int("g", buckets, lo=2, hi=MAX_BUCKETS)
    keep = OLH_KEEP_PROBABILITY.to_float({"epsilon": eps, "g": gg})
    if not Fraction(keep) * gg > 1:  # pragma: no cover - excluded by MIN_EPSILON (z3: olh.keep_probability)
        raise ValueError(f"epsilon={epsilon_value!r}: the keep probability {keep!r} does not exceed 1/g = 1/{gg}")
    return eps, gg, keep


def olh_keep_probability(epsilon_value: float, g: int | None = None) -> float:
    """p, the probability that a report's bucket is the value's own, rounded down (:data:`OLH_KEEP_PROBABILITY`)."""
    return _params(epsilon_value, g)[2]


def make_olh(d: int, epsilon: float, g: int | None = None, constant_time: bool = False) -> Measurement:
    """ε-LDP optimized local hashing of a value in [0, d): the report (s, y), s a public seed uniform on
    [0, 2**32), y the bucket hash_bucket(s, x, g) with probability p = e^ε/(e^ε + g − 1) (rounded down), else one
    of the other g − 1 buckets uniformly.

    Preconditions: ``d`` an int in [2, 2**53]; ``epsilon`` a float in [2**-40, 700]; ``g`` None (round(e^ε) + 1)
    or an int in [2, 2**16]; ``constant_time`` a bool (every draw then reads a fixed number of bytes).

    Privacy: map(0) = 0; map(d_in >= 1) = ln(p(g−1)/(1−p)) rounded up for the p used
    (:data:`~vetdp.impl.randomized_response.RANDOMIZED_RESPONSE_EPSILON` at t = g), at most ε. Given the seed
    the report is randomized response over g buckets around H_s(x); two values in one bucket are not told apart.

    Proof: proofs/olh.md
    """
    size = check_int("d", d, lo=2, hi=MAX_D)
    eps, buckets, keep = _params(epsilon, g)
    check_bool("constant_time", constant_time)
    constant = PrivacyConstant(RANDOMIZED_RESPONSE_EPSILON, {"prob": keep, "t": buckets})
    loss = constant.value

    def privacy_map(d_in: int) -> float:
        return 0.0 if d_in == 0 else loss

    def function(x: int) -> tuple[int, int]:
        seed = sample_public_uniform_int_below(SEEDS, constant_time)
        bucket = hash_bucket(seed, x, buckets)
        lie = sample_uniform_int_below(buckets - 1, constant_time)
        lie = lie + (lie >= bucket)  # the other g − 1 buckets, uniformly
        honest = sample_bernoulli_float(keep, constant_time)
        return (seed, bucket if honest else lie)

    return Measurement(
        input_domain=IndexDomain(size),
        input_metric=DiscreteDistance(),
        output_measure=MaxDivergence(),
        function=function,
        privacy_map=privacy_map,
        privacy_constant=constant,
        parameters={"d": size, "epsilon": eps, "g": buckets, "constant_time": constant_time},
        name="make_olh",
    )


def _reports(reports: Any, buckets: int) -> list[tuple[int, int]]:
    if isinstance(reports, (str, bytes)) or not isinstance(reports, Sequence):
        raise TypeError(f"reports must be a sequence of (seed, bucket) pairs, not {type(reports).__name__}")
    if len(reports) == 0:
        raise ValueError("reports must hold at least one report, got none")
    out = []
    for i, r in enumerate(reports):
        if not isinstance(r, (tuple, list)) or len(r) != 2:
            raise ValueError(f"reports[{i}]={r!r} must be a (seed, bucket) pair")
        seed = check_int(f"reports[{i}] seed", r[0], lo=0, hi=SEEDS - 1)
        out.append((seed, check_int(f"reports[{i}] bucket", r[1], lo=0, hi=buckets - 1)))
    return out


def estimate_olh_counts(reports: Any, d: int, epsilon: float, g: int | None = None, exact: bool = False) -> list:
    """Unbiased estimates of how many users hold each value v in [0, d): (C(v) − n/g)/(p − 1/g), C(v) the number
    of reports (s, y) with y = hash_bucket(s, v, g), p the keep probability used. A report of another value
    supports v with probability exactly 1/g (hash_bucket as a random function of the seed).

    Preconditions: as for :func:`make_olh`; at least one report, each a (seed, bucket) pair in range.
    Floats are the exact rationals rounded to nearest (``exact=True`` returns Fractions).
    Proof: proofs/olh.md
    """
    size = check_int("d", d, lo=2, hi=MAX_D)
    _, buckets, keep = _params(epsilon, g)
    rows = _reports(reports, buckets)
    p, q = Fraction(keep), Fraction(1, buckets)
    counts = [sum(1 for s, y in rows if hash_bucket(s, v, buckets) == y) for v in range(size)]
    estimates = [(c - len(rows) * q) / (p - q) for c in counts]
    return estimates if exact else [float(e) for e in estimates]


def olh_count_variance(counts: Sequence[int], v: int, epsilon: float, g: int | None = None,
                       exact: bool = False) -> float | Fraction:
    """Var of :func:`estimate_olh_counts` for value ``v`` when ``counts[w]`` users hold w (n = Σ counts):

        [c_v·p(1−p) + (n − c_v)·(1/g)(1 − 1/g) + 2·2**-32·(p − r)²·(1/g)(1 − 1/g)·Σ_{w≠v} C(c_w, 2)] / (p − 1/g)²

    with r = (1−p)/(g−1). The last term is the covariance of two users of one value w != v whose seeds coincide
    (probability 2**-32): their reports then share H_s(w) = H_s(v). Wang et al. keep only n(1/g)(1 − 1/g)/(p − 1/g)².
    """
    if isinstance(counts, (str, bytes)) or not isinstance(counts, Sequence) or len(counts) < 2:
        raise TypeError(f"counts={counts!r} must be a sequence of at least 2 ints (users per value)")
    cs = [check_int(f"counts[{i}]", c, lo=0) for i, c in enumerate(counts)]
    n = sum(cs)
    if n < 1:
        raise ValueError(f"counts={cs!r} must count at least one user")
    v = check_int("v", v, lo=0, hi=len(cs) - 1)
    _, buckets, keep = _params(epsilon, g)
    p, q = Fraction(keep), Fraction(1, buckets)
    r = (1 - p) / (buckets - 1)
    pairs = sum(c * (c - 1) // 2 for w, c in enumerate(cs) if w != v)
    var = (cs[v] * p * (1 - p) + (n - cs[v]) * q * (1 - q)
           + 2 * Fraction(1, SEEDS) * (p - r) ** 2 * q * (1 - q) * pairs) / (p - q) ** 2
    return var if exact else float(var)


def wang_olh_variance(n: int, epsilon: float, g: int | None = None, exact: bool = False) -> float | Fraction:
    """Wang et al.'s OLH variance n·q*(1−q*)/(p − q*)² with q* = 1/g (the paper's approximation: it drops the
    c_v and the seed-collision terms of :func:`olh_count_variance`; kept to show where it differs)."""
    n = check_int("n", n, lo=1)
    _, buckets, keep = _params(epsilon, g)
    p, q = Fraction(keep), Fraction(1, buckets)
    var = n * q * (1 - q) / (p - q) ** 2
    return var if exact else float(var)
