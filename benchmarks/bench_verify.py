"""Benchmark: `vetdp verify SPEC --impl <bundled constructor>` for the bundled mechanisms of the seeds.

Run:  .venv/bin/python benchmarks/bench_verify.py                          (this checkout's venv)
      .venv/bin/python benchmarks/bench_verify.py --before /work/main/.venv  (a second column: another venv)
      .venv/bin/python benchmarks/bench_verify.py --only rappor,k_rappor --runs 3

Each row runs the command in a fresh subprocess (import, parameter search, universal exploration, every clause,
the table) and prints the median over ``--runs`` of its wall-clock seconds and of its CPU seconds (user + system of
the child), the exit code, the number of result rows and the load average before and after. CPU seconds are the
figure to compare on a shared machine: wall-clock time grows with the load, CPU time much less.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SPECS = ("randomized_response_bool", "randomized_response", "randomized_response_bitvec", "k_rappor", "rappor")


def _impl_ref(python: str, spec: str) -> str:
    code = f"from vetdp.engine.spec import find_spec; print(find_spec({spec!r}).impl_ref)"
    return subprocess.run([python, "-c", code], capture_output=True, text=True, check=True).stdout.strip()


def _one_run(vetdp: str, spec: str, ref: str) -> tuple[float, float, int, int]:
    """(wall s, CPU s, exit code, result rows) of one ``vetdp verify`` run."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        r = subprocess.run([vetdp, "verify", spec, "--impl", ref, "--json", str(report)], capture_output=True)
        wall = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        rows = len(json.loads(report.read_text())["results"]) if report.exists() else 0
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, r.returncode, rows


def measure(venv: Path, spec: str, runs: int) -> tuple[float, float, int, int]:
    """Medians of wall and CPU seconds over ``runs`` runs, the last exit code and row count."""
    python, vetdp = str(venv / "bin" / "python"), str(venv / "bin" / "vetdp")
    ref = _impl_ref(python, spec)
    results = [_one_run(vetdp, spec, ref) for _ in range(runs)]
    return (statistics.median(r[0] for r in results), statistics.median(r[1] for r in results),
            results[-1][2], results[-1][3])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--venv", type=Path, default=Path(sys.prefix), help="the venv to measure (default: this one)")
    parser.add_argument("--before", type=Path, help="another venv, measured beside it")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--only", help="comma-separated spec names")
    args = parser.parse_args(argv)
    specs = [s for s in SPECS if not args.only or s in args.only.split(",")]
    print(f"load average before: {os.getloadavg()[0]:.1f}; {args.runs} run(s) per row, medians")
    header = f"{'spec':28} {'wall s':>8} {'CPU s':>8} {'exit':>5} {'rows':>5}"
    if args.before:
        header += f" | {'before wall':>11} {'before CPU':>10} {'exit':>5} {'rows':>5}"
    print(header)
    for spec in specs:
        wall, cpu, code, rows = measure(args.venv, spec, args.runs)
        line = f"{spec:28} {wall:8.1f} {cpu:8.1f} {code:5d} {rows:5d}"
        if args.before:
            b_wall, b_cpu, b_code, b_rows = measure(args.before, spec, args.runs)
            line += f" | {b_wall:11.1f} {b_cpu:10.1f} {b_code:5d} {b_rows:5d}"
        print(line, flush=True)
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
