"""Exact output distributions of real code, by enumerating every random choice.

The function runs under a :class:`~vetdp.sampling.sources.BranchingSource` again and
again; each run replays a prefix of choices and takes the first option at every fresh
choice point, and the next prefix advances like an odometer over the run's choice trail.
Every path is visited exactly once, so summing path probabilities per output gives the
exact distribution (rational probabilities that sum to exactly 1).
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np

from vetdp.sampling.sources import BranchingSource, use_source

__all__ = [
    "Raised",
    "EnumerationBudgetExceeded",
    "DEFAULT_BUDGET",
    "enumerate_paths",
    "output_distribution",
    "freeze",
]

DEFAULT_BUDGET = 200_000


class EnumerationBudgetExceeded(RuntimeError):
    """An enumeration would visit more paths than its budget allows."""


@dataclasses.dataclass(frozen=True)
class Raised:
    """The outcome "the function raised": exception type name and message."""

    type: str
    message: str

    def __str__(self) -> str:
        return f"raised {self.type}: {self.message}"


def freeze(value: Any) -> Any:
    """A hashable, comparable form of an output (lists and arrays become tuples)."""
    if isinstance(value, np.ndarray):
        return tuple(freeze(v) for v in value.tolist())
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (list, tuple)):
        return tuple(freeze(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((freeze(k), freeze(v)) for k, v in value.items()))
    if isinstance(value, set):
        return frozenset(freeze(v) for v in value)
    return value


def _next_prefix(trail: list[tuple[int, int]]) -> list[int] | None:
    for pos in range(len(trail) - 1, -1, -1):
        index, options = trail[pos]
        if index + 1 < options:
            return [i for i, _ in trail[:pos]] + [index + 1]
    return None


def enumerate_paths(run: Callable[[], Any], budget: int = DEFAULT_BUDGET, branch_bytes: bool = False,
                    catch: bool = True):
    """Yield ``(output, probability)`` for every path of ``run`` (a callable without arguments).

    Raises :class:`EnumerationBudgetExceeded` once more than ``budget`` paths are needed.
    With ``catch``, an exception on a path becomes the output :class:`Raised`.
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
                "(vetdp check --budget N) or smaller parameters")
        source = BranchingSource(prefix, branch_bytes=branch_bytes)
        with use_source(source):
            try:
                out = freeze(run())
            except Exception as e:  # noqa: BLE001 - an exception is an outcome here
                if not catch:
                    raise
                out = Raised(type(e).__name__, str(e))
        yield out, source.probability
        prefix = _next_prefix(source.trail)


def output_distribution(fn: Callable[[Any], Any], x: Any, budget: int = DEFAULT_BUDGET,
                        branch_bytes: bool = False) -> dict[Any, Fraction]:
    """The exact distribution of ``fn(x)``: output -> probability (a Fraction), summing to 1.

    ``fn`` is typically a Measurement (so the domain check runs first) or its function.
    Exceptions are outcomes (:class:`Raised`).
    """
    dist: dict[Any, Fraction] = defaultdict(Fraction)
    for out, p in enumerate_paths(lambda: fn(x), budget=budget, branch_bytes=branch_bytes):
        dist[out] += p
    total = sum(dist.values(), Fraction(0))
    if total != 1:  # pragma: no cover - would mean a primitive mis-states its probabilities
        raise AssertionError(f"path probabilities sum to {total}, not 1")
    return dict(dist)
