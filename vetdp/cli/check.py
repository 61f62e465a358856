"""``vetdp check`` (gate this code base) and ``vetdp verify`` (vet someone else's constructor)."""

from __future__ import annotations

import contextlib
import functools
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from vetdp import progress
from vetdp.cli import ExitCode, Real, output_path, write_output
from vetdp.project import PROOFS_PROVIDER, Project, ProjectError, active_project, project_scope, read_gate_file

if TYPE_CHECKING:  # the engine and rich load when a command runs, not for --help
    from vetdp.engine.registry import CheckOptions
    from vetdp.engine.results import CheckResult

__all__ = ["check", "run_and_report", "report_options", "project_option", "load_refs", "dask_options",
           "runner_scope", "work_budget_options", "time_limit_option", "removed_time_budget",
           "safety_limit_option"]


def report_options(f: Callable) -> Callable:
    """The shared --json/--junit/--markdown options (their folders are created before any work is done)."""
    f = output_path("--markdown", "markdown_path", help="Write a Markdown report to this file.")(f)
    f = output_path("--junit", "junit_path", help="Write a JUnit XML report to this file.")(f)
    f = output_path("--json", "json_path", help="Write a JSON report (schema_version 1) to this file.")(f)
    return f


def removed_time_budget(*replacements: str) -> Callable[[Callable], Callable]:
    """A hidden ``--time-budget`` that refuses itself (exit 2), naming what replaced it: verdicts are decided by work
    budgets now, so a wall-clock budget that used to decide them is not silently turned into something else."""
    def refuse(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
        if value is not None:
            raise click.BadParameter(
                f"--time-budget={value} was removed: verdicts are decided by work budgets, never by seconds, so that "
                f"a loaded runner and an idle laptop agree; use {' or '.join(replacements)} (see README: Budgets)",
                ctx=ctx, param=param)

    return click.option("--time-budget", hidden=True, expose_value=False, callback=refuse, is_eager=True)


def work_budget_options(f: Callable) -> Callable:
    """The enumeration's work budgets: ``--max-paths`` (runs of the code per input and pass), ``--max-choices``
    (random choices per run) and ``--max-steps`` (choices per input in all), and ``--exact-work`` (the exact
    arithmetic of one clause on a product's laws). Running out of one leaves a clause undecided, with the options
    named."""
    from vetdp.engine.budgets import (
        BEST_FIRST_MAX_CHOICES,
        DEFAULT_BUDGET,
        DEFAULT_EXACT_WORK,
        DEFAULT_MAX_REGIONS,
        DEFAULT_MAX_STEPS,
    )

    f = click.option("--exact-work", type=click.IntRange(1, 10**15), default=DEFAULT_EXACT_WORK, show_default=True,
                     help="Word operations of one clause's exact rational arithmetic on a product's laws (the worst "
                     "pair's programme, Rényi moments, privacy-loss distributions): an operation on rationals of n "
                     "and m 64-bit words counts n·m + 1. Past it the clause is undecided.")(f)
    f = click.option("--max-regions", type=click.IntRange(0, 10**9), default=DEFAULT_MAX_REGIONS, show_default=True,
                     help="Runs of the code on symbolic parameters per pass over one base of a spec's universal "
                     "exploration (search.universal): each decides a region of the float parameters for every value "
                     "in it, or splits it; regions beyond stay open and are sampled. 0: no universal exploration.")(f)
    f = click.option("--max-steps", type=click.IntRange(1, 10**12), default=DEFAULT_MAX_STEPS, show_default=True,
                     help="Random choices made per input over all runs of the enumeration (replayed prefixes "
                     "included): its total work. A deep tree costs about depth²/2.")(f)
    f = click.option("--max-choices", type=click.IntRange(1, 10**9), default=BEST_FIRST_MAX_CHOICES,
                     show_default=True, help="Random choices one run of the code may make while enumerating; the "
                     "probability of a deeper run stays unexplored (code that loops forever drawing randomness is "
                     "decided here, in work: diverges or undecided).")(f)
    f = click.option("--max-paths", type=click.IntRange(1, 10**9), default=DEFAULT_BUDGET, show_default=True,
                     help="Runs of the code per input (and enumeration pass) before its law is reported undecided "
                     "with the unexplored mass.")(f)
    return f


def _fence_limit(ctx: click.Context, param: click.Parameter, value: float) -> float:
    from vetdp import fence

    fence.set_time_limit(value)  # the user's code imported and called by this command runs under it too
    return value


def safety_limit_option(help: str) -> Callable[[Callable], Callable]:  # noqa: A002 - click's own keyword
    """``--time-limit SECONDS`` (default :data:`vetdp.engine.budgets.DEFAULT_TIME_LIMIT`): a wall-clock safety net,
    which also bounds every import and call of the user's code (:mod:`vetdp.fence`); when it fires the work is
    stopped (exit 2), never a verdict."""
    from vetdp.engine.budgets import DEFAULT_TIME_LIMIT

    return click.option("--time-limit", type=Real(1, 10**6), default=DEFAULT_TIME_LIMIT, show_default=True,
                        callback=_fence_limit, help=help)


def time_limit_option(f: Callable) -> Callable:
    """``--time-limit SECONDS``: the wall-clock safety net per clause and parameter set (a hang that draws no
    randomness); when it fires the clause is stopped (exit 2), never a verdict. ``--time-budget`` is refused."""
    f = safety_limit_option("Wall-clock seconds one clause may take on one parameter set (and importing each module "
                            "you name). A safety net for code that hangs without drawing randomness: when it fires "
                            "the clause is 'stopped' and the command exits 2; verdicts come from the work budgets "
                            "only.")(f)
    return removed_time_budget("--max-paths/--max-steps/--max-choices (work)", "--time-limit SECONDS (safety)")(f)


def run_and_report(stages: Iterable[tuple[str, Callable[[], Iterable[CheckResult]]]], *, command: str, title: str,
                   json_path: str | None, junit_path: str | None, markdown_path: str | None,
                   advisory: list[str] = (), nothing_selected: str = "no check ran", true_label: str = "true",
                   progress_lines: bool | tuple[str, ...] = False) -> int:
    """Run every stage with progress shown (:mod:`vetdp.progress`), print the table and failures, write reports; the
    exit code.

    ``advisory``: globs over ``spec::check`` whose failures are reported but do not fail the gate.
    ``true_label`` names the ``true`` column (an audit's is a confidence lower bound, not a true value).
    Progress goes to standard error: a bar on a terminal; when it is not one, a line per step with
    ``progress_lines`` (``verify``; a tuple of step names: those steps only, ``check``: per stage and spec), else
    nothing.
    A run that produced no result at all checked nothing: it prints ``nothing_selected`` and exits 2, never 0.
    """
    from rich.console import Console

    from vetdp.engine import report
    from vetdp.engine.registry import glob_matches
    from vetdp.engine.results import CheckResult, Status
    from vetdp.fence import UserCodeError

    out = Console()
    if "-" in (json_path, junit_path, markdown_path):  # a report on standard output: the table goes to stderr
        out = Console(stderr=True)
    if not out.is_terminal:  # a log or a CI page: wide rows rather than folded ones
        out = Console(width=200, stderr=out.stderr)
    results: list[CheckResult] = []
    stages = list(stages)
    with progress.shown(title, lines=progress_lines):
        for i, (label, stage) in enumerate(stages):
            progress.step("stage", i + 1, len(stages), label)
            t0 = time.perf_counter()
            try:
                for r in stage():
                    results.append(r)
                    progress.note(r.check)
            except UserCodeError as e:  # the user's code, named by it: no verdict, exit 2
                results.append(CheckResult(label, "engine", Status.STOPPED if e.stopped else Status.ERROR,
                                           message=str(e), seconds=time.perf_counter() - t0))
            except Exception as e:  # noqa: BLE001 - report the engine failure, exit 2
                results.append(CheckResult(label, "engine", Status.ERROR, message=f"{type(e).__name__}: {e}",
                                           seconds=time.perf_counter() - t0))
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

    # an engine failure, or the wall-clock safety limit (--time-limit) ending a check: no verdict, exit 2
    if any(r.status in (Status.ERROR, Status.STOPPED) for r in results):
        return ExitCode.ERROR
    if any(r.status.is_failure and blocking(r) for r in results):
        return ExitCode.VIOLATION
    return ExitCode.OK


def dask_options(f: Callable) -> Callable:
    """The shared ``--workers N`` / ``--scheduler ADDRESS`` options (optional extra vetdp[dask]); see
    :func:`runner_scope`."""
    f = click.option("--scheduler", default=None, metavar="ADDRESS",
                     help="Run on an existing Dask cluster, e.g. tcp://10.0.0.5:8786 (see docs/dask.md).")(f)
    f = click.option("--workers", type=click.IntRange(1, 1024), default=None,
                     help="Run on a local Dask cluster of N worker processes (extra vetdp[dask]); the report is the "
                          "serial one.")(f)
    return f


@contextlib.contextmanager
def runner_scope(workers: int | None, scheduler: str | None) -> Iterator[Any]:
    """The :class:`vetdp.distributed.TaskRunner` of ``--workers``/``--scheduler`` for the block (serial without
    either); both at once, Dask missing or a scheduler that cannot be reached is a usage error (exit 2)."""
    from vetdp.distributed import task_runner

    if workers is not None and scheduler is not None:
        raise click.UsageError("give --workers N or --scheduler ADDRESS, not both")
    with contextlib.ExitStack() as stack:
        try:
            runner = stack.enter_context(task_runner(workers, scheduler))
        except (ImportError, ValueError) as e:  # Dask missing, or the scheduler cannot be reached
            raise click.UsageError(str(e)) from None
        yield runner


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
    """("module:function", the function) for each provider reference, imported fenced (:mod:`vetdp.fence`); a usage
    error names one that cannot be loaded."""
    from vetdp import fence

    out = []
    for ref in refs:
        try:
            out.append((ref, fence.load(ref, f"[tool.vetdp] providers {ref!r}:")))
        except ValueError as e:
            raise click.UsageError(f"[tool.vetdp] providers: {ref!r} cannot be loaded: {e}") from None
    return out


def z3_rlimit_option(f: Callable) -> Callable:
    """``--z3-rlimit N``: z3 resource units per obligation query (a count of z3's work, never seconds)."""
    from vetdp.obligations.limits import DEEP_Z3_RLIMIT, DEFAULT_Z3_RLIMIT, RLIMIT_OPTION

    return click.option(RLIMIT_OPTION, "z3_rlimit", type=click.IntRange(min=1), default=None, metavar="N",
                        help=f"z3 resource units per proof obligation query, a count of z3's work (never seconds), "
                             f"so the verdict is the same on any machine (default {DEFAULT_Z3_RLIMIT:_}, "
                             f"{DEEP_Z3_RLIMIT:_} with --deep); an obligation that spends it is undecided.")(f)


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


def _needed_paths(project: Project, proofs: bool) -> tuple[Path, ...]:
    """The project's paths (those that exist here) that a piece of its check reads: its root and pythonpath unless it
    is the bundled default, and the proofs directory for the proofs."""
    paths = [] if project.bundled else [project.root, *project.pythonpath]
    if proofs and project.proofs_dir is not None:
        paths.append(project.proofs_dir)
    return tuple(Path(p) for p in paths if Path(p).exists())


@contextlib.contextmanager
def _project_on_worker(project: Project, needed: tuple[Path, ...]) -> Iterator[None]:
    """``project`` is the active project for the block, wherever this runs (a Dask worker has no ``--project`` of
    its own). A path of ``needed`` missing here (another machine) is an error that says so."""
    from vetdp import project as projects

    missing = [p for p in needed if not p.exists()]
    if missing:
        import socket

        raise FileNotFoundError(f"{missing[0]} does not exist on {socket.gethostname()}: a check on a multi-machine "
                                "cluster needs the project at the same path on every machine (see docs/dask.md)")
    projects._CHOSEN.append(project)
    try:
        project.activate()
        yield
    finally:
        projects._CHOSEN.remove(project)


def _check_piece(project: Project, options: CheckOptions, piece: tuple[str, Any, tuple[Path, ...]]
                 ) -> tuple[list[CheckResult], str | None]:
    """One piece of a check run, as a task a :class:`vetdp.distributed.TaskRunner` can run anywhere: ``("spec",
    spec, needed)``, ``("proofs", None, needed)`` or ``("provider", function, needed)``, ``needed`` the project's
    paths it reads (see :func:`_needed_paths`). Returns the results and, when the provider raised after them,
    ``"Type: message"`` (a spec's engine failure is already one of its results)."""
    from vetdp.distributed import draws_independent_of_loaded_modules
    from vetdp.engine.registry import run_provider
    from vetdp.engine.specs_provider import check_specs
    from vetdp.obligations.provider import check_proofs

    kind, what, needed = piece
    out: list[CheckResult] = []
    with _project_on_worker(project, needed), draws_independent_of_loaded_modules():
        source = (check_specs(options, [what]) if kind == "spec" else check_proofs(options) if kind == "proofs"
                  else run_provider(_ref_of(what), what, options))
        try:
            for r in source:
                out.append(r)
        except Exception as e:  # noqa: BLE001 - reported as the stage's engine error, as run_and_report does
            return out, f"{type(e).__name__}: {e}"
    return out, None


def _require_proofs() -> None:
    """A usage error (exit 2) when the active project has no proofs to check (no proofs directory, an empty one, or
    none of a spec'd module), as the proofs stage would report after all the other checks."""
    from vetdp.obligations.pinning import Pinning, ProofError
    from vetdp.obligations.provider import spec_modules

    try:
        Pinning().require_proofs(spec_modules())
    except ProofError as e:
        raise click.UsageError(str(e)) from None


def _provider_label(ref: str) -> str:
    """How a provider's stage is named: its module's last name, or the package's for a module called provider
    (``vetdp.accounting.provider:check_accounting`` -> ``accounting``)."""
    parts = ref.split(":")[0].split(".")
    return parts[-2] if parts[-1] == "provider" and len(parts) > 1 else parts[-1]


def _ref_of(fn: Any) -> str:
    """``module:name`` of a provider function (its reference in ``[tool.vetdp] providers``)."""
    return f"{getattr(fn, '__module__', '?')}:{getattr(fn, '__qualname__', type(fn).__name__)}"


def _check_stages(project: Project, options: CheckOptions, specs: list, runner: Any
                  ) -> list[tuple[str, Callable[[], Iterable[CheckResult]]]]:
    """The stages of ``vetdp check``: every spec (one task each), the proofs, each provider; all submitted to
    ``runner`` at once, each stage yielding its results in the serial order."""
    from vetdp.engine.results import CheckResult, Status
    from vetdp.engine.specs_provider import spec_check_names

    selected = [s for s in specs if any(options.selected(name) for name in spec_check_names(s))]
    providers = [(_provider_label(ref), fn) for ref, fn in load_refs(r for r in project.providers
                                                                     if r != PROOFS_PROVIDER)]
    plain, proofs = _needed_paths(project, proofs=False), _needed_paths(project, proofs=True)
    # submitted proofs first (usually the longest piece, so that it does not start last), consumed in serial order
    pieces = ([("proofs", None, proofs)] + [("spec", s, plain) for s in selected]
              + [("provider", fn, plain) for _, fn in providers])
    handles = runner.handles(functools.partial(_check_piece, project, options), pieces)
    proof_handle, spec_handles, provider_handles = handles[0], handles[1:len(selected) + 1], \
        handles[len(selected) + 1:]

    def specs_stage() -> Iterator[CheckResult]:
        for i, (spec, handle) in enumerate(zip(selected, spec_handles, strict=True)):
            progress.step("spec", i + 1, len(selected), spec.name)
            t0 = time.perf_counter()
            try:
                results, _ = handle()
            except Exception as e:  # noqa: BLE001 - the task itself failed (a worker died, a file is missing)
                results = [CheckResult(spec.name, "engine", Status.ERROR, message=f"{type(e).__name__}: {e}",
                                       seconds=time.perf_counter() - t0)]
            yield from results

    def stage(label: str, handle: Callable[[], Any]) -> tuple[str, Callable[[], Iterator[CheckResult]]]:
        def run() -> Iterator[CheckResult]:
            t0 = time.perf_counter()
            results, error = handle()
            yield from results
            if error is not None:
                yield CheckResult(label, "engine", Status.ERROR, message=error, seconds=time.perf_counter() - t0)
        return label, run

    return ([("specs", specs_stage), stage("proofs", proof_handle)]
            + [stage(label, h) for (label, _), h in zip(providers, provider_handles, strict=True)])


@click.command()
@click.option("-k", "pattern", callback=_pattern,
              help="Run only checks whose 'spec::check' name contains PATTERN (or matches the glob); selecting "
                   "nothing is an error (exit 2).")
@click.option("--deep", is_flag=True, help="Explore further: more parameter sets, larger domains.")
@click.option("--seed", default=0, show_default=True, help="Seed for the reproducible parts of the run.")
@z3_rlimit_option
@work_budget_options
@time_limit_option
@click.option("--config", "config_path",
              help="Gate configuration file with a [gate] table (default: the project's [tool.vetdp] gate).")
@project_option
@dask_options
@report_options
def check(pattern: str | None, deep: bool, seed: int, z3_rlimit: int | None, max_paths: int, max_choices: int,
          max_steps: int, max_regions: int, exact_work: int, time_limit: float, config_path: str | None,
          project_dir: str | None,
          workers: int | None,
          scheduler: str | None, json_path: str | None, junit_path: str | None, markdown_path: str | None) -> None:
    """Check every spec, proof and provider of the project; exit 0 pass, 1 violation, 2 error or stopped.

    The project is the nearest pyproject.toml with a [tool.vetdp] table (or --project DIR); without one, vetdp's
    own bundled specs. With --workers N or --scheduler ADDRESS the specs, the proofs and each provider run as
    separate tasks on Dask, with the same report (docs/dask.md).
    """
    from vetdp.engine.registry import CheckOptions
    from vetdp.engine.spec import discover_specs

    try:
        with project_scope(project_dir) as project:
            gate = _gate_config(config_path, project)
            options = CheckOptions(deep=deep, pattern=pattern, seed=seed, deep_only=tuple(gate.get("deep_only", ())),
                                   loose_map_warns=gate.get("loose_map", "fail") == "warn", z3_rlimit=z3_rlimit,
                                   max_paths=max_paths, max_choices=max_choices, max_steps=max_steps,
                                   max_regions=max_regions, exact_work=exact_work,
                                   time_limit=time_limit)
            specs = discover_specs(project)  # a spec module that cannot be imported is a usage error, up front
            load_refs(r for r in project.providers if r != PROOFS_PROVIDER)  # a broken provider too
            if options.selected("proofs::proofs.found"):  # no proofs to check: say so now, not after every spec
                _require_proofs()
            if pattern:
                empty = (f"-k {pattern!r} selects no check (names look like 'randomized_response::privacy.sound' "
                         f"or 'randomized_response::precondition[prob_nan]', as printed by vetdp check)")
            else:
                empty = f"no check ran: {project.label} has no spec, proof or provider"
            with runner_scope(workers, scheduler) as runner:
                code = run_and_report(_check_stages(project, options, list(specs), runner),
                                      command="vetdp " + " ".join(sys.argv[1:]), title="vetdp check",
                                      json_path=json_path, junit_path=junit_path, markdown_path=markdown_path,
                                      advisory=list(gate.get("advisory", [])), nothing_selected=empty,
                                      progress_lines=("stage", "spec"))
    except ProjectError as e:
        raise click.UsageError(str(e)) from None
    sys.exit(int(code))
