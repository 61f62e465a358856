"""Variants of our randomized-response constructors that draw their own randomness ("foreign" code).

Each keeps our constructor's checks, privacy map and domains (``dataclasses.replace`` of
ours) and replaces the function by one that draws from NumPy, Python's ``random`` or
``secrets`` instead of vetdp's primitives. vetdp cannot enumerate them; ``vetdp verify``
must see the foreign draws, check the map against the exact law, and audit the samples.

Correct ones sample the exact law (Bernoulli(p) by comparing a uniform integer below the
power of two that is p's denominator with p's numerator; uniform choices by exact integer
samplers). The ``*_keep_low`` ones keep the truth (RR) or each bit (RAPPOR) with a
probability 0.03 too low: the audit must flag them.

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

def _split(p: Fraction) -> tuple[int, int]:
    """(numerator, exponent) with p = numerator / 2**exponent (p a float, hence dyadic)."""
    num, den = p.numerator, p.denominator
    return num, den.bit_length() - 1


def _numpy_bits(rng: np.random.Generator, e: int) -> int:
    """A uniform integer in [0, 2**e) from 64-bit words of ``rng``."""
    words = -(-e // 64)
    value = 0
    for w in rng.integers(0, 2**64, size=words, dtype=np.uint64).tolist():
        value = (value << 64) | int(w)
    return value >> (64 * words - e)


def _numpy_bernoulli(rng: np.random.Generator, p: Fraction) -> bool:
    """True with probability exactly p (a dyadic rational in [0, 1])."""
    num, e = _split(p)
    return _numpy_bits(rng, e) < num


def _random_bernoulli(source, p: Fraction) -> bool:
    num, e = _split(p)
    return source.getrandbits(e) < num


def _secrets_bernoulli(p: Fraction) -> bool:
    num, e = _split(p)
    return (secrets.randbits(e) if e else 0) < num


def _rr_function(cats: list, keep: Fraction, bernoulli, below):
    """Our RR's law over foreign draws: keep the truth w.p. ``keep``, else a uniform other category;
    an input outside the categories gets a uniform category."""
    index_of = {c: i for i, c in enumerate(cats)}
    t = len(cats)

    def function(truth):
        index = index_of.get(truth)
        if index is None:
            return cats[below(t)]
        if bernoulli(keep):
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
        list(categories), Fraction(prob), lambda p: _numpy_bernoulli(rng, p), lambda n: int(rng.integers(n))))


def rr_random(categories, prob):
    """Correct: categorical RR drawing from Python's module-level ``random``."""
    m = make_randomized_response(categories, prob)
    source = python_random()
    return dataclasses.replace(m, function=_rr_function(
        list(categories), Fraction(prob), lambda p: _random_bernoulli(source, p), source.randrange))


def rr_secrets(categories, prob):
    """Correct: categorical RR drawing from ``secrets`` (the OS's CSPRNG)."""
    m = make_randomized_response(categories, prob)
    return dataclasses.replace(m, function=_rr_function(
        list(categories), Fraction(prob), _secrets_bernoulli, secrets.randbelow))


def rr_numpy_keep_low(categories, prob):
    """Defect: NumPy RR that tells the truth with probability prob − 0.03 (the map is still ours)."""
    m = make_randomized_response(categories, prob)
    rng = numpy_generator()
    return dataclasses.replace(m, function=_rr_function(
        list(categories), _low(Fraction(prob)), lambda p: _numpy_bernoulli(rng, p), lambda n: int(rng.integers(n))))


def rr_random_keep_low(categories, prob):
    """Defect: ``random`` RR that tells the truth with probability prob − 0.03 (the map is still ours)."""
    m = make_randomized_response(categories, prob)
    source = python_random()
    return dataclasses.replace(m, function=_rr_function(
        list(categories), _low(Fraction(prob)), lambda p: _random_bernoulli(source, p), source.randrange))


# ------------------------------------------------------------------ bit-vector randomized response (RAPPOR)

def _bitvec_function(flip: Fraction, bernoulli):
    def function(bits):
        return tuple(b ^ bernoulli(flip) for b in bits)

    return function


def bitvec_numpy(input_domain, input_metric, f, constant_time=False):
    """Correct: RAPPOR flipping each bit with probability flip_probability(f), drawn from NumPy."""
    m = make_randomized_response_bitvec(input_domain, input_metric, f, constant_time)
    rng = numpy_generator()
    return dataclasses.replace(m, function=_bitvec_function(Fraction(flip_probability(f)),
                                                            lambda p: _numpy_bernoulli(rng, p)))


def bitvec_random(input_domain, input_metric, f, constant_time=False):
    """Correct: RAPPOR flipping each bit with probability flip_probability(f), drawn from Python's ``random``."""
    m = make_randomized_response_bitvec(input_domain, input_metric, f, constant_time)
    source = python_random()
    return dataclasses.replace(m, function=_bitvec_function(Fraction(flip_probability(f)),
                                                            lambda p: _random_bernoulli(source, p)))


def bitvec_numpy_keep_low(input_domain, input_metric, f, constant_time=False):
    """Defect: NumPy RAPPOR keeping each bit with probability 0.03 too low (flip probability + 0.03)."""
    m = make_randomized_response_bitvec(input_domain, input_metric, f, constant_time)
    rng = numpy_generator()
    flip = min(Fraction(1), Fraction(flip_probability(f)) + KEEP_DEFECT)
    return dataclasses.replace(m, function=_bitvec_function(flip, lambda p: _numpy_bernoulli(rng, p)))
