"""Where randomness comes from: a context-local source read by the sampler primitives.

* :class:`SystemSource` — ``os.urandom``; the default in every context.
* :class:`SeededSource` — a deterministic SHA-256 counter-mode stream, for reproducible
  tests only.
* :class:`BranchingSource` — used by the engine: instead of drawing, each primitive asks it
  to *branch* over the values it can return with their exact probabilities. Run the same
  function again with the next choice sequence (see :func:`vetdp.engine.enumerate`) and
  every path is visited once, with its exact probability.

Mechanisms never touch a source directly; they call the primitives of
:mod:`vetdp.sampling.primitives`, which read :func:`current_source`.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import math
import os
from collections.abc import Iterator, Sequence
from fractions import Fraction
from typing import Any

__all__ = [
    "RandomSource",
    "SystemSource",
    "SeededSource",
    "RecordingSource",
    "BranchingSource",
    "prefiltered",
    "current_source",
    "use_source",
    "EntropyError",
]


class EntropyError(RuntimeError):
    """The operating system could not supply random bytes."""


class RandomSource:
    """A supplier of uniformly random bytes."""

    def random_bytes(self, n: int) -> bytes:  # pragma: no cover - overridden
        raise TypeError(f"{type(self).__name__} does not supply random bytes")


class SystemSource(RandomSource):
    """Cryptographically secure bytes from the operating system (``os.urandom``)."""

    def random_bytes(self, n: int) -> bytes:
        try:
            return os.urandom(n)
        except OSError as e:  # pragma: no cover - depends on the OS
            raise EntropyError(f"the system could not supply {n} random bytes: {e}") from e

    def __repr__(self) -> str:
        return "SystemSource()"


class SeededSource(RandomSource):
    """A reproducible byte stream: SHA-256(seed ‖ counter) blocks. Not for production."""

    def __init__(self, seed: int | str | bytes):
        if isinstance(seed, int):
            seed = seed.to_bytes((seed.bit_length() + 8) // 8, "big", signed=True)
        elif isinstance(seed, str):
            seed = seed.encode()
        self._seed = bytes(seed)
        self._counter = 0
        self._buffer = b""

    def random_bytes(self, n: int) -> bytes:
        if n > len(self._buffer):
            blocks_needed = (n - len(self._buffer) + 31) // 32
            blocks = [hashlib.sha256(self._seed + (self._counter + i).to_bytes(8, "big")).digest()
                      for i in range(blocks_needed)]
            self._counter += blocks_needed
            self._buffer += b"".join(blocks)
        out, self._buffer = self._buffer[:n], self._buffer[n:]
        return out

    def __repr__(self) -> str:
        return f"SeededSource({self._seed!r})"


class RecordingSource(RandomSource):
    """Wraps another source and keeps every chunk of bytes it hands out, in order."""

    def __init__(self, inner: RandomSource):
        self.inner = inner
        self.chunks: list[bytes] = []

    def random_bytes(self, n: int) -> bytes:
        b = self.inner.random_bytes(n)
        self.chunks.append(b)
        return b

    @property
    def bytes_read(self) -> int:
        return sum(map(len, self.chunks))


class PathLimitExceeded(RuntimeError):
    """One run made more random choices than the branching source allows."""


class ReplayDiverged(RuntimeError):
    """A replayed choice does not exist at its draw: the run drew from another distribution there (fewer options)
    than the run whose choices are replayed, so its draw sequence differs from that run's (state kept across
    calls, or randomness vetdp cannot see). Never the code's own error: the source halts, as on a path limit."""


# large constant outcome tuples (e.g. the geometric buffer's 1081 outcomes) filtered once; the
# tuple itself is kept, so its id cannot be reused while the entry exists
_LIVE: dict[int, tuple[tuple, list]] = {}


# constant outcome tuples a primitive built once without their zero-probability values (prefiltered): branch()
# takes them as they are; the tuple itself is kept, so its id cannot be reused while the entry exists
_PREFILTERED: dict[int, tuple] = {}
_REDUCE_BITS = 4096  # a path's probability is reduced each time its denominator grows by this many bits


def prefiltered(outcomes: Sequence[tuple[Any, Fraction]]) -> tuple[tuple[Any, Fraction], ...]:
    """``outcomes`` without the zero-probability ones, as a tuple that :meth:`BranchingSource.branch` takes
    without filtering it again (for a primitive that builds the same outcomes at every call and keeps them)."""
    live = tuple((v, p) for v, p in outcomes if p != 0)
    if len(_PREFILTERED) > 4096:  # the oldest tuples are filtered again at each use, never wrong
        _PREFILTERED.clear()
    _PREFILTERED[id(live)] = live
    return live


class BranchingSource(RandomSource):
    """Replays a prefix of choices; at every fresh choice point takes option 0 (or asks its explorer).

    After a run, :attr:`trail` holds ``(chosen index, number of options)`` for every choice
    made and :attr:`probability` the exact probability of the path taken.

    ``random_bytes(n)`` branches over the 256 values of each byte (probability 1/256 each), so
    samplers built from raw bytes enumerate exactly. ``branch_bytes`` only selects how the
    primitives themselves enumerate: over their stated outcomes (False, the default) or by
    running their byte-level algorithms over every byte (True, used to check those algorithms).

    ``explorer`` (used by :mod:`vetdp.engine.enumerate`) is asked for the index at every fresh
    choice point: ``explorer.fresh(source, options, probs, extra)`` with ``probs`` the list of
    ``(value, probability)`` outcomes, or None for ``options`` equally likely options, and
    ``extra`` the choice's own arguments. It may raise a BaseException to end the run; once a
    run has been ended that way, every further choice raises the same exception again
    (:attr:`halted`), so code that swallows it cannot produce an output from a cut path.
    """

    lazy_uniforms = True  # sample_uniform_int_below(n) for n >= 2**20 returns a LazyInt (vetdp.sampling.lazy)
    track_probability = True  # False: a replay that needs the path's choices, not its probability

    def __init__(self, prefix: Sequence[int] = (), max_choices: int = 100_000, branch_bytes: bool = False,
                 explorer: Any = None):
        self.prefix = list(prefix)
        self.trail: list[tuple[int, int]] = []
        self._probability = Fraction(1)
        self._num, self._den, self._reduce_at = 1, 1, 1 << _REDUCE_BITS  # the Fraction factors' product
        self._uniform_denominator = 1  # product of the n of every branch_uniform(n), kept as an int
        self.max_choices = max_choices
        self.branch_bytes = branch_bytes
        self.explorer = explorer
        self.halted: BaseException | None = None

    @property
    def probability(self) -> Fraction:
        """The exact probability of the path taken so far."""
        product = self._probability if self._num == self._den else Fraction(self._num, self._den) * self._probability
        return product / self._uniform_denominator

    def _choose(self, options: int, probs: Sequence[tuple[Any, Fraction]] | None = None, extra: Any = None) -> int:
        if self.halted is not None:
            raise self.halted
        position = len(self.trail)
        if position >= self.max_choices:
            self.halted = PathLimitExceeded(f"a single run made more than {self.max_choices} random choices")
            raise self.halted
        if position < len(self.prefix):
            index = self.prefix[position]
            if not 0 <= index < options:
                self.halted = ReplayDiverged(
                    f"random choice {position + 1} replays option {index}, but this draw offers {options} "
                    f"option{'' if options == 1 else 's'}: the draw sequence differs from the replayed run's")
                raise self.halted
        elif self.explorer is not None:
            try:
                index = self.explorer.fresh(self, options, probs, extra)
            except BaseException as e:
                self.halted = e
                raise
        else:
            index = 0
        self.trail.append((index, options))
        return index

    def branch(self, outcomes: Sequence[tuple[Any, Fraction]]) -> Any:
        """One of ``outcomes`` (value, probability); zero-probability values are never taken."""
        live = _PREFILTERED.get(id(outcomes))
        if live is not outcomes:
            cached = _LIVE.get(id(outcomes)) if type(outcomes) is tuple else None
            if cached is not None and cached[0] is outcomes:
                live = cached[1]
            else:
                live = [(v, p) for v, p in outcomes if p != 0]
                if type(outcomes) is tuple and len(outcomes) > 16:
                    if len(_LIVE) > 64:
                        _LIVE.clear()
                    _LIVE[id(outcomes)] = (outcomes, live)
        if not live:
            raise ValueError("branch() needs at least one outcome with positive probability")
        value, p = live[self._choose(len(live), live, ("branch", live))]
        if self.track_probability:
            if type(p) is Fraction:  # kept as two ints, reduced only when they grow large: no gcd at every choice
                self._num *= p.numerator
                self._den *= p.denominator
                if self._den > self._reduce_at:
                    g = math.gcd(self._num, self._den)
                    self._num, self._den = self._num // g, self._den // g
                    self._reduce_at = self._den << _REDUCE_BITS
            else:  # a symbolic probability (a polynomial of the universal exploration)
                self._probability *= p
        return value

    def branch_uniform(self, n: int) -> int:
        """An integer in [0, n), each with probability 1/n (cheaper than :meth:`branch`)."""
        index = self._choose(n, None, ("uniform", n))
        self._uniform_denominator *= n
        return index

    def random_bytes(self, n: int) -> bytes:
        """``n`` bytes, each branching over its 256 values with probability 1/256."""
        out = bytearray()
        for _ in range(n):
            out.append(self._choose(256, None, ("bytes", n, bytes(out))))
            self._uniform_denominator *= 256
        return bytes(out)


_current: contextvars.ContextVar[RandomSource] = contextvars.ContextVar("vetdp_random_source", default=SystemSource())


def current_source() -> RandomSource:
    """The source the primitives read in this context (``SystemSource`` unless overridden)."""
    return _current.get()


@contextlib.contextmanager
def use_source(source: RandomSource) -> Iterator[RandomSource]:
    """Make ``source`` the current source inside the ``with`` block (context-local)."""
    if not isinstance(source, RandomSource):
        raise TypeError(f"source={source!r} must be a RandomSource")
    token = _current.set(source)
    try:
        yield source
    finally:
        _current.reset(token)
