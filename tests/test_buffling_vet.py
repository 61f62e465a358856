"""Certified one-filter values at the seed's scales, and ``vetdp buffling vet`` on user functions."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from click.testing import CliRunner
from scipy import special, stats

from vetdp.buffling.certified import Enclosure, log_factorial, pmf_enclosure, ratio_enclosure
from vetdp.buffling.one_bf import loss_ratio_exact, one_bf_pmf
from vetdp.buffling.vet import as_fraction, judge, pmf_points, ratio_points, vet_epsilon, vet_pmf, vet_ratio
from vetdp.cli.buffling import buffling
from vetdp.engine.results import Status

# ------------------------------------------------------------------ user functions written here, independently


def exact_ratio(y_d, y_x, p, m):
    """R(y_x | y_d) from the convolution sum in exact rationals (slow: for small m)."""
    fp = Fraction(p)
    fq = 1 - fp

    def f(n):
        return sum(math.comb(n, i) * fq**i * fp ** (n - i) * math.comb(m - n, y_x - i) * fp ** (y_x - i)
                   * fq ** (m - n - y_x + i) for i in range(max(0, y_x - (m - n)), min(n, y_x) + 1))

    return f(y_d + 1) / f(y_d)


def exact_pmf(y_x, y_d, p, m):
    fp = Fraction(p)
    fq = 1 - fp
    return sum(math.comb(y_d, i) * fq**i * fp ** (y_d - i) * math.comb(m - y_d, y_x - i) * fp ** (y_x - i)
               * fq ** (m - y_d - y_x + i) for i in range(max(0, y_x - (m - y_d)), min(y_d, y_x) + 1))


def swapped_ratio(y_d, y_x, p, m):
    """Typo: p and q exchanged."""
    return exact_ratio(y_d, y_x, 1 - p, m) if p != 0.5 else 1.0


def off_by_one_ratio(y_d, y_x, p, m):
    """Typo: f(y_x | y_d) / f(y_x | y_d − 1) (the neighbour on the wrong side); y_d = 0 falls back to y_d."""
    return exact_ratio(max(y_d - 1, 0), y_x, p, m)


def scipy_ratio(y_d, y_x, p, m):
    """Float64 through scipy's binomial pmfs: accurate in the bulk, 0/0 where the pmfs underflow."""
    q = 1 - p
    i = np.arange(0, y_d + 1)

    def g(y):  # law of Bin(y_d, q) + Bin(m − 1 − y_d, p) at y
        return float(np.sum(stats.binom.pmf(i, y_d, q) * stats.binom.pmf(y - i, m - 1 - y_d, p)))

    g1, g0 = g(y_x - 1), g(y_x)
    return (q * g1 + p * g0) / (p * g1 + q * g0)


def lgamma_ratio(y_d, y_x, p, m):
    """Log-space float64 (gammaln, logsumexp): finite everywhere, loses digits as ln C(m, ·) grows with m."""
    q = 1 - p

    def logf(n):
        i = np.arange(max(0, y_x - (m - n)), min(n, y_x) + 1)
        lc = (special.gammaln(n + 1) - special.gammaln(i + 1) - special.gammaln(n - i + 1)
              + special.gammaln(m - n + 1) - special.gammaln(y_x - i + 1) - special.gammaln(m - n - y_x + i + 1))
        return special.logsumexp(lc + (n + y_x - 2 * i) * np.log(p) + (m - n - y_x + 2 * i) * np.log(q))

    return float(np.exp(logf(y_d + 1) - logf(y_d)))


def seed_cf_ratio(y_d, y_x, p, m, depth=1000):
    """The seed's procedure: Gauss's continued fraction in float64 with T = 1000 levels."""
    q = 1 - p
    yd, yx, comp = (y_d, y_x, False) if y_d + y_x <= m - 1 else (m - y_d - 1, m - y_x, True)
    a, b, c, z = -yd - 1, -yx, m - yx - yd, (q / p) ** 2
    f = 1.0
    for i in range(depth - 1, -1, -1):
        h = (i + 1) // 2 if i % 2 else i // 2
        k = ((b - c - h) * (a + h) if i % 2 else (a - c - h) * (b + h)) / ((c + i) * (c + i + 1))
        f = 1 + k * z / f
    ratio = (m - yd - yx) / (m - yd) * f
    return p / q * (z / ratio if comp else ratio)


def mp_full_pmf(y, n, p, m, prec=200):
    """f(y | n) by mpmath: loggamma for the first term, then every term of the support by the term ratio."""
    with mpmath.workprec(prec):
        fp = mpmath.mpf(Fraction(p).numerator) / Fraction(p).denominator
        fq = 1 - fp
        lo, hi = max(0, y - (m - n)), min(n, y)

        def log_term(i):
            return (mpmath.loggamma(n + 1) - mpmath.loggamma(i + 1) - mpmath.loggamma(n - i + 1)
                    + mpmath.loggamma(m - n + 1) - mpmath.loggamma(y - i + 1) - mpmath.loggamma(m - n - y + i + 1)
                    + (n + y - 2 * i) * mpmath.log(fp) + (m - n - y + 2 * i) * mpmath.log(fq))

        z = (fq / fp) ** 2
        t, total = mpmath.mpf(1), mpmath.mpf(1)
        for i in range(lo, hi):
            t *= mpmath.mpf((n - i) * (y - i)) / ((i + 1) * (m - n - y + i + 1)) * z
            total += t
        return mpmath.exp(log_term(lo)) * total


# ------------------------------------------------------------------ the certified evaluator


@pytest.mark.parametrize("p", [0.1, 0.3, 0.5, 2.0**-20, 0.4999], ids=lambda p: f"p={p}")
@pytest.mark.parametrize("m", [1, 2, 7, 24])
def test_certified_encloses_exact_rationals_on_every_point(m, p):
    rows = [one_bf_pmf(m, y_d, p) for y_d in range(m + 1)]
    for y_d in range(m + 1):
        for y_x in range(m + 1):
            f = pmf_enclosure(y_x, y_d, p, m)
            assert f.contains(rows[y_d][y_x]), (y_d, y_x)
            assert f.rel_width < Fraction(1, 10**30)
            if y_d < m:
                r = ratio_enclosure(y_d, y_x, p, m)
                assert r.contains(loss_ratio_exact(m, p, y_d, y_x)), (y_d, y_x)
                assert r.rel_width < Fraction(1, 10**30)


def test_certified_encloses_exact_at_m_60_sampled():
    m, p = 60, 0.15
    for y_d in (0, 1, 17, 30, 58, 59):
        for y_x in (0, 1, 5, 9, 30, 44, 59, 60):
            assert ratio_enclosure(y_d, y_x, p, m).contains(loss_ratio_exact(m, p, y_d, y_x)), (y_d, y_x)


def test_certified_low_precision_still_encloses():
    """prec only sets the width: at 53 bits the enclosure is wider and still holds."""
    m, p = 24, 0.1
    for y_d, y_x in [(0, 0), (3, 20), (12, 12), (23, 24)]:
        r = ratio_enclosure(y_d, y_x, p, m, prec=53)
        assert r.contains(loss_ratio_exact(m, p, y_d, y_x)) and r.rel_width > Fraction(1, 10**30)


def _inside(enc: Enclosure, truth: mpmath.mpf) -> bool:
    """truth (an mpmath value good to ~60 digits) lies in the enclosure, up to 1e-40 of its own error."""
    with mpmath.workprec(300):
        lo = mpmath.mpf(enc.lo.numerator) / enc.lo.denominator
        hi = mpmath.mpf(enc.hi.numerator) / enc.hi.denominator
        return lo * (1 - mpmath.mpf(10) ** -40) <= truth <= hi * (1 + mpmath.mpf(10) ** -40)


@pytest.mark.parametrize("y_d,y_x", [(3, 100_002), (999_998, 999_990), (500_000, 500_000), (0, 0)])
def test_certified_at_one_million_against_full_mpmath_sum(y_d, y_x):
    m, p = 10**6, 0.1
    f0, f1 = mp_full_pmf(y_x, y_d, p, m), mp_full_pmf(y_x, y_d + 1, p, m)
    r = ratio_enclosure(y_d, y_x, p, m)
    with mpmath.workprec(200):
        assert _inside(r, f1 / f0)
    e = pmf_enclosure(y_x, y_d, p, m)
    assert _inside(e, f0)
    assert r.rel_width < Fraction(1, 10**28) and e.rel_width < Fraction(1, 10**28)


def test_certified_edges_are_exactly_p_over_q_and_q_over_p():
    m, p = 10**6, 0.25
    fp = Fraction(p)
    for y_d in (0, m // 2, m - 1):
        assert ratio_enclosure(y_d, 0, p, m).contains(fp / (1 - fp))
        assert ratio_enclosure(y_d, m, p, m).contains((1 - fp) / fp)


def test_log_factorial_encloses_exact_beyond_the_table():
    for k in (1001, 5000, 123_457):
        with mpmath.workprec(400):
            truth = mpmath.loggamma(k + 1)
        enc = log_factorial(k)
        assert enc.a <= truth <= enc.b


@pytest.mark.parametrize("bad,err", [
    (dict(y_d=10), "y_d=10 must be in"), (dict(y_x=11), "y_x=11 must be in"), (dict(flip_prob=0.6), "flip_prob"),
    (dict(n_bit=0), "n_bit=0"), (dict(prec=8), "prec=8"), (dict(n_bit=10**8), "n_bit=100000000"),
])
def test_certified_rejects_bad_parameters(bad, err):
    args = dict(y_d=1, y_x=2, flip_prob=0.1, n_bit=10, prec=128) | bad
    with pytest.raises(ValueError, match=err):
        ratio_enclosure(**args)


def test_enclosure_rejects_empty_interval():
    with pytest.raises(ArithmeticError):
        Enclosure(Fraction(2), Fraction(1))


# ------------------------------------------------------------------ the grid


def test_grid_covers_the_square():
    m, p = 10**6, 0.1
    pts = ratio_points(m, p)
    cells = {(d, x) for d, x, _ in pts}
    for corner in [(0, 0), (0, m), (m - 1, 0), (m - 1, m)]:
        assert corner in cells
    top = m - 1
    assert {d for d, _ in cells} >= {0, 1, top // 10, top // 2, top - 1, top}
    regions = " ".join(r for _, _, r in pts)
    for word in ("diagonal", "bulk", "tail mean+30σ", "tail mean-30σ", "edge y_x=m"):
        assert word in regions
    assert all(0 <= d <= m - 1 and 0 <= x <= m for d, x in cells)
    assert max(d for d, _, _ in pmf_points(m, p)) == m


# ------------------------------------------------------------------ judging values


def test_judge_decides_on_the_tolerance_band():
    enc = Enclosure(Fraction(1), Fraction(1))
    tol = Fraction(1, 10**9)
    assert judge(1.0 + 0.9e-9, enc, tol)[2] is None
    assert "above" in judge(1.0 + 1.1e-9, enc, tol)[2]
    assert "below" in judge(1.0 - 1.1e-9, enc, tol)[2]
    assert judge(float("nan"), enc, tol)[2] == "returned nan"
    assert judge(float("inf"), enc, tol)[2] == "returned inf"
    assert "not a number" in judge("1.0", enc, tol)[2]
    assert "bool" in judge(True, enc, tol)[2]


def test_as_fraction_takes_the_usual_number_types():
    from decimal import Decimal

    assert as_fraction(mpmath.mpf(0.375)) == Fraction(3, 8)
    assert as_fraction(np.float64(0.1)) == Fraction(0.1)
    assert as_fraction(Decimal("0.1")) == Fraction(1, 10)
    assert as_fraction(Fraction(1, 3)) == Fraction(1, 3)


# ------------------------------------------------------------------ vetting user functions


@pytest.mark.parametrize("m", [10, 60])
@pytest.mark.parametrize("p", [0.1, 0.3])
def test_vet_correct_ratio_passes(m, p):
    r = vet_ratio(exact_ratio, m, p)
    assert r.status is Status.PASS, r.message
    assert r.witness["points"] >= 30 and r.witness["outside"] == []
    assert r.witness["worst"]["rel_error"] < 1e-30


def test_vet_swapped_p_q_fails_naming_points():
    r = vet_ratio(swapped_ratio, 10, 0.1)
    assert r.status is Status.FAIL
    outside = {(pt["y_d"], pt["y_x"]) for pt in r.witness["outside"]}
    assert (0, 0) in outside and (9, 10) in outside  # p/q and q/p exchanged at the corners
    assert "y_d=" in r.message and "--impl" in r.repro and "--scales 10" in r.repro


def test_vet_off_by_one_fails_exactly_off_the_edges():
    """R(0 | y_d) = p/q and R(m | y_d) = q/p for every y_d, so the shifted y_d is caught everywhere else."""
    m = 10
    r = vet_ratio(off_by_one_ratio, m, 0.1)
    assert r.status is Status.FAIL
    outside = {(pt["y_d"], pt["y_x"]) for pt in r.witness["outside"]}
    expected = {(d, x) for d, x, _ in ratio_points(m, 0.1) if d > 0 and 0 < x < m}
    assert outside == expected and (4, 4) in outside


def test_vet_scipy_ratio_fails_at_large_m_where_pmfs_underflow():
    assert vet_ratio(scipy_ratio, 100, 0.1).status is Status.PASS
    r = vet_ratio(scipy_ratio, 10**4, 0.1, quick=True)
    assert r.status is Status.FAIL
    problems = {pt["problem"] for pt in r.witness["outside"]}
    assert any("ZeroDivisionError" in pr for pr in problems)
    assert (0, 0) in {(pt["y_d"], pt["y_x"]) for pt in r.witness["outside"]}


def test_vet_float_naive_loses_accuracy_at_one_million():
    small = vet_ratio(lgamma_ratio, 1000, 0.1)
    assert small.status is Status.PASS
    big = vet_ratio(lgamma_ratio, 10**6, 0.1, quick=True)
    assert big.status is Status.FAIL
    worst = big.witness["worst"]["rel_error"]
    assert 1e-9 < worst < 1e-6  # finite values, digits lost to ln C(10^6, ·) in float64
    assert all(pt["value"] is not None for pt in big.witness["outside"])
    assert f"{worst:.3g}" in big.message


def test_vet_seed_continued_fraction_depth_1000_is_wrong_at_scale():
    assert vet_ratio(seed_cf_ratio, 100, 0.1).status is Status.PASS
    r = vet_ratio(seed_cf_ratio, 10**4, 0.1)
    assert r.status is Status.FAIL and r.witness["worst"]["rel_error"] > 1e-6
    assert any(pt["region"].startswith("diagonal") for pt in r.witness["outside"])


@pytest.mark.parametrize("bad,problem", [(float("nan"), "returned nan"), (float("-inf"), "returned -inf"),
                                         ("x", "not a number")])
def test_vet_bad_return_values_are_failures(bad, problem):
    r = vet_ratio(lambda y_d, y_x, p, m: bad if (y_d, y_x) == (4, 4) else exact_ratio(y_d, y_x, p, m), 10, 0.1)
    assert r.status is Status.FAIL
    [pt] = r.witness["outside"]
    assert (pt["y_d"], pt["y_x"]) == (4, 4) and problem in pt["problem"]


def test_vet_raising_function_is_a_failure_not_an_engine_error():
    def boom(y_d, y_x, p, m):
        raise RuntimeError("library broke")

    r = vet_ratio(boom, 10, 0.1)
    assert r.status is Status.FAIL and len(r.witness["outside"]) == r.witness["points"]
    assert "raised RuntimeError: library broke" in r.message


def test_vet_correct_pmf_passes_and_swapped_arguments_fail():
    assert vet_pmf(exact_pmf, 12, 0.2).status is Status.PASS
    r = vet_pmf(lambda y_x, y_d, p, m: exact_pmf(y_d, y_x, p, m), 12, 0.2)
    assert r.status is Status.FAIL and r.witness["outside"]


def test_vet_pmf_skips_points_below_float_range_and_counts_them():
    def scipy_pmf(y_x, y_d, p, m):
        i = np.arange(0, y_d + 1)
        return float(np.sum(stats.binom.pmf(i, y_d, 1 - p) * stats.binom.pmf(y_x - i, m - y_d, p)))

    r = vet_pmf(scipy_pmf, 10**4, 0.1, quick=True)
    assert r.witness["skipped"] > 0 and "skipped" in r.message
    assert r.status is Status.PASS, r.message


def test_vet_epsilon_against_closed_form_for_one_bit():
    """k = 1, m = 1 is binary randomized response: ε(δ) = ln((q − δ)/p) exactly."""
    p, delta = 0.1, 1e-6

    def closed(k, m, p, delta):
        return math.log((1 - p - delta) / p)

    assert vet_epsilon(closed, 1, 1, p, delta).status is Status.PASS
    r = vet_epsilon(lambda k, m, p, d: closed(k, m, p, d) * 1.01, 1, 1, p, delta)
    assert r.status is Status.FAIL and "outside" not in r.message and "bracket" in r.message
    r = vet_epsilon(lambda k, m, p, d: float("nan"), 1, 1, p, delta)
    assert r.status is Status.FAIL and r.witness["problem"] == "returned nan"


def test_vet_epsilon_rejects_unknown_kind():
    with pytest.raises(ValueError, match="kind='other'"):
        vet_epsilon(lambda *a: 1.0, 1, 1, 0.1, 1e-6, kind="other")


# ------------------------------------------------------------------ the command


IMPLS = '''
import math
from fractions import Fraction

def ratio(y_d, y_x, p, m):
    fp = Fraction(p); fq = 1 - fp
    def f(n):
        return sum(math.comb(n, i) * fq**i * fp**(n - i) * math.comb(m - n, y_x - i) * fp**(y_x - i)
                   * fq**(m - n - y_x + i) for i in range(max(0, y_x - (m - n)), min(n, y_x) + 1))
    return float(f(y_d + 1) / f(y_d))

def swapped(y_d, y_x, p, m):
    return ratio(y_d, y_x, 1 - p, m)

def eps(k, m, p, delta):
    return math.log((1 - p - delta) / p)

def eps_double(k, m, p, delta):
    return 2 * eps(k, m, p, delta)

NOT_CALLABLE = 3
'''


@pytest.fixture
def impls(tmp_path):
    path = tmp_path / "user_impls.py"
    path.write_text(IMPLS)
    return str(path)


def vet_cli(*args):
    return CliRunner().invoke(buffling, ["vet", *args])


def test_cli_vet_correct_ratio_exit_0_with_reports(impls, tmp_path):
    out, junit, md = tmp_path / "r.json", tmp_path / "r.xml", tmp_path / "r.md"
    r = vet_cli("--impl", f"{impls}:ratio", "--scales", "10,40", "--flip-prob", "0.1", "--flip-prob", "0.3",
                "--json", str(out), "--junit", str(junit), "--markdown", str(md))
    assert r.exit_code == 0, r.output
    doc = json.loads(out.read_text())
    assert doc["schema_version"] == 1 and doc["command"] == "buffling vet"
    assert doc["summary"]["pass"] == 4 and doc["summary"]["total"] == 4
    assert all(res["witness"]["points"] > 20 for res in doc["results"])
    assert "testcase" in junit.read_text() and "ratio" in md.read_text()


def test_cli_vet_swapped_ratio_exit_1_names_points(impls, tmp_path):
    out = tmp_path / "r.json"
    r = vet_cli("--impl", f"{impls}:swapped", "--scales", "10", "--flip-prob", "0.1", "--json", str(out))
    assert r.exit_code == 1, r.output
    assert "points outside tolerance" in r.output and "corner (y_d=0, y_x=0)" in r.output
    doc = json.loads(out.read_text())
    assert doc["results"][0]["status"] == "fail" and doc["results"][0]["witness"]["outside"]


def test_cli_vet_epsilon(impls):
    r = vet_cli("--epsilon", f"{impls}:eps", "--n-pub", "1", "--scales", "1", "--flip-prob", "0.1")
    assert r.exit_code == 0, r.output
    r = vet_cli("--epsilon", f"{impls}:eps_double", "--n-pub", "1", "--scales", "1", "--flip-prob", "0.1")
    assert r.exit_code == 1, r.output
    assert "outside the certified bracket" in r.output or "above the certified" in r.output


@pytest.mark.parametrize("args,message", [
    ([], "give at least one of --impl"),
    (["--impl", "no_such_module_xyz:f"], "no module named 'no_such_module_xyz'"),
    (["--impl", "math"], "must look like MODULE:ATTR"),
    (["--impl", "math:no_such_attr"], "has no attribute 'no_such_attr'"),
    (["--impl", "{impls}:NOT_CALLABLE"], "is a int, not a function"),
    (["--impl", "math:log", "--scales", "0"], "'0' must be an integer in [1, 1e+07]"),
    (["--impl", "math:log", "--scales", "ten"], "'ten' must be an integer"),
    (["--impl", "math:log", "--tolerance", "1"], "--tolerance"),
    (["--epsilon", "math:log", "--n-pub", "17"], "'17' must be an integer in [1, 16]"),
])
def test_cli_vet_bad_usage_exit_2(impls, args, message):
    r = vet_cli(*[a.replace("{impls}", impls) for a in args])
    assert r.exit_code == 2, r.output
    assert message in r.output


def test_cli_vet_engine_error_exit_2(impls, monkeypatch):
    """The certified side failing is an engine error (exit 2), never a pass or a user failure."""
    import vetdp.buffling.vet as vet_module

    def broken(*args, **kwargs):
        raise ArithmeticError("enclosure failed")

    monkeypatch.setattr(vet_module, "ratio_enclosure", broken)
    r = vet_cli("--impl", f"{impls}:ratio", "--scales", "10", "--flip-prob", "0.1")
    assert r.exit_code == 2, r.output
    assert "enclosure failed" in r.output


def test_cli_vet_p_half_ratio_is_one(impls):
    r = vet_cli("--impl", f"{impls}:ratio", "--scales", "1,7", "--flip-prob", "0.5")
    assert r.exit_code == 0, r.output


def test_cli_vet_module_attr_form_through_main():
    """MODULE:ATTR of an importable module, through the top-level command: math.hypot takes four numbers and is
    not the ratio, so every non-trivial point fails (exit 1)."""
    from vetdp.cli import main

    r = CliRunner().invoke(main, ["buffling", "vet", "--impl", "math:hypot", "--scales", "10", "--flip-prob", "0.1"])
    assert r.exit_code == 1, r.output
    assert "points outside tolerance" in r.output


def test_public_names_exist():
    import vetdp.buffling.certified as certified
    import vetdp.buffling.vet as vet

    for module in (certified, vet):
        assert module.__all__ and all(hasattr(module, name) for name in module.__all__)
