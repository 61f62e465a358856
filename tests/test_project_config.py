"""[tool.vetdp] project configuration, --project, the public API (vetdp.api) and user-registered constants/lemmas."""

import json
import shutil
import sys
from fractions import Fraction
from pathlib import Path

import pytest
from click.testing import CliRunner

import vetdp.api as api
from vetdp.cli import main
from vetdp.project import ProjectError, find_project, load_project

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "oue"


def invoke(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def write(tmp_path: Path, table: str) -> Path:
    (tmp_path / "pyproject.toml").write_text("[tool.vetdp]\n" + table)
    return tmp_path / "pyproject.toml"


# ------------------------------------------------------------------ the table

def test_this_repository_declares_its_own_table_without_shadowing():
    project = find_project(REPO)
    assert project.specs == ("vetdp.specs",) and project.proofs_dir == REPO / "proofs"
    assert project.pythonpath == ()  # the local vetdp/ must never be put ahead of the installed package
    assert project.gate_source.endswith("ci/gate.toml") and "vetdp.accounting.provider:check_accounting" in \
        project.providers


@pytest.mark.parametrize("table,needle", [
    ('spces = ["a"]\n', "'spces' is unknown"),
    ("specs = 5\n", "specs=5"),
    ('specs = ["a b"]\n', "'a b'"),
    ('providers = ["mod.no_colon"]\n', "MODULE:FUNCTION"),
    ('pythonpath = ["missing"]\n', "is not a directory"),
    ('gate = "nope.toml"\n', "no such file"),
    ('[tool.vetdp.gate]\nadvisroy = []\n', "'advisroy'"),
    ('[tool.vetdp.gate]\nloose_map = "maybe"\n', "loose_map='maybe'"),
])
def test_a_malformed_table_is_rejected_by_name(tmp_path, table, needle):
    with pytest.raises(ProjectError, match=None) as e:
        load_project(write(tmp_path, table))
    assert needle in str(e.value)


def test_gate_settings_come_from_an_inline_table_and_reach_check(tmp_path):
    project = load_project(write(tmp_path, '[tool.vetdp.gate]\nadvisory = ["x::*"]\nloose_map = "warn"\n'))
    assert project.gate == {"advisory": ["x::*"], "loose_map": "warn"}


def _forget_example_modules():
    for name in [m for m in sys.modules if m == "oue_example" or m.startswith("oue_example.")]:
        del sys.modules[name]


@pytest.fixture
def oue_copy(tmp_path):
    """A fresh copy of examples/oue; its modules are imported from the copy (not from an earlier test's)."""
    dest = tmp_path / "oue"
    shutil.copytree(EXAMPLE, dest, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
    _forget_example_modules()
    yield dest
    _forget_example_modules()


def test_check_project_option_checks_the_users_specs_not_ours(oue_copy, tmp_path):
    out = tmp_path / "r.json"
    result = invoke("check", "--project", str(oue_copy), "-k", "oue::precondition", "--json", str(out))
    assert result.exit_code == 0, result.output
    names = {(r["spec"], r["check"]) for r in json.loads(out.read_text())["results"]}
    assert ("oue", "precondition[epsilon_nan]") in names and all(s == "oue" for s, _ in names)


@pytest.mark.slow  # 9 to 15 s: run by .ci/run (-m slow --deep)
def test_check_project_gate_makes_a_failing_clause_advisory(oue_copy, tmp_path):
    spec = oue_copy / "src" / "oue_example" / "specs" / "oue.py"
    spec.write_text(spec.read_text().replace('_bad("d_one", ValueError, ("d",), d=1)',
                                             '_bad("d_one", ValueError, ("d",), d=2)'))  # d = 2 is accepted
    assert invoke("check", "--project", str(oue_copy), "-k", "oue::precondition[d_one]").exit_code == 1
    pyproject = oue_copy / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace("advisory = []", 'advisory = ["oue::precondition*"]'))
    assert invoke("check", "--project", str(oue_copy), "-k", "oue::precondition[d_one]").exit_code == 0


def test_no_table_says_what_to_add(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    result = invoke("check", "--project", str(tmp_path))
    assert result.exit_code == 2 and "[tool.vetdp]" in result.output and "specs = " in result.output


def test_a_table_without_specs_says_what_to_add(tmp_path):
    write(tmp_path, 'proofs = "proofs"\n')
    result = invoke("check", "--project", str(tmp_path))
    assert result.exit_code == 2 and "declares no specs" in result.output and "specs = [" in result.output


@pytest.mark.parametrize("argv", [["verify", "randomized_response"], ["proofs", "status"]])
def test_every_command_meeting_a_project_without_specs_exits_2_not_1(tmp_path, argv):
    # exit 1 means "violation found"; a project that cannot be used is a usage error
    write(tmp_path, 'proofs = "proofs"\n')
    result = CliRunner().invoke(main, ["--project", str(tmp_path), *argv])
    assert result.exit_code == 2 and "declares no specs" in result.output, result.output


def test_a_spec_module_that_cannot_be_imported_is_a_usage_error(tmp_path):
    write(tmp_path, 'specs = ["no_such_module_xyz"]\n')
    result = invoke("check", "--project", str(tmp_path))
    assert result.exit_code == 2 and "'no_such_module_xyz'" in result.output and "Traceback" not in result.output


def test_proofs_status_uses_the_project(oue_copy):
    result = invoke("proofs", "--project", str(oue_copy), "status")
    assert result.exit_code == 0 and "oue" in result.output and "up to date" in result.output


# ------------------------------------------------------------------ the public API

def test_api_all_is_exactly_the_public_names_and_each_resolves():
    public = {n for n in dir(api) if not n.startswith("_") and not isinstance(getattr(api, n), type(api))
              and n != "annotations"}  # dir(): the harness names load on first use (PEP 562)
    assert set(api.__all__) == public and len(api.__all__) == len(set(api.__all__))
    for name in api.__all__:
        assert getattr(api, name) is not None


def test_a_registered_constant_gets_its_obligations_derived():
    from vetdp.obligations.check import run_obligation

    eps = api.var("eps")
    # an upper bound of 1/(e^eps + 1): every step in the conservative direction
    good = api.register_constant("testproj.good", api.ONE.inf_div(eps.neg_inf_exp().neg_inf_add(api.ONE)),
                                 ranges={"eps": (2**-20, 50.0)}, result=(0, 0.5))
    # the same with the reciprocal rounded down: not an upper bound
    api.register_constant("testproj.wrong", api.ONE.neg_inf_div(eps.neg_inf_exp().neg_inf_add(api.ONE)),
                          ranges={"eps": (2**-20, 50.0)})
    assert good.to_float({"eps": 1.0}) >= 0.26894142136999510
    ids = api.constant_obligations("testproj.good")
    assert "testproj.good.sound" in ids and "testproj.good.range" in ids and "contract.neg_inf_exp" in ids
    assert run_obligation("testproj.good.sound").status == "proved"
    assert run_obligation("testproj.wrong.sound").status == "refuted"


@pytest.mark.parametrize("kwargs,needle", [
    ({"cid": "contract.x"}, "reserved"),
    ({"cid": "randomized_response.epsilon"}, "reserved"),
    ({"cid": "bad id"}, "dotted identifiers"),
    ({"ranges": {}}, "missing ['x']"),
    ({"ranges": {"x": (1.0, 0.5)}}, "lo <= hi"),
    ({"ranges": {"x": (0.5, float("inf"))}}, "finite"),
    ({"bound": "up"}, "'upper' or 'lower'"),
])
def test_register_constant_rejects_bad_arguments(kwargs, needle):
    args = {"cid": "testproj.bad", "expr": api.var("x").inf_ln(), "ranges": {"x": (0.5, 2.0)}, **kwargs}
    with pytest.raises((ValueError, TypeError)) as e:
        api.register_constant(args.pop("cid"), args.pop("expr"), **args)
    assert needle in str(e.value)


def test_register_constant_refuses_a_second_definition_under_one_id():
    api.register_constant("testproj.once", api.var("x").inf_ln(), ranges={"x": (1, 2)})
    api.register_constant("testproj.once", api.var("x").inf_ln(), ranges={"x": (1, 2)})  # the same: accepted
    with pytest.raises(ValueError, match="already registered"):
        api.register_constant("testproj.once", api.var("x").neg_inf_ln(), ranges={"x": (1, 2)})


def test_a_user_lemma_is_registered_and_run_by_id():
    from vetdp.obligations.lemmas import run_lemma

    @api.lemma("testproj.half", "1/2 + 1/2 = 1")
    def _half():
        ok = Fraction(1, 2) + Fraction(1, 2) == 1
        return ("proved" if ok else "refuted", "exact", "sum is 1")

    assert run_lemma("testproj.half").passed
    with pytest.raises(ValueError, match="already registered"):
        @api.lemma("testproj.half", "another")
        def _other():
            return "refuted", "exact", ""


def test_global_project_option_reaches_verify(oue_copy):
    result = invoke("--project", str(oue_copy), "verify", "oue", "--impl", "oue_example.oue:make_oue",
                    "--max-examples", "2")
    assert result.exit_code == 0, result.output
    assert "oue" in result.output and "randomized_response" not in result.output


@pytest.mark.parametrize("start", [5, 2.5, b"x"])
def test_find_project_of_a_non_path_is_a_type_error_naming_start(start):
    """Issue 24: find_project(5) raised AttributeError ('int' object has no attribute 'resolve')."""
    with pytest.raises(TypeError, match=r"start=.* must be a directory"):
        find_project(start)


def test_find_project_accepts_a_str(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.vetdp]\nspecs = ["x"]\n')
    assert find_project(str(tmp_path)).root == tmp_path.resolve()
