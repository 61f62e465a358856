"""Variants for issue 23 ("universal verdicts"): defects that sampled checks reach only by luck.

Every function takes ``(categories, prob)`` like ``make_randomized_response`` and returns a
:class:`vetdp.core.measurement.Measurement` drawn through vetdp's primitives (unless the docstring says otherwise),
with the privacy map of vetdp's public constant. Docstrings start with "Defect:" (naming the clause that must reject
it) or "Sound:" (a correct implementation that must pass).

* a distance far from 1: the map at d_in = 256 (a byte that wraps) or from d_in = 70000;
* state kept across calls: behaviour that changes on the 50th call, an answer memoised per input, a counter;
* a predictable source: a module-level ``random.Random(0)``, ``np.random.default_rng(42)``, ``random.seed(1)``.
"""

from __future__ import annotations

import math
import random

import numpy as np

from vetdp.core.measurement import AtomDomain, DiscreteDistance, MaxDivergence, Measurement
from vetdp.impl.randomized_response import RANDOMIZED_RESPONSE_EPSILON
from vetdp.sampling.primitives import sample_bernoulli_float, sample_uniform_int_below

__all__ = [
    # wrong
    "map_wraps_to_zero_at_256",
    "map_zero_from_distance_70000",
    # sound
    "map_group_privacy",
]


def _validated(categories, prob) -> tuple[list, float]:
    cats = list(categories)
    if len(cats) < 2 or len(set(cats)) != len(cats):
        raise ValueError(f"categories={cats!r} must hold at least 2 distinct categories")
    p = float(prob)
    if not 1 / len(cats) <= p < 1:
        raise ValueError(f"prob={prob!r} must be in [1/{len(cats)}, 1)")
    return cats, p


def _epsilon(p: float, t: int) -> float:
    return RANDOMIZED_RESPONSE_EPSILON.to_float({"prob": p, "t": t})


def _standard_function(cats: list, p: float):
    """Categorical RR through vetdp's primitives: the truth with probability p, else a uniform other category."""
    position = {c: i for i, c in enumerate(cats)}
    t = len(cats)

    def function(x):
        i = position.get(x)
        if i is None:
            return cats[sample_uniform_int_below(t)]
        if sample_bernoulli_float(p):
            return x
        j = sample_uniform_int_below(t - 1)
        return cats[j + (j >= i)]

    return function


def _measurement(cats: list, function, privacy_map, name: str) -> Measurement:
    return Measurement(AtomDomain(type(cats[0])), DiscreteDistance(), MaxDivergence(), function, privacy_map,
                       name=name)


# ------------------------------------------------------------------ a distance far from 1

def map_wraps_to_zero_at_256(categories, prob):
    """Defect: [``privacy.distance``, ``privacy.monotone``; d_in = 256] the author keeps d_in in a byte, as the
    wire format does, so map(256) = map(0) = 0 while inputs 256 apart (any two) still differ with loss ε."""
    cats, p = _validated(categories, prob)
    eps = _epsilon(p, len(cats))

    def privacy_map(d_in: int) -> float:
        byte = d_in % 256
        return 0.0 if byte == 0 else eps

    return _measurement(cats, _standard_function(cats, p), privacy_map, "map_wraps_to_zero_at_256")


def map_zero_from_distance_70000(categories, prob):
    """Defect: [``privacy.distance``, ``privacy.monotone``; d_in = 70000] "no dataset has 70000 rows": the map
    gives 0 from there on. No sweep of small distances and no power of two reaches it; tracing the map's
    comparison does, and decides every d_in."""
    cats, p = _validated(categories, prob)
    eps = _epsilon(p, len(cats))

    def privacy_map(d_in: int) -> float:
        if d_in == 0 or d_in >= 70_000:
            return 0.0
        return eps

    return _measurement(cats, _standard_function(cats, p), privacy_map, "map_zero_from_distance_70000")


def map_group_privacy(categories, prob):
    """Sound: map(d) = d·ε rounded up (group privacy), an upper bound at every distance under the discrete metric;
    it computes with d_in, so it is evaluated at every d_in up to the sweep and at the landmarks, not traced."""
    cats, p = _validated(categories, prob)
    eps = _epsilon(p, len(cats))

    def privacy_map(d_in: int) -> float:
        return math.nextafter(d_in * eps, math.inf) if d_in > 1 else (0.0 if d_in == 0 else eps)

    return _measurement(cats, _standard_function(cats, p), privacy_map, "map_group_privacy")


_ = (random, np)  # the randomness variants below draw from these
