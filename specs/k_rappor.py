"""Hoare triple of make_k_rappor (impl/k_rappor.py).

Pre: input_domain a BitVectorDomain with max_weight k and a length; epsilon a float in (0, inf).
Post: map(1) >= the exact max-divergence of the mechanism with the flip probability it
actually uses (and map(1) <= epsilon), tight within 2**-30.
Proof: proofs/k_rappor.md
"""

import math

from hypothesis import strategies as st

from vetdp.core.measurement import AtomDomain, bitvector_domain, discrete_distance
from vetdp.engine.spec import BadParams, MeasurementSpec, floats_in
from vetdp.specs.randomized_response_bitvec import all_vectors, outside


def build(ctor, p):
    domain = p.get("input_domain") or bitvector_domain(max_weight=p["m"], length=p["k"])
    return ctor(domain, discrete_distance(), p["epsilon"], p["constant_time"])


def params(deep: bool):
    def for_k(k: int):
        return st.fixed_dictionaries({
            "k": st.just(k),
            "m": st.integers(1, k + 1),
            "epsilon": floats_in(5e-324, 700.0, edges=[5e-324, 1e-12, 0.5, 1.0, 2.0, 10.0, 700.0]),
            "constant_time": st.booleans(),
        })

    return st.integers(1, 7 if deep else 4).flatmap(for_k)


def _bad(id_, error, names=("epsilon",), **kw):
    return BadParams(id_, {"m": 1, "k": 4, "epsilon": 1.0, "constant_time": False, **kw}, error, names)


SPECS = [
    MeasurementSpec(
        name="k_rappor",
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
        inputs=lambda p: all_vectors(p["k"], p["m"]),
        outside=outside,
        constant_time_param="constant_time",
        describe="k-RAPPOR parameterised by epsilon",
    )
]
