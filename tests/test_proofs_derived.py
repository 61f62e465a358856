"""A proof's z3 obligations are derived from its constants: (never hand-listed), the constants its code uses must
all be listed, a proof that relies on nothing is a warning, and an edited constant names its new obligations."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from vetdp.cli import main
from vetdp.engine.registry import CheckOptions
from vetdp.engine.results import Status
from vetdp.impl.k_rappor import K_RAPPOR_FLIP_PROBABILITY
from vetdp.impl.randomized_response import RANDOMIZED_RESPONSE_EPSILON
from vetdp.impl.rappor import (
    RAPPOR_EPSILON_ONE,
    RAPPOR_EPSILON_ONE_SUM,
    RAPPOR_LOG_RATIO,
    RAPPOR_REPORT_GAP,
    _substitute,
)
from vetdp.obligations import constants as C
from vetdp.obligations.check import constant_obligations
from vetdp.obligations.derive import cover
from vetdp.obligations.pinning import Pinning, ProofError
from vetdp.obligations.provider import check_proofs


def _cid_of(expr) -> str:
    """The id of the bundled constant whose expression *is* ``expr`` (looked up, not typed)."""
    [cid] = [s.id for s in C.CONSTANTS.values() if s.expr is expr]
    return cid


def _set_front(doc: Path, key: str, value: str) -> None:
    lines = doc.read_text().splitlines(keepends=True)
    [i] = [n for n, line in enumerate(lines) if line.startswith(f"{key}:")]
    lines[i] = f"{key}: {value}\n"
    doc.write_text("".join(lines))


# ------------------------------------------------------------------ derivation


def test_derived_obligations_are_constant_obligations_of_the_named_constant():
    pin = Pinning()
    der = pin.derivation(pin.doc("randomized_response"))
    cid = _cid_of(RANDOMIZED_RESPONSE_EPSILON)
    assert der.obligations == tuple(constant_obligations(cid))
    assert der.constants["vetdp.impl.randomized_response.MAX_CATEGORIES"] == ()  # an int bound: digest only
    assert pin.status("randomized_response").obligations == der.obligations


def test_every_bundled_proof_derives_the_union_of_its_constants_obligations():
    pin = Pinning()
    for stem in pin.stems():
        der = pin.derivation(pin.doc(stem))
        cids = {c for ids in der.constants.values() for c in ids}
        assert set(der.obligations) == {o for c in cids for o in constant_obligations(c)}, stem
        assert der.missing == (), stem
    k = pin.derivation(pin.doc("k_rappor"))
    assert _cid_of(K_RAPPOR_FLIP_PROBABILITY) in k.constants["vetdp.impl.k_rappor.K_RAPPOR_FLIP_PROBABILITY"]


def test_a_composition_of_registered_constants_brings_every_piece():
    assert cover(RAPPOR_EPSILON_ONE) == ("rappor.epsilon_one_sum", "rappor.log_ratio", "rappor.report_gap",
                                         "rappor.p_star", "rappor.one_minus_q_star")


def test_a_composition_whose_piece_leaves_the_variables_range_is_not_covered():
    # ε-sum's result [0, 2^43] does not fit the log-ratio's numerator g in [0, 1]
    assert cover(_substitute(RAPPOR_LOG_RATIO, {"g": RAPPOR_EPSILON_ONE_SUM})) is None
    # a float piece in place of the int count a
    assert cover(_substitute(RAPPOR_EPSILON_ONE_SUM, {"a": RAPPOR_REPORT_GAP})) is None
    # the same pieces where they fit are covered
    assert cover(_substitute(RAPPOR_LOG_RATIO, {"g": RAPPOR_REPORT_GAP})) == ("rappor.log_ratio", "rappor.report_gap")


# ------------------------------------------------------------------ no vacuous proof


def test_empty_constants_while_the_code_uses_one_is_incomplete_not_up_to_date(tree):
    proofs, impl = tree
    _set_front(proofs / "randomized_response_bool.md", "constants", "[]")
    pin = Pinning(proofs, {"vetdp.impl": impl})
    st = pin.status("randomized_response_bool")
    assert st.state == "incomplete" and st.obligations == ()
    assert "vetdp.impl.randomized_response.RANDOMIZED_RESPONSE_EPSILON" in st.message
    assert _cid_of(RANDOMIZED_RESPONSE_EPSILON) in st.message
    res = CliRunner().invoke(main, ["proofs", "--proofs-dir", str(proofs), "--impl-dir", str(impl), "status",
                                    "randomized_response_bool"])
    assert res.exit_code == 1 and "incomplete" in res.output
    [cov] = check_proofs(CheckOptions(pattern="randomized_response_bool::proof.coverage"), pin)
    assert cov.status is Status.FAIL and "RANDOMIZED_RESPONSE_EPSILON" in cov.message
    with pytest.raises(ProofError, match="refusing to bless"):
        pin.bless("randomized_response_bool")


def test_a_constant_reached_through_a_called_function_must_be_listed(tree):
    # make_k_rappor builds on make_randomized_response_bitvec, whose flip probability and ε are its constants too
    proofs, impl = tree
    _set_front(proofs / "k_rappor.md", "constants", "[vetdp.impl.k_rappor.K_RAPPOR_FLIP_PROBABILITY]")
    st = Pinning(proofs, {"vetdp.impl": impl}).status("k_rappor")
    assert st.state == "incomplete"
    assert "randomized_response_bitvec.FLIP_PROBABILITY" in st.message and "BITVEC_EPSILON" in st.message


def test_the_hand_listed_obligations_field_is_refused_saying_it_is_derived(tree):
    proofs, impl = tree
    doc = proofs / "randomized_response.md"
    doc.write_text(doc.read_text().replace("lemmas:", "obligations: []\nlemmas:", 1))
    st = Pinning(proofs, {"vetdp.impl": impl}).status("randomized_response")
    assert st.state == "invalid" and "'obligations' is no longer read" in st.message and "constants:" in st.message
    res = CliRunner().invoke(main, ["proofs", "--proofs-dir", str(proofs), "status", "randomized_response"])
    assert res.exit_code == 2


@pytest.mark.slow  # over ~14 s: run by .ci/run (-m slow --deep)
def test_a_proof_relying_on_nothing_is_a_warning_never_a_silent_pass():
    pin = Pinning()
    st = pin.status("rappor_decoding")  # post-processing: no constant, no lemma
    assert st.state == "up to date" and st.obligations == () and st.warnings
    [cov] = check_proofs(CheckOptions(pattern="rappor_decoding::proof.coverage"), pin)
    assert cov.status is Status.WARNING and "no z3 obligation and no lemma" in cov.message
    [cov] = check_proofs(CheckOptions(pattern="randomized_response::proof.coverage"), pin)
    assert cov.status is Status.PASS


# ------------------------------------------------------------------ a changed derivation


def test_recorded_obligations_that_differ_from_the_derivation_outdate_the_proof(tree):
    proofs, impl = tree
    snap = proofs / "pinned" / "randomized_response.py.txt"
    cid = _cid_of(RANDOMIZED_RESPONSE_EPSILON)
    text = snap.read_text()
    assert f"# {cid}.sound\n" in text
    snap.write_text(text.replace(f"# {cid}.sound\n", "# randomized_response.epsilon.step9.inf_exp.defined\n"))
    pin = Pinning(proofs, {"vetdp.impl": impl})
    st = pin.status("randomized_response")
    assert st.state == "outdated" and f"new obligations: {cid}.sound" in st.message
    assert "gone: randomized_response.epsilon.step9.inf_exp.defined" in st.message
    pin.bless("randomized_response")
    assert pin.status("randomized_response").state == "up to date"


def _user_project(root: Path, pkg: str, registered: bool, listed: bool) -> Pinning:
    (root / pkg).mkdir(parents=True)
    (root / pkg / "__init__.py").write_text("")
    expr = f"ONE.inf_div(x).inf_add({ord(pkg[-1])}.5)"  # no other test registers this expression
    eps = f'register_constant("{pkg}.eps", {expr}, ranges={{"x": (1, 2)}})' if registered else expr
    (root / pkg / "mech.py").write_text(textwrap.dedent(f"""\
        from vetdp.api import ONE, register_constant, var

        x = var("x")
        EPS = {eps}


        def make(value):
            return EPS.to_float({{"x": value}})
        """))
    (root / "proofs").mkdir()
    constants = f"[{pkg}.mech.EPS]" if listed else "[]"
    (root / "proofs" / "mech.md").write_text(f"---\nproves: [{pkg}.mech.make]\nconstants: {constants}\n"
                                             "source_digest: sha256:unset\nlemmas: []\n---\n# mech\n")
    return Pinning(root / "proofs")


def test_a_user_project_gets_its_obligations_derived(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    pin = _user_project(tmp_path, "derived_user_a", registered=True, listed=True)
    pin.bless("mech")
    st = pin.status("mech")
    assert st.state == "up to date" and st.obligations == tuple(constant_obligations("derived_user_a.eps"))
    assert "# derived_user_a.eps.sound\n" in pin.snapshot_path("mech").read_text()


def test_a_user_constant_registered_but_not_listed_is_incomplete(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    pin = _user_project(tmp_path, "derived_user_b", registered=True, listed=False)
    st = pin.status("mech")
    assert st.state == "incomplete" and "derived_user_b.mech.EPS" in st.message and "derived_user_b.eps" in st.message


def test_an_unregistered_expr_is_an_error_saying_how_to_register_it(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    pin = _user_project(tmp_path, "derived_user_c", registered=False, listed=True)
    st = pin.status("mech")
    assert st.state == "invalid" and "derived_user_c.mech.EPS" in st.message and "register_constant" in st.message
    (tmp_path / "proofs" / "mech.md").write_text((tmp_path / "proofs" / "mech.md").read_text().replace(
        "constants: [derived_user_c.mech.EPS]", "constants: []"))
    st = pin.status("mech")  # not listed: the code still uses it
    assert st.state == "incomplete" and "derived_user_c.mech.EPS" in st.message and "register_constant" in st.message
