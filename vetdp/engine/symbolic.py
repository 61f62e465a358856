"""Float parameters as symbols: run real code once per region of parameter values, not once per value.

A :class:`SymFloat` stands for a float parameter (or a value the code computed from parameters) over the
*current region*, a box of float intervals, one per parameter. It carries its term (an
:class:`~vetdp.arith.expr.Expr` over the parameters: Python's own ``+ - * /`` become the round-to-nearest
operations, vetdp's directed-rounding operations keep their names) and its value at one point of the region.

Whenever the code branches on a symbolic value (a comparison, ``bool()``, ``int()``, ``round()``, a division
that could be by zero), the region is asked whether the answer is the same for every point of it. Terms that
are monotone in their one parameter are decided exactly: the answer is read at the two ends of the interval,
and where the ends disagree the float at which it changes is found by bisection over the float order
(:func:`float_cut`), and the region is split there (:class:`Split`). A comparison of two terms monotone in its one
parameter in directions that do not make it monotone (both growing) is decided by interval bisection
(:mod:`vetdp.engine.bisection`): the region is split into the sub-intervals where it is decided, and what the budget
leaves near a crossing is unexplored. Terms in several parameters are decided
where all corners of the box agree (monotone in each parameter), else the box is halved. A value that leaves
the symbolic world (``float()``, ``hash()``, a C function such as ``math.log``) *pins* its parameters to the
point: sound, but that region then covers a single value (:class:`Escape` records where).

:func:`explore_regions` runs a function under this regime until the space is partitioned into *leaves*: regions
on each of which the code took one path for every point, with the results it returned there (their symbolic
values are valid for the whole leaf). The work is counted in runs (``budget``), never in seconds.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import itertools
import math
import numbers
import operator
import struct
import sys
from collections.abc import Callable, Iterator, Mapping
from fractions import Fraction
from typing import Any

from vetdp.arith import rounding as R
from vetdp.arith.expr import Const, Expr, Op, Var

__all__ = [
    "SymFloat",
    "RunMemo",
    "Box",
    "Split",
    "Escape",
    "EscapeRefused",
    "Leaf",
    "Exploration",
    "RegionBudgetExceeded",
    "explore_regions",
    "MAX_JOINT_HALVINGS",
    "float_key",
    "float_from_key",
    "float_cut",
    "floats_between",
    "is_symbolic",
    "evaluate",
    "evaluate_shared",
    "monotonicity",
    "compare",
    "substitute",
    "current_exploration",
    "remembered",
]

MAX_FLOAT = sys.float_info.max


# ------------------------------------------------------------------ the float order

def remembered(cache: dict, key: Any, compute: Callable[[], Any], limit: int = 100_000) -> Any:
    """``cache[key]``, computed by ``compute()`` the first time; the cache is emptied when it holds ``limit`` keys
    (a memo of pure functions of their key, bounded in memory)."""
    if key not in cache:
        if len(cache) >= limit:
            cache.clear()
        cache[key] = compute()
    return cache[key]


def float_key(x: float) -> int:
    """An integer that orders finite floats as the reals do (-0.0 just below 0.0; consecutive floats differ by 1)."""
    bits = struct.unpack("<q", struct.pack("<d", x))[0]
    return bits if bits >= 0 else -(bits & 0x7FFF_FFFF_FFFF_FFFF) - 1


def float_from_key(k: int) -> float:
    """The float whose :func:`float_key` is ``k``."""
    bits = k if k >= 0 else (-(k + 1)) | -0x8000_0000_0000_0000
    return struct.unpack("<d", struct.pack("<q", bits))[0]


def floats_between(lo: float, hi: float) -> int:
    """How many floats lie in [lo, hi] (-0.0 and 0.0 counted as one value)."""
    n = float_key(hi) - float_key(lo) + 1
    if float_key(lo) <= float_key(-0.0) and float_key(hi) >= float_key(0.0):
        n -= 1
    return max(0, n)


def float_cut(pred: Callable[[float], bool], lo: float, hi: float) -> float:
    """The least float c in (lo, hi] with ``pred(c) == pred(hi)`` for a predicate monotone on [lo, hi] (one change
    of value at most) whose ends differ; every float in [lo, c) gives ``pred(lo)``."""
    a, b = float_key(lo), float_key(hi)  # pred(a) != pred(b)
    want = pred(hi)
    while b - a > 1:
        mid = (a + b) // 2
        if pred(float_from_key(mid)) == want:
            b = mid
        else:
            a = mid
    return float_from_key(b)


def _median(lo: float, hi: float) -> float:
    return float_from_key((float_key(lo) + float_key(hi)) // 2)


def simplest_float(lo: float, hi: float) -> float:
    """The float strictly inside (lo, hi) with the fewest significant bits, the nearest to 1 in magnitude among
    those, positive before negative and never 0 when another value is inside; ``lo`` when nothing is strictly inside.

    A typical value whose exact arithmetic stays short (0.5 in (2**-1074, 1), where the median float is near
    1e-154): the point to hand a region to the concrete clauses at, whose exact rationals grow with the bits of
    the parameters."""
    if float_key(hi) - float_key(lo) < 2:
        return lo
    a, b = float_from_key(float_key(lo) + 1), float_from_key(float_key(hi) - 1)
    if b > 0:
        return _simplest_positive(max(a, 5e-324), b)
    if a < 0:
        return -_simplest_positive(max(-b, 5e-324), -a)
    return a  # only zeros inside


def _simplest_positive(a: float, b: float) -> float:
    """:func:`simplest_float` on [a, b] with 0 < a <= b."""
    low, high = math.frexp(a)[1] - 1, math.frexp(b)[1] - 1  # a in [2**low, 2**(low+1)), b likewise
    if low != high or a == math.ldexp(1.0, low):  # a power of two inside: the one nearest to 1
        first = low if a == math.ldexp(1.0, low) else low + 1
        return math.ldexp(1.0, min(max(0, first), high))
    x, y = Fraction(a), Fraction(b)
    for bits in range(1, 54):  # one binade: the coarsest grid 2**(low + 1 - bits) with a point in [a, b]
        step = Fraction(2) ** (low + 1 - bits)
        c = math.ceil(x / step) * step
        if c <= y:
            return float(c)
    return a


# ------------------------------------------------------------------ regions

@dataclasses.dataclass(frozen=True)
class Box:
    """A region of parameter space: each float parameter in a closed interval of floats, and optionally orders
    between parameters (``(a, b, strict)``: a < b, or a <= b, on the whole region; the intervals are kept tight,
    so that every value of each interval occurs in the region). A decision read at the box's corners holds on the
    region (it is a part of the box); the run's point always lies in the region."""

    ranges: tuple[tuple[str, float, float], ...]  # (name, lo, hi), sorted by name
    orders: tuple[tuple[str, str, bool], ...] = ()  # (a, b, strict): a < b (strict) or a <= b
    # the point the code is run at, when not the median (a fork's region is run at a point that answers its
    # assumed comparison so); parts cut from the box go back to their medians
    at: tuple[tuple[str, float], ...] | None = None

    @classmethod
    def of(cls, ranges: Mapping[str, tuple[float, float]]) -> Box:
        for name, (lo, hi) in ranges.items():
            if not (isinstance(lo, float) and isinstance(hi, float) and math.isfinite(lo) and math.isfinite(hi)):
                raise ValueError(f"ranges[{name!r}]=({lo!r}, {hi!r}) must be two finite floats")
            if float_key(lo) > float_key(hi):
                raise ValueError(f"ranges[{name!r}]=({lo!r}, {hi!r}) must have lo <= hi")
        return cls(tuple(sorted((n, float(lo), float(hi)) for n, (lo, hi) in ranges.items())))

    def __getitem__(self, name: str) -> tuple[float, float]:
        for n, lo, hi in self.ranges:
            if n == name:
                return lo, hi
        raise KeyError(name)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(n for n, _, _ in self.ranges)

    def with_range(self, name: str, lo: float, hi: float) -> Box:
        return dataclasses.replace(self, ranges=tuple((n, lo, hi) if n == name else (n, a, b)
                                                      for n, a, b in self.ranges), at=None)

    def split(self, name: str, cut: float) -> tuple[Box, ...]:
        """[lo, cut) and [cut, hi] of parameter ``name`` (cut in (lo, hi]), each tightened to the orders (a part
        the orders leave empty is dropped)."""
        lo, hi = self[name]
        below = float_from_key(float_key(cut) - 1)
        parts = (self.with_range(name, lo, below)._tight(), self.with_range(name, cut, hi)._tight())
        return tuple(p for p in parts if p is not None)

    def ordered(self, a: str, b: str, strict: bool) -> Box | None:
        """The part of the region where a < b (``strict``) or a <= b, tightened; None when it is empty."""
        return dataclasses.replace(self, orders=tuple(sorted({*self.orders, (a, b, strict)})), at=None)._tight()

    def implies(self, a: str, b: str, strict: bool) -> bool:
        """Whether a < b (``strict``) or a <= b holds on the whole region, by its orders or its intervals."""
        if (a, b, True) in self.orders or (not strict and (a, b, False) in self.orders):
            return True
        a_hi, b_lo = self[a][1], self[b][0]
        return a_hi < b_lo if strict else a_hi <= b_lo

    def _tight(self) -> Box | None:
        """The box with each ordered pair's intervals cut to the values that occur in the region; None if empty."""
        ranges = {n: (lo, hi) for n, lo, hi in self.ranges}
        for _ in range(len(self.orders) + 1):
            for a, b, strict in self.orders:
                (alo, ahi), (blo, bhi) = ranges[a], ranges[b]
                top = math.nextafter(bhi, -math.inf) if strict else bhi  # a <= (the float below) b's largest
                bottom = math.nextafter(alo, math.inf) if strict else alo  # b >= (the float above) a's least
                top, bottom = (0.0 if top == 0 else top), (-0.0 if bottom == 0 else bottom)  # both zeros are 0
                ranges[a] = (alo, min(ahi, top, key=float_key))
                ranges[b] = (max(blo, bottom, key=float_key), bhi)
        if any(float_key(lo) > float_key(hi) for lo, hi in ranges.values()):
            return None
        return dataclasses.replace(self, ranges=tuple((n, *ranges[n]) for n, _, _ in self.ranges))

    def contains(self, env: Mapping[str, float]) -> bool:
        """Whether the point ``env`` lies in the region."""
        return (all(float_key(lo) <= float_key(env[n]) <= float_key(hi) for n, lo, hi in self.ranges)
                and all(env[a] < env[b] if strict else env[a] <= env[b] for a, b, strict in self.orders))

    def point(self) -> dict[str, float]:
        """The point the code is run at: the median float of each interval (a bounded, typical value), moved up
        where an order needs it (the median of what the order leaves); or the box's ``at``."""
        if self.at is not None:
            return dict(self.at)
        env = {n: _median(lo, hi) for n, lo, hi in self.ranges}
        for _ in range(len(self.orders)):
            for a, b, strict in self.orders:
                if not (env[a] < env[b] if strict else env[a] <= env[b]):
                    least = math.nextafter(env[a], math.inf) if strict else env[a]
                    env[b] = _median(max(self[b][0], least, key=float_key), self[b][1])
        return env

    def simple_point(self) -> dict[str, float]:
        """A point of the region with short parameters (:func:`simplest_float` of each interval), for the
        concrete clauses; :meth:`point` where the orders rule it out."""
        env = {n: simplest_float(lo, hi) for n, lo, hi in self.ranges}
        return env if self.contains(env) else self.point()

    def corners(self, names: tuple[str, ...]) -> Iterator[dict[str, float]]:
        """Every corner of the box in the parameters ``names`` (the others at their points); with orders, some
        corners may lie outside the region (a decision they agree on holds on the whole box, so on the region)."""
        base = self.point()
        choices = [(n, self[n]) for n in names]
        for mask in range(1 << len(choices)):
            env = dict(base)
            for i, (n, (lo, hi)) in enumerate(choices):
                env[n] = hi if mask >> i & 1 else lo
            yield env

    def size(self) -> int:
        """How many parameter points the box holds (with orders: at most this many)."""
        return math.prod(floats_between(lo, hi) for _, lo, hi in self.ranges)

    def describe(self) -> str:
        text = ", ".join(f"{n} in [{lo!r}, {hi!r}]" if lo != hi else f"{n} = {lo!r}" for n, lo, hi in self.ranges)
        return text + "".join(f", {a} {'<' if strict else '<='} {b}" for a, b, strict in self.orders)


class Split(BaseException):
    """The current region must be split into ``parts`` before the run can go on (not an outcome of the code);
    ``dead`` parts cannot be explored symbolically (``why`` says what the code did). ``fork``: (key, what) when the
    dead parts are where one comparison (by its key, described by what) is left undecided, so that they may instead
    be explored once per answer (see :func:`explore_regions`' ``forks``)."""

    def __init__(self, parts: tuple[Box, ...], why: str, dead: tuple[Box, ...] = (),
                 fork: tuple[Any, str] | None = None, joint: bool = False,
                 test: Callable[[Mapping[str, float]], bool] | None = None):
        super().__init__(why)
        self.parts, self.why, self.dead, self.fork = parts, why, dead, fork
        self.joint = joint  # a halving of a box whose corners disagree (counted against MAX_JOINT_HALVINGS)
        self.test = test  # the forked comparison's answer at a point, to run each fork at a point that answers so


class Infeasible(BaseException):
    """A fork's assumed answer is contradicted on the whole region (its comparison is decided the other way there):
    no point of the region takes that fork, so the run has nothing to explore (not an outcome of the code)."""


@dataclasses.dataclass(frozen=True)
class Escape:
    """A symbolic value left the symbolic world (its parameters were pinned to the run's point)."""

    what: str  # e.g. "float()", "hash()"
    where: str  # file:line of the code that did it
    names: tuple[str, ...]


class EscapeRefused(BaseException):
    """An escape inside :meth:`Exploration.without_escapes` (not an outcome of the code)."""


class RegionBudgetExceeded(RuntimeError):
    """Exploring the regions would take more runs than the budget allows."""


# ------------------------------------------------------------------ terms: evaluation and monotonicity

def evaluate(term: Expr, env: Mapping[str, float]) -> float:
    """The float the term gives at ``env`` (each operation rounded as it says); raises FloatArithmeticError where
    the operation has no finite float answer."""
    return term.to_float(env)


def evaluate_shared(terms: tuple[Expr, ...], env: Mapping[str, float]) -> tuple[float, ...]:
    """:func:`evaluate` of several terms at once, each shared subterm evaluated once (the same floats)."""
    seen: dict[Expr, float] = {}

    def value(t: Expr) -> float:
        if t not in seen:
            seen[t] = t.info.rounded(*(value(a) for a in t.args)) if isinstance(t, Op) else t.to_float(env)
        return seen[t]

    return tuple(value(t) for t in terms)


def _try(term: Expr, env: Mapping[str, float]) -> float | None:
    try:
        return evaluate(term, env)
    except (R.FloatArithmeticError, ArithmeticError, ValueError):
        return None


_INCREASING = {"ln", "exp", "log1p", "expm1"}


def monotonicity(term: Expr, name: str, box: Box) -> int | None:
    """+1 if the term never decreases as parameter ``name`` grows over the box (the others held anywhere in
    theirs, when the term is monotone in them too), -1 if it never increases, 0 if it does not depend on it, None
    if that is not established. Rounding in any direction keeps a monotone operation monotone."""
    return _analysis(name, box).of(term)


_ANALYSES: dict[tuple, _Monotone] = {}
_ANALYSES_KEPT = 4096


def _analysis(name: str, box: Box) -> _Monotone:
    """The monotonicity analysis in ``name`` over ``box``, shared by every run on that box (terms recur across runs
    and bases); keyed by the floats' bit patterns, so that -0.0 and 0.0 stay apart."""
    key = (name, tuple((n, float_key(lo), float_key(hi)) for n, lo, hi in box.ranges))
    found = _ANALYSES.get(key)
    if found is None:
        if len(_ANALYSES) >= _ANALYSES_KEPT:
            _ANALYSES.clear()
            _RECENT.clear()
        found = _ANALYSES[key] = _Monotone(name, box, _enclosing(name, box))
        recent = _RECENT.setdefault(name, [])
        recent.append(found)
        del recent[:-_RECENT_KEPT]
    return found


_RECENT: dict[str, list[_Monotone]] = {}  # by parameter, the latest analyses: the regions split off come next
_RECENT_KEPT = 64


def _enclosing(name: str, box: Box) -> _Monotone | None:
    """A recent analysis in ``name`` over a box that contains ``box``: what it established (a term monotone, or of
    one sign, over the larger box) holds on ``box`` too."""
    for m in reversed(_RECENT.get(name, ())):
        if m.box.names == box.names and all(
                float_key(plo) <= float_key(lo) and float_key(hi) <= float_key(phi)
                for (_, plo, phi), (_, lo, hi) in zip(m.box.ranges, box.ranges, strict=True)):
            return m
    return None


class _Monotone:
    def __init__(self, name: str, box: Box, enclosing: _Monotone | None = None):
        self.enclosing = enclosing
        self.name, self.box = name, box
        self.cache: dict[Expr, int | None] = {}
        self.signs: dict[Expr, int | None] = {}

    def sign(self, term: Expr) -> int | None:
        """The sign of the term over the whole box (+1 >= 0, -1 <= 0), from its values at the corners when it is
        monotone in every parameter; None if not established or it changes sign."""
        if term not in self.signs:
            known = self.enclosing.signs.get(term) if self.enclosing is not None else None
            self.signs[term] = known if known is not None else self._sign(term)
        return self.signs[term]

    def _sign(self, term: Expr) -> int | None:
        names = tuple(term.variables())
        if any(_analysis(n, self.box).of(term) is None for n in names):
            return None
        values = [_try(term, env) for env in self.box.corners(names)]
        if any(v is None for v in values):
            return None
        if all(v >= 0 for v in values):
            return 1
        if all(v <= 0 for v in values):
            return -1
        return None

    def of(self, term: Expr) -> int | None:
        if term in self.cache:
            return self.cache[term]
        known = self.enclosing.cache.get(term) if self.enclosing is not None else None
        out = known if known is not None else self._of(term)
        self.cache[term] = out
        return out

    def _of(self, term: Expr) -> int | None:
        if isinstance(term, Var):
            return 1 if term.name == self.name else 0
        if isinstance(term, Const):
            return 0
        assert isinstance(term, Op)
        ideal = term.info.ideal
        ms = [self.of(a) for a in term.args]
        if all(m == 0 for m in ms):
            return 0
        if any(m is None for m in ms):
            return None
        if ideal in _INCREASING:
            return ms[0]
        if ideal == "add":
            return _combine(ms[0], ms[1])
        if ideal == "sub":
            return _combine(ms[0], -ms[1])
        a, b = term.args
        sa, sb = self.sign(a), self.sign(b)
        if ideal == "mul":  # d(ab) = b·da + a·db
            parts = [0 if ms[0] == 0 else (None if sb is None else sb * ms[0]),
                     0 if ms[1] == 0 else (None if sa is None else sa * ms[1])]
        else:  # div: d(a/b) = (b·da − a·db) / b², b of one sign
            if sb is None:
                return None
            parts = [0 if ms[0] == 0 else sb * ms[0], 0 if ms[1] == 0 else (None if sa is None else -sa * ms[1])]
        if any(p is None for p in parts):
            return None
        return _combine(parts[0], parts[1])


def _combine(a: int, b: int) -> int | None:
    if a == 0:
        return b
    if b == 0 or a == b:
        return a
    return None


# ------------------------------------------------------------------ the exploration context

class Exploration:
    """The state of one run over one region: the box, the splits it asks for, the escapes it made."""

    _serials = itertools.count()

    def __init__(self, box: Box, max_corner_halvings: int = 48, bisections: int | None = None,
                 assumed: Mapping[Any, bool] | None = None):
        from vetdp.engine.bisection import BISECTIONS

        self.serial = next(Exploration._serials)  # values memoize answers per run: a value kept across runs asks again
        self.box = box
        self.point = box.point()
        self.escapes: list[Escape] = []
        self.pinned: set[str] = set()
        self.halted: BaseException | None = None
        self.max_corner_halvings = max_corner_halvings
        # a predicate decided on this region, by its key; a fork's assumed answers are given, never decided
        self.answers: dict[Any, bool] = dict(assumed or {})
        self.forked = bool(assumed)  # the run is the code's path only where the assumed answers hold
        # comparisons of a probability with a number decided on this region, by key: facts the rounding analysis
        # may use to enclose a term (:meth:`_enclosed`)
        self.known: dict[Any, bool] = {}
        self.strict = 0  # > 0: escapes refused (see without_escapes)
        self.bisections = BISECTIONS if bisections is None else bisections  # sub-intervals per comparison

    def monotonicity(self, term: Expr, name: str) -> int | None:
        """:func:`monotonicity` on this region, cached."""
        return _analysis(name, self.box).of(term)

    # -- deciding a predicate on the region
    def decide(self, pred: Callable[[Mapping[str, float]], bool], terms: tuple[tuple[Expr, int], ...],
               concrete: bool, what: str | Callable[[], str], key: Any = None,
               on_terms: Callable[..., bool] | None = None) -> bool:
        """The answer of ``pred`` for every point of the region, or a :class:`Split` where it changes.

        ``pred`` is a function of the parameters through ``terms``, each with the direction (+1/-1) in which the
        predicate's truth moves as that term grows: the predicate is then monotone in every parameter in which
        each term is monotone with a consistent direction. ``concrete`` is its value at the run's point.
        ``on_terms(*values)``, the predicate on the terms' values, lets a predicate whose terms are monotone in
        inconsistent directions be decided by bisection (:meth:`_bisected`) instead of pinning the region."""
        if self.halted is not None:
            raise self.halted
        if key is not None and key in self.answers:
            return self.answers[key]
        answer = self._decide(pred, terms, concrete, what, key, on_terms)
        if key is not None:
            self.answers[key] = answer
        return answer

    def _decide(self, pred: Callable[[Mapping[str, float]], bool], terms: tuple[tuple[Expr, int], ...],
                concrete: bool, what: str | Callable[[], str], key: Any = None,
                on_terms: Callable[..., bool] | None = None) -> bool:
        if callable(what):  # described lazily: most predicates are decided without a word
            return self._decide(pred, terms, concrete, _Lazy(what), key, on_terms)
        names = sorted({n for t, _ in terms for n in t.variables()} - self.pinned)
        names = [n for n in names if floats_between(*self.box[n]) > 1]
        if not names:
            return concrete
        for n in names:
            ms = [(self.monotonicity(t, n), d) for t, d in terms]
            ways = {None} if any(m is None for m, _ in ms) else {d * m for m, d in ms if m != 0}
            if None in ways or len(ways) > 1:
                if on_terms is not None and key is not None and len(names) == 1 and None not in ways:
                    return self._bisected(on_terms, terms, [m for m, _ in ms], n, what, key)
                if on_terms is not None and key is not None and len(terms) == 2 and (len(names) > 1 or None in ways):
                    return self._enclosed(pred, terms, names, what, key, on_terms)
                return self.escape(f"a branch not known to be monotone in {n} ({what})", names, concrete)
        if len(names) == 1:
            name = names[0]
            lo, hi = self.box[name]
            at: dict[float, bool] = {}

            def on_line(x: float) -> bool:
                if x not in at:
                    env = dict(self.point)
                    env[name] = x
                    at[x] = pred(env)
                return at[x]

            if on_line(lo) == on_line(hi):
                return on_line(lo)
            cut = float_cut(on_line, lo, hi)
            raise self._split(self.box.split(name, cut), f"{what} changes at {name} = {cut!r}")
        values = {pred(env) for env in self.box.corners(tuple(names))}
        if len(values) == 1:
            return values.pop()
        raise self.halve(names, what)  # several parameters: decide each half again

    def halve(self, names: list[str] | tuple[str, ...], what: Any, key: Any = None,
              test: Callable[[Mapping[str, float]], bool] | None = None) -> Split:
        """The split that halves the widest interval (in floats) of ``names``, for a predicate whose answer the
        corners of the region do not settle (counted against :data:`MAX_JOINT_HALVINGS`); ``key`` names the
        predicate, so that a region it still crosses after the halvings may be forked on it; ``test(point)`` is its
        answer at a point."""
        name = max(names, key=lambda n: floats_between(*self.box[n]))
        lo, hi = self.box[name]
        mid = float_from_key((float_key(lo) + float_key(hi) + 1) // 2)
        what = f"{what} depends on {', '.join(names)} jointly"
        split = self._split(self.box.split(name, mid), what, joint=True, fork=None if key is None else (key, what))
        split.test = test
        return split

    def span(self, term: Expr) -> tuple[float, float] | None:
        """The least and largest value of a term over the region, from the box's corners where the term is
        monotone in each of its parameters (a superset of the region's values when the region has orders);
        None when that is not established."""
        names = tuple(n for n in term.variables() if n not in self.pinned)
        if any(self.monotonicity(term, n) is None for n in names):
            return None
        values = [_try(term, env) for env in self.box.corners(names)]
        if any(v is None for v in values):
            return None
        return min(values), max(values)

    def both_wide(self, a: str, b: str) -> bool:
        """Whether two distinct parameters each range over several floats of the region (neither pinned)."""
        return a != b and all(n not in self.pinned and floats_between(*self.box[n]) > 1 for n in (a, b))

    def order(self, a: str, name: str, b: str) -> bool:
        """``a <name> b`` for two wide parameters (lt, le, gt, ge), decided by the region's orders; where the
        region holds both answers it is split into the two ordered parts (exactly, not by halving)."""
        if self.halted is not None:
            raise self.halted
        x, y, strict = {"lt": (a, b, True), "le": (a, b, False), "gt": (b, a, True), "ge": (b, a, False)}[name]
        if self.box.implies(x, y, strict):
            return True
        if self.box.implies(y, x, not strict):
            return False
        parts = tuple(p for p in (self.box.ordered(x, y, strict), self.box.ordered(y, x, not strict)) if p)
        raise self._split(parts, f"{x} {'<' if strict else '<='} {y} holds on part of the region")

    def _split(self, parts: tuple[Box, ...], why: str, dead: tuple[Box, ...] = (),
               fork: tuple[Any, str] | None = None, joint: bool = False) -> Split:
        self.halted = Split(parts, why, dead, fork, joint)
        return self.halted

    def _enclosed(self, pred: Callable[[Mapping[str, float]], bool], terms: tuple[tuple[Expr, int], ...],
                  names: list[str], what: Any, key: Any, on_terms: Callable[..., bool]) -> bool:
        """A comparison of two float terms not monotone in the region's wide parameters (several of them, or one
        in which a term's monotonicity is unknown): decided where the enclosures of the two terms' computed values
        over the region (:func:`~vetdp.engine.tightness.enclosure`, with the comparisons of probabilities decided or
        assumed on the region as facts) do not overlap, else the region is halved (counted against
        :data:`MAX_JOINT_HALVINGS`, after which it may be forked on the comparison, never decided there); a term
        the analysis cannot enclose on the region is halved the same way."""
        from vetdp.engine.tightness import enclosure

        point = {n: self.point[n] for n in self.pinned if n in self.point}
        facts = {**self.known, **self.answers}
        (a, _), (b, _) = terms
        ea, eb = enclosure(a, self.box, point, facts), enclosure(b, self.box, point, facts)
        if ea is not None and eb is not None and (ea[1] < eb[0] or eb[1] < ea[0]):
            return bool(on_terms(ea[0], eb[0]))  # apart: every value of one side below every value of the other
        raise self.halve(names, what, key=key, test=pred)  # overlapping, or not enclosed on so wide a region

    def _bisected(self, on_terms: Callable[..., bool], terms: tuple[tuple[Expr, int], ...], trends: list[int],
                  name: str, what: Any, key: Any) -> bool:
        """A predicate of terms each monotone in ``name`` (``trends``), in directions that do not agree: its answer
        on the region where :func:`~vetdp.engine.bisection.bisect_comparison` decides it for the whole region, else
        a :class:`Split` into the decided pieces, the undecided ones left unexplored with the reason (never
        proved). Decided pieces are remembered, so that the runs on them find their answer at once."""
        from vetdp.engine import bisection

        lo, hi = self.box[name]
        held = sorted({v for t, _ in terms for v in t.variables()} - {name})  # pinned or one float each
        # the budget is part of the key: a region's coverage never depends on what earlier explorations decided
        memo_key = (key, name, tuple((v, float_key(self.point[v])) for v in held), self.bisections)
        known = bisection.decided_on(memo_key, lo, hi)
        if known is not None:
            return known

        def values(x: float) -> tuple[float, ...] | None:
            env = dict(self.point)
            env[name] = x
            try:
                return evaluate_shared(tuple(t for t, _ in terms), env)
            except (R.FloatArithmeticError, ArithmeticError, ValueError):
                return None

        pieces = bisection.bisect_comparison(on_terms, values, trends, [d for _, d in terms], lo, hi,
                                             self.bisections)
        bisection.remember(memo_key, pieces)
        if len(pieces) == 1 and pieces[0][2] is not None:
            return pieces[0][2]
        decided = tuple(self.box.with_range(name, a, b) for a, b, answer in pieces if answer is not None)
        undecided = tuple(self.box.with_range(name, a, b) for a, b, answer in pieces if answer is None)
        why = (f"{what} is not monotone in {name}: interval bisection decides it on {len(decided)} region(s)"
               + (f", not on {len(undecided)} near a crossing (the two sides' enclosures overlap at the budget of "
                  f"{self.bisections} sub-intervals)" if undecided else ""))
        raise self._split(decided, why, undecided, fork=(key, str(what)))

    def leave_open(self, why: str) -> Split:
        """A :class:`Split` that leaves the whole region unexplored, with the reason."""
        return self._split((), why, (self.box,))

    def rerun(self, why: str) -> Split:
        """A :class:`Split` that runs the region again as it is (the code under test now sees it otherwise)."""
        return self._split((self.box,), why)

    @contextlib.contextmanager
    def without_escapes(self) -> Iterator[None]:
        """Inside the block an escape raises :class:`EscapeRefused` instead of pinning the region (for optional
        work, e.g. a spec's admissible laws, that must not cost the run its region)."""
        self.strict += 1
        try:
            yield
        finally:
            self.strict -= 1

    def escape(self, what: str, names: list[str] | tuple[str, ...], concrete: Any) -> Any:
        """Pin ``names`` to the run's point and return ``concrete``: the region shrinks to that point (the rest of it
        is left unexplored, with the reason: the code's answer there cannot be read from this run)."""
        wide = [n for n in names if n not in self.pinned and floats_between(*self.box[n]) > 1]
        if wide and self.strict:
            raise EscapeRefused(f"{what} at {_caller()}")
        if wide:
            n = wide[0]
            lo, hi = self.box[n]
            x = self.point[n]
            dead = []
            if float_key(x) > float_key(lo):
                dead.append(self.box.with_range(n, lo, float_from_key(float_key(x) - 1)))
            if float_key(x) < float_key(hi):
                dead.append(self.box.with_range(n, float_from_key(float_key(x) + 1), hi))
            raise self._split((self.box.with_range(n, x, x),), f"{what} at {_caller()}", tuple(dead))
        self.pinned.update(names)
        self.escapes.append(Escape(what, _caller(), tuple(names)))
        return concrete


class _Lazy:
    """A description built when first shown."""

    def __init__(self, make: Callable[[], str]):
        self.make = make

    def __str__(self) -> str:
        return self.make()


def current_exploration() -> Exploration:
    """The exploration of the running region (raises outside :func:`explore_regions`)."""
    return _context()


_current: contextvars.ContextVar[Exploration | None] = contextvars.ContextVar("vetdp_exploration", default=None)


def _context() -> Exploration:
    ctx = _current.get()
    if ctx is None:
        raise RuntimeError("a symbolic parameter was used outside explore_regions")
    return ctx


def _caller() -> str:
    frame = sys._getframe(1)
    here = __file__
    while frame is not None and frame.f_code.co_filename == here:
        frame = frame.f_back
    return f"{frame.f_code.co_filename}:{frame.f_lineno}" if frame is not None else "?"


# ------------------------------------------------------------------ the symbolic float

def is_symbolic(x: Any) -> bool:
    """Whether ``x`` is a symbolic value (the runtime's hooks test the class attribute, importing nothing)."""
    return getattr(type(x), "_vetdp_symbolic_", False)


def _lift(x: Any) -> tuple[Expr, float] | None:
    """(term, value) of an operand: a SymFloat, a float, an int exactly a float, a Fraction rounded as Python
    rounds it in float arithmetic; None for anything else."""
    if isinstance(x, SymFloat):
        return x.term, x.value
    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        return None
    if isinstance(x, float):
        return Const(x), x
    if isinstance(x, int):
        f = float(x)  # Python converts an int operand to float first (OverflowError when it cannot)
        return Const(f), f
    f = float(x)
    return Const(f), f


_NEAR = {"add": ("near_add", operator.add), "sub": ("near_sub", operator.sub), "mul": ("near_mul", operator.mul),
         "div": ("near_div", operator.truediv)}
# comparison -> (the one-sided predicates it is the conjunction of, negated?)
_ONE_SIDED = {"lt": ((operator.lt, -1),), "le": ((operator.le, -1),), "gt": ((operator.gt, 1),),
              "ge": ((operator.ge, 1),)}
_SYMBOL = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}


def compare(term: Expr, value: float, name: str, other: Any) -> bool:
    """``term <name> other`` decided on the region; ``other`` a SymFloat, a number, or a Fraction (compared
    exactly, as Python compares a float with a Fraction)."""
    if isinstance(other, Fraction):
        o_term, exact = Const(0.0), True
        o_value: Any = other
    elif isinstance(other, float) and not math.isfinite(other):  # every value of a region is a finite float
        holds = {"ne"} if math.isnan(other) else {"lt", "le", "ne"} if other > 0 else {"gt", "ge", "ne"}
        return name in holds
    else:
        lifted = _lift(other)
        if lifted is None:
            raise TypeError(f"cannot compare a symbolic float with {type(other).__name__}")
        (o_term, o_value), exact = lifted, False
        if o_term == term:  # a value compared with itself (x != x, the NaN test): every value of a region is finite
            return name in ("le", "ge", "eq")

    def what() -> str:
        return f"{term} {_SYMBOL[name]} {other if exact else o_term}"

    def side(op: Callable, direction: int) -> bool:
        if isinstance(term, Var) and isinstance(o_term, Var) and _context().both_wide(term.name, o_term.name):
            return _context().order(term.name, op.__name__, o_term.name)
        if exact:
            return _context().decide(lambda env: op(Fraction(evaluate(term, env)), o_value), ((term, direction),),
                                     op(Fraction(value), o_value), what, key=(term, op, "exact", o_value))
        return _context().decide(lambda env: op(evaluate(term, env), evaluate(o_term, env)),
                                 ((term, direction), (o_term, -direction)), op(value, o_value), what,
                                 key=(term, op, o_term), on_terms=op)

    if name in _ONE_SIDED:
        (op, direction), = _ONE_SIDED[name]
        return side(op, direction)
    equal = side(operator.le, -1) and side(operator.ge, 1)  # an interval of the monotone term: two one-sided tests
    return equal if name == "eq" else not equal


class RunMemo:
    """A memo of answers about a symbolic value, kept for the current run only (a draw repeats the same questions);
    the class sets ``_memo`` to None when built."""

    __slots__ = ()

    def _memoized(self) -> dict:
        serial = _context().serial
        if self._memo is None or self._memo[0] != serial:
            self._memo = (serial, {})
        return self._memo[1]


class SymFloat(RunMemo):
    """A float that stands for every value of its term over the current region (see the module docstring)."""

    _vetdp_symbolic_ = True
    __slots__ = ("term", "value", "_memo")

    def __init__(self, term: Expr, value: float):
        self.term, self.value = term, value
        self._memo: tuple[int, dict] | None = None


    def __repr__(self) -> str:
        return f"SymFloat({self.term}, at {self.value!r})"

    # -- arithmetic: Python's float operations, round to nearest
    def _arith(self, op: str, other: Any, reflected: bool = False) -> SymFloat | Any:
        lifted = _lift(other)
        if lifted is None:
            return NotImplemented
        a, b = (lifted, (self.term, self.value)) if reflected else ((self.term, self.value), lifted)
        name, fn = _NEAR[op]
        if op == "div" and (compare(b[0], b[1], "eq", 0.0) if b[0].variables() else b[1] == 0):
            raise ZeroDivisionError("float division by zero")
        try:
            value = fn(a[1], b[1])
        except OverflowError:
            value = math.inf
        return _apply(name, (a[0], b[0]), value)

    def __add__(self, o): return self._arith("add", o)  # noqa: E704
    def __radd__(self, o): return self._arith("add", o, True)  # noqa: E704
    def __sub__(self, o): return self._arith("sub", o)  # noqa: E704
    def __rsub__(self, o): return self._arith("sub", o, True)  # noqa: E704
    def __mul__(self, o): return self._arith("mul", o)  # noqa: E704
    def __rmul__(self, o): return self._arith("mul", o, True)  # noqa: E704
    def __truediv__(self, o): return self._arith("div", o)  # noqa: E704
    def __rtruediv__(self, o): return self._arith("div", o, True)  # noqa: E704

    def __neg__(self) -> SymFloat:
        return _apply("near_mul", (self.term, Const(-1.0)), -self.value)  # exact: a sign flip

    def __pos__(self) -> SymFloat:
        return self

    def __abs__(self) -> SymFloat:
        return -self if self < 0.0 else self

    def __pow__(self, other: Any) -> Any:
        return _context().escape("x ** y", tuple(self.term.variables()), self.value ** _plain(other))

    def __rpow__(self, other: Any) -> Any:
        return _context().escape("y ** x", tuple(self.term.variables()), _plain(other) ** self.value)

    # -- comparisons: branch the region
    def __lt__(self, o): return compare(self.term, self.value, "lt", o)  # noqa: E704
    def __le__(self, o): return compare(self.term, self.value, "le", o)  # noqa: E704
    def __gt__(self, o): return compare(self.term, self.value, "gt", o)  # noqa: E704
    def __ge__(self, o): return compare(self.term, self.value, "ge", o)  # noqa: E704
    def __eq__(self, o): return compare(self.term, self.value, "eq", o) if _comparable(o) else NotImplemented  # noqa: E704
    def __ne__(self, o): return compare(self.term, self.value, "ne", o) if _comparable(o) else NotImplemented  # noqa: E704

    def __bool__(self) -> bool:
        return compare(self.term, self.value, "ne", 0.0)

    # -- to integers: each integer value is a region of its own (int, floor, ceil, round are monotone)
    def _to_int(self, what: str, fn: Callable[[float], int]) -> int:
        n = fn(self.value)
        ctx = _context()
        for op, direction in ((operator.ge, 1), (operator.le, -1)):
            ctx.decide(lambda env, op=op: op(fn(evaluate(self.term, env)), n), ((self.term, direction),), True,
                       f"{what}({self.term}) == {n}", key=(self.term, what, op, n))
        return n

    def __int__(self) -> int: return self._to_int("int", int)  # noqa: E704
    def __trunc__(self) -> int: return self._to_int("trunc", math.trunc)  # noqa: E704
    def __floor__(self) -> int: return self._to_int("floor", math.floor)  # noqa: E704
    def __ceil__(self) -> int: return self._to_int("ceil", math.ceil)  # noqa: E704

    def __round__(self, ndigits: int | None = None):
        if ndigits is None:
            return self._to_int("round", round)
        return _context().escape(f"round(x, {ndigits})", tuple(self.term.variables()), round(self.value, ndigits))

    # -- leaving the symbolic world: pin the parameters
    def __float__(self) -> float:
        ctx = _context()
        if not ctx.strict:
            from vetdp.engine.float_shims import adopt

            caller = sys._getframe(1)
            if adopt(caller):  # its module's float() now keeps symbolic floats: the region is run again
                raise ctx.rerun(f"float() at {caller.f_code.co_filename}:{caller.f_lineno} now keeps symbolic floats")
        return ctx.escape("float()", tuple(self.term.variables()), self.value)

    def __hash__(self) -> int:
        return _context().escape("hash()", tuple(self.term.variables()), hash(self.value))

    def as_integer_ratio(self) -> tuple[int, int]:
        return _context().escape("as_integer_ratio()", tuple(self.term.variables()), self.value.as_integer_ratio())

    def is_integer(self) -> bool:
        return _context().escape("is_integer()", tuple(self.term.variables()), self.value.is_integer())

    def __format__(self, spec: str) -> str:
        return _context().escape("format()", tuple(self.term.variables()), format(self.value, spec))

    # -- hooks of vetdp's runtime (validation, Expr.to_float, rounding, samplers): they test the class
    # attribute _vetdp_symbolic_ and call these, importing nothing of the harness
    def __vetdp_check_finite__(self, name: str) -> SymFloat:
        """``check_float``: every value of a region is a finite float by construction."""
        return self

    def __vetdp_in_interval__(self, lo: Any, hi: Any, lo_closed: bool, hi_closed: bool) -> bool:
        """``check_interval``: whether every value lies in the interval (bounds compared exactly)."""
        memo = self._memoized()
        key = ("in", lo, hi, lo_closed, hi_closed)
        if key not in memo:
            memo[key] = self._in_interval(lo, hi, lo_closed, hi_closed)
        return memo[key]

    def _in_interval(self, lo: Any, hi: Any, lo_closed: bool, hi_closed: bool) -> bool:
        ok = True
        if lo is not None:
            ok = compare(self.term, self.value, "ge" if lo_closed else "gt", Fraction(lo))
        if ok and hi is not None:
            ok = compare(self.term, self.value, "le" if hi_closed else "lt", Fraction(hi))
        return ok

    def __vetdp_probability__(self):
        """A sampler's exact probability ``Fraction(p)`` for a symbolic ``p``: the polynomial atom p."""
        from vetdp.engine.polynomial import ProbPoly

        memo = self._memoized()
        if "probability" not in memo:
            memo["probability"] = ProbPoly.atom(self)
        return memo["probability"]

    @staticmethod
    def __vetdp_op__(name: str, args: tuple[Any, ...], concrete: Callable[..., float]) -> SymFloat:
        """vetdp's directed-rounding operation ``name`` with symbolic arguments (``concrete`` computes it on plain
        floats)."""
        lifted = [_lift(a) for a in args]
        if any(x is None for x in lifted):
            raise TypeError(f"{name}: an argument is not a number: {args!r}")
        return _apply(name, tuple(t for t, _ in lifted), concrete(*(v for _, v in lifted)))

    @staticmethod
    def __vetdp_eval__(expr: Expr, env: Mapping[str, Any]) -> SymFloat:
        """``Expr.to_float`` with symbolic values in ``env``: the expression over their terms."""
        term, value = substitute(expr, env)
        return SymFloat(term, value)


numbers.Real.register(SymFloat)


def _comparable(o: Any) -> bool:
    return isinstance(o, (SymFloat, Fraction)) or (isinstance(o, numbers.Real) and not isinstance(o, bool))


def _plain(x: Any) -> Any:
    return x.value if isinstance(x, SymFloat) else x


def _apply(name: str, args: tuple[Expr, ...], value: float) -> SymFloat | float:
    """The SymFloat of operation ``name`` on ``args`` (``value`` at the run's point). The region is split where the
    operation has no finite float answer (Python gives inf or NaN there; vetdp's rounding raises), so that the term
    evaluates everywhere on the region; where it has none at the run's point, the parameters are pinned."""
    term = Op(name, args)
    if not term.variables():
        return SymFloat(Const(value), value) if math.isfinite(value) else value
    ok = math.isfinite(value)
    fails = _context().decide(lambda env: _try(term, env) is None, ((term, 1),), not ok, f"{term} is finite",
                              key=(term, "fails"))
    if fails or not ok:
        return _context().escape(f"{term} has no finite value", tuple(term.variables()), value)
    return SymFloat(term, value)


def substitute(term: Expr, env: Mapping[str, Any]) -> tuple[Expr, float]:
    """The term with each variable replaced by the term of the symbolic value bound to it (plain values become
    constants), and its value at the run's point."""
    def walk(t: Expr) -> Expr:
        if isinstance(t, Var):
            v = env[t.name]
            return v.term if isinstance(v, SymFloat) else Const(v if t.kind == "int" else float(v))
        if isinstance(t, Op):
            return Op(t.name, tuple(walk(a) for a in t.args))
        return t

    point = {k: (v.value if isinstance(v, SymFloat) else v) for k, v in env.items()}
    return walk(term), term.to_float(point)


# ------------------------------------------------------------------ exploring

@dataclasses.dataclass(frozen=True)
class Leaf:
    """A region on which the code took one path for every point, and what the run returned there."""

    box: Box
    result: Any
    escapes: tuple[Escape, ...]  # where parameters were pinned (the box is then a point in them)
    # a fork's assumed answers of comparisons left undecided on the box, as (what, answer): the run is the code's
    # path only at the box's points where the comparisons answer so (see explore_regions' forks)
    assumed: tuple[tuple[str, bool], ...] = ()
    # the same answers by the comparison's key (for a comparison of two float terms: (term, operator, other term)),
    # in the order assumed (not those given from the start, explore_regions' ``assumed``)
    assumed_keys: tuple[tuple[Any, bool], ...] = ()
    # the region where the first of those comparisons was forked: the forks of one origin cover it together
    origin: Box | None = None


@contextlib.contextmanager
def exploring(box: Box, bisections: int | None = None, assumed: Mapping[Any, bool] | None = None
              ) -> Iterator[Exploration]:
    ctx = Exploration(box, bisections=bisections, assumed=assumed)
    token = _current.set(ctx)
    try:
        yield ctx
    finally:
        _current.reset(token)


def _answering(box: Box, tests: tuple[tuple[Callable[[Mapping[str, float]], bool], bool], ...]) -> Box:
    """``box`` run at its point, or at a corner, where every forked comparison answers as assumed (a fork's run
    computes the code's floats at its point); the box unchanged when none does."""
    candidates = [box.point()]
    if len(box.names) <= _ANSWERING_NAMES:
        candidates += [c for c in box.corners(box.names) if box.contains(c)]
    for env in candidates:
        if all(test(env) == answer for test, answer in tests):
            return dataclasses.replace(box, at=tuple(sorted(env.items())))
    return box


_ANSWERING_NAMES = 4  # a fork's region looks for its point among at most 2**4 corners


MAX_JOINT_HALVINGS = 6  # halvings of one region whose corners disagree (a boundary that is no product of intervals)


def explore_regions(run: Callable[[dict[str, SymFloat]], Any], space: Mapping[str, tuple[float, float]] | Box, *,
                    budget: int = 2_000, on_leaf: Callable[[Leaf], None] | None = None,
                    bisections: int | None = None, forks: int = 0, assumed: Mapping[Any, bool] | None = None
                    ) -> tuple[list[Leaf], list[tuple[Box, str]]]:
    """Partition ``space`` (parameter -> (lo, hi) floats, or a :class:`Box`) into leaves by running ``run`` on
    symbolic parameters.

    Returns (leaves, unexplored): the leaves cover the space except the boxes in ``unexplored`` (each with the
    reason), which are left when more than ``budget`` runs would be needed, or when a boundary in several
    parameters jointly (not a product of intervals, e.g. p + r(q − p) >= c) still crosses a region after
    :data:`MAX_JOINT_HALVINGS` halvings. ``run`` is called once per region (again after every split); exceptions
    of the code are its results, a :class:`Split` is not. ``bisections`` bounds the sub-intervals examined to
    decide one non-monotone comparison on one region (:mod:`vetdp.engine.bisection`; None: its default).

    ``forks``: a box where a comparison is left undecided (near a crossing) is run once with each answer assumed,
    up to this many assumed comparisons on one path; each such leaf carries its ``assumed`` answers. Every point of
    the box follows one of its forks, so a property proved of every fork's result for every point of the box holds
    there; a property that fails on one fork is not established to fail (that fork may be taken nowhere). A
    comparison in several parameters jointly that still crosses a region after the halvings is forked likewise.
    ``assumed``: answers given from the start (a fork's ``answers``, to run its path again on its region).
    """
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
        raise ValueError(f"budget={budget!r} must be an int in [1, inf)")
    given = dict(assumed or {})
    pending: list[tuple[Box, str, int, dict, tuple, Box | None, tuple]] = [
        (space if isinstance(space, Box) else Box.of(space), "", 0, dict(assumed or {}), (), None, ())]
    leaves: list[Leaf] = []
    unexplored: list[tuple[Box, str]] = []
    runs = 0

    def follow(s: Split, depth: int, assumed: dict, said: tuple, origin: Box | None, box: Box, tests: tuple
               ) -> None:
        deeper = depth + s.joint
        can_fork = s.fork is not None and len(assumed) < forks
        if deeper > MAX_JOINT_HALVINGS and can_fork:  # still crossing after the halvings: each answer assumed
            fork(s, (dataclasses.replace(box, at=None),), depth, assumed, said, origin, tests)
        elif deeper > MAX_JOINT_HALVINGS:
            unexplored.extend((part, f"{s.why}: still crossing the region after {MAX_JOINT_HALVINGS} halvings")
                              for part in s.parts)
        else:
            pending.extend((part, s.why, deeper, assumed, said, origin, tests) for part in reversed(s.parts))
        if s.dead and can_fork:
            fork(s, s.dead, depth, assumed, said, origin, tests)
        else:
            unexplored.extend((part, s.why) for part in s.dead)

    def fork(s: Split, parts: tuple[Box, ...], depth: int, assumed: dict, said: tuple, origin: Box | None,
             tests: tuple) -> None:
        key, what = s.fork
        for part in parts:
            for answer in (True, False):
                tested = tests if s.test is None else (*tests, (s.test, answer))
                pending.append((part, s.why, depth, {**assumed, key: answer}, (*said, (what, answer)),
                                origin or part, tested))

    while pending:
        box, why, depth, answers, said, origin, tests = pending.pop()
        if runs >= budget:
            spent = f"the region budget of {budget} runs was spent"
            return leaves, unexplored + [(b, spent + (f" (last split: {w})" if w else "")) for b, w, *_ in
                                         [(box, why), *pending]]
        runs += 1
        box = _answering(box, tests) if tests and box.at is None else box
        with exploring(box, bisections, answers) as ctx:
            params = {name: SymFloat(Var(name), x) for name, x in ctx.point.items()}
            try:
                result = run(params)
            except Split as s:
                follow(s, depth, answers, said, origin, box, tests)
                continue
            except Infeasible:
                continue  # no point of the region takes this fork
            if ctx.halted is not None:  # the code swallowed a Split: its result cannot be trusted
                follow(ctx.halted, depth, answers, said, origin, box, tests)
                continue
        leaf = Leaf(box, result, tuple(ctx.escapes), said,
                    tuple((k, v) for k, v in answers.items() if k not in given), origin)
        leaves.append(leaf)
        if on_leaf is not None:
            on_leaf(leaf)
    return leaves, unexplored
