"""``estimate_flip_prob``: the smallest flip probability whose privacy reaches a target ε at δ.

Flipping with p2 >= p1 (both <= 1/2) is flipping with p1 followed by an independent flip, so
the true δ(ε) is non-increasing in p: a bisection over p is a monotone search.

* ``method="exact"`` (default, deterministic): the predicate is a certified upper bound
  δ_upper(ε) <= δ, by the finest method that fits: conditioning on all but two categories
  (:func:`vetdp.buffling.logo_counts.conditional_delta`, δ = 0 exactly at p = 1/2) where its
  prefixes fit, else the coupled grid laws (:func:`vetdp.buffling.bounds.many_bf_delta`); the
  returned p satisfies it, so the buffling of the heuristic pair at that p is (ε, δ)-close.
  Guarantee: δ(ε; p) <= δ.
* ``method="montecarlo"``: the predicate is the document's simulated quantile rule (seeded, so
  repeatable); no guarantee.

Proof: proofs/buffling.md
"""

from __future__ import annotations

import dataclasses
import math

from vetdp.buffling._common import check_delta, check_epsilon, check_n_bit, check_n_pub
from vetdp.buffling.bounds import many_bf_delta
from vetdp.buffling.logo_counts import conditional_delta
from vetdp.buffling.many_bf import many_bf_distribution
from vetdp.buffling.montecarlo import simulate_many_bf
from vetdp.core.validation import check_float, check_interval

__all__ = ["FlipProbResult", "estimate_flip_prob"]


@dataclasses.dataclass(frozen=True)
class FlipProbResult:
    n_pub: int
    n_bit: int
    epsilon: float
    delta: float
    method: str
    flip_prob: float  # satisfies the predicate
    infeasible_below: float  # the largest p tried that failed it (0 if none)
    evaluations: int
    delta_upper_at_result: float | None  # exact method: the certified δ_upper(ε) at flip_prob


def estimate_flip_prob(n_pub: int, n_bit: int, epsilon: float, delta: float, method: str = "exact",
                       rel_tol: float = 1e-3, n_simu: int = 100_000, seed: int = 0, grid_bits: int = 18,
                       progress=None) -> FlipProbResult:
    """Bisection on p in (0, 1/2] until the bracket is within ``rel_tol`` (relative) of the answer."""
    k, m = check_n_pub(n_pub), check_n_bit(n_bit)
    eps, d = check_epsilon(epsilon), check_delta(delta)
    tol = check_float("rel_tol", rel_tol)
    check_interval("rel_tol", tol, 0, 1, lo_closed=False, hi_closed=False)
    if method not in ("exact", "montecarlo"):
        raise ValueError(f"method={method!r} must be one of 'exact', 'montecarlo'")
    r_cap = float(2 ** max(7, math.ceil(math.log2(math.exp(min(eps, 30.0)) * 64))))
    evaluations = 0
    last_upper: dict[float, float] = {}

    def ok(p: float) -> bool:
        nonlocal evaluations
        evaluations += 1
        if progress is not None:
            progress(evaluations)
        if method == "exact":
            fine = conditional_delta(k, m, p, eps)
            up = fine[1] if fine is not None else \
                many_bf_delta(many_bf_distribution(k, m, p, grid_bits=grid_bits, r_cap=r_cap), eps).upper
            last_upper[p] = up
            return up <= d
        return simulate_many_bf(k, m, p, d, n_simu=n_simu, seed=seed).epsilon <= eps

    hi, lo = 0.5, 0.0
    if not ok(hi):  # at p = 1/2 the output does not depend on the input (δ = 0): only a method's slack refuses it
        raise ValueError(f"delta={delta!r} is below the numerical slack of the certified bound "
                         f"({last_upper[hi]:.2g} at flip_prob=0.5, where the true δ is 0); choose a delta above it")
    step = 0.25
    while step > 1e-300 and ok(step):  # find a failing lower end
        hi, step = step, step / 4
    lo = step if step > 1e-300 else 0.0
    while hi - lo > tol * hi:
        mid = (lo + hi) / 2
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return FlipProbResult(k, m, eps, d, method, hi, lo, evaluations, last_upper.get(hi))
