"""Bit-vector randomized response variants for the production-size check (vetdp.engine.structure).

Same signature as ``make_randomized_response_bitvec``. Docstrings start with "Defect:" or "Sound:".
"""

from __future__ import annotations

from tests.mutants.unseen_bitvec import _epsilon, _measurement, _standard_map, _validated
from vetdp.impl.randomized_response_bitvec import flip_probability
from vetdp.sampling.primitives import sample_bernoulli_float

__all__ = ["leaks_beyond_bit_100", "hamming_bound_capped_at_64", "quarter_flips_from_bit_128", "flips_by_branching"]


def leaks_beyond_bit_100(input_domain, input_metric, f, constant_time=False):
    """Defect: bits 100 and up flip with half the probability (a per-block table filled wrongly), so the map
    is short at production lengths; at the search's small lengths (k <= 10) the code is correct."""
    k, m, f, constant_time = _validated(input_domain, input_metric, f, constant_time)
    q = flip_probability(f)
    probs = [q if i < 100 else q / 2 for i in range(k)]

    def function(bits):
        return tuple(b ^ sample_bernoulli_float(probs[i], constant_time) for i, b in enumerate(bits))

    return _measurement(input_domain, k, function, _standard_map(_epsilon(q, k, m)), "leaks_beyond_bit_100",
                        {"f": f})


def hamming_bound_capped_at_64(input_domain, input_metric, f, constant_time=False):
    """Defect: the map's Hamming bound takes the weight capped at 64 ("a weight fits one word"),
    min(2·min(m, 64), k), so the map is short only when m > 64 and k > 128 (privacy.sound)."""
    k, m, f, constant_time = _validated(input_domain, input_metric, f, constant_time)
    q = flip_probability(f)

    def function(bits):
        return tuple(b ^ sample_bernoulli_float(q, constant_time) for b in bits)

    return _measurement(input_domain, k, function, _standard_map(_epsilon(q, k, min(m, 64))),
                        "hamming_bound_capped_at_64", {"f": f})


def quarter_flips_from_bit_128(input_domain, input_metric, f, constant_time=False):
    """Defect: bits 128 and up (a third word) flip with probability f/4 (the wrong half of a table), so the code
    leaks more than its map says only on vectors longer than 128 bits (function.law, privacy.sound)."""
    k, m, f, constant_time = _validated(input_domain, input_metric, f, constant_time)
    q = flip_probability(f)
    quarter = flip_probability(q)

    def function(bits):
        return tuple(b ^ sample_bernoulli_float(quarter if i >= 128 else q, constant_time)
                     for i, b in enumerate(bits))

    return _measurement(input_domain, k, function, _standard_map(_epsilon(q, k, m)), "quarter_flips_from_bit_128",
                        {"f": f})


def flips_by_branching(input_domain, input_metric, f, constant_time=False):
    """Sound: branches on each coin (``if coin: not b``); correct, but its control flow depends on the draws,
    so no product structure can be read from one symbolic run."""
    k, m, f, constant_time = _validated(input_domain, input_metric, f, constant_time)
    q = flip_probability(f)

    def function(bits):
        out = []
        for b in bits:
            if sample_bernoulli_float(q, constant_time):
                out.append(not b)
            else:
                out.append(b)
        return tuple(out)

    return _measurement(input_domain, k, function, _standard_map(_epsilon(q, k, m)), "flips_by_branching", {"f": f})
