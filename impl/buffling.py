"""Buffling: flip every bit of k Bloom filters with probability p, then shuffle the m columns.

Analysis (SNR, one BF, many BFs, flip-probability search): :mod:`vetdp.buffling`.
Proof and findings: proofs/buffling.md
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from vetdp.arith.rounding import inf_ln, inf_mul, inf_sub, neg_inf_ln
from vetdp.core.validation import check_float, check_int, check_interval
from vetdp.sampling.batch import sample_bernoulli_batch
from vetdp.sampling.primitives import sample_bernoulli_float, sample_uniform_int_below

__all__ = ["Buffling", "make_buffling", "logo_counts", "shuffle_columns"]


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
class Buffling:
    """The mechanism for ``n_pub`` Bloom filters of ``n_bit`` bits and flip probability ``flip_prob``.

    ``function`` (scalar primitives; enumerable by the engine) and ``__call__`` (batch
    Bernoulli draws, for large inputs) have the same output law: every bit flipped
    independently with probability exactly ``flip_prob``, then the columns put in a uniformly
    random order.

    Privacy: each column is k-bit randomized response, so a change of one column's logo costs
    at most ``pure_epsilon`` = k·ln(q/p) (rounded up); the shuffle only helps. The (ε, δ)
    analysis of the shuffled output is :func:`vetdp.buffling.bounds.many_bf_epsilon`.
    """

    n_pub: int
    n_bit: int
    flip_prob: float

    def _check(self, filters: Any) -> np.ndarray:
        arr = np.asarray(filters)
        if arr.shape != (self.n_pub, self.n_bit):
            raise ValueError(f"filters has shape {arr.shape}; it must have shape ({self.n_pub}, {self.n_bit})")
        if arr.dtype != np.bool_:
            if not np.issubdtype(arr.dtype, np.integer) or not np.isin(arr, (0, 1)).all():
                raise ValueError("filters must hold only bits: 0, 1, False or True")
            arr = arr.astype(bool)
        return arr

    def function(self, filters: Any) -> tuple[tuple[bool, ...], ...]:
        """Flip and shuffle with the scalar primitives (one ``sample_bernoulli_float`` per bit)."""
        arr = self._check(filters)
        flipped = [[bool(arr[b, c]) ^ sample_bernoulli_float(self.flip_prob) for c in range(self.n_bit)]
                   for b in range(self.n_pub)]
        perm = shuffle_columns(self.n_bit)
        return tuple(tuple(row[perm[c]] for c in range(self.n_bit)) for row in flipped)

    def __call__(self, filters: Any) -> np.ndarray:
        """Flip and shuffle with the batch Bernoulli sampler; returns a (n_pub, n_bit) bool array."""
        arr = self._check(filters)
        flipped = arr ^ sample_bernoulli_batch(self.flip_prob, arr.size).reshape(arr.shape)
        return flipped[:, shuffle_columns(self.n_bit)]

    @property
    def pure_epsilon(self) -> float:
        """k·ln(q/p) rounded up: the local (per-column) bound, valid for any neighbouring pair."""
        # ln q − ln p with q = 1 − p rounded up, ln q rounded up and ln p rounded down
        ln_ratio = inf_sub(inf_ln(inf_sub(1.0, self.flip_prob)), neg_inf_ln(self.flip_prob))
        return inf_mul(float(self.n_pub), ln_ratio)


def make_buffling(n_pub: int, n_bit: int, flip_prob: float) -> Buffling:
    """The buffling mechanism. Preconditions: n_pub in [1, 16], n_bit in [1, inf), flip_prob in (0, 0.5].

    Proof: proofs/buffling.md
    """
    k = check_int("n_pub", n_pub, lo=1, hi=16)
    m = check_int("n_bit", n_bit, lo=1)
    p = check_float("flip_prob", flip_prob)
    check_interval("flip_prob", p, 0, 0.5, lo_closed=False, hi_closed=True)
    return Buffling(k, m, p)
