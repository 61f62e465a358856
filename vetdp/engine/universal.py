"""Clauses decided for every value of a spec's float parameters, by running the real code on regions of them.

For each of the spec's *bases* (parameter sets whose integers and shapes are fixed, see
:class:`~vetdp.engine.spec.Universal`), the code is run with the float parameters symbolic
(:mod:`vetdp.engine.symbolic`), in two passes:

1. **the law**: the constructor, the function on every input and the spec's reference law. The float line of
   each parameter is cut into *leaves*, regions on which the code takes one path for every value; on each leaf
   the output distribution is an exact polynomial in the code's own float terms (:mod:`vetdp.engine.polynomial`);
   long bit vectors are decided from the product structure their code shows (:mod:`vetdp.engine.structure`);
2. **the claim**: on each accepted leaf, the constructor again and the map, with the spec's privacy constant; a
   map that leaves the symbolic world pins only this pass, never the law's.

Clauses:

* ``precondition.regions`` — every leaf inside the spec's valid ranges is accepted and every leaf outside them
  rejected; a precondition linking the floats (``Universal.accepts``, e.g. p < q) is decided on the same leaves;
* ``function.law`` — on every accepted leaf, the code's law is the reference law (or an admissible one) as
  polynomials in the same terms, or in terms that z3 proves equal on the leaf (:func:`terms_equal`), so equal
  for every value of the leaf; where it differs, a value at which the probabilities differ is the witness;
* ``privacy.sound`` — on every region where the law is the reference law and the map is, term for term, one of the
  spec's admissible privacy constants (whose z3 obligations and lemmas prove each at least the reference law's
  exact loss for every parameter value), the map is sound for every value of the region; where the map is none of
  them, the exact loss of the code's law at the region's point is computed, and a map below it fails there.
* ``privacy.tight`` — on every region where the law is the reference law, the map is within 2**-30 (relative)
  + 2**-40 of the reference law's exact loss for every value (:mod:`vetdp.engine.tightness`: the map's formula
  proved equal to the loss by sympy, its rounding bounded by interval arithmetic on sub-boxes), or a value where
  it exceeds it is the witness. Where the map's comparison is left undecided near a crossing, each side is judged
  (:meth:`_Judge.claim_forks`).

What is not decided this way is said with its reason (a region the code pins to a point, a term not known to be
monotone, the region budget), and points of those regions are handed to the sampled search as parameter sets,
so that every region is at least checked where it is not proved. Work is counted in runs, paths and z3
resource units, never in seconds.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import operator
import os
from collections.abc import Callable, Iterator, Mapping
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from vetdp.arith.expr import Const, Expr, Op, Var
from vetdp.engine import bisection
from vetdp.engine.enumerate import EnumerationBudgetExceeded, Raised, ReplayMismatch, enumerate_paths, freeze
from vetdp.engine.float_shims import adopt, keeping_symbols
from vetdp.engine.polynomial import ProbPoly, poly_value
from vetdp.engine.symbolic import (
    MAX_FLOAT,
    Box,
    EscapeRefused,
    Infeasible,
    Leaf,
    Split,
    SymFloat,
    current_exploration,
    evaluate,
    explore_regions,
    float_from_key,
    float_key,
    floats_between,
    monotonicity,
    remembered,
)
from vetdp.engine.timeout import DeadlineExceeded

if TYPE_CHECKING:
    from vetdp.engine.tightness import TightOutcome  # tightness imports this module

__all__ = ["UniversalReport", "ClauseCoverage", "UniversalEngineError", "explore_spec",
           "symbolic_law", "terms_equal", "UNIVERSAL_CLAUSES", "Z3_RLIMIT"]

UNIVERSAL_CLAUSES = ("precondition.regions", "function.law", "privacy.sound", "privacy.tight")
Z3_RLIMIT = 20_000_000  # z3 resource units for one equality of two float terms on a region
_WHOLE_LINE = (-MAX_FLOAT, MAX_FLOAT)
# concrete replays confirming a long vector's product structure on each base (all-0, all-1 and 6 seeded plans; the
# concrete search checks the structure again, with 32, at the parameter sets it draws)
STRUCTURE_REPLAYS = 8
# comparisons left undecided near a crossing that the claim pass explores with each answer assumed, on one path
CLAIM_FORKS = 2
# comparisons in several parameters jointly (RAPPOR's p* >= 2**-1000) still crossing a region after its halvings that
# the law pass explores with each answer assumed, on one path
LAW_FORKS = 3
# sub-boxes privacy.tight may examine on one side of such a fork: the region holds points of the other side too, where
# the rounding analysis may find no bound (a divisor that underflows to 0 where p* < 2**-1000)
FORK_TIGHT_BOXES = 4
_STOP_AFTER_FAILING_BASES = 3  # a clause failing on this many bases: the rest are not explored (the witness is found)


def symbolic_law(run: Callable[[], Any], budget: int) -> dict[Any, Any]:
    """The exact law of ``run()`` (outputs frozen): probabilities are Fractions, or polynomials where a draw's
    probability is symbolic. Raises EnumerationBudgetExceeded past ``budget`` paths."""
    dist: dict[Any, Any] = {}
    for out, p in enumerate_paths(run, budget=budget):
        dist[out] = dist[out] + p if out in dist else p
    return dist


# ------------------------------------------------------------------ the report

@dataclasses.dataclass
class ClauseCoverage:
    """What one clause established over the explored regions."""

    proved: list[Box] = dataclasses.field(default_factory=list)  # regions decided for every value
    failed: list[tuple[Box, dict, str]] = dataclasses.field(default_factory=list)  # (region, witness params, why)
    open: list[tuple[Box, str]] = dataclasses.field(default_factory=list)  # not decided symbolically, with why
    # regions of the probe bases (Universal.probe_bases) where the clause held at the inputs read there: checked
    # for every value of the region at those inputs, not proved for the others (what was read, in why)
    checked: list[tuple[Box, str]] = dataclasses.field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failed


@dataclasses.dataclass
class UniversalReport:
    """The symbolic exploration of one spec: per clause, what was proved, failed and left open, and the
    parameter sets (a region's point or a witness) for the sampled search to check concretely."""

    spec: str
    floats: tuple[str, ...]
    bases: list[dict] = dataclasses.field(default_factory=list)
    leaves: int = 0
    runs: int = 0
    clauses: dict[str, ClauseCoverage] = dataclasses.field(
        default_factory=lambda: {c: ClauseCoverage() for c in UNIVERSAL_CLAUSES})
    witnesses: list[dict] = dataclasses.field(default_factory=list)  # values where a clause fails
    samples: list[dict] = dataclasses.field(default_factory=list)  # values of regions left open, to check concretely
    # witnesses outside the spec's preconditions (code accepting them): the spec's law and accountants are not
    # defined there, so they are not handed to the concrete clauses (the search.universal row reports them)
    invalid_witnesses: list[dict] = dataclasses.field(default_factory=list)
    probe_bases: list[dict] = dataclasses.field(default_factory=list)  # explored for findings only
    # witnesses of the probe bases: production lengths, where the sampled clauses would spend their work budgets
    # on every exact clause; the row reports them with a reproduce line, the sampled search is not handed them
    probe_witnesses: list[dict] = dataclasses.field(default_factory=list)
    stopped: str = ""

    def parameter_sets(self, limit: int = 8, open_points: int = 4) -> list[dict]:
        """Parameter sets for the sampled search: the witnesses first (but those outside the spec's preconditions),
        then points of open regions of the first (smallest) bases, at most ``open_points`` of those and ``limit``
        in all (distinct). The spec's own search draws further points of every region."""
        out: list[dict] = []
        seen: set[str] = set()
        pool = [w for w in self.witnesses
                if not any(w is v for v in self.invalid_witnesses + self.probe_witnesses)]
        pool += self.samples[:open_points]
        for p in pool:
            key = repr(sorted(p.items()))
            if key not in seen:
                seen.add(key)
                out.append(p)
            if len(out) >= limit:
                break
        return out

    def describe(self, clause: str) -> str:
        """One line: where the clause was proved for every value, where it fails, where it is open and why."""
        cov = self.clauses[clause]
        names = ", ".join(self.floats)
        parts = []
        wide = [b for b in cov.proved if b.size() > 1]
        points = len(cov.proved) - len(wide)
        if wide:
            parts.append(f"proved for every {names} on {len(wide)} region(s) over {len(self.bases)} base(s) "
                         f"({_extent(wide, self.floats)})")
        if points:
            parts.append(f"proved at {points} single value(s)")
        if cov.failed:
            box, _, why = cov.failed[0]
            parts.append(f"fails on {len(cov.failed)} region(s), first {box.describe()}: {why}")
        if cov.open:
            whys = sorted({w for _, w in cov.open})
            parts.append(f"not decided symbolically on {len(cov.open)} region(s): {whys[0]}"
                         + (f" (and {len(whys) - 1} other reason(s))" if len(whys) > 1 else ""))
        if cov.checked:
            whys = sorted({w for _, w in cov.checked})
            shown = "; ".join(", ".join(f"{k}={v}" for k, v in b.items()) for b in self.probe_bases)
            parts.append(f"checked, not proved, on {len(cov.checked)} region(s) of {len(self.probe_bases)} probe "
                         f"base(s) ({shown}): {whys[0]}"
                         + (f" (and {len(whys) - 1} other reason(s))" if len(whys) > 1 else ""))
        if self.stopped:
            parts.append(self.stopped)
        return "; ".join(parts) if parts else "nothing explored"


def _extent(boxes: list[Box], names: tuple[str, ...]) -> str:
    out = []
    for n in names:
        lo = min((b[n][0] for b in boxes), key=float_key)
        hi = max((b[n][1] for b in boxes), key=float_key)
        out.append(f"{n} in [{lo!r}, {hi!r}]")
    return ", ".join(out)


# ------------------------------------------------------------------ the two passes' runs

@dataclasses.dataclass(frozen=True)
class _Rejected:
    error: str
    valid: bool | None = None  # the spec's joint precondition on the region (None: not stated, or not asked)


@dataclasses.dataclass(frozen=True)
class _Laws:
    """Pass 1 on an accepted region: the code's laws by input, the reference's, the admissible ones."""

    laws: dict[Any, dict]
    reference: dict[Any, dict] | None
    admissible: tuple[tuple[str, dict[Any, dict]], ...]
    valid: bool | None = None


@dataclasses.dataclass(frozen=True)
class _Structured:
    """Pass 1 on a long bit vector: its product structure (or why there is none) and one output bit's reference
    law for each input bit."""

    coordinates: tuple | None
    reference: dict[bool, dict] | None
    why: str
    valid: bool | None = None
    # without a structure over symbolic input bits (code branching on them, e.g. bool(b)): (x, coordinates) of the
    # structure at a few concrete inputs x, whose laws are compared with the reference (a failure, never a proof)
    per_input: tuple = ()
    # the spec's admissible laws of one output bit, read from the code's first coordinate where it is not the
    # reference's: (name, {input bit: law})
    admissible: tuple = ()


@dataclasses.dataclass(frozen=True)
class _Claim:
    """Pass 2: the code's map(d_in) (or the Raised it gave) and the spec's privacy constant (the first of its
    admissible ones, ``constants``)."""

    claim: Any
    constant: Any
    constants: tuple = ()


def _construct(build: Callable[[dict], Any], params: dict) -> Any:
    """The measurement, or the :class:`_Rejected` outcome of a constructor that raised (or exited).

    A constructor that raises with symbolic parameters (outside a fork, whose assumed answers may not hold at the
    run's point) is run again at that point with plain floats. Only when it raises the same type of exception
    there is the refusal the region's outcome; otherwise the exception came from code that cannot take a symbolic
    float (``Fraction(x)``, a C extension), and the region is left open with the reason, to the sampled search
    (never a finding)."""
    try:
        m = build(params)
    except (Split, Infeasible, EscapeRefused, KeyboardInterrupt, GeneratorExit):
        raise  # the exploration's own signals, never the constructor's outcome
    except BaseException as e:  # noqa: BLE001 - the constructor's refusal (or exit) is the region's outcome
        symbolic = [v for v in params.values() if isinstance(v, SymFloat)]
        if not symbolic or current_exploration().forked:  # a fork's run is the code's path only where its
            return _Rejected(f"{type(e).__name__}: {e}")      # assumptions hold, maybe not at the run's point
        if _adopted_along(e.__traceback__):  # a module that tests isinstance(x, float): run the region again
            raise current_exploration().rerun(f"{type(e).__name__} with symbolic parameters ({e}) in a module that "
                                              "now takes them as floats") from None
        concrete = _construct(build, _at_point(params))
        if isinstance(concrete, _Rejected) and concrete.error.startswith(f"{type(e).__name__}:"):
            return _Rejected(f"{type(e).__name__}: {e}")
        raise current_exploration().leave_open(f"the constructor raised {type(e).__name__} with symbolic parameters "
                                               f"only ({e}) at {_where(e.__traceback__)}") from None
    return getattr(m, "inner", m)



def _at_point(params: dict) -> dict:
    """The parameters at the run's point: each symbolic float replaced by its plain float."""
    return {k: v.value if isinstance(v, SymFloat) else v for k, v in params.items()}

def _where(tb: Any) -> str:
    """file:line of the innermost frame of a traceback."""
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return f"{tb.tb_frame.f_code.co_filename}:{tb.tb_lineno}" if tb is not None else "?"


def _adopted_along(tb: Any) -> bool:
    """Whether a module of the traceback's frames was given the float that keeps symbols now."""
    adopted = False
    while tb is not None:
        adopted |= adopt(tb.tb_frame, calling=False)
        tb = tb.tb_next
    return adopted


def _confirm_raised(build: Callable[[dict], Any], params: dict, inputs: list, laws: dict, budget: int) -> None:
    """Where the code raised on symbolic values (e.g. ``Fraction(p)`` at a draw), its law at the run's point with
    plain floats must raise the same types; otherwise the exception is the symbolic values', not the code's, and the
    region is left open (never failed)."""
    if current_exploration().forked:
        return
    plain = _construct(build, _at_point(params))
    raised = {x: sorted(o.type for o in law if isinstance(o, Raised)) for x, law in laws.items()}
    if not isinstance(plain, _Rejected):
        concrete = {freeze(x): symbolic_law(lambda x=x: plain(x), budget) for x in inputs}
        if all(sorted(o.type for o in concrete[x] if isinstance(o, Raised)) == raised[x] for x in laws):
            return
    kinds = sorted({t for ts in raised.values() for t in ts})
    raise current_exploration().leave_open(f"the code raised {', '.join(kinds)} with symbolic parameters only")


def _law_run(spec: Any, build: Callable[[dict], Any], base: dict, budget: int,
             valid: Mapping[str, tuple[float, float]], probe: bool = False) -> Callable[[dict], Any]:
    accepts = spec.universal.accepts

    def run(symbols: dict[str, SymFloat]) -> Any:
        outcome = code(symbols)
        if accepts is None or _inside(current_exploration().box, valid) != "in":
            return outcome
        # the spec's joint precondition, decided on the same regions (inside the product of the valid ranges)
        return dataclasses.replace(outcome, valid=bool(accepts({**base, **symbols})))

    def code(symbols: dict[str, SymFloat]) -> Any:
        params = {**base, **symbols}
        inner = _construct(build, params)
        if isinstance(inner, _Rejected):
            return inner
        structured = _structured_run(spec, inner, params, probe)
        if structured is not None:
            return structured
        inputs = (spec.universal.inputs or spec.inputs)(params)
        longest = max((len(x) for x in inputs if isinstance(x, tuple)), default=0)
        if spec.universal.coordinate_law is not None and longest > spec.universal.enumerate_up_to:
            # a long bit vector is decided from its product structure only, never enumerated input by input
            # (2^k paths per input); code whose domain states no length shows none: the region stays open
            return _Structured(None, None, f"bit vectors of length {longest} are decided from the product structure "
                                           "only, and the code's input domain states no length to read it at")
        laws = {freeze(x): symbolic_law(lambda x=x: inner(x), budget) for x in inputs}
        if any(isinstance(o, Raised) for law in laws.values() for o in law):
            _confirm_raised(build, params, inputs, laws, budget)
        reference = None if spec.law is None else {freeze(x): spec.law(params, x) for x in inputs}
        admissible = []
        box = current_exploration().box
        if reference is not None and not all(_same_law(laws[x], reference[x]) or
                                             _equal_atoms(laws[x], reference[x], box) is not None for x in laws):
            for name, family in spec.admissible_laws:
                try:
                    with current_exploration().without_escapes():
                        law = family(params, laws)
                        if law is not None:
                            admissible.append((name, {freeze(x): law(x) for x in inputs}))
                except (Split, KeyboardInterrupt):
                    raise
                except BaseException:  # noqa: BLE001,S112 - a family that cannot take symbolic laws (or would pin
                    continue           # the region) admits nothing here
        return _Laws(laws, reference, tuple(admissible))

    return run


def _claim_run(spec: Any, build: Callable[[dict], Any], base: dict) -> Callable[[dict], Any]:
    def run(symbols: dict[str, SymFloat]) -> Any:
        params = {**base, **symbols}
        inner = _construct(build, params)
        if isinstance(inner, _Rejected):
            return inner
        try:
            claim = inner.map(spec.d_in)
        except Split:
            raise
        except Exception as e:  # noqa: BLE001 - a map that raises is a finding of the sampled clauses
            claim = Raised(type(e).__name__, str(e))
        constants = admissible_constants(spec.universal, params)
        return _Claim(claim, constants[0] if constants else None, constants)

    return run


def admissible_constants(universal: Any, params: dict) -> tuple:
    """The values of the spec's admissible privacy constants at ``params`` (``Universal.constant`` gives one
    PrivacyConstant or a sequence of them); () when it names none."""
    if universal.constant is None:
        return ()
    given = universal.constant(params)
    return tuple(c.value for c in (given if isinstance(given, (list, tuple)) else (given,)))


def _structured_run(spec: Any, inner: Any, params: dict, probe: bool = False) -> _Structured | None:
    """The product-structure run of a long bit vector (None: the base is enumerated input by input). Code that shows
    none is read at concrete inputs; by forked runs with symbolic probabilities at a probe base only (elsewhere each
    region would pay every run of the reading, for a region left open all the same)."""
    from vetdp.core.measurement import BitVectorDomain
    from vetdp.engine.structure import (
        NotStructured,
        coordinate_laws_at,
        discover_product_structure,
        probe_vectors,
        viewed_by_coordinates,
    )

    universal = spec.universal
    domain = getattr(inner, "input_domain", None)
    if (universal.coordinate_law is None or not isinstance(domain, BitVectorDomain) or domain.length is None
            or domain.length <= universal.enumerate_up_to or not callable(getattr(inner, "function", None))):
        return None
    reference = {b: universal.coordinate_law(params, b) for b in (False, True)}
    function = inner.function
    if universal.coordinates is not None:  # the output read as one value per input bit (bit i of every report)
        function = functools.partial(viewed_by_coordinates, function, functools.partial(universal.coordinates, params))
    try:
        structure = discover_product_structure(function, domain.length, replays=STRUCTURE_REPLAYS)
    except NotStructured as e:
        per_input, unread = [], []
        for x in probe_vectors(domain):
            try:
                per_input.append((x, coordinate_laws_at(function, x, replays=STRUCTURE_REPLAYS, symbolic_forks=probe)))
            except NotStructured as why:
                unread.append(str(why))
        why = f"no product structure over symbolic input bits: {e}"
        if unread:
            why += f"; {len(unread)} concrete input(s) not read either: {unread[0]}"
        return _Structured(None, reference, why, per_input=tuple(per_input))
    return _Structured(structure.coordinates, reference, "",
                       admissible=_admissible_coordinates(spec, params, structure.coordinates, reference))


def _admissible_coordinates(spec: Any, params: dict, coordinates: tuple, reference: dict) -> tuple:
    """The spec's admissible laws of one output bit ((name, {input bit: law}), each family given the code's first
    coordinate as the law of a one-bit input), when that coordinate's law is not the reference's term for term;
    () otherwise."""
    first = next((c for c in coordinates if c.inputs == (c.index,)), None)
    box = current_exploration().box
    if first is None or not spec.admissible_laws or all(
            _same_law(first.laws[(b,)], reference[b]) or _equal_atoms(first.laws[(b,)], reference[b], box) is not None
            for b in (False, True)):
        return ()
    dists = {(b,): {(y,): q for y, q in first.laws[(b,)].items()} for b in (False, True)}
    out = []
    for name, family in spec.admissible_laws:
        try:
            with current_exploration().without_escapes():
                law = family(params, dists)
                if law is not None:
                    out.append((name, {b: {y[0]: q for y, q in law((b,)).items()} for b in (False, True)}))
        except (Split, KeyboardInterrupt):
            raise
        except BaseException:  # noqa: BLE001,S112 - a family that cannot take symbolic laws admits nothing here
            continue
    return tuple(out)


# ------------------------------------------------------------------ comparing laws

def _coordinates_match(coordinates: tuple, laws: Mapping[bool, Mapping], box: Box) -> bool:
    """Whether every output bit's law is ``laws`` of its input bit (term for term, or with equal atoms)."""
    for c in coordinates:
        if c.inputs not in ((), (c.index,)):
            return False
        for b in (False, True):
            code = c.laws[(b,)] if c.inputs else c.laws[()]
            if not (_same_law(code, laws[b]) or _equal_atoms(code, laws[b], box) is not None):
                return False
    return True

def _zero(q: Any) -> bool:
    return not q.terms if isinstance(q, ProbPoly) else q == 0


def _same_law(code: Mapping, other: Mapping, renaming: Mapping[Expr, Expr] | None = None) -> bool:
    """Whether two laws are the same polynomials output by output (so equal for every value of the region),
    after renaming the code's atoms by ``renaming`` (atoms proved equal on the region)."""
    code = {y: q for y, q in code.items() if not _zero(q)}
    other = {y: q for y, q in other.items() if not _zero(q)}
    if set(code) != set(other):
        return False
    return all(_same(_renamed(code[y], renaming), other[y]) for y in code)


def _law_key(law: Mapping) -> tuple:
    """A hashable form of a law whose probabilities are numbers or polynomials (equal keys: equal laws)."""
    return tuple(sorted(((repr(y), frozenset(q.terms.items()) if isinstance(q, ProbPoly) else q)
                         for y, q in law.items()), key=lambda item: item[0]))


def _renamed(q: Any, renaming: Mapping[Expr, Expr] | None) -> Any:
    if not renaming or not isinstance(q, ProbPoly):
        return q
    terms = {}
    for m, c in q.terms.items():
        powers: dict = {}
        for (atom, comp), e in m:
            f = (renaming.get(atom, atom), comp)
            powers[f] = powers.get(f, 0) + e
        key = tuple(sorted(powers.items(), key=lambda fe: (hash(fe[0][0]), fe[0][1])))
        terms[key] = terms.get(key, Fraction(0)) + c
    values = {renaming.get(a, a): v for a, v in q.values.items()}
    return ProbPoly(terms, values)


def _folded(laws: Mapping[Any, Mapping], box: Box) -> dict[Any, dict]:
    """The laws with every atom that has one value on the region (its parameters each at one float, e.g. p = 0)
    replaced by that exact value: code that skips a draw of probability 0 and a law that keeps the atom then read
    the same."""
    single = {n for n, lo, hi in box.ranges if floats_between(lo, hi) == 1}
    if not single:
        return dict(laws)
    point = box.point()

    def fold(q: Any) -> Any:
        if not isinstance(q, ProbPoly) or not any(set(a.variables()) <= single for a in q.atoms()):
            return q
        terms: dict = {}
        for m, c in q.terms.items():
            kept = []
            for (atom, complement), e in m:
                if set(atom.variables()) <= single:
                    v = Fraction(evaluate(atom, point))
                    c *= (1 - v if complement else v) ** e
                else:
                    kept.append(((atom, complement), e))
            terms[tuple(kept)] = terms.get(tuple(kept), Fraction(0)) + c
        return ProbPoly(terms, q.values)

    return {x: {y: fold(q) for y, q in law.items()} for x, law in laws.items()}


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, ProbPoly):
        return a.same_as(b)
    if isinstance(b, ProbPoly):
        return b.same_as(a)
    return Fraction(a) == Fraction(b)


def _atoms(law: Mapping) -> set[Expr]:
    return {a for q in law.values() if isinstance(q, ProbPoly) for a in q.atoms()}


def _equal_atoms(code: Mapping, other: Mapping, box: Box) -> dict[Expr, Expr] | None:
    """A renaming of the code's atoms to the reference's, each pair proved equal on the region by z3, under
    which the laws are the same polynomials; None when there is none."""
    mine, theirs = sorted(_atoms(code) - _atoms(other), key=str), sorted(_atoms(other) - _atoms(code), key=str)
    if not mine or len(mine) != len(theirs):
        return None
    key = (tuple(mine), tuple(theirs), box)
    if key not in _RENAMINGS:  # the coordinates of one bit vector ask the same question again and again
        if len(_RENAMINGS) > 4096:
            _RENAMINGS.clear()
        _RENAMINGS[key] = _pair_atoms(mine, theirs, box)
    renaming = _RENAMINGS[key]
    return renaming if renaming is not None and _same_law(code, other, renaming) else None


_RENAMINGS: dict[tuple, dict[Expr, Expr] | None] = {}


def _pair_atoms(mine: list[Expr], theirs: list[Expr], box: Box) -> dict[Expr, Expr] | None:
    """Each of the code's atoms paired with the reference atom of equal value at the region's point, the pair
    proved equal on the whole region; None when some atom has no such partner."""
    point = box.point()
    renaming: dict[Expr, Expr] = {}
    for a in mine:
        match = [b for b in theirs if _value(a, point) == _value(b, point) and b not in renaming.values()]
        if len(match) != 1 or terms_equal(a, match[0], box) is not True:
            return None
        renaming[a] = match[0]
    return renaming


def _value(t: Expr, env: Mapping[str, float]) -> float | None:
    try:
        return evaluate(t, env)
    except (ArithmeticError, ValueError):
        return None


def _probe_points(box: Box) -> Iterator[dict[str, float]]:
    """Points of a region at which to look for a numeric difference: its short point (the witness to hand on, cheap
    to check exactly), its point, its corners, and the floats next to its ends (where rounding classes change)."""
    yield box.simple_point()
    yield box.point()
    yield from (env for env in box.corners(box.names) if box.contains(env))
    for n, lo, hi in box.ranges:
        for k in (float_key(lo) + 1, float_key(hi) - 1):
            if float_key(lo) <= k <= float_key(hi):
                env = box.point()
                env[n] = float_from_key(k)
                if box.contains(env):
                    yield env


def _difference(code: Mapping, other: Mapping, box: Box) -> tuple[dict[str, float], Any, Fraction, Fraction] | None:
    """A point of the region, an output, and the two probabilities there, where the laws differ numerically."""
    for env in _probe_points(box):
        for y in set(code) | set(other):
            a, b = poly_value(code.get(y, 0), env), poly_value(other.get(y, 0), env)
            if a != b:
                return env, y, a, b
    return None


# ------------------------------------------------------------------ equal float terms, by z3

_FP_OPS = {"add": "fpAdd", "sub": "fpSub", "mul": "fpMul", "div": "fpDiv"}


def terms_equal(a: Expr, b: Expr, box: Box, rlimit: int = Z3_RLIMIT) -> bool | None:
    """Whether two float terms are the same float for every parameter value of the region: True (z3 proves it,
    bit-precise IEEE arithmetic), False (z3 finds parameter values where they differ), None (not decided: an
    operation z3 cannot model outside a subterm both share, or the resource limit ``rlimit`` was spent).

    The parameters, the subterms the two share and the transcendental operations inside those are abstracted as
    one float each, ranging over the values it takes on the region (it must be monotone there); an equality
    proved over ranges is remembered and answers every later question inside them (other bases of a spec)."""
    import z3

    if a == b:
        return True
    symbols: dict[Expr, tuple[float, float]] = {}
    for t in sorted(_shared_subterms(a, b) | set(_variables_outside(a, b)), key=str):
        span = _range_of(t, box)
        if span is None:
            return None
        symbols[t] = span
    key = (_canonical(a, symbols), _canonical(b, symbols))
    ranges = tuple(symbols[t] for t in sorted(symbols, key=str))
    for proved in _PROVED.get(key, ()):
        if all(float_key(plo) <= float_key(lo) and float_key(hi) <= float_key(phi)
               for (lo, hi), (plo, phi) in zip(ranges, proved, strict=True)):
            return True
    fp = z3.Float64()
    modes = {"up": z3.RTP(), "down": z3.RTN(), "nearest": z3.RNE()}
    consts = {t: z3.FP(f"s{i}", fp) for i, t in enumerate(sorted(symbols, key=str))}

    def encode(t: Expr) -> Any:
        if t in consts:
            return consts[t]
        if isinstance(t, Const):
            return z3.FPVal(float(t.value), fp)
        name = _FP_OPS.get(t.info.ideal) if isinstance(t, Op) else None
        if name is None:
            raise _NotModelled(f"{t} is not modelled outside a shared subterm")
        x, y = (encode(arg) for arg in t.args)
        return getattr(z3, name)(modes[t.info.direction], x, y)

    try:
        ea, eb = encode(a), encode(b)
    except _NotModelled:
        return None
    solver = z3.Solver()
    solver.set("rlimit", rlimit)
    for t, c in consts.items():
        lo, hi = symbols[t]
        solver.add(z3.fpGEQ(c, z3.FPVal(lo, fp)), z3.fpLEQ(c, z3.FPVal(hi, fp)))
    solver.add(z3.Not(z3.fpEQ(ea, eb)))
    answer = solver.check()
    if answer == z3.unsat:
        _PROVED.setdefault(key, []).append(ranges)
        return True
    if answer == z3.sat and all(isinstance(t, Var) for t in symbols):
        return False  # a model of the parameters themselves: a real counterexample
    return None  # a model of abstracted subterms may not be reachable


_PROVED: dict[tuple[str, str], list[tuple[tuple[float, float], ...]]] = {}


_RANGES: dict[tuple[Expr, Box], tuple[float, float] | None] = {}


def _range_of(t: Expr, box: Box) -> tuple[float, float] | None:
    """The least and largest value of a term monotone in each parameter, over the region (from its corners);
    remembered by term and region."""
    return remembered(_RANGES, (t, box), lambda: _range_on_corners(t, box))


def _range_on_corners(t: Expr, box: Box) -> tuple[float, float] | None:
    names = tuple(t.variables())
    if any(monotonicity(t, n, box) is None for n in names):
        return None
    values = [_value(t, env) for env in box.corners(names)]
    if any(v is None for v in values):
        return None
    return min(values, key=float_key), max(values, key=float_key)


def _variables_outside(a: Expr, b: Expr) -> Iterator[Var]:
    shared = _shared_subterms(a, b)
    for t in (a, b):
        stack = [t]
        while stack:
            u = stack.pop()
            if u in shared:
                continue
            if isinstance(u, Var):
                yield u
            stack.extend(getattr(u, "args", ()))


def _canonical(t: Expr, symbols: Mapping[Expr, Any]) -> str:
    """The term's text with each abstracted subterm replaced by its position (the shape of the z3 question)."""
    order = {u: i for i, u in enumerate(sorted(symbols, key=str))}

    def text(u: Expr) -> str:
        if u in order:
            return f"#{order[u]}"
        if isinstance(u, Op):
            return f"{u.name}({', '.join(text(arg) for arg in u.args)})"
        return str(u)

    return text(t)


class _NotModelled(Exception):
    """A term z3's float theory cannot express on its own."""


def _shared_subterms(a: Expr, b: Expr) -> set[Expr]:
    """The maximal non-constant subterms the two terms have in common."""
    inside_b = set(b.walk())
    shared: set[Expr] = set()

    def visit(t: Expr) -> None:
        if isinstance(t, Const):
            return
        if t in inside_b:
            shared.add(t)
            return
        for arg in getattr(t, "args", ()):
            visit(arg)

    visit(a)
    return shared


# ------------------------------------------------------------------ judging

def _inside(box: Box, valid: Mapping[str, tuple[float, float]]) -> str:
    """"in", "out" or "both": where the region lies with respect to the valid ranges."""
    if all(float_key(valid[n][0]) <= float_key(lo) and float_key(hi) <= float_key(valid[n][1])
           for n, lo, hi in box.ranges):
        return "in"
    if any(float_key(hi) < float_key(valid[n][0]) or float_key(lo) > float_key(valid[n][1])
           for n, lo, hi in box.ranges):
        return "out"
    return "both"


def _outside_point(box: Box, valid: Mapping[str, tuple[float, float]]) -> dict[str, float]:
    env = box.point()
    for n, lo, hi in box.ranges:
        vlo, vhi = valid[n]
        if float_key(lo) < float_key(vlo):
            env[n] = lo
            return env
        if float_key(hi) > float_key(vhi):
            env[n] = hi
            return env
    return env


def _clip(box: Box, valid: Mapping[str, tuple[float, float]]) -> Box:
    return dataclasses.replace(box, ranges=tuple((n, max(lo, valid[n][0], key=float_key),
                                                  min(hi, valid[n][1], key=float_key)) for n, lo, hi in box.ranges))


def _env_key(env: Mapping[str, float]) -> tuple:
    return tuple(env.items())


def _show_env(env: Mapping[str, float]) -> str:
    return ", ".join(f"{k} = {v!r}" for k, v in env.items())


class _Judge:
    """Turns one base's leaves into the clauses' coverage."""

    def __init__(self, report: UniversalReport, fixed: dict, valid: Mapping[str, tuple[float, float]],
                 accepts: Callable[[dict], bool] | None = None, tight_budget: int | None = None,
                 assumed: Mapping[Any, bool] | None = None, probe: bool = False):
        from vetdp.engine.tightness import TIGHT_BOXES

        self.report, self.fixed, self.valid, self.accepts = report, fixed, valid, accepts
        self.probe = probe  # a probe base: the law only, and a law read at concrete inputs is checked, not open
        self.tight_budget = TIGHT_BOXES if tight_budget is None else tight_budget  # sub-boxes per region
        self.assumed = dict(assumed or {})  # a fork side's assumed answers: its verdicts speak for its points only

    def witness(self, env: Mapping[str, float]) -> dict:
        """A parameter set where a clause fails (checked concretely by the sampled search)."""
        point = {**self.fixed, **env}
        self.report.witnesses.append(point)
        return point

    def sample(self, env: Mapping[str, float]) -> None:
        """A parameter set of a region left open (checked concretely by the sampled search)."""
        self.report.samples.append({**self.fixed, **env})

    def precondition(self, leaf: Leaf) -> Box | None:
        """precondition.regions on a leaf; returns the part of an accepted leaf inside the valid ranges."""
        pre = self.report.clauses["precondition.regions"]
        box, where = leaf.box, _inside(leaf.box, self.valid)
        if where == "in" and leaf.result.valid is False:
            where = "out"  # inside the valid ranges, outside the spec's joint precondition (Universal.accepts)
        if isinstance(leaf.result, _Rejected):
            if where == "out":
                pre.proved.append(box)
            else:
                inside = _clip(box, self.valid)
                pre.failed.append((box, self.witness(inside.point()), f"rejects valid parameters: {leaf.result.error}"))
            return None
        if where == "in":
            pre.proved.append(box)
            return box
        point = self.witness(_outside_point(box, self.valid))
        self.report.invalid_witnesses.append(point)
        pre.failed.append((box, point, "accepts parameters outside the spec's valid ranges"))
        return None if where == "out" else _clip(box, self.valid)

    def law(self, box: Box, result: Any) -> bool:
        """function.law on an accepted region; True when the law is the reference law there."""
        cov = self.report.clauses["function.law"]
        if isinstance(result, _Structured):
            return self._structure(cov, box, result)
        if result.reference is None:
            cov.open.append((box, "the spec states no reference law"))
            return False
        laws, reference = _folded(result.laws, box), _folded(result.reference, box)
        if all(_same_law(laws[x], reference[x]) for x in laws):
            cov.proved.append(box)
            return True
        renamings = [_equal_atoms(laws[x], reference[x], box) for x in laws]
        if all(r is not None for r in renamings):
            cov.proved.append(box)
            return True
        if any(all(_same_law(laws[x], other[x]) for x in laws) for _, other in result.admissible):
            cov.proved.append(box)  # an admissible law: whether its map is sound is privacy.sound's question
            return False
        for x in laws:
            diff = _difference(laws[x], reference[x], box)
            if diff is not None:
                env, y, a, b = diff
                cov.failed.append((box, self.witness(env), f"at {_show_env(env)}: P[M({x!r}) = {y!r}] is {a}, the "
                                                          f"law says {b}"))
                return False
        if box.size() == 1:
            cov.proved.append(box)  # one parameter value: the probabilities are equal numbers there
            return True
        cov.open.append((box, "the code's probabilities are other float terms than the reference's, equal at every "
                              "probed value and not proved equal by z3"))
        self.sample(box.simple_point())
        return False

    def _structure(self, cov: ClauseCoverage, box: Box, result: _Structured) -> bool:
        """A long bit vector: every output bit depends on its own input bit only, through the reference
        coordinate law (then the law of every input is the reference product law)."""
        if result.coordinates is None:
            same: dict[tuple, bool] = {}  # (input bit, law key): the same polynomials as the reference's
            for x, coordinates in result.per_input:  # the laws at concrete inputs: a difference is a failure
                for c in coordinates:
                    code, reference = c.laws[()], result.reference[x[c.index]]
                    key = (x[c.index], _law_key(code))
                    if key in same:
                        continue  # most bits share one law: each is compared once
                    same[key] = _same_law(code, reference) or _equal_atoms(code, reference, box) is not None
                    diff = None if same[key] else _difference(code, reference, box)
                    if diff is not None:
                        env, y, p, r = diff
                        shown = "".join("1" if b else "0" for b in x)
                        cov.failed.append((box, self.witness(env), f"at {_show_env(env)}: on the input {shown}, "
                                                                   f"output bit {c.index} (input bit "
                                                                   f"{int(x[c.index])}) is {y!r} with probability "
                                                                   f"{p}, the law says {r}"))
                        return False
            if result.per_input and self.probe:
                every = all(same.values())
                cov.checked.append((box, f"on {len(result.per_input)} concrete input(s) every output bit's law is "
                                         "the reference coordinate law " + (
                                             "for every value of the region (the same polynomials)" if every else
                                             "at every probed value (not proved equal on the region)")))
                return False
            checked = (f"; every output bit follows the reference coordinate law on {len(result.per_input)} "
                       "concrete input(s), not a proof for every input") if result.per_input else ""
            cov.open.append((box, result.why + checked))
            self.sample(box.simple_point())
            return False
        undecided = None
        equal: set[tuple] = set()  # coordinate laws already shown equal to the reference (most bits share one)
        for c in result.coordinates:
            if c.inputs not in ((), (c.index,)):
                cov.failed.append((box, self.witness(box.point()),
                                   f"output bit {c.index} depends on input bits {list(c.inputs)}"))
                return False
            for b in (False, True):
                code, reference = (c.laws[(b,)] if c.inputs else c.laws[()]), result.reference[b]
                key = (b, _law_key(code))
                if key in equal:
                    continue
                if _same_law(code, reference) or _equal_atoms(code, reference, box) is not None:
                    equal.add(key)
                    continue
                if any(_coordinates_match(result.coordinates, laws, box) for _, laws in result.admissible):
                    cov.proved.append(box)  # an admissible law: whether its map is sound is privacy.sound's question
                    return False
                diff = _difference(code, reference, box)
                if diff is not None:
                    env, y, p, r = diff
                    cov.failed.append((box, self.witness(env), f"at {_show_env(env)}: output bit {c.index} with "
                                                               f"input bit {int(b)} is {y!r} with probability {p}, "
                                                               f"the law says {r}"))
                    return False
                if box.size() != 1:
                    undecided = f"output bit {c.index}'s probabilities are other float terms than the reference's"
        if undecided is not None:
            cov.open.append((box, undecided))
            self.sample(box.simple_point())
            return False
        cov.proved.append(box)
        return True

    def claim(self, leaf: Leaf, law_is_reference: bool,
              refute: Callable[[dict, Any], str | None] | None = None) -> None:
        """privacy.sound on a region of pass 2: proved when the law is the reference law and the map one of the
        spec's admissible constants, term for term; failed where ``refute(point, claim)`` (the exact loss of the
        code's law at the region's point, see :func:`_refuted`) finds the map below the loss."""
        cov = self.report.clauses["privacy.sound"]
        box, result = leaf.box, leaf.result
        if (refute is not None and not isinstance(result, _Rejected) and result.constants
                and not any(_same_term(result.claim, c) for c in result.constants)):
            for env in dict.fromkeys(map(_env_key, (box.simple_point(), box.point()))):
                why = refute(dict(env), result.claim)
                if why is not None:
                    cov.failed.append((box, self.witness(dict(env)), why))
                    return
        if isinstance(result, _Rejected):  # the constructor decided otherwise on a second run: not the same code
            cov.failed.append((box, self.witness(box.point()), f"the constructor rejected these parameters on a "
                                                               f"second run: {result.error}"))
        elif not law_is_reference:
            cov.open.append((box, "the law is not the reference law term for term"))
        elif result.constant is None:
            cov.open.append((box, "the spec names no privacy constant"))
        elif any(_same_term(result.claim, c) for c in result.constants or (result.constant,)):
            cov.proved.append(box)
        elif box.size() == 1:
            if any(_same_value(result.claim, c) for c in result.constants or (result.constant,)):
                cov.proved.append(box)
            else:
                cov.open.append((box, "the map is not the spec's constant here; checked at this point"))
                self.sample(box.simple_point())
        elif leaf.escapes:
            e = leaf.escapes[0]
            cov.open.append((box, f"the map pins its parameters to a point ({e.what} at {e.where})"))
            self.sample(box.simple_point())
        else:
            cov.open.append((box, f"the map ({_term(result.claim)}) is not the spec's constant "
                                  f"({' or '.join(_term(c) for c in result.constants or (result.constant,))}) "
                                  "term for term"))
            self.sample(box.simple_point())

    def claim_forks(self, spec: Any, box: Box, forks: list[Leaf], law: Any,
                    claim_at: Callable[[dict], Any] | None = None) -> None:
        """privacy.sound and privacy.tight on a region where a comparison of the map is left undecided, from the runs
        with each of its answers assumed (:func:`~vetdp.engine.symbolic.explore_regions`' forks; ``law`` is pass 1's
        result where the law is the reference law, else None). Every point of the region follows one of the sides
        when the sides' assumed answers cover every answer (a side whose run split the region further does not), so:

        * privacy.sound is proved when every side's map is one of the spec's admissible constants term for term
          (each sound for every parameter value); anything else is open, never failed (a side may be taken at no
          point);
        * privacy.tight is proved when every side's map is proved tight on the whole region
          (:mod:`vetdp.engine.tightness`), or is at most such a side's map by the very comparison it assumed (a side
          of min(a, b) that takes a where a <= b: a <= b <= the allowance there). A side that fails at a value is a
          failure only where the code itself, run at that value (``claim_at``), gives a map above the loss's
          allowance there; else the region is open with the reasons."""
        cov = self.report.clauses["privacy.sound"]
        said = "; ".join(sorted({f"{what} assumed {answer}" for leaf in forks for what, answer in leaf.assumed}))
        if not _covers([leaf.assumed_keys for leaf in forks]):
            why = (f"a comparison left undecided near a crossing, explored with each answer ({said}): a side's run "
                   "split the region further, so its sides do not cover every value")
            for clause in ("privacy.sound", "privacy.tight"):
                self.report.clauses[clause].open.append((box, why))
            self.sample(box.simple_point())
            return
        proved = law is not None and all(
            not isinstance(leaf.result, _Rejected) and leaf.result.constant is not None and not leaf.escapes
            and any(_same_term(leaf.result.claim, c) for c in leaf.result.constants or (leaf.result.constant,))
            for leaf in forks)
        if proved:
            cov.proved.append(box)
        else:
            cov.open.append((box, f"a comparison left undecided near a crossing, explored with each answer "
                                  f"({said}): not every side's map is an admissible constant term for term"))
            self.sample(box.simple_point())
        self._tight_forks(spec, box, forks, law, claim_at)

    def _tight_forks(self, spec: Any, box: Box, forks: list[Leaf], law: Any,
                     claim_at: Callable[[dict], Any] | None) -> None:
        cov = self.report.clauses["privacy.tight"]
        if any(isinstance(leaf.result, _Rejected) for leaf in forks):
            return  # privacy.sound names the second run's refusal
        terms = [leaf.result.claim.term if isinstance(leaf.result.claim, SymFloat) else None for leaf in forks]
        # each side is judged unless it is at most (by a comparison it assumed) a side already proved tight on the
        # whole region; sides whose map is a bare parameter or constant (rarely the loss's formula) come last
        outcomes: dict[int, TightOutcome] = {}
        whole: list[Expr] = []  # the maps proved tight on the whole region (not only where their side is taken)
        for i in sorted(range(len(forks)), key=lambda i: isinstance(terms[i], (Var, Const))):
            leaf = forks[i]
            if _at_most_one_of(leaf, whole):
                outcomes[i] = _tight_outcome(proved=True)
            elif leaf.escapes:
                outcomes[i] = _tight_outcome(why=f"the map pins its parameters to a point ({leaf.escapes[0].what})")
            else:
                outcomes[i] = self._tight_outcome(spec, box, leaf.result.claim, law)
                if outcomes[i].proved and terms[i] is not None:
                    whole.append(terms[i])
        whys = []
        for i, leaf in enumerate(forks):
            outcome = outcomes[i]
            if outcome.proved or _at_most_one_of(leaf, whole):  # a side judged before the one that bounds it
                continue
            side = ", ".join(f"{what} assumed {answer}" for what, answer in leaf.assumed)
            if outcome.witness is not None:
                failing = self._fails_on_the_code(spec, law, outcome.witness, claim_at)
                if failing is not None:
                    cov.failed.append((box, self.witness(outcome.witness), failing))
                    return
                whys.append(f"with {side}: {outcome.why}; the code's own map there is within the allowance")
            else:
                whys.append(f"with {side}: {outcome.why}")
        if not whys:
            cov.proved.append(box)
            return
        cov.open.append((box, "a comparison left undecided near a crossing, explored with each answer: "
                              + "; ".join(whys)))
        self.sample(box.simple_point())

    def _fails_on_the_code(self, spec: Any, law: Any, env: dict, claim_at: Callable[[dict], Any] | None
                           ) -> str | None:
        """Why the code's own map at ``env`` (run there, every comparison decided) exceeds the loss's allowance, or
        None when it does not or that cannot be read."""
        from vetdp.engine.clauses import pairs_within
        from vetdp.engine.tightness import _fails_at

        if claim_at is None or not isinstance(law, _Laws) or law.reference is None:
            return None
        claim = claim_at(env)
        term = claim.term if isinstance(claim, SymFloat) else Const(claim) if isinstance(claim, float) else None
        if term is None:
            return None
        failing = _fails_at(term, law.reference,
                            lambda e: pairs_within(spec, {**self.fixed, **e}, list(law.reference), spec.d_in), env)
        return None if failing is None else failing[1] + " (the code's own run at this value)"

    def tight(self, spec: Any, leaf: Leaf, law: Any) -> None:
        """privacy.tight on a region of pass 2 where the law is the reference law (``law``, pass 1's result): the
        map within 2**-30 (relative) + 2**-40 of the reference law's exact loss for every value
        (:mod:`vetdp.engine.tightness`)."""
        if isinstance(leaf.result, _Rejected):
            return  # privacy.sound names the second run's refusal
        cov = self.report.clauses["privacy.tight"]
        outcome = self._tight_outcome(spec, leaf.box, leaf.result.claim, law)
        if outcome.proved:
            cov.proved.append(leaf.box)
        elif outcome.witness is not None:
            cov.failed.append((leaf.box, self.witness(outcome.witness), outcome.why))
        else:
            cov.open.append((leaf.box, outcome.why))
            self.sample(leaf.box.simple_point())

    def _tight_outcome(self, spec: Any, box: Box, claim: Any, law: Any) -> TightOutcome:
        """privacy.tight of the map ``claim`` on ``box``: proved, failed at a witness, or open with the reason.

        Where the worst pair at the region's point is not the pair whose loss is the map's formula (several pairs
        tie there, e.g. where every probability is 1/2 and every ratio 1; or the map is the larger of two losses),
        the pairs tying with it, then those whose formula matches the map's, are tried, each alone: a map within the
        allowance of one neighbouring pair's loss is within that of the worst loss."""
        from vetdp.engine.clauses import pairs_within
        from vetdp.engine.tightness import decide_tight

        if not spec.tight:
            return _tight_outcome(why="tightness not required by this spec")
        if law is None:
            return _tight_outcome(why="the law is not the reference law term for term")
        if isinstance(claim, Raised):
            return _tight_outcome(why=f"the map raised {claim.type}")
        if isinstance(law, _Structured):
            return self._tight_by_coordinates(spec, box, claim, law)
        if law.reference is None:
            return _tight_outcome(why="the spec states no reference law")

        def pairs_at(env: dict) -> Any:
            return pairs_within(spec, {**self.fixed, **env}, list(law.reference), spec.d_in)

        outcome = decide_tight(claim, law.reference, pairs_at, box, self.tight_budget, self.assumed)
        if outcome.proved or outcome.witness is not None or box.size() == 1:
            return outcome
        for p, q in _pairs_to_try(law.reference, pairs_at, box.point(), claim):
            # any neighbouring pair's loss is at most the worst: a map within its allowance is within the worst's
            alone = decide_tight(claim, {0: {0: p}, 1: {0: q}}, lambda env: [(0, 1)], box, self.tight_budget,
                                 self.assumed)
            if alone.proved:  # its failures are not failures: that pair's loss may be below the worst one's
                return alone
        return outcome

    def _tight_by_coordinates(self, spec: Any, box: Box, claim: Any, law: _Structured) -> TightOutcome:
        """privacy.tight for a long bit vector whose every output bit follows the reference coordinate law: the
        listed neighbours (the spec's inputs that are tuples of bools) at the largest Hamming distance D differ by
        D times the worst coordinate log-ratio, a lower bound on the exact loss; a map above its allowance is left
        open (the domain may hold farther pairs), and the witness is sampled."""
        from vetdp.engine.tightness import decide_tight

        env = box.point()
        found = _farthest_listed(spec, self.fixed, law, env)
        if found is None:
            return _tight_outcome(why="no listed pair of bit vectors to read the loss from")
        far, b, y = found
        farthest = {0: {0: law.reference[b][y] ** far}, 1: {0: law.reference[not b][y] ** far}}
        outcome = decide_tight(claim, farthest, lambda env: [(0, 1)], box, self.tight_budget, self.assumed)
        if outcome.proved:
            return outcome
        if outcome.witness is not None:
            self.sample({**outcome.witness})
        return _tight_outcome(why=f"against the listed pair at Hamming distance {far}: {outcome.why}")

    def unexplored(self, clause: str, box: Box, why: str) -> None:
        self.report.clauses[clause].open.append((box, why))
        if _inside(box, self.valid) == "out":
            return
        # a point of the region the spec's joint precondition accepts (the region may straddle its boundary)
        for env in _probe_points(_clip(box, self.valid)):
            if self.accepts is None or self._accepted(env):
                self.sample(env)
                return

    def _accepted(self, env: Mapping[str, float]) -> bool:
        try:
            return bool(self.accepts({**self.fixed, **env}))
        except (ArithmeticError, ValueError, TypeError):
            return False


def _tight_outcome(**verdict: Any) -> TightOutcome:
    from vetdp.engine.tightness import TightOutcome

    return TightOutcome(**verdict)


_PAIRS_TRIED = 16  # distinct loss formulas tried alone where the worst pair's at a region's point is not proved
_MATCHING = 2.0**-20  # a formula "matches" the map's at the generic values within this (an order of trying only)


def _pairs_to_try(laws: Mapping[Any, Mapping[Any, Any]], pairs_at: Callable[[dict], Any], env: dict, claim: Any
                  ) -> list[tuple[Any, Any]]:
    """(P[M(x) = y], P[M(x') = y]) of the neighbouring pairs and outputs whose ratio at ``env`` is the worst one,
    one per ratio formula (exactly: a quotient of monomials by its exponents, else its value at generic rationals in
    place of the law's float terms), at most :data:`_PAIRS_TRIED`: those whose log-ratio at the generic values is
    nearest the map's ideal formula there first (an order of trying only; each is decided by its own proof); then
    the pairs not worst at ``env`` whose formula matches the map's at the generic values (where the map is the
    larger of two losses, e.g. RAPPOR's two weightings when 2h > k, the other may be worst at the region's point)."""
    from vetdp.engine.divergence import max_divergence

    dists = {x: {y: poly_value(q, env) for y, q in law.items()} for x, law in laws.items()}
    pairs = pairs_at(env)
    pairs = pairs if pairs is not None else [(a, b) for a in dists for b in dists if a != b]
    worst = max_divergence(dists, pairs).ratio
    if worst is None:
        return []
    atoms = sorted({a for law in laws.values() for q in law.values() if isinstance(q, ProbPoly) for a in q.atoms()},
                   key=str)
    generic = {a: Fraction(1, 7 + 3 * i) for i, a in enumerate(atoms)}
    found: dict[Any, tuple[Any, Any, bool]] = {}  # shape -> (P, P', whether it ties with the worst at env)
    for x, x_prime in pairs:
        for y, p in dists[x].items():
            q = dists[x_prime].get(y, 0)
            if q == 0:
                continue
            shape = _shape(laws[x][y], laws[x_prime][y], generic)
            if shape not in found:
                found[shape] = (laws[x][y], laws[x_prime][y], p / q == worst)
    target = _generic_term(claim.term, generic) if isinstance(claim, SymFloat) else None

    def distance(pq: tuple[Any, Any]) -> float:
        if target is None:
            return 0.0
        log = _log_generic(pq[0], generic) - _log_generic(pq[1], generic)
        return abs(log - target) if math.isfinite(log) else math.inf

    tying = [(p, q) for p, q, ties in found.values() if ties]
    matching = [] if target is None else [(p, q) for p, q, ties in found.values()
                                          if not ties and distance((p, q)) <= _MATCHING * abs(target)]
    return (sorted(tying, key=distance) + sorted(matching, key=distance))[:_PAIRS_TRIED]


def _shape(p: Any, q: Any, generic: Mapping[Expr, Fraction]) -> Any:
    """A key equal for two ratios p/q of the same formula: the exponents and coefficient of a quotient of monomials,
    else the value at the generic rationals."""
    if isinstance(p, ProbPoly) and isinstance(q, ProbPoly) and len(p.terms) == 1 and len(q.terms) == 1:
        (mp, cp), = p.terms.items()
        (mq, cq), = q.terms.items()
        exponents: dict[Any, int] = {}
        for factor, e in mp:
            exponents[factor] = exponents.get(factor, 0) + e
        for factor, e in mq:
            exponents[factor] = exponents.get(factor, 0) - e
        return Fraction(cp) / Fraction(cq), frozenset((f, e) for f, e in exponents.items() if e)
    numerator, denominator = _generic_value(p, generic), _generic_value(q, generic)
    return numerator / denominator if denominator else (numerator, "over 0")


def _log_generic(q: Any, generic: Mapping[Expr, Fraction]) -> float:
    value = _generic_value(q, generic)
    return math.log(value) if value > 0 else math.inf


def _generic_term(t: Expr, generic: Mapping[Expr, Fraction]) -> float | None:
    """The map's ideal formula (rounding ignored) with the law's float terms at ``generic`` values (None: it has a
    parameter outside them, or no value there)."""
    if t in generic:
        return float(generic[t])
    if isinstance(t, Const):
        return float(t.value)
    if not isinstance(t, Op):
        return None
    args = [_generic_term(a, generic) for a in t.args]
    if any(a is None for a in args):
        return None
    ideal = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
             "div": lambda a, b: a / b, "ln": math.log, "exp": math.exp, "log1p": math.log1p, "expm1": math.expm1}
    try:
        return ideal[t.info.ideal](*args) if t.info.ideal in ideal else None
    except (ArithmeticError, ValueError):
        return None


def _generic_value(q: Any, generic: Mapping[Expr, Fraction]) -> Fraction:
    if not isinstance(q, ProbPoly):
        return Fraction(q)
    total = Fraction(0)
    for mono, c in q.terms.items():
        product = Fraction(c)
        for (atom, comp), e in mono:
            product *= (1 - generic[atom] if comp else generic[atom]) ** e
        total += product
    return total


def _covers(sides: list[tuple[tuple[Any, bool], ...]]) -> bool:
    """Whether forks with these assumed answers (in the order assumed) cover every answer of the comparisons."""
    if () in sides:
        return True
    if not sides or any(not s for s in sides):
        return False
    key = sides[0][0][0]
    if any(s[0][0] != key for s in sides):
        return False
    return all(_covers([s[1:] for s in sides if s[0][1] is answer]) for answer in (True, False))


_AT_MOST = {(operator.lt, True): 1, (operator.le, True): 1, (operator.gt, False): 1, (operator.ge, False): 1,
            (operator.lt, False): -1, (operator.le, False): -1, (operator.gt, True): -1, (operator.ge, True): -1}


def _at_most_one_of(leaf: Leaf, terms: list[Expr]) -> bool:
    """Whether a comparison this fork assumed says its map is at most one of ``terms`` at every value it is taken
    at (e.g. min(a, b) taking a where b < a is False: a <= b)."""
    claim = leaf.result.claim
    if not isinstance(claim, SymFloat):
        return False
    for key, answer in leaf.assumed_keys:
        if not (isinstance(key, tuple) and len(key) == 3 and (key[1], answer) in _AT_MOST):
            continue
        small, large = (key[0], key[2]) if _AT_MOST[(key[1], answer)] == 1 else (key[2], key[0])
        if small == claim.term and large in terms and large != small:
            return True
    return False


def _same_term(claim: Any, constant: Any) -> bool:
    if isinstance(claim, SymFloat) and isinstance(constant, SymFloat):
        return claim.term == constant.term
    if isinstance(claim, float) and isinstance(constant, float):
        return claim == constant  # no parameter in either: the same float
    return False


def _same_value(claim: Any, constant: Any) -> bool:
    """Whether the map and the constant are the same float at the run's point (decisive on a one-point region)."""
    a = claim.value if isinstance(claim, SymFloat) else claim
    b = constant.value if isinstance(constant, SymFloat) else constant
    return isinstance(a, float) and isinstance(b, float) and a == b


def _term(x: Any) -> str:
    return str(x.term) if isinstance(x, SymFloat) else repr(x)


# ------------------------------------------------------------------ exploring a spec

def explore_spec(spec: Any, build: Callable[[dict], Any], *, deep: bool = False, budget: int = 200_000,
                 region_budget: int = 2_000, on_base: Callable[[int, int], None] | None = None) -> UniversalReport:
    """Explore ``spec`` (whose ``universal`` field is set) with ``build(params)`` constructing the code under test.

    ``budget`` bounds the paths of one law, ``region_budget`` the runs of one pass over one base; ``on_base(i, n)``
    is told when base i of n starts (progress)."""
    universal = spec.universal
    bases = list(universal.bases(deep))
    probes = list(universal.probe_bases(deep)) if universal.probe_bases is not None else []
    report = UniversalReport(spec.name, tuple(sorted(universal.floats(bases[0]))) if bases else ())

    def told(offset: int) -> Callable[[int, int], None] | None:
        return None if on_base is None else lambda i, n: on_base(offset + i, len(bases) + len(probes))

    with keeping_symbols():  # a module calling float() on a symbolic parameter keeps it symbolic
        _explore_bases(report, spec, build, bases, deep, budget, region_budget, told(0))
        if not any(c.failed for c in report.clauses.values()):
            for i, base in enumerate(probes):
                _probe_base(report, spec, build, base, deep, budget, region_budget, told(len(bases) + i))
    return report


def _probe_base(report: UniversalReport, spec: Any, build: Callable[[dict], Any], base: dict, deep: bool,
                budget: int, region_budget: int, on_base: Callable[[int, int], None] | None) -> None:
    """One of the spec's probe bases, explored like a base for precondition.regions and function.law only (the
    law read at concrete inputs with the floats symbolic); its verdicts join ``report`` as checked regions, its
    failures as failures."""
    sub = UniversalReport(report.spec, report.floats)
    _explore_bases(sub, spec, build, [base], deep, budget, region_budget, on_base, probe=True)
    for c in ("precondition.regions", "function.law"):
        cov, found = report.clauses[c], sub.clauses[c]
        cov.failed += found.failed
        cov.open += found.open
        cov.checked += found.checked + [(box, "decided for every value of the region") for box in found.proved]
    report.witnesses += sub.witnesses
    report.probe_witnesses += sub.witnesses
    report.invalid_witnesses += sub.invalid_witnesses
    report.probe_bases.append({k: v for k, v in base.items() if k not in spec.universal.floats(base)})
    report.leaves += sub.leaves
    report.runs += sub.runs


def _explore_bases(report: UniversalReport, spec: Any, build: Callable[[dict], Any], bases: list[dict], deep: bool,
                   budget: int, region_budget: int, on_base: Callable[[int, int], None] | None,
                   probe: bool = False) -> None:
    failing_bases = 0
    for i, base in enumerate(bases):
        if on_base is not None:
            on_base(i, len(bases))
        if failing_bases >= _STOP_AFTER_FAILING_BASES:
            report.stopped = (f"{len(bases) - i} of {len(bases)} bases not explored: a clause already fails on "
                              f"{failing_bases}")
            break
        before = sum(len(c.failed) for c in report.clauses.values())
        try:
            _explore_base(report, spec, build, base, budget, region_budget,
                          bisection.DEEP_BISECTIONS if deep else bisection.BISECTIONS, probe)
        except (KeyboardInterrupt, DeadlineExceeded):
            raise
        except BaseException as e:  # noqa: BLE001 - code that cannot run on symbolic values: the base stays open
            if isinstance(e, ReplayMismatch):  # the code's paths do not add up: its state, a finding of its own
                why = (f"the code's laws cannot be enumerated ({e}): state kept between calls, which "
                       "state.independent_calls reports")[:300]
            elif _raised_inside_vetdp(e):  # no frame of the code under test or of its spec: vetdp's own failure
                raise UniversalEngineError(f"{type(e).__name__}: {e} (base {base})") from e
            else:
                why = f"the code raised {type(e).__name__} on symbolic parameters: {e}"[:300]
            valid = dict(spec.universal.floats(base))
            judge = _Judge(report, {k: v for k, v in base.items() if k not in valid}, valid)
            for c in UNIVERSAL_CLAUSES:
                judge.unexplored(c, Box.of({n: _WHOLE_LINE for n in valid}), why)
        failing_bases += sum(len(c.failed) for c in report.clauses.values()) > before


class UniversalEngineError(RuntimeError):
    """vetdp's own computation failed during the exploration (no frame of the code under test or of its spec was
    running): not a finding about the code, and no region may be counted for it."""


_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the directory of the vetdp package


def _raised_inside_vetdp(e: BaseException) -> bool:
    """Whether every Python frame from the exploration down to where ``e`` was raised is vetdp's own (the package's
    modules), so that neither the code under test nor its spec took part."""
    tb = e.__traceback__
    while tb is not None:
        if not os.path.abspath(tb.tb_frame.f_code.co_filename).startswith(_PACKAGE + os.sep):
            return False
        tb = tb.tb_next
    return True


def _explore_base(report: UniversalReport, spec: Any, build: Callable[[dict], Any], base: dict, budget: int,
                  region_budget: int, bisections: int | None = None, probe: bool = False) -> None:
    valid = dict(spec.universal.floats(base))
    fixed = {k: v for k, v in base.items() if k not in valid}
    judge = _Judge(report, fixed, valid, spec.universal.accepts, probe=probe)
    # a probe base looks for differences of the law where the spec accepts (the bases decide the rest of the line)
    space = {n: valid[n] if probe else _WHOLE_LINE for n in valid}
    try:
        leaves, unexplored = explore_regions(_law_run(spec, build, fixed, budget, valid, probe), space,
                                             budget=region_budget, bisections=bisections, forks=LAW_FORKS)
    except EnumerationBudgetExceeded as e:
        for c in UNIVERSAL_CLAUSES:
            judge.unexplored(c, Box.of(space), f"a law needs more than {budget} paths ({e})")
        return
    report.bases.append(fixed)
    report.leaves += len(leaves)
    report.runs += len(leaves) + len(unexplored)
    for box, why in unexplored:
        for c in UNIVERSAL_CLAUSES:
            judge.unexplored(c, box, why)
    forked: dict[Box, list[Leaf]] = {}
    for leaf in leaves:
        if leaf.assumed:
            forked.setdefault(leaf.origin, []).append(leaf)
        else:
            _judge_leaf(judge, spec, build, fixed, leaf, region_budget, bisections)
    for origin, family in forked.items():
        cut = [why for box, why in unexplored if _overlap(box, origin)]  # a side the run budget left unexplored
        _judge_forks(report, judge, spec, build, fixed, origin, family, region_budget, bisections, cut)


def _overlap(a: Box, b: Box) -> bool:
    """Whether two regions may share a point: their intervals meet and no order of one is the other's reversed."""
    for one, other in ((a, b), (b, a)):
        for x, y, strict in one.orders:
            if (y, x, True) in other.orders or (strict and (y, x, False) in other.orders):
                return False
    return all(float_key(lo) <= float_key(b[n][1]) and float_key(b[n][0]) <= float_key(hi) for n, lo, hi in a.ranges)


def _judge_leaf(judge: _Judge, spec: Any, build: Callable[[dict], Any], fixed: dict, leaf: Leaf, region_budget: int,
                bisections: int | None) -> None:
    """Every clause on one leaf of the law pass: its precondition, its law, then the claim pass on its region."""
    box = judge.precondition(leaf)
    if box is None:
        return
    is_reference = judge.law(box, leaf.result)
    if judge.probe:
        return
    claims, open_claims = explore_regions(_claim_run(spec, build, fixed), box, budget=region_budget,
                                          bisections=bisections, forks=CLAIM_FORKS, assumed=dict(leaf.assumed_keys))
    refute = None
    if isinstance(leaf.result, _Laws):
        def refute(env: dict, claim: Any, laws: dict = leaf.result.laws) -> str | None:
            return _refuted(spec, fixed, laws, env, claim)
    elif isinstance(leaf.result, _Structured) and is_reference:
        def refute(env: dict, claim: Any, law: _Structured = leaf.result) -> str | None:
            return _refuted_by_coordinates(spec, fixed, law, env, claim)
    forked: dict[Box, list[Leaf]] = {}
    for claim_leaf in claims:
        if claim_leaf.assumed:  # forked in the claim pass (the law pass's answers are given, not said again)
            forked.setdefault(claim_leaf.box, []).append(claim_leaf)
            continue
        judge.claim(claim_leaf, is_reference, refute)
        judge.tight(spec, claim_leaf, leaf.result if is_reference else None)

    def claim_at(env: dict) -> Any:
        return _claim_at(spec, build, fixed, env)

    for part, forks in forked.items():
        judge.claim_forks(spec, part, forks, leaf.result if is_reference else None, claim_at)
    for part, why in open_claims:
        judge.unexplored("privacy.sound", part, why)
        judge.unexplored("privacy.tight", part, why)


def _judge_forks(report: UniversalReport, judge: _Judge, spec: Any, build: Callable[[dict], Any], fixed: dict,
                 origin: Box, family: list[Leaf], region_budget: int, bisections: int | None,
                 cut: list[str] = ()) -> None:
    """Every clause on a region the law pass forked (a joint comparison still crossing it after its halvings, run
    once per answer): each fork is judged on its own, and a clause is proved on the region when it is proved on
    every fork with nothing open or failing there (every point of the region follows one fork; a fork where the
    code refuses, and the spec's precondition with it, has no law to prove). Anything else is open, never failed
    (a fork may be taken at no point): its witnesses go to the sampled search, which checks them concretely. The
    region is recorded once per clause (the sides' own regions overlap); ``cut``: why a part of it went unexplored
    on some side (then nothing is proved on it)."""
    said = sorted({f"{what} assumed {answer}" for leaf in family for what, answer in leaf.assumed})
    subs = []
    for leaf in family:
        sub = UniversalReport(report.spec, report.floats)
        sides = _Judge(sub, judge.fixed, judge.valid, judge.accepts, FORK_TIGHT_BOXES, dict(leaf.assumed_keys),
                       probe=judge.probe)
        _judge_leaf(sides, spec, build, fixed, leaf, region_budget, bisections)
        subs.append((leaf, sub))
        # a fork's witness is checked concretely, not trusted: where the spec's precondition accepts it
        report.samples += [p for p in sub.samples + sub.witnesses if _accepted_point(judge, p)]
    left_open = False
    for c in UNIVERSAL_CLAUSES:
        cov = report.clauses[c]
        trouble = [(leaf, why) for leaf, sub in subs for _, why in sub.clauses[c].open]
        trouble += [(leaf, f"fails on that side: {why}") for leaf, sub in subs for _, _, why in sub.clauses[c].failed]
        trouble += [(family[0], f"part of the region went unexplored: {why}") for why in cut]
        if not trouble:
            checked = [why for _, sub in subs for _, why in sub.clauses[c].checked]
            if checked:
                cov.checked.append((origin, checked[0]))
            elif any(sub.clauses[c].proved for _, sub in subs):  # nothing to prove where every side refuses
                cov.proved.append(origin)
            continue
        leaf, why = trouble[0]
        side = "; ".join(f"{what} assumed {answer}" for what, answer in leaf.assumed)
        cov.open.append((origin, f"a comparison still crossing the region, explored with each answer "
                                 f"({'; '.join(said)}): on the side where {side}, {why}"))
        left_open = True
    if left_open:  # the sides' own points (each answers its side's comparisons), where accepted
        report.samples += [p for p in ({**fixed, **leaf.box.point()} for leaf in family) if _accepted_point(judge, p)]


def _accepted_point(judge: _Judge, params: dict) -> bool:
    """Whether a parameter set lies in the valid ranges and the spec's joint precondition accepts it."""
    inside = all(float_key(lo) <= float_key(params[n]) <= float_key(hi) for n, (lo, hi) in judge.valid.items())
    return inside and (judge.accepts is None or bool(judge.accepts(params)))


def _claim_at(spec: Any, build: Callable[[dict], Any], fixed: dict, env: dict) -> Any:
    """The code's map at the one parameter value ``env`` (every comparison decided there), or None."""
    leaves, _ = explore_regions(_claim_run(spec, build, fixed), Box.of({n: (v, v) for n, v in env.items()}), budget=4)
    if len(leaves) != 1 or isinstance(leaves[0].result, _Rejected):
        return None
    return leaves[0].result.claim


def _map_at(claim: Any, env: dict) -> Any:
    """The map's value at the parameter value ``env`` (a float, or what the map gave: a Raised)."""
    return _value(claim.term, env) if isinstance(claim, SymFloat) else claim


def _farthest_listed(spec: Any, fixed: dict, law: _Structured, env: dict) -> tuple[int, bool, Any] | None:
    """For a long bit vector whose every output bit follows the reference coordinate law (``law``): the largest
    Hamming distance D of the spec's listed neighbouring pairs at ``env``, and the input bit b and output bit y of
    the largest coordinate ratio P[y | b] / P[y | not b] there (then ln of its D-th power is a loss some listed pair
    reaches, a lower bound on the exact loss); None when nothing is listed."""
    from vetdp.engine.clauses import pairs_within

    point = {**fixed, **env}
    vectors = [x for x in spec.inputs(point) if isinstance(x, tuple) and all(isinstance(b, bool) for b in x)]
    pairs = pairs_within(spec, point, vectors, spec.d_in)
    pairs = pairs if pairs is not None else [(a, b) for a in vectors for b in vectors if a != b]
    if law.reference is None or not pairs:
        return None
    far = max(sum(a != b for a, b in zip(x, xp, strict=True)) for x, xp in pairs)
    ratios = [(poly_value(law.reference[b][y], env) / poly_value(law.reference[not b][y], env), b, y)
              for b in (False, True) for y in law.reference[b] if poly_value(law.reference[not b][y], env) > 0]
    if not ratios:
        return None
    _, b, y = max(ratios, key=lambda r: r[0])
    return far, b, y


def _refuted_by_coordinates(spec: Any, fixed: dict, law: _Structured, env: dict, claim: Any) -> str | None:
    """Why the map is unsound at ``env`` for a long bit vector that follows the reference coordinate law: its
    value is below D·ln(P[y | b] / P[y | not b]) (:func:`_farthest_listed`), the loss of a listed pair at Hamming
    distance D, decided by directed rounding; None when that is not established."""
    from vetdp.engine.divergence import Verdict, compare_claim, ln_ratio_bracket

    value = _map_at(claim, env)
    found = _farthest_listed(spec, fixed, law, env)
    if not isinstance(value, float) or found is None:
        return None
    far, b, y = found
    ratio = (poly_value(law.reference[b][y], env) / poly_value(law.reference[not b][y], env)) ** far
    verdict = compare_claim(value, ln_ratio_bracket(ratio), max_prec=1024)
    if verdict.verdict is not Verdict.UNSOUND:
        return None
    return (f"at {_show_env(env)}: map(1) = {value!r} is below the loss {float(verdict.truth_lo):.17g} of a "
            f"listed pair at Hamming distance {far} (every output bit follows the reference coordinate law; bit "
            f"{int(b)} against {int(not b)} gives output bit {y!r} with ratio P/Q to the power {far})")


def _refuted(spec: Any, fixed: dict, laws: dict, env: dict, claim: Any) -> str | None:
    """Why the map is unsound at the parameter value ``env`` (its exact loss, from the code's law there, is above the
    map's value), or None when that is not established (sound there, undecided, or a map that raised)."""
    from vetdp.engine.clauses import _loss_finding, pairs_within

    value = _map_at(claim, env)
    if not isinstance(value, float):
        return None
    dists = {x: {y: poly_value(q, env) for y, q in law.items()} for x, law in laws.items()}
    if len(dists) < 2:
        return None
    finding, _ = _loss_finding(value, spec.d_in, dists, pairs_within(spec, {**fixed, **env}, list(dists), spec.d_in))
    if finding.ok or finding.undecided:
        return None
    return f"at {_show_env(env)}: {finding.message}"


def floats_count(box: Box) -> int:
    """How many parameter points a region holds."""
    return math.prod(1 + float_key(hi) - float_key(lo) for _, lo, hi in box.ranges)
