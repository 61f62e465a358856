"""The exact truth where the spec's preconditions refuse (issue 13, point 3).

When the code under test accepts parameters the spec rejects, or inputs outside the spec's
domain, the engine computes the exact law anyway (the code's enumerated law, or the spec's
law) and judges the map against it: ``privacy.sound[<bad id>]`` and ``privacy.outside[<kind>]``.
The first tests use small user-written constructors (no OpenDP); the last ones OpenDP itself.
"""

import dataclasses
import math
from fractions import Fraction

import mpmath
import pytest

from vetdp.core.measurement import AtomDomain, BitVectorDomain, DiscreteDistance, MaxDivergence, Measurement
from vetdp.engine.results import Status
from vetdp.engine.runner import RunConfig, check_measurement_spec
from vetdp.engine.spec import find_spec
from vetdp.impl.randomized_response import make_randomized_response
from vetdp.impl.randomized_response_bitvec import make_randomized_response_bitvec
from vetdp.sampling.primitives import sample_bernoulli_float, sample_uniform_int_below
from vetdp.specs.randomized_response_bitvec import flip_probability

P_BELOW = 0.3333333333333333  # 1/3 rounded down: exactly 1/3 - 2**-54/3
RR_PARAMS = {"categories": ["c0", "c1", "c2"], "prob": 0.5}
BITVEC_PARAMS = {"k": 4, "m": 1, "f": 0.5, "constant_time": False}
FAST = dict(strict_messages=False, audit_samples=200)


def ln(ratio: Fraction) -> float:
    """ln(ratio) correctly rounded to a float (100 significant digits before rounding)."""
    with mpmath.workdps(100):
        return float(mpmath.log(mpmath.mpf(ratio.numerator) / ratio.denominator))


LOSS_BELOW = ln((1 - Fraction(P_BELOW)) / 2 / Fraction(P_BELOW))  # 8.3266726846886741e-17


def results(spec_name, params, ctor, **cfg):
    spec = find_spec(spec_name)
    return {r.check: r for r in check_measurement_spec(spec, ctor, RunConfig(**{**FAST, **cfg}), params)}


# ------------------------------------------------------------------ user-written constructors under test

def rr_float_checked(categories, prob):
    """Categorical RR whose check is 1/t <= prob in floats and whose map is max(0, ln(p(t-1)/(1-p))) in floats
    (OpenDP's behaviour): prob = 1/3 rounded down is accepted with map 0."""
    cats = list(categories)
    t = len(cats)
    if len(set(cats)) != t or t < 2 or not 1 / t <= prob < 1:
        raise ValueError(f"prob={prob!r} must be in [1/t, 1) for t={t} distinct categories")
    epsilon = max(0.0, math.log(prob * (t - 1) / (1 - prob)))

    def function(x):
        if x not in cats:
            return cats[sample_uniform_int_below(t)]
        if sample_bernoulli_float(prob):
            return x
        i = sample_uniform_int_below(t - 1)
        return cats[i + (i >= cats.index(x))]

    return Measurement(AtomDomain(type(cats[0])), DiscreteDistance(), MaxDivergence(), function,
                       lambda d: 0.0 if d == 0 else epsilon)


def rr_accepts_prob_one_with_infinite_map(categories, prob):
    """Categorical RR that also accepts prob = 1.0, then with map = inf: sound (inf bounds every loss)."""
    if prob == 1.0:
        m = make_randomized_response(categories, 0.5)
        return dataclasses.replace(m, function=lambda x: x, privacy_map=lambda d: 0.0 if d == 0 else math.inf)
    return make_randomized_response(categories, prob)


def _bitvec(input_domain, input_metric, f, constant_time, check_length: bool):
    """Bit-vector RR with our map (2m·ln((1−q)/q) rounded up) but a domain without a weight check, and without a
    length check unless ``check_length``: every bit of the input, whatever its length, flipped with q."""
    ours = make_randomized_response_bitvec(input_domain, input_metric, f, constant_time)
    q = flip_probability(f)
    domain = BitVectorDomain(length=input_domain.length if check_length else None)
    return dataclasses.replace(ours, input_domain=domain,
                               function=lambda bits: tuple(b ^ sample_bernoulli_float(q) for b in bits))


def bitvec_unchecked(input_domain, input_metric, f, constant_time=False):
    return _bitvec(input_domain, input_metric, f, constant_time, check_length=False)


def bitvec_weight_unchecked(input_domain, input_metric, f, constant_time=False):
    return _bitvec(input_domain, input_metric, f, constant_time, check_length=True)


# ------------------------------------------------------------------ parameters the spec rejects

@pytest.mark.parametrize("opaque", [False, True], ids=["enumerated", "opaque"])
def test_rr_accepting_prob_below_one_over_t_gets_an_unsound_map_finding(opaque):
    r = results("randomized_response", RR_PARAMS, rr_float_checked, opaque=opaque)
    assert r["precondition[prob_below_one_over_t]"].status is Status.FAIL  # the mismatch is still reported
    truth = r["privacy.sound[prob_below_one_over_t]"]
    assert truth.status is Status.FAIL and truth.claimed == 0.0
    source = "the spec's law" if opaque else "the enumerated law of the code"
    assert "unsound" in truth.message and source in truth.message and "below the exact loss" in truth.message
    # decided exactly: the witness ratio is ((1 - p)/2) / p, the loss ln of it ~ 8.3e-17
    w = truth.witness
    p = Fraction(P_BELOW)
    assert Fraction(w["P[M(x)=y]"]) / Fraction(w["P[M(x')=y]"]) == (1 - p) / 2 / p
    assert w["x"] != w["x_prime"] and w["y"] == w["x_prime"]
    assert truth.true == LOSS_BELOW == 8.3266726846886741e-17 and truth.slack == -LOSS_BELOW
    assert "below the exact loss 8.3266726846886741e-17" in truth.message
    assert truth.repro.startswith("vetdp verify randomized_response") and '"prob": 0.3333333333333333' in truth.repro


def test_rr_accepting_prob_one_with_an_infinite_map_is_sound_there():
    r = results("randomized_response", RR_PARAMS, rr_accepts_prob_one_with_infinite_map)
    assert r["precondition[prob_one]"].status is Status.FAIL
    assert r["privacy.sound[prob_one]"].status is Status.PASS and "inf" in r["privacy.sound[prob_one]"].message
    assert "privacy.sound[prob_below_one_over_t]" not in r  # rejected there: nothing to judge


def test_law_undefined_at_accepted_parameters_is_skipped_with_the_reason():
    """Duplicated categories: the spec's law is not a distribution there, so no truth is claimed."""
    def accepts_duplicates(categories, prob):
        return make_randomized_response(list(dict.fromkeys(categories)), prob)

    r = results("randomized_response", RR_PARAMS, accepts_duplicates, opaque=True)
    assert r["precondition[duplicate_categories]"].status is Status.FAIL
    skipped = r["privacy.sound[duplicate_categories]"]
    assert skipped.status is Status.SKIPPED and "not a distribution" in skipped.message


def test_our_constructor_rejects_everything_and_reports_no_truth_rows():
    r = results("randomized_response", RR_PARAMS, make_randomized_response)
    assert all(v.status is Status.PASS for k, v in r.items() if k.startswith("precondition["))
    assert not [k for k in r if k.startswith(("privacy.sound[", "privacy.outside"))]
    assert r["privacy.sound"].status is Status.PASS


# ------------------------------------------------------------------ inputs outside the domain

@pytest.mark.parametrize("opaque", [False, True], ids=["enumerated", "opaque"])
def test_bitvec_without_length_and_weight_checks_gets_both_findings(opaque):
    r = results("randomized_response_bitvec", BITVEC_PARAMS, bitvec_unchecked, opaque=opaque)
    assert r["domain.rejects_outside"].status is Status.FAIL
    length, weight = r["privacy.outside[length]"], r["privacy.outside[weight]"]
    # another length: disjoint supports, an infinite loss against the finite map
    assert length.status is Status.FAIL and "infinite" in length.message
    assert math.isfinite(length.claimed) and length.witness["P[M(x')=y]"] == "0"
    assert len(length.witness["x"]) != len(length.witness["x_prime"]) and length.witness["kind"] == "length"
    # more set bits than max_weight: its own witness, weight 2 > m = 1, at a finite loss above the map
    assert weight.status is Status.FAIL and "weight 2 > max_weight m = 1" in weight.message
    w = weight.witness
    assert w["outside"].count("1") == 2 and len(w["outside"]) == 4
    q = Fraction(flip_probability(0.5))
    assert Fraction(w["P[M(x)=y]"]) / Fraction(w["P[M(x')=y]"]) == ((1 - q) / q) ** 3  # Hamming distance 3 > 2m
    assert weight.true == ln(((1 - q) / q) ** 3) and weight.claimed == make_randomized_response_bitvec(
        BitVectorDomain(1, 4), DiscreteDistance(), 0.5).map(1)


def test_bitvec_weight_defect_alone_is_found_without_a_length_finding():
    r = results("randomized_response_bitvec", BITVEC_PARAMS, bitvec_weight_unchecked)
    assert r["privacy.outside[weight]"].status is Status.FAIL
    assert "privacy.outside[length]" not in r


def test_bitvec_weight_defect_within_the_map_is_reported_sound():
    """k = 2, m = 1: a heavy input is at Hamming distance <= 2 = 2m from every member, so the map still holds."""
    params = {"k": 2, "m": 1, "f": 0.5, "constant_time": False}
    r = results("randomized_response_bitvec", params, bitvec_weight_unchecked)
    assert r["domain.rejects_outside"].status is Status.FAIL
    assert r["privacy.outside[weight]"].status is Status.PASS


def test_our_bitvec_rejects_outside_inputs_and_reports_no_outside_rows():
    r = results("randomized_response_bitvec", BITVEC_PARAMS, make_randomized_response_bitvec)
    assert r["domain.rejects_outside"].status is Status.PASS
    assert not [k for k in r if k.startswith(("privacy.sound[", "privacy.outside"))]


# ------------------------------------------------------------------ OpenDP (proofs/findings/opendp.md, 1-3)

def _opendp():
    pytest.importorskip("opendp")
    from vetdp.audit import opendp_adapter

    return opendp_adapter


def _run_snippet(code: str) -> str:
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "<repro>", "exec"), {})
    return out.getvalue()


@pytest.mark.extras
def test_opendp_rr_prob_below_one_over_t_is_an_unsound_map():
    A = _opendp()
    r = results("randomized_response", RR_PARAMS, A.make_randomized_response, opaque=True, impl_ref="opendp",
                reproduce=A.reproduction)
    assert r["precondition[prob_below_one_over_t]"].status is Status.FAIL
    truth = r["privacy.sound[prob_below_one_over_t]"]
    assert truth.status is Status.FAIL and truth.claimed == 0.0
    p = Fraction(P_BELOW)
    assert Fraction(truth.witness["P[M(x)=y]"]) / Fraction(truth.witness["P[M(x')=y]"]) == (1 - p) / 2 / p
    assert truth.true == LOSS_BELOW
    printed = _run_snippet(truth.repro.split("\n", 1)[1])
    assert "opendp map(1) = 0.0" in printed and "exact loss    = 8.3" in printed


@pytest.mark.extras
def test_opendp_bitvec_length_and_weight_are_separate_findings():
    A = _opendp()
    r = results("randomized_response_bitvec", BITVEC_PARAMS, A.make_randomized_response_bitvec, opaque=True,
                impl_ref="opendp", reproduce=A.reproduction)
    length, weight = r["privacy.outside[length]"], r["privacy.outside[weight]"]
    assert length.status is Status.FAIL and "infinite" in length.message and math.isfinite(length.claimed)
    assert len(length.witness["x"]) != len(length.witness["x_prime"])
    assert weight.status is Status.FAIL and weight.true == ln(Fraction(27))
    printed = _run_snippet(length.repro.split("\n", 1)[1])
    assert "1 2" in printed and "exact loss    = inf" in printed  # byte lengths 1 and 2 told apart
    assert "exact loss    = 3.29" in _run_snippet(weight.repro.split("\n", 1)[1])
