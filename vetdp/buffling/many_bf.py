"""Part III of seed 004: the privacy of many shuffled, flipped Bloom filters, certified.

The pair is the document's heuristic worst pair of logo-count datasets: D has all ``m``
columns at logo 0; D' moves one column to logo 2^k − 1. With g_y the number of output
columns with y ones, Pr[A(D')=f]/Pr[A(D)=f] = R(g) = (1/m) Σ_y w_y g_y, w_y = (q/p)^(2y−k).
Under D, g is a sum of m independent columns with y ~ Bin(k, p); under D' one of them has
y ~ Bin(k, q). So R is an m-fold convolution, and both hockey-stick divergences are
expectations of bounded functions of R:

    δ_D'→D(ε) = Σ_f (P'(f) − e^ε P(f))₊ = E_D'[(1 − e^ε / R)₊]   (increasing in R)
    δ_D→D'(ε) = Σ_f (P(f) − e^ε P'(f))₊ = E_D [(1 − e^ε R)₊]      (decreasing in R)

**Guarantee.** :func:`many_bf_distribution` returns distributions of R^↑ >= R and R^↓ <= R
(coupled on an event E whose complement has probability ``tail_e``) on a grid of spacing
``h`` (a power of two), R^↑ rounded up and R^↓ rounded down, plus ``slack``: truncated
binomial tails, Pr[E^c], and an allowance for float evaluation of binomial pmfs and FFTs.
Every ``*_upper`` value below is an upper bound on the true quantity and every ``*_lower``
a lower bound, under one documented assumption: scipy's binomial pmf/cdf are accurate to
a relative 1e-9 (checked against exact rationals in the tests).

The coupling: categories y = k, …, 0 are drawn in turn, g_y ~ Bin(n − C_y, ρ_y) given the
count C_y already used, ρ_y = π_y / Σ_{y'<=y} π_y'. On E = {lo_y <= C_y <= hi_y for all y},
Bin(n − hi_y, ρ_y) <= g_y <= Bin(n − lo_y, ρ_y) in the natural coupling, and those
bounding binomials are independent across y.

The coupling gap makes these laws loose where few columns decide the tail (k = 3, m = 100, p = 0.1, δ = 1e-6:
ε in [4.27, 5.00], exact 4.3063): :func:`vetdp.buffling.bounds.certified_epsilon` first tries exact enumeration and
conditioning (:mod:`vetdp.buffling.logo_counts`) and falls back to these laws only beyond them.

Proof: proofs/buffling.md (section "Many Bloom filters").
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from fractions import Fraction

import numpy as np
from scipy import special, stats

from vetdp.buffling._common import (
    check_flip_prob,
    check_n_bit,
    check_n_pub,
    column_weight_law,
    loss_weights,
)
from vetdp.core.validation import check_int
from vetdp.engine.budgets import MAX_GRID_BITS

__all__ = ["ManyBFDistribution", "many_bf_distribution", "EXACT_ENUMERATION_LIMIT"]

U = 2.0**-53
PMF_REL_ERR = 1e-9  # assumed relative accuracy of scipy's binomial pmf / cdf / sf
TAIL = 1e-17  # each binomial window leaves at most about this much mass on each side
EXACT_ENUMERATION_LIMIT = 60_000  # enumerate the shared columns' compositions up to this many


@dataclasses.dataclass(frozen=True)
class _Dist:
    """A sub-probability on cells 0..G−1 (value = cell·h) plus ``overflow`` mass above the grid."""

    offset: int
    pmf: np.ndarray
    overflow: float = 0.0


@dataclasses.dataclass(frozen=True)
class ManyBFDistribution:
    """Grid laws of R under D and D' with certified bracketing (see the module docstring)."""

    n_pub: int
    n_bit: int
    flip_prob: float
    h: float
    cells: int
    up_d: np.ndarray  # R^↑ under D, cells 0..G−1 (overflow: up_d_over)
    up_d_over: float
    down_d: np.ndarray  # R^↓ under D (mass above the grid clamped into the last cell)
    up_dp: np.ndarray  # R^↑ under D'
    up_dp_over: float
    down_dp: np.ndarray
    slack_up: float  # mass missing from the R^↑ laws + Pr[E^c] + numerical allowance
    slack_down: float
    tail_e: float
    gap_r: float  # largest R^↑ − R^↓ on E before grid rounding (coupling gap, in units of R)
    method: str  # "enumeration" (every composition of the m−1 shared columns) or "coupling"
    cache: dict = dataclasses.field(default_factory=dict, compare=False, repr=False)


def _kl(x: float, rho: float) -> float:
    """KL(Bernoulli(x) || Bernoulli(rho)) for x, rho in [0, 1] (0 log 0 = 0; inf where rho is 0 or 1 and x is not),
    by differences of logarithms, so that a subnormal rho does not overflow a quotient."""
    out = 0.0
    if x > 0:
        out += x * (math.log(x) - (math.log(rho) if rho > 0 else -math.inf))
    if x < 1:
        out += (1 - x) * (math.log1p(-x) - (math.log1p(-rho) if rho < 1 else -math.inf))
    return max(out, 0.0)


def _chernoff_lower(a: int, n: int, rho: float) -> float:
    """A bound on Pr[Bin(n, rho) < a] for a <= n·rho: exp(−n·KL((a−1)/n || rho)), with margin."""
    if a <= 0:
        return 0.0
    return min(1.0, 2 * math.exp(-n * _kl((a - 1) / n, rho) * (1 - 1e-9)))


def _chernoff_upper(b: int, n: int, rho: float) -> float:
    """A bound on Pr[Bin(n, rho) > b] for b >= n·rho: exp(−n·KL((b+1)/n || rho)), with margin (the lower bound of
    Bin(n, 1 − rho) below n − b, written with rho itself: 1 − rho is 1.0 in floats once rho < 2^-53)."""
    if b >= n:
        return 0.0
    return min(1.0, 2 * math.exp(-n * _kl((b + 1) / n, rho) * (1 - 1e-9)))


def _window(n: int, rho: float) -> tuple[int, int, float]:
    """[a, b] containing Bin(n, rho) except for a mass <= the returned bound (Chernoff, rigorous)."""
    if rho >= 1.0 or n == 0:
        return n, n, 0.0
    mean, sd = n * rho, math.sqrt(n * rho * (1 - rho))
    z = 8.0
    while True:
        a = max(0, math.floor(mean - z * sd) - 8)
        b = min(n, math.ceil(mean + z * sd) + 8)
        lost = _chernoff_lower(a, n, rho) + _chernoff_upper(b, n, rho)
        if lost <= TAIL or (a == 0 and b == n):
            return a, b, lost
        z *= 1.25


def _category(n: int, rho: float, w_over_m: float, h: float, cells: int, up: bool) -> tuple[_Dist, float]:
    """The law of w·X/m, X ~ Bin(n, rho), on the grid (rounded up or down); returns (dist, lost mass)."""
    a, b, lost = _window(n, rho)
    xs = np.arange(a, b + 1)
    pmf = np.ones(1) if rho >= 1.0 else stats.binom.pmf(xs, n, rho)
    v = (w_over_m * xs) / h  # h is a power of two: v has at most two roundings
    idx = np.ceil(v * (1 + 4 * U)) if up else np.floor(v * (1 - 4 * U))
    idx = np.clip(idx, 0, cells).astype(np.int64)  # clipped before the cast: past the grid is all one to it
    over = 0.0
    if up:
        beyond = idx >= cells
        over = float(pmf[beyond].sum())
        idx, pmf = idx[~beyond], pmf[~beyond]
    else:
        idx = np.minimum(idx, cells - 1)
    if idx.size == 0:
        return _Dist(0, np.zeros(1), over), lost
    lo = int(idx.min())
    return _Dist(lo, np.bincount(idx - lo, weights=pmf), over), lost


def _convolve(x: _Dist, y: _Dist, cells: int, up: bool) -> tuple[_Dist, float]:
    """The law of the sum, truncated to the grid (overflow kept for ↑, clamped for ↓); returns the
    float-error allowance (L1) of the operation."""
    a, b = x.pmf, y.pmf
    if min(a.size, b.size) <= 64:
        full = np.convolve(a, b)
        allowance = 2 * (min(a.size, b.size) + 2) * U * float(full.sum())
    else:
        n = 1 << (a.size + b.size - 1).bit_length()
        full = np.fft.irfft(np.fft.rfft(a, n) * np.fft.rfft(b, n), n)[: a.size + b.size - 1]
        # Higham (2002) Thm 24.2 for each transform, with a factor 16 of margin; L1 <= sqrt(N)·L2
        allowance = 16 * math.log2(n) * U * math.sqrt(n) * float(np.linalg.norm(a) * np.linalg.norm(b)) * 3
        np.maximum(full, 0.0, out=full)
    off = x.offset + y.offset
    over = x.overflow * (float(b.sum()) + y.overflow) + y.overflow * float(a.sum())
    room = cells - off
    if full.size > room:
        if up:
            over += float(full[room:].sum())
        else:
            full[room - 1] += float(full[room:].sum())
        full = full[:room]
    nz = np.flatnonzero(full)
    if nz.size == 0:
        return _Dist(0, np.zeros(1), over), allowance
    return _Dist(off + int(nz[0]), full[nz[0]: nz[-1] + 1], over), allowance


def _dense(d: _Dist, cells: int) -> np.ndarray:
    out = np.zeros(cells)
    out[d.offset: d.offset + d.pmf.size] = d.pmf
    return out


def many_bf_distribution(n_pub: int, n_bit: int, flip_prob: float, grid_bits: int = 20,
                         r_cap: float = 128.0) -> ManyBFDistribution:
    """Certified grid laws of R under D and D' (module docstring), ``2**grid_bits`` cells over [0, r_cap)."""
    k = check_n_pub(n_pub)
    m = check_n_bit(n_bit, lo=1)
    p = check_flip_prob(flip_prob)
    grid_bits = check_int("grid_bits", grid_bits, lo=8, hi=MAX_GRID_BITS)  # memory, bounded up front
    if not (isinstance(r_cap, (int, float)) and not isinstance(r_cap, bool) and 2.0 <= r_cap <= 2.0**40):
        raise ValueError(f"r_cap={r_cap!r} must be in [2, 2**40]")
    cells = 1 << grid_bits
    h = 2.0 ** math.ceil(math.log2(r_cap / cells))
    fp = Fraction(p)
    pi = column_weight_law(k, fp)
    w = loss_weights(k, fp)
    n = m - 1  # the columns D and D' share
    if math.comb(n + k, k) <= EXACT_ENUMERATION_LIMIT:
        acc_up, allow_up = _enumerated(k, n, pi, w, m, h, cells, up=True)
        acc_down, allow_down = _enumerated(k, n, pi, w, m, h, cells, up=False)
        return _finish(k, m, p, h, cells, pi, w, acc_up, acc_down, 0.0, 0.0, 0.0, allow_up, allow_down, 0.0,
                       "enumeration")
    order = list(range(k, -1, -1))  # decreasing w_y
    tail_e, lost_up, lost_down, allow_up, allow_down, gap = 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    acc_up, acc_down = _Dist(0, np.ones(1)), _Dist(0, np.ones(1))
    for pos, y in enumerate(order):
        prior = float(sum(pi[yy] for yy in order[:pos]))
        if pos == 0 or n == 0:
            lo = hi = 0
        else:
            lo, hi, t = _window(n, min(prior, 1.0))
            tail_e += t
        rho = float(pi[y] / sum(pi[yy] for yy in order[pos:]))
        wm = float(w[y] / m)
        gap += wm * rho * (hi - lo)
        cu, lu = _category(n - lo, rho, wm, h, cells, up=True)
        cd, ld = _category(n - hi, rho, wm, h, cells, up=False)
        lost_up += lu
        lost_down += ld
        acc_up, au = _convolve(acc_up, cu, cells, up=True)
        acc_down, ad = _convolve(acc_down, cd, cells, up=False)
        allow_up += au
        allow_down += ad
    return _finish(k, m, p, h, cells, pi, w, acc_up, acc_down, tail_e, lost_up, lost_down, allow_up, allow_down,
                   gap, "coupling")


def _finish(k: int, m: int, p: float, h: float, cells: int, pi: list[Fraction], w: list[Fraction], acc_up: _Dist,
            acc_down: _Dist, tail_e: float, lost_up: float, lost_down: float, allow_up: float, allow_down: float,
            gap: float, method: str) -> ManyBFDistribution:
    """Add the column that differs (law Bin(k, p) under D, Bin(k, q) under D') and collect the slack."""
    pi_f = np.array([float(x) for x in pi])
    pi_star = pi_f[::-1].copy()  # the moved column: Bin(k, q)
    laws = {}
    for name, law in (("d", pi_f), ("dp", pi_star)):
        ku, _ = _extra(w, m, law, h, cells, up=True)
        kd, _ = _extra(w, m, law, h, cells, up=False)
        (du, au), (dd, ad) = _convolve(acc_up, ku, cells, True), _convolve(acc_down, kd, cells, False)
        laws[name] = (du, dd, au, ad)
    numeric = (k + 3) * PMF_REL_ERR + 2 * max(laws["d"][2], laws["dp"][2], laws["d"][3], laws["dp"][3])
    slack_up = lost_up + tail_e + allow_up + numeric + 1e-15
    slack_down = lost_down + tail_e + allow_down + numeric + 1e-15
    return ManyBFDistribution(
        k, m, p, h, cells,
        _dense(laws["d"][0], cells), laws["d"][0].overflow, _dense(laws["d"][1], cells),
        _dense(laws["dp"][0], cells), laws["dp"][0].overflow, _dense(laws["dp"][1], cells),
        slack_up, slack_down, tail_e, gap, method)


def _compositions(n: int, parts: int) -> np.ndarray:
    """Every way of writing n as an ordered sum of ``parts`` non-negative integers (rows)."""
    if parts == 1:
        return np.array([[n]], dtype=np.int64)
    bars = np.array(list(itertools.combinations(range(n + parts - 1), parts - 1)), dtype=np.int64)
    if bars.size == 0:
        bars = np.zeros((1, parts - 1), dtype=np.int64)
    edges = np.concatenate([np.full((bars.shape[0], 1), -1), bars, np.full((bars.shape[0], 1), n + parts - 1)], 1)
    return np.diff(edges, axis=1) - 1


def _enumerated(k: int, n: int, pi: list[Fraction], w: list[Fraction], m: int, h: float, cells: int,
                up: bool) -> tuple[_Dist, float]:
    """The exact law of (1/m) Σ_y w_y g_y, g ~ Multinomial(n, pi), on the grid (every composition)."""
    g = _compositions(n, k + 1)
    logpi = np.array([math.log(float(x)) for x in pi])
    logp = special.gammaln(n + 1) - special.gammaln(g + 1).sum(axis=1) + g @ logpi
    prob = np.exp(logp)
    v = (g @ np.array([float(x) for x in w])) / m / h
    margin = 4 * (k + 4) * U
    idx = np.clip(np.ceil(v * (1 + margin)) if up else np.floor(v * (1 - margin)), 0, cells).astype(np.int64)
    over = 0.0
    if up:
        over = float(prob[idx >= cells].sum())
        prob, idx = prob[idx < cells], idx[idx < cells]
    else:
        idx = np.minimum(idx, cells - 1)
    if idx.size == 0:
        return _Dist(0, np.zeros(1), over), 0.0
    lo = int(idx.min())
    return _Dist(lo, np.bincount(idx - lo, weights=prob), over), 2 * (k + 2) * U * g.shape[0]


def _extra(w: list[Fraction], m: int, law: np.ndarray, h: float, cells: int, up: bool) -> tuple[_Dist, float]:
    """The law of the moved (or unmoved) column's contribution w_Y/m on the grid, Y ~ ``law``."""
    v = np.array([float(x / m) for x in w]) / h
    idx = np.clip(np.ceil(v * (1 + 4 * U)) if up else np.floor(v * (1 - 4 * U)), 0, cells).astype(np.int64)
    if not up:
        idx = np.minimum(idx, cells - 1)
    keep = idx < cells
    over = float(law[~keep].sum())
    idx, pr = idx[keep], law[keep]
    if idx.size == 0:
        return _Dist(0, np.zeros(1), over), 0.0
    lo = int(idx.min())
    return _Dist(lo, np.bincount(idx - lo, weights=pr), over), 0.0


