"""Benchmark: certified many-BF ε(δ) (k = 6, m = 10^5) beside the document's Monte Carlo (n_simu = 10^5).

Run:  .venv/bin/python benchmarks/bench_buffling.py [--flip-prob 0.2] [--delta 1e-6] [--seed 1]

Prints both wall-clock times and both answers. The exact method's target is < 10 s.
"""

from __future__ import annotations

import argparse
import time

from vetdp.buffling.bounds import many_bf_epsilon
from vetdp.buffling.many_bf import many_bf_distribution
from vetdp.buffling.montecarlo import simulate_many_bf


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-pub", type=int, default=6)
    ap.add_argument("--n-bit", type=int, default=100_000)
    ap.add_argument("--flip-prob", type=float, default=0.2)
    ap.add_argument("--delta", type=float, default=1e-6)
    ap.add_argument("--n-simu", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    start = time.perf_counter()
    dist = many_bf_distribution(a.n_pub, a.n_bit, a.flip_prob)
    eps = many_bf_epsilon(dist, a.delta)
    exact_s = time.perf_counter() - start
    start = time.perf_counter()
    mc = simulate_many_bf(a.n_pub, a.n_bit, a.flip_prob, a.delta, n_simu=a.n_simu, seed=a.seed)
    mc_s = time.perf_counter() - start
    print(f"k={a.n_pub} m={a.n_bit} p={a.flip_prob} δ={a.delta:g}")
    print(f"exact (certified, {dist.method}): {exact_s:7.3f} s   hockey-stick ε in [{eps.hockey_lower:.6f}, "
          f"{eps.hockey_upper:.6f}], quantile-rule ε in [{eps.quantile_lower:.6f}, {eps.quantile_upper:.6f}]")
    lo, hi = mc.epsilon_ci
    print(f"Monte Carlo (n_simu={a.n_simu}):    {mc_s:7.3f} s   quantile-rule ε ≈ {mc.epsilon:.6f} "
          f"(95% CI [{lo:.6f}, {hi:.6f}])")


if __name__ == "__main__":
    main()
