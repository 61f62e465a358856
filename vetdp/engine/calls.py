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

A spec that declares memoisation (:class:`vetdp.engine.spec.Memoisation`: a key per input, the joint law of calls
repeating a key) is checked as declared, each step with the same work:

2'. **Fresh keys after any history.** One measurement is called ``calls`` times on the (input, path) pairs in the same
   orders; a call on a key the measurement has already seen is history (driven by a seeded source, its output not
   compared: its law is declared), a call on a key not seen yet must return what the fresh first call returned with
   the same choices. When every key has been seen, a new measurement is built.
3'. **Repeated keys as declared, other keys and other measurements independent.** For the same inputs as step 3, two
   calls on x of one fresh measurement, enumerated together, must have the declared joint law ``repeats(x, 2)``;
   two calls on x and on the next input x' whose key differs must have the product of their first-call laws; and
   calls on x of two measurements built separately must have the product too (a memo shared by every measurement,
   e.g. keyed on the value only, without the client whose secret it is, fails here).

Not seen: state that changes only after more calls than were made, and state kept outside the measurement
(module globals) that earlier runs of the process had already changed before the first fresh call; for those the
enumeration still reports paths that do not add up (:class:`vetdp.engine.enumerate.ReplayMismatch`).
"""

from __future__ import annotations

import dataclasses
import functools
import heapq
import math
import random
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from vetdp.engine.budgets import STATE_CALLS
from vetdp.engine.enumerate import Raised, freeze, independent_law
from vetdp.sampling.sources import BranchingSource, PathLimitExceeded, ReplayDiverged, SeededSource, use_source

__all__ = ["Path", "Memo", "first_calls", "built_alike", "first_call_paths", "independent_calls",
           "REFERENCE_CHOICES", "REFERENCE_PATHS", "PAIR_PATHS", "PAIR_INPUTS", "MEMO_PATHS"]

REFERENCE_CHOICES = 64  # random choices one reference path may make (deeper paths are not used as references)
REFERENCE_PATHS = 32  # fresh first-call paths over all inputs (at least 2 per input, at most ``paths``)
PAIR_PATHS = 64  # paths of two calls enumerated together, per input (more: that input's pair is not checked)
PAIR_INPUTS = 4  # inputs whose two calls are enumerated together (the first ones with a complete first-call law)
MEMO_PATHS = 1024  # paths of two calls enumerated together under a declared memoisation, per check (more: not checked)


class Memo:
    """A spec's declared memoisation bound to its parameters: ``key(x)`` and ``repeats(x, n)`` (the joint law of n
    calls on x on one measurement, outputs frozen)."""

    __slots__ = ("key", "repeats")

    def __init__(self, key: Callable[[Any], Any], repeats: Callable[[Any, int], dict]):
        self.key, self.repeats = key, repeats


class Path:
    """One run: the choices taken (``indices``), the options offered at each (``options``), the exact
    probability, and the frozen output (or :class:`Raised`)."""

    __slots__ = ("indices", "options", "probability", "output", "halted", "diverged")

    def __init__(self, source: BranchingSource, output: Any):
        self.indices = tuple(i for i, _ in source.trail)
        self.options = tuple(n for _, n in source.trail)
        self.probability = source.probability
        self.output = output
        self.halted = False  # set when the run made too many choices (then output is not known)
        self.diverged = ""  # set when a replayed choice did not exist at its draw (ReplayDiverged; no output)

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
    if isinstance(source.halted, ReplayDiverged):  # not the code's error, whatever it raised or returned after it
        path = Path(source, None)
        path.diverged = str(source.halted)
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


def built_alike(build: Callable[[], Any]) -> Callable[[], Any]:
    """``build`` made to build every measurement alike, even a constructor that draws randomness: under one seeded
    source, whatever source the caller has installed."""
    def fresh() -> Any:
        with use_source(SeededSource(b"vetdp state.independent_calls")):
            return build()

    return fresh


def first_calls(build: Callable[[], Any], built: Any) -> Any:
    """A measurement each of whose calls is the first call of one built afresh by ``build`` (:func:`built_alike`);
    everything else (map, domain, parameters) is that of ``built``, one built once. What the clauses judging one
    call's law see when a spec declares memoisation: the law of a first call, with no memo to replay."""
    fresh = built_alike(build)
    if dataclasses.is_dataclass(built) and hasattr(built, "function"):  # the domain checked once, by ``built``
        def function(x: Any) -> Any:
            m = fresh()
            return m.function(x) if hasattr(m, "function") else m(x)

        return dataclasses.replace(built, function=function)
    return _FirstCalls(built, fresh)


class _FirstCalls:
    """:func:`first_calls` of a measurement that is not a dataclass with a ``function``."""

    def __init__(self, built: Any, fresh: Callable[[], Any]):
        self._built, self._fresh = built, fresh

    def __call__(self, x: Any) -> Any:
        return self._fresh()(x)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._built, name)


def independent_calls(build: Callable[[], Any], inputs: list, show: Callable[[Any], Any], calls: int = STATE_CALLS,
                      paths: int = 16, memo: Memo | None = None) -> tuple[bool | None, str, dict | None]:
    """(ok, message, witness): whether ``calls`` calls of one measurement built by ``build()`` each behave as a
    fresh measurement's first call, path by path, and two calls are independent (module docstring); under a
    declared ``memo``, whether calls on unseen keys do and repeated keys have the declared joint law (steps 2', 3').
    ``inputs`` are the spec's in-domain inputs; ``show`` renders inputs and outputs for the report. Work: at most
    max(REFERENCE_PATHS, 2·len(inputs)) fresh measurements, ``calls`` calls on one, and PAIR_INPUTS·PAIR_PATHS
    two-call runs (3·PAIR_INPUTS·MEMO_PATHS under ``memo``). ``ok`` is None (undecided) when no path of a fresh
    first call ends within :data:`REFERENCE_CHOICES` choices: nothing was compared."""
    fresh = built_alike(build)
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
    if memo is not None:
        return _as_declared(fresh, memo, keyed, references, complete, n, show)
    m = fresh()
    for j, i in _orders(len(references), n):
        x, ref = references[i]
        got = _run(functools.partial(m, x), ref.indices, 2 * REFERENCE_CHOICES)
        if got.halted or got.diverged or not got.same_as(ref):
            return False, _mismatch(j + 1, x, ref, got, show), {
                "call": j + 1, "x": show(x), "choices": list(ref.indices[:16]),
                "output": (f"more than {2 * REFERENCE_CHOICES} random choices" if got.halted
                           else f"no output: {got.diverged}" if got.diverged else _show(got.output, show)),
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


def _orders(count: int, n: int):
    """The reference indices of ``n`` calls: in order, then every further pass in a seeded shuffled order."""
    order = list(range(count))
    for j in range(n):
        if j and j % count == 0:
            order = random.Random(j // count).sample(range(count), count)
        yield j, order[j % count]


def _as_declared(fresh: Callable[[], Any], memo: Memo, keyed: dict, references: list[tuple[Any, Path]],
                 complete: dict[Any, list[Path]], n: int, show: Callable[[Any], Any]
                 ) -> tuple[bool, str, dict | None]:
    """Steps 2' and 3' of the module docstring."""
    keys = {freeze(memo.key(x)) for x in keyed.values()}
    m, seen, built, compared = fresh(), set(), 1, 0
    for j, i in _orders(len(references), n):
        x, ref = references[i]
        key = freeze(memo.key(x))
        if key in seen:  # history: a repeated key, its law declared
            with use_source(SeededSource(b"vetdp state.independent_calls history %d" % j)):
                _outcome(functools.partial(m, x))
            continue
        got = _run(functools.partial(m, x), ref.indices, 2 * REFERENCE_CHOICES)
        compared += 1
        if got.halted or not got.same_as(ref):
            return False, (_mismatch(j + 1, x, ref, got, show) + f", a key ({show(memo.key(x))!r}) this measurement "
                           "had not seen: the declared memoisation allows no dependence there"), {
                "call": j + 1, "x": show(x), "choices": list(ref.indices[:16]),
                "output": (f"more than {2 * REFERENCE_CHOICES} random choices" if got.halted
                           else _show(got.output, show)),
                "fresh first call": _show(ref.output, show)}
        seen.add(key)
        if seen >= keys:
            m, seen, built = fresh(), set(), built + 1
    checked = {"repeated": 0, "other key": 0, "other measurement": 0}
    laws: dict[Any, dict] = {}  # the first call's law of the first PAIR_INPUTS inputs (at most MEMO_PATHS paths)
    counts: dict[Any, int] = {}  # and its number of paths
    for key, x in keyed.items():
        if len(laws) == PAIR_INPUTS:
            break
        found, done = (complete[key], True) if key in complete else first_call_paths(
            lambda x=x: functools.partial(fresh(), x), MEMO_PATHS, 2 * REFERENCE_CHOICES)
        if done:
            laws[key], counts[key] = _law(found), len(found)
    for at, (key, single) in enumerate(laws.items()):  # repeated keys for every one; the others for the first
        x = keyed[key]
        repeated = _joint(lambda x=x: functools.partial(_twice, fresh(), x))
        if repeated is not None:
            checked["repeated"] += 1
            declared = {freeze(y): p for y, p in memo.repeats(x, 2).items() if p}
            if repeated != declared:
                return _joint_failure(repeated, declared, f"a call on {show(x)!r} of the same measurement",
                                      "the declared memoisation gives", x, x, show)
        if at:
            continue
        other = next((y for y in laws if freeze(memo.key(keyed[y])) != freeze(memo.key(x))), None)
        if other is not None and counts[key] * counts[other] <= MEMO_PATHS:
            x2 = keyed[other]
            joint = _joint(lambda x=x, x2=x2: functools.partial(_pair, fresh(), x, fresh, x2, True))
            if joint is not None:
                checked["other key"] += 1
                product = independent_law([single, laws[other]])
                if joint != product:
                    return _joint_failure(joint, product, f"a call on {show(x)!r} (another key) of the "
                                          "same measurement", "the product of their first calls' laws gives",
                                          x, x2, show, "product")
        joint = None if counts[key] ** 2 > MEMO_PATHS else _joint(
            lambda x=x: functools.partial(_pair, fresh(), x, fresh, x, False))
        if joint is not None:
            checked["other measurement"] += 1
            product = independent_law([single, single])
            if joint != product:
                return _joint_failure(joint, product, f"a call on {show(x)!r} of another measurement"
                                      " built separately", "the product of their first calls' laws gives", x, x, show,
                                      "product")
    return True, (f"as declared: {n} calls on {built} measurement{'s' if built > 1 else ''}, cycling through "
                  f"{len(keyed)} inputs ({len(keys)} keys) and {len(references)} of their first calls' paths, each of "
                  f"the {compared} calls on a key the measurement had not seen returned what a fresh measurement's "
                  f"first call returns with the same choices (output, choices and probability); two calls on one "
                  f"key have the declared joint law for {checked['repeated']} inputs, calls on two keys the product "
                  f"of their laws for {checked['other key']} pair, calls of two measurements for "
                  f"{checked['other measurement']} input (every pair of paths, at most {MEMO_PATHS})"), None


def _joint(make: Callable[[], Callable[[], Any]]) -> dict | None:
    """The exact joint law of ``make()()`` (two outcomes), or None when it has more than MEMO_PATHS paths."""
    paths, done = first_call_paths(make, MEMO_PATHS, 2 * REFERENCE_CHOICES)
    return _law(paths) if done else None


def _pair(m: Any, x: Any, fresh: Callable[[], Any], x2: Any, same: bool) -> tuple:
    """M(x) then, on the same measurement (``same``) or on another one built by ``fresh()``, M(x2)."""
    second = m if same else fresh()
    return (_outcome(functools.partial(m, x)), _outcome(functools.partial(second, x2)))


def _joint_failure(law: dict, want: dict, what: str, says: str, x: Any, x2: Any, show: Callable[[Any], Any],
                   name: str = "declared") -> tuple[bool, str, dict]:
    (a, b) = next(y for y in sorted(set(law) | set(want), key=repr) if law.get(y, 0) != want.get(y, 0))
    got, expected = law.get((a, b), Fraction(0)), want.get((a, b), Fraction(0))
    return False, (f"state kept across calls: call 2, M({show(x2)!r}), after {what}: P[first = {_show(a, show)!r}, "
                   f"second = {_show(b, show)!r}] = {got} ({float(got):.6g}), {says} {expected} "
                   f"({float(expected):.6g})"), {"call": 2, "x": show(x2), "first call": show(x),
                                                 "first": _show(a, show), "second": _show(b, show),
                                                 "P[both]": str(got), name: str(expected)}


def _twice(m: Any, x: Any) -> tuple:
    return (_outcome(functools.partial(m, x)), _outcome(functools.partial(m, x)))


def _mismatch(call: int, x: Any, ref: Path, got: Path, show: Callable[[Any], Any]) -> str:
    head = (f"state kept across calls: call {call} of one measurement, M({show(x)!r}) with the choices "
            f"{list(ref.indices[:16])}{' …' if len(ref.indices) > 16 else ''}, ")
    fresh = f"a fresh measurement's first call with the same choices returns {_show(ref.output, show)!r}"
    if got.halted:
        return head + f"made more than {2 * REFERENCE_CHOICES} random choices, where {fresh}"
    if got.diverged:
        return head + (f"drew from another distribution than the fresh call ({got.diverged}), after {call - 1} "
                       f"earlier call{'' if call == 2 else 's'}, where {fresh}")
    said = f"returned {_show(got.output, show)!r} where {fresh}"
    if got.indices != ref.indices or got.options != ref.options:
        said += f" (it made {len(got.indices)} random choices, the fresh call {len(ref.indices)})"
    elif got.probability != ref.probability:
        said += (f" (the same choices had probability {got.probability} against {ref.probability}: "
                 "another law)")
    return head + said + f", after {call - 1} earlier call{'' if call == 2 else 's'}"
