"""``state.independent_calls``: a measurement's calls do not depend on the calls made before.

Exact enumeration runs the code again and again and reads its law off the paths; that is valid only when each
call is a function of its input and the primitives' choices alone. Code that keeps state across calls (a call
counter that changes behaviour on the 50th call, an answer memoised per input, a running counter mixed into the
output) breaks it, and is caught by enumeration only by accident (paths that do not add up). This clause decides it
on purpose, with its work stated in calls:

1. **Fresh first calls.** For every input, the first paths of a fresh measurement's first call (a new measurement
   built per path, shallowest choice prefixes first, :data:`REFERENCE_PATHS` shared out over the inputs, at least 2
   and at most ``paths`` per input, of at most :data:`REFERENCE_CHOICES` choices each): output, choices and exact
   probability of each.
2. **One measurement, many calls.** One measurement is called ``calls`` times, cycling through every (input, path)
   pair (in order, then in seeded shuffled orders), each call driven by that path's choices. Every call must
   return what the fresh first call returned with the same choices: the same output, the same choices offered and
   taken, the same probability. So each of these calls has the first call's law, and calls are independent.
3. **Two calls, every pair of paths.** For the first :data:`PAIR_INPUTS` inputs whose first-call law was enumerated
   completely in at most sqrt(:data:`PAIR_PATHS`) paths, two calls of a fresh measurement are enumerated together
   over every pair of paths: their joint law must be the product of the first call's law with itself (a memo that
   answers the second call from the first fails here exactly).

Not seen: state that changes only after more calls than were made, and state kept outside the measurement
(module globals) that earlier runs of the process had already changed before the first fresh call; for those the
enumeration still reports paths that do not add up (:class:`vetdp.engine.enumerate.ReplayMismatch`).
"""

from __future__ import annotations

import functools
import heapq
import math
import random
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from vetdp.engine.budgets import STATE_CALLS
from vetdp.engine.enumerate import Raised, freeze
from vetdp.sampling.sources import BranchingSource, PathLimitExceeded, SeededSource, use_source

__all__ = ["Path", "first_call_paths", "independent_calls", "REFERENCE_CHOICES", "REFERENCE_PATHS", "PAIR_PATHS",
           "PAIR_INPUTS"]

REFERENCE_CHOICES = 64  # random choices one reference path may make (deeper paths are not used as references)
REFERENCE_PATHS = 32  # fresh first-call paths over all inputs (at least 2 per input, at most ``paths``)
PAIR_PATHS = 64  # paths of two calls enumerated together, per input (more: that input's pair is not checked)
PAIR_INPUTS = 4  # inputs whose two calls are enumerated together (the first ones with a complete first-call law)


class Path:
    """One run: the choices taken (``indices``), the options offered at each (``options``), the exact
    probability, and the frozen output (or :class:`Raised`)."""

    __slots__ = ("indices", "options", "probability", "output", "halted")

    def __init__(self, source: BranchingSource, output: Any):
        self.indices = tuple(i for i, _ in source.trail)
        self.options = tuple(n for _, n in source.trail)
        self.probability = source.probability
        self.output = output
        self.halted = False  # set when the run made too many choices (then output is not known)

    def same_as(self, other: Path) -> bool:
        return (self.output, self.indices, self.options, self.probability) == (
            other.output, other.indices, other.options, other.probability)


def _outcome(call: Callable[[], Any]) -> Any:
    """``call()`` frozen, or the :class:`Raised` outcome of its exception (``sys.exit`` included)."""
    try:
        return freeze(call())
    except Exception as e:  # noqa: BLE001 - a raise is the call's outcome
        return Raised(type(e).__name__, str(e))
    except SystemExit as e:
        return Raised("SystemExit", f"called sys.exit({e.code!r})")


def _run(call: Callable[[], Any], prefix: tuple[int, ...], max_choices: int) -> Path:
    """``call()`` under the choices ``prefix`` (option 0 after it). A run that made more than ``max_choices`` is
    returned with ``halted`` set: its choices are known (its siblings may end sooner), its output is not."""
    source = BranchingSource(prefix, max_choices=max_choices)
    with use_source(source):
        out = _outcome(call)
    if isinstance(source.halted, PathLimitExceeded):
        path = Path(source, None)
        path.halted = True
        return path
    if source.halted is not None:  # e.g. the time limit: it ends the check
        raise source.halted
    return Path(source, out)


def first_call_paths(make: Callable[[], Callable[[], Any]], limit: int, max_choices: int = REFERENCE_CHOICES
                     ) -> tuple[list[Path], bool]:
    """Up to ``limit`` distinct paths of ``make()()`` (``make`` runs before the branching source is installed,
    once per path), shallowest choice prefixes first, and whether they are all of its paths. A run making more
    than ``max_choices`` choices is no path, but its siblings are searched (a loop its first options never leave);
    at most ``limit`` such runs are made."""
    heap: list[tuple[int, tuple[int, ...]]] = [(0, ())]
    found: list[Path] = []
    complete = True
    halted = 0
    while heap:
        if len(found) >= limit or halted >= limit:
            return found, False
        _, prefix = heapq.heappop(heap)
        path = _run(make(), prefix, max_choices)
        if path.halted:
            complete = False
            halted += 1
        else:
            found.append(path)
        for pos in range(len(prefix), len(path.indices)):
            for k in range(path.options[pos]):
                if k != path.indices[pos]:
                    sibling = path.indices[:pos] + (k,)
                    heapq.heappush(heap, (len(sibling), sibling))
    return found, complete


def _law(paths: list[Path]) -> dict[Any, Fraction]:
    law: dict[Any, Fraction] = {}
    for p in paths:
        law[p.output] = law.get(p.output, Fraction(0)) + p.probability
    return law


def _show(y: Any, show: Callable[[Any], Any]) -> Any:
    return str(y) if isinstance(y, Raised) else show(y)


def independent_calls(build: Callable[[], Any], inputs: list, show: Callable[[Any], Any], calls: int = STATE_CALLS,
                      paths: int = 16) -> tuple[bool | None, str, dict | None]:
    """(ok, message, witness): whether ``calls`` calls of one measurement built by ``build()`` each behave as a
    fresh measurement's first call, path by path, and two calls are independent (module docstring). ``inputs``
    are the spec's in-domain inputs; ``show`` renders inputs and outputs for the report. Work: at most
    max(REFERENCE_PATHS, 2·len(inputs)) fresh measurements, ``calls`` calls on one, and PAIR_INPUTS·PAIR_PATHS
    two-call runs. ``ok`` is None (undecided) when no path of a fresh first call ends within
    :data:`REFERENCE_CHOICES` choices: nothing was compared."""
    def fresh() -> Any:  # every measurement built alike, even by a constructor that draws randomness
        with use_source(SeededSource(b"vetdp state.independent_calls")):
            return build()

    keyed: dict[Any, Any] = {}
    for x in inputs:
        keyed.setdefault(freeze(x), x)
    per_input = max(2, min(paths, REFERENCE_PATHS // max(1, len(keyed))))
    references: list[tuple[Any, Path]] = []
    complete: dict[Any, list[Path]] = {}
    for key, x in keyed.items():
        found, done = first_call_paths(lambda x=x: functools.partial(fresh(), x), per_input)
        references += [(x, p) for p in found]
        if done:
            complete[key] = found
    if not references:
        return None, (f"undecided: no path of a fresh first call ends within {REFERENCE_CHOICES} random choices, so "
                      f"no call could be compared with it"), None
    n = max(calls, len(references)) if calls else 0  # calls = 0: the two-call check alone
    m = fresh()
    order = list(range(len(references)))
    for j in range(n):
        if j and j % len(references) == 0:  # every pass after the first in a seeded shuffled order
            order = random.Random(j // len(references)).sample(range(len(references)), len(references))
        x, ref = references[order[j % len(references)]]
        got = _run(functools.partial(m, x), ref.indices, 2 * REFERENCE_CHOICES)
        if got.halted or not got.same_as(ref):
            return False, _mismatch(j + 1, x, ref, got, show), {
                "call": j + 1, "x": show(x), "choices": list(ref.indices[:16]),
                "output": (f"more than {2 * REFERENCE_CHOICES} random choices" if got.halted
                           else _show(got.output, show)),
                "fresh first call": _show(ref.output, show)}
    pairs = 0
    for key, law_paths in list(complete.items())[:PAIR_INPUTS]:
        if len(law_paths) ** 2 > PAIR_PATHS:
            continue
        x = keyed[key]
        joint, done = first_call_paths(lambda x=x: functools.partial(_twice, fresh(), x), PAIR_PATHS,
                                       2 * REFERENCE_CHOICES)
        if not done:
            continue
        pairs += 1
        single = _law(law_paths)
        product = {(a, b): pa * pb for a, pa in single.items() for b, pb in single.items()}
        law = _law(joint)
        if law != product:
            (a, b) = next(y for y in set(law) | set(product) if law.get(y, 0) != product.get(y, 0))
            got, want = law.get((a, b), Fraction(0)), product.get((a, b), Fraction(0))
            return False, (f"state kept across calls: two calls of one measurement on {show(x)!r} are not "
                           f"independent: P[first = {_show(a, show)!r}, second = {_show(b, show)!r}] = {got} "
                           f"({float(got):.6g}), the product of the first call's law gives {want} ({float(want):.6g})"
                           ), {"x": show(x), "first": _show(a, show), "second": _show(b, show),
                               "P[both]": str(got), "product": str(want)}
    return True, (f"{n} calls on one measurement, cycling through {len(keyed)} inputs and {len(references)} of "
                  f"their first calls' paths, each returned what a fresh measurement's first call returns with the "
                  f"same choices (output, choices and probability); the joint law of two calls is the product of "
                  f"their laws for {pairs} of {len(keyed)} inputs (every pair of paths, for inputs of at most "
                  f"{math.isqrt(PAIR_PATHS)} paths)"), None


def _twice(m: Any, x: Any) -> tuple:
    return (_outcome(functools.partial(m, x)), _outcome(functools.partial(m, x)))


def _mismatch(call: int, x: Any, ref: Path, got: Path, show: Callable[[Any], Any]) -> str:
    head = (f"state kept across calls: call {call} of one measurement, M({show(x)!r}) with the choices "
            f"{list(ref.indices[:16])}{' …' if len(ref.indices) > 16 else ''}, ")
    fresh = f"a fresh measurement's first call with the same choices returns {_show(ref.output, show)!r}"
    if got.halted:
        return head + f"made more than {2 * REFERENCE_CHOICES} random choices, where {fresh}"
    said = f"returned {_show(got.output, show)!r} where {fresh}"
    if got.indices != ref.indices or got.options != ref.options:
        said += f" (it made {len(got.indices)} random choices, the fresh call {len(ref.indices)})"
    elif got.probability != ref.probability:
        said += (f" (the same choices had probability {got.probability} against {ref.probability}: "
                 "another law)")
    return head + said + f", after {call - 1} earlier call{'' if call == 2 else 's'}"
