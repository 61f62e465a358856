"""The document's Monte Carlo estimate of ε(δ) for many Bloom filters, with confidence intervals.

This is a *simulation* for comparison with the certified bounds of :mod:`vetdp.buffling.bounds`;
it is never used by the mechanism. Its NumPy generator is seeded from bytes read through
:func:`vetdp.sampling.random_bytes` (``os.urandom`` by default, a :class:`SeededSource` when a
``seed`` is given, so runs are reproducible).

The quantile estimates carry distribution-free confidence intervals from order statistics:
[X_(l), X_(u)] with l, u the α/2 and 1 − α/2 quantiles of Bin(n_simu, τ). When δ·n_simu is
too small for a finite interval the interval is reported as unbounded: the simulation cannot
say anything about that δ.
"""

from __future__ import annotations

import dataclasses
import math
import time
from fractions import Fraction

import numpy as np
from scipy import stats

from vetdp.buffling._common import (
    check_delta,
    check_flip_prob,
    check_n_bit,
    check_n_pub,
    column_weight_law,
    loss_weights,
)
from vetdp.core.validation import check_float, check_int, check_interval
from vetdp.sampling import SeededSource, random_bytes, use_source

__all__ = ["MonteCarloEstimate", "MonteCarloHockey", "simulate_hockey_epsilon", "simulate_many_bf",
           "simulation_generator"]


def simulation_generator(seed: int | None) -> np.random.Generator:
    """A NumPy generator for simulations, seeded from vetdp's byte source (``seed`` → SeededSource)."""
    if seed is None:
        raw = random_bytes(32)
    else:
        with use_source(SeededSource(check_int("seed", seed))):
            raw = random_bytes(32)
    return np.random.Generator(np.random.PCG64(int.from_bytes(raw, "big")))


@dataclasses.dataclass(frozen=True)
class MonteCarloEstimate:
    """ε estimates from ``n_simu`` draws per direction; intervals at ``confidence``."""

    delta: float
    n_simu: int
    seed: int | None
    q_low_d: float  # δ-quantile of ln R(g), g ~ D
    q_low_d_ci: tuple[float, float]
    q_high_dp: float  # (1−δ)-quantile of ln R(g'), g' ~ D'
    q_high_dp_ci: tuple[float, float]
    seconds: float

    @property
    def epsilon(self) -> float:
        """The quantile rule read as two losses: max(−Q_δ[ln R | D], Q_(1−δ)[ln R | D'], 0)."""
        return max(0.0, -self.q_low_d, self.q_high_dp)

    @property
    def epsilon_ci(self) -> tuple[float, float]:
        return (max(0.0, -self.q_low_d_ci[1], self.q_high_dp_ci[0]), max(0.0, -self.q_low_d_ci[0],
                                                                          self.q_high_dp_ci[1]))

    @property
    def epsilon_literal(self) -> float:
        """The rule as printed: max(Q_δ[ln R | D], Q_(1−δ)[ln R | D'])."""
        return max(self.q_low_d, self.q_high_dp)


def _quantile_ci(sorted_x: np.ndarray, tau: float, alpha: float) -> tuple[float, float]:
    n = sorted_x.size
    lo = int(stats.binom.ppf(alpha / 2, n, tau)) - 1
    hi = int(stats.binom.ppf(1 - alpha / 2, n, tau))
    lo_v = float(sorted_x[lo]) if lo >= 0 else -math.inf
    hi_v = float(sorted_x[hi]) if hi < n else math.inf
    return lo_v, hi_v


def _simulation(n_pub: int, n_bit: int, flip_prob: float, delta: float, n_simu: int, seed: int | None,
                confidence: float) -> tuple:
    """Validated (k, m, δ, n_simu, confidence), the seeded generator, and the float column law π and loss weights w
    that both simulations draw from."""
    k, m, p = check_n_pub(n_pub), check_n_bit(n_bit), check_flip_prob(flip_prob)
    d = check_delta(delta)
    n = check_int("n_simu", n_simu, lo=10, hi=10**8)
    conf = check_float("confidence", confidence)
    check_interval("confidence", conf, 0, 1, lo_closed=False, hi_closed=False)
    fp = Fraction(p)
    pi = np.array([float(x) for x in column_weight_law(k, fp)])
    w = np.array([float(x) for x in loss_weights(k, fp)])
    return k, m, d, n, conf, simulation_generator(seed), pi, w


def simulate_many_bf(n_pub: int, n_bit: int, flip_prob: float, delta: float, n_simu: int = 100_000,
                     seed: int | None = None, confidence: float = 0.95) -> MonteCarloEstimate:
    """The document's procedure: sample g ~ Mult(m, π_0) and g' ~ Mult(m−1, π_0) ⊕ Mult(1, π_k), take quantiles."""
    k, m, d, n, conf, rng, pi, w = _simulation(n_pub, n_bit, flip_prob, delta, n_simu, seed, confidence)
    start = time.perf_counter()
    g = rng.multinomial(m, pi, size=n)
    gp = rng.multinomial(m - 1, pi, size=n)
    gp[np.arange(n), rng.choice(k + 1, size=n, p=pi[::-1])] += 1
    ln_r = np.sort(np.log(g @ w / m))
    ln_rp = np.sort(np.log(gp @ w / m))
    alpha = 1 - conf
    return MonteCarloEstimate(
        d, n, seed,
        float(np.quantile(ln_r, d)), _quantile_ci(ln_r, d, alpha),
        float(np.quantile(ln_rp, 1 - d)), _quantile_ci(ln_rp, 1 - d, alpha),
        time.perf_counter() - start)


@dataclasses.dataclass(frozen=True)
class MonteCarloHockey:
    """A plain Monte Carlo estimate of the hockey-stick ε(δ) of the pair, with a normal-approximation interval.

    ``contributing`` is the number of draws with a non-zero term at the estimate; when it is small (below about
    10) the interval is not to be trusted: the estimate rests on a handful of rare draws, or on none.
    """

    delta: float
    n_simu: int
    seed: int | None
    epsilon: float
    epsilon_ci: tuple[float, float]
    contributing: int
    seconds: float


def simulate_hockey_epsilon(n_pub: int, n_bit: int, flip_prob: float, delta: float, n_simu: int = 100_000,
                            seed: int | None = None, confidence: float = 0.95) -> MonteCarloHockey:
    """Estimate ε(δ) = min{ε >= 0 : max(E_D[(1 − e^ε R)₊], E_D[(R − e^ε)₊]) <= δ} from ``n_simu`` draws g ~ D.

    Both divergences are means under D (Pr[A(D') = g] = Pr[A(D) = g]·R(g)), estimated by sample means; the
    interval inverts mean ± z·(standard error) at each t. No guarantee: this is the baseline the certified
    bracket (:func:`vetdp.buffling.bounds.certified_epsilon`) is benchmarked against.
    """
    k, m, d, n, conf, rng, pi, w = _simulation(n_pub, n_bit, flip_prob, delta, n_simu, seed, confidence)
    start = time.perf_counter()
    r = np.empty(n)
    chunk = 1 << 18
    for s in range(0, n, chunk):  # bounded memory: (k + 1) counts per draw, one chunk at a time
        size = min(chunk, n - s)
        r[s: s + size] = rng.multinomial(m, pi, size=size) @ w / m
    z = float(stats.norm.ppf(0.5 + conf / 2))

    def stat(t: float, shift: float) -> float:
        a, b = np.maximum(r - t, 0.0), np.maximum(1.0 - t * r, 0.0)
        return max(float(a.mean()) + shift * z * float(a.std()) / math.sqrt(n),
                   float(b.mean()) + shift * z * float(b.std()) / math.sqrt(n))

    def solve(shift: float) -> float:
        lo, hi = 0.0, math.log(float(w[-1])) + 1e-9  # at t >= w_k both means are 0
        if stat(1.0, shift) <= d:
            return 0.0
        for _ in range(60):
            mid = (lo + hi) / 2
            lo, hi = (lo, mid) if stat(math.exp(mid), shift) <= d else (mid, hi)
        return hi

    eps = solve(0.0)
    t = math.exp(eps)
    used = int(np.count_nonzero(r > t) + np.count_nonzero(t * r < 1.0))
    return MonteCarloHockey(d, n, seed, eps, (solve(-1.0), solve(1.0)), used, time.perf_counter() - start)
