"""``privacy.tight`` for every parameter value of a region: map(params) <= L(params)·(1 + 2⁻³⁰) + 2⁻⁴⁰.

L is the exact loss of the reference law, read from the law itself (the laws are polynomials in the code's float
terms, :mod:`vetdp.engine.polynomial`): the worst neighbouring pair (x, x') and output y at the region's point give
ln(P[M(x) = y] / P[M(x') = y]) <= L at every value of the region, so a map within the allowance of that pair's loss
is within the allowance of L.

Intervals alone cannot decide a relative tolerance of 2⁻³⁰: a map and a loss that both grow with the parameter
differ across a sub-box by far more than 2⁻³⁰ unless the sub-box is some 2⁻³⁰ wide. The two are related instead:

1. **the formula**: sympy proves the map's ideal formula (every rounded operation taken exactly, the law's
   probability terms as positive symbols) equal to ln(P/P') — ``expand_log`` under the positivity that step 2
   checks on the sub-box (every factor under a logarithm, every probability and its complement);
2. **the rounding**: a forward error analysis of the map's float term over the sub-box, in outward-rounded
   interval arithmetic (mpmath), bounds |map(params) − ideal(params)| by e, each operation adding two units in the
   last place of its result (correctly rounded basic operations and logarithms round by one); the map is then
   tight on the sub-box when e <= 2⁻³⁰·min |L| + 2⁻⁴⁰ over it.

A sub-box not decided is bisected (on its widest parameter, by float count), up to a budget of sub-boxes; a single
value, and the points of the sub-boxes left when the budget runs out, are checked exactly (the worst ratio over
every pair there, ln enclosed), which finds a failing value. Where the formula is not the loss, the region's point
and corners are checked that way and the region is left open with the reason (or decided, if it is one value).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any

from vetdp.arith.expr import Const, Expr, Op, Var
from vetdp.engine.clauses import tight_holds
from vetdp.engine.divergence import ln_ratio_bracket, max_divergence
from vetdp.engine.polynomial import ProbPoly, poly_value
from vetdp.engine.symbolic import MAX_FLOAT, Box, SymFloat, evaluate, float_from_key, float_key
from vetdp.engine.universal import _range_of, _zero  # universal imports this module where it judges

__all__ = ["TightOutcome", "decide_tight", "TIGHT_BOXES"]

TIGHT_BOXES = 512  # sub-boxes one region's tightness proof may examine (work, never seconds)
_ULPS = 2  # units in the last place one rounded operation may add (basic operations and ln round by <= 1)
_PREC = 96  # bits of the interval arithmetic
_LAST_POINTS = 8  # undecided sub-boxes whose points are checked exactly when the budget runs out


@dataclasses.dataclass
class TightOutcome:
    """One region's verdict: proved for every value, failed at ``witness`` (why), or open (why)."""

    proved: bool = False
    witness: dict[str, float] | None = None
    why: str = ""
    boxes: int = 0


def decide_tight(claim: Any, laws: Mapping[Any, Mapping[Any, Any]], pairs_at: Callable[[dict], Any], box: Box,
                 budget: int = TIGHT_BOXES) -> TightOutcome:
    """Decide map <= L·(1 + 2⁻³⁰) + 2⁻⁴⁰ on ``box``: ``claim`` is the map's value (a SymFloat over the region, or a
    float), ``laws`` the reference law by frozen input (probabilities as polynomials), ``pairs_at(point)`` the
    neighbouring pairs at a parameter point (None: every ordered pair)."""
    plain = isinstance(claim, (int, float)) and not isinstance(claim, bool)
    term = claim.term if isinstance(claim, SymFloat) else Const(float(claim)) if plain else None
    if term is None:
        return TightOutcome(why=f"the map returned {type(claim).__name__}, not a float")
    out = TightOutcome()
    point = box.point()
    worst = _worst_at(laws, pairs_at, point)
    formula_why = ""
    if worst.ratio is None:
        if _zero(laws[worst.x_prime].get(worst.y, 0)):  # an output only x can give, on the whole region: L = inf
            out.proved = True
            return out
        formula_why = "the loss is infinite at the region's point only"
        identity = None
    else:
        p, q = laws[worst.x].get(worst.y, 0), laws[worst.x_prime].get(worst.y, 0)
        identity = _identity(term, p, q)
        formula_why = identity.why
    if identity is None or not identity.holds:  # no proof to bisect for: look for a failing value only
        for env in [point, *(c for c in box.corners(box.names) if box.contains(c))]:  # corners an order keeps
            failing = _fails_at(term, laws, pairs_at, env)
            if failing is not None:
                out.witness, out.why = failing
                return out
        out.proved = box.size() == 1  # its one value is decided exactly
        out.why = formula_why + "; checked at the region's point and corners"
        return out
    queue = [box]
    while queue:
        if out.boxes >= budget:
            for part in queue[:_LAST_POINTS]:  # where the proof stalls, a failing value is likeliest
                failing = _fails_at(term, laws, pairs_at, part.point())
                if failing is not None:
                    out.witness, out.why = failing
                    return out
            out.why = (f"not decided within {budget} sub-boxes ({len(queue)} left, first {queue[0].describe()}): "
                       f"{formula_why}")
            return out
        part = queue.pop(0)
        out.boxes += 1
        undecided = identity.decide(part)
        if undecided is None:
            continue
        formula_why = undecided
        if part.size() == 1:
            failing = _fails_at(term, laws, pairs_at, part.point())  # its one value, decided exactly
            if failing is not None:
                out.witness, out.why = failing
                return out
            continue
        name = max(part.ranges, key=lambda r: float_key(r[2]) - float_key(r[1]))[0]
        queue.extend(part.split(name, _cut(*part[name])))
    out.proved = True
    return out


def _cut(lo: float, hi: float) -> float:
    return float_from_key((float_key(lo) + float_key(hi) + 1) // 2)


def _worst_at(laws: Mapping, pairs_at: Callable[[dict], Any], env: dict[str, float]):
    dists = {x: {y: poly_value(q, env) for y, q in law.items()} for x, law in laws.items()}
    return max_divergence(dists, pairs_at(env))


def _fails_at(term: Expr, laws: Mapping, pairs_at: Callable[[dict], Any], env: dict[str, float]
              ) -> tuple[dict[str, float], str] | None:
    """The point and why, when the map exceeds the exact loss's allowance there (decided exactly)."""
    worst = _worst_at(laws, pairs_at, env)
    if worst.ratio is None:
        return None
    try:
        claim = evaluate(term, env)
    except ArithmeticError:  # the map's term has no value here (FloatArithmeticError): nothing decided at it
        return None
    if tight_holds(claim, worst.ratio):
        return None
    shown = ", ".join(f"{k} = {v!r}" for k, v in env.items())
    loss = float(ln_ratio_bracket(worst.ratio)(64)[1])  # the ratio itself may be past the float range
    return dict(env), (f"at {shown}: map = {claim!r} exceeds the exact loss {loss:.17g} by more "
                       f"than 2**-30 relative (+ 2**-40); the pair x = {worst.x!r}, x' = {worst.x_prime!r}")


# ------------------------------------------------------------------ the formula and the rounding

def _identity(term: Expr, p: Any, q: Any) -> _Identity:
    """The (remembered) comparison of a map's term with ln(p/q): the regions of one base, and bases that share a
    term, ask it again."""
    key = (term, *(frozenset(x.terms.items()) if isinstance(x, ProbPoly) else x for x in (p, q)))
    if key not in _IDENTITIES:
        if len(_IDENTITIES) > 1024:
            _IDENTITIES.clear()
        _IDENTITIES[key] = _Identity(term, p, q)
    return _IDENTITIES[key]


_IDENTITIES: dict[tuple, _Identity] = {}


class _Identity:
    """The map's term against ln(p/q) for two probabilities of the reference law."""

    def __init__(self, term: Expr, p: Any, q: Any):
        import sympy

        self.term, self.p, self.q = term, p, q
        self.symbols: dict[Expr, Any] = {}
        try:
            ideal = self._sympy(term)
            loss = sympy.log(self._poly(p) / self._poly(q))
            difference = sympy.expand(sympy.expand_log(ideal - loss, force=True))  # usually 0 already
            if difference != 0:
                difference = sympy.simplify(difference)
        except _Unmodelled as e:
            self.holds, self.why = False, str(e)
            return
        self.holds = difference == 0
        self.why = "" if self.holds else (f"the map's formula {ideal} is not the reference law's loss {loss} "
                                          f"(sympy: they differ by {difference})")

    def _symbol(self, atom: Expr) -> Any:
        import sympy

        if atom not in self.symbols:
            self.symbols[atom] = sympy.Symbol(f"a{len(self.symbols)}", positive=True)
        return self.symbols[atom]

    def _atoms(self) -> set[Expr]:
        return {a for x in (self.p, self.q) if isinstance(x, ProbPoly) for a in x.atoms()}

    def _sympy(self, t: Expr) -> Any:
        import sympy

        if t in self._atoms() or isinstance(t, Var):
            return self._symbol(t)
        if isinstance(t, Const):
            return sympy.Rational(Fraction(t.value))
        ideal = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
                 "div": lambda a, b: a / b, "ln": sympy.log, "exp": sympy.exp,
                 "log1p": lambda a: sympy.log(1 + a), "expm1": lambda a: sympy.exp(a) - 1}
        if not isinstance(t, Op) or t.info.ideal not in ideal:
            raise _Unmodelled(f"the map's term {t} has an operation the rounding analysis does not model")
        return ideal[t.info.ideal](*(self._sympy(a) for a in t.args))

    def _poly(self, q: Any) -> Any:
        import sympy

        if not isinstance(q, ProbPoly):
            return sympy.Rational(Fraction(q))
        total = sympy.Integer(0)
        for mono, c in q.terms.items():
            product = sympy.Rational(c)
            for (atom, comp), e in mono:
                s = self._symbol(atom)
                product *= (1 - s if comp else s) ** e
            total += product
        return total

    def decide(self, box: Box) -> str | None:
        """None when the map is tight for every value of ``box``; else why not decided there."""
        ctx = _iv()
        ranges: dict[Expr, Any] = {}
        for atom in self.symbols:
            span = _range_of(atom, box)
            if span is None:
                return f"the term {atom} is not known to be monotone on {box.describe()}"
            ranges[atom] = ctx.mpf([span[0], span[1]])
        for prob in (self.p, self.q):
            lo = _poly_interval(prob, ranges, ctx)
            if lo is None or not lo.a > 0:
                return f"a probability of the worst pair (or a factor of it) is not positive on {box.describe()}"
        for atom, r in ranges.items():
            if not r.a > 0:
                return f"the probability {atom} is not positive on {box.describe()}"
        analysed = _analyse(self.term, ranges, ctx, under_log=False, box=box)
        if isinstance(analysed, str):
            return analysed
        value, error, _ = analysed
        smallest = ctx.mpf(0) if value.a <= 0 <= value.b else ctx.absmin(value)
        allowance = smallest * ctx.mpf(2) ** -30 + ctx.mpf(2) ** -40
        if error.b <= allowance.a:
            return None
        return f"the rounding bound {float(error.b):.3g} exceeds the allowance {float(allowance.a):.3g}"


class _Unmodelled(Exception):
    pass


def _iv():
    from mpmath.ctx_iv import MPIntervalContext

    global _CTX
    if _CTX is None:
        _CTX = MPIntervalContext()
        _CTX.prec = _PREC
    return _CTX


_CTX = None


def _poly_interval(q: Any, ranges: Mapping[Expr, Any], ctx: Any) -> Any:
    """An interval holding the probability ``q`` for every value of the atoms' ranges (None: an atom unranged)."""
    if not isinstance(q, ProbPoly):
        return ctx.mpf(Fraction(q).numerator) / Fraction(q).denominator
    total = ctx.mpf(0)
    for mono, c in q.terms.items():
        if len(q.terms) == 1 and c < 0:
            return None  # a single negative monomial: expand_log would split a negative factor
        product = ctx.mpf(c.numerator) / c.denominator
        for (atom, comp), e in mono:
            if atom not in ranges:
                return None
            factor = 1 - ranges[atom] if comp else ranges[atom]
            if not factor.a > 0:
                return None  # expand_log splits the product: each factor must be positive
            product *= factor ** e
        total += product
    return total


def _rounding(ctx: Any, magnitude: Any) -> Any:
    """What rounding a result of at most ``magnitude`` may add: _ULPS units in the last place (subnormals too)."""
    return _ULPS * (magnitude * ctx.mpf(2) ** -52 + ctx.mpf(2) ** -1074)


_ANALYSED: dict[tuple, Any] = {}  # bases that share subterms (long bit vectors: one per length) share their analyses


def _analyse(t: Expr, ranges: Mapping[Expr, Any], ctx: Any, under_log: bool, box: Box) -> tuple[Any, Any, Any] | str:
    """(V, e, r): V holds the ideal value of ``t`` (atoms exact) on the sub-box, e.b bounds |computed − ideal| and r
    (None: unknown) bounds |computed − ideal| / |ideal| (relative bounds carry a logarithm's argument across many
    binades); or why the analysis cannot bound it there. Remembered by the term, the sub-box, the atoms ranged
    (their ranges are functions of the sub-box) and the rounding model (_ULPS, the precision)."""
    key = (t, under_log, box, frozenset(ranges), _ULPS, ctx.prec)
    if key not in _ANALYSED:
        if len(_ANALYSED) > 100_000:
            _ANALYSED.clear()
        _ANALYSED[key] = _analysed(t, ranges, ctx, under_log, box)
    return _ANALYSED[key]


def _analysed(t: Expr, ranges: Mapping[Expr, Any], ctx: Any, under_log: bool, box: Box) -> tuple[Any, Any, Any] | str:
    zero = ctx.mpf(0)
    if t in ranges:
        return ranges[t], zero, zero
    if isinstance(t, Const):
        v = Fraction(t.value)
        return ctx.mpf(v.numerator) / v.denominator, zero, zero
    if not isinstance(t, Op):
        return f"the term {t} is not ranged on the sub-box"
    ideal = t.info.ideal
    factors = ideal in ("mul", "div")
    # expand_log splits products and quotients under a logarithm: their factors must be positive
    parts = [_analyse(a, ranges, ctx, ideal == "ln" or (under_log and factors), box) for a in t.args]
    for p in parts:
        if isinstance(p, str):
            return p
    if under_log and factors and any(not v.a > 0 for v, _, _ in parts):
        return f"a factor under a logarithm in {t} is not positive on the sub-box"
    (v1, e1, r1), *rest = parts
    w1 = _computed(ctx, v1, e1, r1)
    rel = None
    if ideal in ("add", "sub", "mul", "div"):
        v2, e2, r2 = rest[0]
        w2 = _computed(ctx, v2, e2, r2)
        if ideal == "add":
            value, spread = v1 + v2, e1 + e2
        elif ideal == "sub":
            value, spread = v1 - v2, e1 + e2
        elif ideal == "mul":
            value, spread = v1 * v2, _mag(ctx, v1) * e2 + _mag(ctx, w2) * e1
            if r1 is not None and r2 is not None:
                rel = r1 + r2 + r1 * r2
        else:
            if w2.a <= 0 <= w2.b:
                return f"a divisor in {t} may be 0 on the sub-box"
            value = v1 / v2
            spread = (e1 + _mag(ctx, value) * e2) / ctx.absmin(w2)
            if r1 is not None and r2 is not None and r2.b < 1:
                rel = (r1 + r2) / (1 - r2)
    elif ideal == "ln":
        if not w1.a > 0:
            return f"the argument of {t} may be <= 0 on the sub-box"
        value, spread = ctx.log(v1), e1 / w1.a
        if r1 is not None and r1.b < 1:  # c = v(1 + δ), |δ| <= r1: |ln c − ln v| <= −ln(1 − r1)
            spread = ctx.mpf(min(spread.b, (-ctx.log(1 - r1)).b))
    elif ideal == "log1p":
        if not w1.a > -1:
            return f"the argument of {t} may be <= -1 on the sub-box"
        value, spread = ctx.log(1 + v1), e1 / (1 + w1.a)
    elif ideal in ("exp", "expm1"):
        if w1.b > 710:
            return f"{t} may overflow on the sub-box"
        value = ctx.exp(v1) - (1 if ideal == "expm1" else 0)
        spread = ctx.exp(w1.b) * e1
        if ideal == "exp":
            rel = ctx.exp(e1) - 1
    else:
        return f"the operation {t.info.name} is not modelled"
    smallest = zero if value.a <= 0 <= value.b else ctx.absmin(value)
    if rel is not None:
        spread = ctx.mpf(min(spread.b, (rel * _mag(ctx, value)).b))
    elif smallest.a > 0:
        rel = spread / smallest
    magnitude = _mag(ctx, value) + spread
    if magnitude.b > MAX_FLOAT:
        return f"{t} may overflow on the sub-box"
    if _exact(t, box):
        return value, ctx.mpf(spread.b), None if rel is None else ctx.mpf(rel.b)
    rounded = ctx.mpf(spread.b) + _rounding(ctx, magnitude)
    if rel is None or not (rel.b < 1 and smallest.a > 0):
        return value, rounded, None
    least = smallest * (1 - rel)  # the least |result| before rounding: rounding's relative part, subnormals too
    step = _ULPS * (ctx.mpf(2) ** -52 + ctx.mpf(2) ** -1074 / least)
    return value, rounded, ctx.mpf((rel + step * (1 + rel)).b)


def _computed(ctx: Any, v: Any, e: Any, r: Any) -> Any:
    """The values the code computes for a term of ideal values ``v``, absolute error e and relative error r."""
    if r is not None and r.b < 1 and v.a > 0:
        return v * ctx.mpf([1 - r.b, 1 + r.b])
    return v + ctx.mpf([-e.b, e.b])


def _exact(t: Op, box: Box) -> bool:
    """Whether the operation rounds nothing on the sub-box: a product or quotient by an operand the code computes as
    exactly 1.0, a sum or difference with one it computes as exactly 0.0, everywhere on the sub-box."""
    ideal = t.info.ideal
    neutral = {"mul": (0, 1), "div": (1,), "add": (0, 1), "sub": (0, 1)}.get(ideal, ())
    unit = 1.0 if ideal in ("mul", "div") else 0.0
    for i in neutral:
        arg = t.args[i]
        span = (arg.value, arg.value) if isinstance(arg, Const) else _range_of(arg, box)
        if span is not None and span[0] == span[1] == unit:
            return True
    return False


def _mag(ctx: Any, v: Any) -> Any:
    """max |v| over an interval, as an interval."""
    return ctx.mpf(max(abs(v.a), abs(v.b)))
