"""Privacy accounting: tight RDP/zCDP curves, composition, conversions and the exact PLD."""

from vetdp.accounting.curves import (
    RRFamily,
    bit_flip_curve,
    curve_for_measurement,
    randomized_response_curve,
    rappor_curve,
)
from vetdp.accounting.measures import (
    RdpCurve,
    RenyiDivergence,
    ZeroConcentratedDivergence,
    make_renyi,
    make_zcdp,
)

__all__ = [
    "RRFamily",
    "randomized_response_curve",
    "rappor_curve",
    "bit_flip_curve",
    "curve_for_measurement",
    "RdpCurve",
    "RenyiDivergence",
    "ZeroConcentratedDivergence",
    "make_renyi",
    "make_zcdp",
]
