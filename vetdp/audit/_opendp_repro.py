"""Reproductions that use OpenDP alone: Python snippets for findings of the OpenDP adapter.

A snippet constructs OpenDP's measurement with the failing parameters (translated as
:mod:`vetdp.audit.opendp_adapter` translates them) and prints what OpenDP does next to what
the spec expects. It imports nothing from vetdp, so it can go into an OpenDP issue as is.
"""

from __future__ import annotations

import ast
import math
from typing import Any

__all__ = ["reproduction", "construction", "bytes_literal", "audit_snippet"]

HEADER = "import math\nfrom fractions import Fraction\nimport opendp.prelude as dp\ndp.enable_features('contrib')\n"


def _lit(v: Any) -> str:
    if isinstance(v, float) and not math.isfinite(v):
        return f"float({str(v)!r})"
    return repr(v)


def _domain(d: Any) -> str:
    name = type(d).__name__
    if name == "BitVectorDomain":
        return f"dp.bitvector_domain(max_weight={d.max_weight!r})"
    if name == "AtomDomain":
        return f"dp.atom_domain(T={d.T.__name__})"
    return repr(d)


def construction(spec_name: str, params: dict) -> str:
    """The line ``meas = dp.m.make_...(...)`` for these spec parameters (empty for estimators)."""
    if spec_name == "randomized_response_bool":
        return f"meas = dp.m.make_randomized_response_bool({_lit(params['prob'])}, {params['constant_time']!r})"
    if spec_name == "randomized_response":
        return f"meas = dp.m.make_randomized_response({params['categories']!r}, {_lit(params['prob'])})"
    if spec_name == "randomized_response_bitvec":
        domain = (_domain(params["input_domain"]) if "input_domain" in params
                  else f"dp.bitvector_domain(max_weight={params['m']!r})")
        metric = "dp.discrete_distance()" if "input_metric" not in params else _lit(params["input_metric"])
        if "input_metric" in params and type(params["input_metric"]).__name__ == "DiscreteDistance":
            metric = "dp.discrete_distance()"
        return (f"meas = dp.m.make_randomized_response_bitvec({domain}, {metric}, {_lit(params['f'])}, "
                f"{params['constant_time']!r})  # our length k={params.get('k')!r} is not an OpenDP notion")
    return ""


def bytes_literal(bits: Any) -> str | None:
    """``bytes([...])`` for a bit string "0101" or a tuple of 0/1, packed LSB first (padded with 0 bits to
    whole bytes); None otherwise."""
    if isinstance(bits, str) and bits and set(bits) <= {"0", "1"}:
        seq = [c == "1" for c in bits]
    elif isinstance(bits, tuple) and bits and all(b in (0, 1) for b in bits):
        seq = [bool(b) for b in bits]
    else:
        return None
    out = [sum(1 << j for j, b in enumerate(seq[i:i + 8]) if b) for i in range(0, len(seq), 8)]
    return f"bytes({out!r})"


def _value(spec_name: str, shown: Any) -> str:
    """An OpenDP input literal for an input as the engine shows it (bit strings for bit vectors)."""
    if spec_name == "randomized_response_bitvec":
        b = bytes_literal(shown)
        if b is None and isinstance(shown, str):
            try:
                b = bytes_literal(ast.literal_eval(shown))
            except (ValueError, SyntaxError):
                b = None
        if b is not None:
            return b
    if isinstance(shown, str):
        try:
            return repr(ast.literal_eval(shown))
        except (ValueError, SyntaxError):
            return repr(shown)
    return repr(shown)


def reproduction(spec_name: str, clause: str | None, params: dict, finding: Any = None) -> str:
    """A Python snippet, using OpenDP alone, that shows ``clause`` failing for ``params``."""
    make = construction(spec_name, params)
    if not make:
        return ""
    lines = [HEADER.rstrip("\n")]
    witness = getattr(finding, "witness", None) or {}
    clause = clause or ""
    if clause.startswith("precondition") or clause == "construct":
        lines += ["try:", f"    {make}", "    print('accepted; map(1) =', meas.map(1))",
                  "except Exception as e:", "    print('rejected:', repr(e))",
                  f"# the spec expects: {'rejection' if clause.startswith('precondition') else 'acceptance'}"]
    elif clause.startswith("privacy") and "P[M(x)=y]" in witness:
        p_text, q_text = witness["P[M(x)=y]"], witness["P[M(x')=y]"]
        lines += [make, "print('opendp map(1) =', repr(meas.map(1)))"]
        if clause.startswith("privacy.outside") and "outside" in witness:
            lines += [f"x = {_value(spec_name, witness['outside'])}  # outside the spec's domain: "
                      f"{witness.get('why outside')}", "print('accepted:', meas(x))"]
            if spec_name == "randomized_response_bitvec" and witness.get("kind") == "length":
                lines += ["# OpenDP's bit vectors are bytes without a length, and the output has the input's byte",
                          "# length: members of different byte lengths are told apart with certainty (infinite loss)",
                          "print(len(meas(x)), len(meas(x + bytes(1))))"]
        lines += [f"# exact output probabilities at x={witness['x']!r}, x'={witness['x_prime']!r}, "
                  f"y={witness['y']!r} (the worst output):",
                  f"p, q = Fraction({p_text!r}), Fraction({q_text!r})",
                  "if q == 0:",
                  "    print('exact loss    = inf (y is possible under x, impossible under x_prime)')",
                  "else:",
                  "    r = max(p / q, q / p)",
                  "    loss = math.log1p(float(r - 1)) if r < 2 else math.log(r.numerator) - math.log(r.denominator)",
                  "    print('exact loss    =', repr(loss))"]
    elif clause == "domain.rejects_outside" and "x" in witness:
        x = _value(spec_name, witness["x"])
        lines += [make, f"x = {x}  # the out-of-domain input {witness['x']}", "print('accepted:', meas(x))"]
        if spec_name == "randomized_response_bitvec":
            lines += ["# OpenDP bit vectors have no fixed length: inputs of different lengths are both members,",
                      "# and the output's length is the input's, so neighbours of unequal length are told apart",
                      "print(len(meas(x)), len(meas(x + bytes(1))))",
                      f"heavy = bytes([255])  # 8 set bits; the domain allows {params.get('m')!r}",
                      "print('heavier than max_weight, accepted:', meas(heavy))"]
    elif clause == "audit.distribution" and "x" in witness:
        n = witness.get("samples", 10_000)
        lines += [make, f"x, y, n = {_value(spec_name, witness['x'])}, {_value(spec_name, witness['y'])}, {n}",
                  "count = sum(meas(x) == y for _ in range(n))",
                  f"print(f'P[M(x)=y] observed {{count}}/{{n}}; exact {witness.get('exact')}')"]
    else:
        lines += [make, "print(meas.map(1))"]
    return "\n".join(lines)


def audit_snippet(spec_name: str, params: dict, result: Any) -> str:
    """A snippet, using OpenDP alone, that re-counts an audit's event on fresh samples and prints the bound."""
    make = construction(spec_name, params)
    if not make:
        return ""
    bitvec = spec_name == "randomized_response_bitvec"
    x, xp = (_value(spec_name, tuple(int(b) for b in v)) if bitvec else repr(v) for v in (result.x, result.x_prime))
    k = len(result.x) if bitvec else 0
    coords = result.statistic.removeprefix("coordinates ") if result.statistic.startswith("coordinates") else None
    if bitvec:
        decode = f"tuple(bool(b) for b in np.unpackbits(np.frombuffer(y, np.uint8), bitorder='little')[:{k}])"
        stat = f"tuple({decode}[i] for i in {coords})" if coords else decode
        lines = ["import numpy as np", f"stat = lambda y: {stat}"]
    else:
        lines = ["stat = lambda y: y"]
    n = result.samples_test
    return "\n".join([HEADER.rstrip("\n"), "from scipy.stats import beta", make, *lines,
                      f"x, x_prime, n, b = {x}, {xp}, {n}, {result.beta!r}",
                      f"event = {set(result.event)!r}",
                      "kp = sum(stat(meas(x)) in event for _ in range(n))",
                      "kq = sum(stat(meas(x_prime)) in event for _ in range(n))",
                      "p_lo = beta.ppf(b / 2, kp, n - kp + 1) if kp else 0.0",
                      "q_hi = beta.ppf(1 - b / 2, kq + 1, n - kq) if kq < n else 1.0",
                      f"print('epsilon >=', math.log((p_lo - {result.delta!r}) / q_hi), 'with confidence', 1 - b, "
                      f"'; claimed', {result.claimed_epsilon!r}, '; opendp map(1) =', meas.map(1))"])
