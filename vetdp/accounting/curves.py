"""Rényi-divergence (RDP) and zCDP curves of randomized response, RAPPOR and k-RAPPOR.

Every mechanism here is, on its worst-case pair of neighbouring inputs, ``d`` independent
coordinates of ``t``-ary randomized response that each keep the truth with probability
``p`` and report each other value with probability ``r``, ``a = ln(p/r)`` (the per-coordinate
log-ratio): binary RR is (t=2, d=1); categorical RR (t, d=1); RAPPOR (2, 2) with ``a = ε/2``;
k-RAPPOR (2, 2k) with ``a = ε/(2k)``; a bit vector of length ℓ with weight ≤ m has
d = min(2m, ℓ). Rényi divergence adds over independent coordinates and the coordinates
are identical, so the curve is ``d · D_α(t, a)`` with (the seed post's Theorems 1, 2, 6):

    D_α(t, a) = 1/(α−1) · ln[(e^{αa} + e^{(1−α)a} + t − 2) / (e^a + t − 1)]
              = 1/(α−1) · log1p[ expm1(αa) · (−expm1(−(α−1)a)) / (e^a + t − 1) ]   (:func:`_renyi`)

The second line is the one definition used everywhere: a product of positive factors, so
it loses no digits for small ``a`` or α near 1. Its α→1 limit is the KL divergence
``a·(1 − e^{−a}) / (1 + (t−1)e^{−a})`` (:func:`_kl`) and its α→∞ limit is ``a``;
``tests/test_accounting_curves.py`` takes both limits symbolically from :func:`_renyi`.

zCDP: ρ = sup_{α>1} d·D_α/α. For t = 2 the supremum is the α→1 limit, ``d·a·tanh(a/2)``
(Steinke; the post's Theorems 3, 4 and its k-RAPPOR ρ). For t > 2 the t-ary pair is a
mixture of the binary pair with a common component, so (joint convexity)
D_α(t, a) ≤ D_α(2, a) and ``d·a·tanh(a/2)`` is an upper bound (not tight).
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
from fractions import Fraction
from typing import Any

import mpmath
import numpy as np

from vetdp.arith.rounding import round_down, round_up
from vetdp.core.validation import check_float, check_int, check_interval

__all__ = [
    "RRFamily",
    "randomized_response_curve",
    "rappor_curve",
    "bit_flip_curve",
    "curve_for_measurement",
    "check_alpha",
    "iv_precision",
    "iv_endpoints",
    "rr_product_pld",
]

_OVERFLOW_SAFE = 700.0  # expm1(x) is finite in float64 for x <= 709.78
_CERT_PREC = 160  # bits of the interval evaluation behind every certified bound
_MARGIN = Fraction(1, 2 ** (_CERT_PREC - 48))  # relative widening on top of mpmath's outward rounding


def _renyi(a: Any, alpha: Any, t: Any, xp: Any) -> Any:
    """D_α of one t-ary RR coordinate with log-ratio ``a`` (the module's one definition).

    ``xp`` supplies exp, expm1 and log1p: numpy, mpmath.iv or the sympy shim of the tests.
    """
    u = alpha - 1
    y = xp.expm1(alpha * a) * (-xp.expm1(-u * a)) / (xp.exp(a) + (t - 1))
    return xp.log1p(y) / u


def _renyi_large(a: np.ndarray, alpha: np.ndarray, t: int) -> np.ndarray:
    """:func:`_renyi` for αa > 700 in float64, where e^{αa} would overflow.

    Σ = e^{(α−1)a} · (1 + e^{(1−2α)a} + (t−2)e^{−αa}) / (1 + (t−1)e^{−a}), so
    D_α = a + [log1p(e^{(1−2α)a} + (t−2)e^{−αa}) − log1p((t−1)e^{−a})] / (α−1).
    """
    u = alpha - 1
    top = np.log1p(np.exp((1 - 2 * alpha) * a) + (t - 2) * np.exp(-alpha * a))
    return a + (top - np.log1p((t - 1) * np.exp(-a))) / u


def _kl(a: Any, t: Any, xp: Any) -> Any:
    """KL divergence (the α→1 limit of :func:`_renyi`) of one t-ary RR coordinate."""
    return a * (-xp.expm1(-a)) / (1 + (t - 1) * xp.exp(-a))


@contextlib.contextmanager
def iv_precision(prec: int = _CERT_PREC):
    """Run mpmath.iv (outward-rounded interval arithmetic) at ``prec`` bits inside the block."""
    old = mpmath.iv.prec
    mpmath.iv.prec = prec
    try:
        yield mpmath.iv
    finally:
        mpmath.iv.prec = old


def iv_endpoints(x: Any) -> tuple[Fraction, Fraction]:
    """The exact rational endpoints of an mpmath.iv interval, widened by a relative margin.

    The margin guards against the (rare) misrounded libmp result that
    :mod:`vetdp.arith.rounding` also guards against.
    """
    lo_t, hi_t = x._mpi_
    lo = Fraction(*map(int, mpmath.libmp.to_rational(lo_t)))
    hi = Fraction(*map(int, mpmath.libmp.to_rational(hi_t)))
    return lo - abs(lo) * _MARGIN, hi + abs(hi) * _MARGIN


def check_alpha(alpha: object) -> float:
    """``alpha`` as a float in [1, inf] (1 means the KL limit, inf the max-divergence limit)."""
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float, np.floating, np.integer)):
        raise TypeError(f"alpha={alpha!r} must be a float, not {type(alpha).__name__}")
    x = float(alpha)
    if math.isnan(x) or x < 1:
        raise ValueError(f"alpha={alpha!r} must be in [1, inf]")
    return x


def rr_product_pld(t: int, d: int, ratio: Fraction) -> dict[Fraction, Fraction]:
    """The exact privacy-loss distribution of ``d`` independent t-ary randomized responses of likelihood ratio
    ``ratio`` (keep the truth with probability ratio/S, each other value 1/S, S = ratio + t − 1), all differing:
    a coordinate shows ratio R on the first input's value, 1/R on the second's, 1 elsewhere, so i and j such
    coordinates (multinomially many) give ratio R^(i−j) with probability R^i·(t−2)^(d−i−j)/S^d."""
    check_int("categories", t, lo=2)
    check_int("coordinates", d, lo=1)
    if not isinstance(ratio, Fraction) or ratio < 1:
        raise ValueError(f"ratio={ratio} must be a Fraction in [1, inf)")
    total = (ratio + t - 1) ** d
    out: dict[Fraction, Fraction] = {}
    for i in range(d + 1):
        for j in range(d - i + 1):
            rest = d - i - j
            if rest and t == 2:
                continue
            count = math.comb(d, i) * math.comb(d - i, j)
            key = ratio ** (i - j)
            out[key] = out.get(key, Fraction(0)) + count * ratio**i * (t - 2) ** rest / total
    return out


@dataclasses.dataclass(frozen=True)
class RRFamily:
    """``coordinates`` (d) independent t-ary randomized responses with log-ratio a, all differing.

    ``a`` is ``epsilon / divisor`` when built from ε, or ``ln(ratio)`` exactly when built
    from a probability (the implementation's float probability, as an exact rational).
    """

    categories: int
    coordinates: int
    ratio: Fraction | None = None
    epsilon: Fraction | None = None
    divisor: int = 1
    name: str = ""

    def __post_init__(self):
        check_int("categories", self.categories, lo=2)
        check_int("coordinates", self.coordinates, lo=1)
        check_int("divisor", self.divisor, lo=1)
        if (self.ratio is None) == (self.epsilon is None):
            raise ValueError("exactly one of ratio and epsilon must be given")
        if self.ratio is not None and self.ratio < 1:
            raise ValueError(f"ratio={self.ratio} must be in [1, inf)")
        if self.epsilon is not None and self.epsilon < 0:
            raise ValueError(f"epsilon={float(self.epsilon)!r} must be in [0, inf)")

    # ---------------------------------------------------------------- the log-ratio
    def log_ratio_interval(self, prec: int = _CERT_PREC) -> Any:
        """An mpmath.iv interval containing a (at ``prec`` bits)."""
        with iv_precision(prec):
            if self.epsilon is not None:
                return mpmath.iv.mpf(self.epsilon.numerator) / self.epsilon.denominator / self.divisor
            r = self.ratio
            return mpmath.iv.log(mpmath.iv.mpf(r.numerator) / r.denominator)

    @property
    def log_ratio(self) -> float:
        """a rounded to nearest (within one ulp)."""
        if self.epsilon is not None:
            return float(self.epsilon / self.divisor)
        with mpmath.workprec(120):
            return float(mpmath.log(mpmath.mpf(self.ratio.numerator) / self.ratio.denominator))

    @property
    def max_divergence(self) -> float:
        """The α→∞ limit d·a: the pure-DP ε of the mechanism (rounded up)."""
        return self._certified(lambda a: self.coordinates * a)[1]

    # ---------------------------------------------------------------- float evaluation
    def rdp(self, alpha: Any) -> Any:
        """d·D_α for a float α (or an array of them) in [1, inf], to about 1e-15 relative.

        α = 1 gives the KL divergence, α = inf the max divergence. Not a certified bound
        (use :meth:`rdp_upper` for one).
        """
        if isinstance(alpha, (np.ndarray, list, tuple)):
            arr = np.asarray(alpha, dtype=float)
            bad = np.isnan(arr) | (arr < 1)
            if bad.any():
                raise ValueError(f"alpha={float(arr[bad].ravel()[0])!r} must be in [1, inf]")
        else:
            arr = np.asarray(check_alpha(alpha))
        a, t = self.log_ratio, self.categories
        out = np.empty_like(arr)
        one, inf = arr == 1, np.isinf(arr)
        mid = ~one & ~inf
        small = mid & (arr * a <= _OVERFLOW_SAFE)
        large = mid & ~small
        with np.errstate(over="ignore", under="ignore"):
            out[small] = _renyi(a, arr[small], t, np)
            out[large] = _renyi_large(a, arr[large], t)
        out[one] = _kl(a, t, np)
        out[inf] = a
        out *= self.coordinates
        return float(out) if out.ndim == 0 else out

    def kl(self) -> float:
        """d·KL, the α→1 limit of :meth:`rdp`."""
        return self.rdp(1.0)

    # ---------------------------------------------------------------- certified bounds
    def _certified(self, fn) -> tuple[float, float]:
        with iv_precision(_CERT_PREC):
            lo, hi = iv_endpoints(fn(self.log_ratio_interval()))
        return round_down(max(lo, Fraction(0))), round_up(hi)

    def rdp_bounds(self, alpha: float) -> tuple[float, float]:
        """Floats ``lo <= d·D_α <= hi`` (certified by interval arithmetic), α in [1, inf]."""
        alpha = check_alpha(alpha)
        t, d = self.categories, self.coordinates
        if alpha == math.inf:
            return self._certified(lambda a: d * a)
        if alpha == 1:
            return self._certified(lambda a: d * _kl(a, t, mpmath.iv))
        fa = Fraction(alpha)
        return self._certified(lambda a: d * _renyi(a, mpmath.iv.mpf(fa.numerator) / fa.denominator, t, mpmath.iv))

    def rdp_upper(self, alpha: float) -> float:
        """A float >= d·D_α (certified): the RDP ε̂(α) this mechanism may claim."""
        return self.rdp_bounds(alpha)[1]

    # ---------------------------------------------------------------- the worst pair itself
    def pair_plds(self, prec: int = 256) -> tuple[dict[Fraction, Fraction], dict[Fraction, Fraction]]:
        """Exact privacy-loss distributions (likelihood ratio -> its probability under the first law) of two rational
        pairs enclosing this family's worst pair in Blackwell's order: the first is a garbling of it, it is a
        garbling of the second (for a rational ratio both are the pair itself).

        The t-ary pair of ratio r is the pair of any ratio R >= r followed by a channel that keeps its input
        with some probability and otherwise reports a uniform value, so ratios e^a rounded down and up at
        ``prec`` bits (:func:`vetdp.arith.rounding.exp_bracket`) enclose it. Every divergence, RDP order, zCDP ρ
        and composition of the family is a function of this pair; the engine's ``privacy.dominated`` decides the
        code's pairs against it."""
        from vetdp.arith.rounding import exp_bracket

        check_int("prec", prec, lo=2)
        if self.ratio is not None:
            exact = rr_product_pld(self.categories, self.coordinates, self.ratio)
            return exact, exact
        lo, hi = exp_bracket(self.epsilon / self.divisor, prec)
        return (rr_product_pld(self.categories, self.coordinates, max(lo, Fraction(1))),
                rr_product_pld(self.categories, self.coordinates, hi))

    @property
    def zcdp_tight(self) -> bool:
        """Whether :meth:`zcdp_rho` is the exact sup_α D_α/α (t = 2) or only an upper bound."""
        return self.categories == 2

    def zcdp_rho(self) -> float:
        """ρ = d·a·tanh(a/2) rounded up: exact sup_α d·D_α/α for t = 2, an upper bound for t > 2."""
        return self._certified(lambda a: self.coordinates * _kl(a, 2, mpmath.iv))[1]

    def describe(self) -> str:
        src = (f"ε={float(self.epsilon)!r}" + (f"/{self.divisor}" if self.divisor != 1 else "")
               if self.epsilon is not None else f"ratio={float(self.ratio)!r}")
        return f"{self.name or 'rr'}(t={self.categories}, d={self.coordinates}, {src})"


# -------------------------------------------------------------------- constructors

def _one_of(epsilon: object, other: object, other_name: str) -> None:
    if (epsilon is None) == (other is None):
        raise ValueError(f"give exactly one of epsilon and {other_name} (got epsilon={epsilon!r}, "
                         f"{other_name}={other!r})")


def _epsilon(epsilon: object) -> Fraction:
    e = check_float("epsilon", epsilon)
    check_interval("epsilon", e, 0, None, lo_closed=False, hi_closed=False)
    return Fraction(e)


def randomized_response_curve(epsilon: float | None = None, *, prob: float | None = None,
                              categories: int = 2) -> RRFamily:
    """The RDP curve of ``categories``-ary randomized response, by ε or by the keep probability.

    Preconditions: ``categories`` an int >= 2; exactly one of ``epsilon`` in (0, inf) and
    ``prob`` in [1/t, 1) (the probability of reporting the truth, taken exactly).
    """
    t = check_int("categories", categories, lo=2)
    _one_of(epsilon, prob, "prob")
    if prob is not None:
        p = check_float("prob", prob)
        check_interval("prob", p, Fraction(1, t), 1, lo_closed=True, hi_closed=False)
        q = Fraction(p)
        return RRFamily(t, 1, ratio=q * (t - 1) / (1 - q), name="rr")
    return RRFamily(t, 1, epsilon=_epsilon(epsilon), name="rr")


def bit_flip_curve(flip: float, coordinates: int, name: str = "bitvec") -> RRFamily:
    """``coordinates`` bits each flipped with probability ``flip`` in (0, 1/2], all differing."""
    q = check_float("flip", flip)
    check_interval("flip", q, 0, Fraction(1, 2), lo_closed=False, hi_closed=True)
    check_int("coordinates", coordinates, lo=1)
    fq = Fraction(q)
    return RRFamily(2, coordinates, ratio=(1 - fq) / fq, name=name)


def rappor_curve(epsilon: float | None = None, *, flip: float | None = None, k: int = 1) -> RRFamily:
    """The RDP curve of k-RAPPOR (k = 1: RAPPOR), by ε (q = 1/(1 + e^{ε/2k})) or by the flip q.

    Preconditions: ``k`` an int >= 1; exactly one of ``epsilon`` in (0, inf) and ``flip``
    in (0, 1/2]. The worst-case inputs differ in 2k bits.
    """
    k = check_int("k", k, lo=1)
    _one_of(epsilon, flip, "flip")
    name = "rappor" if k == 1 else "k-rappor"
    if flip is not None:
        return bit_flip_curve(flip, 2 * k, name)
    return RRFamily(2, 2 * k, epsilon=_epsilon(epsilon), divisor=2 * k, name=name)


def curve_for_measurement(measurement: Any) -> RRFamily:
    """The RDP curve of one of vetdp's RR/RAPPOR measurements at the probabilities it actually uses.

    Reads the float probability the implementation samples with (after its rounding), so
    the curve is exact for the code, not for the nominal ε.
    """
    from vetdp.impl.k_rappor import k_rappor_flip_probability
    from vetdp.impl.randomized_response_bitvec import flip_probability

    name = getattr(measurement, "name", "")
    params = getattr(measurement, "parameters", {})
    if name == "make_randomized_response_bool":
        return randomized_response_curve(prob=params["prob"], categories=2)
    if name == "make_randomized_response":
        return randomized_response_curve(prob=params["prob"], categories=len(params["categories"]))
    if name in ("make_randomized_response_bitvec", "make_k_rappor"):
        dom = params["input_domain"]
        if name == "make_k_rappor":
            q = flip_probability(2 * k_rappor_flip_probability(params["epsilon"], dom.max_weight))
        else:
            q = flip_probability(params["f"])
        d = min(2 * dom.max_weight, dom.length)
        if q > 0.5:  # f/2 rounded up can exceed 1/2 only when f = 1, which is exactly 1/2
            raise ValueError(f"flip probability {q!r} must be in (0, 1/2]")
        return bit_flip_curve(q, d, "k-rappor" if name == "make_k_rappor" else "rappor")
    raise TypeError(f"measurement={measurement!r} is not a randomized-response or RAPPOR measurement "
                    "this module knows (make_randomized_response[_bool|_bitvec], make_k_rappor)")
