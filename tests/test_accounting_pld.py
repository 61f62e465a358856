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


# ---------------------------------------------------------------------- the scalable paths against references

def mixture_delta_truth(eps_run: float, t: int, m: int, eps: float) -> mpmath.mpf:
    """δ(ε) of m steps of t-ary RR (log-ratio eps_run) at 50 digits, as a mixture over the N non-zero steps.

    Independent of the recurrence the code runs: given N steps that are not 0, the number of +a steps
    is Binomial(N, e^a/(1+e^a)).
    """
    with mpmath.workdps(50):
        a = mpq(Fraction(eps_run))
        e = mpq(Fraction(eps))
        r = 1 / (mpmath.exp(a) + t - 1)
        lam = (t - 2) * r
        q = 1 / (1 + mpmath.exp(-a))
        total = mpmath.mpf(0)
        for big_n in range(m + 1):
            pn = mpmath.binomial(m, big_n) * (1 - lam) ** big_n * lam ** (m - big_n)
            inner = mpmath.mpf(0)
            for j in range(big_n + 1):
                loss = (2 * j - big_n) * a
                if loss > e:
                    inner += mpmath.binomial(big_n, j) * q**j * (1 - q) ** (big_n - j) * -mpmath.expm1(e - loss)
            total += pn * inner
        return total


BINARY_GRID = [  # (per-run ε, runs, ε of the query): tiny and large per-run ε, the Stirling path (m > 1000)
    (1e-3, 3000, 1e-3), (1e-3, 3000, 0.1), (0.05, 2500, 3.0), (1.0, 1200, 560.0), (1.0, 1200, 620.0),
    (1.0, 4000, 2000.0), (20.0, 1500, 29990.0), (20.0, 2, 1.0), (3.0, 1, 2.5), (0.7, 5000, 1200.0),
]  # (a δ within 1e-60 of 1 would be beyond the 60-digit reference)


@pytest.mark.parametrize("eps_run,n,eps", BINARY_GRID, ids=[f"a={a},n={n},eps={e}" for a, n, e in BINARY_GRID])
def test_binary_bounds_bracket_direct_summation_and_are_tight(eps_run, n, eps):
    truth = binomial_delta_truth(1 / (1 + math.exp(-eps_run)), n, eps)
    family = randomized_response_curve(prob=1 / (1 + math.exp(-eps_run)))  # the same float keep probability
    pld = ExactPLD(family, n)
    lo, hi = pld.delta_bounds(eps)
    assert lo <= truth <= hi
    assert hi - lo <= truth * mpmath.mpf(2.0**-50), (lo, hi, truth)  # certified to about float precision
    assert abs(mpmath.mpf(pld.delta(eps)) - truth) <= truth * mpmath.mpf(1e-11)


@pytest.mark.parametrize("eps_run,n,target", [(1e-3, 3000, 1e-12), (1.0, 1200, 1e-6), (20.0, 50, 1e-12),
                                              (0.05, 2500, 0.3), (2.0, 1001, 1e-100)])
def test_binary_epsilon_is_certified_against_direct_summation(eps_run, n, target):
    prob = 1 / (1 + math.exp(-eps_run))
    res = ExactPLD(randomized_response_curve(prob=prob), n).epsilon(target)
    assert binomial_delta_truth(prob, n, res.epsilon) <= target < binomial_delta_truth(prob, n, res.epsilon_lower)
    assert res.delta_certified <= target and res.epsilon - res.epsilon_lower <= 1e-12 * max(res.epsilon, 1.0)


CATEGORICAL_GRID = [(1.0, 3, 150, 5.0), (1.0, 3, 150, 0.0), (0.1, 16, 120, 0.5), (3.0, 1000, 100, 40.0),
                    (1e-3, 4, 120, 1e-3), (20.0, 5, 40, 790.0)]


@pytest.mark.parametrize("eps_run,t,n,eps", CATEGORICAL_GRID,
                         ids=[f"a={a},t={t},n={n},eps={e}" for a, t, n, e in CATEGORICAL_GRID])
def test_categorical_bounds_bracket_the_mixture_and_are_tight(eps_run, t, n, eps):
    truth = mixture_delta_truth(eps_run, t, n, eps)
    pld = ExactPLD(randomized_response_curve(eps_run, categories=t), n)
    lo, hi = pld.delta_bounds(eps)
    assert lo <= truth <= hi
    assert hi - lo <= truth * mpmath.mpf(2.0**-50), (lo, hi, truth)
    assert abs(mpmath.mpf(pld.delta(eps)) - truth) <= truth * mpmath.mpf(1e-11)


def test_categorical_epsilon_is_certified_against_the_mixture():
    res = ExactPLD(randomized_response_curve(1.0, categories=5), 100).epsilon(1e-9)
    assert mixture_delta_truth(1.0, 5, 100, res.epsilon) <= 1e-9 < mixture_delta_truth(1.0, 5, 100,
                                                                                          res.epsilon_lower)


@pytest.mark.parametrize("family,n", [(randomized_response_curve(1.0), 10**6), (rappor_curve(1.0), 10**6),
                                      (rappor_curve(0.3, k=4), 2 * 10**5),
                                      (randomized_response_curve(1.0, categories=4), 2 * 10**4)],
                         ids=["rr-1e6", "rappor-1e6", "k-rappor-2e5", "categorical-2e4"])
def test_large_n_float_path_agrees_with_certified_bounds(family, n):
    """At large n the float δ that drives the search (a window of the pmf) matches the certified enclosure."""
    pld = ExactPLD(family, n)
    res = pld.epsilon(1e-6)
    assert res.delta_certified <= 1e-6 and res.epsilon - res.epsilon_lower <= 1e-12 * res.epsilon
    for eps in [0.5 * res.epsilon, 0.9 * res.epsilon, res.epsilon, 1.05 * res.epsilon]:
        lo, hi = pld.delta_bounds(eps)
        got = pld.delta(eps)
        assert hi - lo <= 2.0**-50 * hi
        assert abs(got - hi) <= 1e-11 * hi, (eps, lo, hi, got)


def test_rappor_at_a_million_runs_uses_bounded_memory():
    """The binomial's O(√m) window only: an array over all 2·10^6 steps alone would take 16 MB."""
    import tracemalloc

    tracemalloc.start()
    try:
        res = ExactPLD(rappor_curve(1.0), 10**6).epsilon(1e-6)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert res.delta_certified <= 1e-6
    assert peak < 8 * 2**20, peak


def test_log_factorial_encloses_loggamma():
    from vetdp.accounting.curves import iv_endpoints, iv_precision
    from vetdp.accounting.pld import _log_factorial

    with iv_precision(160) as iv, mpmath.workdps(80):
        for n in [0, 1, 2, 999, 1000, 1001, 4321, 10**6, 10**9 + 7]:
            lo, hi = iv_endpoints(_log_factorial(iv, n))
            truth = mpmath.loggamma(n + 1)
            assert mpq(lo) <= truth <= mpq(hi), n
            assert hi - lo <= Fraction(1, 2**100) * max(1, abs(hi)), n


def test_chernoff_bounds_are_above_the_exact_tails():
    from vetdp.accounting.curves import iv_precision
    from vetdp.accounting.pld import _chernoff

    family = randomized_response_curve(0.8, categories=4)
    m = 60
    with iv_precision(160) as iv:
        A = family.log_ratio_interval(160)
        with mpmath.workdps(40):
            a = mpmath.mpf(0.8)
            p, r = mpmath.exp(a) / (mpmath.exp(a) + 3), 1 / (mpmath.exp(a) + 3)
            lam = 2 * r
            c = [mpmath.mpf(0)] * (2 * m + 1)  # c[s + m] = P(sum = s), by convolution
            c[m] = mpmath.mpf(1)
            for _ in range(m):
                c = [(c[i - 1] * p if i > 0 else 0) + c[i] * lam + (c[i + 1] * r if i < 2 * m else 0)
                     for i in range(2 * m + 1)]
            useful = 0
            for k in range(-m - 1, m + 2):
                above = _chernoff(iv, A, m, 4, k, above=True)
                below = _chernoff(iv, A, m, 4, k, above=False)
                assert sum(c[max(0, m + k):], mpmath.mpf(0)) <= mpq(above), k
                assert sum(c[:max(0, m + k + 1)], mpmath.mpf(0)) <= mpq(below), k
                useful += (above < 1e-3) + (below < 1e-3)
        assert useful >= 60  # the bounds are not trivially 1


def _exact_enclosure(family, n: int, eps: float) -> tuple[Fraction, Fraction]:
    """The enclosure as exact rationals, before rounding to floats (so a 2^-80 remainder is visible)."""
    from vetdp.accounting.curves import iv_precision
    from vetdp.accounting.pld import _binary_delta, _trinomial_delta

    pld = ExactPLD(family, n)
    with iv_precision(160) as iv:
        A = family.log_ratio_interval(160)
        e = iv.mpf(Fraction(eps).numerator) / Fraction(eps).denominator
        if family.categories == 2:
            return _binary_delta(iv, A, pld.steps, e)
        tolerance = Fraction(pld.delta(eps)) / 2**80
        return _trinomial_delta(iv, A, pld.steps, family.categories, e, pld._trinomial_run(), tolerance)


@pytest.mark.parametrize("eps_run,n,eps", [(1.0, 1200, 560.0), (0.05, 2500, 3.0), (1e-3, 3000, 0.1),
                                         (0.5, 2000, 0.0)])  # the last one stops downwards on the remainder
def test_binary_rational_enclosure_brackets_the_60_digit_sum(eps_run, n, eps):
    """Each remainder the sum leaves out is bounded; dropping one would put the upper end below the truth."""
    prob = 1 / (1 + math.exp(-eps_run))
    lo, hi = _exact_enclosure(randomized_response_curve(prob=prob), n, eps)
    truth = binomial_delta_truth(prob, n, eps)
    with mpmath.workdps(80):
        assert mpq(lo) <= truth <= mpq(hi)
    assert hi - lo <= hi / 2**70


@pytest.mark.parametrize("eps_run,t,n,eps", [(1.0, 3, 150, 5.0), (0.1, 16, 120, 0.5)])
def test_categorical_rational_enclosure_brackets_the_50_digit_mixture(eps_run, t, n, eps):
    lo, hi = _exact_enclosure(randomized_response_curve(eps_run, categories=t), n, eps)
    truth = mixture_delta_truth(eps_run, t, n, eps)
    with mpmath.workdps(80):
        assert mpq(lo) <= truth <= mpq(hi)
    assert hi - lo <= hi / 2**70


def test_categorical_from_a_checkpoint_matches_the_float_mixture():
    """m = 3000 > 1024: δ(ε) restarts from a checkpoint of the pass below k = m, and is bounded by Chernoff."""
    import numpy as np
    from scipy import stats

    a, t, m = 1.0, 3, 3000
    pld = ExactPLD(randomized_response_curve(a, categories=t), m)
    assert len(pld._trinomial_run().checkpoints) == 3
    r = 1 / (math.exp(a) + t - 1)
    lam, q = (t - 2) * r, 1 / (1 + math.exp(-a))
    for eps in [1250.0, 1310.0]:
        first = math.floor(eps / a) + 1
        ref = 0.0
        for k in range(first, m + 1):  # c_k by the mixture over N non-zero steps, N ≡ k (mod 2)
            big_n = np.arange(k, m + 1, 2)
            c_k = float(np.sum(stats.binom.pmf(big_n, m, 1 - lam) * stats.binom.pmf((big_n + k) // 2, big_n, q)))
            ref += c_k * -math.expm1(eps - k * a)
        lo, hi = pld.delta_bounds(eps)
        assert 1e-12 < ref and hi - lo <= hi * 2.0**-50
        assert abs(hi - ref) <= 1e-11 * ref, (eps, lo, hi, ref)


def test_categorical_far_below_the_mean_stops_on_the_chernoff_bound_and_stays_tight():
    """ε far below the mean loss: the run down from the checkpoint ends where P(s <= k) is negligible."""
    pld = ExactPLD(randomized_response_curve(1.0, categories=3), 20000)
    lo, hi = pld.delta_bounds(10.0)
    assert 0.999 < lo and hi - lo <= hi * 2.0**-50
    assert abs(pld.delta(10.0) - hi) <= 1e-12


@pytest.mark.parametrize("epsilon,n,eps", [(3000.0, 3, 5000.0), (3000.0, 2, 8000.0),
                                           (1.6759759912428246e154, 6, 4258.7), (2048.0, 1, 2048.0 - 1e-9)])
def test_binary_delta_bounds_at_a_huge_loss_per_step(epsilon, n, eps):
    """a = ε >= 1024: e^a has no fixed-point form (k-RAPPOR at ε = 1.68e154 raised OverflowError inside
    privacy.pld); the enclosure is j = m's factor (1 − e^{ε−m·a})₊ with the rest of the mass below m·2^-1400."""
    pld = ExactPLD(randomized_response_curve(epsilon), n)
    lo, hi = pld.delta_bounds(eps)
    with mpmath.workprec(20000):
        a = mpmath.mpf(epsilon)
        p = 1 / (1 + mpmath.exp(-a))
        truth = sum(mpmath.binomial(n, j) * p**j * (1 - p)**(n - j) * max(0, 1 - mpmath.exp(eps - (2 * j - n) * a))
                    for j in range(n + 1))
        assert lo <= truth <= hi
    assert hi - lo <= 2.0**-40 * max(hi, 2.0**-1000)
