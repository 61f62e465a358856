"""LDP libraries through ``vetdp verify SPEC --impl NAME`` (vetdp/audit/ldp_adapters, vetdp/audit/thirdparty.py).

Needs the ldp extra (pure-ldp 1.2.0, multi-freq-ldpy 0.2.5, diffprivlib 0.6.6); each library's tests
skip without it. Findings pinned here (§N) are recorded in proofs/findings/ldp.md with their commands: if a
library changes, a pinned figure fails and the findings document must be revisited. Audits run with
2000 samples per input at the engine's false-alarm budget β = 1e-4.
"""

import json
import math
from fractions import Fraction

import pytest
from click.testing import CliRunner

from vetdp.audit import ldp_adapters as L
from vetdp.audit.thirdparty import IMPLEMENTATIONS, resolve
from vetdp.cli.verify import verify
from vetdp.engine.estimators import check_estimator_spec
from vetdp.engine.runner import RunConfig, evaluate_params
from vetdp.engine.spec import find_spec

pytestmark = pytest.mark.extras
P_MAX = math.nextafter(1.0, 0.0)


def findings(lib: str, spec_name: str, params: dict, ctor=None) -> dict:
    """Every clause's Finding for one parameter set of ``lib``'s counterpart of ``spec_name`` (opaque audit)."""
    r = resolve(lib, find_spec(spec_name))
    cfg = RunConfig(opaque=True, strict_messages=False, audit_samples=2000, reproduce=r.config["reproduce"])
    return evaluate_params(r.spec, ctor or r.ctor, params, cfg)


def halved(ctor):
    """A deliberately wrong variant: the library's mechanism claiming half its ε."""
    def make(*args, **kwargs):
        m = ctor(*args, **kwargs)
        return L.LibraryMeasurement(m, m.epsilon / 2, m.name + " (ε claimed half)")
    return make


def estimator_results(lib: str, spec_name: str, estimator=None, params=None) -> dict:
    r = resolve(lib, find_spec(spec_name))
    cfg = RunConfig(max_examples=4, impl_ref=lib, **r.config)
    return {x.check: x for x in check_estimator_spec(r.spec, cfg, estimator or r.ctor, only_params=params)}


def run_cli(args: list[str], tmp_path) -> tuple[int, dict | None, str]:
    j = tmp_path / "r.json"
    result = CliRunner().invoke(verify, [*args, "--json", str(j)], catch_exceptions=False)
    data = json.loads(j.read_text()) if j.exists() else None
    return result.exit_code, data, result.output


# ------------------------------------------------------------------ translations (no library needed)

def test_rr_epsilon_is_exact_at_one_over_t_and_log_odds_elsewhere():
    assert L.rr_epsilon(0.25, 4) == 0.0 and L.rr_epsilon(0.5, 2) == 0.0
    assert L.rr_epsilon(0.75, 2) == pytest.approx(math.log(3), rel=1e-15)
    assert L.rr_epsilon(0.5, 3) == pytest.approx(math.log(2), rel=1e-15)
    assert L.rr_epsilon(1.0, 3) == math.inf and math.isnan(L.rr_epsilon(math.nan, 3))
    assert L.bitvec_epsilon(0.5) == pytest.approx(2 * math.log(3), rel=1e-15) and L.bitvec_epsilon(1.0) == 0.0


@pytest.mark.parametrize("call, names", [
    (lambda: L.rr_epsilon("0.5", 2), "prob='0.5'"),
    (lambda: L.rr_epsilon(True, 2), "prob=True"),
    (lambda: L.rr_epsilon(-0.1, 2), "prob=-0.1"),
    (lambda: L.rr_epsilon(0.5, 1), "t=1"),
    (lambda: L.bitvec_epsilon(0.0), "f=0.0"),
], ids=["str", "bool", "negative", "one_category", "f_zero"])
def test_untranslatable_parameters_raise_naming_the_value(call, names):
    with pytest.raises(L.Untranslatable, match=names.replace("(", r"\(")):
        call()


def test_unary_law_is_a_distribution_with_the_stated_bit_probabilities():
    law = L.unary_law((True, False), Fraction(3, 4), Fraction(1, 4))
    assert sum(law.values()) == 1 and law[(True, False)] == Fraction(9, 16) and law[(False, True)] == Fraction(1, 16)


def test_registry_names_every_library_and_rejects_unknown_ones(tmp_path):
    assert set(IMPLEMENTATIONS) == {"opendp", "pure-ldp", "multi-freq-ldpy", "diffprivlib"}
    code, _, out = run_cli(["randomized_response", "--impl", "no-such-lib"], tmp_path)
    assert code == 2 and "MODULE:ATTR" in out


# ------------------------------------------------------------------ pure-ldp

@pytest.fixture(scope="module")
def pure():
    pytest.importorskip("pure_ldp")
    from vetdp.audit.ldp_adapters import pure_ldp
    return pure_ldp


def test_pure_ldp_items_are_numbered_from_one_and_reports_from_zero(pure):
    m = pure.make_randomized_response(["a", "b", "c"], 1 - 2.0**-40)  # a lie has probability ~1e-12
    assert [m(x) for x in ["a", "b", "c"] * 20] == ["a", "b", "c"] * 20
    assert m.library.p == pytest.approx(1 - 2.0**-40) and m.map(0) == 0.0 and m.map(1) == m.epsilon


def test_pure_ldp_wrong_index_base_is_caught_by_the_audit(pure):
    def off_by_one(categories, prob):
        m = pure.make_randomized_response(categories, prob)
        cats = list(categories)
        # the report r read as item r (1-based) instead of index r: every answer shifted by one category
        return L.LibraryMeasurement(lambda x: cats[(cats.index(m(x)) + 1) % len(cats)], m.epsilon, "off by one")

    f = findings("pure-ldp", "randomized_response", {"categories": [0, 1, 2], "prob": 0.75}, off_by_one)
    assert f["privacy.sound"].ok and not f["audit.distribution"].ok


def test_pure_ldp_de_is_sound_and_its_samples_match_at_log3(pure):
    f = findings("pure-ldp", "randomized_response", {"categories": [0, 1], "prob": 0.75})
    assert f["privacy.sound"].ok and f["privacy.tight"].ok and f["audit.distribution"].ok
    assert f["privacy.sound"].true == pytest.approx(math.log(3), rel=1e-15)


def test_pure_ldp_claiming_half_its_epsilon_fails(pure):
    f = findings("pure-ldp", "randomized_response", {"categories": [0, 1], "prob": 0.75},
                 halved(pure.make_randomized_response))
    assert not f["privacy.sound"].ok and f["privacy.sound"].claimed == pytest.approx(math.log(3) / 2)


def test_finding_pure_ldp_de_floats_exceed_the_claimed_epsilon(pure):
    """proofs/findings/ldp.md §1: the probabilities DEClient computes give a loss above its ε (by 1.87e-16)."""
    f = findings("pure-ldp", "randomized_response", {"categories": [1, 0], "prob": 0.9464123735253469})
    assert not f["privacy.sound"].ok and f["audit.distribution"].ok
    assert f["privacy.sound"].slack == pytest.approx(-1.8681995230458814e-16, rel=1e-6)


def test_pure_ldp_reproduction_uses_pure_ldp_alone_and_shows_the_excess(pure, capsys):
    f = findings("pure-ldp", "randomized_response", {"categories": [1, 0], "prob": 0.9464123735253469})
    snippet = pure.reproduction("randomized_response", "privacy.sound", {"categories": [1, 0],
                                                                          "prob": 0.9464123735253469}, f)
    assert "vetdp" not in snippet
    exec(compile(snippet, "<repro>", "exec"), {})
    assert "loss - epsilon = 1.868199523045881" in capsys.readouterr().out


def test_finding_pure_ldp_ue_floats_exceed_the_claimed_epsilon(pure):
    f = findings("pure-ldp", "randomized_response_bitvec", {"k": 3, "m": 1, "f": 0.5, "constant_time": False})
    assert not f["privacy.sound"].ok and f["audit.distribution"].ok
    assert f["privacy.sound"].slack == pytest.approx(-2.62663265150032e-16, rel=1e-6)
    assert f["errors.data_independent"].ok and f["domain.rejects_outside"].ok


def test_pure_ldp_ue_claiming_half_fails_and_rejects_the_zero_vector(pure):
    f = findings("pure-ldp", "randomized_response_bitvec", {"k": 2, "m": 1, "f": 0.25, "constant_time": False},
                 halved(pure.make_randomized_response_bitvec))
    assert not f["privacy.sound"].ok and f["privacy.sound"].slack < -1
    m = pure.make_randomized_response_bitvec(find_spec("randomized_response_bitvec").build(
        lambda d, *_: d, {"k": 2, "m": 1, "f": 0.25, "constant_time": False}), None, 0.25)
    with pytest.raises(ValueError, match="exactly one item"):
        m((0, 0))


def test_finding_pure_ldp_accepts_negative_nan_and_infinite_epsilon(pure):
    """§2: pure-ldp validates nothing: ε < 0 and nan are accepted; ε = inf makes p = nan and the client always lies."""
    assert pure.DEClient(epsilon=-1.0, d=3).p < 1 / 3
    assert math.isnan(pure.DEClient(epsilon=math.nan, d=3).p)
    c = pure.DEClient(epsilon=math.inf, d=3)
    assert math.isnan(c.p) and all(c.privatise(1) != 0 for _ in range(200))


def test_pure_ldp_de_server_is_unbiased_with_the_textbook_variance(pure):
    r = estimator_results("pure-ldp", "debias_randomized_response")
    assert r["estimator.unbiased_float"].status.value == "pass" and r["estimator.variance"].status.value == "pass"
    assert r["precondition[prob_one_over_t]"].status.value == "fail"  # §4: ε = 0 gives inf/nan estimates


def test_pure_ldp_ue_server_is_unbiased_with_the_textbook_variance(pure):
    r = estimator_results("pure-ldp", "debias_randomized_response_bitvec")
    assert all(r[c].status.value == "pass" for c in ("estimator.unbiased_float", "estimator.variance",
                                                     "estimator.mse"))


def test_estimator_check_finds_a_planted_bias(pure):
    def biased(answers, categories, prob, exact=False):
        est = pure.debias_randomized_response(answers, categories, prob)
        return {c: v + 1e-6 for c, v in est.items()}

    r = estimator_results("pure-ldp", "debias_randomized_response", biased)
    assert r["estimator.unbiased_float"].status.value == "fail"
    assert "biased" in r["estimator.unbiased_float"].message


# ------------------------------------------------------------------ multi-freq-ldpy

@pytest.fixture(scope="module")
def mfl():
    pytest.importorskip("multi_freq_ldpy")
    from vetdp.audit.ldp_adapters import multi_freq_ldpy
    return multi_freq_ldpy


def test_mfl_grr_is_sound_and_claiming_half_fails(mfl):
    good = findings("multi-freq-ldpy", "randomized_response", {"categories": [0, 1], "prob": 0.75})
    assert good["privacy.sound"].ok and good["audit.distribution"].ok
    bad = findings("multi-freq-ldpy", "randomized_response", {"categories": [0, 1], "prob": 0.75},
                   halved(mfl.make_randomized_response))
    assert not bad["privacy.sound"].ok


def test_finding_mfl_grr_floats_exceed_the_claimed_epsilon(mfl):
    f = findings("multi-freq-ldpy", "randomized_response", {"categories": [0, 1, 2, 3], "prob": 0.625})
    assert not f["privacy.sound"].ok and f["audit.distribution"].ok
    assert f["privacy.sound"].slack == pytest.approx(-3.4445136915922786e-16, rel=1e-6)


def test_finding_mfl_grr_overstates_privacy_by_ln2_near_prob_one(mfl):
    """§6: at prob = 1 − 2**-52, k = 4 the library's p rounds to 1 − 2**-53: the exact loss is ε + ln 2."""
    f = findings("multi-freq-ldpy", "randomized_response", {"categories": [0, 1, 2, 3], "prob": 1 - 2.0**-52})
    assert not f["privacy.sound"].ok and f["privacy.sound"].slack == pytest.approx(-math.log(2), rel=1e-12)
    assert mfl.grr_keep_probability(f["privacy.sound"].claimed, 4) == 1 - 2.0**-53


def test_finding_unary_encoding_q_by_cancellation(mfl, pure):
    """§3 and §5: q = 1 − p loses relative precision for small f: the excess grows far beyond an ulp."""
    m = findings("multi-freq-ldpy", "randomized_response_bitvec",
                 {"k": 2, "m": 1, "f": 2.0**-20, "constant_time": False})["privacy.sound"]
    p = findings("pure-ldp", "randomized_response_bitvec", {"k": 2, "m": 1, "f": 0.001, "constant_time": False})
    assert m.slack == pytest.approx(-4.656613731110172e-10, rel=1e-6)
    assert p["privacy.sound"].slack == pytest.approx(-2.210982554333496e-13, rel=1e-6)


def test_mfl_ue_takes_the_zero_vector_and_its_samples_match(mfl):
    f = findings("multi-freq-ldpy", "randomized_response_bitvec", {"k": 2, "m": 1, "f": 0.25, "constant_time": False})
    assert f["audit.distribution"].ok and f["errors.data_independent"].ok
    assert not f["privacy.sound"].ok and f["privacy.sound"].slack == pytest.approx(-1.4647172415809814e-16, rel=1e-6)


def test_mfl_rejects_epsilon_zero_so_the_view_excludes_it(mfl, tmp_path):
    code, _, out = run_cli(["randomized_response_bool", "--impl", "multi-freq-ldpy", "--params",
                            '{"prob": 0.5, "constant_time": false}'], tmp_path)
    assert code == 2 and "epsilon=0.0" in out and "requires epsilon > 0" in out


def test_finding_mfl_mi_aggregator_is_biased_by_its_clipping(mfl):
    """§7: GRR_Aggregator_MI clips and renormalises: one user holding c0, prob 0.75 -> E = (0.75, 0.25)."""
    params = {"categories": ["c0", "c1"], "prob": 0.75, "dataset": ["c0"]}
    r = estimator_results("multi-freq-ldpy", "debias_randomized_response", params=params)
    assert r["estimator.unbiased_float"].status.value == "fail"
    assert r["estimator.unbiased_float"].witness["bias"] == ["-1/4", "1/4"]
    assert r["precondition[prob_one_over_t]"].status.value == "pass"  # the library rejects ε = 0 itself


def test_finding_mfl_ue_frequencies_are_biased(mfl):
    params = {"k": 2, "m": 2, "f": 0.5, "constant_time": False, "dataset": [(True, False)]}
    r = estimator_results("multi-freq-ldpy", "debias_randomized_response_bitvec_frequencies", params=params)
    assert r["estimator.unbiased_float"].witness["bias"] == ["-11/32", "5/32"]


# ------------------------------------------------------------------ diffprivlib

@pytest.fixture(scope="module")
def dpl():
    pytest.importorskip("diffprivlib")
    from vetdp.audit.ldp_adapters import diffprivlib
    return diffprivlib


def test_diffprivlib_binary_is_sound_at_log3_and_claiming_half_fails(dpl):
    good = findings("diffprivlib", "randomized_response_bool", {"prob": 0.75, "constant_time": False})
    assert good["privacy.sound"].ok and good["privacy.tight"].ok and good["audit.distribution"].ok
    bad = findings("diffprivlib", "randomized_response_bool", {"prob": 0.75, "constant_time": False},
                   halved(dpl.make_randomized_response_bool))
    assert not bad["privacy.sound"].ok


def test_finding_diffprivlib_binary_floats_exceed_the_claimed_epsilon(dpl):
    f = findings("diffprivlib", "randomized_response_bool", {"prob": 0.875, "constant_time": False})
    assert not f["privacy.sound"].ok and f["privacy.sound"].slack == pytest.approx(-4.1515204232615995e-17, rel=1e-6)


def test_finding_diffprivlib_binary_never_flips_from_epsilon_37_43(dpl):
    """("Also observed"): exp(ε) + 1 == exp(ε) in float64 once exp(ε) >= 2**54 (ε >= 37.43), and for some ε
    in [36.74, 37.43):
    U·(e+1) > e never holds and the input is released unchanged."""
    assert dpl.keep_probability(math.log(2.0**54)) == 1 and dpl.keep_probability(36.7) < 1
    mech = dpl.Binary(epsilon=40.0, value0="0", value1="1")
    assert all(mech.randomise("1") == "1" for _ in range(5000))


def test_finding_diffprivlib_accepts_nan_epsilon_and_rejects_zero(dpl):
    """§9: Binary(epsilon=nan) is accepted (its checks compare with nan) and never flips; ε = 0 is rejected."""
    mech = dpl.Binary(epsilon=math.nan, value0="0", value1="1")
    assert all(mech.randomise("0") == "0" for _ in range(2000))
    with pytest.raises(ValueError, match="cannot both be zero"):
        dpl.Binary(epsilon=0.0, value0="0", value1="1")


# ------------------------------------------------------------------ the command line

def test_cli_verify_diffprivlib_reports_the_precondition_and_rounding_findings(dpl, tmp_path):
    code, data, _ = run_cli(["randomized_response_bool", "--impl", "diffprivlib", "--max-examples", "2",
                             "--samples", "2000"], tmp_path)
    by = {r["check"]: r for r in data["results"]}
    assert code == 1
    assert by["precondition[prob_nan]"]["status"] == "fail" and by["audit.distribution"]["status"] == "pass"
    assert "precondition[prob_str]" not in by  # no ε translation: vetdp's notion, not run against the library
    snippet = by["precondition[prob_nan]"]["repro"].split("\n", 1)[1]
    assert "vetdp" not in snippet and "Binary(epsilon=epsilon" in snippet


def test_cli_verify_pure_ldp_on_sound_params_passes_every_postcondition(pure, tmp_path):
    code, data, _ = run_cli(["randomized_response", "--impl", "pure-ldp", "--params",
                             '{"categories": [0, 1], "prob": 0.75}', "--samples", "2000"], tmp_path)
    by = {r["check"]: r for r in data["results"]}
    post = {k: v["status"] for k, v in by.items() if not k.startswith(("precondition", "privacy.sound["))}
    assert post["privacy.sound"] == "pass" and post["audit.distribution"] == "pass"
    assert all(s in ("pass", "skipped") for s in post.values()), post
    assert code == 1  # the precondition findings (§2) fail the run


def test_cli_untranslatable_params_and_missing_counterparts_are_usage_errors(pure, tmp_path):
    code, _, out = run_cli(["randomized_response_bitvec", "--impl", "pure-ldp", "--params",
                            '{"k": 3, "m": 2, "f": 0.5, "constant_time": false}'], tmp_path)
    assert code == 2 and "max_weight must be 1" in out
    code, _, out = run_cli(["k_rappor", "--impl", "pure-ldp"], tmp_path)
    assert code == 2 and "no pure-ldp counterpart" in out
