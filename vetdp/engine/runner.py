"""Checks a spec's clauses against a constructor (ours, or anyone's with the same arguments).

For each parameter set, the measurement's own function is enumerated exactly on every
input of the spec's finite domain; the clauses are:

* ``precondition[<id>]`` — each bad parameter set is rejected with the right error;
* ``privacy.sound`` — map(d_in) >= the exact worst-case loss (decided, never tolerated);
* ``privacy.tight`` — map(d_in) <= the exact loss·(1 + 2**-30) + 2**-40 (relative; 2**-40 absolute near 0);
* ``errors.data_independent`` — every in-domain input raises the same errors, equally often;
* ``domain.rejects_outside`` — out-of-domain inputs raise before any randomness is drawn;
* ``randomness.through_primitives`` — the function is deterministic given its choices;
* ``timing.constant_bytes`` — with the constant-time option, bytes read never depend on the input.

Where the code accepts what the spec rejects, the truth is computed anyway (the enumerated law
of the code, or the spec's law where it is defined), so that an unsound map is its own finding
and not only a precondition mismatch:

* ``privacy.sound[<id>]`` — after ``precondition[<id>]`` fails by accepting: map(d_in) against
  the exact loss at those parameters;
* ``privacy.outside[<kind>]`` — after ``domain.rejects_outside`` fails: map(d_in) against the
  exact loss between accepted out-of-domain inputs and the in-domain ones, per kind
  (``spec.outside_kind``), e.g. an infinite loss for inputs of another length.

With ``RunConfig.opaque`` (compiled or foreign code that cannot be enumerated), the privacy
clauses use the exact truth enumerated from the spec's own implementation and an
``audit.distribution`` clause audits the opaque samples (:mod:`vetdp.audit.opaque`).

Laws of CLASSES_FROM_OUTPUTS outputs or more (categorical mechanisms at t in the thousands) are compared
by classes of equal probability (:mod:`vetdp.engine.symmetry`); the privacy clauses then say how many
inputs were enumerated and how many of the output values were not examined as inputs.

Parameter sets come from the spec's pinned examples and its hypothesis strategy; a
failing clause is shrunk to a minimal parameter set and reported with a reproduction.

Budgets are work, so that a verdict is the same on any machine: enumeration paths per input
(``RunConfig.budget``, ``--max-paths``) and random choices per run (``max_depth``, ``--max-choices``),
audit samples (``audit_samples``), parameter sets (``max_examples``, drawn by a seeded, derandomized search).
The only wall-clock limit is a safety net for code that hangs without drawing randomness
(``time_limit``, ``--time-limit``, per clause and parameter set): when it fires the clause is
``stopped`` (:attr:`Status.STOPPED`, exit 2), never a verdict, and the search ends there.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import itertools
import json
import math
import os
import random
import shlex
import time
from collections.abc import Callable, Iterator, Mapping
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from hypothesis import HealthCheck, Phase, find, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis.errors import NoSuchExample, Unsatisfiable

from vetdp import progress
from vetdp.core.measurement import AtomDomain, BitVectorDomain, DiscreteDistance
from vetdp.engine.batch import batch_finding
from vetdp.engine.budgets import (
    BEST_FIRST_MAX_CHOICES,
    DEFAULT_BUDGET,
    DEFAULT_EXACT_WORK,
    DEFAULT_MAX_REGIONS,
    DEFAULT_MAX_STEPS,
    DEFAULT_TIME_LIMIT,
)
from vetdp.engine.clauses import (
    STATE_KEPT,
    TIGHTNESS,
    Finding,
    accepted_outside,
    beyond_preconditions_finding,
    constant_bytes,
    cryptographic_finding,
    data_independent_errors,
    deterministic_given_choices,
    distance_findings,
    dominance_findings,
    enumerated_laws,
    law_finding,
    law_with_residual,
    outside_findings,
    pairs_within,
    pld_findings,
    privacy_findings,
    privacy_with_residual,
    rdp_findings,
    reference_laws,
    rejects_outside,
    show,
    spec_law_at,
    state_kept_finding,
)
from vetdp.engine.enumerate import (
    EnumerationBudgetExceeded,
    Law,
    ReplayMismatch,
    enumerate_law,
    freeze,
)
from vetdp.engine.foreign import watch_foreign_randomness
from vetdp.engine.results import CheckResult, Status
from vetdp.engine.spec import BadParams, MeasurementSpec
from vetdp.engine.structure import (
    ExactWorkExceeded,
    NotStructured,
    coordinate_laws_at,
    discover_product_structure,
    exact_work,
    pair_classes,
    pair_terms,
    pld_of_terms,
    privacy_loss_distribution,
    probe_vectors,
    renyi_worst,
    renyi_worst_of_laws,
    viewed_by_coordinates,
    worst_delta,
    worst_delta_of_laws,
    worst_pair,
)
from vetdp.engine.symmetry import NotSymmetric, class_law, coverage, worst_over
from vetdp.engine.timeout import DeadlineExceeded, deadline
from vetdp.fence import exit_text

if TYPE_CHECKING:
    from vetdp.engine.universal import UniversalReport

__all__ = ["RunConfig", "Finding", "TIGHTNESS", "check_measurement_spec", "evaluate_params", "params_json",
           "MEASUREMENT_CLAUSES", "not_a_measurement", "draw_params", "DEFAULT_TIME_LIMIT", "time_stop"]


# Every clause name a measurement spec's run can report (besides precondition[<id>] rows), for -k selection.
MEASUREMENT_CLAUSES = (
    "construct", "engine", "function.law", "function.batch", "privacy.sound", "privacy.tight", "privacy.distance",
    "privacy.monotone", "privacy.rdp", "privacy.pld", "privacy.dominated",
    "errors.data_independent", "domain.rejects_outside", "randomness.through_primitives",
    "randomness.cryptographic", "state.independent_calls", "timing.constant_bytes", "audit.distribution",
    "search.universal", "search.coverage",
)
# Reported only when the code under test accepts what the spec rejects: privacy.sound[<bad id>] (the map against
# the exact loss at accepted bad parameters) and privacy.outside[<kind>] (at accepted out-of-domain inputs).


@dataclasses.dataclass(frozen=True)
class RunConfig:
    deep: bool = False
    max_examples: int | None = None  # parameter sets drawn by hypothesis (default 25, deep 60)
    budget: int = DEFAULT_BUDGET  # enumeration paths per input and pass (--max-paths)
    max_depth: int = BEST_FIRST_MAX_CHOICES  # random choices one run may make (--max-choices); deeper: residual
    max_steps: int = DEFAULT_MAX_STEPS  # random choices per input over all runs, replays included (--max-steps)
    # word operations of one clause's exact rational arithmetic on a product's laws (--exact-work)
    exact_work: int = DEFAULT_EXACT_WORK
    # a spec's universal exploration (spec.universal): symbolic runs per pass over one base (--max-regions); 0: off
    max_regions: int = DEFAULT_MAX_REGIONS
    seed: int = 0  # seeds the parameter search too: another seed explores other parameter sets
    impl_ref: str | None = None  # how reproductions name the code: "MODULE:ATTR" or verify's "--adapter REF"
    strict_messages: bool = True  # bad parameters must name themselves in the message
    # opaque: the constructor's randomness cannot be enumerated (compiled or foreign code); its map is
    # checked against the exact truth (the spec's law, else vetdp's implementation) and its samples
    # are audited at confidence 1 - audit_beta (see vetdp.audit.opaque)
    opaque: bool = False
    # verify only: a constructor found to draw randomness outside vetdp's primitives is then
    # checked as opaque code instead of failing randomness.through_primitives
    fallback_opaque: bool = False
    # per audited input (x10 with deep): at 10_000 a keep-probability off by 0.03 is flagged (see vetdp.audit.opaque)
    audit_samples: int = 10_000
    audit_beta: float = 1e-4  # false-alarm budget of the whole run's audits, split over parameter sets
    # reproduce(spec name, clause, params, finding or None) -> extra reproduction text (e.g. a
    # snippet that uses the vetted library alone), appended to the vetdp command
    reproduce: Callable[[str, str, dict, Any], str] | None = None
    # verify: when the spec states no law, function.law compares with the law of vetdp's implementation
    reference_law: bool = False
    loose_map: Status = Status.FAIL  # how a sound but loose map (privacy.tight) is reported; WARNING for verify
    # wall-clock safety limit of one clause on one parameter set (--time-limit; None: none): when it fires the clause
    # is stopped (Status.STOPPED, exit 2) and the search ends; every verdict comes from the work budgets above
    time_limit: float | None = DEFAULT_TIME_LIMIT
    build: Callable[[dict], Any] | None = None  # replaces spec.build(ctor, params), e.g. verify --adapter

    def __post_init__(self) -> None:
        for name in ("budget", "max_depth", "max_steps", "exact_work"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name}={value!r} must be an int in [1, inf)")
        if isinstance(self.max_regions, bool) or not isinstance(self.max_regions, int) or self.max_regions < 0:
            raise ValueError(f"max_regions={self.max_regions!r} must be an int in [0, inf) (0: no universal "
                             "exploration)")
        if self.time_limit is not None and not (isinstance(self.time_limit, (int, float))
                                                and 0 < self.time_limit < math.inf):
            raise ValueError(f"time_limit={self.time_limit!r} must be a number of seconds in (0, inf) or None")

    @property
    def examples(self) -> int:
        return self.max_examples if self.max_examples is not None else (60 if self.deep else 25)


def _budgets(cfg: RunConfig) -> dict:
    """The enumeration's work budgets of ``cfg``, as :func:`enumerate_law`'s keyword arguments."""
    return {"budget": cfg.budget, "max_depth": cfg.max_depth, "max_steps": cfg.max_steps}


def time_stop(cfg: RunConfig, doing: str, work: str = "--max-paths or --max-steps",
              witness: dict | None = None) -> Finding:
    """The finding of a clause that the wall-clock safety limit ended while ``doing`` (no verdict: stopped).
    ``work`` names the options whose work budget would end it first."""
    return Finding(False, f"stopped: time — {doing} ran past the time limit of {cfg.time_limit:g} s per clause "
                   f"(--time-limit); no verdict: raise --time-limit, or lower {work} so that a work budget ends it "
                   "first (a hang that draws no randomness is bounded only by time)", stopped=True, witness=witness)


def params_json(params: dict) -> str:
    return json.dumps(params, sort_keys=True, default=repr)


# ------------------------------------------------------------------ one parameter set

class CodeExited(Exception):
    """The code under test called ``sys.exit`` (or ``os._exit``, under :func:`vetdp.fence.guarded`): an outcome to
    report, not a reason for vetdp to exit."""


_RAISED_BY_CODE = "_vetdp_raised_by_code_under_test"  # set on exceptions that left the code under test


def raised_by_code(e: BaseException) -> bool:
    """Whether ``e`` (or an exception it was raised from or while handling) left the code under test through a
    :class:`GuardedMeasurement`: a finding about that code. Anything else escaping a clause is vetdp's failure."""
    seen: set[int] = set()
    while e is not None and id(e) not in seen:
        if getattr(e, _RAISED_BY_CODE, False):
            return True
        seen.add(id(e))
        e = e.__cause__ or e.__context__
    return False


def _guard(fn: Callable) -> Callable:
    def call(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except SystemExit as e:
            exited = CodeExited(exit_text(e))
            setattr(exited, _RAISED_BY_CODE, True)
            raise exited from None
        except Exception as e:
            with contextlib.suppress(Exception):  # an exception type without attributes stays untagged
                setattr(e, _RAISED_BY_CODE, True)
            raise

    return call


class GuardedMeasurement:
    """The measurement under test, with ``sys.exit`` in its function or map turned into an exception, and every
    exception leaving it marked as the code's (:func:`raised_by_code`)."""

    def __init__(self, inner: Any):
        self.inner = inner
        self._call, self._map = _guard(inner), _guard(inner.map)

    def __call__(self, x: Any) -> Any:
        return self._call(x)

    def map(self, d_in: Any) -> Any:
        return self._map(d_in)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def not_a_measurement(m: Any) -> str | None:
    """Why ``m`` cannot be vetted as a measurement (None: it has a callable function and map)."""
    if m is None:
        return "returned None"
    if not callable(m):
        return f"returned a {type(m).__name__}, which is not callable"
    if not callable(getattr(m, "map", None)):
        return f"returned a {type(m).__name__} without a callable map(d_in)"
    return None


def _build(spec: MeasurementSpec, ctor: Callable, params: dict, cfg: RunConfig) -> Any:
    return cfg.build(params) if cfg.build is not None else spec.build(ctor, params)


def _construct(spec: MeasurementSpec, ctor: Callable, params: dict, cfg: RunConfig) -> tuple[Any, Finding]:
    """The guarded measurement for valid ``params``, or None and the ``construct`` failure."""
    try:
        with deadline(cfg.time_limit):
            raw = _build(spec, ctor, params, cfg)
    except DeadlineExceeded:
        return None, time_stop(cfg, "the constructor")
    except SystemExit as e:
        return None, Finding(False, f"the constructor {exit_text(e)}")
    except Exception as e:  # noqa: BLE001
        return None, Finding(False, f"the constructor rejected valid parameters: {type(e).__name__}: {e}")
    why = not_a_measurement(raw)
    if why is not None:
        return None, Finding(False, f"the constructor {why}, not a measurement")
    if spec.memoised is not None:  # the clauses on one call's law judge first calls; the memo is state's clause
        from vetdp.engine.calls import first_calls

        raw = first_calls(lambda: _build(spec, ctor, params, cfg), raw)
    return GuardedMeasurement(raw), Finding(True)




class _Clauses:
    """Runs clause functions for one parameter set: each under the time limit, errors contained."""

    def __init__(self, params: dict, cfg: RunConfig, scale: bool = False):
        self.params, self.cfg = params, cfg
        self.scale = scale  # a spec's production-size example: a clause past a work budget is skipped, with why
        self.out: dict[str, Finding] = {}
        self.current: Any = None  # the input being evaluated, for witnesses

    def run(self, names: tuple[str, ...], fn: Callable[[], dict[str, Finding]]) -> bool:
        """Run ``fn`` (returning findings); False when it was interrupted or crashed."""
        self.current = None
        progress.note(", ".join(names))
        try:
            with deadline(self.cfg.time_limit), exact_work(self.cfg.exact_work):
                self.out.update(fn())
            return True
        except ExactWorkExceeded as e:  # a work budget: undecided, the same on every machine
            self.out.update(dict.fromkeys(names, self._too_large(str(e))))
        except NotStructured as e:  # a size bound of the product's exact computation (e.g. too many pair classes)
            self.out.update(dict.fromkeys(names, self._too_large(f"the exact computation over the code's product "
                                                                 f"structure is too large: {e}")))
        except DeadlineExceeded:
            where = None if self.current is None else {"x": show(self.current)}
            doing = ", ".join(names) + (f" evaluating M({show(self.current)!r})" if self.current is not None else "")
            if names == ("audit.distribution",):
                f = time_stop(self.cfg, f"{doing} (sampling the code {self.cfg.audit_samples} times per audited input)",
                              work="--samples", witness=where)
            else:
                f = time_stop(self.cfg, doing, witness=where)
            self.out.update({n: f for n in names})
        except Exception as e:  # noqa: BLE001 - one parameter set's failure must not end the run
            where = {"x": show(self.current)} if self.current is not None else None
            if raised_by_code(e):  # the code under test raised where the clause did not expect it: a finding
                on = f" on M({show(self.current)!r})" if self.current is not None else ""
                f = Finding(False, f"the code under test raised {type(e).__name__}: {e}{on} (checking "
                            f"{', '.join(names)})", witness=where)
                self.out.update({n: f for n in names})
            else:  # vetdp's own computation failed: no verdict about the code, exit 2
                self.out["engine"] = Finding(False, f"engine error in {', '.join(names)}: {type(e).__name__}: {e} "
                                             f"({_origin(e)}); vetdp's own computation failed, which is not a "
                                             "finding about the code under test (the other clauses stand)",
                                             witness=where, error=True)
        return False

    def _too_large(self, why: str) -> Finding:
        """Past a work budget: undecided where the parameters were drawn or asked for; skipped, with the reason, at
        a spec's scale example (a size the spec chose to probe, not one the user asked about)."""
        if self.scale:
            return Finding(True, f"not checked at this size: {why}; checked at the smaller sizes", skipped=True)
        return Finding(False, f"undecided: {why}", undecided=True)


def _sets_checked(clause: str, status: Status, passed: int, cache: dict[str, dict[str, Finding]]) -> str:
    """A passing clause's summary subject: "N parameter sets" when it was checked on every set, else on how many it
    passed and how many it was skipped on (e.g. function.law not checked at 129 bits) or does not apply to."""
    n = len(cache)
    if status is not Status.PASS or passed == n:
        return f"{n} parameter sets"
    skipped = sum(1 for fs in cache.values() if clause in fs and fs[clause].skipped)
    absent = n - passed - skipped
    return (f"pass on {passed} of {n} parameter sets" + (f", skipped on {skipped}" if skipped else "")
            + (f", not applicable to {absent}" if absent else ""))


def _origin(e: BaseException) -> str:
    """Where ``e`` was raised: the innermost frame's file (relative to vetdp's package when inside it) and line."""
    tb = e.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is None:
        return "no traceback"
    path = tb.tb_frame.f_code.co_filename
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the directory holding the vetdp package
    shown = os.path.relpath(path, os.path.dirname(root)) if path.startswith(root + os.sep) else path
    return f"raised at {shown}:{tb.tb_lineno}"



def evaluate_params(spec: MeasurementSpec, ctor: Callable, params: dict, cfg: RunConfig,
                    audit_beta: float | None = None, scale: bool = False) -> dict[str, Finding]:
    """Every postcondition clause for one valid parameter set (never raises for the code under test).

    ``scale``: a production-size set (``spec.scale_examples``), whose exact clauses are skipped, with the
    reason, when the code shows no product structure or a clause's exact arithmetic passes its work budget."""
    m, built = _construct(spec, ctor, params, cfg)
    if m is None:
        return {"construct": built}
    c = _Clauses(params, cfg, scale=scale)
    c.out["construct"] = built
    inputs = spec.inputs(params)
    c.run(("domain.rejects_outside",), lambda: {"domain.rejects_outside": rejects_outside(spec, m, params)})
    if scale and cfg.opaque:  # its samples cannot be compared with a law of 2^k outputs
        c.out.update(dict.fromkeys(("privacy.sound", "privacy.tight", "audit.distribution"), Finding(
            True, "not checked at this size: opaque code's samples are audited at the smaller sizes", skipped=True)))
        return c.out
    if not cfg.opaque and _public(spec, m, params, inputs, c):
        if spec.constant_time_param is not None:
            c.run(("timing.constant_bytes",),
                  lambda: {"timing.constant_bytes": constant_bytes(spec, m, params, inputs, cfg.seed)})
        return c.out
    if not cfg.opaque and _structured(spec, m, params, c, required=not scale):
        if spec.constant_time_param is not None:
            c.run(("timing.constant_bytes",),
                  lambda: {"timing.constant_bytes": constant_bytes(spec, m, params, inputs, cfg.seed)})
        return c.out
    if cfg.opaque:
        _opaque(spec, m, params, inputs, cfg, c, audit_beta)
        _outside_truth(spec, m, params, inputs, cfg, c, None)
        return c.out
    raw: dict[Any, Any] = {}
    dists: dict[Any, dict] = {}
    container: list[Finding] = []
    foreign: list[str] = []
    stateful: list[Finding] = []  # replaying the same choices gave other paths (no foreign source seen)

    budget_hit: list[str] = []
    laws: dict[Any, Law] = {}
    product: list = []  # the product structure of a bit vector too costly to enumerate path by path, once sought

    def enumerate_all() -> dict[str, Finding]:
        with watch_foreign_randomness(m.inner) as use:
            try:
                for x in inputs:
                    c.current = x
                    key = freeze(x)
                    # the unguarded measurement: the enumerator records sys.exit as an outcome itself, and
                    # an extra wrapper frame would hide rejection loops from its state fingerprints
                    law = None if not product else _product_law(m, x, product)
                    if law is None:
                        law = enumerate_law(m.inner, x, budget=cfg.budget, max_depth=cfg.max_depth,
                                            max_steps=cfg.max_steps)
                        if not product and (law.paths > PRODUCT_FROM_PATHS or not law.complete):
                            # many paths per input (several coins per bit: 4^k): seek the product structure, and
                            # use it for the other inputs if it gives this input's enumerated law exactly
                            by_product = _product_law(m, x, product)
                            if by_product is not None and law.complete and by_product.dist != law.dist:
                                product[0] = None
                            elif by_product is not None and not law.complete:
                                law = by_product
                    if key in laws and (laws[key].dist, laws[key].residual) != (law.dist, law.residual) \
                            and law.complete and laws[key].complete and not container:
                        container.append(Finding(
                            False, f"the law depends on the input's container: {raw[key]!r} and {x!r} hold the "
                            "same value but give different distributions",
                            witness={"x": repr(raw[key]), "x_prime": repr(x)}))
                    raw.setdefault(key, x)
                    laws[key], dists[key] = law, law.dist
            except EnumerationBudgetExceeded as e:
                budget_hit.append(f"undecided: budget — {e} (input {show(c.current)!r})")
            except ReplayMismatch as e:  # replayed choices led elsewhere: state kept between calls, or foreign draws
                stateful.append(state_kept_finding(c.current, e))
        foreign.extend(use.sources)
        return {}

    enumerated = c.run(("function.law", "privacy.sound", "privacy.tight", "errors.data_independent"),
                       enumerate_all)
    if enumerated and budget_hit and not foreign:
        undecided = Finding(False, budget_hit[0], undecided=True, witness={"x": show(c.current)})
        c.out.update({n: undecided for n in ("function.law", "privacy.sound", "privacy.tight",
                                             "errors.data_independent")})
        enumerated = False
    if not foreign:  # decided first: a call counter met by the replays below is state, not foreign randomness
        c.run(("state.independent_calls",), lambda: {"state.independent_calls": _independent_calls(
            spec, ctor, params, cfg, inputs)})
    state = c.out.get("state.independent_calls")
    if enumerated:
        det = Finding(True, "all randomness flows through vetdp's primitives")
        if foreign:
            det = Finding(False, "the function draws randomness outside vetdp's primitives ("
                          + ", ".join(foreign) + "), so exact enumeration does not apply",
                          witness={"sources": foreign})
        elif stateful:  # no foreign source to audit instead: the code keeps state (state.independent_calls)
            det = _STATE_UNDECIDED
        elif product and product[0] is not None:
            how = ("for each input, one run with symbolic draws shows" if product[0] is _PER_INPUT else
                   "one symbolic run shows")
            det = Finding(True, f"all randomness flows through vetdp's primitives: {how} the output as a product of "
                          "coordinates, each a function of its own input bit and its own draws, confirmed by 32 "
                          "concrete replays; the laws of the inputs after the first (enumerated path by path and "
                          "equal to the product) are products of the coordinates' laws")
        else:
            # at t in the tens of thousands one input's law costs seconds: the replay check takes the first only
            again = inputs[:1] if max((len(k.dist) for k in laws.values()), default=0) >= CLASSES_FROM_OUTPUTS \
                else inputs
            c.run(("randomness.through_primitives",), lambda: {"randomness.through_primitives":
                                                               deterministic_given_choices(m.inner, again, laws,
                                                                                           _budgets(cfg))})
            det = c.out.pop("randomness.through_primitives", det)
            if det.message.startswith(STATE_KEPT):  # the second enumeration's paths did not add up
                stateful.append(det)
                det = _STATE_UNDECIDED
        if not foreign and not det.stopped and state is not None and not state.ok and not state.stopped:
            det = _STATE_UNDECIDED  # the code keeps state, which the clause showed: its replays prove nothing
        c.out["randomness.cryptographic"] = cryptographic_finding(foreign, unexplained=not det.ok and not det.stopped)
        # state kept between calls is decided exactly (state.independent_calls); a stopped check has no verdict to
        # fall back from
        if not det.ok and cfg.fallback_opaque and not det.stopped:
            _opaque(spec, m, params, inputs, cfg, c, audit_beta)
            c.out["randomness.through_primitives"] = Finding(
                True, f"{det.message}; checked as opaque code instead (map against the exact law, samples audited)",
                skipped=True, witness=det.witness)
            c.out.setdefault("state.independent_calls", _STATE_FOREIGN)
            _outside_truth(spec, m, params, inputs, cfg, c, None)
            return c.out
        c.out["randomness.through_primitives"] = det
        if det.ok and det is not _STATE_UNDECIDED:  # laws read off stateful code's calls are no law
            _exact_clauses(spec, m, params, c, cfg, raw, laws, container)
            c.run(("function.batch",), lambda: {"function.batch": batch_finding(m.inner, laws, raw, _budgets(cfg))})
            exact = bool(laws) and all(k.complete for k in laws.values())
            _outside_truth(spec, m, params, inputs, cfg, c, {x: k.dist for x, k in laws.items()} if exact else None,
                           enumerable=True)
    if foreign:
        c.out["state.independent_calls"] = _STATE_FOREIGN
    elif stateful and state is not None and state.ok and not state.skipped:
        c.out["state.independent_calls"] = dataclasses.replace(
            stateful[0], message=f"{stateful[0].message} ({state.message}: the state is kept outside the "
            "measurements built afresh, or changes only after more calls)")
    if spec.constant_time_param is not None:
        c.run(("timing.constant_bytes",),
              lambda: {"timing.constant_bytes": constant_bytes(spec, m, params, inputs, cfg.seed)})
    return c.out


def _public(spec: MeasurementSpec, m: Any, params: dict, inputs: list, c: _Clauses) -> bool:
    """The clauses of code with public randomness or keyed encodings (vetdp.engine.public_clauses); False (nothing
    done) when the code uses none of vetdp.sampling.public's primitives."""
    from vetdp.engine.public_clauses import PUBLIC_CLAUSES, decide_public

    applied: list[bool] = []

    def decide() -> dict[str, Finding]:
        found = decide_public(spec, m, params, inputs)
        applied.append(found is not None)
        return found or {}

    return not c.run(PUBLIC_CLAUSES, decide) or applied == [True]


_STATE_UNDECIDED = Finding(True, "not decided: the code keeps state between calls (see state.independent_calls), so "
                           "replaying the primitives' choices does not reproduce a call", skipped=True)
_STATE_FOREIGN = Finding(True, "not checked: the code draws randomness outside vetdp's primitives (see "
                         "randomness.through_primitives), so its calls are not driven by vetdp's choices", skipped=True)


def _independent_calls(spec: MeasurementSpec, ctor: Callable, params: dict, cfg: RunConfig, inputs: list) -> Finding:
    """``state.independent_calls`` (:mod:`vetdp.engine.calls`) on measurements built afresh from ``params``. When it
    sees nothing but the enumeration's paths did not add up (state outside the measurement, e.g. a module global),
    the caller makes that its finding."""
    from vetdp.engine.calls import Memo, independent_calls

    declared = spec.memoised
    memo = None if declared is None else Memo(lambda x: declared.key(params, x),
                                              lambda x, n: declared.repeats(params, x, n))
    ok, message, witness = independent_calls(lambda: _build(spec, ctor, params, cfg), inputs, show, memo=memo)
    if ok is None:
        return Finding(False, message, undecided=True)
    return Finding(ok, message, witness=witness)


PRODUCT_FROM_PATHS = 4096  # an input enumerated with more paths: the other inputs' laws from the product structure
_PER_INPUT = "per input"  # the code shows its product structure only with its input bits fixed


def _bit_vector_parts(m: Any) -> tuple[Callable, BitVectorDomain] | None:
    """(function, domain) of a measurement on bit vectors of a known length under the discrete metric, whose
    product structure can be read (:mod:`vetdp.engine.structure`); None for anything else."""
    inner = getattr(m, "inner", m)
    function, domain = getattr(inner, "function", None), getattr(inner, "input_domain", None)
    if (callable(function) and isinstance(domain, BitVectorDomain) and domain.length is not None
            and isinstance(getattr(inner, "input_metric", None), DiscreteDistance)):
        return function, domain
    return None


def _product_law(m: Any, x: Any, found: list) -> Law | None:
    """The exact law of bit vector ``x`` from the product structure its code shows (:mod:`vetdp.engine.structure`),
    for code whose paths are too many to enumerate one by one (e.g. several coins per bit: 4^k paths for 2^k
    outputs); None when it is not a bit-vector measurement under the discrete metric or shows no such structure.
    ``found`` caches the structure (or None) for the parameter set."""
    parts = _bit_vector_parts(m)
    if parts is None:
        return None
    function, domain = parts
    if not found:  # the structure over symbolic input bits, else (code branching on its bits) input by input
        try:
            found.append(discover_product_structure(function, domain.length))
        except NotStructured:
            found.append(_PER_INPUT)
    structure = found[0]
    if structure is _PER_INPUT:
        try:
            structure = discover_product_structure(function, domain.length, at=x)
        except NotStructured:
            found[0] = None
            return None
    if structure is None or len(x) != structure.length:
        return None
    coordinates = sorted(structure.coordinates, key=lambda c: c.index)
    laws = [list(c.laws[tuple(bool(x[i]) for i in c.inputs)].items()) for c in coordinates]
    dist: dict[Any, Fraction] = {}
    for combo in itertools.product(*laws):
        p = math.prod((q for _, q in combo), start=Fraction(1))
        if p:
            y = freeze(tuple(v for v, _ in combo))
            dist[y] = dist.get(y, Fraction(0)) + p
    return Law(dist, Fraction(0), paths=0, complete=True, stop_reason="complete")


STRUCTURED_FROM_BITS = 13  # longer bit vectors: 2^k paths per input are too many to enumerate one by one


def _structured(spec: MeasurementSpec, m: Any, params: dict, c: _Clauses, required: bool = True) -> bool:
    """For a bit-vector mechanism of at least STRUCTURED_FROM_BITS bits under the discrete metric: the exact
    clauses from the product structure its code shows (:mod:`vetdp.engine.structure`); when it shows none,
    undecided (``required``, the user asked for this size) or skipped with the reason (a spec's scale example).
    False (nothing done) for anything else, which is enumerated input by input — a spec's scale example of an
    AtomDomain (categories) too, under the discrete metric (its large laws are then compared by classes:
    :func:`_class_decision`)."""
    inner = getattr(m, "inner", m)
    parts = _bit_vector_parts(m)
    exact = ("function.law", "privacy.sound", "privacy.tight", "privacy.distance", "privacy.monotone",
             "errors.data_independent", "randomness.through_primitives") + (
        ("privacy.rdp",) if spec.rdp_curve is not None else ()) + (
        ("privacy.pld",) if spec.delta_curve is not None else ()) + (
        ("privacy.dominated",) if spec.accountant_pair is not None else ())
    if parts is None or parts[1].length < STRUCTURED_FROM_BITS:
        if required or (isinstance(getattr(inner, "input_domain", None), AtomDomain) and _classes_apply(spec)):
            return False  # enumerated input by input (large laws compared by classes: _class_decision)
        c.out.update(dict.fromkeys(exact, Finding(
            True, f"not checked at this size: {type(inner).__name__} is not a vetdp Measurement of a bit-vector "
            "domain with a length and the discrete metric, so its product structure cannot be read; checked at the "
            "smaller sizes", skipped=True)))
        return True
    function, domain = parts
    k = domain.length
    coordinates = getattr(spec.universal, "coordinates", None)
    if coordinates is not None:  # the output read as one value per input bit (e.g. bit i of every report)
        function = functools.partial(viewed_by_coordinates, function, functools.partial(coordinates, params))

    found: list = []  # the structure, for the curve clauses (each run on its own: one failure loses no other)

    def decide() -> dict[str, Finding]:
        try:
            structure = discover_product_structure(function, k)
        except NotStructured as e:
            why = (f"{k} bits are too many to enumerate path by path (2^{k} paths per input) and the code shows no "
                   f"product structure: {e}")
            differs, probed = _per_input_coordinates(spec, params, function, domain)
            why += probed
            if required:
                out = dict.fromkeys(exact, Finding(False, f"undecided: {why}", undecided=True))
            else:
                out = dict.fromkeys(exact, Finding(True, f"not checked at this size: {why}; checked at the smaller "
                                                   "sizes", skipped=True))
            return out | ({"function.law": differs} if differs is not None else {})
        worst = worst_pair(structure, domain)
        out = privacy_findings(spec, inner, {}, params, worst=worst)
        out |= distance_findings(spec, inner, {}, params, worst=worst)
        found.append(structure)
        out["randomness.through_primitives"] = Finding(
            True, f"all randomness flows through vetdp's primitives: one symbolic run shows the output as a product "
            f"of {k} coordinates, each a function of its own input bit and its own draws, confirmed by "
            f"{structure.replays} concrete replays; the worst pair is decided over the whole domain")
        out["function.law"] = Finding(True, f"not checked at {k} bits (the law lists 2^{k} outputs); the spec's "
                                      "search checks it at small lengths", skipped=True)
        out["errors.data_independent"] = Finding(True, "no errors: the symbolic run raised none on any input",
                                                 skipped=True)
        return out

    if c.run(exact, decide) and found:
        structure = found[0]
        _curve_clauses(c, spec, inner, params, lambda a, prec: renyi_worst(structure, domain, a, prec),
                       lambda eps: worst_delta(structure, domain, eps),
                       lambda: [(privacy_loss_distribution(structure, x, x2), x, x2)
                                for x, x2 in pair_classes(structure, domain)])
    return True


def _per_input_coordinates(spec: MeasurementSpec, params: dict, function: Callable, domain: BitVectorDomain
                           ) -> tuple[Finding | None, str]:
    """Code with no product structure over symbolic input bits, read at a few concrete inputs
    (:func:`~vetdp.engine.structure.probe_vectors`): function.law's failure when an output bit's exact law there
    is not the spec's coordinate law, else (None, a note of what was compared; agreement proves nothing)."""
    coordinate_law = getattr(spec.universal, "coordinate_law", None)
    if coordinate_law is None:
        return None, ""
    reference = {b: {y: p for y, p in coordinate_law(params, b).items() if p} for b in (False, True)}
    read = 0
    for x in probe_vectors(domain):
        try:
            coordinates = coordinate_laws_at(function, x)
        except NotStructured:
            continue
        read += 1
        for c in coordinates:
            law = {y: p for y, p in c.laws[()].items() if p}
            expected = reference[x[c.index]]
            if law != expected:
                shown = "".join("1" if b else "0" for b in x)
                return Finding(False, f"on the input {shown}, output bit {c.index} (input bit {int(x[c.index])}) "
                                      f"has the exact law {_show_law(law)}; the spec's coordinate law is "
                                      f"{_show_law(expected)}", witness={"input": shown, "bit": c.index}), ""
    if not read:
        return None, "; its output bits could not be read at concrete inputs either"
    return None, (f"; on {read} concrete input(s) every output bit's exact law is the spec's coordinate law (a "
                  "check of those inputs' marginals, not a proof)")


def _show_law(law: dict) -> str:
    return "{" + ", ".join(f"{y!r}: {p}" for y, p in sorted(law.items(), key=lambda t: repr(t[0]))) + "}"


def _curve_clauses(c: _Clauses, spec: MeasurementSpec, m: Any, params: dict,
                   renyi_at: Callable[[Fraction, int], Any], delta_at: Callable[[Fraction], Any],
                   code_plds: Callable[[], list], note: str | None = None) -> None:
    """privacy.rdp, privacy.pld and privacy.dominated (where the spec states their curves), each in its own clause
    run so that one failure (e.g. a spec's accountant raising) loses no other; ``note`` is added to each message."""
    def noted(findings: dict[str, Finding]) -> dict[str, Finding]:
        return _with_note(findings, note) if note else findings

    c.run(("privacy.rdp",), lambda: noted(rdp_findings(spec, params, renyi_at)))
    c.run(("privacy.pld",), lambda: noted(pld_findings(spec, m, params, delta_at)))
    c.run(("privacy.dominated",), lambda: noted(dominance_findings(spec, params, code_plds)))


def _curve_clauses_of_laws(c: _Clauses, spec: MeasurementSpec, m: Any, params: dict, dists: dict,
                           note: str | None = None) -> None:
    """:func:`_curve_clauses` over the neighbouring pairs of exact laws, their joint probabilities grouped once."""
    if (spec.rdp_curve, spec.delta_curve, spec.accountant_pair) == (None, None, None) or len(dists) < 2:
        return
    terms: list = []

    def pair_terms_once() -> list:
        if not terms:
            terms.extend(pair_terms(dists, pairs_within(spec, params, list(dists), 1)))
        return terms

    _curve_clauses(c, spec, m, params, lambda a, prec: renyi_worst_of_laws(None, a, prec, terms=pair_terms_once()),
                   lambda eps: worst_delta_of_laws(None, eps, terms=pair_terms_once()),
                   lambda: [(pld_of_terms(t), x, xp) for t, x, xp in pair_terms_once()], note)


CLASSES_FROM_OUTPUTS = 4096  # laws with this many outputs are compared by classes of equal probability


def _classes_apply(spec: MeasurementSpec) -> bool:
    """Whether every pair of distinct inputs is a neighbour at every d >= 1 (the discrete metric), so that the
    worst pair of :mod:`vetdp.engine.symmetry` decides every privacy clause."""
    return spec.distance is None and spec.neighbours is None


def _class_decision(spec: MeasurementSpec, dists: dict, out: list) -> dict[str, Finding]:
    """Appends (worst pair, coverage note) to ``out`` when the exact laws are large (CLASSES_FROM_OUTPUTS
    outputs or more), the metric discrete and every law falls into few classes of equal probability
    (:mod:`vetdp.engine.symmetry`); otherwise leaves ``out`` empty (the laws are compared output by output)."""
    if not _classes_apply(spec) or len(dists) < 2 or max(len(d) for d in dists.values()) < CLASSES_FROM_OUTPUTS:
        return {}
    try:
        laws = [class_law(x, d) for x, d in dists.items()]
    except NotSymmetric:
        return {}
    cov = coverage(laws)
    out.extend([worst_over(laws), f"decided over the enumerated inputs by classes of outputs: {cov.describe()}"])
    return {}


def _with_note(findings: dict[str, Finding], note: str) -> dict[str, Finding]:
    return {name: dataclasses.replace(f, message=f"{f.message}; {note}") for name, f in findings.items()}


def _exact_clauses(spec: MeasurementSpec, m: Any, params: dict, c: _Clauses, cfg: RunConfig, raw: dict,
                   laws: dict, container: list) -> None:
    """function.law, the privacy clauses and errors.data_independent from the enumerated laws."""
    exact = all(k.complete for k in laws.values())
    dists = {x: k.dist for x, k in laws.items()}

    def check_law() -> dict[str, Finding]:  # inside the clause's budget: the reference may fail or be slow
        reference, source = reference_laws(spec, params, list(raw.values()), cfg.budget)
        if exact:
            found = law_finding(dists, reference.__getitem__, source)
            for name, admissible in spec.admissible_laws if not found.ok else ():
                candidate = admissible(params, dists)
                if candidate is None:
                    continue
                other = {freeze(x): {freeze(y): Fraction(q) for y, q in candidate(x).items() if q != 0}
                         for x in raw.values()}
                if law_finding(dists, other.__getitem__, name).ok:
                    return {"function.law": Finding(True, f"the exact output distribution equals {name}, which the "
                                                          f"spec admits; {found.message}", witness=found.witness)}
            return {"function.law": found}
        return {"function.law": law_with_residual(laws, reference.__getitem__, source)}

    if container:
        c.out["function.law"] = container[0]
    elif spec.law is None and not cfg.reference_law:
        c.out["function.law"] = Finding(True, "not checked: the spec states no law of its own (verify compares "
                                        "with vetdp's implementation)", skipped=True)
    else:
        c.run(("function.law",), check_law)
    if exact:
        classed: list = []  # (worst pair, coverage note) when the laws are compared by classes
        note = None  # classes rest on the enumerated inputs only: every privacy clause then says so
        if c.run(("privacy.sound", "privacy.tight"), lambda: _class_decision(spec, dists, classed)) and classed:
            worst, note = classed
            c.run(("privacy.sound", "privacy.tight"),
                  lambda: _with_note(privacy_findings(spec, m, dists, params, worst=worst), note))
            c.run(("privacy.distance", "privacy.monotone"),
                  lambda: _with_note(distance_findings(spec, m, dists, params, worst=worst), note))
        elif "privacy.sound" not in c.out:
            c.run(("privacy.sound", "privacy.tight"), lambda: privacy_findings(spec, m, dists, params))
            c.run(("privacy.distance", "privacy.monotone"), lambda: distance_findings(spec, m, dists, params))
        _curve_clauses_of_laws(c, spec, m, params, dists, note)
        c.out["errors.data_independent"] = data_independent_errors(dists)
        return
    c.run(("privacy.sound", "privacy.tight", "privacy.distance", "privacy.monotone"),
          lambda: privacy_with_residual(spec, m, laws, params))
    residual = max(k.residual for k in laws.values())
    reasons = sorted({k.stop_reason for k in laws.values() if not k.complete})
    stopped = [(x, k) for x, k in laws.items() if k.stop_reason == "budget"]
    if stopped:  # say that the work budget ended the enumeration, where, and which option raises it
        x, k = max(stopped, key=lambda item: item[1].residual)
        why = (f"undecided: budget — enumerating M({show(raw[x])!r}) ended on its work budget after {k.paths} "
               f"paths and {k.choices} random choices, the deepest run {k.depth} (budgets: {cfg.budget} paths per "
               f"pass, --max-paths; {cfg.max_steps} choices in all, --max-steps; {cfg.max_depth} per run, "
               f"--max-choices) with unexplored mass {_mass(k.residual)}")
        for name, f in list(c.out.items()):
            if f.undecided and name in ("function.law", "privacy.sound", "privacy.distance"):
                c.out[name] = dataclasses.replace(f, message=f"{why}; {f.message}",
                                                  witness={**(f.witness or {}), "x": show(raw[x])})
    c.out["errors.data_independent"] = Finding(False, f"undecided: laws known up to the unexplored mass {residual} "
                                               f"(~{float(residual):.3g}; stopped: {', '.join(reasons)})",
                                               undecided=True)
    for name, stated in (("privacy.rdp", spec.rdp_curve), ("privacy.pld", spec.delta_curve),
                         ("privacy.dominated", spec.accountant_pair)):
        if stated is not None:  # the curves are decided on exact laws only: say so rather than leave them out
            c.out[name] = Finding(False, f"undecided: the accountant's curves are decided on exact laws, and these "
                                  f"are known only up to an unexplored mass of {_mass(residual)} (stopped: "
                                  f"{', '.join(reasons)})", undecided=True)


def _mass(r: Fraction) -> str:
    """A probability for a message: ~x.xxx, or a power of two bound where a float would show 0."""
    if r == 0 or float(r) != 0:
        return f"~{float(r):.3g}"
    return f"< 2^{r.numerator.bit_length() - r.denominator.bit_length() + 1}"


def _outside_truth(spec: MeasurementSpec, m: Any, params: dict, inputs: list, cfg: RunConfig, c: _Clauses,
                   dists: dict | None, enumerable: bool = False) -> None:
    """``privacy.outside[<kind>]`` when ``domain.rejects_outside`` failed (see :func:`outside_findings`).

    The in-domain truth is ``dists`` (the enumerated laws), else the reference laws; an accepted
    out-of-domain input's truth is its enumerated law when the code is ``enumerable``, else the spec's law.
    """
    rejected = c.out.get("domain.rejects_outside")
    if rejected is None or rejected.ok:
        return
    def law_of(x: Any) -> tuple[dict | None, str]:
        if enumerable:
            got = enumerated_laws(m.inner, [x], _budgets(cfg))
            if got is not None:
                return next(iter(got.values())), "the enumerated law of the code"
        return spec_law_at(spec, params, x)

    def truth() -> dict[str, Finding]:
        accepted = accepted_outside(spec, m, params)
        if not accepted:
            return {}
        inside = dists
        if inside is None:
            try:
                inside = reference_laws(spec, params, inputs, cfg.budget)[0]
            except Exception as e:  # noqa: BLE001 - no in-domain truth: say so
                return {"privacy.outside": Finding(True, f"{len(accepted)} out-of-domain input(s) accepted; no exact "
                                                   f"in-domain truth: {type(e).__name__}: {e}", skipped=True)}
        return outside_findings(spec, m, params, accepted, inside, law_of)

    c.run(("privacy.outside",), truth)


def _opaque(spec: MeasurementSpec, m: Any, params: dict, inputs: list, cfg: RunConfig, c: _Clauses,
            audit_beta: float | None) -> None:
    """The opaque clauses: the map against the exact law, then the samples' audit, each under its own budget (slow
    code under audit must not leave its map undecided)."""
    from vetdp.audit.opaque import opaque_audit, opaque_findings

    beta = audit_beta if audit_beta is not None else cfg.audit_beta

    references: list = []  # the law the code should have, for the curve clauses (each run on its own)

    def map_findings() -> dict[str, Finding]:
        out = opaque_findings(spec, m, params, inputs, cfg, beta=beta, audit=False)
        if "privacy.sound" in out and not out["privacy.sound"].skipped:  # an exact truth exists: the map's range
            reference = reference_laws(spec, params, inputs, cfg.budget)[0]
            out.update(distance_findings(spec, m, reference, params))
            references.append(reference)
        return out

    if c.run(("privacy.sound", "privacy.tight"), map_findings) and references:
        _curve_clauses_of_laws(c, spec, m, params, references[0],
                               "against the law opaque code should have (its own is not observable)")
    c.run(("audit.distribution",), lambda: opaque_audit(spec, m, params, inputs, cfg, beta))



# ------------------------------------------------------------------ preconditions

def _working_constructor(spec: MeasurementSpec, ctor: Callable, cfg: RunConfig) -> CheckResult | None:
    """A ``construct`` failure when ``ctor`` is not a working constructor (None: it is one).

    Checked first, so that a non-callable, wrong-signature or None-returning constructor is one
    clear failure instead of precondition rows that "pass" because every call raised.
    """
    if cfg.build is None and not callable(ctor):
        return CheckResult(spec.name, "construct", Status.FAIL, subject=repr(ctor),
                           message=f"the constructor {ctor!r} is a {type(ctor).__name__}, not callable")
    if not spec.examples:
        return None
    params = spec.examples[0]
    m, built = _construct(spec, ctor, params, cfg)
    if m is not None:
        return None
    return CheckResult(spec.name, "construct", _status(built),
                       subject=params_json(params), message=f"{built.message} (on the spec's first pinned example; "
                       "no other clause was checked)", repro=_repro(spec, cfg, params, "construct"))


def _check_bad(spec: MeasurementSpec, ctor: Callable, cfg: RunConfig) -> Iterator[CheckResult]:
    for i, case in enumerate(spec.bad):
        progress.step("preconditions", i + 1, len(spec.bad), case.id)
        t0 = time.perf_counter()
        # vetdp check's own constructor refuses --params outside its preconditions: its rows rerun on the example
        shown = case.params if cfg.impl_ref or not spec.examples else spec.examples[0]
        repro = _repro(spec, cfg, shown, f"precondition[{case.id}]")
        built: list = []
        try:
            with deadline(cfg.time_limit):
                built.append(_build(spec, ctor, case.params, cfg))
        except DeadlineExceeded:
            status, msg = Status.STOPPED, time_stop(cfg, "the constructor").message
        except BaseException as e:  # noqa: BLE001 - SystemExit from the code under test is a finding too
            expected = case.error if isinstance(case.error, tuple) else (case.error,)
            if not isinstance(e, expected):
                status, msg = Status.FAIL, (f"raised {type(e).__name__}: {e}; expected "
                                            f"{'/'.join(t.__name__ for t in expected)}")
            elif cfg.strict_messages and not all(n in str(e) for n in case.names):
                status, msg = Status.FAIL, f"the message {str(e)!r} does not name {list(case.names)}"
            else:
                status, msg = Status.PASS, f"rejected: {type(e).__name__}: {e}"
        else:
            expected = case.error if isinstance(case.error, tuple) else (case.error,)
            status, msg = Status.FAIL, (f"accepted parameters the spec rejects with "
                                        f"{'/'.join(t.__name__ for t in expected)}: {params_json(case.params)}")
        yield CheckResult(spec.name, f"precondition[{case.id}]", status, subject=params_json(case.params),
                          message=msg, repro=None if status is Status.PASS else repro,
                          seconds=time.perf_counter() - t0)
        if built:
            yield _truth_beyond(spec, built[0], case, cfg)


def _truth_beyond(spec: MeasurementSpec, raw: Any, case: Any, cfg: RunConfig) -> CheckResult:
    """``privacy.sound[<id>]``: the map of a measurement built from the bad parameters ``case.params`` (which the
    code accepted) against the exact loss there: the enumerated law of the code, else the spec's law where it is
    defined (see :func:`beyond_preconditions_finding`). FAIL exactly when the map is below the exact loss."""
    t0 = time.perf_counter()
    name = f"privacy.sound[{case.id}]"
    params = case.params

    def finding() -> Finding:
        why = not_a_measurement(raw)
        if why is not None:
            return Finding(True, f"no exact truth: the constructor {why}", skipped=True)
        try:
            inputs = spec.inputs(params)
        except Exception as e:  # noqa: BLE001
            return Finding(True, f"no exact truth: the spec's inputs are not defined at these parameters: "
                           f"{type(e).__name__}: {e}", skipped=True)
        dists = None if cfg.opaque else enumerated_laws(raw, inputs, _budgets(cfg))
        source = "the enumerated law of the code"
        if dists is None:
            laws: dict | None = {}
            for x in inputs:
                law, source = spec_law_at(spec, params, x)
                if law is None:
                    laws = None
                    break
                laws[freeze(x)] = law
            dists = laws
            if laws is not None:
                source = "the spec's law at these parameters"
        return beyond_preconditions_finding(spec, GuardedMeasurement(raw), params, dists, source)

    try:
        with deadline(cfg.time_limit):
            f = finding()
    except DeadlineExceeded:
        f = time_stop(cfg, "computing the exact truth at these parameters")
    except Exception as e:  # noqa: BLE001 - the code under test or the law misbehaved: no truth, said so
        f = Finding(True, f"no exact truth at these parameters: {type(e).__name__}: {e}", skipped=True)
    status = _status(f)
    return CheckResult(spec.name, name, status, subject=params_json(params), claimed=f.claimed, true=f.true,
                       slack=f.slack, witness=f.witness, message=f.message,
                       repro=None if status in (Status.PASS, Status.SKIPPED) else _repro(spec, cfg, params, name, f),
                       seconds=time.perf_counter() - t0)


def _distances_note(applicable: list[Finding]) -> str:
    """What privacy.distance/privacy.monotone rest on over the parameter sets: how many were decided for every
    d_in (:mod:`vetdp.engine.distances`), and what the others were evaluated at."""
    universal = [f for f in applicable if "for every d_in >= 0" in f.message]
    note = f"; decided for every d_in >= 0 in {len(universal)} of {len(applicable)}"
    others = sorted({part for f in applicable if f not in universal for part in f.message.split("; ")
                     if part.startswith("evaluated at")})
    if others:
        note += f"; the others {others[0]}"
    elif universal:  # e.g. "for every d_in >= 0: 3 traced regions ({0} 0.0, {1} 1.09, [2, inf] raises ...)"
        text = max((f.message for f in universal), key=len)  # the most regions, not a degenerate map (ε = 0)
        note += f" ({text[text.index('for every d_in >= 0: ') + 21:].split('; ')[0]})"
    refusals = sorted({part for f in applicable for part in f.message.split("; ") if part.startswith("refused")})
    return note + (f"; {refusals[0]}" if refusals else "")


def _status(f: Finding) -> Status:
    """The status a finding reports: stopped and engine error (no verdict) first, then skipped, undecided, pass,
    fail."""
    return (Status.STOPPED if f.stopped else Status.ERROR if f.error else Status.SKIPPED if f.skipped
            else Status.UNDECIDED if f.undecided else Status.PASS if f.ok else Status.FAIL)


def _repro(spec: MeasurementSpec, cfg: RunConfig, params: dict, clause: str | None = None,
           finding: Finding | None = None) -> str:
    """The ``vetdp verify`` command that re-runs ``clause`` on ``params`` (in the same project, with the same seed,
    audit samples and rules: ``--strict`` for those of ``vetdp check``), then the reproduction in the library's own
    terms when ``cfg.reproduce`` gives one.
    Parameters JSON cannot carry (an object) are replaced by the spec's first pinned example: precondition rows
    run on every verify."""
    from vetdp.project import project_option

    target = cfg.impl_ref or spec.impl_ref
    target = target if target.startswith("--") else f"--impl {target}"  # or "--adapter REF" from verify
    shown = params if _json_native(params) or not spec.examples else spec.examples[0]
    command = f"vetdp{project_option()} verify {spec.name} {target} --params {shlex.quote(params_json(shown))}"
    if cfg.seed:
        command += f" --seed {cfg.seed}"
    if cfg.audit_samples != RunConfig.audit_samples:
        command += f" --samples {cfg.audit_samples}"
    if cfg.loose_map is Status.FAIL or cfg.strict_messages or not (cfg.fallback_opaque or cfg.opaque):
        command += " --strict"  # the rules of `vetdp check` (loose maps fail, messages name, own randomness fails)
    extra = cfg.reproduce(spec.name, clause or "", params, finding) if cfg.reproduce is not None else ""
    return f"{command}\n{extra}" if extra else command


def _json_native(x: Any) -> bool:
    """Whether JSON (with NaN and Infinity) carries ``x`` unchanged: dicts, lists, str, int, float, bool, None."""
    if isinstance(x, dict):
        return all(isinstance(k, str) and _json_native(v) for k, v in x.items())
    if isinstance(x, (list, tuple)):
        return all(_json_native(v) for v in x)
    return x is None or isinstance(x, (str, int, float, bool))


def _check_outside(spec: MeasurementSpec, ctor: Callable, cfg: RunConfig, params: dict,
                   why: str) -> Iterator[CheckResult]:
    """``verify --params`` outside the spec's preconditions: the parameters are a precondition row of their own
    (``precondition[<id>]`` of the bad row they equal, already checked, else ``precondition[params]``), with the
    exact truth where the code accepts them (``privacy.sound[<id>]``); no parameter set inside is checked."""
    same = [b for b in spec.bad if params_json(b.params) == params_json(params)]
    if not same:
        case = BadParams("params", params, (ValueError, TypeError))
        yield from _check_bad(dataclasses.replace(spec, bad=(case,)), ctor, cfg)
    row = same[0].id if same else "params"
    yield CheckResult(spec.name, "search.coverage", Status.PASS, subject="0 parameter sets",
                      message=f"the --params given lie outside the spec's preconditions ({why}): checked as "
                      f"precondition[{row}] (and privacy.sound[{row}] where the code accepts them); no parameter set "
                      "inside them was checked")


# ------------------------------------------------------------------ search over parameters

_SEARCH = dict(database=None, deadline=None, suppress_health_check=list(HealthCheck))


@contextlib.contextmanager
def _shrinking_counted_in_steps() -> Iterator[None]:
    """Hypothesis ends a shrink after five minutes of wall clock; for the block it is ended by its count of
    shrinks only, so that the minimal example (like every other part of a verdict) does not depend on the machine's
    speed. Without that module constant (another hypothesis version) the block changes nothing."""
    from hypothesis.internal.conjecture import engine

    saved = getattr(engine, "MAX_SHRINKING_SECONDS", None)
    if saved is not None:
        engine.MAX_SHRINKING_SECONDS = 10**9
    try:
        yield
    finally:
        if saved is not None:
            engine.MAX_SHRINKING_SECONDS = saved


def draw_params(strategy, n: int, seed: int) -> list[dict]:
    """Up to ``n`` distinct parameter sets drawn from ``strategy``; the same seed gives the same list."""
    drawn: dict[str, dict] = {}

    @hypothesis_seed(seed)
    @settings(max_examples=n, phases=[Phase.generate], derandomize=False, **_SEARCH)
    @given(strategy)
    def collect(p: dict) -> None:
        drawn.setdefault(params_json(p), p)

    try:
        collect()
    except Unsatisfiable:  # an empty or always-filtered strategy draws nothing; coverage reports it
        pass
    return list(drawn.values())


def _coverage(spec: MeasurementSpec, evaluated: list[dict], pinned: int, cfg: RunConfig, stopped: str,
              timed_out: bool = False, chosen: int = 0) -> CheckResult:
    """``search.coverage``: how many parameter sets were checked and which edges they hit (FAIL when none; STOPPED
    when the time limit ended the search, so that the run exits 2)."""
    edges: dict[str, int] = {}
    for p in evaluated:
        for label in (spec.edges(p) if spec.edges is not None else []):
            edges[label] = edges.get(label, 0) + 1
    n = len(evaluated)
    fixed = pinned + chosen
    text = (f"{n} parameter sets ({min(pinned, n)} pinned, "
            + (f"{max(0, min(fixed, n) - pinned)} chosen by the universal exploration, " if chosen else "")
            + f"{max(0, n - fixed)} drawn with seed {cfg.seed})"
            + (f"; edges covered: {', '.join(f'{k} ×{v}' for k, v in sorted(edges.items()))}" if edges else "")
            + (f"; {stopped}" if stopped else ""))
    status = Status.STOPPED if timed_out else Status.PASS if n else Status.FAIL
    return CheckResult(spec.name, "search.coverage", status, subject=f"{n} parameter sets",
                       message=text if n else "no parameter set was checked: the search covered nothing",
                       witness={"parameter_sets": n, "edges": edges} if n else None)


_UNIVERSAL_SETS = 8  # parameter sets the universal exploration hands the concrete search: its witnesses first
_COVERAGE_ARGUMENTS = ("the law given the public draws", "decided over all")


def _foreign_sources(cache: Mapping[str, Mapping[str, Finding]]) -> list[str]:
    """The sources outside vetdp's primitives that the concrete runs saw the code draw from (none: [])."""
    for findings in cache.values():
        f = findings.get("randomness.through_primitives")
        if f is not None and isinstance(f.witness, dict) and f.witness.get("sources"):  # failed, or audited instead
            return list(f.witness["sources"])
    return []


def universal_subject(spec: MeasurementSpec, deep: bool) -> str:
    """What the universal exploration covers, for its row: its float parameters over every value, on its bases
    (e.g. "every f, p, q on 1 base (k = 2, m = 1)"), never "every parameter value" where the integers are bases;
    then its probe bases, where the law alone is checked ("; the law checked on 1 probe base (k = 10, m = 5)")."""
    try:
        bases = list(spec.universal.bases(deep))
        floats = list(dict(spec.universal.floats(bases[0]))) if bases else []
        probes = list(spec.universal.probe_bases(deep)) if spec.universal.probe_bases is not None else []
    except Exception:  # noqa: BLE001 - a spec's own function failing here is reported by the exploration itself
        return "every float parameter value on its bases"
    subject = f"every {', '.join(floats) or 'parameter'} on {_counted_bases(bases)}"
    return subject + (f"; the law checked on {_counted_bases(probes, 'probe base')}" if probes else "")


def _counted_bases(bases: list[dict], noun: str = "base") -> str:
    """"2 bases (k in 1..2, m = 1)": how many, and the span of each integer parameter (a list's length)."""
    spans = []
    for name in dict.fromkeys(k for b in bases for k in b):
        values = [len(b[name]) if isinstance(b[name], (list, tuple)) else b[name] for b in bases if name in b]
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            continue
        label = f"len({name})" if any(isinstance(b.get(name), (list, tuple)) for b in bases) else name
        lo, hi = min(values), max(values)
        spans.append(f"{label} = {lo}" if lo == hi else f"{label} in {lo}..{hi}")
    where = f" ({', '.join(spans)})" if spans else ""
    return f"{len(bases)} {noun}{'' if len(bases) == 1 else 's'}{where}"


def _explore_universally(spec: MeasurementSpec, ctor: Callable | None, cfg: RunConfig
                         ) -> tuple[UniversalReport | None, CheckResult]:
    """The spec's universal exploration (:mod:`vetdp.engine.universal`) and its ``search.universal`` row.

    The row fails where a clause fails on a region (its witness, a concrete parameter set, is also checked by the
    sampled search); it passes when every explored region was decided; it is a warning, naming where and why, when
    regions are left open (those are sampled concretely instead). The exploration counts its work in runs per base
    (``cfg.max_regions``) and paths per law (``cfg.budget``); the time limit only stops it."""
    from vetdp.engine.universal import UNIVERSAL_CLAUSES, UniversalEngineError, explore_spec

    t0 = time.perf_counter()
    progress.step("universal exploration", 1, 1, spec.name)

    subject = universal_subject(spec, cfg.deep)

    def row(status: Status, message: str, witness: dict | None = None) -> CheckResult:
        return CheckResult(spec.name, "search.universal", status, subject=subject,
                           witness=witness, message=message, seconds=time.perf_counter() - t0,
                           repro=_repro(spec, cfg, witness) if witness is not None else None)

    try:
        with deadline(cfg.time_limit):
            report = explore_spec(spec, lambda p: _build(spec, ctor, p, cfg), deep=cfg.deep, budget=cfg.budget,
                                  region_budget=cfg.max_regions,
                                  on_base=lambda i, n: progress.note(f"universal base {i + 1}/{n}"))
    except DeadlineExceeded:
        return None, row(Status.STOPPED, time_stop(cfg, "the universal exploration", "--max-regions").message)
    except UniversalEngineError as e:
        return None, row(Status.ERROR, f"engine error in the universal exploration: {e} ({_origin(e.__cause__)}); "
                                       "vetdp's own computation failed, which is not a finding about the code under "
                                       "test (the other clauses stand)")
    if not report.bases:
        return report, row(Status.WARNING, "nothing explored symbolically: " + "; ".join(
            f"{c}: {report.describe(c)}" for c in UNIVERSAL_CLAUSES) + " (the sampled search decides)")
    lines = [f"{c}: {report.describe(c)}" for c in UNIVERSAL_CLAUSES]
    scope = f"{len(report.bases)} base(s), {report.runs} symbolic run(s)"
    if any(not report.clauses[c].ok for c in UNIVERSAL_CLAUSES):
        failing = [f"{c}: {report.describe(c)}" for c in UNIVERSAL_CLAUSES if not report.clauses[c].ok]
        # a map only loose (privacy.tight) is reported as the concrete privacy.tight is: a warning under verify
        loose_only = all(report.clauses[c].ok for c in UNIVERSAL_CLAUSES if c != "privacy.tight")
        status = cfg.loose_map if loose_only else Status.FAIL
        # one reproduction per failing region, at its witness (printed with repr: the floats round-trip exactly)
        reproduce = [f"reproduce {c} on {box.describe()}: {_repro(spec, cfg, witness, c).splitlines()[0]}"
                     for c in UNIVERSAL_CLAUSES for box, witness, _ in report.clauses[c].failed]
        return report, row(status, f"{'; '.join(failing)} ({scope})\n" + "\n".join(reproduce),
                           witness=report.witnesses[0])
    if any(report.clauses[c].open for c in UNIVERSAL_CLAUSES) or report.stopped:
        return report, row(Status.WARNING, f"{'; '.join(lines)} ({scope}; open regions are checked concretely "
                                            "only at the few points handed to the sampled search and where it "
                                            "draws: not a proof there)")
    return report, row(Status.PASS, f"{'; '.join(lines)} ({scope})")


def _evaluate_task(spec: MeasurementSpec, ctor: Callable | None, cfg: RunConfig, beta: float,
                   scale: frozenset[str], params: dict) -> dict[str, Finding]:
    """One parameter set's clauses, as a task a :class:`vetdp.distributed.TaskRunner` can run anywhere."""
    return evaluate_params(spec, ctor, params, cfg, audit_beta=beta, scale=params_json(params) in scale)


def check_measurement_spec(spec: MeasurementSpec, ctor: Callable | None = None, cfg: RunConfig | None = None,
                           only_params: dict | None = None, runner: Any = None,
                           outside: tuple[dict, str] | None = None) -> Iterator[CheckResult]:
    """Yield a CheckResult per precondition row, per postcondition clause, and the search's coverage.

    Every parameter set is evaluated in isolation: a crash or a ``sys.exit`` in the code under test becomes a
    failing clause and the run goes on; a hang ends at ``cfg.time_limit`` as a stopped clause, and the search
    stops there (search.coverage is then stopped too, so that the run exits 2). ``runner`` (a
    :class:`vetdp.distributed.TaskRunner`) evaluates the parameter sets where it runs its tasks, e.g. on a Dask
    cluster; the stop rules are then applied to the results in the same order, so the report is the serial one.
    ``outside`` = (params, why): parameters outside the spec's preconditions (``why``), checked as a precondition
    row instead of a parameter set (:func:`_check_outside`).
    """
    cfg = cfg or RunConfig()
    ctor = ctor if ctor is not None else (spec.load_constructor() if cfg.build is None else None)
    broken = _working_constructor(spec, ctor, cfg)
    if broken is not None:
        yield broken
        return
    yield from _check_bad(spec, ctor, cfg)
    if outside is not None:
        yield from _check_outside(spec, ctor, cfg, *outside)
        return
    t0 = time.perf_counter()
    cache: dict[str, dict[str, Finding]] = {}
    originals: dict[str, dict] = {}
    candidates = [only_params] if only_params is not None else list(spec.examples)
    scale = set() if only_params is not None else {params_json(p) for p in spec.scale_examples}
    if only_params is None:
        candidates += list(spec.scale_examples)
    pinned = len(candidates)
    universal, universal_row, chosen = None, None, []
    explore = only_params is None and spec.universal is not None and cfg.max_regions > 0 and not cfg.opaque
    if only_params is None:
        candidates += draw_params(spec.params(cfg.deep), cfg.examples, cfg.seed)
    # the run's audits share one false-alarm budget (the exploration's sets included)
    beta = cfg.audit_beta / max(1, len(candidates) + (_UNIVERSAL_SETS if explore else 0))
    stopped = ""

    precomputed: dict[str, dict[str, Finding]] = {}
    if runner is not None and len(candidates) > 1:
        todo: dict[str, dict] = {}
        for p in candidates:
            todo.setdefault(params_json(p), p)
        task = functools.partial(_evaluate_task, spec, ctor, cfg, beta, frozenset(scale))
        precomputed = dict(zip(todo, runner.map(task, list(todo.values())), strict=True))

    def run(p: dict) -> dict[str, Finding]:
        key = params_json(p)
        if key not in cache:
            cache[key] = precomputed[key] if key in precomputed else evaluate_params(spec, ctor, p, cfg,
                                                                                     audit_beta=beta,
                                                                                     scale=key in scale)
            originals[key] = p
        return cache[key]

    hung = 0
    timed_out = False

    def visit(sets: list[dict]) -> bool:
        """Evaluate ``sets`` in order; False when a stop rule ended the search."""
        nonlocal hung, timed_out, stopped
        for i, p in enumerate(sets):
            if hung >= 2:  # every further parameter set would likely spend the whole work budget too
                stopped = (f"search stopped: the work budget was spent on {hung} parameter sets; "
                           f"{len(sets) - i} not checked")
                return False
            progress.step("parameter set", i + 1, len(sets), params_json(p))
            findings = run(p)
            if any(f.stopped for f in findings.values()):  # a hang: every further set would likely hang too
                timed_out = True
                stopped = (f"stopped: time — the time limit (--time-limit {cfg.time_limit:g} s per clause) fired on "
                           f"parameter set {i + 1}; {len(sets) - i - 1} not checked")
                return False
            # a scale example that spends its budget says nothing about the small drawn sets still to come
            hung += params_json(p) not in scale and any(f.undecided and f.message.startswith("undecided: budget")
                                                        for f in findings.values())
        return True

    # the exploration runs the code after the sampled search, so that code keeping state between calls is judged
    # by the concrete clauses first, in the state a fresh run gives it; its witnesses are then checked concretely
    if visit(candidates) and explore:
        foreign = _foreign_sources(cache)
        if foreign:  # the symbolic laws would see none of those draws: a wrong law, never a finding
            universal_row = CheckResult(spec.name, "search.universal", Status.WARNING,
                                        subject=universal_subject(spec, cfg.deep),
                                        message="not explored symbolically: the code draws randomness outside vetdp's "
                                                f"primitives ({', '.join(foreign)}), which its symbolic laws cannot "
                                                "see; the concrete clauses decide")
        else:
            universal, universal_row = _explore_universally(spec, ctor, cfg)
        if universal is not None:
            chosen = universal.parameter_sets(limit=_UNIVERSAL_SETS)
            visit(chosen)
    clauses = sorted({c for findings in cache.values() for c in findings})
    minimal: dict[str, dict] = {}
    for clause in clauses:
        not_ok = [k for k, f in cache.items() if clause in f and not f[clause].ok]
        if not not_ok:
            continue
        # a definite failure anywhere outranks an undecided or stopped set (which would otherwise hide it)
        definite = [k for k in not_ok if not (cache[k][clause].undecided or cache[k][clause].stopped
                                              or cache[k][clause].error)]
        failing = [originals[k] for k in (definite or not_ok)]
        # the simplest failing set already checked (short JSON: few categories, short vectors, round numbers);
        # with --deep, hypothesis then searches for a smaller one
        example = min(failing, key=lambda p: (len(params_json(p)), params_json(p)))
        if cfg.deep and only_params is None and not stopped and clause != "audit.distribution":
            try:
                with _shrinking_counted_in_steps():
                    example = find(spec.params(cfg.deep), lambda p, c=clause: c in run(p) and not run(p)[c].ok,
                                   settings=settings(max_examples=cfg.examples, derandomize=False,
                                                     report_multiple_bugs=False, **_SEARCH),
                                   random=random.Random(cfg.seed))  # a seeded search order, not a randomness source
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
            status = _status(f)
            if clause == "privacy.tight" and status is Status.FAIL:
                status = cfg.loose_map
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
                seen = [f.witness["detectable_deviation"] for f in applicable
                        if f.witness and isinstance(f.witness.get("detectable_deviation"), float)]
                if seen:
                    msg += (f"; the audit detects a deviation of about {max(seen):.3g} or more in any output "
                            "probability (raise it with --samples)")
                if clause in ("privacy.distance", "privacy.monotone"):
                    msg += _distances_note(applicable)
                elif clause in ("state.independent_calls", "randomness.cryptographic"):  # e.g. "128 calls on ..."
                    msg += f"; e.g. {applicable[0].message}"
                else:
                    refusals = sorted({f.message for f in applicable if "refused" in f.message})
                    if refusals:
                        msg += f"; {refusals[0]}"
                # what a decision rests on when only some inputs were enumerated (vetdp.engine.symmetry)
                partial = sorted({part for f in applicable for part in f.message.split("; ") if "not examined" in part})
                if partial:
                    msg += f"; {partial[-1]}"
                unobservable = sorted({part for f in applicable for part in f.message.split("; ")
                                       if "not observable" in part})
                if unobservable:
                    msg += f"; {unobservable[0]}"
                if worst is not None:  # the values the row shows: which parameter set, which comparison
                    where = next(originals[k] for k, fs in cache.items() if fs.get(clause) is worst)
                    msg += f"; least slack on {params_json(where)}: {worst.message}"
                # hashing mechanisms: the argument why what was examined covers every public value and input
                # (vetdp.engine.public_clauses), from the worst set when it carries one
                for marker in _COVERAGE_ARGUMENTS:
                    argued = [f for f in ([worst] if worst is not None else []) + applicable if marker in f.message]
                    if argued and marker not in msg:
                        msg += f"; {argued[0].message[argued[0].message.index(marker):]}"
                        break
            if universal is not None and status is Status.PASS and clause in universal.clauses:
                msg += f"; universally: {universal.describe(clause)}"
            yield CheckResult(spec.name, clause, status, subject=_sets_checked(clause, status, len(applicable), cache),
                              claimed=worst.claimed if worst else None, true=worst.true if worst else None,
                              slack=worst.slack if worst else None, message=msg,
                              seconds=elapsed / max(1, len(clauses)))
    if universal_row is not None:
        yield universal_row
    yield _coverage(spec, list(originals.values()), pinned, cfg, stopped, timed_out, chosen=len(chosen))
