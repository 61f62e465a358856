"""Measures for Rényi DP and zCDP, and the measurements of vetdp's mechanisms under them.

A measurement under :class:`RenyiDivergence` maps ``d_in`` to an :class:`RdpCurve` (a
function α ↦ ε̂(α)); under :class:`ZeroConcentratedDivergence` it maps ``d_in`` to ρ.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from vetdp.accounting.curves import RRFamily, check_alpha, curve_for_measurement
from vetdp.arith.rounding import inf_mul
from vetdp.core.measurement import Measure, Measurement
from vetdp.core.validation import check_int

__all__ = [
    "RenyiDivergence",
    "ZeroConcentratedDivergence",
    "RdpCurve",
    "make_renyi",
    "make_zcdp",
]


@dataclasses.dataclass(frozen=True)
class RenyiDivergence(Measure):
    """Rényi DP: ``d_out`` is a curve α ↦ ε̂(α) with D_α(M(x)‖M(x')) <= ε̂(α) for every α > 1."""

    def check_distance(self, d_out: Any) -> Any:
        if not callable(d_out):
            raise TypeError(f"d_out={d_out!r} must be an RDP curve (a callable alpha -> epsilon)")
        return d_out

    def __repr__(self) -> str:
        return "RenyiDivergence()"


@dataclasses.dataclass(frozen=True)
class ZeroConcentratedDivergence(Measure):
    """ρ-zCDP: D_α(M(x)‖M(x')) <= ρ·α for every α > 1; ``d_out`` is ρ, a float in [0, inf)."""

    def __repr__(self) -> str:
        return "ZeroConcentratedDivergence()"


@dataclasses.dataclass(frozen=True)
class RdpCurve:
    """α ↦ a certified upper bound of the Rényi divergence of ``compositions`` runs of ``family``.

    Calling it returns a float rounded up (α in [1, inf]; α = 1 is the KL divergence).
    """

    family: RRFamily
    compositions: int = 1

    def __post_init__(self):
        check_int("compositions", self.compositions, lo=0)

    def __call__(self, alpha: float) -> float:
        alpha = check_alpha(alpha)
        if self.compositions == 0:
            return 0.0
        # n·ε̂(α): both factors are upper bounds and the product is rounded up
        return inf_mul(float(self.compositions), self.family.rdp_upper(alpha))

    def compose(self, n: int) -> RdpCurve:
        """The curve of ``n`` runs of this one (RDP composes additively)."""
        return RdpCurve(self.family, self.compositions * check_int("n", n, lo=0))


def _check_d_in(measurement: Measurement, d_in: Any) -> int:
    d = measurement.input_metric.check_distance(d_in)
    if d > 1:
        raise ValueError(f"d_in={d_in!r} must be 0 or 1: group privacy is not supported for RDP/zCDP maps")
    return d


def make_renyi(measurement: Measurement) -> Measurement:
    """The same mechanism (same function) with an RDP privacy map: d_in=1 ↦ its exact curve.

    The curve is computed at the probabilities the implementation actually samples with.
    Preconditions: ``measurement`` is one of vetdp's RR/RAPPOR measurements.
    """
    family = curve_for_measurement(measurement)

    def privacy_map(d_in: Any) -> RdpCurve:
        return RdpCurve(family, _check_d_in(measurement, d_in))

    return dataclasses.replace(measurement, output_measure=RenyiDivergence(), privacy_map=privacy_map,
                               name=f"renyi({measurement.name})")


def make_zcdp(measurement: Measurement) -> Measurement:
    """The same mechanism with a zCDP privacy map: d_in=1 ↦ ρ rounded up (tight for binary families)."""
    family = curve_for_measurement(measurement)
    rho = family.zcdp_rho()

    def privacy_map(d_in: Any) -> float:
        return 0.0 if _check_d_in(measurement, d_in) == 0 else rho

    return dataclasses.replace(measurement, output_measure=ZeroConcentratedDivergence(), privacy_map=privacy_map,
                               name=f"zcdp({measurement.name})")
