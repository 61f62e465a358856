"""The ``vetdp`` command line. Each subcommand lives in its own module of this package.

Exit codes (:class:`ExitCode`): 0 everything passed; 1 a check found a violation;
2 bad usage, an engine error, or a check stopped by the wall-clock safety limit (``--time-limit``: "stopped").
"""

from __future__ import annotations

import enum
import importlib
import math
import os
from collections.abc import Callable
from pathlib import Path

import click

__all__ = ["main", "ExitCode", "output_path", "write_output", "Real", "Integer", "SUBCOMMANDS", "load_command"]


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
               "simulate populations with known truth, decode reports against candidate strings."),
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
