"""Throughput of bit-vector randomized response: vetdp's batch form beside OpenDP's per-call form.

Run:  python benchmarks/bench_throughput.py [--length 128] [--rows 100000] [--calls 10000] [--f 0.5 0.01]
      [--repeat 5]

For each f, prints bits randomised per second for
* vetdp: ``make_randomized_response_bitvec(...).batch`` on an (n, k) array (exact Bernoulli
  per bit, system randomness),
* OpenDP: ``make_randomized_response_bitvec`` invoked once per k-bit vector (⌈k/8⌉ bytes),
  the way a client randomises its one report (the padding bits of its last byte are not counted),
and their ratio. The two are timed alternately, ``--repeat`` times each, and the best of each
is kept, so a busy machine slows both alike.

It also prints this machine's ceiling: the raw CSPRNG rate (``os.urandom`` in the chunks the
batch reads) and the bits/s it allows (the exact Bernoulli reads one byte per bit, plus one more
for the 1/256 of bits whose byte is zero), how close the batch form comes to it, and where the
batch form's time goes (reading bytes, the first-round table lookup, the domain check and the
XOR with the input).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time

import numpy as np

from vetdp.core.measurement import bitvector_domain, discrete_distance
from vetdp.impl.randomized_response_bitvec import make_randomized_response_bitvec
from vetdp.sampling.batch import FIRST_ROUND_CHUNK, sample_bernoulli_batch


def _best(fn, repeat: int) -> float:
    """The shortest of ``repeat`` timings of ``fn()`` (seconds)."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def vetdp_batch(k: int, rows: int, f: float):
    m = make_randomized_response_bitvec(bitvector_domain(max_weight=1, length=k), discrete_distance(), f)
    data = np.zeros((rows, k), dtype=bool)
    data[:, 0] = True
    m.batch(data[:1000])  # warm up

    def run() -> None:
        assert m.batch(data).shape == (rows, k)

    return run


def opendp_calls(k: int, calls: int, f: float):
    try:
        import opendp.prelude as dp
    except ImportError:
        return None
    dp.enable_features("contrib")
    meas = dp.m.make_randomized_response_bitvec(dp.bitvector_domain(max_weight=1), dp.discrete_distance(), f)
    x = np.packbits(np.eye(1, k, dtype=np.uint8)[0], bitorder="little")
    for _ in range(100):  # warm up
        meas(x)

    def run() -> None:
        for _ in range(calls):
            meas(x)

    return run


def breakdown(k: int, rows: int, f: float, repeat: int) -> dict[str, float]:
    """Seconds spent by the batch form's parts on ``rows × k`` bits (best of ``repeat`` each)."""
    n = rows * k
    flip = f / 2
    data = np.zeros((rows, k), dtype=bool)
    data[:, 0] = True
    noise = sample_bernoulli_batch(flip, n).reshape(rows, k)
    chunks = range(0, n, FIRST_ROUND_CHUNK)
    raw = np.frombuffer(os.urandom(n), dtype=np.uint8)
    table = np.zeros(256, dtype=bool)
    return {
        "reading bytes (os.urandom)": _best(lambda: [os.urandom(min(FIRST_ROUND_CHUNK, n - s)) for s in chunks],
                                            repeat),
        "first-round table lookup": _best(lambda: np.take(table, raw), repeat),
        "domain check (row weights)": _best(lambda: data.sum(axis=1).max(), repeat),
        "XOR with the input": _best(lambda: data ^ noise, repeat),
        "whole batch call": _best(vetdp_batch(k, rows, f), repeat),
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--length", type=int, default=128, help="bits per vector (k)")
    ap.add_argument("--rows", type=int, default=100_000, help="vectors randomised by vetdp's batch form")
    ap.add_argument("--calls", type=int, default=10_000, help="vectors randomised by OpenDP, one call each")
    ap.add_argument("--f", type=float, nargs="+", default=[0.5, 0.01])
    ap.add_argument("--repeat", type=int, default=5, help="timings of each side; the best is kept")
    args = ap.parse_args(argv)
    k, rows, calls, repeat = args.length, args.rows, args.calls, args.repeat
    print("command:", " ".join([sys.executable, *sys.argv]))
    print(f"machine: {platform.machine()} {platform.processor() or ''} python {platform.python_version()}, "
          f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}")
    n = rows * k

    def read_bytes() -> None:
        for s in range(0, n, FIRST_ROUND_CHUNK):
            os.urandom(min(FIRST_ROUND_CHUNK, n - s))

    urandom_t = float("inf")
    results = []
    for f in args.f:
        ours_run, theirs_run = vetdp_batch(k, rows, f), opendp_calls(k, calls, f)
        ours_t, theirs_t = float("inf"), float("inf")
        for _ in range(repeat):  # alternate, so that load affects every side alike
            urandom_t = min(urandom_t, _best(read_bytes, 1))
            ours_t = min(ours_t, _best(ours_run, 1))
            if theirs_run is not None:
                theirs_t = min(theirs_t, _best(theirs_run, 1))
        results.append((f, n / ours_t, None if theirs_run is None else calls * k / theirs_t))
    ceiling = n / urandom_t / (1 + 1 / 255)
    print(f"ceiling      : os.urandom {n / urandom_t / 1e6:,.0f} MB/s in {FIRST_ROUND_CHUNK}-byte reads "
          f"-> at most {ceiling:,.0f} exact Bernoulli bits/s")
    for f, ours, theirs in results:
        print(f"f={f}:")
        print(f"  vetdp batch  : {ours:,.0f} bits/s ({rows} vectors of {k} bits; "
              f"{ours / ceiling:.0%} of the ceiling)")
        if theirs is None:
            print("  opendp       : not installed (pip install 'vetdp[opendp]')")
            continue
        from importlib.metadata import version

        print(f"  opendp {version('opendp'):6s}: {theirs:,.0f} bits/s ({calls} calls, one {k}-bit vector each)")
        print(f"  ratio        : {ours / theirs:.1f}x")
    print(f"where the batch form's time goes (f={args.f[0]}, {n:,} bits, best of {repeat}):")
    parts = breakdown(k, rows, args.f[0], repeat)
    whole = parts.pop("whole batch call")
    for name, seconds in parts.items():
        print(f"  {name:28s}: {seconds * 1e3:7.1f} ms ({seconds / whole:.0%})")
    print(f"  {'whole batch call':28s}: {whole * 1e3:7.1f} ms")


if __name__ == "__main__":
    main()
