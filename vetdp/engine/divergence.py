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

from vetdp.arith.rounding import exp_enclosure, ln_bracket

__all__ = [
    "Verdict",
    "Comparison",
    "MaxDivergenceResult",
    "max_divergence",
    "DivergenceBracket",
    "BracketVerdict",
    "max_divergence_bracket",
    "decide_bracket",
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
            if lo_x == hi_x:  # every input gives y the same probability: name two distinct ones all the same
                lo_x = next(x for x in inputs if x != hi_x)
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


@dataclasses.dataclass(frozen=True)
class DivergenceBracket:
    """Bounds on the worst likelihood ratio when some laws are known only up to a residual.

    ``lower <= max_{pairs, y} P[M(x)=y] / P[M(x')=y] <= upper``; None stands for +inf (for
    ``lower``: some output is certainly possible under x and impossible under x').
    ``lower == 0`` when nothing explored gives a positive ratio. ``witness`` attains ``lower``
    (P[M(x)=y] at its explored mass, P[M(x')=y] at its largest possible value).
    ``residual`` is the largest residual among the laws compared.
    """

    lower: Fraction | None
    upper: Fraction | None
    witness: MaxDivergenceResult | None
    residual: Fraction

    @property
    def exact(self) -> bool:
        return self.residual == 0


def max_divergence_bracket(laws: Mapping[Any, Any], pairs: Sequence[tuple[Any, Any]] | None = None
                           ) -> DivergenceBracket:
    """Bracket the worst ratio over ``pairs`` (all ordered pairs of distinct inputs when None).

    ``laws`` maps each input to a :class:`vetdp.engine.enumerate.Law` (anything with ``dist`` and
    ``residual``): every P[M(x)=y] lies in [dist_x[y], dist_x[y] + r_x]. The lower bound takes the
    numerator at its explored mass and the denominator at its largest value; the upper bound
    takes the numerator exactly (finite only when r_x = 0, since an unexplored output of x may
    have probability 0 under x') and the denominator at its explored mass. With every residual
    0, ``lower == upper`` and the witness are exactly those of :func:`max_divergence`.
    """
    inputs = list(laws)
    if len(inputs) < 2:
        raise ValueError(f"max_divergence_bracket needs at least two inputs, got {len(inputs)}")
    given = pairs
    if pairs is None:
        pairs = [(a, b) for a in inputs for b in inputs if a != b]
    involved = {v for pair in pairs for v in pair}
    residual = max((Fraction(laws[v].residual) for v in involved), default=Fraction(0))
    if residual == 0:
        md = max_divergence({v: laws[v].dist for v in inputs}, given)
        return DivergenceBracket(md.ratio, md.ratio, md, Fraction(0))
    lower: Fraction | None = Fraction(0)
    witness: MaxDivergenceResult | None = None
    upper: Fraction | None = Fraction(0)
    for x, xp in pairs:
        px, qx = laws[x], laws[xp]
        r_x, r_xp = Fraction(px.residual), Fraction(qx.residual)
        if r_x > 0:
            upper = None
        for y, p in px.dist.items():
            if p == 0:
                continue
            q_lo = qx.dist.get(y, Fraction(0))
            q_hi = min(Fraction(1), q_lo + r_xp)
            if lower is not None:
                if q_hi == 0:
                    lower, witness = None, MaxDivergenceResult(None, x, xp, y, p, q_hi)
                elif p / q_hi > lower:
                    lower, witness = p / q_hi, MaxDivergenceResult(p / q_hi, x, xp, y, p, q_hi)
            if upper is not None:
                upper = None if q_lo == 0 else max(upper, p / q_lo)
    return DivergenceBracket(lower, upper, witness, residual)


@dataclasses.dataclass(frozen=True)
class BracketVerdict:
    """A claim against a :class:`DivergenceBracket`: sound, unsound, or undecided (with why)."""

    verdict: Verdict
    lower: Comparison | None  # claim against ln(lower) (None: lower is 0 or +inf)
    upper: Comparison | None  # claim against ln(upper) (None: upper is +inf or was not needed)
    message: str


def decide_bracket(claim: float, bracket: DivergenceBracket, max_prec: int = 1 << 14) -> BracketVerdict:
    """UNSOUND when claim < ln(lower); SOUND when claim >= ln(upper) (upper is finite only when every
    numerator's law is exact, e.g. all residuals 0); otherwise UNDECIDED, the message stating the
    residual and the bracket."""
    if bracket.lower is None:
        return BracketVerdict(Verdict.UNSOUND, Comparison(Verdict.UNSOUND, claim, None, None, 0), None,
                              "an output is possible under one input and impossible under its neighbour")
    low = None
    if bracket.lower > 0:
        low = compare_claim(claim, ln_ratio_bracket(bracket.lower), max_prec)
        if low.verdict is Verdict.UNSOUND:
            return BracketVerdict(Verdict.UNSOUND, low, None, f"claim {claim!r} is below the loss's lower bound "
                                  f"ln({bracket.lower}) (unexplored mass {bracket.residual})")
    high = None
    if bracket.upper is not None and bracket.upper > 0:
        high = compare_claim(claim, ln_ratio_bracket(bracket.upper), max_prec)
        if high.verdict is Verdict.SOUND:  # upper is a true bound (finite only where numerators are exact)
            return BracketVerdict(Verdict.SOUND, low, high, "claim >= exact loss" if bracket.residual == 0 else
                                  f"claim >= the loss's upper bound ln({bracket.upper})")
    if bracket.residual == 0:
        why = "claim and exact loss not separated at the precision limit"
    else:
        up = "+inf" if bracket.upper is None else f"ln({bracket.upper})"
        why = (f"undecided: unexplored mass {bracket.residual} (~{float(bracket.residual):.3g}); the loss lies in "
               f"[ln({bracket.lower}), {up}]")
    return BracketVerdict(Verdict.UNDECIDED, low, high, why)


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
    """An enclosure prec -> (lo, hi) of δ(ε) = Σ_y max(0, P(y) − e^ε Q(y)), for every ε (an ε at or above the log
    of every finite ratio P/Q leaves the mass where Q = 0, exactly; e^ε is never clamped)."""
    eps = Fraction(epsilon)
    top = max((pv / q[y] for y, pv in p.items() if q.get(y, 0)), default=None)
    if eps and (top is None or top <= 1 or ln_bracket(top, 64)[1] <= eps):
        only = sum((pv for y, pv in p.items() if not q.get(y, 0)), Fraction(0))
        return lambda prec: (only, only)

    def enclose(prec: int) -> tuple[Fraction, Fraction]:
        e_lo, e_hi = exp_enclosure(eps, prec)
        lo = sum((max(Fraction(0), pv - e_hi * q.get(y, 0)) for y, pv in p.items()), Fraction(0))
        hi = sum((max(Fraction(0), pv - e_lo * q.get(y, 0)) for y, pv in p.items()), Fraction(0))
        return lo, hi

    return enclose
