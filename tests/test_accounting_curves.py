"""RDP/zCDP curves against the engine's exact enumeration of the implementations.

Truth: the exact output distribution of the real code (BranchingSource enumeration),
then D_α by direct summation at 50 digits (vetdp.engine.divergence.renyi_divergence).
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import mpmath
import pytest
import sympy

from vetdp.accounting import curves as C
from vetdp.accounting.curves import (
    bit_flip_curve,
    curve_for_measurement,
    randomized_response_curve,
    rappor_curve,
)
from vetdp.accounting.measures import (
    RdpCurve,
    RenyiDivergence,
    ZeroConcentratedDivergence,
    make_renyi,
    make_zcdp,
)
from vetdp.core.measurement import bitvector_domain, discrete_distance
from vetdp.engine.divergence import renyi_divergence as engine_renyi_divergence
from vetdp.engine.enumerate import output_distribution
from vetdp.impl import (
    make_k_rappor,
    make_randomized_response,
    make_randomized_response_bitvec,
    make_randomized_response_bool,
)

ALPHAS = [1.0, 1 + 2**-30, 1.000001, 1.25, 2.0, 3.7, 10.0, 128.0, 5000.0, 1e6]
DIGITS = 12


def agree(x: float, truth, digits: int = DIGITS) -> bool:
    """x agrees with the high-precision truth to ``digits`` significant digits."""
    t = mpmath.mpf(truth)
    return abs(mpmath.mpf(x) - t) <= abs(t) * mpmath.mpf(10) ** (-digits)


def renyi_divergence(p, q, alpha) -> mpmath.mpf:
    """The engine's D_α(P‖Q); at α = 1 the KL sum Σ P ln(P/Q) at 50 digits, summed here."""
    if alpha != 1:
        return engine_renyi_divergence(p, q, alpha)
    with mpmath.workdps(50):
        return mpmath.fsum(mpmath.mpf(v.numerator) / v.denominator * mpmath.log(
            mpmath.mpf((v / q[y]).numerator) / (v / q[y]).denominator) for y, v in p.items() if v)


def worst_pair_divergence(meas, inputs, alpha: float) -> mpmath.mpf:
    """max over ordered pairs of distinct inputs of D_α(M(x)‖M(x')), from exact enumeration."""
    dists = {x: output_distribution(meas, x) for x in inputs}
    return max(renyi_divergence(dists[x], dists[y], alpha) for x, y in itertools.permutations(inputs, 2))


def check_curve_against(meas, inputs, alphas=ALPHAS) -> None:
    curve = curve_for_measurement(meas)
    for alpha in alphas:
        truth = worst_pair_divergence(meas, inputs, alpha)
        got = curve.rdp(alpha)
        assert agree(got, truth), (meas, alpha, got, truth)
        lo, hi = curve.rdp_bounds(alpha)
        assert mpmath.mpf(lo) <= truth <= mpmath.mpf(hi), (meas, alpha, lo, hi, truth)


def prob_for(eps: float) -> float:
    return math.exp(eps) / (1 + math.exp(eps))


@pytest.mark.parametrize("eps", [1e-4, 0.1, 1.0, 3.0, 12.0, 35.0])
def test_binary_rr_curve_matches_enumeration(eps):
    check_curve_against(make_randomized_response_bool(prob_for(eps)), [False, True])


@pytest.mark.parametrize("t,prob", [(3, 0.5), (4, 0.9), (7, 0.2), (3, 0.999999), (5, 1 / 5 + 1e-9)])
def test_categorical_rr_curve_matches_enumeration(t, prob):
    check_curve_against(make_randomized_response(list(range(t)), prob), list(range(t)))


@pytest.mark.parametrize("f,length", [(0.5, 3), (0.01, 2), (0.9, 4), (1e-6, 2)])
def test_rappor_curve_matches_enumeration(f, length):
    meas = make_randomized_response_bitvec(bitvector_domain(max_weight=1, length=length), discrete_distance(), f)
    inputs = [tuple(int(i == j) for i in range(length)) for j in range(length)] + [(0,) * length]
    check_curve_against(meas, inputs)


@pytest.mark.parametrize("eps,k,length", [(1.0, 1, 2), (0.3, 2, 4), (4.0, 2, 4), (2.0, 2, 3), (20.0, 3, 6)])
def test_k_rappor_curve_matches_enumeration(eps, k, length):
    """Worst case over every pair of inputs (all of them for length <= 4)."""
    meas = make_k_rappor(bitvector_domain(max_weight=k, length=length), discrete_distance(), eps)
    if length <= 4:
        inputs = [x for x in itertools.product([0, 1], repeat=length) if sum(x) <= k]
    else:
        inputs = [(0,) * length, (1,) * k + (0,) * (length - k), (0,) * (length - k) + (1,) * k]
    check_curve_against(meas, inputs, alphas=[1.0, 1.5, 2.0, 40.0, 1e5])


@pytest.mark.parametrize("eps,k", [(0.05, 1), (1.0, 1), (1.0, 3), (8.0, 2), (60.0, 1), (300.0, 1)])
def test_rappor_curve_by_epsilon_matches_direct_summation(eps, k):
    """The ε-parameterised curve against Σ P^α Q^{1−α} over all 2^(2k) outputs at q = 1/(1+e^{ε/2k})."""
    curve = rappor_curve(eps, k=k)
    with mpmath.workdps(60):
        q = 1 / (1 + mpmath.exp(mpmath.mpf(eps) / (2 * k)))
        for alpha in [1.5, 2.0, 17.0, 1e4]:
            am = mpmath.mpf(alpha)
            total = mpmath.mpf(0)
            for y in itertools.product([0, 1], repeat=2 * k):  # x = 1^k 0^k, x' = 0^k 1^k
                p_y = mpmath.fprod(1 - q if y[i] == (i < k) else q for i in range(2 * k))
                q_y = mpmath.fprod(1 - q if y[i] == (i >= k) else q for i in range(2 * k))
                total += p_y**am * q_y ** (1 - am)
            truth = mpmath.log(total) / (am - 1)
            assert agree(curve.rdp(alpha), truth), (eps, k, alpha)
            lo, hi = curve.rdp_bounds(alpha)
            assert lo <= truth <= hi


def test_implementation_curve_below_nominal_curve():
    """k_rappor rounds q up, so its exact curve lies below the curve at the nominal ε."""
    for eps, k in [(1.0, 1), (2.5, 2)]:
        meas = make_k_rappor(bitvector_domain(max_weight=k, length=2 * k), discrete_distance(), eps)
        impl, nominal = curve_for_measurement(meas), rappor_curve(eps, k=k)
        for alpha in [1.0, 2.0, 50.0, math.inf]:
            assert impl.rdp_bounds(alpha)[0] <= nominal.rdp_bounds(alpha)[1]


@pytest.mark.parametrize("eps", [0.2, 1.0, 5.0])
def test_zcdp_rho_bounds_every_alpha_and_is_attained_at_one(eps):
    """ρ >= D_α/α for all α (enumeration), and ρ = lim_{α→1} D_α (tight) for binary families."""
    meas = make_k_rappor(bitvector_domain(max_weight=1, length=2), discrete_distance(), eps)
    curve = curve_for_measurement(meas)
    rho = curve.zcdp_rho()
    dists = {x: output_distribution(meas, x) for x in [(1, 0), (0, 1)]}
    for alpha in [1 + 1e-9, 1.01, 1.5, 2.0, 4.0, 30.0, 1000.0]:
        assert renyi_divergence(dists[(1, 0)], dists[(0, 1)], alpha) / alpha <= rho
    kl = renyi_divergence(dists[(1, 0)], dists[(0, 1)], 1)
    assert kl <= rho and agree(rho, kl)


def test_zcdp_rho_for_categorical_is_an_upper_bound_not_tight():
    meas = make_randomized_response(list(range(4)), 0.7)
    curve = curve_for_measurement(meas)
    assert not curve.zcdp_tight
    dists = {x: output_distribution(meas, x) for x in [0, 1]}
    sup = max(renyi_divergence(dists[0], dists[1], a) / a for a in [1, 1.001, 1.1, 1.5, 2, 5, 50])
    assert sup < curve.zcdp_rho()


# ------------------------------------------------------------------ symbolic limits and the post's theorems

class SympyOps:
    exp = staticmethod(sympy.exp)

    @staticmethod
    def expm1(x):
        return sympy.exp(x) - 1

    @staticmethod
    def log1p(x):
        return sympy.log(1 + x)


a_s, eps_s = sympy.symbols("a epsilon", positive=True)
alpha_s = sympy.Symbol("alpha", positive=True)


@pytest.mark.parametrize("t", [2, 3, 7])
def test_limit_alpha_to_one_is_kl(t):
    lim = sympy.limit(C._renyi(a_s, alpha_s, t, SympyOps), alpha_s, 1)
    assert sympy.simplify(lim - C._kl(a_s, t, SympyOps)) == 0


@pytest.mark.parametrize("t", [2, 5])
def test_limit_alpha_to_infinity_is_log_ratio(t):
    assert sympy.simplify(sympy.limit(C._renyi(a_s, alpha_s, t, SympyOps), alpha_s, sympy.oo) - a_s) == 0


def _same(expr1, expr2) -> bool:
    """Symbolically equal, or (when simplify gives up) equal at 40 digits at many rational points."""
    diff = sympy.simplify(sympy.expand_log(expr1 - expr2, force=True))
    if diff == 0:
        return True
    for e, al in itertools.product([Fraction(1, 7), Fraction(3, 2), 9], [Fraction(11, 10), 2, Fraction(77, 3)]):
        v = diff.subs({eps_s: sympy.Rational(e), alpha_s: sympy.Rational(al)}).evalf(50)
        if abs(v) > 1e-40:
            return False
    return True


@pytest.mark.parametrize("k", [1, 2, 5])
def test_post_theorems_1_2_6_hold_for_our_curve(k):
    """Theorem 2 (binary RR), Theorem 1 (RAPPOR, k=1) and Theorem 6 (k-RAPPOR) of the seed post."""
    ours = 2 * k * C._renyi(eps_s / (2 * k), alpha_s, 2, SympyOps)
    e = sympy.exp
    post = 2 * k / (alpha_s - 1) * sympy.log(
        (e(alpha_s * eps_s / (2 * k)) + e((1 - alpha_s) * eps_s / (2 * k))) / (e(eps_s / (2 * k)) + 1))
    assert _same(ours, post)
    rr = C._renyi(eps_s, alpha_s, 2, SympyOps)
    post_rr = 1 / (alpha_s - 1) * sympy.log((e(alpha_s * eps_s) + e((1 - alpha_s) * eps_s)) / (e(eps_s) + 1))
    assert _same(rr, post_rr)


@pytest.mark.parametrize("k", [1, 2, 4])
def test_post_rho_theorems_hold_for_our_rho(k):
    """Theorem 3 (RR, k→ε), Theorem 4 (RAPPOR) and the k-RAPPOR ρ = (e^{ε/2k}−1)/(e^{ε/2k}+1)·ε."""
    ours = 2 * k * C._kl(eps_s / (2 * k), 2, SympyOps)
    e = sympy.exp(eps_s / (2 * k))
    assert sympy.simplify(ours - (e - 1) / (e + 1) * eps_s) == 0
    assert sympy.simplify(C._kl(eps_s, 2, SympyOps) - (sympy.exp(eps_s) - 1) / (sympy.exp(eps_s) + 1) * eps_s) == 0


# ------------------------------------------------------------------ numerics at the extremes

def test_curve_is_finite_and_monotone_for_huge_alpha_and_epsilon():
    for eps in [1e-8, 1.0, 700.0, 1e5]:
        curve = randomized_response_curve(eps)
        vals = curve.rdp([1.0, 1.0 + 1e-12, 2.0, 1e3, 1e8, 1e300, math.inf])
        assert all(math.isfinite(v) for v in vals)
        assert all(x <= y * (1 + 1e-14) for x, y in zip(vals, vals[1:], strict=False))
        assert vals[-1] == curve.log_ratio


def test_tiny_epsilon_keeps_relative_precision():
    """D_α ≈ α·a²/2 for tiny a: the product form keeps full relative precision."""
    curve = randomized_response_curve(1e-7)
    with mpmath.workdps(50):
        a = mpmath.mpf(1e-7)
        for alpha in [1.5, 3.0]:
            truth = mpmath.log((mpmath.exp(alpha * a) + mpmath.exp((1 - alpha) * a)) / (mpmath.exp(a) + 1)) / (
                alpha - 1)
            assert agree(curve.rdp(alpha), truth, 13)


# ------------------------------------------------------------------ measures and validation

def test_make_renyi_and_make_zcdp_carry_the_maps():
    meas = make_randomized_response_bool(0.75)
    r, z = make_renyi(meas), make_zcdp(meas)
    assert isinstance(r.output_measure, RenyiDivergence) and isinstance(z.output_measure, ZeroConcentratedDivergence)
    dists = {x: output_distribution(meas, x) for x in [False, True]}
    curve = r.map(1)
    assert isinstance(curve, RdpCurve) and r.map(0)(2.0) == 0.0
    for alpha in [1.0, 2.0, 9.0]:
        assert renyi_divergence(dists[True], dists[False], alpha) <= curve(alpha)
        assert curve.compose(10)(alpha) >= 10 * curve(alpha)
    assert z.map(0) == 0.0 and z.check(1, z.map(1)) and not z.check(1, math.nextafter(z.map(1), 0))
    with pytest.raises(ValueError, match="d_in"):
        r.map(2)


@pytest.mark.parametrize("call,match", [
    (lambda: randomized_response_curve(1.0, prob=0.7), "exactly one"),
    (lambda: randomized_response_curve(-1.0), "epsilon=-1.0 must be in"),
    (lambda: randomized_response_curve(float("nan")), "epsilon"),
    (lambda: randomized_response_curve(prob=0.2, categories=3), r"prob=0.2 must be in \[1/3, 1\)"),
    (lambda: rappor_curve(flip=0.6), "flip=0.6 must be in"),
    (lambda: rappor_curve(1.0, k=0), "k=0 must be in"),
    (lambda: bit_flip_curve(0.1, 0), "coordinates=0"),
    (lambda: randomized_response_curve(1.0).rdp(0.5), "alpha=0.5 must be in"),
    (lambda: randomized_response_curve(1.0).rdp([2.0, float("nan")]), "alpha=nan must be in"),
    (lambda: randomized_response_curve(1.0).rdp_upper(0.99), "alpha"),
])
def test_bad_parameters_raise_clear_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_curve_for_unknown_measurement_raises_type_error():
    with pytest.raises(TypeError, match="measurement"):
        curve_for_measurement(object())
