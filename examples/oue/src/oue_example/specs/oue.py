"""Hoare triple of make_oue and estimate_oue_counts (src/oue_example/oue.py).

Pre: d an int in [2, 2**24]; epsilon a float in (0, 700]; constant_time a bool.
Law: bit v (the true value) is 1 with probability 1/2, every other bit 1 with probability q, independently,
q = oue_flip_probability(epsilon) (1/(e^ε + 1) rounded up).
Post: map(0) = 0, map(d_in >= 1) >= the exact max-divergence between any two values (tight within 2**-30);
every pair of values is a garbling of the accountant's two-bit pair (privacy.dominated);
values outside [0, d), bools and non-ints rejected before randomness; with constant_time the bytes read never
depend on the value.
Estimator: E[ĉ(i)] = the true count of i, exactly; Var[ĉ(i)] = (c_i/4 + (n − c_i)q(1−q))/(1/2 − q)²; the MSE is
their sum.
Proof: proofs/oue.md
"""

import itertools
import math
from fractions import Fraction

from hypothesis import strategies as st

from oue_example.oue import MAX_EPSILON, oue_count_variance, oue_flip_probability
from vetdp.api import BadParams, EstimatorSpec, MeasurementSpec, floats_in, pld_of_laws

EPSILON_EDGES = [5e-324, 2.0**-60, 1e-6, 0.5, 1.0, math.log(3), 4.0, 50.0, MAX_EPSILON]


def build(ctor, p):
    return ctor(p["d"], p["epsilon"], p["constant_time"])


def params(deep: bool):
    return st.fixed_dictionaries({
        "d": st.integers(2, 6 if deep else 4),
        "epsilon": floats_in(5e-324, MAX_EPSILON, edges=EPSILON_EDGES),
        "constant_time": st.booleans(),
    })


def law(p, v):
    """P[M(v) = y]: bit v is 1 with probability 1/2, bit i != v with probability q, independently."""
    q = Fraction(oue_flip_probability(p["epsilon"]))
    out = {}
    for y in itertools.product((False, True), repeat=p["d"]):
        pr = Fraction(1)
        for i, bit in enumerate(y):
            one = Fraction(1, 2) if i == v else q
            pr *= one if bit else 1 - one
        out[y] = pr
    return out


def accountant_pair(p):
    """The worst pair an OUE accountant composes with: two values v, v' differ in two bits, v's (1 with probability
    1/2 under v, q under v') and v''s (q under v, 1/2 under v'); the other bits have one law under both. None
    for an ε outside (0, MAX_EPSILON], which a library under audit may accept: there is no accountant for it."""
    eps = p["epsilon"]
    if not (isinstance(eps, float) and 0 < eps <= MAX_EPSILON):
        return None
    q, half = Fraction(oue_flip_probability(eps)), Fraction(1, 2)

    def bit(one, b):
        return one if b else 1 - one

    pairs = list(itertools.product((False, True), repeat=2))
    return pld_of_laws({y: bit(half, y[0]) * bit(q, y[1]) for y in pairs},
                       {y: bit(q, y[0]) * bit(half, y[1]) for y in pairs})


def outside(p):
    d = p["d"]
    return [d, -1, d + 10, True, False, 0.0, "0", None, (0,), [0]]


def _bad(id_, error, names=("epsilon",), **kw):
    return BadParams(id_, {"d": 3, "epsilon": 1.0, "constant_time": False, **kw}, error, names)


MEASUREMENT = MeasurementSpec(
    name="oue",
    constructor="make_oue",
    constructor_ref="oue_example.oue:make_oue",
    build=build,
    params=params,
    examples=[
        {"d": 2, "epsilon": 1.0, "constant_time": False},
        {"d": 3, "epsilon": math.log(3), "constant_time": True},
        {"d": 4, "epsilon": 5e-324, "constant_time": False},  # q = 1/2: pure noise, map 0
        {"d": 2, "epsilon": MAX_EPSILON, "constant_time": False},  # the smallest q
        {"d": 3, "epsilon": 0.1, "constant_time": False},
    ],
    bad=[
        _bad("epsilon_zero", ValueError, epsilon=0.0),
        _bad("epsilon_negative", ValueError, epsilon=-1.0),
        _bad("epsilon_above_700", ValueError, epsilon=math.nextafter(MAX_EPSILON, math.inf)),
        _bad("epsilon_nan", ValueError, epsilon=math.nan),
        _bad("epsilon_inf", ValueError, epsilon=math.inf),
        _bad("epsilon_str", TypeError, epsilon="1"),
        _bad("d_one", ValueError, ("d",), d=1),
        _bad("d_float", TypeError, ("d",), d=3.0),
        _bad("d_huge", ValueError, ("d",), d=2**24 + 1),
        _bad("constant_time_int", TypeError, ("constant_time",), constant_time=1),
    ],
    inputs=lambda p: list(range(p["d"])),
    outside=outside,
    constant_time_param="constant_time",
    describe="optimized unary encoding (Wang et al. 2017)",
    law=law,
    accountant_pair=accountant_pair,
    max_d_in=3,
)


def estimator_params(deep: bool):
    def for_d(d: int):
        return st.fixed_dictionaries({
            "d": st.just(d), "constant_time": st.just(False),
            "epsilon": floats_in(1e-3, 20.0, edges=[0.5, 1.0, math.log(3)]),
            "dataset": st.lists(st.integers(0, d - 1), min_size=1, max_size=3 if d == 2 else 2),
        })

    return st.integers(2, 3).flatmap(for_d)


def _truth(p):
    return [Fraction(p["dataset"].count(i)) for i in range(p["d"])]


def _variances(fn, p):
    n = len(p["dataset"])
    return [fn(n, p["dataset"].count(i), p["epsilon"], exact=True) for i in range(p["d"])]


ESTIMATOR = EstimatorSpec(
    name="estimate_oue_counts",
    module="oue",
    estimator="estimate_oue_counts",
    estimator_ref="oue_example.oue:estimate_oue_counts",
    mechanism=MEASUREMENT,
    params=estimator_params,
    examples=[{"d": 2, "epsilon": 1.0, "constant_time": False, "dataset": [0, 0, 1]},
              {"d": 3, "epsilon": 0.5, "constant_time": False, "dataset": [2, 0]}],
    estimate=lambda est, answers, p: est(list(answers), p["epsilon"], exact=True),
    truth=_truth,
    claims=lambda p: {"variance": _variances(oue_count_variance, p),
                      "mse": sum(_variances(oue_count_variance, p), Fraction(0))},
    claim_calls={"variance": _variances},
    bad=[
        ("no_reports", lambda e: e([], 1.0), ValueError, ("reports",)),
        ("ragged", lambda e: e([(1, 0), (1, 0, 0)], 1.0), ValueError, ("reports[1]", "length")),
        ("not_bits", lambda e: e([(1, 2)], 1.0), ValueError, ("reports[0][1]",)),
        ("reports_str", lambda e: e("0101", 1.0), TypeError, ("reports",)),
        ("epsilon_nan", lambda e: e([(1, 0)], math.nan), ValueError, ("epsilon",)),
        ("epsilon_no_signal", lambda e: e([(1, 0)], 5e-324), ValueError, ("epsilon",)),
    ],
    describe="OUE count estimator",
)

SPECS = [MEASUREMENT, ESTIMATOR]
