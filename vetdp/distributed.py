"""Running independent pieces of work serially or on a Dask cluster, with the same results.

:func:`task_runner` gives a :class:`TaskRunner` whose ``map(fn, items)`` returns ``fn(item)`` for
every item, in the items' order:

* no option: serially, in this process (the default; Dask is not needed);
* ``workers=N``: on a local Dask cluster of N worker processes (one thread each), started for the
  block and closed after it;
* ``scheduler="tcp://host:8786"``: on an existing Dask cluster (a multi-machine recipe is in
  docs/dask.md).

The results are identical to the serial run whenever each ``fn(item)`` is a function of its item
alone: callers give every item its own seed (e.g. :func:`chunk_seed`) rather than sharing one
random stream. Dask is the optional extra ``vetdp[dask]``; asking for workers without it raises
an ImportError that says how to install it.

Functions and objects travel to the workers by cloudpickle. Code loaded from a file that the
workers cannot import (``--impl path/to/file.py:ATTR``) is shipped by value. Time budgets that
rely on ``SIGALRM`` apply only in a process's main thread; on Dask workers the enumeration's own
clock still stops long enumerations at each random choice.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Any

__all__ = ["TaskRunner", "SerialRunner", "DaskRunner", "task_runner", "chunk_seed"]


class TaskRunner:
    """Maps a function over items; subclasses decide where the calls run."""

    description = "serial"

    def map(self, fn: Callable[[Any], Any], items: Iterable[Any],
            progress: Callable[[int], None] | None = None) -> list[Any]:
        raise NotImplementedError


class SerialRunner(TaskRunner):
    """Every call in this process, in order."""

    def map(self, fn: Callable[[Any], Any], items: Iterable[Any],
            progress: Callable[[int], None] | None = None) -> list[Any]:
        out = []
        for item in items:
            out.append(fn(item))
            if progress is not None:
                progress(1)
        return out


def _ship_user_modules() -> None:
    """Register with cloudpickle, by value, every loaded module that is not vetdp's nor installed.

    Workers (possibly on other machines) can import installed packages and vetdp, but not a
    user's file loaded by path, nor a module found through this process's working directory.
    """
    import cloudpickle

    installed = {os.path.realpath(p) + os.sep for p in {sys.prefix, sys.base_prefix, sys.exec_prefix}}
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if (not file or name == "__main__" or name.split(".")[0] == "vetdp" or name in _SHIPPED
                or any(os.path.realpath(file).startswith(root) for root in installed)):
            continue
        try:
            cloudpickle.register_pickle_by_value(module)
        except (ValueError, TypeError):
            continue
        _SHIPPED.add(name)


_SHIPPED: set[str] = set()


class DaskRunner(TaskRunner):
    """Calls spread over a Dask cluster; results gathered in the items' order."""

    def __init__(self, client: Any):
        self.client = client
        info = client.scheduler_info()
        self.description = f"Dask, {len(info.get('workers', {}))} workers at {info.get('address', '?')}"

    def map(self, fn: Callable[[Any], Any], items: Iterable[Any],
            progress: Callable[[int], None] | None = None) -> list[Any]:
        import cloudpickle
        from distributed import as_completed

        _ship_user_modules()
        # pickled here by cloudpickle: Dask would try plain pickle first, which sends user functions by reference
        payloads = [cloudpickle.dumps((fn, item)) for item in items]
        futures = self.client.map(_call_pickled, payloads, pure=False)
        for _ in as_completed(futures):
            if progress is not None:
                progress(1)
        return self.client.gather(futures)


def _call_pickled(payload: bytes) -> Any:
    """On a worker: ``fn(item)`` for the pickled pair."""
    import pickle

    fn, item = pickle.loads(payload)
    return fn(item)


def _dask() -> Any:
    try:
        import distributed
    except ImportError:
        raise ImportError("running on Dask needs the optional extra: pip install 'vetdp[dask]' "
                          "(dask and distributed)") from None
    return distributed


@contextlib.contextmanager
def task_runner(workers: int | None = None, scheduler: str | None = None) -> Iterator[TaskRunner]:
    """A runner for the block: serial (default), a local Dask cluster of ``workers`` processes, or ``scheduler``.

    Raises ValueError for ``workers < 1`` or for both options at once, ImportError without Dask.
    """
    if workers is not None and scheduler is not None:
        raise ValueError("give workers or scheduler, not both")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise ValueError(f"workers={workers!r} must be an int in [1, inf)")
    if workers is None and scheduler is None:
        yield SerialRunner()
        return
    distributed = _dask()
    if scheduler is not None:
        try:
            client = distributed.Client(scheduler, timeout="10s")
        except OSError as e:
            raise ValueError(f"scheduler={scheduler!r}: cannot connect: {e}") from None
        with client:
            yield DaskRunner(client)
        return
    with distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0",
                                  silence_logs=40) as cluster, distributed.Client(cluster) as client:
        yield DaskRunner(client)


def chunk_seed(seed: int | str, *path: Any) -> str:
    """The seed of one piece of a seeded run: the same piece gets the same seed wherever it runs."""
    return "/".join(str(p) for p in (seed, *path))
