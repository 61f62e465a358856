"""Registering a privacy constant: light enough for production modules (no z3 here).

A production module states its privacy constants at import (``EPS = register_constant(...)``). Registration only
validates the definition and records it in :data:`USER_CONSTANTS`; the z3 obligations of every registered constant
are derived later by the harness (:mod:`vetdp.obligations`), which is where z3 is imported. The ``relations``
callable of a constant receives z3 values only when the harness calls it.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any

from vetdp.arith.expr import Expr, Op

__all__ = ["VarRange", "ConstantSpec", "USER_CONSTANTS", "BUILTIN_IDS", "RESERVED_PREFIXES", "register_constant"]

# The ids of vetdp's own constants (vetdp.obligations.constants.CONSTANTS; a test checks the two agree) and the
# prefixes of its other obligations: a user's constant may not take them.
BUILTIN_IDS = frozenset({"randomized_response.epsilon", "randomized_response_bitvec.epsilon",
                         "randomized_response_bitvec.flip_probability", "k_rappor.flip_probability"})
RESERVED_PREFIXES = ("contract", "naive", "seed001")


@dataclasses.dataclass(frozen=True)
class VarRange:
    """A parameter's precondition: a closed interval of floats (open ends already moved to the
    adjacent float) or of ints."""

    name: str
    lo: Fraction
    hi: Fraction

    def contains(self, x: Fraction) -> bool:
        return self.lo <= x <= self.hi


@dataclasses.dataclass(frozen=True)
class ConstantSpec:
    """A privacy constant with its preconditions and the direction its float must err in.

    ``bound`` is "upper" (float >= ideal, e.g. an ε) or "lower" (float <= ideal).
    ``relations`` adds preconditions linking parameters (e.g. prob·t >= 1), over z3 reals;
    ``accepts`` is the same test on concrete values. ``result`` bounds the float result
    (obligation ``range``), e.g. a flip probability in [0, 1/2].
    """

    id: str
    expr: Expr
    ranges: tuple[VarRange, ...]
    bound: str = "upper"
    relations: Callable[[Mapping[str, Any]], list] | None = None  # called with z3 reals by the obligations code
    relations_text: str = ""
    accepts: Callable[[Mapping[str, float | int]], bool] | None = None
    result: tuple[Fraction, Fraction] | None = None
    source: str = ""
    naive: bool = False

    def range_of(self, name: str) -> VarRange:
        for r in self.ranges:
            if r.name == name:
                return r
        raise KeyError(f"constant {self.id}: no precondition for variable {name!r}")


# Constants registered by a user's module (register_constant), in registration order.
USER_CONSTANTS: dict[str, ConstantSpec] = {}

_ID_PART = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _bound_of(name: str, value: object) -> Fraction:
    if isinstance(value, bool) or not isinstance(value, (int, float, Fraction)):
        raise TypeError(f"ranges[{name!r}] bound {value!r} must be an int, a float or a Fraction")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"ranges[{name!r}] bound {value!r} must be finite (use the largest float64 instead of inf)")
    return Fraction(value)


def register_constant(cid: str, expr: Expr, ranges: Mapping[str, tuple[object, object]], *, bound: str = "upper",
                      result: tuple[object, object] | None = None, relations: Callable | None = None,
                      relations_text: str = "", accepts: Callable | None = None, source: str = "") -> Expr:
    """Register ``expr`` as the privacy constant ``cid``, so that its z3 obligations are derived like vetdp's own
    and a proof document that names ``EPS`` in ``constants:`` relies on them; returns ``expr`` (so
    ``EPS = register_constant(...)`` works).

    Obligation ids: ``<cid>.cast.<int var>``, ``<cid>.step<i>.<op>.defined``, ``<cid>.sound``, ``<cid>.range``
    (when ``result`` is given) and ``contract.<op>`` for each primitive used (see
    :func:`vetdp.obligations.check.constant_obligations`).

    Preconditions: ``cid`` dotted identifiers, not a bundled id nor one of ``contract.``/``naive.``/``seed001.``;
    ``expr`` an :class:`~vetdp.arith.expr.Expr` of directed-rounding operations only (no ``near_*``);
    ``ranges`` a closed interval [lo, hi] (finite ints/floats/Fractions, open ends already moved to the adjacent
    float) for every variable of ``expr`` and no other; ``bound`` "upper" (the float must be >= the real value,
    e.g. an ε or a flip probability that may only add noise) or "lower"; ``result`` an optional closed range the
    float must lie in. ``relations(vars) -> [z3 constraints]`` and ``accepts(env) -> bool`` state preconditions
    linking variables (both or neither). Registering the same id again with an equal definition is a no-op; with
    another definition it is a ValueError.

    Imports nothing heavy: a production module may call it at import with only the runtime installed.
    """
    if not isinstance(cid, str) or not all(_ID_PART.fullmatch(part) for part in cid.split(".")):
        raise ValueError(f"cid={cid!r} must be dotted identifiers, e.g. 'mymech.epsilon'")
    if cid.split(".")[0] in RESERVED_PREFIXES or cid in BUILTIN_IDS:
        raise ValueError(f"cid={cid!r} is reserved for vetdp's own obligations; choose another name")
    if not isinstance(expr, Expr):
        raise TypeError(f"expr={expr!r} must be a vetdp.arith.expr.Expr (built from var(...) and ONE, ...)")
    naive = sorted({n.name for n in expr.walk() if isinstance(n, Op) and n.info.direction == "nearest"})
    if naive:
        raise ValueError(f"expr uses round-to-nearest operations {naive}; a constant must round in a stated "
                         f"direction (inf_* or neg_inf_*)")
    if bound not in ("upper", "lower"):
        raise ValueError(f"bound={bound!r} must be 'upper' or 'lower'")
    if (relations is None) != (accepts is None):
        raise ValueError("relations and accepts state the same precondition (for z3 and for concrete values): "
                         "give both or neither")
    if not isinstance(ranges, Mapping):
        raise TypeError(f"ranges={ranges!r} must be a mapping from variable name to (lo, hi)")
    kinds = expr.variables()
    missing, extra = sorted(set(kinds) - set(ranges)), sorted(set(ranges) - set(kinds))
    if missing or extra:
        raise ValueError(f"ranges must give exactly the variables of expr {sorted(kinds)}: "
                         f"missing {missing}, not in expr {extra}")
    var_ranges = []
    for name, pair in ranges.items():
        if not isinstance(pair, tuple) or len(pair) != 2:
            raise TypeError(f"ranges[{name!r}]={pair!r} must be a (lo, hi) tuple")
        lo, hi = (_bound_of(name, v) for v in pair)
        if lo > hi:
            raise ValueError(f"ranges[{name!r}]=({pair[0]!r}, {pair[1]!r}) must have lo <= hi")
        if kinds[name] == "int" and (lo.denominator != 1 or hi.denominator != 1):
            raise ValueError(f"ranges[{name!r}]={pair!r} must be integers: {name} is an int variable")
        var_ranges.append(VarRange(name, lo, hi))
    res = None
    if result is not None:
        if not isinstance(result, tuple) or len(result) != 2:
            raise TypeError(f"result={result!r} must be a (lo, hi) tuple or None")
        res = (_bound_of("result", result[0]), _bound_of("result", result[1]))
        if res[0] > res[1]:
            raise ValueError(f"result={result!r} must have lo <= hi")
    spec = ConstantSpec(cid, expr, tuple(var_ranges), bound, relations, relations_text, accepts, res,
                        source or cid)
    old = USER_CONSTANTS.get(cid)
    if old is not None:
        same = (str(old.expr) == str(expr) and old.ranges == spec.ranges and old.bound == bound
                and old.result == res and old.relations_text == relations_text)
        if not same:
            raise ValueError(f"cid={cid!r} is already registered with another definition ({old.expr}, "
                             f"{[(r.name, r.lo, r.hi) for r in old.ranges]})")
        return expr
    USER_CONSTANTS[cid] = spec
    return expr
