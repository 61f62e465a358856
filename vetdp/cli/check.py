"""``vetdp check`` (gate this code base) and ``vetdp verify`` (vet someone else's constructor)."""

from __future__ import annotations

import fnmatch
import sys
import time
import tomllib
from collections.abc import Callable, Iterable
from pathlib import Path

import click
from rich.console import Console
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from vetdp.cli import ExitCode
from vetdp.engine import report
from vetdp.engine.registry import CheckOptions, load_providers
from vetdp.engine.results import CheckResult, Status

__all__ = ["check", "run_and_report", "report_options"]


def report_options(f: Callable) -> Callable:
    """The shared --json/--junit/--markdown options."""
    f = click.option("--markdown", "markdown_path", type=click.Path(dir_okay=False, writable=True),
                     help="Write a Markdown report to this file.")(f)
    f = click.option("--junit", "junit_path", type=click.Path(dir_okay=False, writable=True),
                     help="Write a JUnit XML report to this file.")(f)
    f = click.option("--json", "json_path", type=click.Path(dir_okay=False, writable=True),
                     help="Write a JSON report (schema_version 1) to this file.")(f)
    return f


def run_and_report(stages: Iterable[tuple[str, Callable[[], Iterable[CheckResult]]]], *, command: str, title: str,
                   json_path: str | None, junit_path: str | None, markdown_path: str | None,
                   advisory: list[str] = ()) -> int:
    """Run every stage with a progress bar, print the table and failures, write reports; the exit code.

    ``advisory``: globs over ``spec::check`` whose failures are reported but do not fail the gate.
    """
    out, err = Console(), Console(stderr=True)
    if not out.is_terminal:  # a log or a CI page: wide rows rather than folded ones
        out = Console(width=200)
    results: list[CheckResult] = []
    stages = list(stages)
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/"
                  "{task.total} stages"), TimeElapsedColumn(), console=err, transient=True,
                  disable=not err.is_terminal) as progress:
        task = progress.add_task("checking", total=len(stages))
        for label, stage in stages:
            progress.update(task, description=f"checking {label}")
            t0 = time.perf_counter()
            try:
                for r in stage():
                    results.append(r)
                    progress.update(task, description=f"{label}: {r.check}")
            except Exception as e:  # noqa: BLE001 - report the engine failure, exit 2
                results.append(CheckResult(label, "engine", Status.ERROR, message=f"{type(e).__name__}: {e}",
                                           seconds=time.perf_counter() - t0))
            progress.advance(task)
    report.render_table(results, out, title=title)
    report.render_failures(results, out)
    if json_path:
        Path(json_path).write_text(report.to_json(results, command))
    if junit_path:
        Path(junit_path).write_text(report.to_junit(results, title))
    if markdown_path:
        Path(markdown_path).write_text(report.to_markdown(results, title))

    def blocking(r: CheckResult) -> bool:
        return not any(fnmatch.fnmatch(f"{r.spec}::{r.check}", pat) for pat in advisory)

    if any(r.status is Status.ERROR for r in results):
        return ExitCode.ERROR
    if any(r.status.is_failure and blocking(r) for r in results):
        return ExitCode.VIOLATION
    return ExitCode.OK


def _gate_config(path: str | None) -> dict:
    candidate = Path(path) if path else Path("ci/gate.toml")
    if not candidate.exists():
        if path:
            raise click.UsageError(f"--config={path!r}: no such file")
        return {}
    try:
        return tomllib.loads(candidate.read_text()).get("gate", {})
    except tomllib.TOMLDecodeError as e:
        raise click.UsageError(f"--config={str(candidate)!r} is not valid TOML: {e}") from e


@click.command()
@click.option("-k", "pattern", help="Run only checks whose 'spec::check' name contains PATTERN (or matches the glob).")
@click.option("--deep", is_flag=True, help="Explore further: more parameter sets, larger domains.")
@click.option("--seed", default=0, show_default=True, help="Seed for the reproducible parts of the run.")
@click.option("--config", "config_path", help="Gate configuration (default: ci/gate.toml when present).")
@report_options
def check(pattern: str | None, deep: bool, seed: int, config_path: str | None, json_path: str | None,
          junit_path: str | None, markdown_path: str | None) -> None:
    """Check every bundled spec, proof and registered subsystem; exit 0 pass, 1 violation, 2 error."""
    gate = _gate_config(config_path)
    options = CheckOptions(deep=deep, pattern=pattern, seed=seed, deep_only=tuple(gate.get("deep_only", ())))
    from vetdp.engine.specs_provider import check_specs

    providers = [("specs", check_specs)] + load_providers()
    stages = [(name.split(":")[0].rsplit(".", 1)[-1] if ":" in name else name,
               (lambda p=provider: p(options))) for name, provider in providers]
    code = run_and_report(stages, command="vetdp " + " ".join(sys.argv[1:]), title="vetdp check",
                          json_path=json_path, junit_path=junit_path, markdown_path=markdown_path,
                          advisory=list(gate.get("advisory", [])))
    sys.exit(int(code))
