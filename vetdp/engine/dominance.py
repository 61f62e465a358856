"""Whole privacy curves at once: is every pair of the code's laws a garbling of an accountant's worst pair?

An accountant composes one worst pair (P*, Q*): its RDP curve, zCDP ρ, δ(ε) and the PLD of any number of
compositions are all functions of that pair. If the code's pair (P, Q) for every two neighbouring inputs is a
garbling of (P*, Q*) (some channel K with K∘P* = P and K∘Q* = Q), every one of those numbers bounds the code's:
divergences only shrink under a channel, and products of channels are channels. By Blackwell's theorem for two
laws, (P, Q) is such a garbling exactly when its hockey-stick divergence is no larger at every threshold:

    E_s(P‖Q) = Σ_y max(0, P(y) − s·Q(y)) <= E_s(P*‖Q*)   for every s = e^ε >= 0.

Both sides are convex and piecewise linear in s, with kinks only at the likelihood ratios P*(y)/Q*(y) on the
right. Between two kinks of the right side it is linear and the left side convex, so their difference is concave
there and least at the ends; beyond the last kink the right side is constant and the left one does not grow. So
the inequality holds everywhere as soon as it holds at s = 0 and at every likelihood ratio of the accountant's
pair. With rational laws that is finitely many exact comparisons: no tolerance, no grid.

Laws are given as privacy-loss distributions (:data:`vetdp.engine.structure.PLD`: ratio -> probability under P,
None for Q = 0), which is all E_s depends on.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any

from vetdp.engine.structure import PLD, delta_at_ratio, joint_terms, pld_of_terms

__all__ = ["Excess", "pld_of_laws", "first_excess", "Domination", "decide_domination",
           "pair_enclosure"]


def pld_of_laws(first: Mapping[Any, Fraction], second: Mapping[Any, Fraction]) -> PLD:
    """The privacy-loss distribution of two exact laws {output: probability} (e.g. an accountant's worst pair for a
    spec's ``accountant_pair``): likelihood ratio first(y)/second(y) -> its probability under ``first``.
    Preconditions: both sum to 1 in non-negative Fractions (ints allowed)."""
    for name, law in (("first", first), ("second", second)):
        for y, p in law.items():
            if isinstance(p, bool) or not isinstance(p, (int, Fraction)) or p < 0:
                raise ValueError(f"{name}[{y!r}]={p!r} must be a non-negative Fraction")
        if sum(law.values()) != 1:
            raise ValueError(f"the {name} law sums to {sum(law.values())}, not 1")
    return pld_of_terms(joint_terms({y: Fraction(p) for y, p in first.items()},
                                    {y: Fraction(p) for y, p in second.items()}))


def _check_pld(name: str, pld: Mapping) -> None:
    for r, mass in pld.items():
        if not isinstance(mass, (int, Fraction)) or isinstance(mass, bool) or mass < 0:
            raise ValueError(f"{name}: the probability {mass} of ratio {r} must be a non-negative Fraction")
        if r is not None and (not isinstance(r, (int, Fraction)) or isinstance(r, bool) or r < 0):
            raise ValueError(f"{name}: the likelihood ratio {r} must be a Fraction >= 0 or None (Q = 0)")


@dataclasses.dataclass(frozen=True)
class Excess:
    """A threshold s = e^ε where the code's hockey-stick divergence exceeds the bound's: both values, exact."""

    threshold: Fraction
    code_delta: Fraction
    bound_delta: Fraction

    def mirrored(self) -> Excess:
        """The same excess read off the two laws swapped: E_s(P‖Q) = 1 − s + s·E_{1/s}(Q‖P) for s > 0, so an
        excess at s < 1 is one at 1/s > 1 of the reversed pairs (both δ's lowered by 1 − s and divided by s)."""
        s = self.threshold
        if not 0 < s:
            raise ValueError(f"threshold={s} must be > 0 to mirror")
        return Excess(1 / s, (self.code_delta - 1 + s) / s, (self.bound_delta - 1 + s) / s)


def first_excess(code: PLD, bound: PLD) -> Excess | None:
    """The smallest s among 0 and the bound's likelihood ratios where E_s(code) > E_s(bound), or None when
    E_s(code) <= E_s(bound) for every s >= 0 (then the code's pair is a garbling of the bound's; the module
    docstring says why those points suffice). Exact."""
    _check_pld("code", code)
    _check_pld("bound", bound)
    points = sorted({Fraction(0)} | {Fraction(r) for r in bound if r is not None})
    for s in points:
        a, b = delta_at_ratio(code, s), delta_at_ratio(bound, s)
        if a > b:
            return Excess(s, a, b)
    return None


@dataclasses.dataclass(frozen=True)
class Domination:
    """The verdict on a list of the code's pairs against an accountant's pair.

    ``holds``: True (every pair a garbling of the pair's lower enclosure, so of the pair), False (some pair exceeds
    even the upper enclosure: ``excess`` and ``witness`` say where), None (undecided at the precision limit).
    ``points``: the kinks compared in all."""

    holds: bool | None
    excess: Excess | None = None
    witness: tuple[Any, Any] | None = None
    points: int = 0
    prec: int = 0


def pair_enclosure(pair: Any) -> Callable[[int], tuple[PLD, PLD]]:
    """A spec's ``accountant_pair`` value as prec -> (lower, upper) PLDs: a PLD dict is exact at every precision;
    a callable is used as it is."""
    if isinstance(pair, Mapping):
        _check_pld("accountant_pair", pair)
        fixed = dict(pair)
        return lambda prec: (fixed, fixed)
    if callable(pair):
        return pair
    raise TypeError(f"accountant_pair must give a PLD dict (ratio -> probability) or a callable prec -> (lower, "
                    f"upper) PLDs, not {type(pair).__name__}")


def decide_domination(code_pairs: list[tuple[PLD, Any, Any]], pair_at: Callable[[int], tuple[PLD, PLD]],
                      max_prec: int = 4096) -> Domination:
    """Whether every PLD of ``code_pairs`` ((pld, x, x') each) is a garbling of the accountant's pair that
    ``pair_at(prec)`` encloses between two rational pairs (lower ≼ pair ≼ upper): against the lower one all hold
    (True), or one fails against the upper (False, with the first such pair and threshold); otherwise the
    precision doubles up to ``max_prec`` bits (then None)."""
    if not code_pairs:
        raise ValueError("decide_domination needs at least one pair of the code's laws")
    prec = 128
    while True:
        lower, upper = pair_at(prec)
        for name, pld in (("the accountant's lower pair", lower), ("the accountant's upper pair", upper)):
            _check_pld(name, pld)
            if sum(pld.values()) != 1:
                raise ValueError(f"{name}'s PLD sums to {sum(pld.values())}, not 1: it must list every likelihood "
                                 "ratio with its probability under the first law")
        points = 0
        undecided = False
        for pld, x, xp in code_pairs:
            points += len(lower)
            if first_excess(pld, lower) is None:
                continue
            excess = first_excess(pld, upper)
            if excess is not None:
                return Domination(False, excess, (x, xp), points, prec)
            undecided = True
        if not undecided:
            return Domination(True, points=points, prec=prec)
        if lower == upper or prec >= max_prec:
            return Domination(None, points=points, prec=prec)
        prec *= 2
