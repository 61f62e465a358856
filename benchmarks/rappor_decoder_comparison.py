"""RAPPOR decoders compared on the same reports (issue 27, point 3): recall, false discoveries and interval coverage of
``decode``'s methods — "auto" (the default), "split" (the single sample split: a third of the cohorts screen, two
thirds fit), "halves" (the same split with half of the cohorts screening, as before: ``SCREEN_EVERY`` = 2 for that
row), "paper" (the paper's lasso + least squares + Bonferroni on every cohort) — on seeded simulations.

Run:  .venv/bin/python benchmarks/rappor_decoder_comparison.py                       (the issue's two configurations)
      .venv/bin/python benchmarks/rappor_decoder_comparison.py --config zipf:1e6:1000 --seeds 1,2
      .venv/bin/python benchmarks/rappor_decoder_comparison.py --quick                 (one seed each, small)

A configuration is DISTRIBUTION:REPORTS:CANDIDATES (half of the candidates decoys that nobody reports; the other half
reported with the law DISTRIBUTION of ``simulate_population``: zipf (exponent 1), exponential, normal, uniform), with
k = 128, h = 2, 64 cohorts, f = p = 1/2, q = 3/4, alpha = 0.05 unless given. Every method decodes the same reports.

* recall = reported candidates found significant / reported candidates;
* false discoveries = significant decoys (each method controls the chance of any at alpha under the model, except
  "paper", which claims nothing: its model is chosen on the data it tests);
* coverage = candidates in the fitted model whose 95% interval holds the true count / candidates in the model;
  ``P[Bin <= covered]`` is the chance of so few covering if every interval had its 0.95;
* bias = the mean of (estimate − true count)/standard error over the candidates in the model: about 0 (within a few
  times 1/sqrt(in model)) when the model was chosen without looking at the fit's data; positive when candidates
  entered it because their counts came out high — the selection that lets "paper" call borderline strings;
* time = decode alone, wall clock (the machine is shared: an upper bound).

Progress goes to standard error; the Markdown table to standard output, with the command that produced it.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from vetdp.impl import rappor_decoding
from vetdp.impl.rappor_decoding import DISTRIBUTIONS, decode, score_decode, simulate_population

METHODS = ("auto", "split", "halves", "paper")


def _decode(method: str, *args, **kwargs):
    """``decode`` with ``method``; "halves" is method "split" with every second cohort to the screen."""
    if method != "halves":
        return decode(*args, method=method, **kwargs)
    every = rappor_decoding.SCREEN_EVERY
    rappor_decoding.SCREEN_EVERY = 2
    try:
        return decode(*args, method="split", **kwargs)
    finally:
        rappor_decoding.SCREEN_EVERY = every
ISSUE_CONFIGS = ["zipf:1e6:200", "exponential:1e5:200"]


def _config(text: str) -> tuple[str, int, int]:
    try:
        dist, reports, candidates = text.split(":")
        n, m = float(reports), float(candidates)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} must be DISTRIBUTION:REPORTS:CANDIDATES") from None
    if dist not in DISTRIBUTIONS or not n.is_integer() or not m.is_integer() or n < 1 or m < 2:
        raise argparse.ArgumentTypeError(f"{text!r}: distribution in {DISTRIBUTIONS}, reports >= 1, candidates >= 2")
    return dist, int(n), int(m)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--config", type=_config, action="append", help="DISTRIBUTION:REPORTS:CANDIDATES (repeatable)")
    ap.add_argument("--seeds", default="1,2,3,4,5", help="comma-separated seeds, one simulation each")
    ap.add_argument("--quick", action="store_true", help="zipf:1e5:200 and exponential:1e5:200, seed 1")
    ap.add_argument("--k", type=int, default=128)
    ap.add_argument("--h", type=int, default=2)
    ap.add_argument("--cohorts", type=int, default=64)
    ap.add_argument("--f", type=float, default=0.5)
    ap.add_argument("--p", type=float, default=0.5)
    ap.add_argument("--q", type=float, default=0.75)
    ap.add_argument("--alpha", type=float, default=0.05)
    a = ap.parse_args(argv)
    configs = a.config or [_config(c) for c in ISSUE_CONFIGS]
    seeds = [int(s) for s in a.seeds.split(",")]
    if a.quick:
        configs, seeds = [_config("zipf:1e5:200"), _config("exponential:1e5:200")], [1]
    shape = {"k": a.k, "h": a.h, "f": a.f, "p": a.p, "q": a.q, "num_cohorts": a.cohorts}
    print("$ .venv/bin/python benchmarks/rappor_decoder_comparison.py "
          + " ".join(f"--config {d}:{n:.0e}:{m}".replace("e+0", "e") for d, n, m in configs)
          + f" --seeds {','.join(map(str, seeds))} --k {a.k} --h {a.h} --cohorts {a.cohorts} --f {a.f} --p {a.p} "
          f"--q {a.q} --alpha {a.alpha}")
    print()
    print("| configuration | method (as run) | recall (found / reported) | false discoveries (of decoys) "
          "| coverage (covered / in model) | P[Bin <= covered] | bias (z) | decode time (s) |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    from scipy import stats

    for dist, n, m in configs:
        totals = {method: [0, 0, 0, 0, 0, 0, 0.0, set(), 0.0] for method in METHODS}
        for seed in seeds:
            print(f"{dist} {n} reports, {m} candidates, seed {seed}: simulating ...", file=sys.stderr, flush=True)
            sim = simulate_population(m, n, a.cohorts, k=a.k, h=a.h, f=a.f, p=a.p, q=a.q, distribution=dist,
                                      num_decoys=m // 2, seed=seed)
            for method in METHODS:
                start = time.perf_counter()
                res = _decode(method, sim.reports, sim.cohorts, sim.candidates, alpha=a.alpha, **shape)
                seconds = time.perf_counter() - start
                s = score_decode(res, sim)
                t = totals[method]
                for i, v in enumerate((s.found, s.present, s.false_discoveries, s.absent, s.covered, s.selected)):
                    t[i] += v
                t[6] += seconds
                t[7].add(res.method)
                sel = res.selected
                t[8] += float(np.sum((res.estimates[sel] - sim.true_counts[sel]) / res.std_errors[sel]))
                print(f"    {method} ({res.method}): recall {s.found}/{s.present}, false {s.false_discoveries}/"
                      f"{s.absent}, coverage {s.covered}/{s.selected}, {seconds:.1f} s", file=sys.stderr, flush=True)
        for method in METHODS:
            found, present, false, absent, covered, selected, seconds, ran, bias = totals[method]
            tail = float(stats.binom.cdf(covered, selected, 1 - a.alpha)) if selected else float("nan")
            label = f"{dist}, {n:.0e} reports, {m} candidates, seeds {seeds[0]}–{seeds[-1]}".replace("e+0", "e")
            print(f"| {label} | {method} ({'/'.join(sorted(ran))}) | {found / present:.3f} ({found}/{present}) | "
                  f"{false} / {absent} | {covered / max(selected, 1):.3f} ({covered}/{selected}) | {tail:.2g} | "
                  f"{bias / max(selected, 1):+.2f} | {seconds / len(seeds):.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
