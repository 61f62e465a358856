"""``vetdp verify``: vet someone else's constructor or estimator against a bundled spec."""

from __future__ import annotations

import importlib
import importlib.util
import json
import sys
from collections.abc import Callable
from pathlib import Path

import click

from vetdp.cli.check import report_options, run_and_report

__all__ = ["verify", "load_callable", "load_opendp"]


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
