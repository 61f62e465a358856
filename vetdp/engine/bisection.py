"""Comparisons that are not monotone in a parameter, decided on sub-intervals by bisection of the float line.

A branch ``a(x) < b(x)`` between two float terms that are each monotone in the parameter ``x`` is itself monotone
only when the terms move in opposite directions. When both grow (k-RAPPOR's ``min(ε, bound(ε))``), the answer may
change many times, or at every other float near a crossing. :func:`bisect_comparison` cuts the interval of ``x``
into sub-intervals on which the answer is the same for every float, by bisection over the float order:

* on a sub-interval [lo, hi], a term monotone in ``x`` takes only float values between its values at lo and at hi
  (each term is evaluated as the code rounds it, so its enclosure is exact: no further rounding is involved);
* the comparison is monotone in each term's value, so its answer at the most favourable and at the least
  favourable end of the enclosures bounds its answer everywhere: where the two agree (the enclosures are
  disjoint, or touch on the side the comparison allows), the sub-interval is decided;
* otherwise the sub-interval is halved, the widest first, until the work budget (sub-intervals examined) is spent;
  a single float is always decided (its enclosures are points).

What is left is returned as undecided: the caller reports it open, never proved.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["BISECTIONS", "DEEP_BISECTIONS", "bisect_comparison", "merge_pieces", "decided_on", "remember"]

BISECTIONS = 32  # sub-intervals examined for one comparison on one region (default)
DEEP_BISECTIONS = 1_024  # the same with --deep

Piece = tuple[float, float, "bool | None"]  # (lo, hi, answer): None = not decided on [lo, hi]


def bisect_comparison(holds: Callable[..., bool], values: Callable[[float], tuple[float, ...] | None],
                      trends: Sequence[int], directions: Sequence[int], lo: float, hi: float,
                      budget: int = BISECTIONS) -> list[Piece]:
    """Pieces covering [lo, hi] in order, each with the answer of the comparison for every float of it, or None.

    ``holds(*term_values)`` is the comparison on the terms' values; ``values(x)`` the terms' float values at the
    parameter value ``x`` (None where one cannot be evaluated); ``trends[i]`` is +1/-1/0 as term i never decreases /
    never increases / is constant in ``x`` on [lo, hi]; ``directions[i]`` is +1/-1 as ``holds`` becomes truer /
    falser as term i's value grows. ``budget`` bounds the sub-intervals examined (an int in [1, inf)).
    """
    from vetdp.engine.symbolic import float_from_key, float_key

    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
        raise ValueError(f"budget={budget!r} must be an int in [1, inf)")
    if len(trends) != len(directions):
        raise ValueError(f"trends={trends!r} and directions={directions!r} must have one entry per term")
    memo: dict[int, tuple[float, ...] | None] = {}

    def at(k: int) -> tuple[float, ...] | None:
        if k not in memo:
            memo[k] = values(float_from_key(k))
        return memo[k]

    def enclosed(a: int, b: int) -> bool | None:
        """The answer on every float between a and b, from the terms' values there (None: not decided)."""
        va, vb = at(a), at(b)
        if va is None or vb is None:
            return None
        truest, falsest = [], []
        for x, y, trend, direction in zip(va, vb, trends, directions, strict=True):
            low, high = (x, y) if trend >= 0 else (y, x)
            truest.append(high if direction > 0 else low)
            falsest.append(low if direction > 0 else high)
        best, worst = holds(*truest), holds(*falsest)
        return best if best == worst else None

    a0, b0 = float_key(lo), float_key(hi)
    # (−width, a, b, ea, eb): [a, b] enclosed from the values at ea <= a and b <= eb (the halves of [a, b] share
    # its middle as an end, one evaluation per halving; a wider enclosure, still sound for monotone terms)
    heap = [(a0 - b0, a0, b0, a0, b0)]  # widest first: the budget refines the whole interval evenly
    pieces: list[tuple[int, int, bool | None]] = []
    spent = 0
    while heap and spent < budget:
        _, a, b, ea, eb = heapq.heappop(heap)
        spent += 1
        answer = enclosed(ea, eb) if a != b else enclosed(a, b)  # a single float: its own values decide
        if answer is not None or a == b:
            pieces.append((a, b, answer))  # a single float left undecided: a term cannot be evaluated there
            continue
        mid = (a + b) // 2
        heapq.heappush(heap, (a - mid, a, mid, a, mid))
        heapq.heappush(heap, (mid + 1 - b, mid + 1, b, mid, b))
    pieces.extend((a, b, None) for _, a, b, _, _ in heap)
    return merge_pieces([(float_from_key(a), float_from_key(b), answer) for a, b, answer in sorted(pieces)])


def merge_pieces(pieces: Sequence[Piece]) -> list[Piece]:
    """Adjacent pieces (in float order, each starting at the float after the previous one's end) with the same
    answer joined into one."""
    from vetdp.engine.symbolic import float_key

    out: list[Piece] = []
    for lo, hi, answer in pieces:
        if out and out[-1][2] == answer and float_key(out[-1][1]) + 1 == float_key(lo):
            out[-1] = (out[-1][0], hi, answer)
        else:
            out.append((lo, hi, answer))
    return out


# decided pieces of comparisons, by (comparison key, parameter, the other parameters' values): the regions a
# bisection splits into are run again, and each must find its answer without bisecting anew
_DECIDED: dict[Any, list[Piece]] = {}
_DECIDED_KEPT = 4096


def remember(key: Any, pieces: Sequence[Piece]) -> None:
    """Keep the decided pieces of a comparison (facts about float terms, true in every later run)."""
    if len(_DECIDED) >= _DECIDED_KEPT:
        _DECIDED.clear()
    _DECIDED.setdefault(key, []).extend(p for p in pieces if p[2] is not None)


def decided_on(key: Any, lo: float, hi: float) -> bool | None:
    """The comparison's answer on [lo, hi] when a remembered decided piece contains it, else None."""
    from vetdp.engine.symbolic import float_key

    a, b = float_key(lo), float_key(hi)
    for plo, phi, answer in _DECIDED.get(key, ()):
        if float_key(plo) <= a and b <= float_key(phi):
            return answer
    return None
