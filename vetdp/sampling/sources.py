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


class BranchingSource(RandomSource):
    """Replays a prefix of choices and takes the first option at every fresh choice point.

    After a run, :attr:`trail` holds ``(chosen index, number of options)`` for every choice
    made and :attr:`probability` the exact probability of the path taken.
    """

    def __init__(self, prefix: Sequence[int] = (), max_choices: int = 100_000, branch_bytes: bool = False):
        self.prefix = list(prefix)
        self.trail: list[tuple[int, int]] = []
        self._probability = Fraction(1)
        self._uniform_denominator = 1  # product of the n of every branch_uniform(n), kept as an int
        self.max_choices = max_choices
        self.branch_bytes = branch_bytes

    @property
    def probability(self) -> Fraction:
        """The exact probability of the path taken so far."""
        return self._probability / self._uniform_denominator

    def _choose(self, options: int) -> int:
        position = len(self.trail)
        if position >= self.max_choices:
            raise PathLimitExceeded(f"a single run made more than {self.max_choices} random choices")
        index = self.prefix[position] if position < len(self.prefix) else 0
        self.trail.append((index, options))
        return index

    def branch(self, outcomes: Sequence[tuple[Any, Fraction]]) -> Any:
        """One of ``outcomes`` (value, probability); zero-probability values are never taken."""
        live = [(v, p) for v, p in outcomes if p != 0]
        if not live:
            raise ValueError("branch() needs at least one outcome with positive probability")
        value, p = live[self._choose(len(live))]
        self._probability *= p
        return value

    def branch_uniform(self, n: int) -> int:
        """An integer in [0, n), each with probability 1/n (cheaper than :meth:`branch`)."""
        index = self._choose(n)
        self._uniform_denominator *= n
        return index

    def random_bytes(self, n: int) -> bytes:
        """Each byte branches over its 256 values (only when built with ``branch_bytes``)."""
        if not self.branch_bytes:
            raise TypeError(
                "raw random bytes cannot be enumerated at the mechanism level; call a sampler "
                "primitive (sample_bernoulli_float, sample_uniform_int_below, ...) instead"
            )
        return bytes(self.branch_uniform(256) for _ in range(n))


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
