"""The provider that checks every bundled spec (specs/) against our implementations."""

from __future__ import annotations

from collections.abc import Iterator

from vetdp.engine.estimators import check_estimator_spec
from vetdp.engine.registry import CheckOptions
from vetdp.engine.results import CheckResult, Status
from vetdp.engine.runner import RunConfig, check_measurement_spec
from vetdp.engine.spec import EstimatorSpec, MeasurementSpec, discover_specs

__all__ = ["check_specs"]


def check_specs(options: CheckOptions) -> Iterator[CheckResult]:
    cfg = RunConfig(deep=options.deep, seed=options.seed)
    for spec in discover_specs():
        if not options.selected(spec.name) and not any(options.selected(f"{spec.name}::{c}") for c in (
                "precondition", "privacy.sound", "privacy.tight", "estimator.unbiased")):
            continue
        try:
            if isinstance(spec, MeasurementSpec):
                results = check_measurement_spec(spec, cfg=cfg)
            elif isinstance(spec, EstimatorSpec):
                results = check_estimator_spec(spec, cfg=cfg)
            else:  # pragma: no cover
                continue
            for r in results:
                if options.selected(f"{r.spec}::{r.check}"):
                    yield r
        except Exception as e:  # noqa: BLE001 - an engine failure is a result, not a crash
            yield CheckResult(spec.name, "engine", Status.ERROR, message=f"{type(e).__name__}: {e}")
