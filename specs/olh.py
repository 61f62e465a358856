"""Hoare triple of make_olh (impl/olh.py) and its estimator.

Pre: d an int in [2, 2**53]; epsilon a float in [2**-40, 700]; g None (round(e^ε) + 1) or an int in [2, 2**16];
constant_time a bool.
Law: a report is (s, y), s uniform on [0, 2**32) and released; given s, y is the bucket b = hash_bucket(s, x, g)
with probability p = olh_keep_probability(ε, g) and each other bucket with (1 − p)/(g − 1).
Post: map(0) = 0, map(d >= 1) >= the exact worst loss over every seed and every pair of values (tight within
2**-30), decided by the keyed shape (vetdp.engine.public): the law given s depends on x only through b, so every
(seed, pair) falls in a class (b, b') of buckets; the worst class is reached by a seed found for two examined values.
Search: d from 2 to 64 (and 10**4 at scale), ε from 2**-40 to 6, g from the default or 2..64.
Estimator: E[Ĉ(v)] = c_v exactly when hash_bucket is a random function of (seed, value); Var(Ĉ(v)) =
olh_count_variance (with the seed-collision covariance), not Wang et al.'s n(1/g)(1−1/g)/(p−1/g)².
Proof: proofs/olh.md
"""

import math
from fractions import Fraction

from hypothesis import strategies as st

from vetdp.engine.public import ConditionalLaw, PublicSlot
from vetdp.engine.spec import BadParams, EstimatorSpec, MeasurementSpec, floats_in, spread
from vetdp.impl.olh import MIN_EPSILON, SEEDS, olh_buckets, olh_count_variance, olh_keep_probability
from vetdp.sampling.public import hash_bucket_fn

ALL_VALUES_UP_TO = 64  # larger d: a spread of values is examined (the keyed shape covers the others)
SPREAD = 48


def build(ctor, p):
    return ctor(p["d"], p["epsilon"], p["g"], p["constant_time"])


def buckets(p) -> int:
    return olh_buckets(p["epsilon"]) if p["g"] is None else p["g"]


def params(deep: bool):
    return st.fixed_dictionaries({
        "d": st.integers(2, 300 if deep else 64),
        "epsilon": floats_in(MIN_EPSILON, 6.0 if deep else 4.2, edges=[MIN_EPSILON, 0.5, 1.0, math.log(3)]),
        "g": st.one_of(st.none(), st.integers(2, 64 if deep else 16)),
        "constant_time": st.booleans(),
    })


def inputs(p):
    d = p["d"]
    return spread(d, SPREAD, seed=d) if d > ALL_VALUES_UP_TO else list(range(d))


def outside(p):
    return [-1, p["d"], 1.5, True, None, "0", [0]]


def conditional_law(p) -> ConditionalLaw:
    g = buckets(p)
    keep = Fraction(olh_keep_probability(p["epsilon"], p["g"]))
    lie = (1 - keep) / (g - 1)

    def given(world):
        return {(PublicSlot(0, SEEDS), y): keep if y == world[0] else lie for y in range(g)}

    return ConditionalLaw((SEEDS,), ((lambda public, x: hash_bucket_fn(public[0], x, g), g),), given)


def edges(p) -> list[str]:
    out = ["g default" if p["g"] is None else "g given", f"g={buckets(p)}" if buckets(p) <= 3 else "g>3"]
    if p["epsilon"] == MIN_EPSILON:
        out.append("epsilon=2^-40")
    if p["d"] > ALL_VALUES_UP_TO:
        out.append("d spread")
    if p["constant_time"]:
        out.append("constant time")
    return out


def _bad(id_, error, names, **kw):
    return BadParams(id_, {"d": 10, "epsilon": 1.0, "g": None, "constant_time": False, **kw}, error, names)


MEASUREMENT = MeasurementSpec(
    name="olh",
    constructor="make_olh",
    build=build,
    params=params,
    examples=[
        {"d": 2, "epsilon": 1.0, "g": None, "constant_time": False},
        {"d": 5, "epsilon": 0.5, "g": 2, "constant_time": False},
        {"d": 7, "epsilon": MIN_EPSILON, "g": 3, "constant_time": True},
        {"d": 40, "epsilon": 2.0, "g": None, "constant_time": False},
        {"d": 12, "epsilon": 4.0, "g": 64, "constant_time": False},
    ],
    scale_examples=[{"d": 10_000, "epsilon": math.log(63.0), "g": None, "constant_time": False}],
    bad=[
        _bad("d_one", ValueError, ("d",), d=1),
        _bad("d_bool", TypeError, ("d",), d=True),
        _bad("d_float", TypeError, ("d",), d=10.0),
        _bad("epsilon_zero", ValueError, ("epsilon",), epsilon=0.0),
        _bad("epsilon_negative", ValueError, ("epsilon",), epsilon=-1.0),
        _bad("epsilon_nan", ValueError, ("epsilon",), epsilon=math.nan),
        _bad("epsilon_inf", ValueError, ("epsilon",), epsilon=math.inf),
        _bad("epsilon_huge", ValueError, ("epsilon",), epsilon=701.0),
        _bad("epsilon_str", TypeError, ("epsilon",), epsilon="1"),
        _bad("g_one", ValueError, ("g",), g=1),
        _bad("g_huge", ValueError, ("g",), g=2**16 + 1),
        _bad("g_float", TypeError, ("g",), g=4.0),
        _bad("constant_time_int", TypeError, ("constant_time",), constant_time=1),
    ],
    inputs=inputs,
    outside=outside,
    constant_time_param="constant_time",
    describe="optimized local hashing (Wang et al. 2017)",
    conditional_law=conditional_law,
    edges=edges,
)


def estimator_params(deep: bool):
    def for_d(d: int):
        return st.fixed_dictionaries({
            "d": st.just(d),
            "epsilon": st.sampled_from([0.5, 1.0, math.log(2.0)]),
            "g": st.sampled_from([2, 3] if deep else [2]),
            "constant_time": st.just(False),
            "dataset": st.lists(st.integers(0, d - 1), min_size=1, max_size=2),
        })

    # every client and the server's hash evaluations are enumerated together: ~10^2 paths at d = g = 2, n = 2,
    # ~10^4 at d = g = 3
    return st.integers(2, 3 if deep else 2).flatmap(for_d)


def _estimate(est, answers, p):
    return est(list(answers), p["d"], p["epsilon"], p["g"], exact=True)


def _truth(p):
    return [Fraction(p["dataset"].count(v)) for v in range(p["d"])]


def _counts(p):
    return [p["dataset"].count(v) for v in range(p["d"])]


def _variance(p, variance=olh_count_variance):
    return [variance(_counts(p), v, p["epsilon"], p["g"], exact=True) for v in range(p["d"])]


ESTIMATOR = EstimatorSpec(
    name="estimate_olh_counts",
    module="olh",
    estimator="estimate_olh_counts",
    mechanism=MEASUREMENT,
    params=estimator_params,
    examples=[{"d": 2, "epsilon": 1.0, "g": 2, "constant_time": False, "dataset": [0, 0]},
              {"d": 2, "epsilon": 0.5, "g": 3, "constant_time": False, "dataset": [1, 0]}],
    estimate=_estimate,
    truth=_truth,
    claims=lambda p: {"variance": _variance(p)},
    claim_calls={"variance": lambda fn, p: _variance(p, fn)},
    bad=[
        ("no_reports", lambda est: est([], 3, 1.0), ValueError, ("reports",)),
        ("bucket_outside", lambda est: est([(0, 9)], 3, 1.0, 4), ValueError, ("reports[0]",)),
        ("seed_outside", lambda est: est([(2**32, 0)], 3, 1.0, 4), ValueError, ("reports[0]",)),
        ("reports_str", lambda est: est("ab", 3, 1.0), TypeError, ("reports",)),
        ("epsilon_nan", lambda est: est([(0, 0)], 3, math.nan), ValueError, ("epsilon",)),
    ],
    describe="OLH count estimator (exact under hash_bucket as a random function)",
)

SPECS = [MEASUREMENT, ESTIMATOR]
