"""Certified many-filter ε(δ) at the seed's scale by monotone category chains on a grid (seed 004, Part III).

Under D the output summary g is Multinomial(m, π), π_y = C(k, y) p^y q^(k−y), and the loss is
R = (1/m) Σ_y w_y g_y = w_0 + Σ_(y>=1) v_y g_y with v_y = (w_y − w_0)/m >= 0 (p < 1/2, so w grows with y).
Draw the categories heaviest first: with n columns left, g_y ~ Bin(n, ρ_y), ρ_y = π_y / Σ_(y'<=y) π_y',
for y = k, …, 1; category 0 takes the rest. With one Bernoulli(ρ_y) stream per category (g_y = the first n terms
of stream y), the final R is a function F_y(n, α) of the columns left and the loss so far, and it is
**non-decreasing in n and in α**: one more column either lands in y (adding v_y >= 0, leaving the same n for the
rest) or passes on (one more column for the rest), by induction over y.

So states may be merged: the *upper chain* replaces every state (n, α) by (n⁺, α⁺) with n⁺ >= n (the top of n's
bucket) and α⁺ >= α (α rounded up to a grid of spacing ``h``, a power of two); the *lower chain* rounds both down.
In the stream coupling F(n⁻, α⁻) <= R <= F(n⁺, α⁺) path by path, so the upper chain's final law is that of an
R⁺ >= R and the lower chain's of an R⁻ <= R. Both hockey-stick divergences are monotone functionals of R,

    δ_D'→D(t) = E[(R − t)₊] (non-decreasing in R),     δ_D→D'(t) = E[(1 − tR)₊] (non-increasing in R),

so E over R⁻ and R⁺ bracket each. Binomial laws come from :mod:`vetdp.buffling.one_bf_delta` (float windows
with proved relative error, tails beyond the window bounded); every sum is of non-negative terms, so a
relative error bound is carried through the chain (γ_n per sum, Higham Lemma 3.1). Mass dropped (window tails,
states below a floor) is charged to the upper bounds: times R <= w_k for E[(R − t)₊], times 1 for E[(1 − tR)₊].

The grid and buckets set only the width: ``h`` bounds the rounding of α per category (k·h in all), and a bucket of
width Δ after category y moves at most Δ columns from the categories still to come, whose mean v is
μ_y; Δ = max(1, ⌊h/μ_y⌋) keeps that shift about h. :func:`chain_epsilon` picks h from a first coarse pass.

**Guarantee.** :func:`chain_epsilon` returns floats ``lower <= ε(δ) <= upper`` for the heuristic pair, with no
assumption on library accuracy (the binomial windows are enclosed by :mod:`vetdp.buffling.one_bf_delta`).

Proof: proofs/buffling.md ("Many Bloom filters": "Category chains").
"""

from __future__ import annotations

import dataclasses
import math
import time
from fractions import Fraction

import numpy as np

from vetdp.arith.rounding import inf_ln, neg_inf_ln
from vetdp.buffling._common import (
    check_delta,
    check_flip_prob,
    check_n_bit,
    check_n_pub,
    column_weight_law,
    loss_weights,
)
from vetdp.buffling.logo_counts import EpsilonBracket, _search
from vetdp.buffling.one_bf_delta import TAIL_FLOOR, _binomial_window, _gamma
from vetdp.engine.budgets import CHAIN_WORK

__all__ = ["CELL_LIMIT", "CHAIN_WORK", "ChainBudgetExceeded", "ChainLaw", "ChainWork", "chain_delta", "chain_epsilon",
           "chain_laws"]

U = 2.0**-53
CELL_LIMIT = 30_000_000  # cells held over all rows of a chain at once (about 240 MB of float64)


class ChainBudgetExceeded(ArithmeticError):
    """The chains' work budget ran out before a first certified bracket (an ArithmeticError: no chain bracket, as
    for their numerical limits)."""


class ChainWork:
    """Multiply-adds done by the chains, against a budget (None: unbounded): the same on every machine."""

    def __init__(self, limit: float | None):
        self.limit, self.done = limit, 0

    def charge(self, n: int) -> None:
        """Count ``n`` more multiply-adds, or raise :class:`ChainBudgetExceeded` (before doing them) when they would
        take the total past the budget."""
        if self.limit is not None and self.done + n > self.limit:
            raise ChainBudgetExceeded(f"the category chains' work budget of {self.limit:.3g} multiply-adds ran out")
        self.done += n


@dataclasses.dataclass(frozen=True)
class ChainLaw:
    """A sub-probability law of R⁺ (or R⁻) on the grid: mass ``values[j]`` at R = w0 + (offset + j)·h.

    Computed values are within a relative ``rel`` of the chain's exact law restricted to the kept states; the
    dropped mass is at most ``lost``.
    """

    upper: bool
    h: float
    w0: Fraction
    offset: int
    values: np.ndarray
    rel: float
    lost: float
    cells: int  # the largest number of cells held at once


def _shifts(v: Fraction, xs: np.ndarray, h: Fraction, up: bool) -> np.ndarray:
    """⌈v·x/h⌉ (up) or ⌊v·x/h⌋ (down) for every x (0 <= x < 2^40), exactly (v, h rational).

    v/h = q0 + r0/den with 0 <= r0/den < 1; the float product (r0/den)·x is off by far less than 1e-9, so its
    floor is exact unless it lies that close to an integer: those few are redone in integers.
    """
    num, den = (v / h).numerator, (v / h).denominator
    q0, r0 = divmod(num, den)
    if q0 > 2**40:
        raise ArithmeticError(f"grid too fine for these weights (v/h = {float(v / h):.3g})")
    if r0 == 0:
        return q0 * xs
    frac = xs.astype(np.float64) * (r0 / den)
    fl = np.floor(frac)
    base = fl.astype(np.int64)
    exact = np.zeros(xs.size, dtype=bool)  # r0·x/den an integer (only possible where the float is near one)
    for i in np.nonzero((frac - fl < 1e-9) | (fl + 1 - frac < 1e-9))[0].tolist():
        qq, rr = divmod(r0 * int(xs[i]), den)
        base[i], exact[i] = qq, rr == 0
    if up:
        base = base + (~exact).astype(np.int64)
    return base + q0 * xs


class _Rows:
    """Rows of a chain: n -> (offset, values) of α cells; additions aligned by offset."""

    def __init__(self) -> None:
        self.rows: dict[int, tuple[int, np.ndarray]] = {}
        self.adds: dict[int, int] = {}  # how many arrays were summed into each row (for the error bound)

    def add(self, n: int, off: int, vals: np.ndarray) -> None:
        if n not in self.rows:
            self.rows[n] = (off, vals.copy())
            self.adds[n] = 1
            return
        o, cur = self.rows[n]
        lo, hi = min(o, off), max(o + cur.size, off + vals.size)
        if lo != o or hi != o + cur.size:
            new = np.zeros(hi - lo)
            new[o - lo: o - lo + cur.size] = cur
            cur, o = new, lo
        cur[off - o: off - o + vals.size] += vals
        self.rows[n] = (o, cur)
        self.adds[n] += 1


def _trim(off: int, vals: np.ndarray, floor: float) -> tuple[int, np.ndarray, float]:
    """Zero every cell below ``floor`` and drop the zero ends; returns (offset, values, mass dropped).

    Keeping only cells >= ``floor`` (>= 1e-280) also keeps every later product far above float64's underflow, so
    the relative error analysis holds.
    """
    small = vals < floor
    dropped = float(vals[small].sum())
    keep = np.nonzero(~small)[0]
    if keep.size == 0:
        return off, vals[:0], dropped
    a, b = int(keep[0]), int(keep[-1]) + 1
    out = np.where(small[a:b], 0.0, vals[a:b])
    return off + a, out, dropped


def chain_laws(n_pub: int, n_bit: int, flip_prob: float, h: float, upper: bool, floor: float = 1e-30,
               cell_limit: int = CELL_LIMIT, work: ChainWork | None = None) -> ChainLaw | None:
    """The upper (``upper=True``) or lower chain's law of R on the grid of spacing ``h`` (module docstring).

    ``floor``: binomial windows end and row ends are trimmed below it (the mass is charged). None when more than
    ``cell_limit`` cells would be held at once. ``work`` counts the multiply-adds of the binomial windows and the
    convolutions, and raises :class:`ChainBudgetExceeded` before one that would take it past its budget.
    """
    work = work if work is not None else ChainWork(None)
    k, m, p = check_n_pub(n_pub), check_n_bit(n_bit), check_flip_prob(flip_prob)
    floor = max(float(floor), 1e-280)
    if not (h > 0 and math.frexp(h)[0] == 0.5):
        raise ValueError(f"h={h!r} must be a positive power of two")
    fp = Fraction(p)
    pi, w = column_weight_law(k, fp), loss_weights(k, fp)
    v = [(w[y] - w[0]) / m for y in range(k + 1)]
    hq = Fraction(h)
    rows = _Rows()
    rows.add(m, 0, np.ones(1))
    rel, lost, held = 0.0, 0.0, 1
    pmf_floor = max(TAIL_FLOOR, min(floor, 1e-20))
    cache: dict[tuple[int, int], object] = {}
    for y in range(k, 0, -1):
        below = sum(pi[: y + 1], Fraction(0))
        rho = pi[y] / below
        a, den = rho.numerator, rho.denominator
        rest = sum(pi[:y], Fraction(0))
        mu = sum((pi[z] * v[z] for z in range(y)), Fraction(0)) / rest  # mean v of a column left for y' < y
        # columns per bucket; past m + 1 every row is in bucket 0 alike (and a huge int would overflow int64 below)
        delta_n = m + 1 if mu == 0 else max(1, min(int(hq / mu), m + 1))
        step_rel, widest = 0.0, 1
        plans = []  # per source row: (offset, values, bucket indices, shifts, window values)
        for n, (off, vals) in rows.rows.items():
            key = (n, y)
            if key not in cache:
                cache[key] = _binomial_window(n, a, den - a, den, pmf_floor)
            win = cache[key]
            work.charge(win.values.size + vals.size)
            step_rel = max(step_rel, win.rel)
            widest = max(widest, win.values.size)
            mass = float(vals.sum()) * (1 + _gamma(vals.size + 1))
            lost += mass * win.tail * 1.01
            xs = win.start + np.arange(win.values.size, dtype=np.int64)
            plans.append((off, vals, (n - xs) // delta_n, _shifts(v[y], xs, hq, upper), win.values))
        b_lo = min(int(p_[2].min()) for p_ in plans)
        b_hi = max(int(p_[2].max()) for p_ in plans)
        c_lo = min(p_[0] + int(p_[3].min()) for p_ in plans)
        c_hi = max(p_[0] + p_[1].size + int(p_[3].max()) for p_ in plans)
        if (b_hi - b_lo + 1) * (c_hi - c_lo) > cell_limit:
            return None
        grid = np.zeros((b_hi - b_lo + 1, c_hi - c_lo))
        for off, vals, bucket, sh, wv in plans:
            # bucket = (n − x)//Δ falls as x grows: the x of one bucket form a contiguous run
            cuts = np.flatnonzero(np.diff(bucket)) + 1
            for lo_i, hi_i in zip(np.concatenate([[0], cuts]).tolist(), np.concatenate([cuts, [bucket.size]]).tolist(),
                                  strict=True):
                s_run = sh[lo_i:hi_i]
                s0 = int(s_run.min())
                kern = np.bincount(s_run - s0, weights=wv[lo_i:hi_i])  # each entry: <= widest window values
                work.charge(vals.size * kern.size)
                res = np.convolve(vals, kern)  # direct: each entry a sum of <= len(vals) products
                c0 = off + s0 - c_lo
                grid[int(bucket[lo_i]) - b_lo, c0: c0 + res.size] += res
        # error: window values (step_rel), kernel sums (<= widest terms), convolution sums (<= longest terms),
        # summing the source rows into the grid (<= len(plans) terms): all of non-negative terms
        longest = max(widest, max(p_[1].size for p_ in plans))
        rel = (1 + rel) * (1 + step_rel) * (1 + _gamma(longest + 2)) ** 2 * (1 + _gamma(len(plans) + 2)) - 1
        n_top = max(rows.rows)  # no column count after this category exceeds the largest before it
        rows = _Rows()
        held = 0
        for i in np.nonzero(grid.any(axis=1))[0].tolist():
            bucket = b_lo + i
            # >= (upper) / <= (lower) every n of the bucket; the upper end capped by n_top, since a bucket wider than
            # the columns left (Δ = h/μ huge for a category of tiny mean) would otherwise name counts that cannot occur
            n_rep = min((bucket + 1) * delta_n - 1, n_top) if upper else bucket * delta_n
            o, vv, dropped = _trim(c_lo, grid[i], floor)
            lost += dropped * (1 + 1e-6)
            if vv.size:
                rows.rows[n_rep] = (o, vv.copy())
                rows.adds[n_rep] = 1
                held += vv.size
        if held > cell_limit:
            return None
    # category 0 takes the rest (v_0 = 0): R = w_0 + α whatever n is
    lo_c = min(o for o, _ in rows.rows.values())
    hi_c = max(o + vv.size for o, vv in rows.rows.values())
    law = np.zeros(hi_c - lo_c)
    for o, vv in rows.rows.values():
        law[o - lo_c: o - lo_c + vv.size] += vv
    rel = (1 + rel) * (1 + _gamma(len(rows.rows) + 2)) - 1
    return ChainLaw(upper, h, w[0], lo_c, law, rel, lost, held)


def _divergences(law: ChainLaw, t: float, upper_bound: bool, w_top: float) -> tuple[float, float]:
    """Bounds (upper if ``upper_bound``) on E[(R − t)₊] and E[(1 − tR)₊] from one chain's law."""
    w0 = float(law.w0)
    w0 = math.nextafter(w0, math.inf if law.upper else -math.inf)  # R⁺ rounded up, R⁻ down
    r = w0 + (law.offset + np.arange(law.values.size)) * law.h  # c·h exact; one rounding in the sum
    r = r * (1 + 4 * U) if law.upper else r * (1 - 4 * U)  # covers the sum's rounding and this product's
    a = np.maximum(r - t, 0.0)
    b = np.maximum(1.0 - t * r, 0.0)
    # plain sums, not np.dot: BLAS threads stall on a busy machine for long vectors
    pa, pb = float((law.values * a).sum()), float((law.values * b).sum())
    g = _gamma(law.values.size + 4) + 4 * U
    fl_a = 8 * U * float((law.values * (r + t)).sum())  # rounding of each integrand
    fl_b = 8 * U * float((law.values * (1.0 + t * r)).sum())
    if upper_bound:
        scale = (1 + g) / (1 - law.rel)
        return pa * scale + fl_a + law.lost * w_top, pb * scale + fl_b + law.lost * 1.01
    scale = (1 - g) / (1 + law.rel)
    return max(0.0, pa * scale - fl_a), max(0.0, pb * scale - fl_b)


def _bounds(up: ChainLaw, down: ChainLaw, t: float, w_top: float) -> tuple[float, float]:
    """(lower, upper) on δ(t) = max of both divergences at e^ε = t (the float t, exactly)."""
    a_up, _ = _divergences(up, t, True, w_top)  # E[(R − t)₊] is largest under R⁺
    _, b_up = _divergences(down, t, True, w_top)  # E[(1 − tR)₊] is largest under R⁻
    a_lo, _ = _divergences(down, t, False, w_top)
    _, b_lo = _divergences(up, t, False, w_top)
    return max(a_lo, b_lo), max(a_up, b_up)


def chain_delta(n_pub: int, n_bit: int, flip_prob: float, epsilon: float, h: float) -> tuple[float, float]:
    """Certified ``(lower, upper)`` on δ(ε) of the pair from both chains on the grid ``h``."""
    from vetdp.arith.rounding import inf_exp, neg_inf_exp
    from vetdp.buffling._common import check_epsilon

    eps = check_epsilon(epsilon)
    up = chain_laws(n_pub, n_bit, flip_prob, h, True)
    down = chain_laws(n_pub, n_bit, flip_prob, h, False)
    if up is None or down is None:
        raise ArithmeticError(f"more than {CELL_LIMIT} cells at h={h}")
    w_top = float(loss_weights(n_pub, Fraction(flip_prob))[n_pub]) * (1 + 1e-12)
    return _bounds(up, down, inf_exp(eps), w_top)[0], _bounds(up, down, neg_inf_exp(eps), w_top)[1]


def _pow2_below(x: float) -> float:
    return 2.0 ** math.floor(math.log2(x))


def chain_epsilon(n_pub: int, n_bit: int, flip_prob: float, delta: float, target: float = 0.008,
                  cell_limit: int = CELL_LIMIT, passes: int = 3, work: float | None = CHAIN_WORK
                  ) -> EpsilonBracket | None:
    """Certified ε(δ) bracket of the heuristic pair by the category chains (module docstring).

    The grid is refined (at most ``passes`` times) until the bracket's relative width is <= ``target``; the last
    bracket is returned even when wider. None when even the first grid needs more than ``cell_limit`` cells.
    ``work``: the budget of multiply-adds over all passes (None: none); a finer pass that would go past it is
    abandoned for the bracket already certified, and :class:`ChainBudgetExceeded` is raised when the first pass
    would. The bracket's ``products`` says how many were done: the result never depends on the machine's speed.
    """
    k, m, p = check_n_pub(n_pub), check_n_bit(n_bit), check_flip_prob(flip_prob)
    d = check_delta(delta)
    if work is not None and not (isinstance(work, (int, float)) and not isinstance(work, bool) and 0 < work < math.inf):
        raise ValueError(f"work={work!r} must be a finite number of multiply-adds > 0 (or None: no work budget)")
    spent = ChainWork(work)
    start = time.perf_counter()
    if p == 0.5:
        return EpsilonBracket(k, m, p, d, 0.0, 0.0, "chain", 1, time.perf_counter() - start, 0)
    fp = Fraction(p)
    fq = 1 - fp
    w_top = float(loss_weights(k, fp)[k]) * (1 + 1e-12)
    sd = math.sqrt(max(float((fq**2 / fp + fp**2 / fq) ** k) - 1.0, 1e-300) / m)  # sd of R under D
    h = _pow2_below(max(sd / 20, 1e-12))
    lo_t, hi_t = 1.0, math.nextafter(w_top * (1 + 1e-12), math.inf)
    best: EpsilonBracket | None = None
    cells = 0
    for _ in range(passes):
        try:
            up = chain_laws(k, m, p, h, True, floor=d * 1e-14, cell_limit=cell_limit, work=spent)
            down = chain_laws(k, m, p, h, False, floor=d * 1e-14, cell_limit=cell_limit,
                              work=spent) if up else None
        except ChainBudgetExceeded:
            if best is None:
                raise ChainBudgetExceeded(f"the category chains' work budget of {work:.3g} multiply-adds ran out "
                                          f"before a first bracket ({spent.done:.3g} done)") from None
            break
        if up is None or down is None:
            break
        cells = max(cells, up.cells, down.cells)

        def bounds(t: float, up: ChainLaw = up, down: ChainLaw = down) -> tuple[float, float]:
            return _bounds(up, down, t, w_top)

        t_lo, t_up = _search(bounds, lo_t, hi_t, 1e-6, d)
        lo_t, hi_t = t_lo, t_up  # a later, finer pass searches inside what this one certified
        upper = 0.0 if t_up == 1.0 else inf_ln(t_up)
        lower = 0.0 if t_lo == 1.0 else max(0.0, neg_inf_ln(t_lo))
        best = EpsilonBracket(k, m, p, d, lower, upper, "chain", cells, time.perf_counter() - start, spent.done)
        if best.relative_width <= target or upper == 0.0:
            break
        # the width is about proportional to h (measured): aim at 85% of the target
        h = min(h / 2, _pow2_below(h * 0.85 * target / best.relative_width))
    return best
