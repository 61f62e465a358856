"""The wall-clock safety limit for code under test: a block that runs too long is interrupted, never left to hang.

Verdicts are decided by work budgets (:mod:`vetdp.engine.budgets`); this limit only stops code that hangs without
drawing randomness, which no work budget can bound. Whoever arms it reports its firing as *stopped* (no verdict,
exit 2), never as a pass, a failure or "undecided".

:func:`deadline` arms ``SIGALRM`` (main thread only) and raises :class:`DeadlineExceeded` inside
the running code when the limit is reached. The exception derives from ``BaseException`` so that
the code under test's ``except Exception`` does not swallow it, and the alarm re-fires every
``REFIRE`` seconds until the block is left, so a bare ``except:`` only delays it. Deadlines nest:
each block is interrupted by its own limit or by an enclosing one, and the exception names
which (``exc.budget is token``).
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from collections.abc import Iterator

__all__ = ["DeadlineExceeded", "Budget", "deadline"]

REFIRE = 0.25  # seconds between repeated alarms once a limit is reached


class Budget:
    """One armed time limit (the token a :class:`DeadlineExceeded` names)."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        self.end = time.monotonic() + seconds

    def __repr__(self) -> str:
        return f"Budget({self.seconds:g} s)"


class DeadlineExceeded(BaseException):
    """The time limit ``budget`` was reached inside a :func:`deadline` block."""

    def __init__(self, budget: Budget):
        super().__init__(f"time limit of {budget.seconds:g} s exceeded")
        self.budget = budget


_active: list[Budget] = []


def _on_alarm(signum, frame) -> None:  # noqa: ARG001 - signal handler signature
    now = time.monotonic()
    expired = [b for b in _active if b.end <= now]
    if expired:
        raise DeadlineExceeded(expired[0])  # the outermost expired limit
    _arm()


def _arm() -> None:
    if not _active:
        signal.setitimer(signal.ITIMER_REAL, 0)
        return
    remaining = max(min(b.end for b in _active) - time.monotonic(), 1e-3)
    signal.setitimer(signal.ITIMER_REAL, remaining, REFIRE)


@contextlib.contextmanager
def deadline(seconds: float | None) -> Iterator[Budget | None]:
    """Interrupt the block with :class:`DeadlineExceeded` after ``seconds`` (None: no limit).

    Only the main thread can be interrupted; elsewhere the block runs unbounded (yields None).
    """
    if seconds is None or threading.current_thread() is not threading.main_thread():
        yield None
        return
    if not seconds > 0:
        raise ValueError(f"seconds={seconds!r} must be in (0, inf)")
    budget = Budget(seconds)
    outermost = not _active
    previous = signal.getsignal(signal.SIGALRM) if outermost else None
    if outermost:
        signal.signal(signal.SIGALRM, _on_alarm)
    _active.append(budget)
    try:
        _arm()
        yield budget
    finally:
        while True:  # an alarm handled during the clean-up (it re-fires) must not cut it short: retry until done
            try:
                _leave(budget, outermost, previous)
                break
            except DeadlineExceeded:
                continue


def _leave(budget: Budget, outermost: bool, previous: object) -> None:
    """Remove ``budget``; the outermost block also stops the timer and restores the previous handler. Idempotent, so
    that it can be retried: a timer left armed past its block would fire at the default action (end the process
    with SIGALRM, e.g. while the interpreter exits)."""
    if outermost:
        signal.setitimer(signal.ITIMER_REAL, 0)
    if budget in _active:
        _active.remove(budget)
    if outermost:
        signal.signal(signal.SIGALRM, previous)
    else:
        _arm()
