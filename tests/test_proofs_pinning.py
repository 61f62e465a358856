"""Pinned proofs: changing one line of a proved function makes `vetdp proofs status` and the
check provider fail until the proof is re-blessed; bless refuses while an obligation fails."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from vetdp.cli import main
from vetdp.engine.registry import PROVIDERS, CheckOptions
from vetdp.engine.results import Status
from vetdp.obligations.pinning import Pinning, ProofError
from vetdp.obligations.provider import check_proofs
from vetdp.obligations.render import math_to_mathml

STEMS = ["k_rappor", "randomized_response", "randomized_response_bitvec", "randomized_response_bool"]


def _edit_one_line(impl: Path) -> None:
    path = impl / "randomized_response.py"
    src = path.read_text()
    old = "        return 0.0 if d_in == 0 else epsilon\n"
    assert src.count(old) == 1
    path.write_text(src.replace(old, "        return 0.0 if d_in < 1 else epsilon\n"))


def test_every_constructor_has_a_pinned_up_to_date_proof():
    import importlib
    import pkgutil

    import vetdp.impl

    stems = sorted(i.name for i in pkgutil.iter_modules(vetdp.impl.__path__))
    pin = Pinning()
    assert pin.stems() == stems
    for stem in stems:
        assert pin.status(stem).state == "up to date", pin.status(stem)
    makers = {name for stem in stems for name in dir(importlib.import_module(f"vetdp.impl.{stem}"))
              if name.startswith("make_")}
    assert {"make_randomized_response_bool", "make_randomized_response", "make_randomized_response_bitvec",
            "make_rappor", "make_k_rappor", "make_buffling"} <= makers
    proved = {q.rsplit(".", 1)[1] for s in stems for q in pin.doc(s).meta["proves"]}
    assert makers <= proved


@pytest.mark.slow  # ~35 s: two whole checks; .ci/run runs it (-m slow)
def test_one_line_change_makes_status_and_check_fail_until_blessed(tree, monkeypatch):
    proofs, impl = tree
    pin = Pinning(proofs, {"vetdp.impl": impl})
    assert pin.status("randomized_response").state == "up to date"
    runner = CliRunner()
    args = ["proofs", "--proofs-dir", str(proofs), "--impl-dir", str(impl)]
    assert runner.invoke(main, [*args, "status", "randomized_response"]).exit_code == 0

    _edit_one_line(impl)
    assert pin.status("randomized_response").state == "outdated"
    assert pin.status("randomized_response_bool").state == "up to date"  # its functions did not change
    res = runner.invoke(main, [*args, "status"])
    assert res.exit_code == 1 and "outdated" in res.output
    fresh = {r.spec: r for r in check_proofs(CheckOptions(pattern="*proof.up_to_date"), pin)}
    assert fresh["randomized_response"].status is Status.FAIL
    assert fresh["randomized_response_bool"].status is Status.PASS

    # the provider registered for `vetdp check` sees the same copy through the environment
    monkeypatch.setenv("VETDP_PROOFS_DIR", str(proofs))
    monkeypatch.setenv("VETDP_IMPL_DIR", str(impl))
    assert "vetdp.obligations.provider:check_proofs" in PROVIDERS
    env_results = [r for r in check_proofs(CheckOptions(pattern="randomized_response::proof.up_to_date"))]
    assert [r.status for r in env_results] == [Status.FAIL]

    d = runner.invoke(main, [*args, "diff", "randomized_response"])
    assert d.exit_code == 1
    assert "-        return 0.0 if d_in == 0 else epsilon" in d.output
    assert "+        return 0.0 if d_in < 1 else epsilon" in d.output

    b = runner.invoke(main, [*args, "bless", "randomized_response"])
    assert b.exit_code == 0, b.output
    assert pin.status("randomized_response").state == "up to date"
    assert runner.invoke(main, [*args, "status"]).exit_code == 0
    assert runner.invoke(main, [*args, "diff", "randomized_response"]).exit_code == 0
    assert all(r.passed for r in check_proofs(CheckOptions(pattern="*proof.up_to_date"), pin))


def test_whitespace_and_comment_changes_do_not_outdate(tree):
    proofs, impl = tree
    path = impl / "randomized_response.py"
    src = path.read_text().replace("        return 0.0 if d_in == 0 else epsilon\n",
                                   "        # a comment\n        return 0.0 if d_in == 0 else  epsilon\n")
    path.write_text(src)
    assert Pinning(proofs, {"vetdp.impl": impl}).status("randomized_response").state == "up to date"


def test_constant_change_outdates_proof(tree):
    proofs, impl = tree
    path = impl / "k_rappor.py"
    src = path.read_text()
    assert "TWO.inf_mul(k)" in src
    path.write_text(src.replace("TWO.inf_mul(k)", "TWO.neg_inf_mul(k)"))
    assert Pinning(proofs, {"vetdp.impl": impl}).status("k_rappor").state == "outdated"


def test_failing_obligation_blocks_status_and_bless(tmp_path, monkeypatch):
    # a constant whose reciprocal is rounded down although it must err upward: its sound obligation is refuted
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "pinfail").mkdir()
    (tmp_path / "pinfail" / "__init__.py").write_text("")
    (tmp_path / "pinfail" / "mech.py").write_text(
        "from vetdp.api import ONE, register_constant, var\n\n"
        "EPS = register_constant('pinfail.eps', ONE.neg_inf_div(var('x')), ranges={'x': (3, 7)})\n\n\n"
        "def make(x):\n    return EPS.to_float({'x': x})\n")
    proofs = tmp_path / "proofs"
    proofs.mkdir()
    (proofs / "mech.md").write_text("---\nproves: [pinfail.mech.make]\nconstants: [pinfail.mech.EPS]\n"
                                    "source_digest: sha256:unset\nlemmas: []\n---\n# mech\n")
    pin = Pinning(proofs)
    st = pin.status("mech")
    assert st.state == "outdated" and "pinfail.eps.sound" in st.failing
    with pytest.raises(ProofError, match="refusing to bless"):
        pin.bless("mech")
    monkeypatch.setattr("vetdp.obligations.provider.spec_modules", lambda: ["mech"])  # a project whose spec is mech
    res = CliRunner().invoke(main, ["proofs", "--proofs-dir", str(proofs), "bless", "mech"])
    assert res.exit_code == 1 and "pinfail.eps.sound" in res.output
    failing = [r for r in check_proofs(CheckOptions(pattern="mech::obligation.pinfail.eps.sound"), pin)]
    assert [r.status for r in failing] == [Status.FAIL] and failing[0].witness


def test_unknown_proof_name_is_usage_error(tree):
    proofs, impl = tree
    res = CliRunner().invoke(main, ["proofs", "--proofs-dir", str(proofs), "diff", "nope"])
    assert res.exit_code == 2 and "nope" in res.output


@pytest.mark.slow  # 9 to 15 s: run by .ci/run (-m slow --deep)
def test_render_typesets_math_and_banner(tree, tmp_path):
    proofs, impl = tree
    _edit_one_line(impl)
    out = tmp_path / "html"
    res = CliRunner().invoke(main, ["proofs", "--proofs-dir", str(proofs), "--impl-dir", str(impl),
                                    "render", "--out", str(out)])
    assert res.exit_code == 0, res.output
    page = (out / "randomized_response.html").read_text()
    assert "<math" in page and "<mfrac>" in page and "$" not in page.split("<body>")[1].split("<pre>")[0]
    assert ">outdated<" in page
    assert ">up to date<" in (out / "randomized_response_bool.html").read_text()
    assert "obligations (derived from constants)" in page and "randomized_response.epsilon.sound" in page


def test_math_to_mathml_leaves_code_fences_alone():
    text, table = math_to_mathml("a $x^2$ b\n```\ncost = $5\n```\n$$\\frac{1}{2}$$")
    assert len(table) == 2 and "cost = $5" in text
