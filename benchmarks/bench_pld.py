"""Benchmark (not a test): exact PLD of RR / RAPPOR composed 10^4 times, ε at δ = 1e-6.

Run:  .venv/bin/python benchmarks/bench_pld.py

Prints our wall-clock time (exact PLD + certified ε) beside dp_accounting's for the same
query (PrivacyLossDistribution.from_randomized_response(...).self_compose(n), interval 1e-4),
and both ε values.
"""

from __future__ import annotations

import math
import time
import warnings

from vetdp.accounting.curves import randomized_response_curve, rappor_curve
from vetdp.accounting.pld import ExactPLD

N, DELTA = 10_000, 1e-6


def ours(family) -> tuple[float, float]:
    start = time.perf_counter()
    eps = ExactPLD(family, N).epsilon(DELTA).epsilon
    return time.perf_counter() - start, eps


def theirs(family) -> tuple[float, float] | None:
    try:
        from dp_accounting.pld import privacy_loss_distribution
    except ImportError:
        return None
    t = family.categories
    keep = math.exp(family.log_ratio) / (math.exp(family.log_ratio) + t - 1)  # P[output = input]
    noise = (1 - keep) * t / (t - 1)  # dp_accounting: with this probability, a uniform bucket
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pld = privacy_loss_distribution.from_randomized_response(noise, t, value_discretization_interval=1e-4)
        eps = pld.self_compose(N * family.coordinates).get_epsilon_for_delta(DELTA)
    return time.perf_counter() - start, eps


def main() -> None:
    print(f"{'event':<28} {'ours (s)':>9} {'ours ε':>20} {'dp_accounting (s)':>18} {'their ε':>20}")
    for label, family in [("RR ε=1", randomized_response_curve(1.0)), ("RAPPOR ε=1", rappor_curve(1.0)),
                          ("RR ε=0.1", randomized_response_curve(0.1)),
                          ("categorical RR t=4 ε=1", randomized_response_curve(1.0, categories=4))]:
        t_ours, e_ours = ours(family)
        other = theirs(family)
        t_other, e_other = other if other else (float("nan"), float("nan"))
        print(f"{label + f' × {N}':<28} {t_ours:>9.3f} {e_ours:>20.12g} {t_other:>18.3f} {e_other:>20.12g}")


if __name__ == "__main__":
    main()
