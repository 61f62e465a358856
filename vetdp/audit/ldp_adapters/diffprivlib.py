"""diffprivlib (0.6) through vetdp's specs: the ``Binary`` mechanism as binary randomized response.

Entry point and the translation of parameters:

* ``randomized_response_bool`` -> ``Binary(epsilon=ε, value0="0", value1="1").randomise(label)``,
  ε = ln(prob/(1−prob)); ``False`` is the label "0", ``True`` the label "1" (diffprivlib's labels
  are strings). diffprivlib flips when ``U·(exp(ε)+1) > exp(ε)`` for a uniform U in [0, 1), so the
  exact truth keeps the input with probability e/c, where e = ``np.exp(ε)`` and c = the float
  ``e + 1`` (:func:`keep_probability`): exactly the ratio the library's floats put on U (the
  rounding of the product U·c is not modelled; see docs/third-party-ldp.md).

diffprivlib documents ε in [0, ∞] but ``Binary`` rejects ε = 0 ("Epsilon and Delta cannot both be
zero"); ε = 0 and ε above 700 (where exp overflows) are outside the view.
diffprivlib has no categorical RR, unary encoding or frequency estimator in 0.6.
"""

from __future__ import annotations

import importlib.metadata
import math
from fractions import Fraction
from typing import Any

import numpy as np

from vetdp.audit.ldp_adapters import E_MAX, EntryPoint, LibraryMeasurement, Untranslatable, bool_epsilon, bool_law
from vetdp.core.measurement import DomainTypeError

try:
    from diffprivlib.mechanisms import Binary
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError("the diffprivlib adapter needs the ldp extra: pip install -e '.[ldp]' at the vetdp "
                      "repository root") from e

__all__ = ["ENTRY_POINTS", "VERSION", "make_randomized_response_bool", "keep_probability", "reproduction"]

VERSION: str = importlib.metadata.version("diffprivlib")
LABELS = ("0", "1")


def keep_probability(epsilon: float) -> Fraction:
    """P[no flip] as diffprivlib's floats state it: e/c with e = np.exp(ε), c = fl(e + 1), exactly."""
    e = np.exp(epsilon)
    c = e + 1
    return Fraction(float(e)) / Fraction(float(c))


def _translate(p: dict) -> dict:
    if p.get("constant_time") not in (False, None):
        raise Untranslatable("constant_time=True: diffprivlib has no constant-time mode")
    return {"epsilon": bool_epsilon(p["prob"])}


def _supported(lib: dict) -> str | None:
    eps = lib["epsilon"]
    if not (0 < eps <= E_MAX):  # Binary rejects epsilon = 0 (delta = 0), although its docstring says [0, inf]
        return (f"epsilon={eps!r} is outside (0, {E_MAX:g}] (diffprivlib's Binary rejects epsilon = 0 and computes "
                "exp(epsilon) in float64)")
    return None


def make_randomized_response_bool(prob: float, constant_time: bool = False) -> LibraryMeasurement:
    """diffprivlib's ``Binary(epsilon, value0="0", value1="1")`` as binary RR on bools."""
    eps = bool_epsilon(prob)
    mech = Binary(epsilon=eps, value0=LABELS[0], value1=LABELS[1])

    def invoke(x: Any) -> bool:
        if not isinstance(x, bool | np.bool_):
            raise DomainTypeError(f"x={x!r} must be a bool")
        return mech.randomise(LABELS[int(bool(x))]) == LABELS[1]

    return LibraryMeasurement(invoke, eps, "diffprivlib.Binary", mech)


def _law(p: dict, x: Any) -> dict:
    return bool_law(keep_probability(_translate(p)["epsilon"]), x)


ENTRY_POINTS: dict[str, EntryPoint] = {
    "randomized_response_bool": EntryPoint(
        "randomized_response_bool", make_randomized_response_bool, _translate,
        'diffprivlib Binary(epsilon, value0="0", value1="1")', supported=_supported, law=_law,
        inputs=lambda p: [True, False, np.True_, np.False_]),
}


def reproduction(spec_name: str, clause: str | None, params: dict, finding: Any = None) -> str:
    """A snippet using diffprivlib alone for a finding on ``params`` (empty when none applies)."""
    if spec_name not in ENTRY_POINTS:
        return ""
    try:
        eps = _translate(params)["epsilon"]
    except (ValueError, TypeError, KeyError):
        return ""
    eps_text = f"float({str(eps)!r})" if not math.isfinite(eps) else repr(eps)
    lines = ["import math", "from collections import Counter", "from fractions import Fraction", "import numpy as np",
             "from diffprivlib.mechanisms import Binary", f"epsilon = {eps_text}  # translated from {params!r}"]
    make = "mech = Binary(epsilon=epsilon, value0='0', value1='1')"
    clause = clause or ""
    if clause.startswith("precondition") or clause == "construct":
        lines += ["try:", f"    {make}", "    print('accepted:', Counter(mech.randomise('1') for _ in range(10000)))",
                  "except Exception as e:", "    print('rejected:', repr(e))"]
    elif clause.startswith("privacy"):
        lines += [make, "e = np.exp(epsilon); c = e + 1  # randomise flips when U*c > e",
                  "keep = Fraction(float(e)) / Fraction(float(c))",
                  "from decimal import Decimal, getcontext", "getcontext().prec = 50",
                  "r = keep / (1 - keep) if keep < 1 else None  # None: it never flips, the loss is infinite",
                  "loss = Decimal(r.numerator).ln() - Decimal(r.denominator).ln() if r else Decimal('Infinity')",
                  "print('claimed epsilon', epsilon, '; exact loss of its floats', loss, '; loss - epsilon =', "
                  "loss - Decimal(epsilon))"]
    else:
        lines += [make, "print(Counter(mech.randomise('1') for _ in range(10000)))"]
    return "\n".join(lines)
