"""Variants whose function is vetdp's but whose batch path (``Measurement.batch``) is not (function.batch).

Each takes the arguments of vetdp's constructor. Docstrings start with "Defect:" (the batch path's law differs from
independent calls of the function) or "Sound:" (written otherwise, the same law).
"""

from __future__ import annotations

import dataclasses
import random

import numpy as np

from vetdp.impl.randomized_response_bool import make_randomized_response_bool
from vetdp.impl.rappor import make_rappor_report, rappor_instantaneous_batch
from vetdp.sampling.primitives import sample_bernoulli_float

__all__ = ["bool_batch_one_coin", "bool_batch_seeded", "bool_batch_row_by_row", "rappor_batch_without_permanent"]


def bool_batch_one_coin(prob, constant_time=False):
    """Defect: the batch draws one coin for all its values (the rows' answers are not independent)."""
    m = make_randomized_response_bool(prob, constant_time)
    p = m.parameters["prob"]

    def batch(values):
        keep = sample_bernoulli_float(p)
        return np.asarray(values, dtype=bool) ^ (not keep)

    return dataclasses.replace(m, batch=batch)


_SEEDED = random.Random(7)


def bool_batch_seeded(prob, constant_time=False):
    """Defect: the batch draws from a module-level random.Random with a constant seed."""
    m = make_randomized_response_bool(prob, constant_time)
    p = m.parameters["prob"]
    return dataclasses.replace(m, batch=lambda values: np.array([v ^ (_SEEDED.random() >= p) for v in values]))


def bool_batch_row_by_row(prob, constant_time=False):
    """Sound: the batch calls the function on each value."""
    m = make_randomized_response_bool(prob, constant_time)
    return dataclasses.replace(m, batch=lambda values: np.array([m.function(bool(v)) for v in values]))


def rappor_batch_without_permanent(input_domain, input_metric, f, p, q, constant_time=False):
    """Defect: the batch skips the permanent response (the function is vetdp's): with p = 0 and q = 1 it releases
    the Bloom filters as they are."""
    m = make_rappor_report(input_domain, input_metric, f, p, q, constant_time)
    return dataclasses.replace(m, batch=lambda rows: rappor_instantaneous_batch(np.asarray(rows, dtype=bool), p, q))
