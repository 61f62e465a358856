"""Hoare triple of make_k_rappor (impl/k_rappor.py).

Pre: input_domain a BitVectorDomain with max_weight k and a length; epsilon a float in (0, inf).
Law: every bit flipped independently with probability q = K_RAPPOR_FLIP_PROBABILITY(ε, m),
the float 1/(1 + e^(ε/2m)) rounded up (impl/k_rappor.py), m the domain's max_weight; function.law also
admits one flip probability rounded otherwise, within 2**-30 of the real q (privacy.sound judges it).
Post: map(1) >= the exact max-divergence of the mechanism with the flip probability it
actually uses (and map(1) <= epsilon), tight within 2**-30; map(d_in >= 2) refuses by
raising ValueError (it is the bit-vector map under the discrete distance).
Search: lengths up to 7 drawn, 8 pinned (10 with --deep) and max_weights 3, 5, 6, 7, ... where ε/(2m) is not a
float, so the rounding of the constant matters; inputs also as lists and NumPy arrays.
Proof: proofs/k_rappor.md
"""

import dataclasses
import math
from fractions import Fraction

from hypothesis import strategies as st

from vetdp.accounting.curves import RRFamily, rappor_curve
from vetdp.accounting.pld import one_run_delta
from vetdp.arith.expr import var
from vetdp.core.measurement import AtomDomain, PrivacyConstant, bitvector_domain, discrete_distance
from vetdp.engine.spec import BadParams, MeasurementSpec, Universal, exact_value, floats_in
from vetdp.impl.k_rappor import K_RAPPOR_FLIP_PROBABILITY, k_rappor_flip_probability
from vetdp.impl.randomized_response_bitvec import RANDOMIZED_RESPONSE_BITVEC_EPSILON, flip_probability
from vetdp.specs.randomized_response_bitvec import (
    flip_family,
    flip_law,
    inputs,
    lengths,
    outside,
    outside_kind,
    shape_edges,
    universal_bases,
)

EPSILON_EDGES = [5e-324, 1e-12, 0.5, 1.0, 2.0, 3.0, 10.0, 700.0]


def build(ctor, p):
    domain = p.get("input_domain") or bitvector_domain(max_weight=p["m"], length=p["k"])
    return ctor(domain, discrete_distance(), p["epsilon"], p["constant_time"])


def params(deep: bool):
    def for_k(k: int):
        return st.fixed_dictionaries({
            "k": st.just(k),
            # 2m not a power of two (3, 5, 6, 7, ...): ε/(2m) is then inexact for almost every ε
            "m": st.one_of(st.integers(1, k + 1), st.sampled_from([3, 5, 6, 7, 10**6])),
            "epsilon": floats_in(5e-324, 700.0, edges=EPSILON_EDGES),
            "constant_time": st.booleans(),
        })

    # three draws in four short: the long ones matter for k >= 2m with m >= 3, their law is the bit-vector one
    return lengths(deep, short_weight=3).flatmap(for_k)


def flip(p) -> float:
    """The float flip probability the implementation must use (its one definition, impl/k_rappor.py)."""
    return k_rappor_flip_probability(p["epsilon"], p["m"])


def law(p, x):
    """P[M(x) = y]: every bit of x flipped independently with probability :func:`flip`."""
    return flip_law(x, exact_value(flip(p)))


def real_flip(p) -> tuple[Fraction, Fraction]:
    """Rationals enclosing the real q = 1/(1 + e^(ε/2m)) (every step of the constant exact over the reals)."""
    return K_RAPPOR_FLIP_PROBABILITY.enclose({"epsilon": p["epsilon"], "k": p["m"]})


def accountant_family(p) -> RRFamily:
    """k-RAPPOR's worst pair at the real q = 1/(1 + e^(ε/2m)) (log-ratio ε/2m per bit, the pair differing in
    min(2m, k) bits): its RDP curve and PLD, certified upward, are what an accountant composes with; any q at
    least the real one has smaller ones."""
    return dataclasses.replace(rappor_curve(p["epsilon"], k=p["m"]), coordinates=min(2 * p["m"], p["k"]))


def edges(p) -> list[str]:
    """Boundary classes: the shape and container edges of bit vectors, ε/(2m) exactness, q = 1/2, ε extremes."""
    eps, m = p["epsilon"], p["m"]
    out = shape_edges(p)
    ratio = Fraction(eps) / (2 * m)
    out.append("ε/(2m) exact" if Fraction(float(ratio)) == ratio else "ε/(2m) inexact")
    if flip(p) == 0.5:
        out.append("q=1/2 (pure noise)")
    if eps < 2.2250738585072014e-308:
        out.append("ε subnormal")
    if eps >= 700.0:
        out.append("ε=700")
    if p.get("constant_time"):
        out.append("constant_time")
    return out


def coordinate_law(p, bit: bool) -> dict:
    """One output bit of the reference law: the input bit flipped with probability :func:`flip`."""
    q = exact_value(flip(p))
    return {bit: 1 - q, not bit: q}


def universal_constants(p) -> list[PrivacyConstant]:
    """The two upper bounds of the reference law's exact loss the map may return (proofs/k_rappor.md, Privacy):
    the bit-vector bound min(2m, k)·ln((1−q)/q) rounded up at the q of f = 2·flip(p) (obligation
    randomized_response_bitvec.epsilon.sound), and ε itself (flip(p) >= the real q, obligation
    k_rappor.flip_probability.sound, and 2m·ln((1−q)/q) = ε there, lemma k_rappor.rho_in_q)."""
    bound = PrivacyConstant(RANDOMIZED_RESPONSE_BITVEC_EPSILON,
                            {"q": flip_probability(2 * flip(p)), "d": min(2 * p["m"], p["k"])})
    return [bound, PrivacyConstant(var("epsilon"), {"epsilon": p["epsilon"]})]


# k-RAPPOR's own code has no word-size logic (its bits are the bit vector's, whose spec explores every k <= 128):
# by default the long vectors around each word boundary and at k = 100; every k <= 128 with --deep
LONG_BY_DEFAULT = {7, 8, 31, 32, 33, 63, 64, 65, 100, 127, 128}


def universal_bases_k_rappor(deep: bool) -> list[dict]:
    """The bit vector's bases (:func:`universal_bases`): with ``deep`` all of them, else every k <= 6 and the long
    vectors of :data:`LONG_BY_DEFAULT`."""
    return [b for b in universal_bases(deep) if deep or b["k"] <= 6 or b["k"] in LONG_BY_DEFAULT]


UNIVERSAL = Universal(
    bases=universal_bases_k_rappor,
    floats=lambda p: {"epsilon": (5e-324, float(MAX_FLOAT))},
    constant=universal_constants,  # the map is the smaller of the two
    coordinate_law=coordinate_law,
)
MAX_FLOAT = 1.7976931348623157e308


def _bad(id_, error, names=("epsilon",), **kw):
    return BadParams(id_, {"m": 1, "k": 4, "epsilon": 1.0, "constant_time": False, **kw}, error, names)


SPECS = [
    MeasurementSpec(
        name="k_rappor",
        size=lambda p: ("k", p["k"]),
        constructor="make_k_rappor",
        build=build,
        params=params,
        examples=[
            {"k": 4, "m": 1, "epsilon": 1.0, "constant_time": False},
            {"k": 4, "m": 2, "epsilon": 2.0, "constant_time": True},
            {"k": 3, "m": 2, "epsilon": 1.0, "constant_time": False},  # length < 2k
            {"k": 2, "m": 1, "epsilon": 700.0, "constant_time": False},
            {"k": 2, "m": 1, "epsilon": 5e-324, "constant_time": False},
            {"k": 3, "m": 10**6, "epsilon": 1.0, "constant_time": False},  # huge max_weight
            {"k": 8, "m": 3, "epsilon": 1.0, "constant_time": False},  # ε/6 inexact, length 8
            {"k": 6, "m": 5, "epsilon": 3.0, "constant_time": True},  # ε/10 inexact, k < 2m
            {"k": 7, "m": 7, "epsilon": 0.1, "constant_time": False},  # ε/14 inexact, every vector
        ],
        bad=[
            _bad("epsilon_zero", ValueError, epsilon=0.0),
            _bad("epsilon_negative", ValueError, epsilon=-1.0),
            _bad("epsilon_nan", ValueError, epsilon=math.nan),
            _bad("epsilon_inf", ValueError, epsilon=math.inf),
            _bad("epsilon_str", TypeError, epsilon="1"),
            _bad("epsilon_bool", TypeError, epsilon=True),
            _bad("max_weight_missing", ValueError, ("max_weight",), input_domain=bitvector_domain(length=4)),
            _bad("domain_not_bitvector", TypeError, ("input_domain",), input_domain=AtomDomain(bool)),
            _bad("constant_time_int", TypeError, ("constant_time",), constant_time=0),
        ],
        inputs=inputs,
        outside=outside,
        constant_time_param="constant_time",
        describe="k-RAPPOR parameterised by epsilon",
        law=law,
        rdp_curve=lambda p: accountant_family(p).rdp_upper,
        delta_curve=lambda p: one_run_delta(accountant_family(p)),
        accountant_pair=lambda p: accountant_family(p).pair_plds,
        admissible_laws=(("the law with another rounding of q (every bit flipped with one probability within "
                          "2**-30 of the real 1/(1 + e^(ε/2m)))", flip_family(real_flip)),),
        outside_kind=outside_kind,
        max_d_in=3,
        edges=edges,
        universal=UNIVERSAL,
    )
]
