"""How far long work has got, shown on standard error: a bar on a terminal, a line per step in a log.

Library code announces its steps; whoever runs it (the command line) decides whether and how they are shown::

    from vetdp import progress

    for i, p in enumerate(candidates):                          # library code
        progress.step("parameter set", i + 1, len(candidates), params_json(p))   # item i + 1 is starting
        progress.note("audit.distribution")                     # finer detail: the bar only, never a log line

    with progress.shown("vetdp verify randomized_response --impl opendp"):   # a command
        ...

With nothing shown (the default: the API, tests, Dask workers) every call is a no-op. Inside :func:`shown`:

* standard error is a terminal: a transient rich bar, one row per kind of step (``stage``, ``parameter set``, …),
  with the current item and note;
* otherwise (a pipe, a file, a CI log): one line per step, flushed at once, e.g.
  ``vetdp vet accountant dp_accounting: questions 3/302 rr(ε=0.001)×10 ε@δ=1e-06 (12 s)``.

Guarantee: progress only writes to standard error (or the stream given) and reads nothing back; a run's results
and its standard output are the same with and without it.
"""

from __future__ import annotations

import contextlib
import contextvars
import sys
import time
from collections.abc import Iterator
from typing import Any, TextIO

__all__ = ["step", "note", "shown", "LINE_WIDTH"]

LINE_WIDTH = 200  # a log line is cut to this many characters

_ACTIVE: contextvars.ContextVar[Any] = contextvars.ContextVar("vetdp_progress", default=None)


def step(name: str, index: int, total: int | None = None, label: str = "") -> None:
    """Item ``index`` (from 1) of ``total`` (None: unknown) of the work called ``name`` is starting; ``label`` says
    which. A no-op unless shown."""
    view = _ACTIVE.get()
    if view is not None:
        view.step(name, index, total, label)


def note(text: str) -> None:
    """A detail of the latest step, shown on a terminal's bar only, never as a log line. A no-op unless shown."""
    view = _ACTIVE.get()
    if view is not None:
        view.note(text)


class _Lines:
    """A log's view: one line per step, ``<title>: <name> <index>/<total> <label> (<seconds> s)``; ``kinds``: only
    steps of these names (None: every step)."""

    def __init__(self, title: str, stream: TextIO, kinds: tuple[str, ...] | None = None):
        self.title, self.stream, self.t0, self.kinds = title, stream, time.monotonic(), kinds

    def note(self, text: str) -> None:
        pass

    def step(self, name: str, index: int, total: int | None, label: str) -> None:
        if self.kinds is not None and name not in self.kinds:
            return
        count = f"{index}/{total}" if total is not None else str(index)
        line = " ".join(part for part in (f"{self.title}:", name, count, label) if part)
        line = line if len(line) <= LINE_WIDTH else line[:LINE_WIDTH - 1] + "…"
        self.stream.write(f"{line} ({time.monotonic() - self.t0:.0f} s)\n")
        self.stream.flush()


class _Bar:
    """A terminal's view: a transient rich bar with one row per kind of step."""

    def __init__(self, console: Any):
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        self.bar = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                            TimeElapsedColumn(), console=console, transient=True)
        self.rows: dict[str, Any] = {}
        self.latest: tuple[str, str] | None = None  # (name, label) of the latest step, for notes

    def __enter__(self) -> _Bar:
        self.bar.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.bar.stop()

    def _describe(self, name: str, text: str) -> None:
        from rich.markup import escape

        self.bar.update(self.rows[name], description=escape(f"{name} {text}"[:100]))

    def step(self, name: str, index: int, total: int | None, label: str) -> None:
        if name not in self.rows:
            self.rows[name] = self.bar.add_task(name, total=total)
        self.bar.update(self.rows[name], total=total, completed=index - 1)
        self._describe(name, label)
        self.latest = (name, label)

    def note(self, text: str) -> None:
        if self.latest is not None:
            name, label = self.latest
            self._describe(name, f"{label}: {text}" if label else text)


@contextlib.contextmanager
def shown(title: str, stream: TextIO | None = None, terminal: bool | None = None,
          lines: bool | tuple[str, ...] = True) -> Iterator[None]:
    """Show the steps of the work done in the block, titled ``title``, on ``stream`` (default: standard error).

    ``terminal`` (default: whether ``stream`` is a terminal) chooses the bar over the lines; ``lines=False`` shows
    nothing where there is no terminal, a tuple of step names a line for those steps only (the bar shows all)."""
    out = stream if stream is not None else sys.stderr
    if terminal is None:
        terminal = bool(getattr(out, "isatty", lambda: False)())
    if not terminal and not lines:
        yield
        return
    if terminal:
        from rich.console import Console

        with _Bar(Console(file=out, force_terminal=True)) as view:
            token = _ACTIVE.set(view)
            try:
                yield
            finally:
                _ACTIVE.reset(token)
        return
    token = _ACTIVE.set(_Lines(title, out, lines if isinstance(lines, tuple) else None))
    try:
        yield
    finally:
        _ACTIVE.reset(token)
