"""pure-ldp (1.2) through vetdp's specs: direct encoding and symmetric unary encoding, clients and servers.

Entry points (spec -> library call) and the translation of parameters:

* ``randomized_response`` -> ``DEClient(epsilon, d).privatise(item)``: d = t, ε = ln(prob·(t−1)/(1−prob));
  ``categories[i]`` is pure-ldp's item i + 1 (its default ``index_mapper`` is ``x - 1``: items are
  numbered from 1) and a report r (numbered from 0) is ``categories[r]``. The exact truth keeps x
  with probability ``client.p`` (pure-ldp's float e^ε/(e^ε + d − 1)).
* ``randomized_response_bool`` -> the same client with d = 2 (``False`` is item 1, ``True`` item 2).
* ``randomized_response_bitvec`` (max_weight 1) -> ``UEClient(epsilon, d=k, use_oue=False)``: ε =
  2·ln((2−f)/f); the one-hot vector e_i is item i + 1; the report is the library's 0/1 vector.
  pure-ldp encodes exactly one item per user: the zero vector is not an input of this view. The
  exact truth reports a 1-bit with probability ``client.p`` and a 0-bit with ``client.q``.
* ``debias_randomized_response`` -> ``DEServer(epsilon, d)``: every answer aggregated (as its
  0-based report), the count of ``categories[i]`` is ``server.estimate(i + 1)``.
* ``debias_randomized_response_bitvec`` -> ``UEServer(epsilon, d=k, use_oue=False)``: the count of
  coordinate j is ``server.estimate(j + 1)``.

* ``oue`` (a project's spec, e.g. examples/oue; see :func:`~vetdp.audit.ldp_adapters.oue_spec_shape`) ->
  ``UEClient(epsilon, d, use_oue=True)``: ε and d are the spec's own; the value v is item v + 1. The exact
  truth reports bit v as 1 with ``client.p`` (= 0.5) and every other bit with ``client.q`` (its float
  1/(math.pow(math.e, ε) + 1)).
* ``estimate_oue_counts`` -> ``UEServer(epsilon, d, use_oue=True)``: the count of value j is
  ``server.estimate(j + 1)``.

pure-ldp validates none of its parameters; every spec row on the value of ε (or d) is run.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import math
import os
import sys
import types
import warnings
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np

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


def _oracles() -> tuple[Any, Any, Any, Any]:
    """pure-ldp's DE and UE client/server classes.

    pure-ldp 1.2.0's ``frequency_oracles/__init__`` imports every oracle, and its RAPPOR server
    imports statsmodels, which pure-ldp does not declare as a dependency. Without statsmodels the
    package is registered bare (its own ``__path__``, its ``__init__`` not run) so that the two
    oracles vetted here load from pure-ldp's own files.
    """
    try:
        from pure_ldp.frequency_oracles import direct_encoding, unary_encoding
    except ModuleNotFoundError as e:
        if e.name != "statsmodels":
            raise
        import pure_ldp

        bare = types.ModuleType("pure_ldp.frequency_oracles")
        bare.__path__ = [os.path.join(pure_ldp.__path__[0], "frequency_oracles")]
        sys.modules["pure_ldp.frequency_oracles"] = bare
        direct_encoding = importlib.import_module("pure_ldp.frequency_oracles.direct_encoding")
        unary_encoding = importlib.import_module("pure_ldp.frequency_oracles.unary_encoding")
    return direct_encoding.DEClient, direct_encoding.DEServer, unary_encoding.UEClient, unary_encoding.UEServer


try:
    DEClient, DEServer, UEClient, UEServer = _oracles()
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError("the pure-ldp adapter needs the ldp extra: pip install -e '.[ldp]' at the vetdp "
                      "repository root") from e

__all__ = ["ENTRY_POINTS", "VERSION", "make_randomized_response", "make_randomized_response_bool",
           "make_randomized_response_bitvec", "debias_randomized_response", "debias_randomized_response_bitvec",
           "make_oue", "estimate_oue_counts", "reproduction"]

VERSION: str = importlib.metadata.version("pure-ldp")
NAME = "pure-ldp"


def _supported(lib: dict) -> str | None:
    eps = lib["epsilon"]
    if not (0 <= eps <= E_MAX):
        return f"epsilon={eps!r} is outside [0, {E_MAX:g}] (pure-ldp computes e^epsilon in float64)"
    return None


# ------------------------------------------------------------------ direct encoding (k-ary RR)

def _rr_translate(p: dict) -> dict:
    cats = p["categories"]
    if not isinstance(cats, list | tuple) or len(cats) < 2:
        raise Untranslatable(f"categories={cats!r}: pure-ldp's d needs a list of at least 2 categories")
    if len(set(map(repr, cats))) != len(cats):
        raise Untranslatable(f"categories={cats!r} has duplicates: they have no distinct pure-ldp items")
    return {"epsilon": rr_epsilon(p["prob"], len(cats)), "d": len(cats)}


def make_randomized_response(categories: Sequence[Any], prob: float) -> LibraryMeasurement:
    """pure-ldp's ``DEClient(epsilon, d)`` for categorical RR (translation in the module docstring)."""
    lib = _rr_translate({"categories": categories, "prob": prob})
    client = DEClient(epsilon=lib["epsilon"], d=lib["d"])
    cats = list(categories)

    def invoke(x: Any) -> Any:
        i = category_index(cats, x)
        return cats[int(client.privatise(i + 1))]

    return LibraryMeasurement(invoke, lib["epsilon"], "pure_ldp.DEClient", client)


def _rr_law(p: dict, x: Any) -> dict:
    lib = _rr_translate(p)
    client = DEClient(epsilon=lib["epsilon"], d=lib["d"])
    cats = list(p["categories"])
    category_index(cats, x)
    return categorical_law(cats, Fraction(client.p), x)


def make_randomized_response_bool(prob: float, constant_time: bool = False) -> LibraryMeasurement:
    """pure-ldp's ``DEClient(epsilon, d=2)`` for binary RR: False is item 1, True item 2."""
    eps = bool_epsilon(prob)
    client = DEClient(epsilon=eps, d=2)

    def invoke(x: Any) -> bool:
        if not isinstance(x, bool | np.bool_):
            raise DomainTypeError(f"x={x!r} must be a bool")
        return bool(client.privatise(int(bool(x)) + 1))

    return LibraryMeasurement(invoke, eps, "pure_ldp.DEClient(d=2)", client)


def _bool_translate(p: dict) -> dict:
    if p.get("constant_time") not in (False, None):
        raise Untranslatable("constant_time=True: pure-ldp has no constant-time mode")
    return {"epsilon": bool_epsilon(p["prob"]), "d": 2}


def _bool_law(p: dict, x: Any) -> dict:
    client = DEClient(epsilon=bool_epsilon(p["prob"]), d=2)
    return bool_law(Fraction(client.p), x)


# ------------------------------------------------------------------ symmetric unary encoding

def _ue_translate(p: dict) -> dict:
    if p.get("m", 1) != 1:
        raise Untranslatable(f"m={p.get('m')!r}: unary encoding reports one item per user, so max_weight must be 1")
    if p.get("constant_time", False) is not False:
        raise Untranslatable("constant_time=True: pure-ldp has no constant-time mode")
    k = p["k"]
    if not isinstance(k, int) or k < 1:
        raise Untranslatable(f"k={k!r}: pure-ldp's d needs a positive int")
    return {"epsilon": bitvec_epsilon(p["f"]), "d": k}


def _one_hot_index(x: Any, k: int) -> int:
    bits = as_bit_tuple("x", x)
    if len(bits) != k:
        raise DomainError(f"x has length {len(bits)}; the domain's length is {k}")
    ones = [i for i, b in enumerate(bits) if b]
    if len(ones) != 1:
        raise DomainError(f"x has {len(ones)} set bits; pure-ldp's unary encoding takes exactly one item "
                          "(a one-hot vector)")
    return ones[0]


def make_randomized_response_bitvec(input_domain: Any, input_metric: Any, f: float,
                                    constant_time: bool = False) -> LibraryMeasurement:
    """pure-ldp's ``UEClient(epsilon, d, use_oue=False)`` on one-hot bit vectors (basic one-time RAPPOR)."""
    k, m = getattr(input_domain, "length", None), getattr(input_domain, "max_weight", None)
    if k is None or m is None:
        raise Untranslatable(f"input_domain={input_domain!r}: a BitVectorDomain with a length and max_weight 1 "
                             "is needed to translate to pure-ldp's d")
    lib = _ue_translate({"k": k, "m": m, "f": f, "constant_time": constant_time})
    client = UEClient(epsilon=lib["epsilon"], d=lib["d"], use_oue=False)

    def invoke(x: Any) -> tuple[bool, ...]:
        i = _one_hot_index(x, k)
        return tuple(bool(b) for b in client.privatise(i + 1))

    return LibraryMeasurement(invoke, lib["epsilon"], "pure_ldp.UEClient(use_oue=False)", client)


def _ue_law(p: dict, x: Any) -> dict:
    lib = _ue_translate(p)
    client = UEClient(epsilon=lib["epsilon"], d=lib["d"], use_oue=False)
    return unary_law(x, Fraction(client.p), Fraction(client.q))


# ------------------------------------------------------------------ servers (estimators)

def debias_randomized_response(answers: Sequence[Any], categories: Sequence[Any], prob: float,
                               exact: bool = False) -> dict:
    """pure-ldp's ``DEServer(epsilon, d)`` count estimates, keyed by category (floats; ``exact`` ignored).

    The server's float estimates are returned as computed; an inf/nan estimate (a division by
    zero inside the server) raises NonFiniteEstimate.
    """
    lib = _rr_translate({"categories": categories, "prob": prob})
    cats = list(categories)
    server = DEServer(epsilon=lib["epsilon"], d=lib["d"])
    for a in answers:
        server.aggregate(category_index(cats, a))
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        values = [server.estimate(i + 1, suppress_warnings=True) for i in range(len(cats))]
    return dict(zip(cats, finite_estimates(values, "pure-ldp DEServer"), strict=True))


def debias_randomized_response_bitvec(answers: Sequence[Any], f: float, exact: bool = False) -> list[float]:
    """pure-ldp's ``UEServer(epsilon, d, use_oue=False)`` per-coordinate count estimates (floats)."""
    rows = [as_bit_tuple(f"answers[{i}]", a) for i, a in enumerate(answers)]
    if not rows:
        raise ValueError("answers=[] is empty: pure-ldp's UEServer needs a report to know d")
    k = len(rows[0])
    server = UEServer(epsilon=bitvec_epsilon(f), d=k, use_oue=False)
    for r in rows:
        server.aggregate(np.array(r, dtype=np.int64))
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        values = [server.estimate(j + 1, suppress_warnings=True) for j in range(k)]
    return finite_estimates(values, "pure-ldp UEServer")


def _estimator_rr_translate(p: dict) -> dict:
    return _rr_translate(p)


# ------------------------------------------------------------------ optimized unary encoding (a project's spec)

def _oue_translate(p: dict) -> dict:
    return oue_translate(p, "d")


def make_oue(d: int, epsilon: float, constant_time: bool = False) -> LibraryMeasurement:
    """pure-ldp's ``UEClient(epsilon, d, use_oue=True)`` on the values 0..d−1 (value v is item v + 1)."""
    lib = _oue_translate({"d": d, "epsilon": epsilon, "constant_time": constant_time})
    client = UEClient(epsilon=lib["epsilon"], d=lib["d"], use_oue=True)

    def invoke(x: Any) -> tuple[bool, ...]:
        return tuple(bool(b) for b in client.privatise(oue_index(x, lib["d"]) + 1))

    return LibraryMeasurement(invoke, lib["epsilon"], "pure_ldp.UEClient(use_oue=True)", client)


def _oue_law(p: dict, x: Any) -> dict:
    lib = _oue_translate(p)
    client = UEClient(epsilon=lib["epsilon"], d=lib["d"], use_oue=True)
    return oue_law(lib["d"], x, Fraction(client.p), Fraction(client.q))


def estimate_oue_counts(reports: Sequence[Any], epsilon: float, exact: bool = False) -> list[float]:
    """pure-ldp's ``UEServer(epsilon, d, use_oue=True)`` count estimates per value (floats; ``exact`` ignored).

    d is the reports' length; an inf/nan estimate raises NonFiniteEstimate.
    """
    rows = [as_bit_tuple(f"reports[{i}]", r) for i, r in enumerate(reports)]
    if not rows:
        raise ValueError("reports=[] is empty: pure-ldp's UEServer needs a report to know d")
    d = len(rows[0])
    server = UEServer(epsilon=epsilon, d=d, use_oue=True)
    for r in rows:
        server.aggregate(np.array(r, dtype=np.int64))
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        values = [server.estimate(j + 1, suppress_warnings=True) for j in range(d)]
    return finite_estimates(values, "pure-ldp UEServer(use_oue=True)")


ENTRY_POINTS: dict[str, EntryPoint] = {
    "randomized_response": EntryPoint(
        "randomized_response", make_randomized_response, _rr_translate, "pure-ldp DEClient(epsilon, d)",
        supported=_supported, law=_rr_law, inputs=lambda p: list(p["categories"]), params=rr_params(),
        keep_bad=RR_BAD, feasible=few_categories),
    "randomized_response_bool": EntryPoint(
        "randomized_response_bool", make_randomized_response_bool, _bool_translate,
        "pure-ldp DEClient(epsilon, d=2)", supported=_supported, law=_bool_law,
        inputs=lambda p: [True, False, np.True_, np.False_]),
    "randomized_response_bitvec": EntryPoint(
        "randomized_response_bitvec", make_randomized_response_bitvec, _ue_translate,
        "pure-ldp UEClient(epsilon, d, use_oue=False)", supported=_supported, law=_ue_law,
        inputs=lambda p: unit_vectors(p["k"]), params=unary_params(), keep_bad=BITVEC_BAD),
    "debias_randomized_response": EntryPoint(
        "debias_randomized_response", debias_randomized_response, _estimator_rr_translate,
        "pure-ldp DEServer(epsilon, d)", supported=_supported,
        keep_bad=("prob_one_over_t", "no_answers", "prob_nan")),
    "debias_randomized_response_bitvec": EntryPoint(
        "debias_randomized_response_bitvec", debias_randomized_response_bitvec,
        lambda p: {"epsilon": bitvec_epsilon(p["f"]), "d": p["k"]}, "pure-ldp UEServer(epsilon, d, use_oue=False)",
        supported=_supported, keep_bad=("f_one", "f_nan")),
    "oue": EntryPoint(
        "oue", make_oue, _oue_translate, "pure-ldp UEClient(epsilon, d, use_oue=True)", supported=_supported,
        law=_oue_law, inputs=lambda p: list(range(p["d"])), keep_bad=OUE_BAD, shape=oue_spec_shape),
    "estimate_oue_counts": EntryPoint(
        "estimate_oue_counts", estimate_oue_counts, _oue_translate, "pure-ldp UEServer(epsilon, d, use_oue=True)",
        supported=_supported, keep_bad=("epsilon_nan", "epsilon_no_signal"), shape=oue_spec_shape),
}

# the hashing clients (OLH, Hadamard response, CMS, HCMS): vetdp/audit/ldp_adapters/hashing.py
ENTRY_POINTS.update(_hashing.pure_ldp_entries())


# the loss of the library's probabilities, to 50 digits: float logs cannot show a difference of one ulp
LOSS_LINES = ["from decimal import Decimal, getcontext", "getcontext().prec = 50",
              "loss = Decimal(r.numerator).ln() - Decimal(r.denominator).ln()",
              "print('claimed epsilon', epsilon, '; exact loss of its probabilities', loss, "
              "'; loss - epsilon =', loss - Decimal(epsilon))"]


def reproduction(spec_name: str, clause: str | None, params: dict, finding: Any = None) -> str:
    """A snippet using pure-ldp alone that shows ``clause`` on ``params`` (empty when none applies)."""
    if spec_name in _hashing.HASHING_SPECS:
        try:
            return _hashing.reproduction("pure-ldp", spec_name, clause, params)
        except (ValueError, TypeError, KeyError):
            return ""
    entry = ENTRY_POINTS.get(spec_name)
    if entry is None:
        return ""
    try:
        lib = entry.translate(params)
    except (ValueError, TypeError, KeyError):
        return ""
    eps, d = lib["epsilon"], lib["d"]
    eps_text = f"float({str(eps)!r})" if not math.isfinite(eps) else repr(eps)
    if entry.law is None:  # an estimator: its findings carry the command only
        return ""
    cls = "UEClient" if spec_name in ("randomized_response_bitvec", "oue") else "DEClient"
    mod = "unary_encoding" if cls == "UEClient" else "direct_encoding"
    extra = f", use_oue={spec_name == 'oue'}" if cls == "UEClient" else ""
    lines = ["import math", "from fractions import Fraction",
             f"from pure_ldp.frequency_oracles.{mod} import {cls}",
             f"epsilon, d = {eps_text}, {d}  # translated from {params!r}"]
    make = f"client = {cls}(epsilon=epsilon, d=d{extra})"
    clause = clause or ""
    if clause.startswith("precondition") or clause == "construct":
        lines += ["try:", f"    {make}", "    print('accepted: p =', client.p, 'q =', client.q,",
                  "          'sample:', client.privatise(1))", "except Exception as e:",
                  "    print('rejected:', repr(e))"]
    elif clause.startswith("privacy"):
        lines += [make]
        if cls == "UEClient":
            lines += ["p, q = Fraction(client.p), Fraction(client.q)",
                      "r = (p / q) * ((1 - q) / (1 - p))  # two one-hot vectors differ in two bits"]
        else:
            lines += ["p, q = Fraction(client.p), (1 - Fraction(client.p)) / (d - 1)", "r = p / q"]
        lines += LOSS_LINES
    else:
        lines += [make, "from collections import Counter",
                  "print(Counter(tuple(client.privatise(1)) if hasattr(client.privatise(1), '__len__') "
                  "else client.privatise(1) for _ in range(10000)))"]
    return "\n".join(lines)
