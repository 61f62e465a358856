"""Vectorised forms of the sampler primitives, for randomising many reports at once.

They read the same byte source as the scalar primitives and have the same exact
semantics: cell ``c`` of :func:`sample_bernoulli_batch` receives one byte per round until
a byte is non-zero, exactly the byte sequence the variable-time
:func:`~vetdp.sampling.primitives.sample_bernoulli_float` would read, and answers as it
would. Cells read disjoint bytes, so the cells of one call are independent and each has the
scalar primitive's law; the same holds for :func:`sample_uniform_int_below_batch`.

Under the engine's enumerating source (a :class:`~vetdp.sampling.sources.BranchingSource`
that branches over the primitives' outcomes) each cell is therefore drawn through the scalar
primitive, so the engine enumerates the exact law of code that calls a batch sampler. Under a
source that branches over bytes, the byte-level algorithm runs as it is.
"""

from __future__ import annotations

import functools
import numbers

import numpy as np

from vetdp.sampling.primitives import (
    BERNOULLI_BUFFER_BYTES,
    _validate_probability,
    bernoulli_bytes_needed,
    expansion_bits,
    sample_bernoulli_float,
    sample_uniform_int_below,
    uniform_attempt_bytes,
)
from vetdp.sampling.sources import BranchingSource, current_source

__all__ = ["sample_bernoulli_batch", "sample_uniform_int_below_batch", "BatchCellBytes"]

# 1-based position of the first set bit within a byte (MSB first); 0 for the zero byte
_FIRST_BIT = np.array([0] + [9 - b.bit_length() for b in range(1, 256)], dtype=np.int16)


def _enumerating(source) -> bool:
    """Whether ``source`` is the engine's, branching over the primitives' outcomes rather than bytes."""
    return isinstance(source, BranchingSource) and not source.branch_bytes


def _check_count(name: str, n: object) -> int:
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 0:
        raise ValueError(f"{name}={n!r} must be an int in [0, inf)")
    return int(n)


class BatchCellBytes:
    """For tests: the bytes each cell consumed in the last :func:`sample_bernoulli_batch` call."""

    last: list[bytearray] | None = None


# cells drawn per read of the first round: bytes and lookups stay in the CPU cache
FIRST_ROUND_CHUNK = 1 << 16


@functools.lru_cache(maxsize=64)
def _answer_table(p: float) -> np.ndarray:
    """``table[g]`` = bit ``g`` of ``p``'s expansion (g = 1..1080); ``table[0]``: the answer when no bit is set."""
    width = 8 * BERNOULLI_BUFFER_BYTES
    expansion = expansion_bits(p)
    table = np.array([p == 1.0] + [bool((expansion >> (width - g)) & 1) or p == 1.0 for g in range(1, width + 1)],
                     dtype=bool)
    table.setflags(write=False)
    return table


def sample_bernoulli_batch(prob: float, count: int, record: bool = False) -> np.ndarray:
    """``count`` independent Bernoulli(``prob``) draws as a bool array, each exact.

    Round ``r`` reads one byte for every cell still undecided (cell order); a cell is
    decided at its first non-zero byte, at 1-based bit position ``G``, and answers bit
    ``G`` of ``prob``'s binary expansion. Rounds stop after ``bernoulli_bytes_needed(prob)``
    bytes, as the scalar form does; cells still undecided answer False (True when prob
    is 1). With ``record``, :attr:`BatchCellBytes.last` keeps each cell's bytes (None under
    the engine's enumerating source, where each cell is a scalar draw and reads no bytes).

    The first round, which decides 255 of every 256 cells, maps each byte to its answer
    through one 256-entry table, in chunks of :data:`FIRST_ROUND_CHUNK` cells read in
    cell order (the byte stream is the same as one read of ``count`` bytes).
    """
    p = _validate_probability(prob)
    count = _check_count("count", count)
    source = current_source()
    if _enumerating(source):  # the cells' law is the scalar one's, cell by cell (module docstring)
        BatchCellBytes.last = None
        return np.array([sample_bernoulli_float(p) for _ in range(count)], dtype=bool)
    table = _answer_table(p)
    rounds = bernoulli_bytes_needed(p)
    cells = [bytearray() for _ in range(count)] if record else None
    BatchCellBytes.last = cells
    if rounds == 0 or count == 0:  # prob 0 or 1: the scalar form reads nothing either
        return np.full(count, table[0], dtype=bool)
    first_round = table[_FIRST_BIT]  # byte -> answer when the byte is non-zero
    out = np.empty(count, dtype=bool)
    zero_cells = []
    for start in range(0, count, FIRST_ROUND_CHUNK):
        stop = min(start + FIRST_ROUND_CHUNK, count)
        drawn = np.frombuffer(source.random_bytes(stop - start), dtype=np.uint8)
        np.take(first_round, drawn, out=out[start:stop])
        zero_cells.append(np.flatnonzero(drawn == 0) + start)
        if cells is not None:
            for c, b in enumerate(drawn.tolist(), start):
                cells[c].append(b)
    undecided = np.concatenate(zero_cells)
    for round_ in range(1, rounds):
        if undecided.size == 0:
            break
        drawn = np.frombuffer(source.random_bytes(undecided.size), dtype=np.uint8)
        if cells is not None:
            for c, b in zip(undecided.tolist(), drawn.tolist(), strict=True):
                cells[c].append(b)
        first = _FIRST_BIT[drawn]
        hit = first > 0
        out[undecided[hit]] = table[8 * round_ + first[hit]]
        undecided = undecided[~hit]
    out[undecided] = table[0]
    return out


def sample_uniform_int_below_batch(n: int, count: int) -> np.ndarray:
    """``count`` independent integers uniform on [0, n), exactly (vectorised rejection).

    Each cell makes the scalar form's attempts (:func:`~vetdp.sampling.primitives.uniform_attempt`, the same
    width) on its own bytes until one is accepted. Preconditions: ``n`` an int in [1, 2**62]."""
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise TypeError(f"n={n!r} must be an int, not {type(n).__name__}")
    if n < 1:
        raise ValueError(f"n={n!r} must be in [1, inf)")
    if n > 2**62:
        raise ValueError(f"n={n!r} must be at most 2**62 for the batch sampler")
    count = _check_count("count", count)
    source = current_source()
    if _enumerating(source):  # int(): a lazily drawn value (n >= 2**20) is fixed, as the int64 array holds it
        return np.array([int(sample_uniform_int_below(n)) for _ in range(count)], dtype=np.int64)
    out = np.zeros(count, dtype=np.int64)
    if n == 1:
        return out
    width = uniform_attempt_bytes(n)
    bits = (n - 1).bit_length()
    mask = np.uint64((1 << bits) - 1)
    pending = np.arange(count)
    while pending.size:
        raw = np.frombuffer(source.random_bytes(pending.size * width), dtype=np.uint8).reshape(pending.size, width)
        values = np.zeros(pending.size, dtype=np.uint64)
        for j in range(width):  # big-endian, as the scalar attempt reads
            values = (values << np.uint64(8)) | raw[:, j].astype(np.uint64)
        values &= mask
        ok = values < np.uint64(n)
        out[pending[ok]] = values[ok].astype(np.int64)
        pending = pending[~ok]
    return out
