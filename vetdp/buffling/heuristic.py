"""Part III's heuristic, tested: is (all columns at logo 0) vs (one moved to logo 2^k − 1) the worst pair?

The adversary sees the shuffled output, i.e. the output logo counts. For small k and m we
enumerate every logo-count dataset d (m columns over 2^k logos) and every neighbour d'
(one column moved from one logo to another), compute the output laws, and compare the
heuristic pair with the worst pair for the max-divergence and for δ(ε) at e^ε ∈ {1, 3/2, 2, 4}
(rational, so δ is an exact rational).

**Guarantee.** Every pair is screened in float64; every pair whose float value is within a
relative 1e-9 of the heuristic's (or above it) is then evaluated exactly (integers over a
common denominator). Float64 errors here are below 1e-12 relative, so any pair whose exact
value exceeds the heuristic's is among those evaluated exactly: the verdict is exact.

Proof and the recorded results: proofs/buffling.md, section "The heuristic worst pair".
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from fractions import Fraction

import numpy as np

from vetdp.buffling._common import check_flip_prob, check_n_pub, transition_matrix_exact
from vetdp.core.validation import check_int

__all__ = ["HeuristicVerdict", "HeuristicReport", "test_heuristic", "DEFAULT_THRESHOLDS"]

DEFAULT_THRESHOLDS = (Fraction(1), Fraction(3, 2), Fraction(2), Fraction(4))  # e^ε


def _compositions(m: int, parts: int) -> list[tuple[int, ...]]:
    out = []
    for bars in itertools.combinations(range(m + parts - 1), parts - 1):
        edges = (-1,) + bars + (m + parts - 1,)
        out.append(tuple(edges[i + 1] - edges[i] - 1 for i in range(parts)))
    return out


def _law_float(P: np.ndarray, d: tuple[int, ...], outs: list[tuple[int, ...]], index: dict) -> np.ndarray:
    n = len(d)
    law = {tuple([0] * n): 1.0}
    for logo, cnt in enumerate(d):
        for _ in range(cnt):
            new: dict = {}
            for f, pr in law.items():
                for j in range(n):
                    g = f[:j] + (f[j] + 1,) + f[j + 1:]
                    new[g] = new.get(g, 0.0) + pr * P[logo][j]
            law = new
    vec = np.zeros(len(outs))
    for f, pr in law.items():
        vec[index[f]] = pr
    return vec


def _law_exact(P: list[list[Fraction]], d: tuple[int, ...]) -> dict[tuple[int, ...], Fraction]:
    n = len(d)
    law = {tuple([0] * n): Fraction(1)}
    for logo, cnt in enumerate(d):
        for _ in range(cnt):
            new: dict = {}
            for f, pr in law.items():
                for j in range(n):
                    g = f[:j] + (f[j] + 1,) + f[j + 1:]
                    new[g] = new.get(g, Fraction(0)) + pr * P[logo][j]
            law = new
    return law


@dataclasses.dataclass(frozen=True)
class HeuristicVerdict:
    """One metric: the heuristic pair's exact value, the worst exact value and a pair attaining it."""

    metric: str  # "max_divergence" (as the likelihood ratio e^ε) or "delta@e^eps=<c>"
    heuristic: Fraction
    worst: Fraction
    worst_pair: tuple[tuple[int, ...], tuple[int, ...]]
    exact_checked: int  # how many pairs were evaluated exactly

    @property
    def holds(self) -> bool:
        return self.worst <= self.heuristic

    @property
    def excess(self) -> Fraction:
        return self.worst - self.heuristic


@dataclasses.dataclass(frozen=True)
class HeuristicReport:
    n_pub: int
    n_bit: int
    flip_prob: float
    pairs: int
    verdicts: list[HeuristicVerdict]

    @property
    def holds(self) -> bool:
        return all(v.holds for v in self.verdicts)


def test_heuristic(n_pub: int, n_bit: int, flip_prob: float,
                   thresholds: tuple[Fraction, ...] = DEFAULT_THRESHOLDS) -> HeuristicReport:
    """Exhaustively compare the document's heuristic pair with every neighbouring pair (small k, m)."""
    k = check_n_pub(n_pub, hi=3)
    m = check_int("n_bit", n_bit, lo=1, hi=6 if k < 3 else 5)
    p = check_flip_prob(flip_prob)
    n = 1 << k
    P_exact = transition_matrix_exact(k, p)
    P = np.array([[float(x) for x in row] for row in P_exact])
    datasets = _compositions(m, n)
    d_index = {d: i for i, d in enumerate(datasets)}
    outs = _compositions(m, n)
    index = {f: i for i, f in enumerate(outs)}
    L = np.array([_law_float(P, d, outs, index) for d in datasets])
    pairs = [(i, d_index[_move(datasets[i], a, b)]) for i in range(len(datasets)) for a in range(n)
             if datasets[i][a] for b in range(n) if b != a]
    src = np.array([i for i, _ in pairs])
    dst = np.array([j for _, j in pairs])
    D0 = (m,) + (0,) * (n - 1)
    D1 = (m - 1,) + (0,) * (n - 2) + (1,)
    heur = [(d_index[D0], d_index[D1]), (d_index[D1], d_index[D0])]
    exact_cache: dict[int, dict] = {}

    def exact_law(i: int) -> dict:
        if i not in exact_cache:
            exact_cache[i] = _law_exact(P_exact, datasets[i])
        return exact_cache[i]

    def exact_value(metric: str, i: int, j: int) -> Fraction:
        a, b = exact_law(i), exact_law(j)  # the pair is (d = a, d' = b); loss ln(b/a)
        if metric == "max_divergence":
            return max(b[f] / a[f] for f in a)
        c = Fraction(metric.split("=")[1])
        return sum((b[f] - c * a[f] for f in a if b[f] > c * a[f]), Fraction(0))

    screens = {"max_divergence": (L[dst] / L[src]).max(axis=1)}
    for c in thresholds:
        screens[f"delta@e^eps={c}"] = np.clip(L[dst] - float(c) * L[src], 0, None).sum(axis=1)
    verdicts = []
    for metric, values in screens.items():
        h_exact = max(exact_value(metric, i, j) for i, j in heur)
        h_float = float(h_exact)
        cand = np.flatnonzero(values >= h_float * (1 - 1e-9) - 1e-15)
        worst, worst_pair = h_exact, (datasets[heur[0][0]], datasets[heur[0][1]])
        for t in cand:
            v = exact_value(metric, int(src[t]), int(dst[t]))
            if v > worst:
                worst, worst_pair = v, (datasets[int(src[t])], datasets[int(dst[t])])
        verdicts.append(HeuristicVerdict(metric, h_exact, worst, worst_pair, int(cand.size)))
    return HeuristicReport(k, m, p, len(pairs), verdicts)


test_heuristic.__test__ = False  # not a pytest test, despite its name


def _move(d: tuple[int, ...], a: int, b: int) -> tuple[int, ...]:
    out = list(d)
    out[a] -= 1
    out[b] += 1
    return tuple(out)


def describe(v: HeuristicVerdict) -> str:
    """One line: holds, or by how much the worst pair exceeds the heuristic (as ln for ratios)."""
    if v.holds:
        return f"{v.metric}: heuristic attains the worst value {float(v.worst):.6g}"
    if v.metric == "max_divergence":
        return (f"{v.metric}: worst ln-ratio {math.log(v.worst):.6g} > heuristic {math.log(v.heuristic):.6g} "
                f"at {v.worst_pair}")
    return f"{v.metric}: worst δ {float(v.worst):.6g} > heuristic {float(v.heuristic):.6g} at {v.worst_pair}"
