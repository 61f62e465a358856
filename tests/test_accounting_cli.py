"""``vetdp account`` and ``vetdp plot``: tables, JSON, exit codes, figure files."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from vetdp.accounting.curves import rappor_curve
from vetdp.accounting.pld import ExactPLD
from vetdp.cli import main


def test_account_rappor_json_marks_exact_and_tightest(tmp_path):
    out = tmp_path / "a.json"
    res = CliRunner().invoke(main, ["account", "rappor", "--epsilon", "1", "--k", "2", "--compose", "100",
                                    "--delta", "1e-6", "--json", str(out)])
    assert res.exit_code == 0, res.output
    doc = json.loads(out.read_text())
    assert doc["schema_version"] == 1 and doc["exact"] == "pld" and doc["tightest"] == "pld"
    methods = {m["method"]: m for m in doc["methods"]}
    assert set(methods) == {"simple", "advanced", "zcdp", "rdp-mironov", "rdp", "pld"}
    assert methods["pld"]["epsilon"] == ExactPLD(rappor_curve(1.0, k=2), 100).epsilon(1e-6).epsilon
    assert methods["simple"]["epsilon"] >= 100.0
    assert "exact" in res.output and "tightest" in res.output


def test_account_categorical_rr_runs():
    res = CliRunner().invoke(main, ["account", "rr", "--epsilon", "2", "--categories", "5", "--compose", "20"])
    assert res.exit_code == 0, res.output
    assert "upper bound" in res.output  # ρ is not tight for t > 2


@pytest.mark.parametrize("args,match", [
    (["rr", "--epsilon", "-1"], "'--epsilon': -1.0 must be in (0, 700]"),
    (["rr", "--epsilon", "nan"], "'--epsilon': nan must be in (0, 700]"),
    (["rr", "--epsilon", "1", "--categories", "1"], "'--categories': 1 must be in [2, "),
    (["rappor", "--epsilon", "1", "--compose", "0"], "'--compose': 0 must be in [1, inf]"),
    (["rappor", "--epsilon", "1", "--compose", "1e12"], "--compose: 1000000000000 must be <= 500000000 for rappor"),
    (["rr", "--epsilon", "1", "--compose", "1000000001"], "--compose: 1000000001 must be <= 1000000000 for rr"),
    (["rr", "--epsilon", "1", "--categories", "4", "--compose", "1000001"],
     "--compose: 1000001 must be <= 1000000 for rr with --categories=4"),
    (["k-rappor", "--epsilon", "1", "--k", "4", "--compose", "125000001"],
     "--compose: 125000001 must be <= 125000000 for k-rappor with --k=4"),
    (["rappor", "--epsilon", "1", "--delta", "2"], "'--delta': 2.0 must be in (0, 1)"),
    (["rr", "--epsilon", "1", "--k", "3"], "--k: 3 applies to k-rappor only"),
])
def test_account_bad_options_exit_2_with_message(args, match):
    res = CliRunner().invoke(main, ["account", *args])
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert match in res.output


def test_account_unknown_mechanism_is_usage_error():
    assert CliRunner().invoke(main, ["account", "laplace", "--epsilon", "1"]).exit_code == 2


def test_plot_writes_png_and_svg(tmp_path, monkeypatch):
    import vetdp.accounting.plots as plots

    original = plots.figure_composition
    monkeypatch.setattr(plots, "figure_composition", lambda: original(max_k=20))  # fewer points: fast
    res = CliRunner().invoke(main, ["plot", "--out", str(tmp_path / "figs")])
    assert res.exit_code == 0, res.output
    names = sorted(p.name for p in (tmp_path / "figs").iterdir())
    assert names == sorted(f"{s}.{e}" for s in ("rappor-zcdp", "rappor-zcdp-composition", "rappor-mae")
                           for e in ("png", "svg"))
    assert (tmp_path / "figs" / "rappor-mae.png").read_bytes()[:4] == b"\x89PNG"
    assert "<svg" in (tmp_path / "figs" / "rappor-zcdp.svg").read_text()


def test_compose_limits_follow_the_binary_steps():
    from vetdp.cli.account import compose_limit

    assert compose_limit("rr", 2, 1) == 10**9
    assert compose_limit("rr", 3, 1) == 10**6
    assert compose_limit("rappor", 2, 1) == 5 * 10**8  # two binary steps a run
    assert compose_limit("k-rappor", 2, 10**5) == 5000  # 2k steps a run


def test_account_rappor_at_a_million_runs_is_exact(tmp_path):
    out = tmp_path / "a.json"
    res = CliRunner().invoke(main, ["account", "rappor", "--epsilon", "1", "--compose", "1000000",
                                    "--json", str(out)])
    assert res.exit_code == 0, res.output
    methods = {m["method"]: m for m in json.loads(out.read_text())["methods"]}
    exact = ExactPLD(rappor_curve(1.0), 10**6).epsilon(1e-6)
    assert methods["pld"]["epsilon"] == exact.epsilon and methods["pld"]["tightest"]
    assert exact.epsilon_lower < methods["rdp"]["epsilon"]


def test_account_a_bound_that_overflows_float64_is_inf_not_an_error(tmp_path):
    """Issue 24: account rappor --epsilon 700 --compose 1000 raised RoundingOverflowError from advanced composition
    (n·ε0·(e^ε0 − 1) is about 2^1029); that bound is now inf (null in the strict JSON), the others are computed."""
    out = tmp_path / "a.json"
    res = CliRunner().invoke(main, ["account", "rappor", "--epsilon", "700", "--compose", "1000", "--json", str(out)])
    assert res.exit_code == 0, res.output
    doc = json.loads(out.read_text(), parse_constant=lambda c: pytest.fail(f"{c} in JSON"))
    methods = {m["method"]: m for m in doc["methods"]}
    assert methods["advanced"]["epsilon"] is None and "overflows float64" in methods["advanced"]["note"]
    assert doc["tightest"] == "pld" and 699999 < methods["pld"]["epsilon"] <= methods["simple"]["epsilon"]
