"""Issue 11, one test per class: no silent pass, no crash, no wrong blame, bounded sizes, readable names."""

import io
import json
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from click.testing import CliRunner
from rich.console import Console

from vetdp.cli import main
from vetdp.engine import report
from vetdp.engine.registry import CheckOptions, pattern_matches
from vetdp.engine.results import CheckResult, Status
from vetdp.engine.spec import discover_specs
from vetdp.engine.specs_provider import spec_check_names
from vetdp.obligations.pinning import Pinning, default_proofs_dir
from vetdp.obligations.provider import check_proofs, spec_modules

RRB = "randomized_response_bool"


def run(*args):
    return CliRunner().invoke(main, list(args))


def one_line_error(result, *needles):
    """Exit 2, no traceback, and the message names every needle."""
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    for n in needles:
        assert n in result.output, (n, result.output)


# ------------------------------------------------------------------ selection never passes on nothing

DOCUMENTED = ["domain.rejects_outside", "errors.data_independent", "timing.constant_bytes",
              "randomness.through_primitives", "estimator.variance", "estimator.mse", "precondition[prob_nan]"]


@pytest.mark.parametrize("clause", DOCUMENTED)
def test_every_documented_clause_preselects_a_spec(clause):
    names = [n for s in discover_specs() for n in spec_check_names(s)]
    assert any(CheckOptions(pattern=clause).selected(n) for n in names), clause


def test_bracketed_names_match_literally_and_as_globs():
    name = f"{RRB}::precondition[prob_nan]"
    assert pattern_matches("precondition[prob_nan]", name)
    assert pattern_matches("*::precondition[prob_nan]", name)
    assert not pattern_matches("*::precondition[prob_inf]", name)


def test_check_selecting_a_bracketed_row_runs_exactly_it(tmp_path):
    out = tmp_path / "r.json"
    r = run("check", "-k", f"{RRB}::precondition[prob_nan]", "--json", str(out))
    assert r.exit_code == 0, r.output
    assert [x["check"] for x in json.loads(out.read_text())["results"]] == ["precondition[prob_nan]"]
    assert "precondition[prob_nan]" in r.output  # rich did not swallow the brackets


def test_check_selecting_a_clause_the_old_prefilter_dropped(tmp_path):
    out = tmp_path / "r.json"
    r = run("check", "-k", f"{RRB}::errors.data_independent", "--json", str(out))
    assert r.exit_code == 0, r.output
    assert {x["check"] for x in json.loads(out.read_text())["results"]} == {"errors.data_independent"}


@pytest.mark.parametrize("pattern", ["no_such_check", f"{RRB}::precondition[nope]"])
def test_check_selecting_nothing_is_exit_2_not_a_pass(pattern, tmp_path):
    out = tmp_path / "r.json"
    r = run("check", "-k", pattern, "--json", str(out))
    one_line_error(r, "-k", pattern, "selects no check")
    assert "0 checks" not in r.output and not out.exists()


def test_check_empty_pattern_is_refused():
    one_line_error(run("check", "-k", "  "), "-k")


# ------------------------------------------------------------------ proofs must be found

def test_proofs_dir_missing_or_empty_or_unrelated_is_exit_2(tmp_path):
    one_line_error(run("proofs", "--proofs-dir", str(tmp_path / "missing"), "status"), "--proofs-dir", "does not exist")
    one_line_error(run("proofs", "--proofs-dir", str(tmp_path), "status"), "holds no proof document")
    (tmp_path / "other.md").write_text("---\nproves: []\nsource_digest: x\nobligations: []\nlemmas: []\n---\n")
    one_line_error(run("proofs", "--proofs-dir", str(tmp_path), "status"), "holds no proof of a spec'd module")


def test_check_proofs_provider_errors_on_a_missing_directory(tmp_path):
    results = list(check_proofs(CheckOptions(), Pinning(tmp_path / "missing")))
    assert [(r.spec, r.check, r.status) for r in results] == [("proofs", "proofs.found", Status.ERROR)]


def test_check_proofs_provider_fails_a_spec_module_without_proof(tmp_path):
    import shutil

    for stem in spec_modules()[1:]:  # drop the first module's proof
        shutil.copy(default_proofs_dir() / f"{stem}.md", tmp_path / f"{stem}.md")
    results = list(check_proofs(CheckOptions(pattern="proof.exists"), Pinning(tmp_path)))
    assert [(r.spec, r.status) for r in results] == [(spec_modules()[0], Status.FAIL)]


def test_proofs_dir_comes_from_pyproject_tool_vetdp(tmp_path, monkeypatch):
    (tmp_path / "docs").mkdir()
    (tmp_path / "pyproject.toml").write_text('[tool.vetdp]\nproofs = "docs"\n')
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")
    assert default_proofs_dir() == (tmp_path / "docs").resolve()
    (tmp_path / "pyproject.toml").write_text('[tool.vetdp]\nproofz = "docs"\n')
    one_line_error(run("proofs", "status"), "'proofz' is unknown")


def test_this_repository_declares_its_proofs():
    from vetdp.project import find_project

    project = find_project(default_proofs_dir().parent)
    assert project is not None and project.proofs_dir == default_proofs_dir().resolve()


# ------------------------------------------------------------------ gate configuration

@pytest.mark.parametrize("text,needle", [
    ("[gaet]\nadvisory = []\n", "'gaet'"),
    ("[gate]\nadvisroy = []\n", "'advisroy'"),
    ("[gate]\nadvisory = 5\n", "advisory=5"),
    ("[gate]\ndeep_only = [1]\n", "deep_only=[1]"),
    ("[gate\n", "not valid TOML"),
])
def test_gate_config_mistakes_are_named_exit_2(tmp_path, text, needle):
    cfg = tmp_path / "gate.toml"
    cfg.write_text(text)
    one_line_error(run("check", "-k", f"{RRB}::privacy.sound", "--config", str(cfg)), "--config", needle)


# ------------------------------------------------------------------ report files

def test_reports_into_missing_folders_are_created(tmp_path):
    j, x, m = tmp_path / "a" / "r.json", tmp_path / "b" / "c" / "r.xml", tmp_path / "d" / "r.md"
    r = run("check", "-k", f"{RRB}::privacy.sound", "--json", str(j), "--junit", str(x), "--markdown", str(m))
    assert r.exit_code == 0, r.output
    assert json.loads(j.read_text())["summary"]["pass"] >= 1 and x.exists() and m.exists()


def test_report_path_that_cannot_be_created_fails_before_the_work(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    one_line_error(run("check", "-k", f"{RRB}::privacy.sound", "--json", str(blocker / "r.json")), "--json")
    one_line_error(run("account", "rr", "--epsilon", "1", "--json", str(blocker / "r.json")), "--json")
    one_line_error(run("check", "--json", str(tmp_path)), "--json")  # a directory, not a file


# ------------------------------------------------------------------ renderers

def _results():
    return [CheckResult("s", "precondition[a]", Status.PASS, subject='{"p": 1}'),
            CheckResult("s", "precondition[b]", Status.FAIL, message="not rejected"),
            CheckResult("s", "privacy.sound", Status.PASS, subject='{"p": 1}'),
            CheckResult("s", "privacy.sound", Status.PASS, subject='{"p": 2}'),
            CheckResult("s", "privacy.tight", Status.WARNING, message="loose by 3%")]


def test_table_and_failures_keep_bracketed_names_and_show_warnings():
    buf = io.StringIO()
    console = Console(file=buf, width=200)
    report.render_table(_results(), console)
    report.render_failures(_results(), console)
    text = buf.getvalue()
    assert "precondition[a]" in text and "precondition[b]" in text and ":: precondition[b]" in text
    assert "warning" in text and "WARNING" in text and "loose by 3%" in text


def test_junit_names_are_unique_and_warnings_pass():
    root = ET.fromstring(report.to_junit(_results()))
    names = [c.get("name") for c in root.iter("testcase")]
    assert len(names) == len(set(names)) == 5
    warn = next(c for c in root.iter("testcase") if c.get("name") == "privacy.tight")
    assert warn.find("failure") is None and "loose by 3%" in warn.find("system-out").text


def test_markdown_and_json_show_warnings():
    md = report.to_markdown(_results())
    assert "## Warnings" in md and "| s | precondition[b] | fail |" in md
    assert json.loads(report.to_json(_results(), "x"))["summary"]["warning"] == 1


# ------------------------------------------------------------------ sizes refused up front, with the reason

@pytest.mark.parametrize("args,needle", [
    (["account", "rr", "--epsilon", "1", "--compose", "2e9"], "--compose"),
    (["account", "rr", "--epsilon", "1", "--compose", "1e12"], "--compose"),
    (["buffling", "one-bf", "--n-bit", "20000000", "--flip-prob", "0.1"], "--n-bit"),
    (["buffling", "privacy", "--n-pub", "16", "--n-bit", "9", "--flip-prob", "0.1", "--simulate", "100000000"],
     "GiB"),
    (["audit", "--mechanism", RRB, "--samples", "1e13"], "--samples"),
])
def test_huge_sizes_are_refused_up_front(args, needle):
    one_line_error(run(*args), needle)


# ------------------------------------------------------------------ NumPy bits

def test_numpy_bool_arrays_are_bit_vectors():
    from vetdp.core.measurement import BitVectorDomain, DiscreteDistance
    from vetdp.impl.randomized_response_bitvec import (
        debias_randomized_response_bitvec,
        make_randomized_response_bitvec,
    )
    from vetdp.sampling import SeededSource, use_source

    m = make_randomized_response_bitvec(BitVectorDomain(max_weight=2, length=3), DiscreteDistance(), 0.5, False)
    with use_source(SeededSource(1)):
        out = m(np.array([True, False, True]))
    assert len(out) == 3
    rows = [np.array([True, False, True]), np.array([False, False, True])]
    assert debias_randomized_response_bitvec(rows, 0.5) == debias_randomized_response_bitvec(
        [[1, 0, 1], [0, 0, 1]], 0.5)
    with pytest.raises(ValueError, match=r"x\[0\]=np.float64\(1.0\) must be a bit"):
        from vetdp.core.measurement import as_bit_tuple

        as_bit_tuple("x", [np.float64(1.0)])


@pytest.mark.parametrize("args", [
    ["account", "rr", "--epsilon", "1", "--compose", "10", "--json", "-"],
    ["buffling", "snr", "--n-pub", "2", "--n-bit", "10", "--flip-prob", "0.1", "--json", "-"],
    ["check", "-k", f"{RRB}::privacy.sound", "--json", "-"],
])
def test_json_to_stdout_is_one_clean_document(args, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["schema_version"] == 1 and not (tmp_path / "-").exists()
