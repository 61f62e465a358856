"""Checks an estimator spec: unbiasedness and the variance/MSE claims, decided exactly.

The mechanism's own function is enumerated on every input of the spec's small dataset; the
exact joint distribution of the n answers is the product of these; the estimator's own code
runs on every joint outcome, so E[estimate] and E[(estimate − truth)²] are exact rationals.

* Estimators that compute exactly (Fractions) must be exactly unbiased and their claims exactly
  equal (``estimator.unbiased``, ``estimator.variance``, ``estimator.mse``).
* Estimators that compute in float64 (the textbook formula in floats) cannot be exactly unbiased;
  ``estimator.unbiased_float`` decides them unbiased within the stated allowance
  ``FLOAT_ALLOWANCE`` × max(E|estimate|, 1) per coordinate, exactly; float claims are compared
  with the same relative allowance. A real bias is reported with its size either way.
"""

from __future__ import annotations

import itertools
import shlex
import time
from collections.abc import Callable, Iterator
from fractions import Fraction

from hypothesis import find, settings
from hypothesis.errors import NoSuchExample, Unsatisfiable

from vetdp import progress
from vetdp.engine.enumerate import output_distribution
from vetdp.engine.results import CheckResult, Status
from vetdp.engine.runner import _SEARCH, RunConfig, _shrinking_counted_in_steps, draw_params, params_json, time_stop
from vetdp.engine.spec import EstimatorSpec
from vetdp.engine.timeout import DeadlineExceeded, deadline

__all__ = ["check_estimator_spec", "exact_moments", "ESTIMATOR_CLAUSES", "FLOAT_ALLOWANCE"]

# Every clause name an estimator spec's run can report (besides precondition[<id>] rows), for -k selection.
ESTIMATOR_CLAUSES = ("estimator.unbiased", "estimator.unbiased_float", "estimator.variance", "estimator.mse", "engine")

FLOAT_ALLOWANCE = Fraction(1, 2**40)  # relative: float64 rounding of a short formula stays far below this

Outcome = tuple[bool, str, dict | None, bool]  # ok, message, witness, skipped


def _tolerant(estimator: Callable) -> Callable:
    """The estimator, called without ``exact=True`` when its signature has no such keyword."""
    def call(*args, **kwargs):
        try:
            return estimator(*args, **kwargs)
        except TypeError as e:
            if "exact" in kwargs and "exact" in str(e):
                kwargs.pop("exact")
                return estimator(*args, **kwargs)
            raise

    return call


def exact_moments(spec: EstimatorSpec, params: dict, budget: int, estimator=None
                  ) -> tuple[list[Fraction], list[Fraction], list[Fraction], bool, list[Fraction]]:
    """(E[estimate], E[(estimate − truth)²] per coordinate, truth, floats?, E|estimate|), all exact.

    ``floats`` is True when the estimator returned float values (computed in float64).
    """
    measurement = spec.mechanism.build(spec.mechanism.load_constructor(), params)
    estimator = _tolerant(estimator or spec.load_estimator())
    from vetdp.engine.public_estimators import oracle_moments  # hashing mechanisms: the pipeline in one enumeration

    hashed = oracle_moments(spec, params, measurement, estimator, budget, EstimatorRaised)
    if hashed is not None:
        return hashed
    per_input = {}
    for x in params["dataset"]:
        key = tuple(x) if isinstance(x, (list, tuple)) else x
        if key not in per_input:
            per_input[key] = list(output_distribution(measurement, x, budget=budget).items())
    rows = [per_input[tuple(x) if isinstance(x, (list, tuple)) else x] for x in params["dataset"]]
    truth = [Fraction(v) for v in spec.truth(params)]
    mean = [Fraction(0)] * len(truth)
    second = [Fraction(0)] * len(truth)
    absolute = [Fraction(0)] * len(truth)
    floats = False
    for combo in itertools.product(*rows):
        prob = Fraction(1)
        for _, p in combo:
            prob *= p
        answers = [y for y, _ in combo]
        try:
            raw = list(spec.estimate(estimator, answers, params))
        except Exception as e:  # noqa: BLE001 - an estimator raising on valid answers is a finding
            raise EstimatorRaised(answers, e) from e
        floats = floats or any(isinstance(v, float) for v in raw)
        est = [Fraction(v) for v in raw]
        if len(est) != len(truth):
            raise EstimatorRaised(answers, ValueError(f"returned {len(est)} estimates for {len(truth)} quantities"))
        for j, (e, t) in enumerate(zip(est, truth, strict=True)):
            mean[j] += prob * e
            second[j] += prob * (e - t) ** 2
            absolute[j] += prob * abs(e)
    return mean, second, truth, floats, absolute


class EstimatorRaised(Exception):
    """The estimator under test raised on answers the mechanism can produce."""

    def __init__(self, answers: list, error: BaseException):
        super().__init__(f"{type(error).__name__}: {error}")
        self.answers, self.error = answers, error


def _close(a: Fraction, b: Fraction, scale: Fraction) -> bool:
    return abs(a - b) <= FLOAT_ALLOWANCE * max(scale, Fraction(1))


def _claim_outcome(name: str, claimed: list[Fraction], exact: list[Fraction], approximate: bool) -> Outcome:
    if approximate:
        ok = all(_close(c, v, abs(v)) for c, v in zip(claimed, exact, strict=True))
        how = "within 2**-40 relative (float claims)"
    else:
        ok = claimed == exact
        how = "exactly"
    worst = max((abs(c - v) for c, v in zip(claimed, exact, strict=True)), default=Fraction(0))
    message = f"claimed {name} == exact {name} {how}"
    if not ok:
        from vetdp.engine.clauses import apart

        j = max(range(len(exact)), key=lambda i: abs(claimed[i] - exact[i]))
        c_text, e_text = apart(claimed[j], exact[j])
        message = (f"{name} claim wrong: off by up to {float(worst):.6g} (claimed {[float(c) for c in claimed]}, "
                   f"exact {[float(v) for v in exact]}; coordinate {j}: claimed {c_text}, exact {e_text})")
    return ok, message, {"claimed": [str(c) for c in claimed], "exact": [str(v) for v in exact]}, False


def _evaluate(spec: EstimatorSpec, params: dict, cfg: RunConfig, estimator, claim_fns: dict) -> dict[str, Outcome]:
    try:
        with deadline(cfg.time_limit):
            mean, var, truth, floats, absolute = exact_moments(spec, params, cfg.budget, estimator)
    except EstimatorRaised as e:
        out: Outcome = (False, f"the estimator raised on valid answers: {e}", {"answers": repr(e.answers)}, False)
        return {"estimator.unbiased": out}
    except DeadlineExceeded:
        return {"estimator.unbiased": (False, time_stop(cfg, "enumerating the answers and the estimator",
                                                         work="--max-paths").message, None, False)}
    out = {}
    bias = [m - t for m, t in zip(mean, truth, strict=True)]
    witness = {"E[estimate]": [str(m) for m in mean], "truth": [str(t) for t in truth],
               "bias": [str(b) for b in bias]}
    size = max((abs(b) for b in bias), default=Fraction(0))
    biased = f"biased: E[estimate] − truth = {[float(b) for b in bias]} (largest |bias| {float(size):.6g})"
    if size:
        from vetdp.engine.clauses import apart

        j = max(range(len(bias)), key=lambda i: abs(bias[i]))
        m_text, t_text = apart(mean[j], truth[j])
        biased += f"; coordinate {j}: E[estimate] = {mean[j]} (≈{m_text}), truth {truth[j]} (≈{t_text})"
    if not floats:
        out["estimator.unbiased"] = (size == 0, "E[estimate] == truth exactly" if size == 0 else biased, witness, False)
        out["estimator.unbiased_float"] = (True, "the estimator computes exactly", None, True)
    else:
        ok = all(_close(m, t, a) for m, t, a in zip(mean, truth, absolute, strict=True))
        out["estimator.unbiased"] = (True, "float64 estimates: exact unbiasedness does not apply "
                                     "(see estimator.unbiased_float)", None, True)
        out["estimator.unbiased_float"] = (ok, f"|E[estimate] − truth| <= 2**-40·max(E|estimate|, 1) per coordinate "
                                           f"(largest |bias| {float(size):.3g})" if ok else biased, witness, False)
    claims = spec.claims(params)
    for name, (fn, fn_call) in claim_fns.items():
        try:
            claims[name] = fn_call(fn, params)
        except Exception as e:  # noqa: BLE001 - the claim function under test raising is a finding about it
            out[f"estimator.{name}"] = (False, f"the {name} function under test raised {type(e).__name__}: {e}",
                                        None, False)
            claims.pop(name, None)
    if "variance" in claims:
        claimed = [Fraction(v) for v in claims["variance"]]
        approximate = floats or any(isinstance(v, float) for v in claims["variance"])
        out["estimator.variance"] = _claim_outcome("variance", claimed, var, approximate)
    if "mse" in claims:
        approximate = floats or isinstance(claims["mse"], float)
        out["estimator.mse"] = _claim_outcome("MSE", [Fraction(claims["mse"])], [sum(var, Fraction(0))], approximate)
    return out


def _check_bad(spec: EstimatorSpec, estimator: Callable, cfg: RunConfig) -> Iterator[CheckResult]:
    """One row per bad input; a failing row's reproduction is a verify run on the first pinned example (every
    verify of the spec runs these rows)."""
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
        yield CheckResult(spec.name, f"precondition[{case_id}]", status, message=msg, seconds=time.perf_counter() - t0,
                          repro=None if status is Status.PASS or not spec.examples else _repro(spec, cfg,
                                                                                              spec.examples[0]))


def check_estimator_spec(spec: EstimatorSpec, cfg: RunConfig | None = None, estimator=None,
                         variance: Callable | None = None, only_params: dict | None = None) -> Iterator[CheckResult]:
    """Yield a CheckResult per bad-input row and per clause (unbiased, unbiased_float, variance, mse).

    ``variance``: the implementation's own variance function, whose claims replace ours.
    Raises ValueError when the spec has no variance claim to replace.
    """
    cfg = cfg or RunConfig()
    estimator = estimator if estimator is not None else spec.load_estimator()
    claim_fns: dict = {}
    if variance is not None:
        if "variance" not in spec.claim_calls:
            raise ValueError(f"variance: spec {spec.name!r} has no variance claim; claims it takes: "
                             f"{sorted(spec.claim_calls) or 'none'}")
        claim_fns["variance"] = (variance, spec.claim_calls["variance"])
    if not callable(estimator):
        yield CheckResult(spec.name, "construct", Status.FAIL, message=f"the estimator {estimator!r} is not callable")
        return
    yield from _check_bad(spec, estimator, cfg)
    t0 = time.perf_counter()
    cache: dict[str, dict] = {}
    originals: dict[str, dict] = {}

    def run(p: dict) -> dict:
        key = params_json(p)
        if key not in cache:
            try:
                cache[key] = _evaluate(spec, p, cfg, estimator, claim_fns)
            except Exception as e:  # noqa: BLE001 - one parameter set's failure must not end the run
                # the estimator and the claim functions under test are judged inside _evaluate: what escapes it is
                # vetdp's own computation (or the spec's) failing, an engine error (exit 2), not a finding
                cache[key] = {"engine": (False, f"engine error: {type(e).__name__}: {e}; vetdp's own computation "
                                         "failed, which is not a finding about the estimator under test", None, False)}
            originals[key] = p
        return cache[key]

    candidates = [only_params] if only_params is not None else list(spec.examples) + draw_params(
        spec.params(cfg.deep), cfg.examples, cfg.seed)
    for i, p in enumerate(candidates):
        progress.step("parameter set", i + 1, len(candidates), params_json(p))
        run(p)
    elapsed = time.perf_counter() - t0
    clauses = sorted({c for r in cache.values() for c in r})
    for clause in clauses:
        failing = [k for k, r in cache.items() if clause in r and not r[clause][0]]
        if failing:
            p = originals[failing[0]]
            if only_params is None:
                progress.step("shrinking", 1, None, clause)
                try:  # shrink to a small failing parameter set (counted in examples and shrinks, never in seconds)
                    with _shrinking_counted_in_steps():
                        p = find(spec.params(cfg.deep), lambda q, c=clause: c in run(q) and not run(q)[c][0],
                                 settings=settings(max_examples=max(cfg.examples, 40), derandomize=True,
                                                   report_multiple_bugs=False, **_SEARCH))
                except (NoSuchExample, Unsatisfiable):
                    pass
            ok, msg, witness, _ = run(p)[clause]
            status = (Status.STOPPED if msg.startswith("stopped: time") else Status.ERROR
                      if msg.startswith("engine error") else Status.UNDECIDED if msg.startswith("undecided")
                      else Status.FAIL)
            yield CheckResult(spec.name, clause, status, subject=params_json(p), witness=witness, message=msg,
                              repro=_repro(spec, cfg, p), seconds=elapsed / len(clauses))
            continue
        applicable = [r[clause] for r in cache.values() if clause in r and not r[clause][3]]
        if not applicable:
            note = next(r[clause][1] for r in cache.values() if clause in r)
            yield CheckResult(spec.name, clause, Status.SKIPPED, subject=f"{len(cache)} parameter sets",
                              message=note, seconds=elapsed / len(clauses))
        else:
            yield CheckResult(spec.name, clause, Status.PASS, subject=f"{len(applicable)} parameter sets",
                              message=f"{applicable[0][1]}; on {len(applicable)} parameter sets",
                              seconds=elapsed / len(clauses))
    if not cache:
        yield CheckResult(spec.name, "search.coverage", Status.FAIL, message="no parameter set was checked")


def _repro(spec: EstimatorSpec, cfg: RunConfig, params: dict) -> str:
    """A command that re-runs this clause on ``params`` against the code under test (not ours), in the same
    project."""
    from vetdp.project import project_option

    target = cfg.impl_ref or spec.impl_ref
    target = target if target.startswith("--") else f"--impl {target}"
    return f"vetdp{project_option()} verify {spec.name} {target} --params {shlex.quote(params_json(params))}"
