"""multi-freq-ldpy (0.2.5) through vetdp's specs: GRR and symmetric UE clients, their MI aggregators.

multi-freq-ldpy's clients are functions (numba-compiled) that take the parameters on every call;
there is no object to construct. "Construction" here is one probe call on item 0, so that the
library's own validation (``epsilon > 0``, ``k >= 2``) decides the spec's bad rows.

Entry points and the translation of parameters:

* ``randomized_response`` -> ``GRR_Client(item, k, epsilon)``: k = t, ε = ln(prob·(t−1)/(1−prob));
  ``categories[i]`` is item i (numbered from 0), a report r is ``categories[r]``. The exact truth
  keeps x with probability p = exp(ε)/(exp(ε) + k − 1), the library's formula evaluated in float64
  as written (numba's exp may differ from NumPy's in the last bit: see docs/third-party-ldp.md).
* ``randomized_response_bool`` -> ``GRR_Client`` with k = 2 (``False`` item 0, ``True`` item 1).
* ``randomized_response_bitvec`` (max_weight 1) -> ``UE_Client(item, k, epsilon, optimal=False)``,
  ε = 2·ln((2−f)/f); the one-hot e_i is item i and the zero vector is ``input_data=None`` (which
  the library accepts). Truth: a 1-bit reported 1 with p = exp(ε/2)/(exp(ε/2)+1), a 0-bit with q = 1 − p.
* ``debias_randomized_response`` -> ``GRR_Aggregator_MI(reports, k, epsilon)`` times n: a count per
  category. The library clips negative estimates to 0 and renormalises (documented): not unbiased.
* ``debias_randomized_response_bitvec_frequencies`` -> ``UE_Aggregator_MI(reports, epsilon,
  optimal=False)``: one frequency per coordinate, on datasets of one-hot rows (one item per user,
  as the library assumes); clipped and renormalised too.

* ``oue`` (a project's spec, e.g. examples/oue; see :func:`~vetdp.audit.ldp_adapters.oue_spec_shape`) ->
  ``UE_Client(item, k, epsilon, optimal=True)``: ε is the spec's own, k = d, the value v is item v. Truth:
  bit v reported 1 with p = 1/2, every other bit with q = 1/(exp(ε) + 1) in float64 as written, compiled
  by numba as the client is (:func:`oue_probabilities`).
* ``estimate_oue_counts`` -> n × ``UE_Aggregator_MI(reports, epsilon, optimal=True)``: a count per value,
  clipped and renormalised like the other MI aggregators.

The library requires ε > 0: spec parameters with ε = 0 (prob = 1/t, f = 1) are outside its views.
"""

from __future__ import annotations

import importlib.metadata
import math
import warnings
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numba
import numpy as np
from hypothesis import strategies as st

from vetdp.audit.ldp_adapters import (
    BITVEC_BAD,
    E_MAX,
    OUE_BAD,
    RR_BAD,
    EntryPoint,
    LibraryMeasurement,
    Untranslatable,
    bitvec_epsilon,
    bool_epsilon,
    bool_law,
    categorical_law,
    category_index,
    few_categories,
    finite_estimates,
    oue_index,
    oue_law,
    oue_spec_shape,
    oue_translate,
    rr_epsilon,
    rr_params,
    unary_law,
    unary_params,
    unit_vectors,
)
from vetdp.audit.ldp_adapters import hashing as _hashing
from vetdp.core.measurement import DomainError, DomainTypeError, as_bit_tuple
from vetdp.engine.spec import floats_in

try:
    from multi_freq_ldpy.pure_frequency_oracles.GRR import GRR_Aggregator_MI, GRR_Client
    from multi_freq_ldpy.pure_frequency_oracles.UE import UE_Aggregator_MI, UE_Client
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError("the multi-freq-ldpy adapter needs the ldp extra: pip install -e '.[ldp]' at the vetdp "
                      "repository root") from e

__all__ = ["ENTRY_POINTS", "VERSION", "make_randomized_response", "make_randomized_response_bool",
           "make_randomized_response_bitvec", "debias_randomized_response",
           "debias_randomized_response_bitvec_frequencies", "make_oue", "estimate_oue_counts",
           "grr_keep_probability", "ue_probabilities", "oue_probabilities", "reproduction"]

VERSION: str = importlib.metadata.version("multi-freq-ldpy")


def grr_keep_probability(epsilon: float, k: int) -> float:
    """GRR's keep probability as multi-freq-ldpy writes it: exp(ε)/(exp(ε) + k − 1) in float64."""
    e = np.exp(epsilon)
    return float(e / (e + k - 1))


def ue_probabilities(epsilon: float) -> tuple[float, float]:
    """Symmetric UE's (p, q) as multi-freq-ldpy writes them: p = exp(ε/2)/(exp(ε/2)+1), q = 1 − p."""
    e = np.exp(epsilon / 2)
    p = float(e / (e + 1))
    return p, 1 - p


@numba.njit
def _oue_flip(epsilon: float) -> float:
    return 1 / (np.exp(epsilon) + 1)  # UE_Client's expression, compiled by numba as UE_Client is


def oue_probabilities(epsilon: float) -> tuple[float, float]:
    """Optimized UE's (p, q) as ``UE_Client`` computes them: p = 1/2, q = 1/(exp(ε) + 1) in float64 with numba's
    exp (which differs from NumPy's in the last bit for about 2 % of ε, so q is computed by numba too)."""
    return 0.5, float(_oue_flip(float(epsilon)))


def _supported(lib: dict) -> str | None:
    eps = lib["epsilon"]
    if not (0 < eps <= E_MAX):
        return f"epsilon={eps!r} is outside (0, {E_MAX:g}] (multi-freq-ldpy requires epsilon > 0)"
    return None


def _rr_translate(p: dict) -> dict:
    cats = p["categories"]
    if not isinstance(cats, list | tuple) or len(cats) < 2:
        raise Untranslatable(f"categories={cats!r}: multi-freq-ldpy's k needs a list of at least 2 categories")
    if len(set(map(repr, cats))) != len(cats):
        raise Untranslatable(f"categories={cats!r} has duplicates: they have no distinct multi-freq-ldpy items")
    return {"epsilon": rr_epsilon(p["prob"], len(cats)), "k": len(cats)}


def make_randomized_response(categories: Sequence[Any], prob: float) -> LibraryMeasurement:
    """multi-freq-ldpy's ``GRR_Client(item, k, epsilon)`` for categorical RR (probed once on item 0)."""
    lib = _rr_translate({"categories": categories, "prob": prob})
    eps, k = lib["epsilon"], lib["k"]
    GRR_Client(0, k, eps)  # the library validates its parameters on each call
    cats = list(categories)

    def invoke(x: Any) -> Any:
        return cats[int(GRR_Client(category_index(cats, x), k, eps))]

    return LibraryMeasurement(invoke, eps, "multi_freq_ldpy.GRR_Client")


def _rr_law(p: dict, x: Any) -> dict:
    lib = _rr_translate(p)
    cats = list(p["categories"])
    category_index(cats, x)
    return categorical_law(cats, Fraction(grr_keep_probability(lib["epsilon"], lib["k"])), x)


def _bool_translate(p: dict) -> dict:
    if p.get("constant_time") not in (False, None):
        raise Untranslatable("constant_time=True: multi-freq-ldpy has no constant-time mode")
    return {"epsilon": bool_epsilon(p["prob"]), "k": 2}


def make_randomized_response_bool(prob: float, constant_time: bool = False) -> LibraryMeasurement:
    """multi-freq-ldpy's ``GRR_Client`` with k = 2 for binary RR: False is item 0, True item 1."""
    eps = bool_epsilon(prob)
    GRR_Client(0, 2, eps)

    def invoke(x: Any) -> bool:
        if not isinstance(x, bool | np.bool_):
            raise DomainTypeError(f"x={x!r} must be a bool")
        return bool(GRR_Client(int(bool(x)), 2, eps))

    return LibraryMeasurement(invoke, eps, "multi_freq_ldpy.GRR_Client(k=2)")


def _bool_law(p: dict, x: Any) -> dict:
    return bool_law(Fraction(grr_keep_probability(bool_epsilon(p["prob"]), 2)), x)


def _ue_translate(p: dict) -> dict:
    if p.get("m", 1) != 1:
        raise Untranslatable(f"m={p.get('m')!r}: unary encoding reports one item per user, so max_weight must be 1")
    if p.get("constant_time", False) is not False:
        raise Untranslatable("constant_time=True: multi-freq-ldpy has no constant-time mode")
    k = p["k"]
    if not isinstance(k, int) or k < 2:
        raise Untranslatable(f"k={k!r}: multi-freq-ldpy's k needs an int >= 2")
    return {"epsilon": bitvec_epsilon(p["f"]), "k": k}


def make_randomized_response_bitvec(input_domain: Any, input_metric: Any, f: float,
                                    constant_time: bool = False) -> LibraryMeasurement:
    """multi-freq-ldpy's ``UE_Client(item, k, epsilon, optimal=False)`` on bit vectors of weight <= 1."""
    k, m = getattr(input_domain, "length", None), getattr(input_domain, "max_weight", None)
    if k is None or m is None:
        raise Untranslatable(f"input_domain={input_domain!r}: a BitVectorDomain with a length and max_weight 1 "
                             "is needed to translate to multi-freq-ldpy's k")
    lib = _ue_translate({"k": k, "m": m, "f": f, "constant_time": constant_time})
    eps = lib["epsilon"]
    UE_Client(0, k, eps, False)

    def invoke(x: Any) -> tuple[bool, ...]:
        bits = as_bit_tuple("x", x)
        if len(bits) != k:
            raise DomainError(f"x has length {len(bits)}; the domain's length is {k}")
        ones = [i for i, b in enumerate(bits) if b]
        if len(ones) > 1:
            raise DomainError(f"x has {len(ones)} set bits; unary encoding takes at most one item")
        return tuple(bool(b) for b in UE_Client(ones[0] if ones else None, k, eps, False))

    return LibraryMeasurement(invoke, eps, "multi_freq_ldpy.UE_Client(optimal=False)")


def _ue_law(p: dict, x: Any) -> dict:
    lib = _ue_translate(p)
    one, zero = ue_probabilities(lib["epsilon"])
    return unary_law(x, Fraction(one), Fraction(zero))


def debias_randomized_response(answers: Sequence[Any], categories: Sequence[Any], prob: float,
                               exact: bool = False) -> dict:
    """n × multi-freq-ldpy's ``GRR_Aggregator_MI`` frequencies, keyed by category (floats)."""
    lib = _rr_translate({"categories": categories, "prob": prob})
    cats = list(categories)
    reports = [category_index(cats, a) for a in answers]
    freq = GRR_Aggregator_MI(reports, lib["k"], lib["epsilon"])
    values = finite_estimates([len(reports) * freq[i] for i in range(len(cats))], "multi-freq-ldpy GRR_Aggregator_MI")
    return dict(zip(cats, values, strict=True))


def debias_randomized_response_bitvec_frequencies(answers: Sequence[Any], f: float, exact: bool = False) -> list:
    """multi-freq-ldpy's ``UE_Aggregator_MI(reports, epsilon, optimal=False)`` frequencies (floats)."""
    rows = [np.array(as_bit_tuple(f"answers[{i}]", a), dtype=np.float64) for i, a in enumerate(answers)]
    return finite_estimates(UE_Aggregator_MI(rows, bitvec_epsilon(f), False), "multi-freq-ldpy UE_Aggregator_MI")


def _one_hot_estimator_params(deep: bool) -> st.SearchStrategy:
    def for_k(k: int):
        return st.fixed_dictionaries({
            "k": st.just(k), "m": st.just(k), "constant_time": st.just(False),
            "f": floats_in(1e-3, math.nextafter(1.0, 0.0), edges=[0.5, 0.25]),
            "dataset": st.lists(st.sampled_from(unit_vectors(k)), min_size=1, max_size=2),
        })

    return st.integers(2, 3).flatmap(for_k)


def _ue_estimator_translate(p: dict) -> dict:
    if any(sum(map(bool, row)) != 1 for row in p["dataset"]):
        raise Untranslatable("dataset: multi-freq-ldpy's UE aggregator assumes one item per user (one-hot rows)")
    return {"epsilon": bitvec_epsilon(p["f"]), "k": p["k"]}


def _oue_translate(p: dict) -> dict:
    return oue_translate(p, "k")


def make_oue(d: int, epsilon: float, constant_time: bool = False) -> LibraryMeasurement:
    """multi-freq-ldpy's ``UE_Client(item, k=d, epsilon, optimal=True)`` on the values 0..d−1 (probed once)."""
    lib = _oue_translate({"d": d, "epsilon": epsilon, "constant_time": constant_time})
    eps, k = lib["epsilon"], lib["k"]
    UE_Client(0, k, eps, True)

    def invoke(x: Any) -> tuple[bool, ...]:
        return tuple(bool(b) for b in UE_Client(oue_index(x, k), k, eps, True))

    return LibraryMeasurement(invoke, eps, "multi_freq_ldpy.UE_Client(optimal=True)")


def _oue_law(p: dict, x: Any) -> dict:
    lib = _oue_translate(p)
    one, zero = oue_probabilities(lib["epsilon"])
    return oue_law(lib["k"], x, Fraction(one), Fraction(zero))


def estimate_oue_counts(reports: Sequence[Any], epsilon: float, exact: bool = False) -> list[float]:
    """n × multi-freq-ldpy's ``UE_Aggregator_MI(reports, epsilon, optimal=True)`` frequencies (floats)."""
    rows = [np.array(as_bit_tuple(f"reports[{i}]", r), dtype=np.float64) for i, r in enumerate(reports)]
    with warnings.catch_warnings(), np.errstate(all="ignore"):  # its division by p − q = 0 at tiny ε
        warnings.simplefilter("ignore")
        freq = UE_Aggregator_MI(rows, epsilon, True)
    return finite_estimates([len(rows) * f for f in freq], "multi-freq-ldpy UE_Aggregator_MI(optimal=True)")


ENTRY_POINTS: dict[str, EntryPoint] = {
    "randomized_response": EntryPoint(
        "randomized_response", make_randomized_response, _rr_translate, "multi-freq-ldpy GRR_Client(item, k, epsilon)",
        supported=_supported, law=_rr_law, inputs=lambda p: list(p["categories"]), params=rr_params(),
        keep_bad=RR_BAD, feasible=few_categories),
    "randomized_response_bool": EntryPoint(
        "randomized_response_bool", make_randomized_response_bool, _bool_translate,
        "multi-freq-ldpy GRR_Client(item, k=2, epsilon)", supported=_supported, law=_bool_law,
        inputs=lambda p: [True, False, np.True_, np.False_]),
    "randomized_response_bitvec": EntryPoint(
        "randomized_response_bitvec", make_randomized_response_bitvec, _ue_translate,
        "multi-freq-ldpy UE_Client(item, k, epsilon, optimal=False)", supported=_supported, law=_ue_law,
        inputs=lambda p: [tuple([False] * p["k"]), *unit_vectors(p["k"])], params=unary_params(),
        keep_bad=BITVEC_BAD),
    "debias_randomized_response": EntryPoint(
        "debias_randomized_response", debias_randomized_response, _rr_translate,
        "multi-freq-ldpy GRR_Aggregator_MI(reports, k, epsilon)", supported=_supported,
        keep_bad=("prob_one_over_t", "no_answers", "prob_nan")),
    "debias_randomized_response_bitvec_frequencies": EntryPoint(
        "debias_randomized_response_bitvec_frequencies", debias_randomized_response_bitvec_frequencies,
        _ue_estimator_translate, "multi-freq-ldpy UE_Aggregator_MI(reports, epsilon, optimal=False)",
        supported=_supported, params=_one_hot_estimator_params, keep_bad=("f_one", "f_nan", "no_answers")),
    "oue": EntryPoint(
        "oue", make_oue, _oue_translate, "multi-freq-ldpy UE_Client(item, k, epsilon, optimal=True)",
        supported=_supported, law=_oue_law, inputs=lambda p: list(range(p["d"])), keep_bad=OUE_BAD,
        shape=oue_spec_shape),
    "estimate_oue_counts": EntryPoint(
        "estimate_oue_counts", estimate_oue_counts, _oue_translate,
        "n × multi-freq-ldpy UE_Aggregator_MI(reports, epsilon, optimal=True)", supported=_supported,
        keep_bad=("no_reports", "epsilon_nan", "epsilon_no_signal"), shape=oue_spec_shape),
}

# the hashing clients (OLH): vetdp/audit/ldp_adapters/hashing.py
ENTRY_POINTS.update(_hashing.multi_freq_ldpy_entries())


# the loss of the library's probabilities, to 50 digits: float logs cannot show a difference of one ulp
LOSS_LINES = ["from decimal import Decimal, getcontext", "getcontext().prec = 50",
              "loss = Decimal(r.numerator).ln() - Decimal(r.denominator).ln()",
              "print('claimed epsilon', epsilon, '; exact loss of its probabilities', loss, "
              "'; loss - epsilon =', loss - Decimal(epsilon))"]


def reproduction(spec_name: str, clause: str | None, params: dict, finding: Any = None) -> str:
    """A snippet using multi-freq-ldpy alone for a measurement finding (empty when none applies)."""
    if spec_name in _hashing.HASHING_SPECS:
        try:
            return _hashing.reproduction("multi-freq-ldpy", spec_name, clause, params)
        except (ValueError, TypeError, KeyError):
            return ""
    entry = ENTRY_POINTS.get(spec_name)
    if entry is None or entry.law is None:  # an estimator: its findings carry the command only
        return ""
    try:
        lib = entry.translate(params)
    except (ValueError, TypeError, KeyError):
        return ""
    eps, k = lib["epsilon"], lib["k"]
    eps_text = f"float({str(eps)!r})" if not math.isfinite(eps) else repr(eps)
    oue = spec_name == "oue"
    unary = spec_name.endswith("bitvec") or oue
    fn = "UE_Client" if unary else "GRR_Client"
    call = f"{fn}(0, k, epsilon{f', {oue}' if unary else ''})"
    lines = ["from collections import Counter", f"from multi_freq_ldpy.pure_frequency_oracles.{fn[:-7]} import {fn}",
             f"epsilon, k = {eps_text}, {k}  # translated from {params!r}"]
    clause = clause or ""
    if clause.startswith("precondition") or clause == "construct":
        lines += ["try:", f"    print('accepted:', {call})", "except Exception as e:",
                  "    print('rejected:', repr(e))"]
    elif clause.startswith("privacy"):
        lines += ["import math", "from fractions import Fraction", "import numpy as np"]
        if oue:
            lines += ["from numba import njit",
                      "q = njit(lambda e: 1 / (np.exp(e) + 1))(epsilon); p = 0.5  # as UE_Client computes them",
                      "r = (Fraction(p) / Fraction(q)) * ((1 - Fraction(q)) / (1 - Fraction(p)))  # bits v, v' differ"]
        elif unary:
            lines += ["e = np.exp(epsilon / 2); p = e / (e + 1); q = 1 - p  # as UE_Client writes them",
                      "r = (Fraction(p) / Fraction(q)) ** 2  # two one-hot vectors differ in two bits"]
        else:
            lines += ["e = np.exp(epsilon); p = e / (e + k - 1)  # as GRR_Client writes it",
                      "r = Fraction(p) / ((1 - Fraction(p)) / (k - 1))"]
        lines += LOSS_LINES
    else:
        sample = f"tuple({call})" if unary else call
        lines += [f"print(Counter({sample} for _ in range(10000)))"]
    return "\n".join(lines)
