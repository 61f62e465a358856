"""A privacy map over every input distance d_in, not a few: where it is evaluated and where that decides all d_in.

The loss a map must bound, L(d) = the worst loss over pairs of inputs at distance <= d, never decreases and is
constant from the largest distance D between two inputs on. So map(d) is sound for every d once it is sound at
each d <= D and not below L(D) beyond, and monotone once it never decreases. Two questions remain: at which d to
evaluate the map, and when those values decide every d (:func:`survey_map`).

* **Evaluated** (always): on plain ints, at the landmarks 2^j − 1, 2^j, 2^j + 1 (j <= 64) and 10^j (j <= 19),
  where word sizes and wrap-arounds live (a map that wraps to 0 at d_in = 256 is evaluated there), and at every
  d_in up to :data:`~vetdp.engine.budgets.DISTANCE_SWEEP` (or D, if larger); where the trace decides, up to
  :data:`TRACED_SWEEP` only, plus every d_in of a region where the map computes with d_in that ends within
  DISTANCE_SWEEP.
* **Traced** (when the code allows): the map runs on a traced d_in, an int whose every comparison with a constant
  branches over the interval of d_in values on either side, the way the enumerating source branches over random
  choices. Each run follows one region (an interval of d_in) on which every comparison the code made has one
  outcome. A run that returns a value without computing with d_in returns that value for every d_in of the
  region, unbounded ones included; a run that raises, raises for every d_in of it. Computing with d_in
  (arithmetic, conversion, hashing, the value formatted into a returned result) makes the region *computed*.
  Every region's ends (and the landmarks in it) are among the evaluated points, so each traced outcome is
  confirmed there on plain ints. When every region reaching beyond the evaluated range is traced and confirmed,
  the evaluated points decide every d_in >= 0: a region is constant between its evaluated ends, and its worst
  loss is at an evaluated point (its end, or D).

The tracing assumption: the map's outcome depends on d_in only through operations the traced int sees (C code
reading the int's digits directly does not call them; the confirmation at the region's evaluated points is the
safeguard, and a disagreement withdraws the whole trace). The work is counted: at most :data:`TRACE_REGIONS`
runs of the map and :data:`TRACE_COMPARISONS` comparisons per run, and the evaluated points, never seconds.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from vetdp.engine.budgets import DISTANCE_SWEEP
from vetdp.engine.enumerate import _next_prefix  # the odometer over choices: the same over pieces of d_in

__all__ = ["TracedDistance", "Region", "MapSurvey", "survey_map", "landmarks", "TRACE_REGIONS",
           "TRACE_COMPARISONS", "TRACED_SWEEP"]

TRACE_REGIONS = 64  # runs of the map on a traced d_in (one region each); more: the trace is not used
TRACE_COMPARISONS = 256  # comparisons with d_in in one run; more: the trace is not used
TRACED_SWEEP = 64  # where the trace decides, every d_in up to this is evaluated (else up to DISTANCE_SWEEP)


def landmarks() -> list[int]:
    """2^j − 1, 2^j, 2^j + 1 for j <= 64 and 10^j for j <= 19: the d_in where word sizes and wrap-arounds live."""
    out = {v for j in range(65) for v in (2**j - 1, 2**j, 2**j + 1)} | {10**j for j in range(20)}
    return sorted(out)


class _Computed(BaseException):
    """The map computed with the traced d_in itself: the run's region is *computed* (a BaseException, so that the
    code's ``except Exception`` does not hide it; the tracer's flag records it even if caught)."""


class _TooMany(BaseException):
    """A run compared d_in more than TRACE_COMPARISONS times."""


class _Tracer:
    """One run's region [lo, hi] (hi None: unbounded) and its choices, replaying ``prefix`` then taking piece 0."""

    def __init__(self, prefix: list[int]):
        self.prefix = prefix
        self.trail: list[tuple[int, int]] = []  # (chosen piece, number of pieces) at every branching comparison
        self.lo, self.hi = 0, None
        self.computed = False  # the code computed with d_in
        self.texted = False  # the code turned d_in into text (allowed in a raised error's message only)

    def side(self, c: Fraction) -> int:
        """Where the region's d_in lie relative to ``c``: -1 below, 0 equal, 1 above; branching when several."""
        pieces = []
        if self.lo < c:
            pieces.append(-1)
        if c.denominator == 1 and self.lo <= c and (self.hi is None or c <= self.hi):
            pieces.append(0)
        if self.hi is None or self.hi > c:
            pieces.append(1)
        if len(pieces) > 1:
            position = len(self.trail)
            if position >= TRACE_COMPARISONS:
                raise _TooMany
            index = self.prefix[position] if position < len(self.prefix) else 0
            self.trail.append((index, len(pieces)))
            pieces = [pieces[index]]
        side = pieces[0]
        if side == -1:
            self.hi = math.ceil(c) - 1 if self.hi is None else min(self.hi, math.ceil(c) - 1)
        elif side == 0:
            self.lo = self.hi = int(c)
        else:
            self.lo = max(self.lo, math.floor(c) + 1)
        return side


def _constant(other: Any) -> Fraction | float | None:
    """A real constant compared with d_in, exactly (a Fraction), or ±inf / nan as a float; None otherwise."""
    if isinstance(other, TracedDistance) or not isinstance(other, numbers.Real):
        return None
    if isinstance(other, float) and not math.isfinite(other):
        return other
    try:
        return Fraction(other)
    except (TypeError, ValueError):
        return None


class TracedDistance(int):
    """d_in as a map sees it while traced: comparisons with real constants branch; anything else marks the run
    as computing with d_in (see the module docstring). Its int value, for C code that reads it directly, is the
    region's lower end when the run started."""

    def __new__(cls, tracer: _Tracer) -> TracedDistance:
        obj = super().__new__(cls, tracer.lo)
        obj.__dict__["_tracer"] = tracer
        return obj

    def _compare(self, other: Any, accept: Callable[[int], bool]) -> Any:
        c = _constant(other)
        if c is None:
            return NotImplemented
        if isinstance(c, float):  # nan: unordered; ±inf: every d_in is below +inf and above -inf
            side = None if math.isnan(c) else (-1 if c > 0 else 1)
        else:
            side = self.__dict__["_tracer"].side(c)
        return accept(side)

    def __eq__(self, other: Any) -> Any:
        return self._compare(other, lambda s: s == 0)

    def __ne__(self, other: Any) -> Any:
        return self._compare(other, lambda s: s != 0)

    def __lt__(self, other: Any) -> Any:
        return self._compare(other, lambda s: s == -1)

    def __le__(self, other: Any) -> Any:
        return self._compare(other, lambda s: s in (-1, 0))

    def __gt__(self, other: Any) -> Any:
        return self._compare(other, lambda s: s == 1)

    def __ge__(self, other: Any) -> Any:
        return self._compare(other, lambda s: s in (0, 1))

    def __bool__(self) -> bool:
        return self != 0

    def _text(self) -> str:
        tracer = self.__dict__["_tracer"]
        tracer.texted = True
        return f"d_in in [{tracer.lo}, {'inf' if tracer.hi is None else tracer.hi}]"

    def __str__(self) -> str:
        return self._text()

    def __repr__(self) -> str:
        return self._text()

    def __format__(self, spec: str) -> str:
        return self._text()

    def _computed(self, *args: Any, **kwargs: Any) -> Any:
        self.__dict__["_tracer"].computed = True
        raise _Computed


# every other way to use the value of d_in: arithmetic, conversions, hashing, int's methods and properties
for _name in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__", "__rtruediv__",
              "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__", "__divmod__", "__rdivmod__", "__pow__",
              "__rpow__", "__neg__", "__pos__", "__abs__", "__invert__", "__and__", "__rand__", "__or__", "__ror__",
              "__xor__", "__rxor__", "__lshift__", "__rlshift__", "__rshift__", "__rrshift__", "__int__", "__index__",
              "__float__", "__complex__", "__trunc__", "__floor__", "__ceil__", "__round__", "__hash__",
              "__reduce__", "__reduce_ex__", "__getnewargs__", "__copy__", "__deepcopy__", "__sizeof__",
              "bit_length", "bit_count", "to_bytes", "as_integer_ratio", "conjugate", "is_integer"):
    setattr(TracedDistance, _name, TracedDistance._computed)
for _name in ("numerator", "denominator", "real", "imag"):
    setattr(TracedDistance, _name, property(TracedDistance._computed))


@dataclasses.dataclass(frozen=True)
class Region:
    """An interval [lo, hi] of d_in (hi None: unbounded) and the map's outcome on all of it: ("value", v),
    ("raised", exception type name), or None (the map computes with d_in there: only evaluated points count)."""

    lo: int
    hi: int | None
    outcome: tuple | None

    def __contains__(self, d: int) -> bool:
        return self.lo <= d and (self.hi is None or d <= self.hi)

    def describe(self) -> str:
        span = f"{{{self.lo}}}" if self.hi == self.lo else f"[{self.lo}, {'inf' if self.hi is None else self.hi}]"
        if self.outcome is None:
            return f"{span} computed"
        return f"{span} {self.outcome[1]!r}" if self.outcome[0] == "value" else f"{span} raises {self.outcome[1]}"


@dataclasses.dataclass(frozen=True)
class MapSurvey:
    """The map's outcome at every evaluated d_in (``points``: d -> the value, or the exception it raised) and
    whether those points decide every d_in >= 0 (``universal``, with the traced ``regions``); ``how`` says which
    in a report's words."""

    points: dict[int, Any]
    regions: tuple[Region, ...] | None
    universal: bool
    how: str


def _outcome(value: Any) -> tuple:
    """A run's result as an outcome comparable between the traced and the plain runs."""
    if isinstance(value, BaseException):
        return ("raised", type(value).__name__)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return ("value", repr(value))
    return ("value", float(value))


def _trace(fn: Callable[[Any], Any]) -> tuple[list[Region] | None, str]:
    """The regions of ``fn`` over d_in >= 0, or None and why it could not be traced."""
    regions: list[Region] = []
    prefix: list[int] | None = []
    while prefix is not None:
        if len(regions) >= TRACE_REGIONS:
            return None, f"the map branches into more than {TRACE_REGIONS} regions of d_in"
        tracer = _Tracer(prefix)
        try:
            value: Any = fn(TracedDistance(tracer))
        except _Computed:
            value = None
        except _TooMany:
            return None, f"the map compares d_in more than {TRACE_COMPARISONS} times in one run"
        except Exception as e:  # noqa: BLE001 - a raise is the map's outcome on the region
            value = e
        if isinstance(value, TracedDistance) or tracer.computed or (tracer.texted
                                                                    and not isinstance(value, BaseException)):
            outcome = None
        else:
            outcome = _outcome(value)
        regions.append(Region(tracer.lo, tracer.hi, outcome))
        prefix = _next_prefix(tracer.trail)
    merged: list[Region] = []  # neighbouring regions with one traced outcome are one region
    for r in sorted(regions, key=lambda r: r.lo):
        last = merged[-1] if merged else None
        if last is not None and last.outcome is not None and last.outcome == r.outcome and last.hi == r.lo - 1:
            merged[-1] = Region(last.lo, r.hi, r.outcome)
        else:
            merged.append(r)
    return merged, ""


def survey_map(call: Callable[[int], Any], traced: Callable[[Any], Any] | None, top: int) -> MapSurvey:
    """The map's outcome at every evaluated d_in, and whether that decides every d_in >= 0 (module docstring).

    ``call(d)`` is the map on a plain int (a raise is recorded as the outcome); ``traced`` the same map to run on a
    :class:`TracedDistance` (None: not traced); ``top`` the largest d_in that must be evaluated one by one (at
    least :data:`DISTANCE_SWEEP`). Work: the evaluated points (about ``top`` + 200) plus at most TRACE_REGIONS runs.
    """
    regions, why = _trace(traced) if traced is not None else (None, "the map is not traced")
    # every d_in up to the sweep where the trace does not decide; where it does, the small d_in, the regions' ends
    # and the landmarks, and every d_in of a computed region that ends within the sweep
    traced_to = max(top, TRACED_SWEEP)
    if regions is None or any(r.outcome is None and (r.hi is None or r.hi > DISTANCE_SWEEP) for r in regions):
        traced_to = top = max(top, DISTANCE_SWEEP)
    wanted = set(range(traced_to + 1)) | set(landmarks())
    for r in regions or ():
        wanted |= {r.lo, r.lo + 1} | (set() if r.hi is None else {r.hi, max(r.lo, r.hi - 1)})
        if r.outcome is None and r.hi is not None and r.hi <= DISTANCE_SWEEP:
            wanted |= set(range(r.lo, r.hi + 1))
    points: dict[int, Any] = {}

    def evaluate(ds: set[int]) -> None:
        for d in sorted(ds - set(points)):
            try:
                points[d] = call(d)
            except Exception as e:  # noqa: BLE001 - the raise is the map's outcome at d
                points[d] = e

    def sweep(to: int) -> str:
        return f"evaluated at every d_in <= {to} and at 2^j − 1, 2^j, 2^j + 1 (j <= 64) and 10^j (j <= 19)"

    evaluate(wanted)
    if regions is None:
        return MapSurvey(points, None, False, f"{sweep(traced_to)} ({why})")
    for r in regions:
        if r.outcome is None:
            continue
        differs = next((d for d in points if d in r and _outcome(points[d]) != r.outcome), None)
        if differs is not None:  # the trace is withdrawn: every d_in up to the full sweep is evaluated
            evaluate(set(range(max(top, DISTANCE_SWEEP) + 1)))
            return MapSurvey(points, None, False, f"{sweep(max(top, DISTANCE_SWEEP))} (its trace is not used: "
                             f"traced as {r.describe()}, but map({differs}) gives {_outcome(points[differs])[1]!r})")
    shown = ", ".join(r.describe() for r in regions[:6]) + (", ..." if len(regions) > 6 else "")
    beyond = [r for r in regions if r.outcome is None and (r.hi is None or r.hi > DISTANCE_SWEEP)]
    if not beyond:
        return MapSurvey(points, tuple(regions), True, f"for every d_in >= 0: {len(regions)} traced "
                         f"region{'s' if len(regions) > 1 else ''} ({shown}), each confirmed at its ends; "
                         f"{sweep(traced_to)}")
    return MapSurvey(points, tuple(regions), False, f"{sweep(traced_to)} (beyond, not decided: the map computes with "
                     f"d_in on {beyond[0].describe().removesuffix(' computed')})")
