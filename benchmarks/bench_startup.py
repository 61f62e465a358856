"""Benchmark: start-up time of the vetdp command (`vetdp --help`, every `vetdp X [Y] --help`) and of the imports.

Run:  .venv/bin/python benchmarks/bench_startup.py                               (this checkout's venv)
      .venv/bin/python benchmarks/bench_startup.py --before /work/main/.venv [--runs 7]
      .venv/bin/python benchmarks/bench_startup.py --only root,imports        (fewer rows)

Every figure is the median wall-clock time of ``--runs`` fresh subprocesses (so it includes the interpreter's own
start, shown on the first row), measured after one unmeasured warm-up run. Rows: the interpreter alone;
``python -c "import vetdp"``; the runtime (``vetdp.core``, ``vetdp.sampling``, ``vetdp.arith.expr`` and every
``vetdp.impl`` mechanism module); ``vetdp --help``; and ``vetdp X --help`` for every subcommand and sub-subcommand of
this checkout. ``--before VENV`` adds a column measured with another venv's ``bin/vetdp`` and ``bin/python`` (e.g.
the unchanged main branch); a command that venv does not have shows "-".
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

RUNTIME = ("vetdp.core", "vetdp.sampling", "vetdp.arith.expr", "vetdp.impl.randomized_response",
           "vetdp.impl.randomized_response_bool", "vetdp.impl.randomized_response_bitvec", "vetdp.impl.k_rappor",
           "vetdp.impl.rappor", "vetdp.impl.buffling")


def _help_paths(python: str) -> list[tuple[str, ...]]:
    """Every (sub)command path of the vetdp that ``python`` imports."""
    code = ("import click, json\n"
            "from vetdp.cli import SUBCOMMANDS, load_command\n"
            "out = []\n"
            "for name in SUBCOMMANDS:\n"
            "    out.append([name])\n"
            "    cmd = load_command(name)\n"
            "    if isinstance(cmd, click.Group):\n"
            "        out += [[name, sub] for sub in cmd.list_commands(click.Context(cmd))]\n"
            "print(json.dumps(out))\n")
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, check=True, cwd="/")
    return [tuple(p) for p in json.loads(out.stdout)]


def _median_seconds(argv: list[str], runs: int) -> float | None:
    """The median wall-clock time of ``runs`` runs of ``argv`` (after a warm-up), or None when it fails."""
    times = []
    for i in range(runs + 1):
        t0 = time.perf_counter()
        r = subprocess.run(argv, capture_output=True, cwd="/")
        if r.returncode != 0:
            return None
        if i:
            times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _rows(paths: list[tuple[str, ...]], only: set[str]) -> list[tuple[str, str, list[str]]]:
    """(label, kind, argv tail): kind "python" runs with bin/python, "vetdp" with bin/vetdp."""
    rows = []
    if "imports" in only:
        rows += [("python -c pass", "python", ["-c", "pass"]),
                 ("python -c 'import vetdp'", "python", ["-c", "import vetdp"]),
                 ("python: import the runtime", "python", ["-c", "import " + ", ".join(RUNTIME)])]
    if "root" in only:
        rows.append(("vetdp --help", "vetdp", ["--help"]))
    if "commands" in only:
        rows += [(f"vetdp {' '.join(p)} --help", "vetdp", [*p, "--help"]) for p in paths]
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", help="another venv (e.g. /work/main/.venv) measured beside this one")
    parser.add_argument("--runs", type=int, default=7, help="runs per row (median; default 7)")
    parser.add_argument("--only", default="imports,root,commands",
                        help="comma-separated row groups: imports, root, commands (default: all)")
    args = parser.parse_args()
    print("$ " + " ".join([Path(sys.executable).name, *sys.argv]))
    here = Path(sys.executable).parent
    venvs = {"after": here}
    if args.before:
        venvs = {"before": Path(args.before) / "bin", "after": here}
    rows = _rows(_help_paths(sys.executable), set(args.only.split(",")))
    width = max(len(label) for label, _, _ in rows) + 2
    print(f"{'start-up (median of ' + str(args.runs) + ' runs, s)':<{width}}" + "".join(f"{k:>10}" for k in venvs))
    for label, kind, tail in rows:
        cells = []
        for bin_dir in venvs.values():
            t = _median_seconds([str(bin_dir / kind), *tail], args.runs)
            cells.append(f"{t:>10.3f}" if t is not None else f"{'-':>10}")
        print(f"{label:<{width}}" + "".join(cells), flush=True)


if __name__ == "__main__":
    main()
