"""Times of the hashing mechanisms' exact decisions at the sizes users run, and of `vetdp verify` on each.

    python benchmarks/bench_hashing.py            # the scale examples, one parameter set each
    python benchmarks/bench_hashing.py --verify   # also the whole `vetdp verify SPEC --impl ours` runs

Prints the load average beside each figure: the machine is shared.
"""

import os
import subprocess
import sys
import time

from vetdp.engine.runner import RunConfig, evaluate_params
from vetdp.engine.spec import find_spec

SPECS = ("olh", "hadamard_response", "count_mean_sketch", "hadamard_count_mean_sketch")


def main() -> None:
    for name in SPECS:
        spec = find_spec(name)
        for params in spec.scale_examples:
            t0 = time.perf_counter()
            out = evaluate_params(spec, spec.load_constructor(), params, RunConfig(clause_seconds=None), scale=True)
            seconds = time.perf_counter() - t0
            verdict = "exact" if all(out[c].ok and not out[c].undecided for c in ("privacy.sound", "privacy.tight")) \
                else "NOT decided"
            print(f"{name:28s} {params} {verdict}: {seconds:6.1f} s (load {os.getloadavg()[0]:.1f})")
    if "--verify" in sys.argv:
        for name in SPECS:
            spec = find_spec(name)
            t0 = time.perf_counter()
            vetdp = os.path.join(os.path.dirname(sys.executable), "vetdp")
            rc = subprocess.run([vetdp, "verify", name, "--impl", spec.impl_ref],
                                capture_output=True).returncode
            print(f"vetdp verify {name} --impl {spec.impl_ref}: exit {rc}, {time.perf_counter() - t0:6.1f} s "
                  f"(load {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
