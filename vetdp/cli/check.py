"""``vetdp check`` (gate this code base) and ``vetdp verify`` (vet someone else's constructor)."""

from __future__ import annotations

import importlib
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path

import click
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from vetdp.cli import ExitCode, output_path, write_output
from vetdp.engine import report
from vetdp.engine.registry import CheckOptions, glob_matches
from vetdp.engine.results import CheckResult, Status
from vetdp.project import PROOFS_PROVIDER, Project, ProjectError, active_project, project_scope, read_gate_file

__all__ = ["check", "run_and_report", "report_options", "project_option", "load_refs"]


def report_options(f: Callable) -> Callable:
    """The shared --json/--junit/--markdown options (their folders are created before any work is done)."""
    f = output_path("--markdown", "markdown_path", help="Write a Markdown report to this file.")(f)
    f = output_path("--junit", "junit_path", help="Write a JUnit XML report to this file.")(f)
    f = output_path("--json", "json_path", help="Write a JSON report (schema_version 1) to this file.")(f)
    return f


def run_and_report(stages: Iterable[tuple[str, Callable[[], Iterable[CheckResult]]]], *, command: str, title: str,
                   json_path: str | None, junit_path: str | None, markdown_path: str | None,
                   advisory: list[str] = (), nothing_selected: str = "no check ran", true_label: str = "true") -> int:
    """Run every stage with a progress bar, print the table and failures, write reports; the exit code.

    ``advisory``: globs over ``spec::check`` whose failures are reported but do not fail the gate.
    ``true_label`` names the ``true`` column (an audit's is a confidence lower bound, not a true value).
    A run that produced no result at all checked nothing: it prints ``nothing_selected`` and exits 2, never 0.
    """
    out, err = Console(), Console(stderr=True)
    if "-" in (json_path, junit_path, markdown_path):  # a report on standard output: the table goes to stderr
        out = Console(stderr=True)
    if not out.is_terminal:  # a log or a CI page: wide rows rather than folded ones
        out = Console(width=200, stderr=out.stderr)
    results: list[CheckResult] = []
    stages = list(stages)
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/"
                  "{task.total} stages"), TimeElapsedColumn(), console=err, transient=True,
                  disable=not err.is_terminal) as progress:
        task = progress.add_task("checking", total=len(stages))
        for label, stage in stages:
            progress.update(task, description=escape(f"checking {label}"))
            t0 = time.perf_counter()
            try:
                for r in stage():
                    results.append(r)
                    progress.update(task, description=escape(f"{label}: {r.check}"))
            except Exception as e:  # noqa: BLE001 - report the engine failure, exit 2
                results.append(CheckResult(label, "engine", Status.ERROR, message=f"{type(e).__name__}: {e}",
                                           seconds=time.perf_counter() - t0))
            progress.advance(task)
    if not results:
        click.echo(f"error: {nothing_selected}", err=True)
        return ExitCode.ERROR
    report.render_table(results, out, title=title, true_label=true_label)
    report.render_failures(results, out, true_label=true_label)
    if json_path:
        write_output("--json", json_path, report.to_json(results, command, true_label=true_label))
    if junit_path:
        write_output("--junit", junit_path, report.to_junit(results, title, true_label=true_label))
    if markdown_path:
        write_output("--markdown", markdown_path, report.to_markdown(results, title, true_label=true_label))

    def blocking(r: CheckResult) -> bool:
        return not any(glob_matches(pat, f"{r.spec}::{r.check}") for pat in advisory)

    if any(r.status is Status.ERROR for r in results):
        return ExitCode.ERROR
    if any(r.status.is_failure and blocking(r) for r in results):
        return ExitCode.VIOLATION
    return ExitCode.OK


def _gate_config(path: str | None, project: Project | None = None) -> dict:
    """The gate settings: the ``[gate]`` table of ``--config FILE`` when given, else the project's (``[tool.vetdp]
    gate``: an inline table or a file such as ``ci/gate.toml``), validated; an unknown section or key, or a value of
    the wrong type, is a usage error naming it (exit 2)."""
    if path is not None:
        candidate = Path(path)
        if not candidate.is_file():
            raise click.BadParameter(f"--config={path!r}: no such file", param_hint="--config")
        try:
            return read_gate_file(candidate)
        except ProjectError as e:
            raise click.UsageError(str(e)) from None
    try:
        return dict((project or active_project()).gate)
    except ProjectError as e:
        raise click.UsageError(str(e)) from None


def load_refs(refs: Iterable[str]) -> list[tuple[str, Callable]]:
    """("module:function", the function) for each provider reference; a usage error names one that cannot be
    loaded."""
    out = []
    for ref in refs:
        module, _, attr = ref.partition(":")
        try:
            out.append((ref, getattr(importlib.import_module(module), attr)))
        except (ImportError, AttributeError) as e:
            raise click.UsageError(f"[tool.vetdp] providers: {ref!r} cannot be loaded: {e}") from None
    return out


def project_option(f: Callable) -> Callable:
    """``--project DIR``: use the ``[tool.vetdp]`` table of DIR/pyproject.toml instead of looking upward from the
    working directory."""
    return click.option("--project", "project_dir", type=click.Path(exists=True), default=None,
                        help="The project to check: a directory whose pyproject.toml has a [tool.vetdp] table "
                             "(default: the nearest one upward from the working directory).")(f)


def _pattern(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is not None and not value.strip():
        raise click.BadParameter(f"-k={value!r} must be a non-empty name or glob, e.g. -k randomized_response",
                                 ctx=ctx, param=param)
    return value


@click.command()
@click.option("-k", "pattern", callback=_pattern,
              help="Run only checks whose 'spec::check' name contains PATTERN (or matches the glob); selecting "
                   "nothing is an error (exit 2).")
@click.option("--deep", is_flag=True, help="Explore further: more parameter sets, larger domains.")
@click.option("--seed", default=0, show_default=True, help="Seed for the reproducible parts of the run.")
@click.option("--config", "config_path",
              help="Gate configuration file with a [gate] table (default: the project's [tool.vetdp] gate).")
@project_option
@report_options
def check(pattern: str | None, deep: bool, seed: int, config_path: str | None, project_dir: str | None,
          json_path: str | None, junit_path: str | None, markdown_path: str | None) -> None:
    """Check every spec, proof and provider of the project; exit 0 pass, 1 violation, 2 error.

    The project is the nearest pyproject.toml with a [tool.vetdp] table (or --project DIR); without one, vetdp's
    own bundled specs.
    """
    from vetdp.engine.spec import discover_specs
    from vetdp.engine.specs_provider import check_specs
    from vetdp.obligations.provider import check_proofs

    try:
        with project_scope(project_dir) as project:
            gate = _gate_config(config_path, project)
            options = CheckOptions(deep=deep, pattern=pattern, seed=seed, deep_only=tuple(gate.get("deep_only", ())),
                                   loose_map_warns=gate.get("loose_map", "fail") == "warn")
            specs = discover_specs(project)  # a spec module that cannot be imported is a usage error, up front
            providers = [("specs", lambda: check_specs(options, specs)), ("proofs", lambda: check_proofs(options))]
            providers += [(ref.split(":")[0].rsplit(".", 1)[-1], (lambda p=fn: p(options)))
                          for ref, fn in load_refs(r for r in project.providers if r != PROOFS_PROVIDER)]
            if pattern:
                empty = (f"-k {pattern!r} selects no check (names look like 'randomized_response::privacy.sound' "
                         f"or 'randomized_response::precondition[prob_nan]', as printed by vetdp check)")
            else:
                empty = f"no check ran: {project.label} has no spec, proof or provider"
            code = run_and_report(providers, command="vetdp " + " ".join(sys.argv[1:]), title="vetdp check",
                                  json_path=json_path, junit_path=junit_path, markdown_path=markdown_path,
                                  advisory=list(gate.get("advisory", [])), nothing_selected=empty)
    except ProjectError as e:
        raise click.UsageError(str(e)) from None
    sys.exit(int(code))
