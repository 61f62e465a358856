"""Adapters that vet local-DP libraries (pure-ldp, multi-freq-ldpy, diffprivlib) against vetdp's specs.

Each library module (:mod:`.pure_ldp`, :mod:`.multi_freq_ldpy`, :mod:`.diffprivlib`) declares
``ENTRY_POINTS``: spec name -> :class:`EntryPoint`. An entry point is one of the library's
mechanisms or estimators, called with the spec's arguments: the spec's parameters are
translated into the library's (``translate``), the library object is built, and its outputs
are translated back. The libraries take ε where the specs take a probability; the
translations (documented in each module and in docs/third-party-ldp.md) are

* categorical RR, ``(categories, prob)`` with t categories -> ``(epsilon, d)`` with d = t and
  ε = ln(prob·(t−1)/(1−prob)) (ε = inf at prob = 1); category ``categories[i]`` is the
  library's item i (0-based, or i + 1 where the library numbers items from 1);
* binary RR, ``prob`` -> ε = ln(prob/(1−prob)); ``True``/``False`` are the library's items;
* bit-vector RR with max_weight 1 (symmetric unary encoding, basic one-time RAPPOR),
  ``(k, f)`` -> ``(epsilon, d)`` with d = k and ε = 2·ln((2−f)/f): the flip probability f/2
  is the library's q = 1/(e^(ε/2)+1); the one-hot vector e_i is item i.
* optimized unary encoding (OUE, no bundled spec: the specs ``oue`` and ``estimate_oue_counts``
  of a project such as examples/oue, recognised by their parameters ``d``, ``epsilon``,
  ``constant_time``, see :func:`oue_spec_shape`), ``(d, epsilon)`` -> the same ``(epsilon, d)``:
  the spec already takes ε; the library's p = 1/2, q = 1/(e^ε + 1); the value v is item v.

What is checked (see :func:`spec_view`): the library's *claim* is the ε it was given (its map is
ε at d_in >= 1 and 0 at d_in = 0, as the libraries document pure ε-LDP). The exact truth is
the spec's law evaluated at the probabilities the library itself computes from that ε in
float64 (read from the library object where it exposes them, else its formula evaluated as
written), so ``privacy.sound`` decides whether the library's own floats honour its ε; the
opaque audit (``audit.distribution``) checks, at a stated confidence, that its sampler
realises those probabilities. Parameters the library cannot express (a spec parameter with
no translation, or outside the library's documented range, such as ε = 0 where it requires
ε > 0) are outside the view: drawn parameters are filtered, and ``--params`` with them is a
usage error (:class:`Untranslatable`). The spec's bad-parameter rows are kept when their
translation exists, so that the library, not the adapter, decides them.

The caveat, stated once: the audit cannot resolve probabilities to the last bit, so "the
sampler realises the library's floats" holds up to the audit's detectable deviation.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import numbers
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

import numpy as np
from hypothesis import strategies as st

from vetdp.core.measurement import DomainError, DomainTypeError, as_bit_tuple
from vetdp.engine.spec import EstimatorSpec, MeasurementSpec, at_least, floats_in

__all__ = [
    "Untranslatable",
    "NonFiniteEstimate",
    "finite_estimates",
    "EntryPoint",
    "LibraryMeasurement",
    "rr_epsilon",
    "bool_epsilon",
    "bitvec_epsilon",
    "category_index",
    "bool_law",
    "categorical_law",
    "unary_law",
    "unit_vectors",
    "spec_view",
    "measurement_view",
    "estimator_view",
    "E_MAX",
    "MAX_CATEGORIES",
    "RR_BAD",
    "BITVEC_BAD",
    "few_categories",
    "OUE_BAD",
    "oue_translate",
    "oue_index",
    "oue_law",
    "oue_spec_shape",
]

MAX_CATEGORIES = 64  # categorical views audit at most this many categories (each sample costs O(t) in some libraries)
E_MAX = 700.0  # float64 exp overflows beyond ~709.78: translated ε above this is outside every view


class Untranslatable(ValueError):
    """Spec parameters that the library under test cannot express (a usage error for ``verify --params``)."""


class NonFiniteEstimate(ArithmeticError):
    """A library's estimator returned inf or nan: it has no exact value, so it is reported as an error.

    Deliberately not a ValueError: a bad-input row expecting a rejection must not count it as one.
    """


def finite_estimates(values: Sequence[float], library: str) -> list[float]:
    """``values`` as floats; NonFiniteEstimate naming the first inf/nan and where the library returned it."""
    out = [float(v) for v in values]
    for i, v in enumerate(out):
        if not math.isfinite(v):
            raise NonFiniteEstimate(f"{library} returned the estimate {v!r} at position {i}")
    return out


# the libraries know only d (or k) and ε: the spec's rows on category types and values, on domain and
# metric objects and on constant_time are vetdp's notions and are not run against them
RR_BAD = ("prob_below_one_over_t", "prob_one", "prob_nan")
BITVEC_BAD = ("f_above_one", "f_nan")
# OUE (a project's spec): the rows on the values of the library's two parameters; the spec's caps
# (ε <= 700, d <= 2**24) and its type rows are its implementation's choices, not the libraries'
OUE_BAD = ("epsilon_zero", "epsilon_negative", "epsilon_nan", "epsilon_inf", "d_one")


def few_categories(p: dict) -> bool:
    """At most MAX_CATEGORIES categories (a feasible categorical parameter set)."""
    return len(p["categories"]) <= MAX_CATEGORIES


# ------------------------------------------------------------------ parameter translations

def _probability(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise Untranslatable(f"{name}={value!r} has no ε translation: a float is needed")
    return float(value)


def rr_epsilon(prob: Any, t: int) -> float:
    """ε = ln(prob·(t−1)/(1−prob)) of categorical RR with t categories (inf at prob = 1, nan at nan).

    Raises Untranslatable when no real ε exists (prob <= 0, prob > 1, t < 2, a non-float prob).
    """
    p = _probability("prob", prob)
    if not isinstance(t, int) or t < 2:
        raise Untranslatable(f"categories: t={t!r} categories have no ε translation; at least 2 are needed")
    if math.isnan(p):
        return math.nan
    if not 0 < p <= 1:
        raise Untranslatable(f"prob={prob!r} has no ε translation: ln(prob·(t−1)/(1−prob)) needs prob in (0, 1]")
    if p == 1:
        return math.inf
    if Fraction(p) * t == 1:  # prob = 1/t exactly: no signal, ε = 0 (not the rounding error of the logs)
        return 0.0
    return math.log(p) - math.log1p(-p) + math.log(t - 1)


def bool_epsilon(prob: Any) -> float:
    """ε = ln(prob/(1−prob)) of binary RR (see :func:`rr_epsilon` with t = 2)."""
    return rr_epsilon(prob, 2)


def bitvec_epsilon(f: Any) -> float:
    """ε = 2·ln((2−f)/f) of symmetric unary encoding with flip probability f/2 (nan at nan)."""
    v = _probability("f", f)
    if math.isnan(v):
        return math.nan
    if not 0 < v < 2:
        raise Untranslatable(f"f={f!r} has no ε translation: 2·ln((2−f)/f) needs f in (0, 2)")
    if v == 1:  # pure noise: ε = 0 exactly
        return 0.0
    return 2 * (math.log(2 - v) - math.log(v))


def category_index(categories: Sequence[Any], x: Any) -> int:
    """The 0-based position of input ``x`` among ``categories``; DomainError/DomainTypeError otherwise.

    Types are compared strictly (``True`` is not the category ``1``), NumPy str scalars are strs.
    """
    kind = type(categories[0])
    if not isinstance(x, kind) or (kind is int and isinstance(x, bool)):
        raise DomainTypeError(f"x={x!r} is not of the categories' type {kind.__name__}")
    try:
        return list(categories).index(x)
    except ValueError:
        raise DomainError(f"x={x!r} is not one of the {len(categories)} categories (the library's items are "
                          "exactly the categories)") from None


def unit_vectors(k: int) -> list[tuple[bool, ...]]:
    """The k one-hot vectors of length k (the inputs of unary encoding)."""
    return [tuple(i == j for j in range(k)) for i in range(k)]


# ------------------------------------------------------------------ exact laws at the library's floats

def categorical_law(categories: Sequence[Any], keep: Fraction, x: Any) -> dict[Any, Fraction]:
    """P[y | x] of categorical RR keeping x with probability ``keep``, else a uniform other category."""
    t = len(categories)
    lie = (1 - keep) / (t - 1)
    return {c: (keep if c == x else lie) for c in categories if (keep if c == x else lie)}


def bool_law(keep: Fraction, x: Any) -> dict[Any, Fraction]:
    """P[y | x] of binary RR keeping the bool x with probability ``keep``."""
    b = bool(x)
    return {y: p for y, p in ((b, keep), (not b, 1 - keep)) if p}


def unary_law(x: Any, p: Fraction, q: Fraction) -> dict[tuple[bool, ...], Fraction]:
    """P[y | x] of unary encoding: each 1-bit of x reported 1 with probability p, each 0-bit with q."""
    bits = as_bit_tuple("x", x)
    out: dict[tuple[bool, ...], Fraction] = {}
    for y in itertools.product((False, True), repeat=len(bits)):
        prob = Fraction(1)
        for b, c in zip(bits, y, strict=True):
            one = p if b else q
            prob *= one if c else 1 - one
        if prob:
            out[y] = prob
    return out


# ------------------------------------------------------------------ the measurement seen by the engine

class LibraryMeasurement:
    """A library's mechanism with the engine's shape: ``m(x)`` runs it, ``m.map(d_in)`` is its claimed ε.

    ``invoke(x)`` translates the input, calls the library and translates the output back (it
    raises DomainError/DomainTypeError for inputs the translation cannot express).
    """

    def __init__(self, invoke: Callable[[Any], Any], epsilon: float, name: str, library: Any = None):
        self._invoke, self.epsilon, self.name, self.library = invoke, epsilon, name, library

    def __call__(self, x: Any) -> Any:
        return self._invoke(x)

    def map(self, d_in: Any) -> float:
        """The ε the library was constructed with for d_in >= 1 (pure ε-LDP), 0 at d_in = 0."""
        if isinstance(d_in, bool) or not isinstance(d_in, int) or d_in < 0:
            raise ValueError(f"d_in={d_in!r} must be an int >= 0")
        return 0.0 if d_in == 0 else self.epsilon

    def __repr__(self) -> str:
        return f"LibraryMeasurement({self.name}, epsilon={self.epsilon!r})"


@dataclasses.dataclass(frozen=True)
class EntryPoint:
    """One library entry point vetted by one spec.

    ``ctor``: the spec's constructor (or estimator) signature, calling the library.
    ``translate(params) -> dict``: the library's parameters; Untranslatable when none exist.
    ``supported(library_params) -> str | None``: why valid spec parameters fall outside the
    library's documented range (None: inside), for filtering the search.
    ``law(params, x)``: the exact law at the library's own floats (measurement entries).
    ``inputs(params)``: the in-domain inputs the library can take (measurement entries).
    ``params(deep)``: the strategy of valid spec parameters this entry point is searched over.
    ``keep_bad``: the spec's bad rows run against the library (all rows whose translation exists
    when None): rows on vetdp's own notions (category types, domain and metric objects) are left out.
    ``feasible(params)``: parameter sets cheap enough to audit (the search skips the others).
    ``describe``: the library call, for reports and docs.
    ``shape(spec)``: why ``spec`` is not the one this entry point vets (None: it is). Entry points
    for specs a project defines (not bundled) check that the spec found under the name has the
    parameters their translation reads.
    """

    spec: str
    ctor: Callable[..., Any]
    translate: Callable[[dict], dict]
    describe: str
    supported: Callable[[dict], str | None] = lambda lib: None
    law: Callable[[dict, Any], dict] | None = None
    inputs: Callable[[dict], list] | None = None
    params: Callable[[bool], st.SearchStrategy] | None = None
    keep_bad: tuple[str, ...] | None = None
    # parameter sets cheap enough to audit (pinned examples and drawn sets outside it are skipped;
    # --params is not limited by it)
    feasible: Callable[[dict], bool] = lambda p: True
    shape: Callable[[Any], str | None] = lambda spec: None

    def check(self, params: dict) -> dict:
        """The library's parameters for valid spec ``params``; Untranslatable naming why none exist."""
        lib = self.translate(params)
        why = self.supported(lib)
        if why is not None:
            raise Untranslatable(why)
        return lib

    def expressible(self, params: dict) -> bool:
        try:
            self.check(params)
        except (Untranslatable, ValueError, TypeError, KeyError):
            return False
        return True


def _translatable(entry: EntryPoint, params: dict) -> bool:
    try:
        entry.translate(params)
    except (ValueError, TypeError, KeyError):
        return False
    return True


def measurement_view(spec: MeasurementSpec, entry: EntryPoint) -> MeasurementSpec:
    """``spec`` as the library sees it: its inputs, its law at the library's floats, its parameter space.

    The name stays the spec's (reproduction commands name the spec); the bad rows are those whose
    translation exists (or ``entry.keep_bad``); examples and drawn parameters are those the
    library can express.
    """
    bad = [b for b in spec.bad if (b.id in entry.keep_bad if entry.keep_bad is not None
                                   else _translatable(entry, b.params))]
    strategy = entry.params or spec.params
    return dataclasses.replace(
        spec,
        bad=bad,
        examples=[p for p in spec.examples if entry.expressible(p) and entry.feasible(p)],
        params=lambda deep: strategy(deep).filter(lambda p: entry.expressible(p) and entry.feasible(p)),
        inputs=entry.inputs or spec.inputs,
        law=entry.law or spec.law,
        # the library's inputs are the listed ones: drop the edge labels of inputs it never sees
        edges=None if spec.edges is None else
        (lambda p: [e for e in spec.edges(p) if not e.startswith(("outsider", "numpy input", "list input"))]),
        describe=f"{spec.describe} as {entry.describe}",
    )


def estimator_view(spec: EstimatorSpec, entry: EntryPoint) -> EstimatorSpec:
    """``spec`` restricted to parameters the library's estimator can express, with the kept bad rows."""
    # the library's messages name its own parameters (epsilon, reports), not the spec's: names are not required
    bad = [(i, call, error, ()) for i, call, error, _ in spec.bad if entry.keep_bad is None or i in entry.keep_bad]
    strategy = entry.params or spec.params
    return dataclasses.replace(
        spec,
        bad=bad,
        examples=[p for p in spec.examples if entry.expressible(p)],
        params=lambda deep: strategy(deep).filter(entry.expressible),
        describe=f"{spec.describe} as {entry.describe}",
    )


def spec_view(spec: Any, entry: EntryPoint) -> Any:
    """:func:`measurement_view` or :func:`estimator_view`, by the spec's kind."""
    if isinstance(spec, EstimatorSpec):
        return estimator_view(spec, entry)
    return measurement_view(spec, entry)


# ------------------------------------------------------------------ optimized unary encoding (a project's spec)

OUE_KEYS = frozenset({"d", "epsilon", "constant_time"})


def oue_spec_shape(spec: Any) -> str | None:
    """None when ``spec`` has the shape of examples/oue's ``oue`` (a MeasurementSpec whose examples have exactly
    the parameters d, epsilon, constant_time) or ``estimate_oue_counts`` (an EstimatorSpec of such a mechanism,
    its examples those plus ``dataset``); else why not."""
    mechanism = spec.mechanism if isinstance(spec, EstimatorSpec) else spec
    extra = {"dataset"} if isinstance(spec, EstimatorSpec) else set()
    keys = [set(p) for p in spec.examples]
    if not isinstance(mechanism, MeasurementSpec) or not keys or any(k != OUE_KEYS | extra for k in keys):
        return (f"spec={spec.name!r} is not an optimized-unary-encoding spec with the parameters "
                f"{sorted(OUE_KEYS | extra)} (as in examples/oue); found {sorted(set().union(*keys))}")
    return None


def oue_translate(p: dict, key: str) -> dict:
    """``{"epsilon": ε, key: d}`` for OUE parameters ``(d, epsilon, constant_time)``: the spec already takes ε.

    Raises Untranslatable for constant_time=True (no library has the mode), a non-real ε or a non-int d.
    """
    if p.get("constant_time", False) is not False:
        raise Untranslatable("constant_time=True: the LDP libraries have no constant-time mode")
    eps, d = p["epsilon"], p["d"]
    if isinstance(eps, bool) or not isinstance(eps, (int, float)):
        raise Untranslatable(f"epsilon={eps!r}: the library's epsilon needs a float")
    if isinstance(d, bool) or not isinstance(d, int):
        raise Untranslatable(f"d={d!r}: the library's domain size needs an int")
    return {"epsilon": float(eps), key: d}


def oue_index(x: Any, d: int) -> int:
    """The value ``x`` in [0, d) as an int (NumPy ints included); DomainTypeError/DomainError otherwise."""
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Integral):
        raise DomainTypeError(f"x={x!r} must be an int in [0, {d}), not {type(x).__name__}")
    if not 0 <= int(x) < d:
        raise DomainError(f"x={x!r} must be in [0, {d})")
    return int(x)


def oue_law(d: int, x: Any, p: Fraction, q: Fraction) -> dict[tuple[bool, ...], Fraction]:
    """P[y | x] of unary encoding of the value x in [0, d): bit x reported 1 with probability p, the others q."""
    return unary_law(tuple(i == oue_index(x, d) for i in range(d)), p, q)


# ------------------------------------------------------------------ shared parameter strategies

P_MAX = math.nextafter(1.0, 0.0)


def rr_params(t_max: int = 8) -> Callable[[bool], st.SearchStrategy]:
    """Categorical RR parameters for a library: t in 2..t_max (int or str categories), prob in [1/t↑, 1)."""
    def strategy(deep: bool) -> st.SearchStrategy:
        def for_t(t: int):
            cats = st.sampled_from([list(range(t)), [f"c{i}" for i in range(t)], list(range(t))[::-1]])
            return st.fixed_dictionaries({
                "categories": cats,
                "prob": floats_in(at_least(Fraction(1, t)), P_MAX, edges=[0.5, 0.75, 0.9, P_MAX]),
            })
        return st.integers(2, 2 * t_max if deep else t_max).flatmap(for_t)
    return strategy


def unary_params(k_max: int = 4) -> Callable[[bool], st.SearchStrategy]:
    """Bit-vector RR parameters of unary encoding: k in 2..k_max, m = 1, f in [2**-20, 1], no constant_time."""
    def strategy(deep: bool) -> st.SearchStrategy:
        return st.fixed_dictionaries({
            "k": st.integers(2, k_max + (2 if deep else 0)),
            "m": st.just(1),
            "f": floats_in(2.0**-20, 1.0, edges=[2.0**-20, 0.25, 0.5, P_MAX, 1.0]),
            "constant_time": st.just(False),
        })
    return strategy
