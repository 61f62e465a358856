"""The ``vetdp`` command line. Each subcommand lives in its own module of this package.

Exit codes (:class:`ExitCode`): 0 everything passed; 1 a check found a violation;
2 bad usage or an engine error.
"""

from __future__ import annotations

import enum
import math
import os
from collections.abc import Callable
from pathlib import Path

import click

__all__ = ["main", "ExitCode", "output_path", "write_output", "Real", "Integer"]


class ExitCode(enum.IntEnum):
    OK = 0  # every check passed
    VIOLATION = 1  # at least one check failed
    ERROR = 2  # bad usage, or the engine itself failed


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


def _prepare_output(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """Click callback of every option naming an output file: create its folder now, before any work, or fail
    with a usage error (exit 2) naming the option, so that a run never does its work and then crashes writing."""
    if value is None or value == "-":  # "-": standard output
        return value
    name = param.opts[0] if param.opts else param.name
    path = Path(value)
    if value == "" or path.name == "":
        raise click.BadParameter(f"{name}={value!r} must name a file", ctx=ctx, param=param)
    if path.is_dir():
        raise click.BadParameter(f"{name}={value!r} is a directory; give a file name", ctx=ctx, param=param)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise click.BadParameter(f"{name}={value!r}: cannot create its folder {str(path.parent)!r}: "
                                 f"{e.strerror or e}", ctx=ctx, param=param) from None
    if not os.access(path.parent, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise click.BadParameter(f"{name}={value!r} is not writable", ctx=ctx, param=param)
    return value


def output_path(*decls: str, help: str) -> Callable[[Callable], Callable]:  # noqa: A002 - click's own keyword
    """A click option naming an output file (``--json``, ``--plot``, ...): its folder is created up front; ``-``
    means standard output (the command then prints its table on standard error)."""
    return click.option(*decls, type=click.Path(dir_okay=False), callback=_prepare_output, help=help)


def write_output(option: str, path: str, text: str) -> None:
    """Write ``text`` to ``path`` (``-``: standard output); a failure is a usage error naming ``option`` (exit 2),
    not a traceback."""
    if path == "-":
        click.echo(text)
        return
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as e:
        raise click.UsageError(f"{option}={path!r}: cannot write: {e.strerror or e}") from None


class _Main(click.Group):
    """The root group: a malformed or unusable ``[tool.vetdp]`` project, met by any subcommand, is a usage
    error (exit 2) with its message, never a traceback that exits 1 like a violation."""

    def invoke(self, ctx: click.Context):
        from vetdp.project import ProjectError

        try:
            return super().invoke(ctx)
        except ProjectError as e:
            raise click.UsageError(str(e), ctx=ctx) from None


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


# --- subcommands: each lives in its own module of this package ---
from vetdp.cli.account import account, plot  # noqa: E402
from vetdp.cli.audit import audit  # noqa: E402
from vetdp.cli.buffling import buffling  # noqa: E402
from vetdp.cli.check import check  # noqa: E402
from vetdp.cli.findings import findings  # noqa: E402
from vetdp.cli.init import init  # noqa: E402
from vetdp.cli.proofs import proofs  # noqa: E402
from vetdp.cli.rappor import rappor  # noqa: E402
from vetdp.cli.verify import verify  # noqa: E402
from vetdp.cli.vet import vet  # noqa: E402

for _command in (check, verify, proofs, account, plot, buffling, audit, vet, findings, init, rappor):
    main.add_command(_command)
