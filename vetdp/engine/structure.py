"""Exact privacy of bit-vector mechanisms at production sizes, from the structure the code shows.

Enumerating a k-bit mechanism path by path costs 2^k paths per input, and the inputs of
``BitVectorDomain(max_weight=m, length=k)`` number Σ_{w≤m} C(k, w): at k = 128, m = 8 neither
is possible. Many mechanisms are products: output coordinate i is a function of input bit i
and of draws no other coordinate reads. This module *establishes* that structure from one run
of the real code, then decides the privacy loss exactly from per-coordinate laws.

**Symbolic run.** The mechanism's function runs once on a tuple of symbolic input bits,
under a randomness source whose every choice returns a symbolic draw. A symbolic value
(:class:`Sym`) is an exact table from the assignments of the variables it depends on to a
concrete value; Python operators on it (``^ & | == + - * <`` …) are computed table-wise.
Anything that would make control flow depend on a symbolic value — ``if``, ``bool()``,
``int()``, indexing by it, hashing it — stops the run with :class:`NotStructured`, as do
raw byte reads and foreign randomness. A run that completes made the same sequence of
choices for every assignment, so its tables are the function's exact input/draw → output
map for every input and every draw sequence.

**Replays.** Code that tests types (``isinstance(b, bool)``) could behave differently on a
symbolic bit than on a real one. So the prediction is replayed on concrete inputs with
concrete draw sequences (random, and all-first / all-last options): each replay must make
choices with the same option counts and give exactly the predicted output. A mismatch is
:class:`NotStructured`, never a verdict.

**Decision.** When every output coordinate depends on at most its own input bit and on draws
read by no other coordinate, the output law is the product of per-coordinate laws, and the
max-divergence of a product is the sum of the coordinates' max-divergences. The worst pair
of inputs in the domain (at most ``max_weight`` set bits each) is found by an exact dynamic
programme over coordinates on exact rational likelihood ratios; the loss is the logarithm of
that rational, compared with a claim by interval arithmetic
(:func:`vetdp.engine.divergence.compare_claim`).

**Forked runs.** Code that branches on its own draws (``q if b' else p``) has no such run.
At one concrete input, :func:`forked_coordinate_laws` follows each branch as a fork and reads
each output coordinate's exact law from a few plans of sides; the reading is tested (mixed
plans, concrete replays), not proved, so it serves findings only: a coordinate whose law
differs from a reference.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import functools
import hashlib
import itertools
import math
import operator
from collections.abc import Callable, Iterator, Sequence
from fractions import Fraction
from typing import Any

from vetdp.core.measurement import BitVectorDomain
from vetdp.engine.foreign import watch_foreign_randomness
from vetdp.sampling.sources import BranchingSource, ReplayDiverged, use_source

__all__ = ["NotStructured", "Sym", "CoordinateLaw", "ProductStructure", "discover_product_structure",
           "forked_coordinate_laws", "coordinate_laws_at", "probe_vectors", "viewed_by_coordinates",
           "WorstPair", "worst_pair", "MAX_TABLE", "RenyiWorst", "renyi_worst", "renyi_moment_bracket", "decide_renyi",
           "renyi_worst_of_laws", "decide_renyi_claim", "PLD", "coordinate_pld", "convolve",
           "privacy_loss_distribution", "pld_power", "pld_of_terms", "delta_at_ratio", "pair_classes", "worst_delta",
           "worst_delta_of_laws", "pair_terms", "joint_terms", "ExactWorkExceeded", "exact_work"]

MAX_TABLE = 4096  # entries of one symbolic value's table; larger dependence is not a product structure


class NotStructured(Exception):
    """The code's run did not show a product structure (the message says why)."""


@dataclasses.dataclass(frozen=True)
class _Var:
    index: int
    kind: str  # "input" or "draw"
    values: tuple[Any, ...]
    probs: tuple[Fraction, ...] | None  # None for input bits


class _Registry:
    def __init__(self) -> None:
        self.vars: list[_Var] = []

    def new(self, kind: str, values: Sequence[Any], probs: Sequence[Fraction] | None) -> _Var:
        var = _Var(len(self.vars), kind, tuple(values), None if probs is None else tuple(probs))
        self.vars.append(var)
        return var


class Sym:
    """A value that depends on symbolic variables: ``table[assignment]`` for every assignment of ``support``.

    ``support`` is a tuple of variable indices (ascending); an assignment gives each variable
    the index of one of its values.
    """

    __slots__ = ("registry", "support", "table")

    def __init__(self, registry: _Registry, support: tuple[int, ...], table: dict[tuple[int, ...], Any]):
        self.registry, self.support, self.table = registry, support, table

    @classmethod
    def of_var(cls, registry: _Registry, var: _Var) -> Sym:
        return cls(registry, (var.index,), {(i,): v for i, v in enumerate(var.values)})

    def at(self, env: dict[int, int]) -> Any:
        return self.table[tuple(env[v] for v in self.support)]

    def _lift(self, fn: Callable[..., Any], *others: Any) -> Any:
        operands = (self, *others)
        support = tuple(sorted({v for o in operands if isinstance(o, Sym) for v in o.support}))
        sizes = [len(self.registry.vars[v].values) for v in support]
        total = 1
        for s in sizes:
            total *= s
        if total > MAX_TABLE:
            raise NotStructured(f"a value depends on {len(support)} random or input variables jointly "
                                f"({total} cases); not a product of small coordinates")
        table = {}
        for assignment in itertools.product(*(range(s) for s in sizes)):
            env = dict(zip(support, assignment, strict=True))
            args = [o.at(env) if isinstance(o, Sym) else o for o in operands]
            result = fn(*args)
            if isinstance(result, Sym):
                raise NotStructured("an operation returned a symbolic value from concrete ones")
            table[assignment] = result
        return Sym(self.registry, support, table)._reduced()

    def _reduced(self) -> Any:
        """Drop variables the table does not depend on; a constant table becomes its value."""
        support, table = self.support, self.table
        for position in reversed(range(len(support))):
            groups: dict[tuple[int, ...], list] = {}
            constant = True
            for key, value in table.items():
                rest = key[:position] + key[position + 1:]
                seen = groups.setdefault(rest, [])
                if seen and not _same(seen[0], value):
                    constant = False
                    break
                seen.append(value)
            if constant:
                table = {k[:position] + k[position + 1:]: v for k, v in table.items()}
                support = support[:position] + support[position + 1:]
        if not support:
            return table[()]
        return Sym(self.registry, support, table)

    # control flow on a symbolic value is not a product structure; a forked run (:func:`forked_coordinate_laws`)
    # takes one branch and records the condition
    def __bool__(self) -> bool:
        forks = _FORKS.get()
        if forks is None:
            raise NotStructured(f"control flow depends on {self._describe()} (an if, while, and/or, bool())")
        return forks.decide(self)

    def __index__(self) -> int:
        raise NotStructured(f"{self._describe()} is used as an index or converted to int")

    def __int__(self) -> int:
        raise NotStructured(f"{self._describe()} is converted to int")

    def __float__(self) -> float:
        raise NotStructured(f"{self._describe()} is converted to float")

    def __hash__(self) -> int:
        raise NotStructured(f"{self._describe()} is hashed (a dict key or set member)")

    def __iter__(self):
        raise NotStructured(f"{self._describe()} is iterated")

    def _describe(self) -> str:
        kinds = sorted({self.registry.vars[v].kind for v in self.support})
        return f"a value depending on {' and '.join(k + 's' for k in kinds)} {list(self.support)}"

    def __repr__(self) -> str:
        return f"Sym(support={self.support}, table={self.table})"


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


def _binary(op: Callable[[Any, Any], Any]) -> tuple[Callable, Callable]:
    def forward(self: Sym, other: Any) -> Any:
        return self._lift(op, other)

    def reverse(self: Sym, other: Any) -> Any:
        return self._lift(lambda a, b: op(b, a), other)

    return forward, reverse


for _name, _op in [("xor", operator.xor), ("and", operator.and_), ("or", operator.or_), ("add", operator.add),
                   ("sub", operator.sub), ("mul", operator.mul), ("mod", operator.mod),
                   ("floordiv", operator.floordiv), ("truediv", operator.truediv), ("pow", operator.pow),
                   ("lshift", operator.lshift), ("rshift", operator.rshift)]:
    _f, _r = _binary(_op)
    setattr(Sym, f"__{_name}__", _f)
    setattr(Sym, f"__r{_name}__", _r)
for _name, _op in [("eq", operator.eq), ("ne", operator.ne), ("lt", operator.lt), ("le", operator.le),
                   ("gt", operator.gt), ("ge", operator.ge)]:
    setattr(Sym, f"__{_name}__", _binary(_op)[0])
for _name, _op in [("invert", operator.invert), ("neg", operator.neg), ("pos", operator.pos), ("abs", abs)]:
    setattr(Sym, f"__{_name}__", (lambda op: lambda self: self._lift(op))(_op))


class _SymbolicSource(BranchingSource):
    """Every choice becomes a fresh symbolic draw; raw bytes stop the run."""

    lazy_uniforms = False  # every uniform draw is a symbolic one

    def __init__(self, registry: _Registry, concrete: bool = False):
        super().__init__()
        self.registry = registry
        self.concrete = concrete  # a symbolic probability refused at the first draw
        self.refused = False
        self.draws: list[_Var] = []

    def branch(self, outcomes: Sequence[tuple[Any, Fraction]]) -> Any:
        if self.concrete and any(getattr(type(p), "_vetdp_symbolic_", False) for _, p in outcomes):
            self.refused = True  # even if the code catches the exception
            raise NotStructured("a draw's probability is symbolic (the parameters are explored as regions)")
        # a symbolic probability (vetdp.engine.polynomial, a region of parameters) stays a polynomial
        live = [(v, p if getattr(type(p), "_vetdp_symbolic_", False) else Fraction(p)) for v, p in outcomes if p != 0]
        if not live:
            raise ValueError("branch() needs at least one outcome with positive probability")
        var = self.registry.new("draw", [v for v, _ in live], [p for _, p in live])
        self.draws.append(var)
        return Sym.of_var(self.registry, var)

    def branch_uniform(self, n: int) -> Any:
        var = self.registry.new("draw", list(range(n)), [Fraction(1, n)] * n)
        self.draws.append(var)
        return Sym.of_var(self.registry, var)

    def random_bytes(self, n: int) -> bytes:
        raise NotStructured("the code reads raw random bytes; only the sampler primitives' outcomes are symbolic")


@dataclasses.dataclass(frozen=True)
class CoordinateLaw:
    """Output coordinate ``i``: its law for each value of the input bits it depends on.

    ``inputs`` are the input coordinates it depends on (empty or ``(i,)`` in a product structure);
    ``laws[a]`` is the exact law of the coordinate when those bits take the values ``a``.
    """

    index: int
    inputs: tuple[int, ...]
    draws: tuple[int, ...]
    laws: dict[tuple[bool, ...], dict[Any, Fraction]]


@dataclasses.dataclass(frozen=True)
class ProductStructure:
    """The established structure of one mechanism: output = product of :attr:`coordinates`."""

    length: int
    coordinates: tuple[CoordinateLaw, ...]
    replays: int  # concrete replays that confirmed the symbolic prediction

    def law_of(self, x: Sequence[bool], y: Sequence[Any]) -> Fraction:
        """The exact probability of output ``y`` on input ``x``."""
        p = Fraction(1)
        for c in self.coordinates:
            p *= c.laws[tuple(bool(x[i]) for i in c.inputs)].get(y[c.index], Fraction(0))
        return p


def _coordinate_law(index: int, value: Any, registry: _Registry) -> CoordinateLaw:
    if not isinstance(value, Sym):
        return CoordinateLaw(index, (), (), {(): {value: Fraction(1)}})
    inputs = [v for v in value.support if registry.vars[v].kind == "input"]
    draws = [v for v in value.support if registry.vars[v].kind == "draw"]
    laws: dict[tuple[bool, ...], dict[Any, Fraction]] = {}
    for input_assignment in itertools.product((0, 1), repeat=len(inputs)):
        law: dict[Any, Fraction] = {}
        for draw_assignment in itertools.product(*(range(len(registry.vars[d].values)) for d in draws)):
            env = dict(zip(inputs, input_assignment, strict=True)) | dict(zip(draws, draw_assignment, strict=True))
            factors = [registry.vars[d].probs[k] for d, k in zip(draws, draw_assignment, strict=True)]
            # a product without the leading 1, a sum without the leading 0: symbolic probabilities stay small
            p = functools.reduce(operator.mul, factors) if factors else Fraction(1)
            y = value.at(env)
            law[y] = law[y] + p if y in law else p
        laws[tuple(bool(a) for a in input_assignment)] = law
    return CoordinateLaw(index, tuple(inputs), tuple(draws), laws)


def _outputs(result: Any) -> list[Any]:
    if hasattr(result, "tolist") and not isinstance(result, Sym):
        result = result.tolist()
    if not isinstance(result, (tuple, list)):
        raise NotStructured(f"the output is a {type(result).__name__}, not a sequence of coordinates")
    return list(result)


def _joined(value: Any) -> Any:
    """An output coordinate that is a tuple holding symbolic values (bit i of several reports) as one symbolic
    value whose table gives the tuple; anything else as it is."""
    if not isinstance(value, (tuple, list)) or not any(isinstance(v, Sym) for v in value):
        return value
    registry = next(v for v in value if isinstance(v, Sym)).registry
    support = tuple(sorted({i for v in value if isinstance(v, Sym) for i in v.support}))
    sizes = [len(registry.vars[i].values) for i in support]
    if math.prod(sizes) > MAX_TABLE:
        raise NotStructured(f"an output coordinate depends on {len(support)} random or input variables jointly "
                            f"({math.prod(sizes)} cases)")
    table = {}
    for assignment in itertools.product(*(range(size) for size in sizes)):
        env = dict(zip(support, assignment, strict=True))
        table[assignment] = tuple(v.at(env) if isinstance(v, Sym) else v for v in value)
    return Sym(registry, support, table)._reduced()


def _replay(fn: Callable[[Any], Any], x: tuple[bool, ...], choices: list[int], draws: list[_Var]) -> list[Any]:
    source = BranchingSource(prefix=choices)
    source.track_probability = False  # only the output matters
    with use_source(source):
        try:
            out = _outputs(fn(x))
        except ReplayDiverged:
            pass  # reported below, whatever the code did with it
    if isinstance(source.halted, ReplayDiverged):
        raise NotStructured(f"on the concrete input {x} the code drew another sequence than the symbolic run: "
                            f"{source.halted}")
    made = [options for _, options in source.trail]
    expected = [len(d.values) for d in draws]
    if made != expected:
        raise NotStructured(f"on the concrete input {x} the code made choices with option counts {made[:8]}…, "
                            f"the symbolic run {expected[:8]}…: it behaves differently on symbolic values")
    return out


@contextlib.contextmanager
def _no_foreign_randomness(function: Callable[[Any], Any]) -> Iterator[None]:
    """NotStructured when the code draws randomness that does not go through the sampler primitives (the reason
    given first, before any other the block found)."""
    failure = None
    with watch_foreign_randomness(function, scan_heap=False) as foreign:
        try:
            yield
        except NotStructured as e:
            failure = e
    if foreign.used:
        raise NotStructured(f"the code draws foreign randomness ({', '.join(foreign.sources)})") from failure
    if failure is not None:
        raise failure


def _symbolic_call(function: Callable[[Any], Any], argument: Any, source: _SymbolicSource, length: int) -> list[Any]:
    """The outputs of ``function(argument)`` under the symbolic ``source`` (NotStructured for anything else than
    ``length`` coordinates; the caller watches for foreign randomness)."""
    with use_source(source):
        try:
            result = function(argument)
        except NotStructured:
            raise
        except Exception as e:  # noqa: BLE001 - any failure on symbolic values means: not established
            raise NotStructured(f"the symbolic run raised {type(e).__name__}: {e}") from e
    outputs = [_joined(o) for o in _outputs(result)]
    if len(outputs) != length:
        raise NotStructured(f"the output has {len(outputs)} coordinates, the input {length}")
    return outputs


def _test_plan(seed: int) -> Callable[[int], int]:
    """pick(n) in [0, n): a seeded test plan from SHAKE-256, not a random.Random (the caller may watch those)."""
    counter = itertools.count()
    words: Iterator[int] = iter(())

    def pick(n: int) -> int:
        nonlocal words
        word = next(words, None)
        if word is None:
            block = hashlib.shake_256(f"{seed}/{next(counter)}".encode()).digest(8 * 1024)
            words = (int.from_bytes(block[i:i + 8], "big") for i in range(0, len(block), 8))
            word = next(words)
        return word % n

    return pick


def discover_product_structure(function: Callable[[Any], Any], length: int, *, replays: int = 32,
                               seed: int = 0, at: Any = None) -> ProductStructure:
    """Run ``function`` once symbolically on ``length`` input bits and establish its product structure.

    ``function`` is the mechanism's function *after* its domain check (``Measurement.function``).
    ``at``: one concrete input instead of symbolic bits (code that branches on its input bits, e.g.
    ``bool(b)``): only the draws are symbolic, every coordinate's law is that input's, and the
    replays use that input.
    Raises :class:`NotStructured` when the run shows no product structure, foreign randomness is
    used, or a concrete replay disagrees with the symbolic prediction.
    """
    registry = _Registry()
    inputs = [registry.new("input", (False, True), None) for _ in range(length)] if at is None else []
    source = _SymbolicSource(registry)
    with _no_foreign_randomness(function):
        outputs = _symbolic_call(function, tuple(Sym.of_var(registry, v) for v in inputs) if at is None else at,
                                 source, length)
    coordinates = tuple(_coordinate_law(i, v, registry) for i, v in enumerate(outputs))
    owner: dict[int, int] = {}
    for c in coordinates:
        if any(j != c.index for j in c.inputs):
            raise NotStructured(f"output coordinate {c.index} depends on input bits {list(c.inputs)}, not only its own")
        for d in c.draws:
            if d in owner:
                raise NotStructured(f"output coordinates {owner[d]} and {c.index} read the same draw")
            owner[d] = c.index
    draws = source.draws
    pick = _test_plan(seed)
    plans = [([0] * length, [0] * len(draws)), ([1] * length, [len(d.values) - 1 for d in draws])]
    plans += [([pick(2) for _ in range(length)], [pick(len(d.values)) for d in draws])
              for _ in range(max(0, replays - 2))]
    for bits, choices in plans:
        x = tuple(bool(b) for b in bits) if at is None else at
        env = {v.index: b for v, b in zip(inputs, bits, strict=True)} if at is None else {}
        env |= {d.index: k for d, k in zip(draws, choices, strict=True)}
        predicted = [o.at(env) if isinstance(o, Sym) else o for o in outputs]
        actual = _replay(function, x, choices, draws)
        if len(actual) != len(predicted) or any(not _same(a, p) for a, p in zip(actual, predicted, strict=False)):
            raise NotStructured(f"on the concrete input {x} the output differs from the symbolic prediction: "
                                "the code behaves differently on symbolic values")
    return ProductStructure(length, coordinates, len(plans))


# ------------------------------------------------------------------ forked runs: code branching on its own draws

MAX_FORK_RUNS = 1024  # runs of the code one forked reading may make (a count of work, never a time)
MAX_JOINT_BRANCHES = 4  # branches one output coordinate's law may depend on together (2^4 runs for it)


@dataclasses.dataclass(frozen=True)
class _Fork:
    """One branch on a symbolic value: the value's truth for each assignment of ``support``, and the side taken."""

    support: tuple[int, ...]
    truth: dict[tuple[int, ...], bool]
    outcome: bool

    def holds(self, env: dict[int, int]) -> bool:
        return self.truth[tuple(env[v] for v in self.support)] == self.outcome


def _closure(variables: set[int], forks: Sequence[_Fork], by_var: dict[int, list[int]]
             ) -> tuple[tuple[int, ...], list[int]]:
    """The variables linked to ``variables`` through the forks' conditions, and the indices of those forks
    (``by_var``: the forks whose condition reads each variable)."""
    variables, taken = set(variables), set()
    todo = list(variables)
    while todo:
        for j in by_var.get(todo.pop(), ()):
            if j not in taken:
                taken.add(j)
                for v in forks[j].support:
                    if v not in variables:
                        variables.add(v)
                        todo.append(v)
    return tuple(sorted(variables)), sorted(taken)


def _by_var(forks: Sequence[_Fork]) -> dict[int, list[int]]:
    index: dict[int, list[int]] = {}
    for j, f in enumerate(forks):
        for v in f.support:
            index.setdefault(v, []).append(j)
    return index


def _consistent(registry: _Registry, variables: tuple[int, ...], forks: Sequence[_Fork]) -> Iterator[dict[int, int]]:
    """Every assignment of ``variables`` that meets the conditions of ``forks`` (all within ``variables``)."""
    sizes = [len(registry.vars[v].values) for v in variables]
    if math.prod(sizes) > MAX_TABLE:
        raise NotStructured(f"branches link {len(variables)} random variables ({math.prod(sizes)} cases)")
    for assignment in itertools.product(*(range(s) for s in sizes)):
        env = dict(zip(variables, assignment, strict=True))
        if all(f.holds(env) for f in forks):
            yield env


def _mass(registry: _Registry, env: dict[int, int]) -> Any:
    # a product without the leading 1: a symbolic probability of one draw stays the draw's own object
    return functools.reduce(operator.mul, (registry.vars[v].probs[i] for v, i in env.items())) if env else Fraction(1)


def _exact(p: Any) -> Any:
    """A probability in a form compared by ``==``: a Fraction, or a symbolic probability (a polynomial in the
    parameters, :mod:`vetdp.engine.polynomial`) multiplied out, so that two equal for every parameter value of the
    region compare equal (and a constant one is its Fraction). Never a comparison decided on the region."""
    if not getattr(type(p), "_vetdp_symbolic_", False):
        return Fraction(p)
    terms = p.expanded()
    if all(not m for m in terms):
        return terms.get((), Fraction(0))
    return frozenset(terms.items())


def _point_value(p: Any) -> Fraction:
    """A probability's exact value; a symbolic one's at the region's point (its sides' float terms, rounded by the
    code, sum to 1 there but not as polynomials)."""
    return p.at() if getattr(type(p), "_vetdp_symbolic_", False) else Fraction(p)


def _law_key(law: dict[Any, Any]) -> frozenset:
    """A law in a form compared by ``==`` (:func:`_exact` of every probability, outcomes of probability 0 dropped)."""
    return frozenset((y, q) for y, q in ((y, _exact(p)) for y, p in law.items()) if q != 0)


class _Forks:
    """The branch plan of one forked run: fork number j, counted in the order the code reaches them, takes True
    when j is in ``flips``, else False. A branch that the earlier forks leave one way to go is not a fork."""

    def __init__(self, registry: _Registry, flips: frozenset[int], limit: int):
        self.registry, self.flips, self.limit = registry, flips, limit
        self.forks: list[_Fork] = []
        self.by_var: dict[int, list[int]] = {}

    def decide(self, value: Sym) -> bool:
        if any(self.registry.vars[v].kind != "draw" for v in value.support):
            raise NotStructured(f"control flow depends on {value._describe()}; forked runs take concrete inputs")
        truth = {a: bool(v) for a, v in value.table.items()}
        variables, taken = _closure(set(value.support), self.forks, self.by_var)
        sides = {truth[tuple(env[v] for v in value.support)]
                 for env in _consistent(self.registry, variables, [self.forks[j] for j in taken])}
        if len(sides) == 1:
            return sides.pop()
        if len(self.forks) >= self.limit:
            raise NotStructured(f"the code branches on more than {self.limit} random values")
        fork = _Fork(value.support, truth, len(self.forks) in self.flips)
        for v in fork.support:
            self.by_var.setdefault(v, []).append(len(self.forks))
        self.forks.append(fork)
        return fork.outcome


_FORKS: contextvars.ContextVar[_Forks | None] = contextvars.ContextVar("vetdp_structure_forks", default=None)


@dataclasses.dataclass(frozen=True)
class _ForkedRun:
    """One run of the code along one branch plan: its draws, its outputs (symbolic in the draws) and its forks."""

    registry: _Registry
    draws: list[_Var]
    outputs: list[Any]
    forks: list[_Fork]
    by_var: dict[int, list[int]]
    laws: dict[int, dict[Any, Fraction]] = dataclasses.field(default_factory=dict, compare=False)
    keys: dict[int, frozenset] = dataclasses.field(default_factory=dict, compare=False)

    def law(self, i: int) -> dict[Any, Fraction]:
        """Output coordinate i's exact law given that every fork of this run went its way."""
        if i not in self.laws:
            self.laws[i] = self._law(i)
        return self.laws[i]

    def key(self, i: int) -> frozenset:
        """:func:`_law_key` of :meth:`law` (laws are compared by it)."""
        if i not in self.keys:
            self.keys[i] = _law_key(self.law(i))
        return self.keys[i]

    def _law(self, i: int) -> dict[Any, Fraction]:
        value = self.outputs[i]
        if not isinstance(value, Sym):
            return {value: Fraction(1)}
        variables, taken = _closure(set(value.support), self.forks, self.by_var)
        law: dict[Any, Any] = {}
        total: Any = Fraction(0)
        for env in _consistent(self.registry, variables, [self.forks[j] for j in taken]):
            p, y = _mass(self.registry, env), value.at(env)
            law[y] = law[y] + p if y in law else p
            total += p
        if not taken:  # no branch constrains these draws: the marginal law itself
            return law
        total = _exact(total)
        if not isinstance(total, Fraction):  # P[forks] of symbolic probabilities: no division by a polynomial
            raise NotStructured(f"output bit {i}'s law given the branches taken is a ratio of polynomials in the "
                                "parameters")
        return law if total == 1 else {y: p / total for y, p in law.items()}

    def probability(self, indices: frozenset[int]) -> Fraction:
        """P[the forks ``indices`` go their way]; NotStructured when their conditions share variables with another
        fork (their probability then depends on it)."""
        support = set().union(*(self.forks[j].support for j in indices))
        variables, taken = _closure(support, self.forks, self.by_var)
        if set(taken) != set(indices):
            raise NotStructured(f"branches {sorted(indices)} share random values with branches "
                                f"{sorted(set(taken) - set(indices))}")
        return sum((_mass(self.registry, env) for env in
                    _consistent(self.registry, variables, [self.forks[j] for j in taken])), Fraction(0))

    def assignment(self, pick: Callable[[int], int]) -> dict[int, int]:
        """A test assignment of every draw that meets every fork's condition."""
        env: dict[int, int] = {}
        for fork in self.forks:
            if fork.support[0] in env:
                continue
            variables, taken = _closure(set(fork.support), self.forks, self.by_var)
            options = list(_consistent(self.registry, variables, [self.forks[t] for t in taken]))
            env |= options[pick(len(options))]
        for d in self.draws:
            env.setdefault(d.index, pick(len(d.values)))
        return env


def forked_coordinate_laws(function: Callable[[Any], Any], x: tuple[bool, ...], *, seed: int = 0,
                           mixes: int = 8, replays: int = 8, max_runs: int = MAX_FORK_RUNS, symbolic: bool = True
                           ) -> tuple[CoordinateLaw, ...]:
    """Each output coordinate's exact law on the concrete input ``x``, for code that branches on its own draws
    (RAPPOR's ``q if b' else p`` on its permanent bit b'), which one symbolic run cannot follow.

    Each branch on a symbolic value is a fork: a run follows one side of every fork (a plan), and the forks are
    told apart by the order the code reaches them. Each output coordinate is found to depend on the forks whose
    flip changes its law: read from 2·⌈log₂ n⌉ runs flipping the forks by the bits of their numbers when each
    coordinate depends on one fork alone (RAPPOR), else from one run per fork flipping it alone from either the
    all-False or the all-True plan (a coordinate reading two forks through ``and`` changes only from the latter).
    Its law is then the mixture over those forks' sides (at most :data:`MAX_JOINT_BRANCHES`), each side weighted by its
    exact probability.

    That reading assumes a coordinate's law depends on no other fork jointly. It is tested, not proved: ``mixes``
    runs with seeded random plans must give every coordinate the law the reading predicts, and ``replays``
    concrete replays (the draws chosen to meet a run's forks) must give that run's outputs. A failed test, a
    number of forks that changes with the plan, a fork's condition sharing draws with another's, or more than
    ``max_runs`` runs is :class:`NotStructured`. So a law returned here is evidence, and a coordinate whose law
    differs from a reference is a finding; agreement proves nothing for other inputs.

    A draw's probability may be symbolic (parameters explored as regions, :mod:`vetdp.engine.polynomial`): laws are
    then polynomials, compared multiplied out. ``symbolic`` False refuses such a draw at once (NotStructured), for
    callers that would pay every run of the reading on every region.
    """
    length = len(x)
    runs: dict[frozenset[int], _ForkedRun] = {}
    forks_per_run: list[int] = []

    def run(flips: frozenset[int]) -> _ForkedRun:
        if flips in runs:
            return runs[flips]
        if len(runs) >= max_runs:
            raise NotStructured(f"reading the branches needs more than {max_runs} runs")
        registry = _Registry()
        source = _SymbolicSource(registry, concrete=not symbolic)
        plan = _Forks(registry, flips, limit=max_runs)
        token = _FORKS.set(plan)
        try:
            outputs = _symbolic_call(function, x, source, length)
        finally:
            _FORKS.reset(token)
        if source.refused:
            raise NotStructured("a draw's probability is symbolic (the parameters are explored as regions)")
        if forks_per_run and len(plan.forks) != forks_per_run[0]:
            raise NotStructured(f"the code branches on {len(plan.forks)} random values along one plan and on "
                                f"{forks_per_run[0]} along another")
        forks_per_run.append(len(plan.forks))
        runs[flips] = _ForkedRun(registry, source.draws, outputs, plan.forks, plan.by_var)
        return runs[flips]

    pick = _test_plan(seed)
    # the code runs under a watch for foreign randomness (which slows every call down), laws are read outside it
    with _no_foreign_randomness(function):
        base = run(frozenset())
        n = forks_per_run[0]
        run(frozenset(range(n)))  # every coordinate's True side, when read by codes
        width = max(1, (n - 1).bit_length()) if n else 0
        coded = {(b, v): frozenset(j for j in range(n) if (j >> b) & 1 == v) for b in range(width) for v in (0, 1)}
        for flips in coded.values():
            run(flips)
        plans = [frozenset(j for j in range(n) if pick(2)) for _ in range(mixes)]
        for flips in plans:
            run(flips)
        for flips in [frozenset(), *plans][:max(1, replays)]:
            taken = runs[flips]
            env = taken.assignment(pick)
            expected = [o.at(env) if isinstance(o, Sym) else o for o in taken.outputs]
            actual = _replay(function, x, [env[d.index] for d in taken.draws], taken.draws)
            if len(actual) != len(expected) or any(not _same(a, e) for a, e in zip(actual, expected, strict=False)):
                raise NotStructured(f"on the concrete input {x} the output differs from the forked run's "
                                    "prediction: the code behaves differently on symbolic values")
    joint = _decoded(base, {key: runs[flips] for key, flips in coded.items()}, n, length)
    by_codes = joint is not None

    def representative(flips: frozenset[int]) -> frozenset[int]:
        """The run that stands for the sides ``flips`` of one coordinate's forks: itself, or (read by codes, one
        fork per coordinate) the run flipping every fork."""
        return frozenset(range(n)) if by_codes and flips else flips

    if joint is None:  # read fork by fork (each flipped alone, and each unflipped alone), then each side
        every = frozenset(range(n))
        with _no_foreign_randomness(function):
            flipped = [(run(frozenset({j})), base) for j in range(n)]
            flipped += [(run(every - {j}), runs[every]) for j in range(n)]
        joint = _by_single_flips(base, flipped, length)
        more = {flips for i in range(length)
                for flips in [*_sides(joint[i]), *(plan & frozenset(joint[i]) for plan in plans)]}
        with _no_foreign_randomness(function):
            for flips in sorted(more - runs.keys(), key=sorted):
                run(flips)
    checked = [*plans, *coded.values()]

    laws = []
    for i in range(length):
        for flips in checked:
            if runs[flips].key(i) != runs[representative(flips & frozenset(joint[i]))].key(i):
                raise NotStructured(f"output bit {i}'s law changes with a combination of branches on random "
                                    "values that no single branch changes")
        law: dict[Any, Fraction] = {}
        weights = Fraction(0)
        for flips in _sides(joint[i]):
            taken = runs[representative(flips)]
            weight = taken.probability(frozenset(joint[i])) if joint[i] else Fraction(1)
            weights += weight
            for y, p in taken.law(i).items():
                law[y] = law.get(y, Fraction(0)) + weight * p
        if _point_value(weights) != 1:
            raise NotStructured(f"the sides of output bit {i}'s branches have probabilities summing to {weights}")
        laws.append(CoordinateLaw(i, (), (), {(): law}))
    return tuple(laws)


def _sides(forks: tuple[int, ...]) -> list[frozenset[int]]:
    """Every choice of sides of ``forks``, as the set of those taking True."""
    return [frozenset(j for j, side in zip(forks, chosen, strict=True) if side)
            for chosen in itertools.product((False, True), repeat=len(forks))]


def _decoded(base: _ForkedRun, coded: dict[tuple[int, int], _ForkedRun], n: int, length: int
             ) -> list[tuple[int, ...]] | None:
    """Each coordinate's fork, read from 2·⌈log₂ n⌉ runs: run (b, v) flips the forks whose bit b is v, so a
    coordinate whose law depends on fork j alone changes in exactly one run of each pair, which spells j. None
    when some coordinate shows another pattern (several forks, or forks linked through shared draws): then the
    forks are read one by one."""
    width = len(coded) // 2
    joint: list[tuple[int, ...]] = []
    for i in range(length):
        law = base.key(i)
        pattern = [(coded[(b, 0)].key(i) != law, coded[(b, 1)].key(i) != law) for b in range(width)]
        if not any(moved for pair in pattern for moved in pair):
            joint.append(())
            continue
        if any(pair not in ((True, False), (False, True)) for pair in pattern):
            return None
        j = sum(1 << b for b, pair in enumerate(pattern) if pair[1])
        if j >= n or _closure(set(base.forks[j].support), base.forks, base.by_var)[1] != [j]:
            return None
        joint.append((j,))
    return joint


def _by_single_flips(base: _ForkedRun, flipped: list[tuple[_ForkedRun, _ForkedRun]], length: int
                     ) -> list[tuple[int, ...]]:
    """Each coordinate's forks: those whose flip alone changes its law, from the run taking every False side or from
    the one taking every True side (``flipped``: n pairs (run, the run it flips from) for each), with the forks
    their draws link them to."""
    n = len(flipped) // 2
    joint = []
    for i in range(length):
        own = {t % n for t, (run, start) in enumerate(flipped) if run.key(i) != start.key(i)}
        if own:
            own.update(_closure(set().union(*(base.forks[j].support for j in own)), base.forks, base.by_var)[1])
        if len(own) > MAX_JOINT_BRANCHES:
            raise NotStructured(f"output bit {i}'s law depends on {len(own)} branches on random values")
        joint.append(tuple(sorted(own)))
    return joint


def viewed_by_coordinates(function: Callable[[Any], Any], coordinates: Callable[[Any], Sequence[Any]], x: Any
                          ) -> Sequence[Any]:
    """``coordinates(function(x))``: the output as one value per input bit (a spec's ``Universal.coordinates`` at
    its parameters, e.g. bit i of every report), for :func:`functools.partial`."""
    return coordinates(function(x))


def probe_vectors(domain: BitVectorDomain) -> list[tuple[bool, ...]]:
    """Concrete inputs at which to read code that branches on its input bits: every bit 0 (each output bit's law
    for input bit 0), the first min(m, k) bits 1 and the last min(m, k) bits 1 (their laws for input bit 1). A bit
    between them is never read at input bit 1 here. When the weight m allows every other bit set (⌈k/2⌉ <= m < k),
    the two alternating vectors instead, which read every bit at both values. Either way other inputs are not read,
    so agreement proves nothing; only a difference is a finding."""
    k, m = domain.length, domain.max_weight
    if m is not None and k >= 2 and (k + 1) // 2 <= m < k:
        return [tuple(i % 2 == s for i in range(k)) for s in (0, 1)]
    ones = k if m is None else min(m, k)
    return list(dict.fromkeys([(False,) * k, (True,) * ones + (False,) * (k - ones),
                               (False,) * (k - ones) + (True,) * ones]))


def coordinate_laws_at(function: Callable[[Any], Any], x: tuple[bool, ...], *, replays: int = 32,
                       symbolic_forks: bool = True) -> tuple[CoordinateLaw, ...]:
    """Each output coordinate's law on the concrete input ``x``: from one symbolic run over the draws, or, when
    the code branches on its draws, from forked runs (:func:`forked_coordinate_laws`; ``symbolic_forks`` False:
    refused at once when a draw's probability is symbolic). NotStructured when neither reads it."""
    try:
        return discover_product_structure(function, len(x), at=x, replays=replays).coordinates
    except NotStructured as e:
        try:
            return forked_coordinate_laws(function, x, symbolic=symbolic_forks)
        except NotStructured as forked:
            raise NotStructured(f"{e}; forked runs: {forked}") from forked


def _max_ratio(p: dict[Any, Fraction], q: dict[Any, Fraction]) -> tuple[Fraction | None, Any]:
    """max_y p(y)/q(y) and its argmax; None for +inf (p puts mass where q has none)."""
    best, arg = Fraction(0), None
    for y, py in p.items():
        if py == 0:
            continue
        qy = q.get(y, Fraction(0))
        if qy == 0:
            return None, y
        if py / qy > best:
            best, arg = py / qy, y
    return best, arg


@dataclasses.dataclass(frozen=True)
class WorstPair:
    """The largest likelihood ratio between the output laws of two inputs of the domain, exactly.

    ``ratio`` is None for +inf (an output one input can give and the other cannot).
    """

    ratio: Fraction | None
    x: tuple[bool, ...]
    x_prime: tuple[bool, ...]
    y: tuple[Any, ...]
    p: Fraction  # P[M(x) = y]
    q: Fraction  # P[M(x') = y]


def worst_pair(structure: ProductStructure, domain: BitVectorDomain) -> WorstPair:
    """max over x, x' in ``domain`` and outputs y of P[M(x)=y] / P[M(x')=y], with a witness.

    Exact: coordinates with the same four per-bit-pair ratios form one group; a dynamic
    programme over groups, whose state is the weights of x and x' so far, keeps for each state
    the largest product of ratios (rationals; None is +inf). A group of n coordinates offers
    every split into a (1,0)- and b (0,1)-coordinates, a + b <= n, the rest (0,0). A pair of
    equal bits compares a law with itself (ratio 1), so setting both bits never helps.
    """
    k = structure.length
    if domain.length is not None and domain.length != k:
        raise ValueError(f"domain length {domain.length} differs from the structure's {k}")
    cap = k if domain.max_weight is None else min(domain.max_weight, k)
    pairs = ((True, False), (False, True), (False, False))
    groups: dict[tuple, list[int]] = {}
    witness: dict[int, dict[tuple[bool, bool], Any]] = {}
    for c in structure.coordinates:
        row, arg = [], {}
        for b, b2 in pairs:
            ratio, y = _max_ratio(c.laws[(b,) if c.inputs else ()], c.laws[(b2,) if c.inputs else ()])
            row.append(ratio)
            arg[(b, b2)] = y
        groups.setdefault(tuple(row), []).append(c.index)
        witness[c.index] = arg

    best_ratio, best_splits = _maximise(list(groups.items()), cap)
    x, x2, y = [False] * k, [False] * k, [None] * k
    for members, (a, b) in zip(groups.values(), best_splits, strict=True):
        for j, i in enumerate(members):
            bit_pair = pairs[0] if j < a else pairs[1] if j < a + b else pairs[2]
            x[i], x2[i] = bit_pair
            y[i] = witness[i][bit_pair]
    return WorstPair(best_ratio, tuple(x), tuple(x2), tuple(y), structure.law_of(x, y), structure.law_of(x2, y))


# ------------------------------------------------------------------ the work of exact arithmetic

class ExactWorkExceeded(Exception):
    """A decision's exact rational arithmetic needed more than its work budget (:func:`exact_work`)."""

    def __init__(self, budget: int):
        super().__init__(f"the exact rational arithmetic needed more than {budget:,} word operations (--exact-work; "
                         "an operation on rationals of n and m 64-bit words counts n·m)")
        self.budget = budget


_METER: contextvars.ContextVar[list[int] | None] = contextvars.ContextVar("vetdp_exact_work", default=None)


@contextlib.contextmanager
def exact_work(budget: int) -> Iterator[Callable[[], int]]:
    """Bound the exact arithmetic of the products' decisions inside the block (the worst pair's and Rényi moments'
    programme, the convolution of privacy-loss distributions, δ at a ratio) by ``budget`` word operations: an
    operation on rationals of n and m 64-bit words (numerator and denominator) counts n·m + 1 (a sum or product
    of rationals with its gcd counts once per operation it makes), so the count follows the cost of the big-integer
    arithmetic and is the same on every machine. Past it the operation raises
    :class:`ExactWorkExceeded`. Outside such a block nothing is counted. Yields a function returning the work
    spent so far."""
    meter = [0, budget]
    token = _METER.set(meter)
    try:
        yield lambda: meter[0]
    finally:
        _METER.reset(token)


def _words(r: Factor) -> int:
    return 1 if r is None else (r.numerator.bit_length() + r.denominator.bit_length()) // 64 + 1


def _charge(r: Factor, s: Factor) -> None:
    """Count one operation on ``r`` and ``s`` (of n and m words) as n·m + 1 against the current :func:`exact_work`
    budget."""
    meter = _METER.get()
    if meter is not None:
        meter[0] += _words(r) * _words(s) + 1
        if meter[0] > meter[1]:
            raise ExactWorkExceeded(meter[1])


# ------------------------------------------------------------------ the worst pair of a product, by groups

Factor = Fraction | None  # a per-coordinate factor >= 0; None is +inf


def _times(r: Factor, s: Factor) -> Factor:
    _charge(r, s)
    return None if r is None or s is None else r * s


def _powers(r: Factor, n: int) -> list[Factor]:
    """[r^0, r^1, ..., r^n], each from the one before."""
    out: list[Factor] = [Fraction(1)]
    for _ in range(n):
        out.append(_times(out[-1], r))
    return out


def _better(a: Factor, b: Factor) -> bool:  # a > b, None = +inf
    _charge(a, b)
    return b is not None and (a is None or a > b)


def _maximise(groups: list[tuple[tuple, list[int]]], cap: int) -> tuple[Factor, tuple[tuple[int, int], ...]]:
    """max over splits of Π_g f10_g^a_g · f01_g^b_g with a_g + b_g <= n_g, Σ a_g <= cap, Σ b_g <= cap, exactly.

    ``groups`` lists ``((f10, f01, ...), members)``: the factor a coordinate of the group contributes
    when x's bit is 1 and x''s is 0 (f10) or the reverse (f01); equal bits contribute 1. Returns the
    largest product and, per group, the split (a_g, b_g) that attains it (a dynamic programme whose
    state is the weights (Σa, Σb) so far). The last group tries only the corners of its polytope
    {a <= A, b <= B, a + b <= n}: a product f10^a · f01^b is monotone in a and in b, so its largest value there
    is at a = 0, A or n − B with b as large or as small as allowed (:func:`_corners`)."""
    states: dict[tuple[int, int], tuple[Factor, tuple]] = {(0, 0): (Fraction(1), ())}
    for g, (row, members) in enumerate(groups):
        n = len(members)
        p10, p01 = _powers(row[0], min(n, cap)), _powers(row[1], min(n, cap))
        nxt: dict[tuple[int, int], tuple[Factor, tuple]] = {}
        last = g == len(groups) - 1
        for (w, w2), (r, splits) in states.items():
            big_a, big_b = min(n, cap - w), min(n, cap - w2)
            pairs = (_corners(n, big_a, big_b) if last else
                     ((a, b) for a in range(big_a + 1) for b in range(min(n - a, big_b) + 1)))
            for a, b in pairs:
                total = _times(_times(r, p10[a]), p01[b])
                key = (w + a, w2 + b)
                old = nxt.get(key)
                if old is None or _better(total, old[0]):
                    nxt[key] = (total, splits + ((a, b),))
        states = nxt
    return max(states.values(), key=lambda item: (item[0] is None, item[0] or 0))


def _corners(n: int, big_a: int, big_b: int) -> list[tuple[int, int]]:
    """The integer corners of {0 <= a <= big_a, 0 <= b <= big_b, a + b <= n} (big_a, big_b <= n), each once."""
    return list(dict.fromkeys([(0, 0), (big_a, 0), (0, big_b), (big_a, min(big_b, n - big_a)),
                               (min(big_a, n - big_b), big_b)]))


def _check_domain(structure: ProductStructure, domain: BitVectorDomain) -> int:
    """The weight cap of ``domain`` for pairs of inputs of ``structure``'s length."""
    k = structure.length
    if domain.length is not None and domain.length != k:
        raise ValueError(f"domain length {domain.length} differs from the structure's {k}")
    return k if domain.max_weight is None else min(domain.max_weight, k)


def _side_laws(c: CoordinateLaw, bit: bool) -> dict[Any, Fraction]:
    return c.laws[(bit,) if c.inputs else ()]


def _pair_of(structure: ProductStructure, groups: list[tuple[tuple, list[int]]],
             splits: Sequence[tuple[int, int]]) -> tuple[tuple[bool, ...], tuple[bool, ...]]:
    x, x2 = [False] * structure.length, [False] * structure.length
    for (_, members), (a, b) in zip(groups, splits, strict=True):
        for j, i in enumerate(members):
            if j < a:
                x[i] = True
            elif j < a + b:
                x2[i] = True
    return tuple(x), tuple(x2)


# ------------------------------------------------------------------ Rényi divergence of a product

def _alpha(alpha: Any) -> Fraction:
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float, Fraction)):
        raise TypeError(f"alpha={alpha!r} must be an int, float or Fraction, not {type(alpha).__name__}")
    if isinstance(alpha, float) and not math.isfinite(alpha):
        raise ValueError(f"alpha={alpha!r} must be a finite number in (1, inf)")
    a = Fraction(alpha)
    if not a > 1:
        raise ValueError(f"alpha={alpha!r} must be in (1, inf) (use worst_pair for alpha = inf)")
    return a


PairTerms = tuple[tuple[Fraction, Fraction, int], ...]  # (P(y), Q(y), how many outputs y share them)


def joint_terms(p: dict[Any, Fraction], q: dict[Any, Fraction]) -> PairTerms:
    """The distinct joint probabilities (P(y), Q(y)) over outputs y with P(y) > 0, with how many outputs share them:
    every divergence of P from Q is a function of these (a law of many equal probabilities has few)."""
    return pair_terms({0: p, 1: q}, [(0, 1)])[0][0]


def _ratio_power(alpha: Fraction, prec: int) -> Callable[[Fraction], tuple[Fraction, Fraction]]:
    """ratio -> rationals enclosing ratio^(α−1): exact for an integer α, else by directed rounding at ``prec`` bits
    (:func:`vetdp.arith.rounding.ln_bracket`, ``exp_bracket``); remembered per ratio, which pairs share."""
    from vetdp.arith.rounding import exp_enclosure, ln_bracket

    u = alpha - 1
    known: dict[Fraction, tuple[Fraction, Fraction]] = {}

    def power(ratio: Fraction) -> tuple[Fraction, Fraction]:
        if ratio not in known:
            if u.denominator == 1 or ratio == 1:
                exact = ratio ** u.numerator if u.denominator == 1 else Fraction(1)
                known[ratio] = (exact, exact)
            else:
                l_lo, l_hi = ln_bracket(ratio, prec)
                known[ratio] = (exp_enclosure(u * l_lo, prec)[0], exp_enclosure(u * l_hi, prec)[1])
        return known[ratio]

    return power


def _moment(terms: PairTerms, power: Callable[[Fraction], tuple[Fraction, Fraction]]) -> tuple[Factor, Factor]:
    """Rationals enclosing Σ_y P^α Q^(1−α) = Σ n·P·(P/Q)^(α−1) over ``terms``; (None, None) for +inf."""
    lo = hi = Fraction(0)
    for p, q, n in terms:
        if q == 0:
            return None, None
        _charge(p, q)
        f_lo, f_hi = power(p / q)
        lo, hi = lo + n * p * f_lo, hi + n * p * f_hi
    return lo, hi


def renyi_moment_bracket(p: dict[Any, Fraction], q: dict[Any, Fraction], alpha: Fraction,
                         prec: int) -> tuple[Factor, Factor]:
    """Rationals lo <= Σ_y p(y)^α q(y)^(1−α) <= hi (= exp((α−1)·D_α(p‖q))); (None, None) for +inf.

    Exact (lo == hi) for an integer α; otherwise each term p·(p/q)^(α−1) is enclosed by directed
    rounding at ``prec`` bits."""
    return _moment(joint_terms(p, q), _ratio_power(alpha, prec))


@dataclasses.dataclass(frozen=True)
class RenyiWorst:
    """The worst Rényi divergence of order α over every pair of inputs of a domain, enclosed exactly.

    ``lower <= max_{x, x'} Σ_y P[M(x)=y]^α P[M(x')=y]^(1−α) <= upper`` (None: +inf; equal for an
    integer α); ``x``, ``x_prime`` attain ``lower``. :meth:`truth` encloses D_α = ln(moment)/(α−1).
    """

    alpha: Fraction
    lower: Factor
    upper: Factor
    x: tuple[bool, ...]
    x_prime: tuple[bool, ...]
    prec: int

    @property
    def exact(self) -> bool:
        return self.lower == self.upper

    def truth(self) -> Callable[[int], tuple[Fraction, Fraction]] | None:
        """An enclosure prec -> (lo, hi) of the worst D_α (None: +inf), for
        :func:`vetdp.engine.divergence.compare_claim`. A non-integer α's moment bracket is that of
        :attr:`prec`; the logarithm is refined with the precision asked for."""
        from vetdp.arith.rounding import ln_bracket

        if self.lower is None:
            return None
        u, lower, upper = self.alpha - 1, self.lower, self.upper

        def enclose(prec: int) -> tuple[Fraction, Fraction]:
            lo = ln_bracket(lower, prec)[0] if lower != 1 else Fraction(0)
            hi = ln_bracket(upper, prec)[1] if upper != 1 else Fraction(0)
            return max(lo, Fraction(0)) / u, hi / u

        return enclose


def renyi_worst(structure: ProductStructure, domain: BitVectorDomain, alpha: Any, prec: int = 256) -> RenyiWorst:
    """The worst Rényi divergence D_α(M(x)‖M(x')) over x, x' in ``domain``, from the per-coordinate laws.

    The moment Σ_y P^α Q^(1−α) of a product is the product of the coordinates' moments (a coordinate
    whose two bits are equal contributes 1), so the worst pair maximises a product of per-coordinate
    factors under the weight cap: the dynamic programme of :func:`worst_pair`, run on the lower and on
    the upper ends of the coordinates' moment brackets (a product of non-negative factors is monotone
    in each, so the two maxima enclose the true one). Exact for an integer α.
    Preconditions: α a number in (1, inf); ``domain`` of the structure's length.
    """
    a = _alpha(alpha)
    cap = _check_domain(structure, domain)
    lows: dict[tuple, list[int]] = {}
    highs: dict[tuple, list[int]] = {}
    for c in structure.coordinates:
        one, zero = _side_laws(c, True), _side_laws(c, False)
        m10, m01 = renyi_moment_bracket(one, zero, a, prec), renyi_moment_bracket(zero, one, a, prec)
        lows.setdefault((m10[0], m01[0]), []).append(c.index)
        highs.setdefault((m10[1], m01[1]), []).append(c.index)
    low_groups, high_groups = list(lows.items()), list(highs.items())
    lower, splits = _maximise(low_groups, cap)
    upper, _ = _maximise(high_groups, cap)
    x, x2 = _pair_of(structure, low_groups, splits)
    return RenyiWorst(a, lower, upper, x, x2, prec)


def pair_terms(dists: dict[Any, dict[Any, Fraction]], pairs: list[tuple[Any, Any]] | None = None
               ) -> list[tuple[PairTerms, Any, Any]]:
    """For each ordered pair of ``pairs`` (None: every ordered pair of distinct inputs): the distinct joint
    probabilities (P_x(y), P_x'(y)) over outputs y with P_x(y) > 0, with their multiplicities, which determine every
    divergence of P_x from P_x' (:func:`joint_terms`). Pairs with the same terms are kept once (the first as the
    witness)."""
    keys = list(dists)
    chosen = pairs if pairs is not None else [(x, xp) for x in keys for xp in keys if x != xp]
    if not chosen:
        raise ValueError("pair_terms needs at least one pair of inputs")
    # every distinct probability numbered once: a law meets many others, and a Fraction's hash is costly where
    # a pair of ints' is not; each pair's terms are then counted over those numbers
    number: dict[Any, int] = {}
    coded = {x: {y: number.setdefault(p, len(number)) for y, p in dists[x].items()}
             for x in dict.fromkeys(x for pair in chosen for x in pair)}
    zero = number.setdefault(Fraction(0), len(number))
    values = list(number)
    positive = {x: [(y, i) for y, i in law.items() if values[i]] for x, law in coded.items()}
    seen: dict[PairTerms, tuple[Any, Any]] = {}
    for x, xp in chosen:
        other = coded[xp]
        counts: dict[tuple[int, int], int] = {}
        for y, i in positive[x]:
            key = (i, other.get(y, zero))
            counts[key] = counts.get(key, 0) + 1
        terms = tuple(sorted((values[i], values[j], n) for (i, j), n in counts.items()))
        seen.setdefault(terms, (x, xp))
    return [(terms, x, xp) for terms, (x, xp) in seen.items()]


def renyi_worst_of_laws(dists: dict[Any, dict[Any, Fraction]] | None, alpha: Any, prec: int = 256,
                        pairs: list[tuple[Any, Any]] | None = None,
                        terms: list[tuple[PairTerms, Any, Any]] | None = None) -> RenyiWorst:
    """The worst Rényi divergence D_α(P_x‖P_x') over ``pairs`` of enumerated laws (None: every ordered pair of
    distinct inputs), enclosed as :func:`renyi_worst` encloses it for a product: exact for an integer α.
    ``terms``: the pairs' :func:`pair_terms`, computed once for several orders (then ``dists`` is unused).
    Preconditions: α a number in (1, inf); at least one pair."""
    a = _alpha(alpha)
    power = _ratio_power(a, prec)
    lower: Factor = Fraction(0)
    upper: Factor = Fraction(0)
    witness = None
    for group, x, xp in (terms if terms is not None else pair_terms(dists or {}, pairs)):
        lo, hi = _moment(group, power)
        if lo is None:
            return RenyiWorst(a, None, None, x, xp, prec)
        if witness is None or lo > lower:
            lower, witness = lo, (x, xp)
        upper = max(upper, hi)
    assert witness is not None
    return RenyiWorst(a, lower, upper, witness[0], witness[1], prec)


def decide_renyi_claim(worst_at: Callable[[Fraction, int], RenyiWorst], alpha: Any, claim: float) -> Any:
    """Whether ``claim`` bounds the worst D_α that ``worst_at(α, prec)`` encloses: a
    :class:`vetdp.engine.divergence.Comparison`. A non-integer α is refined by doubling the moment precision
    until decided (up to 4096 bits)."""
    from vetdp.engine.divergence import Verdict, compare_claim

    a = _alpha(alpha)
    prec = 128
    while True:
        worst = worst_at(a, prec)
        cmp = compare_claim(claim, worst.truth(), max_prec=max(prec, 1024))
        if cmp.verdict is not Verdict.UNDECIDED or worst.exact or prec >= 4096:
            return cmp, worst
        prec *= 2


def decide_renyi(structure: ProductStructure, domain: BitVectorDomain, alpha: Any, claim: float) -> Any:
    """Whether an RDP claim ε̂(α) = ``claim`` bounds the worst D_α over ``domain``: a
    :class:`vetdp.engine.divergence.Comparison` (sound, unsound, or undecided at the precision limit)."""
    return decide_renyi_claim(lambda a, prec: renyi_worst(structure, domain, a, prec), alpha, claim)[0]


# ------------------------------------------------------------------ privacy-loss distributions of a product

PLD = dict[Factor, Fraction]  # likelihood ratio P/Q (None: Q = 0) -> its probability under P


def coordinate_pld(p: dict[Any, Fraction], q: dict[Any, Fraction]) -> PLD:
    """The privacy-loss distribution of one coordinate: ratio p(y)/q(y) -> Σ p(y) over outputs with that ratio."""
    out: PLD = {}
    for y, py in p.items():
        if py == 0:
            continue
        qy = q.get(y, Fraction(0))
        key = None if qy == 0 else py / qy
        out[key] = out.get(key, Fraction(0)) + py
    return out


def convolve(a: PLD, b: PLD, max_atoms: int = 100_000) -> PLD:
    """The PLD of a pair of independent coordinates: ratios multiply, probabilities multiply (exact).

    Raises :class:`NotStructured` when the result would have more than ``max_atoms`` atoms."""
    out: PLD = {}
    for r, p in a.items():
        for s, q in b.items():
            key = _times(r, s)
            _charge(p, q)  # the product, and again the sum
            _charge(p, q)
            out[key] = out.get(key, Fraction(0)) + p * q
            if len(out) > max_atoms:
                raise NotStructured(f"the privacy-loss distribution has more than {max_atoms} distinct losses")
    return out


def pld_power(c: PLD, n: int, max_atoms: int = 100_000) -> PLD:
    """The PLD of ``n`` independent coordinates that each have the PLD ``c``, exactly: by the multinomial theorem,
    the atom Π r_i^{n_i} gets probability n!/Π n_i! · Π p_i^{n_i} for every split n = Σ n_i over c's atoms (r_i, p_i),
    one term per split where convolving ``n`` times costs a pass over the growing distribution per coordinate.

    Raises :class:`NotStructured` when there are more than ``max_atoms`` splits."""
    if n < 0:
        raise ValueError(f"n={n} must be a count >= 0")
    atoms = list(c.items())
    if math.comb(n + len(atoms) - 1, max(len(atoms) - 1, 0)) > max_atoms:
        raise NotStructured(f"the privacy-loss distribution of {n} like coordinates has more than {max_atoms} atoms")
    ratios = [_powers(r, n) for r, _ in atoms]
    probabilities = [_powers(p, n) for _, p in atoms]
    out: PLD = {}

    def split(i: int, left: int, ratio: Factor, probability: Fraction) -> None:
        if i == len(atoms) - 1:
            key = _times(ratio, ratios[i][left])
            _charge(probability, probabilities[i][left])  # the product, and the sum
            _charge(probability, probabilities[i][left])
            out[key] = out.get(key, Fraction(0)) + probability * probabilities[i][left]
            return
        for take in range(left + 1):
            _charge(probability, probabilities[i][take])
            split(i + 1, left - take, _times(ratio, ratios[i][take]),
                  probability * probabilities[i][take] * math.comb(left, take))

    if atoms:
        split(0, n, Fraction(1), Fraction(1))
    return out


def privacy_loss_distribution(structure: ProductStructure, x: Sequence[bool], x_prime: Sequence[bool],
                              max_atoms: int = 100_000) -> PLD:
    """The exact privacy-loss distribution of M(x) against M(x'): the convolution of the coordinates'.

    Keys are likelihood ratios P[M(x)=y]/P[M(x')=y] (None: P[M(x')=y] = 0), values their probability
    under M(x); coordinates where x and x' agree contribute nothing (ratio 1 with probability 1). Coordinates
    with the same PLD are taken together (:func:`pld_power`), and a structure's PLDs are kept for its other
    clauses (read-only: callers must not change the returned dict)."""
    if len(x) != structure.length or len(x_prime) != structure.length:
        raise ValueError(f"x and x_prime must have length {structure.length}, got {len(x)} and {len(x_prime)}")
    key = (tuple(bool(b) for b in x), tuple(bool(b) for b in x_prime), max_atoms)
    cache = structure.__dict__.setdefault("_plds", {})  # frozen dataclass: a cache outside its fields
    if key in cache:
        return cache[key]
    alike: dict[tuple, tuple[PLD, int]] = {}
    for c in structure.coordinates:
        b, b2 = key[0][c.index], key[1][c.index]
        if c.inputs and b != b2:
            one = coordinate_pld(_side_laws(c, b), _side_laws(c, b2))
            same = tuple(sorted(one.items(), key=repr))
            alike[same] = (one, alike[same][1] + 1 if same in alike else 1)
    out: PLD = {Fraction(1): Fraction(1)}
    for one, n in alike.values():
        out = convolve(out, pld_power(one, n, max_atoms), max_atoms)
    cache[key] = out
    return out


def pld_of_terms(terms: PairTerms) -> PLD:
    """The privacy-loss distribution of a pair from its :func:`joint_terms`."""
    out: PLD = {}
    for p, q, n in terms:
        key = None if q == 0 else p / q
        out[key] = out.get(key, Fraction(0)) + n * p
    return out


def delta_at_ratio(pld: PLD, threshold: Fraction) -> Fraction:
    """δ at e^ε = ``threshold``: Σ_y max(0, P(y) − threshold·Q(y)) = Σ_r P(r)·max(0, 1 − threshold/r), exactly."""
    total = Fraction(0)
    for r, p in pld.items():
        _charge(r, p)  # the quotient, the product and the sum
        _charge(r, p)
        _charge(r, p)
        if r is None:
            total += p
        elif r > threshold:
            total += p * (1 - threshold / r)
    return total


def pair_classes(structure: ProductStructure, domain: BitVectorDomain,
                 max_classes: int = 10_000) -> list[tuple[tuple[bool, ...], tuple[bool, ...]]]:
    """Representative pairs (x, x') of ``domain`` whose PLDs dominate every pair's.

    Coordinates with identical laws form groups; a pair's PLD depends only on how many coordinates
    of each group it sets to (1,0) and to (0,1). Adding a differing coordinate never lowers any
    f-divergence (the smaller pair's laws are a marginal of the larger's, times a common factor), so
    only maximal splits are kept: every coordinate set, or both weights at the cap. Raises
    :class:`NotStructured` beyond ``max_classes`` classes."""
    cap = _check_domain(structure, domain)
    groups: dict[tuple, list[int]] = {}
    for c in structure.coordinates:
        if not c.inputs:
            continue
        key = tuple(sorted(((bit, tuple(sorted(_side_laws(c, bit).items(), key=repr))) for bit in (False, True)),
                           key=repr))
        groups.setdefault(key, []).append(c.index)
    members = list(groups.values())
    found: list[tuple[tuple[bool, ...], tuple[bool, ...]]] = []
    visited = [0]

    def walk(g: int, w: int, w2: int, free: bool, splits: tuple) -> None:
        visited[0] += 1
        if visited[0] > 100 * max_classes:
            raise NotStructured(f"too many ways to split {len(members)} groups of coordinates between input pairs")
        if g == len(members):
            if not free or (w == cap and w2 == cap):
                if len(found) >= max_classes:
                    raise NotStructured(f"more than {max_classes} classes of input pairs")
                found.append(_pair_of(structure, [((), m) for m in members], splits))
            return
        n = len(members[g])
        for a in range(min(n, cap - w) + 1):
            for b in range(min(n - a, cap - w2) + 1):
                walk(g + 1, w + a, w2 + b, free or a + b < n, splits + ((a, b),))

    walk(0, 0, 0, False, ())
    return found


def _check_epsilon(epsilon: Any) -> None:
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float, Fraction)) or not 0 <= epsilon < float("inf"):
        raise ValueError(f"epsilon={epsilon!r} must be a finite number in [0, inf)")


def worst_delta(structure: ProductStructure, domain: BitVectorDomain, epsilon: float,
                max_classes: int = 10_000) -> Callable[[int], tuple[Fraction, Fraction]]:
    """An enclosure prec -> (lo, hi) of max over x, x' in ``domain`` of δ(ε) = Σ_y max(0, P − e^ε Q).

    Exact PLDs of the dominating pair classes (:func:`pair_classes`), e^ε enclosed by directed rounding
    (δ decreases in e^ε). For :func:`vetdp.engine.divergence.compare_claim` with a claimed δ."""

    _check_epsilon(epsilon)
    plds = [privacy_loss_distribution(structure, x, x2) for x, x2 in pair_classes(structure, domain, max_classes)]
    eps = Fraction(epsilon)

    def enclose(prec: int) -> tuple[Fraction, Fraction]:
        return _delta_enclosure(plds, eps, prec)

    return enclose


def worst_delta_of_laws(dists: dict[Any, dict[Any, Fraction]] | None, epsilon: float,
                        pairs: list[tuple[Any, Any]] | None = None,
                        terms: list[tuple[PairTerms, Any, Any]] | None = None
                        ) -> Callable[[int], tuple[Fraction, Fraction]]:
    """An enclosure prec -> (lo, hi) of the worst δ(ε) = Σ_y max(0, P_x(y) − e^ε P_x'(y)) over ``pairs`` of
    enumerated laws (None: every ordered pair of distinct inputs), as :func:`worst_delta` for a product;
    ``terms`` as for :func:`renyi_worst_of_laws`."""

    _check_epsilon(epsilon)
    plds = [pld_of_terms(group) for group, _, _ in (terms if terms is not None else pair_terms(dists or {}, pairs))]
    eps = Fraction(epsilon)

    def enclose(prec: int) -> tuple[Fraction, Fraction]:
        return _delta_enclosure(plds, eps, prec)

    return enclose


def _delta_enclosure(plds: list, eps: Fraction, prec: int) -> tuple[Fraction, Fraction]:
    """(lo, hi) enclosing the largest δ(ε) over ``plds``, δ decreasing in e^ε. e^ε is enclosed for every ε
    (:func:`vetdp.arith.rounding.exp_enclosure`); an ε above the log of every finite ratio leaves the mass of the
    infinite ones alone, exactly (so an ε of thousands never needs e^ε)."""
    from vetdp.arith.rounding import exp_enclosure, ln_bracket

    if not plds:
        return Fraction(0), Fraction(0)
    top = max((r for p in plds for r in p if r is not None), default=None)
    if eps == 0:
        e_lo = e_hi = Fraction(1)
    elif top is None or top <= 1 or ln_bracket(top, 64)[1] <= eps:  # no finite ratio exceeds e^ε
        e_lo = e_hi = None
    else:
        e_lo, e_hi = exp_enclosure(eps, prec)
    if e_lo is None:
        mass = max(sum((pr for r, pr in p.items() if r is None), Fraction(0)) for p in plds)
        return mass, mass
    return max(delta_at_ratio(p, e_hi) for p in plds), max(delta_at_ratio(p, e_lo) for p in plds)
