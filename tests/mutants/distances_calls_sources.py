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
from fractions import Fraction

import numpy as np

from tests.mutants.foreign_variants import _numpy_coin, _random_coin, _rr_function
from tests.mutants.unseen_rr import _epsilon, _measurement, _validated, lie_by_rotation
from vetdp.sampling.primitives import sample_bernoulli_float, sample_uniform_int_below

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


def _standard_function(cats: list, p: float):
    """Categorical RR through vetdp's primitives (a sound variant's function: the truth with probability p, else a
    uniform other category)."""
    return lie_by_rotation(cats, p).function


# ------------------------------------------------------------------ a distance far from 1

def map_wraps_to_zero_at_256(categories, prob):
    """Defect: [``privacy.distance``, ``privacy.monotone``; d_in = 256] the author keeps d_in in a byte, as the
    wire format does, so map(256) = map(0) = 0 while inputs 256 apart (any two) still differ with loss ε."""
    cats, p = _validated(categories, prob)
    eps = _epsilon(p, len(cats))

    def privacy_map(d_in: int) -> float:
        byte = d_in % 256
        return 0.0 if byte == 0 else eps

    return _measurement(cats, _standard_function(cats, p), eps, "map_wraps_to_zero_at_256", privacy_map)


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

    return _measurement(cats, _standard_function(cats, p), eps, "map_zero_from_distance_70000", privacy_map)


def map_group_privacy(categories, prob):
    """Sound: map(d) = d·ε rounded up (group privacy), an upper bound at every distance under the discrete metric;
    it computes with d_in, so it is evaluated at every d_in up to the sweep and at the landmarks, not traced."""
    cats, p = _validated(categories, prob)
    eps = _epsilon(p, len(cats))

    def privacy_map(d_in: int) -> float:
        return math.nextafter(d_in * eps, math.inf) if d_in > 1 else (0.0 if d_in == 0 else eps)

    return _measurement(cats, _standard_function(cats, p), eps, "map_group_privacy", privacy_map)



# ------------------------------------------------------------------ state kept across calls

def changes_on_the_50th_call(categories, prob):
    """Defect: [``state.independent_calls``] "after 50 reports the user's answers are stable": from the 50th call
    on, the truth is returned without noise. Each enumeration of one input takes a handful of calls, so whether
    the enumeration meets the change depends on how many calls came before."""
    cats, p = _validated(categories, prob)
    noisy = _standard_function(cats, p)
    calls = [0]

    def function(x):
        calls[0] += 1
        return x if calls[0] >= 50 and x in cats else noisy(x)

    return _measurement(cats, function, _epsilon(p, len(cats)), "changes_on_the_50th_call")


def memoised_per_input(categories, prob):
    """Defect: [``state.independent_calls``] the first answer for each input is cached and returned ever after
    ("a stable report per value", without the spec's permanent-response accounting): two calls are one draw."""
    cats, p = _validated(categories, prob)
    noisy = _standard_function(cats, p)
    memo: dict = {}

    def function(x):
        if x not in memo:
            memo[x] = noisy(x)
        return memo[x]

    return _measurement(cats, function, _epsilon(p, len(cats)), "memoised_per_input")


def alternates_on_a_call_counter(categories, prob):
    """Defect: [``state.independent_calls``] to "save entropy" every second call answers with a uniform category
    instead of randomized response: the law depends on the parity of a call counter."""
    cats, p = _validated(categories, prob)
    noisy = _standard_function(cats, p)
    calls = [0]

    def function(x):
        calls[0] += 1
        return cats[sample_uniform_int_below(len(cats))] if calls[0] % 2 == 0 else noisy(x)

    return _measurement(cats, function, _epsilon(p, len(cats)), "alternates_on_a_call_counter")


def lie_table_built_in_the_constructor(categories, prob):
    """Sound: the t − 1 possible lies of every category are tabulated once, in the constructor, and only read."""
    cats, p = _validated(categories, prob)
    lies = {c: tuple(o for o in cats if o != c) for c in cats}
    t = len(cats)

    def function(x):
        if x not in lies:
            return cats[sample_uniform_int_below(t)]
        return x if sample_bernoulli_float(p) else lies[x][sample_uniform_int_below(t - 1)]

    return _measurement(cats, function, _epsilon(p, t), "lie_table_built_in_the_constructor")


def lie_table_built_on_the_first_call(categories, prob):
    """Sound: the table of lies is built lazily, on the first call, then cached: state written once, without
    randomness, so every call still behaves as a fresh one."""
    cats, p = _validated(categories, prob)
    t = len(cats)
    cache: dict = {}

    def function(x):
        if not cache:
            cache.update({c: tuple(o for o in cats if o != c) for c in cats})
        if x not in cache:
            return cats[sample_uniform_int_below(t)]
        return x if sample_bernoulli_float(p) else cache[x][sample_uniform_int_below(t - 1)]

    return _measurement(cats, function, _epsilon(p, t), "lie_table_built_on_the_first_call")


def counts_calls_for_telemetry(categories, prob):
    """Sound: a call counter for telemetry that never reaches the output."""
    cats, p = _validated(categories, prob)
    noisy = _standard_function(cats, p)
    stats = {"calls": 0}

    def function(x):
        stats["calls"] += 1
        return noisy(x)

    return _measurement(cats, function, _epsilon(p, len(cats)), "counts_calls_for_telemetry")



# ------------------------------------------------------------------ a predictable source
#
# Each samples the exact law of randomized response (a coin compared with prob's numerator, uniform integers by
# exact samplers): the frequencies are right, only the generator is wrong.

_SEEDED = random.Random(0)  # module level, constant seed: the same stream in every process


def module_random_with_constant_seed(categories, prob):
    """Defect: [``randomness.cryptographic``] draws from a module-level ``random.Random(0)``: the whole stream of
    answers is known in advance, although its frequencies are exactly right."""
    cats, p = _validated(categories, prob)
    function = _rr_function(cats, _random_coin(_SEEDED, Fraction(p)), _SEEDED.randrange)
    return _measurement(cats, function, _epsilon(p, len(cats)), "module_random_with_constant_seed")


def numpy_default_rng_seeded(categories, prob):
    """Defect: [``randomness.cryptographic``] builds ``np.random.default_rng(42)`` in the constructor (PCG64 with a
    constant seed) and draws from it."""
    cats, p = _validated(categories, prob)
    rng = np.random.default_rng(42)
    function = _rr_function(cats, _numpy_coin(rng, Fraction(p)), lambda n: int(rng.integers(n)))
    return _measurement(cats, function, _epsilon(p, len(cats)), "numpy_default_rng_seeded")


def random_seed_then_module_functions(categories, prob):
    """Defect: [``randomness.cryptographic``] ``random.seed(1)`` in the constructor "for reproducible reports",
    then ``random.random() < prob`` and ``random.randrange``: the Mersenne Twister of the random module."""
    cats, p = _validated(categories, prob)
    random.seed(1)
    function = _rr_function(cats, lambda: random.random() < p, random.randrange)
    return _measurement(cats, function, _epsilon(p, len(cats)), "random_seed_then_module_functions")


def system_random_coin(categories, prob):
    """Sound: draws from ``random.SystemRandom`` (the operating system's CSPRNG) at exactly the right rates; not
    enumerable, so its samples are audited, and its source passes ``randomness.cryptographic``."""
    cats, p = _validated(categories, prob)
    source = random.SystemRandom()
    function = _rr_function(cats, _random_coin(source, Fraction(p)), source.randrange)
    return _measurement(cats, function, _epsilon(p, len(cats)), "system_random_coin")
