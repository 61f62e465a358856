"""LDP libraries through ``vetdp verify SPEC --impl NAME`` (vetdp/audit/ldp_adapters, vetdp/audit/thirdparty.py).

Needs the ldp extra (pure-ldp 1.2.0, multi-freq-ldpy 0.2.5, diffprivlib 0.6.6); each library's tests
skip without it. Findings pinned here (§N) are recorded in proofs/findings/ldp.md with their commands: if a
library changes, a pinned figure fails and the findings document must be revisited. Audits run with
2000 samples per input at the engine's false-alarm budget β = 1e-4.
"""

import json
import math
from fractions import Fraction
from pathlib import Path

import pytest
from click.testing import CliRunner

from vetdp.audit import ldp_adapters as L
from vetdp.audit.thirdparty import IMPLEMENTATIONS, resolve
from vetdp.cli.verify import verify
from vetdp.engine.estimators import check_estimator_spec
from vetdp.engine.runner import RunConfig, evaluate_params
from vetdp.engine.spec import find_spec
from vetdp.project import project_scope

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


# ------------------------------------------------------------------ optimized unary encoding (examples/oue's specs)

OUE_PROJECT = Path(__file__).resolve().parents[1] / "examples" / "oue"


def oue_findings(lib: str, params: dict, ctor=None) -> dict:
    """Every clause's Finding for ``lib``'s OUE client against examples/oue's spec ``oue`` (opaque audit)."""
    with project_scope(OUE_PROJECT):
        r = resolve(lib, find_spec("oue"))
        cfg = RunConfig(opaque=True, strict_messages=False, audit_samples=2000, reproduce=r.config["reproduce"])
        return evaluate_params(r.spec, ctor or r.ctor, params, cfg)


def oue_estimator_results(lib: str, params: dict | None = None) -> dict:
    with project_scope(OUE_PROJECT):
        r = resolve(lib, find_spec("estimate_oue_counts"))
        cfg = RunConfig(max_examples=4, impl_ref=lib, **r.config)
        return {x.check: x for x in check_estimator_spec(r.spec, cfg, r.ctor, only_params=params)}


def run_project_cli(args: list[str], tmp_path) -> tuple[int, dict | None, str]:
    """``vetdp --project examples/oue ARGS --json FILE`` through the root command group."""
    from vetdp.cli import main

    j = tmp_path / "r.json"
    result = CliRunner().invoke(main, ["--project", str(OUE_PROJECT), *args, "--json", str(j)], catch_exceptions=False)
    data = json.loads(j.read_text()) if j.exists() else None
    return result.exit_code, data, result.output


def swapped(ctor):
    """A deliberately wrong variant: the library's OUE client with p and q swapped after construction."""
    def make(*args, **kwargs):
        m = ctor(*args, **kwargs)
        m.library.p, m.library.q = m.library.q, m.library.p
        return m
    return make


OUE_LN3 = {"d": 2, "epsilon": math.log(3), "constant_time": False}
OUE_ONE = {"d": 2, "epsilon": 1.0, "constant_time": False}


def test_oue_translation_is_the_identity_on_epsilon_and_rejects_constant_time():
    assert L.oue_translate({"d": 3, "epsilon": 2, "constant_time": False}, "k") == {"epsilon": 2.0, "k": 3}
    with pytest.raises(L.Untranslatable, match="constant_time=True"):
        L.oue_translate({"d": 3, "epsilon": 1.0, "constant_time": True}, "d")
    with pytest.raises(L.Untranslatable, match="epsilon='1'"):
        L.oue_translate({"d": 3, "epsilon": "1", "constant_time": False}, "d")
    law = L.oue_law(3, 1, Fraction(1, 2), Fraction(1, 4))
    assert sum(law.values()) == 1 and law[(False, True, False)] == Fraction(1, 2) * Fraction(3, 4) ** 2
    with pytest.raises(ValueError, match=r"x=3 must be in \[0, 3\)"):
        L.oue_index(3, 3)
    with pytest.raises(TypeError, match="x=True"):
        L.oue_index(True, 3)


def test_oue_view_refuses_a_project_spec_of_another_shape(pure):
    import dataclasses

    from vetdp.audit.thirdparty import UnknownImplementation

    impostor = dataclasses.replace(find_spec("randomized_response"), name="oue")
    with pytest.raises(UnknownImplementation, match="not an optimized-unary-encoding spec"):
        resolve("pure-ldp", impostor)
    with project_scope(OUE_PROJECT):
        assert resolve("pure-ldp", find_spec("oue")).entry.spec == "oue"


def test_pure_ldp_oue_is_sound_and_tight_at_ln3_and_its_samples_match(pure):
    f = oue_findings("pure-ldp", OUE_LN3)
    assert all(f[c].ok for c in ("privacy.sound", "privacy.tight", "audit.distribution", "domain.rejects_outside",
                                 "errors.data_independent")), {c: x.message for c, x in f.items() if not x.ok}
    assert f["privacy.sound"].true == pytest.approx(math.log(3), rel=1e-15)


def test_pure_ldp_oue_items_are_numbered_from_one(pure):
    m = pure.make_oue(3, 700.0)  # q ~ 1e-304: only the true value's bit can be set
    assert m.library.p == 0.5 and m.library.q < 1e-300
    assert all(m(2)[:2] == (False, False) and m(0)[1:] == (False, False) for _ in range(50))
    assert any(m(2)[2] for _ in range(60))


def test_pure_ldp_oue_claiming_half_or_swapping_p_and_q_fails(pure):
    half = oue_findings("pure-ldp", OUE_LN3, halved(pure.make_oue))
    assert not half["privacy.sound"].ok and half["privacy.sound"].slack == pytest.approx(-math.log(3) / 2, rel=1e-9)
    swap = oue_findings("pure-ldp", {"d": 2, "epsilon": 4.0, "constant_time": False}, swapped(pure.make_oue))
    assert swap["privacy.sound"].ok and not swap["audit.distribution"].ok  # the floats are right, the sampler not


def test_finding_oue_floats_exceed_the_claimed_epsilon(pure, mfl):
    """proofs/findings/ldp.md §10: q = 1/(e^ε + 1) rounded to nearest; at ε = 1 both exceed ε by 8.54e-17."""
    for lib in ("pure-ldp", "multi-freq-ldpy"):
        f = oue_findings(lib, OUE_ONE)
        assert not f["privacy.sound"].ok and f["audit.distribution"].ok, lib
        assert f["privacy.sound"].slack == pytest.approx(-8.543364443636173e-17, rel=1e-6), lib
    # where pure-ldp's math.pow(math.e, ε) falls below e^ε it is sound, multi-freq-ldpy's exp is not
    assert oue_findings("pure-ldp", {"d": 2, "epsilon": 2.0, "constant_time": False})["privacy.sound"].ok
    m = oue_findings("multi-freq-ldpy", {"d": 2, "epsilon": 2.0, "constant_time": False})["privacy.sound"]
    assert m.slack == pytest.approx(-8.772410561225435e-17, rel=1e-6)


def test_oue_reproductions_use_the_library_alone_and_show_the_excess(pure, mfl, capsys):
    for module, oue in ((pure, "use_oue=True"), (mfl, "1 / (np.exp(e) + 1)")):
        snippet = module.reproduction("oue", "privacy.sound", OUE_ONE)
        assert "vetdp" not in snippet and oue in snippet
        exec(compile(snippet, "<repro>", "exec"), {})
        assert "loss - epsilon = 8.543364443636" in capsys.readouterr().out
    assert pure.reproduction("estimate_oue_counts", "estimator.unbiased", {**OUE_ONE, "dataset": [0]}) == ""


def test_finding_pure_ldp_oue_accepts_every_bad_epsilon_and_d_one(pure):
    """§11: UEClient(use_oue=True) accepts ε = 0, < 0, nan, inf and d = 1; at ε < 0 its claim is below the loss."""
    with project_scope(OUE_PROJECT):
        r = resolve("pure-ldp", find_spec("oue"))
        rows = {b.id for b in r.spec.bad}
    assert rows == set(L.OUE_BAD)
    f = oue_findings("pure-ldp", {"d": 3, "epsilon": -1.0, "constant_time": False})
    assert not f["privacy.sound"].ok and f["privacy.sound"].claimed == -1.0
    # no accountant exists at ε < 0: the example's spec says so, and the curve clause is skipped, not an engine error
    assert "engine" not in f and f["privacy.dominated"].skipped, f.get("engine")


def test_mfl_oue_is_sound_at_ln3_rejects_bad_epsilon_and_catches_a_swap(mfl, tmp_path):
    f = oue_findings("multi-freq-ldpy", OUE_LN3)
    assert f["privacy.sound"].ok and f["privacy.tight"].ok and f["audit.distribution"].ok
    assert f["domain.rejects_outside"].ok  # None (the library's "no item") is outside the spec's domain

    def wrong(d, epsilon, constant_time=False):  # every bit complemented: the other bits 1 with probability 1 − q
        m = mfl.make_oue(d, epsilon, constant_time)
        return L.LibraryMeasurement(lambda x: tuple(not b for b in m(x)), m.epsilon, "complemented")

    bad = oue_findings("multi-freq-ldpy", {"d": 2, "epsilon": 4.0, "constant_time": False}, wrong)
    assert not bad["audit.distribution"].ok
    code, data, _ = run_project_cli(["verify", "oue", "--impl", "multi-freq-ldpy", "--samples", "200", "--params",
                                     json.dumps(OUE_LN3)], tmp_path)
    by = {r["check"]: r["status"] for r in data["results"]}
    assert by["precondition[epsilon_zero]"] == by["precondition[epsilon_nan]"] == "pass"
    assert by["precondition[epsilon_inf]"] == "fail" and code == 1  # §12: ε = inf accepted (q = 0, claim inf)
    assert by["privacy.sound"] == by["audit.distribution"] == "pass"


def test_mfl_oue_law_uses_numba_exp(mfl):
    """UE_Client is compiled by numba, whose exp may differ from NumPy's in the last bit (for about 2 % of ε with
    the numba of an earlier install; for none of these ε with numba 0.68): q must be numba's, whichever it is."""
    import numba
    import numpy as np

    compiled = numba.njit(lambda e: 1 / (np.exp(e) + 1))  # UE_Client's expression, compiled here on its own
    eps = [0.5 + i / 997 for i in range(400)]
    assert all(mfl.oue_probabilities(e) == (0.5, float(compiled(e))) for e in eps)
    by_numpy = [mfl.oue_probabilities(e)[1] == float(1 / (np.exp(e) + 1)) for e in eps]
    assert sum(by_numpy) >= 0.9 * len(eps)  # the two exps agree but in the last bit, and not often


def test_pure_ldp_oue_server_is_unbiased_with_the_exact_variance(pure):
    r = oue_estimator_results("pure-ldp")
    assert all(r[c].status.value == "pass" for c in ("estimator.unbiased_float", "estimator.variance",
                                                     "estimator.mse")), {c: x.message for c, x in r.items()}
    # §11: nan and an ε too small for e^ε > 1 give nan/inf estimates instead of a refusal
    assert r["precondition[epsilon_nan]"].status.value == r["precondition[epsilon_no_signal]"].status.value == "fail"
    assert "NonFiniteEstimate" in r["precondition[epsilon_no_signal]"].message


def test_finding_mfl_oue_count_estimate_is_biased(mfl):
    """§12: n × UE_Aggregator_MI clips and renormalises: one user with value 0 at ε = 1 is not counted unbiasedly."""
    r = oue_estimator_results("multi-freq-ldpy", {**OUE_ONE, "dataset": [0]})
    assert r["estimator.unbiased_float"].status.value == "fail"
    bias = [float(Fraction(b)) for b in r["estimator.unbiased_float"].witness["bias"]]
    assert bias[0] < -0.1 and bias[1] > 0.1
    assert r["precondition[epsilon_no_signal]"].status.value == "fail"  # ε = 5e-324: q = 1/2, returns zeros
    assert r["precondition[no_reports]"].status.value == r["precondition[epsilon_nan]"].status.value == "pass"


def test_cli_pure_ldp_oue_at_ln3_passes_every_postcondition(pure, tmp_path):
    code, data, _ = run_project_cli(["verify", "oue", "--impl", "pure-ldp", "--samples", "2000", "--params",
                                     json.dumps(OUE_LN3)], tmp_path)
    by = {r["check"]: r["status"] for r in data["results"]}
    post = {k: v for k, v in by.items() if not k.startswith(("precondition", "privacy.sound["))}
    assert post["privacy.sound"] == post["audit.distribution"] == "pass"
    assert all(s in ("pass", "skipped") for s in post.values()), post
    assert by["precondition[epsilon_negative]"] == "fail" and code == 1  # §11 fails the run
    code, _, out = run_project_cli(["verify", "oue", "--impl", "pure-ldp", "--params",
                                    '{"d": 2, "epsilon": 1.0, "constant_time": true}'], tmp_path)
    assert code == 2 and "constant_time=True" in out


def test_oue_finding_commands_do_not_flag_the_examples_own_make_oue():
    """The registry's OUE commands (§10–§12) run on examples/oue's own (sound) code: no detector may match.

    Each runs in a fresh interpreter (``vetdp findings``' own runner), the project given by its absolute path.
    """
    from vetdp import findings as F
    from vetdp.cli.findings import run_command

    registry = F.load_registry(Path(__file__).resolve().parents[1] / "proofs" / "findings" / "findings.toml")
    own = {"oue": "oue_example.oue:make_oue", "estimate_oue_counts": "oue_example.oue:estimate_oue_counts"}
    commands = {c.argv: list(c.detectors) for f in registry for c in f.commands if "--project" in c.argv}
    assert len(commands) >= 5 and all(a[:2] == ("--project", "examples/oue") for a in commands)
    for argv, detectors in commands.items():
        i = argv.index("--impl")
        mine = ("--project", str(OUE_PROJECT), *argv[2:i + 1], own[argv[argv.index("verify") + 1]], *argv[i + 2:])
        outcome = run_command(mine)  # the default safety limit (1800 s): a loaded runner needs no other
        failing = [(r["check"], r["message"]) for r in (outcome.doc or {}).get("results", [])
                   if r["status"] not in ("pass", "skipped")]
        assert outcome.ok and outcome.exit_code == 0, (mine, outcome.error, failing)
        assert [d.describe() for d in detectors if d(outcome.doc)] == []
