"""The accountant protocol: how ``vetdp vet accountant`` asks any accountant a composition question.

An **event** (:class:`RREvent`) is ``count`` runs of one randomized-response mechanism,
described by its kind and per-run ε. A **question** is a composition of one or more events
(heterogeneous when there are several) and a target: "ε at δ" or "δ at ε".

An **entry point** is any object with

- ``name: str`` -- how the rows name it (e.g. ``"PLDAccountant.compose(event, count)"``);
- ``epsilon(events, delta) -> float`` and/or ``delta(events, epsilon) -> float`` -- the
  accountant's answer for the composition of ``events`` (a tuple of :class:`RREvent`);
  a missing method means that direction is not asked;
- optionally ``supports(events, direction) -> str | None`` -- a reason when the question
  cannot be expressed (the question is then listed as unsupported, not asked);
- optionally ``repro(events, direction, target) -> str`` -- Python source that reproduces
  the answer with the library alone;
- optionally ``given(event) -> (RRFamily, count)`` -- the mechanism the library was actually
  handed for ``event``: the floats it received, taken exactly (:func:`given_keep_probability`,
  :func:`given_noise_parameter`, :func:`given_pure_epsilon`). An adapter that turns ε into a
  probability rounds it; the battery judges the answer against the exact truth of what was
  handed, so the adapter's rounding is never blamed on the library. Without it the event's ε
  is what the library received (:func:`given_as_asked`).

A **suite** groups the entry points of one library: ``library``, ``version`` and
``entry_points`` (a list of entry points). ``vetdp vet accountant MODULE:ATTR`` accepts an
entry point, a suite, or a class/zero-argument function returning either
(:func:`vetdp.accounting.accountants.load_accountant`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any, Protocol, runtime_checkable

from vetdp.accounting.curves import RRFamily, randomized_response_curve, rappor_curve
from vetdp.core.validation import check_float, check_int, check_interval

__all__ = ["RREvent", "Accountant", "AccountantSuite", "FunctionEntryPoint", "KINDS", "describe_events",
           "reuse_last", "given_as_asked", "given_keep_probability", "given_noise_parameter", "given_pure_epsilon"]

KINDS = ("rr", "categorical_rr", "rappor", "k_rappor")


@dataclasses.dataclass(frozen=True)
class RREvent:
    """``count`` runs of one randomized-response mechanism with per-run ``epsilon``.

    ``kind``: ``"rr"`` (binary RR), ``"categorical_rr"`` (``categories``-ary RR), ``"rappor"``
    (a unary-encoded bit vector, inputs differing in 2 bits, each bit flipped with
    probability 1/(1+e^{ε/2})) or ``"k_rappor"`` (inputs differing in 2k bits, each flipped
    with probability 1/(1+e^{ε/(2k)})). On the worst-case pair one run is ``coordinates``
    independent ``buckets``-ary randomized responses with log-ratio ``step_epsilon``.
    """

    kind: str
    epsilon: float
    count: int
    categories: int = 2
    k: int = 1

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"kind={self.kind!r} must be one of {', '.join(KINDS)}")
        eps = check_float("epsilon", self.epsilon)
        check_interval("epsilon", eps, 0, 700, lo_closed=False, hi_closed=True)
        check_int("count", self.count, lo=1)
        check_int("categories", self.categories, lo=2)
        check_int("k", self.k, lo=1)
        if self.kind == "rr" and self.categories != 2:
            raise ValueError(f"categories={self.categories} must be 2 for kind='rr' (use 'categorical_rr')")
        if self.kind == "categorical_rr" and self.categories < 3:
            raise ValueError(f"categories={self.categories} must be in [3, inf) for kind='categorical_rr'")
        if self.kind != "k_rappor" and self.k != 1:
            raise ValueError(f"k={self.k} must be 1 unless kind='k_rappor'")
        if self.kind in ("rappor", "k_rappor") and self.categories != 2:
            raise ValueError(f"categories={self.categories} must be 2 for kind={self.kind!r}")

    @property
    def coordinates(self) -> int:
        """Independent RR coordinates one run changes on the worst-case pair (1, or 2k for RAPPOR)."""
        return 2 * self.k if self.kind in ("rappor", "k_rappor") else 1

    @property
    def buckets(self) -> int:
        """Categories of each coordinate's randomized response."""
        return self.categories

    @property
    def step_epsilon(self) -> float:
        """The log-ratio a of one coordinate (ε/(2k) for RAPPOR), rounded to nearest."""
        return self.epsilon / self.coordinates

    @property
    def steps(self) -> int:
        """count × coordinates: the number of single-coordinate RR events the composition holds."""
        return self.count * self.coordinates

    @property
    def noise_parameter(self) -> float:
        """dp_accounting's noise parameter of one coordinate: the probability t/(e^a + t − 1) of replacing the
        value by a uniform draw over all t buckets."""
        t, a = self.buckets, self.step_epsilon
        if a <= 700:  # e^a finite: one rounding in exp, the sum and the quotient each
            return t / (math.exp(a) + (t - 1))
        return t * (math.exp(-a) / (1 + (t - 1) * math.exp(-a)))

    @property
    def keep_probability(self) -> float:
        """The probability e^a/(e^a + t − 1) that one coordinate reports its true value."""
        t, a = self.buckets, self.step_epsilon
        return 1 / (1 + (t - 1) * math.exp(-a))

    def family(self) -> RRFamily:
        """The exact loss model of one run (ε taken exactly as the float given)."""
        if self.kind in ("rr", "categorical_rr"):
            return randomized_response_curve(self.epsilon, categories=self.categories)
        return rappor_curve(self.epsilon, k=self.k)

    def describe(self) -> str:
        extra = f", t={self.categories}" if self.kind == "categorical_rr" else (
            f", k={self.k}" if self.kind == "k_rappor" else "")
        return f"{self.kind}(ε={self.epsilon!r}{extra})×{self.count}"

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "epsilon": self.epsilon, "count": self.count, "categories": self.categories,
                "k": self.k}


def describe_events(events: Sequence[RREvent]) -> str:
    """``rr(ε=1.0)×10 ∘ rappor(ε=2.0)×5``."""
    return " ∘ ".join(e.describe() for e in events)


@runtime_checkable
class Accountant(Protocol):
    """One entry point of an accountant (see the module docstring; ``epsilon``/``delta`` may be absent)."""

    name: str


@dataclasses.dataclass
class AccountantSuite:
    """The entry points of one library (``library``, its ``version``)."""

    library: str
    version: str
    entry_points: list


@dataclasses.dataclass(frozen=True)
class FunctionEntryPoint:
    """An entry point made of plain functions (what the built-in adapters use)."""

    name: str
    epsilon_fn: Callable[[Sequence[RREvent], float], float] | None = None
    delta_fn: Callable[[Sequence[RREvent], float], float] | None = None
    supports_fn: Callable[[Sequence[RREvent], str], str | None] | None = None
    repro_fn: Callable[[Sequence[RREvent], str, float], str] | None = None
    given_fn: Callable[[RREvent], tuple[RRFamily, int]] | None = None

    def __getattr__(self, item: str) -> Any:  # expose epsilon/delta only when the function exists
        if item == "epsilon" and self.epsilon_fn is not None:
            return self.epsilon_fn
        if item == "delta" and self.delta_fn is not None:
            return self.delta_fn
        raise AttributeError(item)

    def supports(self, events: Sequence[RREvent], direction: str) -> str | None:
        return self.supports_fn(events, direction) if self.supports_fn else None

    def repro(self, events: Sequence[RREvent], direction: str, target: float) -> str:
        return self.repro_fn(events, direction, target) if self.repro_fn else ""

    def given(self, event: RREvent) -> tuple[RRFamily, int]:
        return self.given_fn(event) if self.given_fn else given_as_asked(event)


# ---------------------------------------------------------------- what a library was handed, exactly

def given_as_asked(event: RREvent) -> tuple[RRFamily, int]:
    """(family, count) of ``event`` itself: its float ε taken exactly (what an accountant taking ε receives)."""
    return event.family(), event.count


def given_keep_probability(event: RREvent, p: float) -> tuple[RRFamily, int]:
    """``event.steps`` binary randomized responses that keep the truth with the float ``p`` exactly (ratio
    p/(1 − p)): what a library handed p per coordinate accounts. ValueError unless p in [1/2, 1)."""
    if event.buckets != 2:
        raise ValueError(f"event={event.describe()} is not binary; a keep probability describes binary RR here")
    family = randomized_response_curve(prob=p, categories=2)
    return dataclasses.replace(family, name=f"binary RR keeping p={p!r}"), event.steps


def given_noise_parameter(event: RREvent, nu: float) -> tuple[RRFamily, int]:
    """``event.steps`` t-ary randomized responses that answer uniformly with the float probability ``nu`` exactly
    (keep 1 − ν + ν/t, each other value ν/t: ratio t/ν − (t − 1)), dp_accounting's RandomizedResponseDpEvent.
    ValueError unless ν in (0, 1]."""
    v = check_float("noise_parameter", nu)
    check_interval("noise_parameter", v, 0, 1, lo_closed=False, hi_closed=True)
    t = event.buckets
    return RRFamily(t, 1, ratio=t / Fraction(v) - (t - 1), name=f"{t}-ary RR with noise ν={v!r}"), event.steps


def given_pure_epsilon(event: RREvent, a: float) -> tuple[RRFamily, int]:
    """``event.steps`` ε-DP mechanisms of the float ε = ``a`` exactly: what an accountant of pure DP must bound,
    whose worst case is binary randomized response with log-ratio a (it dominates every a-DP pair)."""
    v = check_float("epsilon", a)
    check_interval("epsilon", v, 0, None, lo_closed=False, hi_closed=False)
    return RRFamily(2, 1, epsilon=Fraction(v), name=f"binary RR of log-ratio {v!r}"), event.steps


def reuse_last(build: Callable[[Sequence[RREvent]], Any]) -> Callable[[Sequence[RREvent]], Any]:
    """``build`` (events -> a library's composed accountant), returning the same object again while it is asked
    about the same events: the battery asks ε at δ and then δ at ε of one composition, and composing it is most of
    the cost. Only for accountants whose queries do not change them (dp_accounting, autodp): both answers are then
    those of a freshly built accountant, as each row's reproduction builds it. A ``build`` that raises is called
    again next time (nothing is kept)."""
    last: list = []

    def built(events: Sequence[RREvent]) -> Any:
        key = tuple(events)
        if not last or last[0] != key:
            last[:] = [key, build(events)]
        return last[1]

    return built
