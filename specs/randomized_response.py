"""Hoare triple of make_randomized_response (impl/randomized_response.py) and its estimator.

Pre: >= 2 distinct categories of one type; prob a float with 1/t <= prob < 1 (exactly).
Post: map(0) = 0, map(1) >= the exact max-divergence over all categories plus one input
outside them (tight within 2**-30); no input-dependent errors; other types rejected.
Estimator: E[N̂_y] = N_y exactly; Var(N̂_y) = randomized_response_count_variance.
Proof: proofs/randomized_response.md
"""

import math
from fractions import Fraction

from hypothesis import strategies as st

from vetdp.engine.spec import BadParams, EstimatorSpec, MeasurementSpec, at_least, boundary_probabilities, floats_in
from vetdp.impl.randomized_response import randomized_response_count_variance

P_MAX = math.nextafter(1.0, 0.0)


def categories_of(t: int, kind: str) -> list:
    return list(range(t)) if kind == "int" else [f"c{i}" for i in range(t)]


def build(ctor, p):
    return ctor(p["categories"], p["prob"])


def params(deep: bool):
    def for_t(t: int):
        return st.fixed_dictionaries({
            "categories": st.sampled_from(["int", "str"]).map(lambda kind: categories_of(t, kind)),
            "prob": floats_in(at_least(Fraction(1, t)), P_MAX, edges=boundary_probabilities(t)),
        })

    return st.integers(2, 48 if deep else 8).flatmap(for_t)


def inputs(p):
    cats = p["categories"]
    outside = len(cats) if isinstance(cats[0], int) else "not-a-category"
    return [*cats, outside]


def outside(p):
    cats = p["categories"]
    return ["c0", 1.5, None, True] if isinstance(cats[0], int) else [0, None, b"c0", 1.5]


def _bad(id_, error, names=("prob",), **kw):
    return BadParams(id_, {"categories": ["a", "b", "c"], "prob": 0.5, **kw}, error, names)


MEASUREMENT = MeasurementSpec(
    name="randomized_response",
    constructor="make_randomized_response",
    build=build,
    params=params,
    examples=[
        {"categories": [0, 1], "prob": 0.5},
        {"categories": ["c0", "c1", "c2"], "prob": at_least(Fraction(1, 3))},
        {"categories": [0, 1, 2], "prob": P_MAX},
        {"categories": [0, 1, 2, 3], "prob": 0.25},
        {"categories": categories_of(7, "str"), "prob": at_least(Fraction(1, 7))},
        {"categories": categories_of(32, "int"), "prob": 0.9},
    ],
    bad=[
        _bad("one_category", ValueError, ("categories",), categories=["a"]),
        _bad("no_categories", ValueError, ("categories",), categories=[]),
        _bad("duplicate_categories", ValueError, ("categories", "'a'"), categories=["a", "b", "a"]),
        _bad("mixed_type_categories", TypeError, ("categories",), categories=["a", 1]),
        _bad("categories_str", TypeError, ("categories",), categories="abc"),
        _bad("categories_none", TypeError, ("categories",), categories=None),
        _bad("nan_category", ValueError, ("nan",), categories=[math.nan, 1.0]),
        _bad("prob_below_one_over_t", ValueError, ("prob", "1/3"), prob=0.3333333333333333),
        _bad("prob_one", ValueError, prob=1.0),
        _bad("prob_nan", ValueError, prob=math.nan),
        _bad("prob_inf", ValueError, prob=math.inf),
        _bad("prob_negative", ValueError, prob=-0.1),
        _bad("prob_str", TypeError, prob="0.5"),
        _bad("prob_bool", TypeError, prob=True),
    ],
    inputs=inputs,
    outside=outside,
    describe="categorical randomized response",
)


def estimator_params(deep: bool):
    def for_t(t: int):
        cats = categories_of(t, "str")
        return st.fixed_dictionaries({
            "categories": st.just(cats),
            # prob = 1/t carries no signal: the estimator rejects it
            "prob": floats_in(math.nextafter(at_least(Fraction(1, t)), 1.0), P_MAX, edges=[0.75, 0.9]).filter(
                lambda q: Fraction(q) > Fraction(1, t)),
            "dataset": st.lists(st.sampled_from(cats), min_size=1, max_size=3),
        })

    return st.integers(2, 4).flatmap(for_t)


def _estimate(est, answers, p):
    values = est(list(answers), p["categories"], p["prob"], exact=True)
    return [values[c] for c in p["categories"]]


def _truth(p):
    return [Fraction(p["dataset"].count(c)) for c in p["categories"]]


def _variance(p):
    n, t = len(p["dataset"]), len(p["categories"])
    return [randomized_response_count_variance(n, p["dataset"].count(c), p["prob"], t, exact=True)
            for c in p["categories"]]


ESTIMATOR = EstimatorSpec(
    name="debias_randomized_response",
    module="randomized_response",
    estimator="debias_randomized_response",
    mechanism=MEASUREMENT,
    params=estimator_params,
    examples=[{"categories": ["c0", "c1"], "prob": 0.75, "dataset": ["c0", "c0", "c1"]},
              {"categories": ["c0", "c1", "c2"], "prob": 0.5, "dataset": ["c2"]}],
    estimate=_estimate,
    truth=_truth,
    claims=lambda p: {"variance": _variance(p)},
    bad=[
        ("prob_one_over_t", lambda est: est(["a"], ["a", "b"], 0.5), ValueError, ("prob",)),
        ("no_answers", lambda est: est([], ["a", "b"], 0.75), ValueError, ("answers",)),
        ("answer_outside", lambda est: est(["a", "z"], ["a", "b"], 0.75), ValueError, ("answers[1]", "'z'")),
        ("prob_nan", lambda est: est(["a"], ["a", "b"], math.nan), ValueError, ("prob",)),
        ("answers_str", lambda est: est("ab", ["a", "b"], 0.75), TypeError, ("answers",)),
    ],
    describe="categorical randomized response count estimator",
)

SPECS = [MEASUREMENT, ESTIMATOR]
