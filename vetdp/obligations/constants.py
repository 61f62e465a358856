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

from collections.abc import Mapping
from fractions import Fraction

from vetdp.arith.constants import USER_CONSTANTS, ConstantSpec, VarRange, register_constant
from vetdp.arith.expr import ONE, Const, Expr, Op, var
from vetdp.impl.k_rappor import K_RAPPOR_FLIP_PROBABILITY
from vetdp.impl.randomized_response import MAX_CATEGORIES, RANDOMIZED_RESPONSE_EPSILON
from vetdp.impl.randomized_response_bitvec import FLIP_PROBABILITY, RANDOMIZED_RESPONSE_BITVEC_EPSILON
from vetdp.obligations.z3encode import MAX_FLOAT, MIN_SUBNORMAL

# USER_CONSTANTS, register_constant (and ConstantSpec, VarRange) live in the light vetdp.arith.constants, which a
# production module may import without z3; they are re-exported here.
__all__ = ["CONSTANTS", "NAIVE", "SEED_DIRECTED", "USER_CONSTANTS", "constant", "all_specs", "INT_MAX",
           "register_constant", "ConstantSpec", "VarRange"]

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


def all_specs() -> dict[str, ConstantSpec]:
    """Every constant known to the obligations subsystem, ours first, then the registered ones."""
    return {**CONSTANTS, **SEED_DIRECTED, **NAIVE, **USER_CONSTANTS}


def constant(cid: str) -> ConstantSpec:
    specs = all_specs()
    if cid not in specs:
        raise KeyError(f"constant={cid!r} must be one of {sorted(specs)}")
    return specs[cid]
