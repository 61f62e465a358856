"""Categorical randomized response and its debiasing estimator.

Spec: specs/randomized_response.py · Proof: proofs/randomized_response.md
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Hashable, Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from vetdp.arith.expr import ONE, var
from vetdp.core.measurement import (
    AtomDomain,
    DiscreteDistance,
    MaxDivergence,
    Measurement,
    PrivacyConstant,
)
from vetdp.core.validation import check_float, check_interval
from vetdp.sampling.batch import sample_bernoulli_batch, sample_uniform_int_below_batch
from vetdp.sampling.primitives import sample_bernoulli_float, sample_uniform_int_below

__all__ = [
    "RANDOMIZED_RESPONSE_EPSILON",
    "make_randomized_response",
    "debias_randomized_response",
    "randomized_response_count_variance",
    "check_categories",
]

prob, t = var("prob"), var("t", "int")

# ε = ln(p·(t−1) / (1−p)). The numerator is rounded up and the denominator 1−p down, so the
# quotient, and its logarithm rounded up, are upper bounds of the exact loss.
RANDOMIZED_RESPONSE_EPSILON = prob.inf_mul(t.inf_sub(1)).inf_div(ONE.neg_inf_sub(prob)).inf_ln()

MAX_CATEGORIES = 2**53  # t must cast to float64 exactly


def check_categories(categories: object) -> list:
    """``categories`` as a list: >= 2 distinct hashable values of one type, no NaN."""
    if isinstance(categories, (str, bytes)) or not isinstance(categories, (Sequence, set, frozenset)):
        raise TypeError(f"categories={categories!r} must be a list, tuple or set of categories, "
                        f"not {type(categories).__name__}")
    cats = list(categories)
    if len(cats) < 2:
        raise ValueError(f"categories={cats!r} must hold at least two distinct categories, got {len(cats)}")
    if len(cats) > MAX_CATEGORIES:
        raise ValueError(f"len(categories)={len(cats)} must be in [2, 2**53]")
    kinds = {type(c) for c in cats}
    if len(kinds) != 1:
        raise TypeError(f"categories={cats!r} must all have one type, found {sorted(k.__name__ for k in kinds)}")
    for c in cats:
        if not isinstance(c, Hashable):
            raise TypeError(f"category {c!r} must be hashable")
        if isinstance(c, float) and math.isnan(c):
            raise ValueError(f"category {c!r} must not be NaN")
    if len(set(cats)) != len(cats):
        seen, dups = set(), []
        for c in cats:
            if c in seen:
                dups.append(c)
            seen.add(c)
        raise ValueError(f"categories must be distinct; duplicated: {dups!r}")
    return cats


def make_randomized_response(categories: Sequence[Any], prob: float) -> Measurement:
    """ε-DP randomized response over ``t = len(categories)`` categories.

    Preconditions: at least two distinct categories of one type; ``prob`` a float with
    1/t <= prob < 1, compared exactly as rationals (a float just below 1/t is rejected).

    Function: returns the input with probability ``prob``, otherwise one of the other t−1
    categories uniformly; an input outside ``categories`` (but of their type) yields a
    uniformly random category.

    Privacy: map(0) = 0; map(d_in >= 1) = ln(prob·(t−1)/(1−prob)) rounded up
    (:data:`RANDOMIZED_RESPONSE_EPSILON`).

    Proof: proofs/randomized_response.md
    """
    cats = check_categories(categories)
    p = check_float("prob", prob)
    n_cats = len(cats)
    check_interval("prob", p, Fraction(1, n_cats), 1, lo_closed=True, hi_closed=False)

    constant = PrivacyConstant(RANDOMIZED_RESPONSE_EPSILON, {"prob": p, "t": n_cats})
    epsilon = constant.value
    index_of = {c: i for i, c in enumerate(cats)}

    def privacy_map(d_in: int) -> float:
        return 0.0 if d_in == 0 else epsilon

    def function(truth: Any) -> Any:
        index = index_of.get(truth)
        sample = sample_uniform_int_below(n_cats - (0 if index is None else 1))
        if index is not None and sample >= index:
            sample += 1
        lie = cats[sample]
        be_honest = sample_bernoulli_float(p)
        return truth if be_honest and index is not None else lie

    domain = AtomDomain(type(cats[0]))

    def batch(values: Sequence[Any]) -> list:
        """Randomise many inputs at once (vectorised; same distribution per input)."""
        checked = [domain.check_member(v) for v in values]
        idx = np.array([index_of.get(v, -1) for v in checked], dtype=np.int64)
        member = idx >= 0
        lies = np.empty(len(checked), dtype=np.int64)
        lies[member] = sample_uniform_int_below_batch(n_cats - 1, int(member.sum()))
        lies[member] += lies[member] >= idx[member]
        lies[~member] = sample_uniform_int_below_batch(n_cats, int((~member).sum()))
        honest = sample_bernoulli_batch(p, len(checked)) & member
        return [checked[i] if honest[i] else cats[lies[i]] for i in range(len(checked))]

    return Measurement(
        input_domain=domain,
        input_metric=DiscreteDistance(),
        output_measure=MaxDivergence(),
        function=function,
        privacy_map=privacy_map,
        output_domain=domain,
        privacy_constant=constant,
        parameters={"categories": cats, "prob": p},
        batch=batch,
        name="make_randomized_response",
    )


def _lie_probability(p: Fraction, n_cats: int) -> Fraction:
    return (1 - p) / (n_cats - 1)


def debias_randomized_response(answers: Sequence[Any], categories: Sequence[Any], prob: float,
                               exact: bool = False) -> dict:
    """Unbiased estimates of how many inputs held each category.

    For n answers of which C_y equal y: N̂_y = (C_y − n·r) / (p − r) with r = (1−p)/(t−1),
    unbiased when every input lies in ``categories``. Rejects prob = 1/t (no signal),
    no answers, and answers outside the categories. Floats are rounded to nearest from the
    exact rational (``exact=True`` returns the Fractions).
    """
    cats = check_categories(categories)
    p_float = check_float("prob", prob)
    n_cats = len(cats)
    check_interval("prob", p_float, Fraction(1, n_cats), 1, lo_closed=False, hi_closed=False)
    if isinstance(answers, (str, bytes)) or not isinstance(answers, (Sequence, np.ndarray)):
        raise TypeError(f"answers must be a sequence of categories, not {type(answers).__name__}")
    if len(answers) == 0:
        raise ValueError("answers must hold at least one answer, got none")
    counts = dict.fromkeys(cats, 0)
    for i, a in enumerate(answers):
        if a not in counts or type(a) is not type(cats[0]):
            raise ValueError(f"answers[{i}]={a!r} is not one of the categories")
        counts[a] += 1
    p = Fraction(p_float)
    r = _lie_probability(p, n_cats)
    n = len(answers)
    estimates = {c: (counts[c] - n * r) / (p - r) for c in cats}
    return estimates if exact else {c: float(v) for c, v in estimates.items()}


def randomized_response_count_variance(n: int, count: int, prob: float, n_categories: int,
                                       exact: bool = False) -> float | Fraction:
    """Variance of the :func:`debias_randomized_response` estimate for a category held by
    ``count`` of ``n`` inputs: [N p(1−p) + (n−N) r(1−r)] / (p − r)², r = (1−p)/(t−1)."""
    for name, value in (("n", n), ("count", count), ("n_categories", n_categories)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise TypeError(f"{name}={value!r} must be an int")
    if n < 1:
        raise ValueError(f"n={n} must be in [1, inf)")
    if not 0 <= count <= n:
        raise ValueError(f"count={count} must be in [0, n={n}]")
    if n_categories < 2:
        raise ValueError(f"n_categories={n_categories} must be in [2, inf)")
    p_float = check_float("prob", prob)
    check_interval("prob", p_float, Fraction(1, n_categories), 1, lo_closed=False, hi_closed=False)
    p = Fraction(p_float)
    r = _lie_probability(p, n_categories)
    v = (count * p * (1 - p) + (n - count) * r * (1 - r)) / (p - r) ** 2
    return v if exact else float(v)

