"""Hoare triple of make_randomized_response_bool (impl/randomized_response_bool.py).

Pre: prob a float in [1/2, 1); constant_time a bool.
Law: P[y = x] = prob, P[y = not x] = 1 − prob.
Post: map(0) = 0 and map(d >= 1) >= the exact max-divergence (tight within 2**-30; the
discrete distance, so every d >= 1 has the same loss); the function reads the same number
of bytes for every input when constant_time is set. Bools are in the domain, NumPy's bool
scalars included (converted before the function runs); ints, strings and arrays are rejected.
Proof: proofs/randomized_response_bool.md
"""

import math

import numpy as np
from hypothesis import strategies as st

from vetdp.accounting.curves import randomized_response_curve
from vetdp.accounting.pld import one_run_delta
from vetdp.core.measurement import PrivacyConstant
from vetdp.engine.spec import BadParams, MeasurementSpec, Universal, exact_value, floats_in
from vetdp.impl.randomized_response import RANDOMIZED_RESPONSE_EPSILON

P_MAX = math.nextafter(1.0, 0.0)
P_EDGES = [0.5, math.nextafter(0.5, 1.0), 0.75, math.nextafter(0.75, 1.0), 2 / 3, P_MAX]


def law(p, x):
    """P[M(x) = y] for a bool x: kept with probability prob, negated otherwise."""
    if isinstance(x, np.bool_):
        x = bool(x)
    if not isinstance(x, bool):
        raise TypeError(f"x={x!r} must be a bool")
    prob = exact_value(p["prob"])
    return {x: prob, not x: 1 - prob}


def edges(p) -> list[str]:
    """Boundary classes of prob (1/2, 1/2 + ulp, 1 − 2**-53, a non-dyadic-looking value) and constant_time."""
    prob = p["prob"]
    labels = {0.5: "prob=1/2 (pure noise)", math.nextafter(0.5, 1.0): "prob=1/2+ulp", P_MAX: "prob=1−2⁻⁵³"}
    out = [labels.get(prob, "prob interior"), "numpy bools inside, arrays outside"]
    if p.get("constant_time"):
        out.append("constant_time")
    return out


def outside(p):
    """Non-bools: ints, strings, None, floats, NumPy arrays."""
    return [1, 0, "True", None, 0.5, np.array(True), np.array([True]), [True]]


def build(ctor, p):
    return ctor(p["prob"], p["constant_time"])


def params(deep: bool):
    return st.fixed_dictionaries({
        "prob": floats_in(0.5, P_MAX, edges=P_EDGES),
        "constant_time": st.booleans(),
    })


def accountant_family(p):
    """Binary randomized response at the keep probability given: its RDP curve and PLD are what an accountant
    composes with (privacy.rdp, privacy.pld check them against the code)."""
    return randomized_response_curve(prob=p["prob"], categories=2)


UNIVERSAL = Universal(
    bases=lambda deep: [{"constant_time": False}, {"constant_time": True}],
    floats=lambda p: {"prob": (0.5, P_MAX)},
    # ε of the reference law, ln(prob/(1−prob)) rounded up (obligation randomized_response.epsilon.sound at t = 2)
    constant=lambda p: PrivacyConstant(RANDOMIZED_RESPONSE_EPSILON, {"prob": p["prob"], "t": 2}),
)


def _bad(id_, error, names=("prob",), **kw):
    return BadParams(id_, {"prob": 0.75, "constant_time": False, **kw}, error, names)


SPECS = [
    MeasurementSpec(
        name="randomized_response_bool",
        constructor="make_randomized_response_bool",
        build=build,
        params=params,
        examples=[{"prob": 0.5, "constant_time": False}, {"prob": 0.75, "constant_time": True},
                  {"prob": P_MAX, "constant_time": False}, {"prob": math.nextafter(0.5, 1.0), "constant_time": True},
                  {"prob": 2 / 3, "constant_time": False}],
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
        inputs=lambda p: [True, False, np.True_, np.False_],  # NumPy's bools are bools of the domain too
        outside=outside,
        constant_time_param="constant_time",
        describe="binary randomized response",
        law=law,
        rdp_curve=lambda p: accountant_family(p).rdp_upper,
        delta_curve=lambda p: one_run_delta(accountant_family(p)),
        accountant_pair=lambda p: accountant_family(p).pair_plds,
        max_d_in=3,
        edges=edges,
        universal=UNIVERSAL,
    )
]
