"""The RAPPOR simulation table (issue 15, point 4): seeded end-to-end runs over a grid, as a Markdown table.

Run:  .venv/bin/python benchmarks/rappor_simulation_table.py                         (the full grid, minutes)
      .venv/bin/python benchmarks/rappor_simulation_table.py --candidates 100,1000 --reports 1e5 --cohorts 16,64
      .venv/bin/python benchmarks/rappor_simulation_table.py --quick                 (a 4-row grid, about a minute)

Each row is one seeded population (``vetdp.impl.rappor_decoding.simulate_population``: Zipf(s) over a random
ranking of the reported candidates, half of the candidate list decoys that nobody reports, k = 128, h = 2,
f = 1/2, p = 1/2, q = 3/4 unless given), decoded with ``decode`` (``--method``, default auto: least squares on every
candidate when they fit in a quarter of the rows, else the split screen) at level 1 − alpha and scored with
``score_decode``:

* recall = found / present (present: candidates with a true count > 0; found: those reported significant);
* false discoveries = significant candidates that nobody reported, out of the decoys (Bonferroni over the candidates
  tested bounds the chance of any false discovery by alpha under the decoder's linear model);
* coverage = candidates in the fitted model whose 1 − alpha interval holds the true count, out of those (stated
  rate 1 − alpha per interval, given the model, which the decoder chooses without looking at the fit's data; see
  proofs/rappor_decoding.md);
* time = simulate + decode, wall clock, seconds.

The table is printed on standard output with the command that produced it; progress goes to standard error.
"""

from __future__ import annotations

import argparse
import sys
import time

from vetdp.impl.rappor_decoding import decode, score_decode, simulate_population


def _ints(text: str) -> list[int]:
    out = []
    for part in text.split(","):
        v = float(part)
        if not v.is_integer() or v < 1:
            raise argparse.ArgumentTypeError(f"{part!r} must be an integer >= 1")
        out.append(int(v))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--candidates", type=_ints, default=[100, 1000, 10_000], help="comma-separated list")
    ap.add_argument("--reports", type=_ints, default=[100_000, 1_000_000], help="comma-separated list")
    ap.add_argument("--cohorts", type=_ints, default=[16, 64, 128], help="comma-separated list")
    ap.add_argument("--quick", action="store_true", help="candidates 100,1000; reports 1e5; cohorts 16,64")
    ap.add_argument("--k", type=int, default=128)
    ap.add_argument("--h", type=int, default=2)
    ap.add_argument("--f", type=float, default=0.5)
    ap.add_argument("--p", type=float, default=0.5)
    ap.add_argument("--q", type=float, default=0.75)
    ap.add_argument("--zipf-exponent", type=float, default=1.0)
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--seed", type=int, default=2014)
    ap.add_argument("--method", default="auto", help="decode's method: auto, all, split, paper")
    a = ap.parse_args(argv)
    if a.quick:
        a.candidates, a.reports, a.cohorts = [100, 1000], [100_000], [16, 64]
    command = ("$ .venv/bin/python benchmarks/rappor_simulation_table.py "
               f"--candidates {','.join(map(str, a.candidates))} --reports {','.join(map(str, a.reports))} "
               f"--cohorts {','.join(map(str, a.cohorts))} --k {a.k} --h {a.h} --f {a.f} --p {a.p} --q {a.q} "
               f"--zipf-exponent {a.zipf_exponent} --alpha {a.alpha} --seed {a.seed} --method {a.method}")
    rows = []
    grid = [(m, n, c) for m in a.candidates for n in a.reports for c in a.cohorts]
    for i, (m, n, c) in enumerate(grid, 1):
        print(f"[{i}/{len(grid)}] candidates={m} reports={n} cohorts={c} ...", file=sys.stderr, flush=True)
        start = time.perf_counter()
        sim = simulate_population(m, n, c, k=a.k, h=a.h, f=a.f, p=a.p, q=a.q, zipf_exponent=a.zipf_exponent,
                                  seed=a.seed)
        result = decode(sim.reports, sim.cohorts, sim.candidates, k=a.k, h=a.h, f=a.f, p=a.p, q=a.q,
                        num_cohorts=c, alpha=a.alpha, method=a.method)
        seconds = time.perf_counter() - start
        s = score_decode(result, sim)
        rows.append((m, n, c, s, seconds, result.method))
        print(f"    recall {s.found}/{s.present}, false discoveries {s.false_discoveries}/{s.absent}, coverage "
              f"{s.covered}/{s.selected}, {seconds:.1f} s", file=sys.stderr, flush=True)
    print(command)
    print()
    print(f"k = {a.k}, h = {a.h}, f = {a.f}, p = {a.p}, q = {a.q}, Zipf exponent {a.zipf_exponent}, half of the "
          f"candidates decoys, alpha = {a.alpha} (intervals at {1 - a.alpha:.0%}, significance at alpha over the "
          f"candidates tested), seed {a.seed}; decode --method {a.method}.")
    print()
    print("| candidates | reports | cohorts | method | recall (found / reported) | false discoveries (of decoys) "
          "| coverage (covered / in model) | time (s) |")
    print("|---:|---:|---:|---|---:|---:|---:|---:|")
    for m, n, c, s, seconds, method in rows:
        coverage = f"{s.coverage:.3f} ({s.covered}/{s.selected})" if s.selected else "— (0 selected)"
        print(f"| {m} | {n:.0e} | {c} | {method} | {s.recall:.3f} ({s.found}/{s.present}) | {s.false_discoveries} / "
              f"{s.absent} | {coverage} | {seconds:.1f} |".replace("e+0", "e"))
    covered = sum(r[3].covered for r in rows)
    selected = sum(r[3].selected for r in rows)
    false = sum(r[3].false_discoveries for r in rows)
    if selected:
        print()
        from scipy import stats

        tail = float(stats.binom.cdf(covered, selected, 1 - a.alpha))
        print(f"All rows: coverage {covered}/{selected} = {covered / selected:.3f} (stated {1 - a.alpha:.2f}; "
              f"P[Binomial({selected}, {1 - a.alpha:g}) <= {covered}] = {tail:.2g}); "
              f"false discoveries {false} in {len(rows)} runs (stated: at most one in a run with probability "
              f"<= {a.alpha}).")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
