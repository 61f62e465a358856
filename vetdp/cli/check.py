"""``vetdp check`` (gate this code base) and ``vetdp verify`` (vet someone else's constructor)."""

from __future__ import annotations

import fnmatch
import importlib
import importlib.util
import json
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

__all__ = ["check", "verify", "run_and_report", "load_callable", "load_opendp", "report_options"]


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


def load_callable(ref: str) -> Callable:
    """``module:attr`` or ``path/to/file.py:attr`` -> the object. Raises click.BadParameter."""
    if ":" not in ref:
        raise click.BadParameter(f"--impl={ref!r} must look like MODULE:ATTR or path/to/file.py:ATTR")
    target, _, attr = ref.rpartition(":")
    try:
        if target.endswith(".py") or "/" in target:
            path = Path(target)
            if not path.exists():
                raise click.BadParameter(f"--impl={ref!r}: no file {target!r}")
            spec = importlib.util.spec_from_file_location(path.stem, path)
            module = importlib.util.module_from_spec(spec)
            sys.modules[path.stem] = module
            spec.loader.exec_module(module)
        else:
            if "" not in sys.path:
                sys.path.insert(0, "")
            module = importlib.import_module(target)
    except click.BadParameter:
        raise
    except Exception as e:  # noqa: BLE001
        raise click.BadParameter(f"--impl={ref!r}: importing {target!r} failed: {type(e).__name__}: {e}") from e
    try:
        return getattr(module, attr)
    except AttributeError:
        raise click.BadParameter(f"--impl={ref!r}: {target!r} has no attribute {attr!r}") from None


def load_opendp(spec_name: str) -> tuple[Callable, dict]:
    """``--impl opendp``: OpenDP's counterpart of SPEC and the RunConfig fields for opaque code."""
    try:
        from vetdp.audit.opendp_adapter import adapter_for, reproduction
    except ImportError as e:
        raise click.BadParameter(f"--impl=opendp: {e}") from None
    try:
        return adapter_for(spec_name), {"opaque": True, "reproduce": reproduction}
    except KeyError as e:
        raise click.BadParameter(f"--impl=opendp: {e.args[0]}") from None


@click.command()
@click.argument("spec_name", metavar="SPEC")
@click.option("--impl", "impl_ref", required=True,
              help="The constructor to vet: MODULE:ATTR or path/to/file.py:ATTR (same arguments as ours), or "
                   "'opendp' for OpenDP's counterpart of SPEC (audited as opaque code; needs vetdp[opendp]).")
@click.option("--params", "params_text", help="Check only this parameter set (JSON), e.g. from a reproduction.")
@click.option("--deep", is_flag=True, help="Explore further: more parameter sets, larger domains.")
@click.option("--max-examples", type=click.IntRange(1, 100_000), help="Parameter sets drawn by the search.")
@click.option("--seed", default=0, show_default=True)
@report_options
def verify(spec_name: str, impl_ref: str, params_text: str | None, deep: bool, max_examples: int | None, seed: int,
           json_path: str | None, junit_path: str | None, markdown_path: str | None) -> None:
    """Vet another implementation of a mechanism against our SPEC; exit 0 pass, 1 violation, 2 error."""
    from vetdp.engine.estimators import check_estimator_spec
    from vetdp.engine.runner import RunConfig, check_measurement_spec
    from vetdp.engine.spec import EstimatorSpec, find_spec

    try:
        spec = find_spec(spec_name)
    except KeyError as e:
        raise click.BadParameter(str(e.args[0]), param_hint="SPEC") from None
    opaque = impl_ref == "opendp"
    ctor, extra = load_opendp(spec.name) if opaque else (load_callable(impl_ref), {})
    only = None
    if params_text:
        try:
            only = json.loads(params_text)
        except json.JSONDecodeError as e:
            raise click.BadParameter(f"--params is not valid JSON: {e}") from None
        if not isinstance(only, dict):
            raise click.BadParameter("--params must be a JSON object")
    # foreign code may draw its own randomness: then it is checked as opaque code, not failed for it
    cfg = RunConfig(deep=deep, max_examples=max_examples, seed=seed, impl_ref=impl_ref, strict_messages=False,
                    fallback_opaque=not opaque, **extra)
    if isinstance(spec, EstimatorSpec):
        def stage():
            return check_estimator_spec(spec, cfg=cfg, estimator=ctor)
    else:
        def stage():
            return check_measurement_spec(spec, ctor=ctor, cfg=cfg, only_params=only)
    code = run_and_report([(spec.name, stage)], command="vetdp " + " ".join(sys.argv[1:]),
                          title=f"vetdp verify {spec.name} --impl {impl_ref}", json_path=json_path,
                          junit_path=junit_path, markdown_path=markdown_path)
    sys.exit(int(code))
