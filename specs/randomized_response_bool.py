"""Hoare triple of make_randomized_response_bool (impl/randomized_response_bool.py).

Pre: prob a float in [1/2, 1); constant_time a bool.
Post: map(0) = 0 and map(1) >= the exact max-divergence (tight within 2**-30); the function
reads the same number of bytes for every input when constant_time is set.
Proof: proofs/randomized_response_bool.md
"""

import math

from hypothesis import strategies as st

from vetdp.engine.spec import BadParams, MeasurementSpec, floats_in

P_MAX = math.nextafter(1.0, 0.0)


def build(ctor, p):
    return ctor(p["prob"], p["constant_time"])


def params(deep: bool):
    return st.fixed_dictionaries({
        "prob": floats_in(0.5, P_MAX, edges=[0.5, math.nextafter(0.5, 1.0), 0.75, P_MAX]),
        "constant_time": st.booleans(),
    })


def _bad(id_, error, names=("prob",), **kw):
    return BadParams(id_, {"prob": 0.75, "constant_time": False, **kw}, error, names)


SPECS = [
    MeasurementSpec(
        name="randomized_response_bool",
        constructor="make_randomized_response_bool",
        build=build,
        params=params,
        examples=[{"prob": 0.5, "constant_time": False}, {"prob": 0.75, "constant_time": True},
                  {"prob": P_MAX, "constant_time": False}],
        bad=[
            _bad("prob_nan", ValueError, prob=math.nan),
            _bad("prob_inf", ValueError, prob=math.inf),
            _bad("prob_neg_inf", ValueError, prob=-math.inf),
            _bad("prob_one", ValueError, prob=1.0),
            _bad("prob_below_half", ValueError, prob=math.nextafter(0.5, 0.0)),
            _bad("prob_negative", ValueError, prob=-0.5),
            _bad("prob_str", TypeError, prob="0.75"),
            _bad("prob_bool", TypeError, prob=True),
            _bad("prob_none", TypeError, prob=None),
            _bad("constant_time_str", TypeError, ("constant_time",), constant_time="yes"),
            _bad("constant_time_int", TypeError, ("constant_time",), constant_time=1),
        ],
        inputs=lambda p: [True, False],
        outside=lambda p: [1, 0, "True", None, 0.5],
        constant_time_param="constant_time",
        describe="binary randomized response",
    )
]
