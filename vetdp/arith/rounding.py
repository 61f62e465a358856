"""Directed-rounding float64 arithmetic.

Every ``inf_*`` function returns the float64 nearest toward +inf of the *exact* result of
its operation on its float arguments; every ``neg_inf_*`` function returns the float64
nearest toward -inf. Rational operations (add, sub, mul, div) are computed exactly with
:class:`fractions.Fraction` and rounded once. Transcendental operations (ln, exp, log1p,
expm1) are enclosed by mpmath's outward-rounded interval bounds at rising precision until
both ends of the enclosure round to the same float64 (Ziv's strategy), so the result is
correctly rounded; the only inputs whose result is exactly representable (ln 1, exp 0,
log1p 0, expm1 0) are answered directly.

No function returns inf or NaN: an argument that is not a finite float, a result outside
the float64 range in the direction of rounding, or an argument outside the operation's
domain raises :class:`FloatArithmeticError` naming the operation and its arguments.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from fractions import Fraction

from mpmath import libmp

__all__ = [
    "FloatArithmeticError",
    "RoundingOverflowError",
    "round_up",
    "round_down",
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

def _binary(op: str, fn: Callable[[Fraction, Fraction], Fraction], up: bool) -> Callable[[float, float], float]:
    def rounded(a: float, b: float) -> float:
        qa, qb = exact_fraction(f"{op}: a", a), exact_fraction(f"{op}: b", b)
        try:
            return _round(fn(qa, qb), up)
        except RoundingOverflowError as e:
            raise RoundingOverflowError(f"{op}({a!r}, {b!r}): {e}") from None

    rounded.__name__ = op
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

_START_PREC = 96
_MAX_PREC = 1 << 16


_CLAMP_EXP = 1200  # beyond 2**±1200 every value rounds like 2**±1200 does


def _mpf_to_fraction(t: tuple) -> Fraction:
    """The exact value of an mpf, with magnitudes beyond 2**±1200 clamped there.

    Clamping preserves the directed float64 rounding of the value, and it keeps the
    rational small when mpmath returns something like exp(-1e300).
    """
    sign, man, exp, bc = t
    if man == 0:
        return Fraction(0)
    top = exp + bc
    if top > _CLAMP_EXP:
        return Fraction(-(2**_CLAMP_EXP) if sign else 2**_CLAMP_EXP)
    if top < -_CLAMP_EXP:
        return Fraction(-1 if sign else 1, 2**_CLAMP_EXP)
    p, q = libmp.to_rational(t)
    return Fraction(int(p), int(q))


def _rational_to_mpf(q: Fraction, prec: int, rnd: str) -> tuple:
    return libmp.from_rational(q.numerator, q.denominator, prec, rnd)


def _widen(lo: Fraction, hi: Fraction, prec: int) -> tuple[Fraction, Fraction]:
    """Widen a libmp result pair by 2**(16 - prec) relative.

    libmp's round_floor/round_ceiling are not always on the right side of the true value
    (seen: exp of a tiny argument rounded "up" to exactly 1 + x). We rely only on its
    documented accuracy of about one unit in the last place, with a wide margin.
    """
    margin = Fraction(1, 2 ** (prec - 16))
    return lo - abs(lo) * margin, hi + abs(hi) * margin


def ln_bracket(q: Fraction, prec: int) -> tuple[Fraction, Fraction]:
    """Rationals ``lo <= ln(q) <= hi`` whose gap shrinks as ``prec`` grows; requires q > 0."""
    lo_arg = _rational_to_mpf(q, prec + 10, libmp.round_floor)
    hi_arg = _rational_to_mpf(q, prec + 10, libmp.round_ceiling)
    lo = libmp.mpf_log(lo_arg, prec, libmp.round_floor)
    hi = libmp.mpf_log(hi_arg, prec, libmp.round_ceiling)
    return _widen(_mpf_to_fraction(lo), _mpf_to_fraction(hi), prec)


def exp_bracket(q: Fraction, prec: int) -> tuple[Fraction, Fraction]:
    """Rationals ``lo <= exp(q) <= hi`` whose gap shrinks as ``prec`` grows."""
    # exp of a huge argument needs its integer part's bits on top of the requested precision
    extra = abs(q.numerator // q.denominator).bit_length()
    lo_arg = _rational_to_mpf(q, prec + extra + 10, libmp.round_floor)
    hi_arg = _rational_to_mpf(q, prec + extra + 10, libmp.round_ceiling)
    lo = libmp.mpf_exp(lo_arg, prec, libmp.round_floor)
    hi = libmp.mpf_exp(hi_arg, prec, libmp.round_ceiling)
    return _widen(_mpf_to_fraction(lo), _mpf_to_fraction(hi), prec)


def _correctly_rounded(
    op: str, x: float, bracket: Callable[[Fraction, int], tuple[Fraction, Fraction]], up: bool
) -> float:
    q = exact_fraction(f"{op}: x", x)
    prec = _START_PREC
    while prec <= _MAX_PREC:
        lo, hi = bracket(q, prec)
        try:
            r_lo, r_hi = _round(lo, up), _round(hi, up)
        except RoundingOverflowError:
            # the upper end overflows: the answer overflows unless the lower end is
            # already certainly below the largest float (then retry with more precision)
            if (up and lo > MAX_FLOAT) or (not up and hi < -MAX_FLOAT):
                raise RoundingOverflowError(f"{op}({x!r}) overflows float64 when rounded toward "
                                            f"{'+inf' if up else '-inf'}") from None
            prec *= 2
            continue
        if r_lo == r_hi:
            return r_lo
        prec *= 2
    raise FloatArithmeticError(f"{op}({x!r}): no decision at {_MAX_PREC} bits (internal error)")


def _ln_arg(op: str, x: float) -> None:
    if exact_fraction(f"{op}: x", x) <= 0:
        raise FloatArithmeticError(f"{op}: x={x!r} must be in (0, inf)")


def inf_ln(x: float) -> float:
    """ln(x) rounded toward +inf; x in (0, inf)."""
    _ln_arg("inf_ln", x)
    return 0.0 if x == 1 else _correctly_rounded("inf_ln", x, ln_bracket, up=True)


def neg_inf_ln(x: float) -> float:
    """ln(x) rounded toward -inf; x in (0, inf)."""
    _ln_arg("neg_inf_ln", x)
    return 0.0 if x == 1 else _correctly_rounded("neg_inf_ln", x, ln_bracket, up=False)


def inf_exp(x: float) -> float:
    """exp(x) rounded toward +inf; raises when that exceeds the largest float64."""
    return 1.0 if exact_fraction("inf_exp: x", x) == 0 else _correctly_rounded("inf_exp", x, exp_bracket, up=True)


def neg_inf_exp(x: float) -> float:
    """exp(x) rounded toward -inf (the largest float64 when exp(x) exceeds it)."""
    return 1.0 if exact_fraction("neg_inf_exp: x", x) == 0 else _correctly_rounded(
        "neg_inf_exp", x, exp_bracket, up=False)


def _log1p_bracket(q: Fraction, prec: int) -> tuple[Fraction, Fraction]:
    return ln_bracket(1 + q, prec)


def _expm1_bracket(q: Fraction, prec: int) -> tuple[Fraction, Fraction]:
    # exp(x) - 1 loses relative precision near 0; ask for enough extra bits to compensate
    extra = max(0, -(q.numerator.bit_length() - q.denominator.bit_length())) if q else 0
    lo, hi = exp_bracket(q, prec + extra + 2)
    return lo - 1, hi - 1


def _log1p_arg(op: str, x: float) -> None:
    if exact_fraction(f"{op}: x", x) <= -1:
        raise FloatArithmeticError(f"{op}: x={x!r} must be in (-1, inf)")


def inf_log1p(x: float) -> float:
    """ln(1 + x) rounded toward +inf; x in (-1, inf)."""
    _log1p_arg("inf_log1p", x)
    return 0.0 if x == 0 else _correctly_rounded("inf_log1p", x, _log1p_bracket, up=True)


def neg_inf_log1p(x: float) -> float:
    """ln(1 + x) rounded toward -inf; x in (-1, inf)."""
    _log1p_arg("neg_inf_log1p", x)
    return 0.0 if x == 0 else _correctly_rounded("neg_inf_log1p", x, _log1p_bracket, up=False)


def inf_expm1(x: float) -> float:
    """exp(x) - 1 rounded toward +inf."""
    return 0.0 if exact_fraction("inf_expm1: x", x) == 0 else _correctly_rounded(
        "inf_expm1", x, _expm1_bracket, up=True)


def neg_inf_expm1(x: float) -> float:
    """exp(x) - 1 rounded toward -inf."""
    return 0.0 if exact_fraction("neg_inf_expm1: x", x) == 0 else _correctly_rounded(
        "neg_inf_expm1", x, _expm1_bracket, up=False)
