"""The provider that checks every spec of the active project (``[tool.vetdp] specs``; vetdp's own by default)
against its implementations."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from vetdp.engine.estimators import ESTIMATOR_CLAUSES, check_estimator_spec
from vetdp.engine.registry import CheckOptions
from vetdp.engine.results import CheckResult, Status
from vetdp.engine.runner import MEASUREMENT_CLAUSES, RunConfig, check_measurement_spec
from vetdp.engine.spec import EstimatorSpec, MeasurementSpec, discover_specs

__all__ = ["check_specs", "spec_check_names"]


def spec_check_names(spec: MeasurementSpec | EstimatorSpec) -> list[str]:
    """Every ``spec::check`` name a run of ``spec`` can report: its clauses and one ``precondition[<id>]`` per bad
    parameter row. Used to decide, before running anything, whether ``-k`` selects any check of the spec."""
    if isinstance(spec, MeasurementSpec):
        clauses, ids = MEASUREMENT_CLAUSES, [case.id for case in spec.bad]
        if spec.universal is None:  # search.universal is reported only for a spec that declares its exploration
            clauses = tuple(c for c in clauses if c != "search.universal")
    else:
        clauses, ids = ESTIMATOR_CLAUSES, [case[0] for case in spec.bad]
    return [f"{spec.name}::{c}" for c in (*clauses, *(f"precondition[{i}]" for i in ids))]


def check_specs(options: CheckOptions, specs: Sequence[MeasurementSpec | EstimatorSpec] | None = None
                ) -> Iterator[CheckResult]:
    """Yield the selected results of every spec of ``specs`` (default: the active project's, see
    :func:`vetdp.engine.spec.discover_specs`) whose names ``options`` selects; an engine failure is an ERROR
    result, never an exception."""
    budgets = {name: value for name, value in (("budget", options.max_paths), ("max_depth", options.max_choices),
                                               ("max_steps", options.max_steps), ("max_regions", options.max_regions),
                                               ("exact_work", options.exact_work), ("time_limit", options.time_limit))
               if value is not None}
    cfg = RunConfig(deep=options.deep, seed=options.seed,
                    loose_map=Status.WARNING if options.loose_map_warns else Status.FAIL, **budgets)
    for spec in (discover_specs() if specs is None else specs):
        if not any(options.selected(name) for name in spec_check_names(spec)):
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
