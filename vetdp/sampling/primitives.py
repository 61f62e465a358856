"""Sampler primitives: the only way a mechanism draws randomness.

Each primitive has a byte-level algorithm (run against the current byte source) and an
exact specification (the outcomes and their probabilities), which it hands to a
:class:`~vetdp.sampling.sources.BranchingSource` when the engine enumerates. The byte-level
algorithms are checked against the specifications one level down, by branching over
bytes (``tests/test_sampling.py``).
"""

from __future__ import annotations

import functools
import math
import numbers
from fractions import Fraction

from vetdp.sampling.lazy import LAZY_FROM, LazyInt
from vetdp.sampling.sources import BranchingSource, current_source, prefiltered

__all__ = [
    "random_bytes",
    "sample_geometric_buffer",
    "sample_bernoulli_float",
    "sample_uniform_int_below",
    "BERNOULLI_BUFFER_BYTES",
    "bernoulli_from_bytes",
    "bernoulli_bytes_needed",
    "expansion_bits",
    "uniform_attempt",
    "uniform_attempt_constant_time",
    "uniform_attempt_constant_time_bytes",
    "CONSTANT_TIME_EXTRA_BYTES",
    "MAX_RANDOM_BYTES",
]

# Every float in [0, 1) is a multiple of 2**-1074, so its binary expansion ends by bit 1074.
# 135 bytes = 1080 bits cover it; if none of them is set, the answer is False.
BERNOULLI_BUFFER_BYTES = 135
_BUFFER_BITS = 8 * BERNOULLI_BUFFER_BYTES


MAX_RANDOM_BYTES = 2**30  # one call returns at most 1 GiB: a larger request is refused, not a bare MemoryError


def random_bytes(n: int) -> bytes:
    """``n`` uniformly random bytes from the current source.

    Preconditions: ``n`` an int in [0, 2^30] (:data:`MAX_RANDOM_BYTES`)."""
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or not 0 <= n <= MAX_RANDOM_BYTES:
        raise ValueError(f"n={n!r} must be an int in [0, {MAX_RANDOM_BYTES}] (at most 1 GiB of random bytes per "
                         "call)")
    source = current_source()  # a named local: the engine's state fingerprint can see the call's target
    return source.random_bytes(int(n))


def _first_set_bit(buffer: bytes) -> int | None:
    """0-based index of the first set bit, reading each byte from its most significant bit."""
    for i, byte in enumerate(buffer):
        if byte:
            return 8 * i + (8 - byte.bit_length())
    return None


@functools.lru_cache(maxsize=16)
def _geometric_outcomes(buffer_len: int) -> tuple[tuple[int | None, Fraction], ...]:
    """The stated law of :func:`sample_geometric_buffer`: bit i first w.p. 2**-(i+1), None w.p. 2**-bits."""
    bits = 8 * buffer_len
    return tuple((i, Fraction(1, 2 ** (i + 1))) for i in range(bits)) + ((None, Fraction(1, 2**bits)),)


def sample_geometric_buffer(buffer_len: int, constant_time: bool = False) -> int | None:
    """Index of the first set bit among ``8*buffer_len`` random bits, or None if all are 0.

    Bit ``i`` is first with probability ``2**-(i+1)``; None has probability ``2**-(8*buffer_len)``.
    With ``constant_time`` all ``buffer_len`` bytes are read whatever they hold.
    """
    if isinstance(buffer_len, bool) or not isinstance(buffer_len, numbers.Integral) or buffer_len < 1:
        raise ValueError(f"buffer_len={buffer_len!r} must be an int in [1, inf)")
    source = current_source()
    if isinstance(source, BranchingSource) and not source.branch_bytes:
        return source.branch(_geometric_outcomes(int(buffer_len)))
    if constant_time:
        return _first_set_bit_constant_time(source.random_bytes(buffer_len))
    for i in range(buffer_len):
        byte = source.random_bytes(1)[0]
        if byte:
            return 8 * i + (8 - byte.bit_length())
    return None


def _highest_bit_mask(r: int, width: int) -> int:
    """The highest set bit of ``r`` (< 2**width) as a one-bit mask; 0 for r = 0.

    A fixed sequence of shifts and ors over ``width``-bit integers, independent of ``r``.
    """
    shift = 1
    while shift < width:
        r |= r >> shift
        shift <<= 1
    return r ^ (r >> 1)


def _first_set_bit_constant_time(buffer: bytes) -> int | None:
    width = 8 * len(buffer)
    mask = _highest_bit_mask(int.from_bytes(buffer, "big"), width)
    return None if mask == 0 else width - mask.bit_length()


def _symbolic(x: object) -> bool:
    """Whether ``x`` is one of the harness's symbolic floats (vetdp.engine.symbolic), standing for a region of
    probabilities; the engine then branches with the probability as a polynomial in it."""
    return getattr(type(x), "_vetdp_symbolic_", False)


def _validate_probability(prob: object) -> float:
    if type(prob) is float:  # the common case, without the ABC check below
        if math.isnan(prob) or not 0.0 <= prob <= 1.0:
            raise ValueError(f"prob={prob!r} must be in [0, 1]")
        return prob
    if _symbolic(prob):
        if not prob.__vetdp_in_interval__(0, 1, True, True):
            raise ValueError(f"prob={prob!r} must be in [0, 1]")
        return prob
    if isinstance(prob, bool) or not isinstance(prob, numbers.Real):
        raise TypeError(f"prob={prob!r} must be a float, not {type(prob).__name__}")
    p = float(prob)
    if math.isnan(p) or not 0.0 <= p <= 1.0:
        raise ValueError(f"prob={prob!r} must be in [0, 1]")
    return p


def expansion_bits(prob: float) -> int:
    """``prob * 2**1080`` as an exact integer: bit ``1080 - i`` is bit ``i`` of prob's expansion.

    Exact for every float in [0, 1] because each is a multiple of 2**-1074.
    """
    num, den = Fraction(prob).as_integer_ratio()
    return num * (1 << _BUFFER_BITS) // den


def bernoulli_bytes_needed(prob: float) -> int:
    """Bytes the variable-time Bernoulli reads at most: up to the last set bit of prob's expansion.

    Depends on the public ``prob`` only (0 for prob 0 and 1, whose answer is fixed).
    """
    if prob in (0.0, 1.0):
        return 0
    bits = expansion_bits(prob)
    last = _BUFFER_BITS - ((bits & -bits).bit_length() - 1)  # 1-based position of the last set bit
    return (last + 7) // 8


def bernoulli_from_bytes(prob: float, buffer: bytes) -> bool:
    """The Bernoulli answer that the bytes ``buffer`` (first byte first) determine.

    Reads ``G``, the 1-based position of the first set bit, and returns bit ``G`` of the
    binary expansion of ``prob`` (``prob = Σ b_i 2**-i``), so ``P[True] = prob`` exactly.
    ``prob == 1`` is always True. Runs a fixed sequence of operations for a fixed-length
    buffer (this is the constant-time form; the variable-time form stops reading early).
    """
    width = 8 * len(buffer)
    mask = _highest_bit_mask(int.from_bytes(buffer, "big"), width)
    bits = expansion_bits(prob) >> (_BUFFER_BITS - width) if width <= _BUFFER_BITS else expansion_bits(prob) << (
        width - _BUFFER_BITS)
    return bool(mask & bits) | (prob == 1.0)


@functools.lru_cache(maxsize=1024)
def _bernoulli_outcomes(p: float) -> tuple[tuple[bool, Fraction], ...]:
    """The outcomes a branching source enumerates for a Bernoulli of float ``p``, built once per ``p``."""
    q = Fraction(p)
    return prefiltered(((True, q), (False, 1 - q)))


def sample_bernoulli_float(prob: float, constant_time: bool = False) -> bool:
    """True with probability exactly ``prob`` (every float in [0, 1], subnormals included).

    Draws the position ``G`` of the first set bit in a stream of random bits and returns
    bit ``G`` of ``prob``'s binary expansion. The variable-time form reads one byte at a
    time and stops at the first non-zero byte, or once the rest of the expansion is zero
    (:func:`bernoulli_bytes_needed`); with ``constant_time=True`` all 135 bytes are read
    and combined by a fixed sequence of big-integer operations, and the answer equals the
    variable-time answer on the same bytes.

    Raises TypeError/ValueError for a prob that is not a float in [0, 1].
    """
    # a float in [0, 1] needs no further check (NaN fails both comparisons)
    p = prob if type(prob) is float and 0.0 <= prob <= 1.0 else _validate_probability(prob)
    if constant_time is not False and constant_time is not True:
        raise TypeError(f"constant_time={constant_time!r} must be a bool")
    source = current_source()
    if isinstance(source, BranchingSource) and not source.branch_bytes:
        if type(p) is float:
            return source.branch(_bernoulli_outcomes(p))
        q = p.__vetdp_probability__()  # a symbolic probability (the engine's universal exploration)
        return source.branch([(True, q), (False, 1 - q)])
    if constant_time:
        return bernoulli_from_bytes(p, source.random_bytes(BERNOULLI_BUFFER_BYTES))
    bits = expansion_bits(p)
    for i in range(bernoulli_bytes_needed(p)):
        byte = source.random_bytes(1)[0]
        if byte:
            g = 8 * i + (9 - byte.bit_length())  # 1-based position of the first set bit
            return bool((bits >> (_BUFFER_BITS - g)) & 1) or p == 1.0
    return p == 1.0


def uniform_attempt(n: int, buffer: bytes) -> int | None:
    """One rejection-sampling attempt: the value the bytes give, or None when rejected.

    Over all byte strings of the attempt's length (w bytes), each value in [0, n) is
    produced by the same number of strings, 2**(8*w - b) with b = (n-1).bit_length() (only
    the low b bits are used); the rest are rejected, fewer than half of them.
    """
    bits = (n - 1).bit_length()
    v = int.from_bytes(buffer, "big") & ((1 << bits) - 1)
    return v if v < n else None


def uniform_attempt_bytes(n: int) -> int:
    """How many bytes one attempt of :func:`uniform_attempt` reads for bound ``n``."""
    return ((n - 1).bit_length() + 7) // 8


CONSTANT_TIME_EXTRA_BYTES = 16  # 128 bits beyond n's width: an attempt is rejected with probability < 2**-128


def uniform_attempt_constant_time_bytes(n: int, extra: int = CONSTANT_TIME_EXTRA_BYTES) -> int:
    """How many bytes one attempt of :func:`uniform_attempt_constant_time` reads for bound ``n``."""
    return uniform_attempt_bytes(n) + extra


def uniform_attempt_constant_time(n: int, buffer: bytes) -> int | None:
    """One wide attempt: the bytes as an integer r < 2**(8w); r mod n when r is below the largest multiple of n
    that fits in 8w bits, else None (rejected, probability < n/2**(8w)).

    The same sequence of big-integer operations for every buffer of a given length. Over all 2**(8w) byte
    strings each value in [0, n) is produced by exactly (2**(8w) − 2**(8w) mod n)/n of them.
    """
    r = int.from_bytes(buffer, "big")
    total = 1 << (8 * len(buffer))
    limit = total - total % n
    value = r % n
    return value if r < limit else None


def sample_uniform_int_below(n: int, constant_time: bool = False) -> int:
    """An integer uniform on [0, n), exactly (rejection sampling on random bytes).

    With ``constant_time`` every attempt reads the same number of bytes,
    :func:`uniform_attempt_constant_time_bytes` (16 bytes beyond n's width), and is rejected with
    probability below 2**-128, so the bytes read do not depend on the input or the outcome except with that
    probability; the answer is exactly uniform either way.

    Under exact enumeration, for n >= 2**20 the result is a :class:`~vetdp.sampling.lazy.LazyInt`:
    it behaves as the integer in comparisons, arithmetic and every other use, but is fixed only as
    far as the code looks at it (``isinstance(v, int)`` is False for it).

    Raises TypeError unless ``n`` is an int, ValueError unless n >= 1.
    """
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise TypeError(f"n={n!r} must be an int, not {type(n).__name__}")
    n = int(n)
    if n < 1:
        raise ValueError(f"n={n!r} must be in [1, inf)")
    if not isinstance(constant_time, bool):
        raise TypeError(f"constant_time={constant_time!r} must be a bool")
    source = current_source()
    if isinstance(source, BranchingSource) and not source.branch_bytes:
        if n >= LAZY_FROM and source.lazy_uniforms:  # too many values to branch over: drawn as far as looked at
            return LazyInt.uniform_below(n)
        return source.branch_uniform(n)  # each of [0, n) with probability 1/n, without n Fractions
    if constant_time:
        width = uniform_attempt_constant_time_bytes(n)
        while True:
            v = uniform_attempt_constant_time(n, source.random_bytes(width))
            if v is not None:
                return v
    if n == 1:
        return 0
    width = uniform_attempt_bytes(n)
    while True:
        v = uniform_attempt(n, source.random_bytes(width))
        if v is not None:
            return v
