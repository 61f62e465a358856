"""Benchmark (not a test): ε at δ of RR, RAPPOR and categorical RR composed n = 10^3 .. 10^8 times.

Run:  .venv/bin/python benchmarks/bench_pld.py                  (everything, a few minutes)
      .venv/bin/python benchmarks/bench_pld.py --quick          (n <= 10^5, no third parties)
      .venv/bin/python benchmarks/bench_pld.py --sizes 1e9 --no-others  (the command line's limit)
      .venv/bin/python benchmarks/bench_pld.py --pld-from FILE  (time another pld.py, e.g. the code before:
          git show 058e371:vetdp/accounting/pld.py > /tmp/pld_before.py)

For each (event, n) it prints our certified exact-PLD ε (vetdp.accounting.pld.ExactPLD(...).epsilon(δ)), its
wall-clock time and peak memory, and beside it dp_accounting's PLD (from_randomized_response(...).self_compose,
value_discretization_interval=1e-4), autodp (Composition of RandresponseMechanism: RDP, then conversion) and
prv_accountant (PRVAccountant of PureDPMechanism, whose privacy-loss distribution is binary RR's; the upper
end of its bracket at eps_error=0.01), each with its time. Every computation runs in its own subprocess,
with a time limit (--timeout) and an address-space limit (--memory), so a library that runs out of either
prints "timeout"/"out of memory" instead of taking the machine down. Memory is the subprocess's peak
resident set minus its resident set after the imports (so it is the computation's own).
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import subprocess
import sys
import time
import warnings

DELTA = 1e-6

# (label, kind, per-run ε, categories); RAPPOR(ε) run n times is 2n binary steps of RR(ε/2)
EVENTS = [("RR ε=1", "rr", 1.0, 2), ("RAPPOR ε=1", "rappor", 1.0, 2), ("RR t=4 ε=1", "rr", 1.0, 4)]
SIZES = [10**3, 10**4, 10**5, 10**6, 10**8]
MAX_CATEGORICAL = 10**6  # categorical RR: time grows like n (see vetdp/cli/account.py)


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _family(kind: str, eps: float, t: int):
    from vetdp.accounting.curves import randomized_response_curve, rappor_curve

    return rappor_curve(eps) if kind == "rappor" else randomized_response_curve(eps, categories=t)


def _binary_steps(kind: str, eps: float, n: int) -> tuple[float, int]:
    """(log-ratio a per binary step, number of steps) of n runs."""
    return (eps / 2, 2 * n) if kind == "rappor" else (eps, n)


def run_one(which: str, kind: str, eps: float, t: int, n: int, pld_from: str | None) -> dict:
    """One measurement in this process: ε, seconds and the computation's own peak memory (MB)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if which == "ours":
            if pld_from:
                import importlib.util

                spec = importlib.util.spec_from_file_location("pld_under_test", pld_from)
                module = importlib.util.module_from_spec(spec)
                sys.modules["pld_under_test"] = module
                spec.loader.exec_module(module)
                exact = module.ExactPLD
            else:
                from vetdp.accounting.pld import ExactPLD as exact
            family = _family(kind, eps, t)
            base = _rss_mb()
            start = time.perf_counter()
            res = exact(family, n).epsilon(DELTA)
            seconds = time.perf_counter() - start
            return {"epsilon": res.epsilon, "lower": res.epsilon_lower, "seconds": seconds, "mb": _rss_mb() - base}
        a, steps = _binary_steps(kind, eps, n)
        if which == "dp_accounting":
            from dp_accounting.pld import privacy_loss_distribution

            keep = math.exp(a) / (math.exp(a) + t - 1)
            noise = (1 - keep) * t / (t - 1)  # dp_accounting: with this probability, a uniform bucket
            base = _rss_mb()
            start = time.perf_counter()
            pld = privacy_loss_distribution.from_randomized_response(noise, t, value_discretization_interval=1e-4)
            value = pld.self_compose(steps).get_epsilon_for_delta(DELTA)
        elif which == "autodp":
            if t != 2:
                return {"skip": "no categorical RR"}
            from autodp.mechanism_zoo import RandresponseMechanism
            from autodp.transformer_zoo import Composition

            base = _rss_mb()
            start = time.perf_counter()
            mech = Composition()([RandresponseMechanism(p=1 / (1 + math.exp(-a)))], [steps])
            value = mech.get_approxDP(DELTA)
        elif which == "prv_accountant":
            if t != 2:
                return {"skip": "binary RR only"}
            from prv_accountant import PRVAccountant
            from prv_accountant.privacy_random_variables import PureDPMechanism

            base = _rss_mb()
            start = time.perf_counter()
            acc = PRVAccountant(prvs=[PureDPMechanism(a)], eps_error=0.01, delta_error=DELTA / 1000,
                                max_self_compositions=[steps])
            value = acc.compute_epsilon(DELTA, [steps])[2]
        else:
            raise ValueError(f"which={which!r} must be ours, dp_accounting, autodp or prv_accountant")
        return {"epsilon": float(value), "seconds": time.perf_counter() - start, "mb": _rss_mb() - base}


def measure(which: str, kind: str, eps: float, t: int, n: int, args) -> dict:
    """Run :func:`run_one` in a subprocess under the time and memory limits."""
    cmd = [sys.executable, __file__, "--one", which, kind, repr(eps), str(t), str(n)]
    if args.pld_from:
        cmd += ["--pld-from", args.pld_from]
    limit = int(args.memory * 2**30)

    def limit_memory() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout, preexec_fn=limit_memory)
    except subprocess.TimeoutExpired:
        return {"skip": f"timeout > {args.timeout:g} s"}
    if out.returncode != 0:
        last = (out.stderr.strip().splitlines() or ["?"])[-1]
        return {"skip": "out of memory" if "MemoryError" in out.stderr else f"error: {last[:60]}"}
    return json.loads(out.stdout.strip().splitlines()[-1])


def _cell(r: dict, lower: float | None = None, with_mb: bool = False) -> str:
    """ε, time (and memory); ``!`` marks an ε below ``lower``, our certified lower bound of the optimum."""
    if "skip" in r:
        return f"{r['skip'][:30]:>30}"
    mb = f" {r['mb']:7.1f}MB" if with_mb else ""
    flag = "!" if lower is not None and r["epsilon"] < lower else " "
    return f"{r['epsilon']:>17.10g}{flag} {r['seconds']:8.2f}s{mb}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="n <= 10^5 and no third-party libraries")
    parser.add_argument("--pld-from", help="load ExactPLD from this file instead of vetdp.accounting.pld")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per computation (default 300)")
    parser.add_argument("--memory", type=float, default=3.0, help="GiB of address space per computation (default 3)")
    parser.add_argument("--no-others", action="store_true", help="only ours")
    parser.add_argument("--sizes", help="comma-separated n to run instead of 1e3,1e4,1e5,1e6,1e8 (e.g. 1e9)")
    parser.add_argument("--one", nargs=5, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        which, kind, eps, t, n = args.one
        print(json.dumps(run_one(which, kind, float(eps), int(t), int(n), args.pld_from)))
        return
    print("command: " + " ".join([".venv/bin/python", "benchmarks/bench_pld.py", *sys.argv[1:]]))
    print(f"δ = {DELTA:g}; ours = certified exact PLD (ε, its time, its peak memory); time limit {args.timeout:g} s, "
          f"memory limit {args.memory:g} GiB per computation")
    others = [] if args.quick or args.no_others else ["dp_accounting", "autodp", "prv_accountant"]
    sizes = [int(float(x)) for x in args.sizes.split(",")] if args.sizes else SIZES
    if args.quick:
        sizes = [s for s in sizes if s <= 10**5]
    header = f"{'event':<12} {'n':>6} {'ours ε':>18} {'time':>9} {'memory':>9}"
    for o in others:
        header += f" | {o + ' ε':>18} {'time':>9}"
    print(header)
    for label, kind, eps, t in EVENTS:
        for n in sizes:
            if t > 2 and n > MAX_CATEGORICAL:
                continue
            ours = measure("ours", kind, eps, t, n, args)
            row = f"{label:<12} {n:>6.0e} " + _cell(ours, with_mb=True)
            for o in others:
                row += " | " + _cell(measure(o, kind, eps, t, n, args), ours.get("lower"))
            print(row, flush=True)
    if others:
        print("! = below our certified lower bound of the exact ε: the library claims more privacy than the "
              "composed mechanism has")


if __name__ == "__main__":
    main()
