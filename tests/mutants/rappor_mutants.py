"""Wrong variants of make_rappor_report and make_rappor_reports (impl/rappor.py), each with one defect."""

import dataclasses
import math

from vetdp.core.measurement import PrivacyConstant
from vetdp.impl.rappor import (
    RAPPOR_EPSILON_INFINITY,
    RAPPOR_EPSILON_ONE,
    _instantaneous,
    _permanent,
    make_rappor_report,
    make_rappor_reports,
    rappor_flip_probability,
    rappor_report_loss_weights,
)
from vetdp.sampling.primitives import sample_bernoulli_float


def _with_map(m, epsilon: float):
    return dataclasses.replace(m, privacy_map=lambda d_in: 0.0 if d_in == 0 else epsilon)


def reports_not_memoized(input_domain, input_metric, f, p, q, reports, constant_time=False):
    """Defect: every report draws a fresh permanent response (no memoization), while the map still says ε∞."""
    m = make_rappor_reports(input_domain, input_metric, f, p, q, reports, constant_time)
    r = rappor_flip_probability(f)
    return dataclasses.replace(m, function=lambda bits: tuple(
        _instantaneous(_permanent(bits, r, constant_time), p, q, constant_time) for _ in range(reports)))


def reports_map_is_epsilon_one(input_domain, input_metric, f, p, q, reports, constant_time=False):
    """Defect: n memoized reports claimed at the one-report bound ε₁."""
    m = make_rappor_reports(input_domain, input_metric, f, p, q, reports, constant_time)
    one = make_rappor_report(input_domain, input_metric, f, p, q, constant_time)
    return _with_map(m, one.map(1))


def reports_distance_h_when_2h_exceeds_k(input_domain, input_metric, f, p, q, reports, constant_time=False):
    """Defect: ε∞ = d·ln((1 − r)/r) with d = 2h when 2h <= k, but d = h (not k) when 2h > k: short exactly when
    h < k < 2h (privacy.sound, e.g. k = 3, h = 2 with p = 0, q = 1, where the reports show the permanent response)."""
    m = make_rappor_reports(input_domain, input_metric, f, p, q, reports, constant_time)
    h, k = input_domain.max_weight, input_domain.length
    d = 2 * h if 2 * h <= k else min(h, k)
    return _with_map(m, PrivacyConstant(RAPPOR_EPSILON_INFINITY, {"q": rappor_flip_probability(f), "d": d}).value)


def reports_memo_by_weight(input_domain, input_metric, f, p, q, reports, constant_time=False):
    """Defect: the permanent response is memoised across calls in a dict keyed by the input's weight (inputs of one
    weight share it, and it outlives the call): a later call draws only the reports' coins, not the permanent
    response's (state.independent_calls: the draw sequence differs between calls)."""
    m = make_rappor_reports(input_domain, input_metric, f, p, q, reports, constant_time)
    r = rappor_flip_probability(f)
    memo = {}

    def function(bits):
        weight = sum(bool(b) for b in bits)
        if weight not in memo:
            memo[weight] = _permanent(bits, r, constant_time)
        return tuple(_instantaneous(memo[weight], p, q, constant_time) for _ in range(reports))

    return dataclasses.replace(m, function=function)


def reports_last_from_raw_bits_from_four(input_domain, input_metric, f, p, q, reports, constant_time=False):
    """Defect: from 4 reports on, the last report randomises the raw Bloom bits, not the permanent response (with
    p = 0, q = 1 it releases them: privacy.sound, an infinite loss); fewer reports are vetdp's."""
    m = make_rappor_reports(input_domain, input_metric, f, p, q, reports, constant_time)
    r = rappor_flip_probability(f)

    def function(bits):
        permanent = _permanent(bits, r, constant_time)
        out = [_instantaneous(permanent, p, q, constant_time) for _ in range(reports)]
        if reports >= 4:
            out[-1] = _instantaneous(tuple(bool(b) for b in bits), p, q, constant_time)
        return tuple(out)

    return dataclasses.replace(m, function=function)


def reports_memo_first_8_bits_only(input_domain, input_metric, f, p, q, reports, constant_time=False):
    """Defect: the permanent response is memoised for bits 0-7 only; from bit 8 on each report draws its own, so
    many reports average the permanent noise away (invisible below 9 bits)."""
    m = make_rappor_reports(input_domain, input_metric, f, p, q, reports, constant_time)
    r = rappor_flip_probability(f)

    def function(bits):
        permanent = _permanent(bits[:8], r, constant_time)
        return tuple(_instantaneous(permanent + _permanent(bits[8:], r, constant_time), p, q, constant_time)
                     for _ in range(reports))

    return dataclasses.replace(m, function=function)


def reports_distance_capped_at_three_hash_functions(input_domain, input_metric, f, p, q, reports,
                                                    constant_time=False):
    """Defect: ε∞ = min(2·min(h, 3), k)·ln((1 − r)/r), below the loss when h > 3 and k > 6."""
    m = make_rappor_reports(input_domain, input_metric, f, p, q, reports, constant_time)
    d = min(2 * min(input_domain.max_weight, 3), input_domain.length)
    return _with_map(m, RAPPOR_EPSILON_INFINITY.to_float({"q": rappor_flip_probability(f), "d": d}))

def reports_accept_f_zero(input_domain, input_metric, f, p, q, reports, constant_time=False):
    """Defect: f = 0 accepted for repeated reports (treated as f = 2**-1074)."""
    return make_rappor_reports(input_domain, input_metric, f if f != 0 else 5e-324, p, q, reports, constant_time)


def epsilon_one_with_p_q(input_domain, input_metric, f, p, q, constant_time=False):
    """Defect: ε₁ = h·ln(q(1 − p)/(p(1 − q))) from p and q, not p* and q*: it ignores the permanent noise
    (infinite when p = 0 or q = 1)."""
    m = make_rappor_report(input_domain, input_metric, f, p, q, constant_time)
    h = input_domain.max_weight
    eps = h * math.log(q * (1 - p) / (p * (1 - q))) if 0 < p and q < 1 else math.inf
    return _with_map(m, eps)


def epsilon_one_without_h(input_domain, input_metric, f, p, q, constant_time=False):
    """Defect: the map forgets the factor h (the loss of a single set bit)."""
    m = make_rappor_report(input_domain, input_metric, f, p, q, constant_time)
    hh = min(input_domain.max_weight, input_domain.length)
    return _with_map(m, m.map(1) / hh)


def epsilon_one_paper_formula_always(input_domain, input_metric, f, p, q, constant_time=False):
    """Defect (loose, not unsound): the paper's h'·ln(q*(1 − p*)/(p*(1 − q*))) also when 2h' > k, where at most k
    bits can differ."""
    m = make_rappor_report(input_domain, input_metric, f, p, q, constant_time)
    hh = min(input_domain.max_weight, input_domain.length)
    env = {"r": rappor_flip_probability(f), "p": p, "q": q, "a": hh, "b": hh}
    return _with_map(m, RAPPOR_EPSILON_ONE.to_float(env))


def epsilon_one_weights_capped_at_three(input_domain, input_metric, f, p, q, constant_time=False):
    """Defect: the map weighs at most 3 set bits ("at most 3 hash functions"), below the loss for h > 3 on a filter
    of more than 3 bits when p + q != 1 (the search draws h <= 3, or a huge h with k <= 3)."""
    m = make_rappor_report(input_domain, input_metric, f, p, q, constant_time)
    env = {"r": rappor_flip_probability(f), "p": p, "q": q}
    capped = min(input_domain.max_weight, 3)
    return _with_map(m, max(RAPPOR_EPSILON_ONE.to_float({**env, "a": a, "b": b})
                            for a, b in rappor_report_loss_weights(capped, input_domain.length)))

def prr_round_to_nearest(input_domain, input_metric, f, p, q, constant_time=False):
    """Defect: the permanent flip probability f/2 rounded to nearest (0 for f = 2**-1074: no permanent noise)."""
    m = make_rappor_report(input_domain, input_metric, f, p, q, constant_time)
    r = f / 2
    return dataclasses.replace(m, function=lambda bits: _instantaneous(_permanent(bits, r, constant_time), p, q,
                                                                       constant_time))


def prr_flips_with_f(input_domain, input_metric, f, p, q, constant_time=False):
    """Defect: the permanent response flips each bit with probability f instead of f/2."""
    m = make_rappor_report(input_domain, input_metric, f, p, q, constant_time)
    return dataclasses.replace(m, function=lambda bits: _instantaneous(_permanent(bits, f, constant_time), p, q,
                                                                       constant_time))


def irr_swaps_p_and_q(input_domain, input_metric, f, p, q, constant_time=False):
    """Defect: the instantaneous response reports a 1 w.p. p for a set bit and q for a clear one."""
    m = make_rappor_report(input_domain, input_metric, f, p, q, constant_time)
    r = rappor_flip_probability(f)
    return dataclasses.replace(m, function=lambda bits: tuple(
        sample_bernoulli_float(p if b else q, constant_time) for b in _permanent(bits, r, constant_time)))


def prr_on_first_8_bits_only(input_domain, input_metric, f, p, q, constant_time=False):
    """Defect: the permanent response covers bits 0-7 only; from bit 8 on the instantaneous response reads the
    Bloom filter itself (invisible below 9 bits; the code branches on each permanent bit, so it has no product
    structure over symbolic bits)."""
    m = make_rappor_report(input_domain, input_metric, f, p, q, constant_time)
    r = rappor_flip_probability(f)

    def function(bits):
        permanent = tuple(b ^ sample_bernoulli_float(r, constant_time) if i < 8 else b for i, b in enumerate(bits))
        return tuple(sample_bernoulli_float(q if b else p, constant_time) for b in permanent)

    return dataclasses.replace(m, function=function)


def irr_band_of_q_past_the_eighth_bit(input_domain, input_metric, f, p, q, constant_time=False):
    """Defect: for q in a band 2**-30 wide above 0.6, the instantaneous response of bits 8 and up reports a set
    bit with q·(1 − 2**-10) instead of q (the drawn search's filters have at most 5 bits, the scale examples' q is
    never in the band)."""
    m = make_rappor_report(input_domain, input_metric, f, p, q, constant_time)
    r = rappor_flip_probability(f)
    band = 0.6 < q < 0.6 + 2**-30

    def function(bits):
        permanent = _permanent(bits, r, constant_time)
        return tuple(sample_bernoulli_float(q * (1 - 2**-10) if band and i >= 8 else q, constant_time) if b
                     else sample_bernoulli_float(p, constant_time) for i, b in enumerate(permanent))

    return dataclasses.replace(m, function=function)


def prr_and_irr_interleaved(input_domain, input_metric, f, p, q, constant_time=False):
    """Sound (not a mutant): the same law as make_rappor_report, written bit by bit with an ``if`` on the
    permanent coin and an instantaneous draw in each branch."""
    m = make_rappor_report(input_domain, input_metric, f, p, q, constant_time)
    r = rappor_flip_probability(f)

    def function(bits):
        out = []
        for b in bits:
            if sample_bernoulli_float(r, constant_time):
                b = not b
            out.append(sample_bernoulli_float(q, constant_time) if b else sample_bernoulli_float(p, constant_time))
        return tuple(out)

    return dataclasses.replace(m, function=function)


def client_redraws_per_run(input_domain, input_metric, f, p, q, runs, derivation="vetdp", constant_time=False):
    """Defect: the permanent response is drawn afresh in every run (a client that keeps it in memory only, as the
    CLI did before client secrets), while the map still says ε∞ over all runs."""
    from vetdp.impl.rappor_client import LazyPermanentResponses, derivation_flip_probability, make_rappor_client_reports

    m = make_rappor_client_reports(input_domain, input_metric, f, p, q, runs, derivation, constant_time)
    r = derivation_flip_probability(f, derivation)
    return dataclasses.replace(m, function=lambda bits: tuple(
        _instantaneous(LazyPermanentResponses(r, constant_time).of(tuple(bits)), p, q, constant_time)
        for _ in range(runs)))


def client_reference_flips_f_half(input_domain, input_metric, f, p, q, runs, derivation="vetdp",
                                  constant_time=False):
    """Defect: the reference derivation is modelled with flip probability f/2, not ⌈128f⌉/256 (its bytes' rule)."""
    from vetdp.impl.rappor_client import LazyPermanentResponses, make_rappor_client_reports

    m = make_rappor_client_reports(input_domain, input_metric, f, p, q, runs, derivation, constant_time)
    r = rappor_flip_probability(f)

    def function(bits):
        secret = LazyPermanentResponses(r, constant_time)
        return tuple(_instantaneous(secret.of(tuple(bits)), p, q, constant_time) for _ in range(runs))

    return dataclasses.replace(m, function=function)


class ClientWithoutSecret:
    """Defect: a client that ignores its secret and keeps each permanent response in memory (the old behaviour):
    two runs — two objects — with one secret draw two permanent responses."""

    def __new__(cls, *args, **kwargs):
        from vetdp.impl.rappor_client import LazyPermanentResponses, RapporClient

        client = RapporClient(*args, **kwargs)
        client._responses = LazyPermanentResponses(client.flip, client.constant_time)
        return client


# ------------------------------------------------------------------ one client, one report per call (memoisation)

def _client_report(input_domain, input_metric, f, p, q, derivation, constant_time, function_of):
    """make_rappor_client_report with its function replaced by ``function_of(flip)``."""
    from vetdp.impl.rappor_client import derivation_flip_probability, make_rappor_client_report

    m = make_rappor_client_report(input_domain, input_metric, f, p, q, derivation, constant_time)
    return dataclasses.replace(m, function=function_of(derivation_flip_probability(f, derivation)))


def client_memoises_its_report_too(input_domain, input_metric, f, p, q, derivation="vetdp", constant_time=False):
    """Defect: [``state.independent_calls``] the whole report is kept per Bloom filter, not only the permanent
    response: every later call repeats the first report (memoisation the spec does not declare)."""
    def function_of(flip):
        reports: dict = {}

        def function(bits):
            bits = tuple(bits)
            if bits not in reports:
                reports[bits] = _instantaneous(_permanent(bits, flip, constant_time), p, q, constant_time)
            return reports[bits]

        return function

    return _client_report(input_domain, input_metric, f, p, q, derivation, constant_time, function_of)


def client_redraws_its_permanent_response(input_domain, input_metric, f, p, q, derivation="vetdp",
                                          constant_time=False):
    """Defect: [``state.independent_calls``] a fresh permanent response on every call (nothing kept): each call has
    the one-report law, but repeated reports average the permanent noise away (the declaration is violated)."""
    return _client_report(input_domain, input_metric, f, p, q, derivation, constant_time, lambda flip: (
        lambda bits: _instantaneous(_permanent(tuple(bits), flip, constant_time), p, q, constant_time)))


_SHARED: dict = {}  # a module-level memo: one for every client


def client_memo_ignores_the_client(input_domain, input_metric, f, p, q, derivation="vetdp", constant_time=False):
    """Defect: [``state.independent_calls``] the permanent responses are kept per Bloom filter in a module-level
    memo, without the client (its secret) in the key: every client reports a value through the same permanent
    response, so the reports of two clients are not independent."""
    _SHARED.clear()  # each measurement built clears it, as a process that starts afresh would

    def function_of(flip):
        def function(bits):
            bits = tuple(bits)
            if bits not in _SHARED:
                _SHARED[bits] = _permanent(bits, flip, constant_time)
            return _instantaneous(_SHARED[bits], p, q, constant_time)

        return function

    return _client_report(input_domain, input_metric, f, p, q, derivation, constant_time, function_of)


def client_memo_keyed_on_the_first_bit(input_domain, input_metric, f, p, q, derivation="vetdp",
                                       constant_time=False):
    """Defect: [``state.independent_calls``] the permanent response is kept per first bit of the Bloom filter (a
    key coarser than the declared one): a later value sharing that bit reuses the first value's flips."""
    def function_of(flip):
        flips: dict = {}

        def function(bits):
            bits = tuple(bits)
            if bits[:1] not in flips:
                flips[bits[:1]] = tuple(a != b for a, b in zip(_permanent(bits, flip, constant_time), bits,
                                                               strict=True))
            return _instantaneous(tuple(a != b for a, b in zip(bits, flips[bits[:1]], strict=True)), p, q,
                                  constant_time)

        return function

    return _client_report(input_domain, input_metric, f, p, q, derivation, constant_time, function_of)
