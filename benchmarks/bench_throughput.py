"""Throughput of bit-vector randomized response: vetdp's batch form beside OpenDP's per-call form.

Run:  python benchmarks/bench_throughput.py [--length 64] [--rows 200000] [--calls 20000]

Prints bits randomised per second for
* vetdp: ``make_randomized_response_bitvec(...).batch`` on an (n, k) array (exact Bernoulli
  per bit, system randomness), and
* OpenDP: ``make_randomized_response_bitvec`` invoked once per k-bit vector (⌈k/8⌉ bytes),
  the way a client randomises its one report; each call also randomises the padding bits
  of its last byte, which are not counted.
Both run on this machine, in this process, one after the other.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time

import numpy as np

from vetdp.core.measurement import bitvector_domain, discrete_distance
from vetdp.impl.randomized_response_bitvec import make_randomized_response_bitvec


def bench_vetdp(k: int, rows: int, f: float) -> float:
    m = make_randomized_response_bitvec(bitvector_domain(max_weight=1, length=k), discrete_distance(), f)
    data = np.zeros((rows, k), dtype=bool)
    data[:, 0] = True
    m.batch(data[:1000])  # warm up
    t0 = time.perf_counter()
    out = m.batch(data)
    elapsed = time.perf_counter() - t0
    assert out.shape == (rows, k)
    return rows * k / elapsed


def bench_opendp(k: int, calls: int, f: float) -> float | None:
    try:
        import opendp.prelude as dp
    except ImportError:
        return None
    dp.enable_features("contrib")
    meas = dp.m.make_randomized_response_bitvec(dp.bitvector_domain(max_weight=1), dp.discrete_distance(), f)
    x = np.packbits(np.eye(1, k, dtype=np.uint8)[0], bitorder="little")
    for _ in range(100):  # warm up
        meas(x)
    t0 = time.perf_counter()
    for _ in range(calls):
        meas(x)
    elapsed = time.perf_counter() - t0
    return calls * k / elapsed


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--length", type=int, default=64, help="bits per vector (k)")
    ap.add_argument("--rows", type=int, default=200_000, help="vectors randomised by vetdp's batch form")
    ap.add_argument("--calls", type=int, default=20_000, help="vectors randomised by OpenDP, one call each")
    ap.add_argument("--f", type=float, default=0.5)
    args = ap.parse_args(argv)
    print("command:", " ".join([sys.executable, *sys.argv]))
    print(f"machine: {platform.machine()} {platform.processor() or ''} python {platform.python_version()}")
    ours = bench_vetdp(args.length, args.rows, args.f)
    print(f"vetdp batch  : {ours:,.0f} bits/s  ({args.rows} vectors of {args.length} bits, f={args.f})")
    theirs = bench_opendp(args.length, args.calls, args.f)
    if theirs is None:
        print("opendp       : not installed (pip install 'vetdp[opendp]')")
    else:
        from importlib.metadata import version

        print(f"opendp {version('opendp'):6s}: {theirs:,.0f} bits/s  ({args.calls} calls, one "
              f"{args.length}-bit vector each)")
        print(f"ratio        : {ours / theirs:.1f}x")


if __name__ == "__main__":
    main()
