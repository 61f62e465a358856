"""Clauses decided for every value of a spec's float parameters, by running the real code on regions of them.

For each of the spec's *bases* (parameter sets whose integers and shapes are fixed, see
:class:`~vetdp.engine.spec.Universal`), the constructor, the function on every input and the spec's reference
law are run with the float parameters symbolic (:mod:`vetdp.engine.symbolic`). The float line of each parameter
is cut into *leaves*, regions on which the code takes one path for every value; on each leaf the output
distribution is an exact polynomial in the code's own float terms (:mod:`vetdp.engine.polynomial`). Then:

* ``precondition.regions`` — every leaf inside the spec's valid ranges is accepted and every leaf outside them
  rejected;
* ``function.law`` — on every accepted leaf, the code's law is the reference law (or an admissible one) as
  polynomials in the same terms, so equal for every value of the leaf; where it differs, a value at which the
  two probabilities differ is the witness;
* ``privacy.sound`` — on every leaf where the law is the reference law and the map is, term for term, the
  spec's privacy constant (whose z3 obligations and lemmas prove it at least the reference law's exact loss for
  every parameter value), the map is sound for every value of the leaf.

What is not decided this way is said with its reason (a region the code pins to a point, a term not known to be
monotone, the region budget), and the leaves' points are handed to the sampled search as parameter sets, so
that every region is at least checked where it is not proved. Work is counted in runs and paths, never seconds.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterator, Mapping
from fractions import Fraction
from typing import Any

from vetdp.engine.enumerate import EnumerationBudgetExceeded, Raised, enumerate_paths, freeze
from vetdp.engine.polynomial import ProbPoly, poly_value
from vetdp.engine.symbolic import (
    MAX_FLOAT,
    Box,
    Leaf,
    Split,
    SymFloat,
    explore_regions,
    float_from_key,
    float_key,
    floats_between,
)

__all__ = ["UniversalReport", "ClauseCoverage", "explore_spec", "symbolic_law", "UNIVERSAL_CLAUSES"]

UNIVERSAL_CLAUSES = ("precondition.regions", "function.law", "privacy.sound")
_WHOLE_LINE = (-MAX_FLOAT, MAX_FLOAT)


def symbolic_law(run: Callable[[], Any], budget: int) -> dict[Any, Any]:
    """The exact law of ``run()`` (outputs frozen): probabilities are Fractions, or polynomials where a draw's
    probability is symbolic. Raises EnumerationBudgetExceeded past ``budget`` paths."""
    dist: dict[Any, Any] = {}
    for out, p in enumerate_paths(run, budget=budget):
        dist[out] = dist[out] + p if out in dist else p
    return dist


@dataclasses.dataclass
class ClauseCoverage:
    """What one clause established over the explored regions."""

    proved: list[Box] = dataclasses.field(default_factory=list)  # leaves decided for every value
    failed: list[tuple[Box, dict, str]] = dataclasses.field(default_factory=list)  # (leaf, witness params, why)
    open: list[tuple[Box, str]] = dataclasses.field(default_factory=list)  # not decided symbolically, with why

    @property
    def ok(self) -> bool:
        return not self.failed


@dataclasses.dataclass
class UniversalReport:
    """The symbolic exploration of one spec: per clause, what was proved, failed and left open, and the
    parameter sets (each a leaf's point or witness) for the sampled search to check concretely."""

    spec: str
    floats: tuple[str, ...]
    bases: int = 0
    leaves: int = 0
    clauses: dict[str, ClauseCoverage] = dataclasses.field(
        default_factory=lambda: {c: ClauseCoverage() for c in UNIVERSAL_CLAUSES})
    witnesses: list[dict] = dataclasses.field(default_factory=list)
    reasons: list[str] = dataclasses.field(default_factory=list)

    def describe(self, clause: str) -> str:
        """One line: what the clause rests on symbolically (proved where, failed where, open where and why)."""
        cov = self.clauses[clause]
        names = ", ".join(self.floats)
        parts = []
        if cov.proved:
            parts.append(f"proved for every {names} on {len(cov.proved)} region(s) over {self.bases} base(s)"
                         f" ({_extent(cov.proved, self.floats)})")
        if cov.failed:
            box, witness, why = cov.failed[0]
            parts.append(f"fails on {len(cov.failed)} region(s), first {box.describe()}: {why}")
        if cov.open:
            whys = sorted({w for _, w in cov.open})
            parts.append(f"not decided symbolically on {len(cov.open)} region(s): {whys[0]}"
                         + (f" (and {len(whys) - 1} other reason(s))" if len(whys) > 1 else ""))
        return "; ".join(parts) if parts else "nothing explored"


def _extent(boxes: list[Box], names: tuple[str, ...]) -> str:
    out = []
    for n in names:
        lo = min((b[n][0] for b in boxes), key=float_key)
        hi = max((b[n][1] for b in boxes), key=float_key)
        out.append(f"{n} in [{lo!r}, {hi!r}]")
    return ", ".join(out)


# ------------------------------------------------------------------ one base

@dataclasses.dataclass(frozen=True)
class _Built:
    laws: dict[Any, dict]
    reference: dict[Any, dict] | None
    admissible: tuple[tuple[str, dict[Any, dict]], ...]
    claim: Any
    constant: Any


@dataclasses.dataclass(frozen=True)
class _Rejected:
    error: str


def _run_base(spec: Any, build: Callable[[dict], Any], base: dict, floats: tuple[str, ...], budget: int
              ) -> Callable[[dict[str, SymFloat]], Any]:
    universal = spec.universal

    def run(symbols: dict[str, SymFloat]) -> Any:
        params = {**base, **symbols}
        try:
            m = build(params)
        except Split:
            raise
        except BaseException as e:  # noqa: BLE001 - the constructor's refusal (or exit) is the region's outcome
            if isinstance(e, (KeyboardInterrupt, GeneratorExit)):
                raise
            return _Rejected(f"{type(e).__name__}: {e}")
        inner = getattr(m, "inner", m)
        inputs = spec.inputs(params)
        laws = {freeze(x): symbolic_law(lambda x=x: inner(x), budget) for x in inputs}
        reference = None
        if spec.law is not None:
            reference = {freeze(x): spec.law(params, x) for x in inputs}
        admissible = []
        if reference is not None and not all(_same_law(laws[x], reference[x]) for x in laws):
            for name, family in spec.admissible_laws:
                try:
                    law = family(params, laws)
                    if law is not None:
                        admissible.append((name, {freeze(x): law(x) for x in inputs}))
                except Split:
                    raise
                except Exception:  # noqa: BLE001,S112 - a family that cannot take symbolic laws admits nothing here
                    continue
        try:
            claim = inner.map(spec.d_in)
        except Split:
            raise
        except Exception as e:  # noqa: BLE001 - a map that raises is a finding of the sampled clauses
            claim = Raised(type(e).__name__, str(e))
        constant = universal.constant(params).value if universal.constant is not None else None
        return _Built(laws, reference, tuple(admissible), claim, constant)

    return run


def _same_law(code: dict, other: Mapping) -> bool:
    """Whether two laws are the same polynomials output by output (equal for every value of the region)."""
    other = {y: q for y, q in other.items() if not _zero(q)}
    code = {y: q for y, q in code.items() if not _zero(q)}
    if set(code) != set(other):
        return False
    return all(_same(code[y], other[y]) for y in code)


def _zero(q: Any) -> bool:
    return not q.terms if isinstance(q, ProbPoly) else q == 0


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, ProbPoly):
        return a.same_as(b)
    if isinstance(b, ProbPoly):
        return b.same_as(a)
    return Fraction(a) == Fraction(b)


def _probe_points(box: Box) -> Iterator[dict[str, float]]:
    """Points of a leaf at which to look for a numeric difference: its corners, its point, and the floats next
    to its ends (where rounding classes change)."""
    yield box.point()
    yield from box.corners(box.names)
    for n, lo, hi in box.ranges:
        for k in (float_key(lo) + 1, float_key(hi) - 1):
            if float_key(lo) <= k <= float_key(hi):
                env = box.point()
                env[n] = float_from_key(k)
                yield env


def _difference(code: dict, other: Mapping, box: Box) -> tuple[dict[str, float], Any, Fraction, Fraction] | None:
    """A point of the leaf, an output, and the two probabilities there, where the laws differ numerically."""
    for env in _probe_points(box):
        for y in set(code) | set(other):
            a, b = poly_value(code.get(y, 0), env), poly_value(other.get(y, 0), env)
            if a != b:
                return env, y, a, b
    return None


def _inside(box: Box, valid: Mapping[str, tuple[float, float]]) -> str:
    """"in", "out" or "both": where the leaf lies with respect to the valid ranges."""
    inside = all(float_key(valid[n][0]) <= float_key(lo) and float_key(hi) <= float_key(valid[n][1])
                 for n, lo, hi in box.ranges)
    if inside:
        return "in"
    disjoint = any(float_key(hi) < float_key(valid[n][0]) or float_key(lo) > float_key(valid[n][1])
                   for n, lo, hi in box.ranges)
    return "out" if disjoint else "both"


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
    return Box(tuple((n, max(lo, valid[n][0], key=float_key), min(hi, valid[n][1], key=float_key))
                     for n, lo, hi in box.ranges))


def explore_spec(spec: Any, build: Callable[[dict], Any], *, deep: bool = False, budget: int = 200_000,
                 region_budget: int = 2_000) -> UniversalReport:
    """Explore ``spec`` (whose ``universal`` field is set) with ``build(params)`` constructing the code under test;
    ``budget`` bounds the paths of one law, ``region_budget`` the runs of one base."""
    universal = spec.universal
    bases = list(universal.bases(deep))
    floats = tuple(sorted(universal.floats(bases[0]))) if bases else ()
    report = UniversalReport(spec.name, floats)
    for base in bases:
        valid = dict(universal.floats(base))
        names = tuple(sorted(valid))
        space = {n: _WHOLE_LINE for n in names}
        fixed = {k: v for k, v in base.items() if k not in valid}
        try:
            leaves, unexplored = explore_regions(_run_base(spec, build, fixed, names, budget), space,
                                                 budget=region_budget)
        except EnumerationBudgetExceeded as e:
            report.reasons.append(f"at {fixed}: a law needs more than {budget} paths ({e})")
            for c in UNIVERSAL_CLAUSES:
                report.clauses[c].open.append((Box.of(space), f"a law needs more than {budget} paths"))
            continue
        report.bases += 1
        report.leaves += len(leaves)
        for box, why in unexplored:
            for c in UNIVERSAL_CLAUSES:
                report.clauses[c].open.append((box, why))
            if _inside(box, valid) != "out":
                report.witnesses.append({**fixed, **_clip(box, valid).point()})
        for leaf in leaves:
            _judge_leaf(report, leaf, valid, fixed)
    return report


def _judge_leaf(report: UniversalReport, leaf: Leaf, valid: Mapping[str, tuple[float, float]], fixed: dict
                ) -> None:
    box, result = leaf.box, leaf.result
    where = _inside(box, valid)
    pre = report.clauses["precondition.regions"]
    if isinstance(result, _Rejected):
        if where == "out":
            pre.proved.append(box)
        else:
            point = {**fixed, **_clip(box, valid).point()}
            pre.failed.append((box, point, f"rejects valid parameters: {result.error}"))
            report.witnesses.append(point)
        return
    if where != "in":
        point = {**fixed, **_outside_point(box, valid)}
        pre.failed.append((box, point, "accepts parameters outside the spec's valid ranges"))
        report.witnesses.append(point)
        if where == "out":
            return
    else:
        pre.proved.append(box)
    box = _clip(box, valid)
    law = report.clauses["function.law"]
    same = None
    if result.reference is not None:
        if all(_same_law(result.laws[x], result.reference[x]) for x in result.laws):
            same = "reference"
        else:
            for name, other in result.admissible:
                if all(_same_law(result.laws[x], other[x]) for x in result.laws):
                    same = name
                    break
    if same is None and result.reference is not None and box.size() == 1:
        if all(_difference(result.laws[x], result.reference[x], box) is None for x in result.laws):
            same = "reference"  # one parameter value: the probabilities are equal numbers there
    if same is not None:
        law.proved.append(box)
    elif result.reference is None:
        law.open.append((box, "the spec states no reference law"))
    else:
        for x in result.laws:
            diff = _difference(result.laws[x], result.reference[x], box)
            if diff is not None:
                env, y, a, b = diff
                point = {**fixed, **env}
                law.failed.append((box, point, f"at {_show_env(env)}: P[M({x!r}) = {y!r}] is {a}, the law says {b}"))
                report.witnesses.append(point)
                break
        else:
            law.open.append((box, "the code's probabilities are other float terms than the reference's, equal at "
                                  "every probed value"))
            report.witnesses.append({**fixed, **box.point()})
    sound = report.clauses["privacy.sound"]
    if same != "reference":
        sound.open.append((box, "the law is not the reference law term for term"))
    elif result.constant is None:
        sound.open.append((box, "the spec names no privacy constant"))
    elif leaf.escapes:
        sound.open.append((box, f"pinned to a point ({leaf.escapes[0].what} at {leaf.escapes[0].where})"))
    elif _same_term(result.claim, result.constant) or (box.size() == 1 and _same_value(result.claim,
                                                                                        result.constant)):
        sound.proved.append(box)
    else:
        sound.open.append((box, f"the map ({_term(result.claim)}) is not the spec's constant "
                                f"({_term(result.constant)}) term for term"))
        report.witnesses.append({**fixed, **box.point()})


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


def _show_env(env: Mapping[str, float]) -> str:
    return ", ".join(f"{k} = {v!r}" for k, v in env.items())


def floats_count(box: Box) -> int:
    return math.prod(floats_between(lo, hi) for _, lo, hi in box.ranges)
