"""Part I of seed 004: the signal-to-noise ratio of an incremental change of logo counts.

With input logo counts d and output logo counts x (columns independent, column with logo l
goes to logo j with probability P[l][j]):

    E[x] = Pᵀ d,   Cov(x) = B = Λ(Pᵀ d) − Pᵀ Λ(d) P.

Moving one column from logo j to logo i (Δd = e_i − e_j) shifts E[cᵀx] by cᵀa, a = Pᵀ Δd.
SNR(d; j → i) = max_c (cᵀa)² / (cᵀ B c): a generalised Rayleigh quotient with a rank-one
numerator, maximised by any c with B c = a (B1 = 0 and 1ᵀa = 0, so c is fixed up to adding a
constant; we return the solution with 1ᵀc = 0), where it equals cᵀa.

Exact (rational) for 2^k <= 16 by default; float (least squares on the bordered system) above.
Proof and the document's inconsistencies: proofs/buffling.md, section "Part I".
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from fractions import Fraction

import numpy as np

from vetdp.buffling._common import check_flip_prob, check_n_pub, transition_matrix_exact

__all__ = ["snr_matrices", "snr_pair", "SNRTable", "snr_table", "skewed_counts", "concentration",
           "transition_matrix_float"]

Num = Fraction | float


def snr_matrices(P: Sequence[Sequence[Num]], d: Sequence[Num], i: int, j: int) -> tuple[list, list[list]]:
    """(a, B) for the change j → i: a = Pᵀ(e_i − e_j), B = Λ(Pᵀd) − Pᵀ Λ(d) P (P rows = input logos)."""
    n = len(P)
    a = [P[i][col] - P[j][col] for col in range(n)]
    mean = [sum(d[r] * P[r][col] for r in range(n)) for col in range(n)]
    B = [[(mean[s] if s == t else 0) - sum(d[r] * P[r][s] * P[r][t] for r in range(n)) for t in range(n)]
         for s in range(n)]
    return a, B


def _solve_exact(B: list[list[Fraction]], a: list[Fraction]) -> list[Fraction]:
    """The c with B c = a and Σc = 0 (bordered system, Gauss–Jordan in rationals)."""
    n = len(B)
    M = [list(map(Fraction, B[r])) + [Fraction(1), Fraction(a[r])] for r in range(n)]
    M.append([Fraction(1)] * n + [Fraction(0), Fraction(0)])
    size = n + 1
    for col in range(size):
        piv = next((r for r in range(col, size) if M[r][col] != 0), None)
        if piv is None:
            raise ArithmeticError("B has a null space larger than the constants: d must put positive "
                                  "weight where every output logo is reachable")
        M[col], M[piv] = M[piv], M[col]
        inv = 1 / M[col][col]
        M[col] = [v * inv for v in M[col]]
        for r in range(size):
            if r != col and M[r][col] != 0:
                f = M[r][col]
                M[r] = [x - f * y for x, y in zip(M[r], M[col], strict=True)]
    return [M[r][size] for r in range(n)]


def snr_pair(P: Sequence[Sequence[Num]], d: Sequence[Num], i: int, j: int, exact: bool = True) -> tuple[Num, list]:
    """(SNR(d; j → i), the maximising c with Σc = 0); SNR is 0 for i == j."""
    n = len(P)
    if i == j:
        return (Fraction(0) if exact else 0.0), [0] * n
    a, B = snr_matrices(P, d, i, j)
    if exact:
        c = _solve_exact(B, a)
        return sum((x * y for x, y in zip(c, a, strict=True)), Fraction(0)), c
    Bm = np.array(B, dtype=float)
    M = np.block([[Bm, np.ones((n, 1))], [np.ones((1, n)), np.zeros((1, 1))]])
    sol = np.linalg.lstsq(M, np.append(np.array(a, dtype=float), 0.0), rcond=None)[0]
    c = sol[:n]
    return float(c @ np.array(a, dtype=float)), list(c)


def transition_matrix_float(k: int, p: float) -> np.ndarray:
    """The 2^k × 2^k logo transition matrix in float64: entry [i][j] = p^H q^(k−H) correctly rounded, H = |i ⊕ j|."""
    fp = Fraction(p)
    powers = np.array([float(fp**h * (1 - fp) ** (k - h)) for h in range(k + 1)])
    idx = np.arange(1 << k, dtype=np.uint32)
    return powers[np.bitwise_count(idx[:, None] ^ idx[None, :])]


def skewed_counts(k: int, n_bit: int, skew: Fraction | float) -> list[Fraction]:
    """Logo counts m·((1 − s)·uniform + s·e_0): s = 0 spreads the m columns evenly, s = 1 puts all at logo 0.

    The document's skewness family is in a linked note we do not have; this is our stand-in.
    """
    s = Fraction(skew)
    if not 0 <= s <= 1:
        raise ValueError(f"skew={s} must be in [0, 1]")
    n = 1 << k
    return [n_bit * ((1 - s) / n + (s if logo == 0 else 0)) for logo in range(n)]


def concentration(c: Sequence[Num]) -> float:
    """How far c is from t·(s, …, s, −1) + const: spread of c_0..c_(n−2) over their distance to c_(n−1).

    0 exactly when all but the last coefficient are equal; Observation 3 says it is small. NaN (undefined) when
    some coefficient equals the last one, e.g. at flip_prob = 1/2 where c = 0.
    """
    head, last = [float(x) for x in c[:-1]], float(c[-1])
    gap = min(abs(x - last) for x in head)
    if gap == 0:  # e.g. flip_prob = 1/2: every c is 0, the output carries no signal and the ratio is undefined
        return math.nan
    return (max(head) - min(head)) / gap


@dataclasses.dataclass(frozen=True)
class SNRTable:
    """SNR of every change j → i (``snr[i][j]``) and its maximising coefficients (``coef[i][j]``, Σc = 0)."""

    n_pub: int
    flip_prob: float
    counts: list
    snr: list[list]
    coef: list[list[list]]
    exact: bool

    @property
    def maximum(self) -> Num:
        return max(max(row) for row in self.snr)

    def argmax(self) -> list[tuple[int, int]]:
        """Every (i, j) attaining the maximum (exactly, when exact)."""
        top = self.maximum
        return [(i, j) for i, row in enumerate(self.snr) for j, v in enumerate(row) if v == top]


def snr_table(n_pub: int, flip_prob: float, counts: Sequence[Num], exact: bool | None = None) -> SNRTable:
    """The SNR heat map of the document's Figure 3 for input logo counts ``counts`` (length 2^k)."""
    k = check_n_pub(n_pub, hi=10)
    p = check_flip_prob(flip_prob)
    n = 1 << k
    if len(counts) != n:
        raise ValueError(f"counts has length {len(counts)}; it must have length 2**n_pub = {n}")
    if any(c < 0 for c in counts) or sum(counts) <= 0:
        raise ValueError("counts must be non-negative with a positive sum")
    exact = (k <= 4) if exact is None else exact
    if exact:
        P = transition_matrix_exact(k, p)
        d: list = [Fraction(c) for c in counts]
        _, B = snr_matrices(P, d, 0, 0)
        # columns of the inverse bordered matrix restricted to B's block: c = G a for every a
        cols = [_solve_exact(B, [Fraction(int(r == t)) - Fraction(1, n) for r in range(n)]) for t in range(n)]
        G = [[cols[t][r] for t in range(n)] for r in range(n)]  # G e_t = solution for the centred e_t
        diffs = {(i, j): [P[i][t] - P[j][t] for t in range(n)] for i in range(n) for j in range(n)}
        snr = [[Fraction(0)] * n for _ in range(n)]
        coef = [[[Fraction(0)] * n for _ in range(n)] for _ in range(n)]
        for (i, j), a in diffs.items():
            if i == j:
                continue
            c = [sum((G[r][t] * a[t] for t in range(n)), Fraction(0)) for r in range(n)]
            coef[i][j] = c
            snr[i][j] = sum((x * y for x, y in zip(c, a, strict=True)), Fraction(0))
        return SNRTable(k, p, list(counts), snr, coef, True)
    Pf = transition_matrix_float(k, p)
    df = np.array([float(c) for c in counts])
    Bf = np.diag(Pf.T @ df) - Pf.T @ (df[:, None] * Pf)
    M = np.block([[Bf, np.ones((n, 1))], [np.ones((1, n)), np.zeros((1, 1))]])
    # c for j → i is Minv (P[i] − P[j]) = Q[i] − Q[j] with Q = P Minvᵀ (Minv: the top-left block of M⁻¹), and
    # SNR = cᵀa expands into four entries of G = Q Pᵀ: O(n²) memory instead of the n³ of forming every (i, j) pair
    # (2^10 logos: 8 MB, not 17 GB). M is invertible when B is definite on 1^⊥ (every output logo reachable); one LU
    # solve with n right-hand sides is several times faster than the pseudo-inverse it replaces (k = 10: 3 s, not 20).
    rhs = np.vstack([Pf.T, np.zeros((1, n))])
    try:
        Q = np.linalg.solve(M, rhs)[:n].T
    except np.linalg.LinAlgError:  # a singular bordered system: fall back to the least-squares solution
        Q = Pf @ np.linalg.pinv(M)[:n, :n].T
    G = Q @ Pf.T
    g = np.diag(G)
    snr_f = g[:, None] + g[None, :] - G - G.T
    np.fill_diagonal(snr_f, 0.0)
    return SNRTable(k, p, list(counts), snr_f.tolist(), _CoefficientRows(Q), False)


class _CoefficientRows(Sequence):
    """``coef[i][j]`` = Q[i] − Q[j] computed on access (the float path keeps Q, not the n³ coefficients)."""

    def __init__(self, Q: np.ndarray):
        self._Q = Q

    def __len__(self) -> int:
        return len(self._Q)

    def __getitem__(self, i: int) -> _CoefficientRow:  # type: ignore[override]
        if not -len(self) <= i < len(self):
            raise IndexError(i)
        return _CoefficientRow(self._Q, i)


class _CoefficientRow(Sequence):
    def __init__(self, Q: np.ndarray, i: int):
        self._Q, self._i = Q, i

    def __len__(self) -> int:
        return len(self._Q)

    def __getitem__(self, j: int) -> list[float]:  # type: ignore[override]
        if not -len(self) <= j < len(self):
            raise IndexError(j)
        return (self._Q[self._i] - self._Q[j]).tolist() if self._i != j % len(self) else [0.0] * len(self)


