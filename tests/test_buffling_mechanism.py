"""The buffling mechanism (exact law by enumeration), the heuristic test, the simulation and the search."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

from vetdp.buffling.heuristic import test_heuristic as run_heuristic
from vetdp.buffling.montecarlo import simulate_many_bf
from vetdp.buffling.search import estimate_flip_prob
from vetdp.engine.enumerate import output_distribution
from vetdp.impl.buffling import logo_counts, make_buffling
from vetdp.sampling import SeededSource, use_source


def test_mechanism_law_is_flip_then_uniform_shuffle():
    k, m, p = 2, 3, 0.25
    mech = make_buffling(k, m, p)
    x = ((1, 0, 0), (1, 1, 0))
    law = output_distribution(mech, np.array(x))
    assert sum(law.values()) == 1
    fp = Fraction(p)
    expected: dict = {}
    for flips in itertools.product((0, 1), repeat=k * m):
        pr = Fraction(1)
        for f in flips:
            pr *= fp if f else 1 - fp
        rows = [[x[b][c] ^ flips[b * m + c] for c in range(m)] for b in range(k)]
        for perm in itertools.permutations(range(m)):
            out = tuple(tuple(bool(rows[b][perm[c]]) for c in range(m)) for b in range(k))
            expected[out] = expected.get(out, Fraction(0)) + pr / 6
    assert law == expected


def test_batch_path_flips_at_the_stated_rate_and_keeps_column_multisets():
    mech = make_buffling(3, 2000, 0.125)
    x = np.zeros((3, 2000), dtype=bool)
    with use_source(SeededSource(7)):
        out = mech.batch([x])
    assert out.shape == (1, 3, 2000)
    rate = out.mean()
    assert abs(rate - 0.125) < 5 * (0.125 * 0.875 / 6000) ** 0.5  # seeded: deterministic
    no_noise = make_buffling(2, 5, 0.5)
    y = np.array([[1, 1, 0, 0, 0], [1, 0, 0, 0, 0]], dtype=bool)
    assert [sum(logo_counts(one)) for one in no_noise.batch([y, y, y])] == [5, 5, 5]  # one permutation each
    assert no_noise.batch([]).shape == (0, 2, 5)


@pytest.mark.parametrize("kwargs,exc,text", [
    (dict(n_pub=0, n_bit=3, flip_prob=0.1), ValueError, "n_pub=0 must be in [1, 16]"),
    (dict(n_pub=2, n_bit=3, flip_prob=0.51), ValueError, "flip_prob=0.51 must be in (0, 0.5]"),
    (dict(n_pub=2, n_bit="3", flip_prob=0.1), TypeError, "n_bit='3' must be an int"),
])
def test_make_buffling_rejects_bad_parameters(kwargs, exc, text):
    with pytest.raises(exc) as e:
        make_buffling(**kwargs)
    assert text in str(e.value)


def test_map_is_an_upper_bound_on_k_ln_q_over_p():
    import mpmath
    b = make_buffling(3, 4, 0.1)
    assert b.map(0) == 0.0 and b.map(2) >= 2 * b.map(1)
    with mpmath.workprec(200):
        truth = 3 * mpmath.log(mpmath.mpf(Fraction(0.9).numerator) / Fraction(0.9).denominator
                                / (mpmath.mpf(Fraction(0.1).numerator) / Fraction(0.1).denominator))
        assert mpmath.mpf(b.map(1)) >= truth
        assert mpmath.mpf(b.map(1)) - truth < 1e-14


def ones_law(zeros: int, ones: int, p: Fraction) -> list[Fraction]:
    """Law of the number of output ones for k = 1 (one publisher), by convolving Bernoullis."""
    law = [Fraction(1)]
    for bit in [0] * zeros + [1] * ones:
        q1 = 1 - p if bit else p
        law = [(law[y] if y < len(law) else 0) * (1 - q1) + (law[y - 1] * q1 if y >= 1 else 0)
               for y in range(len(law) + 1)]
    return law


def tv(a: list[Fraction], b: list[Fraction]) -> Fraction:
    return sum((x - y for x, y in zip(a, b, strict=True) if x > y), Fraction(0))


def test_heuristic_holds_for_k2_m3_and_fails_for_total_variation_at_k1_m3():
    assert run_heuristic(2, 3, 0.1).holds
    p = Fraction(1, 4)
    r = run_heuristic(1, 3, 0.25)
    bad = [v for v in r.verdicts if not v.holds]
    assert [v.metric for v in bad] == ["delta@e^eps=1"]
    heuristic_tv = tv(ones_law(2, 1, p), ones_law(3, 0, p))
    other_tv = tv(ones_law(1, 2, p), ones_law(2, 1, p))
    assert bad[0].heuristic == heuristic_tv == Fraction(9, 32)
    assert bad[0].worst == other_tv == Fraction(5, 16)
    assert bad[0].worst_pair == ((1, 2), (2, 1))


def test_simulation_is_reproducible_and_its_interval_covers_the_certified_quantile():
    a = simulate_many_bf(6, 100_000, 0.2, 1e-3, n_simu=20_000, seed=3)
    b = simulate_many_bf(6, 100_000, 0.2, 1e-3, n_simu=20_000, seed=3)
    assert a.q_high_dp == b.q_high_dp and a.q_low_d == b.q_low_d
    lo, hi = a.epsilon_ci
    assert lo <= 0.3383 and hi >= 0.3361  # certified quantile-rule ε in [0.33614, 0.33832]
    tiny = simulate_many_bf(3, 50, 0.2, 1e-6, n_simu=1000, seed=3)
    assert tiny.q_high_dp_ci[1] == float("inf")  # 1000 draws say nothing at δ = 1e-6


def test_estimate_flip_prob_exact_is_certified_and_monotone_bracketed():
    r = estimate_flip_prob(4, 2000, 1.0, 1e-5, rel_tol=1e-2, grid_bits=16)
    assert r.delta_upper_at_result <= 1e-5
    assert r.infeasible_below < r.flip_prob <= r.infeasible_below * 1.02 + 1e-12
    with pytest.raises(ValueError, match="method='mc' must be one of"):
        estimate_flip_prob(4, 2000, 1.0, 1e-5, method="mc")


def _logo_law(k: int, logos: list[int], p: Fraction) -> dict:
    """Output logo-count law by enumerating each column's k flips (independent of vetdp.buffling)."""
    law: dict = {tuple([0] * (1 << k)): Fraction(1)}
    for lg in logos:
        new: dict = {}
        for flips in itertools.product((0, 1), repeat=k):
            pr = math.prod((p if f else 1 - p) for f in flips)
            out = lg ^ sum(f << b for b, f in enumerate(flips))
            for f, q in law.items():
                g = f[:out] + (f[out] + 1,) + f[out + 1:]
                new[g] = new.get(g, Fraction(0)) + q * pr
        law = new
    return law


def _delta(a: dict, b: dict, c: Fraction) -> Fraction:
    return sum((b[f] - c * a[f] for f in a if b[f] > c * a[f]), Fraction(0))


def test_heuristic_pair_is_beaten_at_positive_epsilon():
    # k=2, m=5, p=1/4, e^ε = 4: moving a column from logo 01 to logo 10 next to (0,1,3,1) beats the heuristic
    k, p, c = 2, Fraction(1, 4), Fraction(4)
    d0, d1 = _logo_law(k, [0] * 5, p), _logo_law(k, [0] * 4 + [3], p)
    heur = max(_delta(d0, d1, c), _delta(d1, d0, c))
    a = _logo_law(k, [1, 2, 2, 2, 3], p)  # counts (0, 1, 3, 1)
    b = _logo_law(k, [2, 2, 2, 2, 3], p)  # counts (0, 0, 4, 1)
    other = _delta(a, b, c)
    assert other > heur
    verdict = [v for v in run_heuristic(2, 5, 0.25).verdicts if v.metric == "delta@e^eps=4"][0]
    assert verdict.heuristic == heur and verdict.worst >= other
