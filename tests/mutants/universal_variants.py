"""Variants whose bug lives in a narrow band of a parameter, or at a word-size boundary (issue 23).

A sampled search over parameters almost never lands in such a band; exploring the float line by regions
(:mod:`vetdp.engine.universal`) finds it on every run. Each takes the arguments of vetdp's constructor. Docstrings
start with "Defect:" (the clause that must fail, and where) or "Sound:" (several branches, every one correct).
"""

from __future__ import annotations

import dataclasses
import math

from vetdp.core.measurement import (
    AtomDomain,
    DiscreteDistance,
    MaxDivergence,
    Measurement,
    PrivacyConstant,
)
from vetdp.core.validation import check_float, check_interval
from vetdp.impl.k_rappor import k_rappor_flip_probability, make_k_rappor
from vetdp.impl.randomized_response import RANDOMIZED_RESPONSE_EPSILON
from vetdp.impl.randomized_response_bitvec import (
    RANDOMIZED_RESPONSE_BITVEC_EPSILON,
    flip_probability,
    make_randomized_response_bitvec,
)
from vetdp.sampling.primitives import sample_bernoulli_float

__all__ = ["bitvec_band", "bitvec_table", "bitvec_words", "bitvec_map_weight_capped", "bitvec_branches",
           "bitvec_one_ulp_more_noise", "bool_band",
           "bool_branches", "bool_loose_band", "BAND", "LOOSE_BAND", "k_rappor_band_map",
           "k_rappor_first_64_bits_by_bool", "k_rappor_by_bool", "k_rappor_max_map", "k_rappor_nudged_min",
           "k_rappor_doubled_side", "K_RAPPOR_BAND", "rappor_band", "rappor_flip_band", "rappor_loose_band",
           "RAPPOR_P_BAND", "RAPPOR_F_BAND", "RAPPOR_LOOSE_BAND", "rr_accepts_below_one_over_t"]

BAND = (0.2515, 0.2525)  # bitvec_band's band of f, open at both ends
LOOSE_BAND = (0.8, 0.8 + 2.0**-20)  # bool_loose_band's band of prob, open at both ends
RAPPOR_P_BAND = (0.6, 0.6 + 2.0**-18)  # rappor_band's band of p, open at both ends
RAPPOR_F_BAND = (0.3, 0.3 + 2.0**-20)  # rappor_flip_band's band of f, open at both ends
RAPPOR_LOOSE_BAND = (0.7, 0.7 + 2.0**-20)  # rappor_loose_band's band of q, open at both ends


def _bitvec(input_domain, input_metric, f, flip_of, covered=None):
    f = check_float("f", f)
    check_interval("f", f, 0, 1, lo_closed=False, hi_closed=True)
    k, m = input_domain.length, input_domain.max_weight
    flip = flip_of(f)
    eps = PrivacyConstant(RANDOMIZED_RESPONSE_BITVEC_EPSILON, {"q": flip_probability(f), "d": min(2 * m, k)}).value
    last = k if covered is None else covered(k)

    def function(bits):
        return tuple(b ^ sample_bernoulli_float(flip) if i < last else b for i, b in enumerate(bits))

    return Measurement(input_domain, input_metric, MaxDivergence(), function, lambda d: 0.0 if d == 0 else eps)


def bitvec_band(input_domain, input_metric, f, constant_time=False):
    """Defect (function.law, privacy.sound): for f in the open band BAND the bits are flipped with f/4, half the
    noise the map accounts for."""
    return _bitvec(input_domain, input_metric, f,
                   lambda f: f / 4 if BAND[0] < f < BAND[1] else flip_probability(f))


def bitvec_table(input_domain, input_metric, f, constant_time=False):
    """Defect (function.law): the flip probability is read from a table indexed by round(20·f), a coarse
    approximation of f/2 that is wrong almost everywhere (and less noisy below each table point)."""
    return _bitvec(input_domain, input_metric, f, lambda f: [i / 40 for i in range(21)][round(f * 20)])


def bitvec_words(input_domain, input_metric, f, constant_time=False):
    """Defect (function.law at k > 64, privacy.sound): bits are flipped a 64-bit word at a time and the last,
    partial word is forgotten when k is not a multiple of 64: those bits are released as they are."""
    return _bitvec(input_domain, input_metric, f, flip_probability,
                   covered=lambda k: k if k <= 64 or k % 64 == 0 else 64 * (k // 64))


def bitvec_map_weight_capped(input_domain, input_metric, f, constant_time=False):
    """Defect (privacy.sound at m > 64 and k > 128 only): the law is vetdp's, but the map's Hamming bound caps the
    weight at 64, min(2·min(m, 64), k): short by a factor of 129/128 at k = 129, m = 65."""
    m = _bitvec(input_domain, input_metric, f, flip_probability)
    k, w = input_domain.length, input_domain.max_weight
    eps = PrivacyConstant(RANDOMIZED_RESPONSE_BITVEC_EPSILON, {"q": flip_probability(f), "d": min(2 * min(w, 64), k)})
    return dataclasses.replace(m, privacy_map=lambda d: 0.0 if d == 0 else eps.value)


def bitvec_one_ulp_more_noise(input_domain, input_metric, f, constant_time=False):
    """Sound (an admissible law, not the reference): where the flip probability is at least 2**-1000 it is one ulp
    above vetdp's (more noise), within the spec's window of 2**-30 of f/2; the map is the bound at that flip."""
    def flip(f):
        q = flip_probability(f)
        return min(0.5, math.nextafter(q, 1.0)) if q >= 2.0**-1000 else q

    m = _bitvec(input_domain, input_metric, f, flip)
    eps = PrivacyConstant(RANDOMIZED_RESPONSE_BITVEC_EPSILON,
                          {"q": flip(f), "d": min(2 * input_domain.max_weight, input_domain.length)}).value
    return dataclasses.replace(m, privacy_map=lambda d: 0.0 if d == 0 else eps)

def bitvec_branches(input_domain, input_metric, f, constant_time=False):
    """Sound: f = 1 is special-cased (pure noise, q = 1/2 exactly as flip_probability gives), f at most 2**-1022
    takes the same rounded-up flip in a branch of its own; every branch is vetdp's law."""
    def flip(f):
        if f == 1.0:
            return 0.5
        if f <= 2.0**-1022:
            return flip_probability(f)
        return flip_probability(f)

    return _bitvec(input_domain, input_metric, f, flip)


ONE_CATEGORY = 27  # rr_one_category's category: inside no spread of chosen categories from t = 28 to 32


def rr_one_category(categories, prob):
    """Defect (function.law): with t >= 28 int categories, the input ONE_CATEGORY is answered truthfully always,
    a law the sampled search checks only where its spread of enumerated categories holds that input."""
    from vetdp.impl.randomized_response import make_randomized_response

    m = make_randomized_response(categories, prob)
    if len(categories) < 28:
        return m
    return dataclasses.replace(m, function=lambda x: x if x == ONE_CATEGORY else m.function(x))


def _bool(prob, keep_of, loose=lambda p: False):
    p = check_float("prob", prob)
    check_interval("prob", p, 0.5, 1, lo_closed=True, hi_closed=False)
    eps = PrivacyConstant(RANDOMIZED_RESPONSE_EPSILON, {"prob": p, "t": 2}).value
    keep = keep_of(p)

    def function(truth):
        return truth ^ (not sample_bernoulli_float(keep))

    return Measurement(AtomDomain(bool), DiscreteDistance(), MaxDivergence(), function,
                       lambda d: 0.0 if d == 0 else 2.0 * eps if loose(p) else eps)


def bool_band(prob, constant_time=False):
    """Defect (function.law, privacy.sound): for prob in (0.9, 0.9 + 2**-20) the truth is kept a little more
    often (prob + 2**-20) than the map accounts for."""
    return _bool(prob, lambda p: p + 2.0**-20 if 0.9 < p < 0.9 + 2.0**-20 else p)


def bool_branches(prob, constant_time=False):
    """Sound: prob = 1/2 (pure noise) and prob above 0.99 take branches of their own, each keeping the truth with
    probability prob exactly."""
    def keep(p):
        if p == 0.5:
            return 0.5
        return p if p > 0.99 else p * 1.0

    return _bool(prob, keep)


def bool_loose_band(prob, constant_time=False):
    """Defect (privacy.tight): for prob in the open band LOOSE_BAND, 2**-20 wide, the map claims 2ε: sound, but
    twice the exact loss; the law is vetdp's everywhere."""
    return _bool(prob, lambda p: p, loose=lambda p: LOOSE_BAND[0] < p < LOOSE_BAND[1])


K_RAPPOR_BAND = (2.0, 2.002)  # k_rappor_band_map's band of ε, open at both ends


def _k_rappor_map(input_domain, input_metric, epsilon, constant_time, choose):
    """vetdp's k-RAPPOR with the map ``choose(ε, bit-vector bound)`` (ε the validated parameter)."""
    measurement = make_k_rappor(input_domain, input_metric, epsilon, constant_time)
    eps = measurement.parameters["epsilon"]
    inner = make_randomized_response_bitvec(input_domain, input_metric,
                                            2 * k_rappor_flip_probability(eps, input_domain.max_weight))

    def privacy_map(d_in):
        return choose(eps, inner.map(d_in))

    return dataclasses.replace(measurement, privacy_map=privacy_map)


def k_rappor_band_map(input_domain, input_metric, epsilon, constant_time=False):
    """Defect (privacy.sound): for ε in the open band K_RAPPOR_BAND the map takes the smaller of ε and half the
    bit-vector bound, below the loss when the length is below 2m (the bound is then the loss, and below ε)."""
    return _k_rappor_map(input_domain, input_metric, epsilon, constant_time,
                         lambda eps, bound: min(eps, bound / 2 if K_RAPPOR_BAND[0] < eps < K_RAPPOR_BAND[1] else bound))


def k_rappor_first_64_bits_by_bool(input_domain, input_metric, epsilon, constant_time=False):
    """Defect (function.law at k > 64): bits from 64 on are never flipped (a 64-bit mask word); the code converts
    each input bit with bool(), so there is no product structure over symbolic input bits, only input by input."""
    measurement = make_k_rappor(input_domain, input_metric, epsilon, constant_time)
    q = k_rappor_flip_probability(measurement.parameters["epsilon"], input_domain.max_weight)

    def function(bits):
        return tuple(bool(b) ^ sample_bernoulli_float(q) if i < 64 else bool(b) for i, b in enumerate(bits))

    return dataclasses.replace(measurement, function=function)


def k_rappor_by_bool(input_domain, input_metric, epsilon, constant_time=False):
    """Sound: vetdp's law, each input bit converted with bool() (no product structure over symbolic input bits)."""
    measurement = make_k_rappor(input_domain, input_metric, epsilon, constant_time)
    q = k_rappor_flip_probability(measurement.parameters["epsilon"], input_domain.max_weight)
    return dataclasses.replace(measurement, function=lambda bits: tuple(bool(b) ^ sample_bernoulli_float(q)
                                                                        for b in bits))


def k_rappor_max_map(input_domain, input_metric, epsilon, constant_time=False):
    """Sound (privacy.sound, not tight): the map takes the larger of ε and the bit-vector bound, both upper bounds."""
    return _k_rappor_map(input_domain, input_metric, epsilon, constant_time, max)


def k_rappor_nudged_min(input_domain, input_metric, epsilon, constant_time=False):
    """Sound, not a constant term for term: the smaller of ε and the bit-vector bound times 1 + 2**-52."""
    return _k_rappor_map(input_domain, input_metric, epsilon, constant_time,
                         lambda eps, bound: min(eps, bound * (1.0 + 2.0**-52)))


def k_rappor_doubled_side(input_domain, input_metric, epsilon, constant_time=False):
    """Defect (privacy.tight): where the bit-vector bound is below ε the map takes twice the bound, else ε; near the
    crossing, where the comparison is left undecided, one side of it is twice the loss."""
    return _k_rappor_map(input_domain, input_metric, epsilon, constant_time,
                         lambda eps, bound: 2.0 * bound if bound < eps else eps)


def _rappor(input_domain, input_metric, f, p, q, constant_time, flip_of, low_of):
    """vetdp's RAPPOR report (its checks and map) whose function flips with flip_of(r, f) and reports a clear
    permanent bit as 1 with low_of(p)."""
    import dataclasses

    from vetdp.impl.rappor import _instantaneous, _permanent, make_rappor_report, rappor_flip_probability

    m = make_rappor_report(input_domain, input_metric, f, p, q, constant_time)
    flip, low = flip_of(rappor_flip_probability(f), f), low_of(p)
    return dataclasses.replace(m, function=lambda bits: _instantaneous(_permanent(bits, flip, constant_time), low, q,
                                                                       constant_time))


def rappor_band(input_domain, input_metric, f, p, q, constant_time=False):
    """Defect (function.law, privacy.sound): for p in the open band RAPPOR_P_BAND a clear permanent bit is
    reported as 1 with p/2 instead of p (p* smaller: more loss than the map claims)."""
    return _rappor(input_domain, input_metric, f, p, q, constant_time, lambda r, f: r,
                   lambda p: p / 2 if RAPPOR_P_BAND[0] < p < RAPPOR_P_BAND[1] else p)


def rappor_flip_band(input_domain, input_metric, f, p, q, constant_time=False):
    """Defect (function.law, privacy.sound): for f in the open band RAPPOR_F_BAND the permanent response flips
    with f/4 rounded down instead of f/2 rounded up (less noise than the map accounts for)."""
    from vetdp.arith.rounding import neg_inf_div

    return _rappor(input_domain, input_metric, f, p, q, constant_time,
                   lambda r, f: neg_inf_div(f, 4.0) if RAPPOR_F_BAND[0] < f < RAPPOR_F_BAND[1] else r, lambda p: p)


def rappor_loose_band(input_domain, input_metric, f, p, q, constant_time=False):
    """Defect (privacy.tight): for q in the open band RAPPOR_LOOSE_BAND, 2**-20 wide, the map claims ε₁·(1 + 2**-20):
    sound, but looser than the exact loss by far more than 2**-30 relative."""
    import dataclasses

    from vetdp.impl.rappor import make_rappor_report

    m = make_rappor_report(input_domain, input_metric, f, p, q, constant_time)
    loose = RAPPOR_LOOSE_BAND[0] < q < RAPPOR_LOOSE_BAND[1]
    return dataclasses.replace(m, privacy_map=lambda d: m.privacy_map(d) * (1.0 + 2.0**-20) if loose else
                               m.privacy_map(d))


RAPPOR_LOOSE_FLOOR = 2.0**-990  # rappor_loose_floor's band: p below it, along the joint boundary p* = 2**-1000


def rappor_loose_floor(input_domain, input_metric, f, p, q, constant_time=False):
    """Defect (privacy.tight): for p < RAPPOR_LOOSE_FLOOR the map claims ε₁·(1 + 2**-20), sound but loose, on the
    regions the joint boundary p* = 2**-1000 crosses among others."""
    import dataclasses

    from vetdp.impl.rappor import make_rappor_report

    m = make_rappor_report(input_domain, input_metric, f, p, q, constant_time)
    loose = p < RAPPOR_LOOSE_FLOOR
    return dataclasses.replace(m, privacy_map=lambda d: m.privacy_map(d) * (1.0 + 2.0**-20) if loose else
                               m.privacy_map(d))


def rappor_smaller_weighting(input_domain, input_metric, f, p, q, constant_time=False):
    """Defect (privacy.sound, 2h > k): the map takes the smaller of the two weightings' ε₁ where the loss is the
    larger, so it under-reports wherever the two differ."""
    from vetdp.impl.rappor import (
        RAPPOR_EPSILON_ONE,
        make_rappor_report,
        rappor_flip_probability,
        rappor_report_loss_weights,
    )

    m = make_rappor_report(input_domain, input_metric, f, p, q, constant_time)
    env = {"r": rappor_flip_probability(f), "p": p, "q": q}
    first, *other = (PrivacyConstant(RAPPOR_EPSILON_ONE, {**env, "a": a, "b": b}).value
                     for a, b in rappor_report_loss_weights(input_domain.max_weight, input_domain.length))
    for eps in other:
        if eps < first:
            first = eps
    return dataclasses.replace(m, privacy_map=lambda d: 0.0 if d == 0 else first)


RAPPOR_STRICT_FLOOR = 2**-999  # rappor_strict_floor's least p*, twice the spec's 2**-1000


def rappor_strict_floor(input_domain, input_metric, f, p, q, constant_time=False):
    """Defect (precondition.regions): refuses p* = p(1 − r) + rq below 2**-999, so valid parameters with p* in
    [2**-1000, 2**-999), a band along the joint boundary, are rejected."""
    from vetdp.impl.rappor import exact_rational, make_rappor_report, rappor_flip_probability

    m = make_rappor_report(input_domain, input_metric, f, p, q, constant_time)  # its checks first
    r, p_, q_ = exact_rational(rappor_flip_probability(f)), exact_rational(p), exact_rational(q)
    if not (p_ >= RAPPOR_STRICT_FLOOR or p_ * (1 - r) + r * q_ >= RAPPOR_STRICT_FLOOR):  # as vetdp decides it
        raise ValueError(f"p* below 2**-999 at f={f!r}, p={p!r}, q={q!r}")
    return m


def rr_accepts_below_one_over_t(categories, prob):
    """Defect (precondition.regions): accepts prob down to 1/t − 10**-15 (a tolerance), where the spec's law and
    accountants are not defined; vetdp's mechanism is then built at max(prob, 1/t rounded up)."""
    from vetdp.impl.randomized_response import make_randomized_response

    t = len(categories)
    if not prob >= 1 / t - 1e-15:
        raise ValueError(f"prob={prob!r} must be at least 1/{t}")
    return make_randomized_response(categories, max(prob, math.nextafter(1 / t, 1.0)))
