"""A uniform integer that the enumerating source draws lazily: fixed only as far as the code looks at it.

Under a :class:`~vetdp.sampling.sources.BranchingSource`, ``sample_uniform_int_below(n)`` with
``n >= LAZY_FROM`` returns a :class:`LazyInt` instead of branching over n values (2**53 values
cannot be enumerated one by one; the intervals an inverse-CDF sampler compares them with can).
A LazyInt stands for a value uniform on an interval [lo, hi) of integers, initially [0, n):

* **comparing** it with a number (``<``, ``<=``, ``>``, ``>=``, ``==``, ``!=``, ``bool``) branches
  once over the sub-intervals where the comparison is true or false, each with its exact
  conditional probability (its share of the interval), and narrows the interval;
* **arithmetic with a constant** (``+``, ``-``, ``*``, ``/``, ``//``, ``>>``, ``<<``, unary ``-``
  and ``~``, ``math.floor``/``ceil``/``trunc``, ``round``) gives another LazyInt: the same draw
  seen through a monotone function, applied to concrete integers exactly as Python applies it.
  A comparison then finds where the function crosses the constant by bisection (a monotone
  function is below a constant on a prefix of the interval and above it on a suffix);
* **any other use** (indexing, hashing, ``int()``, ``float()``, ``%``, ``&``, ``str``, a method)
  fixes the value: the source branches over the *level sets* of the function, the sub-intervals
  on which it takes one value (a monotone function has few where it quantises, e.g. an index
  ``u // width``), and the code receives that value. With more than ``FIX_LIMIT`` level sets the
  run halts with :class:`~vetdp.sampling.sources.PathLimitExceeded`, as an eager enumeration
  of that many values would exceed its budget.

Every branch goes through :meth:`BranchingSource.branch`, so each path's probability stays exact
(the product of the interval shares) and the enumerator explores lazily drawn values like any
other choice. Drawn under another source (a LazyInt that escaped its enumeration), the same
branches are sampled from that source, with the same conditional probabilities.
"""

from __future__ import annotations

import functools
import math
import numbers
import operator
from collections.abc import Callable
from fractions import Fraction
from typing import Any

__all__ = ["LazyInt", "LAZY_FROM", "FIX_LIMIT"]

LAZY_FROM = 1 << 20  # smaller uniform draws branch over their values, as before
FIX_LIMIT = 1 << 12  # most level sets a fixing branches over


def _number(value: Any) -> bool:
    """A number a LazyInt may be compared with: a real that is not itself lazy (NaN and infinities included)."""
    return isinstance(value, numbers.Real) and not isinstance(value, LazyInt)


def _constant(value: Any) -> bool:
    """A number a LazyInt may be combined with by arithmetic: a finite real that is not itself lazy."""
    if not _number(value):
        return False
    try:
        return math.isfinite(value)
    except (OverflowError, TypeError):  # a huge int does not fit a float: it is finite
        return isinstance(value, numbers.Integral)


def _sign(c: Any) -> int:
    return 1 if c > 0 else -1 if c < 0 else 0


# each step: name -> (concrete function of (value, constant), monotone direction as a function of the constant)
_STEPS: dict[str, tuple[Callable[[Any, Any], Any], Callable[[Any], int]]] = {
    "add": (operator.add, lambda c: 1),
    "radd": (lambda v, c: c + v, lambda c: 1),
    "sub": (operator.sub, lambda c: 1),
    "rsub": (lambda v, c: c - v, lambda c: -1),
    "mul": (operator.mul, _sign),
    "rmul": (lambda v, c: c * v, _sign),
    "truediv": (operator.truediv, _sign),
    "floordiv": (operator.floordiv, _sign),
    "rshift": (operator.rshift, lambda c: 1),
    "lshift": (operator.lshift, lambda c: 1),
    "neg": (lambda v, c: -v, lambda c: -1),
    "pos": (lambda v, c: +v, lambda c: 1),
    "invert": (lambda v, c: ~v, lambda c: -1),
    "floor": (lambda v, c: math.floor(v), lambda c: 1),
    "ceil": (lambda v, c: math.ceil(v), lambda c: 1),
    "trunc": (lambda v, c: math.trunc(v), lambda c: 1),
    "round": (lambda v, c: round(v) if c is None else round(v, c), lambda c: 1),
}


class _Draw:
    """The shared state of one lazy draw: the interval [lo, hi) its value is known to lie in."""

    __slots__ = ("lo", "hi")

    def __init__(self, lo: int, hi: int):
        self.lo, self.hi = lo, hi


@functools.lru_cache(maxsize=1024)
def _pieces(lo: int, hi: int, cuts: tuple[int, ...]) -> tuple[tuple[tuple[int, int, int], Fraction], ...]:
    """The non-empty pieces of [lo, hi) cut at ``cuts`` as ((index, start, end), share) (cached: every replay of
    a path asks again)."""
    bounds = [lo, *cuts, hi]
    size = hi - lo
    return tuple(((i, bounds[i], bounds[i + 1]), Fraction(bounds[i + 1] - bounds[i], size))
                 for i in range(len(bounds) - 1) if bounds[i + 1] > bounds[i])


def _branch(draw: _Draw, cuts: tuple[int, ...]) -> int:
    """Split [lo, hi) at the increasing ``cuts``; choose a piece with its exact share; narrow to it; its index."""
    from vetdp.sampling.primitives import sample_uniform_int_below
    from vetdp.sampling.sources import BranchingSource, current_source

    pieces = _pieces(draw.lo, draw.hi, cuts)
    if len(pieces) == 1:
        chosen = pieces[0][0]
    else:
        source = current_source()
        if isinstance(source, BranchingSource):
            chosen = source.branch(pieces)
        else:  # escaped its enumeration: sample the same split
            offset = draw.lo + sample_uniform_int_below(draw.hi - draw.lo)
            chosen = next(piece for piece, _ in pieces if piece[1] <= offset < piece[2])
    draw.lo, draw.hi = chosen[1], chosen[2]
    return chosen[0]


def _first(pred: Callable[[int], bool], lo: int, hi: int, upward: bool) -> int:
    """For ``pred`` true on a suffix of [lo, hi) (``upward``) or on a prefix: where the true part starts (or
    where the prefix ends), by bisection."""
    a, b = lo, hi  # the answer lies in [a, b]
    while a < b:
        mid = (a + b) // 2
        if pred(mid) == upward:
            b = mid
        else:
            a = mid + 1
    return a


def _at(steps: tuple[tuple[str, Any], ...], u: int) -> Any:
    v: Any = u
    for name, c in steps:
        v = _STEPS[name][0](v, c)
    return v


def _direction(steps: tuple[tuple[str, Any], ...]) -> int:
    d = 1
    for name, c in steps:
        d *= _STEPS[name][1](c)
    return d


@functools.lru_cache(maxsize=1024)
def _level_cuts(lo: int, hi: int, steps: tuple[tuple[str, Any], ...]) -> tuple[int, ...] | None:
    """Where the function changes value on [lo, hi) (None: more than FIX_LIMIT level sets). Cached: every replay
    of a path fixes the same value on the same interval."""
    cuts: list[int] = []
    start, direction = lo, _direction(steps)
    while start < hi:
        value = _at(steps, start)
        if direction >= 0:
            end = _first(lambda u, v=value: _at(steps, u) > v, start, hi, upward=True)
        else:
            end = _first(lambda u, v=value: _at(steps, u) < v, start, hi, upward=True)
        start = max(end, start + 1)
        if start < hi:
            if len(cuts) == FIX_LIMIT:
                return None
            cuts.append(start)
    return tuple(cuts)


class LazyInt:
    """A uniformly drawn integer seen through monotone steps, fixed only as far as it is looked at."""

    __slots__ = ("_draw", "_steps")

    def __init__(self, draw: _Draw, steps: tuple[tuple[str, Any], ...] = ()):
        self._draw, self._steps = draw, steps

    @classmethod
    def uniform_below(cls, n: int) -> LazyInt:
        """A lazy integer uniform on [0, n)."""
        return cls(_Draw(0, n))

    def _then(self, name: str, c: Any = None) -> LazyInt | Any:
        """The view ``name(self, c)``; a concrete value where the step could raise or is not monotone."""
        steps = (*self._steps, (name, c))
        risky = (name in ("rshift", "lshift") and not (isinstance(c, numbers.Integral) and c >= 0)
                 or name in ("mul", "rmul") and c == 0)  # inf·0 is NaN: not monotone on an overflowed value
        if not risky:
            try:  # an error here would be raised now by the int (a type error, a division by zero): raise it now
                _at(steps, self._draw.lo), _at(steps, self._draw.hi - 1)
            except (ArithmeticError, TypeError, ValueError):
                risky = True
        if risky:
            return _STEPS[name][0](self._fixed(), c)
        return LazyInt(self._draw, steps)

    def _where(self, op: Callable[[Any, Any], bool], c: Any) -> tuple[int, int]:
        """The sub-interval [a, b) of the draw's interval on which ``op(f(u), c)`` holds (a convex set for a
        monotone f and an order comparison; equality is the intersection of <= and >=)."""
        lo, hi = self._draw.lo, self._draw.hi
        direction = _direction(self._steps)
        if op is operator.eq:
            a1, b1 = self._where(operator.le, c)
            a2, b2 = self._where(operator.ge, c)
            return max(a1, a2), max(max(a1, a2), min(b1, b2))

        def pred(u: int) -> bool:
            return bool(op(_at(self._steps, u), c))

        below = op in (operator.lt, operator.le)  # true where f is small
        if (direction >= 0) == below:  # true on a prefix
            return lo, _first(pred, lo, hi, upward=False)
        return _first(pred, lo, hi, upward=True), hi

    def _compare(self, op: Callable[[Any, Any], bool], c: Any) -> bool:
        if self._draw.hi - self._draw.lo == 1:
            return op(_at(self._steps, self._draw.lo), c)
        try:
            a, b = self._where(operator.eq if op is operator.ne else op, c)
        except (ArithmeticError, TypeError, ValueError):  # the function misbehaves somewhere: look at the value
            return op(self._fixed(), c)
        inside = _branch(self._draw, (a, b)) == 1 if a < b else False
        return inside != (op is operator.ne)

    def _fixed(self) -> Any:
        """The value, fixed by branching over the level sets of the function on the interval."""
        from vetdp.sampling.primitives import sample_uniform_int_below
        from vetdp.sampling.sources import BranchingSource, PathLimitExceeded, current_source

        lo, hi = self._draw.lo, self._draw.hi
        if hi - lo > 1:
            try:
                cuts = _level_cuts(lo, hi, self._steps)
            except (ArithmeticError, TypeError, ValueError):  # the function raises somewhere: fix the draw
                cuts = tuple(range(lo + 1, hi)) if hi - lo <= FIX_LIMIT else None
            if cuts is not None:
                _branch(self._draw, cuts)
            else:
                source = current_source()
                if isinstance(source, BranchingSource):
                    source.halted = PathLimitExceeded(
                        f"a lazily drawn integer on [{lo}, {hi}) was used as a value taking more than {FIX_LIMIT} "
                        "values there (e.g. as an index, or with % or &): too many paths")
                    raise source.halted
                u = lo + sample_uniform_int_below(hi - lo)  # escaped its enumeration: sample it
                self._draw.lo, self._draw.hi = u, u + 1
        return _at(self._steps, self._draw.lo)

    # ----- comparisons: one branch each
    def _cmp(op):  # noqa: N805 - a method factory
        def method(self, other):
            if _number(other):
                return self._compare(op, other)
            if isinstance(other, LazyInt):
                return op(self._fixed(), other._fixed())
            return NotImplemented  # a non-number: compared as an int would be
        return method

    __lt__, __le__, __gt__, __ge__ = _cmp(operator.lt), _cmp(operator.le), _cmp(operator.gt), _cmp(operator.ge)
    __eq__, __ne__ = _cmp(operator.eq), _cmp(operator.ne)

    def __bool__(self) -> bool:
        return self._compare(operator.ne, 0)

    # ----- monotone arithmetic with a constant: a view
    def _arith(name, op):  # noqa: N805 - a method factory
        def method(self, other):
            if _constant(other):
                return self._then(name, other)
            if isinstance(other, LazyInt):
                return op(self._fixed(), other._fixed())
            return NotImplemented
        return method

    __add__, __radd__ = _arith("add", operator.add), _arith("radd", lambda a, b: b + a)
    __sub__, __rsub__ = _arith("sub", operator.sub), _arith("rsub", lambda a, b: b - a)
    __mul__, __rmul__ = _arith("mul", operator.mul), _arith("rmul", lambda a, b: b * a)
    __truediv__, __floordiv__ = _arith("truediv", operator.truediv), _arith("floordiv", operator.floordiv)
    __rshift__, __lshift__ = _arith("rshift", operator.rshift), _arith("lshift", operator.lshift)

    def __neg__(self): return self._then("neg")  # noqa: E704
    def __pos__(self): return self._then("pos")  # noqa: E704
    def __invert__(self): return self._then("invert")  # noqa: E704
    def __floor__(self): return self._then("floor")  # noqa: E704
    def __ceil__(self): return self._then("ceil")  # noqa: E704
    def __trunc__(self): return self._then("trunc")  # noqa: E704

    def __round__(self, ndigits=None):
        return self._then("round", ndigits)

    # ----- everything else looks at the value
    def _fixing(op):  # noqa: N805 - a method factory
        def method(self, *args):
            return op(self._fixed(), *(a._fixed() if isinstance(a, LazyInt) else a for a in args))
        return method

    __index__, __int__, __float__, __hash__, __abs__ = (_fixing(operator.index), _fixing(int), _fixing(float),
                                                        _fixing(hash), _fixing(abs))
    __str__, __repr__, __format__ = _fixing(str), _fixing(repr), _fixing(format)
    __mod__, __rmod__ = _fixing(operator.mod), _fixing(lambda a, b: b % a)
    __divmod__, __rdivmod__ = _fixing(divmod), _fixing(lambda a, b: divmod(b, a))
    __pow__, __rpow__ = _fixing(pow), _fixing(lambda a, b: b ** a)
    __rtruediv__, __rfloordiv__ = _fixing(lambda a, b: b / a), _fixing(lambda a, b: b // a)
    __and__, __rand__ = _fixing(operator.and_), _fixing(lambda a, b: b & a)
    __or__, __ror__ = _fixing(operator.or_), _fixing(lambda a, b: b | a)
    __xor__, __rxor__ = _fixing(operator.xor), _fixing(lambda a, b: b ^ a)
    __rrshift__, __rlshift__ = _fixing(lambda a, b: b >> a), _fixing(lambda a, b: b << a)

    def __getattr__(self, name: str) -> Any:  # e.g. .bit_length(), .to_bytes(): methods of the value
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self._fixed(), name)

    del _cmp, _arith, _fixing
