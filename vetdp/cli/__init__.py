"""The ``vetdp`` command line. Each subcommand lives in its own module of this package.

Exit codes (:class:`ExitCode`): 0 everything passed; 1 a check found a violation;
2 bad usage, an engine error, or a check stopped by the wall-clock safety limit (``--time-limit``: "stopped").
"""

from __future__ import annotations

import enum
import importlib
import math
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

__all__ = ["main", "ExitCode", "output_path", "output_folder", "write_output", "given", "Real", "Integer",
           "SUBCOMMANDS", "load_command"]


class ExitCode(enum.IntEnum):
    OK = 0  # every check passed
    VIOLATION = 1  # at least one check failed
    ERROR = 2  # bad usage, the engine itself failed, or a check was stopped by the time limit (no verdict)


class Real(click.ParamType):
    """A float option in an interval, NaN rejected (click's FloatRange lets NaN through): ``Real(0, 0.5,
    lo_open=True)`` is (0, 0.5]; None leaves that end unbounded. The message gives the value and the interval."""

    name = "float"

    def __init__(self, lo: float | None = None, hi: float | None = None, *, lo_open: bool = False,
                 hi_open: bool = False):
        self.lo, self.hi, self.lo_open, self.hi_open = lo, hi, lo_open, hi_open

    @property
    def interval(self) -> str:
        left = "(-inf" if self.lo is None else ("(" if self.lo_open else "[") + f"{self.lo:g}"
        right = "inf)" if self.hi is None else f"{self.hi:g}" + (")" if self.hi_open else "]")
        return f"{left}, {right}"

    def convert(self, value, param, ctx) -> float:
        if isinstance(value, float) and not isinstance(value, bool):
            x = value
        else:
            try:
                x = float(str(value).strip())
            except ValueError:
                self.fail(f"{value!r} is not a number; it must be in {self.interval}", param, ctx)
        lo_bad = self.lo is not None and (x < self.lo or (self.lo_open and x == self.lo))
        hi_bad = (x == math.inf) if self.hi is None else (x > self.hi or (self.hi_open and x == self.hi))
        if math.isnan(x) or x == -math.inf or lo_bad or hi_bad:
            self.fail(f"{x!r} must be in {self.interval}", param, ctx)
        return x


class Integer(click.ParamType):
    """An int option in [lo, hi] (None: unbounded); accepts ``1e6`` when it is an exact integer. ``why`` says what
    the upper limit protects (memory, time), so that a refused size is explained."""

    name = "integer"

    def __init__(self, lo: int | None = None, hi: int | None = None, why: str = ""):
        self.lo, self.hi, self.why = lo, hi, why

    def convert(self, value, param, ctx) -> int:
        if isinstance(value, int) and not isinstance(value, bool):
            n = value
        else:
            text = str(value).strip()
            try:
                n = int(text)
            except ValueError:
                try:
                    f = float(text)
                except ValueError:
                    f = math.nan
                if not math.isfinite(f) or f != int(f):
                    self.fail(f"{value!r} is not an integer", param, ctx)
                n = int(f)
        if (self.lo is not None and n < self.lo) or (self.hi is not None and n > self.hi):
            rng = f"[{'-inf' if self.lo is None else self.lo}, {'inf' if self.hi is None else self.hi}]"
            self.fail(f"{n} must be in {rng}" + (f" ({self.why})" if self.why and self.hi is not None
                                                   and n > self.hi else ""), param, ctx)
        return n


def _writable_folder(name: str, folder: Path, value: str) -> None:
    """Create ``folder`` (and its parents) and prove it writable by creating a file in it (os.access says yes to
    root on a read-only file system); a usage error naming the option otherwise."""
    import tempfile

    base = next((p for p in (folder, *folder.parents) if p.exists()), None)
    if base is not None and not base.is_dir():
        raise click.BadParameter(f"{name}={value!r}: {str(base)!r} is a file, not a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as e:
        raise click.BadParameter(f"{name}={value!r}: its folder {str(folder)!r} cannot be written: "
                                 f"{e.strerror or e}") from None


def _prepare_output(ctx: click.Context, param: click.Parameter, value: str | None,
                    suffixes: tuple[str, ...] = ()) -> str | None:
    """Click callback of every option naming an output file: its folder is created and found writable now, before
    any work, and its suffix is one of ``suffixes`` (when given: the format follows the name), or a usage error (exit
    2) naming the option, so that a run never does its work and then crashes writing."""
    if value is None or value == "-":  # "-": standard output
        return value
    name = param.opts[0] if param.opts else param.name
    path = Path(value)
    try:
        if value.strip() == "" or path.name == "":
            raise click.BadParameter(f"{name}={value!r} must name a file")
        if path.is_dir():
            raise click.BadParameter(f"{name}={value!r} is a directory; give a file name")
        if suffixes and path.suffix.lower() not in suffixes:
            raise click.BadParameter(f"{name}={value!r} must end in {', '.join(suffixes[:-1])} or {suffixes[-1]} "
                                     "(the format follows the suffix)")
        _writable_folder(name, path.parent, value)
        if path.exists() and not os.access(path, os.W_OK):
            raise click.BadParameter(f"{name}={value!r} is not writable")
    except click.BadParameter as e:
        e.ctx, e.param = ctx, param
        raise
    return value


def _prepare_folder(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """Click callback of an option naming an output folder: created and found writable before any work."""
    if value is None:
        return value
    name = param.opts[0] if param.opts else param.name
    try:
        if value.strip() == "":
            raise click.BadParameter(f"{name}={value!r} must name a folder (e.g. out/figures; '.' for this one)")
        _writable_folder(name, Path(value), value)
    except click.BadParameter as e:
        e.ctx, e.param = ctx, param
        raise
    return value


def output_path(*decls: str, help: str, suffixes: tuple[str, ...] = ()  # noqa: A002 - click's own keyword
                ) -> Callable[[Callable], Callable]:
    """A click option naming an output file (``--json``, ``--plot``, ...): its folder is created up front and proved
    writable; ``suffixes`` (e.g. ``(".png", ".svg")``) restricts the name where the format follows it; ``-`` means
    standard output (the command then prints its table on standard error)."""
    def callback(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
        return _prepare_output(ctx, param, value, suffixes)

    return click.option(*decls, type=click.Path(dir_okay=False), callback=callback, help=help)


def output_folder(*decls: str, help: str, default: str) -> Callable[[Callable], Callable]:  # noqa: A002
    """A click option naming an output folder (``--out``): created and proved writable before any work."""
    return click.option(*decls, type=click.Path(file_okay=False), default=default, show_default=True,
                        callback=_prepare_folder, help=help)


def given(name: str) -> bool:
    """Whether the running command's parameter ``name`` was given (on the command line or in the environment) rather
    than left at its default: an option that has no effect in the mode chosen is refused, not silently ignored."""
    ctx = click.get_current_context()
    return ctx.get_parameter_source(name) in (click.core.ParameterSource.COMMANDLINE,
                                              click.core.ParameterSource.ENVIRONMENT)


def write_output(option: str, path: str, text: str | bytes | Callable[[Any], None]) -> None:
    """Write ``text`` (str, bytes, or a function writing to a binary file) to ``path`` (``-``: standard output) as a
    whole: into a temporary file of the same folder, then renamed, so that a failure leaves no half-written file; a
    failure is a usage error naming ``option`` (exit 2), not a traceback."""
    if path == "-":
        click.echo(text)
        return
    target = Path(path)
    temporary = target.with_name(f".{target.name}.{os.getpid()}.partial")  # the usual permissions (umask)
    try:
        try:
            with open(temporary, "wb") as fh:
                if callable(text):
                    text(fh)
                else:
                    fh.write(text.encode("utf-8") if isinstance(text, str) else text)
        except BaseException:
            temporary.unlink(missing_ok=True)
            raise
        os.replace(temporary, target)
    except OSError as e:
        raise click.UsageError(f"{option}={path!r}: cannot write: {e.strerror or e}") from None


# Each subcommand lives in its own module of this package and is imported only when it runs (or its help is asked
# for). `vetdp --help` lists them from this table, without importing any: name -> (module, attribute, short help). The
# short help is the command's own (its docstring's first sentence); tests/test_cli_startup.py checks that they agree.
SUBCOMMANDS: dict[str, tuple[str, str, str]] = {
    "account": ("vetdp.cli.account", "account",
                "(ε, δ)-DP of MECHANISM run --compose times, by every method side by side; the exact one marked."),
    "audit": ("vetdp.cli.audit", "audit",
              "Audit a sampler: lower-bound its ε with confidence 1 − β; exit 0 pass, 1 violation, 2 error."),
    "buffling": ("vetdp.cli.buffling", "buffling",
                 "Privacy of shuffling + flipping k Bloom filters of m bits (seed 004), exact where the document "
                 "simulates."),
    "check": ("vetdp.cli.check", "check",
              "Check every spec, proof and provider of the project; exit 0 pass, 1 violation, 2 error or stopped."),
    "findings": ("vetdp.cli.findings", "findings",
                 "List the registered third-party findings (vetdp's own, shipped with it, and the project's); with "
                 "--run or --check, run the command that reproduces each."),
    "init": ("vetdp.cli.init", "init",
             "Scaffold a project that vets its own mechanism: [tool.vetdp], a sample mechanism, its spec, its pinned "
             "proof and a CI workflow; `vetdp check` passes on it straight away."),
    "plot": ("vetdp.cli.account", "plot",
             "Regenerate the seed post's three figures (RDP/zCDP bounds, composition, MAE) as PNG and SVG."),
    "proofs": ("vetdp.cli.proofs", "proofs", "Pinned proof documents: status, diff, bless, render."),
    "rappor": ("vetdp.cli.rappor", "rappor",
               "RAPPOR (Erlingsson, Pihur, Korolova 2014): encode strings as randomized Bloom-filter reports, "
               "simulate populations with known truth, decode reports against candidate strings; read and write the "
               "file formats of Google's reference implementation."),
    "verify": ("vetdp.cli.verify", "verify", "Vet another implementation of a mechanism against our SPEC."),
    "vet": ("vetdp.cli.vet", "vet", "Vet code written elsewhere (an accountant, ...) against exact truths."),
}


def load_command(name: str) -> click.Command:
    """The subcommand ``name`` of :data:`SUBCOMMANDS`, its module imported now."""
    module, attr, _ = SUBCOMMANDS[name]
    return getattr(importlib.import_module(module), attr)


class _Main(click.Group):
    """The root group: subcommands load lazily from :data:`SUBCOMMANDS`; a malformed or unusable ``[tool.vetdp]``
    project, met by any subcommand, is a usage error (exit 2) with its message, never a traceback that exits 1 like
    a violation."""

    def main(self, *args: Any, **kwargs: Any) -> Any:
        """As click's, with standard output and error able to print any text: on a stream whose encoding lacks a
        character (``PYTHONIOENCODING=ascii``, a C locale) it is written as a backslash escape, not a crash."""
        for stream in (sys.stdout, sys.stderr):
            encoding = (getattr(stream, "encoding", None) or "").lower().replace("-", "")
            if encoding not in ("utf8", "utf16", "utf32") and getattr(stream, "errors", "") == "strict" and \
                    hasattr(stream, "reconfigure"):
                stream.reconfigure(errors="backslashreplace")
        return super().main(*args, **kwargs)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *SUBCOMMANDS})

    def get_command(self, ctx: click.Context | None, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in SUBCOMMANDS:
            self.add_command(load_command(cmd_name), cmd_name)
        return self.commands.get(cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """As click's, with the short help of a subcommand not yet imported taken from :data:`SUBCOMMANDS`."""
        names = self.list_commands(ctx)
        if not names:
            return
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = []
        for name in names:
            if name in SUBCOMMANDS and name not in self.commands:
                rows.append((name, click.Command(name, help=SUBCOMMANDS[name][2]).get_short_help_str(limit)))
            elif not self.commands[name].hidden:
                rows.append((name, self.commands[name].get_short_help_str(limit)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def invoke(self, ctx: click.Context):
        """Run the subcommand under :func:`vetdp.fence.guarded`. Whatever the user's code does that its fence did
        not turn into a result ends the command with one line and exit 2, never 0 and never a traceback: a
        :class:`vetdp.fence.UserCodeError`, a ``sys.exit``/``os._exit`` raised outside vetdp's own files, a
        ``KeyboardInterrupt`` that no Ctrl-C sent (a real Ctrl-C: "stopped", exit 2)."""
        from vetdp import fence
        from vetdp.project import ProjectError

        with fence.guarded():
            try:
                return super().invoke(ctx)
            except ProjectError as e:
                raise click.UsageError(str(e), ctx=ctx) from None
            except fence.UserCodeError as e:
                _fail(str(e) if e.stopped else f"error: {e}")
            except SystemExit as e:
                where = _raised_outside_vetdp(e)
                if where is None:
                    raise  # the command's own exit code
                _fail(f"error: code in {where} {fence.exit_text(e)} while vetdp ran; no verdict")
            except KeyboardInterrupt as e:
                if fence.interrupted():
                    _fail("stopped: interrupted (Ctrl-C); no verdict")
                _fail(f"error: code in {_raised_outside_vetdp(e) or 'vetdp'} raised KeyboardInterrupt; no verdict")


# vetdp and the libraries its command line runs on (rich ends a command whose output pipe closed with SystemExit(1))
_OWN = ("vetdp", "click", "rich")


def _raised_outside_vetdp(e: BaseException) -> str | None:
    """``file:line`` of the code that raised ``e`` when it is not vetdp's own or its command line's libraries' (by
    the raising module's name; ``os._exit`` under the guard is always the caller's), else None."""
    from vetdp.fence import OsExitCalled

    tb, frames = e.__traceback__, []
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    if isinstance(e, OsExitCalled) and len(frames) > 1:
        frames = frames[:-1]  # the guard's own frame: the caller is the one before it
    if not frames:
        return None
    module = str(frames[-1].f_globals.get("__name__", ""))
    if not isinstance(e, OsExitCalled) and module.split(".")[0] in _OWN:
        return None
    return f"{frames[-1].f_code.co_filename}:{frames[-1].f_lineno}"


def _fail(line: str) -> None:
    click.echo(line, err=True)
    raise click.exceptions.Exit(int(ExitCode.ERROR))


@click.group(cls=_Main, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="vetdp")
@click.option("--project", "project_dir", type=click.Path(exists=True), default=None,
              help="Run in the project of DIR/pyproject.toml ([tool.vetdp]) instead of the nearest one upward from "
                   "the working directory (every command, e.g. vetdp --project DIR verify ...).")
@click.pass_context
def main(ctx: click.Context, project_dir: str | None) -> None:
    """vetdp: executable proofs for differential-privacy mechanisms."""
    if project_dir is not None:
        from vetdp.project import ProjectError, project_scope

        try:
            ctx.with_resource(project_scope(project_dir))
        except ProjectError as e:
            raise click.UsageError(str(e)) from None
