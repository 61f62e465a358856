"""Hoare triple of make_hadamard_count_mean_sketch (impl/hadamard_count_mean_sketch.py) and its estimator.

Pre: m a power of two in [2, 2**16]; k an int in [1, 2**16]; epsilon a float in [2**-40, 700]; hash_key an int;
constant_time a bool.
Law: a report is (j, l, b), j uniform on [0, k) and l uniform on [0, m), both released; given them, with
w = H[hash_bucket((hash_key, j), x, m), l], b = w with probability p = hadamard_keep_probability(ε), else −w.
Post: map(0) = 0, map(d >= 1) >= the exact worst loss over every (j, l) and every pair of strings (tight within
2**-30): the law given (j, l) depends on x only through the coefficient w (keyed shape, 2 worlds), the worst pair
reached by a public value and two examined strings.
Search: m from 2 to 64 (1024 at scale), k from 1 to 8 (256 at scale), ε from 2**-40 to 6.
Estimator: unbiased over the random hash functions; Var = hcms_count_variance (with the shared-row collision term).
Proof: proofs/hadamard_count_mean_sketch.md
"""

import math
from fractions import Fraction

from hypothesis import strategies as st

from vetdp.engine.public import ConditionalLaw, PublicSlot
from vetdp.engine.spec import BadParams, EstimatorSpec, MeasurementSpec, floats_in
from vetdp.impl.hadamard_count_mean_sketch import hcms_coefficient, hcms_count_variance
from vetdp.impl.hadamard_response import MIN_EPSILON, hadamard_keep_probability
from vetdp.specs.count_mean_sketch import (
    ESTIMATOR_EXAMPLES,
    build,
    edges,
    estimate,
    estimator_params,
    inputs,
    outside,
    truth,
    variances,
)


def params(deep: bool):
    return st.fixed_dictionaries({
        "m": st.sampled_from([2, 4, 8, 16, 32, 64] if deep else [2, 4, 8, 16]),
        "k": st.integers(1, 16 if deep else 8),
        "epsilon": floats_in(MIN_EPSILON, 6.0, edges=[MIN_EPSILON, 0.5, 1.0, 2.0]),
        "hash_key": st.integers(0, 2**32),
        "constant_time": st.booleans(),
    })


def conditional_law(p) -> ConditionalLaw:
    m, k = p["m"], p["k"]
    keep = Fraction(hadamard_keep_probability(p["epsilon"]))

    def given(world):
        plus = world[0] == 1
        return {(PublicSlot(0, k), PublicSlot(1, m), 1): keep if plus else 1 - keep,
                (PublicSlot(0, k), PublicSlot(1, m), -1): 1 - keep if plus else keep}

    def coefficient(public, x):
        return hcms_coefficient((p["hash_key"], public[0], public[1], m), x)

    return ConditionalLaw((k, m), ((coefficient, 2),), given)


def _bad(id_, error, names, **kw):
    return BadParams(id_, {"m": 8, "k": 2, "epsilon": 1.0, "hash_key": 0, "constant_time": False, **kw}, error, names)


MEASUREMENT = MeasurementSpec(
    name="hadamard_count_mean_sketch",
    constructor="make_hadamard_count_mean_sketch",
    build=build,
    params=params,
    examples=[
        {"m": 2, "k": 1, "epsilon": 1.0, "hash_key": 0, "constant_time": False},
        {"m": 4, "k": 3, "epsilon": MIN_EPSILON, "hash_key": 7, "constant_time": True},
        {"m": 16, "k": 2, "epsilon": 4.0, "hash_key": 1, "constant_time": False},
    ],
    scale_examples=[{"m": 1024, "k": 256, "epsilon": 4.0, "hash_key": 0, "constant_time": False}],
    bad=[
        _bad("m_not_power_of_two", ValueError, ("m",), m=6),
        _bad("m_one", ValueError, ("m",), m=1),
        _bad("k_zero", ValueError, ("k",), k=0),
        _bad("epsilon_zero", ValueError, ("epsilon",), epsilon=0.0),
        _bad("epsilon_nan", ValueError, ("epsilon",), epsilon=math.nan),
        _bad("hash_key_str", TypeError, ("hash_key",), hash_key="0"),
        _bad("constant_time_int", TypeError, ("constant_time",), constant_time=1),
    ],
    inputs=inputs,
    outside=outside,
    constant_time_param="constant_time",
    describe="Apple's Hadamard count-mean sketch (HCMS)",
    conditional_law=conditional_law,
    edges=edges,
)

ESTIMATOR = EstimatorSpec(
    name="estimate_hcms_counts",
    module="hadamard_count_mean_sketch",
    estimator="estimate_hcms_counts",
    mechanism=MEASUREMENT,
    params=lambda deep: estimator_params(deep, (2, 4)),
    examples=ESTIMATOR_EXAMPLES,
    estimate=estimate,
    truth=truth,
    claims=lambda p: {"variance": variances(p, hcms_count_variance)},
    claim_calls={"variance": lambda fn, p: variances(p, fn)},
    bad=[
        ("no_reports", lambda est: est([], ["a"], 2, 1, 1.0), ValueError, ("reports",)),
        ("bit_zero", lambda est: est([(0, 0, 0)], ["a"], 2, 1, 1.0), ValueError, ("reports[0]",)),
        ("m_not_power_of_two", lambda est: est([(0, 0, 1)], ["a"], 6, 1, 1.0), ValueError, ("m",)),
    ],
    describe="HCMS count estimator (exact under random hash functions)",
)

SPECS = [MEASUREMENT, ESTIMATOR]
