"""Hoare triple of make_randomized_response_bitvec (impl/randomized_response_bitvec.py) and its estimators.

Pre: input_domain a BitVectorDomain with max_weight m and length k; input_metric a
DiscreteDistance; f a float in (0, 1]; constant_time a bool.
Law: every bit flipped independently with probability q = flip_probability(f) (f/2 rounded
up: f/2 is inexact exactly when f = n·2**-1074 with n odd and n < 2**53, i.e. for odd
subnormals AND for the odd floats of the lowest normal binade [2**-1022, 2**-1021)), so
P[y | x] = q^h (1−q)^(k−h), h the Hamming distance of x and y. function.law also admits one flip
probability rounded otherwise, within max(2**-30·f/2, 2**-1074) of f/2 (e.g. the seeds' exact f/2).
Post: map(0) = 0, map(1) >= the exact max-divergence over every bit vector of length k
with at most m set bits (tight within 2**-30, also when k < 2m); map(d_in >= 2) refuses
by raising ValueError (the 2025 proof; d_in is a discrete distance); no input-dependent
errors; wrong lengths, heavy or non-bit vectors rejected before randomness, also as NumPy
arrays; with constant_time the bytes read never depend on the input.
Estimators: exact unbiasedness; count variance n(f − f²/2)/(2(1−f)²) per coordinate and
its k-fold MSE (2025 proof); frequency MSE k(f − f²/2)/(2n(1−f)²) (2024 proof).
Search: k up to 7 drawn plus pinned k = 9, k = 128 and k = 129 with m = 65 (12 drawn with --deep); every vector
when k <= 4, else a subset that holds a pair at the largest Hamming distance min(2m, k); f at the float edges and
n·2**-1074 for every residue of n mod 4, small and large n (on k <= 4; rounding is per bit);
inputs also as lists, NumPy bool/int64/uint8 arrays and tuples of NumPy integers and bools.
Proof: proofs/randomized_response_bitvec.md
"""

import itertools
import math
from fractions import Fraction

import numpy as np
from hypothesis import strategies as st

from vetdp.accounting.curves import RRFamily
from vetdp.accounting.pld import one_run_delta
from vetdp.core.measurement import AtomDomain, PrivacyConstant, bitvector_domain, discrete_distance
from vetdp.engine.spec import (
    BadParams,
    EstimatorSpec,
    MeasurementSpec,
    Universal,
    exact_value,
    floats_in,
    seeded_permutation,
    tiny_float,
    tiny_floats,
    tiny_numerator,
)
from vetdp.impl.randomized_response_bitvec import (
    RANDOMIZED_RESPONSE_BITVEC_EPSILON,
    flip_probability,
    randomized_response_bitvec_count_mse,
    randomized_response_bitvec_count_variance,
    randomized_response_bitvec_frequency_mse,
)

P_MAX = math.nextafter(1.0, 0.0)
LOWEST_NORMAL = 2.2250738585072014e-308  # 2**-1022
F_EDGES = [5e-324, 1e-323, 1.5e-323, 2e-323, LOWEST_NORMAL, math.nextafter(LOWEST_NORMAL, 1.0),
           math.nextafter(2 * LOWEST_NORMAL, 0.0), 2 * LOWEST_NORMAL, 1e-300, 1e-9, 0.25, 0.5, P_MAX, 1.0]
ALL_VECTORS_UP_TO = 4  # lengths up to this enumerate every input; longer ones a structured subset


def build(ctor, p):
    domain = p.get("input_domain") or bitvector_domain(max_weight=p["m"], length=p["k"])
    metric = p.get("input_metric", discrete_distance())
    return ctor(domain, metric, p["f"], p["constant_time"])


def weights(k: int) -> st.SearchStrategy[int]:
    """max_weight for length k: 1..k+2, plus k (every vector) and a huge bound."""
    return st.one_of(st.integers(1, k + 2), st.sampled_from([k, 10**6]))


def flip_parameters(k: int, deep: bool) -> st.SearchStrategy[float]:
    """f for length k: the float edges and n·2**-1074 for every residue of n mod 4 on short vectors; on
    long ones (k > ALL_VECTORS_UP_TO, unless deep) f >= 2**-20, since rounding is per bit and the exact
    probabilities of tiny f cost thousands of bits per path."""
    if k <= ALL_VECTORS_UP_TO or deep:
        return st.one_of(floats_in(5e-324, 1.0, edges=F_EDGES), tiny_floats(4))
    return floats_in(2.0**-20, 1.0, edges=[2.0**-20, 0.25, 0.5, P_MAX, 1.0])


def params(deep: bool):
    def for_k(k: int):
        return st.fixed_dictionaries({
            "k": st.just(k),
            "m": weights(k),
            "f": flip_parameters(k, deep),
            "constant_time": st.booleans(),
        })

    return lengths(deep).flatmap(for_k)


LONGEST = {False: 7, True: 12}  # drawn lengths; a pinned example adds k = 9 (a uint8 report breaks there)


def lengths(deep: bool, short_weight: int = 2) -> st.SearchStrategy[int]:
    """Vector lengths: 1..ALL_VECTORS_UP_TO ``short_weight`` draws in ``short_weight + 1`` (every input
    enumerated), else up to LONGEST[deep] (2**k paths per input, a subset of inputs)."""
    short = list(range(1, ALL_VECTORS_UP_TO + 1))
    long = list(range(ALL_VECTORS_UP_TO + 1, LONGEST[deep] + 1))
    return st.sampled_from(short * (short_weight * len(long)) + long * len(short))


def all_vectors(k: int, m: int) -> list[tuple[bool, ...]]:
    """Every bit vector of length k with at most m set bits."""
    return [v for v in itertools.product((False, True), repeat=k) if sum(v) <= m]


def _ones(k: int, positions) -> tuple[bool, ...]:
    chosen = set(positions)
    return tuple(i in chosen for i in range(k))


def vectors(k: int, m: int) -> list[tuple[bool, ...]]:
    """In-domain bit vectors to enumerate: all of them when k <= ALL_VECTORS_UP_TO, else the zero
    vector, the first and last unit vectors, blocks of min(m, k) ones at both ends, a pair at the
    largest Hamming distance min(2m, k), a sparse comb and two seeded random vectors."""
    if k <= ALL_VECTORS_UP_TO:
        return all_vectors(k, m)
    w = min(m, k)
    wb = min(m, k - w)
    found = {_ones(k, ()), _ones(k, [0]), _ones(k, [k - 1]), _ones(k, range(w)), _ones(k, range(w, w + wb)),
             _ones(k, range(k - w, k)), _ones(k, list(range(0, k, 2))[:w])}
    for rep, weight in enumerate((min(2, w), (w + 1) // 2)):
        found.add(_ones(k, seeded_permutation(k, 1000 * k + 10 * weight + rep)[:weight]))
    return sorted(found)


def containers(v: tuple[bool, ...], block: tuple[bool, ...], k: int) -> list:
    """Two in-domain vectors in the other containers the domain accepts: a list, NumPy bool, int64 and
    uint8 arrays, tuples of NumPy integers and of NumPy bools (long vectors: only a bool and an int64
    array, to save paths)."""
    if k > ALL_VECTORS_UP_TO:
        return [np.array(v, dtype=bool), np.array(block, dtype=np.int64)]
    return [list(v), np.array(v, dtype=bool), np.array(v, dtype=np.int64), np.array(block, dtype=np.uint8),
            tuple(np.int8(b) for b in v), tuple(np.bool_(b) for b in block)]


def inputs(p):
    """Frozen vectors (see :func:`vectors`) plus two of them in other containers (:func:`containers`)."""
    k, m = p["k"], p["m"]
    vs = vectors(k, m)
    block = _ones(k, range(min(m, k)))
    return [*vs, *containers(_ones(k, [0]), block, k)]


def bits_of(x) -> tuple[bool, ...]:
    """An in-domain input (any container of 0/1 or bools) as a tuple of bools."""
    items = x.tolist() if isinstance(x, np.ndarray) else list(x)
    if not all(b in (0, 1) for b in items):
        raise ValueError(f"x={x!r} is not a vector of bits")
    return tuple(bool(b) for b in items)


def flip_law(x, q: Fraction) -> dict[tuple[bool, ...], Fraction]:
    """The law of x with every bit flipped independently with probability q: y -> q^h (1−q)^(k−h)."""
    bits = bits_of(x)
    k = len(bits)
    if not 0 < q < 1:
        raise ValueError(f"q={q} must be in (0, 1)")
    power = [q**h * (1 - q) ** (k - h) for h in range(k + 1)]
    return {y: power[sum(a != b for a, b in zip(y, bits, strict=True))]
            for y in itertools.product((False, True), repeat=k)}


def law(p, x):
    """P[M(x) = y]: every bit of x flipped with the float flip probability q = flip_probability(f)."""
    return flip_law(x, exact_value(flip_probability(p["f"])))


FLIP_WINDOW = Fraction(1, 2**30)  # relative, as privacy.tight's window
SMALLEST_SUBNORMAL = Fraction(2) ** -1074


def observed_flip(dists: dict) -> Fraction | None:
    """The probability that the code flips the first bit of its first non-empty input (None: no such input, or
    an outcome that is not a bit vector of the input's length)."""
    for x, dist in dists.items():
        if isinstance(x, tuple) and x:
            if not all(isinstance(y, tuple) and len(y) == len(x) for y in dist):
                return None
            return sum((p for y, p in dist.items() if y[0] != x[0]), Fraction(0))
    return None


def flip_family(real_flip):
    """An admissible law family: every bit flipped independently with one probability q′, read from the code,
    within max(2**-30·q, 2**-1074) of the real flip probability q; ``real_flip(params)`` encloses q as
    rationals (lo, hi). Another rounding of q (to nearest, the smallest float above, the exact f/2 drawn from
    two coins) is the same mechanism; whether q′ honours the claimed ε is privacy.sound's question, decided
    on the code's own law."""
    def admissible(p, dists):
        q = observed_flip(dists)
        if q is None or not 0 < q < 1:
            return None
        lo, hi = real_flip(p)
        if not hi - max(hi * FLIP_WINDOW, SMALLEST_SUBNORMAL) <= q <= lo + max(lo * FLIP_WINDOW, SMALLEST_SUBNORMAL):
            return None
        return lambda x: flip_law(x, q)

    return admissible


def _half_f(p) -> tuple[Fraction, Fraction]:
    half = Fraction(p["f"]) / 2
    return half, half


def accountant_family(p) -> RRFamily:
    """The worst pair of the seeds' law (every bit flipped with probability exactly f/2, the pair differing in
    min(2m, k) bits): the family whose RDP curve and PLD an accountant composes with (privacy.rdp, privacy.pld
    check them, certified upward, against the code). A flip probability rounded up from f/2 (vetdp's) has
    smaller ones; one rounded down does not."""
    f = Fraction(p["f"])
    return RRFamily(2, min(2 * p["m"], p["k"]), ratio=(2 - f) / f, name="rappor")


def edges(p) -> list[str]:
    """Boundary classes of bit-vector parameters (shared with k_rappor through :func:`shape_edges`)."""
    f = p["f"]
    out = shape_edges(p)
    n = tiny_numerator(f)
    if n is not None:
        out.append(f"f=n·2⁻¹⁰⁷⁴ n≡{n % 4} mod 4 " + ("subnormal" if n < 2**52 else "lowest normal binade")
                   + (" small n" if n <= 64 else ""))
    if Fraction(flip_probability(f)) != Fraction(f) / 2:
        out.append("f/2 inexact (rounded up)")
    if f == 1.0:
        out.append("f=1 (pure noise)")
    if f == P_MAX:
        out.append("f=1−2⁻⁵³")
    if p.get("constant_time"):
        out.append("constant_time")
    return out


def shape_edges(p) -> list[str]:
    """Edges of the (length k, max_weight m) shape and of the input containers."""
    k, m = p["k"], p["m"]
    out = ["k<2m" if k < 2 * m else "k=2m" if k == 2 * m else "k>2m", "numpy input", "numpy outside"]
    if k <= ALL_VECTORS_UP_TO:
        out.append("list input")
    if m >= k:
        out.append("m>=k (every vector)")
    if m >= 10**6:
        out.append("huge max_weight")
    if k == 1:
        out.append("k=1")
    if k >= 8:
        out.append("k>=8")
    out.append("all inputs" if k <= ALL_VECTORS_UP_TO else "input subset")
    return out


def outside(p):
    """Vectors outside the domain: wrong length, non-bits, too heavy, wrong container — also as NumPy arrays."""
    k, m = p["k"], p["m"]
    bad = [(0,) * (k + 1), "0" * k, b"\x00" * k, None, 0, (2,) + (0,) * (k - 1), (0.5,) + (0,) * (k - 1),
           (1.0,) + (0.0,) * (k - 1), (-1,) + (0,) * (k - 1),
           np.zeros(k + 1, dtype=np.int64), np.zeros(k + 1, dtype=bool), np.array([2] + [0] * (k - 1)),
           np.zeros(k, dtype=np.float64), np.zeros((1, k), dtype=np.int64), np.array(0)]
    if k > 1:
        bad += [(0,) * (k - 1), np.zeros(k - 1, dtype=np.int64)]
    if m + 1 <= k:
        heavy = (1,) * (m + 1) + (0,) * (k - m - 1)
        bad += [heavy, np.array(heavy, dtype=np.int64), np.array(heavy, dtype=bool), list(heavy)]
    return bad


def outside_kind(p, x) -> tuple[str, str]:
    """Why the out-of-domain input x is outside: ("length", ...) for a bit vector of another length,
    ("weight", ...) for one with more than m set bits, ("container", ...) for an in-domain vector in a
    container the domain refuses, ("not_bits", ...) otherwise."""
    k, m = p["k"], p["m"]
    try:
        bits = bits_of(x)
    except (ValueError, TypeError):
        return "not_bits", f"a {type(x).__name__} that is not a vector of 0/1 bits"
    if len(bits) != k:
        return "length", f"length {len(bits)}, the domain's length is k = {k}"
    if sum(bits) > m:
        return "weight", f"weight {sum(bits)} > max_weight m = {m}"
    return "container", f"an in-domain vector as a {type(x).__name__}, which the domain refuses"


def _bad(id_, error, names=("f",), **kw):
    return BadParams(id_, {"m": 1, "k": 4, "f": 0.5, "constant_time": False, **kw}, error, names)


def universal_bases(deep: bool) -> list[dict]:
    """Every (k, m) with k up to 6 and m up to k + 1 (m > k: every vector is in the domain), enumerated; then every
    k up to 128 (the word size 64 inside) with m = k + 1 (Hamming distance k), from the product structure, and with
    ``deep`` also m = 1 (distance 2); then lengths past two words that are not multiples of 64 with m > 64
    (k = 129, m = 65 and k = 200, m = 100: distances 129 and 200)."""
    small = [{"k": k, "m": m, "constant_time": False} for k in range(1, 7) for m in range(1, k + 2)]
    return small + [{"k": k, "m": m, "constant_time": False} for k in range(7, 129)
                    for m in ((1, k + 1) if deep else (k + 1,))] + [
        {"k": k, "m": m, "constant_time": False} for k, m in ((129, 65), (200, 100))]


def coordinate_law(p, bit: bool) -> dict:
    """One output bit of the reference law: the input bit flipped with probability q = flip_probability(f)."""
    q = exact_value(flip_probability(p["f"]))
    return {bit: 1 - q, not bit: q}


def universal_constant(p) -> PrivacyConstant:
    """ε of the reference law: min(2m, k)·ln((1−q)/q) rounded up, q = flip_probability(f) (obligation
    randomized_response_bitvec.epsilon.sound; lemma rappor.epsilon_is_max_log_ratio)."""
    return PrivacyConstant(RANDOMIZED_RESPONSE_BITVEC_EPSILON,
                           {"q": flip_probability(p["f"]), "d": min(2 * p["m"], p["k"])})


MEASUREMENT = MeasurementSpec(
    name="randomized_response_bitvec",
    size=lambda p: ("k", p["k"]),
    constructor="make_randomized_response_bitvec",
    build=build,
    params=params,
    examples=[
        {"k": 4, "m": 1, "f": 0.5, "constant_time": False},
        {"k": 3, "m": 2, "f": 0.25, "constant_time": False},  # k < 2m: the loss is k·ln((2−f)/f)
        {"k": 3, "m": 1, "f": 5e-324, "constant_time": False},  # smallest subnormal f
        {"k": 2, "m": 1, "f": 1.5e-323, "constant_time": True},  # f/2 is not a float: rounded up
        {"k": 4, "m": 2, "f": 1.0, "constant_time": False},  # pure noise: map 0
        {"k": 5, "m": 2, "f": math.nextafter(1.0, 0.0), "constant_time": True},
        {"k": 3, "m": 10**6, "f": 0.125, "constant_time": False},  # huge max_weight: d = k
        {"k": 2, "m": 1, "f": 1e-323, "constant_time": False},  # n = 2: f/2 exact
        {"k": 2, "m": 2, "f": 2e-323, "constant_time": False},  # n = 4 ≡ 0 mod 4
        {"k": 3, "m": 1, "f": tiny_float(2**52 - 3), "constant_time": False},  # large subnormal n ≡ 1 mod 4
        {"k": 2, "m": 1, "f": tiny_float(2**52 - 1), "constant_time": False},  # large subnormal n ≡ 3 mod 4
        {"k": 2, "m": 1, "f": tiny_float(2**52 + 1), "constant_time": True},  # normal f, f/2 inexact
        {"k": 3, "m": 2, "f": tiny_float(2**53 - 1), "constant_time": False},  # normal f, n ≡ 3 mod 4
        {"k": 9, "m": 3, "f": 0.375, "constant_time": False},  # 9 bits (beyond a byte), input subset
    ],
    # production sizes, decided from the product structure the code shows (vetdp.engine.structure)
    scale_examples=[
        {"k": 128, "m": 8, "f": 0.5, "constant_time": False},
        {"k": 128, "m": 8, "f": 0.01, "constant_time": True},
        # past two 64-bit words, not a multiple of 64, 2m > k > 128: a third word, a weight above 64 (3.5 s of CPU)
        {"k": 129, "m": 65, "f": 0.5, "constant_time": False},
    ],
    universal=Universal(universal_bases, lambda p: {"f": (5e-324, 1.0)}, universal_constant,
                        coordinate_law=coordinate_law),
    bad=[
        _bad("max_weight_missing", ValueError, ("max_weight",), input_domain=bitvector_domain(length=4)),
        _bad("length_missing", ValueError, ("length",), input_domain=bitvector_domain(max_weight=1)),
        _bad("domain_not_bitvector", TypeError, ("input_domain",), input_domain=AtomDomain(bool)),
        _bad("metric_wrong", TypeError, ("input_metric",), input_metric="discrete"),
        _bad("f_zero", ValueError, f=0.0),
        _bad("f_negative", ValueError, f=-0.5),
        _bad("f_above_one", ValueError, f=math.nextafter(1.0, 2.0)),
        _bad("f_nan", ValueError, f=math.nan),
        _bad("f_inf", ValueError, f=math.inf),
        _bad("f_str", TypeError, f="0.5"),
        _bad("f_bool", TypeError, f=True),
        _bad("constant_time_str", TypeError, ("constant_time",), constant_time="no"),
    ],
    inputs=inputs,
    outside=outside,
    constant_time_param="constant_time",
    describe="bit-vector randomized response (RAPPOR)",
    law=law,
    admissible_laws=(("the law with another rounding of the flip probability f/2 (every bit flipped with one "
                      "probability within 2**-30 of f/2, or the exact f/2 of the seeds)", flip_family(_half_f)),),
    rdp_curve=lambda p: accountant_family(p).rdp_upper,
    delta_curve=lambda p: one_run_delta(accountant_family(p)),
    accountant_pair=lambda p: accountant_family(p).pair_plds,
    outside_kind=outside_kind,
    max_d_in=3,
    edges=edges,
)


def estimator_params(deep: bool):
    def for_k(k: int):
        vec = st.tuples(*[st.booleans()] * k)
        return st.fixed_dictionaries({
            "k": st.just(k), "m": st.just(k), "constant_time": st.just(False),
            "f": floats_in(1e-3, math.nextafter(1.0, 0.0), edges=[0.5, 0.25, math.nextafter(1.0, 0.0)]),
            "dataset": st.lists(vec, min_size=1, max_size=3 if k <= 2 else 2),
        })

    return st.integers(1, 3).flatmap(for_k)


def _truth_counts(p):
    return [Fraction(sum(row[j] for row in p["dataset"])) for j in range(p["k"])]


def _count_claims(p):
    n = len(p["dataset"])
    return {"variance": [randomized_response_bitvec_count_variance(n, p["f"], exact=True)] * p["k"],
            "mse": randomized_response_bitvec_count_mse(n, p["k"], p["f"], exact=True)}


ESTIMATOR_BAD = [
    ("f_one", lambda e: e([(1, 0)], 1.0), ValueError, ("f",)),
    ("f_nan", lambda e: e([(1, 0)], math.nan), ValueError, ("f",)),
    ("no_answers", lambda e: e([], 0.5), ValueError, ("answers",)),
    ("ragged", lambda e: e([(1, 0), (1,)], 0.5), ValueError, ("answers[1]", "length")),
    ("not_bits", lambda e: e([(1, 2)], 0.5), ValueError, ("answers[0][1]",)),
    ("answers_str", lambda e: e("0101", 0.5), TypeError, ("answers",)),
]


EXAMPLES = [{"k": 2, "m": 2, "f": 0.5, "constant_time": False, "dataset": [(True, False), (True, True)]},
            {"k": 1, "m": 1, "f": 0.25, "constant_time": False, "dataset": [(False,), (True,), (True,)]}]

COUNT_ESTIMATOR = EstimatorSpec(
    name="debias_randomized_response_bitvec",
    module="randomized_response_bitvec",
    estimator="debias_randomized_response_bitvec",
    mechanism=MEASUREMENT,
    params=estimator_params,
    examples=EXAMPLES,
    estimate=lambda est, answers, p: est(list(answers), p["f"], exact=True),
    truth=_truth_counts,
    claims=_count_claims,
    claim_calls={"variance": lambda fn, p: [fn(len(p["dataset"]), p["f"], exact=True)] * p["k"]},
    bad=ESTIMATOR_BAD,
    describe="RAPPOR count estimator",
)

FREQUENCY_ESTIMATOR = EstimatorSpec(
    name="debias_randomized_response_bitvec_frequencies",
    module="randomized_response_bitvec",
    estimator="debias_randomized_response_bitvec_frequencies",
    mechanism=MEASUREMENT,
    params=estimator_params,
    examples=EXAMPLES,
    estimate=lambda est, answers, p: est(list(answers), p["f"], exact=True),
    truth=lambda p: [c / len(p["dataset"]) for c in _truth_counts(p)],
    claims=lambda p: {"mse": randomized_response_bitvec_frequency_mse(len(p["dataset"]), p["k"], p["f"], exact=True)},
    bad=ESTIMATOR_BAD,
    describe="RAPPOR frequency estimator",
)

SPECS = [MEASUREMENT, COUNT_ESTIMATOR, FREQUENCY_ESTIMATOR]
