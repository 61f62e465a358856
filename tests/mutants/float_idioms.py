"""Boolean randomized response written with the idioms of ordinary Python validation: ``float(prob)``,
``isinstance(prob, float)``, ``Fraction(prob)``. Under the universal exploration each meets a symbolic parameter
(see vetdp.engine.float_shims and universal._construct). Docstrings start with "Defect:" or "Sound:".
"""

from __future__ import annotations

import math
import secrets
from decimal import Decimal
from fractions import Fraction
from math import isnan

from vetdp.impl.randomized_response_bool import make_randomized_response_bool

__all__ = ["FLOAT_BAND", "float_band", "isinstance_checked", "fraction_checked", "finite_checked_band",
           "secrets_exact", "fraction_band", "decimal_checked"]

FLOAT_BAND = (0.7301, 0.7302)  # float_band's band of prob, open at both ends


def float_band(prob: float, constant_time: bool = False):
    """Defect (function.law, privacy.sound): converts with float(prob), then keeps the truth with prob + 2**-20
    for prob in FLOAT_BAND, a band no sampled search of [1/2, 1) is likely to draw."""
    p = float(prob)
    if FLOAT_BAND[0] < p < FLOAT_BAND[1]:
        p = p + 2.0**-20
    return make_randomized_response_bool(p, constant_time)


def isinstance_checked(prob: float, constant_time: bool = False):
    """Sound: refuses anything but a float with isinstance(prob, float), then vetdp's mechanism."""
    if not isinstance(prob, float) or isinstance(prob, bool):
        raise TypeError(f"prob={prob!r} must be a float")
    return make_randomized_response_bool(float(prob), constant_time)


def fraction_checked(prob: float, constant_time: bool = False):
    """Sound: compares Fraction(prob) with 1/2 (Fraction refuses anything but a plain float or a rational), then
    vetdp's mechanism; refuses inf and NaN before (Fraction would raise OverflowError or ValueError)."""
    if not isinstance(prob, float) or isinstance(prob, bool):
        raise TypeError(f"prob={prob!r} must be a float")
    if prob != prob or abs(prob) == float("inf"):
        raise ValueError(f"prob={prob!r} must be a finite float")
    if Fraction(prob) < Fraction(1, 2):
        raise ValueError(f"prob={prob!r} must be >= 1/2")
    return make_randomized_response_bool(prob, constant_time)


def finite_checked_band(prob: float, constant_time: bool = False):
    """Defect (function.law, privacy.sound): refuses NaN and infinities with isnan and math.isfinite, then keeps the
    truth with prob + 2**-20 for prob in FLOAT_BAND."""
    if isnan(prob) or not math.isfinite(prob):
        raise ValueError(f"prob={prob!r} must be finite")
    p = prob + 2.0**-20 if FLOAT_BAND[0] < prob < FLOAT_BAND[1] else prob
    return make_randomized_response_bool(p, constant_time)


def secrets_exact(prob: float, constant_time: bool = False):
    """Sound (as opaque code): keeps the truth when secrets.randbelow(den) < num, prob = num/den exactly; its
    randomness is invisible to vetdp's symbolic laws, so the universal exploration must not judge them."""
    m = make_randomized_response_bool(float(prob), constant_time)
    num, den = Fraction(float(prob)).as_integer_ratio()

    def function(truth: bool) -> bool:
        return truth if secrets.randbelow(den) < num else not truth

    import dataclasses

    return dataclasses.replace(m, function=function)
def fraction_band(prob: float, constant_time: bool = False):
    """Defect (function.law, privacy.sound): refuses prob below 1/2 exactly with Fraction(1, 2) <= Fraction(prob),
    then keeps the truth with prob + 2**-20 for prob in FLOAT_BAND."""
    if not Fraction(1, 2) <= Fraction(prob) < 1:
        raise ValueError(f"prob={prob!r} must be in [1/2, 1)")
    p = prob + 2.0**-20 if Fraction(FLOAT_BAND[0]) < Fraction(prob) < Fraction(FLOAT_BAND[1]) else prob
    return make_randomized_response_bool(p, constant_time)


def decimal_checked(prob: float, constant_time: bool = False):
    """Sound: compares Decimal(prob) with 1/2 (Decimal refuses a symbolic float), then vetdp's mechanism."""
    if not isinstance(prob, float) or isinstance(prob, bool):
        raise TypeError(f"prob={prob!r} must be a float")
    if prob != prob or abs(prob) == float("inf") or Decimal(prob) < Decimal("0.5"):
        raise ValueError(f"prob={prob!r} must be a finite float >= 1/2")
    return make_randomized_response_bool(prob, constant_time)
