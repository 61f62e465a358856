"""Checks of what the z3 encoding assumes: exact int casts, the rounding model, ln/exp facts.

* ``cast_obligation``: z3's bit-precise floating-point theory proves that every int in
  [lo, hi] (hi <= 2^53) converts to float64 exactly, and :func:`exact_int_to_float` is
  shown to reject the first int above 2^53, which does not convert exactly.
* ``op_contract``: a rounding primitive against its contract on boundary floats and a
  seeded sample: for + − × ÷ the result equals z3's IEEE 754 result in the same rounding
  mode (RTP/RTN/RNE) and lies within the error model of :mod:`.z3encode`; for ln/exp the
  result lies on the promised side of an mpmath enclosure at 256 bits, within the model,
  and is monotone over the sorted probes; the numeric ln/exp axioms the encoding uses are
  enclosed with mpmath. Each is a check on many points, not a proof for all floats; the
  report says so.
"""

from __future__ import annotations

import math
import random
import struct
import time
from fractions import Fraction

import z3

from vetdp.arith import rounding as R
from vetdp.arith.expr import OPS
from vetdp.obligations.z3encode import (
    ABS_ERR,
    EXP_SAFE_ARG,
    LN_OF_MAX_UB,
    LN_OF_MIN_SUBNORMAL_LB,
    MAX_FLOAT,
    REL_ERR,
    solve,
)

__all__ = ["cast_obligation", "op_contract", "axiom_facts", "PROBES", "float64_gap_obligation"]

_F = z3.Float64()
_Z3_MODE = {"up": z3.RTP(), "down": z3.RTN(), "nearest": z3.RNE()}
_Z3_OP = {"add": z3.fpAdd, "sub": z3.fpSub, "mul": z3.fpMul, "div": z3.fpDiv}
_EXACT = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
          "div": lambda a, b: a / b}

PROBES: list[float] = sorted({5e-324, 1e-320, 2.2250738585072014e-308, 1e-300, 2.0**-53, 1e-10, 0.1, 1 / 3, 0.5,
                              math.nextafter(1.0, 0.0), 1.0, math.nextafter(1.0, 2.0), 1.5, 2.0, 3.0, 10.0, 709.0,
                              1e10, 2.0**53, 1e300, float(MAX_FLOAT)})


def _within_model(direction: str, r: Fraction, x: Fraction) -> bool:
    err = abs(x) * REL_ERR + ABS_ERR
    if direction == "up":
        return x <= r <= x + err or (x < -MAX_FLOAT and r == -MAX_FLOAT)
    if direction == "down":
        return x - err <= r <= x or (x > MAX_FLOAT and r == MAX_FLOAT)
    return abs(r - x) <= err


def cast_obligation(name: str, lo: int, hi: int, rlimit: int) -> tuple[str, float, int, str, dict | None]:
    """(status, seconds, z3 resource units spent, detail, counterexample) for "every int in [lo, hi] casts
    exactly", decided by z3 within ``rlimit`` resource units."""
    n = z3.BitVec(name, 64)
    c = z3.fpToFPUnsigned(z3.RNE(), n, _F)
    run = solve([z3.UGE(n, lo), z3.ULE(n, hi), z3.fpToUBV(z3.RTZ(), c, z3.BitVecSort(64)) != n], rlimit)
    dt, used = run.seconds, run.rlimit_used
    if run.result == z3.sat:
        bad = run.solver.model().eval(n.translate(run.ctx)).as_long()
        return "refuted", dt, used, f"{name}={bad} does not convert to float64 exactly", {name: bad}
    if run.result == z3.unknown:
        return "unknown", dt, used, run.unknown_reason(), None
    try:
        R.exact_int_to_float(name, 2**53 + 1)
    except R.FloatArithmeticError:
        return "proved", dt, used, f"every {name} in [{lo}, {hi}] casts exactly; {name}=2**53+1 is rejected", None
    return "refuted", dt, used, f"exact_int_to_float accepted {name}=2**53+1, which rounds", {name: 2**53 + 1}


def float64_gap_obligation(rlimit: int, rel_bits: int = 52) -> tuple[str, float, int, str, dict | None]:
    """(status, seconds, z3 resource units spent, detail, counterexample) for the float64 gap lemma, proved by z3
    over all bit patterns within ``rlimit`` resource units.

    Lemma: consecutive finite float64s a < b satisfy b − a <= min(|a|, |b|)·2^-52 + 2^-1074.
    With IEEE 754's definition of directed rounding (R = the least float >= x, or the
    greatest <= x) it gives the rounding model of :mod:`.z3encode`: if R != x, x lies
    strictly between R and its neighbour, so |R − x| < |x|·2^-52 + 2^-1074.

    Encoding: a non-negative finite float with bits u has value a·2^(s−1074), a = M (E = 0)
    or 2^52 + M, s = max(E, 1) − 1. z3 shows for every u whose successor u+1 is finite that
    s <= t <= s+1 for the successor's scale t, and 2^52·(b·2^(t−s) − a) <= a + 2^52·[E = 0],
    which implies the lemma (divide by 2^(52+1074−s)). Negative floats mirror non-negative
    ones. ``rel_bits`` = 53 states a false lemma, which z3 must refute (a mutant check).
    """
    u = z3.BitVec("u", 64)

    def parts(bits: z3.BitVecRef) -> tuple[z3.BitVecRef, z3.BitVecRef, z3.BitVecRef]:
        e, m = z3.Extract(62, 52, bits), z3.Extract(51, 0, bits)
        a = z3.If(e == 0, z3.ZeroExt(12, m), z3.ZeroExt(12, m) + (1 << 52))
        s = z3.If(e == 0, z3.BitVecVal(0, 64), z3.ZeroExt(53, e) - 1)
        return e, a, s

    e, a, s = parts(u)
    e_next, b, t = parts(u + 1)
    d = t - s
    subnormal_ulp = z3.If(e == 0, z3.BitVecVal(1 << rel_bits, 64), z3.BitVecVal(0, 64))
    run = solve([z3.Extract(63, 63, u) == 0, e != 2047, e_next != 2047, z3.Extract(63, 63, u + 1) == 0,
                 z3.Not(z3.And(z3.ULE(s, t), z3.ULE(d, 1), z3.ULE(((b << d) - a) << rel_bits, a + subnormal_ulp)))],
                rlimit)
    dt, used = run.seconds, run.rlimit_used
    if run.result == z3.unsat:
        return "proved", dt, used, f"consecutive float64s differ by at most min(|a|,|b|)·2^-{rel_bits} + 2^-1074", None
    if run.result == z3.sat:
        bits = run.solver.model().eval(u.translate(run.ctx)).as_long()
        x = struct.unpack(">d", bits.to_bytes(8, "big"))[0]
        return "refuted", dt, used, f"the gap above {x!r} exceeds {x!r}·2^-{rel_bits} + 2^-1074", {"a": x}
    return "unknown", dt, used, run.unknown_reason(), None


def _pairs(seed: int) -> list[tuple[float, float]]:
    rng = random.Random(seed)
    base = PROBES + [-x for x in PROBES[::3]]
    pairs = [(a, b) for a in base[::2] for b in base[1::2]]
    pairs += [(rng.uniform(-4, 4), rng.uniform(-4, 4)) for _ in range(40)]
    return pairs


def _rational_contract(op: str, seed: int) -> list[str]:
    info = OPS[op]
    problems = []
    for a, b in _pairs(seed):
        if info.ideal == "div" and b == 0:
            continue
        x = _EXACT[info.ideal](Fraction(a), Fraction(b))
        try:
            r = info.rounded(a, b)
        except R.FloatArithmeticError:
            if (info.direction != "down" and x > MAX_FLOAT) or (info.direction != "up" and x < -MAX_FLOAT):
                continue  # overflow in the direction of rounding is rejected, as promised
            problems.append(f"{op}({a!r}, {b!r}) raised for a result in range")
            continue
        z = z3.simplify(_Z3_OP[info.ideal](_Z3_MODE[info.direction], z3.FPVal(a, _F), z3.FPVal(b, _F)))
        if z3.is_true(z3.simplify(z3.fpIsInf(z))):
            ieee = None
        else:
            ieee = Fraction(z3.simplify(z3.fpToReal(z)).as_fraction())
        if ieee is not None and ieee != Fraction(r):
            problems.append(f"{op}({a!r}, {b!r}) = {r!r} but IEEE {info.direction} gives {R.float_repr(ieee)}")
        if not _within_model(info.direction, Fraction(r), x):
            problems.append(f"{op}({a!r}, {b!r}) = {r!r} is outside the rounding model of {R.float_repr(x)}")
    return problems


def _transcendental_contract(op: str, seed: int) -> list[str]:
    info = OPS[op]
    rng = random.Random(seed)
    probes = [x for x in PROBES + [-x for x in PROBES] + [rng.uniform(-700, 700) for _ in range(40)]
              + [math.exp(rng.uniform(-740, 700)) for _ in range(40)]]
    domain_lo = {"ln": Fraction(0), "log1p": Fraction(-1)}.get(info.ideal)
    bracket = {"ln": _mp_ln, "exp": _mp_exp, "log1p": lambda q, p: _mp_ln(1 + q, p),
               "expm1": lambda q, p: tuple(v - 1 for v in _mp_exp(q, p))}[info.ideal]
    problems, outputs = [], []
    for x in sorted(set(probes)):
        q = Fraction(x)
        if domain_lo is not None and q <= domain_lo:
            continue
        lo, hi = bracket(q, 256)
        try:
            r = Fraction(info.rounded(x))
        except R.FloatArithmeticError:
            if info.direction != "down" and lo > MAX_FLOAT:
                continue  # exp overflow toward +inf is rejected
            problems.append(f"{op}({x!r}) raised")
            continue
        outputs.append((x, r))
        d = info.direction
        if d == "up":
            ok = lo <= r <= hi + abs(hi) * REL_ERR + ABS_ERR
        elif d == "down":
            ok = lo - abs(lo) * REL_ERR - ABS_ERR <= r <= hi or (lo > MAX_FLOAT and r == MAX_FLOAT)
        else:
            ok = _within_model("nearest", r, (lo + hi) / 2)
        if not ok:
            problems.append(f"{op}({x!r}) = {float(r)!r} is not within the {d} rounding of the true value "
                            f"{R.float_repr(lo)}")
    for (x0, r0), (x1, r1) in zip(outputs, outputs[1:], strict=False):
        if r1 < r0:
            problems.append(f"{op} is not monotone: {op}({x0!r}) > {op}({x1!r})")
    return problems


def _mp_fraction(t: tuple) -> Fraction:
    """The exact value of a libmp number, magnitudes beyond 2^±1200 clamped there (float64 rounds them alike)."""
    sign, man, exp, bc = t
    if man == 0:
        return Fraction(0)
    if exp + bc > 1200:
        return Fraction(-(2**1200) if sign else 2**1200)
    if exp + bc < -1200:
        return Fraction(-1 if sign else 1, 2**1200)
    return Fraction(-man if sign else man) * Fraction(2) ** exp


def _mp_enclose(fn, q: Fraction, prec: int, extra: int) -> tuple[Fraction, Fraction]:
    from mpmath import libmp

    lo = fn(libmp.from_rational(q.numerator, q.denominator, prec + extra, libmp.round_floor), prec, libmp.round_floor)
    hi = fn(libmp.from_rational(q.numerator, q.denominator, prec + extra, libmp.round_ceiling), prec,
            libmp.round_ceiling)
    lo, hi = _mp_fraction(lo), _mp_fraction(hi)
    margin = Fraction(1, 2 ** (prec - 16))  # libmp's floor/ceiling are accurate to about an ulp, not always directed
    return lo - abs(lo) * margin, hi + abs(hi) * margin


def _mp_ln(q: Fraction, prec: int) -> tuple[Fraction, Fraction]:
    """lo <= ln(q) <= hi by mpmath: the oracle, independent of vetdp's own ln in vetdp.arith.rounding."""
    from mpmath import libmp

    return _mp_enclose(libmp.mpf_log, q, prec, 10)


def _mp_exp(q: Fraction, prec: int) -> tuple[Fraction, Fraction]:
    """lo <= exp(q) <= hi by mpmath (beyond 2^±1200 clamped), independent of vetdp's own exp."""
    from mpmath import libmp

    return _mp_enclose(libmp.mpf_exp, q, prec, abs(q.numerator // q.denominator).bit_length() + 10)


def axiom_facts() -> list[str]:
    """The numeric ln/exp facts the encoding asserts, each enclosed with mpmath; [] if all hold."""
    problems = []
    lo, _ = _mp_ln(Fraction(1, 2**1074), 256)
    if lo < LN_OF_MIN_SUBNORMAL_LB:
        problems.append("ln(2^-1074) >= -745 fails")
    _, hi = _mp_ln(MAX_FLOAT, 256)
    if hi > LN_OF_MAX_UB:
        problems.append("ln(MAX) <= 710 fails")
    _, hi = _mp_exp(EXP_SAFE_ARG, 256)
    if hi > MAX_FLOAT:
        problems.append("exp(709) <= MAX fails")
    for x in PROBES:  # ln a <= a - 1 and exp a >= 1 + a, on probes
        q = Fraction(x)
        if _mp_ln(q, 256)[0] > q - 1:
            problems.append(f"ln({x!r}) <= {x!r} - 1 fails")
        if x <= 700 and _mp_exp(q, 256)[1] < 1 + q:
            problems.append(f"exp({x!r}) >= 1 + {x!r} fails")
    return problems


def op_contract(op: str, seed: int = 0) -> tuple[str, float, str, dict | None]:
    """(status, seconds, detail, first problem) of the contract check of primitive ``op``."""
    if op not in OPS:
        raise ValueError(f"op={op!r} must be one of {sorted(OPS)}")
    t0 = time.perf_counter()
    if OPS[op].ideal in _EXACT:
        problems = _rational_contract(op, seed)
        what = "equals z3's IEEE result and the rounding model on"
    else:
        problems = _transcendental_contract(op, seed) + axiom_facts()
        what = "is on the promised side of a 256-bit mpmath enclosure, monotone, within the model on"
    dt = time.perf_counter() - t0
    if problems:
        return "refuted", dt, f"{len(problems)} problem(s): {problems[0]}", {"problems": problems[:5]}
    n = len(_pairs(seed)) if OPS[op].ideal in _EXACT else len(PROBES) * 2 + 80
    return "proved", dt, f"{op} {what} ~{n} probe inputs (a check on points, not a proof for all floats)", None
