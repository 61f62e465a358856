"""Fuzz the command line (issue 11): every command's options with malformed values.

Each case starts from a valid, cheap invocation and replaces one option's value with something malformed (NaN,
infinities, negatives, huge, empty, wrong types, unwritable paths) or adds an unknown option. Every such case must
end with exit 2, a message naming the option, no traceback and no report (bad input is refused before any
work). The default run draws a modest number of cases; ``--deep`` (the ``deep`` marker) draws many more.
"""

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vetdp.cli import main

RRB_PARAMS = '{"prob": 0.75, "constant_time": false}'
NOT_NUMBERS = ["nan", "NaN", "inf", "-inf", "", "abc", "[]", "{}", "1/0", "0x", "1e400", "-1e400"]

# command prefix (valid and cheap), then each option with values that are malformed *for that option*
COMMANDS: list[tuple[list[str], dict[str, list[str]]]] = [
    (["account", "rr", "--epsilon", "1"], {
        "--epsilon": NOT_NUMBERS + ["0", "-5", "800", "1e300"],
        "--categories": NOT_NUMBERS + ["0", "1", "-5", "2.5", "1e300"],
        "--compose": NOT_NUMBERS + ["0", "-5", "2.5", "2e9", "1e12", "1e300"],
        "--delta": NOT_NUMBERS + ["0", "1", "-5", "2"],
        "--k": ["3", "0", "-5", "abc", "1e300"],
    }),
    (["account", "k-rappor", "--epsilon", "1", "--k", "2"], {
        "--k": NOT_NUMBERS + ["0", "-5", "1e6"],
        "--compose": ["3e8", "1e9", "0"],  # 2k·n <= 1e9
        "--categories": ["3"],
    }),
    (["buffling", "snr", "--n-pub", "2", "--n-bit", "10", "--flip-prob", "0.1"], {
        "--n-pub": NOT_NUMBERS + ["0", "-5", "11", "100"],
        "--n-bit": NOT_NUMBERS + ["0", "-5", "1e9"],
        "--flip-prob": NOT_NUMBERS + ["0", "-5", "0.7", "1"],
        "--skew": ["nan", "inf", "", "abc", "1/0", "-1", "2", "3/2"],
    }),
    (["buffling", "one-bf", "--n-bit", "5", "--flip-prob", "0.1"], {
        "--n-bit": NOT_NUMBERS + ["0", "-5", "10000001", "1e8"],
        "--flip-prob": NOT_NUMBERS + ["0", "0.51"],
        "--delta": NOT_NUMBERS + ["0", "1", "-1"],
        "--depth": NOT_NUMBERS + ["-1", "1e9"],
    }),
    (["buffling", "privacy", "--n-pub", "2", "--n-bit", "5", "--flip-prob", "0.1"], {
        "--n-pub": NOT_NUMBERS + ["0", "17"],
        "--n-bit": NOT_NUMBERS + ["0", "1e9"],
        "--flip-prob": NOT_NUMBERS + ["0", "0.7"],
        "--delta": NOT_NUMBERS + ["0", "1"],
        "--grid-bits": NOT_NUMBERS + ["0", "7", "27", "64"],
        "--r-cap": NOT_NUMBERS + ["0", "1", "-5", "1e20"],
        "--chain-work": NOT_NUMBERS + ["0", "-5", "1e3", "1e20"],
        "--time-budget": ["120", "nan"],  # removed: refused, naming its replacement
        "--simulate": NOT_NUMBERS + ["-5", "5", "1e9", "1e12"],
        "--seed": ["-5", "abc", "nan"],
    }),
    (["buffling", "flip-prob", "--n-pub", "2", "--n-bit", "5", "--epsilon", "1"], {
        "--n-pub": NOT_NUMBERS + ["0", "17"],
        "--epsilon": NOT_NUMBERS + ["-5", "800"],
        "--delta": NOT_NUMBERS + ["0", "1"],
        "--rel-tol": NOT_NUMBERS + ["0", "1", "-1"],
        "--n-simu": NOT_NUMBERS + ["0", "5", "-5"],
        "--method": ["", "exactly", "nan"],
    }),
    (["audit", "--mechanism", "randomized_response_bool", "--params", RRB_PARAMS], {
        "--epsilon": NOT_NUMBERS + ["-5"],
        "--delta": ["nan", "inf", "-1", "1", "abc", ""],
        "--samples": NOT_NUMBERS + ["0", "3", "-5", "1e13"],
        "--beta": ["nan", "inf", "0", "1", "-1", "abc", ""],
        "--params": ["", "abc", "[]", "5", '{"prob": 2.0}', '{"prob": "x"}', "{bad"],
        "--mechanism": ["", "no_such_spec", "debias_randomized_response"],
        "--x": ["{bad", ""],
        "--inputs": ["[]", "[1]", "5", "{bad", "[1, 1]"],
    }),
    (["check", "-k", "randomized_response_bool::privacy.sound"], {
        "-k": ["", "   ", "no_such_check", "randomized_response_bool::precondition[nope]"],
        "--config": ["/nonexistent/gate.toml", ""],
        "--seed": ["abc", "nan", ""],
        "--max-paths": NOT_NUMBERS + ["0", "-5", "2.5", "1e10"],
        "--max-steps": NOT_NUMBERS + ["0", "-5", "1e13"],
        "--max-choices": NOT_NUMBERS + ["0", "-5"],
        "--time-limit": NOT_NUMBERS + ["0", "-5", "0.5", "1e7"],
        "--time-budget": ["60", "nan", ""],  # removed: refused, naming its replacements
    }),
    (["proofs"], {
        "--proofs-dir": ["/nonexistent/proofs", "/"],
        "--impl-dir": ["/nonexistent/impl"],
    }),
]

FILE_OPTIONS = {  # options naming an output file, per command prefix index
    0: ["--json"], 2: ["--json", "--plot"], 3: ["--json"], 4: ["--json"], 5: ["--json"], 6: ["--json", "--junit",
                                                                                          "--markdown"],
    7: ["--json", "--junit", "--markdown"],
}


@st.composite
def malformed(draw, unwritable: str):
    """(argv, option): a valid invocation with one option made malformed (or an unknown option added)."""
    index = draw(st.integers(0, len(COMMANDS) - 1))
    prefix, options = COMMANDS[index]
    kind = draw(st.sampled_from(["value", "value", "value", "file", "unknown"]))
    if kind == "file" and index in FILE_OPTIONS:
        option = draw(st.sampled_from(FILE_OPTIONS[index]))
        value = draw(st.sampled_from([unwritable + "/r.out", "", "/"]))
    elif kind == "unknown":
        option, value = draw(st.sampled_from(["--bogus", "--jsn", "--n_pub"])), "1"
    else:
        option = draw(st.sampled_from(sorted(options)))
        value = draw(st.sampled_from(options[option]))
    argv = [a for i, a in enumerate(prefix) if not (prefix[i - 1:i] == [option] or a == option)] \
        if option in prefix else list(prefix)
    if prefix[0] == "proofs":
        argv = ["proofs", option, value, "status"]
    else:
        argv = argv + [option, value]
    return argv, option


def _check(argv: list[str], option: str) -> None:
    result = CliRunner().invoke(main, argv)
    out = result.output
    assert result.exit_code == 2, (argv, result.exit_code, out[-600:])
    assert "Traceback" not in out, (argv, out)
    assert result.exception is None or isinstance(result.exception, SystemExit), (argv, repr(result.exception))
    assert option in out or option.lstrip("-") in out, (argv, out)
    assert " checks: " not in out and "0 checks" not in out, (argv, out)  # refused before the work, not after it


def _unwritable(tmp_path_factory) -> str:
    blocker = tmp_path_factory.mktemp("fuzz") / "a-file"
    blocker.write_text("")
    return str(blocker)


@pytest.fixture(scope="module")
def unwritable(tmp_path_factory):
    return _unwritable(tmp_path_factory)


def test_fuzz_cli_malformed_options_exit_2_naming_the_option(unwritable):
    @settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
    @given(malformed(unwritable))
    def run(case):
        _check(*case)

    run()


@pytest.mark.deep
def test_fuzz_cli_deep(unwritable):
    @settings(max_examples=600, deadline=None, suppress_health_check=list(HealthCheck))
    @given(malformed(unwritable))
    def run(case):
        _check(*case)

    run()


@pytest.mark.parametrize("index", range(len(COMMANDS)))
def test_every_listed_value_of_every_option_is_refused(index, unwritable):
    """Exhaustive over the table (not sampled): each malformed value of each option, once."""
    prefix, options = COMMANDS[index]
    for option, values in options.items():
        for value in values:
            if prefix[0] == "proofs":
                argv = ["proofs", option, value, "status"]
            else:
                argv = [a for i, a in enumerate(prefix) if a != option and prefix[i - 1:i] != [option]]
                argv += [option, value]
            _check(argv, option)
