"""Every printed reproduction runs and shows its finding.

A failing result's ``repro`` starts with a ``vetdp verify`` line. Run as printed (from the repository root, as the
findings registry's commands are), it must exit 1 and fail the same clause. The sources of failing results are the
findings registry's ``verify`` commands (third-party libraries: parameters outside vetdp's preconditions, NaN, a
project's spec, estimator rows) and the mutants of ``tests/mutants`` (named by MODULE:ATTR as a user would).

The default suite runs one representative of each kind; ``--deep`` runs every failing result of every registered
command and every mutant.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import shlex
import tomllib

import pytest
from _install_helpers import REPO

from tests.test_engine_mutants import ESTIMATOR_MUTANTS, MEASUREMENT_MUTANTS
from vetdp.cli.findings import run_in_process
from vetdp.engine.estimators import check_estimator_spec
from vetdp.engine.runner import RunConfig, check_measurement_spec
from vetdp.engine.spec import find_spec

REGISTRY = REPO / "proofs" / "findings" / "findings.toml"
_LIBRARY = {"opendp": "opendp", "pure-ldp": "pure_ldp", "multi-freq-ldpy": "multi_freq_ldpy",
            "diffprivlib": "diffprivlib"}


def _installed(argv: tuple[str, ...]) -> bool:
    lib = argv[argv.index("--impl") + 1] if "--impl" in argv else None
    return lib not in _LIBRARY or importlib.util.find_spec(_LIBRARY[lib]) is not None


def registry_commands() -> list[tuple[str, ...]]:
    """The distinct ``verify`` command lines of the findings registry (``vet`` rows reproduce in Python)."""
    seen: list[tuple[str, ...]] = []
    for f in tomllib.loads(REGISTRY.read_text(encoding="utf-8"))["finding"]:
        for c in f.get("command", []):
            argv = tuple(c["argv"])
            if "verify" in argv and argv not in seen:
                seen.append(argv)
    return seen


def run(argv: tuple[str, ...]):
    """``vetdp ARGV --json`` in this interpreter, from the repository root: (exit code, report)."""
    outcome = run_in_process(argv, cwd=REPO)
    assert outcome.doc is not None, outcome.error
    return outcome.exit_code, outcome.doc


def printed_argv(repro: str) -> tuple[str, ...]:
    """The vetdp command of a reproduction (its first line), split as a shell would."""
    words = shlex.split(repro.splitlines()[0])
    assert words[0] == "vetdp", repro
    return tuple(words[1:])


def assert_reproduces(result: dict) -> None:
    """Running ``result``'s reproduction exits 1 and fails the same clause."""
    assert result.get("repro"), f"{result['check']} failed without a reproduction"
    code, doc = run(printed_argv(result["repro"]))
    again = {r["check"] for r in doc["results"] if r["status"] == "fail"}
    assert code == 1 and result["check"] in again, (result["repro"].splitlines()[0], code, sorted(again))


def failing(argv: tuple[str, ...]) -> list[dict]:
    """The failing results of a registry command, one per distinct (clause, reproduction command)."""
    code, doc = run(argv)
    assert code == 1, argv
    out: dict[tuple, dict] = {}
    for r in doc["results"]:
        if r["status"] == "fail":
            out.setdefault((r["check"], (r.get("repro") or "").split("\n")[0]), r)
    return list(out.values())


# ---------------------------------------------------------------- the findings registry's commands

# one cheap representative of each kind of reproduction: parameters outside our preconditions accepted by the
# library (with the truth there), NaN, an object-valued bad row (the pinned example instead), an estimator row, a
# project's spec (--project), an opaque audit (--samples), a plain clause
REPRESENTATIVES = [
    (("verify", "randomized_response", "--impl", "pure-ldp", "--samples", "200", "--params",
      '{"categories": [0, 1], "prob": 0.75}'),
     ("privacy.sound[prob_below_one_over_t]", "precondition[prob_nan]")),
    (("verify", "randomized_response_bitvec", "--impl", "opendp", "--samples", "200", "--params",
      '{"k": 4, "m": 1, "f": 0.5, "constant_time": false}'),
     ("precondition[length_missing]", "privacy.outside[weight]")),
    (("verify", "debias_randomized_response", "--impl", "pure-ldp", "--params",
      '{"categories": ["c0", "c1"], "prob": 0.75, "dataset": ["c0"]}'), ("precondition[no_answers]",)),
    (("--project", "examples/oue", "verify", "oue", "--impl", "multi-freq-ldpy", "--samples", "200", "--params",
      '{"d": 2, "epsilon": 2.0, "constant_time": false}'), ("privacy.sound",)),
    (("verify", "randomized_response", "--impl", "opendp", "--samples", "2000", "--params",
      '{"categories": ["a", "b", "c"], "prob": 0.5}'), ("audit.distribution",)),
]


@pytest.mark.extras
@pytest.mark.parametrize("argv,clauses", REPRESENTATIVES, ids=[c[0] for _, c in REPRESENTATIVES])
def test_registry_reproduction_reproduces(argv, clauses):
    if not _installed(argv):
        pytest.skip("the library is not installed")
    assert argv in registry_commands(), "a representative must be a registered command"
    by_clause = {r["check"]: r for r in failing(argv)}
    for clause in clauses:
        assert clause in by_clause, (clause, sorted(by_clause))
        assert_reproduces(by_clause[clause])


@pytest.mark.deep
@pytest.mark.extras
@pytest.mark.parametrize("argv", registry_commands(), ids=lambda a: " ".join(a)[:80])
def test_every_registry_reproduction_reproduces(argv):
    if not _installed(argv):
        pytest.skip("the library is not installed")
    results = failing(argv)
    assert results
    done: set[str] = set()
    for r in results:  # each printed command once (several clauses may share it; each is checked in its report)
        line = r["repro"].splitlines()[0]
        if (r["check"], line) not in done:
            done.add((r["check"], line))
            assert_reproduces(r)


# ---------------------------------------------------------------- the mutants

CFG = RunConfig(strict_messages=False, max_examples=8)


def _ref(mutant) -> str:
    return f"{mutant.__module__}:{mutant.__name__}"


def mutant_result(spec_name: str, mutant, clause: str) -> dict:
    """The failing ``clause`` of ``mutant`` as the run reports it, naming the mutant as a user would."""
    spec = find_spec(spec_name)
    cfg = dataclasses.replace(CFG, impl_ref=_ref(mutant))
    if hasattr(spec, "mechanism"):
        results = check_estimator_spec(spec, cfg=cfg, estimator=mutant)
    else:
        results = check_measurement_spec(spec, ctor=mutant, cfg=cfg)
    found = {r.check: r for r in results if r.status.is_failure}
    assert clause in found, sorted(found)
    return found[clause].to_json()


MUTANTS = MEASUREMENT_MUTANTS + ESTIMATOR_MUTANTS
# one per kind of clause: a map below the loss, a precondition, the domain, timing, randomness, an estimator
MUTANT_REPRESENTATIVES = ["missing_t_minus_1", "accepts_prob_below_one_over_t", "domain_unchecked",
                          "ignores_constant_time", "randomness_outside_primitives", "debias_rr_uses_one_over_t"]


SLOW_REPRESENTATIVES = {"domain_unchecked", "ignores_constant_time"}  # 15 to 25 s each: run by .ci/run (-m slow)


@pytest.mark.parametrize("spec_name,mutant,clause", [
    pytest.param(*m, id=f"{m[0]}-{m[1].__name__}-{m[2]}",
                 marks=[pytest.mark.slow] if m[1].__name__ in SLOW_REPRESENTATIVES else [])
    for m in MUTANTS if m[1].__name__ in MUTANT_REPRESENTATIVES])
def test_mutant_reproduction_reproduces(spec_name, mutant, clause):
    r = mutant_result(spec_name, mutant, clause)
    assert printed_argv(r["repro"])[:4] == ("verify", spec_name, "--impl", _ref(mutant))
    assert_reproduces(r)


@pytest.mark.deep
@pytest.mark.parametrize("spec_name,mutant,clause", MUTANTS, ids=lambda x: getattr(x, "__name__", None))
def test_every_mutant_reproduction_reproduces(spec_name, mutant, clause):
    assert_reproduces(mutant_result(spec_name, mutant, clause))


def test_params_outside_preconditions_are_a_precondition_row_with_the_truth():
    """Parameters our spec rejects, given to code that accepts them: a precondition row of their own and the exact
    truth there, never the exit 2 of a usage error."""
    code, doc = run(("verify", "randomized_response", "--impl", _ref(MUTANTS[5][1]), "--params",
                     '{"categories": [0, 1, 2], "prob": 0.3333333333333333}'))
    rows = {r["check"]: r for r in doc["results"]}
    assert MUTANTS[5][1].__name__ == "accepts_prob_below_one_over_t" and code == 1
    assert rows["precondition[params]"]["status"] == "fail"
    sound = rows["privacy.sound[params]"]  # its map rounds ln(p(t−1)/(1−p)) < 0 up to 0.0: below the loss 2^-53·…
    assert sound["status"] == "fail" and "map(1) = 0.0 is below the exact loss 8.3266726846886741e-17" in \
        sound["message"]
    assert "prob=0.3333333333333333 must be in [1/3, 1)" in rows["search.coverage"]["message"]


def test_params_outside_preconditions_of_our_own_constructor_are_a_usage_error():
    outcome = run_in_process(("verify", "randomized_response", "--impl", "vetdp.impl.randomized_response:"
                              "make_randomized_response", "--params", '{"categories": [0, 1, 2], "prob": NaN}'),
                             cwd=REPO)
    assert outcome.exit_code == 2 and "prob=nan must be" in outcome.error
