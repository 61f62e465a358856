"""Apple's count-mean sketch (CMS; Apple Differential Privacy Team, "Learning with Privacy at Scale", 2017): the
client's report and the server's frequency estimate.

k public hash functions h_j(x) = hash_bucket((hash_key, j), x, m); a report is (j, ṽ): a public row j uniform on
[0, k) and the m-vector v = −1 everywhere but +1 at h_j(x), each coordinate flipped with probability
1/(1 + e^{ε/2}) (ε split over the two coordinates where two values' vectors differ).

Spec: specs/count_mean_sketch.py · Proof: proofs/count_mean_sketch.md
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from vetdp.arith.constants import register_constant
from vetdp.arith.expr import ONE, TWO, var
from vetdp.core.measurement import AtomDomain, DiscreteDistance, MaxDivergence, Measurement, PrivacyConstant
from vetdp.core.validation import check_bool, check_float, check_int, check_interval
from vetdp.sampling.primitives import sample_bernoulli_float
from vetdp.sampling.public import hash_bucket, sample_public_uniform_int_below

__all__ = ["CMS_FLIP_PROBABILITY", "CMS_EPSILON", "MAX_M", "MAX_ROWS", "MIN_EPSILON", "MAX_EPSILON",
           "cms_flip_probability", "make_count_mean_sketch", "estimate_cms_counts", "cms_count_variance"]

MAX_M = 2**16
MAX_ROWS = 2**16
MIN_EPSILON = 2.0**-40
MAX_EPSILON = 700.0

epsilon, f = var("epsilon"), var("f")

# f = 1/(1 + e^{ε/2}): ε/2 and e^{ε/2} are rounded down, the sum down, the reciprocal up, so f_float >= f: each
# coordinate is flipped at least as often as ε/2 asks.
CMS_FLIP_PROBABILITY = register_constant(
    "count_mean_sketch.flip_probability", ONE.inf_div(epsilon.neg_inf_div(TWO).neg_inf_exp().neg_inf_add(ONE)),
    ranges={"epsilon": (MIN_EPSILON, MAX_EPSILON)}, bound="upper", result=(0, 0.5),
    source="vetdp.impl.count_mean_sketch.CMS_FLIP_PROBABILITY")

F_MIN = CMS_FLIP_PROBABILITY.to_float({"epsilon": MAX_EPSILON})

# The loss of the f actually used: two coordinates differ, each with likelihood ratio (1−f)/f: 2·ln((1−f)/f),
# every step rounded up.
CMS_EPSILON = register_constant(
    "count_mean_sketch.epsilon", TWO.inf_mul(ONE.inf_sub(f).inf_div(f).inf_ln()),
    ranges={"f": (F_MIN, 0.5)}, bound="upper", result=(0, 1500),
    source="vetdp.impl.count_mean_sketch.CMS_EPSILON")


def cms_flip_probability(epsilon_value: float) -> float:
    """f = 1/(1 + e^{ε/2}) rounded up (:data:`CMS_FLIP_PROBABILITY`)."""
    eps = check_float("epsilon", epsilon_value)
    check_interval("epsilon", eps, MIN_EPSILON, MAX_EPSILON, lo_closed=True, hi_closed=True)
    return CMS_FLIP_PROBABILITY.to_float({"epsilon": eps})


def _flip_below_half(epsilon_value: float) -> float:
    flip = cms_flip_probability(epsilon_value)
    if not flip < 0.5:  # pragma: no cover - excluded by MIN_EPSILON (z3: the flip probability's range)
        raise ValueError(f"epsilon={epsilon_value!r}: the flip probability rounds to 1/2, no signal")
    return flip


def make_count_mean_sketch(m: int, k: int, epsilon: float, hash_key: int = 0,
                           constant_time: bool = False) -> Measurement:
    """ε-LDP count-mean sketch client for a string: the report (j, ṽ), j a public row uniform on [0, k), ṽ in
    {−1, +1}^m the flipped one-hot encoding of h_j(x) (see the module docstring).

    Preconditions: ``m`` an int in [2, 2**16]; ``k`` an int in [1, 2**16]; ``epsilon`` a float in [2**-40, 700];
    ``hash_key`` an int (public: the server's choice of hash functions); ``constant_time`` a bool.

    Privacy: map(0) = 0; map(d_in >= 1) = 2·ln((1−f)/f) rounded up for the f used (:data:`CMS_EPSILON`), at most
    ε: given the row, two values' vectors differ in at most two coordinates.

    Proof: proofs/count_mean_sketch.md
    """
    width = check_int("m", m, lo=2, hi=MAX_M)
    rows = check_int("k", k, lo=1, hi=MAX_ROWS)
    flip = _flip_below_half(epsilon)
    key = check_int("hash_key", hash_key)
    check_bool("constant_time", constant_time)
    constant = PrivacyConstant(CMS_EPSILON, {"f": flip})
    loss = constant.value

    def privacy_map(d_in: int) -> float:
        return 0.0 if d_in == 0 else loss

    def function(x: str) -> tuple[int, tuple[int, ...]]:
        j = sample_public_uniform_int_below(rows, constant_time)
        bucket = hash_bucket((key, j), x, width)
        return (j, tuple(2 * ((i == bucket) ^ sample_bernoulli_float(flip, constant_time)) - 1 for i in range(width)))

    return Measurement(
        input_domain=AtomDomain(str),
        input_metric=DiscreteDistance(),
        output_measure=MaxDivergence(),
        function=function,
        privacy_map=privacy_map,
        privacy_constant=constant,
        parameters={"m": width, "k": rows, "epsilon": float(epsilon), "hash_key": key,
                    "constant_time": constant_time},
        name="make_count_mean_sketch",
    )


def _reports(reports: Any, m: int, k: int) -> list[tuple[int, tuple[int, ...]]]:
    if isinstance(reports, (str, bytes)) or not isinstance(reports, Sequence):
        raise TypeError(f"reports must be a sequence of (row, vector) pairs, not {type(reports).__name__}")
    if len(reports) == 0:
        raise ValueError("reports must hold at least one report, got none")
    out = []
    for i, r in enumerate(reports):
        if not isinstance(r, (tuple, list)) or len(r) != 2:
            raise ValueError(f"reports[{i}]={r!r} must be a (row, vector) pair")
        j = check_int(f"reports[{i}] row", r[0], lo=0, hi=k - 1)
        vec = tuple(r[1])
        if len(vec) != m or any(v not in (-1, 1) or isinstance(v, bool) for v in vec):
            raise ValueError(f"reports[{i}] vector must hold m={m} entries, each -1 or +1")
        out.append((j, vec))
    return out


def estimate_cms_counts(reports: Any, candidates: Sequence[str], m: int, k: int, epsilon: float, hash_key: int = 0,
                        exact: bool = False) -> list:
    """Apple's estimate of how many users hold each candidate d: (m/(m−1))·((1/k)·Σ_l M[l, h_l(d)] − n/m), the
    sketch M summing k·((c/2)·ṽ + 1/2) into row j of each report, c = 1/(1 − 2f) for the f used (Apple's
    (e^{ε/2}+1)/(e^{ε/2}−1) at the exact f). Unbiased over the hash functions (random) and the clients.
    Floats are the exact rationals rounded to nearest (``exact=True`` returns Fractions)."""
    width = check_int("m", m, lo=2, hi=MAX_M)
    rows = check_int("k", k, lo=1, hi=MAX_ROWS)
    flip = Fraction(_flip_below_half(epsilon))
    key = check_int("hash_key", hash_key)
    data = _reports(reports, width, rows)
    c = 1 / (1 - 2 * flip)
    sketch = [[Fraction(0)] * width for _ in range(rows)]
    for j, vec in data:
        for i, v in enumerate(vec):
            sketch[j][i] += rows * (c / 2 * v + Fraction(1, 2))
    n = len(data)
    out = []
    for d in candidates:
        total = sum((sketch[r][hash_bucket((key, r), d, width)] for r in range(rows)), Fraction(0))
        out.append(Fraction(width, width - 1) * (total / rows - Fraction(n, width)))
    return out if exact else [float(e) for e in out]


def cms_count_variance(counts: dict[str, int], d: str, m: int, k: int, epsilon: float,
                       exact: bool = False) -> float | Fraction:
    """Var of :func:`estimate_cms_counts` for candidate ``d`` when ``counts[w]`` users hold w (n = Σ counts), the
    hash functions random:

        (m/(m−1))² · [n·(c²−1)/4 + (n − c_d)·(1/m)(1 − 1/m) + 2·Σ_{w≠d} C(c_w, 2)·(1/k)·(1/m)(1 − 1/m)]

    The last term is the covariance of two users of one value w != d who drew the same row: their reports then hit
    d's column together (h_j(w) = h_j(d)) or not at all.
    """
    width = check_int("m", m, lo=2, hi=MAX_M)
    rows = check_int("k", k, lo=1, hi=MAX_ROWS)
    flip = Fraction(_flip_below_half(epsilon))
    cs = {w: check_int(f"counts[{w!r}]", c, lo=0) for w, c in counts.items()}
    n = sum(cs.values())
    c = 1 / (1 - 2 * flip)
    q = Fraction(1, width)
    pairs = sum(v * (v - 1) // 2 for w, v in cs.items() if w != d)
    var = Fraction(width, width - 1) ** 2 * (n * (c * c - 1) / 4 + (n - cs.get(d, 0)) * q * (1 - q)
                                             + 2 * pairs * Fraction(1, rows) * q * (1 - q))
    return var if exact else float(var)
