"""Exact PLD, composition and conversions against independent truths.

Truths: the exact output distribution of the real code (enumeration), composed n times as
an exact product distribution, with δ(ε) = Σ_y (P(y) − e^ε Q(y))₊ enclosed by the engine
(vetdp.engine.divergence.hockey_stick_delta); for larger n, the binomial sum at 60 digits.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import mpmath
import pytest

from vetdp.accounting.composition import compare_methods, rdp_to_dp, zcdp_to_dp
from vetdp.accounting.curves import curve_for_measurement, randomized_response_curve, rappor_curve
from vetdp.accounting.pld import ExactPLD
from vetdp.core.measurement import bitvector_domain, discrete_distance
from vetdp.engine.divergence import hockey_stick_delta
from vetdp.engine.enumerate import output_distribution
from vetdp.impl import (
    make_k_rappor,
    make_randomized_response,
    make_randomized_response_bitvec,
    make_randomized_response_bool,
)


def product(dist: dict, n: int) -> dict:
    out: dict = {}
    for ys in itertools.product(dist.items(), repeat=n):
        out[tuple(y for y, _ in ys)] = math.prod((p for _, p in ys), start=Fraction(1))
    return out


def enclosed_delta(p: dict, q: dict, eps: float) -> tuple[Fraction, Fraction]:
    return hockey_stick_delta(p, q, eps)(200)


CASES = [
    ("rr", lambda: make_randomized_response_bool(0.8), False, True, 4),
    ("rr-cat", lambda: make_randomized_response([0, 1, 2], 0.6), 0, 1, 4),
    ("rappor", lambda: make_randomized_response_bitvec(bitvector_domain(max_weight=1, length=2),
                                                       discrete_distance(), 0.3), (1, 0), (0, 1), 3),
    ("k-rappor", lambda: make_k_rappor(bitvector_domain(max_weight=2, length=4), discrete_distance(), 2.0),
     (1, 1, 0, 0), (0, 0, 1, 1), 2),
]


@pytest.mark.parametrize("name,make,x,x2,n", CASES, ids=[c[0] for c in CASES])
def test_pld_delta_matches_enumerated_composition_both_directions(name, make, x, x2, n):
    meas = make()
    p1, q1 = output_distribution(meas, x), output_distribution(meas, x2)
    family = curve_for_measurement(meas)
    for k in range(1, n + 1):
        P, Q = product(p1, k), product(q1, k)
        pld = ExactPLD(family, k)
        for eps in [0.0, 0.1, 0.5 * family.max_divergence * k, 0.9 * family.max_divergence * k]:
            lo, hi = enclosed_delta(P, Q, eps)
            rlo, rhi = enclosed_delta(Q, P, eps)
            assert max(lo, rlo) <= min(hi, rhi), "the two directions differ"  # symmetric: Q‖P = P‖Q
            truth = (lo + hi) / 2
            got = pld.delta(eps)
            assert abs(Fraction(got) - truth) <= truth * Fraction(1, 10**12), (name, k, eps, got, float(truth))
            blo, bhi = pld.delta_bounds(eps)
            assert Fraction(blo) <= lo and hi <= Fraction(bhi), (name, k, eps)


def binomial_delta_truth(prob: float, m: int, eps: float) -> mpmath.mpf:
    """δ(ε) of m-fold binary RR (keep probability ``prob``) by direct summation at 60 digits."""
    with mpmath.workdps(60):
        p = mpmath.mpf(Fraction(prob).numerator) / Fraction(prob).denominator
        r = 1 - p
        e = mpmath.exp(mpmath.mpf(Fraction(eps).numerator) / Fraction(eps).denominator)
        total = mpmath.mpf(0)
        for j in range(m + 1):
            term = mpmath.binomial(m, j) * (p**j * r ** (m - j) - e * p ** (m - j) * r**j)
            if term > 0:
                total += term
        return total


@pytest.mark.parametrize("prob,n", [(0.6, 300), (0.9, 500), (0.999, 40)])
def test_pld_delta_and_epsilon_match_direct_summation(prob, n):
    pld = ExactPLD(randomized_response_curve(prob=prob), n)
    for eps in [0.3, 2.0, 7.5]:
        truth = binomial_delta_truth(prob, n, eps)
        if truth == 0:
            continue
        assert abs(mpmath.mpf(pld.delta(eps)) - truth) <= truth * mpmath.mpf(1e-12)
        lo, hi = pld.delta_bounds(eps)
        assert lo <= truth <= hi
    res = pld.epsilon(1e-6)
    assert binomial_delta_truth(prob, n, res.epsilon) <= 1e-6 < binomial_delta_truth(prob, n, res.epsilon_lower)
    assert res.delta_certified <= 1e-6 and res.epsilon - res.epsilon_lower <= 1e-9 * res.epsilon


def test_rappor_pld_equals_rr_at_half_epsilon_composed_twice_as_often():
    """RAPPOR(ε) composed n times is RR(ε/2) composed 2n times (two differing bits)."""
    a = ExactPLD(rappor_curve(1.3), 50).delta(4.0)
    b = ExactPLD(randomized_response_curve(0.65), 100).delta(4.0)
    assert abs(a - b) <= 1e-13 * b


def mpq(f: Fraction) -> mpmath.mpf:
    return mpmath.mpf(f.numerator) / f.denominator


def test_categorical_pld_matches_trinomial_summation():
    t, prob, n = 5, 0.5, 60
    pld = ExactPLD(randomized_response_curve(prob=prob, categories=t), n)
    pf = Fraction(prob)
    r = (1 - pf) / (t - 1)
    lam = (t - 2) * r
    with mpmath.workdps(50):
        for eps in [0.5, 5.0, 20.0]:
            e = mpmath.exp(mpmath.mpf(eps))
            ln_ratio = mpmath.log(mpq(pf / r))
            total = mpmath.mpf(0)
            for plus in range(n + 1):
                for minus in range(n - plus + 1):
                    loss = (plus - minus) * ln_ratio
                    if loss > eps:
                        c = mpmath.factorial(n) / (mpmath.factorial(plus) * mpmath.factorial(minus)
                                                    * mpmath.factorial(n - plus - minus))
                        pr = c * mpq(pf) ** plus * mpq(r) ** minus * mpq(lam) ** (
                            n - plus - minus)
                        total += pr * (1 - e * mpmath.exp(-loss))
            assert abs(mpmath.mpf(pld.delta(eps)) - total) <= total * mpmath.mpf(1e-12)
            lo, hi = pld.delta_bounds(eps)
            assert lo <= total <= hi


@pytest.mark.parametrize("family,n", [(rappor_curve(1.0), 100), (rappor_curve(0.2, k=3), 400),
                                      (randomized_response_curve(2.0, categories=6), 30),
                                      (randomized_response_curve(0.5), 1000)])
def test_every_method_is_sound_and_pld_is_tightest(family, n):
    rows = {c.method: c for c in compare_methods(family, n, 1e-6)}
    exact = rows["pld"]
    assert exact.exact and exact.tightest and sum(c.tightest for c in rows.values()) == 1
    lower = ExactPLD(family, n).epsilon(1e-6).epsilon_lower
    for c in rows.values():
        assert c.epsilon > lower, c  # no method may claim less than the certified optimum
    assert rows["rdp"].epsilon <= rows["rdp-mironov"].epsilon
    assert rows["simple"].epsilon >= n * family.max_divergence


def test_zcdp_conversion_rounds_up_from_the_real_value():
    with mpmath.workdps(50):
        for rho, delta in [(0.5, 1e-6), (24.49, 1e-9), (1e-8, 0.1)]:
            truth = mpmath.mpf(rho) + 2 * mpmath.sqrt(mpmath.mpf(rho) * mpmath.log(1 / mpmath.mpf(delta)))
            got = zcdp_to_dp(rho, delta)
            assert truth <= got <= truth * (1 + mpmath.mpf(2.0**-50))


def test_rdp_conversion_at_alpha_is_sound_against_direct_evaluation():
    family = rappor_curve(1.0)
    c = rdp_to_dp(family, 100, 1e-6)
    with mpmath.workdps(40):
        al = mpmath.mpf(c.alpha)
        q = 1 / (1 + mpmath.exp(mpmath.mpf(0.5)))
        tau = 100 * 2 * mpmath.log((1 - q) ** al * q ** (1 - al) + q**al * (1 - q) ** (1 - al)) / (al - 1)
        truth = tau + mpmath.log((al - 1) / al) - (mpmath.log(mpmath.mpf(1e-6)) + mpmath.log(al)) / (al - 1)
    assert truth <= c.epsilon <= truth * (1 + mpmath.mpf(1e-13))


@pytest.mark.parametrize("call,match", [
    (lambda: ExactPLD(rappor_curve(1.0), 0), "compositions=0"),
    (lambda: ExactPLD(rappor_curve(1.0), 3).epsilon(0.0), r"delta=0.0 must be in \(0, 1\)"),
    (lambda: ExactPLD(rappor_curve(1.0), 3).epsilon(1.0), "delta=1.0"),
    (lambda: ExactPLD(rappor_curve(1.0), 3).delta(-0.5), "epsilon=-0.5"),
    (lambda: zcdp_to_dp(-1.0, 1e-6), "rho=-1.0"),
    (lambda: compare_methods(rappor_curve(1.0), 10, float("nan")), "delta"),
])
def test_bad_parameters_raise(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_exact_pld_rejects_non_family():
    with pytest.raises(TypeError, match="family"):
        ExactPLD("rappor", 3)


def test_provider_checks_pass_and_are_registered():
    from vetdp.accounting.provider import check_accounting
    from vetdp.engine.registry import PROVIDERS, CheckOptions

    assert "vetdp.accounting.provider:check_accounting" in PROVIDERS
    results = list(check_accounting(CheckOptions()))
    assert len(results) == 16 and all(r.passed for r in results), [r for r in results if not r.passed]
    only = list(check_accounting(CheckOptions(pattern="*pld.rappor*")))
    assert [r.check for r in only] == ["pld.rappor.matches_enumeration[n=2]"]
