"""Directed-rounding float64 arithmetic, in pure Python (no dependency beyond the standard library).

Every ``inf_*`` function returns the float64 nearest toward +inf of the *exact* result of
its operation on its float arguments; every ``neg_inf_*`` function returns the float64
nearest toward -inf. Rational operations (add, sub, mul, div) take the hardware's float result
and check it against the exact result in integer arithmetic (:func:`_directed_fast`); where the
check fails, or at zero, overflow and bad arguments, they are computed exactly with
:class:`fractions.Fraction` and rounded once. Transcendental operations (ln, exp, log1p,
expm1) are enclosed in integer fixed-point arithmetic with rigorous error bounds
(:func:`ln_bracket`, :func:`exp_bracket`: ln by range reduction to [1/√2, √2) and an atanh
series, exp by range reduction by ln 2 and a Taylor series) at rising precision until both
ends of the enclosure round to the same float64 (Ziv's strategy), so the result is
correctly rounded; the only inputs whose result is exactly representable (ln 1, exp 0,
log1p 0, expm1 0) are answered directly. ``tests/test_rounding.py`` checks every result
against mpmath and MPFR.

No function returns inf or NaN: an argument that is not a finite float, a result outside
the float64 range in the direction of rounding, or an argument outside the operation's
domain raises :class:`FloatArithmeticError` naming the operation and its arguments.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from fractions import Fraction

__all__ = [
    "FloatArithmeticError",
    "RoundingOverflowError",
    "round_up",
    "round_down",
    "nearest_float_or_inf",
    "exact_int_to_float",
    "exact_fraction",
    "inf_add",
    "neg_inf_add",
    "inf_sub",
    "neg_inf_sub",
    "inf_mul",
    "neg_inf_mul",
    "inf_div",
    "neg_inf_div",
    "inf_ln",
    "neg_inf_ln",
    "inf_exp",
    "neg_inf_exp",
    "inf_log1p",
    "neg_inf_log1p",
    "inf_expm1",
    "neg_inf_expm1",
    "ln_bracket",
    "exp_bracket",
    "exp_enclosure",
]

MAX_FLOAT = Fraction(2**1024 - 2**971)


class FloatArithmeticError(ValueError, ArithmeticError):
    """A directed-rounding operation has no finite float64 answer for its arguments."""


class RoundingOverflowError(FloatArithmeticError, OverflowError):
    """The rounded result would be infinite."""


def exact_fraction(name: str, x: object) -> Fraction:
    """The exact rational value of the finite float (or int) ``x``; rejects bool, NaN, inf."""
    if isinstance(x, bool) or not isinstance(x, (numbers.Integral, numbers.Real)):
        raise TypeError(f"{name}={x!r} must be a float or an int, not {type(x).__name__}")
    if isinstance(x, numbers.Integral):
        return Fraction(int(x))
    xf = float(x)
    if not math.isfinite(xf):
        raise FloatArithmeticError(f"{name}={x!r} must be a finite float in (-inf, inf)")
    return Fraction(xf)


def _round(q: Fraction, up: bool) -> float:
    """The float64 nearest to ``q`` toward +inf (``up``) or -inf; raises instead of inf."""
    if q > MAX_FLOAT:
        if up:
            raise RoundingOverflowError(f"the value {float_repr(q)} rounded toward +inf overflows float64")
        return float(MAX_FLOAT)
    if q < -MAX_FLOAT:
        if not up:
            raise RoundingOverflowError(f"the value {float_repr(q)} rounded toward -inf overflows float64")
        return -float(MAX_FLOAT)
    x = q.numerator / q.denominator  # CPython's int/int division is correctly rounded
    fx = Fraction(x)
    if up and fx < q:
        x = math.nextafter(x, math.inf)
    elif not up and fx > q:
        x = math.nextafter(x, -math.inf)
    return x + 0.0  # normalise -0.0 to 0.0


def float_repr(q: Fraction) -> str:
    """A short human-readable form of a possibly huge rational (for error messages)."""
    try:
        return repr(float(q))
    except OverflowError:
        sign = "-" if q < 0 else ""
        return f"{sign}2**{abs(q).numerator.bit_length() - abs(q).denominator.bit_length()} (approx.)"


def nearest_float_or_inf(q: Fraction | int) -> float:
    """The float64 nearest to the rational ``q``, or ±inf beyond the float range (for reports and witnesses only:
    never for a value that bounds privacy, which :func:`round_up`/:func:`round_down` give)."""
    q = Fraction(q)
    try:
        return q.numerator / q.denominator  # CPython's int/int division is correctly rounded; tiny values give ±0.0
    except OverflowError:
        return math.inf if q > 0 else -math.inf


def round_up(q: Fraction | int) -> float:
    """The float64 nearest toward +inf of the rational ``q``."""
    return _round(Fraction(q), up=True)


def round_down(q: Fraction | int) -> float:
    """The float64 nearest toward -inf of the rational ``q``."""
    return _round(Fraction(q), up=False)


def exact_int_to_float(name: str, n: int) -> float:
    """``float(n)`` when that is exactly ``n``; raises ValueError when the cast would round."""
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise TypeError(f"{name}={n!r} must be an int, not {type(n).__name__}")
    n = int(n)
    try:
        x = float(n)
    except OverflowError:
        raise FloatArithmeticError(f"{name}={n} is beyond the float64 range (|{name}| <= 2**1024)") from None
    if int(x) != n:
        raise FloatArithmeticError(
            f"{name}={n} is not exactly representable as a float64 (integers up to 2**53 always are)"
        )
    return x


# ---------------------------------------------------------------- rational operations

def _exact_ratio(kind: str, a: float, b: float) -> tuple[int, int] | None:
    """The exact result of ``a kind b`` on finite floats as (numerator, denominator > 0), unreduced; None for a
    division by zero."""
    (na, da), (nb, db) = a.as_integer_ratio(), b.as_integer_ratio()
    if kind == "add":
        return na * db + nb * da, da * db
    if kind == "sub":
        return na * db - nb * da, da * db
    if kind == "mul":
        return na * nb, da * db
    if nb == 0:
        return None
    return (na * db, da * nb) if nb > 0 else (-na * db, -da * nb)


def _exceeds(n: int, d: int, x: float) -> int:
    """The sign of n/d − x (d > 0, x finite), decided exactly in integers."""
    xn, xd = x.as_integer_ratio()
    diff = n * xd - xn * d
    return (diff > 0) - (diff < 0)


_NEAREST = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
            "div": lambda a, b: a / b}


def _directed_fast(kind: str, a: float, b: float, up: bool) -> float | None:
    """The directed rounding of ``a kind b`` read from the hardware's float result and checked in exact integer
    arithmetic: the answer u is returned only when the exact result x satisfies prev(u) < x <= u (up) or
    u <= x < next(u) (down), so it never rests on the FPU's rounding mode. None where the exact path must answer:
    an argument or result that is not finite, a zero result (its sign), or a check that fails."""
    if not (math.isfinite(a) and math.isfinite(b)):
        return None
    exact = _exact_ratio(kind, a, b)
    if exact is None:
        return None
    try:
        r = _NEAREST[kind](a, b)
    except (ZeroDivisionError, OverflowError):
        return None
    if r == 0 or not math.isfinite(r):
        return None
    n, d = exact
    toward, away = (math.inf, -math.inf) if up else (-math.inf, math.inf)
    side = 1 if up else -1
    u = math.nextafter(r, toward) if _exceeds(n, d, r) == side else r
    if u == 0 or not math.isfinite(u):
        return None
    beyond = math.nextafter(u, away)  # infinite past ±MAX: every exact value lies inside it
    if _exceeds(n, d, u) == side or (math.isfinite(beyond) and _exceeds(n, d, beyond) != side):
        return None
    return u


def _binary(op: str, fn: Callable[[Fraction, Fraction], Fraction], up: bool) -> Callable[[float, float], float]:
    kind = op.rsplit("_", 1)[1]

    def rounded(a: float, b: float) -> float:
        if type(a) is float and type(b) is float:
            fast = _directed_fast(kind, a, b, up)
            if fast is not None:
                return fast
        return rounded_exactly(a, b)

    def rounded_exactly(a: float, b: float) -> float:
        qa, qb = exact_fraction(f"{op}: a", a), exact_fraction(f"{op}: b", b)
        try:
            return _round(fn(qa, qb), up)
        except RoundingOverflowError as e:
            raise RoundingOverflowError(f"{op}({a!r}, {b!r}): {e}") from None

    rounded.__name__ = op
    rounded.exactly = rounded_exactly  # the same answer through Fraction alone (the fast path's reference)
    direction = "+inf" if up else "-inf"
    rounded.__doc__ = f"The exact result of the operation rounded toward {direction} to float64."
    return rounded


def _exact_div(a: Fraction, b: Fraction) -> Fraction:
    if b == 0:
        raise FloatArithmeticError(f"division of {float(a)!r} by zero has no finite result")
    return a / b


inf_add = _binary("inf_add", lambda a, b: a + b, up=True)
neg_inf_add = _binary("neg_inf_add", lambda a, b: a + b, up=False)
inf_sub = _binary("inf_sub", lambda a, b: a - b, up=True)
neg_inf_sub = _binary("neg_inf_sub", lambda a, b: a - b, up=False)
inf_mul = _binary("inf_mul", lambda a, b: a * b, up=True)
neg_inf_mul = _binary("neg_inf_mul", lambda a, b: a * b, up=False)
inf_div = _binary("inf_div", _exact_div, up=True)
neg_inf_div = _binary("neg_inf_div", _exact_div, up=False)


# ---------------------------------------------------------------- transcendental operations
#
# ln and exp are enclosed in fixed point: integers lo <= f·2^w <= hi, computed with Python's integers only. Every
# series term is a floor of a lower bound of the true term, so each bound below carries an explicit error budget
# (derived in the comments); the sum of the floors is a lower bound and adding the budget gives an upper bound.
# Ziv's strategy (_correctly_rounded) raises the precision until both ends round to the same float64.

_START_PREC = 64
_MAX_PREC = 1 << 16
_GUARD = 16  # working bits beyond the precision asked for (plus prec.bit_length(): the error budgets grow with w)
_CLAMP_EXP = 1200  # beyond 2**±1200 every value rounds like 2**±1200 does
_EXP_CLAMP_ARG = 832  # e^832 > 2^1200 (832·log2(e) = 1200.3)
_LN2_FLOAT = 0.6931471805599453  # only picks the reduction k of exp; any k would be correct


def _atanh_fixed(p: int, d: int, w: int) -> tuple[int, int]:
    """Integers lo <= atanh(p/d)·2^w <= hi, for 0 <= p/d and (p/d)² <= 1/8.

    With z = p/d, the terms u_i = z^(2i+1)·2^w are computed as t_i = floor(t_(i-1)·floor(z²·2^w) / 2^w), so
    0 <= u_i − t_i = e_i with e_0 < 1 and e_i < z²·e_(i-1) + t_(i-1)/2^w + 1 < e_(i-1)/8 + 2, hence e_i < 2.29.
    Each of the n summed terms floor(t_i/(2i+1)) is short of u_i/(2i+1) by less than 3.3; the series stops at the
    first t_n = 0, where u_n < 2.29, and the omitted tail is at most u_n/(1 − z²) < 2.62. So
    sum <= atanh(z)·2^w < sum + 4n + 3.
    """
    t = (p << w) // d
    z2 = ((p * p) << w) // (d * d)
    s = n = 0
    i = 1
    while t:
        s += t // i
        t = (t * z2) >> w
        i += 2
        n += 1
    return s, s + 4 * n + 3


_ln2_cache: list[int] = [0, 0, 0]  # w, lo, hi of the largest ln 2 enclosure computed so far


def _ln2_fixed(w: int) -> tuple[int, int]:
    """Integers lo <= ln(2)·2^w <= hi (ln 2 = 2·atanh(1/3)); computed once at a generous width, then shifted."""
    cw, clo, chi = _ln2_cache
    if cw < w:
        cw = max(w, 2 * cw, 256)
        lo, hi = _atanh_fixed(1, 3, cw)
        clo, chi = 2 * lo, 2 * hi
        _ln2_cache[:] = [cw, clo, chi]
    shift = cw - w
    return clo >> shift, -((-chi) >> shift)  # floor of the lower, ceiling of the upper bound


def _ln_scaled(a: int, b: int, prec: int) -> tuple[int, int, int]:
    """Integers lo, hi and e = −w with lo·2^e <= ln(a/b) <= hi·2^e and hi − lo <= |ln(a/b)|·2^(w − prec); a, b > 0.

    ln(a/b) = k·ln 2 + 2·atanh(z) with a/b = m·2^k, m in [1/√2, √2) and z = (m − 1)/(m + 1), |z| <= 0.172.
    For k ≠ 0 the result is at least ln 2 − ln √2 in magnitude; for k = 0 it is about 2z, and w grows with
    z's leading zeros (|ln| >= 2|z| >= 2^(bits(p) − bits(d))). The error budget, at most about 12w + 63 units
    against a result of at least 2^(w − prec − 16 − bits(prec)) units, is then below 2^-prec relative.
    """
    k = a.bit_length() - b.bit_length()  # a/b in (2^(k-1), 2^(k+1))
    ma, mb = (a, b << k) if k >= 0 else (a << -k, b)
    if 2 * ma * ma < mb * mb:  # m < 1/√2
        ma, k = 2 * ma, k - 1
    elif ma * ma >= 2 * mb * mb:  # m >= √2
        mb, k = 2 * mb, k + 1
    p, d = ma - mb, ma + mb
    if k:
        w = prec + _GUARD + prec.bit_length() + abs(k).bit_length()
    else:
        if p == 0:
            return 0, 0, 0  # ln 1
        w = prec + _GUARD + prec.bit_length() + d.bit_length() - abs(p).bit_length()
    s_lo, s_hi = _atanh_fixed(abs(p), d, w)
    m_lo, m_hi = (2 * s_lo, 2 * s_hi) if p >= 0 else (-2 * s_hi, -2 * s_lo)
    if k == 0:
        return m_lo, m_hi, -w
    l_lo, l_hi = _ln2_fixed(w)
    k_lo, k_hi = (k * l_lo, k * l_hi) if k > 0 else (k * l_hi, k * l_lo)
    return k_lo + m_lo, k_hi + m_hi, -w


def _exp_fixed(x: int, w: int) -> tuple[int, int]:
    """Integers lo <= exp(x/2^w)·2^w <= hi, for |x| < 2^(w-1).

    Terms u_j = |x/2^w|^j/j!·2^w are computed as t_j = floor(t_(j-1)·|x|/2^w / j), t_0 = 2^w, so
    0 <= u_j − t_j = e_j < e_(j-1)/2 + 1 < 2. The series stops at the first t_n = 0 (u_n < 2). For x >= 0 the
    n summed terms are short by less than 2n and the tail is at most u_n·Σ 2^-i < 4; for x < 0 the series
    alternates with decreasing terms, so the tail lies within ±u_n and the sum is within ±(2n + 2).
    """
    ax = abs(x)
    t = 1 << w
    s = n = 0
    j = 1
    if x >= 0:
        while t:
            s += t
            t = ((t * ax) >> w) // j
            j += 1
            n += 1
        return s, s + 2 * n + 4
    while t:
        s += -t if n & 1 else t
        t = ((t * ax) >> w) // j
        j += 1
        n += 1
    return s - 2 * n - 2, s + 2 * n + 2


def _exp_scaled(a: int, b: int, prec: int) -> tuple[int, int, int]:
    """Integers lo, hi and e with lo·2^e <= exp(a/b) <= hi·2^e and hi − lo <= lo·2^-prec, for |a/b| <= 832.

    exp(a/b) = 2^k·exp(r) with r = a/b − k·ln 2 and |r| <= 0.35; r is enclosed in fixed point (a/b floored and
    ceiled, k·ln 2 from its enclosure) and exp is increasing, so exp(r_lo) and exp(r_hi) bound it.
    """
    k = round(a / b / _LN2_FLOAT)
    w = prec + _GUARD + prec.bit_length() + abs(k).bit_length()
    q_lo, q_hi = (a << w) // b, -((-a << w) // b)
    if k:
        l_lo, l_hi = _ln2_fixed(w)
        k_lo, k_hi = (k * l_lo, k * l_hi) if k > 0 else (k * l_hi, k * l_lo)
        q_lo, q_hi = q_lo - k_hi, q_hi - k_lo
    return _exp_fixed(q_lo, w)[0], _exp_fixed(q_hi, w)[1], k - w


def _exp_or_clamp(a: int, b: int, prec: int) -> tuple[int, int, int]:
    """:func:`_exp_scaled`, with exp 0 = 1 exact and the clamp of :func:`exp_bracket` beyond |a/b| > 832."""
    if a == 0:
        return 1, 1, 0
    if abs(a) > _EXP_CLAMP_ARG * b:
        return 1, 1, _CLAMP_EXP if a > 0 else -_CLAMP_EXP
    return _exp_scaled(a, b, prec)


def _expm1_scaled(a: int, b: int, prec: int) -> tuple[int, int, int]:
    # exp(x) - 1 loses relative precision near 0; ask for enough extra bits to compensate
    extra = max(0, b.bit_length() - abs(a).bit_length())
    lo, hi, e = _exp_or_clamp(a, b, prec + extra + 2)
    if e >= 0:
        return (lo << e) - 1, (hi << e) - 1, 0
    return lo - (1 << -e), hi - (1 << -e), e


def _scaled_to_fraction(n: int, e: int) -> Fraction:
    return Fraction(n << e) if e >= 0 else Fraction(n, 1 << -e)


def ln_bracket(q: Fraction, prec: int) -> tuple[Fraction, Fraction]:
    """Rationals ``lo <= ln(q) <= hi`` with ``hi − lo <= |ln q|·2^-prec``; requires q > 0 (a rational).

    Computed with integers only (:func:`_ln_scaled`, which the rounded ``*_ln`` and ``*_log1p`` also use); every
    bound is rigorous at any ``prec``.
    """
    q = Fraction(q)
    if q <= 0:
        raise FloatArithmeticError(f"ln_bracket: q={float_repr(q)} must be in (0, inf)")
    lo, hi, e = _ln_scaled(q.numerator, q.denominator, prec)
    return _scaled_to_fraction(lo, e), _scaled_to_fraction(hi, e)


def exp_bracket(q: Fraction, prec: int) -> tuple[Fraction, Fraction]:
    """Rationals ``lo <= exp(q) <= hi`` with ``hi − lo <= exp(q)·2^-prec``, for |q| <= 832.

    Beyond that both ends are clamped to 2^±1200 (exp(q) is then above 2^1200, or below 2^-1200): the bracket
    rounds to float64 like the true value in either direction, but it is no real enclosure, so a caller that
    needs one limits the argument (as :func:`vetdp.arith.expr` does). The same computation
    (:func:`_exp_scaled`) gives the rounded ``*_exp`` and ``*_expm1``.
    """
    q = Fraction(q)
    lo, hi, e = _exp_or_clamp(q.numerator, q.denominator, prec)
    return _scaled_to_fraction(lo, e), _scaled_to_fraction(hi, e)


def exp_enclosure(q: Fraction, prec: int) -> tuple[Fraction, Fraction]:
    """Rationals ``lo <= exp(q) <= hi`` for every rational ``q``, relatively within about 2^-prec: the bracket of
    :func:`exp_bracket` where it is an enclosure (|q| <= 832), else that of q/2^k raised to the power 2^k, exactly
    (the ends then have about 1.44·|q| bits: callers bound |q| by the quantities they compare it with)."""
    q = Fraction(q)
    if abs(q) <= _EXP_CLAMP_ARG:
        return exp_bracket(q, prec)
    k = 0
    while abs(q) > _EXP_CLAMP_ARG * 2**k:
        k += 1
    lo, hi = exp_bracket(q / 2**k, prec + k + 2)  # each squaring doubles the relative width: k extra bits
    return lo ** (2**k), hi ** (2**k)


def _round_scaled(n: int, e: int, up: bool) -> float:
    """The float64 nearest to n·2^e toward +inf (``up``) or -inf: :func:`_round` for a binary scaled integer,
    without building a Fraction. Raises RoundingOverflowError instead of returning inf."""
    if n == 0:
        return 0.0
    m = -n if n < 0 else n
    away = up == (n > 0)  # the magnitude is rounded away from zero
    top = m.bit_length() + e  # 2^(top-1) <= |n·2^e| < 2^top
    quantum = max(top - 53, -1074)  # the spacing of float64s at that magnitude
    shift = quantum - e
    if shift > 0:
        r = m >> shift
        if away and (r << shift) != m:
            r += 1
    else:
        r = m << -shift
    if r.bit_length() + quantum > 1024:  # |value| > the largest float64
        if away:
            raise RoundingOverflowError(f"the value {float_repr(_scaled_to_fraction(n, e))} rounded toward "
                                        f"{'+inf' if up else '-inf'} overflows float64")
        r, quantum = (1 << 53) - 1, 971
    x = math.ldexp(r, quantum)  # exact: r < 2^53 + 1 and the quantum keeps r·2^quantum representable
    return x if n > 0 else 0.0 - x  # never -0.0


_Scaled = Callable[[int, int, int], tuple[int, int, int]]


def _correctly_rounded(op: str, x: float, scaled: _Scaled, up: bool) -> float:
    """f(x) rounded as ``up`` says, from the enclosures ``scaled(a, b, prec)`` of f(a/b) at rising precision."""
    a, b = x.as_integer_ratio() if type(x) is float else exact_fraction(f"{op}: x", x).as_integer_ratio()
    prec = _START_PREC
    while prec <= _MAX_PREC:
        lo, hi, e = scaled(a, b, prec)
        try:
            r_lo, r_hi = _round_scaled(lo, e, up), _round_scaled(hi, e, up)
        except RoundingOverflowError:
            # the upper end overflows: the answer overflows unless the lower end is
            # already certainly below the largest float (then retry with more precision)
            if (up and _scaled_to_fraction(lo, e) > MAX_FLOAT) or (not up and _scaled_to_fraction(hi, e) < -MAX_FLOAT):
                raise RoundingOverflowError(f"{op}({x!r}) overflows float64 when rounded toward "
                                            f"{'+inf' if up else '-inf'}") from None
            prec *= 2
            continue
        if r_lo == r_hi:
            return r_lo
        prec *= 2
    raise FloatArithmeticError(f"{op}({x!r}): no decision at {_MAX_PREC} bits (internal error)")


def _log1p_scaled(a: int, b: int, prec: int) -> tuple[int, int, int]:
    return _ln_scaled(a + b, b, prec)


def _ln_arg(op: str, x: float) -> None:
    if exact_fraction(f"{op}: x", x) <= 0:
        raise FloatArithmeticError(f"{op}: x={x!r} must be in (0, inf)")


def inf_ln(x: float) -> float:
    """ln(x) rounded toward +inf; x in (0, inf)."""
    _ln_arg("inf_ln", x)
    return 0.0 if x == 1 else _correctly_rounded("inf_ln", x, _ln_scaled, up=True)


def neg_inf_ln(x: float) -> float:
    """ln(x) rounded toward -inf; x in (0, inf)."""
    _ln_arg("neg_inf_ln", x)
    return 0.0 if x == 1 else _correctly_rounded("neg_inf_ln", x, _ln_scaled, up=False)


def inf_exp(x: float) -> float:
    """exp(x) rounded toward +inf; raises when that exceeds the largest float64."""
    return 1.0 if exact_fraction("inf_exp: x", x) == 0 else _correctly_rounded("inf_exp", x, _exp_or_clamp, up=True)


def neg_inf_exp(x: float) -> float:
    """exp(x) rounded toward -inf (the largest float64 when exp(x) exceeds it)."""
    return 1.0 if exact_fraction("neg_inf_exp: x", x) == 0 else _correctly_rounded(
        "neg_inf_exp", x, _exp_or_clamp, up=False)


def _log1p_arg(op: str, x: float) -> None:
    if exact_fraction(f"{op}: x", x) <= -1:
        raise FloatArithmeticError(f"{op}: x={x!r} must be in (-1, inf)")


def inf_log1p(x: float) -> float:
    """ln(1 + x) rounded toward +inf; x in (-1, inf)."""
    _log1p_arg("inf_log1p", x)
    return 0.0 if x == 0 else _correctly_rounded("inf_log1p", x, _log1p_scaled, up=True)


def neg_inf_log1p(x: float) -> float:
    """ln(1 + x) rounded toward -inf; x in (-1, inf)."""
    _log1p_arg("neg_inf_log1p", x)
    return 0.0 if x == 0 else _correctly_rounded("neg_inf_log1p", x, _log1p_scaled, up=False)


def inf_expm1(x: float) -> float:
    """exp(x) - 1 rounded toward +inf."""
    return 0.0 if exact_fraction("inf_expm1: x", x) == 0 else _correctly_rounded(
        "inf_expm1", x, _expm1_scaled, up=True)


def neg_inf_expm1(x: float) -> float:
    """exp(x) - 1 rounded toward -inf."""
    return 0.0 if exact_fraction("neg_inf_expm1: x", x) == 0 else _correctly_rounded(
        "neg_inf_expm1", x, _expm1_scaled, up=False)
