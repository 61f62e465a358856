"""Part II (one Bloom filter): three routes to R(y_x | y_d), judged by exact enumeration."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import mpmath
import pytest

from vetdp.buffling.one_bf import (
    cf_termination_depth,
    compare_routes,
    ln_up,
    loss_ratio_continued_fraction,
    loss_ratio_exact,
    loss_ratio_hyp2f1,
    mpf_to_fraction,
    one_bf_pmf,
    one_bf_privacy,
)


def brute_pmf(m: int, y_d: int, p: float) -> list[Fraction]:
    """Pr[#ones = y] by enumerating every flip pattern of the m bits (input: y_d ones first)."""
    fp = Fraction(p)
    out = [Fraction(0)] * (m + 1)
    bits = [1] * y_d + [0] * (m - y_d)
    for flips in itertools.product((0, 1), repeat=m):
        pr = Fraction(1)
        for f in flips:
            pr *= fp if f else 1 - fp
        out[sum(b ^ f for b, f in zip(bits, flips, strict=True))] += pr
    return out


@pytest.mark.parametrize("m,p", [(1, 0.25), (4, 0.1), (6, 0.3), (7, 0.5)])
def test_one_bf_pmf_equals_flip_enumeration(m, p):
    for y_d in range(m + 1):
        assert one_bf_pmf(m, y_d, p) == brute_pmf(m, y_d, p)


def test_loss_ratio_equals_ratio_of_enumerated_pmfs():
    m, p = 5, 0.2
    for y_d in range(m):
        lo, hi = brute_pmf(m, y_d, p), brute_pmf(m, y_d + 1, p)
        for y_x in range(m + 1):
            assert loss_ratio_exact(m, p, y_d, y_x) == hi[y_x] / lo[y_x]


GRID = [(m, p) for m in (1, 2, 3, 8, 25, 60) for p in (0.5, 0.3, 0.1, 0.01, 1e-4, 2.0**-40)]


@pytest.mark.parametrize("m,p", GRID, ids=[f"m{m}-p{p}" for m, p in GRID])
def test_three_routes_agree_to_12_digits_on_every_pair(m, p):
    # every (y_d, y_x): includes y_d = 0, y_d = m−1, y_x = 0, y_x = m, c = 0 (y_d + y_x = m), c < 0
    pairs = [(yd, yx) for yd in range(m) for yx in range(m + 1)]
    if len(pairs) > 400:
        pairs = [(yd, yx) for yd, yx in pairs if yd in (0, 1, m // 2, m - 2, m - 1) or yx in (0, m - yd - 1, m - yd, m)]
    for y_d, y_x in pairs:
        r = compare_routes(m, p, y_d, y_x)
        assert r.agree, (y_d, y_x, float(r.exact), float(r.hyp2f1), float(r.continued_fraction))
        assert ("complement" in r.hyp2f1_route) == (y_d + y_x >= m)


def test_continued_fraction_in_exact_arithmetic_is_exact_from_termination_depth():
    m, p = 9, 0.15
    for y_d in range(m):
        for y_x in range(m + 1):
            v, _ = loss_ratio_continued_fraction(m, p, y_d, y_x, exact=True)
            assert v == loss_ratio_exact(m, p, y_d, y_x)


def test_truncated_continued_fraction_is_not_exact():
    m, p, y_d, y_x = 30, 0.1, 10, 12
    assert cf_termination_depth(y_d, y_x) > 3
    v, route = loss_ratio_continued_fraction(m, p, y_d, y_x, depth=2, exact=True)
    assert "depth 2" in route and v != loss_ratio_exact(m, p, y_d, y_x)


def test_documents_final_ratio_line_missing_the_denominator_is_wrong():
    # the document's last displayed line: E1/E2 = (m−y_d−y_x)/(m−y_d) · 2F1(a,b;c;z)
    m, p, y_d, y_x = 12, 0.2, 3, 4
    z = (Fraction(4)) ** 2
    a, b, c = -y_d - 1, -y_x, m - y_x - y_d
    with mpmath.workprec(200):
        wrong = Fraction(1, 4) * Fraction(m - y_d - y_x, m - y_d) * mpf_to_fraction(
            mpmath.hyp2f1(a, b, c, mpmath.mpf(16)))
    assert z == 16
    assert abs(wrong - loss_ratio_exact(m, p, y_d, y_x)) > Fraction(1, 10)


def test_hyp2f1_route_reports_complement_at_c_zero():
    _, route = loss_ratio_hyp2f1(6, 0.25, 2, 4)  # c = 6 − 4 − 2 = 0
    assert "complement" in route


@pytest.mark.parametrize("kwargs,exc,text", [
    (dict(n_bit=0, flip_prob=0.1, y_d=0, y_x=0), ValueError, "n_bit=0 must be in [1,"),
    (dict(n_bit=5, flip_prob=0.6, y_d=0, y_x=0), ValueError, "flip_prob=0.6 must be in (0, 1/2]"),
    (dict(n_bit=5, flip_prob=0.0, y_d=0, y_x=0), ValueError, "flip_prob=0.0 must be in (0, 1/2]"),
    (dict(n_bit=5, flip_prob=float("nan"), y_d=0, y_x=0), ValueError, "NaN"),
    (dict(n_bit=5, flip_prob=0.1, y_d=5, y_x=0), ValueError, "y_d=5 must be in [0, 4]"),
    (dict(n_bit=5, flip_prob=0.1, y_d=0, y_x=6), ValueError, "y_x=6 must be in [0, 5]"),
    (dict(n_bit=5.0, flip_prob=0.1, y_d=0, y_x=0), TypeError, "n_bit=5.0 must be an int"),
])
def test_bad_parameters_raise(kwargs, exc, text):
    with pytest.raises(exc) as e:
        loss_ratio_exact(**kwargs)
    assert text in str(e.value)


def test_one_bf_privacy_pure_is_ln_q_over_p_and_hockey_is_pinned_from_both_sides():
    m, p, delta = 12, 0.1, 1e-3
    res = one_bf_privacy(m, p, delta)
    assert res.max_pure == ln_up(Fraction(9) * Fraction(0.9) / Fraction(0.9) * Fraction(0.1) / Fraction(p))
    pmfs = [brute_pmf(m, y, p) if m <= 12 else None for y in range(m + 1)]
    for y_d, eps in enumerate(res.eps_hockey):
        lo, hi = pmfs[y_d], pmfs[y_d + 1]

        def delta_at(e, a=lo, b=hi):
            c = mpmath.e ** e
            return max(sum(max(0, float(x) - c * float(y)) for x, y in zip(a, b, strict=True)),
                       sum(max(0, float(y) - c * float(x)) for x, y in zip(a, b, strict=True)))

        assert delta_at(eps) <= delta * (1 + 1e-9)
        if eps > 1e-6:
            assert delta_at(eps - 1e-6) > delta
        # the quantile rule (probabilistic DP) is never below the hockey-stick ε
        assert res.eps_quantile[y_d] >= eps - 1e-12
    assert res.max_pure <= math.log(9) + 1e-12


@pytest.mark.parametrize("y_d,y_x", [(0, 1_000), (4_999, 5_000), (2_000, 7_000), (9_998, 9_999), (7, 2)])
def test_certified_enclosure_agrees_with_continued_fraction_route_at_m_ten_thousand(y_d, y_x):
    """At m = 10^4 (beyond exact rationals in practice) the terminating continued fraction at 512 bits agrees with
    the certified enclosure to 1e-30 relative. (mpmath's hyp2f1 cannot evaluate (2000, 7000) at this m: its
    transformation for z = 81 does not converge, so the ₂F₁ route is no reference here.)"""
    from vetdp.buffling.certified import ratio_enclosure

    m, p = 10_000, 0.1
    enc = ratio_enclosure(y_d, y_x, p, m)
    value, route = loss_ratio_continued_fraction(m, p, y_d, y_x, prec=512)
    assert abs(mpf_to_fraction(value) - enc.mid) / enc.mid < Fraction(1, 10**30), route
    assert enc.rel_width < Fraction(1, 10**30)
