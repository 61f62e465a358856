"""The privacy constants under proof, with their preconditions, and the seeds' naive forms.

Our constants are the impl objects themselves (imported, never retyped). The seeds'
formulas are written here as expressions because they *are* the claims under test: the
round-to-nearest arithmetic of the seed pseudocode (finding 2 of issue 4), and seed 001's
directed-rounding order, which differs from ours.

Preconditions come from the constructors: an open end of a float interval is moved to
the adjacent float (prob < 1 means prob <= 1 − 2^-53), and every int parameter is at most
2^53 so that it casts to float64 exactly (see ``contracts.cast_obligation``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from fractions import Fraction

from vetdp.arith.expr import ONE, Const, Expr, Op, var
from vetdp.impl.k_rappor import K_RAPPOR_FLIP_PROBABILITY
from vetdp.impl.randomized_response import MAX_CATEGORIES, RANDOMIZED_RESPONSE_EPSILON
from vetdp.impl.randomized_response_bitvec import FLIP_PROBABILITY, RANDOMIZED_RESPONSE_BITVEC_EPSILON
from vetdp.obligations.z3encode import MAX_FLOAT, MIN_SUBNORMAL, ConstantSpec, VarRange

__all__ = ["CONSTANTS", "NAIVE", "SEED_DIRECTED", "USER_CONSTANTS", "constant", "all_specs", "INT_MAX",
           "register_constant"]

INT_MAX = Fraction(2**53)
BELOW_ONE = Fraction(1) - Fraction(1, 2**53)  # the largest float64 < 1


def _rr_relations(x: Mapping) -> list:
    return [x["prob"] * x["t"] >= 1]


def _rr_accepts(env: Mapping) -> bool:
    return Fraction(env["prob"]) * int(env["t"]) >= 1


_RR_RANGES = (VarRange("prob", Fraction(1, MAX_CATEGORIES), BELOW_ONE), VarRange("t", Fraction(2), INT_MAX))
_F_RANGE = VarRange("f", MIN_SUBNORMAL, Fraction(1))

CONSTANTS: dict[str, ConstantSpec] = {s.id: s for s in [
    ConstantSpec("randomized_response.epsilon", RANDOMIZED_RESPONSE_EPSILON, _RR_RANGES, "upper",
                 _rr_relations, "prob·t >= 1", _rr_accepts, (Fraction(0), MAX_FLOAT),
                 "vetdp.impl.randomized_response.RANDOMIZED_RESPONSE_EPSILON"),
    ConstantSpec("randomized_response_bitvec.epsilon", RANDOMIZED_RESPONSE_BITVEC_EPSILON,
                 (VarRange("q", MIN_SUBNORMAL, Fraction(1, 2)), VarRange("d", Fraction(1), INT_MAX)), "upper",
                 result=(Fraction(0), MAX_FLOAT),
                 source="vetdp.impl.randomized_response_bitvec.RANDOMIZED_RESPONSE_BITVEC_EPSILON"),
    ConstantSpec("randomized_response_bitvec.flip_probability", FLIP_PROBABILITY, (_F_RANGE,), "upper",
                 result=(Fraction(0), Fraction(1, 2)),
                 source="vetdp.impl.randomized_response_bitvec.FLIP_PROBABILITY"),
    ConstantSpec("k_rappor.flip_probability", K_RAPPOR_FLIP_PROBABILITY,
                 (VarRange("epsilon", MIN_SUBNORMAL, MAX_FLOAT), VarRange("k", Fraction(1), INT_MAX)), "upper",
                 result=(Fraction(0), Fraction(1, 2)),
                 source="vetdp.impl.k_rappor.K_RAPPOR_FLIP_PROBABILITY"),
]}


def _n(name: str, *args: Expr | float | int) -> Op:
    return Op(name, tuple(a if isinstance(a, Expr) else Const(a) for a in args))


_p, _t, _f, _m = var("prob"), var("t", "int"), var("f"), var("m", "int")
_eps, _k = var("epsilon"), var("k", "int")

# Seed 001, pseudocode lines 18-20: p / (1 - p) first, then times (t - 1), every step directed.
SEED_DIRECTED: dict[str, ConstantSpec] = {s.id: s for s in [
    ConstantSpec("seed001.epsilon", _p.inf_div(ONE.neg_inf_sub(_p)).inf_mul(_t.inf_sub(1)).inf_ln(), _RR_RANGES,
                 "upper", _rr_relations, "prob·t >= 1", _rr_accepts, (Fraction(0), MAX_FLOAT),
                 "seed 001 lines 18-20"),
]}

# The seeds' formulas in plain float64 arithmetic (round to nearest, libm ln/exp).
NAIVE: dict[str, ConstantSpec] = {s.id: s for s in [
    ConstantSpec("naive.randomized_response.epsilon",
                 _n("near_ln", _n("near_div", _n("near_mul", _p, _n("near_sub", _t, 1)), _n("near_sub", 1, _p))),
                 _RR_RANGES, "upper", _rr_relations, "prob·t >= 1", _rr_accepts, None,
                 "ln(p·(t−1)/(1−p)), seed 001 eq. (6), in round-to-nearest", naive=True),
    ConstantSpec("naive.randomized_response_bitvec.epsilon",
                 _n("near_mul", _n("near_mul", 2, _m), _n("near_ln", _n("near_div", _n("near_sub", 2, _f), _f))),
                 (_F_RANGE, VarRange("m", Fraction(1), INT_MAX / 2)), "upper", result=None,
                 source="eps = (2*m)*log((2-f)/f), seed 000 line 13 and seed 003 line 16", naive=True),
    ConstantSpec("naive.randomized_response_bitvec.flip_probability", _n("near_div", _f, 2), (_F_RANGE,),
                 "upper", source="sample_bernoulli(f/2), seed 000 line 18 and seed 003 line 25", naive=True),
    ConstantSpec("naive.k_rappor.flip_probability",
                 _n("near_div", 1, _n("near_add", 1, _n("near_exp", _n("near_div", _eps, _n("near_mul", 2, _k))))),
                 (VarRange("epsilon", MIN_SUBNORMAL, MAX_FLOAT), VarRange("k", Fraction(1), INT_MAX)), "upper",
                 source="q = 1/(1 + exp(ε/(2k))), seed 002 theorem 5 (f = 2/(1+exp(ε/2)) for k = 1)",
                 naive=True),
]}



# Constants registered by a user's module (register_constant), in registration order.
USER_CONSTANTS: dict[str, ConstantSpec] = {}

_ID_PART = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_BUILTIN_PREFIXES = ("contract", "naive", "seed001")


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
    (when ``result`` is given) and ``contract.<op>`` for each primitive used (see :func:`constant_obligations`).

    Preconditions: ``cid`` dotted identifiers, not a bundled id nor one of ``contract.``/``naive.``/``seed001.``;
    ``expr`` an :class:`~vetdp.arith.expr.Expr` of directed-rounding operations only (no ``near_*``);
    ``ranges`` a closed interval [lo, hi] (finite ints/floats/Fractions, open ends already moved to the adjacent
    float) for every variable of ``expr`` and no other; ``bound`` "upper" (the float must be >= the real value,
    e.g. an ε or a flip probability that may only add noise) or "lower"; ``result`` an optional closed range the
    float must lie in. ``relations(vars) -> [z3 constraints]`` and ``accepts(env) -> bool`` state preconditions
    linking variables (both or neither). Registering the same id again with an equal definition is a no-op; with
    another definition it is a ValueError.
    """
    if not isinstance(cid, str) or not all(_ID_PART.fullmatch(part) for part in cid.split(".")):
        raise ValueError(f"cid={cid!r} must be dotted identifiers, e.g. 'mymech.epsilon'")
    if cid.split(".")[0] in _BUILTIN_PREFIXES or cid in CONSTANTS or cid in SEED_DIRECTED or cid in NAIVE:
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


def all_specs() -> dict[str, ConstantSpec]:
    """Every constant known to the obligations subsystem, ours first, then the registered ones."""
    return {**CONSTANTS, **SEED_DIRECTED, **NAIVE, **USER_CONSTANTS}


def constant(cid: str) -> ConstantSpec:
    specs = all_specs()
    if cid not in specs:
        raise KeyError(f"constant={cid!r} must be one of {sorted(specs)}")
    return specs[cid]
