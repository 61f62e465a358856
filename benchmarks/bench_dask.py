"""Benchmark (not a test): a large audit drawn serially and on a local Dask cluster, same seed, same result.

Run:  .venv/bin/python benchmarks/bench_dask.py [--samples 400000] [--workers 2] [--batch]
      .venv/bin/python benchmarks/bench_dask.py --verify randomized_response_bitvec [--examples 200]
      .venv/bin/python benchmarks/bench_dask.py --check [--deep]
      .venv/bin/python benchmarks/bench_dask.py --buffling one-bf     (or: --buffling vet)
      .venv/bin/python benchmarks/bench_dask.py --overhead            (the cost of task processes)

Audits boolean randomized response (prob 0.75, claimed ε = ln 3) on x = True, x' = False with
``--samples`` samples per input, in chunks of 50,000 samples, each chunk from its own seeded
source. The sampler calls the mechanism once per sample, as an audit of a user's mechanism
without a batch form does (``--batch`` uses vetdp's vectorised form instead, ~10^7 samples/s,
where the cluster's overhead dominates unless the audit is very large). Prints the wall time
of the serial run and of the Dask run (cluster start-up shown apart), the speed-up, and
checks that both give the same tallies and bound.

``--check`` times ``vetdp check`` (every spec, proof and provider of this project) and ``--buffling`` a buffling
grid (``one-bf`` at m = 60: ε per y_d and the routes at every point; ``vet``: the seed's grid of a correct ratio
function), each as two ``vetdp`` processes, serial and ``--workers N`` (cluster start-up and imports included), and
checks that both write the same JSON report (timings aside).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time

from vetdp.audit.driver import run_audit
from vetdp.distributed import task_runner
from vetdp.impl import make_randomized_response_bool


def as_per_call_sampler(m):
    """A sampler(x, n) calling the mechanism n times (no batch form)."""
    def sampler(x, k):
        return [m(x) for _ in range(k)]
    return sampler


def bench_verify(spec: str, impl: str, examples: int, workers: int) -> None:
    """A verify sweep of ``examples`` drawn parameter sets, serially and on ``workers`` Dask workers (in-process)."""
    import json
    import tempfile
    from pathlib import Path

    from click.testing import CliRunner

    from vetdp.cli import main as cli

    reports, times = [], []
    for extra in ([], ["--workers", str(workers)]):
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "r.json"
            t0 = time.perf_counter()
            res = CliRunner().invoke(cli, ["verify", spec, "--impl", impl, "--max-examples", str(examples), *extra,
                                           "--json", str(out)])
            times.append(time.perf_counter() - t0)
            results = json.loads(out.read_text())["results"]
        for r in results:
            r.pop("seconds", None)
        reports.append((res.exit_code, results))
    print(f"verify {spec}, {examples} drawn parameter sets:")
    print(f"serial        : {times[0]:7.1f} s")
    print(f"dask, {workers} workers: {times[1]:7.1f} s (cluster start-up included; same report: "
          f"{reports[0] == reports[1]})")
    print(f"speed-up      : {times[0] / times[1]:.2f}x")
    if reports[0] != reports[1]:
        raise SystemExit("the Dask run's report differs from the serial run's")


def _without_seconds(doc):
    """The report without its timings: ``seconds`` fields, the command line, and any wall time a user's check
    writes into a message ("… in 0.53s")."""
    import re

    if isinstance(doc, dict):
        return {k: _without_seconds(v) for k, v in doc.items() if k not in ("seconds", "command")}
    if isinstance(doc, list):
        return [_without_seconds(v) for v in doc]
    if isinstance(doc, str):
        return re.sub(r"\bin \d+(\.\d+)?s\b", "in <t>s", doc)
    return doc


def bench_cli(label: str, args: list[str], workers: int) -> None:
    """``vetdp ARGS --json FILE`` serially and with ``--workers``, as fresh processes: wall times and same report."""
    import json
    import resource
    import subprocess
    import tempfile
    from pathlib import Path

    def cpu() -> float:
        r = resource.getrusage(resource.RUSAGE_CHILDREN)
        return r.ru_utime + r.ru_stime

    vetdp = str(Path(sys.executable).parent / "vetdp")
    docs, times, cpus = [], [], []
    for extra in ([], ["--workers", str(workers)]):
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "r.json"
            command = [vetdp, *args, *extra, "--json", str(out)]
            print("  $", " ".join(command[:1] + [a if " " not in a else repr(a) for a in command[1:-2]]))
            t0, c0 = time.perf_counter(), cpu()
            done = subprocess.run(command, capture_output=True, text=True)
            times.append(time.perf_counter() - t0)
            cpus.append(cpu() - c0)
            if done.returncode not in (0, 1):
                raise SystemExit(f"exit {done.returncode}: {done.stderr[-2000:]}")
            docs.append((done.returncode, _without_seconds(json.loads(out.read_text()))))
    print(f"{label} (load average now {os.getloadavg()[0]:.2f}):")
    print(f"serial        : {times[0]:7.1f} s wall, {cpus[0]:6.1f} s CPU")
    print(f"dask, {workers} workers: {times[1]:7.1f} s wall, {cpus[1]:6.1f} s CPU in all processes (cluster start-up "
          f"and the workers' imports included; same report: {docs[0] == docs[1]})")
    print(f"speed-up      : {times[0] / times[1]:.2f}x")
    if docs[0] != docs[1]:
        a, b = (d[1].get("results", [d[1]]) for d in docs)
        shown = 0
        for x, y in zip(a, b, strict=False):
            if x != y and shown < 10:
                shown += 1
                keys = [k for k in x if x.get(k) != y.get(k)] if isinstance(x, dict) else ["?"]
                print("  differs:", x.get("spec"), x.get("check"), {k: (str(x.get(k))[:120], str(y.get(k))[:120])
                                                                    for k in keys})
        longer = a if len(a) > len(b) else b
        for x in longer[min(len(a), len(b)):][:10]:
            print("  only in the", "serial" if longer is a else "Dask", "run:", x.get("spec"), x.get("check"))
        print(f"  exit codes {docs[0][0]}, {docs[1][0]}; {len(a)} and {len(b)} results")
        raise SystemExit("the Dask run's report differs from the serial run's")


def _tiny(x):
    return x + 1


def _first(x):
    import vetdp.engine.runner  # noqa: F401 - what a verify or check task imports first

    return x


def bench_overhead(workers: int, tasks: int = 500) -> None:
    """What running tasks in task processes (so that time budgets hold) costs: the first task on each worker
    (starting the process and importing the engine) and per task, against tasks run in the worker's thread."""
    for budgets in (False, True):
        with task_runner(workers=workers, budgets=budgets) as runner:
            t0 = time.perf_counter()
            runner.map(_first, list(range(workers)))
            first = time.perf_counter() - t0
            runner.map(_tiny, list(range(workers * 4)))
            t0 = time.perf_counter()
            runner.map(_tiny, list(range(tasks)))
            each = (time.perf_counter() - t0) / tasks
        where = "task processes" if budgets else "worker threads"
        print(f"{where:15}: first task per worker {first:5.2f} s (engine import), then {each * 1e3:.2f} ms per task "
              f"({tasks} tiny tasks on {workers} workers)")


def _correct_ratio_file(tmp: str) -> str:
    """A user's ratio function (exact, through vetdp's certified enclosure midpoint) written to a file, for vet."""
    from pathlib import Path

    path = Path(tmp) / "bench_user_ratio.py"
    path.write_text("from vetdp.buffling.certified import ratio_enclosure\n\n"
                    "def ratio(y_d, y_x, p, m):\n"
                    "    return float(ratio_enclosure(y_d, y_x, p, m).mid)\n")
    return f"{path}:ratio"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--verify", metavar="SPEC", help="benchmark a verify sweep of SPEC with vetdp's own implementation "
                    "instead of an audit (e.g. randomized_response_bitvec)")
    ap.add_argument("--examples", type=int, default=200, help="with --verify: parameter sets drawn")
    ap.add_argument("--check", action="store_true", help="benchmark vetdp check (this project) instead")
    ap.add_argument("--overhead", action="store_true", help="measure what task processes (budgets) cost")
    ap.add_argument("--deep", action="store_true", help="with --check: vetdp check --deep")
    ap.add_argument("--buffling", choices=["one-bf", "vet"], help="benchmark a buffling grid instead")
    ap.add_argument("--n-bit", type=int, default=60, help="with --buffling one-bf: m (<= 100)")
    ap.add_argument("--samples", type=float, default=4e5)
    ap.add_argument("--batch", action="store_true")
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    n = int(args.samples)
    print("command:", " ".join([sys.executable, *sys.argv]))
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}")
    if args.overhead:
        bench_overhead(args.workers)
        return
    if args.check:
        bench_cli("vetdp check" + (" --deep" if args.deep else ""), ["check", *(["--deep"] if args.deep else [])],
                  args.workers)
        return
    if args.buffling == "one-bf":
        bench_cli(f"buffling one-bf, m = {args.n_bit}", ["buffling", "one-bf", "--n-bit", str(args.n_bit),
                                                         "--flip-prob", "0.1"], args.workers)
        return
    if args.buffling == "vet":
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            bench_cli("buffling vet, the seed's grid (m = 10 .. 10^6, p = 0.1, 0.3)",
                      ["buffling", "vet", "--impl", _correct_ratio_file(tmp)], args.workers)
        return
    if args.verify:
        from vetdp.engine.spec import find_spec

        bench_verify(args.verify, find_spec(args.verify).impl_ref, args.examples, args.workers)
        return
    m = make_randomized_response_bool(0.75)
    if not args.batch:
        m = as_per_call_sampler(m)
    t0 = time.perf_counter()
    serial = run_audit(m, [True, False], math.log(3), samples=n, seed=1)
    t_serial = time.perf_counter() - t0
    print(f"serial        : {t_serial:7.1f} s  ({2 * n:,} samples; ε lower bound {serial.epsilon_lower:.6f})")
    t0 = time.perf_counter()
    with task_runner(workers=args.workers) as runner:
        t_start = time.perf_counter() - t0
        t1 = time.perf_counter()
        spread = run_audit(m, [True, False], math.log(3), samples=n, seed=1, runner=runner)
        t_dask = time.perf_counter() - t1
    same = (serial.count_p, serial.count_q, serial.epsilon_lower) == (spread.count_p, spread.count_q,
                                                                     spread.epsilon_lower)
    print(f"dask, {args.workers} workers: {t_dask:7.1f} s  (+{t_start:.1f} s to start the cluster; "
          f"same result: {same})")
    print(f"speed-up      : {t_serial / t_dask:.2f}x ({t_serial / (t_dask + t_start):.2f}x with start-up)")
    if not same:
        raise SystemExit("the Dask run differs from the serial run")


if __name__ == "__main__":
    main()
