"""Variants of our randomized-response constructors that draw their own randomness ("foreign" code).

Each keeps our constructor's checks, privacy map and domains (``dataclasses.replace`` of
ours) and replaces the function by one that draws from NumPy, Python's ``random`` or
``secrets`` instead of vetdp's primitives. vetdp cannot enumerate them; ``vetdp verify``
must see the foreign draws, check the map against the exact law, and audit the samples.

Correct ones sample the exact law (Bernoulli(p) by comparing a uniform integer below the
power of two that is p's denominator with p's numerator; uniform choices by exact integer
samplers); those drawing from NumPy or Python's ``random`` still fail ``randomness.cryptographic``
(predictable generators), only ``secrets`` passes it. The ``*_keep_low`` ones keep the truth (RR) or
each bit (RAPPOR) with a probability 0.03 too low: the audit must flag them.

The randomness of each family comes from one module-level factory (``numpy_generator``,
``python_random``), so a test can make a run reproducible by patching it; ``vetdp
verify`` uses them unpatched.
"""

import dataclasses
import random
import secrets
from fractions import Fraction

import numpy as np

from vetdp.impl.randomized_response import make_randomized_response
from vetdp.impl.randomized_response_bitvec import flip_probability, make_randomized_response_bitvec

KEEP_DEFECT = Fraction(0.03)  # how much too low the *_keep_low variants keep (0.03 as a float: dyadic)


def numpy_generator() -> np.random.Generator:
    """A fresh, OS-seeded NumPy generator (what the NumPy variants draw from)."""
    return np.random.default_rng()


def python_random():
    """Python's module-level ``random`` (what the ``random`` variants draw from)."""
    return random


# ------------------------------------------------------------------ exact samplers over foreign bits
#
# Each ``*_coin(source, p)`` returns a function of no arguments that is True with probability exactly p,
# with p's numerator and exponent worked out once (the audit calls the coin millions of times).

def _split(p: Fraction) -> tuple[int, int]:
    """(numerator, exponent) with p = numerator / 2**exponent (p a float, hence dyadic)."""
    num, den = p.numerator, p.denominator
    return num, den.bit_length() - 1


_WORD = 64


def _numpy_bits(rng: np.random.Generator, e: int, size: int | None = None):
    """A uniform integer in [0, 2**e) (``size`` of them as a list when given): the top e bits of
    whole 64-bit words drawn from ``rng``'s bit generator."""
    words = max(1, -(-e // _WORD))
    raw = rng.bit_generator.random_raw
    drop = _WORD * words - e
    if words == 1:
        if size is None:
            return int(raw()) >> drop
        return [w >> drop for w in raw(size).tolist()]
    drawn = raw(words * (1 if size is None else size)).tolist()
    values = []
    for i in range(0, len(drawn), words):
        value = 0
        for w in drawn[i:i + words]:
            value = (value << _WORD) | w
        values.append(value >> drop)
    return values[0] if size is None else values


def _numpy_coin(rng: np.random.Generator, p: Fraction):
    num, e = _split(p)
    return lambda: _numpy_bits(rng, e) < num


def _random_coin(source, p: Fraction):
    num, e = _split(p)
    getrandbits = source.getrandbits
    return lambda: getrandbits(e) < num


def _secrets_coin(p: Fraction):
    num, e = _split(p)
    return lambda: (secrets.randbits(e) if e else 0) < num


def _rr_function(cats: list, coin, below):
    """Our RR's law over foreign draws: keep the truth when ``coin()``, else a uniform other category;
    an input outside the categories gets a uniform category."""
    index_of = {c: i for i, c in enumerate(cats)}
    t = len(cats)

    def function(truth):
        index = index_of.get(truth)
        if index is None:
            return cats[below(t)]
        if coin():
            return truth
        other = below(t - 1)
        return cats[other + (other >= index)]

    return function


def _low(p: Fraction) -> Fraction:
    return max(Fraction(0), p - KEEP_DEFECT)


# ------------------------------------------------------------------ categorical randomized response

def rr_numpy(categories, prob):
    """Correct: categorical RR drawing from a NumPy Generator (``np.random.default_rng()``)."""
    m = make_randomized_response(categories, prob)
    rng = numpy_generator()
    return dataclasses.replace(m, function=_rr_function(
        list(categories), _numpy_coin(rng, Fraction(prob)), lambda n: int(rng.integers(n))))


def rr_random(categories, prob):
    """Correct: categorical RR drawing from Python's module-level ``random``."""
    m = make_randomized_response(categories, prob)
    source = python_random()
    return dataclasses.replace(m, function=_rr_function(
        list(categories), _random_coin(source, Fraction(prob)), source.randrange))


def rr_secrets(categories, prob):
    """Correct: categorical RR drawing from ``secrets`` (the OS's CSPRNG)."""
    m = make_randomized_response(categories, prob)
    return dataclasses.replace(m, function=_rr_function(
        list(categories), _secrets_coin(Fraction(prob)), secrets.randbelow))


def rr_numpy_keep_low(categories, prob):
    """Defect: NumPy RR that tells the truth with probability prob − 0.03 (the map is still ours)."""
    m = make_randomized_response(categories, prob)
    rng = numpy_generator()
    return dataclasses.replace(m, function=_rr_function(
        list(categories), _numpy_coin(rng, _low(Fraction(prob))), lambda n: int(rng.integers(n))))


def rr_random_keep_low(categories, prob):
    """Defect: ``random`` RR that tells the truth with probability prob − 0.03 (the map is still ours)."""
    m = make_randomized_response(categories, prob)
    source = python_random()
    return dataclasses.replace(m, function=_rr_function(
        list(categories), _random_coin(source, _low(Fraction(prob))), source.randrange))


# ------------------------------------------------------------------ bit-vector randomized response (RAPPOR)

def _bitvec_numpy_function(rng: np.random.Generator, flip: Fraction):
    """Each bit flipped with probability exactly ``flip``: one vectorised NumPy draw per report."""
    num, e = _split(flip)

    def function(bits):
        drawn = _numpy_bits(rng, e, size=len(bits))
        return tuple(b ^ (v < num) for b, v in zip(bits, drawn, strict=True))

    return function


def _bitvec_random_function(source, flip: Fraction):
    """Each bit flipped with probability exactly ``flip``: one ``getrandbits`` per bit."""
    coin = _random_coin(source, flip)

    def function(bits):
        return tuple(b ^ coin() for b in bits)

    return function


def _keep_low_flip(f) -> Fraction:
    return min(Fraction(1), Fraction(flip_probability(f)) + KEEP_DEFECT)


def bitvec_numpy(input_domain, input_metric, f, constant_time=False):
    """Correct: RAPPOR flipping each bit with probability flip_probability(f), drawn from NumPy."""
    m = make_randomized_response_bitvec(input_domain, input_metric, f, constant_time)
    return dataclasses.replace(m, function=_bitvec_numpy_function(numpy_generator(), Fraction(flip_probability(f))))


def bitvec_random(input_domain, input_metric, f, constant_time=False):
    """Correct: RAPPOR flipping each bit with probability flip_probability(f), drawn from Python's ``random``."""
    m = make_randomized_response_bitvec(input_domain, input_metric, f, constant_time)
    return dataclasses.replace(m, function=_bitvec_random_function(python_random(), Fraction(flip_probability(f))))


def bitvec_numpy_keep_low(input_domain, input_metric, f, constant_time=False):
    """Defect: NumPy RAPPOR keeping each bit with probability 0.03 too low (flip probability + 0.03)."""
    m = make_randomized_response_bitvec(input_domain, input_metric, f, constant_time)
    return dataclasses.replace(m, function=_bitvec_numpy_function(numpy_generator(), _keep_low_flip(f)))


def bitvec_random_keep_low(input_domain, input_metric, f, constant_time=False):
    """Defect: ``random`` RAPPOR keeping each bit with probability 0.03 too low (flip probability + 0.03)."""
    m = make_randomized_response_bitvec(input_domain, input_metric, f, constant_time)
    return dataclasses.replace(m, function=_bitvec_random_function(python_random(), _keep_low_flip(f)))
