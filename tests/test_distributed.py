"""Work spread over Dask gives the serial results (vetdp.distributed, audits with --workers)."""

from __future__ import annotations

import json
import os
import textwrap

import pytest
from click.testing import CliRunner

from vetdp.audit.driver import run_audit
from vetdp.cli import main
from vetdp.distributed import SerialRunner, TaskProcessDied, chunk_seed, split, task_runner
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


@pytest.mark.parametrize("impl", [pytest.param("vetdp.impl.randomized_response:make_randomized_response",
                                               marks=pytest.mark.slow),  # ~13 s
                                  "tests.mutants.unseen_rr:label_shifted_by_one"])
def test_cli_verify_with_workers_reports_as_the_serial_run(tmp_path, impl, address):
    args = ["verify", "randomized_response", "--impl", impl, "--max-examples", "12"]
    reports = []
    for extra in ([], ["--scheduler", address]):
        out = tmp_path / f"v{len(reports)}.json"
        res = CliRunner().invoke(main, [*args, *extra, "--json", str(out)])
        assert res.exit_code in (0, 1), res.output
        results = json.loads(out.read_text())["results"]
        for r in results:
            r.pop("seconds", None)
        reports.append((res.exit_code, results))
    assert reports[0] == reports[1]
    assert reports[0][0] == (0 if impl.startswith("vetdp.") else 1)


# ------------------------------------------------------------------ handles, pieces, task processes

def test_split_keeps_order_and_covers_every_item_once():
    items = list(range(10))
    pieces = split(items, 4)
    assert [len(p) for p in pieces] == [3, 3, 2, 2] and [x for p in pieces for x in p] == items
    assert split(items, 50) == [[x] for x in items] and split([], 3) == []
    with pytest.raises(ValueError, match="pieces=0"):
        split(items, 0)


def test_serial_handles_compute_lazily_in_the_order_asked():
    calls = []

    def fn(v):
        calls.append(v)
        if v == 2:
            raise KeyError(v)
        return v * 10

    hs = SerialRunner().handles(fn, [1, 2, 3])
    assert calls == []
    assert hs[2]() == 30 and hs[0]() == 10 and hs[0]() == 10 and calls == [3, 1]
    with pytest.raises(KeyError):
        hs[1]()


def _spin_under_a_limit(seconds):
    """A task that spins until a SIGALRM time limit (main thread only) stops it; gives up by itself 60 s later."""
    import threading
    import time

    from vetdp.engine.timeout import DeadlineExceeded, deadline

    main = threading.current_thread() is threading.main_thread()
    give_up = time.monotonic() + seconds + 60
    try:
        with deadline(seconds):
            while time.monotonic() < give_up:
                pass
    except DeadlineExceeded as e:
        return main, str(e)
    return main, "the limit never fired"


def test_dask_tasks_run_where_the_time_limit_holds(dask_runner):
    assert dask_runner.map(_spin_under_a_limit, [0.3, 0.4]) == [
        (True, "time limit of 0.3 s exceeded"), (True, "time limit of 0.4 s exceeded")]


def _in_main_thread(_):
    import threading

    return threading.current_thread() is threading.main_thread()


def _in_main_thread_unbudgeted(_):
    import threading

    return threading.current_thread() is threading.main_thread()


def test_dask_work_marked_without_budgets_runs_in_the_worker_thread(dask_runner):
    from vetdp.distributed import without_budgets

    assert dask_runner.map(_in_main_thread, [0]) == [True]
    assert dask_runner.map(without_budgets(_in_main_thread_unbudgeted), [0]) == [False]


def _exit_hard(code):
    os._exit(code)


def _raise_value_error(v):
    raise ValueError(f"v={v!r} must be in [0, 1]")


def test_dask_task_process_that_dies_is_reported_and_replaced(dask_runner):
    with pytest.raises(TaskProcessDied, match="exited with status 3"):
        dask_runner.map(_exit_hard, [3])
    with pytest.raises(ValueError, match=r"v=7 must be in \[0, 1\]"):  # the task's own exception, as serial raises it
        dask_runner.handles(_raise_value_error, [7])[0]()
    assert dask_runner.map(abs, [-4, 5]) == [4, 5]


# ------------------------------------------------------------------ vetdp check on Dask

def _json_results(res, path):
    results = json.loads(path.read_text())["results"]
    for r in results:
        r.pop("seconds", None)
    return res.exit_code, results


def _serial_and_dask(tmp_path, command, args, address):
    out = []
    for extra in ([], ["--scheduler", address]):
        path = tmp_path / f"r{len(out)}.json"
        res = CliRunner().invoke(command, [*args, *extra, "--json", str(path)])
        assert res.exit_code in (0, 1, 2), res.output  # 2: a check stopped by the time limit
        out.append(_json_results(res, path))
    return out


@pytest.fixture(scope="module")
def address(dask_runner):
    return dask_runner.client.scheduler.address


@pytest.mark.slow  # 9 to 15 s: run by .ci/run (-m slow --deep)
def test_check_on_dask_reports_as_the_serial_check_deep(tmp_path, address):
    from vetdp.cli.check import check

    serial, spread = _serial_and_dask(tmp_path, check, ["--deep", "-k", "debias_randomized_response"], address)
    assert serial == spread and serial[0] == 0
    assert {r["spec"] for r in serial[1]} == {"debias_randomized_response", "debias_randomized_response_bitvec",
                                             "debias_randomized_response_bitvec_frequencies"}


def test_check_on_dask_finds_the_same_failures_with_the_same_witnesses(tmp_path, address):
    """A project whose mechanism is wrong (a boolean RR whose map claims 1.5 ε: loose) fails the same way on Dask,
    deep sweep and shrunk witness included."""
    from vetdp.cli.check import check

    project = tmp_path / "proj"
    (project / "myspecs").mkdir(parents=True)
    (project / "myspecs" / "__init__.py").write_text("")
    (project / "myspecs" / "bool_mutant.py").write_text(textwrap.dedent("""
        import dataclasses
        from vetdp.specs.randomized_response_bool import SPECS as _BOOL

        SPECS = [dataclasses.replace(_BOOL[0], name="bool_mutant",
                                     constructor_ref="tests.mutants.unseen_other:bool_map_one_and_a_half_epsilon")]
    """))
    (project / "pyproject.toml").write_text(textwrap.dedent("""
        [tool.vetdp]
        specs = ["myspecs"]
        pythonpath = ["."]
    """))
    serial, spread = _serial_and_dask(tmp_path, check, ["--project", str(project), "--deep", "-k", "bool_mutant::"],
                                      address)
    assert serial == spread and serial[0] == 1
    failed = {r["check"]: r for r in serial[1] if r["status"] == "fail"}
    assert "privacy.tight" in failed and failed["privacy.tight"]["witness"], sorted(failed)
    coverage = next(r for r in serial[1] if r["check"] == "search.coverage")
    assert coverage["status"] == "pass" and coverage["witness"]["parameter_sets"] > 25  # the deep sweep ran


def test_check_piece_on_a_machine_without_the_project_says_so(tmp_path):
    from vetdp.cli.check import _project_on_worker
    from vetdp.project import bundled_project

    with pytest.raises(FileNotFoundError, match="same path on every machine"), \
            _project_on_worker(bundled_project(), (tmp_path / "nowhere",)):
        pass


def test_check_workers_and_scheduler_together_is_a_usage_error():
    from vetdp.cli.check import check

    res = CliRunner().invoke(check, ["-k", "x", "--workers", "2", "--scheduler", "tcp://127.0.0.1:1"])
    assert res.exit_code == 2 and "not both" in res.output


# ------------------------------------------------------------------ the time limit on Dask: verify of a hanging mutant

@pytest.mark.slow  # ~28 s: waits out the safety-net time limit on Dask; .ci/run runs it (-m slow)
def test_verify_of_code_that_never_returns_is_stopped_on_dask_as_serially(tmp_path, address):
    serial, spread = _serial_and_dask(tmp_path, main, [
        "verify", "randomized_response", "--impl", "tests.mutants.unseen_rr:linear_search_never_ends",
        "--max-examples", "2", "--time-limit", "2"], address)
    assert serial == spread and serial[0] == 2  # stopped by the time limit: no verdict, exit 2
    stopped = [r for r in serial[1] if r["status"] == "stopped" and r["message"].startswith("stopped: time")]
    assert stopped, [(r["check"], r["status"]) for r in serial[1]]


# ------------------------------------------------------------------ buffling grids on Dask

@pytest.mark.parametrize("args", [["one-bf", "--n-bit", "9", "--flip-prob", "0.2", "--delta", "0.01"],
                                  ["one-bf", "--n-bit", "1000", "--flip-prob", "0.1", "--y-d", "3", "--y-d", "500"]],
                         ids=["exact", "certified"])
def test_buffling_one_bf_on_dask_gives_the_serial_json(tmp_path, address, args):
    from vetdp.cli.buffling import buffling

    docs = []
    for extra in ([], ["--scheduler", address]):
        path = tmp_path / f"b{len(docs)}.json"
        res = CliRunner().invoke(buffling, [*args, *extra, "--json", str(path)])
        assert res.exit_code == 0, res.output
        docs.append(json.loads(path.read_text()))
    assert docs[0] == docs[1]
    if args[2] == "9":
        assert len(docs[0]["eps_hockey"]) == 9 and docs[0]["max"]["pure"] > 0
    else:
        assert {r["y_d"] for r in docs[0]["ratio"]} == {3, 500} and len(docs[0]["ratio"]) > 10


def test_buffling_vet_on_dask_reports_as_serial_with_code_from_a_file(tmp_path, address):
    from vetdp.cli.buffling import buffling

    user = tmp_path / "my_ratio_unimportable.py"
    user.write_text(textwrap.dedent("""
        from fractions import Fraction

        def ratio(y_d, y_x, p, m):
            q = 1 - Fraction(p)
            r = Fraction(1)  # wrong on purpose away from the middle: R(y_x | y_d) is not 1 there
            return float(r if y_x * 2 == m else q / Fraction(p))
    """))
    serial, spread = _serial_and_dask(tmp_path, buffling, ["vet", "--impl", f"{user}:ratio", "--quick",
                                                           "--scales", "10,40"], address)
    assert serial == spread and serial[0] == 1
    assert [r["check"] for r in serial[1]] == ["ratio", "ratio"] and all(r["status"] == "fail" for r in serial[1])


# ------------------------------------------------------------------ the multi-machine recipe of docs/dask.md

def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow  # ~15 s: a scheduler and workers as processes; .ci/run runs it (-m slow)
def test_the_documented_recipe_runs_as_separate_processes_over_tcp(tmp_path):
    """docs/dask.md's steps 2–4 as their own OS processes (a scheduler, a worker process with two single-thread
    worker processes, vetdp as a client), talking over TCP as they would between machines; the report equals the
    serial run's."""
    import shutil
    import subprocess
    import sys
    import time

    pytest.importorskip("distributed")
    dask = shutil.which("dask", path=os.path.dirname(sys.executable))
    vetdp = shutil.which("vetdp", path=os.path.dirname(sys.executable))
    assert dask and vetdp, "the dask and vetdp commands are installed next to python (the [dask] extra)"
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    logs = tmp_path / "logs"
    logs.mkdir()
    procs = [subprocess.Popen([dask, "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"],
                              stdout=open(logs / "scheduler", "w"), stderr=subprocess.STDOUT)]
    try:
        time.sleep(1)
        procs.append(subprocess.Popen([dask, "worker", address, "--nworkers", "2", "--nthreads", "1",
                                       "--no-dashboard"], stdout=open(logs / "worker", "w"),
                                      stderr=subprocess.STDOUT, cwd=os.getcwd()))
        from distributed import Client

        with Client(address, timeout=300) as client:
            client.wait_for_workers(2, timeout=600)
        reports = []
        for extra in ([], ["--scheduler", address]):
            out = tmp_path / f"r{len(reports)}.json"
            res = subprocess.run([vetdp, "verify", "randomized_response_bool", "--impl",
                                  "vetdp.impl.randomized_response_bool:make_randomized_response_bool",
                                  "--max-examples", "8", *extra, "--json", str(out)],
                                 capture_output=True, text=True, timeout=3600)
            assert res.returncode == 0, res.stdout + res.stderr + (logs / "worker").read_text()
            results = json.loads(out.read_text())["results"]
            for r in results:
                r.pop("seconds", None)
            reports.append(results)
        assert reports[0] == reports[1] and len(reports[0]) > 5
        with Client(address, timeout=300) as client:  # the scheduler ran the parameter sets as tasks
            done = client.run_on_scheduler(lambda dask_scheduler: sum(
                sum(p.state_counts.values()) for p in dask_scheduler.task_prefixes.values()))
        assert done >= 8, done
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=120)
            except subprocess.TimeoutExpired:
                p.kill()
