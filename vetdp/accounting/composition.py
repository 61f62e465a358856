"""n-fold composition and conversion to (ε, δ)-DP, every method side by side.

Each method returns a :class:`Conversion` whose ε is a certified upper bound for its
method (every step rounded toward +inf with :mod:`vetdp.arith.rounding`, curve values from
the certified :meth:`~vetdp.accounting.curves.RRFamily.rdp_upper`). Methods:

* ``simple``: n·ε0 (basic composition of pure ε0-DP, δ = 0);
* ``advanced``: √(2n ln(1/δ))·ε0 + n·ε0·(e^{ε0} − 1) (Dwork–Rothblum–Vadhan; Dwork–Roth Thm 3.20);
* ``zcdp``: ρ_n + 2√(ρ_n ln(1/δ)), ρ_n = n·ρ (Bun–Steinke Prop. 1.3);
* ``rdp-mironov``: min_α n·ε̂(α) + ln(1/δ)/(α−1) (Mironov 2017, Prop. 3);
* ``rdp``: min_α n·ε̂(α) + ln((α−1)/α) − (ln δ + ln α)/(α−1) (Canonne–Kamath–Steinke 2020;
  Balle et al. 2020);
* ``pld``: the exact privacy-loss distribution (:mod:`vetdp.accounting.pld`): the tightest ε.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import numpy as np
from scipy import optimize

from vetdp.accounting.curves import RRFamily
from vetdp.accounting.pld import ExactPLD, check_delta
from vetdp.arith.rounding import (
    RoundingOverflowError,
    inf_add,
    inf_div,
    inf_expm1,
    inf_log1p,
    inf_mul,
    inf_sub,
    neg_inf_div,
    neg_inf_ln,
    neg_inf_sub,
)
from vetdp.core.validation import check_int

__all__ = ["Conversion", "compare_methods", "zcdp_to_dp", "rdp_to_dp", "simple", "advanced", "METHODS"]

METHODS = ("simple", "advanced", "zcdp", "rdp-mironov", "rdp", "pld")


@dataclasses.dataclass(frozen=True)
class Conversion:
    """(epsilon, delta)-DP for n runs, by ``method``; ``exact``: the ε is the tightest possible
    (up to its certified rounding); ``tightest``: smallest ε among the methods compared."""

    method: str
    epsilon: float
    delta: float
    exact: bool = False
    tightest: bool = False
    alpha: float | None = None
    note: str = ""


def _sqrt_up(x: float) -> float:
    """√x rounded toward +inf (x >= 0 a float)."""
    s = math.sqrt(x)
    from fractions import Fraction

    while Fraction(s) ** 2 < Fraction(x):
        s = math.nextafter(s, math.inf)
    return s


def _ln_inv_up(delta: float) -> float:
    """ln(1/δ) rounded up: −(ln δ rounded down)."""
    return -neg_inf_ln(delta)


def simple(family: RRFamily, n: int) -> Conversion:
    """Basic composition: n·ε0 with δ = 0."""
    n = check_int("n", n, lo=1)
    return Conversion("simple", inf_mul(float(n), family.max_divergence), 0.0, note="n·ε0")


def advanced(family: RRFamily, n: int, delta: float) -> Conversion:
    """Advanced composition of n pure ε0-DP runs: (√(2n ln(1/δ))·ε0 + n·ε0·(e^{ε0}−1), δ)."""
    n, delta = check_int("n", n, lo=1), check_delta(delta)
    e0 = family.max_divergence
    first = inf_mul(_sqrt_up(inf_mul(2.0 * n, _ln_inv_up(delta))), e0)
    second = inf_mul(inf_mul(float(n), e0), inf_expm1(e0))
    return Conversion("advanced", inf_add(first, second), delta, note="Dwork-Rothblum-Vadhan")


def zcdp_to_dp(rho: float, delta: float) -> float:
    """Bun–Steinke Prop. 1.3: ρ-zCDP ⇒ (ρ + 2√(ρ ln(1/δ)), δ)-DP; the ε rounded up."""
    delta = check_delta(delta)
    if rho < 0 or not math.isfinite(rho):
        raise ValueError(f"rho={rho!r} must be in [0, inf)")
    return inf_add(rho, inf_mul(2.0, _sqrt_up(inf_mul(rho, _ln_inv_up(delta)))))


def _rdp_bound(tau: float, alpha: float, delta: float, improved: bool) -> float:
    """The ε of the RDP conversion at one α, rounded up (τ an upper bound of the n-fold ε̂(α))."""
    am1_lo, am1_hi = neg_inf_sub(alpha, 1.0), inf_sub(alpha, 1.0)
    if not improved:
        return inf_add(tau, inf_div(_ln_inv_up(delta), am1_lo))
    # ln((α−1)/α) = log1p(−1/α) is decreasing in 1/α: use 1/α rounded down
    head = inf_log1p(-neg_inf_div(1.0, alpha))
    num = inf_sub(_ln_inv_up(delta), neg_inf_ln(alpha))  # ln(1/δ) − ln α, rounded up
    tail = inf_div(num, am1_lo if num >= 0 else am1_hi)
    return inf_add(inf_add(tau, head), tail)


def rdp_to_dp(family: RRFamily, n: int, delta: float, improved: bool = True) -> Conversion:
    """min over α of the RDP → (ε, δ) conversion for n runs; the ε is certified at the α found."""
    n, delta = check_int("n", n, lo=1), check_delta(delta)
    ln_inv = -math.log(delta)

    def objective(alpha):
        alpha = np.asarray(alpha, dtype=float)
        tau = n * family.rdp(alpha)
        if improved:
            return tau + np.log1p(-1 / alpha) + (ln_inv - np.log(alpha)) / (alpha - 1)
        return tau + ln_inv / (alpha - 1)

    grid = 1 + np.logspace(-6, 7, 1500)
    values = objective(grid)
    best = int(np.argmin(values))
    lo_x, hi_x = math.log(grid[max(best - 1, 0)] - 1), math.log(grid[min(best + 1, grid.size - 1)] - 1)
    res = optimize.minimize_scalar(lambda x: float(objective(1 + math.exp(x))), bounds=(lo_x, hi_x),
                                   method="bounded", options={"xatol": 1e-10})
    alpha = 1 + math.exp(res.x) if res.fun < values[best] else float(grid[best])
    tau = inf_mul(float(n), family.rdp_upper(alpha))
    eps = _rdp_bound(tau, alpha, delta, improved)
    name = "rdp" if improved else "rdp-mironov"
    note = "Canonne-Kamath-Steinke / Balle et al." if improved else "Mironov 2017"
    return Conversion(name, max(eps, 0.0), delta, alpha=alpha, note=note)


def compare_methods(family: RRFamily, n: int, delta: float) -> list[Conversion]:
    """Every method of this module for n runs at δ, the exact one marked, the tightest marked. A method whose bound,
    rounded up, overflows float64 reports ε = inf (its correct upward rounding: no finite bound), with a note."""
    n, delta = check_int("n", n, lo=1), check_delta(delta)
    pld = ExactPLD(family, n).epsilon(delta)
    zcdp_note = "Bun-Steinke Prop 1.3" + ("" if family.zcdp_tight else "; ρ not tight for t > 2")

    def zcdp() -> Conversion:
        return Conversion("zcdp", zcdp_to_dp(inf_mul(float(n), family.zcdp_rho()), delta), delta, note=zcdp_note)

    def bounded(name: str, d: float, method: Callable[[], Conversion]) -> Conversion:
        try:
            return method()
        except RoundingOverflowError:
            return Conversion(name, math.inf, d, note="the bound overflows float64 (above 1.8e308): no finite bound")

    out = [
        bounded("simple", 0.0, lambda: simple(family, n)),
        bounded("advanced", delta, lambda: advanced(family, n, delta)),
        bounded("zcdp", delta, zcdp),
        bounded("rdp-mironov", delta, lambda: rdp_to_dp(family, n, delta, improved=False)),
        bounded("rdp", delta, lambda: rdp_to_dp(family, n, delta, improved=True)),
        Conversion("pld", pld.epsilon, delta, exact=True,
                   note=f"exact PLD; optimum in ({pld.epsilon_lower!r}, {pld.epsilon!r}]"),
    ]
    best = min(c.epsilon for c in out)
    return [dataclasses.replace(c, tightest=c.epsilon == best) for c in out]
