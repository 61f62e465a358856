"""Shared precondition checks. Every message reads ``name=value must be <allowed set>``."""

from __future__ import annotations

import math
import numbers
from fractions import Fraction

__all__ = ["check_float", "check_int", "check_bool", "check_interval", "interval_text", "exact_rational"]


def interval_text(lo, hi, lo_closed: bool, hi_closed: bool) -> str:
    return f"{'[' if lo_closed else '('}{lo}, {hi}{']' if hi_closed else ')'}"


def check_bool(name: str, value: object) -> bool:
    """``value`` if it is a bool; TypeError otherwise (0/1 ints are not accepted)."""
    if not isinstance(value, bool):
        raise TypeError(f"{name}={value!r} must be a bool (True or False), not {type(value).__name__}")
    return value


def _symbolic(value: object) -> bool:
    """Whether ``value`` is one of the harness's symbolic floats (vetdp.engine.symbolic), which stand for a region
    of float values; the checks then decide on the whole region (tested by a class attribute, importing nothing)."""
    return getattr(type(value), "_vetdp_symbolic_", False)


def exact_rational(value: object) -> Fraction:
    """The exact rational value of a float, int or Fraction (``Fraction(value)``); for the harness's symbolic
    floats, their exact value as a polynomial (whose comparisons are decided on the region)."""
    if _symbolic(value):
        return value.__vetdp_probability__()
    return Fraction(value)


def check_float(name: str, value: object) -> float:
    """``value`` as a finite float64; TypeError for non-numbers and bools, ValueError for NaN/inf.

    Ints are accepted when exactly representable.
    """
    if _symbolic(value):
        return value.__vetdp_check_finite__(name)
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name}={value!r} must be a float, not {type(value).__name__}")
    if isinstance(value, numbers.Integral):
        x = float(value)
        if int(x) != int(value):
            raise ValueError(f"{name}={value!r} is not exactly representable as a float64")
        return x
    x = float(value)
    if math.isnan(x):
        raise ValueError(f"{name}={value!r} must be a number, not NaN")
    if math.isinf(x):
        raise ValueError(f"{name}={value!r} must be finite")
    return x


def check_interval(name: str, value: float | int, lo, hi, lo_closed: bool, hi_closed: bool) -> None:
    """Raise ValueError unless ``value`` lies in the interval, compared exactly as rationals.

    ``lo``/``hi`` may be Fractions (e.g. 1/t): a float is compared with its exact value,
    so a float that rounds 1/t down is rejected.
    """
    if _symbolic(value):
        ok_lo = ok_hi = value.__vetdp_in_interval__(lo, hi, lo_closed, hi_closed)
    else:
        q = Fraction(value)
        ok_lo = lo is None or (q >= Fraction(lo) if lo_closed else q > Fraction(lo))
        ok_hi = hi is None or (q <= Fraction(hi) if hi_closed else q < Fraction(hi))
    if not (ok_lo and ok_hi):
        def show(b):
            if b is None:
                return "inf"
            if isinstance(b, Fraction) and b.denominator != 1:
                return f"{b.numerator}/{b.denominator}"
            return str(b)
        raise ValueError(f"{name}={value!r} must be in {interval_text(show(lo), show(hi), lo_closed, hi_closed)}")


def check_int(name: str, value: object, lo: int | None = None, hi: int | None = None,
              keep_subclass: bool = False) -> int:
    """``value`` as an int in [lo, hi]; TypeError for non-ints (bools included). With ``keep_subclass`` an instance
    of an int subclass is returned as it is (a metric's d_in: the engine traces a privacy map on an int that
    records the map's comparisons, :mod:`vetdp.engine.distances`)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name}={value!r} must be an int, not {type(value).__name__}")
    v = value if keep_subclass and isinstance(value, int) else int(value)
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        raise ValueError(f"{name}={value!r} must be in [{lo if lo is not None else '-inf'}, "
                         f"{hi if hi is not None else 'inf'}]")
    return v
