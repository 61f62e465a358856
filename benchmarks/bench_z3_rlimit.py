"""Benchmark: the z3 resource units (``rlimit``) every obligation spends, beside the default limit.

Run:  .venv/bin/python benchmarks/bench_z3_rlimit.py            (every family, one row per obligation)
      .venv/bin/python benchmarks/bench_z3_rlimit.py --summary  (one row per family: the largest count)

The families: vetdp's own constants (impl/), the seeds' naive forms and seed 001's order (refuted on purpose),
the RAPPOR pieces registered by impl/rappor.py, the OUE example (examples/oue), the sample of ``vetdp init``
(scaffolded into a temporary directory), the int casts and the float64 gap lemma. Every z3 query runs in a
fresh context, so a count depends on the query and the z3 version only (the same on a loaded machine); the
seconds are printed for information, never used as a limit. The last line gives the headroom: the default
limit over the largest count.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import z3

from vetdp.obligations import constants as C
from vetdp.obligations.check import DEEP_Z3_RLIMIT, DEFAULT_Z3_RLIMIT, GAP_LEMMA, run_contract, run_spec

ROOT = Path(__file__).resolve().parent.parent


def _families() -> dict[str, list[str]]:
    before = set(C.USER_CONSTANTS)
    import vetdp.impl.rappor  # noqa: F401 - registers rappor.*

    rappor = [c for c in C.USER_CONSTANTS if c not in before]
    sys.path.insert(0, str(ROOT / "examples" / "oue" / "src"))
    import oue_example.oue  # noqa: F401 - registers oue.*

    oue = [c for c in C.USER_CONSTANTS if c.startswith("oue.")]
    tmp = Path(tempfile.mkdtemp(prefix="vetdp-init-"))
    # the scaffold's module only (its proof is not blessed here): write it with `vetdp init`'s own template
    from vetdp.cli.init import _MECHANISM

    (tmp / "benchinit").mkdir()
    (tmp / "benchinit" / "__init__.py").write_text("")
    (tmp / "benchinit" / "coin.py").write_text(_MECHANISM.format(pkg="benchinit", stem="coin"))
    sys.path.insert(0, str(tmp))
    import benchinit.coin  # noqa: F401 - registers coin.*

    return {"vetdp impl/": list(C.CONSTANTS), "seeds (naive, seed001)": list(C.NAIVE) + list(C.SEED_DIRECTED),
            "impl/rappor.py": rappor, "examples/oue": oue, "vetdp init sample": ["coin.keep_probability",
                                                                                 "coin.epsilon"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--summary", action="store_true", help="one row per family")
    args = parser.parse_args()
    print(f"z3 {z3.get_version_string()}; default limit {DEFAULT_Z3_RLIMIT:,} units per query, "
          f"--deep {DEEP_Z3_RLIMIT:,}")
    worst = 0
    rows: list[tuple[str, str, str, int, float]] = []
    for family, cids in _families().items():
        for cid in cids:
            for r in run_spec(C.constant(cid), DEFAULT_Z3_RLIMIT):
                rows.append((family, r.id, r.status, r.rlimit_used or 0, r.seconds))
    gap = run_contract(GAP_LEMMA, DEFAULT_Z3_RLIMIT)
    rows.append(("contracts", gap.id, gap.status, gap.rlimit_used or 0, gap.seconds))
    families: dict[str, tuple[int, str, int]] = {}
    for family, oid, status, used, seconds in rows:
        kind = "cast" if ".cast." in oid else "contract" if oid.startswith("contract.") else "query"
        key = f"{family} [{kind}]"
        top, top_id, n = families.get(key, (0, "", 0))
        families[key] = (max(top, used), oid if used >= top else top_id, n + 1)
        worst = max(worst, used)
        if not args.summary:
            print(f"{family:24} {oid:66} {status:8} {used:>11,} {seconds:7.2f} s")
    print()
    print(f"{'family':40} {'obligations':>11} {'largest count':>14}  (obligation)")
    for key, (top, top_id, n) in families.items():
        print(f"{key:40} {n:>11} {top:>14,}  ({top_id})")
    print(f"\nlargest count {worst:,}; default limit {DEFAULT_Z3_RLIMIT:,} = {DEFAULT_Z3_RLIMIT / worst:.1f}x headroom")
    try:
        rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                             check=False).stdout.strip()
    except OSError:
        rev = "?"
    print(f"commit {rev or '?'}")


if __name__ == "__main__":
    main()
