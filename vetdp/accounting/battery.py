"""The accountant battery: composition questions with certified exact answers, and the verdict on an accountant.

A question composes one or more :class:`~vetdp.accounting.accountants.RREvent` and asks
either ε at δ (``direction="epsilon"``, ``target`` = δ) or δ at ε (``"delta"``, ``target`` = ε).
Its exact answer is bracketed with certainty: by :class:`~vetdp.accounting.pld.ExactPLD`
for one event, by :class:`~vetdp.accounting.mixed_pld.MixedPLD` for several. An accountant's
answer is then

- ``"violation"``: below the exact lower end of what the library was handed (it claims more privacy than
  that composition has): the library is wrong for its input. When what it was handed is the question's
  composition with a parameter rounded (ε → a float probability), the answer must also be below the
  question's exact lower end: a library is never convicted on the rounding of vetdp's translation;
- ``"translation"``: below one of the two exact lower ends but not the other (for a rounded parameter): the
  difference is the float rounding of the adapter's translation of the question, not the library's; reported
  apart, never a violation;
- ``"loose"``: above the exact upper end by more than the ``tight`` factor (``ratio`` = answer/exact upper);
- ``"ok"``: otherwise;
- ``"error"``: the library raised, or returned something that is not a number.

What the library was handed is the entry point's ``given(event)`` (see
:mod:`vetdp.accounting.accountants.protocol`): e.g. autodp receives p = fl(e^a/(1 + e^a)), whose exact
log-ratio ln(p/(1 − p)) is not a, and its exact truth is computed for that p; prv_accountant is handed the
binary RR that dominates categorical RR (a substitute, not a rounding: judged against it alone).

The full battery covers pure-DP binary RR, categorical RR (t = 4, 16), RAPPOR and k-RAPPOR
(k = 4) over ε from 1e-3 to 20 and counts from 1 to 10⁴ (pairs whose composed loss the
libraries can represent: ε·√count <= 10 or count <= 10), δ from 1e-3 to 1e-12, both
directions, and heterogeneous compositions; :func:`quick_battery` is a subset that runs in seconds.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import math
import time
from collections.abc import Callable, Sequence
from typing import Any

from vetdp import progress
from vetdp.accounting.accountants.protocol import AccountantSuite, RREvent, describe_events, given_as_asked
from vetdp.accounting.curves import RRFamily
from vetdp.accounting.mixed_pld import MixedPLD, group_key
from vetdp.accounting.pld import ExactPLD

__all__ = ["Question", "Row", "Given", "BatteryResult", "full_battery", "quick_battery", "ExactOracle", "judge",
           "run_battery", "STATUSES"]

STATUSES = ("violation", "translation", "loose", "ok", "error")
ROUNDING_RELATIVE = 2.0**-50  # a shortfall this small (relative) is labelled float-rounding size (still a violation)

Parts = tuple[tuple[RRFamily, int], ...]  # a composition: (one run's exact family, count) per part

EPSILONS = (1e-3, 0.01, 0.1, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0)
COUNTS = (1, 10, 100, 1000, 10_000)
DELTAS = (1e-3, 1e-6, 1e-9, 1e-12)


@dataclasses.dataclass(frozen=True)
class Question:
    """Compose ``events``; ask ε at δ = ``target`` (direction "epsilon") or δ at ε = ``target`` ("delta")."""

    events: tuple[RREvent, ...]
    direction: str
    target: float

    def __post_init__(self):
        if self.direction not in ("epsilon", "delta"):
            raise ValueError(f"direction={self.direction!r} must be 'epsilon' or 'delta'")
        if not self.events:
            raise ValueError("events=() must hold at least one RREvent")

    @property
    def id(self) -> str:
        ask = f"ε@δ={self.target!r}" if self.direction == "epsilon" else f"δ@ε={self.target!r}"
        return f"{describe_events(self.events)} {ask}"

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "events": [e.as_dict() for e in self.events], "direction": self.direction,
                "target": self.target, "heterogeneous": len(self.events) > 1}


@dataclasses.dataclass(frozen=True)
class Row:
    """One entry point's answer to one question and its verdict."""

    question: Question
    entry_point: str
    answer: float | None
    exact_lower: float
    exact_upper: float
    status: str
    ratio: float | None
    message: str
    repro: str
    seconds: float
    given: str | None = None  # what the library was handed, when its exact truth differs from the question's
    given_lower: float | None = None
    given_upper: float | None = None
    given_kind: str | None = None  # "rounding" (the question's composition, a parameter rounded) or "substitute"

    @property
    def direction(self) -> str:
        return self.question.direction

    def as_dict(self) -> dict[str, Any]:
        return {"question": self.question.as_dict(), "entry_point": self.entry_point, "direction": self.direction,
                "answer": _json_float(self.answer), "exact_lower": self.exact_lower, "exact_upper": self.exact_upper,
                "given": self.given, "given_lower": self.given_lower, "given_upper": self.given_upper,
                "given_kind": self.given_kind,
                "status": self.status, "ratio": _json_float(self.ratio), "message": self.message, "repro": self.repro,
                "shortfall": self.shortfall, "seconds": round(self.seconds, 6)}

    @property
    def shortfall(self) -> float | None:
        """How far below an exact lower end the answer is, relative to it: for a violation the least such
        amount over the ends it is below (what the library cannot blame on translation), for a translation row
        the amount below the one end it misses; None otherwise."""
        if self.answer is None or self.status not in ("violation", "translation"):
            return None
        ends = [(self.exact_lower, self.exact_upper)] if self.given_lower is None else (
            [(self.given_lower, self.given_upper)] if self.given_kind == "substitute" and self.status == "violation"
            else [(self.exact_lower, self.exact_upper), (self.given_lower, self.given_upper)])
        below = [(lo - self.answer) / lo if lo > 0 else math.inf for lo, hi in ends
                 if _below(self.direction, self.answer, lo, hi)]
        if not below:
            return None
        return min(below) if self.status == "violation" else max(below)


def _below(direction: str, x: float, lower: float, upper: float) -> bool:
    """Whether ``x`` is certainly below the exact answer: ε is certified in (lower, upper] (so an answer equal to
    lower is below it, unless lower = upper: the exact ε is that value, e.g. 0), δ in [lower, upper]."""
    return x < lower or (direction == "epsilon" and x == lower < upper)


def _json_float(x: float | None) -> float | None:
    return x if x is not None and math.isfinite(x) else None


@dataclasses.dataclass
class BatteryResult:
    library: str
    version: str
    rows: list[Row]
    unsupported: dict[str, dict[str, Any]]  # entry point -> {"count", "reason"}
    seconds: float
    exact_seconds: float

    def summary(self) -> dict[str, int]:
        return {s: sum(r.status == s for r in self.rows) for s in STATUSES}

    def as_dict(self) -> dict[str, Any]:
        return {"schema_version": 1, "library": self.library, "version": self.version,
                "rows": [r.as_dict() for r in self.rows], "summary": self.summary(),
                "unsupported": self.unsupported, "seconds": round(self.seconds, 3),
                "exact_seconds": round(self.exact_seconds, 3)}


# ---------------------------------------------------------------------- the questions

def _kinds() -> list[Callable[[float, int], RREvent]]:
    return [lambda e, n: RREvent("rr", e, n),
            lambda e, n: RREvent("categorical_rr", e, n, categories=4),
            lambda e, n: RREvent("categorical_rr", e, n, categories=16),
            lambda e, n: RREvent("rappor", e, n),
            lambda e, n: RREvent("k_rappor", e, n, k=4)]


def _heterogeneous() -> list[tuple[RREvent, ...]]:
    return [
        (RREvent("rr", 1.0, 50), RREvent("rr", 0.3, 200)),
        (RREvent("rr", 0.5, 20), RREvent("rappor", 1.0, 20)),  # equal steps (a = 0.5): merges to one group
        (RREvent("rr", 1.0, 10), RREvent("categorical_rr", 2.0, 10, categories=4), RREvent("k_rappor", 1.0, 10, k=2)),
        (RREvent("rr", 0.1, 1000), RREvent("rr", 2.0, 5)),
        (RREvent("rr", 5.0, 2), RREvent("rappor", 0.2, 100)),
        (RREvent("categorical_rr", 0.5, 100, categories=16), RREvent("rr", 0.05, 1000)),
    ]


def full_battery() -> list[tuple[tuple[RREvent, ...], float]]:
    """(events, δ) of the full battery; each is asked ε at δ, then δ at the exact ε rounded to 3 digits."""
    out = []
    i = 0
    for make in _kinds():
        for eps in EPSILONS:
            for n in COUNTS:
                if n <= 10 or eps * math.sqrt(n) <= 10:
                    out.append(((make(eps, n),), DELTAS[i % len(DELTAS)]))
                    i += 1
    for j, events in enumerate(_heterogeneous()):
        out.append((events, DELTAS[j % len(DELTAS)]))
    return out


def quick_battery() -> list[tuple[tuple[RREvent, ...], float]]:
    """A subset of :func:`full_battery` in spirit that runs in seconds: every kind, both directions, a mixture."""
    return [
        ((RREvent("rr", 1.0, 10),), 1e-6),
        ((RREvent("rr", 20.0, 1),), 1e-12),
        ((RREvent("rr", 0.01, 300),), 1e-3),
        ((RREvent("categorical_rr", 2.0, 50, categories=4),), 1e-6),
        ((RREvent("rappor", 1.0, 100),), 1e-6),
        ((RREvent("k_rappor", 0.5, 30, k=2),), 1e-9),
        ((RREvent("rr", 1.0, 10), RREvent("rappor", 2.0, 5)), 1e-6),
    ]


# ---------------------------------------------------------------------- exact answers

def _canonical(parts: Parts) -> tuple[tuple[tuple, int], ...]:
    """A composition's identity: (group key, single-coordinate steps) per distinct step, sorted (two compositions
    with equal identities have the same PLD)."""
    steps: dict[tuple, int] = {}
    for family, count in parts:
        key = group_key(family)
        steps[key] = steps.get(key, 0) + count * family.coordinates
    return tuple(sorted(steps.items(), key=repr))


def parts_of(events: Sequence[RREvent]) -> Parts:
    """The composition the question asks about: each event's ε taken exactly."""
    return tuple(given_as_asked(e) for e in events)


def describe_parts(parts: Parts) -> str:
    return " ∘ ".join(f"{f.name or f.describe()}×{n}" for f, n in parts)


class ExactOracle:
    """Certified exact brackets, one PLD per composition and one bracket per question (both cached: a question is
    asked of every entry point, and again for the mechanism each entry point was handed)."""

    def __init__(self):
        self._cache: dict[tuple, Any] = {}
        self._brackets: dict[tuple, tuple[float, float]] = {}
        self.seconds = 0.0

    def pld(self, events: Sequence[RREvent]) -> Any:
        """The exact PLD of the composition of ``events`` as asked."""
        return self.pld_of(parts_of(events))

    def pld_of(self, parts: Parts) -> Any:
        """The exact PLD of ``parts``: :class:`ExactPLD` when every step is alike, else :class:`MixedPLD`."""
        key = _canonical(parts)
        if key not in self._cache:
            t0 = time.perf_counter()
            groups: dict[tuple, list] = {}
            for family, count in parts:
                g = groups.setdefault(group_key(family), [dataclasses.replace(family, coordinates=1), 0])
                g[1] += count * family.coordinates
            if len(groups) == 1:
                (family, steps), = groups.values()
                self._cache[key] = ExactPLD(family, steps)
            else:
                self._cache[key] = MixedPLD([(f, n) for f, n in groups.values()])
            self.seconds += time.perf_counter() - t0
        return self._cache[key]

    def bracket(self, q: Question) -> tuple[float, float]:
        """Certified (lower, upper) of the exact answer: ε in (lower, upper] or δ in [lower, upper]."""
        return self.bracket_of(parts_of(q.events), q.direction, q.target)

    def bracket_of(self, parts: Parts, direction: str, target: float) -> tuple[float, float]:
        """As :meth:`bracket`, for the composition ``parts`` (e.g. what a library was handed)."""
        key = (_canonical(parts), direction, target)
        if key in self._brackets:
            return self._brackets[key]
        pld = self.pld_of(parts)
        t0 = time.perf_counter()
        if direction == "epsilon":
            r = pld.epsilon(target)
            out = (r.epsilon_lower, r.epsilon)
        else:
            out = pld.delta_bounds(target)
        self.seconds += time.perf_counter() - t0
        self._brackets[key] = out
        return out


def questions_for(spec: Sequence[tuple[tuple[RREvent, ...], float]], oracle: ExactOracle) -> list[Question]:
    """Both directions for each (events, δ): ε at δ, and δ at the exact ε rounded to 3 significant digits."""
    out = []
    for i, (events, delta) in enumerate(spec):
        progress.step("exact brackets", i + 1, len(spec), describe_events(events))
        qe = Question(events, "epsilon", delta)
        _, upper = oracle.bracket(qe)
        out.append(qe)
        out.append(Question(events, "delta", float(f"{upper:.3g}")))
    return out


# ---------------------------------------------------------------------- verdicts

@dataclasses.dataclass(frozen=True)
class Given:
    """The exact bracket of what an entry point was handed, when it is not the question's composition: its
    ``description``, ``lower``/``upper`` ends, and ``rounding`` (the question's composition with a parameter
    rounded, same categories and steps) or not (a substitute, e.g. the binary RR dominating categorical RR)."""

    description: str
    lower: float
    upper: float
    rounding: bool


def judge(direction: str, answer: object, lower: float, upper: float, tight: float = 1.01,
          given: Given | None = None) -> tuple[str, float | None, str]:
    """(status, ratio, message) of ``answer`` against the exact bracket [lower, upper] of the question as asked and,
    when ``given`` is not None, the exact bracket of what the library was handed (see the module docstring). The
    ratio is always to the question's exact upper end."""
    name = "ε" if direction == "epsilon" else "δ"
    if isinstance(answer, bool) or not isinstance(answer, (int, float)):
        return "error", None, f"returned {answer!r} ({type(answer).__name__}), not a number"
    x = float(answer)
    if math.isnan(x):
        return "error", None, f"returned {name}=nan"
    cmp = ">" if direction == "epsilon" else ">="
    lo_mark = "(" if direction == "epsilon" else "["
    ratio = x / upper if upper > 0 else (1.0 if x == 0 else math.inf)

    def short(lo: float) -> float:
        return (lo - x) / lo if lo > 0 else math.inf

    def below(lo: float, hi: float) -> bool:
        return _below(direction, x, lo, hi)

    def size(r: float) -> str:
        if r == 0:  # the answer is the certified lower end itself: the exact ε lies above this float
            return "by less than one ulp (float-rounding size)"
        return f"by {r:.3g} relative" + (" (float-rounding size)" if r <= ROUNDING_RELATIVE else "")

    if given is None:
        if below(lower, upper):
            return "violation", ratio if upper > 0 else None, (
                f"{name}={x!r} is below the exact {name}, certified {cmp} {lower!r}, {size(short(lower))}: the "
                "accountant claims more privacy than the composition has")
    else:
        handed = f"{given.description}, in {lo_mark}{given.lower!r}, {given.upper!r}]"
        if below(given.lower, given.upper) and (below(lower, upper) or not given.rounding):
            also = (f" and below the exact {name} as asked, certified {cmp} {lower!r}" if given.rounding else
                    f" (the question as asked: exact {name} {cmp} {lower!r})")
            amount = min(short(given.lower), short(lower)) if given.rounding else short(given.lower)
            return "violation", ratio if upper > 0 else None, (
                f"{name}={x!r} is below the exact {name} of what the library was handed, {handed},{also}, "
                f"{size(amount)}: the accountant claims more privacy than the composition has")
        if below(lower, upper) or below(given.lower, given.upper):
            which = (f"the exact {name} as asked, certified {cmp} {lower!r}, {size(short(lower))}, but not below "
                     f"the exact {name} of what the library was handed, {handed}" if below(lower, upper) else
                     f"the exact {name} of what the library was handed, {handed}, {size(short(given.lower))}, but "
                     f"not below the exact {name} as asked, certified {cmp} {lower!r}")
            return "translation", ratio, (f"{name}={x!r} is below {which}: the difference is the float rounding of "
                                          "vetdp's translation of the question, not a finding")
    if ratio > tight:
        return "loose", ratio, f"{name}={x!r} is {ratio:.6g}× the exact {upper!r}"
    return "ok", ratio, ""


def run_battery(suite: AccountantSuite, spec: Sequence[tuple[tuple[RREvent, ...], float]], *,
                entry_glob: str | None = None, tight: float = 1.01, oracle: ExactOracle | None = None) -> BatteryResult:
    """Ask every selected entry point of ``suite`` every question of ``spec`` (both directions) and judge it.

    ``entry_glob`` selects entry points whose name matches it (fnmatch) or contains it; selecting none is a
    ValueError. Progress (:mod:`vetdp.progress`): a step per composition for the exact brackets, then per question.
    A library exception becomes an "error" row; nothing is skipped silently (unsupported
    questions are counted per entry point with the reason).
    """
    t_start = time.perf_counter()
    oracle = oracle or ExactOracle()
    eps = [e for e in suite.entry_points if entry_glob is None or fnmatch.fnmatchcase(e.name, entry_glob)
           or entry_glob in e.name]
    if not eps:
        names = ", ".join(e.name for e in suite.entry_points)
        raise ValueError(f"entry_glob={entry_glob!r} selects no entry point of {suite.library} (they are: {names})")
    questions = questions_for(spec, oracle)
    rows: list[Row] = []
    unsupported: dict[str, dict[str, Any]] = {}
    for i, q in enumerate(questions):
        progress.step("questions", i + 1, len(questions), q.id)
        _ask_all(q, eps, oracle, tight, rows, unsupported)
    return BatteryResult(suite.library, suite.version, rows, unsupported, time.perf_counter() - t_start,
                         oracle.seconds)


def _given(ep: Any, q: Question, oracle: ExactOracle) -> Given | None:
    """The exact bracket of what ``ep`` is handed for ``q``'s events, when that is another composition than the
    question's (None: the same)."""
    if not hasattr(ep, "given"):
        return None
    parts = tuple(ep.given(e) for e in q.events)
    if _canonical(parts) == _canonical(parts_of(q.events)):
        return None
    lower, upper = oracle.bracket_of(parts, q.direction, q.target)
    rounding = all(f.categories == e.buckets and n * f.coordinates == e.steps
                   for (f, n), e in zip(parts, q.events, strict=True))
    return Given(describe_parts(parts), lower, upper, rounding)


def _ask_all(q: Question, eps: list, oracle: ExactOracle, tight: float, rows: list[Row],
             unsupported: dict[str, dict[str, Any]]) -> None:
    """Ask every entry point in ``eps`` question ``q``; append its rows, count what is not asked."""
    lower, upper = oracle.bracket(q)
    for ep in eps:
        progress.note(ep.name)
        fn = getattr(ep, q.direction, None)
        reason = None if fn is not None else f"no {q.direction}() method"
        if reason is None and hasattr(ep, "supports"):
            reason, error = _fenced(ep, "supports()", q, ep.supports, q.events, q.direction)
            if error is not None:  # a failing supports() is the library's error
                rows.append(_error_row(q, ep, lower, upper, error, 0.0))
                continue
        if reason:
            u = unsupported.setdefault(ep.name, {"count": 0, "reason": reason})
            u["count"] += 1
            continue
        t0 = time.perf_counter()
        answer, error = _fenced(ep, f"{q.direction}()", q, fn, q.events, q.target)
        if error is not None:  # the library's failure is a row, not a crash
            rows.append(_error_row(q, ep, lower, upper, error, time.perf_counter() - t0))
            continue
        seconds = time.perf_counter() - t0
        try:
            given = _given(ep, q, oracle)
        except (ValueError, TypeError) as e:  # the adapter cannot say what it handed: an error row, said why
            rows.append(_error_row(q, ep, lower, upper, ValueError(f"given(): {e}"), seconds))
            continue
        status, ratio, message = judge(q.direction, answer, lower, upper, tight, given)
        value = float(answer) if isinstance(answer, (int, float)) and not isinstance(answer, bool) else None
        rows.append(Row(q, ep.name, value, lower, upper, status, ratio, message, _repro(ep, q, lower, upper, given),
                        seconds, *((given.description, given.lower, given.upper,
                                    "rounding" if given.rounding else "substitute") if given else (None,) * 4)))


def _fenced(ep: Any, method: str, q: Question, fn: Callable, *args: Any) -> tuple[Any, BaseException | None]:
    """``(fn(*args), None)``, or ``(None, the exception)`` when it raised, called ``sys.exit``/``os._exit`` or raised
    KeyboardInterrupt (:func:`vetdp.fence.fenced`). A hang past the safety limit (``--time-limit``) raises
    :class:`vetdp.fence.UserCodeError` (stopped: no verdict), which ends the battery."""
    from vetdp import fence

    try:
        with fence.fenced(f"accountant entry point {ep.name!r}:", f"{method} on {q.id}"):
            try:
                return fn(*args), None
            except Exception as e:  # noqa: BLE001 - reported as the library raised it
                return None, e
    except fence.UserCodeError as e:
        if e.stopped:
            raise
        return None, e


def _error_row(q: Question, ep: Any, lower: float, upper: float, exc: BaseException, seconds: float) -> Row:
    from vetdp.fence import UserCodeError

    message = str(exc) if isinstance(exc, UserCodeError) else f"{type(exc).__name__}: {exc}"
    return Row(q, ep.name, None, lower, upper, "error", None, message[:500], _repro(ep, q, lower, upper), seconds)


def _repro(ep: Any, q: Question, lower: float, upper: float, given: Given | None = None) -> str:
    try:
        src = ep.repro(q.events, q.direction, q.target) if hasattr(ep, "repro") else ""
    except Exception as e:  # noqa: BLE001
        src = f"# repro() failed: {type(e).__name__}: {e}"
    if q.direction == "epsilon":
        exact = f"# vetdp exact: ε in ({lower!r}, {upper!r}] at δ={q.target!r} for {describe_events(q.events)}"
    else:
        exact = f"# vetdp exact: δ in [{lower!r}, {upper!r}] at ε={q.target!r} for {describe_events(q.events)}"
    if given is not None:
        lo, hi = ("(", "]") if q.direction == "epsilon" else ("[", "]")
        exact += (f"\n# vetdp exact for what the library was handed, {given.description}: {lo}{given.lower!r}, "
                  f"{given.upper!r}{hi}")
    return (src + "\n" + exact) if src else exact
