"""Running independent pieces of work serially or on a Dask cluster, with the same results.

:func:`task_runner` gives a :class:`TaskRunner`. ``map(fn, items)`` returns ``fn(item)`` for every item, in the
items' order; ``handles(fn, items)`` returns one handle per item, a call that gives ``fn(item)`` (or raises its
exception), so that a caller can consume results in order while later ones are still computed:

* no option: serially, in this process (the default; Dask is not needed); a handle computes its item when called;
* ``workers=N``: on a local Dask cluster of N worker processes (one thread each), started for the
  block and closed after it;
* ``scheduler="tcp://host:8786"``: on an existing Dask cluster (a multi-machine recipe is in
  docs/dask.md).

The results are identical to the serial run whenever each ``fn(item)`` is a function of its item
alone: callers give every item its own seed (e.g. :func:`chunk_seed`) rather than sharing one
random stream. Dask is the optional extra ``vetdp[dask]``; asking for workers without it raises
an ImportError that says how to install it.

Functions and objects travel to the workers by cloudpickle. Code loaded from a file that the
workers cannot import (``--impl path/to/file.py:ATTR``) is shipped by value.

The time limit. Every verdict comes from work budgets (paths, choices, samples), which hold wherever a task runs.
The one wall-clock limit, the safety net for code that hangs (``--time-limit``: :func:`vetdp.engine.timeout.deadline`),
interrupts code with ``SIGALRM``, which Python delivers to a process's main thread only, and Dask runs tasks in
worker threads. So each Dask worker hands its tasks to a task process of its own (``budgets=True``, the default): a
Python process the worker starts at its first task and reuses, whose main thread runs the task, so that the limit
holds as in a serial run and a clause that hangs comes back as the same "stopped: time" finding. The task process
leaves when its worker does; if it dies during a task (a signal, ``os._exit``, out of memory), that task raises
:class:`TaskProcessDied` and the next task starts a new one. Functions marked :func:`without_budgets` run in the
worker's thread.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

__all__ = ["TaskRunner", "SerialRunner", "DaskRunner", "task_runner", "chunk_seed", "split", "TaskProcessDied",
           "without_budgets", "by_value", "draws_independent_of_loaded_modules"]

def by_value(fn: Callable) -> Callable:
    """Mark the task function ``fn`` to travel to Dask workers by value (its code, not an import of its module):
    for a small task defined in a module that is costly to import (``vetdp.cli.*`` imports every command), so that
    a worker imports only what the task itself uses. Returns ``fn``."""
    fn.vetdp_by_value = True
    return fn


def without_budgets(fn: Callable) -> Callable:
    """Mark ``fn`` as work that arms no time limit (e.g. an audit's sampling chunk): on Dask it then runs in the
    worker's own thread rather than in its task process (which saves that process's start and a copy of each
    result). Returns ``fn``."""
    fn.vetdp_budgets = False
    return fn


class TaskProcessDied(RuntimeError):
    """A task's process ended (killed by a signal, ``os._exit``, out of memory) without returning."""


class TaskRunner:
    """Maps a function over items; subclasses decide where the calls run."""

    description = "serial"
    workers = 1  # how many calls can run at once (for callers that split work into pieces)

    def map(self, fn: Callable[[Any], Any], items: Iterable[Any],
            progress: Callable[[int], None] | None = None) -> list[Any]:
        """``[fn(item) for item in items]``, computed where this runner computes; ``progress(1)`` per item done."""
        raise NotImplementedError

    def handles(self, fn: Callable[[Any], Any], items: Iterable[Any]) -> list[Callable[[], Any]]:
        """One call per item returning ``fn(item)`` (or raising what it raised); every item is started at once
        where the runner can run them concurrently."""
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

    def handles(self, fn: Callable[[Any], Any], items: Iterable[Any]) -> list[Callable[[], Any]]:
        """Lazy handles: the first call of a handle computes its item (in this process, when the caller asks)."""
        def lazy(item: Any) -> Callable[[], Any]:
            cell: list = []

            def get() -> Any:
                if not cell:
                    cell.append(fn(item))
                return cell[0]
            return get
        return [lazy(item) for item in items]


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
    """Calls spread over a Dask cluster; results gathered in the items' order.

    ``budgets``: run each call in its worker's task process, so that the SIGALRM time limit holds (see the module
    docstring); False runs calls in the worker's thread (for work without a time limit)."""

    def __init__(self, client: Any, budgets: bool = True):
        self.client = client
        self.budgets = budgets
        info = client.scheduler_info()
        self.workers = max(1, sum(w.get("nthreads", 1) for w in info.get("workers", {}).values()))
        self.description = (f"Dask, {len(info.get('workers', {}))} workers at {info.get('address', '?')}"
                            + ("" if self.budgets else ", time limit not enforced"))

    def _submit(self, fn: Callable[[Any], Any], items: Iterable[Any]) -> list[Any]:
        import cloudpickle

        _ship_user_modules()
        module = sys.modules.get(getattr(fn, "__module__", None) or "")
        by_value = getattr(fn, "vetdp_by_value", False) and module is not None and module.__name__ not in _SHIPPED
        if by_value:
            cloudpickle.register_pickle_by_value(module)
        try:
            # pickled here by cloudpickle: Dask would try plain pickle first, which sends user functions by reference
            payloads = [cloudpickle.dumps((fn, item)) for item in items]
        finally:
            if by_value:
                cloudpickle.unregister_pickle_by_value(module)
        isolated = self.budgets and getattr(fn, "vetdp_budgets", True)
        return self.client.map(_call_pickled, payloads, [isolated] * len(payloads), pure=False)

    def map(self, fn: Callable[[Any], Any], items: Iterable[Any],
            progress: Callable[[int], None] | None = None) -> list[Any]:
        from distributed import as_completed

        futures = self._submit(fn, items)
        for _ in as_completed(futures):
            if progress is not None:
                progress(1)
        return self.client.gather(futures)

    def handles(self, fn: Callable[[Any], Any], items: Iterable[Any]) -> list[Callable[[], Any]]:
        return [f.result for f in self._submit(fn, items)]


def _call_pickled(payload: bytes, isolated: bool = False) -> Any:
    """On a worker: ``fn(item)`` for the pickled pair; ``isolated``: in the worker's task process (see
    :class:`_TaskProcess`), whose main thread runs it, so that the time limit holds."""
    import pickle

    if isolated and threading.current_thread() is not threading.main_thread():
        return _call_isolated(payload)
    fn, item = pickle.loads(payload)
    return fn(item)


_IDLE: list[_TaskProcess] = []  # on a worker: task processes waiting for a task (one per worker thread at most)
_IDLE_LOCK = threading.Lock()


class _TaskProcess:
    """A Python process started by a worker (by ``subprocess``, as a worker's multiprocessing children would be
    refused) that runs the tasks it is sent in its main thread, one at a time, and stays for the next one, so that
    what a task imports stays imported. Tasks and outcomes travel as length-prefixed pickles over two pipes; its
    standard output and error are the worker's."""

    def __init__(self) -> None:
        import subprocess

        to_child, from_parent = os.pipe()[::-1]
        from_child, to_parent = os.pipe()
        boot = (f"import sys; sys.path[:] = {[p for p in sys.path]!r}; from vetdp.distributed import _serve; "
                f"_serve({from_parent}, {to_parent}, {os.getpid()})")
        try:
            self.process = subprocess.Popen([sys.executable, "-c", boot], pass_fds=(from_parent, to_parent),
                                            stdin=subprocess.DEVNULL, start_new_session=True)
        finally:
            os.close(from_parent)
            os.close(to_parent)
        self.send, self.receive = os.fdopen(to_child, "wb"), os.fdopen(from_child, "rb")

    def call(self, payload: bytes) -> bytes | None:
        """The pickled outcome of the pickled task; None when the process ended without answering."""
        try:
            self.send.write(len(payload).to_bytes(8, "big") + payload)
            self.send.flush()
        except (BrokenPipeError, OSError):
            return None
        head = self.receive.read(8)
        if len(head) < 8:
            return None
        data = self.receive.read(int.from_bytes(head, "big"))
        return data if len(data) == int.from_bytes(head, "big") else None

    def close(self) -> None:
        for f in (self.send, self.receive):
            with contextlib.suppress(OSError):
                f.close()
        with contextlib.suppress(OSError):
            self.process.kill()
        with contextlib.suppress(OSError, ValueError):
            self.process.wait(5)


_IDLE_CLOSED: list[bool] = []  # whether _close_idle is registered to run at the worker's exit


def _close_idle() -> None:
    """At a worker's exit: end its idle task processes and reap them."""
    with _IDLE_LOCK:
        procs = list(_IDLE)
        _IDLE.clear()
    for proc in procs:
        proc.close()


def _serve(read_fd: int, write_fd: int, parent: int) -> None:
    """The task process's loop (its main thread): run each task received, send back its outcome; return at the end
    of input. A watcher ends the process when its worker is gone, even in the middle of a task."""
    _watch_parent(parent)
    receive, send = os.fdopen(read_fd, "rb"), os.fdopen(write_fd, "wb")
    while len(head := receive.read(8)) == 8:
        data = _run_payload(receive.read(int.from_bytes(head, "big")))
        send.write(len(data).to_bytes(8, "big") + data)
        send.flush()


def _watch_parent(parent: int) -> None:
    """Exit this process as soon as the process ``parent`` that started it is gone (checked every second)."""
    def watch() -> None:
        from vetdp.fence import real_exit  # os._exit itself, even while a fence guards it against the user's code

        while os.getppid() == parent:
            time.sleep(1.0)
        real_exit(1)

    threading.Thread(target=watch, name="vetdp-watch-parent", daemon=True).start()


def _call_isolated(payload: bytes) -> Any:
    """``fn(item)`` for the pickled pair, run in one of this worker's task processes; its result or exception comes
    back. Raises :class:`TaskProcessDied` when the task process ends without answering (it is not reused)."""
    import pickle

    with _IDLE_LOCK:
        proc = _IDLE.pop() if _IDLE else None
        if proc is None and not _IDLE_CLOSED:
            import atexit

            atexit.register(_close_idle)
            _IDLE_CLOSED.append(True)
    if proc is None:
        proc = _TaskProcess()
    data = proc.call(payload)
    if data is None:
        proc.close()
        code = proc.process.returncode
        how = (f"was killed by signal {-code}" if code is not None and code < 0
               else f"exited with status {code}" if code is not None else "closed its pipe")
        raise TaskProcessDied(f"the task's process {how} (os._exit, a crash, out of memory?) without returning a "
                              "result")
    with _IDLE_LOCK:
        _IDLE.append(proc)
    ok, value = pickle.loads(data)
    if ok:
        return value
    raise value


def _run_payload(payload: bytes) -> bytes:
    """In a task process: the pickled outcome ``(True, fn(item))`` or ``(False, exception)``; never raises, so that
    nothing the code under test does (``sys.exit``, a budget's exception) ends the process."""
    import pickle

    import cloudpickle

    try:
        fn, item = pickle.loads(payload)
        outcome: tuple[bool, Any] = (True, fn(item))
    except BaseException as e:  # noqa: BLE001 - every outcome goes back to the caller, as a serial run raises it
        outcome = (False, e)
    try:
        return cloudpickle.dumps(outcome)
    except Exception as e:  # noqa: BLE001
        what = "result" if outcome[0] else f"exception {type(outcome[1]).__name__}: {outcome[1]}"
        return cloudpickle.dumps((False, RuntimeError(f"the task's {what} cannot be pickled: {type(e).__name__}: "
                                                      f"{e}")))


def _dask() -> Any:
    try:
        import distributed
    except ImportError:
        raise ImportError("running on Dask needs the optional extra: pip install 'vetdp[dask]' "
                          "(dask and distributed)") from None
    return distributed


@contextlib.contextmanager
def task_runner(workers: int | None = None, scheduler: str | None = None,
                budgets: bool = True) -> Iterator[TaskRunner]:
    """A runner for the block: serial (default), a local Dask cluster of ``workers`` processes, or ``scheduler``.

    ``budgets`` (Dask only): tasks run in each worker's task process so that the time limit holds (see the module
    docstring). Raises ValueError for ``workers < 1``, for both options at once, or for a scheduler that cannot be
    reached; ImportError without Dask.
    """
    if workers is not None and scheduler is not None:
        raise ValueError("give workers or scheduler, not both")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise ValueError(f"workers={workers!r} must be an int in [1, inf)")
    if workers is None and scheduler is None:
        yield SerialRunner()
        return
    distributed = _dask()
    import dask

    # connecting and starting workers are bounded by Dask's wall-clock time-outs, which a loaded runner can run past
    # while nothing is wrong: generous ones, so that a busy machine does not turn into "cannot connect"
    with dask.config.set({"distributed.comm.timeouts.connect": CONNECT_TIMEOUT}):
        if scheduler is not None:
            try:
                client = distributed.Client(scheduler, timeout=CONNECT_TIMEOUT)
            except OSError as e:
                raise ValueError(f"scheduler={scheduler!r}: cannot connect: {e}") from None
            with client:
                yield DaskRunner(client, budgets)
            return
        with distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0",
                                      silence_logs=40) as cluster, distributed.Client(cluster) as client:
            yield DaskRunner(client, budgets)


CONNECT_TIMEOUT = "120s"  # Dask's time-out for connecting to a scheduler or a worker (a safety net, not a verdict)


def chunk_seed(seed: int | str, *path: Any) -> str:
    """The seed of one piece of a seeded run: the same piece gets the same seed wherever it runs."""
    return "/".join(str(p) for p in (seed, *path))


@contextlib.contextmanager
def draws_independent_of_loaded_modules() -> Iterator[None]:
    """Within the block, Hypothesis draws the same examples for the same seed in any process.

    Hypothesis (6.13x and later) mixes into its draws literal constants mined from the source of every "local" module
    currently imported (with an editable install, vetdp's own modules are local), so a seeded draw depends on which
    modules happen to be loaded: a check run in a Dask task process would draw other parameter sets than the same
    check in the ``vetdp`` process. Here the mined pool is empty (Hypothesis's built-in constants stay), and its
    cache is cleared on entry and exit. If Hypothesis's internals differ from what this expects, nothing is changed.
    """
    try:
        from hypothesis.internal.conjecture import providers
        from hypothesis.internal.constants_ast import Constants
    except ImportError:  # pragma: no cover - another Hypothesis layout: leave it alone
        yield
        return
    cache = getattr(getattr(providers, "CONSTANTS_CACHE", None), "cache", None)
    original = getattr(providers, "_get_local_constants", None)
    if original is None or cache is None or not hasattr(cache, "clear"):  # pragma: no cover
        yield
        return
    with _HYPOTHESIS_LOCK:
        cache.clear()
        providers._get_local_constants = Constants
        try:
            yield
        finally:
            providers._get_local_constants = original
            cache.clear()


_HYPOTHESIS_LOCK = threading.RLock()


def split(items: list[Any], pieces: int) -> list[list[Any]]:
    """``items`` cut into at most ``pieces`` consecutive, non-empty runs of near-equal length (concatenated, they
    are ``items``). Raises ValueError for ``pieces < 1``."""
    if isinstance(pieces, bool) or not isinstance(pieces, int) or pieces < 1:
        raise ValueError(f"pieces={pieces!r} must be an int in [1, inf)")
    n = min(pieces, len(items))
    if n == 0:
        return []
    size, extra = divmod(len(items), n)
    out, start = [], 0
    for i in range(n):
        end = start + size + (i < extra)
        out.append(items[start:end])
        start = end
    return out
