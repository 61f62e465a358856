"""Executable Hoare triples: what a spec module under specs/ declares.

A spec module defines ``SPECS``, a list of :class:`MeasurementSpec` and
:class:`EstimatorSpec`. The engine finds every spec module by itself
(:func:`discover_specs`); adding a mechanism never touches the engine.

* Preconditions are data: :class:`BadParams` rows — parameters that must be rejected and
  the exception each must raise.
* The constructor is named (``constructor``) and called through ``build``, so another
  implementation with the same arguments can be vetted against the same spec.
* Postconditions are checked by the engine (:mod:`vetdp.engine.runner`) from the spec's
  finite input sets: the privacy guarantee against the exact truth, data-independent
  errors, rejection of out-of-domain inputs, constant-time byte use, and for estimators
  unbiasedness and the variance formula.
* Parameter spaces are hypothesis strategies that include the boundary floats.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from typing import Any

from hypothesis import strategies as st

from vetdp.core.measurement import Measurement
from vetdp.core.validation import exact_rational

__all__ = [
    "BadParams",
    "Universal",
    "Memoisation",
    "exact_value",
    "OutsidePreconditions",
    "SpecFunctionError",
    "checked_spec",
    "MeasurementSpec",
    "EstimatorSpec",
    "discover_specs",
    "find_spec",
    "spec_modules",
    "boundary_probabilities",
    "at_least",
    "floats_in",
    "MIN_SUBNORMAL",
    "tiny_float",
    "tiny_numerator",
    "tiny_floats",
    "seeded_permutation",
    "spread",
    "validate_params",
    "check_size",
    "MAX_SIZE",
]

Params = dict[str, Any]


@dataclasses.dataclass(frozen=True)
class BadParams:
    """Parameters the constructor must reject with ``error``, its message naming ``names``."""

    id: str
    params: Params
    error: type[BaseException] | tuple[type[BaseException], ...]
    names: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True)
class Universal:
    """Where a spec's clauses are decided for every value of its float parameters (:mod:`vetdp.engine.universal`).

    ``bases(deep)`` lists parameter sets that fix everything but the float parameters (integers, shapes,
    categories); ``floats(base)`` gives each float parameter's valid values at that base as a closed interval of
    floats (an open end moved to the adjacent float). The engine explores the whole float line of each, so that
    the constructor is also seen to reject everything outside. ``constant(params)`` is the
    :class:`~vetdp.core.measurement.PrivacyConstant` that bounds the reference law's exact loss for every
    parameter value (by the z3 obligations and lemmas of its proof document), or a list of such constants when the
    map may return any of them (k-RAPPOR: min(ε, bound)): a map that is one of them term for term is then sound on
    every region where the law is the reference law. Long bit vectors (``enumerate_up_to``)
    are decided from the product structure their code shows, each output bit against ``coordinate_law``. A
    precondition that links the floats (RAPPOR's p < q and p*, 1 − q* >= 2**-1000) is ``accepts(params)``, run on
    the symbolic parameters with the code, so that ``precondition.regions`` judges each region against it."""

    bases: Callable[[bool], Sequence[Params]]
    floats: Callable[[Params], dict[str, tuple[float, float]]]
    constant: Callable[[Params], Any] | None = None
    # bit vectors longer than this are decided from the product structure the code shows
    # (vetdp.engine.structure), coordinate by coordinate against coordinate_law(params, input bit) -> {bit: P};
    # None: every base is enumerated input by input
    coordinate_law: Callable[[Params, bool], dict] | None = None
    # the output as one value per input bit, the values coordinate_law gives the law of (RAPPOR's n reports: bit i
    # of every report, a tuple); None: the output itself
    coordinates: Callable[[Params, Any], Sequence[Any]] | None = None
    enumerate_up_to: int = 6
    # a precondition linking the float parameters (not a product of intervals, e.g. p < q), as a predicate of the
    # parameters decided on the same regions as the code (exact_value, comparisons); None: floats(base) says all
    accepts: Callable[[Params], bool] | None = None
    # the inputs whose laws the exploration enumerates at a base, when the spec's ``inputs`` pick a subset there (a
    # law proved on some categories proves nothing for the others); None: the spec's inputs
    inputs: Callable[[Params], Sequence[Any]] | None = None
    # bases explored for findings only (``probe_bases(deep)``): long Bloom filters whose code branches on its own
    # draws, read at a few concrete inputs (structure.probe_vectors) with the floats still symbolic, so that every
    # region the code cuts at that length is compared with ``coordinate_law`` for every value; a difference fails
    # function.law, agreement is reported as checked (those inputs only, not a proof), and the privacy clauses are
    # not explored there
    probe_bases: Callable[[bool], Sequence[Params]] | None = None


@dataclasses.dataclass(frozen=True)
class Memoisation:
    """State a measurement may keep across its calls, declared by its spec and checked as declared by
    ``state.independent_calls`` (:mod:`vetdp.engine.calls`).

    ``key(params, x)`` names what a call on input x may remember: two calls of one measurement whose keys are equal
    may depend on each other, and ``repeats(params, x, n)`` is then the exact joint law of n calls on x made one
    after the other on one measurement ({(output₁, …, outputₙ): P}, outputs frozen); everything else must be
    independent: a call whose key this measurement has not seen has the law of a fresh measurement's first call
    whatever was called before, and separately built measurements share nothing (the key is always per
    measurement: its secret, its client). The other clauses judge one call's law: under a declaration each of their
    calls is the first call of a measurement built afresh."""

    key: Callable[[Params, Any], Any]
    repeats: Callable[[Params, Any, int], dict]


def exact_value(x: Any) -> Any:
    """The exact rational value of a float, int or Fraction (``Fraction(x)``); for the engine's symbolic floats
    (:mod:`vetdp.engine.symbolic`), the probability as a polynomial in it. Spec laws use it so that the same law
    serves concrete parameters and regions of them."""
    return exact_rational(x)


@dataclasses.dataclass(frozen=True)
class MeasurementSpec:
    """The Hoare triple of a measurement constructor (see the module docstring)."""

    name: str  # the stem shared with impl/<name>.py and proofs/<name>.md
    constructor: str  # attribute of vetdp.impl.<name>
    build: Callable[[Callable[..., Measurement], Params], Measurement]
    params: Callable[[bool], st.SearchStrategy[Params]]  # deep -> strategy of valid parameters
    examples: Sequence[Params]  # pinned boundary cases, checked first
    bad: Sequence[BadParams]
    inputs: Callable[[Params], list]  # a finite set of in-domain inputs
    outside: Callable[[Params], list]  # inputs outside the domain, which must be rejected before randomness
    d_in: int = 1
    tight: bool = True  # map(d_in) <= the exact loss·(1 + 2**-30) + 2**-40 (privacy.tight)
    constant_time_param: str | None = None  # a bool parameter promising input-independent byte use
    describe: str = ""
    # the neighbouring (x, x') pairs among the (frozen) inputs; None: every ordered pair of distinct inputs
    neighbours: Callable[[Params, list], list[tuple[Any, Any]]] | None = None
    # the reference law, stated independently of any implementation: (params, x) -> {output: P[M(x) = output]},
    # outputs in their frozen form (vetdp.engine.enumerate.freeze). None: the law of our implementation.
    law: Callable[[Params, Any], dict[Any, Fraction]] | None = None
    # other exact laws function.law accepts, by name: (params, dists) -> a law x -> {output: P} to compare with, or
    # None. ``dists`` (frozen input -> the code's exact law) lets a family be matched by one parameter read from the
    # code, e.g. a flip probability rounded otherwise than ours (whether it honours ε is privacy.sound's question)
    admissible_laws: tuple[tuple[str, Callable[[Params, dict], Callable[[Any], dict] | None]], ...] = ()
    # the RDP curve an accountant composes with for these parameters, α -> ε̂(α) (e.g. vetdp.accounting's curve of
    # the ideal law, certified upward); privacy.rdp decides it against the code's exact worst Rényi divergence
    # at RDP_ORDERS. None: no RDP claim to check
    rdp_curve: Callable[[Params], Callable[[float], float]] | None = None
    # the approximate-DP curve an accountant composes with for these parameters, ε -> δ̂(ε) for one run (e.g. the
    # exact PLD of the ideal law, certified upward); privacy.pld decides it against the code's exact worst
    # hockey-stick divergence at ε = 0, map(1)/4, map(1)/2. None: no such claim to check
    delta_curve: Callable[[Params], Callable[[float], float]] | None = None
    # the worst pair an accountant composes with for these parameters, as its privacy-loss distribution (ratio ->
    # probability under the first law, exact Fractions), or a callable prec -> (lower, upper) such PLDs of rational
    # pairs enclosing it in Blackwell's order (e.g. vetdp.accounting's RRFamily.pair_plds); privacy.dominated
    # decides that every pair of the code's neighbouring laws is a garbling of it, which bounds every RDP order,
    # zCDP, δ(ε) and composition the accountant computes. None (or None for some parameters, e.g. ones outside the
    # constructor's range that a library accepts): no such claim to check
    accountant_pair: Callable[[Params], Any] | None = None
    # the input metric's distance between two inputs; None: the discrete distance (0 if equal, else 1)
    distance: Callable[[Params, Any, Any], int] | None = None
    # the map is evaluated at least at every d_in in 0..max_d_in (sound or refused, and monotone); the engine goes on
    # to DISTANCE_SWEEP and beyond, and decides every d_in where the map's trace allows (vetdp.engine.distances)
    max_d_in: int = 3
    # labels of the boundary classes a parameter set covers (e.g. "prob = 1/t rounded up"), for the report
    edges: Callable[[Params], list[str]] | None = None
    # "module:attr" of the constructor, for a mechanism outside vetdp (a user's project); None: vetdp.impl.<name>
    constructor_ref: str | None = None
    # (params, x) -> (kind, why) for an out-of-domain input x, e.g. ("length", "length 5, not k = 4"): accepted
    # out-of-domain inputs are judged per kind (privacy.outside[<kind>]) so that one defect never masks another;
    # None: one kind, "input"
    outside_kind: Callable[[Params, Any], tuple[str, str]] | None = None
    # (params) -> (the parameter that sets the domain's size, that size), e.g. ("categories", t) or ("k", bits), read
    # before anything is listed or built: validate_params refuses a size above MAX_SIZE up front. None: the spec's
    # domain does not grow with its parameters
    size: Callable[[Params], tuple[str, int]] | None = None
    # production-size parameter sets: bit vectors are checked through the product structure the code shows
    # (vetdp.engine.structure; code without it is checked at the other sizes only, with a note); categorical
    # laws are enumerated for a spread of inputs and decided by their symmetry classes (vetdp.engine.symmetry)
    scale_examples: Sequence[Params] = ()
    # for a mechanism with public randomness and keyed encodings (vetdp.sampling.public): params -> its
    # vetdp.engine.public.ConditionalLaw (public draws released, encodings, law per encoding value), which
    # function.law compares with the code's exact conditional laws. None: no such law stated
    conditional_law: Callable[[Params], Any] | None = None
    # where the clauses are decided for every value of the float parameters (vetdp.engine.universal); None: only
    # at the pinned and drawn parameter sets
    universal: Universal | None = None
    # state the measurement may keep across calls (e.g. a permanent response per client and value), checked as
    # declared by state.independent_calls; None: every call has the first call's law, independently of the others
    memoised: Memoisation | None = None

    @property
    def impl_ref(self) -> str:
        """The constructor as "module:attr" (how reproductions name it)."""
        return self.constructor_ref or f"vetdp.impl.{self.name}:{self.constructor}"

    def load_constructor(self) -> Callable[..., Measurement]:
        """The constructor named by :attr:`impl_ref`; ImportError/AttributeError name the reference."""
        return _load_ref(self.impl_ref, "constructor_ref")


@dataclasses.dataclass(frozen=True)
class EstimatorSpec:
    """The Hoare triple of a debiasing estimator of a measurement's outputs.

    ``params["dataset"]`` is a small list of true inputs; the engine enumerates the
    mechanism on each, forms the exact joint distribution of the answers, and checks
    ``E[estimate] == truth`` per coordinate, then each claim exactly: ``"variance"`` (a
    list, per coordinate) and ``"mse"`` (E‖estimate − truth‖², one number).
    """

    name: str  # e.g. "debias_randomized_response_bitvec"
    module: str  # the impl stem, e.g. "randomized_response_bitvec"
    estimator: str  # attribute of vetdp.impl.<module>
    mechanism: MeasurementSpec
    params: Callable[[bool], st.SearchStrategy[Params]]  # includes the mechanism's params and "dataset"
    examples: Sequence[Params]
    estimate: Callable[[Callable, list, Params], Sequence[Fraction]]  # exact estimates from answers
    truth: Callable[[Params], Sequence[Fraction]]  # the quantities being estimated
    claims: Callable[[Params], dict[str, Any]]  # {"variance": [...], "mse": value}, from the impl
    bad: Sequence[tuple[str, Callable[[Callable], Any], type[BaseException] | tuple, tuple[str, ...]]] = ()
    describe: str = ""
    # claim name -> (the implementation's claim function, params) -> the claim, so that an implementation
    # under test can supply its own claim function (verify --variance) in place of ours
    claim_calls: dict[str, Callable[[Callable, Params], Any]] = dataclasses.field(default_factory=dict)
    # "module:attr" of the estimator, for one outside vetdp (a user's project); None: vetdp.impl.<module>
    estimator_ref: str | None = None

    @property
    def impl_ref(self) -> str:
        """The estimator as "module:attr" (how reproductions name it)."""
        return self.estimator_ref or f"vetdp.impl.{self.module}:{self.estimator}"

    def load_estimator(self) -> Callable:
        """The estimator named by :attr:`impl_ref`; ImportError/AttributeError name the reference."""
        return _load_ref(self.impl_ref, "estimator_ref")


def _load_ref(ref: str, field: str) -> Callable:
    module, sep, attr = ref.partition(":")
    if not sep or not module or not attr:
        raise ValueError(f"{field}={ref!r} must be 'module:attr'")
    from vetdp import fence

    try:
        found = fence.import_module(module, f"{field}={ref!r}:")
    except ImportError as e:
        raise ImportError(f"{field}={ref!r}: module {module!r} cannot be imported: {e}") from e
    try:
        return getattr(found, attr)
    except AttributeError:
        raise AttributeError(f"{field}={ref!r}: module {module!r} has no attribute {attr!r}") from None


class SpecFunctionError(TypeError):
    """A spec's own function returned a value of the wrong type; the message names the spec, the function and the
    type it must return (the spec is wrong, not the code it checks)."""


_RETURNS = {  # field -> (what it must return, a test of the value)
    # probabilities: numbers, or symbolic ones (an exploration with symbolic parameters); never None, text, NaN
    "law": ("a dict {output: probability}", lambda v: isinstance(v, Mapping) and not any(
        p is None or isinstance(p, (str, bytes, bool)) or (isinstance(p, float) and not math.isfinite(p))
        for p in v.values())),
    "inputs": ("a list of inputs", lambda v: isinstance(v, (list, tuple))),
    "outside": ("a list of inputs", lambda v: isinstance(v, (list, tuple))),
    "neighbours": ("a list of (x, x') pairs", lambda v: isinstance(v, (list, tuple)) and all(
        isinstance(pair, tuple) and len(pair) == 2 for pair in v)),
    "distance": ("an int >= 0", lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 0),
    "edges": ("a list of str", lambda v: isinstance(v, (list, tuple)) and all(isinstance(e, str) for e in v)),
    "outside_kind": ("a (kind, why) pair of str", lambda v: isinstance(v, tuple) and len(v) == 2 and all(
        isinstance(e, str) for e in v)),
    "rdp_curve": ("a function α -> float", callable),
    "delta_curve": ("a function ε -> float", callable),
    "truth": ("a list of numbers", lambda v: isinstance(v, (list, tuple)) and all(
        isinstance(e, (int, float, Fraction)) and not isinstance(e, bool) for e in v)),
    "claims": ("a dict {claim name: value}", lambda v: isinstance(v, Mapping)),
}
_CURVE_POINTS = {"rdp_curve": "ε̂(α)", "delta_curve": "δ̂(ε)"}


@dataclasses.dataclass(frozen=True)
class _Checked:
    """A spec function whose result is checked (:data:`_RETURNS`); a curve's points are checked to be floats."""

    fn: Callable
    spec: str
    field: str

    def __call__(self, *args: Any) -> Any:
        value = self.fn(*args)
        expected, ok = _RETURNS[self.field]
        if not ok(value):
            raise SpecFunctionError(f"spec {self.spec!r}: its {self.field}() returned {value!r:.200} "
                                    f"({type(value).__name__}); it must return {expected}")
        if self.field in _CURVE_POINTS:
            return _CheckedPoint(value, self.spec, self.field)
        return value


@dataclasses.dataclass(frozen=True)
class _CheckedPoint:
    fn: Callable
    spec: str
    field: str

    def __call__(self, x: float) -> float:
        value = self.fn(x)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
            raise SpecFunctionError(f"spec {self.spec!r}: the curve its {self.field}() returns gave "
                                    f"{_CURVE_POINTS[self.field]} = {value!r} ({type(value).__name__}) at {x!r}; it "
                                    "must be a float")
        return value


def checked_spec(spec: MeasurementSpec | EstimatorSpec) -> MeasurementSpec | EstimatorSpec:
    """``spec`` with each of its functions checked to return the type it must (:class:`SpecFunctionError` naming
    the spec, the function and the type, instead of an AttributeError deep in the engine)."""
    fields = {f.name for f in dataclasses.fields(spec)}
    changes = {name: _Checked(getattr(spec, name), spec.name, name) for name in _RETURNS
               if name in fields and getattr(spec, name) is not None and not isinstance(getattr(spec, name), _Checked)}
    if isinstance(spec, EstimatorSpec):
        changes["mechanism"] = checked_spec(spec.mechanism)
    return dataclasses.replace(spec, **changes)


def spec_modules(project: Any = None) -> list[str]:
    """The spec modules of ``project`` (default: the active project, :func:`vetdp.project.active_project`): the
    ``[tool.vetdp] specs`` entries, packages expanded to their public submodules; without a table, every module of
    :mod:`vetdp.specs`. Raises :class:`vetdp.project.ProjectError` when none are declared or one cannot be
    imported, saying what to add."""
    from vetdp.project import active_project

    return (project or active_project()).spec_module_names()


def discover_specs(project: Any = None) -> list[MeasurementSpec | EstimatorSpec]:
    """Every spec in every spec module of ``project`` (default: the active project), in module order, its functions
    checked to return the types they must (:func:`checked_spec`); a module without ``SPECS`` or two specs with one
    name is a :class:`vetdp.project.ProjectError`."""
    from vetdp import fence
    from vetdp.project import ProjectError, active_project

    project = project or active_project()
    found: list[MeasurementSpec | EstimatorSpec] = []
    where: dict[str, str] = {}
    for name in spec_modules(project):
        try:
            module = fence.import_module(name, f"{project.label}: [tool.vetdp] specs:")
        except ModuleNotFoundError as e:
            raise ProjectError(f"{project.label}: [tool.vetdp] specs: spec module {name!r} cannot be imported: "
                               f"{e}") from None
        specs = getattr(module, "SPECS", None)
        if specs is None:
            raise ProjectError(f"spec module {name!r} defines no SPECS (a list of MeasurementSpec/EstimatorSpec)")
        if not isinstance(specs, (list, tuple)):
            raise ProjectError(f"{name}.SPECS is a {type(specs).__name__}; it must be a list of MeasurementSpec/"
                               "EstimatorSpec")
        for spec in specs:
            if not isinstance(spec, (MeasurementSpec, EstimatorSpec)):
                raise ProjectError(f"{name}.SPECS holds {spec!r}; each entry must be a MeasurementSpec or an "
                                   f"EstimatorSpec")
            if spec.name in where:
                raise ProjectError(f"spec name {spec.name!r} is defined twice: in {where[spec.name]} and {name}")
            where[spec.name] = name
            found.append(checked_spec(spec))
    return found


def find_spec(name: str, project: Any = None) -> MeasurementSpec | EstimatorSpec:
    """The spec called ``name`` in ``project`` (default: the active project); KeyError naming the choices."""
    specs = {s.name: s for s in discover_specs(project)}
    if name not in specs:
        raise KeyError(f"spec={name!r} is not one of {sorted(specs)}")
    return specs[name]


# ------------------------------------------------------------------ boundary-aware strategies

def at_least(q: Fraction) -> float:
    """The smallest float64 >= q (the float closest to q from above)."""
    x = float(q)
    return x if Fraction(x) >= q else math.nextafter(x, math.inf)


def floats_in(lo: float, hi: float, edges: Sequence[float] = ()) -> st.SearchStrategy[float]:
    """Floats in [lo, hi]: the given edge floats first, then anything in between."""
    subnormal = lo < 2.2250738585072014e-308
    inner = st.floats(min_value=lo, max_value=hi, allow_nan=False, allow_infinity=False, allow_subnormal=subnormal)
    return st.one_of(st.sampled_from(list(edges)), inner) if edges else inner


def boundary_probabilities(t: int) -> list[float]:
    """prob values at the edges of [1/t, 1): 1/t rounded up, the next float, 1 − 2**-53, and 1/2 when >= 1/t."""
    lo = at_least(Fraction(1, t))
    return [lo, math.nextafter(lo, 1.0), math.nextafter(1.0, 0.0), 0.5 if Fraction(1, t) <= Fraction(1, 2) else lo]


MIN_SUBNORMAL = 5e-324  # 2**-1074, the smallest positive float64
_TINY_LIMIT = 2**53  # n·2**-1074 for n < 2**53: the subnormals and the lowest normal binade [2**-1022, 2**-1021)


def tiny_float(n: int) -> float:
    """The float n·2**-1074, exactly; ``n`` an int in [1, 2**53).

    These are the floats whose halving (or any division by a power of two) can round: their
    last bit has weight 2**-1074, so x/2 is a float exactly when n is even.
    """
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"n={n!r} must be an int")
    if not 1 <= n < _TINY_LIMIT:
        raise ValueError(f"n={n} must be in [1, 2**53)")
    return math.ldexp(float(n), -1074)


def tiny_numerator(x: float) -> int | None:
    """n when x = n·2**-1074 with n in [1, 2**53) (see :func:`tiny_float`), else None."""
    if not isinstance(x, float) or not 0.0 < x < 2.0**-1021:
        return None
    return int(Fraction(x) * 2**1074)


def tiny_floats(modulus: int = 4) -> st.SearchStrategy[float]:
    """Floats n·2**-1074 whose numerator n takes every residue mod ``modulus``, small and large.

    n ranges over [1, 2**53): subnormals (n < 2**52) and the lowest normal binade (n >= 2**52),
    which is where a division by two rounds and where round-up, round-down and round-to-even
    differ (n mod 4 tells them apart). Small n (<= 16·modulus), n just below 2**52 and 2**53, and
    anything in between are drawn with comparable weight.
    """
    if isinstance(modulus, bool) or not isinstance(modulus, int) or not 1 <= modulus <= 2**20:
        raise ValueError(f"modulus={modulus!r} must be an int in [1, 2**20]")
    top = (_TINY_LIMIT - 1) // modulus - 1
    sub = 2**52 // modulus - 1
    quotient = st.one_of(st.integers(0, 16), st.integers(sub - 16, sub), st.integers(top - 16, top),
                         st.integers(0, top))
    residue = st.integers(0, modulus - 1)
    return st.builds(lambda j, r: tiny_float(modulus * j + r or modulus), quotient, residue)


def seeded_permutation(n: int, seed: int) -> list[int]:
    """A permutation of range(n) fixed by ``seed`` (a reproducible shuffle for parameter spaces, not for privacy)."""
    import numpy as np

    return [int(i) for i in np.random.default_rng(seed).permutation(n)]


def spread(n: int, count: int, seed: int) -> list[int]:
    """Indices into a list of length n: all of them when n <= count, else the first, the last and
    ``count − 2`` others fixed by ``seed`` (sorted, distinct)."""
    if n <= count:
        return list(range(n))
    import numpy as np

    inner = np.random.default_rng(seed).choice(np.arange(1, n - 1), size=max(0, count - 2), replace=False)
    return sorted({0, n - 1, *(int(i) for i in inner)})


# ------------------------------------------------------------------ parameters given by a user

def _non_finite(value: Any, path: str) -> str | None:
    if isinstance(value, float) and not math.isfinite(value):
        return f"{path}={value!r}"
    if isinstance(value, dict):
        return next((bad for k, v in value.items() if (bad := _non_finite(v, f"{path}.{k}" if path else k))), None)
    if isinstance(value, (list, tuple)):
        return next((bad for i, v in enumerate(value) if (bad := _non_finite(v, f"{path}[{i}]"))), None)
    return None


MAX_SIZE = 100_000  # categories, or bits of a vector: the largest domain a check enumerates (memory, then time)


def check_size(spec: MeasurementSpec, params: Params) -> None:
    """Raise ValueError naming the parameter when ``params`` make ``spec``'s domain larger than :data:`MAX_SIZE`
    (before anything is listed, built or allocated); parameters of the wrong shape are left to the spec's own
    checks."""
    if spec.size is None:
        return
    try:
        name, n = spec.size(params)
    except (TypeError, ValueError, KeyError, AttributeError):
        return
    if isinstance(n, int) and n > MAX_SIZE:
        raise ValueError(f"params: {name} makes the domain too large to enumerate: {n} (categories, bits or "
                         f"inputs) where at most {MAX_SIZE} are (memory and time grow with it); choose a smaller "
                         f"{name}")


class OutsidePreconditions(ValueError):
    """Parameters of the right shape that the spec's preconditions reject (a value out of range, NaN, ...): an
    error for our own constructor, but for code under test (``verify --impl``) a precondition to check."""


def validate_params(spec: MeasurementSpec, params: Any) -> Params:
    """``params`` checked against the spec; raises ValueError/TypeError naming the key and what is allowed.

    Keys must be among those of the spec's pinned examples and include the ones every example
    has; values must be finite; and the spec's own constructor must accept them (its
    preconditions are the spec's). Lists stay lists: each spec's ``build`` takes JSON-shaped values. A value the
    preconditions reject (non-finite, or refused by the constructor) raises :class:`OutsidePreconditions`.
    """
    if not isinstance(params, dict):
        raise TypeError(f"params={params!r:.200} must be a JSON object of {spec.name}'s parameters")
    keys = [set(p) for p in spec.examples]
    allowed, required = set().union(*keys), set.intersection(*keys) if keys else set()
    unknown = sorted(set(params) - allowed)
    if unknown:
        raise ValueError(f"params has unknown key(s) {unknown} for {spec.name}; allowed: {sorted(allowed)}")
    missing = sorted(required - set(params))
    if missing:
        raise ValueError(f"params lacks {missing} for {spec.name}; required: {sorted(required)}")
    bad = _non_finite(params, "")
    if bad is not None:
        raise OutsidePreconditions(f"params: {bad} must be finite")
    check_size(spec, params)
    try:
        spec.build(spec.load_constructor(), params)
    except (ValueError, TypeError, KeyError) as e:
        raise OutsidePreconditions(f"params rejected by {spec.name}'s preconditions: {e}") from None
    return params
