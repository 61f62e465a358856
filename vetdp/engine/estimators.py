"""Checks an estimator spec: exact unbiasedness and exact variance/MSE claims.

The mechanism's own function is enumerated on every input of the spec's small dataset;
the exact joint distribution of the n answers is the product of these; the estimator's
own code runs on every joint outcome (in exact mode), so E[estimate] and
E[(estimate − truth)²] are exact rationals compared with the truth and with the
implementation's variance/MSE functions by equality.
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Iterator
from fractions import Fraction

from hypothesis import HealthCheck, Phase, find, settings
from hypothesis.errors import NoSuchExample, Unsatisfiable

from vetdp.engine.enumerate import output_distribution
from vetdp.engine.results import CheckResult, Status
from vetdp.engine.runner import RunConfig, params_json
from vetdp.engine.spec import EstimatorSpec

__all__ = ["check_estimator_spec", "exact_moments", "ESTIMATOR_CLAUSES"]

# Every clause name an estimator spec's run can report (besides precondition[<id>] rows), for -k selection.
ESTIMATOR_CLAUSES = ("estimator.unbiased", "estimator.unbiased_float", "estimator.variance", "estimator.mse", "engine")


def exact_moments(spec: EstimatorSpec, params: dict, budget: int, estimator=None) -> tuple[list, list, list[Fraction]]:
    """(E[estimate], Var per coordinate about the truth, truth), all exact."""
    measurement = spec.mechanism.build(spec.mechanism.load_constructor(), params)
    estimator = estimator or spec.load_estimator()
    per_input = {}
    for x in params["dataset"]:
        key = tuple(x) if isinstance(x, (list, tuple)) else x
        if key not in per_input:
            per_input[key] = list(output_distribution(measurement, x, budget=budget).items())
    rows = [per_input[tuple(x) if isinstance(x, (list, tuple)) else x] for x in params["dataset"]]
    truth = [Fraction(v) for v in spec.truth(params)]
    mean = [Fraction(0)] * len(truth)
    second = [Fraction(0)] * len(truth)
    for combo in itertools.product(*rows):
        prob = Fraction(1)
        for _, p in combo:
            prob *= p
        est = [Fraction(v) for v in spec.estimate(estimator, [y for y, _ in combo], params)]
        for j, (e, t) in enumerate(zip(est, truth, strict=True)):
            mean[j] += prob * e
            second[j] += prob * (e - t) ** 2
    return mean, second, truth


def _evaluate(spec: EstimatorSpec, params: dict, cfg: RunConfig, estimator) -> dict[str, tuple[bool, str, dict | None]]:
    mean, var, truth = exact_moments(spec, params, cfg.budget, estimator)
    out: dict[str, tuple[bool, str, dict | None]] = {}
    bias = [m - t for m, t in zip(mean, truth, strict=True)]
    out["estimator.unbiased"] = (all(b == 0 for b in bias), "E[estimate] == truth exactly" if not any(bias) else
                                 "biased", {"E[estimate]": [str(m) for m in mean], "truth": [str(t) for t in truth]})
    claims = spec.claims(params)
    if "variance" in claims:
        claimed = [Fraction(v) for v in claims["variance"]]
        ok = claimed == var
        out["estimator.variance"] = (ok, "claimed variance == exact variance" if ok else "variance formula wrong",
                                     {"claimed": [str(c) for c in claimed], "exact": [str(v) for v in var]})
    if "mse" in claims:
        claimed_mse, exact_mse = Fraction(claims["mse"]), sum(var, Fraction(0))
        ok = claimed_mse == exact_mse
        out["estimator.mse"] = (ok, "claimed MSE == exact MSE" if ok else "MSE formula wrong",
                                {"claimed": str(claimed_mse), "exact": str(exact_mse)})
    return out


def check_estimator_spec(spec: EstimatorSpec, cfg: RunConfig | None = None, estimator=None) -> Iterator[CheckResult]:
    """Yield a CheckResult per bad-input row and per clause (unbiased, variance, mse)."""
    cfg = cfg or RunConfig()
    estimator = estimator or spec.load_estimator()
    for case_id, call, error, names in spec.bad:
        t0 = time.perf_counter()
        try:
            call(estimator)
        except BaseException as e:  # noqa: BLE001
            expected = error if isinstance(error, tuple) else (error,)
            if not isinstance(e, expected):
                status, msg = Status.FAIL, f"raised {type(e).__name__}: {e}"
            elif not all(n in str(e) for n in names):
                status, msg = Status.FAIL, f"the message {str(e)!r} does not name {list(names)}"
            else:
                status, msg = Status.PASS, f"rejected: {type(e).__name__}: {e}"
        else:
            status, msg = Status.FAIL, "accepted input the spec rejects"
        yield CheckResult(spec.name, f"precondition[{case_id}]", status, message=msg, seconds=time.perf_counter() - t0)

    t0 = time.perf_counter()
    cache: dict[str, dict] = {}

    def run(p: dict) -> dict:
        key = params_json(p)
        if key not in cache:
            cache[key] = _evaluate(spec, p, cfg, estimator)
        return cache[key]

    for p in spec.examples:
        run(p)
    base = dict(database=None, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
    try:
        find(spec.params(cfg.deep), lambda p: bool(run(p)) and False,
             settings=settings(max_examples=cfg.examples, phases=[Phase.generate], **base))
    except (NoSuchExample, Unsatisfiable):
        pass
    elapsed = time.perf_counter() - t0
    clauses = sorted({c for r in cache.values() for c in r})
    for clause in clauses:
        failing = [k for k, r in cache.items() if clause in r and not r[clause][0]]
        if failing:
            p = json.loads(failing[0])
            ok, msg, witness = cache[failing[0]][clause]
            yield CheckResult(spec.name, clause, Status.FAIL, subject=failing[0], witness=witness, message=msg,
                              repro=f"vetdp check -k '{spec.name}::{clause}'  # parameters {params_json(p)}",
                              seconds=elapsed / len(clauses))
        else:
            n = sum(clause in r for r in cache.values())
            yield CheckResult(spec.name, clause, Status.PASS, subject=f"{n} parameter sets",
                              message=f"exact on {n} parameter sets", seconds=elapsed / len(clauses))
