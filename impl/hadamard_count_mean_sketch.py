"""Apple's Hadamard count-mean sketch (HCMS; "Learning with Privacy at Scale", 2017): one bit per report.

A report is (j, l, b): a public row j uniform on [0, k), a public Hadamard coefficient l uniform on [0, m) (m a power
of two), and b = H[h_j(x), l] in {−1, +1} flipped with probability 1/(1 + e^ε) (one bit carries the whole ε).

Spec: specs/hadamard_count_mean_sketch.py · Proof: proofs/hadamard_count_mean_sketch.md
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from vetdp.core.measurement import AtomDomain, DiscreteDistance, MaxDivergence, Measurement, PrivacyConstant
from vetdp.core.validation import check_bool, check_int
from vetdp.impl.hadamard_response import hadamard_entry, hadamard_keep_probability
from vetdp.impl.randomized_response import RANDOMIZED_RESPONSE_EPSILON
from vetdp.sampling.primitives import sample_bernoulli_float
from vetdp.sampling.public import hash_bucket, keyed_encoding, sample_public_uniform_int_below

__all__ = ["MAX_M", "MAX_ROWS", "hcms_coefficient", "make_hadamard_count_mean_sketch", "estimate_hcms_counts",
           "hcms_count_variance"]

MAX_M = 2**16
MAX_ROWS = 2**16


def hcms_coefficient(key: tuple[int, int, int, int], x: Any) -> int:
    """1 when H[h_j(x), l] = +1 for key (hash_key, j, l, m), else 0 (h_j(x) = hash_bucket((hash_key, j), x, m))."""
    hash_key, j, coefficient, m = key
    return 1 if hadamard_entry(hash_bucket((hash_key, j), x, m), coefficient) == 1 else 0


def _check_m(m: Any) -> int:
    width = check_int("m", m, lo=2, hi=MAX_M)
    if width & (width - 1):
        raise ValueError(f"m={m!r} must be a power of two in [2, 2**16] (the Hadamard matrix's order)")
    return width


def make_hadamard_count_mean_sketch(m: int, k: int, epsilon: float, hash_key: int = 0,
                                    constant_time: bool = False) -> Measurement:
    """ε-LDP Hadamard count-mean sketch client for a string: the report (j, l, b) (see the module docstring).

    Preconditions: ``m`` a power of two in [2, 2**16]; ``k`` an int in [1, 2**16]; ``epsilon`` a float in
    [2**-40, 700]; ``hash_key`` an int (public); ``constant_time`` a bool.

    Privacy: map(0) = 0; map(d_in >= 1) = ln(p/(1−p)) rounded up for the keep probability p = e^ε/(e^ε + 1) used
    (rounded down, :data:`~vetdp.impl.hadamard_response.HADAMARD_KEEP_PROBABILITY`), at most ε.

    Proof: proofs/hadamard_count_mean_sketch.md
    """
    width = _check_m(m)
    rows = check_int("k", k, lo=1, hi=MAX_ROWS)
    keep = hadamard_keep_probability(epsilon)
    key = check_int("hash_key", hash_key)
    check_bool("constant_time", constant_time)
    constant = PrivacyConstant(RANDOMIZED_RESPONSE_EPSILON, {"prob": keep, "t": 2})
    loss = constant.value

    def privacy_map(d_in: int) -> float:
        return 0.0 if d_in == 0 else loss

    def function(x: str) -> tuple[int, int, int]:
        j = sample_public_uniform_int_below(rows, constant_time)
        coefficient = sample_public_uniform_int_below(width, constant_time)
        plus = keyed_encoding(hcms_coefficient, (key, j, coefficient, width), x, 2)
        kept = sample_bernoulli_float(keep, constant_time)
        return (j, coefficient, 1 if plus == kept else -1)

    return Measurement(
        input_domain=AtomDomain(str),
        input_metric=DiscreteDistance(),
        output_measure=MaxDivergence(),
        function=function,
        privacy_map=privacy_map,
        privacy_constant=constant,
        parameters={"m": width, "k": rows, "epsilon": float(epsilon), "hash_key": key,
                    "constant_time": constant_time},
        name="make_hadamard_count_mean_sketch",
    )


def _reports(reports: Any, m: int, k: int) -> list[tuple[int, int, int]]:
    if isinstance(reports, (str, bytes)) or not isinstance(reports, Sequence):
        raise TypeError(f"reports must be a sequence of (row, coefficient, bit) triples, not {type(reports).__name__}")
    if len(reports) == 0:
        raise ValueError("reports must hold at least one report, got none")
    out = []
    for i, r in enumerate(reports):
        if not isinstance(r, (tuple, list)) or len(r) != 3 or r[2] not in (-1, 1) or isinstance(r[2], bool):
            raise ValueError(f"reports[{i}]={r!r} must be a (row, coefficient, bit) triple, bit -1 or +1")
        out.append((check_int(f"reports[{i}] row", r[0], lo=0, hi=k - 1),
                    check_int(f"reports[{i}] coefficient", r[1], lo=0, hi=m - 1), int(r[2])))
    return out


def estimate_hcms_counts(reports: Any, candidates: Sequence[str], m: int, k: int, epsilon: float, hash_key: int = 0,
                         exact: bool = False) -> list:
    """Apple's HCMS estimate for each candidate d: the sketch M[j][l] sums k·c·b, c = 1/(2p − 1) (Apple's
    (e^ε+1)/(e^ε−1) at the exact p); M·Hᵀ undoes the transform; then (m/(m−1))·((1/k)·Σ_j (M·Hᵀ)[j, h_j(d)] − n/m).
    Unbiased over the hash functions (random) and the clients."""
    width = _check_m(m)
    rows = check_int("k", k, lo=1, hi=MAX_ROWS)
    p = Fraction(hadamard_keep_probability(epsilon))
    key = check_int("hash_key", hash_key)
    data = _reports(reports, width, rows)
    c = 1 / (2 * p - 1)
    sketch = [[Fraction(0)] * width for _ in range(rows)]
    for j, coefficient, b in data:
        sketch[j][coefficient] += rows * c * b
    n = len(data)
    out = []
    for d in candidates:
        total = Fraction(0)
        for j in range(rows):
            column = hash_bucket((key, j), d, width)
            total += sum((sketch[j][t] * hadamard_entry(column, t) for t in range(width)), Fraction(0))
        out.append(Fraction(width, width - 1) * (total / rows - Fraction(n, width)))
    return out if exact else [float(e) for e in out]


def hcms_count_variance(counts: dict[str, int], d: str, m: int, k: int, epsilon: float,
                        exact: bool = False) -> float | Fraction:
    """Var of :func:`estimate_hcms_counts` for candidate ``d`` (n = Σ counts, the hash functions random):

        (m/(m−1))² · [c_d·(c² − 1) + (n − c_d)·(c² − 1/m²) + 2·Σ_{w≠d} C(c_w, 2)·(1/k)·(1/m)(1 − 1/m)]

    with c = 1/(2p − 1); the last term is the covariance of two users of one value w != d who drew the same row."""
    width = _check_m(m)
    rows = check_int("k", k, lo=1, hi=MAX_ROWS)
    p = Fraction(hadamard_keep_probability(epsilon))
    cs = {w: check_int(f"counts[{w!r}]", v, lo=0) for w, v in counts.items()}
    n = sum(cs.values())
    c = 1 / (2 * p - 1)
    q = Fraction(1, width)
    cd = cs.get(d, 0)
    pairs = sum(v * (v - 1) // 2 for w, v in cs.items() if w != d)
    var = Fraction(width, width - 1) ** 2 * (cd * (c * c - 1) + (n - cd) * (c * c - q * q)
                                             + 2 * pairs * Fraction(1, rows) * q * (1 - q))
    return var if exact else float(var)
