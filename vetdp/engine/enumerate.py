"""Exact output distributions of real code, by enumerating every random choice.

The function runs under a :class:`~vetdp.sampling.sources.BranchingSource` again and
again; each run replays a prefix of choices and then branches afresh.

:func:`enumerate_law` works in two passes:

1. an exhaustive pass: an odometer over the choice trail (option 0 at every fresh point,
   the next prefix advances the last position with an untried option). Every path is
   visited once, so summing path probabilities per output gives the exact distribution.
   It ends when the tree is done, or when the budget or the depth of one run
   (``max_choices``) runs out, or when 16 runs have each gone deeper than every run before,
   down to 16 choices (the shape of an unbounded loop, which the odometer would walk down a
   step at a time, at a cost quadratic in the depth).
2. if that did not finish, a best-first pass over the same tree: runs start from pending
   choices in non-increasing order of probability, and a run stops as soon as a pending
   choice elsewhere is more probable. At each fresh choice point the program state is
   fingerprinted (:mod:`vetdp.engine.fingerprint`); equal fingerprints mean equal futures
   (a renewal, e.g. a rejection loop coming round again, or two paths that forget how they
   differed), so the explored part is a Markov chain whose absorption law is solved exactly
   over Fractions. What was not explored is the residual: every output's probability lies
   in ``[dist[y], dist[y] + residual]``.

Budgets are work, never time: ``budget`` runs of the function per pass, ``max_depth`` random choices per run
and ``max_steps`` choices in all (replays included), so the same code gives the same :class:`Law` on any
machine. A run that never returns *without drawing* cannot be bounded by work: the caller bounds it by wall-clock
time (:func:`vetdp.engine.timeout.deadline`, whose exception passes through the enumeration unchanged and ends it).

A function whose paths do not add up (the same choices replayed give other paths: state kept between calls,
e.g. a memo of answers) raises :class:`ReplayMismatch`, a finding about the code, not an engine failure.
"""

from __future__ import annotations

import dataclasses
import heapq
import itertools
import math
import sys
from collections import defaultdict
from collections.abc import Callable, Hashable, Mapping, Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from vetdp.engine.budgets import BEST_FIRST_MAX_CHOICES, DEFAULT_BUDGET, DEFAULT_MAX_CHOICES, DEFAULT_MAX_STEPS
from vetdp.engine.fingerprint import fingerprint
from vetdp.fence import exit_text
from vetdp.sampling.lazy import LazyInt
from vetdp.sampling.sources import BranchingSource, PathLimitExceeded, ReplayDiverged, use_source

__all__ = [
    "Raised",
    "Law",
    "EnumerationBudgetExceeded",
    "ReplayMismatch",
    "DEFAULT_BUDGET",
    "DEFAULT_MAX_CHOICES",
    "BEST_FIRST_MAX_CHOICES",
    "STOP_REASONS",
    "enumerate_law",
    "enumerate_paths",
    "output_distribution",
    "freeze",
    "independent_law",
]

# runs that went deeper than any before, reaching this depth: a rejection loop over t options sets a record every
# t runs, so the odometer hands it to the best-first pass after about 16·t runs (t = 1000: 15,000 paths, where
# 32 records down to depth 64 took 63,000, a third of the path budget)
_SPINE_RECORDS, _SPINE_DEPTH = 16, 16
STOP_REASONS = ("complete", "budget", "residual", "diverges")


class EnumerationBudgetExceeded(RuntimeError):
    """An enumeration would visit more paths than its budget allows."""


class ReplayMismatch(RuntimeError):
    """Replaying the same choices gave other paths: the probabilities of the paths of ``fn(x)`` do not sum to 1.

    The function's output is not a function of its input and the primitives' choices: it keeps state between
    calls (a memo, a call counter) or draws randomness where vetdp cannot see it. ``total`` is the sum found."""

    def __init__(self, total: Fraction | None, paths: int, why: str = ""):
        super().__init__(why or f"replaying the same choices gave other paths: the probabilities of {paths} paths "
                         f"sum to {total}, not 1")
        self.total, self.paths, self.why = total, paths, why


class _Cut(BaseException):
    """Ends a run of the best-first pass (the rest of the path is known or pending)."""


@dataclasses.dataclass(frozen=True)
class Raised:
    """The outcome "the function raised": exception type name and message."""

    type: str
    message: str

    def __str__(self) -> str:
        return f"raised {self.type}: {self.message}"


@dataclasses.dataclass(frozen=True)
class Law:
    """What an enumeration established about the law of ``fn(x)``.

    ``dist[y]`` is the explored mass of output ``y``, a lower bound on P[fn(x) = y];
    ``residual == 1 - sum(dist.values())`` exactly, so P[fn(x) = y] lies in
    ``[dist[y], dist[y] + residual]`` and outputs missing from ``dist`` have probability at most
    ``residual``. ``complete`` (residual 0) means ``dist`` is the exact law.
    ``stop_reason``: "complete"; "budget" (more than ``budget`` runs needed, or a run made more than
    ``max_choices`` choices); "residual" (residual <= residual_target); "diverges" (everything reachable was
    explored, and the residual is the probability that the function never returns).
    ``paths`` counts the runs of the function, ``depth`` the most choices one run made, ``choices`` the choices
    made over all runs (replayed prefixes included), ``states`` the distinct
    program states found at choice points by the best-first pass, ``renewals`` how often a run reached a known
    state. All of them are counts of work: the same code gives the same Law on any machine.
    """

    dist: dict[Any, Fraction]
    residual: Fraction
    paths: int
    complete: bool
    stop_reason: str
    states: int = 0
    renewals: int = 0
    depth: int = 0
    choices: int = 0

    def bounds(self, y: Any) -> tuple[Fraction, Fraction]:
        """[lo, hi] enclosing P[fn(x) = y]."""
        lo = self.dist.get(y, Fraction(0))
        return lo, min(Fraction(1), lo + self.residual)


_PLAIN = frozenset({bool, int, float, str, bytes, type(None), Fraction})  # returned as they are


def independent_law(laws: Sequence[Mapping[Any, Any]]) -> dict[tuple, Any]:
    """The law of the tuple of independent outputs with the given ``laws``: (y_1, …, y_n) -> Π P_i(y_i), exactly."""
    out: dict[tuple, Any] = {(): Fraction(1)}
    for law in laws:
        out = {y + (z,): p * q for y, p in out.items() for z, q in law.items()}
    return out


def freeze(value: Any) -> Any:
    """A hashable, comparable form of an output (lists and arrays become tuples); TypeError naming the value when
    it has none (an object without a hash)."""
    t = type(value)
    if t in _PLAIN:
        return value
    if t is tuple and all(type(v) in _PLAIN for v in value):  # the common report: a tuple of plain values
        return value
    if isinstance(value, np.ndarray):
        if value.ndim == 0:  # a 0-d array holds one scalar: .tolist() returns it, not a list
            return freeze(value.item())
        return tuple(freeze(v) for v in value.tolist())
    if isinstance(value, np.generic):
        return value.item()
    if t is LazyInt:  # a lazily drawn integer in the output: fixed here, still under the run's source
        return freeze(value._fixed())
    if isinstance(value, (list, tuple)):
        return tuple(freeze(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((freeze(k), freeze(v)) for k, v in value.items()))
    if isinstance(value, set):
        return frozenset(freeze(v) for v in value)
    try:
        hash(value)
    except TypeError:  # raised inside the run, so the enumeration records it as the code's outcome (Raised)
        # the type only, not the value: the same outcome for every input (errors.data_independent compares them)
        raise TypeError(f"the output is a {type(value).__name__}, which is not hashable: vetdp compares outputs by "
                        "value (return a tuple, list, NumPy array or another hashable value)") from None
    return value


def _next_prefix(trail: list[tuple[int, int]]) -> list[int] | None:
    for pos in range(len(trail) - 1, -1, -1):
        index, options = trail[pos]
        if index + 1 < options:
            return [i for i, _ in trail[:pos]] + [index + 1]
    return None


def enumerate_paths(run: Callable[[], Any], budget: int = DEFAULT_BUDGET, branch_bytes: bool = False,
                    catch: bool = True, max_choices: int = BEST_FIRST_MAX_CHOICES):
    """Yield ``(output, probability)`` for every path of ``run`` (a callable without arguments).

    Raises :class:`EnumerationBudgetExceeded` once more than ``budget`` paths are needed, or
    when one path makes more than ``max_choices`` random choices (an unbounded loop: use
    :func:`enumerate_law`). With ``catch``, an exception on a path becomes the output :class:`Raised`.
    """
    if budget < 1:
        raise ValueError(f"budget={budget!r} must be in [1, inf)")
    prefix: list[int] | None = []
    paths = 0
    while prefix is not None:
        paths += 1
        if paths > budget:
            raise EnumerationBudgetExceeded(
                f"enumeration needs more than budget={budget} paths; pass a larger budget "
                "(--max-paths N) or smaller parameters")
        source = BranchingSource(prefix, max_choices=max_choices, branch_bytes=branch_bytes)
        with use_source(source):
            try:
                out = freeze(run())
            except Exception as e:  # noqa: BLE001 - an exception is an outcome here
                if not catch and source.halted is None:
                    raise
                out = Raised(type(e).__name__, str(e))
        if isinstance(source.halted, ReplayDiverged):
            raise ReplayMismatch(None, paths, f"replaying the same choices gave other draws: {source.halted}")
        if isinstance(source.halted, PathLimitExceeded):
            raise EnumerationBudgetExceeded(
                f"a single path makes more than max_choices={max_choices} random choices (an unbounded "
                "loop?); enumerate_law handles such functions")
        yield out, source.probability
        prefix = _next_prefix(source.trail)


def _call_root(fn: Callable[[Any], Any], x: Any) -> Any:
    return fn(x)


_ROOT_CODE = _call_root.__code__
_OK, _CUT, _LIMIT = "ok", "cut", "limit"


def _run(fn: Callable[[Any], Any], x: Any, source: BranchingSource) -> tuple[str, Any]:
    """One run: (status, output). Only status "ok" carries an output (possibly :class:`Raised`). A
    BaseException other than SystemExit (a wall-clock limit, KeyboardInterrupt) ends the enumeration."""
    out: Any = None
    with use_source(source):
        try:
            out = freeze(_call_root(fn, x))
        except _Cut:
            pass
        except Exception as e:  # noqa: BLE001 - an exception is an outcome here
            out = Raised(type(e).__name__, str(e))
        except SystemExit as e:  # the code under test ending the process is an outcome too, not vetdp's exit
            out = Raised("SystemExit", exit_text(e))
    halted = source.halted
    if halted is None:
        return _OK, out
    if isinstance(halted, PathLimitExceeded):
        return _LIMIT, None
    if isinstance(halted, ReplayDiverged):
        raise ReplayMismatch(None, 0, f"replaying the same choices gave other draws (enumerating M(x)): {halted}")
    if not isinstance(halted, _Cut):  # raised at a choice point and swallowed by the code: raise it again here
        raise halted
    return _CUT, None


class _Work:
    """The work an enumeration has done, in counts: runs of the function, random choices made over all runs
    (replayed prefixes included: the cost of a deep tree), and the most choices one run made."""

    __slots__ = ("runs", "choices", "depth", "max_steps")

    def __init__(self, max_steps: int):
        self.runs = self.choices = self.depth = 0
        self.max_steps = max_steps

    def add(self, source: BranchingSource) -> None:
        n = len(source.trail)
        self.runs += 1
        self.choices += n
        self.depth = max(self.depth, n)

    @property
    def spent(self) -> bool:
        return self.choices >= self.max_steps


def _exhaustive(fn: Callable[[Any], Any], x: Any, budget: int, max_choices: int, branch_bytes: bool, work: _Work,
                give_up_on_estimate: bool = False) -> tuple[dict[Any, Fraction], int, str]:
    """The odometer pass: (explored masses, runs, "complete" | "budget" | "depth"); ``work`` counts what it did.

    With ``give_up_on_estimate`` (a best-first pass follows), the pass stops after its first run
    when that run's branching factors multiply to more than ``budget``: Knuth's estimate of the
    tree's size says the odometer would most likely spend its whole budget and fail. Stopping
    early only moves the work to the best-first pass, which is exact on its own.
    """
    dist: dict[Any, Fraction] = defaultdict(Fraction)
    prefix: list[int] | None = []
    runs = 0
    deepest, records = 0, 0  # the most choices one run made so far; how many runs set that record
    while prefix is not None:
        if runs >= budget or work.spent:
            return dist, runs, "budget"
        runs += 1
        source = BranchingSource(prefix, max_choices=max_choices, branch_bytes=branch_bytes)
        status, out = _run(fn, x, source)
        work.add(source)
        if status == _LIMIT:
            return dist, runs, "depth"
        dist[out] += source.probability
        if give_up_on_estimate and runs == 1 and math.prod(options for _, options in source.trail) > budget:
            return dist, runs, "budget"
        # an odometer on an unbounded spine (a rejection loop whose first option retries) goes one
        # step deeper per run at quadratic cost: hand such trees to the best-first pass early
        if len(source.trail) > deepest:
            deepest, records = len(source.trail), records + 1
            if records >= _SPINE_RECORDS and deepest >= _SPINE_DEPTH:
                return dist, runs, "depth"
        prefix = _next_prefix(source.trail)
        # every untried option on this trail leads to at least one more path
        if prefix is not None and runs + sum(options - index - 1 for index, options in source.trail) > budget:
            return dist, runs, "budget"
    return dist, runs, "complete"


# ------------------------------------------------------------------ the best-first pass

_ROOT = ("ROOT",)


@dataclasses.dataclass
class _State:
    prefix: tuple[int, ...]  # the choices of one path reaching this state
    prob: Fraction  # that path's probability
    out: dict[Any, Fraction] = dataclasses.field(default_factory=dict)  # reach output without a state
    trans: dict[Hashable, Fraction] = dataclasses.field(default_factory=dict)  # reach the next state


class _Uniform:
    __slots__ = ("n", "p")

    def __init__(self, n: int):
        self.n, self.p = n, Fraction(1, n)

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, k: int) -> tuple[int, Fraction]:
        return k, self.p


@dataclasses.dataclass
class _Pending:
    """Untried options at one choice point: a path ``rel`` after ``state``, of probability ``q`` given it."""

    state: Hashable
    rel: tuple[int, ...]
    q: Fraction
    base: Fraction  # absolute probability of reaching the choice point (heap key = base * p)
    options: Any  # sequence of (index, p), most probable first
    pos: int = 0


class _BestFirst:
    """The best-first explorer (the ``explorer`` of every run's BranchingSource)."""

    def __init__(self, fn: Callable[[Any], Any], x: Any, branch_bytes: bool, renewal: bool, max_choices: int,
                 work: _Work, trace: Callable[[tuple[int, ...], Fraction], None] | None):
        self.fn, self.x, self.branch_bytes, self.renewal, self.max_choices, self.trace = fn, x, branch_bytes, \
            renewal, max_choices, trace
        self.work = work
        self.states: dict[Hashable, _State] = {_ROOT: _State((), Fraction(1))}
        self.heap: list[tuple[Fraction, int, _Pending]] = []
        self.seq = itertools.count()
        self.renewals = 0
        self.order_cache: dict[int, tuple[Any, list]] = {}  # large constant outcome lists, sorted once
        self.outcome_lists: dict[int, tuple[list, int]] = {}  # large outcome lists of branch(), by identity
        self.outcome_tokens: dict[tuple, int] = {}  # ... and the number of each distinct content
        self.lost = False  # some mass was dropped (a run too deep): never "complete"
        self.entry_codes = {f.__code__ for f in (BranchingSource._choose, BranchingSource.branch,
                                                 BranchingSource.branch_uniform, BranchingSource.random_bytes)}

    def _choice_key(self, extra: Any) -> Any:
        """The choice's arguments as the fingerprint sees them: a large outcome list of ``branch`` (engine data,
        built by the branching source and never handed to user code, so never changed) becomes a number per
        distinct content, instead of being snapshot value by value at every choice point."""
        if not (type(extra) is tuple and len(extra) == 2 and extra[0] == "branch" and type(extra[1]) is list
                and len(extra[1]) > 16):
            return extra
        live = extra[1]
        known = self.outcome_lists.get(id(live))
        if known is None or known[0] is not live:
            try:
                token = self.outcome_tokens.setdefault(tuple(live), len(self.outcome_tokens))
            except TypeError:  # an unhashable outcome value: snapshot it as it is
                return extra
            if len(self.outcome_lists) > 256:
                self.outcome_lists.clear()
            known = self.outcome_lists[id(live)] = (live, token)  # the entry keeps `live` alive: its id stays its own
        return ("branch-outcomes", known[1])

    def _push(self, pending: _Pending) -> None:
        p = pending.options[pending.pos][1]
        heapq.heappush(self.heap, (-(pending.base * p), next(self.seq), pending))

    def fresh(self, source: BranchingSource, options: int, probs: Any, extra: Any) -> int:
        if self.renewal:
            top = sys._getframe(2)  # the caller of fresh(): BranchingSource._choose
            entry = None
            while top is not None and top.f_code in self.entry_codes:
                entry, top = top.f_code, top.f_back
            fp = fingerprint(_ROOT_CODE, top, entry, source, self._choice_key(extra)) if top is not None else None
            if fp is not None:
                current = self.states[self.cur]
                current.trans[fp] = current.trans.get(fp, Fraction(0)) + self.q
                if fp in self.states:
                    self.renewals += 1
                    raise _Cut
                self.states[fp] = _State(tuple(i for i, _ in source.trail), source.probability)
                self.cur, self.q, self.rel = fp, Fraction(1), ()
        if probs is None:
            ordered: Any = _Uniform(options)
        else:
            cached = self.order_cache.get(id(probs))
            if cached is not None and cached[0] is probs:
                ordered = cached[1]
            else:
                ranks = sorted(range(options), key=lambda i: probs[i][1], reverse=True)  # stable: ties keep order
                ordered = [(i, probs[i][1]) for i in ranks]
                if options > 16:
                    self.order_cache[id(probs)] = (probs, ordered)
        base = self.states[self.cur].prob * self.q
        pending = _Pending(self.cur, self.rel, self.q, base, ordered)
        index, p = ordered[0]
        if self.heap and base * p < -self.heap[0][0]:
            self._push(pending)  # something else is more probable: stop here, resume later
            raise _Cut
        pending.pos = 1
        if options > 1:
            self._push(pending)
        self.rel += (index,)
        self.q *= p
        return index

    def _start(self, state: Hashable, rel: tuple[int, ...], q: Fraction) -> str:
        self.cur, self.rel, self.q = state, rel, q
        source = BranchingSource(self.states[state].prefix + rel, max_choices=self.max_choices,
                                 branch_bytes=self.branch_bytes, explorer=self)
        status, out = _run(self.fn, self.x, source)
        self.work.add(source)
        if status == _OK:
            here = self.states[self.cur].out
            here[out] = here.get(out, Fraction(0)) + self.q
        elif status == _LIMIT:
            self.lost = True
        return status

    def explore(self, budget: int, residual_target: Fraction) -> tuple[int, str]:
        """Runs until done; (runs, stop reason)."""
        runs = 0
        checkpoint = 64
        pending: tuple[Hashable, tuple[int, ...], Fraction] | None = (_ROOT, (), Fraction(1))
        while pending is not None or self.heap:
            if runs >= budget or self.work.spent:
                return runs, "budget"
            if residual_target > 0 and runs >= checkpoint:
                checkpoint *= 2
                if 1 - sum(self.solve().values(), Fraction(0)) <= residual_target:
                    return runs, "residual"
            if pending is None:
                key, _, entry = heapq.heappop(self.heap)
                index, p = entry.options[entry.pos]
                entry.pos += 1
                if entry.pos < len(entry.options):
                    self._push(entry)
                pending = (entry.state, entry.rel + (index,), entry.q * p)
                if self.trace is not None:
                    self.trace(self.states[entry.state].prefix + pending[1], -key)
            elif self.trace is not None:
                self.trace((), Fraction(1))
            runs += 1
            self._start(*pending)
            pending = None
        return runs, "complete"

    def solve(self) -> dict[Any, Fraction]:
        """Explored mass per output: the absorption law of the explored chain, exactly."""
        out = {k: dict(s.out) for k, s in self.states.items()}
        trans = {k: dict(s.trans) for k, s in self.states.items()}
        preds: dict[Hashable, set] = defaultdict(set)
        for a, targets in trans.items():
            for b in targets:
                preds[b].add(a)
        for s in reversed([k for k in self.states if k is not _ROOT]):
            targets, outs = trans.pop(s), out.pop(s)
            loop = targets.pop(s, Fraction(0))
            preds[s].discard(s)
            factor = None if loop == 1 else 1 / (1 - loop)  # None: from s the run never returns
            for t in targets:
                preds[t].discard(s)
            for a in preds.pop(s, ()):
                w = trans[a].pop(s)
                if factor is None:
                    continue
                w *= factor
                oa, ta = out[a], trans[a]
                for y, m in outs.items():
                    oa[y] = oa.get(y, Fraction(0)) + w * m
                for t, m in targets.items():
                    ta[t] = ta.get(t, Fraction(0)) + w * m
                    preds[t].add(a)
        return {y: m for y, m in out[_ROOT].items() if m}


# ------------------------------------------------------------------ entry points

def enumerate_law(fn: Callable[[Any], Any], x: Any, *, budget: int = DEFAULT_BUDGET,
                  residual_target: Fraction = Fraction(0), branch_bytes: bool = False, renewal: bool = True,
                  max_choices: int = DEFAULT_MAX_CHOICES, max_depth: int = BEST_FIRST_MAX_CHOICES,
                  max_steps: int = DEFAULT_MAX_STEPS,
                  trace: Callable[[tuple[int, ...], Fraction], None] | None = None) -> Law:
    """The law of ``fn(x)`` as far as it can be established: exact, or bounds with a stated residual.

    Finite trees of at most ``budget`` paths, each of at most ``max_choices`` choices, give the
    exact distribution (residual 0) by the exhaustive pass. Otherwise the best-first pass runs
    (with its own ``budget`` runs; ``paths`` counts both passes, and with ``residual_target > 0``
    the exhaustive pass is limited to ``budget // 10`` runs), each run making at most ``max_depth``
    choices (a deeper run's mass stays in the residual); no run starts once ``max_steps`` choices were made in all
    (replayed prefixes included: the work of a deep tree, quadratic in its depth). With ``renewal``, equal program
    states at choice points are merged (see :mod:`vetdp.engine.fingerprint` for the assumption
    this rests on), which makes rejection loops exact. ``trace(prefix, probability)`` is called at
    the start of every best-first run (their probabilities never increase).

    The result depends on the code and these budgets only, never on time. Raises ValueError for a
    budget, max_choices, max_depth or max_steps < 1 or a residual_target outside [0, 1]; :class:`ReplayMismatch`
    when the paths' probabilities do not sum to 1 (state kept between calls).
    """
    for name, value in (("budget", budget), ("max_choices", max_choices), ("max_depth", max_depth),
                        ("max_steps", max_steps)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name}={value!r} must be an int in [1, inf)")
    residual_target = Fraction(residual_target)
    if not 0 <= residual_target <= 1:
        raise ValueError(f"residual_target={residual_target} must be in [0, 1]")
    first_budget = budget if residual_target == 0 else max(1, budget // 10)
    return _enumerate(fn, x, budget, first_budget, residual_target, branch_bytes, renewal,
                      min(max_choices, max_depth), max_depth, max_steps, trace, best_first_after_budget=True)


def _enumerate(fn: Callable[[Any], Any], x: Any, budget: int, first_budget: int, residual_target: Fraction,
               branch_bytes: bool, renewal: bool, max_choices: int, max_depth: int, max_steps: int,
               trace: Callable[[tuple[int, ...], Fraction], None] | None, best_first_after_budget: bool) -> Law:
    work = _Work(max_steps)
    dist, runs, reason = _exhaustive(fn, x, first_budget, max_choices, branch_bytes, work,
                                     give_up_on_estimate=best_first_after_budget)
    if reason == "complete" or (reason == "budget" and not best_first_after_budget):
        dist = {y: m for y, m in dist.items() if m}
        total = sum(dist.values(), Fraction(0))
        if reason == "complete" and total != 1:  # every path was visited once: only other paths on replay explain it
            raise ReplayMismatch(total, runs)
        return Law(dist, 1 - total, runs, reason == "complete", reason, depth=work.depth, choices=work.choices)
    explorer = _BestFirst(fn, x, branch_bytes, renewal, max_depth, work, trace)
    more, reason = explorer.explore(budget, residual_target)
    dist = explorer.solve()
    total = sum(dist.values(), Fraction(0))
    if total > 1:
        raise ReplayMismatch(total, runs + more)
    residual = 1 - total
    if reason == "complete" and residual != 0:
        reason = "budget" if explorer.lost else "diverges"
    return Law(dist, residual, runs + more, residual == 0, "complete" if residual == 0 else reason,
               len(explorer.states) - 1, explorer.renewals, work.depth, work.choices)


def output_distribution(fn: Callable[[Any], Any], x: Any, budget: int = DEFAULT_BUDGET,
                        branch_bytes: bool = False, max_steps: int = DEFAULT_MAX_STEPS) -> dict[Any, Fraction]:
    """The exact distribution of ``fn(x)``: output -> probability (a Fraction), summing to 1.

    ``fn`` is typically a Measurement (so the domain check runs first) or its function.
    Exceptions are outcomes (:class:`Raised`). Unbounded loops are enumerated exactly when
    they are renewals (see :func:`enumerate_law`). Raises :class:`EnumerationBudgetExceeded`
    when the exact law needs more than ``budget`` runs (a tree with more than ``budget`` paths
    is not tried best-first: only merging could complete it, and callers want the exact law).
    """
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
        raise ValueError(f"budget={budget!r} must be an int in [1, inf)")
    law = _enumerate(fn, x, budget, budget, Fraction(0), branch_bytes, True, DEFAULT_MAX_CHOICES,
                     BEST_FIRST_MAX_CHOICES, max_steps, None, best_first_after_budget=False)
    if not law.complete:
        raise EnumerationBudgetExceeded(
            f"enumeration needs more than budget={budget} paths (stopped: {law.stop_reason}, unexplored mass "
            f"{float(law.residual):.3g}); pass a larger budget (--max-paths N) or smaller parameters")
    return law.dist
