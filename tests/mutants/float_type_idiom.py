"""A variant that tests ``type(prob) is float``: its module is never given the float that keeps symbolic floats
(vetdp.engine.float_shims), so its float(prob) pins the parameter and the exploration leaves the line open."""

from __future__ import annotations

from tests.mutants.float_idioms import FLOAT_BAND
from vetdp.impl.randomized_response_bool import make_randomized_response_bool

__all__ = ["type_checked_band"]


def type_checked_band(prob: float, constant_time: bool = False):
    """Defect (function.law): float_band's defect, behind a type(prob) is float test that lets vetdp's symbolic
    floats through by name."""
    if type(prob) is not float and type(prob).__name__ != "SymFloat":
        raise TypeError(f"prob={prob!r} must be a float")
    p = float(prob)
    if FLOAT_BAND[0] < p < FLOAT_BAND[1]:
        p = p + 2.0**-20
    return make_randomized_response_bool(p, constant_time)
