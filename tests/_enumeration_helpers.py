"""Small exhaustive enumerators and byte sources for the harness's own tests.

``enumerate_runs`` drives :class:`~vetdp.sampling.sources.BranchingSource` with an
odometer over its ``trail`` of ``(chosen index, number of options)``: each run replays a
prefix and takes option 0 at every fresh choice, and the next prefix is the trail cut
after its last position with an untried option, that option advanced. Kept independent
of the engine's own enumerator so that the two can check each other.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Hashable, Sequence
from fractions import Fraction
from typing import Any

from vetdp.sampling.sources import BranchingSource, PathLimitExceeded, RandomSource, use_source


def next_prefix(trail: Sequence[tuple[int, int]]) -> list[int] | None:
    """The odometer: the trail cut after its last position with an untried option, advanced."""
    for i in range(len(trail) - 1, -1, -1):
        index, n = trail[i]
        if index + 1 < n:
            return [idx for idx, _ in trail[:i]] + [index + 1]
    return None


def enumerate_runs(fn: Callable[[], Any], make_source: Callable[[list[int]], Any],
                   limit_marker: Hashable = "<limit>") -> list[tuple[tuple[int, ...], Fraction, Any]]:
    """Every path of ``fn`` as (choice indices, exact probability, result), in odometer order.

    A run that exceeds the source's choice limit yields ``limit_marker`` as its result.
    """
    runs = []
    prefix: list[int] | None = []
    while prefix is not None:
        source = make_source(prefix)
        with use_source(source):
            try:
                result = fn()
            except PathLimitExceeded:
                result = limit_marker
        runs.append((tuple(i for i, _ in source.trail), source.probability, result))
        prefix = next_prefix(source.trail)
    return runs


def distribution(runs) -> dict[Any, Fraction]:
    out: dict[Any, Fraction] = defaultdict(Fraction)
    for _, p, result in runs:
        out[result] += p
    return dict(out)


def byte_distribution(fn: Callable[[], Any], max_bytes: int = 100_000) -> dict[Any, Fraction]:
    """The exact distribution of ``fn``'s result over all byte paths (each byte 1/256).

    Paths that read more than ``max_bytes`` bytes end with the result ``"<limit>"``.
    """
    return distribution(enumerate_runs(
        fn, lambda prefix: BranchingSource(prefix, max_choices=max_bytes, branch_bytes=True)))


def choice_distribution(fn: Callable[[], Any]) -> dict[Any, Fraction]:
    """The exact distribution of ``fn``'s result when the primitives branch (no byte branching)."""
    return distribution(enumerate_runs(fn, lambda prefix: BranchingSource(prefix)))


class FixedBytesSource(RandomSource):
    """Serves the bytes of ``data`` in order; raises AssertionError past its end."""

    def __init__(self, data: bytes):
        self.data = bytes(data)
        self.position = 0

    def random_bytes(self, n: int) -> bytes:
        if self.position + n > len(self.data):
            raise AssertionError(f"read past the {len(self.data)} bytes supplied")
        out = self.data[self.position:self.position + n]
        self.position += n
        return out


def first_set_bit_position(buffer: bytes) -> int | None:
    """1-based position of the first set bit, most significant bit of each byte first."""
    for i, byte in enumerate(buffer):
        for j in range(8):
            if (byte >> (7 - j)) & 1:
                return 8 * i + j + 1
    return None


def bernoulli_reference(prob: float, buffer: bytes) -> bool:
    """The Bernoulli answer by definition: bit G of prob = Σ b_i 2**-i (G = first set bit); 1 is True."""
    if prob == 1.0:
        return True
    g = first_set_bit_position(buffer)
    if g is None:
        return False
    return (Fraction(prob) * 2**g).__floor__() % 2 == 1


def max_loss_ratio(dists: Sequence[dict[Any, Fraction]]) -> Fraction:
    """max over ordered pairs of distributions and outputs y of P[y]/Q[y] (exact; every pair is a neighbour).

    Raises AssertionError when some output is possible under one input and not another
    (the loss would be infinite).
    """
    best = Fraction(1)
    outputs = set().union(*dists)
    for dp in dists:
        for dq in dists:
            for y in outputs:
                p, q = dp.get(y, Fraction(0)), dq.get(y, Fraction(0))
                if p == 0:
                    continue
                assert q != 0, f"output {y!r} has probability {p} under one input and 0 under another"
                best = max(best, p / q)
    return best


def sign_minus_ln(c: float | Fraction, ratio: Fraction) -> int:
    """sign(c - ln(ratio)), decided exactly: mpmath at >= 200 bits, precision raised until sure.

    ln of a rational other than 1 is irrational, so the decision always terminates.
    """
    import mpmath

    c = Fraction(c)
    if ratio == 1:
        return (c > 0) - (c < 0)
    prec = 200
    while prec <= 1 << 16:
        with mpmath.workprec(prec):
            cm = mpmath.mpf(c.numerator) / c.denominator
            excess = ratio - 1  # exact; log1p keeps relative accuracy when the ratio is near 1
            t = mpmath.log1p(mpmath.mpf(excess.numerator) / excess.denominator)
            diff = cm - t
            if abs(diff) > (abs(cm) + abs(t)) * mpmath.mpf(2) ** (20 - prec):
                return 1 if diff > 0 else -1
        prec *= 4
    raise AssertionError(f"could not decide {c} against ln({ratio})")
