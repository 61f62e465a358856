"""The pytest plugin: opt-in collection of every spec x clause and proof check, -k, -x, --junitxml, failure reports.

Each run is a separate pytest process on a copy of examples/oue (the plugin is loaded with -p unless the installed
distribution already registers its pytest11 entry point).
"""

import json
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from importlib.metadata import entry_points
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "oue"
PLUGIN = [] if any(ep.value == "vetdp.pytest_plugin" for ep in entry_points(group="pytest11")) else \
    ["-p", "vetdp.pytest_plugin"]


def pytest_in(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *PLUGIN, *args], cwd=cwd,
                          capture_output=True, text=True, timeout=3600)


def collected(r: subprocess.CompletedProcess) -> list[str]:
    return [line for line in r.stdout.splitlines() if line.startswith("pyproject.toml::")]


@pytest.fixture
def project(tmp_path) -> Path:
    dest = tmp_path / "oue"
    shutil.copytree(EXAMPLE, dest, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
    return dest


@pytest.fixture
def buggy(project) -> Path:
    """The example with the paper's variance formula (wrong for an item someone holds)."""
    impl = project / "src" / "oue_example" / "oue.py"
    text = impl.read_text()
    old = "    v = (count * p * (1 - p) + (n - count) * flip * (1 - flip)) / (p - flip) ** 2"
    assert old in text
    impl.write_text(text.replace(old, "    v = n * flip * (1 - flip) / (p - flip) ** 2"))
    return project


def test_collection_is_opt_in(project):
    off = pytest_in(project, "--collect-only", "-q", "-o", "vetdp=false")
    assert off.returncode == 0 and collected(off) == [] and "test_oue_unit.py::" in off.stdout
    flag = pytest_in(project, "--collect-only", "-q", "-o", "vetdp=false", "--vetdp")
    assert "pyproject.toml::oue::privacy.sound" in collected(flag)


def test_enabled_without_the_harness_is_a_usage_error_naming_the_install(project):
    """With only the runtime installed (z3 hidden here), collecting vetdp's items stops with the one-line hint; the
    project's own tests still collect when vetdp is not enabled."""
    hide = "import sys; sys.modules['z3'] = None; import pytest; sys.exit(pytest.main(sys.argv[1:]))"
    run = [sys.executable, "-c", hide, "-p", "no:cacheprovider", *PLUGIN, "--collect-only", "-q"]
    on = subprocess.run(run, cwd=project, capture_output=True, text=True, timeout=600)
    assert on.returncode == 4, on.stdout[-2000:] + on.stderr[-2000:]
    assert "no module named 'z3'" in on.stderr and "pip install 'vetdp[harness]'" in on.stderr
    assert "Traceback" not in on.stderr + on.stdout
    off = subprocess.run([*run, "-o", "vetdp=false"], cwd=project, capture_output=True, text=True, timeout=600)
    assert off.returncode == 0 and "test_oue_unit.py::" in off.stdout


def test_items_are_exactly_the_checks_vetdp_check_reports(project, tmp_path):
    items = pytest_in(project, "--collect-only", "-q")  # the example's ini: vetdp = true
    out = tmp_path / "r.json"
    check = subprocess.run([str(Path(sys.executable).parent / "vetdp"), "check", "--json", str(out)], cwd=project,
                           capture_output=True, text=True, timeout=3600)
    assert check.returncode == 0, check.stdout[-2000:]
    reported = {f"pyproject.toml::{r['spec']}::{r['check']}" for r in json.loads(out.read_text())["results"]}
    assert set(collected(items)) == reported and len(reported) >= 40


def test_k_selects_and_a_failure_prints_vetdps_report(buggy, tmp_path):
    junit = tmp_path / "j.xml"
    r = pytest_in(buggy, "-k", "estimate_oue_counts and estimator", "--junitxml", str(junit))
    assert r.returncode == 1
    assert "FAILED pyproject.toml::estimate_oue_counts::estimator.variance" in r.stdout
    assert "variance claim wrong" in r.stdout and "reproduce" in r.stdout and "parameters" in r.stdout
    cases = {c.get("name"): c for c in ET.parse(junit).getroot().iter("testcase")}
    assert {"estimator.variance", "estimator.mse", "estimator.unbiased"} <= set(cases)
    assert cases["estimator.variance"].find("failure") is not None
    assert cases["estimator.unbiased"].find("failure") is None
    assert not any(name.startswith("privacy") for name in cases)  # -k deselected the rest


def test_x_stops_at_the_first_failing_check(buggy):
    r = pytest_in(buggy, "-x", "-k", "estimator")
    assert r.returncode == 1 and "1 failed" in r.stdout and "stopping after 1 failures" in r.stdout


def test_vetdps_own_suite_collects_no_vetdp_items_by_default():
    r = pytest_in(REPO, "--collect-only", "-q", "tests/test_smoke.py", "tests/test_core.py")
    assert r.returncode == 0 and collected(r) == [] and "tests/test_smoke.py::" in r.stdout
    ini = (REPO / "pyproject.toml").read_text().split("[tool.pytest.ini_options]")[1].split("\n[")[0]
    assert "vetdp" not in ini.replace("deep", "")  # no `vetdp = true` opt-in in our own pytest configuration


def test_enabled_outside_any_project_is_a_usage_error(tmp_path):
    (tmp_path / "test_x.py").write_text("def test_x():\n    pass\n")
    (tmp_path / "pyproject.toml").write_text("[tool.pytest.ini_options]\nvetdp = true\n")
    r = pytest_in(tmp_path, "-q")
    assert r.returncode == 4 and "[tool.vetdp]" in r.stderr + r.stdout


@pytest.mark.slow  # over ~14 s: run by .ci/run (-m slow --deep)
def test_xdist_runs_the_items_on_two_workers_with_the_same_verdicts(buggy):
    pytest.importorskip("xdist")  # installed by the test extra
    serial = pytest_in(buggy, "-q", "-k", "estimate_oue_counts")
    parallel = pytest_in(buggy, "-q", "-n", "2", "-k", "estimate_oue_counts")

    def failed(r):
        return sorted(line.split()[1] for line in r.stdout.splitlines() if line.startswith("FAILED "))

    assert serial.returncode == parallel.returncode == 1, parallel.stdout[-2000:]
    # run by xdist workers: each failure's report names its worker ([gw0] or [gw1], whichever ran it)
    assert "2 workers" in parallel.stdout or "[gw" in parallel.stdout
    assert failed(parallel) == failed(serial) and "pyproject.toml::estimate_oue_counts::estimator.variance" in \
        failed(parallel)
