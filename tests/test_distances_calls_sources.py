"""Issue 23: verdicts over every distance, every call and every source of randomness, and engine failures kept apart
from findings.

The variants live in tests/mutants/distances_calls_sources.py (docstring "Defect: ..." or "Sound: ..."); each wrong one
must be rejected on the clause named for it, with a witness, and each sound one accepted. The runs use the
configuration ``vetdp verify`` uses, on one parameter set each.
"""

from __future__ import annotations

import json
import math
from fractions import Fraction

import pytest
from click.testing import CliRunner

from tests.mutants import bitvec_mutants, unseen_bitvec
from vetdp.arith.rounding import MAX_FLOAT, nearest_float_or_inf
from vetdp.cli import main
from vetdp.engine.results import Status
from vetdp.engine.runner import RunConfig, check_measurement_spec
from vetdp.engine.spec import find_spec

VERIFY = RunConfig(max_examples=3, impl_ref="tests.mutants", strict_messages=False, fallback_opaque=True,
                   reference_law=True, loose_map=Status.WARNING)
RR, BV, BOOL, KR = "randomized_response", "randomized_response_bitvec", "randomized_response_bool", "k_rappor"
BV_SUBNORMAL = {"k": 2, "m": 1, "f": 1e-323, "constant_time": False}


def results_of(spec_name: str, variant, params: dict | None = None, cfg: RunConfig = VERIFY) -> dict:
    by_clause: dict = {}
    for r in check_measurement_spec(find_spec(spec_name), ctor=variant, cfg=cfg, only_params=params):
        by_clause.setdefault(r.check, r)
    return by_clause


def invoke(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


# ------------------------------------------------------------------ 5. engine failures are not findings

def test_nearest_float_or_inf_rounds_to_nearest_and_saturates_beyond_the_range():
    assert nearest_float_or_inf(Fraction(1, 3)) == 1 / 3
    assert nearest_float_or_inf(MAX_FLOAT) == float(MAX_FLOAT)
    assert nearest_float_or_inf(Fraction(2) ** 2148) == math.inf  # float() of it raises OverflowError
    assert nearest_float_or_inf(-(Fraction(2) ** 2148)) == -math.inf
    assert nearest_float_or_inf(Fraction(1, 2**2000)) == 0.0


def test_a_domination_failure_at_subnormal_f_is_decided_not_an_engine_error():
    # issue 23: at f = 1e-323 the accountant's likelihood ratios reach ((1 − q)/q)^2 ~ 2^2148; turning the failing
    # threshold into a float raised OverflowError inside privacy.dominated, reported as a failing clause "engine"
    by_clause = results_of(BV, bitvec_mutants.last_bit_unflipped, BV_SUBNORMAL)
    assert "engine" not in by_clause, by_clause["engine"].message
    dominated = by_clause["privacy.dominated"]
    assert dominated.status is Status.FAIL, dominated.message
    w = dominated.witness
    assert w["threshold"] == "2**2147 (approx.)" and w["code_delta"] == 1.0 and w["pair_delta"] == 0.0, w
    assert w["epsilon"] == pytest.approx(1488.8801438427624)  # 2·ln((1 − q)/q) at q = 2^-1074
    for clause in ("privacy.sound", "privacy.rdp", "function.law"):  # the code's own defect, decided exactly
        assert by_clause[clause].status is Status.FAIL, (clause, by_clause[clause].message)


def test_our_bit_vector_passes_privacy_dominated_at_subnormal_f():
    by_clause = results_of(BV, None, BV_SUBNORMAL)
    assert by_clause["privacy.dominated"].status is Status.PASS, by_clause["privacy.dominated"].message


def test_an_exception_in_vetdps_own_computation_is_an_engine_error_exit_2_the_other_clauses_kept(tmp_path,
                                                                                               monkeypatch):
    import vetdp.engine.runner as runner

    def broken(*args, **kwargs):
        return 1 / 0  # stands for any failure of vetdp's own code

    monkeypatch.setattr(runner, "dominance_findings", broken)
    out = tmp_path / "r.json"
    result = invoke("verify", BV, "--impl", "vetdp.impl.randomized_response_bitvec:make_randomized_response_bitvec",
                    "--params", json.dumps({"k": 2, "m": 1, "f": 0.5, "constant_time": False}), "--json", str(out))
    assert result.exit_code == 2, result.output
    by_clause = {r["check"]: r for r in json.loads(out.read_text())["results"]}
    engine = by_clause["engine"]
    assert engine["status"] == "error", engine
    assert engine["message"].startswith("engine error in privacy.dominated: ZeroDivisionError: division by zero "
                                        "(raised at "), engine["message"]
    assert "not a finding about the code under test" in engine["message"]
    assert not [c for c, r in by_clause.items() if r["status"] == "fail"], by_clause
    for clause in ("privacy.sound", "function.law", "privacy.rdp", "privacy.pld"):
        assert by_clause[clause]["status"] == "pass", (clause, by_clause[clause])


def test_an_exception_of_the_code_under_test_escaping_a_clause_is_a_finding_on_that_clause():
    # the constant-time check runs the code on seeded byte streams; a raise there is the code's, exit 1
    by_clause = results_of(BV, unseen_bitvec.raises_on_empty_report, {"k": 3, "m": 1, "f": 0.5, "constant_time": True})
    assert "engine" not in by_clause
    r = by_clause["timing.constant_bytes"]
    assert r.status is Status.FAIL
    assert r.message == ("the code under test raised ValueError: nothing to report: the input has no set bit "
                         "(checking timing.constant_bytes)")


def test_an_unhashable_output_is_the_codes_outcome_not_an_engine_error():
    by_clause = results_of(BV, unseen_bitvec.report_object_on_constant_time_path,
                           {"k": 2, "m": 1, "f": 0.5, "constant_time": True})
    assert "engine" not in by_clause
    law = by_clause["function.law"]
    assert law.status is Status.FAIL and "the output is a Report, which is not hashable" in law.message
    assert by_clause["errors.data_independent"].status is Status.PASS  # the same outcome for every input


def test_estimators_a_raising_variance_function_is_a_finding_an_engine_failure_is_an_error(monkeypatch):
    from vetdp.engine import estimators
    from vetdp.engine.estimators import check_estimator_spec

    spec = find_spec("debias_randomized_response")

    def variance_raises(n, count, prob, n_categories, exact=False):
        raise KeyError("n_categories")

    by_clause = {r.check: r for r in check_estimator_spec(spec, cfg=VERIFY, variance=variance_raises)}
    assert "engine" not in by_clause
    assert by_clause["estimator.variance"].status is Status.FAIL
    assert "the variance function under test raised KeyError" in by_clause["estimator.variance"].message

    def broken(*args, **kwargs):
        raise OverflowError("integer division result too large for a float")

    monkeypatch.setattr(estimators, "exact_moments", broken)
    by_clause = {r.check: r for r in check_estimator_spec(spec, cfg=VERIFY)}
    assert by_clause["engine"].status is Status.ERROR, by_clause["engine"]
    assert by_clause["engine"].message.startswith("engine error: OverflowError")
