"""Part II of seed 004: the privacy loss of one shuffled, flipped Bloom filter.

Neighbouring inputs ``d`` and ``d'`` are Bloom filters of ``m`` bits that differ in one bit:
``d`` has ``y_d`` ones and ``d'`` has ``y_d + 1``. After flipping and shuffling, the output
is determined (in law) by its number of ones ``y_x``, so the privacy loss is

    R(y_x | y_d) = f(y_x | y_d + 1) / f(y_x | y_d),  f(y | n) = Pr[Bin(n, q) + Bin(m − n, p) = y].

It is computed three ways, and every route reports the formula it used:

1. **exact** — the two pmfs as exact integers over the common denominator 2^(e·m);
2. **₂F₁** — the document's ratio of hypergeometric MGFs, through ``mpmath.hyp2f1``;
3. **continued fraction** — Gauss's continued fraction for the contiguous ₂F₁ ratio, at a
   configurable depth (exact once the depth reaches the point where the fraction terminates).

The document's ₂F₁ ratio has ``c = m − y_x − y_d`` and a pole (times a zero prefactor) when
``y_d + y_x >= m``; there routes 2 and 3 use the complementary hypergeometric variable
(ξ ↦ ξ − (K + n − N), whose law is HG(N, N−K, N−n)), which has ``c' = y_d + y_x + 1 − m >= 1``.

For m beyond exact rationals (up to 10⁷), :mod:`vetdp.buffling.certified` gives enclosures of the same
``f`` and ``R`` in outward-rounded multi-precision arithmetic; ``vetdp buffling one-bf`` switches to it above
m = 100, and ``vetdp buffling vet`` judges user code against it.

Proof: proofs/buffling.md
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Iterator
from fractions import Fraction

import mpmath

from vetdp.arith.rounding import exp_bracket, ln_bracket, round_down, round_up
from vetdp.buffling._common import check_delta, check_flip_prob, check_n_bit
from vetdp.core.validation import check_int

__all__ = [
    "one_bf_pmf",
    "one_bf_pmfs",
    "loss_ratio_exact",
    "loss_ratio_hyp2f1",
    "loss_ratio_continued_fraction",
    "gauss_continued_fraction",
    "RoutesComparison",
    "compare_routes",
    "OneBFPrivacy",
    "one_bf_privacy",
    "ln_up",
    "ln_down",
    "mpf_to_fraction",
]

AGREEMENT = Fraction(1, 10**12)  # 12 significant digits


def ln_up(x: Fraction) -> float:
    """A float >= ln(x) (x > 0), within a few ulps."""
    return round_up(ln_bracket(Fraction(x), 128)[1])


def ln_down(x: Fraction) -> float:
    """A float <= ln(x) (x > 0), within a few ulps."""
    return round_down(ln_bracket(Fraction(x), 128)[0])


def mpf_to_fraction(x: mpmath.mpf) -> Fraction:
    """The exact rational value of a finite mpf."""
    man, exp = x.man_exp
    return Fraction(int(man)) * (Fraction(2) ** int(exp))


def _check_one_bf(m: object, p: object) -> tuple[int, float, int, int]:
    m = check_n_bit(m, lo=1, hi=100_000)
    p = check_flip_prob(p)
    a, den = Fraction(p).as_integer_ratio()
    return m, p, a, den


def _numerators(m: int, a: int, den: int) -> Iterator[list[int]]:
    """For y_d = 0..m: the coefficients of (a + b t)^y_d (b + a t)^(m − y_d), b = den − a.

    Coefficient y equals den^m · Pr[y_x = y | y_d] exactly. Each step multiplies by
    (a + b t) and divides exactly by (b + a t).
    """
    b = den - a
    # (b + a t)^m by the binomial theorem
    coeffs = [0] * (m + 1)
    c = 1
    for y in range(m + 1):
        coeffs[y] = c * a**y * b ** (m - y)
        c = c * (m - y) // (y + 1)
    yield coeffs
    for _ in range(m):
        quotient = [0] * m
        prev = 0
        for j in range(m):
            num = coeffs[j] - a * prev
            quotient[j], rem = divmod(num, b)
            if rem:  # pragma: no cover - would be a bug in the recurrence
                raise ArithmeticError("inexact division in the one-BF pmf recurrence")
            prev = quotient[j]
        coeffs = [a * quotient[0]] + [a * quotient[j] + b * quotient[j - 1] for j in range(1, m)] + [
            b * quotient[m - 1]]
        yield coeffs


@functools.lru_cache(maxsize=8)
def _all_numerators(m: int, a: int, den: int) -> tuple[tuple[int, ...], ...]:
    """All rows of :func:`_numerators` (cached: the three routes are compared pair by pair)."""
    return tuple(tuple(row) for row in _numerators(m, a, den))


def one_bf_pmfs(n_bit: int, flip_prob: float) -> list[list[Fraction]]:
    """``pmfs[y_d][y_x] = Pr[y_x output ones | y_d input ones]`` exactly, for y_d in 0..m."""
    m, _, a, den = _check_one_bf(n_bit, flip_prob)
    scale = den**m
    return [[Fraction(v, scale) for v in row] for row in _numerators(m, a, den)]


def one_bf_pmf(n_bit: int, y_d: int, flip_prob: float) -> list[Fraction]:
    """Pr[y_x = y | y_d] for y = 0..m, exactly."""
    m, _, a, den = _check_one_bf(n_bit, flip_prob)
    y_d = check_int("y_d", y_d, lo=0, hi=m)
    for i, row in enumerate(_numerators(m, a, den)):
        if i == y_d:
            return [Fraction(v, den**m) for v in row]
    raise AssertionError("unreachable")  # pragma: no cover


def _check_pair(m: int, y_d: object, y_x: object) -> tuple[int, int]:
    return check_int("y_d", y_d, lo=0, hi=m - 1), check_int("y_x", y_x, lo=0, hi=m)


def loss_ratio_exact(n_bit: int, flip_prob: float, y_d: int, y_x: int) -> Fraction:
    """R(y_x | y_d) = f(y_x | y_d + 1) / f(y_x | y_d) as an exact rational (y_d in [0, m−1])."""
    m, _, a, den = _check_one_bf(n_bit, flip_prob)
    y_d, y_x = _check_pair(m, y_d, y_x)
    rows = _all_numerators(m, a, den)
    return Fraction(rows[y_d + 1][y_x], rows[y_d][y_x])


def _doc_form(m: int, y_d: int, y_x: int) -> tuple[int, int, int, bool]:
    """Parameters (y_d', y_x') of the document's ratio and whether the complement is used.

    The document's ratio E[z^ξ1]/E[z^ξ2] (ξ1 ~ HG(m, y_d+1, y_x), ξ2 ~ HG(m, y_d, y_x)) is
    valid for y_d + y_x <= m − 1. Otherwise E1/E2 = z / ratio(m − y_d − 1, m − y_x).
    """
    if y_d + y_x <= m - 1:
        return y_d, y_x, m - y_x - y_d, False
    yd2, yx2 = m - y_d - 1, m - y_x
    return yd2, yx2, m - yx2 - yd2, True


def loss_ratio_hyp2f1(n_bit: int, flip_prob: float, y_d: int, y_x: int, prec: int = 160) -> tuple[mpmath.mpf, str]:
    """R(y_x | y_d) through the document's ₂F₁ ratio, in ``prec``-bit mpmath; returns (value, route).

    R = (p/q) · (m−y_d−y_x)/(m−y_d) · ₂F₁(a,b;c;z) / ₂F₁(a+1,b;c+1;z), a = −y_d−1, b = −y_x,
    c = m−y_x−y_d, z = (q/p)²; for y_d + y_x >= m the complementary form (route name says so).
    """
    m, p, _, _ = _check_one_bf(n_bit, flip_prob)
    y_d, y_x = _check_pair(m, y_d, y_x)
    prec = check_int("prec", prec, lo=53, hi=1 << 16)
    yd, yx, c, complement = _doc_form(m, y_d, y_x)
    with mpmath.workprec(prec):
        fp, fq = mpmath.mpf(Fraction(p).numerator) / Fraction(p).denominator, None
        fq = 1 - fp
        z = (fq / fp) ** 2
        a, b = -yd - 1, -yx
        ratio = mpmath.mpf(m - yd - yx) / (m - yd) * mpmath.hyp2f1(a, b, c, z) / mpmath.hyp2f1(a + 1, b, c + 1, z)
        if complement:
            ratio = z / ratio
        value = fp / fq * ratio
    return value, "2F1 complement (y_d + y_x >= m)" if complement else "2F1 document ratio"


def gauss_continued_fraction(a: int, b: int, c: int, z, depth: int, exact: bool = False):
    """₂F₁(a+1,b;c+1;z) / ₂F₁(a,b;c;z) by the document's backward recurrence with ``depth`` levels.

    f_depth = 1; f_i = 1 + k_i z / f_(i+1); result 1/f_0, with (0-based) k_i =
    (b−c−(i+1)/2)(a+(i+1)/2)/((c+i)(c+i+1)) for odd i and (a−c−i/2)(b+i/2)/((c+i)(c+i+1))
    for even i. Requires c >= 1. ``exact`` computes in Fractions (z must then be a Fraction).
    """
    if c < 1:
        raise ValueError(f"c={c} must be in [1, inf) (the continued fraction has a pole at c + i = 0)")
    one = Fraction(1) if exact else mpmath.mpf(1)
    f = one
    for i in range(depth - 1, -1, -1):
        if i % 2:
            h = (i + 1) // 2
            k = Fraction((b - c - h) * (a + h), (c + i) * (c + i + 1))
        else:
            h = i // 2
            k = Fraction((a - c - h) * (b + h), (c + i) * (c + i + 1))
        kz = k * z if exact else mpmath.mpf(k.numerator) / k.denominator * z
        f = one + kz / f
    return one / f


def cf_termination_depth(y_d: int, y_x: int) -> int:
    """The depth from which the continued fraction of the document's ratio is exact (some k_i = 0)."""
    return min(2 * y_x, 2 * y_d + 1) + 1


def loss_ratio_continued_fraction(n_bit: int, flip_prob: float, y_d: int, y_x: int, depth: int | None = None,
                                  prec: int = 160, exact: bool = False) -> tuple[object, str]:
    """R(y_x | y_d) through Gauss's continued fraction; returns (value, route).

    ``depth=None`` uses the termination depth (then the value is exact up to the working
    precision, or exactly when ``exact``); a smaller depth truncates the fraction.
    """
    m, p, _, _ = _check_one_bf(n_bit, flip_prob)
    y_d, y_x = _check_pair(m, y_d, y_x)
    yd, yx, c, complement = _doc_form(m, y_d, y_x)
    depth = cf_termination_depth(yd, yx) if depth is None else check_int("depth", depth, lo=0, hi=10**6)
    fp = Fraction(p)
    fq = 1 - fp
    if exact:
        z = (fq / fp) ** 2
        ratio = Fraction(m - yd - yx, m - yd) / gauss_continued_fraction(-yd - 1, -yx, c, z, depth, exact=True)
        value = fp / fq * (z / ratio if complement else ratio)
    else:
        with mpmath.workprec(check_int("prec", prec, lo=53, hi=1 << 16)):
            z = (mpmath.mpf(fq.numerator) / fq.denominator / (mpmath.mpf(fp.numerator) / fp.denominator)) ** 2
            ratio = mpmath.mpf(m - yd - yx) / (m - yd) / gauss_continued_fraction(-yd - 1, -yx, c, z, depth)
            value = (mpmath.mpf(fp.numerator) / fp.denominator) / (mpmath.mpf(fq.numerator) / fq.denominator) * (
                z / ratio if complement else ratio)
    route = f"continued fraction depth {depth}" + (" complement (y_d + y_x >= m)" if complement else "")
    return value, route


@dataclasses.dataclass(frozen=True)
class RoutesComparison:
    """R(y_x | y_d) by the three routes; ``agree`` when both approximate routes are within
    1e-12 relative of the exact value, decided on exact rationals."""

    n_bit: int
    flip_prob: float
    y_d: int
    y_x: int
    exact: Fraction
    hyp2f1: Fraction
    continued_fraction: Fraction
    hyp2f1_route: str
    cf_route: str
    rel_err_hyp2f1: Fraction
    rel_err_cf: Fraction

    @property
    def agree(self) -> bool:
        return self.rel_err_hyp2f1 <= AGREEMENT and self.rel_err_cf <= AGREEMENT


def compare_routes(n_bit: int, flip_prob: float, y_d: int, y_x: int, depth: int | None = None,
                   prec: int = 160) -> RoutesComparison:
    """All three routes for one (y_d, y_x), with the exact value as the judge."""
    exact = loss_ratio_exact(n_bit, flip_prob, y_d, y_x)
    h, h_route = loss_ratio_hyp2f1(n_bit, flip_prob, y_d, y_x, prec)
    cf, cf_route = loss_ratio_continued_fraction(n_bit, flip_prob, y_d, y_x, depth, prec)
    hq, cq = mpf_to_fraction(h), mpf_to_fraction(cf)
    return RoutesComparison(n_bit, float(flip_prob), y_d, y_x, exact, hq, cq, h_route, cf_route,
                            abs(hq - exact) / exact, abs(cq - exact) / exact)


# ------------------------------------------------------------------ privacy of one BF

def _tail_quantile(atoms: list[tuple[Fraction, Fraction]], delta: Fraction) -> Fraction:
    """Smallest atom value v with Pr[L > v] <= delta, for atoms (value, prob) of a loss L."""
    cum = Fraction(0)
    for v, pr in sorted(atoms, key=lambda t: t[0], reverse=True):
        if cum + pr > delta:
            return v
        cum += pr
    return min(v for v, _ in atoms)


def _hockey_stick_upper(p_rows: list[Fraction], q_rows: list[Fraction], eps: float) -> Fraction:
    """An upper bound on Σ (P − e^ε Q)₊ (e^ε replaced by a rational lower bound)."""
    c = exp_bracket(Fraction(eps), 96)[0]
    return sum(((pp - c * qq) for pp, qq in zip(p_rows, q_rows, strict=True) if pp > c * qq), Fraction(0))


def _hs_epsilon(p_rows: list[Fraction], q_rows: list[Fraction], delta: Fraction) -> float:
    """A float ε >= the smallest ε with Σ(P − e^ε Q)₊ <= δ, certified on exact rationals."""
    pf = [float(x) for x in p_rows]
    qf = [float(x) for x in q_rows]

    def dfloat(e: float) -> float:  # the search only: libm's exp, whatever precision mpmath is set to
        c = math.exp(e)
        return sum(max(0.0, a - c * b) for a, b in zip(pf, qf, strict=True))

    if _hockey_stick_upper(p_rows, q_rows, 0.0) <= delta:
        return 0.0
    lo, hi = 0.0, 1.0
    while dfloat(hi) > float(delta):
        lo, hi = hi, 2 * hi
        if hi > 1e4:
            raise ArithmeticError("hockey-stick search did not terminate (ε > 1e4)")
    for _ in range(60):
        mid = (lo + hi) / 2
        if dfloat(mid) > float(delta):
            lo = mid
        else:
            hi = mid
    while _hockey_stick_upper(p_rows, q_rows, hi) > delta:  # certify exactly; step up if float erred
        hi = hi * (1 + 1e-12) + 1e-15
    return hi


@dataclasses.dataclass(frozen=True)
class OneBFPrivacy:
    """Privacy of one BF: per y_d and the max over y_d.

    ``eps_pure[y]`` >= max_{y_x} |ln R(y_x | y)|; ``eps_quantile[y]`` the document's quantile
    rule read with the sign that makes both terms losses: max(−Q_δ[ln R(Y) | Y ~ d],
    Q_(1−δ)[ln R(Y') | Y' ~ d']) rounded up; ``eps_hockey[y]`` the smallest ε with both
    hockey-stick divergences <= δ (certified on exact rationals, rounded up).
    """

    n_bit: int
    flip_prob: float
    delta: float
    eps_pure: list[float]
    eps_quantile: list[float]
    eps_hockey: list[float]

    @property
    def max_pure(self) -> float:
        return max(self.eps_pure)

    @property
    def max_quantile(self) -> float:
        return max(self.eps_quantile)

    @property
    def max_hockey(self) -> float:
        return max(self.eps_hockey)


def one_bf_privacy(n_bit: int, flip_prob: float, delta: float, y_d: list[int] | None = None) -> OneBFPrivacy:
    """ε(y_d) (pure), ε(y_d; δ) (quantile rule), hockey-stick ε(y_d; δ), for y_d in ``y_d`` (default all)."""
    m, p, a, den = _check_one_bf(n_bit, flip_prob)
    dq = Fraction(check_delta(delta))
    wanted = list(range(m)) if y_d is None else [check_int("y_d", y, lo=0, hi=m - 1) for y in y_d]
    scale = den**m
    rows = [[Fraction(v, scale) for v in row] for row in _numerators(m, a, den)]
    pure, quant, hs = [], [], []
    for y in wanted:
        p_d, p_d1 = rows[y], rows[y + 1]
        ratios = [b / c for b, c in zip(p_d1, p_d, strict=True)]  # R(y_x | y)
        top, bottom = max(ratios), min(ratios)
        pure.append(max(ln_up(top), ln_up(1 / bottom)))
        # direction d → d': loss −ln R with Y ~ d; the (1−δ)-quantile of 1/R is the same order statistic
        q1 = _tail_quantile([(1 / r, pr) for r, pr in zip(ratios, p_d, strict=True)], dq)
        q2 = _tail_quantile([(r, pr) for r, pr in zip(ratios, p_d1, strict=True)], dq)
        quant.append(max(0.0, ln_up(q1), ln_up(q2)))
        hs.append(max(_hs_epsilon(p_d, p_d1, dq), _hs_epsilon(p_d1, p_d, dq)))
    return OneBFPrivacy(m, p, float(delta), pure, quant, hs)
