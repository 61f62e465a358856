"""``vetdp audit`` from the command line: verdicts, β in every report, JSON, exit codes."""

import json

from click.testing import CliRunner

from vetdp.cli import main

RR = ["--mechanism", "randomized_response_bool", "--params", '{"prob": 0.75, "constant_time": false}']
UNIFORM = "vetdp.sampling.batch:sample_uniform_int_below_batch"  # sampler(x, n): n draws uniform on [0, x)


def invoke(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_audit_of_a_correct_claim_passes_and_states_beta(tmp_path):
    j = tmp_path / "a.json"
    result = invoke("audit", *RR, "--seed", "1", "--samples", "40000", "--json", str(j))
    assert result.exit_code == 0, result.output
    r = json.loads(j.read_text())["results"][0]
    assert r["check"] == "audit.epsilon_lower_bound" and r["status"] == "pass"
    # the claim defaults to map(1) = ln 3
    assert r["claimed"] == 1.0986122886681098 and 0.9 < r["epsilon_lower_bound"] < r["claimed"]
    assert "β=0.05" in r["message"] and "20000 test samples" in r["message"] and "true" not in r
    assert "epsilon lower bound" in result.output  # the table names the column for what it holds


def test_audit_flags_a_claim_below_the_lower_bound_with_exit_1(tmp_path):
    j = tmp_path / "a.json"
    result = invoke("audit", *RR, "--epsilon", "0.8", "--beta", "0.01", "--seed", "2", "--samples", "40000",
                    "--json", str(j))
    assert result.exit_code == 1
    r = json.loads(j.read_text())["results"][0]
    assert r["status"] == "fail" and r["epsilon_lower_bound"] > 0.8 and "β=0.01" in r["message"]
    assert "vetdp audit" in r["repro"] and "--seed 2" in r["repro"]


def test_audit_of_a_plain_sampler_with_disjoint_supports():
    assert invoke("audit", "--sampler", UNIFORM, "--x", "4", "--x-prime", "5", "--epsilon", "2",
                  "--seed", "3", "--samples", "4000").exit_code == 1
    assert invoke("audit", "--sampler", UNIFORM, "--x", "4", "--x-prime", "6", "--epsilon", "3",
                  "--seed", "3", "--samples", "4000").exit_code == 1


def test_audit_of_an_input_against_itself_is_refused_not_passed():
    r = CliRunner().invoke(main, ["audit", "--sampler", UNIFORM, "--x", "4", "--x-prime", "4", "--epsilon", "0"])
    assert r.exit_code == 2 and "same input" in r.output
    r = CliRunner().invoke(main, ["audit", "--sampler", UNIFORM, "--inputs", "[4, 4]", "--epsilon", "0"])
    assert r.exit_code == 2 and "--inputs" in r.output


def test_audit_params_may_omit_what_the_constructor_defaults(tmp_path):
    j = tmp_path / "a.json"
    r = invoke("audit", "--mechanism", "randomized_response_bool", "--params", '{"prob": 0.75}', "--seed", "1",
               "--samples", "4000", "--json", str(j))
    assert r.exit_code == 0, r.output


def test_audit_sampler_errors_name_the_sampler_option():
    r = CliRunner().invoke(main, ["audit", "--sampler", "no_colon", "--x", "1", "--x-prime", "2", "--epsilon", "1"])
    assert r.exit_code == 2 and "--sampler" in r.output and "--impl" not in r.output


def test_audit_searches_pairs_among_candidate_inputs(tmp_path):
    j = tmp_path / "a.json"
    result = invoke("audit", "--sampler", UNIFORM, "--inputs", "[6, 6, 7]", "--epsilon", "3", "--seed", "4",
                    "--samples", "4000", "--json", str(j))
    assert result.exit_code == 1
    w = json.loads(j.read_text())["results"][0]["witness"]
    assert {w["x"], w["x_prime"]} == {"6", "7"}


def test_audit_usage_errors_exit_2():
    assert invoke("audit", "--epsilon", "1").exit_code == 2  # neither --sampler nor --mechanism
    assert invoke("audit", "--sampler", UNIFORM, "--x", "4", "--x-prime", "5").exit_code == 2  # no --epsilon
    assert invoke("audit", "--sampler", UNIFORM, "--x", "4").exit_code == 2  # no x'
    assert invoke("audit", "--sampler", UNIFORM, "--x", "{bad", "--x-prime", "1", "--epsilon", "1").exit_code == 2
    assert invoke("audit", *RR, "--beta", "1.5").exit_code == 2
    assert invoke("audit", "--mechanism", "no_such_mechanism").exit_code == 2
    assert invoke("audit", "--mechanism", "randomized_response_bool", "--params", '{"prob": 2.0, '
                  '"constant_time": false}').exit_code == 2
    assert invoke("audit", "--sampler", "no_such_module:f", "--x", "1", "--x-prime", "2",
                  "--epsilon", "1").exit_code == 2
