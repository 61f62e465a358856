"""``vetdp verify``: vet someone else's constructor or estimator against a bundled spec."""

from __future__ import annotations

import sys
from collections.abc import Callable

import click

from vetdp.cli.check import report_options, run_and_report, time_limit_option, work_budget_options

__all__ = ["verify", "load_callable", "load_opendp", "load_thirdparty", "THIRD_PARTY"]

THIRD_PARTY = ("opendp", "pure-ldp", "multi-freq-ldpy", "diffprivlib")  # --impl NAME (vetdp.audit.thirdparty)


def load_callable(ref: str, option: str = "--impl") -> Callable:
    """``module:attr`` or ``path/to/file.py:attr`` -> the object, imported fenced (:mod:`vetdp.fence`: a module that
    exits, raises or hangs at import is a :class:`vetdp.fence.UserCodeError`, exit 2). Raises click.BadParameter
    naming ``option`` when ``ref`` is malformed or names nothing."""
    from vetdp import fence

    try:
        return fence.load(ref, f"{option}={ref!r}:")
    except ValueError as e:
        raise click.BadParameter(f"{option}={ref!r}: {e}") from None


def load_opendp(spec_name: str) -> tuple[Callable, dict]:
    """``--impl opendp``: OpenDP's counterpart of SPEC and the RunConfig fields for opaque code."""
    from vetdp.engine.spec import find_spec

    resolved = load_thirdparty("opendp", find_spec(spec_name))
    return resolved.ctor, resolved.config


def load_thirdparty(name: str, spec):
    """``--impl NAME`` for a named third-party library (vetdp.audit.thirdparty): its Resolved counterpart of
    ``spec``; click.BadParameter (exit 2) when the library is unknown, not installed or has no counterpart."""
    from vetdp.audit.thirdparty import UnknownImplementation, resolve

    try:
        return resolve(name, spec)
    except ImportError as e:
        raise click.BadParameter(f"--impl={name}: {e}") from None
    except UnknownImplementation as e:
        raise click.BadParameter(f"--impl={name}: {e.args[0]}") from None


def _params(spec, params_text: str) -> tuple[dict, str | None]:
    """``--params`` parsed and validated against the spec: (params, None), or (params, why) for parameters of the
    right shape outside the spec's preconditions (a precondition row for the code under test); exit 2 on anything
    else the spec does not allow."""
    from vetdp.engine.spec import MeasurementSpec, OutsidePreconditions, validate_params
    from vetdp.engine.timeout import DeadlineExceeded, deadline
    from vetdp.inputs import InputError, parse_json, read_text, shown

    source = f"--params={shown(params_text)}"
    try:
        if not params_text.strip():
            raise InputError(f"{source} is empty; give a JSON object of {spec.name}'s parameters or @FILE")
        if params_text.startswith("@"):  # @FILE: the JSON is read from a file (e.g. 65536 categories)
            params_text = read_text(params_text[1:], source)
        params = parse_json(params_text, source, non_finite=True)  # NaN: a precondition row for code under test
    except InputError as e:
        raise click.BadParameter(str(e)) from None
    if not isinstance(spec, MeasurementSpec):
        return _estimator_params(spec, params), None
    try:
        validate_params(spec, params)
    except OutsidePreconditions as e:
        return params, str(e)
    except (ValueError, TypeError) as e:
        raise click.BadParameter(str(e).replace("params", "--params", 1)) from None
    try:
        with deadline(10.0):
            inputs = spec.inputs(params)
    except (ValueError, TypeError) as e:
        raise click.BadParameter(str(e).replace("params", "--params", 1)) from None
    except DeadlineExceeded:  # a safety limit: a domain that can be enumerated lists in milliseconds
        raise click.BadParameter(f"--params={params_text}: the input domain is too large to enumerate "
                                 "(listing it ran past 10 s); choose smaller parameters") from None
    if len(inputs) > 100_000:
        raise click.BadParameter(f"--params={params_text}: {len(inputs)} inputs to enumerate; at most 100000")
    return params, None


def _estimator_params(spec, params) -> dict:
    """``--params`` of an estimator spec: the mechanism's parameters and a ``dataset`` (rows as tuples)."""
    from vetdp.engine.spec import validate_params

    if not isinstance(params, dict) or not isinstance(params.get("dataset"), list) or not params["dataset"]:
        raise click.BadParameter(f"--params for {spec.name} must be a JSON object with a non-empty 'dataset' list")
    allowed = set().union(*(set(p) for p in spec.examples))
    unknown = sorted(set(params) - allowed)
    if unknown:
        raise click.BadParameter(f"--params has unknown key(s) {unknown} for {spec.name}; allowed: {sorted(allowed)}")
    mechanism_params = {k: v for k, v in params.items() if k != "dataset"}
    try:
        validate_params(spec.mechanism, mechanism_params)
    except (ValueError, TypeError) as e:
        raise click.BadParameter(str(e).replace("params", "--params", 1)) from None
    return {**params, "dataset": [tuple(r) if isinstance(r, list) else r for r in params["dataset"]]}


def _is_own_constructor(spec, ctor) -> bool:
    """Whether ``ctor`` is the spec's own constructor (whose preconditions are the spec's)."""
    try:
        return ctor is spec.load_constructor()
    except (ImportError, AttributeError, ValueError):
        return False


@click.command()
@click.argument("spec_name", metavar="SPEC")
@click.option("--impl", "impl_ref",
              help="The constructor to vet: MODULE:ATTR or path/to/file.py:ATTR (same arguments as ours), or "
                   "a library's name for its counterpart of SPEC, audited as opaque code: 'opendp' (needs "
                   "vetdp[opendp]), 'pure-ldp', 'multi-freq-ldpy' or 'diffprivlib' (need vetdp[ldp]; parameter "
                   "translation in docs/third-party-ldp.md).")
@click.option("--adapter", "adapter_ref",
              help="FILE.py:ATTR or MODULE:ATTR of an adapter (construct(params), invoke(mechanism, x), "
                   "privacy_map(mechanism, d_in)) for a mechanism with another signature or output shape.")
@click.option("--variance", "variance_ref",
              help="Estimator specs: MODULE:ATTR of the implementation's variance function (same arguments as "
                   "vetdp's), whose claims are checked instead of vetdp's own formula.")
@click.option("--params", "params_text", help="Check only this parameter set (JSON, or @FILE to read it from a file; "
              "values outside the spec's preconditions are a precondition row of code other than the spec's own), "
              "e.g. from a reproduction.")
@click.option("--deep", is_flag=True, help="Explore further: more parameter sets, larger domains.")
@click.option("--max-examples", type=click.IntRange(1, 100_000), help="Parameter sets drawn by the search.")
@click.option("--seed", type=click.IntRange(0, 2**63 - 1), default=0, show_default=True,
              help="Seeds the parameter search (another seed explores other parameter sets) and the audits.")
@click.option("--samples", type=click.IntRange(100, 10**8), help="Samples per audited input when the code draws "
              "its own randomness (more samples see smaller deviations).")
@click.option("--strict", is_flag=True, help="The rules vetdp check applies to its own code: a sound but loose map "
              "(privacy.tight) fails instead of warning, a precondition message must name the parameter, and "
              "randomness drawn outside vetdp's primitives fails randomness.through_primitives instead of being "
              "audited as opaque code.")
@work_budget_options
@time_limit_option
@click.option("--workers", type=click.IntRange(1, 1024), default=None,
              help="Evaluate the parameter sets on a local Dask cluster of N worker processes (extra vetdp[dask]); "
                   "the report is the serial one; the time limit holds on workers too (docs/dask.md).")
@click.option("--scheduler", default=None, metavar="ADDRESS",
              help="Evaluate the parameter sets on an existing Dask cluster, e.g. tcp://10.0.0.5:8786.")
@report_options
def verify(spec_name: str, impl_ref: str | None, adapter_ref: str | None, variance_ref: str | None,
           params_text: str | None, deep: bool, max_examples: int | None, seed: int, samples: int | None,
           strict: bool, max_paths: int, max_choices: int, max_steps: int, max_regions: int, exact_work: int,
           time_limit: float,
           workers: int | None,
           scheduler: str | None, json_path: str | None, junit_path: str | None, markdown_path: str | None) -> None:
    """Vet another implementation of a mechanism against our SPEC.

    Exit 0: every clause passed (warnings allowed); 1: a violation or an undecided clause (a work budget ran
    out: --max-paths, --max-steps, --max-choices, --exact-work); 2: bad usage, an engine error, or a clause stopped
    by --time-limit.
    """
    from vetdp.engine.adapter import adapter_builder
    from vetdp.engine.estimators import check_estimator_spec
    from vetdp.engine.results import Status
    from vetdp.engine.runner import RunConfig, check_measurement_spec
    from vetdp.engine.spec import EstimatorSpec, find_spec

    try:
        spec = find_spec(spec_name)
    except KeyError as e:
        raise click.BadParameter(str(e.args[0]), param_hint="SPEC") from None
    if (impl_ref is None) == (adapter_ref is None) and not (isinstance(spec, EstimatorSpec) and variance_ref):
        raise click.UsageError("give exactly one of --impl (a constructor with our signature) or --adapter")
    if variance_ref and not isinstance(spec, EstimatorSpec):
        raise click.BadParameter(f"--variance applies to estimator specs; {spec.name!r} is a mechanism spec")
    if adapter_ref and isinstance(spec, EstimatorSpec):
        raise click.BadParameter(f"--adapter applies to mechanism specs; {spec.name!r} is an estimator spec")
    only, outside = _params(spec, params_text) if params_text is not None else (None, None)
    extra: dict = {}
    ctor = None
    if adapter_ref:
        try:
            extra["build"] = adapter_builder(load_callable(adapter_ref, option="--adapter"))
        except TypeError as e:
            raise click.BadParameter(str(e), param_hint="--adapter") from None
        target = f"--adapter {adapter_ref}"
    elif impl_ref in THIRD_PARTY:
        resolved = load_thirdparty(impl_ref, spec)
        if only is not None and outside is None:  # outside the preconditions: a precondition row, not translated
            from vetdp.audit.thirdparty import check_translatable
            try:
                check_translatable(resolved, only)
            except (ValueError, TypeError) as e:
                raise click.BadParameter(f"{e} (no {impl_ref} counterpart of these parameters)",
                                         param_hint="--params") from None
        ctor, extra, spec = resolved.ctor, dict(resolved.config), resolved.spec
        target = f"--impl {impl_ref}"
    elif impl_ref is not None:
        ctor = load_callable(impl_ref)
        target = f"--impl {impl_ref}"
    else:
        target = ""
    if outside is not None and ctor is not None and _is_own_constructor(spec, ctor):
        # our own constructor refuses these parameters by its preconditions: nothing to vet there
        raise click.BadParameter(outside.replace("params", "--params", 1))
    variance = load_callable(variance_ref, option="--variance") if variance_ref else None
    if variance is not None and "variance" not in spec.claim_calls:
        raise click.BadParameter(f"spec {spec.name!r} makes no variance claim; --variance does not apply",
                                 param_hint="--variance")
    if variance_ref:
        target += f" --variance {variance_ref}"
    if samples is not None:
        extra["audit_samples"] = samples
    # foreign code may draw its own randomness: then it is checked as opaque code, not failed for it
    cfg = RunConfig(deep=deep, max_examples=max_examples, seed=seed, impl_ref=target.strip(), strict_messages=strict,
                    fallback_opaque=not (extra.get("opaque", False) or strict), reference_law=True,
                    loose_map=Status.FAIL if strict else Status.WARNING, budget=max_paths, max_depth=max_choices,
                    max_steps=max_steps, max_regions=max_regions, exact_work=exact_work, time_limit=time_limit,
                    **extra)
    if (workers is not None or scheduler is not None) and isinstance(spec, EstimatorSpec):
        raise click.UsageError("--workers/--scheduler apply to mechanism specs")
    if workers is not None and scheduler is not None:
        raise click.UsageError("give --workers N or --scheduler ADDRESS, not both")
    from vetdp.distributed import task_runner

    try:
        with task_runner(workers, scheduler) as runner:
            if isinstance(spec, EstimatorSpec):
                def stage():
                    return check_estimator_spec(spec, cfg=cfg, estimator=ctor, variance=variance, only_params=only)
            else:
                def stage():
                    if outside is not None:
                        return check_measurement_spec(spec, ctor=ctor, cfg=cfg, outside=(only, outside))
                    return check_measurement_spec(spec, ctor=ctor, cfg=cfg, only_params=only,
                                                  runner=None if workers is None and scheduler is None else runner)
            code = run_and_report([(spec.name, stage)], command="vetdp " + " ".join(sys.argv[1:]),
                                  title=f"vetdp verify {spec.name} {target.strip()}", json_path=json_path,
                                  junit_path=junit_path, markdown_path=markdown_path, progress_lines=True)
    except (ImportError, ValueError) as e:  # Dask missing, or the scheduler cannot be reached
        raise click.UsageError(str(e)) from None
    sys.exit(int(code))
