"""Executable Hoare triples: what a spec module under specs/ declares.

A spec module defines ``SPECS``, a list of :class:`MeasurementSpec` and
:class:`EstimatorSpec`. The engine finds every spec module by itself
(:func:`discover_specs`); adding a mechanism never touches the engine.

* Preconditions are data: :class:`BadParams` rows — parameters that must be rejected and
  the exception each must raise.
* The constructor is named (``constructor``) and called through ``build``, so another
  implementation with the same arguments can be vetted against the same spec.
* Postconditions are checked by the engine (:mod:`vetdp.engine.runner`) from the spec's
  finite input sets: the privacy guarantee against the exact truth, data-independent
  errors, rejection of out-of-domain inputs, constant-time byte use, and for estimators
  unbiasedness and the variance formula.
* Parameter spaces are hypothesis strategies that include the boundary floats.
"""

from __future__ import annotations

import dataclasses
import importlib
import math
import pkgutil
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

from hypothesis import strategies as st

from vetdp.core.measurement import Measurement

__all__ = [
    "BadParams",
    "MeasurementSpec",
    "EstimatorSpec",
    "discover_specs",
    "find_spec",
    "boundary_probabilities",
    "at_least",
    "floats_in",
]

Params = dict[str, Any]


@dataclasses.dataclass(frozen=True)
class BadParams:
    """Parameters the constructor must reject with ``error``, its message naming ``names``."""

    id: str
    params: Params
    error: type[BaseException] | tuple[type[BaseException], ...]
    names: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True)
class MeasurementSpec:
    """The Hoare triple of a measurement constructor (see the module docstring)."""

    name: str  # the stem shared with impl/<name>.py and proofs/<name>.md
    constructor: str  # attribute of vetdp.impl.<name>
    build: Callable[[Callable[..., Measurement], Params], Measurement]
    params: Callable[[bool], st.SearchStrategy[Params]]  # deep -> strategy of valid parameters
    examples: Sequence[Params]  # pinned boundary cases, checked first
    bad: Sequence[BadParams]
    inputs: Callable[[Params], list]  # a finite set of in-domain inputs
    outside: Callable[[Params], list]  # inputs outside the domain, which must be rejected before randomness
    d_in: int = 1
    tight: bool = True  # the map must be within 2**-30 (relative) of the exact loss
    constant_time_param: str | None = None  # a bool parameter promising input-independent byte use
    describe: str = ""
    # the neighbouring (x, x') pairs among the (frozen) inputs; None: every ordered pair of distinct inputs
    neighbours: Callable[[Params, list], list[tuple[Any, Any]]] | None = None
    # the reference law, stated independently of any implementation: (params, x) -> {output: P[M(x) = output]},
    # outputs in their frozen form (vetdp.engine.enumerate.freeze). None: the law of our implementation.
    law: Callable[[Params, Any], dict[Any, Fraction]] | None = None
    # the input metric's distance between two inputs; None: the discrete distance (0 if equal, else 1)
    distance: Callable[[Params, Any, Any], int] | None = None
    max_d_in: int = 3  # the map is checked at every d_in in 0..max_d_in (sound or refused, and monotone)
    # labels of the boundary classes a parameter set covers (e.g. "prob = 1/t rounded up"), for the report
    edges: Callable[[Params], list[str]] | None = None

    @property
    def impl_ref(self) -> str:
        return f"vetdp.impl.{self.name}:{self.constructor}"

    def load_constructor(self) -> Callable[..., Measurement]:
        return getattr(importlib.import_module(f"vetdp.impl.{self.name}"), self.constructor)


@dataclasses.dataclass(frozen=True)
class EstimatorSpec:
    """The Hoare triple of a debiasing estimator of a measurement's outputs.

    ``params["dataset"]`` is a small list of true inputs; the engine enumerates the
    mechanism on each, forms the exact joint distribution of the answers, and checks
    ``E[estimate] == truth`` per coordinate, then each claim exactly: ``"variance"`` (a
    list, per coordinate) and ``"mse"`` (E‖estimate − truth‖², one number).
    """

    name: str  # e.g. "debias_randomized_response_bitvec"
    module: str  # the impl stem, e.g. "randomized_response_bitvec"
    estimator: str  # attribute of vetdp.impl.<module>
    mechanism: MeasurementSpec
    params: Callable[[bool], st.SearchStrategy[Params]]  # includes the mechanism's params and "dataset"
    examples: Sequence[Params]
    estimate: Callable[[Callable, list, Params], Sequence[Fraction]]  # exact estimates from answers
    truth: Callable[[Params], Sequence[Fraction]]  # the quantities being estimated
    claims: Callable[[Params], dict[str, Any]]  # {"variance": [...], "mse": value}, from the impl
    bad: Sequence[tuple[str, Callable[[Callable], Any], type[BaseException] | tuple, tuple[str, ...]]] = ()
    describe: str = ""

    def load_estimator(self) -> Callable:
        return getattr(importlib.import_module(f"vetdp.impl.{self.module}"), self.estimator)


def discover_specs() -> list[MeasurementSpec | EstimatorSpec]:
    """Every spec in every module of :mod:`vetdp.specs`, in module order."""
    import vetdp.specs as package

    found: list[MeasurementSpec | EstimatorSpec] = []
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
        module = importlib.import_module(f"vetdp.specs.{info.name}")
        found.extend(getattr(module, "SPECS", []))
    return found


def find_spec(name: str) -> MeasurementSpec | EstimatorSpec:
    specs = {s.name: s for s in discover_specs()}
    if name not in specs:
        raise KeyError(f"spec={name!r} is not one of {sorted(specs)}")
    return specs[name]


# ------------------------------------------------------------------ boundary-aware strategies

def at_least(q: Fraction) -> float:
    """The smallest float64 >= q (the float closest to q from above)."""
    x = float(q)
    return x if Fraction(x) >= q else math.nextafter(x, math.inf)


def floats_in(lo: float, hi: float, edges: Sequence[float] = ()) -> st.SearchStrategy[float]:
    """Floats in [lo, hi]: the given edge floats first, then anything in between."""
    subnormal = lo < 2.2250738585072014e-308
    inner = st.floats(min_value=lo, max_value=hi, allow_nan=False, allow_infinity=False, allow_subnormal=subnormal)
    return st.one_of(st.sampled_from(list(edges)), inner) if edges else inner


def boundary_probabilities(t: int) -> list[float]:
    """prob values at the edges of [1/t, 1): 1/t rounded up, the next float, 1 − 2**-53."""
    lo = at_least(Fraction(1, t))
    return [lo, math.nextafter(lo, 1.0), math.nextafter(1.0, 0.0), 0.5 if Fraction(1, t) <= Fraction(1, 2) else lo]
