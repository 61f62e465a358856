"""``vetdp audit``: a black-box lower bound on a sampler's privacy loss, with confidence 1 − β."""

from __future__ import annotations

import inspect
import json
import shlex
import sys
import time
from typing import Any

import click

from vetdp.cli import Integer, Real
from vetdp.cli.check import report_options, run_and_report, safety_limit_option
from vetdp.cli.verify import load_callable, load_opendp

__all__ = ["audit"]

CHECK = "audit.epsilon_lower_bound"


def _json_arg(name: str, text: str | None) -> Any:
    """The JSON value of option ``name`` (strict: vetdp.inputs.parse_json), None when not given; exit 2 naming it."""
    from vetdp.inputs import InputError, parse_json, shown

    if text is None:
        return None
    try:
        return parse_json(text, f"{name}={shown(text)}")
    except InputError as e:
        raise click.BadParameter(str(e)) from None


def _input(v: Any) -> Any:
    return tuple(v) if isinstance(v, list) else v


def _build(mechanism: str, impl: str | None, params: dict) -> tuple[Any, Any, str]:
    """(measurement, spec, label) for a bundled spec name, built with our constructor or ``impl`` (fenced: a
    constructor that exits or hangs is a :class:`vetdp.fence.UserCodeError`)."""
    from vetdp import fence
    from vetdp.engine.spec import MeasurementSpec, check_size, find_spec

    try:
        spec = find_spec(mechanism)
    except KeyError as e:
        raise click.BadParameter(str(e.args[0]), param_hint="--mechanism") from None
    if not isinstance(spec, MeasurementSpec):
        raise click.BadParameter(f"--mechanism={mechanism!r} is an estimator, not a mechanism")
    if impl is None:
        ctor = spec.load_constructor()
    elif impl == "opendp":
        ctor = load_opendp(spec.name)[0]
    else:
        ctor = load_callable(impl)
    defaults = _defaults(spec.load_constructor())
    allowed = set().union(*(set(p) for p in spec.examples), defaults)
    unknown = sorted(set(params) - allowed)
    if unknown:
        raise click.BadParameter(f"unknown key(s) {unknown} for {mechanism}; allowed: {sorted(allowed)}",
                                 param_hint="--params")
    try:
        check_size(spec, params)
    except ValueError as e:
        raise click.BadParameter(str(e).replace("params: ", "", 1), param_hint="--params") from None
    params = dict(params)
    while True:
        try:
            with fence.fenced(f"--impl={impl!r}:" if impl else f"--mechanism={mechanism!r}:", "building it",
                              exceptions=False):
                built = spec.build(ctor, params)
            return built, spec, f"{mechanism}" + (f" ({impl})" if impl else "")
        except KeyError as e:
            key = e.args[0] if e.args else None
            if key in defaults and key not in params:  # the constructor has a default: use it, as a caller would
                params[key] = defaults[key]
                continue
            raise click.BadParameter(f"lacks {key!r} for {mechanism}", param_hint="--params") from None
        except (ValueError, TypeError) as e:
            raise click.BadParameter(f"rejected by the constructor: {e}", param_hint="--params") from None


def _defaults(ctor: Any) -> dict[str, Any]:
    """The keyword defaults of our constructor (so --params may leave out what a caller may leave out)."""
    try:
        return {name: p.default for name, p in inspect.signature(ctor).parameters.items()
                if p.default is not inspect.Parameter.empty}
    except (TypeError, ValueError):
        return {}


@click.command()
@click.option("--sampler", "sampler_ref", help="MODULE:ATTR of a callable sampler(x, n) -> n outputs, or of a "
              "vetdp Measurement (its batch form is used when it has one).")
@click.option("--mechanism", help="A bundled spec name (e.g. randomized_response_bool), built with --params.")
@click.option("--params", "params_text", help="JSON parameters of --mechanism, as in its spec.")
@click.option("--impl", "impl_ref", help="With --mechanism: 'opendp' or MODULE:ATTR of a constructor with our "
              "arguments (default: ours).")
@click.option("--x", "x_text", help="JSON input x (lists become tuples).")
@click.option("--x-prime", "xp_text", help="JSON neighbouring input x'.")
@click.option("--inputs", "inputs_text", help="JSON list of candidate inputs: the pair is searched (on the "
              "selection split). Default with --mechanism: the spec's inputs.")
@click.option("--epsilon", type=Real(0, None), help="Claimed ε in [0, inf) (default with a Measurement: its map(1)).")
@click.option("--delta", type=click.FloatRange(0, 1, max_open=True), default=0.0, show_default=True,
              help="Claimed δ (for an (ε, δ) claim).")
@click.option("--samples", type=Integer(4, 10**12, why="at 10^7 samples/s that is over a day per input"),
              default=100_000, show_default=True,
              help="Samples per input: 1/4 rank events, 1/4 choose one, 1/2 bound it (drawn in chunks of "
                   "50000; memory holds one chunk and the tallies).")
@click.option("--beta", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.05, show_default=True,
              help="The bound holds with confidence 1 - beta.")
@click.option("--seed", type=int, help="Draw vetdp randomness from seeded sources, one per chunk of samples "
              "(reproducible, also with --workers; not for production). Code outside vetdp (e.g. OpenDP) ignores it.")
@safety_limit_option("Wall-clock seconds one call of the sampler (a chunk of at most 50000 samples) may take, and "
                     "importing each module named: a safety net for a sampler that hangs ('stopped', exit 2; serial "
                     "runs only, as Dask draws chunks in worker threads).")
@click.option("--workers", type=Integer(1, 1024), default=None,
              help="Draw the chunks on a local Dask cluster of N worker processes (extra vetdp[dask]).")
@click.option("--scheduler", default=None, metavar="ADDRESS",
              help="Draw the chunks on an existing Dask cluster, e.g. tcp://10.0.0.5:8786 (docs/dask.md).")
@report_options
def audit(sampler_ref: str | None, mechanism: str | None, params_text: str | None, impl_ref: str | None,
          x_text: str | None, xp_text: str | None, inputs_text: str | None, epsilon: float | None, delta: float,
          samples: int, beta: float, seed: int | None, time_limit: float, workers: int | None, scheduler: str | None,
          json_path: str | None, junit_path: str | None, markdown_path: str | None) -> None:
    """Audit a sampler: lower-bound its ε with confidence 1 − β; exit 0 pass, 1 violation, 2 error.

    A violation is reported only when the lower bound exceeds the claimed ε.
    """
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from vetdp import fence
    from vetdp.audit.driver import as_sampler, run_audit
    from vetdp.core.measurement import Measurement
    from vetdp.distributed import task_runner
    from vetdp.engine.results import CheckResult, Status

    if workers is not None and scheduler is not None:
        raise click.UsageError("give --workers N or --scheduler ADDRESS, not both")
    if (sampler_ref is None) == (mechanism is None):
        raise click.UsageError("give exactly one of --sampler MODULE:ATTR and --mechanism NAME")
    params = _json_arg("--params", params_text) or {}
    if not isinstance(params, dict):
        raise click.BadParameter("--params must be a JSON object")
    spec = None
    if mechanism is not None:
        target, spec, label = _build(mechanism, impl_ref, params)
    else:
        if impl_ref or params_text:
            raise click.UsageError("--impl and --params go with --mechanism, not --sampler")
        target = load_callable(sampler_ref, "--sampler")
        label = sampler_ref
    try:
        sampler = fence.Fenced(as_sampler(target), f"--sampler={sampler_ref!r}:" if sampler_ref else
                               f"--mechanism={mechanism!r}" + (f" --impl={impl_ref!r}" if impl_ref else "") + ":",
                               seconds=time_limit)
    except TypeError as e:
        raise click.BadParameter(str(e), param_hint="--sampler") from None
    if inputs_text is not None:
        inputs = _json_arg("--inputs", inputs_text)
        if not isinstance(inputs, list) or len(inputs) < 2:
            raise click.BadParameter("must be a JSON list of at least two inputs", param_hint="--inputs")
        inputs = [_input(v) for v in inputs]
        if len({repr(v) for v in inputs}) < 2:
            raise click.BadParameter("holds one distinct input only: an audit needs two different inputs",
                                     param_hint="--inputs")
    elif x_text is not None and xp_text is not None:
        inputs = [_input(_json_arg("--x", x_text)), _input(_json_arg("--x-prime", xp_text))]
        if inputs[0] == inputs[1]:
            raise click.UsageError(f"--x={x_text!r} and --x-prime={xp_text!r} are the same input: the loss between "
                                   "an input and itself is 0, so the audit could never find anything")
    elif spec is not None and x_text is None and xp_text is None:
        inputs = list(spec.inputs(params))
    else:
        raise click.UsageError("give --x and --x-prime, or --inputs")
    if epsilon is None:
        if not isinstance(target, Measurement):
            raise click.UsageError("--epsilon is required for a plain sampler")
        epsilon = target.map(1)
    options = [("--sampler", sampler_ref), ("--mechanism", mechanism), ("--params", params_text),
               ("--impl", impl_ref), ("--x", x_text), ("--x-prime", xp_text), ("--inputs", inputs_text),
               ("--epsilon", repr(epsilon)), ("--delta", repr(delta) if delta else None), ("--samples", str(samples)),
               ("--beta", repr(beta)), ("--seed", None if seed is None else str(seed)),
               ("--workers", None if workers is None else str(workers)), ("--scheduler", scheduler)]
    command = "vetdp audit " + shlex.join([t for name, value in options if value is not None for t in (name, value)])
    err = Console(stderr=True)
    t0 = time.perf_counter()
    try:
        with Progress(TextColumn("sampling"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=err,
                      transient=True, disable=not err.is_terminal) as progress:
            task = progress.add_task("sampling", total=samples * len(inputs))
            with task_runner(workers, scheduler) as runner:
                r = run_audit(sampler, inputs, epsilon, delta, samples, beta,
                              progress=lambda k: progress.advance(task, k), seed=seed, runner=runner)
    except ImportError as e:
        raise click.UsageError(str(e)) from None
    except fence.UserCodeError as e:  # the sampler raised, exited or hung: no verdict, exit 2
        result = CheckResult(label, CHECK, Status.STOPPED if e.stopped else Status.ERROR, message=str(e),
                             seconds=time.perf_counter() - t0)
    except (ValueError, TypeError) as e:
        raise click.UsageError(str(e)) from None
    except Exception as e:  # noqa: BLE001 - the sampler failed: an engine error, exit 2
        result = CheckResult(label, CHECK, Status.ERROR, message=f"{type(e).__name__}: {e}",
                             seconds=time.perf_counter() - t0)
    else:
        repro = command
        if r.violation and impl_ref == "opendp" and spec is not None:
            from vetdp.audit._opendp_repro import audit_snippet

            repro += "\n" + audit_snippet(spec.name, params, r)
        result = CheckResult(
            label, CHECK, Status.FAIL if r.violation else Status.PASS,
            subject=json.dumps({"params": params, "x": repr(r.x), "x_prime": repr(r.x_prime)}),
            claimed=r.claimed_epsilon, true=r.epsilon_lower, slack=r.claimed_epsilon - r.epsilon_lower,
            witness={"x": repr(r.x), "x_prime": repr(r.x_prime), "statistic": r.statistic,
                     "event": sorted(map(repr, r.event))[:50], "count_p": r.count_p, "count_q": r.count_q,
                     "samples_test": r.samples_test, "beta": r.beta, "delta": r.delta},
            repro=repro if r.violation else None, message=r.describe(), seconds=time.perf_counter() - t0)
    code = run_and_report([(label, lambda: [result])], command=command,
                          title=f"vetdp audit (confidence {1 - beta:g}, β={beta:g})", json_path=json_path,
                          junit_path=junit_path, markdown_path=markdown_path, true_label="epsilon lower bound")
    sys.exit(int(code))
