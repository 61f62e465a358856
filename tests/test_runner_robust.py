"""The runner on code it has never seen: broken constructors, hangs, exits, engine errors, the map's
range, seeded search and coverage, verify's options (--adapter, --params, --strict, --variance)."""

import dataclasses
import json
import sys
import textwrap

import pytest
from click.testing import CliRunner

from vetdp.cli import main
from vetdp.engine.estimators import check_estimator_spec
from vetdp.engine.results import Status
from vetdp.engine.runner import RunConfig, check_measurement_spec, draw_params
from vetdp.engine.spec import find_spec, validate_params
from vetdp.engine.timeout import DeadlineExceeded, deadline
from vetdp.impl.randomized_response import make_randomized_response, randomized_response_count_variance

RR = find_spec("randomized_response")
ONE = {"categories": [0, 1, 2], "prob": 0.5}


def _results(ctor, cfg=None, only=ONE):
    return {r.check: r for r in check_measurement_spec(RR, ctor=ctor, cfg=cfg or RunConfig(), only_params=only)}


def _failing(results):
    return {c for c, r in results.items() if r.status.is_failure}


# ------------------------------------------------------------------ broken constructors: one clear failure

@pytest.mark.parametrize("ctor, says", [
    (lambda categories, prob: None, "returned None"),
    (lambda categories, prob: 42, "not callable"),
    (lambda categories, prob: (lambda x: x), "without a callable map"),
    (lambda categories: make_randomized_response(categories, 0.5), "rejected valid parameters"),
    ("not a function", "not callable"),
    (lambda categories, prob: sys.exit(3), "sys.exit(3)"),
], ids=["returns_none", "returns_int", "no_map", "wrong_signature", "not_callable", "sys_exit"])
def test_broken_constructor_is_one_failure(ctor, says):
    results = list(check_measurement_spec(RR, ctor=ctor, cfg=RunConfig(max_examples=2)))
    assert [(r.check, r.status) for r in results] == [("construct", Status.FAIL)]
    assert says in results[0].message


# ------------------------------------------------------------------ isolation: hangs, exits, engine errors

def _replace_function(function):
    def ctor(categories, prob):
        return dataclasses.replace(make_randomized_response(categories, prob), function=function)
    return ctor


def test_function_that_hangs_without_drawing_is_stopped_by_the_time_limit_and_the_run_ends():
    def forever(x):
        while True:
            pass

    results = list(check_measurement_spec(RR, ctor=_replace_function(forever),
                                          cfg=RunConfig(max_examples=5, time_limit=0.5)))
    by = {r.check: r for r in results}
    assert by["privacy.sound"].status is Status.STOPPED  # no verdict: neither a pass, a failure nor undecided
    assert by["privacy.sound"].message.startswith("stopped: time") and "--time-limit" in by["privacy.sound"].message
    # the input being evaluated when the limit fired, when it fired inside the code (under load it may fire before)
    witness = by["privacy.sound"].witness
    assert witness is None or witness["x"] is not None
    coverage = by["search.coverage"]  # the first hang ends the search: the limit is not spent on every set
    assert coverage.status is Status.STOPPED and coverage.witness["parameter_sets"] == 1, coverage.message


def test_enumeration_gets_the_work_budgets_of_the_run_and_no_time(monkeypatch):
    import vetdp.engine.runner as runner

    granted: list[dict] = []
    real = runner.enumerate_law

    def recording(fn, x, **kwargs):
        granted.append(kwargs)
        return real(fn, x, **kwargs)

    monkeypatch.setattr(runner, "enumerate_law", recording)
    cfg = RunConfig(budget=5_000, max_depth=700, max_steps=90_000)
    assert _results(make_randomized_response, cfg=cfg)["function.law"].status is Status.PASS
    assert len(granted) >= len(RR.inputs(validate_params(RR, ONE)))
    assert all(g == {"budget": 5_000, "max_depth": 700, "max_steps": 90_000} for g in granted), granted


@pytest.mark.parametrize("field, value", [("budget", 0), ("max_depth", -1), ("max_steps", 1.5), ("time_limit", 0),
                                          ("time_limit", float("nan")), ("budget", True)])
def test_run_config_rejects_budgets_out_of_range(field, value):
    with pytest.raises(ValueError, match=field):
        RunConfig(**{field: value})


def test_sys_exit_in_the_function_is_an_outcome_not_an_exit():
    def exits_on_first(x):
        if x == 0:
            sys.exit(3)
        return x

    results = _results(_replace_function(exits_on_first))
    assert "errors.data_independent" in _failing(results)
    assert "sys.exit(3)" in json.dumps(results["errors.data_independent"].witness)


def test_engine_error_in_one_parameter_set_keeps_the_others(monkeypatch):
    import vetdp.engine.runner as runner

    real = runner.privacy_findings

    def flaky(spec, m, dists, params):
        if len(params["categories"]) == 3:
            raise RuntimeError("boom")
        return real(spec, m, dists, params)

    monkeypatch.setattr(runner, "privacy_findings", flaky)
    results = list(check_measurement_spec(RR, cfg=RunConfig(max_examples=3)))
    by = {r.check: r for r in results}
    # vetdp's own computation raised: an engine error (exit 2) naming the clause and where, not a finding
    assert by["engine"].status is Status.ERROR and "boom" in by["engine"].message
    assert "engine error in privacy.sound, privacy.tight: RuntimeError: boom" in by["engine"].message
    assert "test_runner_robust.py:" in by["engine"].message  # where it was raised
    assert by["privacy.sound"].status is Status.PASS  # the other parameter sets were still checked


def test_deadline_interrupts_and_nests():
    with pytest.raises(DeadlineExceeded) as info, deadline(5.0), deadline(0.2) as inner:
        while True:
            pass
    assert info.value.budget is inner
    with deadline(None):
        pass


# ------------------------------------------------------------------ the map at every d_in

def _with_map(privacy_map):
    def ctor(categories, prob):
        return dataclasses.replace(make_randomized_response(categories, prob), privacy_map=privacy_map)
    return ctor


def test_map_zero_at_distance_two_fails_distance_and_monotone():
    eps = make_randomized_response([0, 1, 2], 0.5).map(1)
    results = _results(_with_map(lambda d: eps if d == 1 else 0.0))
    assert {"privacy.distance", "privacy.monotone"} <= _failing(results)
    assert results["privacy.distance"].witness["d_in"] == 2
    assert "privacy.sound" not in _failing(results)


def test_map_refusing_large_distance_passes_and_says_so():
    m = make_randomized_response([0, 1, 2], 0.5)

    def refuses(d):
        if d > 1:
            raise ValueError(f"d_in={d} must be <= 1")
        return m.map(d)

    results = _results(_with_map(refuses))
    assert not _failing(results)
    assert "refused" in results["privacy.distance"].message


def test_map_negative_at_zero_fails():
    m = make_randomized_response([0, 1, 2], 0.5)
    results = _results(_with_map(lambda d: -1e-300 if d == 0 else m.map(d)))
    assert "privacy.distance" in _failing(results)


# ------------------------------------------------------------------ search: seeded, reported

def test_seed_changes_the_search_and_is_reproducible():
    strategy = RR.params(False)
    a, b, a2 = draw_params(strategy, 10, 0), draw_params(strategy, 10, 1), draw_params(strategy, 10, 0)
    assert a == a2
    assert a != b


def test_coverage_reports_parameter_sets_and_fails_on_nothing():
    results = list(check_measurement_spec(RR, cfg=RunConfig(max_examples=3)))
    coverage = next(r for r in results if r.check == "search.coverage")
    assert coverage.status is Status.PASS and "parameter sets" in coverage.message
    empty = dataclasses.replace(RR, examples=[], params=lambda deep: __import__("hypothesis").strategies.nothing())
    results = list(check_measurement_spec(empty, cfg=RunConfig(max_examples=3)))
    assert next(r for r in results if r.check == "search.coverage").status is Status.FAIL


# ------------------------------------------------------------------ verify's command line

def _verify(*args):
    return CliRunner().invoke(main, ["verify", *args])


@pytest.mark.parametrize("params, says", [
    ('{"categories": [0, 1, 2], "prob": NaN}', "prob"),
    ('{"categories": [0, 1, 2], "prob": Infinity}', "finite"),  # strict JSON: Infinity is no number
    ('{"categories": [0, 1, 2], "prob": -0.5}', "prob"),
    ('{"categories": [0, 1, 2], "prob": "0.5"}', "prob"),
    ('{"categories": [], "prob": 0.5}', "categories"),
    ('{"categories": [0, 1, 2]}', "lacks"),
    ('{"categories": [0, 1, 2], "prob": 0.5, "colour": 1}', "colour"),
    ('[1, 2]', "JSON object"),
    ('{"categories": ', "not valid JSON"),
], ids=["nan", "inf", "negative", "string", "empty_categories", "missing_key", "unknown_key", "array", "bad_json"])
def test_verify_params_are_validated_before_the_implementation_is_blamed(params, says):
    result = _verify("randomized_response", "--impl", "vetdp.impl.randomized_response:make_randomized_response",
                     "--params", params)
    assert result.exit_code == 2, result.output
    assert says in result.output and "--params" in result.output
    assert "Traceback" not in result.output


def test_validate_params_accepts_valid_ones():
    assert validate_params(RR, dict(ONE)) == ONE


ADAPTER = textwrap.dedent('''
    import math
    from vetdp.impl.randomized_response import make_randomized_response

    def rr(x, epsilon, categories):
        """a plain function plus an epsilon, as a user might write it"""
        return make_randomized_response(categories, math.exp(epsilon) / (math.exp(epsilon) + len(categories) - 1))(x)

    class Adapter:
        @staticmethod
        def construct(params):
            return make_randomized_response(params["categories"], params["prob"])

        @staticmethod
        def invoke(mechanism, x):
            return mechanism(x)

        @staticmethod
        def privacy_map(mechanism, d_in):
            return mechanism.map(d_in)

    class LooseAdapter(Adapter):
        @staticmethod
        def privacy_map(mechanism, d_in):
            return 1.5 * mechanism.map(d_in)

    class Incomplete:
        construct = None
''')


@pytest.fixture()
def adapter_file(tmp_path):
    path = tmp_path / "user_adapter.py"
    path.write_text(ADAPTER)
    return path


def test_verify_adapter_passes_and_loose_map_warns_unless_strict(adapter_file):
    params = ["--params", json.dumps(ONE)]
    ok = _verify("randomized_response", "--adapter", f"{adapter_file}:Adapter", *params)
    assert ok.exit_code == 0, ok.output
    loose = _verify("randomized_response", "--adapter", f"{adapter_file}:LooseAdapter", *params, "--json", "-")
    assert loose.exit_code == 0, loose.output
    assert "warning" in loose.output
    strict = _verify("randomized_response", "--adapter", f"{adapter_file}:LooseAdapter", *params, "--strict")
    assert strict.exit_code == 1
    incomplete = _verify("randomized_response", "--adapter", f"{adapter_file}:Incomplete", *params)
    assert incomplete.exit_code == 2 and "invoke" in incomplete.output


def test_verify_needs_exactly_one_target():
    assert _verify("randomized_response").exit_code == 2
    both = _verify("randomized_response", "--impl", "x:y", "--adapter", "x:y")
    assert both.exit_code == 2


# ------------------------------------------------------------------ estimators from the code under test

RR_EST = find_spec("debias_randomized_response")


def _float_estimator(answers, categories, prob):
    """The textbook estimator in float64."""
    n, t = len(answers), len(categories)
    lie = (1 - prob) / (t - 1)
    return {c: (sum(a == c for a in answers) - n * lie) / (prob - lie) for c in categories}


def _biased_float_estimator(answers, categories, prob):
    n = len(answers)
    return {c: v * n / (n + 1) for c, v in _float_estimator(answers, categories, prob).items()}


def _est_results(estimator, variance=None):
    return {r.check: r for r in check_estimator_spec(RR_EST, cfg=RunConfig(max_examples=3), estimator=estimator,
                                                     variance=variance)}


def test_float_estimator_is_unbiased_within_the_allowance():
    results = _est_results(_float_estimator)
    assert results["estimator.unbiased_float"].status is Status.PASS
    assert results["estimator.unbiased"].status is Status.SKIPPED


def test_biased_float_estimator_fails_with_the_size_of_the_bias():
    results = _est_results(_biased_float_estimator)
    r = results["estimator.unbiased_float"]
    assert r.status is Status.FAIL and "largest |bias|" in r.message and r.repro.startswith("vetdp verify")


def test_wrong_variance_function_from_the_implementation_is_caught():
    def wrong(n, count, prob, t, exact=False):
        return 2 * randomized_response_count_variance(n, count, prob, t, exact=exact)

    assert _est_results(None, variance=wrong)["estimator.variance"].status is Status.FAIL
    assert _est_results(None, variance=randomized_response_count_variance)["estimator.variance"].status is Status.PASS


def test_estimator_raising_on_valid_answers_is_a_failing_clause():
    def raises(answers, categories, prob, exact=False):
        if len(answers) > 1:
            raise ZeroDivisionError("oops")
        return _float_estimator(answers, categories, prob)

    r = _est_results(raises)["estimator.unbiased"]
    assert r.status is Status.FAIL and "raised" in r.message


def test_gate_loose_map_setting_is_validated_and_reaches_the_run(tmp_path):
    from vetdp.cli.check import _gate_config

    bad = tmp_path / "bad.toml"
    bad.write_text('[gate]\nloose_map = "maybe"\n')
    result = CliRunner().invoke(main, ["check", "--config", str(bad), "-k", "randomized_response_bool::construct"])
    assert result.exit_code == 2 and "loose_map" in result.output
    good = tmp_path / "good.toml"
    good.write_text('[gate]\nloose_map = "warn"\n')
    assert _gate_config(str(good))["loose_map"] == "warn"
    m = make_randomized_response([0, 1, 2], 0.5)
    loose = _with_map(lambda d: 1.5 * m.map(d))
    assert _results(loose)["privacy.tight"].status is Status.FAIL
    assert _results(loose, RunConfig(loose_map=Status.WARNING))["privacy.tight"].status is Status.WARNING


def test_a_dead_weakref_proxy_on_the_heap_does_not_break_the_foreign_randomness_watch():
    import gc
    import weakref

    from vetdp.engine.foreign import watch_foreign_randomness

    class Target:
        pass

    target = Target()
    proxy = weakref.proxy(target)  # isinstance(proxy, ...) raises ReferenceError once target is gone
    del target
    gc.collect()
    with watch_foreign_randomness() as use:
        pass
    assert use.sources == [] and proxy is not None


def test_a_definite_failure_is_reported_before_an_undecided_parameter_set(monkeypatch):
    import vetdp.engine.runner as runner
    from vetdp.engine.clauses import Finding

    longest = max((runner.params_json(p) for p in RR.examples), key=len)

    def evaluate(spec, ctor, params, cfg, audit_beta=None, scale=False):
        # every set is undecided but the pinned example with the longest JSON, which fails for certain: the
        # report's example (otherwise the shortest failing set) must be the definite failure
        if runner.params_json(params) == longest:
            return {"function.law": Finding(False, "P[M(0) = 1] is 1/2, the law says 1/4")}
        return {"function.law": Finding(False, "undecided: the precision budget ran out (stand-in)", undecided=True)}

    monkeypatch.setattr(runner, "evaluate_params", evaluate)
    results = {r.check: r for r in check_measurement_spec(RR, ctor=make_randomized_response,
                                                          cfg=RunConfig(max_examples=1, strict_messages=False))}
    law = results["function.law"]
    assert law.status is Status.FAIL and "the law says 1/4" in law.message, (law.status, law.message)
    assert law.subject == longest


def test_freeze_reads_a_zero_dimensional_array_as_its_scalar():
    import numpy as np

    from vetdp.engine.enumerate import freeze

    assert freeze(np.array(3)) == 3 and freeze(np.array(True)) is True
    assert freeze([np.array(1), np.array([2, 3])]) == (1, (2, 3))


def test_a_clause_skipped_on_some_parameter_sets_says_so_in_its_summary_row():
    from hypothesis import strategies as st

    small = {"k": 3, "m": 1, "f": 0.5, "constant_time": False}
    long = {"k": 128, "m": 8, "f": 0.5, "constant_time": False}  # function.law skipped: 2^128 outputs
    spec = dataclasses.replace(find_spec("randomized_response_bitvec"), examples=[small], scale_examples=[long],
                               params=lambda deep: st.just(small), universal=None)
    rows = {r.check: r for r in check_measurement_spec(spec, cfg=RunConfig(max_examples=1))}
    law = rows["function.law"]
    assert law.status is Status.PASS and law.subject == "pass on 1 of 2 parameter sets, skipped on 1", law.subject
    assert rows["privacy.sound"].subject == "2 parameter sets"  # checked on both


def test_a_size_bound_of_the_product_computation_is_undecided_with_its_bound_never_an_engine_error():
    # pair_classes at k = 200 with two groups of coordinates raised NotStructured inside privacy.dominated: exit 2
    from vetdp.engine.runner import _Clauses
    from vetdp.engine.structure import NotStructured

    def too_large() -> dict:
        raise NotStructured("too many ways to split 2 groups of coordinates between input pairs")

    clauses = _Clauses({"k": 200}, RunConfig())
    assert clauses.run(("privacy.pld", "privacy.dominated"), too_large) is False
    assert "engine" not in clauses.out
    for name in ("privacy.pld", "privacy.dominated"):
        f = clauses.out[name]
        assert f.undecided and not f.ok and "too many ways to split 2 groups" in f.message, f.message


def test_a_work_budget_passed_at_a_scale_example_is_skipped_with_the_reason_and_undecided_elsewhere():
    # a sound bit vector flipping one ulp more than vetdp's (long mantissas) passed the exact-work budget of
    # privacy.dominated at the pinned k = 129, m = 65, which made verify exit 1 (red team)
    from vetdp.engine.runner import _Clauses
    from vetdp.engine.structure import ExactWorkExceeded

    def too_much() -> dict:
        raise ExactWorkExceeded(2_000_000_000)

    for scale in (False, True):
        clauses = _Clauses({"k": 129}, RunConfig(), scale=scale)
        assert clauses.run(("privacy.dominated",), too_much) is False
        f = clauses.out["privacy.dominated"]
        assert "2,000,000,000 word operations" in f.message, f.message
        if scale:
            assert f.ok and f.skipped and f.message.startswith("not checked at this size: ")
        else:
            assert not f.ok and f.undecided and f.message.startswith("undecided: ")
