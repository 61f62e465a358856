"""``vetdp check`` (gate this code base) and ``vetdp verify`` (vet someone else's constructor)."""

from __future__ import annotations

import sys
import time
import tomllib
from collections.abc import Callable, Iterable
from pathlib import Path

import click
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from vetdp.cli import ExitCode, output_path, write_output
from vetdp.engine import report
from vetdp.engine.registry import CheckOptions, glob_matches, load_providers
from vetdp.engine.results import CheckResult, Status

__all__ = ["check", "run_and_report", "report_options"]


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


GATE_KEYS = ("advisory", "deep_only", "loose_map")
LOOSE_MAP = ("fail", "warn")  # [gate] loose_map: how a sound but loose map (privacy.tight) is reported


def _gate_config(path: str | None) -> dict:
    """The ``[gate]`` table of ``--config`` (default ``ci/gate.toml`` when present), validated: any other section,
    an unknown key or a value that is not a list of non-empty glob strings is a usage error naming it (exit 2)."""
    candidate = Path(path) if path is not None else Path("ci/gate.toml")
    if not candidate.is_file():
        if path is not None:
            raise click.BadParameter(f"--config={path!r}: no such file", param_hint="--config")
        return {}
    where = f"--config={str(candidate)!r}"
    try:
        doc = tomllib.loads(candidate.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise click.UsageError(f"{where} is not valid TOML: {e}") from None
    unknown = [k for k in doc if k != "gate"]
    if unknown:
        raise click.UsageError(f"{where}: section or key {unknown[0]!r} is unknown; the only section is [gate]")
    gate = doc.get("gate", {})
    if not isinstance(gate, dict):
        raise click.UsageError(f"{where}: gate must be a table [gate], got {type(gate).__name__}")
    for key, value in gate.items():
        if key not in GATE_KEYS:
            raise click.UsageError(f"{where}: [gate] key {key!r} is unknown; known keys: {list(GATE_KEYS)}")
        if key == "loose_map":
            if value not in LOOSE_MAP:
                raise click.UsageError(f"{where}: [gate] loose_map={value!r} must be one of {list(LOOSE_MAP)}")
            continue
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise click.UsageError(f"{where}: [gate] {key}={value!r} must be a list of non-empty glob strings, "
                                   f"e.g. {key} = [\"randomized_response::privacy.tight\"]")
    return gate


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
@click.option("--config", "config_path", help="Gate configuration (default: ci/gate.toml when present).")
@report_options
def check(pattern: str | None, deep: bool, seed: int, config_path: str | None, json_path: str | None,
          junit_path: str | None, markdown_path: str | None) -> None:
    """Check every bundled spec, proof and registered subsystem; exit 0 pass, 1 violation, 2 error."""
    gate = _gate_config(config_path)
    options = CheckOptions(deep=deep, pattern=pattern, seed=seed, deep_only=tuple(gate.get("deep_only", ())),
                           loose_map_warns=gate.get("loose_map", "fail") == "warn")
    from vetdp.engine.specs_provider import check_specs

    providers = [("specs", check_specs)] + load_providers()
    stages = [(name.split(":")[0].rsplit(".", 1)[-1] if ":" in name else name,
               (lambda p=provider: p(options))) for name, provider in providers]
    if pattern:
        empty = (f"-k {pattern!r} selects no check (names look like 'randomized_response::privacy.sound' or "
                 f"'randomized_response::precondition[prob_nan]', as printed by vetdp check)")
    else:
        empty = "no check ran: no spec, proof or provider was found (is vetdp installed with its specs?)"
    code = run_and_report(stages, command="vetdp " + " ".join(sys.argv[1:]), title="vetdp check",
                          json_path=json_path, junit_path=junit_path, markdown_path=markdown_path,
                          advisory=list(gate.get("advisory", [])), nothing_selected=empty)
    sys.exit(int(code))
