"""Issue 23: verdicts over every distance, every call and every source of randomness, and engine failures kept apart
from findings.

The variants live in tests/mutants/distances_calls_sources.py (docstring "Defect: ..." or "Sound: ..."); each wrong one
must be rejected on the clause named for it, with a witness, and each sound one accepted. The runs use the
configuration ``vetdp verify`` uses, on one parameter set each.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
from fractions import Fraction

import pytest
from click.testing import CliRunner

from tests.mutants import bitvec_mutants, distances_calls_sources, rappor_mutants, unseen_bitvec
from vetdp.arith.rounding import MAX_FLOAT, nearest_float_or_inf
from vetdp.cli import main
from vetdp.engine.distances import TRACE_REGIONS, survey_map
from vetdp.engine.results import Status
from vetdp.engine.runner import RunConfig, check_measurement_spec
from vetdp.engine.spec import find_spec

VERIFY = RunConfig(max_examples=3, impl_ref="tests.mutants", strict_messages=False, fallback_opaque=True,
                   reference_law=True, loose_map=Status.WARNING)
RR, BV, BOOL, KR = "randomized_response", "randomized_response_bitvec", "randomized_response_bool", "k_rappor"
BV_SUBNORMAL = {"k": 2, "m": 1, "f": 1e-323, "constant_time": False}
RR3 = {"categories": [0, 1, 2], "prob": 0.5}


def results_of(spec_name: str, variant, params: dict | None = None, cfg: RunConfig = VERIFY) -> dict:
    by_clause: dict = {}
    for r in check_measurement_spec(find_spec(spec_name), ctor=variant, cfg=cfg, only_params=params):
        by_clause.setdefault(r.check, r)
    return by_clause


def invoke(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


# ------------------------------------------------------------------ 2. every distance

@pytest.mark.parametrize("variant,d", [(distances_calls_sources.map_wraps_to_zero_at_256, 256),
                                       (distances_calls_sources.map_zero_from_distance_70000, 70_000)])
def test_a_map_wrong_far_from_distance_one_is_rejected_at_that_distance(variant, d):
    by_clause = results_of(RR, variant, RR3)
    distance, monotone = by_clause["privacy.distance"], by_clause["privacy.monotone"]
    assert distance.status is Status.FAIL and monotone.status is Status.FAIL, (distance.message, monotone.message)
    assert distance.witness["d_in"] == d and distance.claimed == 0.0 and distance.true == pytest.approx(math.log(2))
    assert monotone.witness["d_in'"] == d and monotone.witness[f"map({d})"] == 0.0
    assert by_clause["privacy.sound"].status is Status.PASS  # map(1) is right: only d_in = d shows it


def test_the_distance_no_sweep_reaches_is_found_by_tracing_the_map():
    # 70000 is neither below the sweep nor a power of two or ten: the traced comparison d_in >= 70000 puts it
    # among the evaluated points, and the trace decides every other d_in
    by_clause = results_of(RR, distances_calls_sources.map_zero_from_distance_70000, RR3)
    assert "for every d_in >= 0: 3 traced regions ({0} 0.0, [1, 69999] 0.6931471805599454, [70000, inf] 0.0)" \
        in by_clause["privacy.distance"].message, by_clause["privacy.distance"].message


def test_a_sound_map_computing_with_d_in_is_evaluated_and_says_so():
    by_clause = results_of(RR, distances_calls_sources.map_group_privacy, RR3)
    for clause in ("privacy.distance", "privacy.monotone"):
        r = by_clause[clause]
        assert r.status is Status.PASS, r.message
        assert "decided for every d_in >= 0 in 0 of 1; the others evaluated at every d_in <= 1024" in r.message


@pytest.mark.parametrize("spec_name", [RR, BOOL, BV, KR, "rappor", "rappor_reports"])
def test_the_bundled_maps_are_decided_for_every_distance(spec_name):
    spec = find_spec(spec_name)
    results = {r.check: r for r in check_measurement_spec(spec, cfg=VERIFY, only_params=spec.examples[0])}
    for clause in ("privacy.distance", "privacy.monotone"):
        assert results[clause].status is Status.PASS, results[clause].message
        assert "decided for every d_in >= 0 in 1 of 1" in results[clause].message, results[clause].message


def test_buffling_map_computes_with_d_in_and_is_evaluated_to_the_stated_bound():
    spec = find_spec("buffling")
    r = {r.check: r for r in check_measurement_spec(spec, cfg=VERIFY, only_params=spec.examples[1])}
    assert r["privacy.distance"].status is Status.PASS
    assert "in 0 of 1; the others evaluated at every d_in <= 1024 and at 2^j − 1, 2^j, 2^j + 1 (j <= 64)" \
        in r["privacy.distance"].message


def test_trace_regions_and_their_confirmation():
    eps = 0.5
    survey = survey_map(lambda d: eps if 0 < d < 256 else 0.0, lambda d: eps if 0 < d < 256 else 0.0, 3)
    assert survey.universal and [(r.lo, r.hi) for r in survey.regions] == [(0, 0), (1, 255), (256, None)]
    assert survey.points[256] == 0.0 and survey.points[2**64 + 1] == 0.0

    def reads_its_digits(d):  # int's own method on the traced int reads the hidden value, unseen by the trace
        return 0.0 if int.__add__(d, 0) == 0 else eps

    survey = survey_map(reads_its_digits, reads_its_digits, 3)
    assert not survey.universal and "its trace is not used: traced as [0, inf] 0.0, but map(1) gives 0.5" in survey.how
    assert survey.how.startswith("evaluated at every d_in <= 1024") and set(range(1025)) <= set(survey.points)

    def branches(d):
        return float(sum(d == i for i in range(100)))

    survey = survey_map(branches, branches, 3)
    assert not survey.universal and f"more than {TRACE_REGIONS} regions" in survey.how
    text = survey_map(lambda d: f"{d}", lambda d: f"{d}", 3)  # a value built from d_in's text is computed
    assert not text.universal and "computes with d_in on [0, inf]" in text.how


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


# ------------------------------------------------------------------ 3. state across calls

STATE_WRONG = [(distances_calls_sources.changes_on_the_50th_call, 50), (distances_calls_sources.memoised_per_input, 2),
               (distances_calls_sources.alternates_on_a_call_counter, 2)]
STATE_SOUND = [distances_calls_sources.lie_table_built_in_the_constructor,
               distances_calls_sources.lie_table_built_on_the_first_call,
               distances_calls_sources.counts_calls_for_telemetry]


@pytest.mark.parametrize("variant,call", STATE_WRONG, ids=[v.__name__ for v, _ in STATE_WRONG])
def test_state_kept_across_calls_is_rejected_at_the_call_it_shows(variant, call):
    # decided by a stated number of calls on fresh measurements, whatever the enumeration's calls happened to meet
    by_clause = results_of(RR, variant, RR3)
    r = by_clause["state.independent_calls"]
    assert r.status is Status.FAIL, r.message
    assert r.message.startswith(f"state kept across calls: call {call} of one measurement, M(")
    assert {"call", "x", "choices", "output", "fresh first call"} <= set(r.witness) and r.witness["call"] == call
    assert r.repro.startswith("vetdp verify randomized_response --impl tests.mutants --params ")


@pytest.mark.parametrize("variant", STATE_SOUND, ids=[v.__name__ for v in STATE_SOUND])
def test_state_that_does_not_reach_the_output_passes(variant):
    by_clause = results_of(RR, variant, RR3)
    failing = {c: r.message for c, r in by_clause.items() if r.status.is_failure}
    assert not failing, failing
    r = by_clause["state.independent_calls"]
    assert r.status is Status.PASS and "128 calls on one measurement, cycling through 5 inputs" in r.message, r.message
    assert "the joint law of two calls is the product of their laws for 4 of 5 inputs" in r.message
    assert by_clause["function.law"].status is Status.PASS  # checked, not skipped


def test_a_memo_that_keeps_the_marginal_law_fails_the_joint_law_of_two_calls():
    # a memo replayed per path by the sequence is caught there; the pair check alone decides independence exactly
    from vetdp.engine.calls import independent_calls
    from vetdp.engine.clauses import show

    spec = find_spec(RR)
    ok, message, witness = independent_calls(lambda: spec.build(distances_calls_sources.memoised_per_input, RR3),
                                             spec.inputs(RR3), show, calls=0)
    assert not ok and "two calls of one measurement on 0 are not independent" in message, message
    assert witness["P[both]"] != witness["product"]


def test_calls_are_compared_past_a_loop_that_first_options_never_leave_and_nothing_compared_is_undecided():
    from vetdp.engine.calls import REFERENCE_CHOICES, independent_calls
    from vetdp.engine.clauses import show
    from vetdp.sampling import sample_bernoulli_float

    calls = {"n": 0}

    def geometric_then_memo(x):  # option 0 of the coin continues the loop: siblings end it, and the state is seen
        calls["n"] += 1
        n = 0
        while sample_bernoulli_float(0.5):
            n += 1
        return (x + n + (calls["n"] > 3)) % 3

    def endless(x):  # every path makes more choices than a reference may: nothing can be compared
        for _ in range(REFERENCE_CHOICES + 1):
            sample_bernoulli_float(0.5)
        return x

    from vetdp.impl import make_randomized_response

    spec = find_spec(RR)
    built = spec.build(make_randomized_response, RR3)
    for function, verdict in ((geometric_then_memo, False), (endless, None)):
        calls["n"] = 0
        ok, message, _ = independent_calls(lambda f=function: dataclasses.replace(built, function=f),
                                           spec.inputs(RR3), show)
        assert ok is verdict, message
    assert message.startswith("undecided: no path of a fresh first call ends within 64 random choices"), message


def test_paths_that_do_not_add_up_are_the_state_clauses_finding_when_fresh_measurements_show_nothing(monkeypatch):
    # state kept outside the measurements built afresh (or changing after more calls) is still seen by the
    # enumeration, whose paths' probabilities then sum to 3/2: that sum becomes state.independent_calls' finding
    from vetdp.engine import calls, runner
    from vetdp.engine.enumerate import ReplayMismatch

    def replays_elsewhere(*args, **kwargs):
        raise ReplayMismatch(Fraction(3, 2), 4)

    monkeypatch.setattr(calls, "independent_calls", lambda *args, **kwargs: (True, "128 calls: nothing seen", None))
    monkeypatch.setattr(runner, "enumerate_law", replays_elsewhere)
    by_clause = results_of(RR, None, RR3)
    r = by_clause["state.independent_calls"]
    assert r.status is Status.FAIL and "engine" not in by_clause
    assert r.message.startswith("state kept between calls: replaying the same choices gave other paths"), r.message
    assert "sum to 3/2" in r.message and "(128 calls: nothing seen: the state is kept outside" in r.message
    assert by_clause["randomness.through_primitives"].status is Status.SKIPPED


# ------------------------------------------------------------------ 3'. memoisation declared by the spec

CLIENT = "rappor_client_report"  # one client, one report per call: declares its permanent response per Bloom filter
CLIENT2 = {"k": 2, "m": 1, "f": 0.5, "p": 0.25, "q": 0.75, "constant_time": False, "derivation": "vetdp"}
MEMO_WRONG = [
    # the report kept too: two calls on one value are one draw, against the declared shared-PRR law
    (rappor_mutants.client_memoises_its_report_too, "after a call on '00' of the same measurement: "
     "P[first = '00', second = '00'] = 25/64 (0.390625), the declared memoisation gives 49/256", "declared"),
    # the declaration violated: a fresh PRR per call averages the permanent noise away
    (rappor_mutants.client_redraws_its_permanent_response, "after a call on '00' of the same measurement: "
     "P[first = '00', second = '00'] = 625/4096 (0.152588), the declared memoisation gives 49/256", "declared"),
    # a memo without the client in its key: two clients share their permanent responses
    (rappor_mutants.client_memo_ignores_the_client, "after a call on '00' of another measurement built separately: "
     "P[first = '00', second = '00'] = 49/256 (0.191406), the product of their first calls' laws gives 625/4096",
     "product"),
]


def test_the_client_that_keeps_its_permanent_responses_passes_as_declared():
    by_clause = results_of(CLIENT, None, CLIENT2)
    failing = {c: r.message for c, r in by_clause.items() if r.status.is_failure}
    assert not failing, failing
    r = by_clause["state.independent_calls"]
    assert r.status is Status.PASS, r.message
    assert "as declared: 128 calls on 20 measurements, cycling through 3 inputs (3 keys)" in r.message, r.message
    assert ("two calls on one key have the declared joint law for 3 inputs, calls on two keys the product of their "
            "laws for 1 pair, calls of two measurements for 1 input") in r.message
    assert by_clause["function.law"].status is Status.PASS  # each clause's call is the first of a fresh client


@pytest.mark.parametrize("variant,said,name", MEMO_WRONG, ids=[v.__name__ for v, _, _ in MEMO_WRONG])
def test_memoisation_other_than_declared_fails_with_the_call_and_the_input(variant, said, name):
    by_clause = results_of(CLIENT, variant, CLIENT2)
    failing = {c for c, r in by_clause.items() if r.status.is_failure}
    assert failing == {"state.independent_calls"}, failing  # each call alone has the one-report law
    r = by_clause["state.independent_calls"]
    assert r.message.startswith("state kept across calls: call 2, M('00'), " + said), r.message
    assert r.witness["call"] == 2 and r.witness["x"] == "00" and name in r.witness, r.witness
    assert r.repro.startswith("vetdp verify rappor_client_report --impl tests.mutants --params ")


def test_a_memo_on_a_key_coarser_than_declared_fails_at_the_first_call_on_an_unseen_key():
    # the flips kept per first bit: '01' after '00' reuses them, where the declaration makes '01' a fresh key
    r = results_of(CLIENT, rappor_mutants.client_memo_keyed_on_the_first_bit, CLIENT2)["state.independent_calls"]
    assert r.status is Status.FAIL, r.message
    assert r.message.startswith("state kept across calls: call 11 of one measurement, M('01') with the choices "
                                "[0, 0, 0, 0], returned '11' where a fresh measurement's first call with the same "
                                "choices returns '11' (it made 2 random choices, the fresh call 4), after 10 earlier "
                                "calls, a key ('01') this measurement had not seen"), r.message
    assert r.witness["call"] == 11 and r.witness["x"] == "01"


def test_the_declaration_is_what_lets_the_client_pass_and_undeclared_it_fails_at_call_2():
    from vetdp.engine.calls import Memo, independent_calls
    from vetdp.engine.clauses import show

    spec = find_spec(CLIENT)
    ctor = spec.load_constructor()
    build = functools.partial(spec.build, ctor, CLIENT2)
    ok, message, witness = independent_calls(build, spec.inputs(CLIENT2), show)  # no declaration: as today
    assert not ok and message.startswith("state kept across calls: call 2 of one measurement, M("), message
    declared = Memo(lambda x: spec.memoised.key(CLIENT2, x), lambda x, n: spec.memoised.repeats(CLIENT2, x, n))
    ok, message, _ = independent_calls(build, spec.inputs(CLIENT2), show, memo=declared)
    assert ok, message


def test_first_calls_builds_a_measurement_afresh_for_every_call_and_keeps_the_rest_of_the_one_built():
    from vetdp.engine.calls import first_calls
    from vetdp.impl import make_randomized_response

    class Counter:  # not a dataclass: called as a whole
        def __init__(self):
            self.n = 0

        def __call__(self, x):
            self.n += 1
            return self.n

        def map(self, d_in):
            return 0.25

    m = first_calls(Counter, Counter())
    assert [m(0), m(0), m(1)] == [1, 1, 1] and m.map(1) == 0.25

    def counting():
        built, seen = make_randomized_response([0, 1, 2], 0.5), []
        return dataclasses.replace(built, function=lambda x: seen.append(x) or len(seen))

    m = first_calls(counting, counting())
    assert [m(0), m(0), m(2)] == [1, 1, 1] and m.map(1) == make_randomized_response([0, 1, 2], 0.5).map(1)
    with pytest.raises(TypeError, match="must be of type int"):
        m("x")  # the domain is still checked, before the function


def test_the_clients_over_runs_spec_keeps_no_state_across_calls_and_declares_none():
    # make_rappor_client_reports: a fresh client (secret) per call, its runs sharing the PRR inside the call
    spec = find_spec("rappor_client")
    assert spec.memoised is None
    r = results_of("rappor_client", None, {**CLIENT2, "runs": 2})["state.independent_calls"]
    assert r.status is Status.PASS and "128 calls on one measurement, cycling through 3 inputs" in r.message


# ------------------------------------------------------------------ 4. a predictable source

PREDICTABLE = [(distances_calls_sources.module_random_with_constant_seed, "random.Random.randbytes"),
               (distances_calls_sources.numpy_default_rng_seeded, "numpy.random.Generator (state changed: a draw)"),
               (distances_calls_sources.random_seed_then_module_functions, "random.random (module-level random)")]


@pytest.mark.parametrize("variant,source", PREDICTABLE, ids=[v.__name__ for v, _ in PREDICTABLE])
def test_a_non_cryptographic_generator_is_rejected_with_its_name_even_with_right_frequencies(variant, source):
    by_clause = results_of(RR, variant, RR3)
    r = by_clause["randomness.cryptographic"]
    assert r.status is Status.FAIL, r.message
    assert r.message.startswith("draws from a non-cryptographic generator: ") and source in r.witness["sources"]
    assert r.repro.startswith("vetdp verify randomized_response --impl tests.mutants --params ")
    # the frequencies are exactly right: the audit cannot see it, and the map is right
    for clause in ("audit.distribution", "privacy.sound"):
        assert by_clause[clause].status is Status.PASS, (clause, by_clause[clause].message)
    failing = {c for c, x in by_clause.items() if x.status.is_failure}
    assert failing == {"randomness.cryptographic"}, failing


def test_the_operating_systems_csprng_passes_and_its_samples_are_audited():
    by_clause = results_of(RR, distances_calls_sources.system_random_coin, RR3)
    assert not {c for c, x in by_clause.items() if x.status.is_failure}
    assert by_clause["randomness.cryptographic"].status is Status.PASS
    assert "os.urandom via random.SystemRandom" in by_clause["randomness.cryptographic"].message
    assert by_clause["audit.distribution"].status is Status.PASS


def test_vetdps_primitives_are_the_cryptographic_source_and_check_fails_both_clauses_for_a_seeded_one():
    ours = results_of(RR, None, RR3)
    assert ours["randomness.cryptographic"].status is Status.PASS
    assert "no source of randomness but vetdp's primitives" in ours["randomness.cryptographic"].message
    check = RunConfig(max_examples=3, impl_ref="tests.mutants", strict_messages=False)  # vetdp check: no fallback
    by_clause = results_of(RR, distances_calls_sources.module_random_with_constant_seed, RR3, cfg=check)
    assert by_clause["randomness.through_primitives"].status is Status.FAIL
    assert by_clause["randomness.cryptographic"].status is Status.FAIL


def test_an_unexplained_nondeterminism_leaves_the_source_undecided():
    from vetdp.engine.clauses import cryptographic_finding

    f = cryptographic_finding([], unexplained=True)
    assert not f.ok and f.undecided and "no known source of randomness was seen" in f.message
    assert cryptographic_finding(["os.urandom via secrets.randbelow"]).ok
    assert not cryptographic_finding(["os.urandom via secrets.randbelow", "numpy.random BitGenerator construction "
                                      "(default_rng, RandomState, PCG64, ...)"]).ok


def test_every_variant_is_documented_and_judged_here():
    judged = {v for v, _ in STATE_WRONG} | set(STATE_SOUND) | {v for v, _ in PREDICTABLE}
    judged |= {distances_calls_sources.map_wraps_to_zero_at_256, distances_calls_sources.map_zero_from_distance_70000,
               distances_calls_sources.map_group_privacy, distances_calls_sources.system_random_coin}
    for name in distances_calls_sources.__all__:
        variant = getattr(distances_calls_sources, name)
        assert variant in judged, f"{name} is not judged by any test"
        assert (variant.__doc__ or "").startswith(("Defect:", "Sound:")), name


def test_a_replayed_choice_that_does_not_exist_at_its_draw_halts_the_source_never_raising_in_the_code():
    from vetdp.sampling.primitives import sample_bernoulli_float
    from vetdp.sampling.sources import BranchingSource, ReplayDiverged, use_source

    source = BranchingSource([1])  # recorded at a fair coin; replayed at a coin of probability 0 (one outcome)
    with use_source(source), pytest.raises(ReplayDiverged, match="replays option 1, but this draw offers 1 option"):
        sample_bernoulli_float(0.0)
    with use_source(source), pytest.raises(ReplayDiverged):  # code that swallowed it draws no further
        sample_bernoulli_float(0.5)


def test_code_drawing_another_sequence_on_a_later_call_is_state_across_calls_not_its_own_index_error():
    # the memo's permanent response is not drawn again: the replayed permanent-response choice lands on a report's
    # coin of probability 0 (p = 0), which has one outcome; before, the replay raised IndexError inside the code
    params = {"k": 3, "m": 1, "f": 0.25, "p": 0.0, "q": 1.0, "constant_time": False, "reports": 2}
    r = results_of("rappor_reports", rappor_mutants.reports_memo_by_weight, params)["state.independent_calls"]
    assert r.status is Status.FAIL and "state kept across calls" in r.message
    assert "the draw sequence differs" in r.message and "IndexError" not in r.message, r.message
    assert r.witness["output"].startswith("no output: random choice 1 replays option 1")
