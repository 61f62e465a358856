"""The exact privacy-loss distribution (PLD) of RR, categorical RR, RAPPOR and k-RAPPOR composed n times.

On the worst-case pair, one run is ``d`` independent t-ary RR coordinates with log-ratio
``a`` (:class:`~vetdp.accounting.curves.RRFamily`), so n runs are ``m = n·d`` i.i.d. steps,
each with privacy loss +a (probability p under P), −a (probability r) or 0 (probability
(t−2)r, only for t > 2), p = e^a/(e^a+t−1), r = 1/(e^a+t−1). The total loss is ``L = s·a``
with ``s`` the number of +a steps minus the number of −a steps: binomial for t = 2,
a binomial mixture of binomials for t > 2. Then (hockey-stick divergence)

    δ(ε) = E_P[(1 − e^{ε−L})₊] = Σ_s P(s)·(1 − e^{ε − s·a})₊.

Both directions: the reverse loss (Q against P) has the same distribution, because
swapping the two inputs swaps the +a and −a outcomes, whose Q-probabilities are the
P-probabilities of the mirrored outcomes; :meth:`ExactPLD.delta_reverse` computes it from
the likelihood ratio independently and the tests check the two agree.

Adaptive composition of a mechanism whose pairs are all dominated by one pair is
dominated by composing that pair, so these δ(ε) hold for n adaptive runs.

Two evaluations: :meth:`ExactPLD.delta` in float64 (fast, ~1e-12 relative) drives the
search; :meth:`ExactPLD.delta_bounds` encloses the exact δ by outward-rounded interval
arithmetic (mpmath.iv), and :meth:`ExactPLD.epsilon` returns an ε whose δ is so certified.
"""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction
from typing import Any

import numpy as np
from scipy import stats

from vetdp.accounting.curves import RRFamily, iv_endpoints, iv_precision
from vetdp.arith.rounding import round_down, round_up
from vetdp.core.validation import check_float, check_int, check_interval

__all__ = ["ExactPLD", "EpsilonAtDelta", "check_delta"]

_IV_PREC = 160
_TAIL = Fraction(1, 2**80)  # stop summing when the bounded remainder is below this fraction of the sum


def check_delta(delta: object) -> float:
    """``delta`` as a float in (0, 1)."""
    d = check_float("delta", delta)
    check_interval("delta", d, 0, 1, lo_closed=False, hi_closed=False)
    return d


def _check_epsilon(epsilon: object) -> float:
    e = check_float("epsilon", epsilon)
    check_interval("epsilon", e, 0, None, lo_closed=True, hi_closed=False)
    return e


@dataclasses.dataclass(frozen=True)
class EpsilonAtDelta:
    """The tightest ε at δ from the exact PLD.

    ``epsilon``: δ(epsilon) <= delta is certified (interval arithmetic), so the n-fold
    mechanism is (epsilon, delta)-DP. ``epsilon_lower``: δ(epsilon_lower) > delta is
    certified, so no ε below it works; the true optimum lies in (epsilon_lower, epsilon].
    ``delta_certified``: the certified upper bound of δ(epsilon).
    """

    epsilon: float
    epsilon_lower: float
    delta: float
    delta_certified: float


class ExactPLD:
    """The exact PLD of ``compositions`` runs of ``family`` (see the module docstring)."""

    def __init__(self, family: RRFamily, compositions: int):
        if not isinstance(family, RRFamily):
            raise TypeError(f"family={family!r} must be an RRFamily")
        self.family = family
        self.compositions = check_int("compositions", compositions, lo=1)
        self.steps = self.compositions * family.coordinates
        self._pmf: tuple[np.ndarray, np.ndarray] | None = None
        self._trinomial: tuple[list, list] | None = None  # interval c_k and suffix sums (independent of ε)

    # ------------------------------------------------------------------ float64 path
    def _step_probabilities(self) -> tuple[float, float, float]:
        """(p, r, λ): the probabilities of +a, −a and 0, each computed without cancellation."""
        a, t = self.family.log_ratio, self.family.categories
        r = math.exp(-a) / (1 + (t - 1) * math.exp(-a))
        p = 1 / (1 + (t - 1) * math.exp(-a))
        return p, r, (t - 2) * r

    def pmf(self) -> tuple[np.ndarray, np.ndarray]:
        """(s, P(s)) for s = 0..m: the non-negative loss multiples and their P-probabilities (float64).

        Negative multiples are not needed: δ(ε) for ε >= 0 only sees losses above ε.
        """
        if self._pmf is None:
            m = self.steps
            p, r, lam = self._step_probabilities()
            s = np.arange(m + 1)
            if self.family.categories == 2:
                probs = np.zeros(m + 1)
                j = np.arange((m + 1) // 2, m + 1)  # j "+" steps give s = 2j − m >= 0
                probs[2 * j - m] = stats.binom.pmf(m - j, m, r)
            else:
                probs = _trinomial_tail_float(m, p, r, lam)
            self._pmf = (s, probs)
        return self._pmf

    def delta(self, epsilon: float) -> float:
        """δ(ε) = Σ_s P(s)(1 − e^{ε−s·a})₊ in float64 (not certified; see :meth:`delta_bounds`)."""
        eps = _check_epsilon(epsilon)
        s, probs = self.pmf()
        loss = s * self.family.log_ratio
        keep = loss > eps
        return float(np.sum(probs[keep] * -np.expm1(eps - loss[keep])))

    # ------------------------------------------------------------------ certified path
    def delta_bounds(self, epsilon: float) -> tuple[float, float]:
        """Floats ``lo <= δ(ε) <= hi`` for the exact δ, by outward-rounded interval arithmetic."""
        eps = _check_epsilon(epsilon)
        with iv_precision(_IV_PREC) as iv:
            A = self.family.log_ratio_interval(_IV_PREC)
            fe = Fraction(eps)
            e = iv.mpf(fe.numerator) / fe.denominator
            if self.family.categories == 2:
                lo, hi = _binary_delta(iv, A, self.steps, e)
            else:
                if self._trinomial is None:
                    self._trinomial = _trinomial_terms(iv, A, self.steps, self.family.categories)
                lo, hi = _trinomial_delta(iv, A, self.steps, e, *self._trinomial)
        return round_down(max(lo, Fraction(0))), round_up(min(hi, Fraction(1)))

    def epsilon(self, delta: float) -> EpsilonAtDelta:
        """The smallest ε with δ(ε) <= ``delta``, rounded up and certified (see :class:`EpsilonAtDelta`)."""
        target = check_delta(delta)
        top = self.steps * self.family.log_ratio  # δ(top) = 0: no loss exceeds it
        if self.delta(0.0) <= target:
            lo = hi = 0.0
        else:
            lo, hi = 0.0, top
            for _ in range(200):
                mid = (lo + hi) / 2
                if mid in (lo, hi):
                    break
                if self.delta(mid) > target:
                    lo = mid
                else:
                    hi = mid
        step = max(abs(hi) * 2**-44, 2**-1000)
        while True:  # the float search may be off by its rounding: certify, else move outward
            cert = self.delta_bounds(hi)[1]
            if cert <= target:
                break
            hi, step = hi + step, 2 * step
        step = max(abs(lo) * 2**-44, 2**-1000)
        lower = lo
        while lower > 0 and self.delta_bounds(lower)[0] <= target:
            lower, step = max(0.0, lower - step), 2 * step
        return EpsilonAtDelta(epsilon=hi, epsilon_lower=lower, delta=target, delta_certified=cert)


# ---------------------------------------------------------------------- interval sums

def _clamp0(iv: Any, x: Any) -> Any:
    """max(0, x) of an interval."""
    lo_t, hi_t = x._mpi_
    if iv.mpf(0) >= iv.make_mpf((hi_t, hi_t)):
        return iv.mpf(0)
    if iv.make_mpf((lo_t, lo_t)) < 0:
        return iv.make_mpf((iv.mpf(0)._mpi_[0], hi_t))
    return x


def _upper(x: Any) -> Fraction:
    return iv_endpoints(x)[1]


def _binary_delta(iv: Any, A: Any, m: int, e: Any) -> tuple[Fraction, Fraction]:
    """Enclosure of δ(ε) for m i.i.d. ±a steps (P(+a) = 1/(1+e^{−a})), a ∈ A."""
    eA = iv.exp(A)
    p, r = 1 / (1 + 1 / eA), 1 / (1 + eA)
    a_hi = _upper(A)
    e_lo = iv_endpoints(e)[0]
    if a_hi == 0:
        return Fraction(0), Fraction(0)
    # the loss (2j − m)a can exceed ε only when j > (ε/a_hi + m)/2
    j0 = max(0, min(m, math.floor((e_lo / a_hi + m) / 2)))
    prob = iv.mpf(math.comb(m, j0)) * p**j0 * r ** (m - j0)
    total = iv.mpf(0)
    for j in range(j0, m + 1):
        total += prob * _clamp0(iv, -iv.expm1(e - (2 * j - m) * A))
        if j == m:
            break
        ratio = iv.mpf(m - j) / (j + 1) * eA
        rho = _upper(ratio)
        lo_sum = iv_endpoints(total)[0]
        if rho < 1 and lo_sum > 0:
            tail = _upper(prob) * rho / (1 - rho)  # Σ_{i>j} P(i), each term at most P(i)
            if tail <= lo_sum * _TAIL:
                lo, hi = iv_endpoints(total)
                return lo, hi + tail
        prob = prob * ratio
    return iv_endpoints(total)


def _trinomial_recurrence_step(c_next: Any, c_k: Any, k: int, m: int, p: Any, r: Any, lam: Any) -> Any:
    """c_{k−1} from c_{k+1} and c_k, for k >= 1, where c_s = P(Σ steps = s) for m steps in {+1, 0, −1}.

    From z·f'·g = m·f·z·g' for f = g^m, g = p z + λ + r/z:
    p(m−k+1)·c_{k−1} = r(m+k+1)·c_{k+1} + λ·k·c_k, all terms positive for k >= 1 (stable).
    """
    return (r * (m + k + 1) * c_next + lam * k * c_k) / (p * (m - k + 1))


def _trinomial_tail_float(m: int, p: float, r: float, lam: float) -> np.ndarray:
    """P(s) for s = 0..m in float64, by the downward recurrence with rescaling (no underflow of the path)."""
    logs = np.full(m + 1, -np.inf)
    scale = m * math.log(p)  # c_m = p^m, carried as 1 · e^scale
    c_next, c_k = 0.0, 1.0
    logs[m] = scale
    for k in range(m, 0, -1):
        c_prev = _trinomial_recurrence_step(c_next, c_k, k, m, p, r, lam)
        c_next, c_k = c_k, c_prev
        if c_k > 1e280:
            c_next, c_k, scale = c_next / 1e280, c_k / 1e280, scale + math.log(1e280)
        logs[k - 1] = math.log(c_k) + scale if c_k > 0 else -np.inf
    return np.exp(logs)


def _trinomial_terms(iv: Any, A: Any, m: int, t: int) -> tuple[list, list]:
    """Intervals c_k = P(s = k) for k = 1..m (m steps in {+a, 0, −a}, a ∈ A) and suffix sums Σ_{j>=k} c_j.

    Runs the positive-term recurrence of :func:`_trinomial_recurrence_step` down from
    c_m = p^m. Independent of ε, so one run serves every δ(ε) of the search.
    """
    eA = iv.exp(A)
    p, r = eA / (eA + (t - 1)), 1 / (eA + (t - 1))
    lam = (t - 2) * r
    c: list = [iv.mpf(0)] * (m + 2)
    c_next, c_k = iv.mpf(0), p**m
    for k in range(m, 0, -1):
        c[k] = c_k
        if k > 1:
            c_next, c_k = c_k, _trinomial_recurrence_step(c_next, c_k, k, m, p, r, lam)
    suffix: list = [iv.mpf(0)] * (m + 2)
    for k in range(m, 0, -1):
        suffix[k] = suffix[k + 1] + c[k]
    return c, suffix


_FAR = 40  # a loss above ε + 40 has (1 − e^{ε−L}) in [1 − e^-40, 1], inside [1 − 2^-57, 1]


def _trinomial_delta(iv: Any, A: Any, m: int, e: Any, c: list, suffix: list) -> tuple[Fraction, Fraction]:
    """Enclosure of δ(ε) = Σ_k c_k (1 − e^{ε − kA})₊ from the terms of :func:`_trinomial_terms`.

    Terms whose loss may lie within 40 of ε are enclosed one by one; the rest, whose factor
    is in [1 − e^-40, 1] ⊂ [1 − 2^-57, 1], are bounded together through their suffix sum.
    """
    a_lo, a_hi = iv_endpoints(A)
    e_lo, e_hi = iv_endpoints(e)
    if a_hi == 0:
        return Fraction(0), Fraction(0)
    s0 = max(1, math.floor(e_lo / a_hi))
    far = m + 1 if a_lo <= 0 else min(m + 1, max(s0, math.ceil((e_hi + _FAR) / a_lo)))
    total = iv.mpf(0)
    for k in range(s0, far):
        total += c[k] * _clamp0(iv, -iv.expm1(e - k * A))
    if far <= m:
        total += suffix[far] * (1 - iv.mpf([0.0, 2.0**-57]))
    return iv_endpoints(total)
