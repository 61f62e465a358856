"""The downstream example (examples/oue: Optimized Unary Encoding, a mechanism vetdp does not bundle) vetted by a
vetdp installed like a tool: a fresh venv, vetdp installed NON-editable from this repository.

Inside a copy of the example: ``vetdp check`` passes; ``pytest`` passes through the plugin (entry point pytest11);
a copy with one injected bug (the paper's variance formula, which ignores the item's own count) fails on exactly
the clauses it breaks; editing a proved function makes ``vetdp proofs status`` fail until ``vetdp proofs bless``.

The venv is built as in tests/test_install_noneditable.py (no network, no dependencies installed: they are reached
through a path entry to this venv's site-packages, which holds no vetdp module).
"""

import json
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from _install_helpers import REPO, noneditable_install

EXAMPLE = REPO / "examples" / "oue"
TIMES: dict[str, float] = {}


@pytest.fixture(scope="module")
def tool(tmp_path_factory) -> Path:
    """bin/ of a fresh venv holding a non-editable install of vetdp built from a copy of this tree."""
    t0 = time.perf_counter()
    bin_dir = noneditable_install(tmp_path_factory.mktemp("downstream"), "vetdp.pytest_plugin, vetdp.api")
    print(f"install (fresh venv, non-editable): {time.perf_counter() - t0:.1f} s")
    return bin_dir


def _copy(tmp_path: Path, name: str) -> Path:
    dest = tmp_path / name
    shutil.copytree(EXAMPLE, dest, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache"))
    return dest


def _run(label: str, cmd: list[str], cwd: Path) -> subprocess.CompletedProcess:
    t0 = time.perf_counter()
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=3600)
    TIMES[label] = time.perf_counter() - t0
    print(f"{label}: {TIMES[label]:.1f} s")  # the time of each step (shown with pytest -s)
    return r


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new), encoding="utf-8")


def _failing(report: Path) -> set[str]:
    return {f"{r['spec']}::{r['check']}" for r in json.loads(report.read_text())["results"]
            if r["status"] in ("fail", "error", "undecided")}


def test_example_check_passes_with_the_installed_tool(tool, tmp_path):
    project = _copy(tmp_path, "oue")
    r = _run("vetdp check (example)", [str(tool / "vetdp"), "check", "--json", str(tmp_path / "r.json")], project)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    results = json.loads((tmp_path / "r.json").read_text())["results"]
    names = {f"{x['spec']}::{x['check']}" for x in results}
    # the example's own spec, estimator, proof, z3 obligations of its own constants and its own lemmas all ran
    for name in ("oue::privacy.sound", "oue::function.law", "oue::privacy.dominated",
                 "estimate_oue_counts::estimator.variance", "oue::proof.up_to_date",
                 "oue::obligation.oue.epsilon.sound", "oue::obligation.oue.flip_probability.sound",
                 "oue::lemma.oue.likelihood_ratio"):
        assert name in names, name
    assert not any(x["spec"].startswith("randomized_response") for x in results)  # not vetdp's bundled specs


def test_example_pytest_runs_the_checks_through_the_plugin(tool, tmp_path):
    project = _copy(tmp_path, "oue")
    r = _run("pytest (example, plugin)", [str(tool / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider",
                                          "--junitxml", str(tmp_path / "j.xml")], project)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    junit = (tmp_path / "j.xml").read_text()
    assert 'name="privacy.sound"' in junit and 'name="obligation.oue.epsilon.sound"' in junit
    assert 'name="test_report_has_one_bit_per_value"' in junit  # the project's own tests ran too


@pytest.mark.slow  # 9 to 15 s: run by .ci/run (-m slow --deep)
def test_example_with_an_injected_bug_fails_on_the_right_clause(tool, tmp_path):
    project = _copy(tmp_path, "oue_bug")
    _edit(project / "src" / "oue_example" / "oue.py",
          "    v = (count * p * (1 - p) + (n - count) * flip * (1 - flip)) / (p - flip) ** 2",
          "    v = n * flip * (1 - flip) / (p - flip) ** 2  # the paper's formula, for every item")
    r = _run("vetdp check (injected bug)", [str(tool / "vetdp"), "check", "--json", str(tmp_path / "r.json")],
             project)
    assert r.returncode == 1, r.stdout[-4000:] + r.stderr[-4000:]
    # the variance claim (and the MSE, its sum) is wrong; the proof pinned the old function; nothing else broke
    assert _failing(tmp_path / "r.json") == {"estimate_oue_counts::estimator.variance",
                                             "estimate_oue_counts::estimator.mse", "oue::proof.up_to_date"}
    assert "reproduce" in r.stdout and "vetdp verify estimate_oue_counts" in r.stdout
    p = _run("pytest (injected bug)", [str(tool / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider",
                                       "-k", "estimator"], project)
    assert p.returncode == 1, p.stdout[-4000:]
    assert "FAILED pyproject.toml::estimate_oue_counts::estimator.variance" in p.stdout
    assert "variance claim wrong" in p.stdout and "reproduce" in p.stdout


def test_example_whose_accountant_counts_one_differing_bit_fails_privacy_dominated_only(tool, tmp_path):
    # the spec's accountant pair forgets that two values differ in two bits: its curves and compositions would
    # under-report OUE's loss; the mechanism, its map and its proof are untouched
    project = _copy(tmp_path, "oue_pair")
    _edit(project / "src" / "oue_example" / "specs" / "oue.py",
          "    return pld_of_laws({y: bit(half, y[0]) * bit(q, y[1]) for y in pairs},",
          "    return pld_of_laws({y: bit(q, y[0]) * bit(q, y[1]) for y in pairs},")
    r = _run("vetdp check (one-bit accountant)", [str(tool / "vetdp"), "check", "-k", "oue", "--json",
                                                  str(tmp_path / "r.json")], project)
    assert r.returncode == 1, r.stdout[-4000:] + r.stderr[-4000:]
    assert _failing(tmp_path / "r.json") == {"oue::privacy.dominated"}
    assert "does not dominate" in r.stdout


def test_editing_a_proved_function_fails_proofs_status_until_blessed(tool, tmp_path):
    project = _copy(tmp_path, "oue_edit")
    status = [str(tool / "vetdp"), "proofs", "status"]
    assert _run("vetdp proofs status (clean)", status, project).returncode == 0
    _edit(project / "src" / "oue_example" / "oue.py", "    size = check_int(\"d\", d, lo=2, hi=MAX_D)\n",
          "    size = check_int(\"d\", d, lo=2, hi=MAX_D)  # reviewed\n    assert size >= 2\n")
    r = _run("vetdp proofs status (edited)", status, project)
    assert r.returncode == 1 and "outdated" in r.stdout, r.stdout + r.stderr
    diff = subprocess.run([str(tool / "vetdp"), "proofs", "diff", "oue"], cwd=project, capture_output=True,
                          text=True, timeout=3600)
    assert diff.returncode == 1 and "+    assert size >= 2" in diff.stdout
    bless = _run("vetdp proofs bless", [str(tool / "vetdp"), "proofs", "bless", "oue"], project)
    assert bless.returncode == 0, bless.stdout + bless.stderr
    assert _run("vetdp proofs status (blessed)", status, project).returncode == 0


def test_editing_an_expr_constant_names_its_new_and_gone_obligations(tool, tmp_path):
    """q = 1/(e^ε + 1) recomputed as 1/((e^ε − 1) + 2): the obligations are derived again from the new expression;
    status says the expression changed and which ids are new and gone (not "not a known obligation id")."""
    project = _copy(tmp_path, "oue_constant")
    _edit(project / "src" / "oue_example" / "oue.py", "ONE.inf_div(epsilon.neg_inf_exp().neg_inf_add(ONE))",
          "ONE.inf_div(epsilon.neg_inf_expm1().neg_inf_add(2))")
    r = _run("vetdp proofs status (constant edited)", [str(tool / "vetdp"), "proofs", "status"], project)
    assert r.returncode == 1 and "outdated" in r.stdout, r.stdout + r.stderr
    report = tmp_path / "fresh.json"
    r = _run("vetdp check -k proof.up_to_date (constant edited)",
             [str(tool / "vetdp"), "check", "-k", "oue::proof.up_to_date", "--json", str(report)], project)
    [fresh] = json.loads(report.read_text())["results"]
    out = fresh["message"]
    assert r.returncode == 1 and fresh["status"] == "fail", out
    assert "the expression of Expr constant oue_example.oue.OUE_FLIP_PROBABILITY changed" in out
    assert "new obligations: oue.flip_probability.step0.neg_inf_expm1.defined, contract.neg_inf_expm1;" in out
    assert "gone: oue.flip_probability.step0.neg_inf_exp.defined, contract.neg_inf_exp;" in out
    assert "not a known obligation id" not in out
    bless = _run("vetdp proofs bless (constant)", [str(tool / "vetdp"), "proofs", "bless", "oue"], project)
    assert bless.returncode == 0 and "+ oue.flip_probability.step0.neg_inf_expm1.defined" in bless.stdout
    check = _run("vetdp check -k obligation (constant)", [str(tool / "vetdp"), "check", "-k", "oue::obligation.*"],
                 project)
    assert check.returncode == 0 and "neg_inf_expm1" in check.stdout, check.stdout[-3000:]
