"""Hoare triple of make_count_mean_sketch (impl/count_mean_sketch.py) and its estimator.

Pre: m an int in [2, 2**16]; k an int in [1, 2**16]; epsilon a float in [2**-40, 700]; hash_key an int;
constant_time a bool.
Law: a report is (j, ṽ), j uniform on [0, k) and released; given j, with e = hash_bucket((hash_key, j), x, m), the
coordinates of ṽ are independent: ṽ_e = +1 with probability 1 − f, every other ṽ_i = +1 with probability f
(f = cms_flip_probability(ε)).
Post: map(0) = 0, map(d >= 1) >= the exact worst loss over every row and every pair of strings (tight within
2**-30): the law given j depends on x only through e (keyed shape), each of the m buckets' laws read as a product
from one symbolic run, the worst bucket pair reached by a row and two examined strings.
Search: m from 2 to 32 (1024 at scale), k from 1 to 8 (256 at scale), ε from 2**-40 to 6.
Estimator: unbiased over the random hash functions; Var = cms_count_variance (with the shared-row collision term).
Proof: proofs/count_mean_sketch.md
"""

import math
from fractions import Fraction

from hypothesis import strategies as st

from vetdp.engine.public import ConditionalLaw, PublicSlot
from vetdp.engine.spec import BadParams, EstimatorSpec, MeasurementSpec, floats_in
from vetdp.impl.count_mean_sketch import MIN_EPSILON, cms_count_variance, cms_flip_probability
from vetdp.sampling.public import hash_bucket_fn

VALUES = 24  # strings examined: the keyed shape covers every other string


def build(ctor, p):
    return ctor(p["m"], p["k"], p["epsilon"], p["hash_key"], p["constant_time"])


def params(deep: bool):
    return st.fixed_dictionaries({
        "m": st.integers(2, 64 if deep else 16),
        "k": st.integers(1, 16 if deep else 4),
        "epsilon": floats_in(MIN_EPSILON, 6.0, edges=[MIN_EPSILON, 0.5, 1.0, 2.0]),
        "hash_key": st.integers(0, 2**32),
        "constant_time": st.booleans(),
    })


def inputs(p):
    return [f"value-{i}" for i in range(VALUES)] + ["", "é"]


def outside(p):
    return [0, None, b"x", 1.5, ["a"], True]


def conditional_law(p) -> ConditionalLaw:
    m, k = p["m"], p["k"]
    f = Fraction(cms_flip_probability(p["epsilon"]))

    row, hit, miss = {PublicSlot(0, k): 1}, {1: 1 - f, -1: f}, {1: f, -1: 1 - f}

    def given(world):
        return [row] + [hit if i == world[0] else miss for i in range(m)]

    return ConditionalLaw((k,), ((lambda public, x: hash_bucket_fn((p["hash_key"], public[0]), x, m), m),), given)


def edges(p) -> list[str]:
    """Boundary classes (shared with HCMS): one row or more, m = 2, ε = 2**-40, constant time."""
    out = ["k=1" if p["k"] == 1 else "k>1", "m=2" if p["m"] == 2 else "m>2"]
    if p["epsilon"] == MIN_EPSILON:
        out.append("epsilon=2^-40")
    if p["constant_time"]:
        out.append("constant time")
    return out


def _bad(id_, error, names, **kw):
    return BadParams(id_, {"m": 8, "k": 2, "epsilon": 1.0, "hash_key": 0, "constant_time": False, **kw}, error, names)


MEASUREMENT = MeasurementSpec(
    name="count_mean_sketch",
    constructor="make_count_mean_sketch",
    build=build,
    params=params,
    examples=[
        {"m": 2, "k": 1, "epsilon": 1.0, "hash_key": 0, "constant_time": False},
        {"m": 4, "k": 3, "epsilon": MIN_EPSILON, "hash_key": 7, "constant_time": True},
        {"m": 16, "k": 2, "epsilon": 4.0, "hash_key": 1, "constant_time": False},
    ],
    scale_examples=[{"m": 1024, "k": 256, "epsilon": 4.0, "hash_key": 0, "constant_time": False}],
    bad=[
        _bad("m_one", ValueError, ("m",), m=1),
        _bad("m_huge", ValueError, ("m",), m=2**16 + 1),
        _bad("k_zero", ValueError, ("k",), k=0),
        _bad("k_float", TypeError, ("k",), k=2.0),
        _bad("epsilon_zero", ValueError, ("epsilon",), epsilon=0.0),
        _bad("epsilon_nan", ValueError, ("epsilon",), epsilon=math.nan),
        _bad("epsilon_inf", ValueError, ("epsilon",), epsilon=math.inf),
        _bad("hash_key_str", TypeError, ("hash_key",), hash_key="0"),
        _bad("constant_time_int", TypeError, ("constant_time",), constant_time=1),
    ],
    inputs=inputs,
    outside=outside,
    constant_time_param="constant_time",
    describe="Apple's count-mean sketch (CMS)",
    conditional_law=conditional_law,
    edges=edges,
)

CANDIDATES = ["a", "b"]


def estimator_params(deep: bool, widths: tuple[int, ...] = (2, 3)):
    """Tiny sketches (every client and the server's hash evaluations are enumerated together); shared with HCMS."""
    return st.fixed_dictionaries({
        "m": st.sampled_from(list(widths) if deep else [2]),
        "k": st.sampled_from([1, 2]),
        "epsilon": st.sampled_from([1.0, 2.0]),
        "hash_key": st.just(0),
        "constant_time": st.just(False),
        "dataset": st.lists(st.sampled_from(CANDIDATES), min_size=1, max_size=2),
    })


def variances(p, variance=cms_count_variance):
    """The variance claims per candidate, from ``variance(counts, d, m, k, epsilon, exact=True)``."""
    counts = {c: p["dataset"].count(c) for c in CANDIDATES}
    return [variance(counts, d, p["m"], p["k"], p["epsilon"], exact=True) for d in CANDIDATES]


def estimate(est, answers, p):
    return est(list(answers), CANDIDATES, p["m"], p["k"], p["epsilon"], p["hash_key"], exact=True)


def truth(p):
    return [Fraction(p["dataset"].count(c)) for c in CANDIDATES]


ESTIMATOR_EXAMPLES = [
    {"m": 2, "k": 2, "epsilon": 1.0, "hash_key": 0, "constant_time": False, "dataset": ["a", "a"]},
    {"m": 2, "k": 1, "epsilon": 2.0, "hash_key": 0, "constant_time": False, "dataset": ["b", "a"]}]


ESTIMATOR = EstimatorSpec(
    name="estimate_cms_counts",
    module="count_mean_sketch",
    estimator="estimate_cms_counts",
    mechanism=MEASUREMENT,
    params=estimator_params,
    examples=ESTIMATOR_EXAMPLES,
    estimate=estimate,
    truth=truth,
    claims=lambda p: {"variance": variances(p)},
    claim_calls={"variance": lambda fn, p: variances(p, fn)},
    bad=[
        ("no_reports", lambda est: est([], ["a"], 2, 1, 1.0), ValueError, ("reports",)),
        ("row_outside", lambda est: est([(3, (1, -1))], ["a"], 2, 1, 1.0), ValueError, ("reports[0]",)),
        ("vector_length", lambda est: est([(0, (1,))], ["a"], 2, 1, 1.0), ValueError, ("reports[0]",)),
    ],
    describe="CMS count estimator (exact under random hash functions)",
)

SPECS = [MEASUREMENT, ESTIMATOR]
