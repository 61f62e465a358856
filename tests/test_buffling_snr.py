"""Part I (SNR): matrices against brute-force moments, maximality, the document's observations."""

from __future__ import annotations

import itertools
from fractions import Fraction

import pytest

from vetdp.buffling._common import transition_matrix_exact
from vetdp.buffling.snr import (
    concentration,
    skewed_counts,
    snr_matrices,
    snr_pair,
    snr_table,
    transition_matrix_float,
)

# a row-stochastic, deliberately non-symmetric matrix: a missing transpose changes the answer
GENERIC = [[Fraction(1, 2), Fraction(1, 4), Fraction(1, 8), Fraction(1, 8)],
           [Fraction(1, 10), Fraction(7, 10), Fraction(1, 10), Fraction(1, 10)],
           [Fraction(1, 3), Fraction(1, 6), Fraction(1, 3), Fraction(1, 6)],
           [Fraction(1, 16), Fraction(3, 16), Fraction(1, 4), Fraction(1, 2)]]


def moments(P, logos):
    """Exact mean and covariance of the output logo counts, by enumerating every column's output."""
    n = len(P)
    mean = [Fraction(0)] * n
    second = [[Fraction(0)] * n for _ in range(n)]
    for outs in itertools.product(range(n), repeat=len(logos)):
        pr = Fraction(1)
        for lg, o in zip(logos, outs, strict=True):
            pr *= P[lg][o]
        x = [outs.count(t) for t in range(n)]
        for s in range(n):
            mean[s] += pr * x[s]
            for t in range(n):
                second[s][t] += pr * x[s] * x[t]
    return mean, [[second[s][t] - mean[s] * mean[t] for t in range(n)] for s in range(n)]


@pytest.mark.parametrize("P", [GENERIC, transition_matrix_exact(2, 0.2)], ids=["generic", "flip"])
def test_a_and_B_equal_brute_force_moments(P):
    logos = [0, 0, 1, 3]
    d = [logos.count(t) for t in range(4)]
    mean, cov = moments(P, logos)
    for i, j in [(3, 0), (1, 0), (2, 3)]:
        moved = list(logos)
        moved[logos.index(j)] = i
        mean2, _ = moments(P, moved)
        a, B = snr_matrices(P, d, i, j)
        assert a == [u - v for u, v in zip(mean2, mean, strict=True)]
        assert B == cov
    # the transposed signal a = P(e_i − e_j) (the document's second formula) is wrong for this P
    if P is GENERIC:
        wrong = [P[r][3] - P[r][0] for r in range(4)]
        assert wrong != snr_matrices(P, d, 3, 0)[0]


def test_transition_matrix_equals_bit_flip_enumeration_and_doc_exponent_is_not_stochastic():
    k, p = 3, Fraction(0.1)
    P = transition_matrix_exact(k, 0.1)
    for logo in range(8):
        row = [Fraction(0)] * 8
        for flips in itertools.product((0, 1), repeat=k):
            pr = Fraction(1)
            for f in flips:
                pr *= p if f else 1 - p
            row[logo ^ sum(f << b for b, f in enumerate(flips))] += pr
        assert P[logo] == row
    m = 5  # the document writes p^H q^(m−H): rows then sum to q^(m−k) ≠ 1
    doc_row = [p ** (i ^ 0).bit_count() * (1 - p) ** (m - (i ^ 0).bit_count()) for i in range(8)]
    assert sum(doc_row) != 1


def test_snr_is_the_maximum_of_the_rayleigh_quotient():
    d = [Fraction(2), Fraction(1), Fraction(1), Fraction(3)]
    value, c = snr_pair(GENERIC, d, 3, 0)
    a, B = snr_matrices(GENERIC, d, 3, 0)

    def quotient(v):
        num = sum(x * y for x, y in zip(v, a, strict=True)) ** 2
        den = sum(v[s] * B[s][t] * v[t] for s in range(4) for t in range(4))
        return num / den

    assert quotient(c) == value
    for v in itertools.product(range(-2, 3), repeat=4):
        if len(set(v)) > 1:  # constants are in B's null space
            assert quotient([Fraction(x) for x in v]) <= value


def test_float_path_matches_exact_path():
    counts = skewed_counts(3, 50, Fraction(1, 3))
    ex, fl = snr_table(3, 0.2, counts, exact=True), snr_table(3, 0.2, counts, exact=False)
    for i in range(8):
        for j in range(8):
            assert abs(float(ex.snr[i][j]) - fl.snr[i][j]) <= 1e-9 * (1 + float(ex.snr[i][j]))


def test_observations_at_full_skew_and_their_failure_in_between():
    k, K = 3, 7
    values = [snr_table(k, 0.1, skewed_counts(k, 100, Fraction(s, 4))) for s in range(5)]
    maxima = [t.maximum for t in values]
    assert all(a < b for a, b in zip(maxima, maxima[1:], strict=False))  # Observation 1 (our skew family)
    assert values[4].argmax() == [(0, K), (K, 0)]  # Observation 2 at full skew, uniquely
    assert (K, 0) not in values[2].argmax()  # ... but not at skew 1/2
    assert concentration(values[4].coef[0][K]) < 0.02  # Observation 3 at full skew
    assert concentration(values[0].coef[0][K]) > 1


def test_bad_counts_raise():
    with pytest.raises(ValueError, match="counts has length 3; it must have length 2\\*\\*n_pub = 4"):
        snr_table(2, 0.1, [1, 2, 3])
    with pytest.raises(ValueError, match="flip_prob=0.9 must be in"):
        snr_table(2, 0.9, [1, 2, 3, 4])


def test_float_transition_matrix_is_the_exact_one_rounded():
    for k, p in ((1, 0.3), (4, 0.1), (6, 0.45)):
        exact = transition_matrix_exact(k, p)
        assert transition_matrix_float(k, p).tolist() == [[float(x) for x in row] for row in exact]


def point_mass_snr(P, m: int, i: int, j: int) -> Fraction:
    """SNR(m·e_0; j → i) in closed form: B = m(Λ(π) − ππᵀ) with π = P[0], so c = a/(mπ) and SNR = Σ a_t²/(m π_t)."""
    return sum(((P[i][t] - P[j][t]) ** 2 / P[0][t] for t in range(len(P))), Fraction(0)) / m


@pytest.mark.parametrize("k", [7, 10])
def test_snr_at_the_largest_k_matches_the_closed_form(k):
    # the command line allows n_pub up to 10: 1024 logos, a 1024 × 1024 table (about 3 s and 150 MB here)
    m, p, K = 100, 0.1, (1 << k) - 1
    t = snr_table(k, p, skewed_counts(k, m, 1))
    assert not t.exact
    P = transition_matrix_exact(k, p)
    for i, j in [(K, 0), (0, K), (1, 2), (K, K - 1), (5, 3)]:
        want = point_mass_snr(P, m, i, j)
        assert abs(Fraction(t.snr[i][j]) - want) <= Fraction(1, 10**9) * want
    assert t.argmax() == [(0, K), (K, 0)]  # Observation 2 at full skew, at every k
    assert concentration(t.coef[0][K]) < 0.02  # Observation 3
