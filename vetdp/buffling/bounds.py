"""δ(ε) and ε(δ) for the many-BF pair, from the certified grid laws of :mod:`vetdp.buffling.many_bf`.

* **Hockey-stick** δ(ε) = max(Σ(P − e^ε P')₊, Σ(P' − e^ε P)₊): the pair is (ε, δ)-close iff
  δ(ε) <= δ. This is the (ε, δ)-DP statement for the pair, and it is tight.
* **Quantile rule** (the document's): ε such that Pr[L > ε] <= δ in both directions
  (L = −ln R under D, L = ln R under D'). Pr[L > ε] <= δ implies δ(ε) <= δ, so the rule,
  read with these signs and computed exactly, is valid but looser. Read literally, the
  document's first term is the δ-quantile of ln R under D (a lower quantile, usually
  negative), which drops the direction D → D': that reading can undercut the true ε.

Every ``upper`` is an upper bound on the true value and every ``lower`` a lower bound
(under the assumption stated in :mod:`vetdp.buffling.many_bf`); float sums carry the
recursive-summation error bound (n−1)·u·Σ|terms|.

Proof: proofs/buffling.md
"""

from __future__ import annotations

import dataclasses
import math
import time

import numpy as np

from vetdp.arith.rounding import inf_exp, neg_inf_exp
from vetdp.buffling._common import check_delta, check_epsilon, check_flip_prob, check_n_bit, check_n_pub
from vetdp.buffling.logo_counts import PREFIX_LIMIT, EpsilonBracket, conditional_epsilon, exact_epsilon, exact_is_cheap
from vetdp.buffling.many_bf import ManyBFDistribution, U
from vetdp.core.validation import check_int

CHAIN_TARGET = 0.008  # certified_epsilon runs the category chains where the grid laws are wider than this

__all__ = ["CHAIN_TARGET", "DeltaBounds", "EpsilonBounds", "EpsilonBracket", "certified_epsilon",
           "many_bf_delta",
           "many_bf_epsilon"]


def _sums(dist: ManyBFDistribution) -> dict:
    """Prefix and suffix sums of pmf and pmf/x, pmf·x (cached on the distribution)."""
    if not dist.cache:
        x = np.arange(dist.cells) * dist.h
        inv = np.zeros_like(x)
        inv[1:] = 1.0 / x[1:]
        for name, pmf in (("up_dp", dist.up_dp), ("down_dp", dist.down_dp)):
            # T0[i] = Σ_{j>=i} pmf[j], T1[i] = Σ_{j>=i} pmf[j]/x_j, summed from the far end
            dist.cache[name] = (np.append(np.cumsum(pmf[::-1])[::-1], 0.0),
                                np.append(np.cumsum((pmf * inv)[::-1])[::-1], 0.0))
        for name, pmf in (("up_d", dist.up_d), ("down_d", dist.down_d)):
            # H0[i] = Σ_{j<i} pmf[j], H1[i] = Σ_{j<i} pmf[j]·x_j
            dist.cache[name] = (np.concatenate([[0.0], np.cumsum(pmf)]), np.concatenate([[0.0], np.cumsum(pmf * x)]))
    return dist.cache


def _tail_term(dist: ManyBFDistribution, name: str, c: float, up: bool) -> float:
    """Σ_{x_j > c} pmf[j](1 − c/x_j), rounded in the direction ``up``."""
    t0, t1 = _sums(dist)[name]
    j = min(int(math.floor(c / dist.h)) + 1, dist.cells)  # first cell with j·h > c (h a power of two)
    while j > 0 and (j - 1) * dist.h > c:
        j -= 1
    val = float(t0[j] - c * t1[j])
    err = 4 * (dist.cells + 8) * U * float(t0[j] + c * t1[j])
    return max(0.0, val + err if up else val - err)


def _head_term(dist: ManyBFDistribution, name: str, c: float, up: bool) -> float:
    """Σ_{x_j < 1/c} pmf[j](1 − c·x_j), rounded in the direction ``up``."""
    h0, h1 = _sums(dist)[name]
    j = 0 if c <= 0 else min(dist.cells, int(math.ceil((1.0 / c) / dist.h)) + 1)
    while j > 0 and c * ((j - 1) * dist.h) >= 1.0:
        j -= 1
    val = float(h0[j] - c * h1[j])
    err = 4 * (dist.cells + 8) * U * float(h0[j] + c * h1[j])
    return max(0.0, val + err if up else val - err)


@dataclasses.dataclass(frozen=True)
class DeltaBounds:
    """Bounds on the two hockey-stick divergences of the pair at ``epsilon``."""

    epsilon: float
    d_to_dp_lower: float  # Σ(P − e^ε P')₊
    d_to_dp_upper: float
    dp_to_d_lower: float  # Σ(P' − e^ε P)₊
    dp_to_d_upper: float

    @property
    def upper(self) -> float:
        return max(self.d_to_dp_upper, self.dp_to_d_upper)

    @property
    def lower(self) -> float:
        return max(self.d_to_dp_lower, self.dp_to_d_lower)


def many_bf_delta(dist: ManyBFDistribution, epsilon: float) -> DeltaBounds:
    """Certified lower and upper bounds on δ(ε) for both directions of the pair."""
    eps = check_epsilon(epsilon)
    c_lo, c_hi = neg_inf_exp(eps), inf_exp(eps)
    up_dp = _tail_term(dist, "up_dp", c_lo, True) + dist.up_dp_over + dist.slack_up
    low_dp = _tail_term(dist, "down_dp", c_hi, False) - dist.slack_down
    up_d = _head_term(dist, "down_d", c_lo, True) + dist.slack_down
    low_d = _head_term(dist, "up_d", c_hi, False) - dist.slack_up
    return DeltaBounds(eps, max(0.0, low_d), min(1.0, up_d), max(0.0, low_dp), min(1.0, up_dp))


@dataclasses.dataclass(frozen=True)
class EpsilonBounds:
    """ε(δ) as [lower, upper] by the hockey-stick, by the quantile rule read as two losses, and by
    the quantile rule read literally (max(Q_δ[ln R | D], Q_(1−δ)[ln R | D']))."""

    delta: float
    hockey_lower: float
    hockey_upper: float
    quantile_lower: float
    quantile_upper: float
    literal_quantile_lower: float
    literal_quantile_upper: float


def _bisect(pred, hi: float = 1.0, iters: int = 60) -> float:
    """A float at which the monotone (False…True) ``pred`` holds, within 2^-iters·hi of the first such."""
    lo = 0.0
    if pred(lo):
        return lo
    while not pred(hi):
        lo, hi = hi, hi * 2
        if hi > 700:
            raise ArithmeticError("no ε <= 700 reaches this δ on this grid; raise r_cap or grid_bits")
    for _ in range(iters):
        mid = (lo + hi) / 2
        if pred(mid):
            hi = mid
        else:
            lo = mid
    return hi


def _ln(x: float, up: bool) -> float:
    v = math.log(x)
    for _ in range(2):
        v = math.nextafter(v, math.inf if up else -math.inf)
    return v


def _first(pred, g: int) -> int | None:
    """Smallest i in [0, g) at which the monotone (False…True) ``pred`` holds."""
    if not pred(g - 1):
        return None
    lo, hi = 0, g - 1
    while lo < hi:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if pred(mid) else (mid + 1, hi)
    return lo


def _last(pred, g: int) -> int | None:
    """Largest i in [0, g] at which the monotone (True…False) ``pred`` holds."""
    if not pred(0):
        return None
    lo, hi = 0, g
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if pred(mid) else (lo, mid - 1)
    return lo


def many_bf_epsilon(dist: ManyBFDistribution, delta: float) -> EpsilonBounds:
    """ε(δ) bounds for the pair by the hockey-stick and by the document's quantile rule."""
    d = check_delta(delta)
    hs_up = _bisect(lambda e: many_bf_delta(dist, e).upper <= d)
    hs_lo = max(0.0, _bisect(lambda e: many_bf_delta(dist, e).lower <= d) * (1 - 1e-15) - 1e-15)
    h, g, c = dist.h, dist.cells, _sums(dist)
    # D': Pr[R > i·h] <= T0_up[i+1] + overflow + slack (R <= R^↑ on E), >= T0_down[i+1] − slack
    t_up, t_dn = c["up_dp"][0], c["down_dp"][0]
    i_up = _first(lambda i: t_up[i + 1] + dist.up_dp_over + dist.slack_up <= d, g)
    i_lo = _first(lambda i: t_dn[i + 1] - dist.slack_down <= d, g)
    q2_up = math.inf if i_up is None else (_ln(i_up * h, True) if i_up else -math.inf)
    q2_lo = math.inf if i_lo is None else (_ln((i_lo - 1) * h, False) if i_lo >= 2 else -math.inf)
    # D: Pr[R < i·h] <= H0_down[i] + slack (R >= R^↓ on E), >= H0_up[i] − slack
    h_dn, h_up = c["down_d"][0], c["up_d"][0]
    j_up = _last(lambda i: h_dn[i] + dist.slack_down <= d, g)
    j_lo = _last(lambda i: h_up[i] - dist.slack_up <= d, g)
    q1_up = -_ln(j_up * h, False) if j_up else math.inf
    q1_lo = -_ln((j_lo + 1) * h, True) if j_lo is not None else math.inf
    return EpsilonBounds(d, hs_lo, hs_up, max(0.0, q1_lo, q2_lo), max(0.0, q1_up, q2_up),
                         max(-q1_up, q2_lo), max(-q1_lo, q2_up))


def certified_epsilon(n_pub: int, n_bit: int, flip_prob: float, delta: float, grid_bits: int = 20,
                      r_cap: float = 128.0, prefix_limit: int = PREFIX_LIMIT,
                      chain_work: float | None = None) -> EpsilonBracket:
    """Certified ``lower <= ε(δ) <= upper`` (hockey-stick) for the heuristic pair, by the finest method that fits.

    In order: exact enumeration of every logo count (:func:`vetdp.buffling.logo_counts.exact_epsilon`, floats
    adjacent to ln of an exact rational) when that takes seconds (``exact_is_cheap``); else conditioning on all but
    two categories (:func:`~vetdp.buffling.logo_counts.conditional_epsilon`) when at most ``PREFIX_LIMIT`` prefixes
    are needed (``prefix_limit``: larger values reach further at about 1 s and 150 MB per million); else the coupled
    grid laws of :func:`vetdp.buffling.many_bf.many_bf_distribution` (``r_cap`` raised 16-fold, up to 2^40, while
    the grid does not reach δ), and where their bracket is wider than ``CHAIN_TARGET`` (0.8%) the monotone category
    chains (:func:`vetdp.buffling.category_chain.chain_epsilon`), intersected with the grid laws' bracket when both
    exist. ArithmeticError when neither gives a bracket (:class:`~vetdp.buffling.category_chain.ChainBudgetExceeded`
    when the chains' work budget ran out). ``chain_work``: the chains' budget of multiply-adds (None: the default
    :data:`~vetdp.buffling.category_chain.CHAIN_WORK`). Every budget here is work: the bracket never depends on
    the machine's speed.
    """
    k, m, p = check_n_pub(n_pub), check_n_bit(n_bit), check_flip_prob(flip_prob)
    d = check_delta(delta)
    start = time.perf_counter()
    if exact_is_cheap(k, m):
        e = exact_epsilon(k, m, p, d)
        return EpsilonBracket(k, m, p, d, e.lower, e.upper, "enumeration", e.outcomes, time.perf_counter() - start)
    r = conditional_epsilon(k, m, p, d, limit=check_int("prefix_limit", prefix_limit, lo=1, hi=10**8))
    if r is not None:
        return r
    from vetdp.buffling.category_chain import CHAIN_WORK, ChainBudgetExceeded, chain_epsilon
    from vetdp.buffling.many_bf import many_bf_distribution

    grid: tuple[float, float, int] | None = None
    attempt = 0
    while grid is None:  # a grid that does not reach this δ: cover 16 times more of R, coarser, up to 2^40
        cap = min(float(r_cap) * 16**attempt, 2.0**40)
        dist = many_bf_distribution(k, m, p, grid_bits=grid_bits, r_cap=cap)
        try:
            eps = many_bf_epsilon(dist, d)
            grid = (eps.hockey_lower, eps.hockey_upper, dist.cells)
        except ArithmeticError:
            if cap == 2.0**40:
                break
        attempt += 1
    if grid is not None and (grid[1] == 0.0 or (grid[1] - grid[0]) / grid[1] <= CHAIN_TARGET):
        return EpsilonBracket(k, m, p, d, grid[0], grid[1], "coupling", grid[2], time.perf_counter() - start)
    failure: type[ArithmeticError] = ArithmeticError
    try:
        c, chain_failure = chain_epsilon(k, m, p, d, target=CHAIN_TARGET,
                                         work=CHAIN_WORK if chain_work is None else chain_work), \
            "exceed their cell limit"
    except ArithmeticError as why:  # out of work, or a numerical limit of the binomial windows: no chain bracket
        c, chain_failure = None, f"failed ({why})"
        failure = type(why) if isinstance(why, ChainBudgetExceeded) else ArithmeticError
    if c is None:
        if grid is None:  # ChainBudgetExceeded when more work would have helped
            raise failure(f"no certified bracket for n_pub={k} n_bit={m} flip_prob={p}: the grid laws do not reach "
                          f"this δ even at r_cap = 2^40 and the category chains {chain_failure}")
        return EpsilonBracket(k, m, p, d, grid[0], grid[1], "coupling", grid[2], time.perf_counter() - start)
    if grid is not None:  # two certified brackets: their intersection is one
        lo, hi = max(c.lower, grid[0]), min(c.upper, grid[1])
        return EpsilonBracket(k, m, p, d, lo, hi, "chain", c.work, time.perf_counter() - start, c.products)
    return EpsilonBracket(k, m, p, d, c.lower, c.upper, "chain", c.work, time.perf_counter() - start, c.products)
