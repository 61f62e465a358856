"""Behaviour of each mechanism constructor: domains before randomness, exact output laws,
privacy maps against the true loss.

The true loss is never recomputed from the privacy constant's expression: it is
ln(max P[M(x)=y] / P[M(x')=y]) over all pairs of inputs and outputs, with the
probabilities obtained EXACTLY by enumerating the mechanism's own function under the
branching source, and ln decided with mpmath at >= 200 bits.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import mpmath
import pytest
from _enumeration_helpers import choice_distribution, max_loss_ratio, sign_minus_ln
from hypothesis import given, settings
from hypothesis import strategies as st

from vetdp.core.measurement import BitVectorDomain, DiscreteDistance, DomainError
from vetdp.impl import (
    make_k_rappor,
    make_randomized_response,
    make_randomized_response_bitvec,
    make_randomized_response_bool,
    make_rappor,
)
from vetdp.impl.k_rappor import k_rappor_flip_probability
from vetdp.impl.randomized_response_bitvec import flip_probability
from vetdp.sampling.sources import RecordingSource, SeededSource, use_source

TINY = 5e-324
ULP52 = Fraction(1, 2**52)


def _ulp(x: float) -> Fraction:
    return Fraction(math.ulp(x))


def _bitvec(m: int, k: int, f: float, constant_time: bool = False):
    return make_randomized_response_bitvec(BitVectorDomain(max_weight=m, length=k), DiscreteDistance(), f,
                                           constant_time)


def _members(m: int, k: int) -> list[tuple[int, ...]]:
    return [x for x in itertools.product((0, 1), repeat=k) if sum(x) <= m]


def _true_ratio(meas, inputs) -> Fraction:
    return max_loss_ratio([choice_distribution(lambda x=x: meas(x)) for x in inputs])


def assert_map_is_sound(map_value: float, ratio: Fraction) -> None:
    assert sign_minus_ln(map_value, ratio) >= 0, f"map {map_value!r} < true loss ln({float(ratio)})"


def assert_map_within(map_value: float, ratio: Fraction, slack: Fraction) -> None:
    """map(1) - true loss <= slack, decided exactly."""
    assert sign_minus_ln(Fraction(map_value) - slack, ratio) <= 0, (
        f"map {map_value!r} exceeds the true loss ln({float(ratio)}) by more than {float(slack)}")


# ------------------------------------------------------------------ domain before randomness

def _rr():
    return make_randomized_response(["a", "b", "c"], 0.5)


DOMAIN_CASES = [
    ("bool-int-1", lambda: make_randomized_response_bool(0.75), 1, TypeError),
    ("bool-int-2", lambda: make_randomized_response_bool(0.75), 2, TypeError),
    ("bool-str", lambda: make_randomized_response_bool(0.75), "True", TypeError),
    ("bool-None", lambda: make_randomized_response_bool(0.75), None, TypeError),
    ("bool-float", lambda: make_randomized_response_bool(0.75), 0.5, TypeError),
    ("rr-int-for-str", _rr, 1, TypeError),
    ("rr-None", _rr, None, TypeError),
    ("rr-bytes", _rr, b"a", TypeError),
    ("rr-bool-for-int", lambda: make_randomized_response([1, 2, 3], 0.5), True, TypeError),
    ("rr-float-for-int", lambda: make_randomized_response([1, 2, 3], 0.5), 1.0, TypeError),
    ("rr-nan-for-float", lambda: make_randomized_response([0.5, 1.5], 0.75), math.nan, ValueError),
    ("bitvec-wrong-length", lambda: _bitvec(1, 3, 0.5), (1, 0), DomainError),
    ("bitvec-too-many-bits", lambda: _bitvec(1, 3, 0.5), (1, 1, 0), DomainError),
    ("bitvec-value-2", lambda: _bitvec(1, 3, 0.5), (2, 0, 0), DomainError),
    ("bitvec-float-half", lambda: _bitvec(1, 3, 0.5), (0.5, 0, 0), DomainError),
    ("bitvec-float-one", lambda: _bitvec(1, 3, 0.5), (1.0, 0, 0), DomainError),
    ("bitvec-None", lambda: _bitvec(1, 3, 0.5), None, DomainError),
    ("bitvec-str", lambda: _bitvec(1, 3, 0.5), "100", DomainError),
    ("k-rappor-too-many-bits",
     lambda: make_k_rappor(BitVectorDomain(max_weight=1, length=3), DiscreteDistance(), 1.0), (1, 0, 1), DomainError),
]


@pytest.mark.parametrize("make,x,exc", [pytest.param(*c[1:], id=c[0]) for c in DOMAIN_CASES])
def test_mechanism_bad_input_raises_before_reading_any_byte(make, x, exc):
    meas = make()
    rec = RecordingSource(SeededSource(0))
    with use_source(rec), pytest.raises(exc):
        meas(x)
    assert rec.bytes_read == 0
    assert not meas.input_domain.member(x)


@pytest.mark.parametrize("m,k", [(1, 1), (1, 4), (2, 3), (3, 8)])
@pytest.mark.parametrize("constant_time", [False, True])
def test_bitvec_output_length_equals_domain_length(m, k, constant_time):
    meas = _bitvec(m, k, 0.3, constant_time)
    assert meas.output_domain.length == k
    with use_source(SeededSource(k)):
        for x in _members(m, k)[:20]:
            y = meas(x)
            assert isinstance(y, tuple) and len(y) == k and all(isinstance(b, bool) for b in y)
            assert meas.output_domain.member(y)


def test_rr_outputs_are_categories_and_bool_rr_outputs_bools():
    rr = _rr()
    rr_bool = make_randomized_response_bool(0.6, constant_time=True)
    with use_source(SeededSource(5)):
        assert {rr(x) for x in ["a", "b", "c", "zz"] * 30} <= {"a", "b", "c"}
        assert {type(rr_bool(x)) for x in [True, False] * 10} == {bool}


# ------------------------------------------------------------------ exact output laws

@pytest.mark.parametrize("t,prob", [(2, 0.5), (2, 0.75), (3, 0.5), (3, 0.9), (4, 0.25), (5, 0.3), (7, 0.99)])
def test_rr_exact_distribution_matches_seed_derivation(t, prob):
    cats = list(range(t))
    meas = make_randomized_response(cats, prob)
    p = Fraction(prob)
    for x in cats:
        expected = {y: p if y == x else (1 - p) / (t - 1) for y in cats}
        assert choice_distribution(lambda x=x: meas(x)) == {y: v for y, v in expected.items() if v}
    # an input outside the categories (but of their type) is answered uniformly
    assert choice_distribution(lambda: meas(t + 10)) == dict.fromkeys(cats, Fraction(1, t))


@pytest.mark.parametrize("prob", [0.5, 0.75, 1 - 2.0**-53])
@pytest.mark.parametrize("constant_time", [False, True])
def test_rr_bool_exact_distribution_matches_seed_derivation(prob, constant_time):
    meas = make_randomized_response_bool(prob, constant_time)
    for x in (True, False):
        dist = choice_distribution(lambda x=x: meas(x))
        assert dist == {x: Fraction(prob), not x: 1 - Fraction(prob)}


@pytest.mark.parametrize("m,k,f", [(1, 2, 0.5), (1, 3, 0.25), (2, 3, 0.9), (2, 4, 1.0), (1, 3, 0.1)])
def test_bitvec_exact_distribution_is_product_of_bit_flips(m, k, f):
    meas = _bitvec(m, k, f)
    half = Fraction(f) / 2  # the seeds' flip probability f/2 (a float for every normal f)
    for x in _members(m, k):
        expected = {}
        for y in itertools.product((False, True), repeat=k):
            prob = Fraction(1)
            for xi, yi in zip(x, y, strict=True):
                prob *= half if bool(xi) != yi else 1 - half
            expected[y] = prob
        assert choice_distribution(lambda x=x: meas(x)) == expected


# ------------------------------------------------------------------ privacy maps: randomized response

def _rr_ratio(t: int, prob: float) -> tuple:
    cats = list(range(t))
    meas = make_randomized_response(cats, prob)
    return meas, _true_ratio(meas, cats + [t + 1])


@pytest.mark.parametrize("t,prob", [(2, 0.75), (3, 0.75), (3, 0.5), (4, 0.9), (5, 0.3), (2, 1 - 2.0**-53),
                                    (3, math.nextafter(1 / 3, 1)), (10, 0.999)])
def test_rr_map_is_sound_and_within_rounding_of_true_loss(t, prob):
    meas, ratio = _rr_ratio(t, prob)
    assert meas.map(0) == 0.0
    eps = meas.map(1)
    assert meas.map(5) == eps
    assert_map_is_sound(eps, ratio)
    # map = ln↑((p·(t−1))↑ / (1−p)↓)↑: three rational roundings, each a relative error
    # < 2**-52, move the quotient by a factor < (1 + 2**-52)**3, hence ln by < 3·2**-52;
    # the final ln adds < 1 ulp of the result
    assert_map_within(eps, ratio, 3 * ULP52 + _ulp(eps))


def test_rr_map_exact_arithmetic_case_is_least_float_above_ln6():
    # p = 0.75, t = 3: 0.75·2, 1 − 0.75 and 1.5/0.25 = 6 are exact, so map(1) must be the
    # least float >= ln 6 -- the true loss from enumeration
    meas, ratio = _rr_ratio(3, 0.75)
    assert ratio == 6
    eps = meas.map(1)
    assert sign_minus_ln(eps, ratio) > 0
    assert sign_minus_ln(math.nextafter(eps, -math.inf), ratio) < 0


@settings(max_examples=40, deadline=None, derandomize=True)
@given(t=st.integers(2, 5), u=st.floats(min_value=0.0, max_value=1.0, exclude_max=True))
def test_rr_map_hypothesis_sound_and_tight(t, u):
    lo = math.nextafter(1 / t, 1) if Fraction(1 / t) < Fraction(1, t) else 1 / t
    prob = min(lo + u * (1 - lo), math.nextafter(1.0, 0))
    meas, ratio = _rr_ratio(t, prob)
    eps = meas.map(1)
    assert_map_is_sound(eps, ratio)
    assert_map_within(eps, ratio, 3 * ULP52 + _ulp(eps))


@pytest.mark.parametrize("t", [2, 4, 8, 64])
def test_rr_prob_exactly_one_over_t_has_zero_loss_and_zero_map(t):
    meas, ratio = _rr_ratio(t, 1 / t)
    assert ratio == 1
    assert meas.map(1) == 0.0


def test_rr_prob_just_below_one_third_rejected_just_above_accepted():
    below = 1 / 3  # the float nearest 1/3 lies below it
    assert Fraction(below) < Fraction(1, 3) < Fraction(math.nextafter(below, 1))
    with pytest.raises(ValueError, match=r"prob=0\.333.*\[1/3, 1\)"):
        make_randomized_response(["a", "b", "c"], below)
    meas, ratio = _rr_ratio(3, math.nextafter(below, 1))
    assert 0 < meas.map(1) < 1e-15
    assert_map_is_sound(meas.map(1), ratio)


@pytest.mark.parametrize("prob", [0.5, 0.75, 0.9, 1 - 2.0**-53])
def test_rr_bool_map_is_sound_and_tight(prob):
    meas = make_randomized_response_bool(prob)
    ratio = _true_ratio(meas, [True, False])
    assert ratio == Fraction(prob) / (1 - Fraction(prob))
    eps = meas.map(1)
    assert meas.map(0) == 0.0
    assert_map_is_sound(eps, ratio)
    assert_map_within(eps, ratio, 3 * ULP52 + _ulp(eps))


# ------------------------------------------------------------------ privacy maps: bit vectors

def _bitvec_slack(eps: float, d: int, q: float) -> Fraction:
    # map = d ⊗↑ (ln↑(1 ⊖↑ q) ⊖↑ ln↓ q): 1−q rounded up moves ln(1−q) by < 2**-52; ln↑, ln↓
    # and the subtraction each add < 1 ulp of a value <= 1 + |ln q|; the product < 1 ulp of eps
    return d * (ULP52 + 3 * _ulp(1 + abs(math.log(q)))) + _ulp(eps)


@pytest.mark.parametrize("m,k,f", [(1, 1, 0.5), (1, 2, 0.5), (1, 3, 0.25), (2, 3, 0.5), (2, 5, 0.75),
                                   (1, 4, 1 - 2.0**-52), (3, 4, 0.01), (1, 3, 2.0**-40)])
def test_bitvec_map_is_sound_tight_and_uses_min_2m_k(m, k, f):
    meas = _bitvec(m, k, f)
    ratio = _true_ratio(meas, _members(m, k))
    d = min(2 * m, k)
    half = Fraction(f) / 2
    assert ratio == ((1 - half) / half) ** d  # the seeds' per-bit ratio, to the largest Hamming distance
    eps = meas.map(1)
    assert meas.map(0) == 0.0
    assert_map_is_sound(eps, ratio)
    assert_map_within(eps, ratio, _bitvec_slack(eps, d, flip_probability(f)))
    if k < 2 * m:
        # the seeds' 2m·ln((2−f)/f) would be strictly larger: the map really uses min(2m, k)
        assert sign_minus_ln(eps, ((1 - half) / half) ** (2 * m)) < 0


@pytest.mark.parametrize("d_in,exc", [(2, ValueError), (100, ValueError), (-1, ValueError), (1.0, TypeError),
                                      (True, TypeError)])
def test_bitvec_map_rejects_d_in_other_than_0_or_1(d_in, exc):
    with pytest.raises(exc, match="d_in"):
        _bitvec(1, 3, 0.5).map(d_in)


def test_rappor_is_the_bitvec_constructor():
    assert make_rappor is make_randomized_response_bitvec


def test_bitvec_subnormal_f_flips_with_positive_probability_and_finite_map():
    f = TINY
    q = flip_probability(f)
    assert q == TINY and Fraction(q) >= Fraction(f) / 2  # f/2 is not a float: rounded up to TINY
    meas = _bitvec(1, 2, f)
    ratio = _true_ratio(meas, _members(1, 2))
    assert ratio == ((1 - Fraction(q)) / Fraction(q)) ** 2
    eps = meas.map(1)
    assert math.isfinite(eps) and 1400 < eps < 1500
    assert_map_is_sound(eps, ratio)
    assert_map_within(eps, ratio, _bitvec_slack(eps, 2, q))


def test_bitvec_f_one_is_pure_noise_and_map_within_rounding_of_zero():
    meas = _bitvec(2, 3, 1.0)
    assert _true_ratio(meas, _members(2, 3)) == 1
    eps = meas.map(1)
    assert 0.0 <= eps <= _bitvec_slack(eps, 3, 0.5)


def test_bitvec_f_one_map_is_exactly_zero():
    assert _bitvec(2, 3, 1.0).map(1) == 0.0


# ------------------------------------------------------------------ k-RAPPOR

def _sign_flip_minus_ideal(flip: Fraction, epsilon: float, k: int) -> int:
    """sign(flip − 1/(1 + e^(ε/2k))), decided with mpmath at rising precision."""
    x = Fraction(epsilon) / (2 * k)
    prec = 200
    while prec <= 1 << 14:
        with mpmath.workprec(prec):
            ideal = 1 / (1 + mpmath.exp(mpmath.mpf(x.numerator) / x.denominator))
            diff = mpmath.mpf(flip.numerator) / flip.denominator - ideal
            if abs(diff) > ideal * mpmath.mpf(2) ** (20 - prec):
                return 1 if diff > 0 else -1
        prec *= 4
    raise AssertionError("undecided")


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 2.5, 10.0, 700.0])
@pytest.mark.parametrize("k", [1, 2, 7])
def test_k_rappor_flip_probability_at_least_ideal_and_tight(epsilon, k):
    flip = Fraction(k_rappor_flip_probability(epsilon, k))
    assert _sign_flip_minus_ideal(flip, epsilon, k) > 0
    # four directed steps, each a relative error < 2**-52 (e^x's error is relative to e^x)
    assert _sign_flip_minus_ideal(flip * (1 - 8 * ULP52), epsilon, k) < 0


@pytest.mark.parametrize("epsilon,m,length", [(1.0, 1, 2), (1.0, 1, 3), (0.5, 2, 4), (3.0, 2, 3), (8.0, 1, 4)])
def test_k_rappor_true_loss_at_most_epsilon_and_map_sound(epsilon, m, length):
    meas = make_k_rappor(BitVectorDomain(max_weight=m, length=length), DiscreteDistance(), epsilon)
    ratio = _true_ratio(meas, _members(m, length))
    eps_map = meas.map(1)
    assert meas.map(0) == 0.0
    assert sign_minus_ln(epsilon, ratio) >= 0, "the true loss exceeds epsilon"
    assert eps_map <= epsilon
    assert_map_is_sound(eps_map, ratio)
    if length >= 2 * m:
        # rounding the flip probability up costs only a sliver of epsilon
        assert sign_minus_ln(epsilon * (1 - 2.0**-40), ratio) < 0
    else:
        assert eps_map < epsilon  # the shorter vector's own bound is smaller


def test_k_rappor_tiny_epsilon_gives_pure_noise():
    meas = make_k_rappor(BitVectorDomain(max_weight=1, length=2), DiscreteDistance(), TINY)
    assert k_rappor_flip_probability(TINY, 1) == 0.5
    assert _true_ratio(meas, _members(1, 2)) == 1
    assert meas.map(1) in (0.0, TINY)  # min(ε, inner map); 0.0 once the f = 1 map is exact


def test_k_rappor_huge_epsilon_keeps_a_positive_flip_probability():
    meas = make_k_rappor(BitVectorDomain(max_weight=1, length=2), DiscreteDistance(), 1e308)
    flip = k_rappor_flip_probability(1e308, 1)
    assert 0 < flip < 1e-300
    assert math.isfinite(meas.map(1)) and meas.map(1) <= 1e308
