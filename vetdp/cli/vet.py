"""``vetdp vet``: vet someone else's code against exact truths. ``vetdp vet accountant`` asks an accountant a
battery of composition questions whose answers vetdp knows with certainty.

Examples::

    vetdp vet accountant dp_accounting --quick
    vetdp vet accountant autodp --json out/autodp.json --markdown out/autodp.md
    vetdp vet accountant mypkg.acct:MyAccountant --entry-point 'PLD*'

Exit codes: 0 no violation (translation rows, below the question's exact value only by the rounding of vetdp's own
translation of it, do not count); 1 at least one answer below the exact lower bound of what the library was
handed; 2 bad usage, an accountant that
cannot be loaded, an engine failure, or nothing checked (no question asked, or every answer an error). A library
exception on some questions is an "error" row: reported, and it does not by itself change the exit code.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from vetdp import progress
from vetdp.cli import ExitCode, Real, write_output
from vetdp.cli.check import report_options, safety_limit_option

if TYPE_CHECKING:  # rich loads when a command runs, not for --help
    from rich.console import Console

__all__ = ["vet", "accountant"]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def vet() -> None:
    """Vet code written elsewhere (an accountant, ...) against exact truths."""


@vet.command()
@click.argument("name")
@click.option("--quick", is_flag=True, help="A subset that runs in seconds (every kind, both directions, a mixture).")
@click.option("--entry-point", "entry_glob", default=None,
              help="Only entry points whose name matches this glob or contains this text (none selected: exit 2).")
@click.option("--composition", "composition_glob", default=None,
              help="Only compositions whose description (e.g. 'categorical_rr(ε=0.1, t=4)×10000') matches this glob "
                   "or contains this text (none selected: exit 2).")
@click.option("--tight", type=Real(1, None), default=1.01, show_default=True,
              help="An answer above the exact value by more than this factor is reported as loose.")
@click.option("--show", type=click.Choice(["problems", "all"]), default="problems", show_default=True,
              help="Rows printed on the terminal: violations and errors, or every row.")
@safety_limit_option("Wall-clock seconds one question may take, and importing the accountant's module. A safety net "
                     "for an accountant that hangs: when it fires the command says 'stopped' and exits 2.")
@report_options
def accountant(name: str, quick: bool, entry_glob: str | None, composition_glob: str | None, tight: float, show: str,
               time_limit: float, json_path: str | None, junit_path: str | None, markdown_path: str | None) -> None:
    """Ask accountant NAME (dp_accounting, autodp, prv_accountant, or MODULE:ATTR) the composition battery.

    Every answer is set against vetdp's certified exact bracket of what the library was handed (the floats it
    received, taken exactly): below it is a violation (exit 1); below the question's bracket only by the rounding
    of that translation is a translation row (exit 0); above by more than --tight is loose (with its ratio); a
    library exception is an error row.
    """
    from rich.console import Console

    from vetdp import fence
    from vetdp.accounting.accountants import AccountantLoadError, load_accountant
    from vetdp.accounting.accountants import report as rep
    from vetdp.accounting.battery import describe_events, full_battery, quick_battery, run_battery

    try:
        suite = load_accountant(name)
    except AccountantLoadError as e:
        click.echo(f"error: {e}", err=True)
        sys.exit(int(ExitCode.ERROR))
    if entry_glob is not None and not any(_selects(entry_glob, ep.name) for ep in suite.entry_points):
        names = ", ".join(ep.name for ep in suite.entry_points)
        raise click.BadParameter(f"{entry_glob!r} selects no entry point of {suite.library} (they are: {names})",
                                 param_hint="--entry-point")
    out = Console()
    if "-" in (json_path, junit_path, markdown_path):
        out = Console(stderr=True)
    if not out.is_terminal:
        out = Console(width=200, stderr=out.stderr)
    spec = quick_battery() if quick else full_battery()
    if composition_glob is not None:
        spec = [item for item in spec if _selects(composition_glob, describe_events(item[0]))]
        if not spec:
            raise click.BadParameter(f"{composition_glob!r} selects no composition of the "
                                     f"{'quick' if quick else 'full'} battery", param_hint="--composition")
    title = f"vetdp vet accountant {name}" + (" --quick" if quick else "")
    try:
        with progress.shown(title):  # a bar on a terminal, a line per step in a log: stderr only
            result = run_battery(suite, spec, entry_glob=entry_glob, tight=tight)
    except fence.UserCodeError:
        raise  # a question that ran past --time-limit: "stopped", exit 2
    except Exception as e:  # noqa: BLE001 - the battery itself failed: an engine error, exit 2
        click.echo(f"error: the battery failed: {type(e).__name__}: {e}", err=True)
        sys.exit(int(ExitCode.ERROR))
    if not result.rows:
        click.echo(f"error: no question was asked of {name} (every question unsupported: "
                   f"{result.unsupported})", err=True)
        sys.exit(int(ExitCode.ERROR))
    _render(result, out, title, show)
    command = "vetdp " + " ".join(sys.argv[1:])
    if json_path:
        write_output("--json", json_path, rep.to_json(result, command))
    if junit_path:
        write_output("--junit", junit_path, rep.to_junit(result, title))
    if markdown_path:
        write_output("--markdown", markdown_path, rep.to_markdown(result, title))
    summary = result.summary()
    if summary["violation"]:
        sys.exit(int(ExitCode.VIOLATION))
    if summary["error"] == len(result.rows):  # every answer was an error: nothing was checked, never green
        click.echo(f"error: every answer of {name} was an error; nothing was checked", err=True)
        sys.exit(int(ExitCode.ERROR))
    sys.exit(int(ExitCode.OK))


def _selects(glob: str, name: str) -> bool:
    import fnmatch

    return fnmatch.fnmatchcase(name, glob) or glob in name


def _num(x: float | None) -> str:
    return "—" if x is None else f"{x:.6g}"


def _render(result, out: Console, title: str, show: str) -> None:
    from rich.markup import escape
    from rich.table import Table

    from vetdp.accounting.accountants.report import per_entry_point

    table = Table(title=f"{title}: {result.library} {result.version}")
    for col in ("entry point", "violation", "translation", "loose", "ok", "error", "lowest ratio", "highest ratio",
                "seconds"):
        table.add_column(col)
    for ep, d in per_entry_point(result).items():
        table.add_row(escape(ep), str(d["violation"]), str(d["translation"]), str(d["loose"]), str(d["ok"]),
                      str(d["error"]),
                      _num(d["min_ratio"]), _num(d["max_ratio"]), f"{d['seconds']:.2f}",
                      style="bold red" if d["violation"] else ("yellow" if d["error"] else None))
    out.print(table)
    for ep, u in result.unsupported.items():
        out.print(escape(f"not asked of {ep}: {u['count']} questions ({u['reason']})"))
    chosen = result.rows if show == "all" else [r for r in result.rows if r.status in ("violation", "error")]
    for r in chosen:
        style = {"violation": "bold red", "error": "yellow", "loose": "cyan"}.get(r.status, "")
        out.print(f"[{style}]{r.status}[/{style}] " if style else f"{r.status} ", end="")
        given = "" if r.given is None else f"; handed {r.given}: exact [{r.given_lower!r}, {r.given_upper!r}]"
        out.print(escape(f"{r.entry_point}: {r.question.id}: answer {r.answer!r}, exact "
                         f"[{r.exact_lower!r}, {r.exact_upper!r}]{given}, ratio {_num(r.ratio)}"))
        if r.status in ("violation", "error"):
            out.print(escape(f"  {r.message}"))
            if r.status == "violation":
                out.print(escape("  reproduce:\n    " + r.repro.replace("\n", "\n    ")))
    s = result.summary()
    out.print(escape(f"{result.library}: {s['violation']} violation, {s['translation']} translation (vetdp's "
                     f"rounding, not findings), {s['loose']} loose, {s['ok']} ok, {s['error']} error of "
                     f"{len(result.rows)} answers in {result.seconds:.1f} s (exact brackets {result.exact_seconds:.1f} "
                     "s)"))
