"""``vetdp findings``: list the registered third-party findings, run the commands that reproduce them, and say
which are still present against the installed library versions (registry format: :mod:`vetdp.findings`)."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

from vetdp.cli import ExitCode, Real, given, output_path, write_output
from vetdp.findings import (
    Outcome,
    RegistryError,
    Status,
    evaluate,
    unregistered_sections,
    verdicts_to_json,
)

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["findings", "run_command", "run_in_process"]

_STYLE = {"present": "green", "partly fixed": "yellow", "fixed": "bold yellow", "library not installed": "dim",
          "command failed": "bold red", "not run": "dim", "no command": "yellow"}


def _read(exit_code: int, report: Path, output: str, seconds: float) -> Outcome:
    """The outcome of a command that has finished: its JSON report when it exited 0 or 1 and wrote one."""
    tail = "\n".join(output.strip().splitlines()[-3:])
    if exit_code not in (0, 1):
        return Outcome(exit_code, None, f"exit code {exit_code}: {tail}", seconds)
    try:
        doc = json.loads(report.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        return Outcome(exit_code, None, f"exit code {exit_code} but no readable JSON report ({type(e).__name__}); "
                       f"its last output: {tail}", seconds)
    return Outcome(exit_code, doc, "", seconds)


def run_command(argv: Sequence[str], *, project_root: Path | None = None, timeout: float = 1800.0,
                cwd: Path | None = None) -> Outcome:
    """Run ``vetdp ARGV --json TMP`` in a fresh interpreter (isolated: its own modules, global state and a wall-clock
    safety limit of ``timeout`` seconds, which stops the command: no verdict, reported as a failed command;
    ``-P`` keeps a source tree in the working directory from shadowing the installed vetdp) and read its report.
    ``cwd``: the folder relative paths in ARGV are read from (the registry's project root)."""
    with tempfile.TemporaryDirectory(prefix="vetdp-findings-") as tmp:
        report = Path(tmp) / "report.json"
        prefix = ["--project", str(project_root)] if project_root is not None else []
        cmd = [sys.executable, "-P", "-c", "from vetdp.cli import main; main(prog_name='vetdp')", *prefix,
               *argv, "--json", str(report)]
        t0 = time.perf_counter()
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False, cwd=cwd)
        except subprocess.TimeoutExpired:
            return Outcome(-1, None, f"stopped: time — the command ran past the time limit of {timeout:g} s "
                           "(--time-limit); no verdict: raise --time-limit", time.perf_counter() - t0)
        return _read(proc.returncode, report, proc.stderr or proc.stdout or "", time.perf_counter() - t0)


def run_in_process(argv: Sequence[str], *, project_root: Path | None = None, cwd: Path | None = None) -> Outcome:
    """Run ``vetdp ARGV --json TMP`` in this interpreter and read its report: the same exit codes as
    :func:`run_command` (a usage error 2, an escaped exception reported as a failure), without its start-up cost,
    but also without its isolation and time-out. ``cwd``: as for :func:`run_command` (entered for the call)."""
    with contextlib.chdir(cwd) if cwd is not None else contextlib.nullcontext():
        return _in_process(argv, project_root)


def _in_process(argv: Sequence[str], project_root: Path | None) -> Outcome:
    from vetdp.cli import main

    with tempfile.TemporaryDirectory(prefix="vetdp-findings-") as tmp:
        report = Path(tmp) / "report.json"
        args = [*(["--project", str(project_root)] if project_root is not None else []), *argv, "--json", str(report)]
        output, saved_argv = io.StringIO(), sys.argv
        t0 = time.perf_counter()
        sys.argv = ["vetdp", *args]  # commands record their own command line from sys.argv
        try:
            with contextlib.redirect_stdout(output), contextlib.redirect_stderr(output):
                code = main.main(args=args, prog_name="vetdp", standalone_mode=False)
            code = code if isinstance(code, int) else 0
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        except click.ClickException as e:
            e.show(file=output)
            code = e.exit_code
        except click.exceptions.Abort:
            code = 1
        except Exception as e:  # noqa: BLE001 - the command crashed: a failure, never a report
            return Outcome(2, None, f"the command raised {type(e).__name__}: {e}", time.perf_counter() - t0)
        finally:
            sys.argv = saved_argv
        return _read(code, report, output.getvalue(), time.perf_counter() - t0)


@dataclasses.dataclass(frozen=True)
class _Source:
    """A registry file and how its commands run: ``project`` passed as ``--project`` (None: the usual lookup) and
    the working directory ``cwd`` their relative paths are read from."""

    registry: Path
    project: Path | None
    cwd: Path | None


def _sources(paths: tuple[str, ...], bundled_too: bool = True) -> list[_Source]:
    """``--registry`` files (run in the active project), else vetdp's bundled registry (run in vetdp's own project,
    from any folder; unless ``bundled_too`` is False) followed by the active project's
    ``<proofs>/findings/findings.toml`` when it has one; a usage error when there is none."""
    from vetdp.findings import REGISTRY_NAME, bundled_registry, default_registry, registry_root
    from vetdp.project import ProjectError, active_project

    try:
        project = active_project()
    except ProjectError as e:
        raise click.UsageError(str(e)) from None
    here = _Source(Path(), None if project.bundled else project.root, project.root)
    if paths:
        return [dataclasses.replace(here, registry=Path(p)) for p in paths]
    out = []
    bundled = bundled_registry() if bundled_too else None
    if bundled is not None:
        root = registry_root(bundled)
        out.append(_Source(bundled, root if (root / "pyproject.toml").is_file() else None, root))
    own = default_registry(project.proofs_dir)
    if own is not None and (bundled is None or own.resolve() != bundled.resolve()):
        out.append(dataclasses.replace(here, registry=own))
    if not out:
        where = f"{project.proofs_dir}/findings/{REGISTRY_NAME}" if project.proofs_dir else \
            f"<proofs>/findings/{REGISTRY_NAME} (the project declares no proofs folder)"
        mine = "vetdp's own is left out (--no-bundled)" if not bundled_too else "vetdp's own is not installed"
        raise click.UsageError(f"no findings registry: {mine} and {where} does not exist; create it or pass "
                               "--registry FILE")
    return out


def _load(sources: list[_Source], explicit: bool) -> list[tuple]:
    """(finding, source) for every finding: an id registered twice is a usage error, except that a project's
    registry replaces the bundled entry of the same id (vetdp's own checkout registers the same findings)."""
    from vetdp.findings import load_registry

    loaded: dict[str, tuple] = {}
    for src in sources:
        try:
            found = load_registry(src.registry)
        except RegistryError as e:
            raise click.UsageError(f"malformed findings registry: {e}") from None
        for f in found:  # a duplicate within one file is a RegistryError already
            if f.id in loaded and explicit:
                raise click.UsageError(f"finding id {f.id!r} is registered in both {loaded[f.id][0].registry} and "
                                       f"{f.registry}")
            loaded[f.id] = (f, src)
    return list(loaded.values())


def _table(verdicts: list, out: Console) -> None:
    from rich.markup import escape
    from rich.table import Table

    table = Table(title="vetdp findings", show_lines=True)
    for name in ("finding", "library", "status", "command", "title"):
        table.add_column(name, overflow="fold")
    for v in verdicts:
        f = v.finding
        versions = []
        for (name, found_in), now in zip(f.libraries, v.installed, strict=True):
            versions.append(f"{name} {now or '(not installed)'}" + (f" (found in {found_in})" if now and now !=
                                                                     found_in else ""))
        commands = "\n".join(c.text for c in f.commands) or f"none: {f.no_command}"
        table.add_row(escape(f.id), escape("\n".join(versions)),
                      f"[{_STYLE[v.status.value]}]{escape(v.status.value)}[/]", escape(commands),
                      escape(f"{f.title} ({f.where})"))
    out.print(table)


@click.command()
@click.option("--run", "run", is_flag=True,
              help="Run every finding's commands and report which findings are still present (exit 0, or 2 when a "
                   "command fails).")
@click.option("--check", is_flag=True,
              help="As --run, for a CI gate: exit 1 when a finding is fixed or partly fixed (no longer reported), "
                   "2 when a command fails, nothing ran, or a documented finding has no registry entry.")
@click.option("--require-installed", is_flag=True,
              help="A finding whose library is not installed is an error (exit 2) instead of being skipped.")
@click.option("--registry", "registry_paths", multiple=True, type=click.Path(exists=True, dir_okay=False),
              help="A findings registry (TOML) to read instead of vetdp's own and the project's "
                   "<proofs>/findings/findings.toml; may be repeated.")
@click.option("--no-bundled", is_flag=True,
              help="Leave out the registry of vetdp's own findings that ships with vetdp (by default it is read "
                   "first, then the project's registry, whose entries replace bundled ones of the same id).")
@click.option("-k", "pattern", help="Only the findings whose id contains PATTERN (or matches the glob).")
@click.option("--time-limit", "--timeout", "timeout", type=Real(1, 86_400), default=1800.0, show_default=True,
              help="Wall-clock seconds one command may take (a safety net: the commands' verdicts come from their "
                   "work budgets); a command stopped by it is reported as failed (exit 2). --timeout is its old "
                   "name.")
@click.option("--in-process", is_flag=True,
              help="Run the commands in this interpreter: faster (no start-up per command), but without isolation "
                   "and without --time-limit. Default: each in a fresh interpreter.")
@output_path("--json", "json_path", help="Write a JSON report (schema_version 1) to this file.")
def findings(run: bool, check: bool, require_installed: bool, registry_paths: tuple[str, ...], no_bundled: bool,
             pattern: str | None, timeout: float, in_process: bool, json_path: str | None) -> None:
    """List the registered third-party findings (vetdp's own, shipped with it, and the project's); with --run or
    --check, run the command that reproduces each.

    A finding is 'present' when its command still reports it, 'fixed' when the command ran and no longer does
    (an upstream fix shows here), 'library not installed' when skipped. Exit 0 when listing; with --check, 1 when
    a finding is no longer reported, 2 on an error.
    """
    from rich.console import Console
    from rich.markup import escape
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    from vetdp.engine.registry import glob_matches

    if pattern is not None and not pattern.strip():
        raise click.BadParameter(f"-k={pattern!r} must be a non-empty id or glob, e.g. -k opendp", param_hint="-k")
    for name, option in (("timeout", "--time-limit"), ("in_process", "--in-process")):
        if given(name) and not (run or check):  # listing runs nothing: an option for runs would change nothing
            raise click.BadParameter(f"{option} applies with --run or --check (listing runs no command)",
                                     param_hint=option)
    if in_process and given("timeout"):
        raise click.BadParameter("--time-limit holds for commands run each in a fresh interpreter; with --in-process "
                                 "nothing can stop a command (leave out one of the two)", param_hint="--time-limit")
    out, err = Console(), Console(stderr=True)
    if json_path == "-":
        out = Console(stderr=True)
    if not out.is_terminal:
        out = Console(width=200, stderr=out.stderr)
    sources = _sources(registry_paths, bundled_too=not no_bundled)
    pairs = _load(sources, explicit=bool(registry_paths))
    registered = [f for f, _ in pairs]
    folders = sorted({src.registry.resolve().parent for src in sources})
    unregistered = [str(folder / m) for folder in folders
                    for m in unregistered_sections([f for f in registered if f.registry.parent == folder], folder)]
    selected = [(f, src) for f, src in pairs if pattern is None or pattern in f.id or glob_matches(pattern, f.id)]
    if not selected:
        raise click.UsageError(f"-k {pattern!r} selects no finding; ids: {', '.join(f.id for f in registered)}")
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=err, transient=True, disable=not err.is_terminal) as progress:
        total = len({(src, c.argv) for f, src in selected for c in f.commands})
        task = progress.add_task("findings", total=total)

        def runner_for(src: _Source):
            def runner(argv: tuple[str, ...]):
                progress.update(task, description=escape(("vetdp " + " ".join(argv))[:100]))
                outcome = (run_in_process(argv, project_root=src.project, cwd=src.cwd) if in_process else
                           run_command(argv, project_root=src.project, timeout=timeout, cwd=src.cwd))
                progress.advance(task)
                return outcome
            return runner

        by_id = {}
        for src in sources:  # each registry's findings run in its own project and folder, in registry order
            mine = [f for f, s in selected if s is src]
            for v in evaluate(mine, runner_for(src) if (run or check) else None):
                by_id[v.finding.id] = v
        verdicts = [by_id[f.id] for f, _ in selected]
    _table(verdicts, out)
    for v in verdicts:
        if v.status in (Status.FIXED, Status.PARTIAL, Status.FAILED, Status.NO_COMMAND):
            out.print(f"[{_STYLE[v.status.value]}]{escape(v.finding.id)}: {escape(v.status.value)}[/]: "
                      f"{escape(v.detail)}")
    for where in unregistered:
        out.print(f"[bold red]unregistered finding[/]: {escape(where)} has no entry in the findings registry")
    counts = {s: sum(v.status is s for v in verdicts) for s in Status}
    out.print(", ".join(f"{n} {s.value}" for s, n in counts.items() if n))
    if json_path:
        write_output("--json", json_path, verdicts_to_json(verdicts, "vetdp " + " ".join(sys.argv[1:]),
                                                           unregistered))
    code = ExitCode.OK
    if counts[Status.FAILED]:
        code = ExitCode.ERROR
    if check:
        if counts[Status.FIXED] or counts[Status.PARTIAL]:
            code = max(code, ExitCode.VIOLATION)
        ran = len(verdicts) - counts[Status.NOT_INSTALLED] - counts[Status.NO_COMMAND]
        if unregistered or ran == 0 or (require_installed and counts[Status.NOT_INSTALLED]):
            if ran == 0:
                click.echo("error: no finding was run (a library is missing or no command is registered for "
                           "every selected finding)", err=True)
            code = ExitCode.ERROR
    elif require_installed and counts[Status.NOT_INSTALLED]:
        code = ExitCode.ERROR
    sys.exit(int(code))
