"""Benchmark: certified one-filter R(y_x | y_d) at m up to 10^6 beside a plain Monte Carlo of the same ratio at
equal time.

Run:  .venv/bin/python benchmarks/bench_buffling_one_bf.py [--flip-prob 0.1] [--seed 1] [--scales 10000,1000000]

For each m and each point (the bulk, 3σ and 10σ into the upper tail of y_x given y_d = m/2) it prints the time of
the certified enclosure, its relative width, then a Monte Carlo estimate given the same wall-clock time: draw
y_x ~ f(· | y_d) and y_x ~ f(· | y_d + 1) (numpy binomials, in batches), and estimate the ratio of the two hit
frequencies at y_x (at least one batch of 2^16 draws, so it may take longer than the certified value did). The
Monte Carlo error is measured against the certified value; "no hit" means the estimate
is undefined (0/0) in the time allowed.

With ``--epsilon`` it benchmarks the per-y_d ε(δ) instead (:func:`vetdp.buffling.one_bf_delta.one_bf_epsilon`,
certified, at y_d = 0, m/10 and m/2 for every m in ``--scales``), beside a plain Monte Carlo of the same ε(δ) at
equal time: as many draws of y_x under y_d and under y_d + 1 as fit in the certified method's time, the sample
means of both hockey-stick integrands (the seed's simulation, with R looked up), and the least ε at which both
are <= δ.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from vetdp.buffling.certified import ratio_enclosure

BATCH = 1 << 16


def monte_carlo_ratio(y_d: int, y_x: int, p: float, m: int, seconds: float, seed: int) -> tuple[float, int, int, int]:
    """(estimate, hits under y_d, hits under y_d + 1, draws per side) after about ``seconds`` of sampling."""
    rng = np.random.default_rng(seed)
    q = 1 - p
    hits0 = hits1 = draws = 0
    start = time.perf_counter()
    while draws == 0 or time.perf_counter() - start < seconds:
        y0 = rng.binomial(y_d, q, BATCH) + rng.binomial(m - y_d, p, BATCH)
        y1 = rng.binomial(y_d + 1, q, BATCH) + rng.binomial(m - y_d - 1, p, BATCH)
        hits0 += int(np.count_nonzero(y0 == y_x))
        hits1 += int(np.count_nonzero(y1 == y_x))
        draws += BATCH
    return (hits1 / hits0 if hits0 else math.nan), hits0, hits1, draws


def monte_carlo_epsilon(y_d: int, p: float, m: int, delta: float, seconds: float, seed: int
                        ) -> tuple[float, int]:
    """(ε(δ) estimate, draws per side) of the seed's simulation after about ``seconds`` of sampling.

    Draws y_x under y_d and under y_d + 1 (numpy binomials) and averages the hockey-stick integrands
    (1 − e^ε R)₊ and (1 − e^ε / R)₊ over them, R = f(y_x | y_d + 1)/f(y_x | y_d) taken from float pmfs (the
    seed computes R exactly for every draw; here it is looked up, which only makes the simulation faster).
    """
    from vetdp.buffling.one_bf_delta import common_law

    law = common_law(m, y_d, p)
    h = np.zeros(m + 2)
    h[law.start + 1: law.start + 1 + law.values.size] = law.values  # h[y + 1] = h(y)
    h_prev, h_cur = h[:-1], h[1:]  # h(y − 1), h(y) on y = 0..m
    q = 1 - p
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = (q * h_prev + p * h_cur) / (p * h_prev + q * h_cur)
    rng = np.random.default_rng(seed)
    r0, r1 = [], []
    draws = 0
    start = time.perf_counter()
    while draws == 0 or time.perf_counter() - start < seconds:
        r0.append(ratio[rng.binomial(y_d, q, BATCH) + rng.binomial(m - y_d, p, BATCH)])
        r1.append(ratio[rng.binomial(y_d + 1, q, BATCH) + rng.binomial(m - y_d - 1, p, BATCH)])
        draws += BATCH
    a0, a1 = np.concatenate(r0), np.concatenate(r1)

    def dlt(e: float) -> float:
        t = math.exp(e)
        return max(float(np.maximum(1 - t * a0, 0).mean()), float(np.maximum(1 - t / a1, 0).mean()))

    lo, hi = 0.0, 50.0
    if dlt(0.0) <= delta:
        return 0.0, draws
    for _ in range(80):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if dlt(mid) <= delta else (mid, hi)
    return hi, draws


def epsilon_main(p: float, delta: float, scales: list[int], seed: int) -> None:
    from vetdp.buffling.one_bf_delta import one_bf_epsilon

    for m in scales:
        for y_d in sorted({0, m // 10, m // 2} - {m}):
            r = one_bf_epsilon(m, y_d, p, delta)
            est, draws = monte_carlo_epsilon(y_d, p, m, delta, r.seconds, seed)
            inside = r.lower <= est <= r.upper
            err = abs(est - r.upper) / r.upper if r.upper else abs(est)
            print(f"m={m:>8} y_d={y_d:<7} certified ε ∈ [{r.lower:.10g}, {r.upper:.10g}] (rel. width "
                  f"{r.relative_width:.1e}) in {r.seconds * 1e3:8.1f} ms | Monte Carlo {draws} draws per side: "
                  f"ε ≈ {est:.6g} (rel. error {err:.1e}{', inside' if inside else ''})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--flip-prob", type=float, default=0.1)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--scales", default="10000,1000000")
    ap.add_argument("--epsilon", action="store_true", help="benchmark the per-y_d ε(δ) instead of R(y_x | y_d)")
    ap.add_argument("--delta", type=float, default=1e-6)
    a = ap.parse_args()
    p = a.flip_prob
    if a.epsilon:
        print(f"command: .venv/bin/python benchmarks/bench_buffling_one_bf.py --epsilon --flip-prob {p} "
              f"--delta {a.delta:g} --seed {a.seed} --scales {a.scales}")
        epsilon_main(p, a.delta, [int(float(s)) for s in a.scales.split(",")], a.seed)
        return
    print(f"command: .venv/bin/python benchmarks/bench_buffling_one_bf.py --flip-prob {p} --seed {a.seed} "
          f"--scales {a.scales}")
    for m in (int(float(s)) for s in a.scales.split(",")):
        y_d = m // 2
        mean = y_d * (1 - p) + (m - y_d) * p
        sd = math.sqrt(m * p * (1 - p))
        for label, y_x in (("bulk", round(mean)), ("mean+3σ", math.ceil(mean + 3 * sd)),
                           ("mean+10σ", math.ceil(mean + 10 * sd))):
            t0 = time.perf_counter()
            enc = ratio_enclosure(y_d, y_x, p, m)
            cert_s = time.perf_counter() - t0
            truth = float(enc.mid)
            t0 = time.perf_counter()
            est, h0, h1, draws = monte_carlo_ratio(y_d, y_x, p, m, cert_s, a.seed)  # at least one batch
            mc_s = time.perf_counter() - t0
            err = "no hit (0/0)" if math.isnan(est) else f"rel. error {abs(est - truth) / truth:.2e}"
            print(f"m={m:>8} y_d={y_d} y_x={y_x:<8} {label:<9} certified {truth:.15g} in {cert_s * 1e3:7.1f} ms "
                  f"(relative width {float(enc.rel_width):.1e}) | Monte Carlo {mc_s * 1e3:7.1f} ms, {draws} draws "
                  f"per side, hits {h0}/{h1}: {est:.6g}, {err}")


if __name__ == "__main__":
    main()
