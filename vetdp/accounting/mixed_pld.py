"""The exact PLD of a heterogeneous composition: RR(ε₁)×n₁ ∘ RR(ε₂)×n₂ ∘ RAPPOR(ε₃)×n₃ ∘ ...

Each part is ``count`` runs of an :class:`~vetdp.accounting.curves.RRFamily` (d coordinates of
t-ary RR with log-ratio a). On the worst-case pair every coordinate is an independent step
with loss +a (P-probability p), −a (r) or 0 ((t−2)r), so the total loss is a sum of
independent lattice variables ``L = Σ_g s_g·a_g`` with one group ``g`` per distinct (t, a)
(parts with equal t and a are merged: RAPPOR(ε) and RR(ε/2) are both binary steps of ε/2).
Then (hockey-stick divergence)

    δ(ε) = Σ_{outcomes with L > ε} [P(s) − e^ε·Q(s)],   Q_g(s) = P_g(s)·e^{−s·a_g} = P_g(−s),

the last identity because the step generating function ``pz + λ + r/z`` is invariant under
``z → r/(p z)``. Adaptive composition of mechanisms each dominated by its worst-case pair is
dominated by composing the pairs, so these δ(ε) hold for the adaptive composition.

Certification: every P_g(s) is enclosed by outward-rounded interval arithmetic (mpmath.iv)
through a positive-term recurrence; all groups but the largest are enumerated jointly as
atoms, the largest through suffix sums; the few terms whose loss may equal ε within the
intervals are enclosed one by one and clamped at 0. Entries of the enumerated groups with
P_g(s) < 2^-110 are dropped and their total mass is added to the upper bound.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from vetdp.accounting.curves import RRFamily, iv_endpoints, iv_precision
from vetdp.accounting.pld import EpsilonAtDelta, certified_epsilon_search
from vetdp.arith.rounding import round_down, round_up
from vetdp.core.validation import check_float, check_int, check_interval

__all__ = ["MixedPLD", "MAX_ATOMS", "group_key"]

_PREC = 128
_DROP = Fraction(1, 2**110)  # an entry of an enumerated group below this probability is dropped (mass bounded)
MAX_ATOMS = 200_000  # joint outcomes of all groups but the largest; above it the exact law is refused (time)


def group_key(f: RRFamily) -> tuple:
    """Parts with equal keys have identical steps (same t, same exact log-ratio a)."""
    if f.epsilon is not None:
        return (f.categories, "eps", f.epsilon / f.divisor)
    return (f.categories, "ratio", f.ratio)


class _Group:
    """m i.i.d. steps of one (t, a): the interval P(s) for s = −m..m (index s + m)."""

    def __init__(self, family: RRFamily, steps: int, iv: Any):
        self.family, self.m = family, steps
        self.A = family.log_ratio_interval(_PREC)
        t, m = family.categories, steps
        eA = iv.exp(self.A)
        p, r = eA / (eA + (t - 1)), 1 / (eA + (t - 1))
        lam = (t - 2) * r
        pos: list = [iv.mpf(0)] * (m + 2)  # pos[k] = P(s = k), k = 0..m
        c_next, c_k = iv.mpf(0), p**m
        pos[m] = c_k
        for k in range(m, 0, -1):
            # p(m−k+1)·c_{k−1} = r(m+k+1)·c_{k+1} + λ·k·c_k: every term positive, so the enclosure stays tight
            c_prev = (r * (m + k + 1) * c_next + lam * k * c_k) / (p * (m - k + 1))
            c_next, c_k = c_k, c_prev
            pos[k - 1] = c_k
        neg_ratio = iv.exp(-self.A)  # P(−k) = P(k)·e^{−k a}
        probs: list = [iv.mpf(0)] * (2 * m + 1)
        w = iv.mpf(1)
        for k in range(0, m + 1):
            probs[m + k] = pos[k]
            if k:
                probs[m - k] = pos[k] * w
            w = w * neg_ratio
        self.probs = probs

    def P(self, s: int) -> Any:
        return self.probs[s + self.m]


class MixedPLD:
    """The exact PLD of the composition of ``parts`` = [(family, count), ...] (see the module docstring).

    Preconditions: at least one part; each family an RRFamily, each count an int >= 1; the joint
    outcomes of all step groups but the largest at most :data:`MAX_ATOMS` (else ValueError).
    """

    def __init__(self, parts: Sequence[tuple[RRFamily, int]]):
        if not parts:
            raise ValueError("parts=[] must hold at least one (family, count)")
        steps: dict[tuple, list] = {}
        for i, part in enumerate(parts):
            if not (isinstance(part, tuple) and len(part) == 2):
                raise TypeError(f"parts[{i}]={part!r} must be a (RRFamily, count) pair")
            family, count = part
            if not isinstance(family, RRFamily):
                raise TypeError(f"parts[{i}] family={family!r} must be an RRFamily")
            n = check_int(f"parts[{i}] count", count, lo=1)
            entry = steps.setdefault(group_key(family), [family, 0])
            entry[1] += n * family.coordinates
        self.parts = tuple(parts)
        specs = sorted(steps.values(), key=lambda e: e[1])
        with iv_precision(_PREC) as iv:
            self._groups = [_Group(f, m, iv) for f, m in specs]
            self._build(iv)

    # ------------------------------------------------------------------ set-up
    def _build(self, iv: Any) -> None:
        *rest, last = self._groups
        self._last = last
        size = 1
        kept_per_group = []
        dropped = Fraction(0)
        for g in rest:
            kept = []
            for s in range(-g.m, g.m + 1):
                hi = iv_endpoints(g.P(s))[1]
                if hi < _DROP:
                    dropped += hi
                else:
                    kept.append(s)
            kept_per_group.append(kept)
            size *= len(kept)
        if size > MAX_ATOMS:
            raise ValueError(f"the composition has {size} joint outcomes besides its largest part; the exact mixed "
                             f"PLD allows at most {MAX_ATOMS} (fewer or smaller heterogeneous parts)")
        atoms = [(iv.mpf(0), iv.mpf(1), iv.mpf(1))]  # (loss, P, Q)
        for g, kept in zip(rest, kept_per_group, strict=True):
            atoms = [(L + s * g.A, P * g.P(s), Q * g.P(-s)) for L, P, Q in atoms for s in kept]
        self._atoms = atoms
        self._dropped = dropped
        m = last.m
        sp: list = [iv.mpf(0)] * (2 * m + 2)
        sq: list = [iv.mpf(0)] * (2 * m + 2)
        for i in range(2 * m, -1, -1):  # suffix sums over s >= i − m of P(s) and of Q(s) = P(−s)
            sp[i] = sp[i + 1] + last.probs[i]
            sq[i] = sq[i + 1] + last.probs[2 * m - i]
        self._sp, self._sq = sp, sq
        self.max_loss = float(sum(iv_endpoints(g.A)[1] * g.m for g in self._groups))
        # float64 copies (logs) for the uncertified search
        self._f_atoms = (np.array([float(_mid(L)) for L, _, _ in atoms]),
                         np.array([_log_mid(P) for _, P, _ in atoms]),
                         np.array([_log_mid(Q) for _, _, Q in atoms]))
        self._f_sp = np.array([_log_mid(x) for x in sp])
        self._f_sq = np.array([_log_mid(x) for x in sq])
        self._f_a = float(_mid(last.A))

    @property
    def atoms(self) -> int:
        """How many joint outcomes of the enumerated groups are summed per δ(ε)."""
        return len(self._atoms)

    # ------------------------------------------------------------------ float64 (search only)
    def delta(self, epsilon: float) -> float:
        """δ(ε) in float64 (not certified; drives the search of :meth:`epsilon`)."""
        eps = _check_epsilon(epsilon)
        L0, lp0, lq0 = self._f_atoms
        m = self._last.m
        idx = np.floor((eps - L0) / self._f_a).astype(np.int64) + 1 + m  # first s with L0 + s·a > ε, as index
        idx = np.clip(idx, 0, 2 * m + 1)
        lp, lq = lp0 + self._f_sp[idx], lq0 + self._f_sq[idx]
        with np.errstate(over="ignore", invalid="ignore"):
            terms = np.where(np.isfinite(lp), np.exp(lp) * -np.expm1(np.minimum(eps + lq - lp, 0.0)), 0.0)
        return float(np.sum(terms))

    # ------------------------------------------------------------------ certified
    def delta_bounds(self, epsilon: float) -> tuple[float, float]:
        """Floats ``lo <= δ(ε) <= hi`` for the exact δ of the composition (interval arithmetic)."""
        eps = _check_epsilon(epsilon)
        last, m = self._last, self._last.m
        with iv_precision(_PREC) as iv:
            fe = Fraction(eps)
            e = iv.mpf(fe.numerator) / fe.denominator
            E = iv.exp(e)
            total = iv.mpf(0)
            for L0, P0, Q0 in self._atoms:
                x = (e - L0) / last.A  # s > x  <=>  loss > ε
                s_lo = max(-m, math.floor(float(x.a)) - 1)
                s_sure = min(m + 1, max(-m, math.floor(float(x.b)) + 2))
                for s in range(s_lo, s_sure):  # loss may be on either side of ε: enclose and clamp each
                    total += _clamp0(iv, P0 * last.P(s) - E * Q0 * last.P(-s))
                total += _clamp0(iv, P0 * self._sp[s_sure + m] - E * Q0 * self._sq[s_sure + m])
            lo, hi = iv_endpoints(total)
        hi += self._dropped
        return round_down(max(lo, Fraction(0))), round_up(min(hi, Fraction(1)))

    def epsilon(self, delta: float) -> EpsilonAtDelta:
        """The smallest ε with δ(ε) <= ``delta``, rounded up and certified, with a certified lower end."""
        return certified_epsilon_search(self.delta, self.delta_bounds, self.max_loss, delta, relative_step=2**-40)


def _check_epsilon(epsilon: object) -> float:
    e = check_float("epsilon", epsilon)
    check_interval("epsilon", e, 0, None, lo_closed=True, hi_closed=False)
    return e


def _mid(x: Any) -> Fraction:
    lo, hi = iv_endpoints(x)
    return (lo + hi) / 2


def _log_mid(x: Any) -> float:
    """ln of the interval's midpoint as a float (−inf for 0), without underflow for tiny probabilities."""
    m = _mid(x)
    if m <= 0:
        return -math.inf
    return math.log(m.numerator) - math.log(m.denominator)


def _clamp0(iv: Any, x: Any) -> Any:
    """max(0, x) of an interval."""
    if x.b <= 0:
        return iv.mpf(0)
    if x.a < 0:
        return iv.mpf([0, x.b])
    return x
