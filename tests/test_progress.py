"""Progress (vetdp/progress.py): a line per step on standard error when it is not a terminal, a bar when it is,
nothing when nobody shows it; never on standard output, never a change in results."""

import dataclasses
import io
import json
import re
import textwrap

import pytest
from click.testing import CliRunner

from vetdp import progress
from vetdp.accounting.accountants import AccountantSuite
from vetdp.accounting.battery import quick_battery, run_battery
from vetdp.cli import main
from vetdp.engine.runner import RunConfig, check_measurement_spec
from vetdp.engine.spec import find_spec

LINE = re.compile(r"^(?P<title>.+?): (?P<name>[a-z ]+) (?P<i>\d+)/(?P<n>\d+) ?(?P<label>.*) \(\d+ s\)$")


def _lines(text: str, among_others: bool = False) -> list[dict]:
    """The progress lines in ``text``, parsed (every line must be one, unless ``among_others``: a report's table
    shares standard error when the report goes to standard output)."""
    out = []
    for line in text.splitlines():
        m = LINE.match(line)
        assert m or among_others, f"not a progress line: {line!r}"
        if m:
            out.append(m.groupdict())
    return out


def test_a_line_per_step_when_not_a_terminal_and_notes_stay_off_the_log():
    buf = io.StringIO()
    with progress.shown("vetdp demo", stream=buf, terminal=False):
        for i in range(3):
            progress.step("parameter set", i + 1, 3, f'{{"prob": 0.{i + 5}}}')
            progress.note("audit.distribution")  # a terminal's detail only
        progress.step("shrinking", 1, None, "privacy.sound")
    lines = buf.getvalue().splitlines()
    assert len(lines) == 4 and not any("audit.distribution" in line for line in lines)
    parsed = _lines("\n".join(lines[:3]))
    assert [(p["title"], p["name"], p["i"], p["n"]) for p in parsed] == [
        ("vetdp demo", "parameter set", str(i), "3") for i in (1, 2, 3)]
    assert parsed[1]["label"] == '{"prob": 0.6}'
    assert lines[3].startswith("vetdp demo: shrinking 1 privacy.sound (")  # an unknown total: the count alone


def test_long_labels_are_cut_to_one_line():
    buf = io.StringIO()
    with progress.shown("t", stream=buf, terminal=False):
        progress.step("parameter set", 1, 1, "x" * 1000 + "\n")
    (line,) = buf.getvalue().splitlines()
    assert len(line) <= progress.LINE_WIDTH + len(" (0 s)") + 5 and "…" in line


def test_nothing_is_shown_outside_shown_or_without_lines(capsys):
    progress.step("parameter set", 1, 2, "a")
    progress.note("b")
    buf = io.StringIO()
    with progress.shown("t", stream=buf, terminal=False, lines=False):
        progress.step("parameter set", 1, 2, "a")
    captured = capsys.readouterr()
    assert (captured.out, captured.err, buf.getvalue()) == ("", "", "")


def test_a_terminal_gets_a_bar_not_lines():
    buf = io.StringIO()
    with progress.shown("t", stream=buf, terminal=True):
        progress.step("parameter set", 1, 2, "first")
        progress.note("audit.distribution")
    text = buf.getvalue()
    assert "parameter set" in text and "\x1b[" in text  # drawn with terminal control codes
    assert not any(LINE.match(line) for line in text.splitlines())


def _strip_seconds(obj):
    if isinstance(obj, dict):
        return {k: _strip_seconds(v) for k, v in obj.items() if k not in ("seconds", "exact_seconds")}
    if isinstance(obj, list):
        return [_strip_seconds(v) for v in obj]
    return obj


class _Basic:
    name = "basic"

    def epsilon(self, events, delta):
        return sum(e.count * e.epsilon for e in events)

    def delta(self, events, epsilon):
        return 0.0 if epsilon >= sum(e.count * e.epsilon for e in events) else 1.0


def test_battery_results_are_the_same_with_and_without_progress():
    suite = AccountantSuite("mine", "0", [_Basic()])
    quiet = run_battery(suite, quick_battery())
    buf = io.StringIO()
    with progress.shown("vet", stream=buf, terminal=False):
        shown = run_battery(suite, quick_battery())
    assert _strip_seconds(shown.as_dict()) == _strip_seconds(quiet.as_dict())
    names = [p["name"] for p in _lines(buf.getvalue())]
    n = len(quick_battery())
    assert names == ["exact brackets"] * n + ["questions"] * (2 * n)


def test_verify_results_are_the_same_with_and_without_progress():
    spec = find_spec("randomized_response_bool")
    cfg = RunConfig(max_examples=2, seed=3)

    def run():
        return [_strip_seconds(dataclasses.asdict(r)) for r in check_measurement_spec(spec, cfg=cfg)]

    quiet = run()
    buf = io.StringIO()
    with progress.shown("verify", stream=buf, terminal=False):
        shown = run()
    assert json.dumps(shown, default=repr) == json.dumps(quiet, default=repr)
    steps = _lines(buf.getvalue())
    assert [p["label"] for p in steps if p["name"] == "preconditions"] == [case.id for case in spec.bad]
    sets = [p for p in steps if p["name"] == "parameter set"]
    assert sets and sets[0]["i"] == "1" and json.loads(sets[0]["label"]) == spec.examples[0]


def test_verify_cli_progress_goes_to_stderr_and_stdout_stays_json():
    impl = "vetdp.impl.randomized_response_bool:make_randomized_response_bool"
    res = CliRunner().invoke(main, ["verify", "randomized_response_bool", "--max-examples", "2", "--impl", impl,
                                    "--json", "-"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)  # nothing but the report on standard output
    assert doc["summary"]["fail"] == 0
    title = f"vetdp verify randomized_response_bool --impl {impl}"
    steps = _lines(res.stderr, among_others=True)
    assert steps[0] == {"title": title, "name": "stage", "i": "1", "n": "1", "label": "randomized_response_bool"}
    assert {"preconditions", "parameter set"} <= {p["name"] for p in steps}


_USER = '''
class Basic:
    name = "basic"
    def epsilon(self, events, delta):
        return sum(e.count * e.epsilon for e in events)
'''


def test_vet_accountant_cli_progress_goes_to_stderr_and_stdout_stays_json(tmp_path, monkeypatch):
    (tmp_path / "progress_user_accountant.py").write_text(textwrap.dedent(_USER))
    monkeypatch.syspath_prepend(str(tmp_path))
    res = CliRunner().invoke(main, ["vet", "accountant", "progress_user_accountant:Basic", "--quick", "--json", "-"],
                             catch_exceptions=False)
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["library"] == "progress_user_accountant:Basic"
    steps = _lines(res.stderr, among_others=True)
    n = len(quick_battery())
    assert [p["name"] for p in steps] == ["exact brackets"] * n + ["questions"] * (2 * n)
    assert {p["title"] for p in steps} == {"vetdp vet accountant progress_user_accountant:Basic --quick"}


@pytest.mark.parametrize("argv", [["verify", "randomized_response_bool", "--impl", "no_such_module_here:make"],
                                  ["vet", "accountant", "no_such_module_here:Accountant"]])
def test_usage_errors_print_no_progress(argv):
    res = CliRunner().invoke(main, argv)
    assert res.exit_code == 2 and not any(LINE.match(line) for line in res.stderr.splitlines())


@pytest.mark.slow  # over ~14 s: run by .ci/run (-m slow --deep)
def test_check_cli_in_a_log_prints_a_line_per_stage_and_spec_only():
    """Issue 24: `vetdp check` printed nothing until the end when its output was piped or logged; it now prints a
    line per stage and per spec (not per parameter set: a gate's log stays short), and stdout is the report."""
    res = CliRunner().invoke(main, ["check", "-k", "randomized_response_bool::privacy.sound", "--json", "-"],
                             catch_exceptions=False)
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["summary"]["fail"] == 0
    steps = _lines(res.stderr, among_others=True)
    assert {p["title"] for p in steps} == {"vetdp check"}
    assert [p["name"] for p in steps][:2] == ["stage", "spec"] and {p["name"] for p in steps} == {"stage", "spec"}
    assert {"specs", "proofs", "accounting", "randomized_response_bool"} <= {p["label"] for p in steps}


def test_lines_of_chosen_kinds_only():
    buf = io.StringIO()
    with progress.shown("t", stream=buf, terminal=False, lines=("stage",)):
        progress.step("stage", 1, 2, "specs")
        progress.step("parameter set", 1, 25, "{}")
        progress.step("stage", 2, 2, "proofs")
    assert [p["label"] for p in _lines(buf.getvalue())] == ["specs", "proofs"]
