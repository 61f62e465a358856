"""Probabilities that are polynomials in symbolic floats: the exact law of code run on a region of parameters.

When a sampler draws with a symbolic probability q (a :class:`~vetdp.engine.symbolic.SymFloat`), each path's
probability is a product of q, 1 − q and rational constants, and an output's probability a sum of such products.
:class:`ProbPoly` holds one: a map from monomials to exact rational coefficients, where a monomial is a product of
*atoms* (the float terms of the probabilities, as :class:`~vetdp.arith.expr.Expr`) and their complements (1 − q,
kept as a factor of its own so that a product of n draws stays one monomial; :meth:`ProbPoly.expanded` multiplies
them out when two polynomials must be compared in one canonical form).

A ProbPoly compared with a number is decided on the region, like the floats it is made of: q > 0 and 1 − q != 0
become comparisons of q's term. Anything that is not an affine function of one atom is pinned to the run's point.
"""

from __future__ import annotations

import itertools
import numbers
import operator
from collections.abc import Iterator, Mapping
from fractions import Fraction
from typing import Any

from vetdp.arith.expr import Expr
from vetdp.engine.symbolic import (
    Infeasible,
    RunMemo,
    SymFloat,
    _context,
    compare,
    evaluate,
    float_key,
    floats_between,
)

__all__ = ["ProbPoly", "probability_of", "poly_value"]

Factor = tuple[Expr, bool]  # (atom, complement?): q or 1 − q
Monomial = tuple[tuple[Factor, int], ...]  # sorted (factor, exponent >= 1)


_NAMES: dict[Expr, str] = {}


def _key(factor: Factor) -> tuple[str, int, bool]:
    """A factor's place in a monomial: by the atom's text, so that polynomials print (and name their atoms) alike in
    every process (str hashes are salted per process); the hash only breaks ties between atoms that print alike."""
    atom = factor[0]
    if atom not in _NAMES:
        if len(_NAMES) > 100_000:
            _NAMES.clear()
        _NAMES[atom] = str(atom)
    return _NAMES[atom], hash(atom), factor[1]


def _mono_mul(a: Monomial, b: Monomial) -> Monomial:
    if not a:
        return b
    if not b:
        return a
    powers: dict[Factor, int] = dict(a)
    for f, e in b:
        powers[f] = powers.get(f, 0) + e
    return tuple(sorted(powers.items(), key=lambda fe: _key(fe[0])))


Expanded = dict  # {monomial: coefficient}, a monomial a tuple of (atom, power > 0) sorted by the atom's text


def expanded_monomial(powers: Any) -> tuple[tuple[Expr, int], ...]:
    """The monomial of :meth:`ProbPoly.expanded` with these (atom, power) pairs (powers of 0 dropped)."""
    return tuple(sorted(((a, int(e)) for a, e in powers if e), key=lambda ae: str(ae[0])))


def expanded_product(a: Expanded, b: Expanded) -> Expanded:
    """The product of two polynomials in the form of :meth:`ProbPoly.expanded`."""
    out: Expanded = {}
    for ma, ca in a.items():
        for mb, cb in b.items():
            powers: dict[Expr, int] = dict(ma)
            for x, e in mb:
                powers[x] = powers.get(x, 0) + e
            m = expanded_monomial(powers.items())
            out[m] = out.get(m, Fraction(0)) + ca * cb
    return {m: c for m, c in out.items() if c}


class ProbPoly(RunMemo):
    """An exact probability that is a polynomial in symbolic float atoms (see the module docstring)."""

    _vetdp_symbolic_ = True
    __slots__ = ("terms", "values", "_memo", "_expanded")

    def __init__(self, terms: Mapping[Monomial, Fraction], values: Mapping[Expr, float]):
        self.terms = {m: c for m, c in terms.items() if c != 0}  # never changed after construction
        self.values = dict(values)  # each atom's float at the run's point
        self._memo: tuple[int, dict] | None = None
        self._expanded: Expanded | None = None

    # -- construction
    @classmethod
    def constant(cls, c: Fraction | int) -> ProbPoly:
        return cls({(): Fraction(c)}, {})

    @classmethod
    def atom(cls, x: SymFloat) -> ProbPoly:
        return cls({(((x.term, False), 1),): Fraction(1)}, {x.term: x.value})

    def _lift(self, other: Any) -> ProbPoly | None:
        if isinstance(other, ProbPoly):
            return other
        if isinstance(other, SymFloat):
            return ProbPoly.atom(other)
        if isinstance(other, bool) or not isinstance(other, (numbers.Rational, float)):
            return None
        return ProbPoly.constant(Fraction(other))

    def _values(self, other: ProbPoly) -> dict[Expr, float]:
        return {**self.values, **other.values}

    # -- arithmetic
    def __add__(self, other: Any) -> ProbPoly:
        o = self._lift(other)
        if o is None:
            return NotImplemented
        out = dict(self.terms)
        for m, c in o.terms.items():
            out[m] = out.get(m, Fraction(0)) + c
        return ProbPoly(out, self._values(o))

    __radd__ = __add__

    def __neg__(self) -> ProbPoly:
        return ProbPoly({m: -c for m, c in self.terms.items()}, self.values)

    def __sub__(self, other: Any) -> ProbPoly:
        o = self._lift(other)
        return NotImplemented if o is None else self + (-o)

    def __rsub__(self, other: Any) -> ProbPoly:
        if type(other) is int and other == 1:  # 1 − q, asked at every draw: its complement factor, memoized
            memo = self._memoized()
            if "complement" not in memo:
                atom = self._single_atom()
                memo["complement"] = (ProbPoly({(((atom[0], True), 1),): Fraction(1)}, self.values)
                                      if atom is not None and not atom[1] else ProbPoly.constant(1) + (-self))
            return memo["complement"]
        o = self._lift(other)
        if o is None:
            return NotImplemented
        return o + (-self)

    def __mul__(self, other: Any) -> ProbPoly:
        o = self._lift(other)
        if o is None:
            return NotImplemented
        if len(self.terms) == 1 and len(o.terms) == 1:  # a path's probability times one draw's: the common case
            (ma, ca), = self.terms.items()
            (mb, cb), = o.terms.items()
            return ProbPoly({_mono_mul(ma, mb): ca * cb}, self._values(o))
        out: dict[Monomial, Fraction] = {}
        for (ma, ca), (mb, cb) in itertools.product(self.terms.items(), o.terms.items()):
            m = _mono_mul(ma, mb)
            out[m] = out.get(m, Fraction(0)) + ca * cb
        return ProbPoly(out, self._values(o))

    __rmul__ = __mul__

    def __truediv__(self, other: Any) -> ProbPoly:
        if isinstance(other, bool) or not isinstance(other, numbers.Rational) or other == 0:
            return NotImplemented
        return ProbPoly({m: c / Fraction(other) for m, c in self.terms.items()}, self.values)

    def __pow__(self, n: Any) -> ProbPoly:
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            return NotImplemented
        out = ProbPoly.constant(1)
        for _ in range(n):
            out = out * self
        return out

    # -- canonical form and values
    def _single_atom(self) -> Factor | None:
        """The factor when this is exactly one atom or complement with coefficient 1."""
        if len(self.terms) == 1:
            (m, c), = self.terms.items()
            if c == 1 and len(m) == 1 and m[0][1] == 1:
                return m[0][0]
        return None

    def expanded(self) -> Expanded:
        """The polynomial in the atoms alone (complements multiplied out): a canonical form (computed once; the
        caller must not change it)."""
        if self._expanded is None:
            self._expanded = self._expand()
        return self._expanded

    def _expand(self) -> Expanded:
        out: Expanded = {}
        for m, c in self.terms.items():
            partial: Expanded = {(): c}
            for (atom, complement), e in m:
                factor = {((atom, 1),): Fraction(-1), (): Fraction(1)} if complement else {((atom, 1),): Fraction(1)}
                for _ in range(e):
                    partial = expanded_product(partial, factor)
            for pm, pc in partial.items():
                out[pm] = out.get(pm, Fraction(0)) + pc
        return {m: c for m, c in out.items() if c != 0}

    def _canonical(self) -> ProbPoly:
        """The same polynomial rebuilt from :meth:`expanded` (complements multiplied out), e.g. so that a sum of
        monomials that is q alone becomes the atom q."""
        terms: dict[Monomial, Fraction] = {}
        for m, c in self.expanded().items():
            terms[tuple(sorted((((atom, False), e) for atom, e in m), key=lambda fe: _key(fe[0])))] = c
        return ProbPoly(terms, self.values)

    def same_as(self, other: Any) -> bool:
        """Whether the two are the same polynomial in the same atoms (then equal on the whole region)."""
        o = self._lift(other)
        if o is None:
            return False
        return self.terms == o.terms or self.expanded() == o.expanded()

    def at(self, env: Mapping[str, float] | None = None) -> Fraction:
        """The exact value at the run's point, or at ``env`` (parameter values) when given."""
        point = None if env is None else tuple(sorted((k, float_key(v) if isinstance(v, float) else repr(v))
                                                      for k, v in env.items()))
        total = Fraction(0)
        for m, c in self.terms.items():
            v = c
            for (atom, complement), e in m:
                a = Fraction(self.values[atom]) if point is None else _atom_at(atom, env, point)
                v *= (1 - a if complement else a) ** e
            total += v
        return total

    def atoms(self) -> set[Expr]:
        return {atom for m in self.terms for (atom, _), _ in m}

    def is_constant(self) -> bool:
        return all(not m for m in self.terms)

    def __repr__(self) -> str:
        if not self.terms:
            return "0"
        parts = []
        for m, c in self.terms.items():
            factors = [f"{'(1 − ' if comp else ''}{atom}{')' if comp else ''}{'^' + str(e) if e > 1 else ''}"
                       for (atom, comp), e in m]
            parts.append("·".join(([str(c)] if c != 1 or not factors else []) + factors))
        return " + ".join(parts)

    # -- comparisons with numbers: decided on the region
    def _affine(self) -> tuple[Fraction, Fraction, Factor] | None:
        """(a, b, factor) when this is a + b·factor for one atom or complement factor; None otherwise."""
        constant = self.terms.get((), Fraction(0))
        rest = [(m, c) for m, c in self.terms.items() if m]
        if len(rest) != 1:
            return None
        (m, c), = rest
        if len(m) != 1 or m[0][1] != 1:
            return None
        return constant, c, m[0][0]

    def _compare(self, name: str, other: Any) -> bool:
        if type(other) is int or type(other) is Fraction:
            memo = self._memoized()
            key = (name, other)
            if key not in memo:
                memo[key] = self._compare_uncached(name, other)
            return memo[key]
        return self._compare_uncached(name, other)

    def _compare_uncached(self, name: str, other: Any) -> bool:
        if isinstance(other, ProbPoly):
            return (self - other)._compare(name, 0)
        if isinstance(other, bool) or not isinstance(other, (numbers.Rational, float)):
            raise TypeError(f"cannot compare a symbolic probability with {type(other).__name__}")
        c = Fraction(other)
        if self.is_constant():
            v = self.terms.get((), Fraction(0))
            return {"lt": v < c, "le": v <= c, "gt": v > c, "ge": v >= c, "eq": v == c, "ne": v != c}[name]
        affine = self._affine() or self._canonical()._affine()
        if affine is None:
            return self._compare_on_region(name, c)
        a, b, (atom, complement) = affine
        # a + b·x ? c  with x = atom (or 1 − atom):  x ? (c − a)/b, the comparison flipped when b < 0
        bound = (c - a) / b
        flip = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le", "eq": "eq", "ne": "ne"}
        if b < 0:
            name = flip[name]
        if complement:  # 1 − atom ? bound  <=>  atom ?' 1 − bound
            name, bound = flip[name], 1 - bound
        return compare(atom, self.values[atom], name, bound)

    def _range(self) -> tuple[Fraction, Fraction] | None:
        """Exact bounds of the polynomial over the region, from each atom's range (monotone atoms, from the
        corners): where the polynomial is monotone in every atom (each partial derivative of one sign by interval
        arithmetic), its values at the matching ends of the atoms' ranges, else interval arithmetic on its
        monomials; None when an atom's range is not established."""
        ctx = _context()
        spans = {}
        for atom in self.atoms():
            span = ctx.span(atom)
            if span is None or not 0 <= span[0] <= span[1] <= 1:
                return None
            spans[atom] = (Fraction(span[0]), Fraction(span[1]))
        poly = self.expanded()
        ends: list[dict[Expr, Fraction]] = [{}, {}]  # the atoms' values at the least and at the largest
        for atom, (a, b) in spans.items():
            slope = _interval({_derivative(m, atom): c * e for m, c in poly.items() for x, e in m if x == atom},
                              spans)
            if slope[0] >= 0:
                ends[0][atom], ends[1][atom] = a, b
            elif slope[1] <= 0:
                ends[0][atom], ends[1][atom] = b, a
            else:
                return _interval(poly, spans)
        return _value(poly, ends[0]), _value(poly, ends[1])

    def _compare_on_region(self, name: str, c: Fraction) -> bool:
        """A comparison of a polynomial in several atoms with a number: decided where its bounds over the region
        settle it, else the region is halved (:meth:`~vetdp.engine.symbolic.Exploration.halve`); a polynomial
        whose atoms are not monotone pins the parameters to the run's point."""
        ctx = _context()
        names = sorted({n for a in self.atoms() for n in a.variables()} - ctx.pinned)
        wide = [n for n in names if floats_between(*ctx.box[n]) > 1]
        ops = {"lt": operator.lt, "le": operator.le, "gt": operator.gt, "ge": operator.ge, "eq": operator.eq,
               "ne": operator.ne}
        decided = self._decided_on_region(name, c, wide, names, ops)
        key = ("polynomial", name, frozenset(self.expanded().items()), c)
        if decided is not None:
            ctx.known[key] = decided
        if decided is not None and not ctx.answers:
            return decided
        if key in ctx.answers:  # a fork's assumed answer (explore_regions' forks)
            if decided is not None and decided != ctx.answers[key]:
                raise Infeasible(f"a probability {self!r} compared with {c} answers {decided} on the whole region")
            return ctx.answers[key]
        if decided is not None:
            return decided
        shown = repr(float(c)) if Fraction(float(c)) == c else str(c)  # e.g. 9.332636185032189e-302, not 1/2**1000
        raise ctx.halve(wide, f"a probability {self!r} compared with {shown}", key=key,
                        test=lambda env: bool(ops[name](self.at(env), c)))

    def _decided_on_region(self, name: str, c: Fraction, wide: list[str], names: list[str], ops: dict) -> bool | None:
        """The comparison's answer for every point of the region, when its exact bounds settle it (or it has no wide
        parameter); None when they do not."""
        ctx = _context()
        if not wide:
            return ops[name](self.at(), c)
        bounds = self._range()
        if bounds is None:
            v = ctx.escape("a comparison of a probability whose atoms are not monotone", names, self.at())
            return ops[name](v, c)
        lo, hi = bounds
        if name in ("lt", "le", "gt", "ge"):
            at_lo, at_hi = ops[name](lo, c), ops[name](hi, c)
            return at_lo if at_lo == at_hi else None
        if not lo <= c <= hi:
            return name == "ne"
        if lo == hi:
            return name == "eq"
        return None

    def __lt__(self, o): return self._compare("lt", o)  # noqa: E704
    def __le__(self, o): return self._compare("le", o)  # noqa: E704
    def __gt__(self, o): return self._compare("gt", o)  # noqa: E704
    def __ge__(self, o): return self._compare("ge", o)  # noqa: E704
    def __eq__(self, o): return self._compare("eq", o)  # noqa: E704
    def __ne__(self, o): return self._compare("ne", o)  # noqa: E704

    def __bool__(self) -> bool:
        return self._compare("ne", 0)

    __hash__ = None  # type: ignore[assignment]

    def __float__(self) -> float:
        names = sorted({n for a in self.atoms() for n in a.variables()})
        return _context().escape("float() of a probability", names, float(self.at()))

    def __iter__(self) -> Iterator:
        raise TypeError("a symbolic probability is not iterable")


def _derivative(m: tuple[tuple[Expr, int], ...], atom: Expr) -> tuple[tuple[Expr, int], ...]:
    """The monomial m with the power of ``atom`` lowered by one (its coefficient is multiplied by that power)."""
    return tuple((x, e - 1 if x == atom else e) for x, e in m if x != atom or e > 1)


def _interval(poly: Mapping[tuple[tuple[Expr, int], ...], Fraction],
              spans: Mapping[Expr, tuple[Fraction, Fraction]]) -> tuple[Fraction, Fraction]:
    """Bounds of an expanded polynomial whose atoms range over ``spans`` (non-negative): monomial by monomial."""
    lo = hi = Fraction(0)
    for m, c in poly.items():
        low = high = Fraction(1)
        for atom, e in m:
            a, b = spans[atom]
            low, high = low * a**e, high * b**e
        lo, hi = (lo + c * low, hi + c * high) if c > 0 else (lo + c * high, hi + c * low)
    return lo, hi


def _value(poly: Mapping[tuple[tuple[Expr, int], ...], Fraction], at: Mapping[Expr, Fraction]) -> Fraction:
    total = Fraction(0)
    for m, c in poly.items():
        for atom, e in m:
            c *= at[atom] ** e
        total += c
    return total


def probability_of(x: SymFloat) -> ProbPoly:
    """The exact probability a sampler draws with, for a symbolic float ``x`` (the runtime's ``Fraction(p)``)."""
    return ProbPoly.atom(x)


_ATOMS_AT: dict[tuple[Expr, tuple], Fraction] = {}  # an atom's exact value at a point: a law's polynomials share atoms


def _atom_at(atom: Expr, env: Mapping[str, float], point: tuple) -> Fraction:
    """``Fraction(evaluate(atom, env))``, remembered by the point's exact floats (``point``, signed zeros apart)."""
    key = (atom, point)
    if key not in _ATOMS_AT:
        if len(_ATOMS_AT) > 100_000:
            _ATOMS_AT.clear()
        _ATOMS_AT[key] = Fraction(evaluate(atom, env))
    return _ATOMS_AT[key]


def poly_value(p: Any, env: Mapping[str, float] | None = None) -> Fraction:
    """The exact value of a probability (a ProbPoly at the run's point or ``env``, or a plain rational)."""
    return p.at(env) if isinstance(p, ProbPoly) else Fraction(p)
