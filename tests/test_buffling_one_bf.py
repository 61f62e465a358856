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


# ---------------------------------------------------------------- per-y_d ε(δ), certified at scale (one_bf_delta)

def _exact_rows(m: int, y_d: int, p: float) -> tuple[list[int], list[int], int]:
    """den^m·f(· | y_d), den^m·f(· | y_d + 1) and den^m: integer convolutions of two binomial rows."""
    a, den = Fraction(p).as_integer_ratio()
    b = den - a

    def row(n: int) -> list[int]:  # den^m · Pr[Bin(n, q) + Bin(m − n, p) = y]
        c1 = [math.comb(n, i) * b**i * a ** (n - i) for i in range(n + 1)]
        c2 = [math.comb(m - n, j) * a**j * b ** (m - n - j) for j in range(m - n + 1)]
        out = [0] * (m + 1)
        for i, x in enumerate(c1):
            for j, y in enumerate(c2):
                out[i + j] += x * y
        return out

    return row(y_d), row(y_d + 1), den**m


def _exact_delta(rows: tuple[list[int], list[int], int], t: Fraction) -> Fraction:
    """max(Σ(P − tQ)₊, Σ(Q − tP)₊) exactly, in integers over den^m·(denominator of t)."""
    p_row, q_row, s = rows
    tn, td = t.numerator, t.denominator
    one = sum(x * td - tn * y for x, y in zip(p_row, q_row, strict=True) if x * td > tn * y)
    two = sum(y * td - tn * x for x, y in zip(p_row, q_row, strict=True) if y * td > tn * x)
    return Fraction(max(one, two), s * td)


ONE_BF_EPS_CASES = [(10, 0, 0.1, 1e-6), (10, 3, 0.1, 1e-6), (60, 20, 0.3, 1e-6), (60, 59, 0.3, 1e-3),
                    (100, 0, 0.2, 1e-6), (100, 33, 0.2, 1e-9), (100, 50, 0.45, 1e-2), (100, 50, 0.45, 1e-4),
                    (400, 150, 0.25, 1e-6),
                    (7, 2, 2.0**-40, 1e-6)]


@pytest.mark.parametrize("m,y_d,p,delta", ONE_BF_EPS_CASES, ids=[f"m{c[0]}-yd{c[1]}-p{c[2]}-d{c[3]}"
                                                                  for c in ONE_BF_EPS_CASES])
def test_one_bf_epsilon_bracket_is_pinned_by_exact_rationals(m, y_d, p, delta):
    """δ(upper) <= δ and δ(lower) >= δ, decided on exact rationals (e^ε bracketed rationally)."""
    from vetdp.arith.rounding import exp_bracket
    from vetdp.buffling.one_bf_delta import one_bf_epsilon

    r = one_bf_epsilon(m, y_d, p, delta)
    rows = _exact_rows(m, y_d, p)
    dq = Fraction(delta)
    if r.upper == 0:  # ε = 0: total variation already <= δ
        assert _exact_delta(rows, Fraction(1)) <= dq and (m, p, delta) == (100, 0.45, 1e-2)
        return
    assert r.relative_width < 1e-6
    assert _exact_delta(rows, exp_bracket(Fraction(r.upper), 96)[0]) <= dq  # δ falls in t: t below e^upper
    assert _exact_delta(rows, exp_bracket(Fraction(r.lower), 96)[1]) >= dq
    if m <= 100:  # the exact-rational route of one_bf_privacy (an upper float on the same ε) lies inside
        ex = one_bf_privacy(m, p, delta, y_d=[y_d]).eps_hockey[0]
        assert r.lower <= ex and ex - r.upper <= 1e-12 * ex


@pytest.mark.parametrize("eps", [0.0, 0.05, 0.3, 1.0, 2.5])
def test_one_bf_delta_brackets_exact_delta(eps):
    from vetdp.arith.rounding import exp_bracket
    from vetdp.buffling.one_bf_delta import one_bf_delta

    m, y_d, p = 80, 30, 0.15
    lo, hi = one_bf_delta(m, y_d, p, eps)
    rows = _exact_rows(m, y_d, p)
    t_lo, t_hi = exp_bracket(Fraction(eps), 96) if eps else (Fraction(1), Fraction(1))
    assert Fraction(lo) <= _exact_delta(rows, t_hi) and _exact_delta(rows, t_lo) <= Fraction(hi)
    assert hi - lo <= 1e-9 * hi + 1e-38  # the mass beyond the windows (floor 1e-40) is charged to hi


def test_one_bf_epsilon_at_a_million_bits_is_self_consistent():
    from vetdp.buffling.one_bf_delta import one_bf_delta, one_bf_epsilon

    m, p, delta = 10**6, 0.1, 1e-6
    for y_d in (0, m // 2, m - 1):
        r = one_bf_epsilon(m, y_d, p, delta)
        assert 0 < r.lower <= r.upper and r.relative_width < 1e-6
        assert one_bf_delta(m, y_d, p, r.upper)[1] <= delta < one_bf_delta(m, y_d, p, r.lower)[0] * (1 + 1e-6)
    # symmetry: complementing every bit maps y_d to m − 1 − y_d and leaves ε unchanged
    a, b = one_bf_epsilon(m, 0, p, delta), one_bf_epsilon(m, m - 1, p, delta)
    assert a.lower <= b.upper and b.lower <= a.upper


def test_one_bf_epsilon_sharper_p_has_smaller_epsilon_and_bad_inputs_raise():
    from vetdp.buffling.one_bf_delta import one_bf_epsilon

    assert one_bf_epsilon(1000, 500, 0.3, 1e-6).upper < one_bf_epsilon(1000, 500, 0.1, 1e-6).lower
    assert one_bf_epsilon(1000, 500, 0.5, 1e-6).upper == 0.0
    with pytest.raises(ValueError, match=r"y_d=10 must be in \[0, 9\]"):
        one_bf_epsilon(10, 10, 0.1, 1e-6)
    with pytest.raises(ValueError, match="rel_tol=0.5 must be in"):
        one_bf_epsilon(10, 1, 0.1, 1e-6, rel_tol=0.5)
    with pytest.raises(ValueError, match="delta=1.0"):
        one_bf_epsilon(10, 1, 0.1, 1.0)


def test_one_bf_delta_public_names_exist():
    import vetdp.buffling.one_bf_delta as mod

    assert mod.__all__ and all(hasattr(mod, name) for name in mod.__all__)
