"""Binary randomized response.

Spec: specs/randomized_response_bool.py · Proof: proofs/randomized_response_bool.md
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from vetdp.core.measurement import AtomDomain, DiscreteDistance, MaxDivergence, Measurement, PrivacyConstant
from vetdp.core.validation import check_bool, check_float, check_interval
from vetdp.impl.randomized_response import RANDOMIZED_RESPONSE_EPSILON
from vetdp.sampling.batch import sample_bernoulli_batch
from vetdp.sampling.primitives import sample_bernoulli_float

__all__ = ["make_randomized_response_bool"]


def make_randomized_response_bool(prob: float, constant_time: bool = False) -> Measurement:
    """ε-DP randomized response on one bool: the truth with probability ``prob``, else its negation.

    Preconditions: ``prob`` a float in [0.5, 1); ``constant_time`` a bool (the Bernoulli
    draw then reads the same bytes whatever the outcome).

    Privacy: map(0) = 0; map(d_in >= 1) = ln(prob/(1−prob)) rounded up — the categorical
    constant :data:`RANDOMIZED_RESPONSE_EPSILON` with t = 2.

    Proof: proofs/randomized_response_bool.md
    """
    p = check_float("prob", prob)
    check_interval("prob", p, 0.5, 1, lo_closed=True, hi_closed=False)
    check_bool("constant_time", constant_time)
    constant = PrivacyConstant(RANDOMIZED_RESPONSE_EPSILON, {"prob": p, "t": 2})
    epsilon = constant.value

    def privacy_map(d_in: int) -> float:
        return 0.0 if d_in == 0 else epsilon

    def function(truth: bool) -> bool:
        return truth ^ (not sample_bernoulli_float(p, constant_time))

    domain = AtomDomain(bool)

    def batch(values: Sequence[bool]) -> np.ndarray:
        """Randomise many bools at once (vectorised, exact Bernoulli per value)."""
        arr = np.asarray(values)
        if arr.shape == (0,):
            arr = arr.astype(bool)  # an empty sequence holds no non-bool; NumPy types it float64
        if arr.ndim != 1 or arr.dtype != np.bool_:
            raise TypeError(f"values must be a 1-D sequence of bools, got dtype {arr.dtype} and shape {arr.shape}")
        return arr ^ ~sample_bernoulli_batch(p, arr.size)

    return Measurement(
        input_domain=domain,
        input_metric=DiscreteDistance(),
        output_measure=MaxDivergence(),
        function=function,
        privacy_map=privacy_map,
        output_domain=domain,
        privacy_constant=constant,
        parameters={"prob": p, "constant_time": constant_time},
        batch=batch,
        name="make_randomized_response_bool",
    )
