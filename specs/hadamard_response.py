"""Hoare triple of make_hadamard_response (impl/hadamard_response.py) and its estimator.

Pre: k an int in [2, 2**20]; epsilon a float in [2**-40, 700].
Law: with K = output_size(k) (the smallest power of two above k) and p = hadamard_keep_probability(ε), an output y
has probability 2p/K when H[x + 1, y] = +1, else 2(1 − p)/K.
Post: map(0) = 0, map(d >= 1) >= the exact worst loss over every pair of the k values (tight within 2**-30),
decided from each value's conditioned runs (its member draw's class) and its class sizes counted over all K
outputs (vetdp.engine.public, member shape).
Search: k from 2 to 64 (1024 at scale), ε from 2**-40 to 6.
Estimator: E[Ĉ(x)] = c_x exactly; Var = hadamard_response_count_variance.
Proof: proofs/hadamard_response.md
"""

import math
from fractions import Fraction

from hypothesis import strategies as st

from vetdp.engine.spec import BadParams, EstimatorSpec, MeasurementSpec, floats_in
from vetdp.impl.hadamard_response import (
    MIN_EPSILON,
    hadamard_keep_probability,
    hadamard_member,
    hadamard_response_count_variance,
    output_size,
)


def build(ctor, p):
    return ctor(p["k"], p["epsilon"])


def params(deep: bool):
    return st.fixed_dictionaries({
        "k": st.integers(2, 128 if deep else 32),
        "epsilon": floats_in(MIN_EPSILON, 6.0, edges=[MIN_EPSILON, 0.5, 1.0, math.log(3.0)]),
    })


def inputs(p):
    return list(range(p["k"]))  # every value: the class sizes are counted for each


def outside(p):
    return [-1, p["k"], 1.5, True, None, "0"]


def law(p, x):
    outputs = output_size(p["k"])
    keep = Fraction(hadamard_keep_probability(p["epsilon"]))
    inside, outside_ = 2 * keep / outputs, 2 * (1 - keep) / outputs
    return {y: inside if hadamard_member(y, x) else outside_ for y in range(outputs)}


def edges(p) -> list[str]:
    k = p["k"]
    out = ["k power of two" if k & (k - 1) == 0 else "k not a power of two"]
    if p["epsilon"] == MIN_EPSILON:
        out.append("epsilon=2^-40")
    return out


def _bad(id_, error, names, **kw):
    return BadParams(id_, {"k": 8, "epsilon": 1.0, **kw}, error, names)


MEASUREMENT = MeasurementSpec(
    name="hadamard_response",
    constructor="make_hadamard_response",
    build=build,
    params=params,
    examples=[
        {"k": 2, "epsilon": 1.0},
        {"k": 3, "epsilon": MIN_EPSILON},
        {"k": 8, "epsilon": 0.5},
        {"k": 16, "epsilon": 4.0},
        {"k": 31, "epsilon": 2.0},
    ],
    scale_examples=[{"k": 1024, "epsilon": 1.0}],
    bad=[
        _bad("k_one", ValueError, ("k",), k=1),
        _bad("k_huge", ValueError, ("k",), k=2**20 + 1),
        _bad("k_bool", TypeError, ("k",), k=True),
        _bad("epsilon_zero", ValueError, ("epsilon",), epsilon=0.0),
        _bad("epsilon_nan", ValueError, ("epsilon",), epsilon=math.nan),
        _bad("epsilon_inf", ValueError, ("epsilon",), epsilon=math.inf),
        _bad("epsilon_str", TypeError, ("epsilon",), epsilon="1"),
    ],
    inputs=inputs,
    outside=outside,
    describe="Hadamard response (Acharya, Sun, Zhang)",
    law=law,
    edges=edges,
)


def estimator_params(deep: bool):
    def for_k(k: int):
        return st.fixed_dictionaries({
            "k": st.just(k),
            "epsilon": st.sampled_from([0.5, 1.0]),
            "dataset": st.lists(st.integers(0, k - 1), min_size=1, max_size=2),
        })

    return st.integers(2, 4 if deep else 3).flatmap(for_k)


def _truth(p):
    return [Fraction(p["dataset"].count(x)) for x in range(p["k"])]


def _variance(p, variance=hadamard_response_count_variance):
    n = len(p["dataset"])
    return [variance(n, p["dataset"].count(x), p["epsilon"], exact=True) for x in range(p["k"])]


ESTIMATOR = EstimatorSpec(
    name="estimate_hadamard_response_counts",
    module="hadamard_response",
    estimator="estimate_hadamard_response_counts",
    mechanism=MEASUREMENT,
    params=estimator_params,
    examples=[{"k": 2, "epsilon": 1.0, "dataset": [0, 1]}, {"k": 3, "epsilon": 0.5, "dataset": [2, 2]}],
    estimate=lambda est, answers, p: est(list(answers), p["k"], p["epsilon"], exact=True),
    truth=_truth,
    claims=lambda p: {"variance": _variance(p)},
    claim_calls={"variance": lambda fn, p: _variance(p, fn)},
    bad=[
        ("no_reports", lambda est: est([], 4, 1.0), ValueError, ("reports",)),
        ("report_outside", lambda est: est([8], 4, 1.0), ValueError, ("reports[0]",)),
        ("reports_str", lambda est: est("ab", 4, 1.0), TypeError, ("reports",)),
    ],
    describe="Hadamard response count estimator",
)

SPECS = [MEASUREMENT, ESTIMATOR]
