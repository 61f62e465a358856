"""vetdp installed as a user installs a tool (``pip install .``, not editable) checks what the editable install checks.

The installed copy has no source tree next to it: the proofs, and with them the z3 obligations and lemmas, must be
found from the working directory's ``pyproject.toml`` (``[tool.vetdp] proofs``). Quick (about 10 s to install): a
fresh venv without pip, driven by this venv's pip; the wheel is built from a copy of the sources by pip's ordinary
isolated build (setuptools from pip's cache or index); no dependencies installed: they are reached through a path
entry to this venv's site-packages, which holds no vetdp module (the editable install is a finder hook that a plain
path entry does not run).
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from _install_helpers import REPO, noneditable_install

pytestmark = pytest.mark.slow  # a wheel built and installed into a fresh venv (~50 s): .ci/run runs it (-m slow)


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """bin/ of a fresh venv holding a non-editable install of vetdp built from a copy of this tree."""
    return noneditable_install(tmp_path_factory.mktemp("noneditable"), "vetdp, vetdp.impl")


def _check_names(vetdp_exe: Path, pattern: str, out: Path) -> list[tuple[str, str, str]]:
    r = subprocess.run([str(vetdp_exe), "check", "-k", pattern, "--json", str(out)], cwd=REPO, capture_output=True,
                       text=True, timeout=3600)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    return sorted((x["spec"], x["check"], x["status"]) for x in json.loads(out.read_text())["results"])


def test_installed_proofs_status_matches_editable(installed):
    ours = subprocess.run([str(Path(sys.executable).parent / "vetdp"), "proofs", "status"], cwd=REPO,
                          capture_output=True, text=True, timeout=3600)
    theirs = subprocess.run([str(installed / "vetdp"), "proofs", "status"], cwd=REPO, capture_output=True, text=True,
                            timeout=3600)
    assert theirs.returncode == ours.returncode == 0, theirs.stdout + theirs.stderr
    assert theirs.stdout == ours.stdout and "up to date" in theirs.stdout


def test_installed_check_runs_the_same_proof_checks_as_editable(installed, tmp_path):
    editable = _check_names(Path(sys.executable).parent / "vetdp", "proof.up_to_date", tmp_path / "e.json")
    installed_run = _check_names(installed / "vetdp", "proof.up_to_date", tmp_path / "i.json")
    assert installed_run == editable and len(editable) >= 5


def test_installed_outside_any_project_fails_instead_of_passing(installed, tmp_path):
    r = subprocess.run([str(installed / "vetdp"), "proofs", "status"], cwd=tmp_path, capture_output=True, text=True,
                       timeout=3600)
    assert r.returncode == 2 and "proofs directory" in r.stderr and "Traceback" not in r.stderr


def test_installed_check_of_a_whole_spec_matches_editable(installed, tmp_path):
    """Spec clauses, precondition rows, the proof, its z3 obligations and lemmas: the same names and verdicts."""
    editable = _check_names(Path(sys.executable).parent / "vetdp", "randomized_response_bool", tmp_path / "e.json")
    installed_run = _check_names(installed / "vetdp", "randomized_response_bool", tmp_path / "i.json")
    assert installed_run == editable
    kinds = {check.split("[")[0].split(".")[0] for _, check, _ in editable}
    assert {"precondition", "privacy", "function", "proof", "obligation", "lemma"} <= kinds


def test_installed_check_outside_any_project_refuses_before_any_check(installed, tmp_path):
    """Issue 24: outside the repository the installed vetdp ran 278 checks for two minutes, then refused with "vetdp
    is installed without its source tree declares none"; it now refuses first, in one readable sentence."""
    r = subprocess.run([str(installed / "vetdp"), "check"], cwd=tmp_path, capture_output=True, text=True,
                       timeout=3600)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stdout[-2000:] + r.stderr[-2000:]
    assert "no proofs directory: no pyproject.toml with a [tool.vetdp] table was found" in r.stderr
    assert "installed without its source tree, whose proofs/" in r.stderr
    assert " checks: " not in r.stdout and "stage 1/" not in r.stderr  # refused before any work


def test_installed_findings_work_from_any_folder(installed, tmp_path):
    """The registry of vetdp's own findings ships with the package: listed outside any project, and a finding that
    needs the example project (shipped beside it) is still reported when run from there."""
    listed = subprocess.run([str(installed / "vetdp"), "findings", "--json", str(tmp_path / "l.json")], cwd=tmp_path,
                            capture_output=True, text=True, timeout=3600)
    assert listed.returncode == 0, listed.stdout[-2000:] + listed.stderr[-2000:]
    doc = json.loads((tmp_path / "l.json").read_text())
    assert {"opendp-1", "dp_accounting-1", "ldp-10"} <= {f["id"] for f in doc["findings"]}
    assert all("site-packages" in f["document"] for f in doc["findings"])  # the installed copy, not this checkout
    pytest.importorskip("pure_ldp")
    ran = subprocess.run([str(installed / "vetdp"), "findings", "-k", "ldp-10", "--check", "--json",
                          str(tmp_path / "r.json")], cwd=tmp_path, capture_output=True, text=True, timeout=3600)
    assert ran.returncode == 0, ran.stdout[-2000:] + ran.stderr[-2000:]
    assert [f["status"] for f in json.loads((tmp_path / "r.json").read_text())["findings"]] == ["present"]
