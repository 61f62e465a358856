"""Time of vetting third-party code: ``vetdp verify SPEC --impl opendp`` per OpenDP constructor and
``vetdp vet accountant NAME`` per supported accountant, each run as its own process.

Run:  python benchmarks/bench_thirdparty.py [--vetdp PATH] [--only SUBSTRING] [--save FILE.json]
                                            [--compare BEFORE.json] [--keep DIR]
      python benchmarks/bench_thirdparty.py --diff-reports BEFORE_DIR AFTER_DIR

``--vetdp`` is the ``vetdp`` executable to time (default: the one next to this Python), so the same script times
another checkout: ``--vetdp /path/to/other/.venv/bin/vetdp --save before.json``, then this checkout with
``--compare before.json`` prints both side by side. For each command it prints the wall time, the CPU time of the
process (user + system; on a busy machine the wall time grows with the load, the CPU time much less) and the load
average before and after, so a figure taken under load says so. Each command writes its JSON report to a
temporary folder; ``--keep DIR`` keeps them there, and ``--diff-reports`` compares the findings of two such folders:
for ``verify``, the rows that are not a pass (clause, status, parameters, claimed and true values); for ``vet
accountant``, every row's status, answer and exact bracket. Audit witnesses (observed counts) and the output an
out-of-domain input happened to get are random draws and are left out.

The commands are those a user runs; the OpenDP constructors and accountants are the ones vetdp supports
(``vetdp/audit/opendp_adapter.py``, ``vetdp/accounting/accountants``).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

COMMANDS = [
    ["verify", "randomized_response", "--impl", "opendp"],
    ["verify", "randomized_response_bool", "--impl", "opendp"],
    ["verify", "randomized_response_bitvec", "--impl", "opendp"],
    ["verify", "debias_randomized_response_bitvec", "--impl", "opendp"],
    ["vet", "accountant", "dp_accounting"],
    ["vet", "accountant", "autodp"],
    ["vet", "accountant", "prv_accountant"],
]


def _name(argv: list[str]) -> str:
    return f"verify {argv[1]} --impl opendp" if argv[0] == "verify" else f"vet accountant {argv[2]}"


def _load() -> float:
    return os.getloadavg()[0]


def checkout_of(vetdp: str) -> Path:
    """The repository a ``<checkout>/.venv/bin/vetdp`` belongs to (its specs and proofs), else the working folder."""
    root = Path(vetdp).absolute().parents[2] if len(Path(vetdp).absolute().parents) > 2 else Path.cwd()
    return root if (root / "pyproject.toml").exists() else Path.cwd()


def run(vetdp: str, argv: list[str], out: Path) -> dict:
    """One command, run at the root of its checkout: wall and CPU seconds, exit code, load average before and
    after."""
    report = out / (argv[1 if argv[0] == "verify" else 2] + ".json")
    before_cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
    load0, t0 = _load(), time.perf_counter()
    proc = subprocess.run([vetdp, *argv, "--json", str(report.absolute())], stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True, cwd=checkout_of(vetdp))
    wall = time.perf_counter() - t0
    after_cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after_cpu.ru_utime - before_cpu.ru_utime) + (after_cpu.ru_stime - before_cpu.ru_stime)
    summary = None
    if report.exists():
        doc = json.loads(report.read_text())
        summary = doc.get("summary")
    return {"command": _name(argv), "argv": argv, "exit": proc.returncode, "wall": wall, "cpu": cpu,
            "load_before": load0, "load_after": _load(), "summary": summary,
            "stderr_tail": proc.stderr.strip().splitlines()[-1:] if proc.returncode not in (0, 1) else []}


def findings_of(doc: dict) -> dict:
    """What a report finds, without its timings and random draws (see the module docstring)."""
    if "rows" in doc:  # vet accountant
        return {(r["entry_point"], r["question"]["id"]): (r["status"], r["answer"], r["exact_lower"],
                                                          r["exact_upper"]) for r in doc["rows"]}
    out = {}
    for r in doc["results"]:
        if r["status"] in ("pass", "skipped"):
            continue
        random_draw = r["check"] == "audit.distribution" or r["check"] == "domain.rejects_outside"
        out[(r["check"], r["status"], r["subject"])] = None if random_draw else (r["claimed"], r["true"])
    return out


def diff_reports(before: Path, after: Path) -> int:
    """Print, per report in both folders, whether the findings are the same; the number of reports that differ."""
    differ = 0
    for b in sorted(before.glob("*.json")):
        a = after / b.name
        if not a.exists():
            print(f"{b.name}: only in {before}")
            continue
        fb, fa = findings_of(json.loads(b.read_text())), findings_of(json.loads(a.read_text()))
        if fb == fa:
            print(f"{b.name}: the same {len(fb)} findings")
            continue
        differ += 1
        print(f"{b.name}: differs ({len(fb)} findings before, {len(fa)} after)")
        for key in sorted(set(fb) | set(fa), key=repr):
            if fb.get(key, "absent") != fa.get(key, "absent"):
                print(f"   {key}: before {fb.get(key, 'absent')!r}, after {fa.get(key, 'absent')!r}")
    return differ


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--vetdp", default=str(Path(sys.executable).with_name("vetdp")),
                    help="the vetdp executable to time (default: next to this Python)")
    ap.add_argument("--only", default=None, help="only commands whose name contains this text")
    ap.add_argument("--save", default=None, help="write the figures to this JSON file")
    ap.add_argument("--compare", default=None, help="a JSON file saved by --save (e.g. from main): shown beside")
    ap.add_argument("--keep", default=None, help="keep the commands' JSON reports in this folder")
    ap.add_argument("--diff-reports", nargs=2, metavar=("BEFORE_DIR", "AFTER_DIR"), default=None,
                    help="compare the findings of two folders of reports (from --keep) and exit")
    args = ap.parse_args()
    if args.diff_reports:
        sys.exit(1 if diff_reports(Path(args.diff_reports[0]), Path(args.diff_reports[1])) else 0)

    commands = [c for c in COMMANDS if args.only is None or args.only in _name(c)]
    print(f"# vetdp: {args.vetdp} (run in {checkout_of(args.vetdp)})   cores: {os.cpu_count()}   "
          f"load average now: {_load():.2f}")
    for c in commands:
        print(f"#   {args.vetdp} {' '.join(c)} --json REPORT")
    before = {}
    if args.compare:
        before = {r["command"]: r for r in json.loads(Path(args.compare).read_text())["runs"]}
    out = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="bench_thirdparty_"))
    out.mkdir(parents=True, exist_ok=True)
    head = f"{'command':<52} {'exit':>4} {'wall s':>8} {'cpu s':>8} {'load':>11}"
    if before:
        head += f"   {'before wall':>11} {'before cpu':>10} {'load':>11}"
    print(head)
    runs = []
    for c in commands:
        r = run(args.vetdp, c, out)
        runs.append(r)
        line = (f"{r['command']:<52} {r['exit']:>4} {r['wall']:>8.1f} {r['cpu']:>8.1f} "
                f"{r['load_before']:>5.1f}-{r['load_after']:<5.1f}")
        b = before.get(r["command"])
        if b:
            line += f"   {b['wall']:>11.1f} {b['cpu']:>10.1f} {b['load_before']:>5.1f}-{b['load_after']:<5.1f}"
        print(line + (f"   {r['stderr_tail'][0][:80]}" if r["stderr_tail"] else ""), flush=True)
    if args.save:
        Path(args.save).write_text(json.dumps({"vetdp": args.vetdp, "runs": runs}, indent=1))
    print(f"# reports in {out}")


if __name__ == "__main__":
    main()
