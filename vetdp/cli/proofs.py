"""``vetdp proofs``: are the pinned proofs still about the code, and do their obligations hold?

Exit codes: 0 all up to date and proved (a proof that relies on nothing is a warning); 1 a proof is outdated,
incomplete (its code uses a constant it does not list) or an obligation/lemma fails or is undecided (or ``bless``
refused); 2 bad usage (unknown proof name, malformed document).
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click

from vetdp.cli import ExitCode, output_folder
from vetdp.cli.check import project_option, z3_rlimit_option
from vetdp.project import ProjectError, project_scope

if TYPE_CHECKING:  # the obligations (z3, sympy) and rich load when a command runs, not for --help
    from vetdp.obligations.pinning import Pinning

__all__ = ["proofs"]

_STYLE = {"up to date": "green", "outdated": "yellow", "incomplete": "red", "failing": "red", "invalid": "red"}
_DEEP_HELP = "Give z3 ten times the resource limit per obligation."


@click.group()
@click.option("--proofs-dir", type=click.Path(file_okay=False), default=None,
              help="Directory of the proof documents (default: [tool.vetdp] proofs of the nearest pyproject.toml, "
                   "else proofs/ of this source tree).")
@click.option("--impl-dir", type=click.Path(file_okay=False), default=None,
              help="Read the sources of the project's first [tool.vetdp] impl package (vetdp.impl by default) from "
                   "this directory instead of the installed package.")
@project_option
@click.pass_context
def proofs(ctx: click.Context, proofs_dir: str | None, impl_dir: str | None, project_dir: str | None) -> None:
    """Pinned proof documents: status, diff, bless, render.

    The proofs are those of the project ([tool.vetdp] proofs of the nearest pyproject.toml, or --project DIR).
    A proofs directory that is missing, empty, or holds no proof of a spec'd module is an error (exit 2).
    """
    if impl_dir is not None and not Path(impl_dir).is_dir():
        raise click.BadParameter(f"--impl-dir={impl_dir!r} is not a directory", param_hint="--impl-dir")
    # opened by the subcommand that runs (pass_pinning), so that `vetdp proofs NAME --help` opens nothing
    ctx.obj = functools.partial(_open_pinning, ctx, proofs_dir, impl_dir, project_dir)


def _open_pinning(ctx: click.Context, proofs_dir: str | None, impl_dir: str | None, project_dir: str | None
                  ) -> Pinning:
    """The proofs of the project (entered for the rest of the group's run); a usage error when there are none."""
    from vetdp.obligations.pinning import Pinning, ProofError
    from vetdp.obligations.provider import spec_modules

    try:
        project = ctx.with_resource(project_scope(project_dir))
    except ProjectError as e:
        raise click.UsageError(str(e)) from None
    impl_package = project.impl[0] if project.impl else "vetdp.impl"
    try:
        pin = Pinning(Path(proofs_dir) if proofs_dir else None, {impl_package: Path(impl_dir)} if impl_dir else None)
        if ctx.invoked_subcommand != "findings":
            pin.require_proofs(spec_modules(), label="--proofs-dir" if proofs_dir else None)
    except ProofError as e:
        raise click.UsageError(str(e)) from None
    return pin


def pass_pinning(f: Callable) -> Callable:
    """Call ``f(pin, ...)`` with the group's :class:`Pinning`, opened now."""
    def run(*args, **kwargs):
        return f(click.get_current_context().obj(), *args, **kwargs)

    return functools.update_wrapper(run, f)


@proofs.command()
@click.argument("names", nargs=-1)
@click.option("--deep", is_flag=True, help=_DEEP_HELP)
@z3_rlimit_option
@pass_pinning
def status(pin: Pinning, names: tuple[str, ...], deep: bool, z3_rlimit: int | None) -> None:
    """A table of every proof: up to date / outdated / incomplete / an obligation failing. The obligations are
    derived from each proof's constants: (their count is shown)."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from vetdp.obligations.pinning import ProofError

    console = Console()
    if not console.is_terminal:  # a log or a CI page: wide rows rather than truncated names
        console = Console(width=200)
    table = Table(title="vetdp proofs")
    for col in ("proof", "state", "vetted", "obligations", "lemmas", "detail"):
        table.add_column(col)
    worst = ExitCode.OK
    for stem in names:
        if stem not in pin.stems():
            raise click.BadParameter(f"NAME={stem!r} must be one of the proofs {pin.stems()} in {pin.proofs_dir}",
                                     param_hint="NAME")
    for stem in names or pin.stems():
        st = pin.status(stem, deep, z3_rlimit)
        if st.state == "invalid":
            worst = ExitCode.ERROR
        elif not st.ok and worst is ExitCode.OK:
            worst = ExitCode.VIOLATION
        try:
            doc = pin.doc(stem)
            n_obl, n_lem, vetted = str(len(st.obligations)), str(len(doc.meta["lemmas"])), doc.meta.get("vetted", "?")
        except ProofError:
            n_obl = n_lem = vetted = "-"
        detail = "; ".join([*([] if st.ok else [st.message]), *([f"failing: {', '.join(st.failing)}"] if st.failing
                                                                 else []), *(f"warning: {w}" for w in st.warnings)])
        style = "yellow" if st.ok and st.warnings else _STYLE[st.state]
        table.add_row(escape(stem), f"[{style}]{st.state}[/]", escape(vetted), n_obl, n_lem, escape(detail))
    console.print(table)
    sys.exit(int(worst))


@proofs.command()
@click.argument("name")
@pass_pinning
def diff(pin: Pinning, name: str) -> None:
    """The source change of NAME's proved functions since the proof was vetted."""
    from vetdp.obligations.pinning import ProofError

    try:
        text = pin.diff(name)
    except ProofError as e:
        click.echo(str(e), err=True)
        sys.exit(int(ExitCode.ERROR))
    click.echo(text if text else f"{name}: no change since the proof was vetted")
    sys.exit(int(ExitCode.VIOLATION if text else ExitCode.OK))


@proofs.command()
@click.argument("name")
@click.option("--deep", is_flag=True, help=_DEEP_HELP)
@z3_rlimit_option
@pass_pinning
def bless(pin: Pinning, name: str, deep: bool, z3_rlimit: int | None) -> None:
    """Re-pin NAME to the current source after review, recording the obligations derived from its constants:;
    refused while its code uses a constant it does not list, or an obligation or lemma fails."""
    from vetdp.obligations.pinning import ProofError

    try:
        doc = pin.doc(name)
        before = pin.recorded_obligations(name)
    except ProofError as e:
        click.echo(str(e), err=True)
        sys.exit(int(ExitCode.ERROR))
    try:
        doc = pin.bless(name, deep, z3_rlimit=z3_rlimit)
    except ProofError as e:
        click.echo(str(e), err=True)
        sys.exit(int(ExitCode.VIOLATION))
    after = pin.recorded_obligations(name) or ()
    click.echo(f"{name}: pinned {doc.meta['source_digest']} (vetted {doc.meta['vetted']}); "
               f"{len(after)} obligation(s) derived from constants:")
    if before is not None:
        for sign, ids in (("+", [o for o in after if o not in before]), ("-", [o for o in before if o not in after])):
            for oid in ids:
                click.echo(f"  {sign} {oid}")


@proofs.command()
@output_folder("--out", "out_dir", default="build/proofs",
               help="Directory for the HTML files (created if missing, and found writable before any work).")
@z3_rlimit_option
@pass_pinning
def render(pin: Pinning, out_dir: str, z3_rlimit: int | None) -> None:
    """Write every proof as HTML with typeset math (MathML, offline), a status banner and the obligations derived
    from its constants:."""
    from vetdp.obligations.pinning import ProofError
    from vetdp.obligations.render import render_all

    try:
        paths = render_all(pin, Path(out_dir), z3_rlimit)
    except ProofError as e:  # a proof that cannot be read (not UTF-8, no front matter, ...): one line, exit 2
        click.echo(f"error: {e}", err=True)
        sys.exit(int(ExitCode.ERROR))
    for p in paths:
        click.echo(str(p))


@proofs.command()
def findings() -> None:
    """The seeds' arithmetic re-checked: every obligation of each naive/seed constant, with witnesses."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from vetdp.obligations.check import run_all
    from vetdp.obligations.constants import NAIVE, SEED_DIRECTED

    click.get_current_context().obj()  # the project is opened as for every subcommand (a broken one: exit 2)

    table = Table(title="seed constants (round-to-nearest and seed 001's order)")
    for col in ("obligation", "status", "s", "witness"):
        table.add_column(col)
    for r in run_all(list(SEED_DIRECTED) + list(NAIVE)):
        if r.id.startswith("contract."):
            continue
        w = r.witness or {}
        text = f"{w.get('inputs_repr')}: {w.get('message')}" if w else (r.reason or "")
        if r.status == "refuted" and not r.confirmed:
            text = f"z3 model {r.counterexample}; not confirmed on floats"
        table.add_row(escape(r.id), r.status, f"{r.seconds:.2f}", escape(str(text)))
    Console().print(table)
