"""Wrong and sound variants of the hashing mechanisms (OLH, Hadamard response, CMS, HCMS) and their estimators.

Each wrong variant is rejected on the clause its defect breaks (tests/test_hashing.py); each sound variant, written
differently from vetdp's, passes every clause.
"""

import dataclasses
import math
from fractions import Fraction

from vetdp.core.measurement import AtomDomain, DiscreteDistance, IndexDomain, MaxDivergence, Measurement
from vetdp.impl.count_mean_sketch import make_count_mean_sketch
from vetdp.impl.hadamard_count_mean_sketch import make_hadamard_count_mean_sketch
from vetdp.impl.hadamard_response import hadamard_entry, hadamard_keep_probability, make_hadamard_response, output_size
from vetdp.impl.olh import SEEDS, estimate_olh_counts, make_olh, olh_buckets, olh_keep_probability, wang_olh_variance
from vetdp.sampling.primitives import sample_bernoulli_float, sample_uniform_int_below
from vetdp.sampling.public import (
    hash_bucket,
    hash_bucket_fn,
    keyed_encoding,
    sample_public_uniform_int_below,
    sample_uniform_member,
)


def _olh(d, epsilon, g, function, loss=None, constant_time=False):
    """A Measurement of OLH's shape around ``function``, claiming ``loss`` (default: vetdp's map)."""
    ours = make_olh(d, epsilon, g, constant_time)
    claim = ours.map(1) if loss is None else loss
    return Measurement(IndexDomain(d), DiscreteDistance(), MaxDivergence(), function,
                       lambda d_in: 0.0 if d_in == 0 else claim)


# ------------------------------------------------------------------ OLH: wrong

def olh_p_over_g(d, epsilon, g=None, constant_time=False):
    """Defect: p = e^ε/(e^ε + g) (the paper's g − 1 misread as g); at small ε the lie is likelier than the truth,
    and the claimed ε is exceeded."""
    buckets = olh_buckets(epsilon) if g is None else g
    keep = math.exp(epsilon) / (math.exp(epsilon) + buckets)

    def function(x):
        seed = sample_public_uniform_int_below(SEEDS)
        bucket = hash_bucket(seed, x, buckets)
        lie = sample_uniform_int_below(buckets - 1)
        lie += lie >= bucket
        return (seed, bucket if sample_bernoulli_float(keep) else lie)

    return _olh(d, epsilon, g, function, loss=epsilon)


def olh_lie_over_all_g(d, epsilon, g=None, constant_time=False):
    """Defect: the lie is drawn over all g buckets, the true one included (collisions ignored): the true bucket
    gets p + (1 − p)/g, more than the map allows."""
    buckets = olh_buckets(epsilon) if g is None else g
    keep = olh_keep_probability(epsilon, g)

    def function(x):
        seed = sample_public_uniform_int_below(SEEDS)
        bucket = hash_bucket(seed, x, buckets)
        lie = sample_uniform_int_below(buckets)
        return (seed, bucket if sample_bernoulli_float(keep) else lie)

    return _olh(d, epsilon, g, function)


def olh_seed_not_released(d, epsilon, g=None, constant_time=False):
    """Defect: the seed is drawn as public randomness but the report omits it (the server cannot decode, and
    conditioning on a secret draw is no longer exact)."""
    ours = make_olh(d, epsilon, g)
    return dataclasses.replace(ours, function=lambda x: ours.function(x)[1])


def olh_seed_reused(d, epsilon, g=None, constant_time=False):
    """Defect: one seed drawn when the client is built and reused for every report, instead of a fresh public
    seed per report (every report of the client hashes with the same function)."""
    buckets = olh_buckets(epsilon) if g is None else g
    keep = olh_keep_probability(epsilon, g)
    seed = sample_uniform_int_below(SEEDS)

    def function(x):
        bucket = hash_bucket(seed, x, buckets)
        lie = sample_uniform_int_below(buckets - 1)
        lie += lie >= bucket
        return (seed, bucket if sample_bernoulli_float(keep) else lie)

    return _olh(d, epsilon, g, function)


def olh_modulo_bias(d, epsilon, g=None, constant_time=False):
    """Defect: the bucket is an 8-bit hash reduced mod g, not uniform when g does not divide 256."""
    buckets = olh_buckets(epsilon) if g is None else g
    keep = olh_keep_probability(epsilon, g)

    def function(x):
        seed = sample_public_uniform_int_below(SEEDS)
        bucket = hash_bucket(seed, x, 256) % buckets
        lie = sample_uniform_int_below(buckets - 1)
        lie += lie >= bucket
        return (seed, bucket if sample_bernoulli_float(keep) else lie)

    return _olh(d, epsilon, g, function)


def olh_input_hashed_by_hand(d, epsilon, g=None, constant_time=False):
    """Not decidable by the keyed shape: the value is hashed by str() and hashlib, not through hash_bucket (the
    engine says so and names the cause instead of deciding)."""
    import hashlib

    buckets = olh_buckets(epsilon) if g is None else g
    keep = olh_keep_probability(epsilon, g)

    def function(x):
        seed = sample_public_uniform_int_below(SEEDS)
        bucket = int.from_bytes(hashlib.sha256(f"{seed}/{x}".encode()).digest(), "big") % buckets
        lie = sample_uniform_int_below(buckets - 1)
        lie += lie >= bucket
        return (seed, bucket if sample_bernoulli_float(keep) else lie)

    return _olh(d, epsilon, g, function)


def olh_swallows_the_seal(d, epsilon, g=None, constant_time=False):
    """Not decidable: the value's str() is tried and the error swallowed (in production str(x) succeeds and leaks
    through the bucket of another key)."""
    buckets = olh_buckets(epsilon) if g is None else g
    keep = olh_keep_probability(epsilon, g)

    def function(x):
        seed = sample_public_uniform_int_below(SEEDS)
        try:
            tag = str(x)
        except Exception:  # noqa: BLE001
            tag = None
        bucket = hash_bucket(seed, x, buckets) if tag is None else int(tag) % buckets
        lie = sample_uniform_int_below(buckets - 1)
        lie += lie >= bucket
        return (seed, bucket if sample_bernoulli_float(keep) else lie)

    return _olh(d, epsilon, g, function)


def olh_estimator_modulo_bias(reports, d, epsilon, g=None, exact=False):
    """Defect: the server tests support with a 2-bit hash reduced mod g (its buckets are not uniform for g = 3)."""
    buckets = olh_buckets(epsilon) if g is None else g
    p, q = Fraction(olh_keep_probability(epsilon, g)), Fraction(1, buckets)
    counts = [sum(1 for s, y in reports if hash_bucket(s, v, 4) % buckets == y) for v in range(d)]
    out = [(c - len(reports) * q) / (p - q) for c in counts]
    return out if exact else [float(e) for e in out]


def olh_wang_variance(counts, v, epsilon, g=None, exact=False):
    """Defect (as published): Wang et al.'s n(1/g)(1 − 1/g)/(p − 1/g)², without the c_v and seed-collision terms."""
    return wang_olh_variance(sum(counts), epsilon, g, exact)


# ------------------------------------------------------------------ OLH: sound, written differently

def olh_keep_first(d, epsilon, g=None, constant_time=False):
    """Sound: the keep coin first, the lie as a list index, the bucket through keyed_encoding with our own
    wrapper of the hash, the report as a list."""
    buckets = olh_buckets(epsilon) if g is None else g
    keep = olh_keep_probability(epsilon, g)

    def bucket_of(seed, x):
        return hash_bucket_fn(seed, x, buckets)

    def function(x):
        honest = sample_bernoulli_float(keep, constant_time)
        seed = sample_public_uniform_int_below(SEEDS, constant_time)
        bucket = keyed_encoding(bucket_of, seed, x, buckets)
        others = [b for b in range(buckets) if b != bucket]
        lie = others[sample_uniform_int_below(buckets - 1, constant_time)]
        return [seed, bucket if honest else lie]

    return _olh(d, epsilon, g, function, constant_time=constant_time)


# ------------------------------------------------------------------ Hadamard response

def hr_row_off_by_one(k, epsilon):
    """Defect: value x uses row x, not x + 1: value 0 gets row 0 (all +1), whose other half is empty."""
    keep = hadamard_keep_probability(epsilon)
    outputs = output_size(k)

    def member(y, x):
        return 1 if hadamard_entry(x, y) == 1 else 0

    ours = make_hadamard_response(k, epsilon)
    return dataclasses.replace(ours, function=lambda x: sample_uniform_member(
        member, x, outputs, 1 if sample_bernoulli_float(keep) else 0))


def hr_members_listed(k, epsilon):
    """Sound: the class is drawn by listing it and indexing uniformly (no member primitive), on a small k."""
    keep = hadamard_keep_probability(epsilon)
    outputs = output_size(k)
    ours = make_hadamard_response(k, epsilon)

    def function(x):
        inside = sample_bernoulli_float(keep)
        half = [y for y in range(outputs) if (hadamard_entry(x + 1, y) == 1) == inside]
        return half[sample_uniform_int_below(len(half))]

    return dataclasses.replace(ours, function=function)


# ------------------------------------------------------------------ CMS and HCMS

def cms_epsilon_not_split(m, k, epsilon, hash_key=0, constant_time=False):
    """Defect: every coordinate flipped with 1/(1 + e^ε), as if one coordinate carried the whole ε: two coordinates
    differ, so the loss is 2ε."""
    flip = 1 / (1 + math.exp(epsilon))
    ours = make_count_mean_sketch(m, k, epsilon, hash_key, constant_time)

    def function(x):
        j = sample_public_uniform_int_below(k)
        bucket = hash_bucket((hash_key, j), x, m)
        return (j, tuple(2 * ((i == bucket) ^ sample_bernoulli_float(flip)) - 1 for i in range(m)))

    return Measurement(AtomDomain(str), DiscreteDistance(), MaxDivergence(), function,
                       lambda d_in: 0.0 if d_in == 0 else float(epsilon), parameters=dict(ours.parameters))


def cms_variance_without_collisions(counts, d, m, k, epsilon, exact=False):
    """Defect: the variance as if users' hash collisions with d were independent (no shared-row covariance)."""
    from vetdp.impl.count_mean_sketch import cms_flip_probability

    f = Fraction(cms_flip_probability(epsilon))
    c, q, n = 1 / (1 - 2 * f), Fraction(1, m), sum(counts.values())
    out = Fraction(m, m - 1) ** 2 * (n * (c * c - 1) / 4 + (n - counts.get(d, 0)) * q * (1 - q))
    return out if exact else float(out)


def hcms_map_half_epsilon(m, k, epsilon, hash_key=0, constant_time=False):
    """Defect: the map claims ε/2 (the CMS split applied to HCMS's single bit)."""
    ours = make_hadamard_count_mean_sketch(m, k, epsilon, hash_key, constant_time)
    return dataclasses.replace(ours, privacy_map=lambda d_in: 0.0 if d_in == 0 else ours.map(1) / 2)


__all__ = ["olh_p_over_g", "olh_lie_over_all_g", "olh_seed_not_released", "olh_seed_reused", "olh_modulo_bias",
           "olh_input_hashed_by_hand", "olh_swallows_the_seal", "olh_estimator_modulo_bias", "olh_wang_variance",
           "olh_keep_first", "hr_row_off_by_one", "hr_members_listed", "cms_epsilon_not_split",
           "cms_variance_without_collisions", "hcms_map_half_epsilon", "estimate_olh_counts"]
