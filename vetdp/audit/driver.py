"""Drawing the samples of an audit: samplers, chunking, progress.

A *sampler* is a callable ``sampler(x, n)`` returning a sequence (or array) of ``n``
outputs of M(x). :func:`as_sampler` makes one from a vetdp :class:`Measurement` (its
vectorised ``batch`` form when it has one, else one call per sample) or passes a sampler
through. Samples are drawn in chunks, so that progress can be shown and so that each
request to a byte source stays small.
"""

from __future__ import annotations

import inspect
import itertools
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from vetdp.audit.blackbox import AuditResult, Statistic, audit_tallies, tally
from vetdp.core.measurement import Measurement
from vetdp.core.validation import check_int

__all__ = ["Sampler", "as_sampler", "draw_tally", "run_audit", "DEFAULT_CHUNK", "WINDOW"]

Sampler = Callable[[Any, int], Any]
DEFAULT_CHUNK = 50_000
WINDOW = 256  # chunks drawn and tallied at a time (the memory of an audit is one window, whatever its size)


def as_sampler(obj: Any) -> Sampler:
    """A ``sampler(x, n)`` for a Measurement (batch form preferred) or a two-argument callable.

    Raises TypeError for anything else, naming what was given.
    """
    if isinstance(obj, Measurement):
        if obj.batch is not None:
            batch = obj.batch

            def from_batch(x: Any, n: int) -> Any:
                return batch([x] * n)

            return from_batch

        def one_by_one(x: Any, n: int) -> list:
            return [obj(x) for _ in range(n)]

        return one_by_one
    if not callable(obj):
        raise TypeError(f"sampler={obj!r} must be a Measurement or a callable sampler(x, n)")
    try:
        inspect.signature(obj).bind(None, 1)
    except TypeError:
        raise TypeError(f"sampler={obj!r} must accept two arguments (x, n) and return n outputs of M(x)") from None
    except ValueError:  # a builtin without a signature: take it on trust
        pass
    return obj


def draw_tally(sampler: Sampler, x: Any, n: int, chunk: int = DEFAULT_CHUNK,
               progress: Callable[[int], None] | None = None) -> Counter:
    """A tally of ``n`` outputs of M(x), drawn ``chunk`` at a time (``progress(k)`` after each chunk)."""
    check_int("n", n, lo=0)
    check_int("chunk", chunk, lo=1)
    counts: Counter = Counter()
    remaining = n
    while remaining:
        k = min(chunk, remaining)
        counts.update(tally(_outputs(sampler(x, k), k)))
        remaining -= k
        if progress is not None:
            progress(k)
    return counts


def _draw_chunk(task: tuple) -> Counter:
    """One chunk of an audit: ``k`` outputs of the sampler on ``x``, under the chunk's own seeded source if any."""
    fn, x, k, seed = task
    if seed is None:
        out = fn(x, k)
    else:
        from vetdp.sampling.sources import SeededSource, use_source

        with use_source(SeededSource(seed)):
            out = fn(x, k)
    return tally(_outputs(out, k))


def _outputs(out: Any, k: int) -> Any:
    """``out`` when it is a sequence or array of ``k`` outputs; ValueError saying what the sampler returned
    otherwise (None, a generator, a number, the wrong count)."""
    if not hasattr(out, "__len__") or not hasattr(out, "__getitem__"):
        kind = "a generator or iterator" if hasattr(out, "__next__") else type(out).__name__
        raise ValueError(f"the sampler returned {kind} for n={k}; sampler(x, n) must return a list, tuple or array "
                         "of the n outputs")
    if len(out) != k:
        raise ValueError(f"the sampler returned {len(out)} outputs for n={k}; it must return exactly n")
    return out


def run_audit(sampler: Any, inputs: Sequence[Any], epsilon: float, delta: float = 0.0, samples: int = 100_000,
              beta: float = 0.05, statistics: Callable[[Any, Any], list[Statistic]] | None = None,
              chunk: int = DEFAULT_CHUNK, progress: Callable[[int], None] | None = None,
              seed: int | str | None = None, runner: Any = None) -> AuditResult:
    """Audit a sampler on candidate ``inputs`` (two neighbours, or more to search over pairs).

    ``samples`` outputs are drawn per input: a quarter rank the outputs, a quarter choose
    the pair and the event, the other half bounds the loss. Guarantee: the reported lower bound exceeds the
    true ε (for the chosen pair) with probability at most ``beta``. Randomness comes from
    the sampler (vetdp mechanisms read the current vetdp source); with ``seed``, each chunk of
    ``chunk`` samples reads its own seeded source (:func:`vetdp.distributed.chunk_seed`), so the
    result is reproducible and the same wherever the chunks run. ``runner`` (a
    :class:`vetdp.distributed.TaskRunner`, default serial) says where they run.
    """
    from vetdp.distributed import SerialRunner, chunk_seed

    fn = as_sampler(sampler)
    n = check_int("samples", samples, lo=4)
    check_int("chunk", chunk, lo=1)
    if len(inputs) < 2:
        raise ValueError(f"inputs must hold at least two candidate inputs, got {len(inputs)}")
    n_rank = n // 4
    n_choose = n // 2 - n_rank
    n_test = n - n_rank - n_choose

    def chunks() -> Iterator[tuple[tuple, tuple[int, int]]]:
        for phase, size in enumerate((n_rank, n_choose, n_test)):
            for i, x in enumerate(inputs):
                for j, start in enumerate(range(0, size, chunk)):
                    k = min(chunk, size - start)
                    yield (fn, x, k, None if seed is None else chunk_seed(seed, "audit", phase, i, j)), (phase, i)

    runner = runner or SerialRunner()
    tallies = [[Counter() for _ in inputs] for _ in range(3)]
    pending = chunks()
    # chunks are made and tallied a window at a time, so that memory holds one window, whatever --samples is
    while window := list(itertools.islice(pending, max(WINDOW, 4 * runner.workers))):
        done = iter([task[2] for task, _ in window])
        counts = runner.map(_draw_chunk, [task for task, _ in window],
                            progress=None if progress is None else lambda _, d=done: progress(next(d)))
        for (_, (phase, i)), c in zip(window, counts, strict=True):
            tallies[phase][i].update(c)
    rank, choose, test = tallies
    return audit_tallies(rank, choose, test, list(inputs), n_rank, n_choose, n_test, epsilon, delta, beta,
                         statistics)
