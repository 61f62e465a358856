"""Wrong variants of make_randomized_response_bool, make_k_rappor and the estimators."""

import dataclasses
import math
from fractions import Fraction

from vetdp.arith.expr import ONE, var
from vetdp.core.measurement import AtomDomain, DiscreteDistance, MaxDivergence, Measurement
from vetdp.impl.k_rappor import make_k_rappor
from vetdp.impl.randomized_response_bitvec import make_randomized_response_bitvec
from vetdp.impl.randomized_response_bool import make_randomized_response_bool
from vetdp.sampling.primitives import sample_bernoulli_float

prob = var("prob")


def bool_map_rounded_down(prob_value, constant_time=False):
    """Defect: ln(p/(1−p)) rounded toward −inf."""
    m = make_randomized_response_bool(prob_value, constant_time)
    low = prob.neg_inf_div(ONE.inf_sub(prob)).neg_inf_ln().to_float({"prob": prob_value})
    return dataclasses.replace(m, privacy_map=lambda d_in: 0.0 if d_in == 0 else low)


def bool_accepts_prob_below_half(prob_value, constant_time=False):
    """Defect: accepts prob in [0, 1) and claims |ln(p/(1−p))| computed naively."""
    if not 0 <= prob_value < 1:
        raise ValueError(f"prob={prob_value} must be in [0, 1)")
    eps = math.log(prob_value / (1 - prob_value)) if prob_value > 0 else 0.0
    return Measurement(AtomDomain(bool), DiscreteDistance(), MaxDivergence(),
                       lambda x: x ^ (not sample_bernoulli_float(prob_value, constant_time)),
                       lambda d_in: 0.0 if d_in == 0 else eps)


def k_rappor_without_factor_2(input_domain, input_metric, epsilon, constant_time=False):
    """Defect: flip probability 1/(1 + e^(ε/k)): half the noise ε needs."""
    q = 1 / (1 + math.exp(min(epsilon / input_domain.max_weight, 700.0)))
    inner = make_randomized_response_bitvec(input_domain, input_metric, 2 * q, constant_time)
    return dataclasses.replace(inner, privacy_map=lambda d_in: 0.0 if d_in == 0 else epsilon)


def k_rappor_round_to_nearest(input_domain, input_metric, epsilon, constant_time=False):
    """Defect: the flip probability 1/(1 + exp(ε/2k)) in round-to-nearest floats (may be too small)."""
    ours = make_k_rappor(input_domain, input_metric, epsilon, constant_time)
    q = 1 / (1 + math.exp(min(epsilon / (2 * input_domain.max_weight), 700.0)))
    inner = make_randomized_response_bitvec(input_domain, input_metric, 2 * q, constant_time)
    return dataclasses.replace(inner, privacy_map=ours.privacy_map)


def debias_bitvec_wrong_denominator(answers, f, exact=False):
    """Defect: divides by 1 − f/2 instead of 1 − f."""
    rows = [tuple(int(b) for b in row) for row in answers]
    if not rows:
        raise ValueError("answers must hold at least one bit vector")
    if not 0 < f < 1:
        raise ValueError(f"f={f!r} must be in (0, 1)")
    n, fq = len(rows), Fraction(f)
    out = [(sum(col) - n * fq / 2) / (1 - fq / 2) for col in zip(*rows, strict=True)]
    return out if exact else [float(v) for v in out]


def debias_rr_uses_one_over_t(answers, categories, prob_value, exact=False):
    """Defect: subtracts n/t instead of n(1−p)/(t−1)."""
    cats = list(categories)
    if not answers:
        raise ValueError("answers must hold at least one answer")
    if not 1 / len(cats) < prob_value < 1:
        raise ValueError(f"prob={prob_value!r} must be in (1/t, 1)")
    n, t, p = len(answers), len(cats), Fraction(prob_value)
    r = (1 - p) / (t - 1)
    est = {c: (answers.count(c) - Fraction(n, t)) / (p - r) for c in cats}
    return est if exact else {c: float(v) for c, v in est.items()}
