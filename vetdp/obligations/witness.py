"""Turn a z3 counterexample into concrete float64 inputs and confirm it with mpmath.

z3 works over the rounding *model* (any value within an ulp in the stated direction), so
its model is a candidate, not yet a witness. A witness is a float input, accepted by the
preconditions, on which the expression's own float evaluation (``Expr.to_float``) either
fails (overflow, division by zero, ln of a non-positive number) or lies on the wrong side
of the ideal value, enclosed by interval arithmetic at 256 bits (never a tolerance).

The search tries the z3 model rounded to floats first, then its float neighbours, then the
precondition boundaries and their neighbours, then a seeded log-uniform sample.
"""

from __future__ import annotations

import dataclasses
import math
import random
from collections.abc import Iterator
from fractions import Fraction

import mpmath

from vetdp.arith.expr import Var
from vetdp.arith.rounding import FloatArithmeticError
from vetdp.obligations.z3encode import ConstantSpec, VarRange

__all__ = ["Witness", "check_point", "find_witness"]

ENCLOSURE_BITS = 256


@dataclasses.dataclass(frozen=True)
class Witness:
    """Concrete inputs on which the float evaluation is wrong, and how."""

    env: dict
    kind: str  # "under-reports" | "over-reports" | "fails"
    computed: float | None
    true_lo: Fraction | None
    true_hi: Fraction | None
    message: str

    def as_dict(self) -> dict:
        d: dict = {"inputs": {k: (v.hex() if isinstance(v, float) else v) for k, v in self.env.items()},
                   "inputs_repr": {k: repr(v) for k, v in self.env.items()}, "kind": self.kind,
                   "message": self.message}
        if self.computed is not None:
            d["computed"] = repr(self.computed)
        if self.true_lo is not None:
            d["true_approx"] = _show((self.true_lo + self.true_hi) / 2)
        return d


def _show(q: Fraction) -> str:
    """A 17-digit decimal of ``q`` (mpmath, so 2**-1075 does not print as 0.0)."""
    return mpmath.nstr(mpmath.mpf(q.numerator) / q.denominator, 17)


def _kinds(spec: ConstantSpec) -> dict[str, str]:
    return {v.name: v.kind for v in spec.expr.walk() if isinstance(v, Var)}


def check_point(spec: ConstantSpec, env: dict) -> Witness | None:
    """A witness at ``env`` if the float evaluation fails or errs in the forbidden direction."""
    try:
        value = spec.expr.to_float(env)
    except FloatArithmeticError as e:
        return Witness(env, "fails", None, None, None, str(e))
    try:
        lo, hi = spec.expr.enclose(env, ENCLOSURE_BITS)
    except FloatArithmeticError:
        return None  # the real value cannot be enclosed here (e.g. exp of 1e300): no verdict at this point
    v = Fraction(value)
    if spec.bound == "upper" and v < lo:
        return Witness(env, "under-reports", value, lo, hi,
                       f"float {value!r} < true value {_show(lo)} (short by {_show(lo - v)})")
    if spec.bound == "lower" and v > hi:
        return Witness(env, "over-reports", value, lo, hi,
                       f"float {value!r} > true value {_show(hi)} (over by {_show(v - hi)})")
    return None


def _clamp_float(x: Fraction, r: VarRange) -> float:
    y = float(min(max(x, r.lo), r.hi)) if abs(x) < 2**1023 else float(r.hi if x > 0 else r.lo)
    while Fraction(y) < r.lo:
        y = math.nextafter(y, math.inf)
    while Fraction(y) > r.hi:
        y = math.nextafter(y, -math.inf)
    return y


def _neighbours(x: float, r: VarRange, n: int) -> Iterator[float]:
    up = down = x
    for _ in range(n):
        up, down = math.nextafter(up, math.inf), math.nextafter(down, -math.inf)
        for y in (up, down):
            if math.isfinite(y) and r.contains(Fraction(y)):
                yield y


def _log_uniform(r: VarRange, rng: random.Random) -> float:
    lo = max(float(r.lo), 5e-324)
    hi = float(r.hi)
    if lo <= 0:
        return rng.uniform(float(r.lo), hi)
    return _clamp_float(Fraction(math.exp(rng.uniform(math.log(lo), math.log(hi)))), r)


def _candidates(spec: ConstantSpec, model: dict | None, samples: int, seed: int) -> Iterator[dict]:
    kinds = _kinds(spec)
    ranges = {r.name: r for r in spec.ranges}

    def make(values: dict) -> dict:
        env = {}
        for name, kind in kinds.items():
            x = values[name]
            r = ranges[name]
            env[name] = int(min(max(round(x), r.lo), r.hi)) if kind == "int" else _clamp_float(Fraction(x), r)
        return env

    base = {name: (model or {}).get(name, ranges[name].lo) for name in kinds}
    env = make(base)
    yield env
    for name, kind in kinds.items():  # walk each float coordinate through its neighbours
        if kind == "float":
            for y in _neighbours(env[name], ranges[name], 64):
                yield {**env, name: y}
        else:
            for n in (env[name] - 1, env[name] + 1, 2, 3, 5, 7, 10, 1000):
                if ranges[name].contains(Fraction(n)):
                    yield {**env, name: n}
    ints = [n for n, k in kinds.items() if k == "int"]
    for t in [2, 3, 5, 7, 10, 1000, 2**20]:  # boundaries: ends of float ranges, and prob = 1/t
        for end in ("lo", "hi"):
            vals = {n: (t if n in ints else getattr(ranges[n], end)) for n in kinds}
            cand = make(vals)
            for name in kinds:
                if kinds[name] == "float" and spec.accepts is not None:
                    cand[name] = _clamp_float(Fraction(1, t), ranges[name]) if end == "lo" else cand[name]
            yield cand
            for name in kinds:
                if kinds[name] == "float":
                    for y in _neighbours(cand[name], ranges[name], 16):
                        yield {**cand, name: y}
    rng = random.Random(seed)
    for _ in range(samples):
        yield {n: (rng.choice([ranges[n].lo, 1, 2, 3, 7, rng.randint(1, 10**6)]) if kinds[n] == "int"
                   else _log_uniform(ranges[n], rng)) for n in kinds}


def find_witness(spec: ConstantSpec, model: dict | None, samples: int = 2000, seed: int = 0,
                 prefer_wrong_value: bool = False) -> Witness | None:
    """The first candidate input that is a witness (see module docstring), or None.

    With ``prefer_wrong_value`` a witness whose float is on the wrong side of the truth is
    preferred to one whose evaluation fails (both are returned only if found)."""
    fallback = None
    for env in _candidates(spec, model, samples, seed):
        env = {k: (int(v) if _kinds(spec)[k] == "int" else v) for k, v in env.items()}
        if not all(spec.range_of(k).contains(Fraction(v)) for k, v in env.items()):
            continue
        if spec.accepts is not None and not spec.accepts(env):
            continue
        w = check_point(spec, env)
        if w is not None and (w.kind != "fails" or not prefer_wrong_value):
            return w
        fallback = fallback or w
    return fallback
