"""Wrong variants of make_randomized_response_bitvec."""

import dataclasses
import math
import os

from vetdp.core.measurement import BitVectorDomain
from vetdp.impl.randomized_response_bitvec import flip_probability, make_randomized_response_bitvec
from vetdp.sampling.primitives import sample_bernoulli_float


def flips_with_f(input_domain, input_metric, f, constant_time=False):
    """Defect: each bit flipped with probability f instead of f/2."""
    m = make_randomized_response_bitvec(input_domain, input_metric, f, constant_time)
    return dataclasses.replace(m, function=lambda bits: tuple(b ^ sample_bernoulli_float(f, constant_time)
                                                              for b in bits))


def last_bit_unflipped(input_domain, input_metric, f, constant_time=False):
    """Defect: the last bit is passed through unflipped."""
    m = make_randomized_response_bitvec(input_domain, input_metric, f, constant_time)
    q = flip_probability(f)
    return dataclasses.replace(m, function=lambda bits: tuple(
        b ^ sample_bernoulli_float(q, constant_time) for b in bits[:-1]) + bits[-1:])


def naive_round_to_nearest_map(input_domain, input_metric, f, constant_time=False):
    """Defect: the seeds' pseudocode map, 2*m*log((2-f)/f) in round-to-nearest floats."""
    m = make_randomized_response_bitvec(input_domain, input_metric, f, constant_time)
    eps = 2 * input_domain.max_weight * math.log((2 - f) / f)
    return dataclasses.replace(m, privacy_map=lambda d_in: 0.0 if d_in == 0 else eps)


def map_uses_m_not_2m(input_domain, input_metric, f, constant_time=False):
    """Defect: the map charges half the loss, m·ln((2−f)/f): it forgets that inputs differ in up to 2m bits."""
    m = make_randomized_response_bitvec(input_domain, input_metric, f, constant_time)
    half = m.map(1) / 2
    return dataclasses.replace(m, privacy_map=lambda d_in: 0.0 if d_in == 0 else half)


def no_length_check(input_domain, input_metric, f, constant_time=False):
    """Defect: the domain forgets its length, so an input of another length is randomised."""
    m = make_randomized_response_bitvec(input_domain, input_metric, f, constant_time)
    return dataclasses.replace(m, input_domain=BitVectorDomain(max_weight=input_domain.max_weight))


def ignores_constant_time(input_domain, input_metric, f, constant_time=False):
    """Defect: constant_time=True is accepted but the variable-time sampler runs."""
    m = make_randomized_response_bitvec(input_domain, input_metric, f, False)
    return dataclasses.replace(m, parameters={**m.parameters, "constant_time": constant_time})


def randomness_outside_primitives(input_domain, input_metric, f, constant_time=False):
    """Defect: flips bits with os.urandom directly, bypassing vetdp's primitives."""
    m = make_randomized_response_bitvec(input_domain, input_metric, f, constant_time)
    q = flip_probability(f)
    return dataclasses.replace(m, function=lambda bits: tuple(
        b ^ (int.from_bytes(os.urandom(7), "big") < q * 2**56) for b in bits))


def own_randomness_right_law(input_domain, input_metric, f, constant_time=False):
    """Not a defect for foreign code: flips with its own os.urandom draws, at the right rate."""
    return randomness_outside_primitives(input_domain, input_metric, f, constant_time)


def own_randomness_wrong_law(input_domain, input_metric, f, constant_time=False):
    """Defect: its own draws flip each bit with probability f (twice f/2), behind the f/2 map."""
    m = make_randomized_response_bitvec(input_domain, input_metric, f, constant_time)
    return dataclasses.replace(m, function=lambda bits: tuple(
        b ^ (int.from_bytes(os.urandom(7), "big") < f * 2**56) for b in bits))
