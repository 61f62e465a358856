"""Variants for issue 23 ("universal verdicts"): defects that sampled checks reach only by luck.

Every function takes ``(categories, prob)`` like ``make_randomized_response``, validates them by calling it, and
returns its measurement with the function or the map replaced (``dataclasses.replace``), as a user adapting
vetdp's mechanism would. Docstrings start with "Defect:" (naming the clause that must reject it) or "Sound:" (a
correct implementation that must pass). The file imports vetdp, ``random`` and NumPy only, so that
``vetdp verify randomized_response --impl tests/mutants/distances_calls_sources.py:NAME`` loads it as a user's file.

* a distance far from 1: the map at d_in = 256 (a byte that wraps) or from d_in = 70000;
* state kept across calls: behaviour that changes on the 50th call, an answer memoised per input, a counter;
* a predictable source: a module-level ``random.Random(0)``, ``np.random.default_rng(42)``, ``random.seed(1)``.
"""

from __future__ import annotations

import dataclasses
import math
import random

import numpy as np

from vetdp.core.measurement import Measurement
from vetdp.impl.randomized_response import make_randomized_response
from vetdp.sampling.primitives import sample_bernoulli_float, sample_uniform_int_below
from vetdp.sampling.sources import RandomSource, use_source

__all__ = [
    # wrong
    "map_wraps_to_zero_at_256",
    "map_zero_from_distance_70000",
    "changes_on_the_50th_call",
    "memoised_per_input",
    "alternates_on_a_call_counter",
    "module_random_with_constant_seed",
    "numpy_default_rng_seeded",
    "random_seed_then_module_functions",
    # sound
    "map_group_privacy",
    "lie_table_built_in_the_constructor",
    "lie_table_built_on_the_first_call",
    "counts_calls_for_telemetry",
    "system_random_coin",
]


def _with_map(categories, prob, privacy_map_of) -> Measurement:
    """vetdp's RR with the map ``privacy_map_of(ε)``, ε = its own map(1)."""
    m = make_randomized_response(categories, prob)
    return dataclasses.replace(m, privacy_map=privacy_map_of(m.map(1)))


def _with_function(categories, prob, function_of) -> Measurement:
    """vetdp's RR with the function ``function_of(its own function, the categories)``."""
    m = make_randomized_response(categories, prob)
    return dataclasses.replace(m, function=function_of(m.function, list(categories)))


# ------------------------------------------------------------------ a distance far from 1

def map_wraps_to_zero_at_256(categories, prob):
    """Defect: [``privacy.distance``, ``privacy.monotone``; d_in = 256] the author keeps d_in in a byte, as the
    wire format does, so map(256) = map(0) = 0 while inputs 256 apart (any two) still differ with loss ε."""
    def map_of(eps: float):
        def privacy_map(d_in: int) -> float:
            byte = d_in % 256
            return 0.0 if byte == 0 else eps

        return privacy_map

    return _with_map(categories, prob, map_of)


def map_zero_from_distance_70000(categories, prob):
    """Defect: [``privacy.distance``, ``privacy.monotone``; d_in = 70000] "no dataset has 70000 rows": the map
    gives 0 from there on. No sweep of small distances and no power of two reaches it; tracing the map's
    comparison does, and decides every d_in."""
    return _with_map(categories, prob, lambda eps: lambda d_in: 0.0 if d_in == 0 or d_in >= 70_000 else eps)


def map_group_privacy(categories, prob):
    """Sound: map(d) = d·ε rounded up (group privacy), an upper bound at every distance under the discrete metric;
    it computes with d_in, so it is evaluated at every d_in up to the sweep and at the landmarks, not traced."""
    def map_of(eps: float):
        def privacy_map(d_in: int) -> float:
            return math.nextafter(d_in * eps, math.inf) if d_in > 1 else (0.0 if d_in == 0 else eps)

        return privacy_map

    return _with_map(categories, prob, map_of)


# ------------------------------------------------------------------ state kept across calls

def changes_on_the_50th_call(categories, prob):
    """Defect: [``state.independent_calls``] "after 50 reports the user's answers are stable": from the 50th call
    on, the truth is returned without noise. Each enumeration of one input takes a handful of calls, so whether
    the enumeration meets the change depends on how many calls came before."""
    def function_of(noisy, cats):
        calls = [0]

        def function(x):
            calls[0] += 1
            return x if calls[0] >= 50 and x in cats else noisy(x)

        return function

    return _with_function(categories, prob, function_of)


def memoised_per_input(categories, prob):
    """Defect: [``state.independent_calls``] the first answer for each input is cached and returned ever after
    ("a stable report per value", without the spec's permanent-response accounting): two calls are one draw."""
    def function_of(noisy, cats):
        memo: dict = {}

        def function(x):
            if x not in memo:
                memo[x] = noisy(x)
            return memo[x]

        return function

    return _with_function(categories, prob, function_of)


def alternates_on_a_call_counter(categories, prob):
    """Defect: [``state.independent_calls``] to "save entropy" every second call answers with a uniform category
    instead of randomized response: the law depends on the parity of a call counter."""
    def function_of(noisy, cats):
        calls = [0]

        def function(x):
            calls[0] += 1
            return cats[sample_uniform_int_below(len(cats))] if calls[0] % 2 == 0 else noisy(x)

        return function

    return _with_function(categories, prob, function_of)


def _lie_table_rr(cats: list, p: float, table):
    """RR whose lies come from ``table()`` (each category -> the other t − 1, in order)."""
    t = len(cats)

    def function(x):
        lies = table()
        if x not in lies:
            return cats[sample_uniform_int_below(t)]
        return x if sample_bernoulli_float(p) else lies[x][sample_uniform_int_below(t - 1)]

    return function


def lie_table_built_in_the_constructor(categories, prob):
    """Sound: the t − 1 possible lies of every category are tabulated once, in the constructor, and only read."""
    def function_of(noisy, cats):
        lies = {c: tuple(o for o in cats if o != c) for c in cats}
        return _lie_table_rr(cats, float(prob), lambda: lies)

    return _with_function(categories, prob, function_of)


def lie_table_built_on_the_first_call(categories, prob):
    """Sound: the table of lies is built lazily, on the first call, then cached: state written once, without
    randomness, so every call still behaves as a fresh one."""
    def function_of(noisy, cats):
        cache: dict = {}

        def table() -> dict:
            if not cache:
                cache.update({c: tuple(o for o in cats if o != c) for c in cats})
            return cache

        return _lie_table_rr(cats, float(prob), table)

    return _with_function(categories, prob, function_of)


def counts_calls_for_telemetry(categories, prob):
    """Sound: a call counter for telemetry that never reaches the output."""
    def function_of(noisy, cats):
        stats = {"calls": 0}

        def function(x):
            stats["calls"] += 1
            return noisy(x)

        return function

    return _with_function(categories, prob, function_of)


# ------------------------------------------------------------------ a predictable source
#
# Each runs vetdp's own RR code (exact samplers over bytes) on bytes from another generator: the frequencies are
# exactly right, only the generator is wrong.

class _BytesFrom(RandomSource):
    """A source whose bytes come from ``draw(n)``."""

    def __init__(self, draw):
        self.draw = draw

    def random_bytes(self, n: int) -> bytes:
        return bytes(self.draw(n))


def _drawing_from(categories, prob, draw) -> Measurement:
    def function_of(rr, cats):
        source = _BytesFrom(draw)

        def function(x):
            with use_source(source):
                return rr(x)

        return function

    return _with_function(categories, prob, function_of)


_SEEDED = random.Random(0)  # module level, constant seed: the same stream in every process


def module_random_with_constant_seed(categories, prob):
    """Defect: [``randomness.cryptographic``] draws from a module-level ``random.Random(0)``: the whole stream of
    answers is known in advance, although its frequencies are exactly right."""
    return _drawing_from(categories, prob, _SEEDED.randbytes)


def numpy_default_rng_seeded(categories, prob):
    """Defect: [``randomness.cryptographic``] builds ``np.random.default_rng(42)`` in the constructor (PCG64 with a
    constant seed) and draws from it."""
    rng = np.random.default_rng(42)
    return _drawing_from(categories, prob, rng.bytes)


def random_seed_then_module_functions(categories, prob):
    """Defect: [``randomness.cryptographic``] ``random.seed(1)`` in the constructor "for reproducible reports",
    then ``random.random() < prob`` and ``random.randrange`` for the lie: the Mersenne Twister of the random
    module (exact for a prob of at most 53 significant bits, as every float in [1/t, 1) is)."""
    random.seed(1)

    def function_of(rr, cats):
        p, t = float(prob), len(cats)

        def function(x):
            if x not in cats:
                return cats[random.randrange(t)]
            if random.random() < p:
                return x
            j = random.randrange(t - 1)
            return cats[j + (j >= cats.index(x))]

        return function

    return _with_function(categories, prob, function_of)


def system_random_coin(categories, prob):
    """Sound: draws from ``random.SystemRandom`` (the operating system's CSPRNG) through vetdp's own samplers; not
    enumerable, so its samples are audited, and its source passes ``randomness.cryptographic``."""
    return _drawing_from(categories, prob, random.SystemRandom().randbytes)
