"""Black-box privacy audits: a lower bound on ε from samples, valid with confidence 1 − β.

For two neighbouring inputs x, x′ and any event E, ε-DP (or (ε, δ)-DP) promises
P[M(x) ∈ E] <= e^ε · P[M(x′) ∈ E] + δ. An audit draws samples of M(x) and M(x′), splits
each into a *selection* half and a *test* half, and

1. chooses the event E (and the ordered pair, when several candidate inputs are given)
   from the selection half only: its first part ranks the outputs by empirical ratio,
   its second part picks how many of the top-ranked outputs to take (so that events made
   of many rare outputs, which look good on the data that ranked them, are not preferred);
2. on the test half, bounds p = P[M(x) ∈ E] from below and q = P[M(x′) ∈ E] from above by
   one-sided Clopper–Pearson intervals at level β/2 each (Bonferroni), so that with
   probability at least 1 − β both hold simultaneously;
3. reports ε_lower = ln((p_lo − δ) / q_hi), floored at 0.

Guarantee: whatever the mechanism, P[ε_lower > true ε] <= β, because E is independent of
the test half and the true loss satisfies p <= e^ε q + δ for every E. A violation is
reported only when ε_lower exceeds the claimed ε.

Candidate events are, for each *statistic* of the output (the output itself by default;
for bit vectors also the bits at the coordinates where x and x′ differ), the sets of the
statistic's values with the largest empirical ratios on the ranking split (the top 1, 2,
3, 4, 6, 8, ... values, in both directions).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Any

import numpy as np
from scipy.stats import beta as beta_dist

from vetdp.core.validation import check_float, check_int

__all__ = [
    "Statistic",
    "AuditResult",
    "clopper_pearson_lower",
    "clopper_pearson_upper",
    "epsilon_lower_bound",
    "tally",
    "default_statistics",
    "audit_tallies",
    "MAX_PREFIXES",
]

MAX_PREFIXES = 4096  # candidate events per statistic and direction (the top-j values, j <= this)


@dataclasses.dataclass(frozen=True)
class Statistic:
    """A named function of one output; events are sets of its values."""

    name: str
    fn: Callable[[Hashable], Hashable]


def clopper_pearson_lower(k: int, n: int, alpha: float) -> float:
    """The one-sided Clopper–Pearson lower bound on a binomial p from k successes in n trials.

    Guarantee: P[bound > p] <= alpha for every p. It is 0 when k = 0.
    """
    k, n = check_int("k", k, lo=0), check_int("n", n, lo=1)
    if k > n:
        raise ValueError(f"k={k} must be in [0, n={n}]")
    _check_alpha(alpha)
    return 0.0 if k == 0 else float(beta_dist.ppf(alpha, k, n - k + 1))


def clopper_pearson_upper(k: int, n: int, alpha: float) -> float:
    """The one-sided Clopper–Pearson upper bound on a binomial p from k successes in n trials.

    Guarantee: P[bound < p] <= alpha for every p. It is 1 when k = n, and > 0 always.
    """
    k, n = check_int("k", k, lo=0), check_int("n", n, lo=1)
    if k > n:
        raise ValueError(f"k={k} must be in [0, n={n}]")
    _check_alpha(alpha)
    return 1.0 if k == n else float(beta_dist.ppf(1 - alpha, k + 1, n - k))


def _check_alpha(alpha: float) -> float:
    a = check_float("alpha", alpha)
    if not 0 < a < 1:
        raise ValueError(f"alpha={alpha!r} must be in (0, 1)")
    return a


def _check_beta(beta: float) -> float:
    b = check_float("beta", beta)
    if not 0 < b < 1:
        raise ValueError(f"beta={beta!r} must be in (0, 1)")
    return b


def epsilon_lower_bound(k_p: Any, n_p: int, k_q: Any, n_q: int, beta: float, delta: float = 0.0) -> Any:
    """ln((p_lo − δ) / q_hi) for counts k_p of n_p (under x) and k_q of n_q (under x′) in one event.

    p_lo and q_hi are one-sided Clopper–Pearson bounds at β/2 each, so the result is a
    lower bound on the privacy loss with confidence 1 − β when the event was fixed before
    the counts were drawn. −inf when p_lo <= δ. Vectorised over arrays of counts.
    """
    kp, kq = np.asarray(k_p, dtype=float), np.asarray(k_q, dtype=float)
    half = beta / 2
    with np.errstate(divide="ignore", invalid="ignore"):
        p_lo = np.where(kp > 0, beta_dist.ppf(half, kp, n_p - kp + 1), 0.0)
        q_hi = np.where(kq < n_q, beta_dist.ppf(1 - half, kq + 1, n_q - kq), 1.0)
        num = p_lo - delta
        out = np.where(num > 0, np.log(np.maximum(num, 1e-300)) - np.log(q_hi), -np.inf)
    return float(out) if out.ndim == 0 else out


def _hashable(v: Any) -> Hashable:
    if isinstance(v, np.ndarray):
        return tuple(_hashable(e) for e in v.tolist())
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, list):
        return tuple(_hashable(e) for e in v)
    return v


def tally(outputs: Any) -> Counter:
    """How often each output occurs; NumPy rows become tuples, NumPy scalars Python scalars."""
    if isinstance(outputs, np.ndarray) and outputs.ndim == 2:
        rows, counts = np.unique(outputs, axis=0, return_counts=True)
        return Counter({tuple(r.tolist()): int(c) for r, c in zip(rows, counts, strict=True)})
    if isinstance(outputs, np.ndarray) and outputs.ndim == 1 and outputs.dtype != object:
        values, counts = np.unique(outputs, return_counts=True)
        return Counter({v.item(): int(c) for v, c in zip(values, counts, strict=True)})
    return Counter(_hashable(o) for o in outputs)


def _as_sequence(x: Any) -> tuple | None:
    if isinstance(x, (str, bytes)) or not isinstance(x, (Sequence, np.ndarray)):
        return None
    return tuple(_hashable(e) for e in x)


def default_statistics(x: Any, x_prime: Any) -> list[Statistic]:
    """The output itself, and for equal-length sequences the coordinates where x and x′ differ."""
    stats = [Statistic("output", lambda y: y)]
    a, b = _as_sequence(x), _as_sequence(x_prime)
    if a is not None and b is not None and len(a) == len(b):
        diff = tuple(i for i, (u, v) in enumerate(zip(a, b, strict=True)) if u != v)
        if diff and len(diff) < len(a):
            stats.append(Statistic(f"coordinates {list(diff)}", lambda y, d=diff: tuple(y[i] for i in d)))
    return stats


def _project(counts: Counter, stat: Statistic) -> Counter:
    out: Counter = Counter()
    for y, c in counts.items():
        out[stat.fn(y)] += c
    return out


def _prefix_sizes(n: int) -> np.ndarray:
    """Event sizes tried: 1, 2, 3, 4, 6, 8, 12, 16, ... up to n (a geometric grid)."""
    sizes, k = set(), 1
    while k <= n:
        sizes.update({k, min(n, k + k // 2)})
        k *= 2
    sizes.add(n)
    return np.array(sorted(s for s in sizes if s >= 1), dtype=np.int64)


@dataclasses.dataclass(frozen=True)
class _Event:
    score: float  # the bound the selection half itself would give
    statistic: Statistic
    values: frozenset
    forward: bool  # True: E is likely under x (bound P[M(x) in E] below); False: under x'


def _best_event(rank: tuple[Counter, Counter], choose: tuple[Counter, Counter], n_choose: int,
                statistics: Iterable[Statistic], beta: float, delta: float) -> _Event:
    best: _Event | None = None
    statistics = list(statistics)
    for stat in statistics:
        rx, rxp = _project(rank[0], stat), _project(rank[1], stat)
        cx, cxp = _project(choose[0], stat), _project(choose[1], stat)
        values = list(set(rx) | set(rxp))
        a = np.array([rx.get(v, 0) for v in values], dtype=float)
        b = np.array([rxp.get(v, 0) for v in values], dtype=float)
        ca = np.array([cx.get(v, 0) for v in values], dtype=float)
        cb = np.array([cxp.get(v, 0) for v in values], dtype=float)
        for forward, (hi, lo, chi, clo) in ((True, (a, b, ca, cb)), (False, (b, a, cb, ca))):
            order = np.argsort(-(hi + 0.5) / (lo + 0.5), kind="stable")[:MAX_PREFIXES]
            sizes = _prefix_sizes(len(order))
            # scored at a Bonferroni-corrected level over every candidate, so that the choice
            # does not favour events whose count on this split is high by chance
            alpha = beta / (len(sizes) * 2 * len(statistics))
            scores = epsilon_lower_bound(np.cumsum(chi[order])[sizes - 1], n_choose,
                                         np.cumsum(clo[order])[sizes - 1], n_choose, alpha, delta)
            j = int(np.argmax(scores))
            if best is None or scores[j] > best.score:
                best = _Event(float(scores[j]), stat, frozenset(values[i] for i in order[: sizes[j]]), forward)
    if best is None:  # pragma: no cover - statistics is never empty
        raise ValueError("statistics must name at least one statistic")
    return best


@dataclasses.dataclass(frozen=True)
class AuditResult:
    """The outcome of one audit; ``epsilon_lower`` holds with confidence ``1 − beta``.

    ``x``/``x_prime`` are ordered so that the event is likely under ``x``; ``p_*`` refer to
    M(x), ``q_*`` to M(x′); counts are from the test half only.
    """

    claimed_epsilon: float
    delta: float
    beta: float
    epsilon_lower: float
    x: Any
    x_prime: Any
    statistic: str
    event: tuple
    samples_select: int  # per input
    samples_test: int  # per input
    count_p: int
    count_q: int
    p_lower: float
    q_upper: float

    @property
    def violation(self) -> bool:
        """True only when the lower bound exceeds the claim."""
        return self.epsilon_lower > self.claimed_epsilon

    def describe(self) -> str:
        """One paragraph stating the bound, β, the event and the sample counts."""
        shown = sorted(map(repr, self.event))
        event = ", ".join(shown[:6]) + (f", … ({len(shown)} values)" if len(shown) > 6 else "")
        claim = f"ε={self.claimed_epsilon!r}" + (f", δ={self.delta!r}" if self.delta else "")
        verdict = "exceeds" if self.violation else "does not exceed"
        return (f"ε >= {self.epsilon_lower:.6g} with confidence {1 - self.beta:g} (β={self.beta:g}), which "
                f"{verdict} the claim {claim}; event: {self.statistic} in {{{event}}}; "
                f"P[M(x) in E] >= {self.p_lower:.6g} ({self.count_p}/{self.samples_test}), "
                f"P[M(x') in E] <= {self.q_upper:.6g} ({self.count_q}/{self.samples_test}); "
                f"{self.samples_select} selection + {self.samples_test} test samples per input")


def audit_tallies(rank: Sequence[Counter], choose: Sequence[Counter], test: Sequence[Counter],
                  inputs: Sequence[Any], n_rank: int, n_choose: int, n_test: int, epsilon: float, delta: float = 0.0,
                  beta: float = 0.05, statistics: Callable[[Any, Any], list[Statistic]] | None = None) -> AuditResult:
    """Audit from per-input tallies of three independent splits of outputs of M(inputs[i]).

    The pair and the event are chosen from ``rank`` and ``choose`` only (``n_rank`` and
    ``n_choose`` samples per input); the bound is computed from ``test`` only (``n_test``
    per input). See the module docstring for the guarantee.
    """
    eps = check_float("epsilon", epsilon)
    if eps < 0:
        raise ValueError(f"epsilon={epsilon!r} must be in [0, inf)")
    dlt = check_float("delta", delta)
    if not 0 <= dlt < 1:
        raise ValueError(f"delta={delta!r} must be in [0, 1)")
    b = _check_beta(beta)
    for name, value in (("n_rank", n_rank), ("n_choose", n_choose), ("n_test", n_test)):
        check_int(name, value, lo=1)
    if len(inputs) < 2 or not len(rank) == len(choose) == len(test) == len(inputs):
        raise ValueError(f"need tallies of every split for at least two inputs, got {len(inputs)} inputs and "
                         f"{len(rank)}/{len(choose)}/{len(test)} rank/choose/test tallies")
    stats_of = statistics or default_statistics
    best: tuple[_Event, int, int] | None = None
    for i, j in itertools.combinations(range(len(inputs)), 2):
        ev = _best_event((rank[i], rank[j]), (choose[i], choose[j]), n_choose, stats_of(inputs[i], inputs[j]), b,
                         dlt)
        if best is None or ev.score > best[0].score:
            best = (ev, i, j) if ev.forward else (ev, j, i)
    assert best is not None
    ev, i, j = best
    k_p = sum(c for y, c in test[i].items() if ev.statistic.fn(y) in ev.values)
    k_q = sum(c for y, c in test[j].items() if ev.statistic.fn(y) in ev.values)
    bound = epsilon_lower_bound(k_p, n_test, k_q, n_test, b, dlt)
    return AuditResult(
        claimed_epsilon=eps, delta=dlt, beta=b, epsilon_lower=max(0.0, bound) if math.isfinite(bound) else 0.0,
        x=inputs[i], x_prime=inputs[j], statistic=ev.statistic.name, event=tuple(ev.values),
        samples_select=n_rank + n_choose, samples_test=n_test, count_p=k_p, count_q=k_q,
        p_lower=clopper_pearson_lower(k_p, n_test, b / 2), q_upper=clopper_pearson_upper(k_q, n_test, b / 2))
