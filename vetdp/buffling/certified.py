"""Certified enclosures of the one-filter pmf and loss ratio (seed 004, Part II) that scale to m = 10⁶.

With ``q = 1 − p``, ``M = m − n`` and ``z = (q/p)²``,

    f(y | n) = Pr[Bin(n, q) + Bin(m − n, p) = y] = p^(n+y) q^(M−y) Σ_i C(n, i) C(M, y − i) z^i,

the sum running over ``max(0, y − M) <= i <= min(n, y)``. Its terms ``t_i`` are positive and log-concave:
``t_(i+1)/t_i = (n − i)(y − i) z / ((i + 1)(M − y + i + 1))`` is an exact rational that does not increase with
``i``. So the sum is taken outwards from its largest term, each term carried as a pair of multi-precision
floats rounded down and up, until the geometric bound ``t·r/(1 − r)`` on everything not yet added (valid because
the ratios only shrink further out) is below ``2^−prec`` of the sum; that bound is added to the upper end. The
largest term's size ``C(n, i₀) C(M, y − i₀) z^i₀ p^(n+y) q^(M−y)`` is enclosed in log space: ln k! exactly for
k <= 1000, else Stirling's series to B₁₄ with the first omitted term as the remainder bound (for real x > 0 the
remainder of the series for ln Γ(x) is bounded by the first omitted term), in mpmath interval arithmetic.

**Guarantee.** :func:`pmf_enclosure` and :func:`ratio_enclosure` return an :class:`Enclosure` ``[lo, hi]`` of
exact rationals with ``lo <= truth <= hi``; every rounding is directed outwards (mpmath's ``libmp`` with
rounding ``'f'``/``'c'`` and mpmath's interval context), so the enclosure holds at any ``prec``; ``prec`` only
sets its width (relative width about ``(terms + 10)·2^−prec``). The work is about ``40·sqrt(variance)`` terms,
independent of whether the value underflows float64 (the endpoints carry their own exponent).

Proof: proofs/buffling.md ("One Bloom filter"); the log-concavity and tail bound are stated above.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
from collections.abc import Iterator
from fractions import Fraction

import mpmath
from mpmath import iv, libmp

from vetdp.buffling._common import check_flip_prob, check_n_bit
from vetdp.core.validation import check_int

__all__ = ["Enclosure", "pmf_enclosure", "ratio_enclosure", "log_factorial", "MAX_BITS", "DEFAULT_PREC"]

MAX_BITS = 10**7  # the largest m accepted: the work grows like sqrt(m) per point
DEFAULT_PREC = 128
_EXACT_FACTORIAL = 1000  # ln k! from the exact integer k! up to here
# Stirling's series for ln Γ(x): Σ_k B_2k / (2k (2k − 1) x^(2k − 1)); B_2 .. B_14, then B_16 bounds the remainder
_BERNOULLI = [Fraction(1, 6), Fraction(-1, 30), Fraction(1, 42), Fraction(-1, 30), Fraction(5, 66),
              Fraction(-691, 2730), Fraction(7, 6)]
_B16 = Fraction(3617, 510)  # |B_16|


@dataclasses.dataclass(frozen=True)
class Enclosure:
    """A closed interval ``[lo, hi]`` of exact rationals that contains the true value."""

    lo: Fraction
    hi: Fraction

    def __post_init__(self) -> None:
        if not self.lo <= self.hi:
            raise ArithmeticError(f"empty enclosure [{self.lo}, {self.hi}]")

    def contains(self, x: Fraction) -> bool:
        return self.lo <= x <= self.hi

    @property
    def mid(self) -> Fraction:
        return (self.lo + self.hi) / 2

    @property
    def rel_width(self) -> Fraction:
        """(hi − lo) / lo (``lo > 0``), the worst relative uncertainty of the enclosure."""
        return (self.hi - self.lo) / self.lo

    def __float__(self) -> float:
        return float(self.mid)


@contextlib.contextmanager
def _iv_prec(prec: int) -> Iterator[None]:
    old = iv.prec
    iv.prec = prec
    try:
        yield
    finally:
        iv.prec = old


def _frac(raw: tuple) -> Fraction:
    """The exact value of a finite libmp number."""
    sign, man, exp, _ = raw
    v = Fraction(int(man)) * (Fraction(2) ** int(exp)) if exp >= 0 else Fraction(int(man), 1 << int(-exp))
    return -v if sign else v


def log_factorial(k: int) -> iv.mpf:
    """An interval (at the current ``iv.prec``) that contains ln k! (k >= 0)."""
    if k <= _EXACT_FACTORIAL:
        return iv.log(iv.mpf(math.factorial(k)))
    x = iv.mpf(k)
    s = (x + iv.mpf(0.5)) * iv.log(x) - x + iv.log(2 * iv.pi) / 2
    for j, b in enumerate(_BERNOULLI, start=1):
        s += iv.mpf(b.numerator) / (iv.mpf(b.denominator) * (2 * j) * (2 * j - 1) * x ** (2 * j - 1))
    bound = iv.mpf(_B16.numerator) / (iv.mpf(_B16.denominator) * 16 * 15 * x**15)
    return s + iv.mpf((-bound.b, bound.b))


def _log_binomial(n: int, k: int) -> iv.mpf:
    return log_factorial(n) - log_factorial(k) - log_factorial(n - k)


def _ratio(i: int, n: int, y: int, big_m: int, a2: int, b2: int) -> tuple[int, int]:
    """t_(i+1)/t_i as (numerator, denominator) of positive integers (for i inside the support but its top)."""
    return (n - i) * (y - i) * b2, (i + 1) * (big_m - y + i + 1) * a2


def _div(num: int, den: int, prec: int, rnd: str) -> tuple:
    """num/den rounded in direction ``rnd`` ('f' down, 'c' up); num, den > 0."""
    other = "c" if rnd == "f" else "f"
    return libmp.mpf_div(libmp.from_int(num, prec, rnd), libmp.from_int(den, prec, other), prec, rnd)


def _relative_sum(n: int, y: int, big_m: int, a2: int, b2: int, prec: int) -> tuple[int, tuple, tuple]:
    """(i₀, lo, hi): the index of the largest term and libmp numbers lo <= Σ_i t_i / t_i₀ <= hi."""
    lo_i, hi_i = max(0, y - big_m), min(n, y)
    # the peak: the first i whose ratio t_(i+1)/t_i is <= 1 (ratios do not increase)
    i0 = lo_i
    if hi_i > lo_i:
        # a float guess from the quadratic (n−i)(y−i) b2 = (i+1)(M−y+i+1) a2, then exact steps
        rho = b2 / a2
        qa, qb, qc = rho - 1, -(rho * (n + y) + (big_m - y + 2)), rho * n * y - (big_m - y + 1)
        try:
            guess = (-qb - math.sqrt(qb * qb - 4 * qa * qc)) / (2 * qa) if qa else -qc / qb
            i0 = min(max(int(guess), lo_i), hi_i)
        except (ValueError, ZeroDivisionError, OverflowError):
            i0 = lo_i
        while i0 < hi_i and _gt1(*_ratio(i0, n, y, big_m, a2, b2)):
            i0 += 1
        while i0 > lo_i and not _gt1(*_ratio(i0 - 1, n, y, big_m, a2, b2)):
            i0 -= 1
    one = libmp.fone
    s_lo, s_hi = one, one
    eps = libmp.from_man_exp(1, -prec - 4)
    for direction in (1, -1):
        t_lo, t_hi = one, one
        i = i0
        while (i < hi_i) if direction == 1 else (i > lo_i):
            num, den = _ratio(i, n, y, big_m, a2, b2) if direction == 1 else _ratio(i - 1, n, y, big_m, a2, b2)[::-1]
            t_lo = libmp.mpf_mul(t_lo, _div(num, den, prec, "f"), prec, "f")
            t_hi = libmp.mpf_mul(t_hi, _div(num, den, prec, "c"), prec, "c")
            s_lo = libmp.mpf_add(s_lo, t_lo, prec, "f")
            s_hi = libmp.mpf_add(s_hi, t_hi, prec, "c")
            i += direction
            if (i < hi_i) if direction == 1 else (i > lo_i):
                nxt = _ratio(i, n, y, big_m, a2, b2) if direction == 1 else _ratio(i - 1, n, y, big_m, a2, b2)[::-1]
                if nxt[0] < nxt[1]:
                    r = _div(nxt[0], nxt[1], prec, "c")
                    # Σ_(j>=1) t·r^j = t·r/(1 − r) bounds every term further out (the ratios only shrink)
                    tail = libmp.mpf_div(libmp.mpf_mul(t_hi, r, prec, "c"),
                                         libmp.mpf_sub(one, r, prec, "f"), prec, "c")
                    if libmp.mpf_le(tail, libmp.mpf_mul(s_lo, eps, prec, "f")):
                        s_hi = libmp.mpf_add(s_hi, tail, prec, "c")
                        break
    return i0, s_lo, s_hi


def _gt1(num: int, den: int) -> bool:
    return num > den


def _check(y_x: object, y_d: object, flip_prob: object, n_bit: object, prec: object, y_d_hi: int) -> tuple:
    m = check_n_bit(n_bit, lo=1, hi=MAX_BITS)
    p = check_flip_prob(flip_prob)
    y_d = check_int("y_d", y_d, lo=0, hi=m - y_d_hi)
    y_x = check_int("y_x", y_x, lo=0, hi=m)
    prec = check_int("prec", prec, lo=53, hi=1 << 14)
    a, den = Fraction(p).as_integer_ratio()
    return y_x, y_d, m, a, den - a, den, prec


def _log_enclosure(y: int, n: int, m: int, a: int, b: int, den: int, prec: int) -> iv.mpf:
    """An interval containing ln f(y | n)."""
    big_m = m - n
    i0, s_lo, s_hi = _relative_sum(n, y, big_m, a * a, b * b, prec)
    log_p = iv.log(iv.mpf(a)) - iv.log(iv.mpf(den))
    log_q = iv.log(iv.mpf(b)) - iv.log(iv.mpf(den))
    peak = (_log_binomial(n, i0) + _log_binomial(big_m, y - i0) + (n + y - 2 * i0) * log_p
            + (big_m - y + 2 * i0) * log_q)
    return peak + iv.log(_iv(s_lo, s_hi))


def _iv(lo: tuple, hi: tuple) -> iv.mpf:
    """The interval [lo, hi] of two libmp numbers (widened outwards if the context's precision is lower)."""
    return iv.mpf((mpmath.mp.make_mpf(lo), mpmath.mp.make_mpf(hi)))


def _enclosure(x: iv.mpf) -> Enclosure:
    lo, hi = x._mpi_
    return Enclosure(_frac(lo), _frac(hi))


def pmf_enclosure(y_x: int, y_d: int, flip_prob: float, n_bit: int, prec: int = DEFAULT_PREC) -> Enclosure:
    """An enclosure of f(y_x | y_d) = Pr[Bin(y_d, q) + Bin(m − y_d, p) = y_x] (m = ``n_bit``).

    Preconditions: 1 <= n_bit <= 10⁷, 0 <= y_d <= m, 0 <= y_x <= m, flip_prob in (0, 1/2], 53 <= prec <= 2¹⁴.
    """
    y, n, m, a, b, den, prec = _check(y_x, y_d, flip_prob, n_bit, prec, 0)
    with _iv_prec(prec):
        return _enclosure(iv.exp(_log_enclosure(y, n, m, a, b, den, prec)))


def ratio_enclosure(y_d: int, y_x: int, flip_prob: float, n_bit: int, prec: int = DEFAULT_PREC) -> Enclosure:
    """An enclosure of R(y_x | y_d) = f(y_x | y_d + 1) / f(y_x | y_d) (the seed's ratio function's argument order).

    Preconditions: 1 <= n_bit <= 10⁷, 0 <= y_d <= m − 1, 0 <= y_x <= m, flip_prob in (0, 1/2], 53 <= prec <= 2¹⁴.
    """
    y, n, m, a, b, den, prec = _check(y_x, y_d, flip_prob, n_bit, prec, 1)
    if a == b:  # p = 1/2: the output does not depend on the input
        return Enclosure(Fraction(1), Fraction(1))
    with _iv_prec(prec):
        diff = _log_enclosure(y, n + 1, m, a, b, den, prec) - _log_enclosure(y, n, m, a, b, den, prec)
        return _enclosure(iv.exp(diff))
