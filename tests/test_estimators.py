"""Debiasing estimators: unbiased EXACTLY, variances and MSEs equal to the enumerated truth.

Every answer vector a dataset can produce is enumerated with its exact probability (the
mechanisms' own single forms under the branching source); expectations and variances of
the estimates are then exact Fractions, compared with ``==``.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from _enumeration_helpers import choice_distribution
from hypothesis import given, settings
from hypothesis import strategies as st

from vetdp.core.measurement import BitVectorDomain, DiscreteDistance
from vetdp.impl import (
    debias_randomized_response,
    debias_randomized_response_bitvec,
    debias_randomized_response_bitvec_frequencies,
    make_randomized_response,
    make_randomized_response_bitvec,
    randomized_response_bitvec_count_mse,
    randomized_response_bitvec_count_variance,
    randomized_response_bitvec_frequency_mse,
    randomized_response_count_variance,
)

TINY = 5e-324


def _answers_distribution(meas, dataset) -> dict:
    return choice_distribution(lambda: tuple(meas(x) for x in dataset))


# ------------------------------------------------------------------ categorical RR

@pytest.mark.parametrize("cats,prob,dataset", [
    (["a", "b", "c"], 0.5, ["a", "b", "a"]),
    (["a", "b"], 0.75, ["a", "a", "b"]),
    ([0, 1, 2, 3], 0.9, [3, 3]),
    (["x", "y", "z"], 0.5 + 2.0**-52, ["z", "y", "z"]),
])
def test_rr_debias_is_exactly_unbiased_with_exact_variance(cats, prob, dataset):
    meas = make_randomized_response(cats, prob)
    dist = _answers_distribution(meas, dataset)
    assert sum(dist.values()) == 1
    n = len(dataset)
    mean = dict.fromkeys(cats, Fraction(0))
    estimates = {}
    for answers, p in dist.items():
        est = debias_randomized_response(list(answers), cats, prob, exact=True)
        estimates[answers] = est
        for c in cats:
            mean[c] += p * est[c]
    truth = {c: dataset.count(c) for c in cats}
    assert mean == truth
    for c in cats:
        variance = sum(p * (estimates[a][c] - truth[c]) ** 2 for a, p in dist.items())
        assert randomized_response_count_variance(n, truth[c], prob, len(cats), exact=True) == variance
        assert randomized_response_count_variance(n, truth[c], prob, len(cats)) == float(variance)


def test_rr_debias_float_form_is_exact_form_rounded_to_nearest():
    answers = ["a", "c", "c", "b", "a"]
    exact = debias_randomized_response(answers, ["a", "b", "c"], 0.6, exact=True)
    floats = debias_randomized_response(answers, ["a", "b", "c"], 0.6)
    assert floats == {c: float(v) for c, v in exact.items()}


@pytest.mark.parametrize("call,exc,text", [
    pytest.param(lambda: debias_randomized_response(["a"], ["a", "b"], 0.5), ValueError, "prob=0.5",
                 id="prob-one-over-t"),
    pytest.param(lambda: debias_randomized_response(["a"], ["a", "b", "c"], 0.3), ValueError, "prob=0.3",
                 id="prob-below-one-over-t"),
    pytest.param(lambda: debias_randomized_response(["a"], ["a", "b"], 1.0), ValueError, "prob=1.0", id="prob-one"),
    pytest.param(lambda: debias_randomized_response(["a"], ["a", "b"], math.nan), ValueError, "prob=nan",
                 id="prob-nan"),
    pytest.param(lambda: debias_randomized_response([], ["a", "b"], 0.75), ValueError, "answers", id="no-answers"),
    pytest.param(lambda: debias_randomized_response(["a", "z"], ["a", "b"], 0.75), ValueError, "answers[1]='z'",
                 id="outside-categories"),
    pytest.param(lambda: debias_randomized_response([1, True], [1, 2], 0.75), ValueError, "answers[1]=True",
                 id="bool-for-int-category"),
    pytest.param(lambda: debias_randomized_response("ab", ["a", "b"], 0.75), TypeError, "answers", id="str-answers"),
    pytest.param(lambda: debias_randomized_response(["a"], ["a", "a"], 0.75), ValueError, "categories",
                 id="duplicate-categories"),
    pytest.param(lambda: randomized_response_count_variance(0, 0, 0.75, 2), ValueError, "n=0", id="var-n-zero"),
    pytest.param(lambda: randomized_response_count_variance(3, 4, 0.75, 2), ValueError, "count=4",
                 id="var-count-above-n"),
    pytest.param(lambda: randomized_response_count_variance(3, 1, 0.75, 1), ValueError, "n_categories=1",
                 id="var-one-category"),
    pytest.param(lambda: randomized_response_count_variance(3, 1, 0.25, 4), ValueError, "prob=0.25",
                 id="var-prob-one-over-t"),
    pytest.param(lambda: randomized_response_count_variance(3.0, 1, 0.75, 2), TypeError, "n=3.0", id="var-float-n"),
])
def test_rr_estimator_bad_arguments_raise(call, exc, text):
    with pytest.raises(exc) as info:
        call()
    assert text in str(info.value)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(t=st.integers(2, 6), u=st.floats(min_value=0.0, max_value=1.0, exclude_min=True, exclude_max=True),
       data=st.data())
def test_rr_estimates_and_variances_are_always_finite(t, u, data):
    prob = 1 / t + u * (1 - 1 / t)
    if not (Fraction(1, t) < Fraction(prob) < 1):
        prob = math.nextafter(1.0, 0)
    cats = list(range(t))
    answers = data.draw(st.lists(st.sampled_from(cats), min_size=1, max_size=60))
    for v in debias_randomized_response(answers, cats, prob).values():
        assert math.isfinite(v)
    n = data.draw(st.integers(1, 10**12))
    count = data.draw(st.integers(0, n))
    assert math.isfinite(randomized_response_count_variance(n, count, prob, t))


# ------------------------------------------------------------------ bit vectors

def _seed_count_mse(n: int, k: int, f: Fraction) -> Fraction:
    # seed 003, Theorem 3.4: E‖q − q̂‖² = nk(f − f²/2) / (2(1 − f)²)
    return n * k * (f - f**2 / 2) / (2 * (1 - f) ** 2)


def _seed_frequency_mse(n: int, k: int, f: Fraction) -> Fraction:
    # seed 000, Theorem 3.5: E‖q − q̂‖² = k(f − f²/2) / (2n(1 − f)²)
    return k * (f - f**2 / 2) / (2 * n * (1 - f) ** 2)


@pytest.mark.parametrize("f,dataset", [
    (0.5, [(1, 0, 0), (0, 1, 0)]),
    (0.3, [(1, 0, 0), (1, 0, 0), (0, 0, 1)]),
    (0.9, [(0, 1), (1, 0), (1, 0)]),
    (TINY, [(1, 0), (0, 0)]),
    (1 - 2.0**-53, [(1, 0), (0, 1)]),
])
def test_bitvec_debias_is_exactly_unbiased_with_exact_variance_and_mse(f, dataset):
    k, n = len(dataset[0]), len(dataset)
    meas = make_randomized_response_bitvec(BitVectorDomain(max_weight=1, length=k), DiscreteDistance(), f)
    dist = _answers_distribution(meas, dataset)
    truth = [sum(row[j] for row in dataset) for j in range(k)]
    mean = [Fraction(0)] * k
    second = [Fraction(0)] * k
    sq_error = sq_freq_error = Fraction(0)
    for answers, p in dist.items():
        est = debias_randomized_response_bitvec(list(answers), f, exact=True)
        freq = debias_randomized_response_bitvec_frequencies(list(answers), f, exact=True)
        assert freq == [e / n for e in est]
        for j in range(k):
            mean[j] += p * est[j]
            second[j] += p * (est[j] - truth[j]) ** 2
        sq_error += p * sum((est[j] - truth[j]) ** 2 for j in range(k))
        sq_freq_error += p * sum((freq[j] - Fraction(truth[j], n)) ** 2 for j in range(k))
    assert mean == truth
    variance = randomized_response_bitvec_count_variance(n, f, exact=True)
    assert second == [variance] * k  # the same whatever the true count
    assert randomized_response_bitvec_count_mse(n, k, f, exact=True) == sq_error
    assert randomized_response_bitvec_frequency_mse(n, k, f, exact=True) == sq_freq_error
    if Fraction(f) / 2 == Fraction(f / 2):  # f/2 is a float: the seeds' formulas hold exactly
        assert sq_error == _seed_count_mse(n, k, Fraction(f))
        assert sq_freq_error == _seed_frequency_mse(n, k, Fraction(f))


def test_bitvec_mse_float_forms_are_exact_forms_rounded():
    for fn, args in ((randomized_response_bitvec_count_variance, (10, 0.25)),
                     (randomized_response_bitvec_count_mse, (10, 4, 0.25)),
                     (randomized_response_bitvec_frequency_mse, (10, 4, 0.25))):
        assert fn(*args) == float(fn(*args, exact=True))


def test_bitvec_debias_array_and_list_inputs_agree():
    rows = [(1, 0, 1), (0, 0, 1), (1, 1, 1), (0, 0, 0)]
    as_list = debias_randomized_response_bitvec(rows, 0.4, exact=True)
    assert debias_randomized_response_bitvec(np.array(rows, dtype=bool), 0.4, exact=True) == as_list
    assert debias_randomized_response_bitvec(np.array(rows), 0.4, exact=True) == as_list
    assert debias_randomized_response_bitvec([[bool(b) for b in r] for r in rows], 0.4, exact=True) == as_list


@pytest.mark.parametrize("call,exc,text", [
    pytest.param(lambda: debias_randomized_response_bitvec([(1, 0)], 1.0), ValueError, "f=1.0", id="f-one"),
    pytest.param(lambda: debias_randomized_response_bitvec([(1, 0)], 0.0), ValueError, "f=0.0", id="f-zero"),
    pytest.param(lambda: debias_randomized_response_bitvec([(1, 0)], math.nan), ValueError, "f=nan", id="f-nan"),
    pytest.param(lambda: debias_randomized_response_bitvec([(1, 0)], "0.5"), TypeError, "f='0.5'", id="f-str"),
    pytest.param(lambda: debias_randomized_response_bitvec([], 0.5), ValueError, "answers", id="no-answers"),
    pytest.param(lambda: debias_randomized_response_bitvec(np.zeros((0, 3), bool), 0.5), ValueError, "answers",
                 id="no-answers-array"),
    pytest.param(lambda: debias_randomized_response_bitvec([(1, 0), (1, 0, 0)], 0.5), ValueError, "answers[1]",
                 id="ragged"),
    pytest.param(lambda: debias_randomized_response_bitvec([(1, 2)], 0.5), ValueError, "answers[0][1]=2",
                 id="non-bit"),
    pytest.param(lambda: debias_randomized_response_bitvec([(1, 0.5)], 0.5), ValueError, "answers[0][1]=0.5",
                 id="float-bit"),
    pytest.param(lambda: debias_randomized_response_bitvec(np.zeros(3), 0.5), ValueError, "answers",
                 id="one-dimensional-array"),
    pytest.param(lambda: debias_randomized_response_bitvec("101", 0.5), TypeError, "answers", id="str-answers"),
    pytest.param(lambda: debias_randomized_response_bitvec_frequencies([(1, 0)], 1.0), ValueError, "f=1.0",
                 id="frequencies-f-one"),
    pytest.param(lambda: randomized_response_bitvec_count_variance(0, 0.5), ValueError, "n=0", id="var-n-zero"),
    pytest.param(lambda: randomized_response_bitvec_count_variance(5, 1.0), ValueError, "f=1.0", id="var-f-one"),
    pytest.param(lambda: randomized_response_bitvec_count_mse(5, 0, 0.5), ValueError, "k=0", id="mse-k-zero"),
    pytest.param(lambda: randomized_response_bitvec_frequency_mse(True, 3, 0.5), TypeError, "n=True",
                 id="freq-mse-bool-n"),
])
def test_bitvec_estimator_bad_arguments_raise(call, exc, text):
    with pytest.raises(exc) as info:
        call()
    assert text in str(info.value)


fs = st.one_of(st.floats(min_value=0.0, max_value=1.0, exclude_min=True, exclude_max=True),
               st.sampled_from([TINY, 1e-300, 1 - 2.0**-53, 0.5]))


@settings(max_examples=200, deadline=None, derandomize=True)
@given(f=fs, rows=st.lists(st.lists(st.booleans(), min_size=3, max_size=3), min_size=1, max_size=40),
       n=st.integers(1, 10**12), k=st.integers(1, 10**4))
def test_bitvec_estimates_and_errors_are_always_finite(f, rows, n, k):
    for fn in (debias_randomized_response_bitvec, debias_randomized_response_bitvec_frequencies):
        assert all(math.isfinite(v) for v in fn(rows, f))
    assert math.isfinite(randomized_response_bitvec_count_variance(n, f))
    assert math.isfinite(randomized_response_bitvec_count_mse(n, k, f))
    assert math.isfinite(randomized_response_bitvec_frequency_mse(n, k, f))
