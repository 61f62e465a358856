"""Exact privacy of categorical mechanisms at large t, from the classes of outputs their laws show.

A categorical mechanism over t categories has t outputs per input, and its law for one input is
enumerated exactly in O(t) paths. What cannot be done at t = 2^16 is to enumerate every input
(O(t^2) paths) or to compare every pair of laws output by output. This module compresses each
enumerated law into *classes*: the sets of outputs that share one probability. Randomized
response shows two classes per category input ({x} with the keep probability, the other t − 1
with the lie probability) and one for an input outside the categories (all t uniform). The
classes are read from the exact enumerated law, never assumed: a law with more classes than
``max_classes`` is reported as such (:class:`NotSymmetric`) and the caller falls back to
comparing laws output by output.

**Decision.** For a pair (x, x'), the likelihood ratio P[M(x)=y]/P[M(x')=y] is constant on
every intersection of a class of x with a class of x', so the worst ratio is the largest
p_A/p_B over the pairs of classes (A, B) that intersect, tried in decreasing order of ratio:
O(classes^2) set tests per pair of inputs (each test stops at the first common output), plus a
support check done once per law. Exact rationals throughout.

**Coverage.** Only the enumerated inputs are proved. :func:`coverage` says how many of the
values the outputs take were enumerated as inputs, and how many were not examined; nothing is
inferred for an input that was not enumerated.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable, Mapping, Sequence
from fractions import Fraction
from typing import Any

from vetdp.engine.divergence import MaxDivergenceResult

__all__ = ["NotSymmetric", "ClassLaw", "class_law", "pair_worst", "worst_over", "Coverage", "coverage",
           "MAX_CLASSES"]

MAX_CLASSES = 16  # classes of equal probability per law; more is not a small class structure


class NotSymmetric(Exception):
    """An enumerated law does not fall into a small number of equal-probability classes (the message says how)."""


@dataclasses.dataclass(frozen=True)
class ClassLaw:
    """The exact law of M(x) for one input, as classes of outputs with equal probability.

    ``classes`` pairs each probability (> 0) with the frozenset of outputs that have it, largest
    probability first; their union is ``support`` and their probabilities times sizes sum to 1.
    """

    x: Any
    classes: tuple[tuple[Fraction, frozenset], ...]
    support: frozenset

    def prob(self, y: Hashable) -> Fraction:
        """P[M(x) = y], exactly (0 outside the support)."""
        for p, outputs in self.classes:
            if y in outputs:
                return p
        return Fraction(0)


def class_law(x: Any, dist: Mapping[Hashable, Fraction], max_classes: int = MAX_CLASSES) -> ClassLaw:
    """``dist`` (an exact law summing to 1) as equal-probability classes; :class:`NotSymmetric` beyond
    ``max_classes`` classes. Raises ValueError when ``dist`` is not a distribution."""
    groups: dict[Fraction, list] = {}
    total = Fraction(0)
    for y, p in dist.items():
        if p < 0:
            raise ValueError(f"the law of x={x!r} gives output {y!r} the negative probability {p}")
        if p == 0:
            continue
        total += p
        groups.setdefault(Fraction(p), []).append(y)
        if len(groups) > max_classes:
            raise NotSymmetric(f"the law of x={x!r} takes more than {max_classes} distinct probabilities")
    if total != 1:
        raise ValueError(f"the law of x={x!r} sums to {total}, not 1")
    classes = tuple(sorted(((p, frozenset(ys)) for p, ys in groups.items()), key=lambda c: c[0], reverse=True))
    return ClassLaw(x, classes, frozenset().union(*(ys for _, ys in classes)))


def _common(a: frozenset, b: frozenset) -> Any:
    """An element of a ∩ b, or None when they are disjoint (the smaller set is scanned, stopping at the first hit)."""
    small, large = (a, b) if len(a) <= len(b) else (b, a)
    if small.isdisjoint(large):
        return None
    return next(y for y in small if y in large)


def pair_worst(a: ClassLaw, b: ClassLaw, b_covers: bool | None = None) -> MaxDivergenceResult:
    """max over outputs y of P[M(a.x)=y] / P[M(b.x)=y] with its witness (ratio None: +inf), exactly.

    ``b_covers``: whether b's support is known to contain a's (skips the support check)."""
    if b_covers is None:
        b_covers = a.support <= b.support
    if not b_covers:
        y = next(iter(a.support - b.support))
        return MaxDivergenceResult(None, a.x, b.x, y, a.prob(y), Fraction(0))
    candidates = sorted(((pa / pb, i, j) for i, (pa, _) in enumerate(a.classes) for j, (pb, _) in enumerate(b.classes)),
                        key=lambda c: c[0], reverse=True)
    for ratio, i, j in candidates:
        y = _common(a.classes[i][1], b.classes[j][1])
        if y is not None:
            return MaxDivergenceResult(ratio, a.x, b.x, y, a.classes[i][0], b.classes[j][0])
    raise ValueError("two laws with a common support share no output")  # pragma: no cover - supports are non-empty


def worst_over(laws: Sequence[ClassLaw], pairs: Sequence[tuple[int, int]] | None = None) -> MaxDivergenceResult:
    """The worst ratio over ``pairs`` of indices into ``laws`` (None: every ordered pair of distinct laws).

    Each law's support is compared once with the union of all supports, so a pair needs the full
    support check only when the second law misses some output."""
    if len(laws) < 2:
        raise ValueError(f"worst_over needs at least two laws, got {len(laws)}")
    if pairs is None:
        pairs = [(i, j) for i in range(len(laws)) for j in range(len(laws)) if i != j]
    union = frozenset().union(*(law.support for law in laws))
    full = [len(law.support) == len(union) for law in laws]
    best: MaxDivergenceResult | None = None
    for i, j in pairs:
        md = pair_worst(laws[i], laws[j], True if full[j] else None)
        if best is None or (best.ratio is not None and (md.ratio is None or md.ratio > best.ratio)):
            best = md
        if best.ratio is None:
            break
    if best is None:
        raise ValueError("worst_over was given no pairs")
    return best


@dataclasses.dataclass(frozen=True)
class Coverage:
    """Which inputs a decision rests on: ``values`` outputs seen, ``enumerated_inside`` of them enumerated as
    inputs, ``enumerated_outside`` enumerated inputs that no law outputs, ``not_examined`` = values − inside."""

    values: int
    enumerated_inside: int
    enumerated_outside: int
    classes: int  # the largest number of classes of one law

    @property
    def not_examined(self) -> int:
        return self.values - self.enumerated_inside

    def describe(self) -> str:
        return (f"{self.enumerated_inside + self.enumerated_outside} inputs enumerated exactly "
                f"({self.enumerated_inside} of the {self.values} values the outputs take, {self.enumerated_outside} "
                f"outside them), each law in at most {self.classes} classes of equal probability, and the other "
                f"{self.not_examined} values were not examined as inputs")


def coverage(laws: Sequence[ClassLaw]) -> Coverage:
    """How much of the input space the enumerated ``laws`` cover (inputs compared with outputs as values)."""
    union = frozenset().union(*(law.support for law in laws))
    inside = {law.x for law in laws if _member(law.x, union)}
    return Coverage(len(union), len(inside), len(laws) - len(inside), max((len(law.classes) for law in laws),
                                                                          default=0))


def _member(x: Any, values: frozenset) -> bool:
    try:
        return x in values
    except TypeError:  # an unhashable input is not one of the output values
        return False
