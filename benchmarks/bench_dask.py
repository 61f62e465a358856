"""Benchmark (not a test): a large audit drawn serially and on a local Dask cluster, same seed, same result.

Run:  .venv/bin/python benchmarks/bench_dask.py [--samples 400000] [--workers 2] [--batch]
      .venv/bin/python benchmarks/bench_dask.py --verify randomized_response_bitvec [--examples 200]

Audits boolean randomized response (prob 0.75, claimed ε = ln 3) on x = True, x' = False with
``--samples`` samples per input, in chunks of 50,000 samples, each chunk from its own seeded
source. The sampler calls the mechanism once per sample, as an audit of a user's mechanism
without a batch form does (``--batch`` uses vetdp's vectorised form instead, ~10^7 samples/s,
where the cluster's overhead dominates unless the audit is very large). Prints the wall time
of the serial run and of the Dask run (cluster start-up shown apart), the speed-up, and
checks that both give the same tallies and bound.
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--verify", metavar="SPEC", help="benchmark a verify sweep of SPEC with vetdp's own implementation "
                    "instead of an audit (e.g. randomized_response_bitvec)")
    ap.add_argument("--examples", type=int, default=200, help="with --verify: parameter sets drawn")
    ap.add_argument("--samples", type=float, default=4e5)
    ap.add_argument("--batch", action="store_true")
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    n = int(args.samples)
    print("command:", " ".join([sys.executable, *sys.argv]))
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}")
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
