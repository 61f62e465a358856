"""``privacy.tight`` for every parameter value of a region: map(params) <= L(params)·(1 + 2⁻³⁰) + 2⁻⁴⁰.

L is the exact loss of the reference law, read from the law itself (the laws are polynomials in the code's float
terms, :mod:`vetdp.engine.polynomial`): the worst neighbouring pair (x, x') and output y at the region's point give
ln(P[M(x) = y] / P[M(x') = y]) <= L at every value of the region, so a map within the allowance of that pair's loss
is within the allowance of L.

Intervals alone cannot decide a relative tolerance of 2⁻³⁰: a map and a loss that both grow with the parameter
differ across a sub-box by far more than 2⁻³⁰ unless the sub-box is some 2⁻³⁰ wide. The two are related instead:

1. **the formula**: sympy proves the map's ideal formula (every rounded operation taken exactly, the law's
   probability terms as positive symbols) equal to ln(P/P') — by ``expand_log``, under the positivity that step 2
   checks on the sub-box (every factor under a logarithm, every probability and its complement); or, for a sum of
   integer multiples of logarithms that ``expand_log`` cannot bring to one (RAPPOR's a·log1p(G/p*) + b·log1p(G/(1 −
   q*))), by comparing exponentials: Π uᵢ^cᵢ − P/P' cancels to 0 as one rational function. That form needs only P,
   P' and every logarithm's argument positive, which step 2 shows from sympy's factors of P and P' (an interval of
   each factor in several forms, or its exact values at the corners where its slopes put its extremes);
2. **the rounding**: a forward error analysis of the map's float term over the sub-box, in outward-rounded
   interval arithmetic (mpmath), bounds |map(params) − ideal(params)| by e and by r·|ideal| + a, each operation
   adding two units in the last place of its result (correctly rounded basic operations and logarithms round by
   one; a sum of two floats that underflows is exact, another underflowing result adds to a). Relative bounds
   survive where the loss tends to 0: a difference of two parameters the region orders is at least the spacing of
   floats below the larger, and sums of one sign keep their parts' relative errors. The map is then tight on the
   sub-box when r <= 2⁻³⁰ and a <= 2⁻⁴⁰, or e <= 2⁻³⁰·min |L| + 2⁻⁴⁰ over it.

A sub-box not decided is bisected (on its widest parameter, by float count), up to a budget of sub-boxes; a single
value, and the points of the sub-boxes left when the budget runs out, are checked exactly (the worst ratio over
every pair there, ln enclosed), which finds a failing value. Where the formula is not the loss, the region's point
and corners are checked that way and the region is left open with the reason (or decided, if it is one value).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterator, Mapping
from fractions import Fraction
from typing import Any

from vetdp.arith.expr import Const, Expr, Op, Var
from vetdp.engine.clauses import tight_holds
from vetdp.engine.divergence import ln_ratio_bracket, max_divergence
from vetdp.engine.polynomial import ProbPoly, expanded_monomial, expanded_product, poly_value
from vetdp.engine.symbolic import MAX_FLOAT, Box, SymFloat, evaluate, float_from_key, float_key, remembered
from vetdp.engine.universal import _range_of, _zero  # universal imports this module where it judges

__all__ = ["TightOutcome", "decide_tight", "enclosure", "TIGHT_BOXES"]

TIGHT_BOXES = 512  # sub-boxes one region's tightness proof may examine (work, never seconds)
_ULPS = 2  # units in the last place one rounded operation may add (basic operations and ln round by <= 1)
_PREC = 96  # bits of the interval arithmetic
_LAST_POINTS = 8  # undecided sub-boxes whose points are checked exactly when the budget runs out
_EXP_DEGREE = 64  # the largest total power Σ|cᵢ| the exp form expands (Π uᵢ^cᵢ as one rational function)
_RELATIVE = 2.0**-30  # the relative allowance of privacy.tight (exact as a float)


@dataclasses.dataclass
class TightOutcome:
    """One region's verdict: proved for every value, failed at ``witness`` (why), or open (why)."""

    proved: bool = False
    witness: dict[str, float] | None = None
    why: str = ""
    boxes: int = 0


def decide_tight(claim: Any, laws: Mapping[Any, Mapping[Any, Any]], pairs_at: Callable[[dict], Any], box: Box,
                 budget: int = TIGHT_BOXES, assumed: Mapping[Any, bool] | None = None) -> TightOutcome:
    """Decide map <= L·(1 + 2⁻³⁰) + 2⁻⁴⁰ on ``box``: ``claim`` is the map's value (a SymFloat over the region, or a
    float), ``laws`` the reference law by frozen input (probabilities as polynomials), ``pairs_at(point)`` the
    neighbouring pairs at a parameter point (None: every ordered pair). ``assumed``: a fork side's answers of
    comparisons by their keys (:func:`~vetdp.engine.symbolic.explore_regions`); the proof then speaks only for the
    points of ``box`` that answer so, and a probability compared with a number bounds the subterms equal to it."""
    bounds = assumed_bounds(assumed or {})
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
        undecided = identity.decide(part, bounds)
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


_ENCLOSURES: dict = {}  # (term, box, pinned, facts) -> enclosure


def enclosure(t: Expr, box: Box, pinned: Mapping[str, float] | None = None, facts: Mapping[Any, bool] | None = None
              ) -> tuple[Fraction, Fraction] | None:
    """Exact bounds of the float the code computes for ``t`` at every point of ``box`` (the parameters in
    ``pinned`` at their given value) where ``facts`` hold (comparisons of probabilities with numbers, by their keys,
    as :func:`assumed_bounds` reads them): the rounding analysis's ideal interval widened by its error bound e, under
    its model of at most _ULPS units in the last place per operation; None where it gives no bound (an operation it
    does not model, a logarithm's argument or a divisor that may reach 0, an overflow). Remembered: a region's
    runs ask the same comparison again."""
    key = (t, box, frozenset((pinned or {}).items()), frozenset((facts or {}).items()))
    return remembered(_ENCLOSURES, key, lambda: _enclosure(t, box, pinned or {}, facts or {}))


def _enclosure(t: Expr, box: Box, pinned: Mapping[str, float], facts: Mapping[Any, bool]
               ) -> tuple[Fraction, Fraction] | None:
    ctx = _iv()
    bounds = assumed_bounds(facts)
    ranges = {Var(n): ctx.mpf([pinned[n], pinned[n]] if n in pinned else list(box[n])) for n in t.variables()}
    for atom in {a for items, _, _ in bounds for m, _ in items for a, _ in m} - set(ranges):
        span = _range_of(atom, box)  # a float term of the facts (f /↑ 2): its computed values, as an atom
        if span is not None and not (set(atom.variables()) & set(pinned)):
            ranges[atom] = ctx.mpf(list(span))
    analysed = _analyse(t, ranges, ctx, under_log=False, box=box, split=False, bounds=bounds)
    if isinstance(analysed, str):
        return None
    from mpmath.libmp import to_rational

    value, error, _, _ = analysed
    lo, hi = (value.a - error.b)._mpi_[0], (value.b + error.b)._mpi_[1]  # the outward ends, exactly
    return tuple(Fraction(*to_rational(x)) for x in (lo, hi))


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
        self.splits_logs = True  # proved by expand_log: every factor it split must be positive where it is used
        self.p_factors = self.q_factors = None  # proved by the exp form: the probabilities' factors, for their signs
        try:
            ideal = self._sympy(term)
            ratio = self._poly(p) / self._poly(q)
            loss = sympy.log(ratio)
            apart = _apart_at(ideal, loss, list(self.symbols.values()))
            if apart is not None:  # not an identity: sympy's expansion of a 129th power would only say so slowly
                self.holds, self.why = False, (f"the map's formula is not the reference law's loss ln({p} / {q}): "
                                               f"they differ by {apart} at {_SCREEN_POINT_TEXT}")
                return
            difference = sympy.expand(sympy.expand_log(ideal - loss, force=True))  # usually 0 already
            self.splits_logs = difference == 0
            if difference != 0:
                difference = _exp_difference(ideal, ratio)
            if difference != 0:
                difference = sympy.simplify(difference)
        except _Unmodelled as e:
            self.holds, self.why = False, str(e)
            return
        except RecursionError:  # sympy's recursion on a large expression (a 128th power): not proved, never failed
            self.holds, self.why = False, f"sympy could not compare the map's formula with ln({p} / {q}) (too deep)"
            return
        self.holds = difference == 0
        if self.holds and not self.splits_logs:  # the probabilities' signs, from their factors (no cancellation)
            try:
                self.p_factors, self.q_factors = (self._factors(x) for x in (p, q))
            except (_Unmodelled, RecursionError):
                self.holds, self.why = False, "sympy could not factor the worst pair's probabilities"
                return
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

    def _factors(self, prob: Any) -> tuple[Fraction, list[_Factor]]:
        """``prob`` as c·Π fᵢ^eᵢ (sympy's factors over the rationals), for the signs of its factors."""
        import sympy

        atom_of = {s: a for a, s in self.symbols.items()}
        c, factors = sympy.factor_list(self._poly(prob))
        out = []
        for f, e in factors:
            gens = sorted(f.free_symbols, key=str)
            forms = [f, *(sympy.horner(f, wrt=g) for g in gens)]
            slopes = {atom_of[g]: [_tree(d, atom_of) for d in (sympy.expand(sympy.diff(f, g)),
                                                                 sympy.horner(sympy.diff(f, g), wrt=g))]
                      for g in gens}
            poly = {expanded_monomial((atom_of[g], k) for g, k in zip(gens, powers, strict=True)):
                    Fraction(int(c.p), int(c.q)) for powers, c in sympy.Poly(f, *gens).terms()}
            out.append(_Factor([_tree(form, atom_of) for form in forms], int(e), slopes, poly))
        return Fraction(int(c.p), int(c.q)), out

    def decide(self, box: Box, bounds: Bounds = ()) -> str | None:
        """None when the map is tight for every value of ``box`` (that answers as ``bounds`` assume); else why not
        decided there."""
        ctx = _iv()
        ranges: dict[Expr, Any] = {}
        spans: dict[Expr, tuple[float, float]] = {}
        for atom in self.symbols:
            span = _range_of(atom, box)
            if span is None:
                return f"the term {atom} is not known to be monotone on {box.describe()}"
            ranges[atom], spans[atom] = ctx.mpf([span[0], span[1]]), span
        for prob, factors in ((self.p, self.p_factors), (self.q, self.q_factors)):
            lo = _poly_interval(prob, ranges, ctx, self.splits_logs)
            if bounds and lo is not None and isinstance(prob, ProbPoly):  # (a long product expands slowly)
                lo = _bounded(ctx, lo, prob.expanded(), bounds)
            if (lo is None or not lo.a > 0) and not (factors is not None
                                                     and _factors_positive(factors, ranges, spans, ctx, box, bounds)):
                return f"a probability of the worst pair (or a factor of it) is not positive on {box.describe()}"
        for atom, r in ranges.items():
            if self.splits_logs and not r.a > 0:
                return f"the probability {atom} is not positive on {box.describe()}"
        analysed = _analyse(self.term, ranges, ctx, under_log=False, box=box, split=self.splits_logs, bounds=bounds)
        if isinstance(analysed, str):
            return analysed
        value, error, rel, floor = analysed
        if rel is not None and rel.b <= _RELATIVE and floor.b <= 2.0**-40:
            # map = ideal·(1 + δ) + η, |δ| <= 2⁻³⁰, |η| <= 2⁻⁴⁰, ideal = ln(p/q) <= L and L >= 0: map <= L·(1 + 2⁻³⁰)
            # + 2⁻⁴⁰ at either sign of ideal
            return None
        smallest = ctx.mpf(0) if value.a <= 0 <= value.b else ctx.absmin(value)
        allowance = smallest * _RELATIVE + ctx.mpf(2) ** -40
        if error.b <= allowance.a:
            return None
        return f"the rounding bound {float(error.b):.3g} exceeds the allowance {float(allowance.a):.3g}"


class _Unmodelled(Exception):
    pass


_SCREEN_PREC = 256
_SCREEN_POINT_TEXT = "each probability atom k set to 1/(k + 3) (256-bit evaluation)"


def _apart_at(ideal: Any, loss: Any, symbols: list) -> str | None:
    """ideal − loss (sympy expressions in positive ``symbols``) at the point where the k-th symbol is 1/(k + 3), by
    256-bit evaluation, when it is far from 0 there (over 2⁻⁶⁰ of |ideal| + |loss|); None when it is near 0, complex
    or cannot be evaluated. Only a shortcut: None leaves the identity to sympy, and a value only refuses a proof by
    identity (a region is then checked at points, never failed on this alone)."""
    import mpmath
    import sympy

    try:
        fn = sympy.lambdify(symbols, [ideal, loss], "mpmath")
        with mpmath.workprec(_SCREEN_PREC):
            a, b = fn(*(mpmath.mpf(1) / (k + 3) for k in range(len(symbols))))
            if not all(isinstance(v, mpmath.mpf) and mpmath.isfinite(v) for v in (a, b)):
                return None
            if abs(a - b) > (abs(a) + abs(b)) * mpmath.mpf(2) ** -60:
                return mpmath.nstr(a - b, 6)
    except (ArithmeticError, ValueError, TypeError, RecursionError):
        return None
    return None


def _exp_difference(ideal: Any, ratio: Any) -> Any:
    """exp(ideal) − ratio as one cancelled rational function, when ``ideal`` is a sum of integer multiples of
    logarithms (a log1p(u) is log(1 + u)); else ``ideal − log(ratio)`` untouched. Its arguments are positive on every
    sub-box decided (the rounding analysis checks them), so exp(Σ cᵢ·log uᵢ) = Π uᵢ^cᵢ exactly, and 0 here proves the
    formula equal to ln(ratio) there: a sum of logarithms of rational functions (RAPPOR's two log1p) that
    ``expand_log`` cannot bring to one logarithm."""
    import sympy

    product, degree = sympy.Integer(1), 0
    for part in sympy.Add.make_args(sympy.expand(ideal, deep=False)):
        coefficient, rest = part.as_coeff_Mul()
        if not (isinstance(rest, sympy.log) and coefficient.is_integer):
            return ideal - sympy.log(ratio)
        product *= rest.args[0] ** coefficient
        degree += abs(int(coefficient))
    if degree > _EXP_DEGREE:
        return ideal - sympy.log(ratio)
    try:
        return sympy.cancel(sympy.together(product - ratio))
    except RecursionError:  # sympy's recursion on a large expression: the formula is left unproved
        return ideal - sympy.log(ratio)


def _iv():
    from mpmath.ctx_iv import MPIntervalContext

    global _CTX
    if _CTX is None:
        _CTX = MPIntervalContext()
        _CTX.prec = _PREC
    return _CTX


_CTX = None


def _tree(expr: Any, atom_of: Mapping[Any, Expr]) -> tuple:
    """A sympy polynomial expression as a tree of ("add" | "mul", children), ("pow", child, n), ("atom", Expr) and
    ("const", Fraction), for interval evaluation without sympy."""
    if expr.is_Symbol:
        return ("atom", atom_of[expr])
    if expr.is_Rational:
        return ("const", Fraction(int(expr.p), int(expr.q)))
    if expr.is_Add or expr.is_Mul:
        return ("add" if expr.is_Add else "mul", [_tree(a, atom_of) for a in expr.args])
    if expr.is_Pow and expr.exp.is_Integer and expr.exp > 0:
        return ("pow", _tree(expr.base, atom_of), int(expr.exp))
    raise _Unmodelled(f"the probability's factor {expr} is not a polynomial")


def _tree_interval(tree: tuple, ranges: Mapping[Expr, Any], ctx: Any, box: Box | None = None) -> Any:
    """An interval holding the tree's value on the ranges (None: an atom unranged); a difference a − b of two
    parameters that ``box``'s orders keep apart has its bound from them."""
    kind = tree[0]
    if kind == "atom":
        return ranges.get(tree[1])
    if kind == "const":
        return ctx.mpf(tree[1].numerator) / tree[1].denominator
    if kind == "pow":
        base = _tree_interval(tree[1], ranges, ctx, box)
        return None if base is None else base ** tree[2]
    parts = [_tree_interval(child, ranges, ctx, box) for child in tree[1]]
    if any(p is None for p in parts):
        return None
    if kind == "add":
        total = _interval_sum(ctx, parts)
        difference = _tree_difference(tree) if box is not None else None
        return total if difference is None else _ordered(ctx, total, *difference, box)
    product = ctx.mpf(1)
    for p in parts:
        product *= p
    return product


@dataclasses.dataclass
class _Factor:
    """A factor f of a probability, raised to ``exponent``: f in several forms (expanded, Horner's in each symbol)
    whose intervals all hold f, and the same for ∂f/∂atom (its ``slopes``)."""

    forms: list[tuple]
    exponent: int
    slopes: dict[Expr, list[tuple]]
    poly: dict[tuple[tuple[Expr, int], ...], Fraction]  # f expanded, in the form of ProbPoly.expanded


def _factors_positive(factored: tuple[Fraction, list[_Factor]], ranges: Mapping[Expr, Any],
                      spans: Mapping[Expr, tuple[float, float]], ctx: Any, box: Box, bounds: Bounds = ()) -> bool:
    """Whether c·Π fᵢ^eᵢ is positive on the ranges: each factor's sign is fixed (by a form whose interval excludes 0,
    by an assumed bound of it, or by its exact values at the corners where it is least and largest, when each slope
    has one sign), and the signs multiply to +."""
    c, factors = factored
    sign = 1 if c > 0 else -1
    for factor in factors:
        factor_sign = (_interval_sign(factor.forms, ranges, ctx, box) or _assumed_sign(factor.poly, bounds)
                       or _corner_sign(factor, ranges, spans, ctx, box))
        if factor_sign is None:
            return False
        sign *= factor_sign if factor.exponent % 2 else 1
    return sign > 0


def _interval_sign(forms: list[tuple], ranges: Mapping[Expr, Any], ctx: Any, box: Box | None = None) -> int | None:
    """+1 or −1 when a form's interval lies above or below 0, 0 when one is exactly [0, 0], else None."""
    for form in forms:
        total = _tree_interval(form, ranges, ctx, box)
        if total is not None and (total.a > 0 or total.b < 0 or total.a == total.b == 0):
            return 1 if total.a > 0 else -1 if total.b < 0 else 0
    return None


def _corner_sign(factor: _Factor, ranges: Mapping[Expr, Any], spans: Mapping[Expr, tuple[float, float]], ctx: Any,
                 box: Box) -> int | None:
    """The factor's sign on the box from its exact values at two corners: where every slope has one sign on the box,
    f is least at the corner that takes each atom's end against its slope and largest at the opposite one."""
    if len(box.orders) > 1:
        return None
    low, high = {}, {}
    for atom, forms in factor.slopes.items():
        slope = _interval_sign(forms, ranges, ctx, box)
        if slope is None or atom not in spans:
            return None
        lo, hi = (Fraction(x) for x in spans[atom])
        low[atom], high[atom] = (lo, hi) if slope >= 0 else (hi, lo)
    named = {a.name: a for a in factor.slopes if isinstance(a, Var)}
    for corner in (low, high):  # with one order a < b, a corner that keeps a <= b is reached from every point of the
        for a, b, _ in box.orders:  # region by moving one parameter at a time inside it (the slopes hold there)
            if a in named and b in named and corner[named[a]] > corner[named[b]]:
                return None
    least, largest = _tree_exact(factor.forms[0], low), _tree_exact(factor.forms[0], high)
    return 1 if least > 0 else -1 if largest < 0 else None


def _tree_difference(tree: tuple) -> tuple[Expr, Expr] | None:
    """(a, b) when the tree is a − b of two atoms (sympy writes it a + (−1)·b), else None."""
    if tree[0] != "add" or len(tree[1]) != 2:
        return None
    for x, y in (tree[1], tree[1][::-1]):
        if (x[0] == "atom" and y[0] == "mul" and len(y[1]) == 2 and ("const", Fraction(-1)) in y[1]
                and any(c[0] == "atom" for c in y[1])):
            return x[1], next(c[1] for c in y[1] if c[0] == "atom")
    return None


def _tree_exact(tree: tuple, point: Mapping[Expr, Fraction]) -> Fraction:
    """The tree's exact value at ``point``."""
    kind = tree[0]
    if kind == "atom":
        return point[tree[1]]
    if kind == "const":
        return tree[1]
    if kind == "pow":
        return _tree_exact(tree[1], point) ** tree[2]
    parts = [_tree_exact(child, point) for child in tree[1]]
    if kind == "add":
        return sum(parts, Fraction(0))
    product = Fraction(1)
    for p in parts:
        product *= p
    return product


def _interval_sum(ctx: Any, terms: list[Any]) -> Any:
    """The sum of intervals, largest first: terms that cancel (1 − q at q = 1) cancel exactly before a tiny one is
    added, instead of burying it in the outward rounding of a partial sum."""
    total = ctx.mpf(0)
    for term in sorted(terms, key=lambda x: -_mag(ctx, x).b):
        total += term
    return total


def _poly_interval(q: Any, ranges: Mapping[Expr, Any], ctx: Any, split: bool = True) -> Any:
    """An interval holding the probability ``q`` for every value of the atoms' ranges (None: an atom unranged, or,
    when ``split`` (expand_log splits the product), a factor that may be <= 0)."""
    if not isinstance(q, ProbPoly):
        return ctx.mpf(Fraction(q).numerator) / Fraction(q).denominator
    products = []
    for mono, c in q.terms.items():
        if split and len(q.terms) == 1 and c < 0:
            return None  # a single negative monomial: expand_log would split a negative factor
        product = ctx.mpf(c.numerator) / c.denominator
        for (atom, comp), e in mono:
            if atom not in ranges:
                return None
            factor = 1 - ranges[atom] if comp else ranges[atom]
            if split and not factor.a > 0:
                return None  # expand_log splits the product: each factor must be positive
            product *= factor ** e
        products.append(product)
    return _interval_sum(ctx, products)


def _rounding(ctx: Any, magnitude: Any) -> Any:
    """What rounding a result of at most ``magnitude`` may add: _ULPS units in the last place (subnormals too)."""
    return _ULPS * (magnitude * ctx.mpf(2) ** -52 + ctx.mpf(2) ** -1074)


_ANALYSED: dict[tuple, Any] = {}  # bases that share subterms (long bit vectors: one per length) share their analyses


def _analyse(t: Expr, ranges: Mapping[Expr, Any], ctx: Any, under_log: bool, box: Box, split: bool = True,
             bounds: Bounds = ()) -> tuple[Any, Any, Any, Any] | str:
    """(V, e, r, a): V holds the ideal value of ``t`` (atoms exact) on the sub-box, e.b bounds |computed − ideal|, and
    r (None: unknown) and a bound it by r·|ideal| + a (relative bounds carry a logarithm's argument across many
    binades; a is what underflow adds); or why the analysis cannot bound it there. Remembered by the term, the
    sub-box, the atoms ranged (their ranges are functions of the sub-box) and the rounding model (_ULPS, the
    precision). ``split``: the formula was proved by expand_log, so a product or quotient under a logarithm must have
    positive factors. ``bounds``: a fork side's assumed bounds of probabilities (V of a subterm equal to one is
    narrowed by it)."""
    key = (t, under_log, box, frozenset(ranges), _ULPS, ctx.prec, split, bounds)
    return remembered(_ANALYSED, key, lambda: _analysed(t, ranges, ctx, under_log, box, split, bounds))


def _analysed(t: Expr, ranges: Mapping[Expr, Any], ctx: Any, under_log: bool, box: Box, split: bool,
              bounds: Bounds) -> tuple[Any, Any, Any, Any] | str:
    zero = ctx.mpf(0)
    if t in ranges:
        return ranges[t], zero, zero, zero
    if isinstance(t, Const):
        v = Fraction(t.value)
        return ctx.mpf(v.numerator) / v.denominator, zero, zero, zero
    if not isinstance(t, Op):
        return f"the term {t} is not ranged on the sub-box"
    ideal = t.info.ideal
    factors = ideal in ("mul", "div")
    # expand_log splits products and quotients under a logarithm: their factors must be positive
    parts = [_analyse(a, ranges, ctx, split and (ideal == "ln" or (under_log and factors)), box, split, bounds)
             for a in t.args]
    for p in parts:
        if isinstance(p, str):
            return p
    if under_log and factors and any(not p[0].a > 0 for p in parts):
        return f"a factor under a logarithm in {t} is not positive on the sub-box"
    (v1, e1, r1, a1), *rest = parts
    w1 = _computed(ctx, v1, e1, r1, a1)
    rel, floor = None, zero  # |computed − ideal| <= rel·|ideal| + floor, before this operation rounds
    if ideal in ("add", "sub", "mul", "div"):
        v2, e2, r2, a2 = rest[0]
        w2 = _computed(ctx, v2, e2, r2, a2)
        if ideal in ("add", "sub"):
            v2 = v2 if ideal == "add" else -v2
            value, spread = v1 + v2, e1 + e2
            if ideal == "sub":
                value = _ordered(ctx, value, *t.args, box)
            rel = _sum_relative(ctx, v1, r1, v2, r2)
            floor = a1 + a2
        elif ideal == "mul":
            if any(v.a == v.b == 0 and e.b == 0 for v, e in ((v1, e1), (w2, e2))):  # a factor computed as exactly 0
                return ctx.mpf(0), zero, zero, zero
            value, spread = v1 * v2, _mag(ctx, v1) * e2 + _mag(ctx, w2) * e1
            if r1 is not None and r2 is not None:
                # (v1(1 + δ1) + η1)·c2 with c2 = v2(1 + δ2) + η2: v1v2(1 + δ1)(1 + δ2) + v1(1 + δ1)η2 + η1·c2
                rel = r1 + r2 + r1 * r2
                floor = _mag(ctx, v1) * (1 + r1) * a2 + a1 * _mag(ctx, w2)
        else:
            if w2.a <= 0 <= w2.b:
                return f"a divisor in {t} may be 0 on the sub-box"
            value = v1 / v2
            spread = (e1 + _mag(ctx, value) * e2) / ctx.absmin(w2)
            if r1 is not None and r2 is not None and ctx.absmin(v2).a > 0:
                r2 = r2 + a2 / ctx.absmin(v2)  # the divisor's floor taken relatively: c2 = v2(1 + δ2'), |δ2'| <= r2
                if r2.b < 1:
                    rel = (r1 + r2) / (1 - r2)
                    floor = a1 / (ctx.absmin(v2) * (1 - r2))
    elif ideal == "ln":
        if not w1.a > 0:
            return f"the argument of {t} may be <= 0 on the sub-box"
        value, spread = ctx.log(v1), e1 / w1.a
        if r1 is not None and ctx.absmin(v1).a > 0:  # c = v(1 + δ), |δ| <= r1 + a1/v: |ln c − ln v| <= −ln(1 − |δ|)
            delta = r1 + a1 / ctx.absmin(v1)
            if delta.b < 1:
                spread = ctx.mpf(min(spread.b, (-ctx.log(1 - delta)).b))
    elif ideal == "log1p":
        if not w1.a > -1:
            return f"the argument of {t} may be <= -1 on the sub-box"
        value, spread = ctx.log(1 + v1), e1 / (1 + w1.a)
        if r1 is not None and (r1 + a1).b < 1 and v1.a >= 0:
            # c = v(1 + δ) + η, v >= 0: |log1p(c) − log1p(v)| <= (v·r1 + a1)/(1 + min(c, v)), and
            # v/(1 + min(c, v)) <= log1p(v)/(1 − r1 − a1) since log1p(v) >= v/(1 + v)
            rel = r1 / (1 - r1 - a1)
            floor = a1 / (1 + (w1.a if w1.a < v1.a else v1.a))
    elif ideal in ("exp", "expm1"):
        if w1.b > 710:
            return f"{t} may overflow on the sub-box"
        value = ctx.exp(v1) - (1 if ideal == "expm1" else 0)
        spread = ctx.exp(w1.b) * e1
        if ideal == "exp":
            rel = ctx.exp(e1) - 1
    else:
        return f"the operation {t.info.name} is not modelled"
    if bounds and ideal in ("add", "sub", "mul", "div"):
        poly = _term_poly(t, frozenset(ranges))
        if poly is not None:
            value = _bounded(ctx, value, poly, bounds)
    smallest = zero if value.a <= 0 <= value.b else ctx.absmin(value)
    if rel is not None:
        spread = ctx.mpf(min(spread.b, (rel * _mag(ctx, value) + floor).b))
    if smallest.a > 0 and (rel is None or (spread / smallest).b < rel.b):  # relative to the least |value| is tighter
        rel, floor = spread / smallest, zero
    magnitude = _mag(ctx, value) + spread
    if magnitude.b > MAX_FLOAT:
        return f"{t} may overflow on the sub-box"
    if _exact(t, box):
        return value, ctx.mpf(spread.b), *_relative(ctx, rel, floor)
    rounded = ctx.mpf(spread.b) + _rounding(ctx, magnitude)
    if rel is None:
        return value, rounded, None, zero
    # rounding: ULPS·2⁻⁵² relative, and for what is not a sum of two floats (exact when it underflows) ULPS·2⁻¹⁰⁷⁴
    # absolute where the result underflows
    step = _ULPS * ctx.mpf(2) ** -52  # |fl(x) − x| <= step·|x| (+ the underflow), |x| <= (1 + rel)·|ideal| + floor
    floor = floor * (1 + step) + (0 if ideal in ("add", "sub") else _ULPS * ctx.mpf(2) ** -1074)
    return value, rounded, *_relative(ctx, rel + step * (1 + rel), floor)


Bounds = tuple  # ((polynomial items, least or None, largest or None), ...): see assumed_bounds


def assumed_bounds(assumed: Mapping[Any, bool]) -> Bounds:
    """A fork side's assumed answers of comparisons of a probability (a polynomial in the code's float terms) with a
    number, as bounds of that polynomial: ``("polynomial", "lt", items, c)`` answered False is P >= c. Other keys
    (comparisons of two float terms) bound nothing here."""
    out = []
    for key, answer in assumed.items():
        if not (isinstance(key, tuple) and len(key) == 4 and key[0] == "polynomial"):
            continue
        _, name, items, c = key
        below = name in ("lt", "le") if answer else name in ("gt", "ge")  # P < c or P <= c
        above = name in ("gt", "ge") if answer else name in ("lt", "le")
        if name == "eq" and answer:
            below = above = True
        if below or above:
            out.append((items, c if above else None, c if below else None))
    return tuple(sorted(out, key=repr))


def _implied(poly: Mapping[tuple, Fraction], bounds: Bounds) -> Iterator[tuple[Fraction | None, Fraction | None]]:
    """The (least, largest) the assumed bounds give the polynomial ``poly``, exactly (None: no bound that side), one
    pair per assumed polynomial that ``poly`` is a nonzero multiple k of: k·c, the sides swapped for k < 0."""
    for items, least, largest in bounds:
        k = _multiple(poly, dict(items))
        if k is not None:
            lo, hi = (least, largest) if k > 0 else (largest, least)
            yield (None if lo is None else k * lo), (None if hi is None else k * hi)


def _bounded(ctx: Any, interval: Any, poly: Mapping[tuple, Fraction], bounds: Bounds) -> Any:
    """``interval`` (an enclosure of the polynomial ``poly``) narrowed by what the assumed bounds imply for it."""
    for lo, hi in _implied(poly, bounds):
        if lo is not None:
            lo = (ctx.mpf(lo.numerator) / lo.denominator).a
            if interval.b >= lo:
                interval = ctx.mpf([interval.a if interval.a > lo else lo, interval.b])
        if hi is not None:
            hi = (ctx.mpf(hi.numerator) / hi.denominator).b
            if interval.a <= hi:
                interval = ctx.mpf([interval.a, interval.b if interval.b < hi else hi])
    return interval


def _assumed_sign(poly: Mapping[tuple, Fraction], bounds: Bounds) -> int | None:
    """+1 or −1 when an assumed bound puts the polynomial above or below 0, else None."""
    for lo, hi in _implied(poly, bounds):
        if lo is not None and lo > 0:
            return 1
        if hi is not None and hi < 0:
            return -1
    return None


def _multiple(poly: Mapping[tuple, Fraction], other: Mapping[tuple, Fraction]) -> Fraction | None:
    """k with poly = k·other (both expanded, k != 0), or None."""
    if not other or poly.keys() != other.keys():
        return None
    m = next(iter(other))
    k = Fraction(poly[m]) / other[m]
    return k if k != 0 and all(poly[x] == k * other[x] for x in other) else None


def _term_poly(t: Expr, atoms: frozenset) -> dict[tuple, Fraction] | None:
    """The ideal value of ``t`` (every operation exact, ``atoms`` as variables) as an expanded polynomial, when it is
    one (sums, differences and products of atoms and constants, quotients by constants); else None."""
    return remembered(_TERM_POLYS, (t, atoms), lambda: _term_poly_uncached(t, atoms))


_TERM_POLYS: dict[tuple, dict | None] = {}


def _term_poly_uncached(t: Expr, atoms: frozenset) -> dict[tuple, Fraction] | None:
    if t in atoms:
        return {((t, 1),): Fraction(1)}
    if isinstance(t, Const):
        v = Fraction(t.value)
        return {(): v} if v else {}
    if not isinstance(t, Op) or t.info.ideal not in ("add", "sub", "mul", "div"):
        return None
    a, b = (_term_poly(x, atoms) for x in t.args)
    if a is None or b is None:
        return None
    ideal = t.info.ideal
    if ideal == "div":
        if set(b) - {()} or not b.get((), 0):
            return None
        return {m: c / b[()] for m, c in a.items()}
    if ideal == "mul":
        return expanded_product(a, b)
    out: dict[tuple, Fraction] = dict(a)
    for m, c in b.items():
        out[m] = out.get(m, Fraction(0)) + (c if ideal == "add" else -c)
    return {m: c for m, c in out.items() if c}


def _relative(ctx: Any, rel: Any, floor: Any) -> tuple[Any, Any]:
    """(rel, floor) as point upper bounds; (None, 0) when rel is unknown."""
    return (None, ctx.mpf(0)) if rel is None else (ctx.mpf(rel.b), ctx.mpf(floor.b))


def _ordered(ctx: Any, interval: Any, a: Expr, b: Expr, box: Box) -> Any:
    """``interval``, an enclosure of a − b, narrowed by the region's orders between a and b (either way)."""
    least = _least_difference(a, b, box)
    if least is not None:
        least = (ctx.mpf(least.numerator) / least.denominator).a
        if interval.b >= least:
            interval = ctx.mpf([interval.a if interval.a > least else least, interval.b])
    most = _least_difference(b, a, box)  # b − a >= most: a − b <= −most
    if most is not None:
        most = -(ctx.mpf(most.numerator) / most.denominator).a
        if interval.a <= most:
            interval = ctx.mpf([interval.a, interval.b if interval.b < most else most])
    return interval


def _least_difference(a: Expr, b: Expr, box: Box) -> Fraction | None:
    """A lower bound of a − b for two parameters the region's orders keep b < a (or b <= a), None if they do not: a
    float b below a is at most the float just below a, so a − b >= a − pred(a) >= lo − pred(lo) for the least value
    lo of a (the spacing of floats grows with their magnitude above 0 and is 2⁻¹⁰⁷⁴ at 0)."""
    if not (isinstance(a, Var) and isinstance(b, Var)):
        return None
    if box.implies(b.name, a.name, strict=True):
        lo = box[a.name][0]
        return Fraction(lo) - Fraction(math.nextafter(lo, -math.inf)) if lo >= 0 else Fraction(1, 2**1074)
    return Fraction(0) if box.implies(b.name, a.name, strict=False) else None


def _sum_relative(ctx: Any, v1: Any, r1: Any, v2: Any, r2: Any) -> Any:
    """A bound of the relative error of v1 + v2 computed from operands of relative errors r1, r2 (None: unknown):
    exact operands make an exact sum, and operands of one sign keep the larger of their relative errors."""
    if r1 is None or r2 is None:
        return None
    if r1.b == 0 and r2.b == 0:
        return ctx.mpf(0)
    if not ((v1.a >= 0 and v2.a >= 0) or (v1.b <= 0 and v2.b <= 0)):
        return None
    # |r1·v1 + r2·v2| / |v1 + v2| <= r1 + r2·|v2|/(|v1| + |v2|), largest at the least |v1| and the largest |v2|
    bounds = [max(r1.b, r2.b)]
    for (ra, va), (rb, vb) in (((r1, v1), (r2, v2)), ((r2, v2), (r1, v1))):
        denominator = ctx.absmin(va) + _mag(ctx, vb)
        if denominator.a > 0:
            bounds.append((ra + rb * _mag(ctx, vb) / denominator).b)
    return ctx.mpf(min(bounds))


def _computed(ctx: Any, v: Any, e: Any, r: Any, a: Any) -> Any:
    """The values the code computes for a term of ideal values ``v``: within e of them, and within r·|v| + a."""
    if r is not None and r.b < 1 and v.a > 0:
        return v * ctx.mpf([1 - r.b, 1 + r.b]) + ctx.mpf([-a.b, a.b])
    return v + ctx.mpf([-e.b, e.b])


def _exact(t: Op, box: Box) -> bool:
    """Whether the operation rounds nothing on the sub-box: a product or quotient by an operand the code computes as
    exactly 1.0, a sum or difference with one it computes as exactly 0.0, everywhere on the sub-box, or a product by a
    constant 2ʲ, j >= 0 (exact short of overflow, which the analysis rules out first)."""
    ideal = t.info.ideal
    if ideal == "mul" and any(_power_of_two(a) for a in t.args):
        return True
    neutral = {"mul": (0, 1), "div": (1,), "add": (0, 1), "sub": (0, 1)}.get(ideal, ())
    unit = 1.0 if ideal in ("mul", "div") else 0.0
    for i in neutral:
        arg = t.args[i]
        span = (arg.value, arg.value) if isinstance(arg, Const) else _range_of(arg, box)
        if span is not None and span[0] == span[1] == unit:
            return True
    return False


def _power_of_two(t: Expr) -> bool:
    """Whether ``t`` is a constant 2ʲ with j >= 0."""
    if not isinstance(t, Const) or isinstance(t.value, bool):
        return False
    v = Fraction(t.value)
    return v >= 1 and v.denominator == 1 and v.numerator & (v.numerator - 1) == 0


def _mag(ctx: Any, v: Any) -> Any:
    """max |v| over an interval, as an interval."""
    return ctx.mpf(max(abs(v.a), abs(v.b)))
