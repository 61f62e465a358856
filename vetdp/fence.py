"""Code the user names runs fenced: whatever it does becomes an error that names it, never vetdp's own exit.

Every module and object a user names — spec modules, ``register`` modules and providers of ``[tool.vetdp]``,
``--impl``, ``--adapter``, ``--variance``, audit samplers, ``buffling vet`` functions, accountants — is imported
with :func:`import_module` or :func:`load`, and called where its failures are contained (:func:`fenced`,
:func:`call`, :func:`outcome`). What the code does there becomes a :class:`UserCodeError`, whose one-line message
names the code and what it did; at import or set-up the command prints it and exits 2. Where a call of the code
under test is what is being checked (a constructor, a ratio function, an accountant's answer), its failure is that
check's finding, as an exception would be (the command's own exit rules; exit 1 only for a finding about a mechanism
or an accountant), except a hang: *stopped*, exit 2. What is turned into a result:

* ``sys.exit(n)`` (any n, 0 too) and ``raise SystemExit``;
* ``os._exit(n)``: while a :func:`guarded` scope is active (the whole of every ``vetdp`` command, and every fenced
  block), ``os._exit`` raises :class:`OsExitCalled`, a ``SystemExit``, in the process that installed the guard (a
  forked child exits for real);
* ``KeyboardInterrupt`` raised by the code itself (a real Ctrl-C, seen by the guard's SIGINT handler, still stops
  the command, exit 2);
* any other exception, a syntax error, a recursion or memory error;
* a hang: the fenced block runs under the wall-clock safety limit (``--time-limit`` of the command, else
  :data:`vetdp.engine.budgets.DEFAULT_TIME_LIMIT`; an import at least :data:`IMPORT_FLOOR` seconds); when it fires
  the error is *stopped* (no verdict, exit 2);
* output: the code's ``print`` goes to standard error, so that a report written to standard output stays valid.

Why in this process and not in a probe subprocess: the engine enumerates the user's function under vetdp's
randomness source, calling it up to millions of times, and compares the objects it returns; that cannot cross a
process boundary per call, and importing a module twice (once in a probe) runs its side effects twice. So the fence
uses what Python offers in process. What it cannot contain is a crash of the interpreter itself (a segmentation
fault in compiled code, the kernel's out-of-memory kill): the process then ends by that signal, a non-zero status,
never exit 0.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

__all__ = ["UserCodeError", "OsExitCalled", "guarded", "fenced", "import_module", "import_file", "load", "call",
           "Fenced", "outcome", "exit_text", "describe", "time_limit", "set_time_limit", "real_exit", "interrupted",
           "MESSAGE_WIDTH", "IMPORT_FLOOR"]

MESSAGE_WIDTH = 400  # a message taken from user code is cut to this many characters (one line)
# an import is bounded by the larger of the command's --time-limit and this: a per-clause limit chosen small for the
# code's calls must not stop a module that imports a large library on a loaded machine
IMPORT_FLOOR = 60.0
real_exit = os._exit  # vetdp's own use (a task process whose parent is gone) bypasses the guard


class UserCodeError(Exception):
    """Code the user named failed where vetdp imported or called it: ``what`` names the code, ``did`` what it did
    (one line each); ``stopped`` when the wall-clock safety limit ended it (no verdict)."""

    def __init__(self, what: str, did: str, *, stopped: bool = False):
        self.what, self.did, self.stopped = what, did, stopped
        super().__init__(f"stopped: time — {what} {did}" if stopped else f"{what} {did}")


class OsExitCalled(SystemExit):
    """``os._exit(code)`` called by code under a :func:`guarded` scope (raised instead of ending the process)."""


def _one_line(text: str) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= MESSAGE_WIDTH else text[:MESSAGE_WIDTH - 1] + "…"


def exit_text(e: SystemExit) -> str:
    """``called sys.exit(3)`` or ``called os._exit(0)``: what the code did."""
    return f"called {'os._exit' if isinstance(e, OsExitCalled) else 'sys.exit'}({e.code!r})"


def describe(e: BaseException) -> str:
    """What raising ``e`` means, in one line: ``called sys.exit(0)``, ``has a syntax error: ...``, ``raised T: m``."""
    if isinstance(e, SystemExit):
        return exit_text(e)
    if isinstance(e, SyntaxError):
        return _one_line(f"has a syntax error: {e}")
    if isinstance(e, MemoryError):
        return _one_line(f"ran out of memory (MemoryError{': ' + str(e) if str(e) else ''})")
    return _one_line(f"raised {type(e).__name__}" + (f": {e}" if str(e) else ""))


# ------------------------------------------------------------------ the process guard

_GUARD: dict[str, Any] = {"depth": 0, "pid": None, "sigint": False, "handler": None}
_LIMIT: list[float | None] = []  # the safety limit of fenced blocks (innermost last; empty: the default)


def _guarded_exit(code: int = 0) -> None:
    if os.getpid() != _GUARD["pid"]:
        real_exit(code)
    raise OsExitCalled(code)


def _on_sigint(signum: int, frame: Any) -> None:  # noqa: ARG001 - signal handler signature
    _GUARD["sigint"] = True
    raise KeyboardInterrupt


def interrupted() -> bool:
    """Whether a real SIGINT (Ctrl-C) arrived in the current :func:`guarded` scope."""
    return bool(_GUARD["sigint"])


@contextlib.contextmanager
def guarded() -> Iterator[None]:
    """For the block (nestable): ``os._exit`` raises :class:`OsExitCalled` in this process, and a real Ctrl-C is
    told apart from a ``KeyboardInterrupt`` raised by code (:func:`interrupted`). The outermost scope also resets
    the safety limit of fenced blocks to the default."""
    outermost = _GUARD["depth"] == 0
    if outermost:
        _GUARD.update(pid=os.getpid(), sigint=False, handler=None)
        os._exit = _guarded_exit
        main = threading.current_thread() is threading.main_thread()
        if main and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            _GUARD["handler"] = signal.signal(signal.SIGINT, _on_sigint)
        _LIMIT.clear()
    _GUARD["depth"] += 1
    try:
        yield
    finally:
        _GUARD["depth"] -= 1
        if outermost:
            os._exit = real_exit
            if _GUARD["handler"] is not None and signal.getsignal(signal.SIGINT) is _on_sigint:
                signal.signal(signal.SIGINT, _GUARD["handler"])
            _LIMIT.clear()


def _import_limit() -> float:
    return max(time_limit(), IMPORT_FLOOR)


def time_limit() -> float:
    """The wall-clock safety limit of a fenced block: the command's ``--time-limit``, else the default."""
    from vetdp.engine.budgets import DEFAULT_TIME_LIMIT

    return _LIMIT[-1] if _LIMIT and _LIMIT[-1] is not None else DEFAULT_TIME_LIMIT


def set_time_limit(seconds: float | None) -> None:
    """Set the safety limit of fenced blocks for the rest of the current :func:`guarded` scope (a command's
    ``--time-limit``)."""
    _LIMIT.append(seconds)


# ------------------------------------------------------------------ fenced blocks

@contextlib.contextmanager
def fenced(what: str, doing: str = "", seconds: float | None = None, *, exceptions: bool = True) -> Iterator[None]:
    """Run the block as code the user named: what it does (module docstring) becomes a :class:`UserCodeError`
    ``"<what> <doing> <did>"``; ``seconds`` (default :func:`time_limit`) bounds it. ``exceptions=False``: an
    ``Exception`` passes unchanged (the caller reports it as the code's outcome); only ``sys.exit``, ``os._exit``, a
    ``KeyboardInterrupt`` the code raised and the time limit are turned into :class:`UserCodeError`."""
    from vetdp.engine.timeout import DeadlineExceeded, deadline

    limit = time_limit() if seconds is None else seconds
    prefix = f"{doing} " if doing else ""
    with guarded():
        try:
            with deadline(limit) as budget, contextlib.redirect_stdout(sys.stderr):
                yield
        except UserCodeError:
            raise
        except DeadlineExceeded as e:
            if budget is None or e.budget is not budget:
                raise  # an enclosing limit: its owner reports it
            why = "--time-limit" if seconds is None or seconds <= time_limit() else \
                f"--time-limit, and at least {IMPORT_FLOOR:g} s for an import"
            raise UserCodeError(what, f"{prefix}ran past the time limit of {limit:g} s ({why}); no verdict",
                                stopped=True) from None
        except KeyboardInterrupt:
            if interrupted():
                raise
            raise UserCodeError(what, f"{prefix}raised KeyboardInterrupt") from None
        except Exception as e:
            if not exceptions:
                raise
            raise UserCodeError(what, prefix + describe(e)) from None
        except BaseException as e:  # noqa: BLE001 - SystemExit, os._exit, a BaseException of the code's own
            raise UserCodeError(what, prefix + describe(e)) from None


def call(what: str, fn: Callable, *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)`` in a :func:`fenced` block: its result, or :class:`UserCodeError`."""
    with fenced(what):
        return fn(*args, **kwargs)


class Fenced:
    """``fn`` as a picklable callable whose every call runs in :func:`fenced` (``what``, ``seconds``): its result, or
    :class:`UserCodeError` (for code called a few times, e.g. an audit's sampler once per chunk of samples)."""

    def __init__(self, fn: Callable, what: str, seconds: float | None = None):
        self.fn, self.what, self.seconds = fn, what, seconds

    def __call__(self, *args: Any) -> Any:
        with fenced(self.what, seconds=self.seconds):
            return self.fn(*args)


def outcome(fn: Callable, *args: Any) -> tuple[Any, str | None]:
    """``(fn(*args), None)``, or ``(None, what it did instead)`` in one line: ``raised ValueError: ...``, ``called
    sys.exit(0)``, ``called os._exit(0)`` (under :func:`guarded`), ``raised KeyboardInterrupt``. For a caller that
    reports each call's failure as a finding and calls often (no time limit of its own: the caller's block has
    one). vetdp's own BaseExceptions (a time limit, an enumeration's cut) and a real Ctrl-C pass."""
    try:
        return fn(*args), None
    except Exception as e:  # noqa: BLE001 - the code's failure is the outcome
        return None, describe(e)
    except SystemExit as e:
        return None, exit_text(e)
    except KeyboardInterrupt:
        if interrupted():
            raise
        return None, "raised KeyboardInterrupt"


# ------------------------------------------------------------------ imports

def _not_found(e: ImportError, name: str) -> bool:
    """Whether ``e`` says that ``name`` itself (or a package above it) does not exist, rather than that code in it
    failed to import something."""
    missing = getattr(e, "name", None)
    return isinstance(e, ModuleNotFoundError) and missing is not None and (
        name == missing or name.startswith(missing + "."))


def import_module(name: str, what: str) -> Any:
    """The module ``name`` imported in a :func:`fenced` block. Raises ModuleNotFoundError (unchanged) when the module
    does not exist, :class:`UserCodeError` ``"<what> importing 'name' <did>"`` when its code fails."""
    if name in sys.modules:
        return sys.modules[name]
    missing: ModuleNotFoundError | None = None
    with fenced(what, f"importing {name!r}", _import_limit()):
        try:
            return importlib.import_module(name)
        except ModuleNotFoundError as e:
            if not _not_found(e, name):
                raise
            missing = e
    raise missing


def import_file(path: Path, what: str) -> Any:
    """The Python source file ``path`` imported as a module named after its stem, in a :func:`fenced` block.
    ValueError when it is not a Python source file."""
    if path.suffix != ".py":
        raise ValueError(f"{str(path)!r} is not a Python source file (*.py)")
    spec = importlib.util.spec_from_file_location(path.stem, path)
    if spec is None or spec.loader is None:
        raise ValueError(f"{str(path)!r} cannot be loaded as a Python module")
    module = importlib.util.module_from_spec(spec)
    previous = sys.modules.get(path.stem)
    sys.modules[path.stem] = module
    try:
        with fenced(what, f"importing {str(path)!r}", _import_limit()):
            spec.loader.exec_module(module)
    except BaseException:
        if previous is None:
            sys.modules.pop(path.stem, None)
        else:
            sys.modules[path.stem] = previous
        raise
    return module


def load(ref: str, what: str) -> Any:
    """The object ``ref`` names: ``MODULE:ATTR`` (importable from the working directory too) or
    ``path/to/file.py:ATTR``, ``ATTR`` possibly dotted. ValueError (naming the rule, to be reported with the option)
    when ``ref`` is malformed, the module or file is missing or lacks the attribute; :class:`UserCodeError` when the
    module's code fails at import."""
    target, sep, attr = ref.rpartition(":")
    if not sep or not target.strip() or not attr.strip():
        raise ValueError("must look like MODULE:ATTR or path/to/file.py:ATTR")
    if target.endswith(".py") or "/" in target or os.sep in target or Path(target).is_file():
        path = Path(target)
        if not path.is_file():
            raise ValueError(f"no file {target!r}")
        module = import_file(path, what)
    else:
        if not all(part.isidentifier() for part in target.split(".")):
            raise ValueError(f"{target!r} is neither a module name (dotted identifiers) nor a path to a .py file")
        if "" not in sys.path and os.getcwd() not in sys.path:
            sys.path.insert(0, "")  # as `python -m`: a module in the working directory is found
        try:
            module = import_module(target, what)
        except ModuleNotFoundError as e:
            raise ValueError(f"no module named {e.name!r} (looked in the working directory and sys.path)") from None
    obj: Any = module
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise ValueError(f"{target!r} has no attribute {attr!r}") from None
        except Exception as e:  # noqa: BLE001 - a module-level __getattr__ of the user's
            raise UserCodeError(what, f"getting {attr!r} {describe(e)}") from None
    return obj
