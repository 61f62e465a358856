"""Domains, metrics, measures and the Measurement type, shaped like OpenDP's.

A :class:`Measurement` checks that its argument belongs to ``input_domain`` *before* its
function runs (so before any randomness is drawn), validates ``d_in`` against its
``input_metric`` before the privacy map runs, and compares ``map(d_in)`` with ``d_out``
exactly.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from typing import Any

from vetdp.arith.expr import Expr
from vetdp.core.validation import check_float, check_int

__all__ = [
    "DomainError",
    "DomainTypeError",
    "Domain",
    "AtomDomain",
    "IndexDomain",
    "BitVectorDomain",
    "as_bit_rows",
    "bitvector_domain",
    "atom_domain",
    "Metric",
    "DiscreteDistance",
    "discrete_distance",
    "Measure",
    "MaxDivergence",
    "max_divergence",
    "PrivacyConstant",
    "Measurement",
    "as_bit_tuple",
]


class DomainError(ValueError):
    """An argument is not a member of the measurement's input domain."""


class DomainTypeError(DomainError, TypeError):
    """An argument has the wrong type for the input domain."""


# ------------------------------------------------------------------ domains

class Domain:
    """A set of values a measurement accepts."""

    def check_member(self, x: Any) -> Any:
        """``x`` (possibly normalised) when it is a member; DomainError otherwise."""
        raise DomainTypeError(f"{type(self).__name__} has no members")  # pragma: no cover

    def member(self, x: Any) -> bool:
        try:
            self.check_member(x)
        except (DomainError, TypeError, ValueError):
            return False
        return True


@dataclasses.dataclass(frozen=True)
class AtomDomain(Domain):
    """Single values of type ``T`` (NaN floats excluded)."""

    T: type

    def check_member(self, x: Any) -> Any:
        if self.T is bool and _is_numpy_bool(x):
            return bool(x)  # NumPy's bool scalar is a bool (it is not a subclass of Python's)
        # bool is a subclass of int: a bool domain takes only bools, an int domain no bools
        if not isinstance(x, self.T) or (self.T is int and isinstance(x, bool)):
            raise DomainTypeError(f"x={x!r} must be of type {self.T.__name__}, not {type(x).__name__}")
        if isinstance(x, float) and math.isnan(x):
            raise DomainError(f"x={x!r} must not be NaN")
        return x

    def __repr__(self) -> str:
        return f"AtomDomain({self.T.__name__})"


@dataclasses.dataclass(frozen=True)
class IndexDomain(Domain):
    """The values 0, 1, ..., size − 1 (Python or NumPy ints; bools are not values)."""

    size: int

    def check_member(self, x: Any) -> int:
        if isinstance(x, bool) or _is_numpy_bool(x) or not isinstance(x, numbers.Integral):
            raise DomainTypeError(f"x={x!r} must be an int in [0, {self.size}), not {type(x).__name__}")
        if not 0 <= int(x) < self.size:
            raise DomainError(f"x={x!r} must be in [0, {self.size})")
        return int(x)

    def __repr__(self) -> str:
        return f"IndexDomain({self.size})"


def atom_domain(T: type) -> AtomDomain:
    if not isinstance(T, type):
        raise TypeError(f"T={T!r} must be a type")
    return AtomDomain(T)


def _is_numpy_bool(b: Any) -> bool:
    """Whether ``b`` is a NumPy bool scalar (``np.True_``/``np.False_``), without importing NumPy here."""
    t = type(b)
    return t.__module__ == "numpy" and t.__name__ in ("bool_", "bool")


def as_bit_tuple(name: str, x: Any) -> tuple[bool, ...]:
    """``x`` (a 1-D sequence of 0/1 or bools, or a NumPy array of them: bool or integer dtype, NumPy bool and
    integer scalars are bits too) as a tuple of bools; DomainError naming the first element that is not a bit."""
    if isinstance(x, (str, bytes)):
        raise DomainTypeError(f"{name}={x!r} must be a sequence of 0/1 bits, not {type(x).__name__}")
    shape = getattr(x, "shape", None)
    if shape is not None and len(shape) != 1:
        raise DomainError(f"{name} must be one-dimensional, got shape {shape}")
    if shape is None and not isinstance(x, Sequence):  # sets, dicts, iterators: no defined bit order
        raise DomainTypeError(f"{name}={x!r} must be a sequence of 0/1 bits (list, tuple or 1-D NumPy array), "
                              f"not {type(x).__name__}")
    try:
        items = list(x)
    except TypeError:
        raise DomainTypeError(f"{name}={x!r} must be a sequence of 0/1 bits, not {type(x).__name__}") from None
    out = []
    for i, b in enumerate(items):
        if (isinstance(b, numbers.Integral) and int(b) in (0, 1)) or _is_numpy_bool(b):
            out.append(bool(b))
        else:
            raise DomainError(f"{name}[{i}]={b!r} must be a bit: 0, 1, False or True")
    return tuple(out)


def as_bit_rows(rows: Any, length: int, max_weight: int | None) -> Any:
    """``rows`` as an (n, ``length``) NumPy bool array, every row checked against a bit-vector domain of that
    length and at most ``max_weight`` set bits (None: any); DomainError naming the shape, or the first heavy
    row and its weight, or non-bit values."""
    import numpy as np

    arr = np.asarray(rows)
    if arr.ndim != 2 or arr.shape[1] != length:
        raise DomainError(f"rows must have shape (n, {length}), got {arr.shape}")
    if arr.dtype != np.bool_:
        if not np.issubdtype(arr.dtype, np.integer) or not np.isin(arr, (0, 1)).all():
            raise DomainError("rows must hold only bits: 0, 1, False or True")
        arr = arr.astype(bool)
    if max_weight is not None and arr.shape[0]:
        weights = arr.sum(axis=1)
        if weights.max() > max_weight:
            bad = int(np.argmax(weights > max_weight))
            raise DomainError(f"row {bad} has {int(weights[bad])} set bits; this domain allows at most {max_weight}")
    return arr


@dataclasses.dataclass(frozen=True)
class BitVectorDomain(Domain):
    """Bit vectors with at most ``max_weight`` set bits and exactly ``length`` bits.

    ``None`` leaves that property unbounded (a mechanism may then refuse the domain).
    """

    max_weight: int | None = None
    length: int | None = None

    def __post_init__(self):
        if self.max_weight is not None:
            check_int("max_weight", self.max_weight, lo=1)
        if self.length is not None:
            check_int("length", self.length, lo=1)

    def check_member(self, x: Any) -> tuple[bool, ...]:
        bits = as_bit_tuple("x", x)
        if self.length is not None and len(bits) != self.length:
            raise DomainError(f"x has length {len(bits)}; this domain's length is {self.length}")
        if self.max_weight is not None and sum(bits) > self.max_weight:
            raise DomainError(f"x has {sum(bits)} set bits; this domain allows at most {self.max_weight}")
        return bits


def bitvector_domain(max_weight: int | None = None, length: int | None = None) -> BitVectorDomain:
    """A :class:`BitVectorDomain`; both bounds must be ints >= 1 or None."""
    return BitVectorDomain(max_weight=max_weight, length=length)


# ------------------------------------------------------------------ metrics and measures

class Metric:
    """A distance between datasets; validates the ``d_in`` a privacy map receives."""

    def check_distance(self, d_in: Any) -> Any:  # pragma: no cover - overridden
        return d_in


@dataclasses.dataclass(frozen=True)
class DiscreteDistance(Metric):
    """0 between equal inputs, 1 between different ones; ``d_in`` is an int >= 0."""

    def check_distance(self, d_in: Any) -> int:
        return check_int("d_in", d_in, lo=0, keep_subclass=True)

    def __repr__(self) -> str:
        return "DiscreteDistance()"


def discrete_distance() -> DiscreteDistance:
    return DiscreteDistance()


class Measure:
    """How the distance between output distributions is measured; validates ``d_out``."""

    def check_distance(self, d_out: Any) -> float:
        x = check_float("d_out", d_out)
        if x < 0:
            raise ValueError(f"d_out={d_out!r} must be in [0, inf)")
        return x


@dataclasses.dataclass(frozen=True)
class MaxDivergence(Measure):
    """Pure ε-differential privacy: sup over outputs of |ln(P[M(x)=y] / P[M(x')=y])|."""

    def __repr__(self) -> str:
        return "MaxDivergence()"


def max_divergence() -> MaxDivergence:
    return MaxDivergence()


# ------------------------------------------------------------------ measurement

@dataclasses.dataclass(frozen=True)
class PrivacyConstant:
    """A privacy constant's one definition bound to the parameters of one measurement."""

    expr: Expr
    env: Mapping[str, float | int]

    @property
    def value(self) -> float:
        return self.expr.to_float(self.env)

    def enclose(self, prec: int = 128) -> tuple[Fraction, Fraction]:
        return self.expr.enclose(self.env, prec)


@dataclasses.dataclass(frozen=True, eq=False)
class Measurement:
    """A randomised function with a privacy map.

    Postcondition of a valid measurement: for inputs ``x, x'`` that are ``d_in``-close
    under ``input_metric``, ``function(x)`` and ``function(x')`` are ``map(d_in)``-close
    under ``output_measure``.
    """

    input_domain: Domain
    input_metric: Metric
    output_measure: Measure
    function: Callable[[Any], Any]
    privacy_map: Callable[[Any], float]
    output_domain: Domain | None = None
    privacy_constant: PrivacyConstant | None = None
    parameters: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    batch: Callable[[Sequence[Any]], Any] | None = None
    name: str = ""

    def __call__(self, x: Any) -> Any:
        """``function(x)`` after checking that ``x`` is in ``input_domain`` (before any randomness)."""
        return self.function(self.input_domain.check_member(x))

    def invoke(self, x: Any) -> Any:
        return self(x)

    def map(self, d_in: Any) -> float:
        """The privacy loss bound for inputs ``d_in`` apart (``d_in`` validated first)."""
        return self.privacy_map(self.input_metric.check_distance(d_in))

    def check(self, d_in: Any, d_out: Any) -> bool:
        """Whether ``map(d_in) <= d_out``, compared exactly."""
        d_out = self.output_measure.check_distance(d_out)
        return Fraction(self.map(d_in)) <= Fraction(d_out)

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self.parameters.items())
        return f"<Measurement {self.name}({params})>"
