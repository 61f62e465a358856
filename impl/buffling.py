"""Buffling: flip every bit of k Bloom filters with probability p, then shuffle the m columns.

Analysis (SNR, one BF, many BFs, flip-probability search): :mod:`vetdp.buffling`.
Proof and findings: proofs/buffling.md
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from vetdp.arith.rounding import inf_mul
from vetdp.core.measurement import (
    Domain,
    DomainError,
    DomainTypeError,
    MaxDivergence,
    Measurement,
    Metric,
    PrivacyConstant,
)
from vetdp.core.validation import check_float, check_int, check_interval
from vetdp.impl.randomized_response_bitvec import RANDOMIZED_RESPONSE_BITVEC_EPSILON
from vetdp.sampling.batch import sample_bernoulli_batch
from vetdp.sampling.primitives import sample_bernoulli_float, sample_uniform_int_below

__all__ = ["BitMatrixDomain", "ColumnDistance", "make_buffling", "logo_counts", "shuffle_columns"]


def shuffle_columns(n: int) -> list[int]:
    """A uniformly random permutation of range(n) (Fisher–Yates on ``sample_uniform_int_below``)."""
    perm = list(range(n))
    for i in range(n - 1, 0, -1):
        j = sample_uniform_int_below(i + 1)
        perm[i], perm[j] = perm[j], perm[i]
    return perm


def logo_counts(matrix: Any) -> list[int]:
    """How many columns of the k × m bit matrix carry each logo (logo = Σ_b bit_b·2^b, row b = publisher b)."""
    arr = np.asarray(matrix, dtype=bool)
    if arr.ndim != 2:
        raise ValueError(f"matrix must be 2-D (n_pub, n_bit), got shape {arr.shape}")
    logos = (arr.astype(np.int64) << np.arange(arr.shape[0])[:, None]).sum(axis=0)
    return np.bincount(logos, minlength=1 << arr.shape[0]).tolist()


@dataclasses.dataclass(frozen=True)
class BitMatrixDomain(Domain):
    """``rows`` × ``columns`` matrices of bits (row b = the Bloom filter of publisher b)."""

    rows: int
    columns: int

    def check_member(self, x: Any) -> tuple[tuple[bool, ...], ...]:
        if isinstance(x, (str, bytes)):
            raise DomainTypeError(f"filters={x!r} must be a matrix of bits, not {type(x).__name__}")
        try:
            arr = np.asarray(x)
        except Exception as e:  # noqa: BLE001 - ragged nesting and the like
            raise DomainError(f"filters must be a {self.rows} × {self.columns} matrix of bits: {e}") from None
        if arr.shape != (self.rows, self.columns):
            raise DomainError(f"filters has shape {arr.shape}; it must have shape ({self.rows}, {self.columns})")
        if arr.dtype != np.bool_ and not (np.issubdtype(arr.dtype, np.integer) and np.isin(arr, (0, 1)).all()):
            raise DomainError("filters must hold only bits: 0, 1, False or True")
        return tuple(tuple(bool(b) for b in row) for row in arr)


@dataclasses.dataclass(frozen=True)
class ColumnDistance(Metric):
    """The number of columns (users' logos) in which two bit matrices differ; ``d_in`` an int >= 0."""

    def check_distance(self, d_in: Any) -> int:
        return check_int("d_in", d_in, lo=0)


def make_buffling(n_pub: int, n_bit: int, flip_prob: float) -> Measurement:
    """Buffling: every bit of ``n_pub`` Bloom filters of ``n_bit`` bits flipped with probability
    ``flip_prob``, then the columns put in a uniformly random order.

    Preconditions: n_pub in [1, 16], n_bit in [1, inf), flip_prob in (0, 0.5].

    Privacy (pure, per changed column): each column is ``n_pub``-bit randomized response, so
    map(d_in) = d_in · n_pub·ln((1−p)/p) rounded up — the bit-vector constant
    :data:`~vetdp.impl.randomized_response_bitvec.RANDOMIZED_RESPONSE_BITVEC_EPSILON` with
    d = n_pub and q = flip_prob. The shuffle can only help; the (ε, δ) analysis of the
    shuffled output is :func:`vetdp.buffling.bounds.many_bf_epsilon`.

    ``function`` uses the scalar primitives (the engine enumerates it); ``batch(inputs)`` randomises many
    inputs at once with the batch sampler and returns an (n, n_pub, n_bit) bool array, each input flipped with
    its own coins and shuffled with its own permutation: the law of independent calls of ``function``.

    Proof: proofs/buffling.md
    """
    k = check_int("n_pub", n_pub, lo=1, hi=16)
    m = check_int("n_bit", n_bit, lo=1)
    p = check_float("flip_prob", flip_prob)
    check_interval("flip_prob", p, 0, 0.5, lo_closed=False, hi_closed=True)
    constant = PrivacyConstant(RANDOMIZED_RESPONSE_BITVEC_EPSILON, {"q": p, "d": k})
    per_column = constant.value
    domain = BitMatrixDomain(k, m)

    def privacy_map(d_in: int) -> float:
        return 0.0 if d_in == 0 else inf_mul(float(d_in), per_column)

    def function(filters: tuple[tuple[bool, ...], ...]) -> tuple[tuple[bool, ...], ...]:
        flipped = [[filters[b][c] ^ sample_bernoulli_float(p) for c in range(m)] for b in range(k)]
        perm = shuffle_columns(m)
        return tuple(tuple(row[perm[c]] for c in range(m)) for row in flipped)

    def batch(inputs: Any) -> np.ndarray:
        arr = np.array([domain.check_member(x) for x in inputs], dtype=bool).reshape(len(inputs), k, m)
        flipped = arr ^ sample_bernoulli_batch(p, arr.size).reshape(arr.shape)
        return np.stack([one[:, shuffle_columns(m)] for one in flipped]) if len(flipped) else flipped

    return Measurement(
        input_domain=domain,
        input_metric=ColumnDistance(),
        output_measure=MaxDivergence(),
        function=function,
        privacy_map=privacy_map,
        output_domain=domain,
        privacy_constant=constant,
        parameters={"n_pub": k, "n_bit": m, "flip_prob": p},
        batch=batch,
        name="make_buffling",
    )
