"""Hoare triple of make_randomized_response_bitvec (impl/randomized_response_bitvec.py) and its estimators.

Pre: input_domain a BitVectorDomain with max_weight m and length k; input_metric a
DiscreteDistance; f a float in (0, 1]; constant_time a bool.
Post: map(0) = 0, map(1) >= the exact max-divergence over every bit vector of length k
with at most m set bits (tight within 2**-30, also when k < 2m); no input-dependent
errors; wrong lengths, heavy or non-bit vectors rejected before randomness; with
constant_time the bytes read never depend on the input.
Estimators: exact unbiasedness; count variance n(f − f²/2)/(2(1−f)²) per coordinate and
its k-fold MSE (2025 proof); frequency MSE k(f − f²/2)/(2n(1−f)²) (2024 proof).
Proof: proofs/randomized_response_bitvec.md
"""

import itertools
import math
from fractions import Fraction

from hypothesis import strategies as st

from vetdp.core.measurement import AtomDomain, bitvector_domain, discrete_distance
from vetdp.engine.spec import BadParams, EstimatorSpec, MeasurementSpec, floats_in
from vetdp.impl.randomized_response_bitvec import (
    randomized_response_bitvec_count_mse,
    randomized_response_bitvec_count_variance,
    randomized_response_bitvec_frequency_mse,
)

F_EDGES = [5e-324, 1.5e-323, 2.2250738585072014e-308, 1e-300, 1e-9, 0.25, 0.5, math.nextafter(1.0, 0.0), 1.0]


def build(ctor, p):
    domain = p.get("input_domain") or bitvector_domain(max_weight=p["m"], length=p["k"])
    metric = p.get("input_metric", discrete_distance())
    return ctor(domain, metric, p["f"], p["constant_time"])


def params(deep: bool):
    def for_k(k: int):
        return st.fixed_dictionaries({
            "k": st.just(k),
            "m": st.integers(1, k + 2),
            "f": floats_in(5e-324, 1.0, edges=F_EDGES),
            "constant_time": st.booleans(),
        })

    return st.integers(1, 8 if deep else 5).flatmap(for_k)


def all_vectors(k: int, m: int) -> list[tuple[bool, ...]]:
    """Every bit vector of length k with at most m set bits."""
    return [v for v in itertools.product((False, True), repeat=k) if sum(v) <= m]


def outside(p):
    k, m = p["k"], p["m"]
    bad = [(0,) * (k + 1), "0" * k, None, (2,) + (0,) * (k - 1), (0.5,) + (0,) * (k - 1)]
    if k > 1:
        bad.append((0,) * (k - 1))
    if m + 1 <= k:
        bad.append((1,) * (m + 1) + (0,) * (k - m - 1))
    return bad


def _bad(id_, error, names=("f",), **kw):
    return BadParams(id_, {"m": 1, "k": 4, "f": 0.5, "constant_time": False, **kw}, error, names)


MEASUREMENT = MeasurementSpec(
    name="randomized_response_bitvec",
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
        {"k": 10, "m": 2, "f": 0.5, "constant_time": False},  # length 10: 56 inputs × 1024 paths
        {"k": 3, "m": 10**6, "f": 0.125, "constant_time": False},  # huge max_weight: d = k
    ],
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
    inputs=lambda p: all_vectors(p["k"], p["m"]),
    outside=outside,
    constant_time_param="constant_time",
    describe="bit-vector randomized response (RAPPOR)",
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
