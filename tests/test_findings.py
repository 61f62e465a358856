"""``vetdp findings`` and the findings registry (vetdp/findings.py, proofs/findings/findings.toml).

The pins of upstream bugs are here: for every registered finding whose library is installed, the *command* that
reproduces it must report it (status "present"); a test that asserted only that the library still misbehaves would
stay green when vetdp stopped seeing the bug. Each distinct command runs once per session (module-scoped cache).
"""

from __future__ import annotations

import importlib
import json
import re
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from vetdp import findings as F
from vetdp.cli.findings import findings as findings_command

cli_findings = importlib.import_module("vetdp.cli.findings")  # the module (vetdp.cli.findings may name the command)
ROOT = Path(__file__).resolve().parents[1]
FOLDER = ROOT / "proofs" / "findings"
REGISTRY = FOLDER / F.REGISTRY_NAME
FINDINGS = F.load_registry(REGISTRY)

# a fast command on vetdp's own (sound) boolean RR: its report has precondition[prob_nan] passing
OWN = ["verify", "randomized_response_bool", "--impl",
       "vetdp.impl.randomized_response_bool:make_randomized_response_bool",
       "--params", '{"prob": 0.75, "constant_time": false}']


# ------------------------------------------------------------------ the registry is complete


def test_every_documented_finding_has_a_registry_entry():
    documents = sorted(p.name for p in FOLDER.glob("*.md"))
    assert {"opendp.md", "dp_accounting.md"} <= set(documents)
    assert F.unregistered_sections(FINDINGS, FOLDER) == []
    assert {f.document.name for f in FINDINGS} == set(documents)


def test_every_entry_names_a_numbered_section_of_its_document_once():
    for f in FINDINGS:
        text = f.document.read_text(encoding="utf-8")
        if f.section is None:
            assert not re.search(r"^## \d+\.", text, re.MULTILINE), f.id
        else:
            assert re.search(rf"^## {f.section}\. ", text, re.MULTILINE), f.id
    keys = [(f.document, f.section) for f in FINDINGS]
    assert len(keys) == len(set(keys))
    opendp = sorted(f.section for f in FINDINGS if f.document.name == "opendp.md")
    assert opendp == ["1", "2", "3", "4", "5", "6", "7"]


def test_unregistered_sections_names_each_missing_section_and_whole_document(tmp_path):
    registry = _registry(tmp_path, [_entry("lib-1", "click", section=1)], sections=(1, 2))
    (tmp_path / "other.md").write_text("# One finding, no numbered sections\n", encoding="utf-8")
    found = F.load_registry(registry)
    assert F.unregistered_sections(found, tmp_path) == ["lib.md § 2", "other.md"]


# ------------------------------------------------------------------ the pins: every command reports its finding

_OUTCOMES: dict[tuple[str, ...], F.Outcome] = {}
_RUN = cli_findings.run_in_process


def _outcome(argv: tuple[str, ...], **_) -> F.Outcome:
    """Each distinct command once per test session, in this interpreter (the isolated runner of `vetdp findings`
    is exercised by the tests of the command line)."""
    if argv not in _OUTCOMES:
        _OUTCOMES[argv] = _RUN(argv)
    return _OUTCOMES[argv]


@pytest.fixture
def cached_runs(monkeypatch):
    monkeypatch.setattr(cli_findings, "run_command", _outcome)


@pytest.mark.extras
@pytest.mark.parametrize("finding", FINDINGS, ids=[f.id for f in FINDINGS])
def test_the_command_reports_the_finding(finding):
    installed = [F.installed_version(name) for name, _ in finding.libraries]
    if None in installed:
        pytest.skip(f"{finding.library}: not installed (extras); CI installs them")
    if finding.no_command:
        pytest.skip(f"{finding.id}: registered without a command: {finding.no_command}")
    verdict = F.judge(finding, [_outcome(c.argv) for c in finding.commands], installed)
    assert verdict.status is F.Status.PRESENT, (
        f"{finding.id} ({finding.library} {installed}, found in {finding.found_in}): {verdict.status.value}: "
        f"{verdict.detail}")
    assert all(all(ms) for ms in verdict.matched) and len(verdict.matched) == len(finding.commands)


# the same commands on vetdp's own (sound) constructors: no detector of a finding may match their reports, so a
# detector is about the upstream bug and not about anything a failing or passing run prints
THIRD_PARTY = ("opendp", "pure-ldp", "multi-freq-ldpy", "diffprivlib")
OWN_IMPL = {"randomized_response": "vetdp.impl.randomized_response:make_randomized_response",
            "randomized_response_bitvec": "vetdp.impl.randomized_response_bitvec:make_randomized_response_bitvec",
            "randomized_response_bool": "vetdp.impl.randomized_response_bool:make_randomized_response_bool",
            "debias_randomized_response": "vetdp.impl.randomized_response:debias_randomized_response",
            "debias_randomized_response_bitvec":
                "vetdp.impl.randomized_response_bitvec:debias_randomized_response_bitvec",
            "debias_randomized_response_bitvec_frequencies":
                "vetdp.impl.randomized_response_bitvec:debias_randomized_response_bitvec_frequencies",
            "olh": "vetdp.impl.olh:make_olh",
            "count_mean_sketch": "vetdp.impl.count_mean_sketch:make_count_mean_sketch",
            "hadamard_count_mean_sketch": "vetdp.impl.hadamard_count_mean_sketch:make_hadamard_count_mean_sketch"}
VERIFY_COMMANDS = sorted({c.argv for f in FINDINGS for c in f.commands
                          if c.argv[0] == "verify" and c.argv[2] == "--impl" and c.argv[3] in THIRD_PARTY})


@pytest.mark.parametrize("argv", VERIFY_COMMANDS, ids=[" ".join(a[1:2] + a[3:4] + a[-1:]) for a in VERIFY_COMMANDS])
def test_detectors_do_not_match_vetdp_own_sound_constructor(argv):
    own = argv[:3] + (OWN_IMPL[argv[1]],) + argv[4:]
    outcome = _outcome(own)
    assert outcome.ok and outcome.exit_code == 0, outcome.error  # vetdp's own constructor passes every clause
    detectors = [(f.id, d) for f in FINDINGS for c in f.commands if c.argv == argv for d in c.detectors]
    assert detectors
    assert [(fid, d.describe()) for fid, d in detectors if d(outcome.doc)] == []


def test_every_third_party_verify_command_has_an_own_counterpart():
    assert len(VERIFY_COMMANDS) >= 20 and {a[3] for a in VERIFY_COMMANDS} == set(THIRD_PARTY)
    assert {a[1] for a in VERIFY_COMMANDS} == set(OWN_IMPL)
    assert all(a[2] == "--impl" for f in FINDINGS for c in f.commands for a in [c.argv] if a[0] == "verify")


# ------------------------------------------------------------------ detectors


def _detector(**kw) -> F.Detector:
    return F._detector({"among": "results", **kw}, "test")


def test_detector_needs_one_item_meeting_every_condition():
    doc = {"results": [{"check": "a", "status": "fail", "message": "accepted x"},
                       {"check": "b", "status": "pass", "message": "accepted y"}]}
    assert _detector(where={"check": "a", "status": "fail"})(doc)
    assert _detector(where={"check": "a", "status": ["warning", "fail"]}, matches={"message": "^accepted"})(doc)
    assert not _detector(where={"check": "b", "status": "fail"})(doc)  # conditions met by different items
    assert not _detector(where={"check": "a"}, matches={"message": "y$"})(doc)
    assert not _detector(where={"check": "a"})({"rows": doc["results"]})  # another array
    assert not _detector(where={"check": "a"})({"results": "a"})


def test_detector_dotted_paths_and_value_kinds():
    doc = {"rows": [{"witness": {"d_in": 1, "x": [1, 0]}, "flag": True, "answer": 2.0, "n": "1"}]}
    rows = {"among": "rows"}
    assert F._detector({**rows, "where": {"witness.d_in": 1}}, "t")(doc)
    assert F._detector({**rows, "where": {"answer": 2}}, "t")(doc)  # numbers compare as numbers
    assert not F._detector({**rows, "where": {"flag": 1}}, "t")(doc)  # True is not 1
    assert not F._detector({**rows, "where": {"n": 1}}, "t")(doc)  # "1" is not 1
    assert not F._detector({**rows, "where": {"witness.y": 1}}, "t")(doc)  # a missing field never matches
    assert F._detector({**rows, "matches": {"witness.x": r"^\[1, 0\]$"}}, "t")(doc)  # non-strings as JSON


# ------------------------------------------------------------------ malformed registries are clear errors

GOOD = {"id": "lib-1", "library": "click", "found_in": "1", "title": "t", "document": "lib.md", "section": 1,
        "command": [{"argv": ["verify", "x"], "detect": [{"among": "results", "where": {"check": "a"}}]}]}


def _with(**change):
    entry = json.loads(json.dumps(GOOD))
    for path, value in change.items():
        target = entry
        *head, last = path.split("__")
        for part in head:
            target = target[int(part)] if part.isdigit() else target[part]
        target[int(last) if last.isdigit() else last] = value
    return entry


@pytest.mark.parametrize(("entry", "message"), [
    (_with(colour="red"), r"finding\[0\]: unknown key\(s\) \['colour'\]"),
    ({k: v for k, v in GOOD.items() if k != "title"}, r"missing key\(s\) \['title'\]"),
    (_with(id="OpenDP 1"), r"id='OpenDP 1' must match"),
    (_with(library=""), r"library='' must be a non-empty string"),
    (_with(document="nowhere.md"), r"document='nowhere.md': no such file"),
    (_with(section=7), r"section=7 must be one of the numbered sections of lib.md: \['1'\]"),
    (_with(section=True), r"section=True must be one of the numbered sections"),
    ({k: v for k, v in GOOD.items() if k != "section"}, r"section is missing: lib.md has numbered sections \['1'\]"),
    (_with(no_command="no way"), r"give either command .* or no_command .*, exactly one"),
    ({k: v for k, v in GOOD.items() if k != "command"}, r"give either command .* or no_command .*, exactly one"),
    (_with(libraries={"click": "8"}), r"give either library and found_in, or libraries, not both"),
    ({k: v for k, v in {**GOOD, "libraries": {"click": 8}}.items() if k not in ("library", "found_in")},
     r"libraries=\{'click': 8\} must be a non-empty table of distribution = \"version\""),
    ({k: v for k, v in GOOD.items() if k != "found_in"}, r"missing key\(s\) \['found_in'\]"),
    (_with(command=[]), r"command=\[\] must be a non-empty array"),
    (_with(command__0__argv=["vetdp", "verify"]), r"must not start with 'vetdp'"),
    (_with(command__0__argv=["verify", "x", "--json", "f"]), r"must not contain --json"),
    (_with(command__0__argv="verify x"), r"argv='verify x' must be a non-empty list"),
    (_with(command__0__detect=[]), r"detect=\[\] must be a non-empty array"),
    (_with(command__0__detect__0={"among": "results"}), r"detect\[0\]: a detector needs at least one condition"),
    (_with(command__0__detect__0={"among": "results", "matches": {"message": "("}}),
     r"matches.message='\(' is not a regular expression"),
    (_with(command__0__detect__0={"among": "results", "where": {"check": []}}),
     r"where.check=\[\] must be a value or a non-empty list"),
    (_with(command__0__detect__0={"among": "results", "where": {"check": "a"}, "when": 1}),
     r"unknown key\(s\) \['when'\]"),
])
def test_malformed_entry_is_a_clear_error(tmp_path, entry, message):
    registry = _registry(tmp_path, [entry])
    with pytest.raises(F.RegistryError, match=message) as info:
        F.load_registry(registry)
    assert str(registry.resolve()) in str(info.value)


def test_duplicate_ids_and_sections_are_errors(tmp_path):
    with pytest.raises(F.RegistryError, match="id 'lib-1' is registered twice"):
        F.load_registry(_registry(tmp_path, [GOOD, _with(section=2)], sections=(1, 2)))
    with pytest.raises(F.RegistryError, match=r"lib.md § 1 is registered twice \(findings 'lib-1' and 'lib-2'\)"):
        F.load_registry(_registry(tmp_path, [GOOD, _with(id="lib-2")]))


def test_bad_toml_and_schema_version_are_errors(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("schema_version = 1\n[[finding]\n", encoding="utf-8")
    with pytest.raises(F.RegistryError, match="not valid TOML"):
        F.load_registry(bad)
    bad.write_text("schema_version = 2\n[[finding]]\nid = 'x'\n", encoding="utf-8")
    with pytest.raises(F.RegistryError, match="schema_version=2; this vetdp reads 1"):
        F.load_registry(bad)


def test_cli_malformed_registry_exits_2_naming_the_problem(tmp_path):
    registry = _registry(tmp_path, [_with(section=9)])
    result = CliRunner().invoke(findings_command, ["--registry", str(registry)])
    assert result.exit_code == 2
    assert "malformed findings registry" in result.output and "section=9" in result.output


# ------------------------------------------------------------------ statuses and exit codes, end to end


def _entry(fid: str, library: str, section: int | None = None, argv=OWN, detect=({"check": "precondition[prob_nan]",
                                                                                   "status": "pass"},)) -> dict:
    entry = {"id": fid, "library": library, "found_in": "0", "title": f"finding {fid}", "document": "lib.md",
             "command": [{"argv": list(argv), "detect": [{"among": "results", "where": w} for w in detect]}]}
    if section is not None:
        entry["section"] = section
    return entry


def _registry(folder: Path, entries: list[dict], sections=(1,)) -> Path:
    (folder / "lib.md").write_text("# Findings\n\n" + "".join(f"## {s}. Finding {s}\n\ntext\n\n" for s in sections),
                                   encoding="utf-8")
    path = folder / F.REGISTRY_NAME
    path.write_text(_toml({"schema_version": 1, "finding": entries}), encoding="utf-8")
    return path


def _toml(data: dict) -> str:
    """Just enough TOML for these registries (arrays of tables, inline tables, strings, ints, lists)."""
    def value(v):
        if isinstance(v, dict):
            return "{ " + ", ".join(f"{json.dumps(k)} = {value(x)}" for k, x in v.items()) + " }"
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        return json.dumps(v)

    lines = [f"schema_version = {data['schema_version']}"]
    for entry in data["finding"]:
        lines.append("[[finding]]")
        lines += [f"{k} = {value(v)}" for k, v in entry.items() if k != "command"]
        if "command" in entry:
            lines.append(f"command = {value(entry['command'])}")
    return "\n".join(lines) + "\n"


def _run_cli(args: list[str], folder: Path) -> tuple[int, dict, str]:
    out = folder / "out.json"
    out.unlink(missing_ok=True)
    result = CliRunner().invoke(findings_command, [*args, "--json", str(out)], catch_exceptions=False)
    return result.exit_code, (json.loads(out.read_text()) if out.exists() else {}), result.output


def test_check_reports_present_partly_fixed_fixed_and_missing_library_and_exits_1(tmp_path, cached_runs):
    gone = {"check": "precondition[prob_nan]", "status": "fail"}  # what a fixed bug looks like: no such item
    there = {"check": "precondition[prob_nan]", "status": "pass"}
    registry = _registry(tmp_path, [
        _entry("own-1", "click", 1), _entry("own-2", "click", 2, detect=(there, gone)),
        _entry("own-3", "click", 3, detect=(gone,)), _entry("own-4", "no-such-distribution-vetdp", 4)],
        sections=(1, 2, 3, 4))
    code, doc, output = _run_cli(["--check", "--registry", str(registry)], tmp_path)
    status = {f["id"]: f["status"] for f in doc["findings"]}
    assert status == {"own-1": "present", "own-2": "partly fixed", "own-3": "fixed", "own-4": "library not installed"}
    assert code == 1
    assert doc["summary"]["present"] == 1 and doc["summary"]["fixed"] == 1 and doc["unregistered"] == []
    row = {f["id"]: f for f in doc["findings"]}
    assert [d["matched"] for d in row["own-2"]["detectors"]] == [True, False]
    assert "no longer reported: an item of 'results' with check = 'precondition[prob_nan]', status = 'fail'" in \
        row["own-2"]["detail"]
    assert row["own-1"]["libraries"] == [{"name": "click", "found_in": "0", "installed": F.installed_version("click")}]
    assert row["own-4"]["libraries"][0]["installed"] is None
    assert "own-3: fixed" in output and "the command no longer reports it" in output


def test_run_lists_statuses_but_exits_0_when_a_finding_is_fixed(tmp_path, cached_runs):
    registry = _registry(tmp_path, [_entry("own-1", "click", 1, detect=({"check": "no.such.clause"},))])
    code, doc, _ = _run_cli(["--run", "--registry", str(registry)], tmp_path)
    assert code == 0 and doc["findings"][0]["status"] == "fixed"


def test_listing_runs_nothing_and_exits_0(tmp_path):
    code, doc, output = _run_cli([], tmp_path)
    assert code == 0
    assert {f["id"] for f in doc["findings"]} == {f.id for f in FINDINGS}
    assert all(f["status"] in ("not run", "library not installed") for f in doc["findings"])
    assert "vetdp verify randomized_response_bitvec --impl opendp" in output


def test_a_failing_command_is_an_error_with_its_message(tmp_path):
    registry = _registry(tmp_path, [_entry("own-1", "click", 1, argv=["verify", "no_such_spec"])])
    for flag in ("--run", "--check"):
        code, doc, _ = _run_cli([flag, "--registry", str(registry)], tmp_path)
        assert code == 2 and doc["findings"][0]["status"] == "command failed"
        assert "exit code 2" in doc["findings"][0]["detail"] and "no_such_spec" in doc["findings"][0]["detail"]


def test_check_with_only_missing_libraries_ran_nothing_and_exits_2(tmp_path):
    registry = _registry(tmp_path, [_entry("own-1", "no-such-distribution-vetdp", 1)])
    code, doc, output = _run_cli(["--check", "--registry", str(registry)], tmp_path)
    assert code == 2 and doc["findings"][0]["status"] == "library not installed"
    assert "no finding was run" in output
    code, _, _ = _run_cli(["--registry", str(registry)], tmp_path)
    assert code == 0  # listing only
    code, _, _ = _run_cli(["--registry", str(registry), "--require-installed"], tmp_path)
    assert code == 2


def test_check_fails_on_a_documented_finding_without_entry(tmp_path, cached_runs):
    registry = _registry(tmp_path, [_entry("own-1", "click", 1)], sections=(1, 2))
    code, doc, output = _run_cli(["--check", "--registry", str(registry)], tmp_path)
    assert code == 2 and doc["findings"][0]["status"] == "present"
    assert doc["unregistered"] == [str(tmp_path.resolve() / "lib.md § 2")]
    assert "unregistered finding" in output


def test_k_selects_findings_and_selecting_nothing_is_a_usage_error(tmp_path):
    code, doc, _ = _run_cli(["-k", "opendp-*"], tmp_path)
    assert code == 0 and sorted(f["id"] for f in doc["findings"]) == [f"opendp-{i}" for i in range(1, 8)]
    code, _, output = _run_cli(["-k", "nothing-like-this"], tmp_path)
    assert code == 2 and "selects no finding" in output


def test_no_registry_is_a_usage_error(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text(textwrap.dedent("""\
        [tool.vetdp]
        proofs = "proofs"
        """), encoding="utf-8")
    from vetdp.project import project_scope

    with project_scope(tmp_path):
        result = CliRunner().invoke(findings_command, ["--no-bundled"])
        assert result.exit_code == 2 and "no findings registry: vetdp's own is left out" in result.output
        monkeypatch.setattr(F, "bundled_registry", lambda: None)
        result = CliRunner().invoke(findings_command, [])
    assert result.exit_code == 2 and "no findings registry: vetdp's own is not installed" in result.output


def test_the_bundled_registry_is_listed_from_any_folder(tmp_path, monkeypatch):
    """vetdp's own findings ship with it: outside any project (and outside this checkout) they are listed, and their
    commands run in vetdp's own project from the registry's root, where the paths they name exist."""
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "f.json"
    result = CliRunner().invoke(findings_command, ["--json", str(out)], catch_exceptions=False)
    ids = [f["id"] for f in json.loads(out.read_text())["findings"]]
    assert result.exit_code == 0 and ids == [f.id for f in FINDINGS]
    bundled = F.bundled_registry()
    assert bundled is not None and bundled.resolve() == REGISTRY.resolve()  # this checkout: the editable install
    root = F.registry_root(bundled)
    assert (root / "pyproject.toml").is_file() and (root / "examples" / "oue" / "pyproject.toml").is_file()


def test_the_package_data_ships_the_registry_its_documents_and_the_example_project():
    """pyproject's package data for vetdp._registry holds every file the bundled registry's commands and documents
    need (the non-editable install test runs them from a wheel)."""
    import glob
    import tomllib

    data = tomllib.loads((REGISTRY.parents[2] / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert data["package-dir"]["vetdp._registry"] == "."
    shipped = {p for pattern in data["package-data"]["vetdp._registry"]
               for p in glob.glob(pattern, root_dir=REGISTRY.parents[2])}
    assert {f"proofs/findings/{d.name}" for d in REGISTRY.parent.iterdir() if d.suffix in (".md", ".toml")} <= shipped
    for f in FINDINGS:
        for c in f.commands:
            if "--project" in c.argv:
                project = c.argv[c.argv.index("--project") + 1]
                assert f"{project}/pyproject.toml" in shipped, project


def test_a_command_stopped_by_the_time_limit_is_a_failure_not_a_fix():
    outcome = cli_findings.run_command(OWN, timeout=0.01)  # no interpreter starts in 10 ms: the limit always fires
    assert not outcome.ok and outcome.error.startswith("stopped: time") and "--time-limit" in outcome.error
    finding = F.load_registry(REGISTRY)[0]
    verdict = F.judge(finding, [outcome] * len(finding.commands), ["0"])
    assert verdict.status is F.Status.FAILED and "stopped: time" in verdict.detail


def test_a_report_without_the_searched_array_is_a_failure_not_a_fix():
    finding = next(f for f in FINDINGS if f.id == "dp_accounting-1")
    verdict = F.judge(finding, [F.Outcome(1, {"results": []})], ["0.6.0"])
    assert verdict.status is F.Status.FAILED and "has no array 'rows'" in verdict.detail
    verdict = F.judge(finding, [F.Outcome(1, {"rows": []})], ["0.6.0"])
    assert verdict.status is F.Status.FIXED and verdict.matched == ((False, False, False),)


def test_findings_is_a_vetdp_subcommand(tmp_path):
    from vetdp.cli import main

    assert main.get_command(None, "findings") is findings_command
    out = tmp_path / "f.json"
    result = CliRunner().invoke(main, ["findings", "-k", "opendp-4", "--json", str(out)], catch_exceptions=False)
    assert result.exit_code == 0 and [f["id"] for f in json.loads(out.read_text())["findings"]] == ["opendp-4"]


def test_a_user_project_registry_is_found_and_its_commands_run_in_that_project(tmp_path):
    from vetdp.project import project_scope

    (tmp_path / "pyproject.toml").write_text(textwrap.dedent("""\
        [tool.vetdp]
        specs = ["vetdp.specs.randomized_response_bool"]
        proofs = "proofs"
        """), encoding="utf-8")
    folder = tmp_path / "proofs" / "findings"
    folder.mkdir(parents=True)
    # k_rappor is one of vetdp's own specs but not this project's: run in this project, its command must fail
    elsewhere = ["verify", "k_rappor", "--impl", "vetdp.impl.k_rappor:make_k_rappor"]
    _registry(folder, [_entry("mine-1", "click", 1), _entry("mine-2", "click", 2, argv=elsewhere)], sections=(1, 2))
    out = tmp_path / "out.json"
    with project_scope(tmp_path):
        listed = CliRunner().invoke(findings_command, ["--json", str(out)], catch_exceptions=False)
        ids = [f["id"] for f in json.loads(out.read_text())["findings"]]
        assert listed.exit_code == 0 and ids == [f.id for f in FINDINGS] + ["mine-1", "mine-2"]  # it adds to vetdp's
        result = CliRunner().invoke(findings_command, ["--run", "-k", "mine-*", "--json", str(out)],
                                    catch_exceptions=False)
    doc = json.loads(out.read_text())
    assert [(f["id"], f["status"]) for f in doc["findings"]] == [("mine-1", "present"), ("mine-2", "command failed")]
    assert "k_rappor" in doc["findings"][1]["detail"] and result.exit_code == 2
    assert doc["findings"][0]["document"] == str((folder / "lib.md").resolve())


def test_lettered_sections_several_libraries_and_findings_without_command(tmp_path):
    (tmp_path / "lib.md").write_text("# F\n\n## Summary\n\n## F1. one\n\n## F2. two\n\n## Also\n", encoding="utf-8")
    both = {**_entry("two-libs", "click", None), "section": "F1"}
    del both["library"], both["found_in"]
    both["libraries"] = {"click": "0", "no-such-distribution-vetdp": "1"}
    gap = {"id": "gap", "library": "click", "found_in": "0", "title": "t", "document": "lib.md", "section": "F2",
           "no_command": "only reachable beyond the spec's parameters"}
    registry = tmp_path / F.REGISTRY_NAME
    registry.write_text(_toml({"schema_version": 1, "finding": [both, gap]}), encoding="utf-8")
    found = F.load_registry(registry)
    assert [(f.id, f.section, f.library) for f in found] == [
        ("two-libs", "F1", "click, no-such-distribution-vetdp"), ("gap", "F2", "click")]
    assert F.unregistered_sections(found, tmp_path) == []
    verdicts = F.evaluate(found, runner=lambda argv: pytest.fail("nothing may run"))
    assert [v.status for v in verdicts] == [F.Status.NOT_INSTALLED, F.Status.NO_COMMAND]
    assert verdicts[0].detail == "no-such-distribution-vetdp not installed: skipped"
    assert verdicts[1].detail == "no vetdp command: only reachable beyond the spec's parameters"
    code, doc, output = _run_cli(["--check", "--registry", str(registry)], tmp_path)
    assert code == 2 and "no finding was run" in output  # a gap is listed, never counted as a check that ran
    assert [f["status"] for f in doc["findings"]] == ["library not installed", "no command"]


def test_a_changed_library_version_is_named_when_a_finding_is_not_present():
    finding = next(f for f in FINDINGS if f.id == "dp_accounting-1")
    verdict = F.judge(finding, [F.Outcome(1, {"rows": []})], ["0.7.0"])
    assert verdict.status is F.Status.FIXED
    assert verdict.detail == "the command no longer reports it (dp-accounting found in 0.6.0, installed 0.7.0)"


def test_in_process_runner_reports_usage_errors_like_the_isolated_one():
    outcome = cli_findings.run_in_process(["verify", "no_such_spec"])
    assert outcome.exit_code == 2 and not outcome.ok and "no_such_spec" in outcome.error
    assert cli_findings.run_in_process(["no-such-command"]).exit_code == 2
