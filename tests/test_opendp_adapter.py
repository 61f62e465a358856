"""The OpenDP adapter (vetdp/audit/opendp_adapter.py) and ``vetdp verify SPEC --impl opendp``.

Needs the opendp extra. Some tests pin OpenDP's behaviour recorded in
proofs/findings/opendp.md (checked against opendp 0.16): if OpenDP changes, they fail and
the findings document must be revisited.
"""

import contextlib
import dataclasses
import io
import json
import math
from fractions import Fraction

import pytest
from click.testing import CliRunner

pytest.importorskip("opendp")
pytestmark = pytest.mark.extras

import opendp.prelude as dp  # noqa: E402

from vetdp.audit import opendp_adapter as A  # noqa: E402
from vetdp.audit._opendp_invoke import Invoker, invoker  # noqa: E402
from vetdp.cli import main  # noqa: E402
from vetdp.core.measurement import AtomDomain, bitvector_domain, discrete_distance  # noqa: E402
from vetdp.engine.runner import RunConfig, check_measurement_spec, evaluate_params  # noqa: E402
from vetdp.engine.spec import find_spec  # noqa: E402

OPAQUE = RunConfig(opaque=True, impl_ref="opendp", strict_messages=False, reproduce=A.reproduction)


def results(spec_name, params, ctor=None):
    spec = find_spec(spec_name)
    return {r.check: r for r in check_measurement_spec(spec, ctor or A.adapter_for(spec_name), OPAQUE, params)}


def run_snippet(code: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "<repro>", "exec"), {})
    return out.getvalue()


# ------------------------------------------------------------------ translation

def test_bits_travel_lsb_first_and_come_back_cut_to_length():
    bits = (True,) + (False,) * 8 + (True,)
    assert A.bits_to_bytes(bits).tolist() == [1, 2]
    assert A.bytes_to_bits(bytes([1, 2, 255]), 10) == bits


def test_maps_are_opendps_own():
    assert A.make_randomized_response_bool(0.75).map(1) == dp.m.make_randomized_response_bool(0.75).map(1)
    m = A.make_randomized_response_bitvec(bitvector_domain(max_weight=2, length=9), discrete_distance(), 0.25)
    ref = dp.m.make_randomized_response_bitvec(dp.bitvector_domain(max_weight=2), dp.discrete_distance(), 0.25)
    assert m.map(1) == ref.map(1) and m.map(0) == 0.0
    y = m((1, 0, 0, 0, 0, 0, 0, 0, 1))
    assert isinstance(y, tuple) and len(y) == 9 and all(isinstance(b, bool) for b in y)


def test_opendp_errors_become_value_and_type_errors_keeping_the_message():
    with pytest.raises(ValueError, match="probability must be within"):
        A.make_randomized_response_bool(2.0)
    with pytest.raises(TypeError, match="FailedCast"):
        A.make_randomized_response_bitvec(AtomDomain(bool), discrete_distance(), 0.5)
    with pytest.raises(ValueError, match="d_in must be 0 or 1"):
        A.make_randomized_response_bitvec(bitvector_domain(1, 4), discrete_distance(), 0.5).map(2)


# ------------------------------------------------------------------ the opaque clauses

def test_opendp_bool_passes_privacy_and_distribution_against_the_exact_truth():
    r = results("randomized_response_bool", {"prob": 0.75, "constant_time": False})
    assert r["privacy.sound"].passed and r["privacy.tight"].passed and r["audit.distribution"].passed
    assert r["privacy.sound"].true == pytest.approx(math.log(3))
    assert r["randomness.through_primitives"].status.value == "skipped"
    finding = evaluate_params(find_spec("randomized_response_bool"), A.make_randomized_response_bool,
                              {"prob": 0.75, "constant_time": False}, OPAQUE)["audit.distribution"]
    assert finding.ok and "10000 samples on each of 2 inputs" in finding.message
    assert finding.witness["beta"] == OPAQUE.audit_beta and finding.witness["detectable_deviation"] < 0.03


def test_distribution_audit_catches_a_sampler_that_disagrees_with_its_parameters():
    """OpenDP's prob=0.9 sampler behind prob=0.75's map: the map is right, the samples are not."""
    def miswired(prob, constant_time=False):
        m = A.make_randomized_response_bool(prob, constant_time)
        return dataclasses.replace(m, function=A.make_randomized_response_bool(0.9).function)

    r = results("randomized_response_bool", {"prob": 0.75, "constant_time": False}, ctor=miswired)
    assert r["privacy.sound"].passed
    assert r["audit.distribution"].status.value == "fail"
    assert r["audit.distribution"].witness["exact"] in ("3/4", "1/4")


def test_opendp_categorical_at_a_pinned_boundary_is_sound_and_tight():
    r = results("randomized_response", {"categories": ["c0", "c1", "c2"], "prob": 0.33333333333333337})
    assert r["privacy.sound"].passed and r["privacy.tight"].passed and r["audit.distribution"].passed


# ------------------------------------------------------------------ findings pinned (proofs/findings/opendp.md)

def test_finding_categorical_accepts_prob_just_below_one_over_t_with_an_unsound_map():
    p = 0.3333333333333333  # < 1/3 exactly
    assert Fraction(p) < Fraction(1, 3)
    meas = dp.m.make_randomized_response(["a", "b", "c"], p)
    # exact loss: P[M(a)=b] / P[M(b)=b] = ((1-p)/2) / p > 1
    ratio = (1 - Fraction(p)) / 2 / Fraction(p)
    exact = math.log1p(float(ratio - 1))
    assert exact > 0 and meas.map(1) == 0.0 < exact


def test_finding_bitvec_map_is_not_tight_when_the_length_is_below_2m():
    r = results("randomized_response_bitvec", {"k": 3, "m": 2, "f": 0.25, "constant_time": False})
    assert r["privacy.sound"].passed and r["privacy.tight"].status.value == "fail"
    assert r["privacy.tight"].claimed == pytest.approx(4 / 3 * r["privacy.tight"].true)


def test_finding_bitvec_accepts_heavy_and_unequal_length_inputs():
    meas = dp.m.make_randomized_response_bitvec(dp.bitvector_domain(max_weight=1), dp.discrete_distance(), 0.5)
    assert len(meas(bytes([255]))) == 1  # 8 set bits with max_weight 1: accepted
    assert (len(meas(bytes([1]))), len(meas(bytes([1, 0])))) == (1, 2)  # the output length reveals the input's
    r = results("randomized_response_bitvec", {"k": 4, "m": 1, "f": 0.5, "constant_time": False})
    assert r["domain.rejects_outside"].status.value == "fail"
    assert "heavier than max_weight, accepted" in run_snippet(r["domain.rejects_outside"].repro.split("\n", 1)[1])


def test_finding_debias_accepts_f_one_and_returns_infinities():
    assert math.isinf(dp.m.debias_randomized_response_bitvec([bytes([1])], 1.0)[0])


# ------------------------------------------------------------------ the command line

def test_verify_opendp_bool_reports_findings_with_opendp_only_reproductions(tmp_path):
    j = tmp_path / "r.json"
    result = CliRunner().invoke(main, ["verify", "randomized_response_bool", "--impl", "opendp",
                                       "--max-examples", "3", "--json", str(j)], catch_exceptions=False)
    assert result.exit_code == 1
    by_check = {r["check"]: r for r in json.loads(j.read_text())["results"]}
    assert by_check["privacy.sound"]["status"] == "pass" and by_check["audit.distribution"]["status"] == "pass"
    prob_one = by_check["precondition[prob_one]"]
    assert prob_one["status"] == "fail"
    command, snippet = prob_one["repro"].split("\n", 1)
    assert command.startswith("vetdp verify randomized_response_bool --impl opendp --params")
    assert "vetdp" not in snippet and "accepted; map(1) = inf" in run_snippet(snippet)


def test_verify_opendp_for_a_spec_without_counterpart_is_usage_error():
    result = CliRunner().invoke(main, ["verify", "k_rappor", "--impl", "opendp"])
    assert result.exit_code == 2 and "no OpenDP counterpart" in result.output


def test_verify_opendp_estimator_flags_f_one(tmp_path):
    j = tmp_path / "r.json"
    result = CliRunner().invoke(main, ["verify", "debias_randomized_response_bitvec", "--impl", "opendp",
                                       "--max-examples", "2", "--json", str(j)], catch_exceptions=False)
    by_check = {r["check"]: r for r in json.loads(j.read_text())["results"]}
    assert result.exit_code == 1 and by_check["precondition[f_one]"]["status"] == "fail"
    assert by_check["precondition[no_answers]"]["status"] == "pass"


# ------------------------------------------------------------------ the invoker (meas(x) at the FFI call's cost)

def _outcome(call, x):
    try:
        y = call(x)
        return type(y), None
    except Exception as e:  # noqa: BLE001 - compared with OpenDP's own
        return type(e), str(e)


@pytest.mark.parametrize("make, xs", [
    (lambda: dp.m.make_randomized_response_bool(0.75, False), [True, False, 1, 0, 1.0, "True", None, [True]]),
    (lambda: dp.m.make_randomized_response(["a", "b", "c"], 0.75), ["a", "zz", 1, b"a", None, ["a"]]),
    (lambda: dp.m.make_randomized_response([1, 2, 3], 0.75), [1, 7, True, 1.0, -(2**40), 2**80, "1"]),
    (lambda: dp.m.make_randomized_response_bitvec(dp.bitvector_domain(max_weight=1), dp.discrete_distance(), 0.5),
     [bytes([1]), bytes([3]), A.bits_to_bytes((True, False, False)), [1, 0], "1"]),
])
def test_invoker_returns_and_raises_what_opendp_does(make, xs):
    meas = make()
    fast = invoker(meas)
    assert isinstance(fast, Invoker)  # the pinned OpenDP: the fast path is in use
    for x in xs * 2:  # twice: the second call of each argument uses its cached conversion
        assert _outcome(fast, x) == _outcome(meas, x), x


def test_invoker_keeps_equal_but_different_arguments_apart():
    # True == 1 in Python, but OpenDP's bool RR refuses 1: a cache keyed on the value alone would accept it
    meas = dp.m.make_randomized_response_bool(0.75, False)
    fast = invoker(meas)
    assert isinstance(fast(True), bool)
    assert _outcome(fast, 1) == _outcome(meas, 1) and _outcome(meas, 1)[1] is not None


def test_invoker_draws_from_opendps_law():
    # keep probability 3/4 among 3 categories: P[a | a] = 3/4, P[b | a] = P[c | a] = 1/8; 4000 draws, each bound
    # about 7 standard deviations out (OpenDP's randomness cannot be seeded: a false alarm has probability < 1e-11)
    fast = invoker(dp.m.make_randomized_response(["a", "b", "c"], 0.75))
    counts = {y: 0 for y in "abc"}
    for _ in range(4000):
        counts[fast("a")] += 1
    assert 2800 < counts["a"] < 3200 and 350 < counts["b"] < 650 and 350 < counts["c"] < 650


def test_draws_are_calls_outcomes_and_only_for_opendps_own_function():
    m = A.make_randomized_response(["a", "b", "c"], 0.75)
    good = m.draws("a", 300)
    assert len(good) == 300 and set(good) <= {"a", "b", "c"}
    for bad in (1, None, ["a"]):  # OpenDP refuses these: every outcome is the error a call raises
        with pytest.raises(Exception) as raised:
            m(bad)
        outcomes = m.draws(bad, 5)
        assert [(type(e), str(e)) for e in outcomes] == [(raised.type, str(raised.value))] * 5
    bits = A.make_randomized_response_bitvec(bitvector_domain(max_weight=1, length=3), discrete_distance(), 0.5)
    assert all(isinstance(y, tuple) and len(y) == 3 for y in bits.draws((True, False, False), 50))
    assert {type(e) for e in bits.draws((2, 0, 0), 3)} == {type(_raised(bits, (2, 0, 0)))}
    replaced = dataclasses.replace(m, function=lambda x: "a")
    assert replaced.draws("a", 5) is None  # another function: the audit calls it one by one


def _raised(call, x):
    try:
        call(x)
    except Exception as e:  # noqa: BLE001
        return e
    raise AssertionError(f"{x!r} was accepted")


def test_opendp_errors_capture_no_rust_backtrace_even_with_rust_backtrace_set():
    # with RUST_BACKTRACE=1 in the environment every refused OpenDP call captured a Rust backtrace (0.13 s each: the
    # distance survey's 1,200 refused map(d_in) calls of OpenDP's bit vectors took 156 s); the adapter turns library
    # backtraces off unless RUST_LIB_BACKTRACE is set, in a fresh process as a user's run is
    import os
    import subprocess
    import sys

    code = ("import vetdp.audit.opendp_adapter\nimport opendp.prelude as dp\nfrom opendp.mod import OpenDPException\n"
            "m = dp.m.make_randomized_response_bitvec(dp.bitvector_domain(max_weight=2), dp.discrete_distance(), "
            "f=0.25)\ntry:\n    m.map(2)\nexcept OpenDPException as e:\n    print(e.raw_traceback)\n")
    env = {k: v for k, v in os.environ.items() if k != "RUST_LIB_BACKTRACE"} | {"RUST_BACKTRACE": "1"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
    assert out.stdout.strip() == "disabled backtrace", out.stdout[:300] + out.stderr[-300:]
    env["RUST_LIB_BACKTRACE"] = "1"  # asked for: kept
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
    assert "make_randomized_response_bitvec" in out.stdout, out.stdout[:300] + out.stderr[-300:]
