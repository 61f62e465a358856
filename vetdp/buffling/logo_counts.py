"""Exact ε(δ) for the many-filter pair by enumerating every output logo count (seed 004, Part III).

The pair is the document's: D has all ``m`` columns at logo 0, D' moves one column to logo
2^k − 1. The output is summarised without loss by g = (g_0, …, g_k), g_y the number of output
columns with y ones (the privacy loss depends on the output only through g). Under D,
g ~ Multinomial(m, π) with π_y = C(k, y) p^y q^(k−y), and Pr[A(D') = g] = Pr[A(D) = g]·R(g)
with R(g) = (1/m) Σ_y w_y g_y, w_y = (q/p)^(2y−k). So, with t = e^ε,

    δ_D'→D(t) = Σ_g P(g) (R(g) − t)₊        δ_D→D'(t) = Σ_g P(g) (1 − t R(g))₊ .

Every P(g) is an integer over 2^(e·k·m) (p is a float, so p = a/2^e and q = (2^e − a)/2^e), and
every R(g) an integer over m·a^k·b^k. Both divergences are piecewise linear in t between
consecutive values of R (resp. 1/R), so the least t >= 1 at which each is <= δ is a rational
computed exactly, and ε(δ) = ln t* is enclosed by outward-rounded floats.

**Guarantee.** :func:`exact_epsilon` returns ``e_eps`` = e^{ε(δ)} as an exact rational, where
ε(δ) = min{ε >= 0 : max(δ_D'→D, δ_D→D')(e^ε) <= δ} for the float δ read exactly, and floats
``lower <= ε(δ) <= upper`` (adjacent or equal floats). No tolerance, no float probability: the
whole computation is in integers. The cost grows with the number of outcomes C(m + k, k)
(k = 3, m = 100: 176,851 outcomes, a few seconds), so it is offered up to
``EXACT_OUTCOMES_LIMIT`` outcomes and ``EXACT_MAX_BITS`` columns.

Beyond enumeration, :func:`conditional_epsilon` enumerates only the counts of all but the two likeliest categories
and sums the last two in closed form (binomial tails): a certified bracket, typically 1e-5 wide relative, under the
one assumption of :mod:`vetdp.buffling.many_bf` (scipy's binomial pmf and tails accurate to a relative 1e-9).
:func:`vetdp.buffling.bounds.certified_epsilon` picks the finest method that fits.

Proof: proofs/buffling.md (section "Many Bloom filters").
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import time
from collections.abc import Iterator
from fractions import Fraction

try:  # exact big-integer products: gmpy2 is several times faster than Python's int when it is installed
    from gmpy2 import mpz as _mpz
except ImportError:  # pragma: no cover - depends on the environment
    _mpz = int

import numpy as np

from vetdp.arith.rounding import inf_ln, ln_bracket, neg_inf_ln, round_down, round_up
from vetdp.buffling._common import check_delta, check_flip_prob, check_n_bit, check_n_pub
from vetdp.buffling.many_bf import U

__all__ = ["EXACT_OUTCOMES_LIMIT", "EXACT_MAX_BITS", "EXACT_WORK_LIMIT", "PREFIX_LIMIT", "EpsilonBracket",
           "ExactEpsilon", "conditional_delta", "conditional_epsilon", "enumeration_size", "exact_delta",
           "exact_epsilon", "exact_is_cheap", "logo_count_atoms"]

EXACT_OUTCOMES_LIMIT = 200_000  # C(m + k, k) outcomes: k = 3 up to m = 104 (about 3 s), k = 2 up to m = 630
EXACT_MAX_BITS = 4_000  # probabilities are integers of about e·k·m bits (e = 55 for p = 0.1): keep them small
# time grows like outcomes × k·m (the integers' length): k = 3, m = 100 (5.3e7) takes about 3 s; k = 2, m = 630 (2.5e8)
# a minute. certified_epsilon enumerates below this and conditions above it (conditioning is as tight and faster).
EXACT_WORK_LIMIT = 60_000_000


def exact_is_cheap(n_pub: int, n_bit: int) -> bool:
    """Whether :func:`exact_epsilon` takes seconds, not minutes: C(m + k, k)·k·m <= ``EXACT_WORK_LIMIT``."""
    size = enumeration_size(n_pub, n_bit)
    return size <= EXACT_OUTCOMES_LIMIT and size * n_pub * n_bit <= EXACT_WORK_LIMIT


def enumeration_size(n_pub: int, n_bit: int) -> int:
    """The number of output logo counts g (compositions of m into k + 1 parts): C(m + k, k)."""
    return math.comb(check_n_bit(n_bit) + check_n_pub(n_pub), check_n_pub(n_pub))


@dataclasses.dataclass(frozen=True)
class _Model:
    """Integer form of the model: P(g) = multinomial(g)·Π c_y^g_y / den_p, R(g) = Σ W_y g_y / den_r."""

    k: int
    m: int
    c: tuple[int, ...]  # c_y = C(k, y) a^y b^(k−y)
    den_p: int  # 2^(e·k·m)
    weights: tuple[int, ...]  # W_y = b^(2y) a^(2k−2y)
    den_r: int  # m a^k b^k


def _model(k: int, m: int, p: float) -> _Model:
    fp = Fraction(p)
    a, d = fp.numerator, fp.denominator
    b = d - a
    c = tuple(math.comb(k, y) * a**y * b ** (k - y) for y in range(k + 1))
    weights = tuple(b ** (2 * y) * a ** (2 * k - 2 * y) for y in range(k + 1))
    return _Model(k, m, c, d ** (k * m), weights, m * a**k * b**k)


def _compositions(n: int, parts: int) -> Iterator[tuple[int, ...]]:
    """Every ordered tuple of ``parts`` non-negative integers summing to n."""
    for bars in itertools.combinations(range(n + parts - 1), parts - 1):
        prev, out = -1, []
        for bar in bars:
            out.append(bar - prev - 1)
            prev = bar
        out.append(n + parts - 1 - prev - 1)
        yield tuple(out)


class _Prob:
    """P(g)·den_p as an integer: a product of binomial coefficients and cached powers c_y^g_y."""

    def __init__(self, model: _Model):
        self.model = model
        self.pows: list[dict[int, int]] = [{} for _ in model.c]

    def __call__(self, g: tuple[int, ...]) -> int:
        n, out = self.model.m, _mpz(1)
        for gy in g:
            out *= math.comb(n, gy)
            n -= gy
        for y, gy in enumerate(g):
            cache = self.pows[y]
            if gy not in cache:
                cache[gy] = _mpz(self.model.c[y]) ** gy
            out *= cache[gy]
        return out


def logo_count_atoms(n_pub: int, n_bit: int, flip_prob: float) -> Iterator[tuple[tuple[int, ...], Fraction, Fraction]]:
    """Every output logo count g with its exact probability under D and its exact loss R(g) (small cases, tests)."""
    k, m, p = check_n_pub(n_pub), check_n_bit(n_bit), check_flip_prob(flip_prob)
    model = _model(k, m, p)
    prob = _Prob(model)
    for g in _compositions(m, k + 1):
        s = sum(w * x for w, x in zip(model.weights, g, strict=True))
        yield g, Fraction(int(prob(g)), model.den_p), Fraction(s, model.den_r)


def exact_delta(n_pub: int, n_bit: int, flip_prob: float, e_eps: Fraction | int) -> tuple[Fraction, Fraction]:
    """(δ_D→D', δ_D'→D) at e^ε = ``e_eps`` (a rational >= 1), exactly, by summing over every outcome."""
    t = Fraction(e_eps)
    if t < 1:
        raise ValueError(f"e_eps={t} must be in [1, inf)")
    d_to_dp = dp_to_d = Fraction(0)
    for _g, pr, r in logo_count_atoms(n_pub, n_bit, flip_prob):
        d_to_dp += pr * max(Fraction(0), 1 - t * r)
        dp_to_d += pr * max(Fraction(0), r - t)
    return d_to_dp, dp_to_d


@dataclasses.dataclass(frozen=True)
class ExactEpsilon:
    """ε(δ) of the pair exactly: e^ε as a rational, ε enclosed by floats; which direction binds; the work done."""

    n_pub: int
    n_bit: int
    flip_prob: float
    delta: float
    e_eps: Fraction  # e^{ε(δ)} exactly
    e_eps_d_to_dp: Fraction  # the least t >= 1 with δ_D→D'(t) <= δ
    e_eps_dp_to_d: Fraction  # the least t >= 1 with δ_D'→D(t) <= δ
    lower: float  # lower <= ε(δ) = ln e_eps <= upper
    upper: float
    outcomes: int
    evaluated: int  # outcomes whose probability had to be computed
    seconds: float

    @property
    def epsilon(self) -> float:
        """The float nearest-below ε(δ) (== ``lower``); the exact value is ln(``e_eps``)."""
        return self.lower


def _check_size(k: int, m: int) -> int:
    size = math.comb(m + k, k)
    if size > EXACT_OUTCOMES_LIMIT or m > EXACT_MAX_BITS:
        raise ValueError(f"n_bit={m} with n_pub={k} has {size} logo-count outcomes; exact enumeration needs at most "
                         f"{EXACT_OUTCOMES_LIMIT} outcomes and n_bit <= {EXACT_MAX_BITS} (use the certified bracket)")
    return size


def _solve_dp_to_d(order: list[tuple[int, tuple[int, ...]]], prob: _Prob, model: _Model, dq: Fraction
                   ) -> tuple[Fraction, int]:
    """Least t >= 1 with Σ P (R − t)₊ <= δ, scanning the outcomes by decreasing R."""
    M, D = model.den_r, model.den_p
    dn, dd = dq.numerator, dq.denominator
    A = B = _mpz(0)  # Σ N·S and Σ N over the outcomes with R > the current value
    bound = _mpz(dn * M * D)
    i, evaluated = len(order) - 1, 0
    while i >= 0:
        s = order[i][0]
        if s <= M:  # R <= 1: the remaining thresholds are below t = 1
            break
        # δ(t) at t = s/M with the outcomes strictly above: (A − s·B)/(M·D)
        if (A - s * B) * dd > bound:
            break
        while i >= 0 and order[i][0] == s:
            nv = prob(order[i][1])
            evaluated += 1
            A += nv * s
            B += nv
            i -= 1
    A, B = int(A), int(B)
    # on this piece δ(t) = (A − t·M·B)/(M·D); it is <= δ from t = (A − δ·M·D)/(M·B) on
    if B == 0:
        return Fraction(1), evaluated
    t = (Fraction(A) - dq * M * D) / (M * B)
    return max(t, Fraction(1)), evaluated


def _solve_d_to_dp(order: list[tuple[int, tuple[int, ...]]], prob: _Prob, model: _Model, dq: Fraction
                   ) -> tuple[Fraction, int]:
    """Least t >= 1 with Σ P (1 − t R)₊ <= δ, scanning the outcomes by increasing R (u = 1/t)."""
    M, D = model.den_r, model.den_p
    dn, dd = dq.numerator, dq.denominator
    A = B = _mpz(0)  # Σ N·S and Σ N over the outcomes with R < the current value
    i, evaluated = 0, 0
    while i < len(order):
        s = order[i][0]
        if s >= M:  # R >= 1: u = 1/t cannot exceed 1
            break
        # δ(u) at u = s/M with the outcomes strictly below: (B − A/s)/D = (s·B − A)/(s·D)
        if (s * B - A) * dd > dn * s * D:
            break
        while i < len(order) and order[i][0] == s:
            nv = prob(order[i][1])
            evaluated += 1
            A += nv * order[i][0]
            B += nv
            i += 1
    A, B = int(A), int(B)
    # on this piece δ(u) = (B − A/(M·u))/D; it is <= δ up to u = A/(M·(B − δ·D)), i.e. t = M(B − δD)/A
    if A == 0 or B - dq * D <= 0:
        return Fraction(1), evaluated
    return max(Fraction(1), (B - dq * D) * M / Fraction(A)), evaluated


def exact_epsilon(n_pub: int, n_bit: int, flip_prob: float, delta: float) -> ExactEpsilon:
    """ε(δ) of the heuristic pair exactly (module docstring); ValueError beyond the enumeration limits."""
    k, m, p = check_n_pub(n_pub), check_n_bit(n_bit), check_flip_prob(flip_prob)
    d = check_delta(delta)
    size = _check_size(k, m)
    start = time.perf_counter()
    model = _model(k, m, p)
    order = sorted((sum(w * x for w, x in zip(model.weights, g, strict=True)), g) for g in _compositions(m, k + 1))
    prob = _Prob(model)
    dq = Fraction(d)
    t1, n1 = _solve_dp_to_d(order, prob, model, dq)
    t2, n2 = _solve_d_to_dp(order, prob, model, dq)
    t = max(t1, t2)
    if t == 1:
        lo = hi = 0.0
    else:
        lo_q, hi_q = ln_bracket(t, 200)
        lo, hi = max(0.0, round_down(lo_q)), round_up(hi_q)
    return ExactEpsilon(k, m, p, d, t, t2, t1, lo, hi, size, n1 + n2, time.perf_counter() - start)


# ------------------------------------------------------------------------------------------------------------------
# Beyond exact enumeration: condition on all but two categories, sum the last two in closed form.
#
# Under D the counts are drawn category by category: g_y ~ Bin(remaining, ρ_y). For every prefix (the counts of all
# categories but the two most likely, hi and lo), R = α' + β·X with X = g_hi ~ Bin(n', ρ) and β = (w_hi − w_lo)/m > 0,
# so both divergences are closed forms in binomial tails (E[X·1{X > j}] = n'ρ·Pr[Bin(n'−1, ρ) >= j]):
#
#     E[(R − t)₊]  = (α' − t)·Pr[X > j] + β n'ρ·Pr[Bin(n'−1, ρ) > j − 1],      j = ⌊(t − α')/β⌋
#     E[(1 − tR)₊] = (1 − tα')·Pr[X <= i] − tβ n'ρ·Pr[Bin(n'−1, ρ) <= i − 1],   i = ⌈(1/t − α')/β⌉ − 1
#
# Prefixes outside Chernoff windows or below a probability floor are dropped and their mass (bounded, resp. summed) is
# charged to the upper bounds (times R <= w_k for E[(R − t)₊], times 1 for E[(1 − tR)₊]); dropping only lowers the sums,
# so the lower bounds need no charge. Float error: scipy's binomial pmf and tails are assumed accurate to a relative
# PMF_REL_ERR (the assumption of vetdp.buffling.many_bf, checked against exact rationals in the tests), sums carry
# n·u·Σ|terms|, and an outcome misfiled across the boundary R = t by rounding is charged (see _divergences).

PREFIX_LIMIT = 1_500_000  # prefixes held at once (~60 MB, ~250 MB while evaluating; ~3 s per evaluation)


@dataclasses.dataclass(frozen=True)
class _Prefixes:
    n_rem: np.ndarray  # columns left for the last two categories
    alpha: np.ndarray  # R's value from the prefix plus w_lo·n'/m
    prob: np.ndarray
    lost: float  # probability mass of the dropped prefixes (an upper bound)
    lost_r: float  # an upper bound on E[R; dropped prefixes] (R <= w_k beyond the windows, exact mean below the floor)
    rho: float  # Pr[hi | hi or lo]
    beta: float
    rel_err: float  # relative error allowed on every prob entry


def _prefixes(k: int, m: int, p: float, floor: float, limit: int) -> _Prefixes | None:
    """Every prefix of counts with its probability (None when more than ``limit`` are needed)."""
    from scipy import stats

    from vetdp.buffling._common import column_weight_law, loss_weights
    from vetdp.buffling.many_bf import PMF_REL_ERR, _window

    fp = Fraction(p)
    pi_q, w_q = column_weight_law(k, fp), loss_weights(k, fp)
    w_top = float(w_q[k]) * (1 + 1e-12)
    by_mass = sorted(range(k + 1), key=lambda y: (pi_q[y], y))
    lo_c, hi_c = sorted(by_mass[-2:])
    order = by_mass[:-2]
    # give up early when the kept prefixes (about an ellipsoid of radius 6 sd) would clearly exceed the limit
    guess = math.prod(12 * math.sqrt(m * float(pi_q[y] * (1 - pi_q[y]))) + 1 for y in order)
    guess /= 2 ** max(len(order) - 1, 0)
    if guess > 4 * limit:
        return None
    n_rem, alpha, prob = np.array([m], dtype=np.int64), np.zeros(1), np.ones(1)
    lost, lost_r, left = 0.0, 0.0, Fraction(1)
    for y in order:
        rho = float(pi_q[y] / left)
        left -= pi_q[y]
        wy = float(w_q[y] / m)
        # E[w_Y/m] per remaining column, Y drawn from the categories not yet fixed (Σ over them of π_y w_y / left)
        mean_rest = float(sum(pi_q[z] * w_q[z] for z in order[order.index(y) + 1:] + [lo_c, hi_c]) / left / m)
        parts, sizes = [], 0
        for n0, a0, p0 in zip(n_rem.tolist(), alpha.tolist(), prob.tolist(), strict=True):
            a, b, t = _window(n0, rho)
            lost += p0 * t
            lost_r += p0 * t * w_top
            xs = np.arange(a, b + 1)
            pr = p0 * stats.binom.pmf(xs, n0, rho)
            keep = pr >= floor
            if not keep.all():  # dropped: charge their mass and their mean of R (exact given the prefix)
                gone = pr[~keep]
                lost += float(gone.sum()) * (1 + 1e-6)
                mean_r = a0 + wy * xs[~keep] + mean_rest * (n0 - xs[~keep])
                lost_r += float(np.dot(gone, mean_r)) * (1 + 1e-6)
            xs, pr = xs[keep], pr[keep]
            sizes += xs.size
            if sizes > limit:
                return None
            parts.append((n0 - xs, a0 + wy * xs, pr))
        if not parts:
            return None
        n_rem = np.concatenate([q[0] for q in parts])
        alpha = np.concatenate([q[1] for q in parts])
        prob = np.concatenate([q[2] for q in parts])
    w_lo, w_hi = float(w_q[lo_c] / m), float(w_q[hi_c] / m)
    rho = float(pi_q[hi_c] / (pi_q[hi_c] + pi_q[lo_c]))
    rel = (len(order) + 2) * (PMF_REL_ERR + 4 * U)
    return _Prefixes(n_rem, alpha + w_lo * n_rem, prob, lost, lost_r * (1 + 1e-9) + 1e-300, rho, w_hi - w_lo, rel)


def _divergences(pre: _Prefixes, t: float, chunk: int = 1 << 19) -> tuple[float, float, float, float]:
    """(value, error bound) of Σ P (R − t)₊ and of Σ P (1 − tR)₊ over the kept prefixes, at e^ε = t."""
    out = [0.0, 0.0, 0.0, 0.0]
    for s in range(0, pre.prob.size, chunk):  # bounded temporaries: about 20 arrays of one chunk
        part = dataclasses.replace(pre, n_rem=pre.n_rem[s: s + chunk], alpha=pre.alpha[s: s + chunk],
                                   prob=pre.prob[s: s + chunk])
        out = [x + y for x, y in zip(out, _divergences_chunk(part, t, pre.prob.size + 8), strict=True)]
    return out[0], out[1], out[2], out[3]


def _divergences_chunk(pre: _Prefixes, t: float, size: int) -> tuple[float, float, float, float]:
    """One chunk's share; ``size`` (the whole sum's length) sets the summation error bound n·u·Σ|terms|."""
    from scipy import special

    n, a, pr, rho, beta = pre.n_rem, pre.alpha, pre.prob, pre.rho, pre.beta
    nrho = n * rho
    n1 = np.maximum(n - 1, 0)
    # Σ (R − t)₊: outcomes X > j
    j = np.floor((t - a) / beta)
    j = np.clip(j, -1, n).astype(np.int64)
    sf0 = np.where(j < 0, 1.0, np.where(j >= n, 0.0, special.bdtrc(np.maximum(j, 0), n, rho)))
    jm = j - 1
    sf1 = np.where(jm < 0, 1.0, np.where(jm >= n1, 0.0, special.bdtrc(np.maximum(jm, 0), n1, rho)))
    sf1 = np.where(n == 0, 0.0, sf1)
    t1, t2 = (a - t) * sf0, beta * nrho * sf1
    v1 = pr * (t1 + t2)
    e1 = pr * (np.abs(t1) + np.abs(t2))
    # Σ (1 − tR)₊: outcomes X <= i
    i = np.ceil((1.0 / t - a) / beta) - 1
    i = np.clip(i, -1, n).astype(np.int64)
    cdf0 = np.where(i < 0, 0.0, np.where(i >= n, 1.0, special.bdtr(np.clip(i, 0, None), n, rho)))
    im = i - 1
    cdf1 = np.where(im < 0, 0.0, np.where(im >= n1, 1.0, special.bdtr(np.clip(im, 0, None), n1, rho)))
    cdf1 = np.where(n == 0, 0.0, cdf1)
    s1, s2 = (1 - t * a) * cdf0, -t * beta * nrho * cdf1
    v2 = pr * (s1 + s2)
    e2 = pr * (np.abs(s1) + np.abs(s2))
    # an outcome misfiled across R = t (resp. R = 1/t) by rounding has |R − t| <= 8u(t + |α'|) (resp.
    # |1 − tR| <= 8u(1 + t|α'|), where only α' <= 1/t can misfile); charged with a factor 4 of margin
    mass = float(pr.sum())
    boundary1 = 32 * U * (t * mass + float(np.dot(pr, np.abs(a))))
    boundary2 = 32 * U * (mass + t * float(np.dot(pr, np.minimum(np.abs(a), 1.0 / t))))
    err1 = float(e1.sum()) * (3 * pre.rel_err + 4 * size * U) + boundary1 + 1e-300 * size
    err2 = float(e2.sum()) * (3 * pre.rel_err + 4 * size * U) + boundary2 + 1e-300 * size
    return float(v1.sum()), err1, float(v2.sum()), err2


@dataclasses.dataclass(frozen=True)
class EpsilonBracket:
    """Certified ``lower <= ε(δ) <= upper`` for the heuristic pair, and how it was obtained."""

    n_pub: int
    n_bit: int
    flip_prob: float
    delta: float
    lower: float
    upper: float
    method: str  # "enumeration" (exact), "conditional" (closed-form last two categories), "coupling" (grid laws)
    work: int  # outcomes enumerated, prefixes kept, or grid cells
    seconds: float
    products: int = 0  # the category chains' multiply-adds (their work budget counts these); 0 for other methods

    @property
    def relative_width(self) -> float:
        return (self.upper - self.lower) / self.upper if self.upper > 0 else 0.0


def _search(bounds, lo_t: float, hi_t: float, rel_tol: float, d: float) -> tuple[float, float]:
    """(t_lo, t_up) in [lo_t, hi_t]: t_up verified (upper bound <= δ) or hi_t, t_lo verified (lower bound > δ) or lo_t.

    Bisection in ln t; every evaluation serves both ends. Soundness does not rest on monotonicity: an end moves only
    to a point where its condition was checked.
    """
    def wide(a: float, b: float) -> bool:  # relative width in ε = ln t, down to what floats can resolve
        return math.log(b / a) > max(rel_tol * math.log(b), 1e-13) and a < math.sqrt(a * b) < b

    t_lo, t_up = lo_t, hi_t
    a, b = lo_t, hi_t  # the undecided range for the upper end
    for _ in range(400):
        if not wide(a, b):
            break
        mid = math.sqrt(a * b)
        low, high = bounds(mid)
        if high <= d:
            b = t_up = mid
        else:
            a = mid
        if low > d:
            t_lo = max(t_lo, mid)
    a, b = t_lo, t_up  # the lower end, between what was verified and the upper end
    for _ in range(400):
        if not wide(a, b):
            break
        mid = math.sqrt(a * b)
        if bounds(mid)[0] > d:
            a = t_lo = mid
        else:
            b = mid
    return t_lo, t_up


def conditional_epsilon(n_pub: int, n_bit: int, flip_prob: float, delta: float, rel_tol: float = 1e-5,
                        limit: int = PREFIX_LIMIT) -> EpsilonBracket | None:
    """Certified ε(δ) bracket by conditioning on all but the two likeliest categories (block comment above).

    Returns None when more than ``limit`` prefixes would be needed. The bracket's width is the bisection's
    ``rel_tol`` (relative, on ε) plus what the error allowances leave undecided. A first pass keeps only the
    likelier prefixes (charging the others), and its certified bracket bounds the search of the full pass.
    """
    k, m, p = check_n_pub(n_pub), check_n_bit(n_bit), check_flip_prob(flip_prob)
    d = check_delta(delta)
    start = time.perf_counter()
    if p == 0.5:
        return EpsilonBracket(k, m, p, d, 0.0, 0.0, "conditional", 1, time.perf_counter() - start)
    w_top = float(((1 - Fraction(p)) / Fraction(p)) ** k)  # R <= w_k = (q/p)^k, so δ(w_k) = 0
    lo_t, hi_t = 1.0, math.nextafter(w_top * (1 + 1e-12), math.inf)
    kept = 0
    for floor, final in ((d * 1e-3 / 20_000, False), (d * 1e-4 / limit, True)):
        pre = _prefixes(k, m, p, floor=floor, limit=limit)
        if pre is None:
            if final:
                return None
            continue
        kept = int(pre.prob.size)

        def bounds(t: float, pre: _Prefixes = pre) -> tuple[float, float]:
            v1, e1, v2, e2 = _divergences(pre, t)
            return max(v1 - e1, v2 - e2), max(v1 + e1 + pre.lost_r, v2 + e2 + pre.lost * (1 + 1e-9))

        lo_t, hi_t = _search(bounds, lo_t, hi_t, rel_tol if final else max(rel_tol, 1e-3), d)
    upper = 0.0 if hi_t == 1.0 else inf_ln(hi_t)
    lower = 0.0 if lo_t == 1.0 else max(0.0, neg_inf_ln(lo_t))
    return EpsilonBracket(k, m, p, d, lower, upper, "conditional", kept, time.perf_counter() - start)


def conditional_delta(n_pub: int, n_bit: int, flip_prob: float, epsilon: float, floor: float = 1e-30,
                      limit: int = PREFIX_LIMIT) -> tuple[float, float] | None:
    """Certified ``(lower, upper)`` on δ(ε) = max of both hockey-stick divergences of the pair at ``epsilon``.

    Same method as :func:`conditional_epsilon`; prefixes below probability ``floor`` are dropped and charged. None
    when more than ``limit`` prefixes would be needed.
    """
    from vetdp.arith.rounding import inf_exp, neg_inf_exp
    from vetdp.buffling._common import check_epsilon

    k, m, p = check_n_pub(n_pub), check_n_bit(n_bit), check_flip_prob(flip_prob)
    eps = check_epsilon(epsilon)
    if p == 0.5:
        return 0.0, 0.0
    pre = _prefixes(k, m, p, floor=floor, limit=limit)
    if pre is None:
        return None
    # δ is non-increasing in t = e^ε: the upper bound at the float below e^ε, the lower bound at the float above
    v1, e1, v2, e2 = _divergences(pre, neg_inf_exp(eps))
    upper = max(v1 + e1 + pre.lost_r, v2 + e2 + pre.lost * (1 + 1e-9))
    v1, e1, v2, e2 = _divergences(pre, inf_exp(eps))
    return max(0.0, v1 - e1, v2 - e2), min(1.0, upper)
