"""Work spread over Dask gives the serial results (vetdp.distributed, audits with --workers)."""

from __future__ import annotations

import json
import textwrap

import pytest
from click.testing import CliRunner

from vetdp.audit.driver import run_audit
from vetdp.cli import main
from vetdp.distributed import SerialRunner, chunk_seed, task_runner
from vetdp.impl import make_randomized_response_bool


def test_serial_runner_keeps_order_and_reports_progress():
    seen = []
    assert SerialRunner().map(lambda v: v * v, [3, 1, 2], progress=seen.append) == [9, 1, 4]
    assert seen == [1, 1, 1]


@pytest.mark.parametrize("kwargs,match", [({"workers": 0}, "workers=0"), ({"workers": True}, "workers=True"),
                                          ({"workers": 2, "scheduler": "tcp://x:1"}, "not both")])
def test_task_runner_rejects_bad_options(kwargs, match):
    with pytest.raises(ValueError, match=match), task_runner(**kwargs):
        pass


def test_chunk_seed_names_the_piece():
    assert chunk_seed(7, "audit", 0, 1, 2) == "7/audit/0/1/2" != chunk_seed(7, "audit", 0, 1, 3)


def test_seeded_audit_is_reproducible_and_chunking_changes_nothing_but_the_streams():
    m = make_randomized_response_bool(0.75)
    a = run_audit(m, [True, False], 1.0, samples=20_000, seed=5, chunk=3000)
    b = run_audit(m, [True, False], 1.0, samples=20_000, seed=5, chunk=3000)
    c = run_audit(m, [True, False], 1.0, samples=20_000, seed=6, chunk=3000)
    assert (a.count_p, a.count_q, a.epsilon_lower) == (b.count_p, b.count_q, b.epsilon_lower)
    assert (a.count_p, a.count_q) != (c.count_p, c.count_q)


@pytest.fixture(scope="module")
def dask_runner():
    pytest.importorskip("distributed")
    with task_runner(workers=2) as runner:
        yield runner


def test_dask_audit_equals_the_serial_audit_for_the_same_seed(dask_runner):
    m = make_randomized_response_bool(0.75)
    serial = run_audit(m, [True, False], 1.0, samples=40_000, seed=11, chunk=5000)
    spread = run_audit(m, [True, False], 1.0, samples=40_000, seed=11, chunk=5000, runner=dask_runner)
    assert "2 workers" in dask_runner.description
    assert dataclass_fields(serial) == dataclass_fields(spread)


def dataclass_fields(result) -> dict:
    return {k: repr(v) for k, v in vars(result).items()}


def test_dask_ships_code_loaded_from_a_file_the_workers_cannot_import(tmp_path, dask_runner):
    path = tmp_path / "my_sampler_unimportable.py"
    path.write_text(textwrap.dedent("""
        import numpy as np
        from vetdp.sampling import sample_bernoulli_batch

        def sampler(x, n):
            return np.asarray(x) ^ sample_bernoulli_batch(0.25, n)
    """))
    from vetdp.cli.verify import load_callable

    fn = load_callable(f"{path}:sampler")
    serial = run_audit(fn, [True, False], 2.0, samples=8_000, seed=3, chunk=1000)
    spread = run_audit(fn, [True, False], 2.0, samples=8_000, seed=3, chunk=1000, runner=dask_runner)
    assert dataclass_fields(serial) == dataclass_fields(spread)


def test_cli_audit_with_workers_reports_as_the_serial_run(tmp_path):
    pytest.importorskip("distributed")
    args = ["audit", "--mechanism", "randomized_response_bool", "--params", '{"prob": 0.75}', "--samples", "20000",
            "--seed", "4"]
    reports = []
    for extra in ([], ["--workers", "2"]):
        out = tmp_path / f"r{len(reports)}.json"
        res = CliRunner().invoke(main, [*args, *extra, "--json", str(out)])
        assert res.exit_code == 0, res.output
        reports.append(json.loads(out.read_text())["results"][0])
    for r in reports:
        r.pop("seconds", None)
    assert reports[0] == reports[1]


def test_cli_audit_workers_and_scheduler_together_is_a_usage_error():
    res = CliRunner().invoke(main, ["audit", "--mechanism", "randomized_response_bool", "--params", '{"prob": 0.75}',
                                    "--workers", "2", "--scheduler", "tcp://127.0.0.1:1"])
    assert res.exit_code == 2 and "not both" in res.output


@pytest.mark.parametrize("impl", ["vetdp.impl.randomized_response:make_randomized_response",
                                  "tests.mutants.unseen_rr:label_shifted_by_one"])
def test_cli_verify_with_workers_reports_as_the_serial_run(tmp_path, impl):
    pytest.importorskip("distributed")
    args = ["verify", "randomized_response", "--impl", impl, "--max-examples", "12"]
    reports = []
    for extra in ([], ["--workers", "2"]):
        out = tmp_path / f"v{len(reports)}.json"
        res = CliRunner().invoke(main, [*args, *extra, "--json", str(out)])
        assert res.exit_code in (0, 1), res.output
        results = json.loads(out.read_text())["results"]
        for r in results:
            r.pop("seconds", None)
        reports.append((res.exit_code, results))
    assert reports[0] == reports[1]
    assert reports[0][0] == (0 if impl.startswith("vetdp.") else 1)
