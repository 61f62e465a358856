"""Vetting a mechanism whose signature or output shape differs from the spec's (``verify --adapter``).

An *adapter* is any object (a module, a class, an instance) with three callables:

* ``construct(params: dict) -> object`` — build the user's mechanism from the spec's parameters
  (the same dict the spec's strategies and ``--params`` use, e.g. ``{"categories": [...], "prob": 0.75}``);
* ``invoke(mechanism, x) -> output`` — run it on the spec's input ``x`` and return the output in
  the spec's shape (e.g. a category, or a tuple of bools);
* ``privacy_map(mechanism, d_in) -> float`` — the privacy loss the mechanism claims at ``d_in``.

The engine then checks the adapted mechanism exactly like a constructor with our signature. The
adapter is part of the code under test: a wrong translation shows up as a failing clause.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["ADAPTER_METHODS", "AdaptedMeasurement", "adapter_builder", "missing_methods"]

ADAPTER_METHODS = ("construct", "invoke", "privacy_map")


def missing_methods(adapter: Any) -> list[str]:
    """The adapter methods ``adapter`` lacks (empty: it is a complete adapter)."""
    return [name for name in ADAPTER_METHODS if not callable(getattr(adapter, name, None))]


class AdaptedMeasurement:
    """A user's mechanism seen through an adapter: callable on the spec's inputs, with ``map(d_in)``."""

    def __init__(self, adapter: Any, mechanism: Any):
        self.adapter, self.mechanism = adapter, mechanism

    def __call__(self, x: Any) -> Any:
        return self.adapter.invoke(self.mechanism, x)

    def map(self, d_in: Any) -> Any:
        return self.adapter.privacy_map(self.mechanism, d_in)

    def __repr__(self) -> str:
        return f"AdaptedMeasurement({self.mechanism!r})"


def adapter_builder(adapter: Any) -> Callable[[dict], AdaptedMeasurement]:
    """``params -> AdaptedMeasurement`` for a complete adapter; raises TypeError naming the missing methods."""
    missing = missing_methods(adapter)
    if missing:
        raise TypeError(f"adapter={adapter!r} lacks the callable(s) {missing}; an adapter needs "
                        f"{list(ADAPTER_METHODS)}")

    def build(params: dict) -> AdaptedMeasurement:
        return AdaptedMeasurement(adapter, adapter.construct(dict(params)))

    return build
