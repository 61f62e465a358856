"""Benchmark: the speed of the correctly rounded transcendental primitives (inf_ln, inf_exp, ...).

Run:  .venv/bin/python benchmarks/bench_rounding.py                       (this checkout's venv)
      .venv/bin/python benchmarks/bench_rounding.py --before /work/main/.venv [--calls 2000] [--repeat 5]

Each figure is the median over ``--repeat`` runs of the mean time per call over ``--calls`` arguments, measured in
a fresh subprocess of the venv's python (the vetdp that venv imports). The arguments are fixed (seeded): floats in
[0.01, 100] for ln/log1p, [-700, 700] for exp, [-7, 7] for expm1, plus a row of edge cases (subnormals, 1 ± ulp,
near the overflow thresholds). ``--before VENV`` adds a column measured with another venv, e.g. one whose vetdp
still computed these with mpmath.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

_PROBE = r"""
import json, random, statistics, sys, time
from vetdp.arith import rounding as R
calls, repeat = int(sys.argv[1]), int(sys.argv[2])
rng = random.Random(1)
pos = [rng.uniform(0.01, 100) for _ in range(calls)]
wide = [rng.uniform(-700, 700) for _ in range(calls)]
small = [rng.uniform(-7, 7) for _ in range(calls)]
edges = [("inf_ln", 5e-324), ("inf_ln", 1.7976931348623157e308), ("inf_ln", 1 + 2**-52), ("neg_inf_ln", 1 - 2**-53),
         ("inf_log1p", 5e-324), ("inf_expm1", -5e-324), ("inf_exp", -745.1), ("neg_inf_exp", 709.78),
         ("inf_exp", 1e-300)]
rows = {}
for name, args in [("inf_ln", pos), ("neg_inf_ln", pos), ("inf_exp", wide), ("neg_inf_exp", wide),
                   ("inf_log1p", pos), ("inf_expm1", small)]:
    fn = getattr(R, name)
    runs = []
    for _ in range(repeat):
        t = time.perf_counter()
        for x in args:
            fn(x)
        runs.append((time.perf_counter() - t) / len(args))
    rows[name] = statistics.median(runs)
runs = []
for _ in range(repeat):
    t = time.perf_counter()
    for _ in range(max(1, calls // 100)):
        for name, x in edges:
            getattr(R, name)(x)
    runs.append((time.perf_counter() - t) / (max(1, calls // 100) * len(edges)))
rows["edge cases (mixed)"] = statistics.median(runs)
print(json.dumps(rows))
"""


def measure(python: str, calls: int, repeat: int) -> dict[str, float]:
    out = subprocess.run([python, "-c", _PROBE, str(calls), str(repeat)], capture_output=True, text=True,
                         check=True, cwd="/")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", help="another venv (e.g. /work/main/.venv) to measure beside this one")
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print("$ " + " ".join([Path(sys.executable).name, *sys.argv]))
    after = measure(sys.executable, args.calls, args.repeat)
    before = measure(str(Path(args.before) / "bin" / "python"), args.calls, args.repeat) if args.before else None
    header = f"{'primitive':<22}" + (f"{'before (µs/call)':>18}" if before else "") + f"{'after (µs/call)':>17}"
    print(header)
    for name, t in after.items():
        line = f"{name:<22}"
        if before:
            line += f"{before.get(name, float('nan')) * 1e6:>18.1f}"
        print(line + f"{t * 1e6:>17.1f}")


if __name__ == "__main__":
    main()
