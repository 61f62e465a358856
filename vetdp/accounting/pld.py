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
P-probabilities of the mirrored outcomes; the tests check both directions against the
enumerated output distributions of the real mechanisms.

Adaptive composition of a mechanism whose pairs are all dominated by one pair is
dominated by composing that pair, so these δ(ε) hold for n adaptive runs.

Two evaluations: :meth:`ExactPLD.delta` in float64 (fast, ~1e-12 relative) drives the
search; :meth:`ExactPLD.delta_bounds` encloses the exact δ (sums of integers rounded down
for the lower and up for the upper bound, starting values by mpmath.iv), and
:meth:`ExactPLD.epsilon` returns an ε whose δ is so certified. Both scale:

- t = 2: only the O(√m) terms of the binomial near the mode or the first loss above ε
  are summed, each direction ending at a certified geometric bound of its remainder;
  float64 keeps the window where ln P >= −800. Time O(√m), memory O(√m) floats.
- t > 2: one pass of a positive three-term recurrence over all m (two integer chains,
  rounded down and up), keeping checkpoints every 1024 steps; each δ(ε) then restarts
  from the checkpoint above the terms that matter (the rest bounded by Chernoff). Time
  O(m) once, memory O(m/1024 + √m).
"""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction
from typing import Any

import numpy as np
from mpmath.libmp import MPZ  # gmpy2's integers when installed (faster), else int

from vetdp.accounting.curves import RRFamily, iv_endpoints, iv_precision
from vetdp.arith.rounding import round_down, round_up
from vetdp.core.validation import check_float, check_int, check_interval

__all__ = ["ExactPLD", "EpsilonAtDelta", "check_delta", "certified_epsilon_search", "one_run_delta"]

_IV_PREC = 160


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
        self._trinomial: _TrinomialPass | None = None  # t > 2: the recurrence pass (independent of ε)

    # ------------------------------------------------------------------ float64 path
    def _step_probabilities(self) -> tuple[float, float, float]:
        """(p, r, λ): the probabilities of +a, −a and 0, each computed without cancellation."""
        a, t = self.family.log_ratio, self.family.categories
        r = math.exp(-a) / (1 + (t - 1) * math.exp(-a))
        p = 1 / (1 + (t - 1) * math.exp(-a))
        return p, r, (t - 2) * r

    def pmf(self) -> tuple[np.ndarray, np.ndarray]:
        """(s, P(s)) for the non-negative loss multiples s whose P-probability is not negligible (float64).

        Negative multiples are not needed: δ(ε) for ε >= 0 only sees losses above ε. Only the
        s with P(s) above about e^-760 are kept (for t = 2 the binomial is log-concave, so they
        form an interval of length O(√m)); everything left out sums to below m·e^-760, under
        float64's smallest number.
        """
        if self._pmf is None:
            m = self.steps
            p, r, _ = self._step_probabilities()
            if self.family.categories == 2:
                lo, hi = _binomial_window(m, p, r, first=(m + 1) // 2)  # j "+" steps give s = 2j − m >= 0
                from scipy import stats  # here: importing scipy.stats costs ~0.45 s, needed only for a binomial PLD

                j = np.arange(lo, hi + 1)
                s, probs = 2 * j - m, stats.binom.pmf(m - j, m, r)
            else:
                run = self._trinomial_run()
                s, probs = run.ks, run.probs
            self._pmf = (s, probs)
        return self._pmf

    def _trinomial_run(self) -> _TrinomialPass:
        if self._trinomial is None:
            with iv_precision(_IV_PREC) as iv:
                A = self.family.log_ratio_interval(_IV_PREC)
                self._trinomial = _trinomial_pass(iv, A, self.steps, self.family.categories)
        return self._trinomial

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
                estimate = self.delta(eps)  # only chooses where to start; the bound holds regardless
                tolerance = Fraction(estimate) * _TOLERANCE if estimate > 0 else Fraction(1, 2**1100)
                lo, hi = _trinomial_delta(iv, A, self.steps, self.family.categories, e, self._trinomial_run(),
                                          tolerance)
        return round_down(max(lo, Fraction(0))), round_up(min(hi, Fraction(1)))

    def epsilon(self, delta: float) -> EpsilonAtDelta:
        """The smallest ε with δ(ε) <= ``delta``, rounded up and certified (see :class:`EpsilonAtDelta`)."""
        top = self.steps * self.family.log_ratio  # δ(top) = 0: no loss exceeds it
        return certified_epsilon_search(self.delta, self.delta_bounds, top, delta, relative_step=2**-44)


# ---------------------------------------------------------------------- binary: fixed-point certified sum

_K = 256  # fraction bits of the fixed-point terms below
_ONE = 1 << _K
_REL_TAIL_BITS = 80  # stop when the bounded remainder is below 2^-80 of the sum so far
_TOLERANCE = Fraction(1, 2**_REL_TAIL_BITS)


def _ceil_div(x: int, y: int) -> int:
    return -((-x) // y)


def _float_start(x: Any) -> tuple[int, int, int]:
    """``(lo, hi, e)`` with ``lo·2^e <= x <= hi·2^e`` for an mpmath.iv interval ``x`` > 0, hi of about K bits."""
    lo, hi = iv_endpoints(x)
    e = hi.numerator.bit_length() - hi.denominator.bit_length() - _K
    scale = Fraction(2) ** -e
    return MPZ(max(0, math.floor(lo * scale))), MPZ(math.ceil(hi * scale)), e


def _float_mul(g: tuple[int, int, int], by: tuple[int, int]) -> tuple[int, int, int]:
    """``g`` times the fixed-point interval ``by``, rounded outwards and renormalised to about K bits."""
    lo, hi, e = g[0] * by[0] >> _K, _ceil_div(g[1] * by[1], _ONE), g[2]
    shift = hi.bit_length() - _K
    if shift > 64:
        lo, hi, e = lo >> shift, -((-hi) >> shift), e + shift
    elif shift < -64 and hi > 0:
        lo, hi, e = lo << -shift, hi << -shift, e + shift
    return lo, hi, e


def _factor(g: tuple[int, int, int]) -> tuple[int, int]:
    """Fixed-point bounds of (1 − g)₊ for the floating interval ``g``."""
    lo, hi, e = g
    if lo.bit_length() + e >= 1:  # g >= 1: the factor is 0
        return 0, 0
    shift = e + _K
    if shift >= 0:
        g_lo, g_hi = lo << shift, hi << shift
    elif -shift > hi.bit_length():  # g below one unit of the fixed point
        g_lo, g_hi = 0, 1
    else:
        g_lo, g_hi = lo >> -shift, -((-hi) >> -shift)
    return max(0, _ONE - g_hi), min(_ONE, max(0, _ONE - g_lo))


def _fixed(x: Any) -> tuple[int, int]:
    """Integers ``lo <= x·2^K <= hi`` for an mpmath.iv interval ``x`` >= 0 (outward)."""
    lo, hi = iv_endpoints(x)
    return MPZ(max(0, math.floor(lo * _ONE))), MPZ(math.ceil(hi * _ONE))


# Stirling series of ln n! = ln Γ(n) + ln n: coefficients B_2k / (2k(2k−1)) of n^{1−2k}, k = 1..6. For real
# n > 0 the remainder after these six terms has the sign of the first omitted term and is at most its size,
# B_14/(14·13·n^13) = 1/(156 n^13) (DLMF §5.11(ii)); tests/test_accounting_pld.py checks it against loggamma
_STIRLING = (Fraction(1, 12), Fraction(-1, 360), Fraction(1, 1260), Fraction(-1, 1680), Fraction(1, 1188),
             Fraction(-691, 360360))
_STIRLING_NEXT = Fraction(1, 156)


def _log_factorial(iv: Any, n: int) -> Any:
    """An interval containing ln n! (exactly below 1000; else the Stirling series with its remainder bound)."""
    if n < 2:
        return iv.mpf(0)
    if n <= 1000:
        return iv.log(iv.mpf(math.factorial(n)))
    series = sum((c / n ** (2 * k + 1) for k, c in enumerate(_STIRLING)), Fraction(0))
    bound = _STIRLING_NEXT / n**13
    lo, hi = series - bound, series + bound
    r = iv.mpf([(iv.mpf(lo.numerator) / lo.denominator).a, (iv.mpf(hi.numerator) / hi.denominator).b])
    return (n + iv.mpf(0.5)) * iv.log(n) - n + iv.log(2 * iv.pi) / 2 + r


_HUGE_A = 1024  # from here on e^{−a} <= 2^−1477 (a >= 1024 > 1477·ln 2)
_TINY_EXP_BITS = 1400  # e^{−a} and e^y for y <= −1024 are bounded by 2^−1400


def _one_minus_exp_down(y: Fraction) -> Fraction:
    """A lower bound of (1 − e^y)₊ (0 for y >= 0)."""
    if y >= 0:
        return Fraction(0)
    if y <= -_HUGE_A:
        return 1 - Fraction(1, 1 << _TINY_EXP_BITS)
    with iv_precision(_IV_PREC) as iv:
        return max(Fraction(0), 1 - iv_endpoints(iv.exp(iv.mpf(y.numerator) / y.denominator))[1])


def _one_minus_exp_up(y: Fraction) -> Fraction:
    """An upper bound of (1 − e^y)₊ (0 for y >= 0)."""
    if y >= 0:
        return Fraction(0)
    if y <= -_HUGE_A:
        return Fraction(1)
    with iv_precision(_IV_PREC) as iv:
        return min(Fraction(1), 1 - iv_endpoints(iv.exp(iv.mpf(y.numerator) / y.denominator))[0])


def _binary_delta_huge(a_lo: Fraction, a_hi: Fraction, m: int, e_lo: Fraction, e_hi: Fraction
                       ) -> tuple[Fraction, Fraction]:
    """Enclosure of δ(ε) for a per-step loss a >= 1024 (where e^a has thousands of digits or more): P(j = m) =
    p^m >= 1 − m·e^{−a} >= 1 − m·2^−1400, every factor is in [0, 1], and the factor of j = m is (1 − e^{ε−m·a})₊,
    decreasing in ε and increasing in a."""
    rest = min(Fraction(1), m * Fraction(1, 1 << _TINY_EXP_BITS))  # the mass of j < m, at most
    top_lo = _one_minus_exp_down(e_hi - m * a_lo)
    top_hi = _one_minus_exp_up(e_lo - m * a_hi)
    return (1 - rest) * top_lo, min(Fraction(1), top_hi + rest)


def _binary_delta(iv: Any, A: Any, m: int, e: Any) -> tuple[Fraction, Fraction]:
    """Enclosure of δ(ε) = Σ_j P(j)(1 − e^{ε−(2j−m)a})₊, j ~ Bin(m, p), p = 1/(1+e^{−a}), a ∈ A.

    The terms P(j)/P(j_s) are carried as fixed-point integers with 256 fraction bits, the
    lower bound rounded down and the upper bound up at every step, from the start j_s (the
    larger of the mode and the first j whose loss may exceed ε) outwards; each direction
    stops once a geometric bound of its remainder (the ratio P(j±1)/P(j) only shrinks
    away from the mode, and every factor is at most 1) is below 2^-80 of the sum. P(j_s)
    is enclosed by interval arithmetic (:func:`_log_factorial` for the binomial coefficient).
    """
    a_lo, a_hi = iv_endpoints(A)
    e_lo = iv_endpoints(e)[0]
    if a_hi == 0:
        return Fraction(0), Fraction(0)
    # for j <= j0 the loss (2j − m)a <= (2j0 − m)·a_hi <= ε: the factor is 0
    j0 = max(-1, min(m, math.floor((e_lo / a_hi + m) / 2)))
    if j0 >= m:
        return Fraction(0), Fraction(0)
    if a_lo >= _HUGE_A:  # e^a has no fixed-point form: j = m carries all but m·e^{−a} of the mass
        return _binary_delta_huge(a_lo, a_hi, m, e_lo, iv_endpoints(e)[1])
    a_float = float(a_lo)
    mode = min(m, math.floor((m + 1) / (1 + math.exp(-a_float)))) if a_float < 700 else m
    js = max(j0 + 1, mode)
    eA = iv.exp(A)
    log_p, log_r = -iv.log1p(1 / eA), -iv.log1p(eA)
    log_c = _log_factorial(iv, m) - _log_factorial(iv, js) - _log_factorial(iv, m - js)
    p_start = iv.exp(log_c + js * log_p + (m - js) * log_r)
    E, Einv = _fixed(eA), _fixed(1 / eA)
    down2, up2 = _fixed(1 / (eA * eA)), _fixed(eA * eA)  # g_{j+1} = g_j·e^{−2a}, g_{j−1} = g_j·e^{2a}
    g_start = _float_start(iv.exp(e - (2 * js - m) * A))
    f_lo, f_hi = _factor(g_start)
    s_lo, s_hi = f_lo, f_hi  # T(js) = 1
    tails = 0
    # upwards: j = js+1, ..., stopping on a bounded remainder
    t_lo, t_hi = MPZ(_ONE), MPZ(_ONE)
    g = g_start
    j = js
    while j < m:
        r_lo, r_hi = (m - j) * E[0] // (j + 1), _ceil_div((m - j) * E[1], j + 1)  # P(j+1)/P(j)
        if r_hi < _ONE:
            tail = _ceil_div(t_hi * r_hi, _ONE - r_hi)  # Σ_{i>j} T(i) <= T(j)·ρ/(1−ρ)
            if tail << _REL_TAIL_BITS <= s_lo:
                tails += tail
                break
        t_lo, t_hi = t_lo * r_lo >> _K, _ceil_div(t_hi * r_hi, _ONE)
        g = _float_mul(g, down2)
        f_lo, f_hi = _factor(g)
        s_lo += t_lo * f_lo >> _K
        s_hi += _ceil_div(t_hi * f_hi, _ONE)
        j += 1
    # downwards: j = js−1, ..., j0+1 (below j0+1 every factor is 0)
    t_lo, t_hi = MPZ(_ONE), MPZ(_ONE)
    g = g_start
    j = js
    while j - 1 > j0:
        r_lo, r_hi = j * Einv[0] // (m - j + 1), _ceil_div(j * Einv[1], m - j + 1)  # P(j−1)/P(j)
        if r_hi < _ONE:
            tail = _ceil_div(t_hi * r_hi, _ONE - r_hi)  # Σ_{i<j} T(i) <= T(j)·ρ/(1−ρ)
            if tail << _REL_TAIL_BITS <= s_lo:
                tails += tail
                break
        t_lo, t_hi = t_lo * r_lo >> _K, _ceil_div(t_hi * r_hi, _ONE)
        g = _float_mul(g, up2)
        f_lo, f_hi = _factor(g)
        s_lo += t_lo * f_lo >> _K
        s_hi += _ceil_div(t_hi * f_hi, _ONE)
        j -= 1
    lo_p, hi_p = iv_endpoints(p_start)
    return max(lo_p, Fraction(0)) * Fraction(int(s_lo), _ONE), hi_p * Fraction(int(s_hi + tails), _ONE)


_LOG_NEGLIGIBLE = -800.0  # e^-800 ≈ 1e-348: below float64's smallest subnormal


def _binomial_window(m: int, p: float, r: float, first: int) -> tuple[int, int]:
    """The interval [lo, hi] ⊂ [first, m] of j with ln Bin(j; m, p) >= −800 (approximately; float64).

    The binomial pmf is log-concave, so the set is an interval around the mode; its two ends
    are found by bisection. Returns an empty interval (lo > hi) when no j >= first qualifies.
    """
    from scipy import stats

    def logpmf(j: int) -> float:
        return float(stats.binom.logpmf(m - j, m, r))

    mode = min(m, max(0, math.floor((m + 1) * p)))
    if mode < first:
        if logpmf(first) < _LOG_NEGLIGIBLE:
            return first, first - 1
        lo_end, mode = first, first
    else:
        a, b = first, mode  # smallest j in [first, mode] that qualifies
        while a < b:
            mid = (a + b) // 2
            if logpmf(mid) >= _LOG_NEGLIGIBLE:
                b = mid
            else:
                a = mid + 1
        lo_end = a
    a, b = mode, m  # largest j in [mode, m] that qualifies
    while a < b:
        mid = (a + b + 1) // 2
        if logpmf(mid) >= _LOG_NEGLIGIBLE:
            a = mid
        else:
            b = mid - 1
    return lo_end, a


# ---------------------------------------------------------------------- t > 2: fixed-point recurrence
#
# c_k = P(s = k) for m i.i.d. steps in {+1, 0, −1} with probabilities (p, λ, r). From z·f'·g = m·f·z·g'
# for f = g^m, g = p z + λ + r/z:  p(m−k+1)·c_{k−1} = r(m+k+1)·c_{k+1} + λ·k·c_k, so with r/p = e^{−a},
# λ/p = (t−2)e^{−a}:  c_{k−1} = e^{−a}·[(m+k+1)·c_{k+1} + (t−2)·k·c_k] / (m−k+1), every term positive.
# Two chains run it down from the exact start c_{m+1} = 0, c_m = p^m: one rounded down throughout
# (with the lower end of e^{−a}), one rounded up; by positivity and monotonicity they enclose c_k.
# Each chain is a pair of integers with a shared binary exponent, renormalised to about K bits.

_CHECKPOINT = 1024  # the pass keeps both chains' state every this many k


def _chain_step(x1: int, x0: int, k: int, m: int, t2: int, E: int, up: bool) -> int:
    """One step of the recurrence: c_{k−1}·2^{−e} from (c_{k+1}, c_k)·2^{−e}, rounded down or up."""
    num = ((m + k + 1) * x1 + t2 * k * x0) * E
    den = (m - k + 1) << _K
    return _ceil_div(num, den) if up else num // den


def _normalise(x1: int, x0: int, e: int, up: bool) -> tuple[int, int, int]:
    """Shift the pair so that x0 has about K bits (exact left shifts; right shifts round down or up)."""
    shift = x0.bit_length() - _K
    if shift > 64:
        if up:
            return -((-x1) >> shift), -((-x0) >> shift), e + shift
        return x1 >> shift, x0 >> shift, e + shift
    if shift < -64 and x0 > 0:
        return x1 << -shift, x0 << -shift, e + shift
    return x1, x0, e


def _bf_value(x: int, e: int) -> float:
    """x·2^e as a float (rounded to nearest, 0 on underflow)."""
    sh = max(0, x.bit_length() - 64)
    return math.ldexp(float(x >> sh), e + sh)


def _bf_add(acc: tuple[int, int], x: int, e: int, up: bool) -> tuple[int, int]:
    """acc + x·2^e with acc = (integer, exponent), rounded down or up, acc kept to about K bits."""
    s, es = acc
    if s == 0:
        s, es = x, e
    elif e >= es:
        s += x << (e - es)
    else:
        s += -((-x) >> (es - e)) if up else x >> (es - e)  # Python's >> floors; no huge powers
    shift = s.bit_length() - _K - 64
    if shift > 0:
        s, es = (-((-s) >> shift) if up else s >> shift), es + shift
    return s, es


@dataclasses.dataclass
class _TrinomialPass:
    """What one pass of the recurrence over k = m..1 leaves behind (independent of ε).

    ``checkpoints``: (k, lower chain (x1, x0, e), upper chain) from k = m downwards every 1024
    steps. ``ks``, ``probs``: the k (ascending) with c_k > 2^-1100 and c_k in float64 (from the
    upper chain; for the float path only).
    """

    checkpoints: list
    ks: np.ndarray
    probs: np.ndarray


def _trinomial_pass(iv: Any, A: Any, m: int, t: int) -> _TrinomialPass:
    """Run both chains from k = m down to 1 (inlined :func:`_chain_step` and :func:`_normalise`)."""
    eA = iv.exp(A)
    E_lo, E_hi = _fixed(1 / eA)
    x0_lo, x0_hi, e_lo = _float_start((eA / (eA + (t - 1))) ** m)  # c_m = p^m
    x1_lo = x1_hi = MPZ(0)
    e_hi = e_lo
    t2 = t - 2
    lo_bits, hi_bits = _K - 64, _K + 64
    checkpoints, ks, probs = [], [], []
    for k in range(m, 0, -1):
        if (m - k) % _CHECKPOINT == 0:
            checkpoints.append((k, (x1_lo, x0_lo, e_lo), (x1_hi, x0_hi, e_hi)))
        if x0_hi.bit_length() + e_hi > -1100:
            ks.append(k)
            probs.append(_bf_value(x0_hi, e_hi))
        if k == 1:
            break
        den = (m - k + 1) << _K
        x1_lo, x0_lo = x0_lo, ((m + k + 1) * x1_lo + t2 * k * x0_lo) * E_lo // den
        x1_hi, x0_hi = x0_hi, -((-((m + k + 1) * x1_hi + t2 * k * x0_hi) * E_hi) // den)
        bits = x0_hi.bit_length()
        if bits > hi_bits:
            s = bits - _K
            x1_lo, x0_lo, e_lo = x1_lo >> s, x0_lo >> s, e_lo + s
            x1_hi, x0_hi, e_hi = -((-x1_hi) >> s), -((-x0_hi) >> s), e_hi + s
        elif bits < lo_bits and x0_hi > 0:
            s = _K - bits
            x1_lo, x0_lo, e_lo = x1_lo << s, x0_lo << s, e_lo - s
            x1_hi, x0_hi, e_hi = x1_hi << s, x0_hi << s, e_hi - s
    return _TrinomialPass(checkpoints, np.array(ks[::-1], dtype=np.int64), np.array(probs[::-1]))


def _chernoff(iv: Any, A: Any, m: int, t: int, k: int, above: bool) -> Fraction:
    """An upper bound of P(s >= k) (``above``) or of P(s <= k): (p·x + λ + r/x)^m · x^{−k} (Chernoff).

    E[x^s] = (p·x + λ + r/x)^m, and x^{s−k} >= 1 on the event for x >= 1 (above) or x <= 1
    (below). x is the float64 minimiser (any such x gives a valid bound); the bound is
    evaluated by interval arithmetic and returned as its upper end (1 when no x helps).
    """
    if (k > m and above) or (k < -m and not above):
        return Fraction(0)
    a = float(iv_endpoints(A)[0])
    if a > 700 or (k <= -m and above) or (k >= m and not above):
        return Fraction(1)
    r = math.exp(-a) / (1 + (t - 1) * math.exp(-a))
    p, lam = 1 / (1 + (t - 1) * math.exp(-a)), (t - 2) * r
    if k >= m:
        x = 2.0 ** 20
    else:  # the minimiser solves p(m−k)x² − kλx − r(m+k) = 0
        x = (k * lam + math.sqrt((k * lam) ** 2 + 4 * p * (m - k) * r * (m + k))) / (2 * p * (m - k))
    if math.isinf(x) or not (x > 1 if above else 0 < x < 1):
        return Fraction(1)
    eA = iv.exp(A)
    P, R = eA / (eA + (t - 1)), 1 / (eA + (t - 1))
    X = iv.mpf(x)
    bound = iv.exp(m * iv.log(P * X + (t - 2) * R + R / X) - k * iv.log(X))
    return min(Fraction(1), iv_endpoints(bound)[1])


def _trinomial_delta(iv: Any, A: Any, m: int, t: int, e: Any, run: _TrinomialPass,
                     tolerance: Fraction) -> tuple[Fraction, Fraction]:
    """Enclosure of δ(ε) = Σ_{k>=1} c_k (1 − e^{ε − k·a})₊, a ∈ A.

    Starts both chains at the lowest checkpoint whose remainder Σ_{j>k} c_j has a Chernoff
    bound of at most ``tolerance`` (the top one, k = m, has none), but not below the first k
    whose loss may exceed ε, and runs them down to that k, or until the Chernoff bound of
    the terms below is at most ``tolerance``; the remainders' bounds are added to the upper
    bound.
    """
    a_hi = iv_endpoints(A)[1]
    e_lo = iv_endpoints(e)[0]
    if a_hi == 0:
        return Fraction(0), Fraction(0)
    first = math.floor(e_lo / a_hi) + 1  # k·a <= k·a_hi <= ε below it: factor 0
    if first > m:
        return Fraction(0), Fraction(0)
    cps = [cp for cp in run.checkpoints if cp[0] >= first]  # descending k; the first is k = m
    good, bad = 0, len(cps)  # the remainder bound above cps[i] shrinks with k: bisect for the lowest good one
    while bad - good > 1:
        mid = (good + bad) // 2
        if _chernoff(iv, A, m, t, cps[mid][0] + 1, above=True) <= tolerance:
            good = mid
        else:
            bad = mid
    k, lo, hi = cps[good]
    rest = _chernoff(iv, A, m, t, k + 1, above=True)
    top = k
    eA = iv.exp(A)
    E = _fixed(1 / eA)
    up1 = _fixed(eA)
    g = _float_start(iv.exp(e - k * A))  # e^{ε − k·a}, times e^a per step down
    t2 = t - 2
    s_lo, s_hi = (0, 0), (0, 0)
    while True:
        f_lo, f_hi = _factor(g)
        s_lo = _bf_add(s_lo, lo[1] * f_lo >> _K, lo[2], up=False)
        s_hi = _bf_add(s_hi, _ceil_div(hi[1] * f_hi, _ONE), hi[2], up=True)
        if k == first or k == 1:
            break
        if (top - k) % _CHECKPOINT == 0:  # the terms below k: at most P(s <= k − 1)
            below = _chernoff(iv, A, m, t, k - 1, above=False)
            if below <= tolerance:
                rest += below
                break
        x1, x0, ex = lo
        lo = _normalise(x0, _chain_step(x1, x0, k, m, t2, E[0], up=False), ex, up=False)
        x1, x0, ex = hi
        hi = _normalise(x0, _chain_step(x1, x0, k, m, t2, E[1], up=True), ex, up=True)
        g = _float_mul(g, up1)
        k -= 1
    two = Fraction(2)
    return (Fraction(int(s_lo[0])) * two ** s_lo[1],
            Fraction(int(s_hi[0])) * two ** s_hi[1] + rest)


def certified_epsilon_search(delta: Any, delta_bounds: Any, top: float, target: float,
                             relative_step: float = 2**-44) -> EpsilonAtDelta:
    """The smallest ε in [0, ``top``] with δ(ε) <= ``target``, for a non-increasing δ: bisection on the float
    ``delta(ε)``, then certified by ``delta_bounds(ε) -> (lower, upper)``: the returned ε's certified upper δ is
    <= target (moving outward by doubling steps while it is not), and ``epsilon_lower`` is moved down until its
    certified lower δ exceeds target (so the optimum lies above it). Used by every exact PLD."""
    target = check_delta(target)
    if delta(0.0) <= target:
        lo = hi = 0.0
    else:
        lo, hi = 0.0, top
        for _ in range(200):
            mid = (lo + hi) / 2
            if mid in (lo, hi):
                break
            if delta(mid) > target:
                lo = mid
            else:
                hi = mid
    step = max(abs(hi) * relative_step, 2**-1000)
    while True:  # the float search may be off by its rounding: certify, else move outward
        cert = delta_bounds(hi)[1]
        if cert <= target:
            break
        hi, step = hi + step, 2 * step
    step = max(abs(lo) * relative_step, 2**-1000)
    lower = lo
    while lower > 0 and delta_bounds(lower)[0] <= target:
        lower, step = max(0.0, lower - step), 2 * step
    for _ in range(_REFINE_STEPS):  # the float search may have left a wide bracket: halve it on certified bounds
        mid = lower + (hi - lower) / 2
        if mid in (lower, hi):
            break  # adjacent floats
        lo_d, hi_d = delta_bounds(mid)
        if lo_d > target:
            lower = mid
        elif hi_d <= target:
            hi, cert = mid, hi_d
        else:
            break  # δ(mid) is within its enclosure of the target: no narrower certified bracket here
    return EpsilonAtDelta(epsilon=hi, epsilon_lower=lower, delta=target, delta_certified=cert)


_REFINE_STEPS = 64  # halvings of a certified ε bracket (a count of work: 64 take any float bracket to adjacent floats)


def one_run_delta(family: RRFamily) -> Any:
    """ε -> δ̂(ε), a certified upper bound on one run's δ(ε) (the exact PLD's :meth:`ExactPLD.delta_bounds`): the
    curve an accountant composes with, which the engine's ``privacy.pld`` clause checks against the real code."""
    pld = ExactPLD(family, 1)

    def delta(epsilon: float) -> float:
        return pld.delta_bounds(epsilon)[1]

    return delta

