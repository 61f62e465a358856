"""Certified ε(δ) of one Bloom filter for a given input count y_d, at m up to 10⁶ (seed 004, Part II).

Neighbours ``d`` (``y_d = n`` ones) and ``d'`` (``n + 1`` ones) differ in one bit. The other ``m − 1`` bits are
common: their output count is ``Z = Bin(n, q) + Bin(m − 1 − n, p)`` with law ``h``. The differing bit flips to 1
with probability ``p`` under ``d`` and ``q`` under ``d'``, so with ``P = f(· | n)`` and ``Q = f(· | n + 1)``

    P(y) = p·h(y − 1) + q·h(y)        Q(y) = q·h(y − 1) + p·h(y),

and, with ``t = e^ε``, the two hockey-stick divergences are sums over y of positive parts of

    Q(y) − t·P(y) = (q − t p)·h(y − 1) + (p − t q)·h(y)      (d' → d)
    P(y) − t·Q(y) = (p − t q)·h(y − 1) + (q − t p)·h(y)      (d → d').

ε(y_d; δ) is the least ε >= 0 at which both are <= δ: (ε, δ)-indistinguishability of the pair, tight.

**How h is enclosed.** Both binomial laws are computed from their modes outwards by the exact-integer ratio
``b(i + 1)/b(i) = (n − i)·b_/((i + 1)·a_)`` in float64; the mode value is enclosed by interval arithmetic on ln k!
(:func:`vetdp.buffling.certified.log_factorial`). Every float operation is counted: a value reached after j steps
carries a relative error at most ``γ_(4j + 4)`` on top of the mode's, ``γ_n = n·u/(1 − n·u)`` (Higham, Lemma 3.1).
The windows stop where values fall below ``TAIL_FLOOR`` (far inside the normal range, so no underflow), and the mass
beyond each end is bounded by the geometric series at the end's ratio (the binomial pmf is log-concave). ``h`` is
their direct convolution (``numpy.convolve``: sums of non-negative products, relative error ``γ_L`` in any order).
Each term of a divergence is evaluated with its own error bound, each positive part of the upper sum is taken of
the term *plus* its bound, and the missing mass (``≤ τ``) is charged with weight ``|q − tp| + |p − tq|``. So
every ``upper`` is an upper bound and every ``lower`` a lower bound, without any assumption on library accuracy.

**Guarantee.** :func:`one_bf_epsilon` returns floats ``lower <= ε(y_d; δ) <= upper``; their relative gap is the
bisection's ``rel_tol`` plus what the error bounds leave undecided (about 1e-9 relative on δ).

Proof: proofs/buffling.md ("One Bloom filter", "per-y_d ε(δ) at scale").
"""

from __future__ import annotations

import dataclasses
import math
import time
from fractions import Fraction

import numpy as np
from mpmath import iv

from vetdp.arith.rounding import inf_exp, neg_inf_exp
from vetdp.buffling._common import check_delta, check_flip_prob, check_n_bit
from vetdp.buffling.certified import log_factorial
from vetdp.core.validation import check_float, check_int

__all__ = ["MAX_BITS", "TAIL_FLOOR", "OneBFEpsilon", "common_law", "one_bf_delta", "one_bf_epsilon"]

MAX_BITS = 10**7
U = 2.0**-53
TAIL_FLOOR = 1e-280  # the lowest floor allowed for the windows (normal floats: the error analysis holds)


def _gamma(n: int) -> float:
    """An upper bound on γ_n = n·u/(1 − n·u), rounded up generously."""
    nu = n * U
    if nu >= 0.5:
        raise ArithmeticError(f"{n} float operations exceed the error analysis (n·u >= 1/2)")
    return nu / (1 - nu) * (1 + 1e-6)


@dataclasses.dataclass(frozen=True)
class _Window:
    """Float values v[j] of a pmf on ``start + j``: |v[j] − b| <= rel·b; the pmf's mass outside is <= tail."""

    start: int
    values: np.ndarray
    rel: float
    tail: float


_B = [Fraction(1, 6), Fraction(-1, 30), Fraction(1, 42), Fraction(-1, 30), Fraction(5, 66), Fraction(-691, 2730),
      Fraction(7, 6), Fraction(-3617, 510)]  # B_2 .. B_16


def _log_factorial(k: int) -> iv.mpf:
    """An interval containing ln k!: exact below 1000, else Stirling's series for ln Γ(k + 1) = ln k + ln Γ(k),
    stopped at the first term below 2^-110 (the remainder of the series for real x > 0 is bounded by the first
    omitted term, which is added as ± width)."""
    if k <= 1000:
        return log_factorial(k)
    x = iv.mpf(k)
    s = (x - iv.mpf(0.5)) * iv.log(x) - x + iv.log(2 * iv.pi) / 2 + iv.log(x)
    xf = float(k)
    for j, bj in enumerate(_B, start=1):
        size = abs(float(bj)) / ((2 * j) * (2 * j - 1) * xf ** (2 * j - 1))
        if size < 2.0**-110 or j == len(_B):
            bound = iv.mpf(abs(bj.numerator)) / (iv.mpf(bj.denominator) * (2 * j) * (2 * j - 1) * x ** (2 * j - 1))
            return s + iv.mpf((-bound.b, bound.b))
        s += iv.mpf(bj.numerator) / (iv.mpf(bj.denominator) * (2 * j) * (2 * j - 1) * x ** (2 * j - 1))
    raise AssertionError("unreachable")  # pragma: no cover


def _mode_value(n: int, i: int, a: int, b: int, den: int) -> tuple[float, float]:
    """(v, e): a float v and a relative bound e with |v − C(n, i) a^i b^(n−i) / den^n| <= e·truth."""
    old = iv.prec
    iv.prec = 96
    try:
        x = _log_factorial(n) - _log_factorial(i) - _log_factorial(n - i)
        x += i * (iv.log(iv.mpf(a)) - iv.log(iv.mpf(den))) + (n - i) * (iv.log(iv.mpf(b)) - iv.log(iv.mpf(den)))
        enc = iv.exp(x)
        lo, hi = float(enc.a), float(enc.b)  # mpf → float rounds to nearest: widen by an ulp each side
    finally:
        iv.prec = old
    lo, hi = math.nextafter(lo, 0.0), math.nextafter(hi, math.inf)
    v = (lo + hi) / 2
    return v, (hi - lo) / lo * (1 + 1e-9) + 4 * U


def _binomial_window(n: int, a: int, b: int, den: int, floor: float) -> _Window:
    """Bin(n, a/den) on the window around its mode where values are >= ``floor`` (b = den − a)."""
    if n == 0:
        return _Window(0, np.ones(1), 0.0, 0.0)
    mode = min((n + 1) * a // den, n)  # b(i+1)/b(i) <= 1 from here up, b(i−1)/b(i) <= 1 from here down
    v0, e0 = _mode_value(n, mode, a, b, den)
    r = a / b  # one rounding
    var = n * (a / den) * (b / den)
    span = int(math.sqrt(2 * var * max(1.0, -math.log(floor))) * 1.3) + 64  # steps from the mode: grown if short
    while True:
        n_up, n_dn = min(span, n - mode), min(span, mode)
        up_i = np.arange(mode, mode + n_up, dtype=np.float64)  # b(i+1)/b(i) = (n − i)·r/(i + 1): three roundings
        up_v = v0 * np.cumprod((n - up_i) * r / (up_i + 1))  # value at mode + j + 1
        dn_i = np.arange(mode, mode - n_dn, -1, dtype=np.float64)  # b(i−1)/b(i) = i/((n − i + 1)·r)
        dn_v = v0 * np.cumprod(dn_i / ((n - dn_i + 1) * r))  # value at mode − j − 1
        short_up = n_up < n - mode and not (up_v.size and up_v[-1] < floor)
        short_dn = n_dn < mode and not (dn_v.size and dn_v[-1] < floor)
        if not (short_up or short_dn):
            break
        span *= 2
    tail = 0.0
    cuts = []
    for vals, sign, total in ((up_v, 1, n - mode), (dn_v, -1, mode)):
        below = vals < floor
        k = int(np.argmax(below)) if below.any() else vals.size  # keep vals[:k]
        cuts.append(k)
        if k < total:
            # everything from index i₁ = mode ± (k + 1) outwards: b(i₁) <= floor·(1 + slack) and the ratios only
            # fall further out (log-concavity), so the rest is at most b(i₁)/(1 − ρ), ρ the exact ratio at i₁
            i1 = mode + sign * (k + 1)
            num, dd = ((n - i1) * a, (i1 + 1) * b) if sign == 1 else (i1 * b, (n - i1 + 1) * a)
            rho = Fraction(num, dd)
            if rho >= Fraction(999, 1000):
                raise ArithmeticError(f"binomial window of n={n} ends before its tail decays")
            tail += floor * 1.01 / float(1 - rho) * 1.01
    ku, kd = cuts
    values = np.concatenate([dn_v[:kd][::-1], [v0], up_v[:ku]])
    rel = (1 + e0) * (1 + _gamma(4 * max(ku, kd) + 4)) - 1
    if rel > 0.01:
        raise ArithmeticError(f"binomial window of n={n}: relative error {rel} too large")
    return _Window(mode - kd, values, rel, tail)


@dataclasses.dataclass(frozen=True)
class _Law:
    """h on ``start + j`` as computed floats with |h_c − h_trunc| <= rel·h_trunc and 0 <= h − h_trunc, Σ <= tail."""

    start: int
    values: np.ndarray
    rel: float
    tail: float


def common_law(n_bit: int, y_d: int, flip_prob: float, floor: float = 1e-40) -> _Law:
    """The law h of the common bits' output count Z = Bin(y_d, q) + Bin(m − 1 − y_d, p), enclosed as documented."""
    m = check_n_bit(n_bit, lo=1, hi=MAX_BITS)
    p = check_flip_prob(flip_prob)
    n = check_int("y_d", y_d, lo=0, hi=m - 1)
    a, den = Fraction(p).as_integer_ratio()
    b = den - a
    fl = check_float("floor", floor)
    if not TAIL_FLOOR <= fl <= 1e-20:
        raise ValueError(f"floor={floor!r} must be in [{TAIL_FLOOR}, 1e-20]")
    w1 = _binomial_window(n, b, a, den, fl)  # Bin(n, q)
    w2 = _binomial_window(m - 1 - n, a, b, den, fl)  # Bin(m − 1 − n, p)
    vals = np.convolve(w1.values, w2.values)
    length = min(w1.values.size, w2.values.size)
    rel = (1 + w1.rel) * (1 + w2.rel) * (1 + _gamma(length + 2)) - 1
    # missing mass: Σ over the pairs with at least one index outside its window <= tail₁ + tail₂
    return _Law(w1.start + w2.start, vals, rel, w1.tail + w2.tail)


def _divergence(law: _Law, c1: float, c2: float, upper: bool) -> float:
    """A bound (upper or lower) on Σ_y (c1·h(y − 1) + c2·h(y))₊, for exact c1, c2 given as floats."""
    rel = law.rel
    hc = law.values
    lo_h, hi_h = hc / (1 + rel), hc / (1 - rel)  # each within 2 roundings of its bound: absorbed in the slack below
    prev_lo, prev_hi = np.concatenate([[0.0], lo_h]), np.concatenate([[0.0], hi_h])
    cur_lo, cur_hi = np.concatenate([lo_h, [0.0]]), np.concatenate([hi_h, [0.0]])
    if upper:
        a = c1 * (prev_hi if c1 > 0 else prev_lo)
        b = c2 * (cur_hi if c2 > 0 else cur_lo)
    else:
        a = c1 * (prev_lo if c1 > 0 else prev_hi)
        b = c2 * (cur_lo if c2 > 0 else cur_hi)
    # each term: 2 roundings for the bound of h, 1 for the product, 1 for the sum, on magnitudes <= |c|·h_hi
    err = 8 * U * (abs(c1) * prev_hi + abs(c2) * cur_hi) * (1 + 1e-6)
    terms = a + b + err if upper else a + b - err
    pos = np.maximum(terms, 0.0)
    s = float(pos.sum())
    g = _gamma(pos.size + 2)
    # the mass missing from h (<= tail) moves the sum by at most (|c1| + |c2|)·tail either way
    missing = (abs(c1) + abs(c2)) * law.tail * (1 + 1e-6) + 1e-300
    if upper:
        return s * (1 + g) + missing
    return max(0.0, s * (1 - g) - missing)


def _coefficients(p: float, t: float) -> tuple[float, float, float, float]:
    """(q − t p, p − t q) as floats and absolute bounds on their rounding errors (p, q = 1 − p, t exact floats)."""
    q = 1.0 - p  # exact: p in (0, 1/2]
    c_a, c_b = q - t * p, p - t * q  # one rounding for the product, one for the difference
    return c_a, c_b, 4 * U * (q + t * p), 4 * U * (p + t * q)


def _deltas(law: _Law, p: float, t: float, upper: bool) -> tuple[float, float]:
    """(δ_d→d', δ_d'→d) bounds at e^ε = t (exactly the float t)."""
    ca, cb, ea, eb = _coefficients(p, t)
    # a coefficient known to ±e: the upper bound takes the larger, the lower the smaller (h >= 0)
    sgn = 1.0 if upper else -1.0
    ca_, cb_ = ca + sgn * ea, cb + sgn * eb
    d_to_dp = _divergence(law, cb_, ca_, upper)  # P − tQ = (p − tq) h(y−1) + (q − tp) h(y)
    dp_to_d = _divergence(law, ca_, cb_, upper)  # Q − tP = (q − tp) h(y−1) + (p − tq) h(y)
    return d_to_dp, dp_to_d


def one_bf_delta(n_bit: int, y_d: int, flip_prob: float, epsilon: float, floor: float = 1e-40
                 ) -> tuple[float, float]:
    """Certified ``(lower, upper)`` on δ(ε) = max of both hockey-stick divergences of the pair (y_d, y_d + 1).

    ``floor`` (in [1e-280, 1e-20]) is where the binomial windows end; the mass beyond is charged to the bounds.
    """
    from vetdp.buffling._common import check_epsilon

    eps = check_epsilon(epsilon)
    law = common_law(n_bit, y_d, flip_prob, floor=floor)
    p = float(flip_prob)
    # δ falls as t = e^ε grows: the upper bound at the float below e^ε, the lower one at the float above
    up = max(_deltas(law, p, neg_inf_exp(eps), True))
    lo = max(_deltas(law, p, inf_exp(eps), False))
    return max(0.0, lo), min(1.0, up)


@dataclasses.dataclass(frozen=True)
class OneBFEpsilon:
    """Certified ``lower <= ε(y_d; δ) <= upper`` (hockey-stick) for one filter of ``n_bit`` bits."""

    n_bit: int
    y_d: int
    flip_prob: float
    delta: float
    lower: float
    upper: float
    cells: int  # length of the enclosed law h
    seconds: float

    @property
    def relative_width(self) -> float:
        return (self.upper - self.lower) / self.upper if self.upper > 0 else 0.0


def one_bf_epsilon(n_bit: int, y_d: int, flip_prob: float, delta: float, rel_tol: float = 1e-9) -> OneBFEpsilon:
    """Certified bracket on the hockey-stick ε(y_d; δ) of neighbours with y_d and y_d + 1 ones (module docstring).

    Preconditions: 1 <= n_bit <= 10⁷, 0 <= y_d <= n_bit − 1, flip_prob in (0, 1/2], delta in (0, 1),
    rel_tol in [1e-12, 0.1]. The bracket is found by bisection on ε; an end moves only to a point where its
    condition was checked (upper: the certified δ upper bound <= delta; lower: the certified lower bound > delta).
    """
    m = check_n_bit(n_bit, lo=1, hi=MAX_BITS)
    p = check_flip_prob(flip_prob)
    n = check_int("y_d", y_d, lo=0, hi=m - 1)
    d = check_delta(delta)
    tol = check_float("rel_tol", rel_tol)
    if not 1e-12 <= tol <= 0.1:
        raise ValueError(f"rel_tol={rel_tol!r} must be in [1e-12, 0.1]")
    start = time.perf_counter()
    if p == 0.5:
        return OneBFEpsilon(m, n, p, d, 0.0, 0.0, 1, time.perf_counter() - start)
    law = common_law(m, n, p, floor=max(TAIL_FLOOR, min(1e-40, d * 1e-30)))

    def up_ok(eps: float) -> bool:  # certified: δ(ε) <= delta
        return max(_deltas(law, p, neg_inf_exp(eps), True)) <= d

    def lo_ok(eps: float) -> bool:  # certified: δ(ε) > delta
        return max(_deltas(law, p, inf_exp(eps), False)) > d

    if up_ok(0.0):
        return OneBFEpsilon(m, n, p, d, 0.0, 0.0, law.values.size, time.perf_counter() - start)
    top = math.log((1 - p) / p) * (1 + 1e-9) + 1e-12  # every ratio is within [p/q, q/p]: δ(ln(q/p)) = 0
    a, b = 0.0, top
    if not up_ok(b):
        raise ArithmeticError("the certified bound did not reach delta at ε = ln(q/p)")
    lower = 0.0
    for _ in range(200):
        if b - a <= tol * b:
            break
        mid = (a + b) / 2
        if up_ok(mid):
            b = mid
        else:
            a = mid
            if lo_ok(mid):
                lower = mid
    upper = b
    # the lower end: between what was verified and the upper end
    a2, b2 = lower, upper
    for _ in range(200):
        if b2 - a2 <= tol * b2:
            break
        mid = (a2 + b2) / 2
        if lo_ok(mid):
            a2 = lower = mid
        else:
            b2 = mid
    return OneBFEpsilon(m, n, p, d, lower, upper, law.values.size, time.perf_counter() - start)
