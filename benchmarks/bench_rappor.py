"""Benchmark: RAPPOR encode + randomize 10^6 reports (k = 128, h = 2) and decode them against 10^4 candidates.

Run:  .venv/bin/python benchmarks/bench_rappor.py
      .venv/bin/python benchmarks/bench_rappor.py --reports 1000000 --candidates 10000 --cohorts 64 --k 128 --h 2

Prints the command line, then one line per step with its wall-clock time:

* encoding: cohort assignment (SHA-256 of each client id), Bloom filters (SHA-256 per distinct (cohort, value)),
  permanent randomized response (one per client: from OS bytes, and derived from client secrets with HMAC-SHA256
  as ``vetdp rappor encode`` does), instantaneous randomized response (one per report);
* decoding: the per-cohort unbiased bit counts, the candidates' (dense) design matrix, the first import of the
  solver libraries, then the whole ``decode`` (which recomputes counts and design) with where its time goes: bit
  counts, sparse design matrix (SHA-256 of every candidate in every cohort), lasso (scikit-learn; only when the
  candidates do not fit in a quarter of the rows), least squares (normal equations, SciPy), the rest — measured by
  wrapping those functions with timers.

The population is Zipf(1) over the candidates (the benchmark's data only: a seeded NumPy generator picks the
values; the randomization reads vetdp's default source, the OS CSPRNG, as in production).
"""

from __future__ import annotations

import argparse
import cProfile
import importlib
import platform
import pstats
import time

import numpy as np

from vetdp.impl.rappor import (
    assign_cohorts,
    bloom_filter_matrix,
    rappor_instantaneous_batch,
    rappor_permanent_batch,
)
from vetdp.impl.rappor_client import client_keys, derived_permanent_batch
from vetdp.impl.rappor_decoding import candidate_design_matrix, decode, estimate_bit_counts


class _Timers:
    """Wall-clock time spent in named functions, by wrapping them for the duration of a ``with`` block (no
    profiler: its overhead would distort the Python-level hashing)."""

    def __init__(self, targets: dict[str, tuple[object, str]]):
        self.targets, self.seconds, self._saved = targets, {name: 0.0 for name in targets}, {}

    def __enter__(self) -> _Timers:
        for name, (owner, attr) in self.targets.items():
            original = getattr(owner, attr)
            self._saved[name] = original

            def timed(*args, _original=original, _name=name, **kwargs):
                start = time.perf_counter()
                try:
                    return _original(*args, **kwargs)
                finally:
                    self.seconds[_name] += time.perf_counter() - start

            setattr(owner, attr, timed)
        return self

    def __exit__(self, *exc) -> None:
        for name, (owner, attr) in self.targets.items():
            setattr(owner, attr, self._saved[name])


def _timed(label: str, fn):
    start = time.perf_counter()
    out = fn()
    seconds = time.perf_counter() - start
    print(f"  {label:<66s} {seconds:8.2f} s", flush=True)
    return out, seconds


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reports", type=int, default=1_000_000)
    ap.add_argument("--candidates", type=int, default=10_000)
    ap.add_argument("--cohorts", type=int, default=64)
    ap.add_argument("--k", type=int, default=128)
    ap.add_argument("--h", type=int, default=2)
    ap.add_argument("--f", type=float, default=0.5)
    ap.add_argument("--p", type=float, default=0.5)
    ap.add_argument("--q", type=float, default=0.75)
    ap.add_argument("--seed", type=int, default=1, help="seed of the benchmark's population (not of the noise)")
    ap.add_argument("--profile", action="store_true", help="also profile a second decode: its 25 costliest calls")
    a = ap.parse_args(argv)
    print("$ .venv/bin/python benchmarks/bench_rappor.py " + " ".join(
        f"--{n} {getattr(a, n)}" for n in ("reports", "candidates", "cohorts", "k", "h", "f", "p", "q", "seed")))
    print(f"python {platform.python_version()}, numpy {np.__version__}, {platform.machine()}, "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    rng = np.random.default_rng(a.seed)
    candidates = [f"candidate-{i:06d}" for i in range(a.candidates)]
    weights = 1.0 / np.arange(1, a.candidates + 1)
    picks = rng.choice(a.candidates, size=a.reports, p=weights / weights.sum())
    values = [candidates[i] for i in picks]

    print(f"encode + randomize {a.reports} reports (k={a.k}, h={a.h}, {a.cohorts} cohorts):")
    total = time.perf_counter()
    cohorts, _ = _timed("cohort assignment (SHA-256 per client id, assign_cohorts)",
                        lambda: assign_cohorts(range(a.reports), a.cohorts))
    bloom, _ = _timed("Bloom filters (SHA-256 per distinct cohort-value pair)",
                      lambda: bloom_filter_matrix(values, cohorts, a.k, a.h))
    permanent, _ = _timed("permanent randomized response (f), OS bytes", lambda: rappor_permanent_batch(bloom, a.f))
    keys, _ = _timed("client keys from a master secret (HMAC-SHA256 per client, client_keys)",
                     lambda: client_keys(b"benchmark master secret, 32 bytes", range(a.reports)))
    _timed("permanent randomized response from client secrets (HMAC-SHA256)",
           lambda: derived_permanent_batch(keys, bloom, a.f))
    reports, _ = _timed("instantaneous randomized response (p, q)",
                        lambda: rappor_instantaneous_batch(permanent, a.p, a.q))
    print(f"  {'total':<66s} {time.perf_counter() - total:8.2f} s")

    print(f"decode against {a.candidates} candidates:")
    _timed("unbiased bit counts per cohort (estimate_bit_counts)",
           lambda: estimate_bit_counts(reports, cohorts, a.cohorts, a.f, a.p, a.q))
    _timed("design matrix (candidate_design_matrix)",
           lambda: candidate_design_matrix(candidates, a.cohorts, a.k, a.h))
    _timed("first use: import scikit-learn, SciPy (once per process)",
           lambda: [importlib.import_module(m) for m in ("sklearn.linear_model", "scipy.stats", "scipy.linalg")])
    import sklearn.linear_model

    from vetdp.impl import rappor_decoding

    targets = {
        "bit counts per cohort (_bit_counts)": (rappor_decoding, "_bit_counts"),
        "design matrix, sparse (candidate_design_sparse)": (rappor_decoding, "candidate_design_sparse"),
        "lasso screen (sklearn Lasso.fit)": (sklearn.linear_model.Lasso, "fit"),
        "least squares, independent columns (normal equations, SciPy)": (rappor_decoding, "_least_squares"),
    }
    with _Timers(targets) as timers:
        result, seconds = _timed("decode, whole (recomputes counts and design)", lambda: decode(
            reports, cohorts, candidates, k=a.k, h=a.h, f=a.f, p=a.p, q=a.q, num_cohorts=a.cohorts))
    for label, t in timers.seconds.items():
        print(f"    of which {label:<57s} {t:8.2f} s")
    print(f"    of which {'the rest (weights, slicing, t-tests, intervals)':<57s} "
          f"{seconds - sum(timers.seconds.values()):8.2f} s")
    truth = np.bincount(picks, minlength=a.candidates)
    sig = np.asarray(result.significant)
    print(f"result ({result.method}): {int(sig.sum())} significant candidates; {int((truth[sig] > 0).sum())} of "
          "them truly reported; "
          f"the heaviest (true {truth[0]}) estimated {float(result.estimates[0]):.0f} ± "
          f"{float(result.std_errors[0]):.0f}")
    if a.profile:
        prof = cProfile.Profile()
        prof.enable()
        decode(reports, cohorts, candidates, k=a.k, h=a.h, f=a.f, p=a.p, q=a.q, num_cohorts=a.cohorts)
        prof.disable()
        pstats.Stats(prof).sort_stats("cumulative").print_stats(25)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
