"""RAPPOR decoding (Erlingsson, Pihur, Korolova, CCS 2014, §4): unbiased per-cohort Bloom-bit counts, the candidates'
design matrix, lasso selection, least squares with standard errors, and a Bonferroni-corrected significance test.

Analysis code: it runs on reports already randomized (impl/rappor.py) and spends no privacy. Its guarantees are
statistical: t̂ is exactly unbiased with the stated variance (checked exactly by specs/rappor_decoding.py); the
regression's estimates, intervals and tests hold under the linear model stated in proofs/rappor_decoding.md, and the
spec checks them end to end by a seeded simulation with a stated confidence.

Server-side code: the module imports with NumPy alone (it is part of the runtime's package), but decoding
(:func:`decode`, :func:`decode_counts`, :func:`candidate_design_sparse`) needs scipy, scikit-learn and threadpoolctl,
which come with the harness extra (``pip install 'vetdp[harness]'``) and are imported by the functions that use them.

Spec: specs/rappor_decoding.py · Proof: proofs/rappor_decoding.md
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np

from vetdp.core.validation import check_float, check_int, check_interval

if TYPE_CHECKING:
    import scipy.sparse as sp

__all__ = [
    "rappor_report_probabilities",
    "estimate_bit_counts",
    "bit_counts",
    "unbiased_bit_counts",
    "bit_count_variance",
    "candidate_design_matrix",
    "candidate_design_sparse",
    "lasso_penalty",
    "split_cohorts",
    "RapporDecodeResult",
    "decode",
    "decode_counts",
    "choose_method",
    "DECODE_METHODS",
    "ALL_CANDIDATES_FRACTION",
    "RapporSimulation",
    "simulate_population",
    "reference_preset",
    "reference_presets",
    "DISTRIBUTIONS",
    "population_weights",
    "RapporScore",
    "score_decode",
]

DECODE_METHODS = ("auto", "all", "split", "paper")
# "auto" fits every candidate when they and the background fill at most this share of the rows. For near-orthogonal
# random columns the variance then grows by about 1/(1 − columns/rows) <= 4/3 (standard errors × 1.15 at most),
# against the split's × 1.22 from leaving a third of the data to its screen; the split tests fewer candidates
# (alpha/S, not alpha/M), which around a quarter balances the rest (measured: 1000 candidates in 16 × 128 rows,
# the split found 37 strings and "all" 23; in 64 × 128 rows "all" 26 and the split 24)
ALL_CANDIDATES_FRACTION = Fraction(1, 4)
MAX_SELECTED_FRACTION = Fraction(4, 5)  # at most 80% of the smaller part's rows enter the OLS fit (as the R code)
# The screen's penalty, in units of the universal threshold: half of it. The screen runs on cohorts the estimates do
# not use, so a null candidate it keeps costs one column of the fit, while a reported string it drops biases the
# candidates that share its bits; a lenient screen is the cheaper error (proofs/rappor_decoding.md, "Sample split").
SCREEN_PENALTY_FACTOR = Fraction(1, 2)
# The screen sees every SCREEN_EVERY-th cohort with reports, the fit the others: a third to the screen, two thirds to
# the estimates (standard errors × √(3/2) against the whole, not × √2 as for halves). A lenient screen needs little
# data, the estimates need all they can get (measured, Zipf(1), 10**6 reports, 1000 candidates, 16 cohorts, three
# seeds: halves found 29 strings, thirds 37, quarters 35, sixths 33; proofs/rappor_decoding.md, "Sample split").
SCREEN_EVERY = 3


# ------------------------------------------------------------------ per-bit law and t̂

def _rates(f: object, p: object, q: object) -> tuple[float, float, float]:
    f = check_float("f", f)
    check_interval("f", f, 0, 1, lo_closed=True, hi_closed=False)
    p = check_float("p", p)
    check_interval("p", p, 0, 1, lo_closed=True, hi_closed=True)
    q = check_float("q", q)
    check_interval("q", q, 0, 1, lo_closed=True, hi_closed=True)
    if not p < q:
        raise ValueError(f"p={p!r}, q={q!r}: p must be < q (0 <= p < q <= 1), else the reports carry no signal")
    return f, p, q


def rappor_report_probabilities(f: float, p: float, q: float) -> tuple[Fraction, Fraction]:
    """(q*, p*): the exact probabilities that a reported bit is 1 when the Bloom bit is 1, resp. 0, under the law
    of vetdp.impl.rappor (permanent flip with r = ``rappor_flip_probability(f)``, then instantaneous p/q).

    q* = q − r(q − p) and p* = p + r(q − p) as rationals of the floats (no rounding); with r = f/2 (every normal
    f, and every f whose half is a float) these are the paper's ½f(p + q) + (1 − f)q and ½f(p + q) + (1 − f)p.
    q* − p* = (1 − 2r)(q − p) > 0. Preconditions: f in [0, 1), p and q in [0, 1], p < q (all floats).
    """
    from vetdp.impl.rappor import rappor_flip_probability

    f, p, q = _rates(f, p, q)
    r, fp, fq = Fraction(rappor_flip_probability(f)), Fraction(p), Fraction(q)
    shift = r * (fq - fp)
    return fq - shift, fp + shift


def _reports(reports: Any, k: int | None = None) -> np.ndarray:
    if isinstance(reports, (str, bytes)):
        raise TypeError(f"reports={reports!r} must be an (n, k) array of bits, not {type(reports).__name__}")
    arr = np.asarray(reports)
    if arr.ndim != 2:
        raise ValueError(f"reports must be a 2-D (n, k) array of bits, got shape {arr.shape}")
    if k is not None and arr.shape[1] != k:
        raise ValueError(f"reports has {arr.shape[1]} columns; each report must have k={k} bits")
    if arr.shape[1] == 0:
        raise ValueError("reports must have k >= 1 columns, got 0")
    if arr.dtype != np.bool_:
        if not np.issubdtype(arr.dtype, np.integer) or (arr.size and not ((arr == 0) | (arr == 1)).all()):
            raise ValueError(f"reports must hold only bits (0, 1, False, True), got dtype {arr.dtype}")
        arr = arr.astype(bool)
    return arr


def _cohorts(cohorts: Any, n: int, num_cohorts: int) -> np.ndarray:
    if isinstance(cohorts, (str, bytes)):
        raise TypeError(f"cohorts={cohorts!r} must be an array of ints, not {type(cohorts).__name__}")
    arr = np.asarray(cohorts)
    if arr.ndim != 1 or arr.shape[0] != n:
        raise ValueError(f"cohorts must be 1-D with one entry per report ({n}), got shape {arr.shape}")
    if n and (arr.dtype == np.bool_ or not np.issubdtype(arr.dtype, np.integer)):
        raise TypeError(f"cohorts must hold ints, got dtype {arr.dtype}")
    arr = arr.astype(np.int64, copy=False)
    if n:
        lo, hi = int(arr.min()), int(arr.max())
        if lo < 0 or hi >= num_cohorts:
            raise ValueError(f"cohorts holds {lo if lo < 0 else hi}; every cohort must be in [0, {num_cohorts - 1}] "
                             f"(num_cohorts={num_cohorts})")
    return arr


def _bit_counts(reports: np.ndarray, cohorts: np.ndarray, num_cohorts: int) -> tuple[np.ndarray, np.ndarray]:
    """c (num_cohorts, k) int64: reported ones per cohort and bit; N (num_cohorts,) int64: reports per cohort."""
    sizes = np.bincount(cohorts, minlength=num_cohorts).astype(np.int64)
    counts = np.zeros((num_cohorts, reports.shape[1]), dtype=np.int64)
    order = np.argsort(cohorts, kind="stable")
    bounds = np.concatenate(([0], np.cumsum(sizes)))
    grouped = reports[order].view(np.uint8)
    for j in np.flatnonzero(sizes):
        counts[j] = grouped[bounds[j]:bounds[j + 1]].sum(axis=0, dtype=np.int64)
    return counts, sizes


def unbiased_bit_counts(counts: Any, cohort_sizes: Any, f: float, p: float, q: float,
                        exact: bool = False) -> np.ndarray:
    """t̂ with t̂[j, i] = (c_ji − p*·N_j)/(q* − p*) from the bit counts c (``counts[j, i]``: reports of cohort j with
    bit i set) and the cohort sizes N (``cohort_sizes[j]``), (q*, p*) from :func:`rappor_report_probabilities`.

    Guarantee: for independent reports, E[t̂_ji] = T_ji (the number of them whose Bloom bit i is set) exactly, with
    variance :func:`bit_count_variance`. ``exact=True`` returns an object array of Fractions (exact), else float64
    (q* − p* and p* rounded once each to float64). Preconditions: counts (num_cohorts, k) ints in [0, N_j],
    cohort_sizes num_cohorts ints >= 0; f, p, q as :func:`rappor_report_probabilities`.
    """
    if not isinstance(exact, bool):
        raise TypeError(f"exact={exact!r} must be a bool")
    q_star, p_star = rappor_report_probabilities(f, p, q)
    counts, sizes = np.asarray(counts), np.asarray(cohort_sizes)
    if exact:
        gap = q_star - p_star
        est = np.empty(counts.shape, dtype=object)
        for j in range(counts.shape[0]):
            offset = p_star * int(sizes[j])
            for i in range(counts.shape[1]):
                est[j, i] = (int(counts[j, i]) - offset) / gap
        return est
    return (counts - float(p_star) * sizes[:, None]) / float(q_star - p_star)


def estimate_bit_counts(reports: Any, cohorts: Any, num_cohorts: int, f: float, p: float, q: float,
                        exact: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(t̂, N): t̂[j, i] = (c_ij − p*·N_j)/(q* − p*), the unbiased estimate of how many reports of cohort j have
    Bloom bit i set; N[j] = the number of reports in cohort j (c_ij: reported ones, (q*, p*) from
    :func:`rappor_report_probabilities`; t̂ is :func:`unbiased_bit_counts` of the counts).

    Guarantee: for independent reports, E[t̂_ij] = T_ij (the true number) exactly, with variance
    :func:`bit_count_variance`. ``exact=True`` returns t̂ as an object array of Fractions (exact), else float64
    (q* − p* and p* rounded once each to float64).

    Preconditions: ``reports`` an (n, k) array of bits (bool or 0/1 ints), k >= 1; ``cohorts`` n ints in
    [0, num_cohorts); ``num_cohorts`` an int >= 1; f, p, q as :func:`rappor_report_probabilities`.
    """
    num_cohorts = check_int("num_cohorts", num_cohorts, lo=1)
    if not isinstance(exact, bool):
        raise TypeError(f"exact={exact!r} must be a bool")
    rappor_report_probabilities(f, p, q)
    arr = _reports(reports)
    coh = _cohorts(cohorts, arr.shape[0], num_cohorts)
    counts, sizes = _bit_counts(arr, coh, num_cohorts)
    return unbiased_bit_counts(counts, sizes, f, p, q, exact), sizes


def bit_count_variance(true_count: int, cohort_size: int, f: float, p: float, q: float,
                       exact: bool = False) -> Fraction | float:
    """Var[t̂_ij] when T = ``true_count`` of the N = ``cohort_size`` independent reports have Bloom bit i set:
    (T·q*(1 − q*) + (N − T)·p*(1 − p*)) / (q* − p*)², since c_ij = Bin(T, q*) + Bin(N − T, p*).

    Exact Fraction with ``exact=True``, else the float nearest to it. Preconditions: 0 <= T <= N (ints); f, p, q as
    :func:`rappor_report_probabilities`.
    """
    n = check_int("cohort_size", cohort_size, lo=0)
    t = check_int("true_count", true_count, lo=0, hi=n)
    q_star, p_star = rappor_report_probabilities(f, p, q)
    var = (t * q_star * (1 - q_star) + (n - t) * p_star * (1 - p_star)) / (q_star - p_star) ** 2
    return var if exact else float(var)


# ------------------------------------------------------------------ design matrix

def _candidates(candidates: Any) -> tuple[str | bytes, ...]:
    if isinstance(candidates, (str, bytes)) or not isinstance(candidates, (Sequence, np.ndarray)):
        raise TypeError(f"candidates must be a sequence of str or bytes, not {type(candidates).__name__}")
    out = tuple(candidates)
    if not out:
        raise ValueError("candidates is empty; give at least one candidate string")
    seen: dict[bytes, int] = {}
    for i, c in enumerate(out):
        if isinstance(c, str):
            key = c.encode("utf-8", errors="surrogatepass")
        elif isinstance(c, (bytes, bytearray)):
            key = bytes(c)
        else:
            raise TypeError(f"candidates[{i}]={c!r} must be a str or bytes, not {type(c).__name__}")
        if key in seen:
            raise ValueError(f"candidates[{i}]={c!r} repeats candidates[{seen[key]}] (the same bytes); "
                             f"candidates must be distinct")
        seen[key] = i
    return out


def _bloom_table(candidates: tuple, num_cohorts: int, k: int, h: int, hash: str = "sha256") -> np.ndarray:
    """(num_cohorts·M, k) bool: row j·M + m = the Bloom filter of candidate m in cohort j, from
    ``vetdp.impl.rappor.bloom_filter_matrix`` (the mechanism's own hash: one definition)."""
    from vetdp.impl.rappor import bloom_filter_matrix

    m = len(candidates)
    return bloom_filter_matrix(list(candidates) * num_cohorts, np.repeat(np.arange(num_cohorts, dtype=np.int64), m),
                               k, h, hash)


def _shape(num_cohorts: object, k: object, h: object) -> tuple[int, int, int]:
    num_cohorts = check_int("num_cohorts", num_cohorts, lo=1)
    k = check_int("k", k, lo=1)
    h = check_int("h", h, lo=1)
    if h > k:
        raise ValueError(f"h={h!r} must be in [1, k={k}]")
    return num_cohorts, k, h


def candidate_design_matrix(candidates: Sequence[str | bytes], num_cohorts: int, k: int, h: int,
                            hash: str = "sha256") -> np.ndarray:
    """The (num_cohorts·k, M) bool matrix X: X[j·k + i, m] = bit i of candidate m's Bloom filter in cohort j
    (``hash``: the Bloom positions, as :func:`vetdp.impl.rappor.bloom_positions`).

    Dense: 10**4 candidates × 64 cohorts × k = 128 take 82 MB; :func:`candidate_design_sparse` is the same matrix
    in sparse form (what :func:`decode` uses). Preconditions: candidates a non-empty sequence of distinct str/bytes;
    num_cohorts >= 1; 1 <= h <= k.
    """
    cands = _candidates(candidates)
    num_cohorts, k, h = _shape(num_cohorts, k, h)
    table = _bloom_table(cands, num_cohorts, k, h, hash).reshape(num_cohorts, len(cands), k)
    return np.ascontiguousarray(table.transpose(0, 2, 1).reshape(num_cohorts * k, len(cands)))


def candidate_design_sparse(candidates: Sequence[str | bytes], num_cohorts: int, k: int, h: int,
                            hash: str = "sha256") -> sp.csc_matrix:
    """:func:`candidate_design_matrix` as a float64 CSC matrix (at most num_cohorts·h non-zeros per column)."""
    import scipy.sparse as sp

    cands = _candidates(candidates)
    num_cohorts, k, h = _shape(num_cohorts, k, h)
    m = len(cands)
    pair, bit = np.nonzero(_bloom_table(cands, num_cohorts, k, h, hash))  # pair = j·M + m
    return sp.csc_matrix((np.ones(len(pair)), ((pair // m) * k + bit, pair % m)), shape=(num_cohorts * k, m))


# ------------------------------------------------------------------ decoding

@dataclasses.dataclass(frozen=True, eq=False)
class RapporDecodeResult:
    """The decoded counts, one entry per candidate (arrays of length M, read-only).

    ``method``: "all" — one least-squares fit of every candidate over every cohort with reports (``fit_cohorts``;
    no screen) — or "split" — the cohorts with reports split in two (:func:`split_cohorts`), the lasso screen seeing
    only ``screen_cohorts`` and the least-squares fit that gives estimates, intervals and tests only
    ``fit_cohorts``: either way the intervals and p-values are those of a model chosen without looking at their
    data. ("paper": screen and fit on the same cohorts, for comparison only; see :func:`decode_counts`.)

    ``estimates[m]``: the estimated number of reports whose value is candidate m, over all cohorts (0 when not
    selected; least-squares estimates are not clipped, so a selected one may be negative or exceed
    ``num_reports``); ``std_errors``, ``p_values`` (one-sided t-test of "count > 0"; NaN / 1 when not selected);
    ``significant``: p_value < ``threshold`` = alpha/S (Bonferroni over the S candidates in the fitted model;
    alpha/M for the "paper" method); ``confidence_intervals`` (M, 2): two-sided t-intervals at level 1 − alpha per
    candidate (NaN when not selected); ``selected``: in the fitted model (kept by the screen, and linearly
    independent). ``background``: the fitted count of ones per bit not explained by the
    selected candidates (intercept), ``lasso_penalty`` the sklearn alpha used (NaN without a screen),
    ``residual_std`` the OLS residual standard deviation, ``cohort_sizes`` N_j.
    """

    candidates: tuple[str | bytes, ...]
    estimates: np.ndarray
    std_errors: np.ndarray
    p_values: np.ndarray
    significant: np.ndarray
    threshold: float
    confidence_intervals: np.ndarray
    selected: np.ndarray
    num_reports: int
    alpha: float
    background: float
    lasso_penalty: float
    residual_std: float
    cohort_sizes: np.ndarray
    screen_cohorts: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    fit_cohorts: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    method: str = "split"


def lasso_penalty(noise_std: float, column_norm: float, num_rows: int, num_candidates: int) -> float:
    """The sklearn ``Lasso`` alpha of the screen: noise_std·column_norm·sqrt(2 ln max(M, 2))/num_rows.

    A candidate enters the positive lasso only when its column's correlation with the residual, divided by
    num_rows, exceeds alpha; with Gaussian noise of standard deviation ``noise_std`` per row a candidate absent from
    the data has that correlation N(0, (noise_std·‖column‖/num_rows)²), so this is the universal threshold
    sqrt(2 ln M) in z units: few absent candidates pass, yet it sits below the final test's Bonferroni cut
    (z ≈ sqrt(2 ln(M/alpha))), so the screen rarely drops what the test would call significant.
    """
    return noise_std * column_norm * math.sqrt(2 * math.log(max(num_candidates, 2))) / num_rows


def split_cohorts(cohort_sizes: Any) -> tuple[np.ndarray, np.ndarray]:
    """(screen, fit): the cohorts with at least one report, in increasing order; the 1st, 4th, 7th, … (every
    :data:`SCREEN_EVERY`-th, from the first) to the screen, the others to the fit. Disjoint, together every cohort
    with reports; the fit gets about two thirds of them (with two cohorts, one each). Cohorts hash every value
    independently, so which string collides with which differs between the parts; the fixed stride only keeps the
    shares steady.

    Precondition: at least two cohorts have reports (ValueError otherwise).
    """
    sizes = np.asarray(cohort_sizes)
    live = np.flatnonzero(sizes)
    if len(live) < 2:
        raise ValueError(f"cohorts: reports fall in {len(live)} cohort(s) ({live.tolist()}); decode needs reports in "
                         f"at least 2 cohorts (it screens on some of the cohorts and estimates on the others), "
                         f"so use num_cohorts >= 2 with reports in more than one")
    to_screen = np.arange(len(live)) % SCREEN_EVERY == 0
    return live[to_screen], live[~to_screen]


def _least_squares(columns: sp.csc_matrix, background: np.ndarray,
                   y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, float]:
    """(kept, params, std_errors, df, scale): ordinary least squares of y on the background column and the columns
    ``kept`` — a maximal set of columns linearly independent given the background, found by pivoted Cholesky
    (LAPACK dpstrf, its default tolerance) of their Gram matrix with the background projected out, a rule on the
    design alone. params[0] is the background's coefficient; std_errors = sqrt(scale·diag((WᵀW)⁻¹)) with
    scale = ‖residual‖²/df, df = rows − 1 − len(kept) (scale NaN when df <= 0).

    Solved by the normal equations WᵀWβ = Wᵀy (Cholesky): W is sparse, so WᵀW costs little even with thousands of
    candidates, where a dense QR or SVD of the rows × columns matrix took minutes."""
    import scipy.linalg
    from scipy.linalg import lapack

    g = np.asarray(background, dtype=float).ravel()
    gg = float(g @ g)
    cross = np.asarray(columns.T @ g).ravel()
    gram = np.asarray((columns.T @ columns).todense(), dtype=float)
    kept = np.zeros(0, dtype=np.int64)
    if columns.shape[1]:
        beside = gram - np.outer(cross, cross) / gg
        if float(np.max(np.diag(beside))) > 0:
            _, piv, rank, _ = lapack.dpstrf(beside, lower=0)
            kept = np.sort(piv[:rank] - 1).astype(np.int64)
    w_cols = columns[:, kept]
    normal = np.empty((len(kept) + 1, len(kept) + 1))
    normal[0, 0], normal[0, 1:], normal[1:, 0] = gg, cross[kept], cross[kept]
    normal[1:, 1:] = gram[np.ix_(kept, kept)]
    rhs = np.concatenate([[g @ y], np.asarray(w_cols.T @ y).ravel()])
    factor = scipy.linalg.cho_factor(normal)
    params = scipy.linalg.cho_solve(factor, rhs)
    residual = y - g * params[0] - np.asarray(w_cols @ params[1:]).ravel()
    df = len(y) - 1 - len(kept)
    scale = float(residual @ residual) / df if df > 0 else math.nan
    inverse_diag = np.diag(scipy.linalg.cho_solve(factor, np.eye(len(kept) + 1)))
    return kept, params, np.sqrt(scale * inverse_diag), df, scale


def choose_method(num_candidates: int, num_rows: int) -> str:
    """The decoder :func:`decode_counts` runs for ``method="auto"``: ``"all"`` (least squares on every candidate and
    all the reports) when the candidates and the background fill at most :data:`ALL_CANDIDATES_FRACTION` (a quarter)
    of the rows (live cohorts × k), else ``"split"`` (a lasso screen on a third of the cohorts, least squares on
    the others).
    A rule on sizes alone: it never looks at the counts."""
    return "all" if num_candidates + 1 <= ALL_CANDIDATES_FRACTION * num_rows else "split"


def _check_counts(counts: Any, cohort_sizes: Any, k: int) -> tuple[np.ndarray, np.ndarray]:
    c = np.asarray(counts)
    n = np.asarray(cohort_sizes)
    if c.ndim != 2 or c.shape[1] != k:
        raise ValueError(f"counts must be a (num_cohorts, k={k}) array of bit counts, got shape {c.shape}")
    if n.ndim != 1 or n.shape[0] != c.shape[0]:
        raise ValueError(f"cohort_sizes must hold one count per cohort ({c.shape[0]}), got shape {n.shape}")
    for name, a in (("counts", c), ("cohort_sizes", n)):
        if a.size and (a.dtype == np.bool_ or not np.issubdtype(a.dtype, np.integer)):
            raise TypeError(f"{name} must hold integers, got dtype {a.dtype}")
    c, n = c.astype(np.int64), n.astype(np.int64)
    if (n < 0).any() or (c < 0).any():
        raise ValueError("counts and cohort_sizes must be >= 0")
    bad = np.flatnonzero((c > n[:, None]).any(axis=1))
    if bad.size:
        j = int(bad[0])
        raise ValueError(f"counts[{j}] holds {int(c[j].max())} ones in a cohort of cohort_sizes[{j}]={int(n[j])} "
                         f"reports; a bit's count must be in [0, the cohort's reports]")
    if int(n.sum()) == 0:
        raise ValueError("cohort_sizes sum to 0; decode needs at least one report")
    return c, n


def bit_counts(reports: Any, cohorts: Any, num_cohorts: int) -> tuple[np.ndarray, np.ndarray]:
    """(c, N): c[j, i] = the reports of cohort j with bit i set, N[j] = the reports in cohort j, as int64 arrays (what
    the reference's ``sum_bits`` writes). Preconditions: reports (n, k) bits, k >= 1; cohorts n ints in
    [0, num_cohorts); num_cohorts >= 1."""
    num_cohorts = check_int("num_cohorts", num_cohorts, lo=1)
    arr = _reports(reports)
    return _bit_counts(arr, _cohorts(cohorts, arr.shape[0], num_cohorts), num_cohorts)


def decode(reports: Any, cohorts: Any, candidates: Sequence[str | bytes], *, k: int, h: int, f: float, p: float,
           q: float, num_cohorts: int, alpha: float = 0.05, hash: str = "sha256", design: Any = None,
           method: str = "auto") -> RapporDecodeResult:
    """Estimate how many reports carry each candidate value (see :class:`RapporDecodeResult`): the reports' bit
    counts per cohort, then :func:`decode_counts` (which states the model, the two decoders and their guarantees).

    Preconditions: reports (n, k) bits with n >= 1; cohorts n ints in [0, num_cohorts); candidates non-empty and
    distinct; 1 <= h <= k; f, p, q as :func:`rappor_report_probabilities`; alpha in (0, 1); ``hash`` the reports'
    Bloom positions (:data:`vetdp.impl.rappor.HASHES`), or ``design`` the candidates' design matrix (a map's);
    ``method`` one of :data:`DECODE_METHODS`.
    """
    num_cohorts, k, h = _shape(num_cohorts, k, h)
    arr = _reports(reports, k)
    if arr.shape[0] == 0:
        raise ValueError("reports is empty; decode needs at least one report")
    counts, sizes = _bit_counts(arr, _cohorts(cohorts, arr.shape[0], num_cohorts), num_cohorts)
    return decode_counts(counts, sizes, candidates, k=k, h=h, f=f, p=p, q=q, alpha=alpha, hash=hash, design=design,
                         method=method)


def decode_counts(counts: Any, cohort_sizes: Any, candidates: Sequence[str | bytes], *, k: int, h: int, f: float,
                  p: float, q: float, alpha: float = 0.05, hash: str = "sha256", design: Any = None,
                  method: str = "auto") -> RapporDecodeResult:
    """Estimate how many reports carry each candidate value from the bit counts (the reference's ``sum_bits``
    output): ``counts[j, i]`` reports of cohort j with bit i set, ``cohort_sizes[j]`` reports in cohort j.

    Model (proofs/rappor_decoding.md): t̂_ji = Σ_m X[j·k+i, m]·(N_j/N)·x_m + b·(N_j/N) + noise, x_m the number of
    reports of candidate m, b the background, X the candidates' Bloom bits (hashed with ``hash``, or ``design``: a
    (num_cohorts·k, M) 0/1 matrix, e.g. from the reference's map file). Rows of cohorts without reports are left out.

    * ``method="all"``: ordinary least squares of t̂ on every candidate (linearly dependent ones dropped, a rule on X
      alone) and the background, over every cohort. No candidate is chosen by looking at the data, so under the
      model each interval holds its count with probability 1 − alpha and each test has its level — with all the
      reports behind every estimate.
    * ``method="split"``: the cohorts with reports are split in two parts (:func:`split_cohorts`: a third to the
      screen, the rest to the fit); a positive lasso (sklearn, penalty ``SCREEN_PENALTY_FACTOR`` ×
      :func:`lasso_penalty`) on the screen cohorts screens the candidates, at most 80% of the smaller part's rows;
      least squares of the fit cohorts on the screened ones gives the estimates, intervals and tests, free of
      selection bias given the screen (their price: the screen's third of the reports).
    * ``method="auto"`` (default): :func:`choose_method` — "all" whenever the candidates fit in a quarter of the
      rows, else "split".
    * ``method="paper"``: the paper's decoder, for comparison — a lasso at the full universal threshold and least
      squares on the same cohorts, Bonferroni over all M. Its intervals and tests are those of a model chosen on
      their own data: no coverage or error rate is claimed for them (docs/rappor.md measures both).

    One-sided p-values of "count > 0"; significant when p < ``threshold`` = alpha/S, S the candidates in the fitted
    model (Bonferroni: given the model, which did not look at the fit's data, the chance of any false discovery is at
    most alpha; "paper": alpha/M); two-sided 1 − alpha t-intervals.

    Preconditions: counts a (num_cohorts, k) array of ints in [0, cohort_sizes[j]]; cohort_sizes num_cohorts ints
    >= 0 summing to at least 1; candidates non-empty and distinct; 1 <= h <= k; f, p, q as
    :func:`rappor_report_probabilities`; alpha in (0, 1); ``method`` one of :data:`DECODE_METHODS` ("split" needs
    reports in at least two cohorts; "all" needs M + 1 < live cohorts × k); ``design`` None or (num_cohorts·k, M).
    """
    import scipy.sparse as sp
    from scipy import stats
    from sklearn.linear_model import Lasso
    from threadpoolctl import threadpool_limits

    k = check_int("k", k, lo=1)
    counts, sizes = _check_counts(counts, cohort_sizes, k)
    num_cohorts, k, h = _shape(counts.shape[0], k, h)
    alpha = check_float("alpha", alpha)
    check_interval("alpha", alpha, 0, 1, lo_closed=False, hi_closed=False)
    if method not in DECODE_METHODS:
        raise ValueError(f"method={method!r} must be one of {', '.join(DECODE_METHODS)}")
    cands = _candidates(candidates)
    q_star, p_star = rappor_report_probabilities(f, p, q)
    t_hat = unbiased_bit_counts(counts, sizes, f, p, q)
    n, m = int(sizes.sum()), len(cands)
    if design is None:
        full = candidate_design_sparse(cands, num_cohorts, k, h, hash)
    else:
        full = sp.csc_matrix(design, dtype=float)
        if full.shape != (num_cohorts * k, m):
            raise ValueError(f"design has shape {full.shape}; it must be (num_cohorts·k, M) = ({num_cohorts * k}, {m})")
    live = np.flatnonzero(sizes)
    if method == "auto":
        method = choose_method(m, len(live) * k)
    if method == "all" and m + 1 >= len(live) * k:
        raise ValueError(f"method='all' fits {m} candidates and the background to {len(live) * k} rows (cohorts with "
                         f"reports × k); it needs M + 1 < rows: use method='split' or more cohorts")

    def rows_of(which: np.ndarray) -> tuple[np.ndarray, sp.csc_matrix, np.ndarray]:
        weights = np.repeat(sizes[which] / n, k)
        row_ids = (which[:, None] * k + np.arange(k)[None, :]).ravel()
        return weights, sp.csc_matrix(sp.diags(weights) @ full[row_ids]), t_hat[which].ravel()

    penalty = math.nan
    if method == "all":
        screen_cohorts, fit_cohorts = np.zeros(0, dtype=np.int64), live
        chosen = np.arange(m)
    else:
        # the screen: a positive lasso on the screen cohorts (the paper's: on every cohort, at the full threshold)
        if method == "split":
            screen_cohorts, fit_cohorts = split_cohorts(sizes)
            factor = SCREEN_PENALTY_FACTOR
        else:
            screen_cohorts = fit_cohorts = live
            factor = Fraction(1)
        _, screen, y = rows_of(screen_cohorts)
        bit_var = float(max(p_star * (1 - p_star), q_star * (1 - q_star)))
        # at least half a count: counts are integers, so a finer noise level carries no meaning (and q* = 1, p* = 0
        # would otherwise give an unpenalized lasso)
        noise_std = max(math.sqrt(float(sizes[screen_cohorts].max()) * bit_var) / float(q_star - p_star), 0.5)
        norms = np.sqrt(np.asarray(screen.multiply(screen).sum(axis=0)).ravel())
        penalty = float(factor) * lasso_penalty(noise_std, float(norms.max()), len(y), m)
        lasso = Lasso(alpha=penalty, positive=True, fit_intercept=True, max_iter=5000, tol=1e-6)
        lasso.fit(screen, y)
        coef = lasso.coef_
        chosen = np.flatnonzero(coef > 0)
        # leave the background column and >= 1 residual degree of freedom in the fit half
        cap = int(MAX_SELECTED_FRACTION * min(len(y), len(fit_cohorts) * k)) - 1
        if len(chosen) > cap:
            chosen = np.sort(chosen[np.argsort(-coef[chosen], kind="stable")[:max(cap, 0)]])

    # the fit: least squares on the fit cohorts only (candidates not identifiable beside the background dropped)
    weights, fit_design, y = rows_of(fit_cohorts)
    # one BLAS thread: the dense parts are small, and a multi-threaded OpenBLAS on a busy machine spent 40× longer
    # on such matrices (measured: 9.7 s against 0.21 s for a pivoted QR and an SVD of 4096 × 161)
    with threadpool_limits(limits=1, user_api="blas"):
        kept, params, bse, df, scale = _least_squares(fit_design[:, chosen], weights, y)
    chosen = chosen[kept]

    estimates = np.zeros(m)
    std_errors = np.full(m, np.nan)
    p_values = np.ones(m)
    intervals = np.full((m, 2), np.nan)
    selected = np.zeros(m, dtype=bool)
    selected[chosen] = True
    estimates[chosen] = params[1:]
    std_errors[chosen] = bse[1:]
    with np.errstate(divide="ignore", invalid="ignore"):
        t_values = params[1:] / bse[1:]
    t_values = np.where(bse[1:] > 0, t_values, np.where(params[1:] > 0, np.inf, 0.0))
    p_values[chosen] = stats.t.sf(t_values, df) if df > 0 else 1.0
    if df > 0:
        width = stats.t.ppf(1 - alpha / 2, df) * bse[1:]
        intervals[chosen, 0] = params[1:] - width
        intervals[chosen, 1] = params[1:] + width
    # Bonferroni over the candidates tested: all M for the paper's method (as the paper), else those in the model,
    # which were chosen without looking at the fit's data
    threshold = alpha / m if method == "paper" else alpha / max(len(chosen), 1)
    significant = selected & (p_values < threshold)
    out = [estimates, std_errors, p_values, significant, intervals, selected, sizes.copy(), screen_cohorts.copy(),
           fit_cohorts.copy()]
    for a in out:
        a.setflags(write=False)
    return RapporDecodeResult(cands, estimates, std_errors, p_values, significant, threshold, intervals, selected,
                              n, alpha, float(params[0]), penalty, math.sqrt(scale) if df > 0 else 0.0,
                              *out[-3:], method=method)


# ------------------------------------------------------------------ simulation (test path, not production)

@dataclasses.dataclass(frozen=True, eq=False)
class RapporSimulation:
    """A simulated population with known truth: ``candidates`` (the list a decoder gets), ``true_counts`` (reports
    per candidate; decoys 0), ``extra_values``/``extra_counts`` (reported strings not among the candidates), and the
    randomized ``reports`` with their ``cohorts``; ``params``: k, h, f, p, q, num_cohorts, seed."""

    candidates: tuple[str, ...]
    true_counts: np.ndarray
    extra_values: tuple[str, ...]
    extra_counts: np.ndarray
    reports: np.ndarray
    cohorts: np.ndarray
    params: dict

    @property
    def num_reports(self) -> int:
        return int(self.reports.shape[0])


# The population laws of the reference simulator (google/rappor, tests/gen_counts.R ComputePdf), over the n reported
# strings ranked 1..n: weights proportional to these, normalised.
DISTRIBUTIONS = ("zipf", "exponential", "normal", "uniform")


def population_weights(distribution: str, n: int, zipf_exponent: float = 1.0) -> np.ndarray:
    """The probabilities (summing to 1) with which a report carries the string of rank i = 1..n:

    * ``zipf``: ∝ i^−s (s = ``zipf_exponent``; the reference's zipf1 and zipf1.5 are s = 1 and 1.5);
    * ``exponential``: ∝ exp(−5i/n) (the reference's exp: the exponential density of rate 5/n at i);
    * ``normal``: ∝ exp(−x²/(2σ²)) at x = i − n/2, σ = n/6 (the reference's gauss: the peak in the middle ranks);
    * ``uniform``: 1/n each.

    Preconditions: ``distribution`` one of :data:`DISTRIBUTIONS`; n >= 1; zipf_exponent >= 0 (finite).
    """
    if distribution not in DISTRIBUTIONS:
        raise ValueError(f"distribution={distribution!r} must be one of {', '.join(DISTRIBUTIONS)}")
    n = check_int("n", n, lo=1)
    ranks = np.arange(1, n + 1, dtype=float)
    if distribution == "zipf":
        zipf_exponent = check_float("zipf_exponent", zipf_exponent)
        check_interval("zipf_exponent", zipf_exponent, 0, None, lo_closed=True, hi_closed=False)
        weights = ranks**-zipf_exponent
    elif distribution == "exponential":
        weights = np.exp(-5.0 * ranks / n)
    elif distribution == "normal":
        weights = np.exp(-0.5 * ((ranks - n / 2) / (n / 6)) ** 2)
    else:
        weights = np.ones(n)
    return weights / weights.sum()


# The reference's regression-test settings (google/rappor tests/regtest_spec.py), as numbers: its distributions, the
# population sizes (distinct values, clients, values per client), Bloom filter shapes (k, h, m), privacy settings
# (p, q, f) and test configurations (shape, privacy, extra candidates as a share of the values, whether the values
# ending in 9 are left out of the candidates); and its five demos.
REFERENCE_DISTRIBUTIONS = {"unif": ("uniform", 1.0), "gauss": ("normal", 1.0), "exp": ("exponential", 1.0),
                           "zipf1": ("zipf", 1.0), "zipf1.5": ("zipf", 1.5)}
REFERENCE_SIZES = {"tiny": (100, 1_000, 1), "small": (100, 1_000_000, 1), "medium": (1_000, 10_000_000, 1),
                   "large": (10_000, 100_000_000, 1)}
REFERENCE_SHAPES = {"8x16": (8, 2, 16), "8x32": (8, 2, 32), "8x128": (8, 2, 128), "128x128": (128, 2, 128)}
REFERENCE_PRIVACY = {"eps_1_1": (0.39, 0.61, 0.45), "eps_1_5": (0.225, 0.775, 0.0)}
REFERENCE_CONFIGS = {"typical": ("8x128", "eps_1_1", 0.2, True), "sharp": ("8x128", "eps_1_1", 0.0, False),
                     "loose": ("8x128", "eps_1_5", 0.2, True), "over_x2": ("8x128", "eps_1_1", 2.0, True),
                     "over_x10": ("8x128", "eps_1_1", 10.0, True)}
REFERENCE_DEMOS = {"demo1": "unif", "demo2": "gauss", "demo3": "exp", "demo4": "zipf1", "demo5": "zipf1.5"}


def reference_presets() -> list[str]:
    """The names :func:`reference_preset` accepts: demo1 … demo5, and DIST-SIZE-CONFIG for every distribution,
    population size and test configuration of the reference's regression tests (e.g. ``exp-small-typical``)."""
    return [*REFERENCE_DEMOS, *(f"{d}-{z}-{c}" for d in REFERENCE_DISTRIBUTIONS for z in REFERENCE_SIZES
                                for c in REFERENCE_CONFIGS)]


def reference_preset(name: str) -> dict[str, Any]:
    """The simulation settings of one of the reference's test cases, as :func:`simulate_population` takes them:
    ``distribution``, ``zipf_exponent``, ``num_reports`` (clients × values per client), ``reports_per_client``, k, h,
    ``num_cohorts``, p, q, f, and the candidate list the reference builds — the true values v1 … vN without those
    ending in 9 (10%: here ``num_extra`` reported strings left out of the list) plus ``num_decoys`` extra ones that
    nobody reports. The demos: N = 100, 10**5 clients of 10 values each, k = 32, h = 1, 64 cohorts, p = 1/4, q = 3/4,
    f = 1/2, 100 extra candidates. (vetdp ranks its values at random, so the left-out tenth is a random one, not the
    ranks 9, 19, ….)"""
    if name in REFERENCE_DEMOS:
        dist, size, shape, privacy, extra, missing = REFERENCE_DEMOS[name], (100, 100_000, 10), (32, 1, 64), \
            (0.25, 0.75, 0.5), 1.0, True
    else:
        parts = name.split("-")
        if (len(parts) != 3 or parts[0] not in REFERENCE_DISTRIBUTIONS or parts[1] not in REFERENCE_SIZES
                or parts[2] not in REFERENCE_CONFIGS):
            raise ValueError(f"preset={name!r} must be demo1 … demo5 or DIST-SIZE-CONFIG with DIST in "
                             f"{', '.join(REFERENCE_DISTRIBUTIONS)}, SIZE in {', '.join(REFERENCE_SIZES)}, CONFIG in "
                             f"{', '.join(REFERENCE_CONFIGS)}")
        dist, size = parts[0], REFERENCE_SIZES[parts[1]]
        shape_name, privacy_name, extra, missing = REFERENCE_CONFIGS[parts[2]]
        shape, privacy = REFERENCE_SHAPES[shape_name], REFERENCE_PRIVACY[privacy_name]
    values, clients, per_client = size
    left_out = values // 10 if missing else 0  # v9, v19, …: one in ten
    decoys = int(values * extra)
    law, exponent = REFERENCE_DISTRIBUTIONS[dist]
    (k, h, m), (p, q, f) = shape, privacy
    return {"distribution": law, "zipf_exponent": exponent, "num_reports": clients * per_client,
            "reports_per_client": per_client, "num_candidates": values - left_out + decoys, "num_decoys": decoys,
            "num_extra": left_out, "k": k, "h": h, "num_cohorts": m, "p": p, "q": q, "f": f}


def simulate_population(num_candidates: int, num_reports: int, num_cohorts: int, *, k: int, h: int, f: float,
                        p: float, q: float, zipf_exponent: float = 1.0, num_extra: int = 0,
                        num_decoys: int | None = None, distribution: str = "zipf", reports_per_client: int = 1,
                        hash: str = "sha256", seed: int) -> RapporSimulation:
    """A seeded simulated RAPPOR collection with known truth — a test and simulation path, NOT a production path:
    the population is drawn from ``numpy.random.default_rng(seed)`` and the randomization runs under
    ``SeededSource(seed)``, so the same seed gives the same reports.

    The candidate list has ``num_candidates`` strings; ``num_decoys`` of them (default num_candidates // 2) are
    reported by nobody; the others and ``num_extra`` non-candidate strings share the ``num_reports`` reports by the
    law ``distribution`` (:func:`population_weights`; Zipf of exponent ``zipf_exponent`` by default) over a seeded
    random ranking (a multinomial draw). Clients report ``reports_per_client`` values each (the last client fewer
    when it does not divide ``num_reports``), every value drawn independently; a client's cohort is uniform in
    [0, num_cohorts); a client that draws the same value twice reuses its permanent response (as a client secret
    makes it do), so its reports of that value are not independent. Bloom filters (``hash`` as
    :func:`vetdp.impl.rappor.bloom_filter_matrix`), permanent and instantaneous randomized response come from
    vetdp.impl.rappor.

    Preconditions: num_candidates >= 1, num_reports >= 1, num_cohorts >= 1, 0 <= num_decoys < num_candidates (some
    candidate must be reported) unless num_extra >= 1, num_extra >= 0, zipf_exponent >= 0, distribution one of
    :data:`DISTRIBUTIONS`, reports_per_client >= 1, seed an int; k, h, f, p, q as :func:`decode`.
    """
    from vetdp.impl.rappor import bloom_filter_matrix, rappor_instantaneous_batch, rappor_permanent_batch
    from vetdp.sampling.sources import SeededSource, use_source

    num_candidates = check_int("num_candidates", num_candidates, lo=1)
    num_reports = check_int("num_reports", num_reports, lo=1)
    num_cohorts, k, h = _shape(num_cohorts, k, h)
    num_extra = check_int("num_extra", num_extra, lo=0)
    decoys = num_candidates // 2 if num_decoys is None else check_int("num_decoys", num_decoys, lo=0,
                                                                       hi=num_candidates)
    if decoys == num_candidates and num_extra == 0:
        raise ValueError(f"num_decoys={decoys}: at least one candidate or extra string must be reported "
                         f"(num_decoys < num_candidates={num_candidates} or num_extra >= 1)")
    zipf_exponent = check_float("zipf_exponent", zipf_exponent)
    check_interval("zipf_exponent", zipf_exponent, 0, None, lo_closed=True, hi_closed=False)
    if distribution not in DISTRIBUTIONS:
        raise ValueError(f"distribution={distribution!r} must be one of {', '.join(DISTRIBUTIONS)}")
    per_client = check_int("reports_per_client", reports_per_client, lo=1)
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise TypeError(f"seed={seed!r} must be an int")
    _rates(f, p, q)
    rng = np.random.default_rng(int(seed))
    reported = num_candidates - decoys
    candidates = tuple(f"cand-{i:06d}" for i in range(reported)) + tuple(f"decoy-{i:06d}" for i in range(decoys))
    extras = tuple(f"extra-{i:06d}" for i in range(num_extra))
    population = list(candidates[:reported]) + list(extras)
    ranking = rng.permutation(len(population))  # ranking[r] = the value at rank r + 1
    by_rank = rng.multinomial(num_reports, population_weights(distribution, len(population), zipf_exponent))
    counts = np.zeros(len(population), dtype=np.int64)
    counts[ranking] = by_rank
    value_ids = rng.permutation(np.repeat(np.arange(len(population)), counts))
    if per_client == 1:
        cohorts = rng.integers(0, num_cohorts, size=num_reports, dtype=np.int64)
    else:
        clients = np.arange(num_reports, dtype=np.int64) // per_client
        cohorts = rng.integers(0, num_cohorts, size=int(clients[-1]) + 1, dtype=np.int64)[clients]
    values = [population[i] for i in value_ids.tolist()]
    bloom = bloom_filter_matrix(values, cohorts, k, h, hash=hash)
    with use_source(SeededSource(b"vetdp-rappor-simulation" + int(seed).to_bytes(16, "big", signed=True))):
        if per_client == 1:
            reports = rappor_instantaneous_batch(rappor_permanent_batch(bloom, f), p, q)
        else:  # one permanent response per distinct (client, value), in order of first appearance
            pair = clients * len(population) + value_ids
            _, first, inverse = np.unique(pair, return_index=True, return_inverse=True)
            order = np.argsort(first, kind="stable")
            rank = np.empty_like(order)
            rank[order] = np.arange(len(order))
            permanent = rappor_permanent_batch(bloom[first[order]], f)
            reports = rappor_instantaneous_batch(permanent[rank[inverse.reshape(-1)]], p, q)
    true_counts = np.concatenate([counts[:reported], np.zeros(decoys, dtype=np.int64)])
    params = {"k": k, "h": h, "f": f, "p": p, "q": q, "num_cohorts": num_cohorts, "seed": int(seed),
              "distribution": distribution, "reports_per_client": per_client, "hash": hash}
    return RapporSimulation(candidates, true_counts, extras, counts[reported:], reports, cohorts, params)


@dataclasses.dataclass(frozen=True)
class RapporScore:
    """How a decode compares with the truth of a simulation.

    recall = found / present (present: candidates with a true count > 0; found: those of them significant);
    false_discoveries: significant candidates with true count 0, out of ``absent``; coverage = covered / selected
    (selected candidates whose interval contains the true count).
    """

    present: int
    found: int
    absent: int
    false_discoveries: int
    selected: int
    covered: int
    significant: int

    @property
    def recall(self) -> float:
        return self.found / self.present if self.present else float("nan")

    @property
    def coverage(self) -> float:
        return self.covered / self.selected if self.selected else float("nan")

    @property
    def false_discovery_proportion(self) -> float:
        return self.false_discoveries / self.significant if self.significant else 0.0


def score_decode(result: RapporDecodeResult, simulation: RapporSimulation) -> RapporScore:
    """Score ``result`` against ``simulation``'s truth (see :class:`RapporScore`); the candidate lists must match."""
    if not isinstance(result, RapporDecodeResult):
        raise TypeError(f"result must be a RapporDecodeResult, not {type(result).__name__}")
    if not isinstance(simulation, RapporSimulation):
        raise TypeError(f"simulation must be a RapporSimulation, not {type(simulation).__name__}")
    if tuple(result.candidates) != tuple(simulation.candidates):
        raise ValueError("result.candidates differs from simulation.candidates; score a decode of this simulation")
    truth = simulation.true_counts
    present = truth > 0
    lo, hi = result.confidence_intervals[:, 0], result.confidence_intervals[:, 1]
    covered = result.selected & (lo <= truth) & (truth <= hi)
    return RapporScore(present=int(present.sum()), found=int((result.significant & present).sum()),
                       absent=int((~present).sum()), false_discoveries=int((result.significant & ~present).sum()),
                       selected=int(result.selected.sum()), covered=int(covered.sum()),
                       significant=int(result.significant.sum()))
