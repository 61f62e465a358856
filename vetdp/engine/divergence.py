"""Divergences between exact output distributions, and decided comparisons with claims.

A claim (a float) is compared with a transcendental truth by interval arithmetic at
rising precision: the answer is SOUND (claim >= truth), UNSOUND (claim < truth) or
UNDECIDED (not separated within the precision budget). No tolerance is ever applied.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable, Hashable, Mapping, Sequence
from fractions import Fraction
from typing import Any

import mpmath

from vetdp.arith.rounding import exp_bracket, ln_bracket

__all__ = [
    "Verdict",
    "Comparison",
    "MaxDivergenceResult",
    "max_divergence",
    "ln_ratio_bracket",
    "compare_claim",
    "renyi_divergence",
    "hockey_stick_delta",
]

Dist = Mapping[Hashable, Fraction]


class Verdict(enum.StrEnum):
    SOUND = "sound"
    UNSOUND = "unsound"
    UNDECIDED = "undecided"


@dataclasses.dataclass(frozen=True)
class Comparison:
    """Outcome of comparing a claim with a truth enclosed in [lo, hi]."""

    verdict: Verdict
    claim: float
    truth_lo: Fraction | None  # None: the truth is +inf
    truth_hi: Fraction | None
    precision: int

    @property
    def truth(self) -> float:
        if self.truth_lo is None:
            return float("inf")
        return float((self.truth_lo + self.truth_hi) / 2)

    @property
    def slack(self) -> float:
        """claim − truth (a float approximation; the verdict is the exact answer)."""
        if self.truth_lo is None:
            return float("-inf")
        return float(Fraction(self.claim) - (self.truth_lo + self.truth_hi) / 2)


@dataclasses.dataclass(frozen=True)
class MaxDivergenceResult:
    """max over neighbouring pairs (x, x') and outputs y of P[M(x)=y] / P[M(x')=y]."""

    ratio: Fraction | None  # None when some y has P[M(x')=y] = 0 < P[M(x)=y]: infinite loss
    x: Any
    x_prime: Any
    y: Any
    p: Fraction
    q: Fraction


def max_divergence(dists: Mapping[Any, Dist], pairs: Sequence[tuple[Any, Any]] | None = None) -> MaxDivergenceResult:
    """The worst likelihood ratio over ``pairs`` (all ordered pairs of distinct inputs when None).

    Returns the witness pair and output. Exact (rational arithmetic).
    """
    inputs = list(dists)
    if len(inputs) < 2:
        raise ValueError(f"max_divergence needs at least two inputs, got {len(inputs)}")
    best: MaxDivergenceResult | None = None

    def better(cand: MaxDivergenceResult) -> bool:
        if best is None:
            return True
        if best.ratio is None:
            return False
        return cand.ratio is None or cand.ratio > best.ratio

    if pairs is None:
        # all pairs: per output, the largest over the smallest probability
        outputs = set().union(*(d.keys() for d in dists.values()))
        for y in outputs:
            probs = [(dists[x].get(y, Fraction(0)), x) for x in inputs]
            hi_p, hi_x = max(probs, key=lambda t: t[0])
            lo_p, lo_x = min(probs, key=lambda t: t[0])
            if hi_p == 0:
                continue
            cand = MaxDivergenceResult(None if lo_p == 0 else hi_p / lo_p, hi_x, lo_x, y, hi_p, lo_p)
            if better(cand):
                best = cand
    else:
        for x, xp in pairs:
            for y, p in dists[x].items():
                if p == 0:
                    continue
                q = dists[xp].get(y, Fraction(0))
                cand = MaxDivergenceResult(None if q == 0 else p / q, x, xp, y, p, q)
                if better(cand):
                    best = cand
    assert best is not None
    return best


def ln_ratio_bracket(ratio: Fraction) -> Callable[[int], tuple[Fraction, Fraction]]:
    """An enclosure function prec -> (lo, hi) of ln(ratio); exact [0, 0] for ratio 1."""
    if ratio <= 0:
        raise ValueError(f"ratio={ratio} must be positive")
    if ratio == 1:
        return lambda prec: (Fraction(0), Fraction(0))
    return lambda prec: ln_bracket(ratio, prec)


def compare_claim(claim: float, truth: Callable[[int], tuple[Fraction, Fraction]] | None,
                  max_prec: int = 1 << 14) -> Comparison:
    """Decide ``claim >= truth`` where ``truth(prec)`` encloses the true value (None: +inf)."""
    c = Fraction(claim)
    if truth is None:
        return Comparison(Verdict.UNSOUND, claim, None, None, 0)
    prec = 64
    lo, hi = truth(prec)
    while True:
        if c >= hi:
            return Comparison(Verdict.SOUND, claim, lo, hi, prec)
        if c < lo:
            return Comparison(Verdict.UNSOUND, claim, lo, hi, prec)
        if prec >= max_prec:
            return Comparison(Verdict.UNDECIDED, claim, lo, hi, prec)
        prec *= 2
        lo, hi = truth(prec)


def renyi_divergence(p: Dist, q: Dist, alpha: float | Fraction, dps: int = 50) -> mpmath.mpf:
    """D_α(P‖Q) = ln(Σ_y P(y)^α Q(y)^(1−α)) / (α − 1) at ``dps`` decimal digits (α > 1, or α = 1 for KL).

    +inf when P is not absolutely continuous w.r.t. Q.
    """
    a = Fraction(alpha)
    if a < 1:
        raise ValueError(f"alpha={alpha!r} must be in [1, inf)")
    with mpmath.workdps(dps):
        if any(pv > 0 and q.get(y, 0) == 0 for y, pv in p.items()):
            return mpmath.inf
        def real(x: Fraction) -> mpmath.mpf:
            return mpmath.mpf(x.numerator) / x.denominator

        if a == 1:
            return mpmath.fsum(real(pv) * mpmath.log(real(pv / q[y])) for y, pv in p.items() if pv > 0)
        am = mpmath.mpf(a.numerator) / a.denominator
        total = mpmath.fsum(
            mpmath.power(real(pv), am) * mpmath.power(real(q[y]), 1 - am)
            for y, pv in p.items() if pv > 0)
        return mpmath.log(total) / (am - 1)


def hockey_stick_delta(p: Dist, q: Dist, epsilon: float) -> Callable[[int], tuple[Fraction, Fraction]]:
    """An enclosure prec -> (lo, hi) of δ(ε) = Σ_y max(0, P(y) − e^ε Q(y))."""
    eps = Fraction(epsilon)

    def enclose(prec: int) -> tuple[Fraction, Fraction]:
        e_lo, e_hi = exp_bracket(eps, prec)
        lo = sum((max(Fraction(0), pv - e_hi * q.get(y, 0)) for y, pv in p.items()), Fraction(0))
        hi = sum((max(Fraction(0), pv - e_lo * q.get(y, 0)) for y, pv in p.items()), Fraction(0))
        return lo, hi

    return enclose
