"""Hoare triples of make_rappor_report and make_rappor_reports (impl/rappor.py).

Pre: input_domain a BitVectorDomain with max_weight h (hash functions) and length k <= 2**32; input_metric a
DiscreteDistance; f a float in [0, 1) ((0, 1) for make_rappor_reports); p, q floats with 0 <= p < q <= 1;
p* = p + r(q − p) and 1 − q* = 1 − q + r(q − p) at least 2**-1000, r = rappor_flip_probability(f) (f/2 rounded
up); reports an int >= 1; constant_time a bool.
Law (stated here from the floats, independently of the implementation): each bit independently, the permanent
bit B' = B w.p. 1 − r and ¬B w.p. r, then each report bit is 1 w.p. q if B' = 1 and p if B' = 0. For one report
P[S_i = 1 | B_i] = q* = (1 − r)q + rp if B_i = 1, p* = rq + (1 − r)p if B_i = 0. For n reports sharing B', bit i
of the n reports has the mixture law Σ_b' P[b' | B_i] Π_t P[S_i^t | b'].
Post (one report): map(0) = 0, map(1) >= the exact max-divergence over every input pair, and within 2**-30 of it
(the exact worst case: h·ln(q*(1 − p*)/(p*(1 − q*))) when 2h <= k, the (a, b) split of rappor_report_loss_weights
when 2h > k); map(d_in >= 2) raises.
Post (n = 1, 2, 3 reports): map(1) = ε∞ = min(2h, k)·ln((1 − r)/r) >= the exact max-divergence of the n reports
together (not tight: the loss of finitely many reports stays below ε∞, reaching it only as n grows).
Search: one report drawn with k <= 3 and pinned at k = 4 (h = 2 and h = 4; drawn up to 5 with --deep; every
input when k <= 4), h in 1..3 and huge; n reports drawn with k <= 3, 2, 1 for n = 1, 2, 3 (4, 3, 2 with --deep)
and pinned up to k = 3 (k = 3, h = 2: h < k < 2h), with 4 and 7 reports pinned at k = 1 and one at k = 7, h = 4;
f at 0, the float edges, subnormals n·2**-1074 (k <= 2 only: their exact probabilities are long), p at 0, q at 1,
q = the float after p, and the p* = 2**-1000 boundary (f = 2**-999, p = 0, q = 1). Scale examples k = 32
(h = 2), 65 and 128 (h = k): each output bit's exact law (at k = 32 also with f, p, q = 1/8, 1/16, 15/16 and
3/4, 0, 1) at the concrete inputs of structure.probe_vectors (zeros, heaviest prefix and suffix), read by forked
runs (the code branches on each permanent bit), against ``coordinate_law``; a difference fails the law.
n reports: scale examples k = 32 (h = 2, 3 reports) and k = 65 (h = k, 2 reports), read column by column (bit i of
every report, ``report_columns``) against ``many_coordinate_law``.
Universal (one report): f, p, q symbolic on the bases k = 2, h = 1 (with --deep also k = 3, 4, h = 2, constant
time, and k = 1, h = 1 where 2h > k); the joint precondition is ``accepted``; the constant is ε₁ (2h <= k: one
weight pair; 2h > k: the larger of two, compared as the code compares them). n reports: k = 1, h = 1,
2 reports (with --deep k = 2 with 2 reports, k = 1 with 3), the constant ε∞.
Probe bases (the law only, read at concrete inputs by forked runs with f, p, q symbolic, a difference fails and
agreement is checked, not proved): one report at k = 10, h = 5 (with --deep also k = 16, h = 8 and k = 66, h = 33),
n reports at k = 10, h = 5 with 2 reports (with --deep k = 16, h = 8 with 3).
Proof: proofs/rappor.md
"""

import itertools
import math
from fractions import Fraction

from hypothesis import strategies as st

from vetdp.core.measurement import AtomDomain, PrivacyConstant, bitvector_domain, discrete_distance
from vetdp.engine.spec import BadParams, MeasurementSpec, Universal, exact_value, floats_in, tiny_floats
from vetdp.impl.rappor import (
    RAPPOR_EPSILON_INFINITY,
    RAPPOR_EPSILON_ONE,
    rappor_flip_probability,
    rappor_report_loss_weights,
)
from vetdp.specs.randomized_response_bitvec import bits_of, outside, outside_kind, shape_edges, vectors

P_MAX = math.nextafter(1.0, 0.0)  # the largest float below 1
BOUNDARY_F = 2.0**-999  # with p = 0, q = 1: p* = 1 − q* = 2**-1000 exactly, the least accepted
F_EDGES = [0.0, 5e-324, 1e-300, 0.25, 0.5, 0.75, P_MAX]
LONGEST = {False: 3, True: 5}  # one report: drawn lengths (every input up to 4, a subset beyond: 4**k paths each)
# n reports: drawn lengths per n (2**((n + 1)·k) paths per input; n = 3 at k = 3 costs a second per input)
LONGEST_REPORTS = {False: {1: 3, 2: 2, 3: 1}, True: {1: 4, 2: 3, 3: 2}}


def build_one(ctor, p):
    domain = p.get("input_domain") or bitvector_domain(max_weight=p["m"], length=p["k"])
    metric = p.get("input_metric", discrete_distance())
    return ctor(domain, metric, p["f"], p["p"], p["q"], p["constant_time"])


def build_many(ctor, p):
    domain = p.get("input_domain") or bitvector_domain(max_weight=p["m"], length=p["k"])
    metric = p.get("input_metric", discrete_distance())
    return ctor(domain, metric, p["f"], p["p"], p["q"], p["reports"], p["constant_time"])


def report_probabilities(p) -> tuple[Fraction, Fraction, Fraction]:
    """(r, q*, p*) as exact rationals of the floats in use: r = rappor_flip_probability(f), q* = (1 − r)q + rp,
    p* = rq + (1 − r)p (polynomials in the floats when they are the engine's symbolic floats)."""
    r = exact_value(rappor_flip_probability(p["f"]))
    pv, qv = exact_value(p["p"]), exact_value(p["q"])
    return r, (1 - r) * qv + r * pv, r * qv + (1 - r) * pv


MIN_REPORT_PROBABILITY = Fraction(2) ** -1000


def accepted(p) -> bool:
    """Whether (f, p, q) meets the preconditions linking them: p < q, p* and 1 − q* >= 2**-1000. Since p* >= p
    and 1 − q* = r(1 − p) + (1 − r)(1 − q) >= 1 − q, p and 1 − q are read first (the same answer; on regions of
    floats it keeps the joint boundary to p < 2**-1000 or q = 1)."""
    if not p["p"] < p["q"]:
        return False
    r, q_star, p_star = report_probabilities(p)
    pv, qv = exact_value(p["p"]), exact_value(p["q"])
    return ((pv >= MIN_REPORT_PROBABILITY or p_star >= MIN_REPORT_PROBABILITY)
            and (1 - qv >= MIN_REPORT_PROBABILITY or r * (1 - pv) + (1 - r) * (1 - qv) >= MIN_REPORT_PROBABILITY))


def probabilities(tiny: bool) -> st.SearchStrategy[dict]:
    """(f, p, q) with f in [0, 1), 0 <= p < q <= 1, the edges first; subnormal f only when ``tiny``."""
    f_values = floats_in(0.0, P_MAX, edges=F_EDGES)
    if tiny:
        f_values = st.one_of(f_values, tiny_floats(4), st.just(BOUNDARY_F))
    else:
        f_values = floats_in(2.0**-20, P_MAX, edges=[0.0, 2.0**-20, 0.25, 0.5, P_MAX])
    p_values = floats_in(0.0, P_MAX, edges=[0.0, 5e-324, 0.25, 0.5, P_MAX])

    def with_q(pv: float) -> st.SearchStrategy[float]:
        above = math.nextafter(pv, 2.0)
        return floats_in(above, 1.0, edges=[above, 1.0, max(above, 0.75)])

    pq = p_values.flatmap(lambda pv: st.tuples(st.just(pv), with_q(pv)))
    return st.builds(lambda fv, pair: {"f": fv, "p": pair[0], "q": pair[1]}, f_values, pq).filter(accepted)


def one_params(deep: bool):
    def for_k(k: int):
        return st.tuples(st.just(k), st.one_of(st.integers(1, 3), st.just(10**6)), probabilities(k <= 2),
                         st.booleans()).map(lambda t: {"k": t[0], "m": t[1], **t[2], "constant_time": t[3]})

    return st.sampled_from(list(range(1, LONGEST[deep] + 1))).flatmap(for_k)


def many_params(deep: bool):
    def for_n(n: int):
        return st.tuples(st.integers(1, LONGEST_REPORTS[deep][n]), st.integers(1, 3), probabilities(False),
                         st.booleans()).map(
            lambda t: {"k": t[0], "m": t[1], **t[2], "constant_time": t[3], "reports": n})

    return st.sampled_from([1, 2, 3]).flatmap(for_n).filter(lambda p: p["f"] > 0)


def inputs(p):
    """Every input when k <= 4, else a subset holding a pair at Hamming distance min(2h, k) (see the bit-vector
    spec's ``vectors``), plus one input as a list."""
    vs = vectors(p["k"], p["m"])
    return [*vs, list(vs[-1])]


def one_law(p, x):
    """P[S = y | B = x] = Π_i (q* if x_i else p*)^y_i (1 − (q* if x_i else p*))^(1 − y_i)."""
    by_bit = {b: coordinate_law(p, b) for b in (False, True)}
    coordinates = [by_bit[b] for b in bits_of(x)]
    return {y: math.prod(c[yi] for c, yi in zip(coordinates, y, strict=True))
            for y in itertools.product((False, True), repeat=len(coordinates))}


def column_law(r: Fraction, pv: Fraction, qv: Fraction, n: int, bit: bool) -> dict[tuple[bool, ...], Fraction]:
    """P[(S^1_i, ..., S^n_i) = column | B_i = bit] for n reports sharing one permanent bit b' flipped with
    probability r: the mixture over b' of Π_t P[S^t_i | b'] (q if b' else p for a 1)."""
    out = {}
    for column in itertools.product((False, True), repeat=n):
        total = Fraction(0)
        for b_perm in (False, True):
            weight = (1 - r) if b_perm == bit else r
            one = qv if b_perm else pv
            total += weight * math.prod((one if s else 1 - one) for s in column)
        out[column] = total
    return out


def shared_permanent_law(r: Fraction, pv: Fraction, qv: Fraction, n: int, bits: tuple[bool, ...]) -> dict:
    """P[(S^1, ..., S^n) = ys | B = bits] for n reports sharing one permanent response with flip probability r:
    per bit, :func:`column_law`."""
    columns = {b: column_law(r, pv, qv, n, b) for b in (False, True)}
    out = {}
    for flat in itertools.product((False, True), repeat=n * len(bits)):
        ys = tuple(flat[t * len(bits):(t + 1) * len(bits)] for t in range(n))
        prob = math.prod(columns[bit][tuple(ys[t][i] for t in range(n))] for i, bit in enumerate(bits))
        # p = 0 or q = 1 make some reports impossible: outputs of probability 0 are not listed (a polynomial of
        # symbolic floats is kept: the engine drops it where it is 0 on the whole region)
        if not isinstance(prob, Fraction) or prob:
            out[ys] = prob
    return out


def many_law(p, x):
    """The law of p["reports"] reports sharing one permanent response, flip r = rappor_flip_probability(f)."""
    return shared_permanent_law(exact_value(rappor_flip_probability(p["f"])), exact_value(p["p"]),
                                exact_value(p["q"]), p["reports"], bits_of(x))


def edges(p) -> list[str]:
    """Boundary classes of RAPPOR parameters: the bit-vector shape edges and the probability edges."""
    out = shape_edges(p)
    f, pv, qv = p["f"], p["p"], p["q"]
    r, q_star, p_star = report_probabilities(p)
    if f == 0:
        out.append("f=0 (no permanent noise)")
    elif f < 2.2250738585072014e-308:
        out.append("f subnormal")
    if r != Fraction(f) / 2:
        out.append("f/2 inexact (rounded up)")
    if f == P_MAX:
        out.append("f=1−2⁻⁵³")
    if pv == 0:
        out.append("p=0")
    if qv == 1:
        out.append("q=1")
    if qv == math.nextafter(pv, 2.0):
        out.append("q=next float after p")
    if min(p_star, 1 - q_star) == Fraction(2) ** -1000:
        out.append("p* or 1−q* = 2⁻¹⁰⁰⁰ (least accepted)")
    if "reports" in p:
        out.append(f"reports={p['reports']}")
    if p.get("constant_time"):
        out.append("constant_time")
    return out


def universal_bases(deep: bool) -> list[dict]:
    """f, p, q symbolic on k = 2 with h = 1 (2h <= k: one (a, b) weight pair, the map is one term; about 3 s of
    CPU); with ``deep`` also k = 3 (h = 1), k = 4 (h = 2), constant_time, and k = 1 with h = 1 (2h > k: the map is
    the larger of the two weightings' ε₁, compared along p + q = 1; about 17 s of CPU)."""
    small = [(2, 1)]
    more = [(3, 1), (4, 2), (1, 1)] if deep else []
    return ([{"k": k, "m": m, "constant_time": False} for k, m in small + more]
            + ([{"k": 2, "m": 1, "constant_time": True}] if deep else []))


def universal_constant(p) -> PrivacyConstant:
    """ε₁ of the reference law: a·ln(q*/p*) + b·ln((1 − p*)/(1 − q*)) rounded up, r = rappor_flip_probability(f)
    (obligations rappor.* of proofs/rappor.md), with a = b = min(h, k) for 2h <= k, else the larger of the two
    weightings (h', k − h') and (k − h', h') (each rounded up, so the larger is >= both exact terms)."""
    env = {"r": rappor_flip_probability(p["f"]), "p": p["p"], "q": p["q"]}
    first, *other = (PrivacyConstant(RAPPOR_EPSILON_ONE, {**env, "a": a, "b": b})
                     for a, b in rappor_report_loss_weights(p["m"], p["k"]))
    for constant in other:
        if constant.value > first.value:
            first = constant
    return first


def coordinate_law(p, bit: bool) -> dict:
    """One output bit of the reference law: 1 with probability q* if the input bit is 1, else p*."""
    _, q_star, p_star = report_probabilities(p)
    one = q_star if bit else p_star
    return {True: one, False: 1 - one}


def probe_bases(deep: bool) -> list[dict]:
    """One report at a Bloom filter past 8 bits, f, p, q symbolic: k = 10 with h = 5 (the alternating inputs read
    every bit at both values, and 2h <= k keeps the map one term, so the regions few; about 14 s of CPU); with
    ``deep`` also k = 16 (h = 8) and k = 66 (h = 33, past one 64-bit word). The code branches on each permanent
    bit, so each region is read at those inputs by forked runs: a band of f, p or q that the code treats otherwise
    past bit 8 (or past 64 bits) is a region whose law differs."""
    shapes = [(10, 5)] + ([(16, 8), (66, 33)] if deep else [])
    return [{"k": k, "m": m, "constant_time": False} for k, m in shapes]


UNIVERSAL = Universal(
    bases=universal_bases,
    probe_bases=probe_bases,
    # each float's valid values (-0.0 is 0); the joint conditions p < q, p*, 1 − q* >= 2**-1000 are ``accepted``
    floats=lambda p: {"f": (-0.0, P_MAX), "p": (-0.0, P_MAX), "q": (5e-324, 1.0)},
    constant=universal_constant,
    accepts=accepted,
    # Bloom filters longer than the bases are read at concrete inputs, output bit by output bit (scale examples)
    coordinate_law=coordinate_law,
)

def many_universal_bases(deep: bool) -> list[dict]:
    """n reports with f, p, q symbolic: k = 1, h = 1, 2 reports; with ``deep`` also k = 2 (2 reports) and k = 1
    with 3 reports."""
    more = [(2, 1, 2), (1, 1, 3)] if deep else []
    return [{"k": k, "m": m, "reports": n, "constant_time": False} for k, m, n in [(1, 1, 2), *more]]


def many_constant(p) -> PrivacyConstant:
    """ε∞ = min(2h, k)·ln((1 − r)/r) rounded up, r = rappor_flip_probability(f) (the bit-vector constant,
    obligations randomized_response_bitvec.epsilon.*): a bound of the permanent response, which every number of
    reports post-processes."""
    return PrivacyConstant(RAPPOR_EPSILON_INFINITY, {"q": rappor_flip_probability(p["f"]),
                                                     "d": min(2 * p["m"], p["k"])})


def many_coordinate_law(p, bit: bool) -> dict:
    """Bit i of every report (a tuple of p["reports"] bits) given input bit i: :func:`column_law`."""
    return column_law(exact_value(rappor_flip_probability(p["f"])), exact_value(p["p"]), exact_value(p["q"]),
                      p["reports"], bit)


def report_columns(p, reports) -> tuple:
    """n reports of k bits as k columns: column i holds bit i of every report."""
    return tuple(zip(*reports, strict=True))


def many_probe_bases(deep: bool) -> list[dict]:
    """n reports at a Bloom filter past 8 bits, read column by column as :func:`probe_bases` reads one report:
    k = 10, h = 5, 2 reports (about 17 s of CPU); with ``deep`` also k = 16, h = 8, 3 reports."""
    shapes = [(10, 5, 2)] + ([(16, 8, 3)] if deep else [])
    return [{"k": k, "m": m, "reports": n, "constant_time": False} for k, m, n in shapes]


UNIVERSAL_MANY = Universal(
    bases=many_universal_bases,
    probe_bases=many_probe_bases,
    floats=lambda p: {"f": (5e-324, P_MAX), "p": (-0.0, P_MAX), "q": (5e-324, 1.0)},  # f = 0 refused
    constant=many_constant,
    accepts=accepted,
    # long Bloom filters (scale examples) are read column by column at concrete inputs
    coordinate_law=many_coordinate_law,
    coordinates=report_columns,
)

BASE = {"m": 1, "k": 4, "f": 0.5, "p": 0.25, "q": 0.75, "constant_time": False}


def _bad(id_, error, names, **kw):
    return BadParams(id_, {**BASE, **kw}, error, names)


BAD_COMMON = [
    _bad("max_weight_missing", ValueError, ("max_weight",), input_domain=bitvector_domain(length=4)),
    _bad("length_missing", ValueError, ("length",), input_domain=bitvector_domain(max_weight=1)),
    _bad("length_huge", ValueError, ("length",), input_domain=bitvector_domain(max_weight=1, length=2**32 + 1)),
    _bad("domain_not_bitvector", TypeError, ("input_domain",), input_domain=AtomDomain(bool)),
    _bad("metric_wrong", TypeError, ("input_metric",), input_metric="discrete"),
    _bad("f_one", ValueError, ("f",), f=1.0),
    _bad("f_negative", ValueError, ("f",), f=-0.25),
    _bad("f_nan", ValueError, ("f",), f=math.nan),
    _bad("f_inf", ValueError, ("f",), f=math.inf),
    _bad("f_str", TypeError, ("f",), f="0.5"),
    _bad("f_bool", TypeError, ("f",), f=True),
    _bad("p_negative", ValueError, ("p",), p=-5e-324),
    _bad("p_one", ValueError, ("p",), p=1.0),
    _bad("p_nan", ValueError, ("p",), p=math.nan),
    _bad("p_str", TypeError, ("p",), p="0.25"),
    _bad("q_above_one", ValueError, ("q",), q=math.nextafter(1.0, 2.0)),
    _bad("q_zero", ValueError, ("q",), q=0.0),
    _bad("q_inf", ValueError, ("q",), q=math.inf),
    _bad("q_none", TypeError, ("q",), q=None),
    _bad("p_equals_q", ValueError, ("p", "q"), p=0.5, q=0.5),
    _bad("p_above_q", ValueError, ("p", "q"), p=0.75, q=0.25),
    _bad("p_star_below_floor", ValueError, ("f", "p", "q", "p*"), f=2.0**-1000, p=0.0, q=0.5),
    _bad("one_minus_q_star_below_floor", ValueError, ("f", "p", "q", "q*"), f=2.0**-1000, p=0.5, q=1.0),
    _bad("constant_time_str", TypeError, ("constant_time",), constant_time="no"),
]

ONE_REPORT = MeasurementSpec(
    name="rappor",
    size=lambda p: ("k", p["k"]),
    constructor="make_rappor_report",
    build=build_one,
    params=one_params,
    examples=[
        {"k": 4, "m": 2, "f": 0.5, "p": 0.5, "q": 0.75, "constant_time": False},  # the paper's parameters, 2h = k
        {"k": 3, "m": 1, "f": 0.25, "p": 0.25, "q": 0.75, "constant_time": False},  # 2h < k
        {"k": 3, "m": 2, "f": 0.5, "p": 0.5, "q": 0.75, "constant_time": False},  # 2h > k: the (a, b) split
        {"k": 3, "m": 2, "f": 0.5, "p": 0.0625, "q": 0.5, "constant_time": True},  # 2h > k, the other split
        {"k": 2, "m": 1, "f": 0.0, "p": 0.25, "q": 0.75, "constant_time": False},  # f = 0: IRR only
        {"k": 2, "m": 1, "f": 0.5, "p": 0.0, "q": 1.0, "constant_time": False},  # ε₁ = ε∞
        {"k": 2, "m": 1, "f": BOUNDARY_F, "p": 0.0, "q": 1.0, "constant_time": False},  # p* = 2**-1000
        {"k": 2, "m": 1, "f": 5e-324, "p": 0.25, "q": 0.5, "constant_time": False},  # f/2 rounded up
        {"k": 3, "m": 1, "f": P_MAX, "p": 0.5, "q": math.nextafter(0.5, 1.0), "constant_time": False},  # tiny ε₁
        {"k": 1, "m": 1, "f": 0.5, "p": 0.25, "q": 0.75, "constant_time": True},  # k = 1
        {"k": 3, "m": 10**6, "f": 0.75, "p": 0.125, "q": 0.875, "constant_time": False},  # huge max_weight
        # h > 3 on a filter longer than 3 bits (the search draws h <= 3 or huge, and k <= 3 with a huge h)
        {"k": 4, "m": 4, "f": 0.5, "p": 0.125, "q": 0.5, "constant_time": False},  # p + q != 1: weights (4, 0)
    ],
    bad=BAD_COMMON,
    inputs=inputs,
    outside=outside,
    constant_time_param="constant_time",
    describe="RAPPOR, one report (permanent then instantaneous randomized response)",
    law=one_law,
    outside_kind=outside_kind,
    max_d_in=3,
    edges=edges,
    universal=UNIVERSAL,
    # production lengths, around one and two words: the code branches on each permanent bit, so there is no
    # product structure; each output bit's exact law is compared with coordinate_law at a few concrete inputs
    # (h = k: the heaviest prefix is every bit, so each output bit is read at both input bits); a spread of f, p, q
    scale_examples=[{"k": k, "m": m, "f": f, "p": pv, "q": qv, "constant_time": False}
                    for k, m, f, pv, qv in ((32, 2, 0.5, 0.25, 0.75), (32, 32, 0.125, 0.0625, 0.9375),
                                            (32, 32, 0.75, 0.0, 1.0), (65, 65, 0.25, 0.5, 0.75),
                                            (128, 128, 0.5, 0.25, 0.75))],
)

MANY_REPORTS = MeasurementSpec(
    name="rappor_reports",
    size=lambda p: ("k", p["k"]),
    constructor="make_rappor_reports",
    constructor_ref="vetdp.impl.rappor:make_rappor_reports",
    build=build_many,
    params=many_params,
    examples=[
        {"k": 2, "m": 1, "f": 0.5, "p": 0.5, "q": 0.75, "constant_time": False, "reports": 1},
        {"k": 2, "m": 1, "f": 0.5, "p": 0.5, "q": 0.75, "constant_time": False, "reports": 3},
        {"k": 3, "m": 1, "f": 0.25, "p": 0.0, "q": 1.0, "constant_time": False, "reports": 2},  # near ε∞
        {"k": 2, "m": 2, "f": 0.5, "p": 0.25, "q": 0.75, "constant_time": True, "reports": 2},  # 2h > k
        {"k": 3, "m": 2, "f": 0.5, "p": 0.0, "q": 1.0, "constant_time": False, "reports": 2},  # h < k < 2h
        {"k": 2, "m": 1, "f": 0.125, "p": 0.25, "q": 0.5, "constant_time": False, "reports": 2},
        {"k": 2, "m": 2, "f": P_MAX, "p": 0.0, "q": 1.0, "constant_time": False, "reports": 3},
        # more reports than the search draws (ε∞ is claimed for every number): one coin of the permanent response
        # and one per report at k = 1
        {"k": 1, "m": 1, "f": 0.5, "p": 0.0, "q": 1.0, "constant_time": False, "reports": 4},
        {"k": 1, "m": 1, "f": 0.25, "p": 0.25, "q": 0.75, "constant_time": False, "reports": 7},
        # h > 3 and k > 6 (the search draws h <= 3, k <= 3): with p = 0, q = 1 one report shows the permanent
        # response, so its exact loss is ε∞ itself (128 paths per input)
        {"k": 7, "m": 4, "f": 0.5, "p": 0.0, "q": 1.0, "constant_time": False, "reports": 1},
    ],
    # k = 2 keeps the truth of a wrongly accepted parameter set cheap (2**(3k) paths per input for 2 reports)
    bad=[*[BadParams(b.id, {**b.params, "k": 2, "reports": 2}, b.error, b.names) for b in BAD_COMMON],
         _bad("f_zero", ValueError, ("f",), f=0.0, k=2, reports=2),
         _bad("reports_zero", ValueError, ("reports",), k=2, reports=0),
         _bad("reports_float", TypeError, ("reports",), k=2, reports=2.0),
         _bad("reports_bool", TypeError, ("reports",), k=2, reports=True)],
    inputs=inputs,
    outside=outside,
    tight=False,  # ε∞ bounds any number of reports; finitely many stay strictly below it
    constant_time_param="constant_time",
    describe="RAPPOR, n reports sharing one memoized permanent response",
    law=many_law,
    outside_kind=outside_kind,
    max_d_in=3,
    edges=edges,
    universal=UNIVERSAL_MANY,
    # production lengths: each column's exact law (bit i of every report) at concrete inputs, by forked runs
    scale_examples=[{"k": k, "m": m, "f": 0.5, "p": 0.25, "q": 0.75, "constant_time": False, "reports": n}
                    for k, m, n in ((32, 2, 3), (65, 65, 2))],
)

SPECS = [ONE_REPORT, MANY_REPORTS]
