"""Checks a spec's clauses against a constructor (ours, or anyone's with the same arguments).

For each parameter set, the measurement's own function is enumerated exactly on every
input of the spec's finite domain; the clauses are:

* ``precondition[<id>]`` — each bad parameter set is rejected with the right error;
* ``privacy.sound`` — map(d_in) >= the exact worst-case loss (decided, never tolerated);
* ``privacy.tight`` — map(d_in) exceeds the exact loss by at most 2**-30 relative;
* ``errors.data_independent`` — every in-domain input raises the same errors, equally often;
* ``domain.rejects_outside`` — out-of-domain inputs raise before any randomness is drawn;
* ``randomness.through_primitives`` — the function is deterministic given its choices;
* ``timing.constant_bytes`` — with the constant-time option, bytes read never depend on the input.

With ``RunConfig.opaque`` (compiled or foreign code that cannot be enumerated), the privacy
clauses use the exact truth enumerated from the spec's own implementation and an
``audit.distribution`` clause audits the opaque samples (:mod:`vetdp.audit.opaque`).

Parameter sets come from the spec's pinned examples and its hypothesis strategy; a
failing clause is shrunk to a minimal parameter set and reported with a reproduction.
"""

from __future__ import annotations

import dataclasses
import json
import math
import time
from collections.abc import Callable, Iterator
from fractions import Fraction
from typing import Any

from hypothesis import HealthCheck, Phase, find, settings
from hypothesis.errors import NoSuchExample, Unsatisfiable

from vetdp.engine.divergence import Verdict, compare_claim, ln_ratio_bracket, max_divergence
from vetdp.engine.enumerate import EnumerationBudgetExceeded, Raised, enumerate_paths, freeze, output_distribution
from vetdp.engine.results import CheckResult, Status
from vetdp.engine.spec import MeasurementSpec
from vetdp.sampling.sources import BranchingSource, RecordingSource, SeededSource, use_source

__all__ = ["RunConfig", "Finding", "check_measurement_spec", "evaluate_params", "params_json", "MEASUREMENT_CLAUSES"]

TIGHTNESS = Fraction(1, 2**30)

# Every clause name a measurement spec's run can report (besides precondition[<id>] rows), for -k selection.
MEASUREMENT_CLAUSES = (
    "construct", "engine", "function.law", "privacy.sound", "privacy.tight", "privacy.distance", "privacy.monotone",
    "errors.data_independent", "domain.rejects_outside", "randomness.through_primitives", "timing.constant_bytes",
    "audit.distribution", "search.coverage",
)


@dataclasses.dataclass(frozen=True)
class RunConfig:
    deep: bool = False
    max_examples: int | None = None  # parameter sets drawn by hypothesis (default 12, deep 60)
    budget: int = 200_000  # enumeration paths per input
    seed: int = 0
    impl_ref: str | None = None  # how the report names the constructor (for reproductions)
    strict_messages: bool = True  # bad parameters must name themselves in the message
    # opaque: the constructor's randomness cannot be enumerated (compiled or foreign code); its map is
    # checked against the exact truth enumerated from the spec's own implementation and its samples
    # are audited at confidence 1 - audit_beta (see vetdp.audit.opaque)
    opaque: bool = False
    # verify only: a constructor found to draw randomness outside vetdp's primitives is then
    # checked as opaque code instead of failing randomness.through_primitives
    fallback_opaque: bool = False
    audit_samples: int = 2_000  # per audited input (x10 with deep)
    audit_beta: float = 1e-3
    # reproduce(spec name, clause, params, finding or None) -> extra reproduction text (e.g. a
    # snippet that uses the vetted library alone), appended to the vetdp command
    reproduce: Callable[[str, str, dict, Any], str] | None = None

    @property
    def examples(self) -> int:
        return self.max_examples if self.max_examples is not None else (60 if self.deep else 25)


@dataclasses.dataclass(frozen=True)
class Finding:
    """A clause's outcome for one parameter set (``ok`` False: a violation)."""

    ok: bool
    message: str = ""
    claimed: float | None = None
    true: float | None = None
    slack: float | None = None
    witness: dict | None = None
    undecided: bool = False
    skipped: bool = False


def params_json(params: dict) -> str:
    return json.dumps(params, sort_keys=True, default=repr)


def _show(x: Any) -> Any:
    if isinstance(x, Raised):
        return str(x)
    if isinstance(x, tuple) and all(isinstance(b, bool) for b in x):
        return "".join("1" if b else "0" for b in x)
    return x


# ------------------------------------------------------------------ clauses for one parameter set

def _privacy(spec: MeasurementSpec, m, dists: dict, params: dict) -> dict[str, Finding]:
    try:
        claim = m.map(spec.d_in)
    except Exception as e:  # noqa: BLE001
        f = Finding(False, f"map({spec.d_in}) raised {type(e).__name__}: {e}")
        return {"privacy.sound": f, "privacy.tight": f}
    if not isinstance(claim, (int, float)) or isinstance(claim, bool) or not math.isfinite(claim):
        numeric = isinstance(claim, float)
        f = Finding(False, f"map({spec.d_in}) returned {claim!r}, not a finite float",
                    claimed=claim if numeric else None)
        return {"privacy.sound": f, "privacy.tight": f}
    md = max_divergence(dists, None if spec.neighbours is None else spec.neighbours(params, list(dists)))
    cmp = compare_claim(float(claim), None if md.ratio is None else ln_ratio_bracket(md.ratio))
    witness = {"x": _show(md.x), "x_prime": _show(md.x_prime), "y": _show(md.y),
               "P[M(x)=y]": str(md.p), "P[M(x')=y]": str(md.q)}
    common = dict(claimed=float(claim), true=cmp.truth, slack=cmp.slack, witness=witness)
    out: dict[str, Finding] = {}
    if cmp.verdict is Verdict.SOUND:
        out["privacy.sound"] = Finding(True, "map >= exact loss", **common)
    elif cmp.verdict is Verdict.UNSOUND:
        out["privacy.sound"] = Finding(False, f"map({spec.d_in}) = {float(claim)!r} is below the exact loss "
                                       f"{cmp.truth!r}", **common)
    else:
        out["privacy.sound"] = Finding(False, "claim and exact loss not separated at 16384 bits", undecided=True,
                                       **common)
    if not spec.tight:
        out["privacy.tight"] = Finding(True, "tightness not required by this spec", skipped=True, **common)
    elif md.ratio is None or cmp.verdict is not Verdict.SOUND:
        out["privacy.tight"] = Finding(True, "not applicable: the map is not sound", skipped=True, **common)
    else:
        def allowance(prec: int) -> tuple[Fraction, Fraction]:
            lo, hi = ln_ratio_bracket(md.ratio)(prec)
            return lo + TIGHTNESS * max(1, abs(lo)), hi + TIGHTNESS * max(1, abs(hi))

        # "sound" against truth + allowance means the claim overshoots by more than the allowance
        tight_ok = compare_claim(float(claim), allowance).verdict is not Verdict.SOUND
        out["privacy.tight"] = Finding(tight_ok, "map within 2**-30 of the exact loss" if tight_ok else
                                       f"map({spec.d_in}) = {float(claim)!r} exceeds the exact loss "
                                       f"{cmp.truth!r} by more than 2**-30 relative", **common)
    return out


def _data_independent_errors(dists: dict) -> Finding:
    raised = {x: {y: p for y, p in d.items() if isinstance(y, Raised)} for x, d in dists.items()}
    reference_x, reference = next(iter(raised.items()))
    for x, r in raised.items():
        if r != reference:
            def errors(found: dict) -> dict:
                return {str(k): str(v) for k, v in found.items()}

            return Finding(False, "inputs raise different errors (or with different probabilities)",
                           witness={"x": _show(reference_x), "errors(x)": errors(reference),
                                    "x_prime": _show(x), "errors(x')": errors(r)})
    return Finding(True, "no input-dependent errors" if not reference else f"same errors on every input: {reference}")


def _rejects_outside(spec: MeasurementSpec, m, params: dict) -> Finding:
    for x in spec.outside(params):
        source = BranchingSource()
        try:
            with use_source(source):
                y = m(x)
        except (ValueError, TypeError):
            if source.trail:
                return Finding(False, "randomness drawn before rejecting an out-of-domain input",
                               witness={"x": repr(x), "choices": len(source.trail)})
            continue
        except Exception as e:  # noqa: BLE001
            return Finding(False, f"out-of-domain input raised {type(e).__name__}, not ValueError/TypeError: {e}",
                           witness={"x": repr(x)})
        return Finding(False, "an out-of-domain input was accepted", witness={"x": repr(x), "output": repr(y)})
    return Finding(True, "every out-of-domain input rejected before randomness")


def _deterministic_given_choices(m, inputs: list, budget: int) -> Finding:
    for x in inputs[:3]:
        first = list(enumerate_paths(lambda x=x: m(x), budget=budget))
        second = list(enumerate_paths(lambda x=x: m(x), budget=budget))
        if first != second:
            return Finding(False, "the function's output is not determined by the primitives' choices: it draws "
                           "randomness elsewhere, so exact enumeration does not apply", witness={"x": _show(x)})
    return Finding(True, "all randomness flows through vetdp's primitives")


def _constant_bytes(spec: MeasurementSpec, m, params: dict, inputs: list, seed: int) -> Finding:
    if not params.get(spec.constant_time_param):
        return Finding(True, "no constant-time promise for these parameters", skipped=True)
    counts: dict[int, Any] = {}
    for i, x in enumerate(inputs):
        for rep in range(3):
            rec = RecordingSource(SeededSource(f"{seed}/{i}/{rep}"))
            with use_source(rec):
                m(x)
            counts.setdefault(rec.bytes_read, x)
    if len(counts) > 1:
        return Finding(False, "bytes read depend on the input or on the random outcome",
                       witness={f"{n} bytes": _show(x) for n, x in counts.items()})
    return Finding(True, f"{next(iter(counts))} bytes read for every input and outcome")


def evaluate_params(spec: MeasurementSpec, ctor: Callable, params: dict, cfg: RunConfig) -> dict[str, Finding]:
    """Every postcondition clause for one valid parameter set."""
    try:
        m = spec.build(ctor, params)
    except Exception as e:  # noqa: BLE001
        f = Finding(False, f"the constructor rejected valid parameters: {type(e).__name__}: {e}")
        return {"construct": f}
    inputs = spec.inputs(params)
    out: dict[str, Finding] = {"construct": Finding(True)}
    out["domain.rejects_outside"] = _rejects_outside(spec, m, params)
    if cfg.opaque:
        from vetdp.audit.opaque import opaque_findings

        out.update(opaque_findings(spec, m, params, inputs, cfg))
        return out
    det = _deterministic_given_choices(m, inputs, cfg.budget)
    if not det.ok and cfg.fallback_opaque:
        from vetdp.audit.opaque import opaque_findings

        out["randomness.through_primitives"] = Finding(
            True, f"{det.message}; checked as opaque code instead (map against the exact law of vetdp's "
            "implementation, samples audited)", skipped=True)
        out.update(opaque_findings(spec, m, params, inputs, cfg))
        return out
    out["randomness.through_primitives"] = det
    if det.ok:
        try:
            dists = {freeze(x): output_distribution(m, x, budget=cfg.budget) for x in inputs}
        except EnumerationBudgetExceeded as e:
            skip = Finding(True, str(e), skipped=True)
            out.update({"privacy.sound": skip, "privacy.tight": skip, "errors.data_independent": skip})
        else:
            out.update(_privacy(spec, m, dists, params))
            out["errors.data_independent"] = _data_independent_errors(dists)
    if spec.constant_time_param is not None:
        out["timing.constant_bytes"] = _constant_bytes(spec, m, params, inputs, cfg.seed)
    return out


# ------------------------------------------------------------------ preconditions

def _check_bad(spec: MeasurementSpec, ctor: Callable, cfg: RunConfig) -> Iterator[CheckResult]:
    for case in spec.bad:
        t0 = time.perf_counter()
        repro = _repro(spec, cfg, case.params, f"precondition[{case.id}]")
        try:
            spec.build(ctor, case.params)
        except BaseException as e:  # noqa: BLE001
            expected = case.error if isinstance(case.error, tuple) else (case.error,)
            if not isinstance(e, expected):
                status, msg = Status.FAIL, (f"raised {type(e).__name__}: {e}; expected "
                                            f"{'/'.join(t.__name__ for t in expected)}")
            elif cfg.strict_messages and not all(n in str(e) for n in case.names):
                status, msg = Status.FAIL, f"the message {str(e)!r} does not name {list(case.names)}"
            else:
                status, msg = Status.PASS, f"rejected: {type(e).__name__}: {e}"
        else:
            status, msg = Status.FAIL, "accepted parameters the spec rejects"
        yield CheckResult(spec.name, f"precondition[{case.id}]", status, subject=params_json(case.params),
                          message=msg, repro=None if status is Status.PASS else repro,
                          seconds=time.perf_counter() - t0)


def _repro(spec: MeasurementSpec, cfg: RunConfig, params: dict, clause: str | None = None,
           finding: Finding | None = None) -> str:
    impl = cfg.impl_ref or spec.impl_ref
    command = f"vetdp verify {spec.name} --impl {impl} --params '{params_json(params)}'"
    extra = cfg.reproduce(spec.name, clause or "", params, finding) if cfg.reproduce is not None else ""
    return f"{command}\n{extra}" if extra else command


# ------------------------------------------------------------------ search over parameters

def check_measurement_spec(spec: MeasurementSpec, ctor: Callable | None = None, cfg: RunConfig | None = None,
                           only_params: dict | None = None) -> Iterator[CheckResult]:
    """Yield a CheckResult per precondition row and per postcondition clause."""
    cfg = cfg or RunConfig()
    ctor = ctor or spec.load_constructor()
    yield from _check_bad(spec, ctor, cfg)
    t0 = time.perf_counter()
    cache: dict[str, dict[str, Finding]] = {}

    def run(p: dict) -> dict[str, Finding]:
        key = params_json(p)
        if key not in cache:
            cache[key] = evaluate_params(spec, ctor, p, cfg)
        return cache[key]

    base = dict(database=None, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
    if only_params is not None:
        run(only_params)
    else:
        for p in spec.examples:
            run(p)
        try:
            find(spec.params(cfg.deep), lambda p: bool(run(p)) and False,
                 settings=settings(max_examples=cfg.examples, phases=[Phase.generate], **base))
        except (NoSuchExample, Unsatisfiable):
            pass
    clauses = sorted({c for findings in cache.values() for c in findings})
    minimal: dict[str, dict] = {}
    for clause in clauses:
        failing = [json.loads(k) for k, f in cache.items() if clause in f and not f[clause].ok]
        if not failing:
            continue
        example = failing[0]
        if only_params is None:
            try:  # shrink to a minimal failing parameter set
                example = find(spec.params(cfg.deep), lambda p, c=clause: c in run(p) and not run(p)[c].ok,
                               settings=settings(max_examples=max(cfg.examples, 40), **base))
            except (NoSuchExample, Unsatisfiable):
                pass
        minimal[clause] = example
    elapsed = time.perf_counter() - t0
    n = len(cache)
    for clause in clauses:
        if clause == "construct" and clause not in minimal:
            continue
        if clause in minimal:
            p = minimal[clause]
            f = run(p)[clause]
            status = Status.UNDECIDED if f.undecided else Status.FAIL
            yield CheckResult(spec.name, clause, status, subject=params_json(p), claimed=f.claimed, true=f.true,
                              slack=f.slack, witness=f.witness, repro=_repro(spec, cfg, p, clause, f),
                              message=f.message, seconds=elapsed / max(1, len(clauses)))
        else:
            applicable = [f for f in (run_f[clause] for run_f in cache.values() if clause in run_f) if not f.skipped]
            worst = min((f for f in applicable if f.slack is not None), key=lambda f: f.slack, default=None)
            if not applicable:
                status, msg = Status.SKIPPED, next(f.message for fs in cache.values() for c, f in fs.items()
                                                   if c == clause)
            else:
                status, msg = Status.PASS, f"{len(applicable)} of {n} parameter sets checked"
            yield CheckResult(spec.name, clause, status, subject=f"{n} parameter sets",
                              claimed=worst.claimed if worst else None, true=worst.true if worst else None,
                              slack=worst.slack if worst else None, message=msg,
                              seconds=elapsed / max(1, len(clauses)))
