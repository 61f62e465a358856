"""Exact laws of mechanisms with public randomness and keyed encodings (OLH, sketches, Hadamard response).

A hashing mechanism releases a public draw s with its report and reads its input x only through encodings
e = fn(key(s), x) (:mod:`vetdp.sampling.public`). Its loss is the worst over the public values of the loss given
them, and given them the law depends on x only through the encodings' values. This module *establishes* that
shape from one kind of run of the real code, then computes the conditional laws exactly.

**Sealed runs (shape "keyed").** The function (after its domain check) runs on a sealed input: a value on which
every operation raises :class:`NotEstablished` (==, hash, str, int, arithmetic, iteration, ...), so the input can
reach the code only as the ``value`` of :func:`~vetdp.sampling.public.keyed_encoding`. Public draws are sealed
tokens too: they may be keys of encodings and parts of the output, nothing else. The source conditions every
encoding of the input on a value the engine chooses (a *world*); secret draws are enumerated path by path, or,
when a run makes too many choices, run once with symbolic draws and read as a product of coordinates
(:mod:`vetdp.engine.structure`'s symbolic values). A run that completes shows, for every public value and every
input, the law given them as a function of the world alone: every (public value, input pair) falls in one of the
world pairs, each decided exactly.

**Per-input runs (shape "member").** Hadamard response draws a uniform element of a class of outputs that depends
on the input (:func:`~vetdp.sampling.public.sample_uniform_member`). Each input then runs with its member draws
conditioned (a token standing for "uniform on class c of x"); the classes' sizes come from evaluating the
deterministic class function over its whole range, for every input.

Coverage (what the decision rests on) is part of every result: :class:`PublicDecision.coverage`.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

from vetdp.engine.enumerate import Raised, _next_prefix, freeze
from vetdp.sampling.sources import BranchingSource, use_source

__all__ = ["ConditionalLaw", "NotEstablished", "Sealed", "PublicSlot", "MemberSlot", "EncodingCall", "Shape",
           "WorldLaws", "ProductLaw", "MemberLaws", "uses_public", "keyed_world_laws", "member_laws", "conditioned_law",
           "fn_id", "probe", "TooManyPaths", "MAX_WORLDS", "MAX_PATHS"]

MAX_WORLDS = 1 << 16  # encoding values (worlds) enumerated or read symbolically, at most
MAX_PATHS = 4096  # secret paths of one world enumerated one by one; more: the symbolic product run


@dataclasses.dataclass(frozen=True)
class ConditionalLaw:
    """A spec's law of a keyed mechanism, stated independently of the code: ``public`` the sizes of the public
    draws it releases (in order), ``encodings`` (fn(public values, x) -> value, number of values) per encoding of
    the input, and ``given(world)`` the law of the output in that world (the encodings' values): a dict {output:
    P}, public draws written as :class:`PublicSlot`, or a list of such dicts, one per output leaf (a product)."""

    public: tuple[int, ...]
    encodings: tuple[tuple[Callable[[Sequence[int], Any], int], int], ...]
    given: Callable[[tuple[int, ...]], Any]


class NotEstablished(Exception):
    """The code's runs do not show the keyed shape (the message names the cause)."""


def _refuse(name: str) -> Callable:
    def refuse(self: Sealed, *args: Any, **kwargs: Any) -> Any:
        from vetdp.sampling.sources import current_source

        why = (f"the {object.__getattribute__(self, 'kind')} is used other than as an encoding's "
               f"{object.__getattribute__(self, 'role')} ({name}); the output depends on it other than through "
               f"keyed_encoding/hash_bucket")
        source = current_source()
        if getattr(source, "touched", None) is None and hasattr(source, "touched"):
            source.touched = why  # recorded even if the code swallows the exception
        raise NotEstablished(why)

    return refuse


class Sealed:
    """The input or a public draw during a sealed run: every operation on it raises :class:`NotEstablished`."""

    __slots__ = ("kind", "role", "index", "size")

    def __init__(self, kind: str, role: str, index: int = 0, size: int = 0):
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "role", role)
        object.__setattr__(self, "index", index)
        object.__setattr__(self, "size", size)

    def __repr__(self) -> str:  # for the engine's own messages only
        return f"<sealed {self.kind} {self.index}>"


for _name in ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__hash__", "__bool__", "__int__",
              "__index__", "__float__", "__str__", "__format__", "__iter__", "__len__", "__getitem__",
              "__contains__", "__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__mod__",
              "__rmod__", "__floordiv__", "__rfloordiv__", "__truediv__", "__rtruediv__", "__and__", "__rand__",
              "__or__", "__ror__", "__xor__", "__rxor__", "__lshift__", "__rlshift__", "__rshift__", "__rrshift__",
              "__neg__", "__pos__", "__abs__", "__invert__", "__pow__", "__rpow__", "__bytes__", "__getattr__",
              "__setattr__", "__call__", "__round__", "__trunc__", "__floor__", "__ceil__", "__reduce__",
              "__reduce_ex__", "__copy__", "__deepcopy__"):
    setattr(Sealed, _name, _refuse(_name))


@dataclasses.dataclass(frozen=True)
class PublicSlot:
    """Public draw number ``index`` (of ``size`` values) where it stands in an output or a key."""

    index: int
    size: int

    def __repr__(self) -> str:
        return f"public[{self.index}]"


@dataclasses.dataclass(frozen=True)
class MemberSlot:
    """A member draw (:func:`~vetdp.sampling.public.sample_uniform_member`) of class ``cls`` where it stands in an
    output: it stands for each element of that class of the input, with equal probability."""

    index: int
    cls: Any

    def __repr__(self) -> str:
        return f"member[{self.index}: class {self.cls!r}]"


def fn_id(fn: Callable) -> Any:
    """A comparable identity of an encoding function (a partial by its function and arguments)."""
    if isinstance(fn, functools.partial):
        return (fn_id(fn.func), tuple(fn.args), tuple(sorted(fn.keywords.items())))
    return fn


@dataclasses.dataclass(frozen=True)
class EncodingCall:
    """One encoding of the input made by a run: its function, its key (public draws as slots) and its size."""

    fn: Callable = dataclasses.field(compare=False)
    fid: Any
    key: Any
    size: int

    def evaluate(self, public: Sequence[int], x: Any) -> int:
        """The encoding's value for concrete public draws ``public`` and input ``x``."""
        return self.fn(_substitute(self.key, public), x)


@dataclasses.dataclass(frozen=True)
class MemberCall:
    fn: Callable = dataclasses.field(compare=False)
    fid: Any
    size: int
    cls: Any


def _substitute(key: Any, public: Sequence[int]) -> Any:
    if isinstance(key, PublicSlot):
        return public[key.index]
    if isinstance(key, tuple):
        return tuple(_substitute(k, public) for k in key)
    return key


def _holds_sealed(value: Any) -> bool:
    if type(value) is Sealed:
        return True
    return isinstance(value, (tuple, list)) and any(_holds_sealed(v) for v in value)


class _Conditioned(BranchingSource):
    """A branching source that conditions public draws, encodings and member draws (see the module docstring)."""

    lazy_uniforms = True

    def __init__(self, prefix: Sequence[int], world: Sequence[int], sealed_input: Any, max_choices: int = 100_000):
        super().__init__(prefix, max_choices=max_choices)
        self.world = list(world)
        self.sealed_input = sealed_input
        self.public: list[Sealed] = []
        self.calls: list[EncodingCall] = []
        self.members: list[tuple[Any, MemberCall]] = []
        self.touched: str | None = None  # set when the code touched a sealed value (even if it caught the error)
        self.used = False  # any public primitive called (an encoding of a concrete value too)

    def condition_public(self, n: int) -> Any:
        self.used = True
        token = Sealed("public draw", "key", len(self.public), n)
        self.public.append(token)
        return token

    def slot(self, value: Any) -> Any:
        """``value`` with public tokens replaced by their slots (keys, outputs)."""
        if type(value) is Sealed:
            if value.kind == "public draw":
                return PublicSlot(value.index, value.size)
            raise NotEstablished("the input itself is part of a key or of the output")
        if isinstance(value, tuple):
            return tuple(self.slot(v) for v in value)
        if isinstance(value, list):
            return [self.slot(v) for v in value]
        for i, (token, call) in enumerate(self.members):
            if value is token:
                return MemberSlot(i, call.cls)
        return value

    def condition_encoding(self, fn: Callable, key: Any, value: Any, size: int) -> int:
        self.used = True
        if value is not self.sealed_input:
            if _holds_sealed(value) or _holds_sealed(key):
                raise NotEstablished("an encoding's value is not the input itself (the input is only ever encoded "
                                     "whole, keyed by public draws and constants)")
            out = fn(key, value)
            if isinstance(out, bool) or not isinstance(out, int) or not 0 <= out < size:
                raise ValueError(f"keyed_encoding: fn({key!r}, {value!r}) = {out!r} must be an int in [0, {size})")
            return out
        call = EncodingCall(fn, fn_id(fn), self.slot(key), size)
        index = len(self.calls)
        self.calls.append(call)
        return self.world[index] if index < len(self.world) else 0

    def condition_member(self, fn: Callable, value: Any, size: int, cls: Any) -> Any:
        self.used = True
        if _holds_sealed(value):
            raise NotEstablished("a member draw depends on the sealed input; member draws are decided input by input")
        token = _MemberToken()
        self.members.append((token, MemberCall(fn, fn_id(fn), size, cls)))
        return token


class _MemberToken:
    """What a conditioned member draw returns: it may only be released (placed in the output)."""

    __slots__ = ()


for _name in ("__eq__", "__lt__", "__le__", "__gt__", "__ge__", "__bool__", "__int__", "__index__", "__float__",
              "__add__", "__radd__", "__sub__", "__mul__", "__xor__", "__and__", "__or__", "__mod__", "__str__"):
    setattr(_MemberToken, _name, lambda self, *a, _n=_name: (_ for _ in ()).throw(NotEstablished(
        f"a member draw is used ({_n}) before it is released; its law is decided only as an output")))
_MemberToken.__hash__ = object.__hash__


@dataclasses.dataclass(frozen=True)
class Shape:
    """What one run showed: the public draws' sizes and the input's encodings (in call order)."""

    public: tuple[int, ...]
    calls: tuple[EncodingCall, ...]

    @property
    def worlds(self) -> int:
        return math.prod(c.size for c in self.calls)


def _run(function: Callable, arg: Any, source: _Conditioned) -> Any:
    """One run's output (frozen, tokens as slots); an exception of the code is the outcome :class:`Raised`."""
    with use_source(source):
        try:
            out = function(arg)
        except NotEstablished:
            raise
        except (Exception, SystemExit) as e:  # noqa: BLE001 - an exception (sys.exit too) is an outcome
            if source.touched is not None:
                raise NotEstablished(source.touched) from None
            if source.halted is not None:
                raise NotEstablished(f"a run was halted: {source.halted}") from None
            if isinstance(e, SystemExit):
                return Raised("SystemExit", f"called sys.exit({e.code!r})")
            return Raised(type(e).__name__, str(e))
        if source.touched is not None:
            raise NotEstablished(source.touched)
        out = out.tolist() if type(out) not in (Sealed, _MemberToken) and hasattr(out, "tolist") else out
        slotted = source.slot(out)
        try:
            return freeze(slotted)
        except TypeError as e:  # an unhashable output is the code's outcome, as in the enumerator
            return Raised(type(e).__name__, str(e))


def _shape(source: _Conditioned) -> Shape:
    return Shape(tuple(t.size for t in source.public), tuple(source.calls))


class TooManyPaths(Exception):
    """A world's secret draws make more paths than MAX_PATHS (then the symbolic product run is used)."""


def conditioned_law(function: Callable, arg: Any, world: Sequence[int], sealed: Any,
                    max_paths: int = MAX_PATHS) -> tuple[dict[Any, Fraction], Shape, set[MemberCall]]:
    """The exact law of the output given ``world``, every secret draw enumerated, the shape every path showed and
    the member draws made. Raises :class:`NotEstablished` when paths differ in their public draws or encodings,
    :class:`TooManyPaths`."""
    dist: dict[Any, Fraction] = {}
    member_calls: set[MemberCall] = set()
    prefix: list[int] | None = []
    shape: Shape | None = None
    paths = 0
    while prefix is not None:
        paths += 1
        source = _Conditioned(prefix, world, sealed)
        out = _run(function, arg, source)
        if paths == 1 and math.prod(o for _, o in source.trail) > max_paths:
            raise TooManyPaths(f"{math.prod(o for _, o in source.trail)} paths")
        if paths > max_paths:
            raise TooManyPaths(f"more than {max_paths} paths")
        seen = _shape(source)
        if shape is None:
            shape = seen
        elif seen != shape and not isinstance(out, Raised):
            raise NotEstablished(f"the public draws or encodings depend on secret draws: one path made {_says(shape)}, "
                                 f"another {_says(seen)}")
        dist[out] = dist.get(out, Fraction(0)) + source.probability
        member_calls.update(call for _, call in source.members)
        prefix = _next_prefix(source.trail)
    assert shape is not None
    return dist, shape, member_calls


def _says(shape: Shape) -> str:
    return (f"{len(shape.public)} public draw(s) of sizes {list(shape.public)} and {len(shape.calls)} encoding(s) of "
            f"sizes {[c.size for c in shape.calls]}")


def probe(function: Callable) -> None:
    """One run of ``function`` on a sealed input, every choice its first option (e.g. to watch it for foreign
    randomness); what the run shows is left to :func:`keyed_world_laws`."""
    sealed = Sealed("input", "value")
    try:
        _run(function, sealed, _Conditioned([], [], sealed))
    except NotEstablished:
        pass


def uses_public(function: Callable, x: Any) -> bool:
    """Whether one run of ``function(x)`` (x concrete) makes a public draw, an encoding or a member draw.

    A run that stops early (e.g. halted in a loop that its first options never leave) answers by what it called
    before it stopped: code that never reached a public primitive is left to the ordinary enumeration."""
    source = _Conditioned([], [], object())
    try:
        _run(function, x, source)
    except NotEstablished:
        pass
    return source.used


# ------------------------------------------------------------------ shape "keyed": laws per world

@dataclasses.dataclass(frozen=True)
class ProductLaw:
    """A world's law as a product: ``prefix`` leaves fixed (public slots, constants) and coordinates, each a law."""

    fixed: tuple[tuple[int, Any], ...]  # (position, value) of the constant leaves
    coordinates: tuple[tuple[int, tuple[tuple[Any, Fraction], ...]], ...]  # (position, law) of the random leaves
    length: int
    nested: tuple[int, ...]  # the output's shape: lengths of its top-level tuples (0: a leaf)


@dataclasses.dataclass
class WorldLaws:
    """Every world's exact law (dicts, or :class:`ProductLaw` when read from a symbolic run) and the shape."""

    shape: Shape
    worlds: list[tuple[int, ...]]
    laws: list[Any]  # dict[output, Fraction] or ProductLaw, per world
    how: str  # "enumerated" or "symbolic product"
    paths: int = 0


def keyed_world_laws(function: Callable, max_paths: int = MAX_PATHS, symbolic: bool = True) -> WorldLaws:
    """The shape of ``function`` on a sealed input and its law in every world (see the module docstring).

    Raises :class:`NotEstablished` naming the cause when the runs do not show the keyed shape, and
    :class:`TooManyPaths` when a world has too many paths and ``symbolic`` is False."""
    sealed = Sealed("input", "value")
    try:
        _, shape, members = conditioned_law(function, sealed, [], sealed, max_paths)
    except TooManyPaths:
        if not symbolic:
            raise
        return _symbolic_worlds(function, sealed)
    if members:
        raise NotEstablished("member draws are decided input by input, not on a sealed input")
    if shape.worlds > MAX_WORLDS:
        raise NotEstablished(f"the encodings take {shape.worlds} joint values (sizes {[c.size for c in shape.calls]})"
                             f", more than {MAX_WORLDS}")
    worlds = list(itertools.product(*(range(c.size) for c in shape.calls)))
    laws = []
    paths = 0
    for world in worlds:
        try:
            law, seen, _ = conditioned_law(function, sealed, world, sealed, max_paths)
        except TooManyPaths:
            if not symbolic:
                raise
            return _symbolic_worlds(function, sealed)
        if seen != shape:
            raise NotEstablished(f"the encodings made depend on the values of earlier ones: world {world} made "
                                 f"{_says(seen)}, world {worlds[0]} {_says(shape)}")
        laws.append(law)
        paths += len(law)
    return WorldLaws(shape, worlds, laws, "enumerated", paths)


class _EncodingValue:
    """An encoding's value in a symbolic run: a constant function of it (``i == e``, ``e % 2``, ``e < c``) becomes a
    small derived variable (its distinct results over all the encoding's values, and which value gives which);
    anything else sees the encoding as a variable over all its values."""

    __slots__ = ("registry", "var", "position", "size", "derived")

    def __init__(self, registry: Any, var: Any, position: int, size: int, derived: dict):
        self.registry, self.var, self.position, self.size, self.derived = registry, var, position, size, derived

    def derive(self, fn: Callable[[int], Any]) -> Any:
        from vetdp.engine.structure import Sym

        results = [fn(e) for e in range(self.size)]
        distinct: list[Any] = []
        index: dict[Any, int] = {}
        mapping = []
        for r in results:
            key = (type(r), r)
            if key not in index:
                index[key] = len(distinct)
                distinct.append(r)
            mapping.append(index[key])
        if len(distinct) == 1:
            return distinct[0]
        var = self.registry.new("derived", distinct, None)
        self.derived[var.index] = (self.position, tuple(mapping))
        return Sym.of_var(self.registry, var)

    def full(self) -> Any:
        from vetdp.engine.structure import Sym

        return Sym.of_var(self.registry, self.var)


def _encoding_op(op: Callable[[Any, Any], Any], reverse: bool) -> Callable:
    from vetdp.engine.structure import Sym

    def apply(self: _EncodingValue, other: Any) -> Any:
        if isinstance(other, (Sym, _EncodingValue)):
            lhs = self.full()
            rhs = other.full() if isinstance(other, _EncodingValue) else other
            return op(rhs, lhs) if reverse else op(lhs, rhs)
        return self.derive((lambda e: op(other, e)) if reverse else (lambda e: op(e, other)))

    return apply


def _install_encoding_ops() -> None:
    import operator

    for name, op in [("add", operator.add), ("sub", operator.sub), ("mul", operator.mul), ("mod", operator.mod),
                     ("floordiv", operator.floordiv), ("and", operator.and_), ("or", operator.or_),
                     ("xor", operator.xor), ("lshift", operator.lshift), ("rshift", operator.rshift)]:
        setattr(_EncodingValue, f"__{name}__", _encoding_op(op, False))
        setattr(_EncodingValue, f"__r{name}__", _encoding_op(op, True))
    for name, op in [("eq", operator.eq), ("ne", operator.ne), ("lt", operator.lt), ("le", operator.le),
                     ("gt", operator.gt), ("ge", operator.ge)]:
        setattr(_EncodingValue, f"__{name}__", _encoding_op(op, False))

    def refuse(self: _EncodingValue, *args: Any) -> Any:
        raise NotEstablished("an encoding's value is used for control flow or as an index in a symbolic run")

    for name in ("__bool__", "__index__", "__int__", "__hash__", "__iter__"):
        setattr(_EncodingValue, name, refuse)


_install_encoding_ops()


def _symbolic_worlds(function: Callable, sealed: Sealed) -> WorldLaws:
    """One run with symbolic secret draws and symbolic encodings: the laws of every world as a product."""
    from vetdp.engine.structure import NotStructured, Sym, _Registry, _SymbolicSource

    registry = _Registry()
    derived: dict[int, tuple[int, tuple[int, ...]]] = {}  # derived variable -> (encoding position, value map)

    class Source(_SymbolicSource):
        def __init__(self) -> None:
            super().__init__(registry)
            self.inner = _Conditioned([], [], sealed)
            self.enc_vars: list[int] = []

        def condition_public(self, n: int) -> Any:
            return self.inner.condition_public(n)

        def condition_encoding(self, fn: Callable, key: Any, value: Any, size: int) -> Any:
            if value is not sealed:
                return self.inner.condition_encoding(fn, key, value, size)
            self.inner.condition_encoding(fn, key, value, size)
            var = registry.new("input", list(range(size)), None)
            self.enc_vars.append(var.index)
            return _EncodingValue(registry, var, len(self.enc_vars) - 1, size, derived)

        def condition_member(self, fn: Callable, value: Any, size: int, cls: Any) -> Any:
            raise NotEstablished("member draws are decided input by input, not in a symbolic run")

    source = Source()
    source.touched = None
    with use_source(source):
        try:
            out = function(sealed)
            if source.touched is not None:
                raise NotEstablished(source.touched)
        except (NotEstablished, NotStructured) as e:
            raise NotEstablished(f"too many paths to enumerate, and the symbolic run shows no product: {e}") from None
        except Exception as e:  # noqa: BLE001
            raise NotEstablished(f"too many paths to enumerate, and the symbolic run raised {type(e).__name__}: "
                                 f"{e}") from None
    shape = _shape(source.inner)
    if shape.worlds > MAX_WORLDS:
        raise NotEstablished(f"the encodings take {shape.worlds} joint values, more than {MAX_WORLDS}")
    opaque = (Sealed, Sym, _EncodingValue)
    out = out.tolist() if type(out) not in opaque and hasattr(out, "tolist") else out
    top = list(out) if isinstance(out, (tuple, list)) else [out]
    leaves: list[Any] = []
    nested: list[int] = []
    for part in top:
        part = part.tolist() if type(part) not in opaque and hasattr(part, "tolist") else part
        if isinstance(part, (tuple, list)):
            nested.append(len(part))
            leaves.extend(part)
        else:
            nested.append(0)
            leaves.append(part)
    position = {v: k for k, v in enumerate(source.enc_vars)}
    # how each encoding-related variable reads a world: raw (its value) or derived (its value's class)
    reads: dict[int, tuple[int, tuple[int, ...] | None]] = {v: (p, None) for v, p in position.items()}
    reads.update(derived)
    owner: dict[int, int] = {}
    fixed: list[tuple[int, Any]] = []
    coords: list[tuple[int, Sym]] = []
    for i, leaf in enumerate(leaves):
        if isinstance(leaf, _EncodingValue):
            leaf = leaf.full()
        if isinstance(leaf, Sym):
            for v in leaf.support:
                if v in reads:
                    continue
                if owner.setdefault(v, i) != i:
                    raise NotEstablished(f"output leaves {owner[v]} and {i} share a secret draw: not a product")
            coords.append((i, leaf))
        else:
            fixed.append((i, freeze(source.inner.slot(leaf))))
    worlds = list(itertools.product(*(range(c.size) for c in shape.calls)))
    _replay_symbolic(function, sealed, leaves, reads, source.draws, worlds, source.inner)
    # each coordinate's law for each assignment of the encoding variables it reads (one law object per assignment)
    tables: list[tuple[int, list[tuple[int, tuple[int, ...] | None]], dict[tuple[int, ...], tuple]]] = []
    for i, leaf in coords:
        encs = [v for v in leaf.support if v in reads]
        draws = [v for v in leaf.support if v not in reads]
        by_enc: dict[tuple[int, ...], dict[Any, Fraction]] = {}
        for assignment, value in leaf.table.items():
            env = dict(zip(leaf.support, assignment, strict=True))
            p = Fraction(1)
            for d in draws:
                p *= registry.vars[d].probs[env[d]]
            key = tuple(env[v] for v in encs)
            law = by_enc.setdefault(key, {})
            y = freeze(value)
            law[y] = law.get(y, Fraction(0)) + p
        tables.append((i, [reads[v] for v in encs], {k: tuple(sorted(v.items(), key=repr))
                                                     for k, v in by_enc.items()}))
    laws = []
    for world in worlds:
        coordinates = []
        for i, where, table in tables:
            key = tuple(world[p] if mapping is None else mapping[world[p]] for p, mapping in where)
            coordinates.append((i, table[key]))
        laws.append(ProductLaw(tuple(fixed), tuple(coordinates), len(leaves), tuple(nested)))
    return WorldLaws(shape, worlds, laws, "symbolic product", 0)


SYMBOLIC_REPLAYS = 16  # concrete runs that must match the symbolic run's prediction


def _replay_symbolic(function: Callable, sealed: Sealed, leaves: list, reads: dict, draws: list, worlds: list,
                     shape_source: _Conditioned) -> None:
    """Concrete conditioned runs (a world, a choice for every draw: all first, all last, then seeded by SHA-256)
    must make the symbolic run's choices and give exactly the output its tables predict; else
    :class:`NotEstablished` (code that behaves differently on symbolic values)."""
    import hashlib

    from vetdp.engine.structure import Sym, _same

    def pick(n: int, t: int, i: int) -> int:
        return int.from_bytes(hashlib.sha256(f"vetdp-public-replay/{t}/{i}".encode()).digest()[:8], "big") % n

    for t in range(SYMBOLIC_REPLAYS):
        world = worlds[0 if t == 0 else -1 if t == 1 else pick(len(worlds), t, -1)]
        choices = [0 if t == 0 else len(d.values) - 1 if t == 1 else pick(len(d.values), t, i)
                   for i, d in enumerate(draws)]
        env = {d.index: k for d, k in zip(draws, choices, strict=True)}
        env |= {v: (world[p] if mapping is None else mapping[world[p]]) for v, (p, mapping) in reads.items()}
        predicted = [leaf.full().at(env) if isinstance(leaf, _EncodingValue) else
                     leaf.at(env) if isinstance(leaf, Sym) else freeze(shape_source.slot(leaf)) for leaf in leaves]
        source = _Conditioned(choices, world, sealed)
        actual = _run(function, sealed, source)
        made = [options for _, options in source.trail]
        if made != [len(d.values) for d in draws]:
            raise NotEstablished(f"a concrete run made choices with option counts {made[:8]}…, the symbolic run "
                                 f"{[len(d.values) for d in draws][:8]}…: the code behaves differently on symbolic "
                                 "values")
        flat = _flatten(actual)
        if len(flat) != len(predicted) or any(not _same(freeze(a), freeze(b)) for a, b in
                                              zip(flat, predicted, strict=False)):
            raise NotEstablished(f"a concrete run in world {list(world)} gave another output than the symbolic run "
                                 "predicts: the code behaves differently on symbolic values")


def _flatten(y: Any) -> list:
    if isinstance(y, tuple):
        out = []
        for part in y:
            out.extend(part if isinstance(part, tuple) else [part])
        return out
    return [y]


# ------------------------------------------------------------------ shape "member": per-input laws in classes

@dataclasses.dataclass
class MemberLaws:
    """Per input: the exact law of its runs with member draws conditioned, and each member class's size."""

    laws: dict[Any, dict[Any, Fraction]]  # frozen input -> {output with MemberSlot(i, cls): probability}
    size: int  # the member draws' range [0, size)
    classes: dict[Any, dict[Any, frozenset[int]]]  # input -> cls -> the class's outputs


def member_laws(function: Callable, inputs: Sequence[Any], max_paths: int = MAX_PATHS) -> MemberLaws:
    """Every input's conditioned law and its member classes, computed by evaluating each class function over its
    whole range (raises :class:`NotEstablished` when the runs do not show the member shape)."""
    laws: dict[Any, dict] = {}
    classes: dict[Any, dict] = {}
    kind: tuple[Any, int] | None = None
    for x in inputs:
        key = freeze(x)
        try:
            law, shape, calls = conditioned_law(function, x, [], object(), max_paths)
        except TooManyPaths as e:
            raise NotEstablished(f"input {x!r}: {e} besides its member draws") from None
        if shape.calls or shape.public:
            raise NotEstablished("member draws together with public draws or encodings are not decided")
        for call in calls:
            if kind is None:
                kind = (call.fid, call.size)
            elif (call.fid, call.size) != kind:
                raise NotEstablished("member draws of different class functions or ranges are not decided")
        if any(sum(1 for s in _leaves(y) if isinstance(s, MemberSlot)) > 1 for y in law):
            raise NotEstablished("an output holds more than one member draw")
        laws[key] = law
        classes[key] = {}
        for call in calls:
            if call.cls not in classes[key]:
                classes[key][call.cls] = frozenset(y for y in range(call.size) if call.fn(y, x) == call.cls)
    if kind is None:
        raise NotEstablished("no member draw was made")
    return MemberLaws(laws, kind[1], classes)


def _leaves(y: Any) -> list:
    if isinstance(y, tuple):
        return [leaf for part in y for leaf in _leaves(part)]
    return [y]
