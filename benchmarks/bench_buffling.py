"""Benchmark: the many-BF ε(δ) of the heuristic pair, certified, beside a plain Monte Carlo at equal time.

Run:  .venv/bin/python benchmarks/bench_buffling.py                      (the default points below)
      .venv/bin/python benchmarks/bench_buffling.py --point 3,100,0.1 --point 6,100000,0.2 [--delta 1e-6] [--seed 1]
      .venv/bin/python benchmarks/bench_buffling.py --grid [--no-before] [--no-mc] [--ks 3,4,6] [--ps 0.1,0.2,0.3]
                                                   (the seed's grid: m = 10², …, 10⁶; one table row per point)

For every point (k, m, p) it prints, with wall-clock times:

* before: the coupled grid laws (``many_bf_distribution`` + ``many_bf_epsilon``, the former default) and the
  relative width of their certified hockey-stick bracket;
* after:  ``certified_epsilon`` (exact enumeration, conditioning on all but two categories, or the grid laws) and
  its relative width;
* Monte Carlo: ``simulate_hockey_epsilon`` with as many draws as fit in the time the certified method took
  (calibrated on a small run), its estimate, its 95% interval, whether that interval contains the certified
  bracket, and how many draws the estimate rests on;
* the document's quantile-rule Monte Carlo (``simulate_many_bf``) at the same number of draws, for reference.

``--grid`` prints one row per (k, m, p) instead: the bracket and width of the former default
(enumeration → conditioning → coupled grid laws, each where it used to apply), of ``certified_epsilon`` now
(which adds the category chains of :mod:`vetdp.buffling.category_chain` before the grid laws), and the Monte
Carlo's 95% interval at the same time as the new method.
"""

from __future__ import annotations

import argparse
import math
import sys
import time

from vetdp.buffling.bounds import certified_epsilon, many_bf_epsilon
from vetdp.buffling.logo_counts import conditional_epsilon, exact_epsilon, exact_is_cheap
from vetdp.buffling.many_bf import many_bf_distribution
from vetdp.buffling.montecarlo import simulate_hockey_epsilon, simulate_many_bf

DEFAULT_POINTS = [(3, 100, 0.1), (2, 1000, 0.3), (3, 10_000, 0.2), (4, 1000, 0.2), (3, 100_000, 0.1),
                  (6, 100_000, 0.2)]


def _point(text: str) -> tuple[int, int, float]:
    k, m, p = text.split(",")
    return int(k), int(m), float(p)


def _width(lo: float, hi: float) -> float:
    return (hi - lo) / hi if hi > 0 else 0.0


def run(k: int, m: int, p: float, delta: float, seed: int) -> None:
    print(f"--- k={k} m={m} p={p} δ={delta:g}")
    start = time.perf_counter()
    try:
        e = many_bf_epsilon(many_bf_distribution(k, m, p), delta)
        before = f"[{e.hockey_lower:.6f}, {e.hockey_upper:.6f}] width {_width(e.hockey_lower, e.hockey_upper):.2%}"
    except ArithmeticError as exc:  # e.g. the default grid does not reach this δ
        before = f"no bracket ({exc})"
    print(f"before (grid laws):          {time.perf_counter() - start:7.2f} s  {before}")
    r = certified_epsilon(k, m, p, delta)
    print(f"after ({r.method:11s}):       {r.seconds:7.2f} s  [{r.lower:.6f}, {r.upper:.6f}] width "
          f"{r.relative_width:.2e}  (work {r.work})")
    calib = simulate_hockey_epsilon(k, m, p, delta, n_simu=20_000, seed=seed)
    n = max(20_000, min(10**8, int(20_000 * max(r.seconds, 0.05) / max(calib.seconds, 1e-6))))
    mc = simulate_hockey_epsilon(k, m, p, delta, n_simu=n, seed=seed)
    lo, hi = mc.epsilon_ci
    covers = lo <= r.lower and r.upper <= hi
    print(f"Monte Carlo, {n:>10d} draws: {mc.seconds:7.2f} s  ε ≈ {mc.epsilon:.6f}, 95% CI [{lo:.6f}, {hi:.6f}] "
          f"width {_width(lo, hi):.2%}; covers the certified value: {'yes' if covers else 'NO'}; "
          f"rests on {mc.contributing} draws")
    q = simulate_many_bf(k, m, p, delta, n_simu=min(n, 2_000_000), seed=seed)
    qlo, qhi = q.epsilon_ci
    print(f"quantile rule (document), {min(n, 2_000_000)} draws: ε ≈ {q.epsilon:.6f}, CI [{qlo:.6f}, "
          f"{qhi if math.isfinite(qhi) else 'inf'}] (a different, looser statement)")


SEED_MS = (100, 1000, 10**4, 10**5, 10**6)


def former_default(k: int, m: int, p: float, delta: float) -> tuple[str, float, float]:
    """(method, lower, upper) of the certified bracket as computed before the category chains were added."""
    if exact_is_cheap(k, m):
        e = exact_epsilon(k, m, p, delta)
        return "enumeration", e.lower, e.upper
    c = conditional_epsilon(k, m, p, delta)
    if c is not None:
        return "conditional", c.lower, c.upper
    e = many_bf_epsilon(many_bf_distribution(k, m, p), delta)
    return "coupling", e.hockey_lower, e.hockey_upper


def grid_row(k: int, m: int, p: float, delta: float, seed: int, before: bool, mc: bool) -> None:
    cells = [f"k={k} m={m:<7} p={p}"]
    if before:
        t0 = time.perf_counter()
        try:
            meth, lo, hi = former_default(k, m, p, delta)
            took = time.perf_counter() - t0
            cells.append(f"before {meth:11s} [{lo:.6g}, {hi:.6g}] {_width(lo, hi):8.3%} {took:6.1f}s")
        except ArithmeticError as exc:
            cells.append(f"before: no bracket ({exc})")
    r = certified_epsilon(k, m, p, delta)
    cells.append(f"after {r.method:11s} [{r.lower:.6g}, {r.upper:.6g}] {r.relative_width:8.3%} {r.seconds:6.1f}s")
    if mc:
        calib = simulate_hockey_epsilon(k, m, p, delta, n_simu=20_000, seed=seed)
        n = max(20_000, min(10**8, int(20_000 * max(r.seconds, 0.05) / max(calib.seconds, 1e-6))))
        est = simulate_hockey_epsilon(k, m, p, delta, n_simu=n, seed=seed)
        lo, hi = est.epsilon_ci
        cells.append(f"MC {n} draws {est.seconds:6.1f}s: {est.epsilon:.6g} CI [{lo:.6g}, {hi:.6g}] "
                     f"{_width(lo, hi):.2%} on {est.contributing} draws")
    print(" | ".join(cells), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--point", type=_point, action="append", help="k,m,p (repeatable)")
    ap.add_argument("--delta", type=float, default=1e-6)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--grid", action="store_true", help="the seed's grid, one row per point")
    ap.add_argument("--ks", default="3,4,6")
    ap.add_argument("--ps", default="0.1,0.2,0.3")
    ap.add_argument("--ms", default=",".join(str(m) for m in SEED_MS))
    ap.add_argument("--no-before", action="store_true", help="--grid: skip the former default")
    ap.add_argument("--no-mc", action="store_true", help="--grid: skip the Monte Carlo")
    a = ap.parse_args()
    print("command:", " ".join([".venv/bin/python", *sys.argv]))
    if a.grid:
        for p in (float(x) for x in a.ps.split(",")):
            for k in (int(x) for x in a.ks.split(",")):
                for m in (int(float(x)) for x in a.ms.split(",")):
                    grid_row(k, m, p, a.delta, a.seed, not a.no_before, not a.no_mc)
        return
    for k, m, p in a.point or DEFAULT_POINTS:
        run(k, m, p, a.delta, a.seed)


if __name__ == "__main__":
    main()
