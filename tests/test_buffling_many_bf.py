"""Part III (many Bloom filters): the loss R(g), and certified δ(ε)/ε(δ) bounds judged by enumeration."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import mpmath
import pytest

import vetdp.buffling.many_bf as many_bf
from vetdp.buffling._common import column_weight_law, loss_weights
from vetdp.buffling.bounds import many_bf_delta, many_bf_epsilon
from vetdp.buffling.many_bf import many_bf_distribution

mpmath.mp.dps = 50


def flip_row(k: int, logo: int, p: Fraction) -> list[Fraction]:
    """Pr[logo → j] by enumerating which of the k bits flip (independent of the p^H q^(k−H) formula)."""
    row = [Fraction(0)] * (1 << k)
    for flips in itertools.product((0, 1), repeat=k):
        pr = Fraction(1)
        mask = 0
        for b, f in enumerate(flips):
            pr *= p if f else 1 - p
            mask |= f << b
        row[logo ^ mask] += pr
    return row


def logo_count_law(k: int, logos: list[int], p: Fraction) -> dict[tuple[int, ...], Fraction]:
    """Law of the shuffled output's logo counts, by enumerating every output logo of every column."""
    rows = [flip_row(k, lg, p) for lg in logos]
    law: dict[tuple[int, ...], Fraction] = {}
    for outs in itertools.product(range(1 << k), repeat=len(logos)):
        pr = Fraction(1)
        for r, o in zip(rows, outs, strict=True):
            pr *= r[o]
        f = tuple(outs.count(j) for j in range(1 << k))
        law[f] = law.get(f, Fraction(0)) + pr
    return law


@pytest.mark.parametrize("k,m,p", [(2, 2, 0.25), (2, 3, 0.1), (3, 2, 0.3)])
def test_loss_is_the_mixture_of_column_ratios(k, m, p):
    fp = Fraction(p)
    law_d = logo_count_law(k, [0] * m, fp)
    law_dp = logo_count_law(k, [0] * (m - 1) + [(1 << k) - 1], fp)
    w = loss_weights(k, fp)
    for f, pr in law_d.items():
        g = [sum(c for j, c in enumerate(f) if j.bit_count() == y) for y in range(k + 1)]
        assert law_dp[f] / pr == sum(wy * gy for wy, gy in zip(w, g, strict=True)) / m


def compositions(n: int, parts: int):
    if parts == 1:
        yield (n,)
        return
    for i in range(n + 1):
        for rest in compositions(n - i, parts - 1):
            yield (i,) + rest


def brute_atoms(k: int, m: int, p: float):
    """(R, P_D, P_D') for every g, exactly."""
    fp = Fraction(p)
    pi, w = column_weight_law(k, fp), loss_weights(k, fp)
    for g in compositions(m, k + 1):
        pr = Fraction(math.factorial(m))
        for y, gy in enumerate(g):
            pr *= pi[y] ** gy / math.factorial(gy)
        r = sum(wy * gy for wy, gy in zip(w, g, strict=True)) / m
        yield r, pr, pr * r


def brute_delta(k, m, p, eps):
    c = mpmath.e ** eps
    d1 = d2 = mpmath.mpf(0)
    for _r, pd, pdp in brute_atoms(k, m, p):
        a, b = mpmath.mpf(pd.numerator) / pd.denominator, mpmath.mpf(pdp.numerator) / pdp.denominator
        d1 += max(0, a - c * b)
        d2 += max(0, b - c * a)
    return d1, d2


CASES = [(1, 1, 0.3), (2, 3, 0.25), (3, 5, 0.1), (4, 6, 0.2), (3, 20, 0.15), (2, 40, 0.05)]


@pytest.mark.parametrize("method", ["enumeration", "coupling"])
@pytest.mark.parametrize("k,m,p", CASES)
def test_delta_bounds_contain_the_enumerated_truth(monkeypatch, method, k, m, p):
    if method == "coupling":
        monkeypatch.setattr(many_bf, "EXACT_ENUMERATION_LIMIT", 0)
    dist = many_bf_distribution(k, m, p, grid_bits=16, r_cap=64)
    assert dist.method == method or (m == 1)
    for eps in (0.0, 0.3, 1.0, 2.5):
        b = many_bf_delta(dist, eps)
        d1, d2 = brute_delta(k, m, p, eps)
        assert b.d_to_dp_lower <= d1 <= b.d_to_dp_upper
        assert b.dp_to_d_lower <= d2 <= b.dp_to_d_upper


def test_enumeration_bounds_are_tight():
    dist = many_bf_distribution(3, 8, 0.2, grid_bits=20, r_cap=64)
    b = many_bf_delta(dist, 0.5)
    assert b.upper - b.lower < 1e-3


def brute_quantile_eps(k, m, p, delta):
    """The quantile rule exactly: smallest ε with Pr[L > ε] <= δ in each direction (as R thresholds)."""
    atoms = list(brute_atoms(k, m, p))
    dq = Fraction(delta)

    def q(pairs):
        cum = Fraction(0)
        for v, pr in sorted(pairs, key=lambda t: t[0], reverse=True):
            if cum + pr > dq:
                return v
            cum += pr
        return min(v for v, _ in pairs)

    r1 = q([(1 / r, pd) for r, pd, _ in atoms])  # L = −ln R under D
    r2 = q([(r, pdp) for r, _, pdp in atoms])  # L = ln R under D'
    return max(0.0, math.log(r1), math.log(r2)), math.log(r2)


@pytest.mark.parametrize("k,m,p,delta", [(2, 6, 0.2, 1e-2), (3, 7, 0.1, 1e-3), (2, 30, 0.05, 1e-4)])
def test_quantile_and_hockey_bounds_contain_the_truth(k, m, p, delta):
    dist = many_bf_distribution(k, m, p, grid_bits=20, r_cap=256)
    e = many_bf_epsilon(dist, delta)
    truth, _ = brute_quantile_eps(k, m, p, delta)
    assert e.quantile_lower - 1e-12 <= truth <= e.quantile_upper + 1e-12
    d_hi = brute_delta(k, m, p, e.hockey_upper)
    assert max(d_hi) <= delta
    if e.hockey_lower > 1e-9:
        assert max(brute_delta(k, m, p, e.hockey_lower * (1 - 1e-9))) > delta
    assert e.quantile_upper >= e.hockey_lower  # probabilistic DP implies (ε, δ)-DP, never the reverse


def test_literal_quantile_rule_understates_epsilon():
    # read literally, the first term is a lower quantile of ln R under D; the D → D' direction is lost
    dist = many_bf_distribution(3, 100, 0.1)
    e = many_bf_epsilon(dist, 1e-6)
    assert dist.method == "coupling"
    assert e.literal_quantile_upper < e.hockey_lower
    assert many_bf_delta(dist, e.literal_quantile_upper).lower > 1e-6


def test_k6_m1e5_is_tight_and_fast():
    dist = many_bf_distribution(6, 100_000, 0.2)
    e = many_bf_epsilon(dist, 1e-6)
    assert e.hockey_upper - e.hockey_lower < 5e-3
    assert e.hockey_upper < e.quantile_lower


@pytest.mark.parametrize("kwargs,text", [
    (dict(n_pub=0, n_bit=5, flip_prob=0.1), "n_pub=0 must be in [1, 16]"),
    (dict(n_pub=2, n_bit=0, flip_prob=0.1), "n_bit=0 must be in [1,"),
    (dict(n_pub=2, n_bit=5, flip_prob=0.75), "flip_prob=0.75 must be in (0, 1/2]"),
    (dict(n_pub=2, n_bit=5, flip_prob=0.1, r_cap=1.0), "r_cap=1.0 must be in [2, 2**40]"),
])
def test_bad_parameters_raise(kwargs, text):
    with pytest.raises(ValueError) as e:
        many_bf_distribution(**kwargs)
    assert text in str(e.value)


def test_bad_delta_and_epsilon_raise():
    dist = many_bf_distribution(2, 3, 0.2, grid_bits=10, r_cap=8)
    with pytest.raises(ValueError, match=r"delta=0.0 must be in \(0, 1\)"):
        many_bf_epsilon(dist, 0.0)
    with pytest.raises(ValueError, match=r"epsilon=-1.0 must be in \[0, inf\)"):
        many_bf_delta(dist, -1.0)
