"""A proof document's z3 obligations, derived from the constants it names; and the constants its code uses.

A name in a proof's ``constants:`` (``module.NAME``, imported) is one of:

* an :class:`~vetdp.arith.expr.Expr` that is a known constant's expression: vetdp's own
  (:data:`vetdp.obligations.constants.CONSTANTS`) or one registered with ``register_constant``, the very object
  or an equal expression (the obligations are about the expression, so they hold for an equal one; a module
  imported again builds equal objects). It brings :func:`~vetdp.obligations.check.constant_obligations` of that
  constant: casts, steps, sound, range, and the contracts of the primitives it uses;
* an Expr built by putting known constants' expressions in place of variables of another known constant
  (RAPPOR's ε₁ is the sum constant over two log-ratio constants over the gap and p* constants). It brings the
  obligations of every piece. vetdp checks that each piece's result range lies within the range of the variable
  it replaces and that no piece replaces an int variable, so every step of the whole is defined; that the whole's
  float errs in the right direction also needs the outer constant to be monotone in each piece, which the proof
  argues;
* any other Expr with rounding steps: an error naming it and saying how to register it;
* anything else (an int bound such as ``MAX_CATEGORIES``, a bytes tag, a Fraction, a bare variable, a function):
  pinned by its digest only; it brings no obligation.

Uses: every Expr with rounding steps that a pinned definition (``proves:`` and ``constants:``) reaches must be
covered by the listed constants. A definition reaches what the global names in its body are bound to, and,
through every top-level function or class of the same top-level package it names, what those reach in turn.
An Expr built inside a function body (not bound to a module-level name) is not seen.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import sys
import types
from collections.abc import Callable, Iterator
from fractions import Fraction

from vetdp.arith.expr import Const, Expr, Op, Var
from vetdp.obligations import constants as C
from vetdp.obligations.check import GAP_LEMMA, constant_obligations
from vetdp.obligations.z3encode import ConstantSpec

__all__ = ["Derivation", "ConstantError", "derive", "cover", "merge_obligations", "REGISTER_HOW"]

REGISTER_HOW = ("register it with vetdp.api.register_constant(cid, expr, ranges=...) in its module, as "
                "`NAME = register_constant(...)`, so that its z3 obligations are derived")


class ConstantError(ValueError):
    """A name in ``constants:`` cannot be imported, or is an Expr with rounding steps that no known constant
    covers."""


@dataclasses.dataclass(frozen=True)
class Derivation:
    """What a proof relies on: ``obligations`` (ids, each constant's own in the order listed, then the contracts),
    ``constants`` (each listed name -> the constant ids it brings; () for a name pinned by digest only) and
    ``missing`` (one line per Expr constant the pinned code uses that the list does not cover)."""

    obligations: tuple[str, ...]
    constants: dict[str, tuple[str, ...]]
    missing: tuple[str, ...]


def _size(e: Expr) -> int:
    return sum(1 for _ in e.walk())


def _known() -> list[ConstantSpec]:
    """The constants a proof may rely on: vetdp's own and the registered ones (not the seeds' claims)."""
    return [*C.CONSTANTS.values(), *C.USER_CONSTANTS.values()]


def _match(pattern: Expr, e: Expr, bind: dict[str, Expr]) -> bool:
    if isinstance(pattern, Var):
        if pattern.name in bind:
            return bind[pattern.name] == e
        bind[pattern.name] = e
        return True
    if isinstance(pattern, Const):
        return pattern == e
    assert isinstance(pattern, Op)
    return (isinstance(e, Op) and e.name == pattern.name and len(e.args) == len(pattern.args)
            and all(_match(p, x, bind) for p, x in zip(pattern.args, e.args, strict=True)))


def _piece_problem(spec: ConstantSpec, name: str, piece: Expr) -> str | tuple[str, ...]:
    """The constant ids that cover ``piece`` put in place of ``spec``'s variable ``name``, or why it may not be."""
    kind = spec.expr.variables()[name]
    rng = spec.range_of(name)
    if isinstance(piece, Var):
        if piece.kind != kind:
            return f"the {piece.kind} variable {piece.name} stands for {spec.id}'s {kind} variable {name}"
        return ()
    if isinstance(piece, Const):
        v = Fraction(piece.value)
        if not rng.contains(v) or (kind == "int" and v.denominator != 1):
            return f"the constant {piece.value!r} lies outside {spec.id}'s range of {name}"
        return ()
    if kind == "int":
        return f"a float expression stands for {spec.id}'s int variable {name}"
    ids, why = _cover(piece)
    if ids is None:
        return f"the expression in place of {spec.id}'s {name}, {piece}, is no known constant ({why})"
    inner = C.constant(ids[0])
    if inner.result is None or not (rng.lo <= inner.result[0] and inner.result[1] <= rng.hi):
        stated = "states no result range" if inner.result is None else \
            f"has result range [{float(inner.result[0])!r}, {float(inner.result[1])!r}]"
        return (f"{inner.id} stands for {spec.id}'s {name} in [{float(rng.lo)!r}, {float(rng.hi)!r}] but "
                f"{stated}")
    return ids


def _cover(e: Expr) -> tuple[tuple[str, ...] | None, str]:
    """(the constant ids whose obligations cover ``e``, outer first; or None) and, when None, why."""
    known = _known()
    same = [s.id for s in known if s.expr is e] or [s.id for s in known if s.expr == e]
    if same:
        return tuple(same), ""
    if not isinstance(e, Op):
        return (), ""
    why = "it is no registered constant's own expression, nor one with registered constants in place of variables"
    for spec in sorted(known, key=lambda s: -_size(s.expr)):
        bind: dict[str, Expr] = {}
        if not _match(spec.expr, e, bind) or not any(isinstance(x, Op) for x in bind.values()):
            continue
        ids: list[str] = [spec.id]
        for name, piece in bind.items():
            got = _piece_problem(spec, name, piece)
            if isinstance(got, str):
                why = got
                break
            ids += [i for i in got if i not in ids]
        else:
            return tuple(ids), ""
    return None, why


def cover(e: Expr) -> tuple[str, ...] | None:
    """The ids of the known constants whose obligations cover the Expr ``e`` (see the module docstring), or None
    when ``e`` has rounding steps and no known constant or composition of them is ``e``; () for a bare variable
    or number."""
    return _cover(e)[0]


def merge_obligations(cids: list[str]) -> tuple[str, ...]:
    """The obligation ids of the constants ``cids``: each constant's own in order, then the contracts of the
    primitives they use, sorted, then ``contract.float64_gap``; () for no constant."""
    own: list[str] = []
    contracts: set[str] = set()
    for cid in cids:
        for oid in constant_obligations(cid):
            if oid.startswith("contract."):
                contracts.add(oid)
            elif oid not in own:
                own.append(oid)
    gap = f"contract.{GAP_LEMMA}"
    return tuple(own + sorted(contracts - {gap}) + ([gap] if gap in contracts else []))


def _resolve(qualname: str) -> object:
    module, _, name = qualname.rpartition(".")
    from vetdp import fence

    try:
        mod = fence.import_module(module, f"{qualname}:")
    except ImportError as e:
        raise ConstantError(f"{qualname}: module {module!r} cannot be imported: {e}") from None
    except fence.UserCodeError as e:  # the module exits, raises or hangs at import
        raise ConstantError(str(e)) from None
    if not hasattr(mod, name):
        raise ConstantError(f"{qualname}: module {module!r} has no attribute {name!r}")
    return getattr(mod, name)


def _has_steps(obj: object) -> bool:
    return isinstance(obj, Op)


def _global(node: ast.AST, module: types.ModuleType) -> object | None:
    """The object a ``Name`` or ``module.attr`` chain denotes in ``module``'s globals, or None."""
    if isinstance(node, ast.Name):
        return module.__dict__.get(node.id)
    if isinstance(node, ast.Attribute):
        base = _global(node.value, module)
        if isinstance(base, types.ModuleType):
            return getattr(base, node.attr, None)
    return None


def _reached(obj: object) -> Iterator[object]:
    """``obj`` and, for a tuple, list or dict, its items (one level)."""
    yield obj
    if isinstance(obj, (tuple, list)):
        yield from obj
    elif isinstance(obj, dict):
        yield from obj.values()


def _uses(pinned: list[str], module_ast: Callable[[str], ast.Module]) -> dict[int, tuple[Expr, str, str]]:
    """id(expr) -> (expr, the global name it was reached by, the pinned name that reaches it) for every Expr with
    rounding steps the pinned definitions reach (module docstring)."""
    packages = {q.split(".")[0] for q in pinned}
    found: dict[int, tuple[Expr, str, str]] = {}
    todo = [(q, q) for q in pinned]
    seen: set[str] = set()
    while todo:
        qualname, root = todo.pop(0)
        if qualname in seen:
            continue
        seen.add(qualname)
        modname, _, name = qualname.rpartition(".")
        module = sys.modules.get(modname)
        try:
            tree = module_ast(modname) if module is not None else None
        except (OSError, SyntaxError, ValueError):
            tree = None
        if tree is None:
            continue
        for top in tree.body:
            names = [top.name] if isinstance(top, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) else \
                [t.id for t in getattr(top, "targets", [getattr(top, "target", None)]) if isinstance(t, ast.Name)]
            if name not in names:
                continue
            for node in ast.walk(top):
                if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                    continue
                if not isinstance(node, (ast.Name, ast.Attribute)):
                    continue
                obj = _global(node, module)
                if obj is None:
                    continue
                where = f"{modname}.{ast.unparse(node)}"
                for x in _reached(obj):
                    if _has_steps(x):
                        found.setdefault(id(x), (x, where, root))
                if (inspect.isfunction(obj) or inspect.isclass(obj)) and "." not in obj.__qualname__ \
                        and getattr(obj, "__module__", "").split(".")[0] in packages:
                    todo.append((f"{obj.__module__}.{obj.__qualname__}", root))
    return found


def _home(expr: Expr, ids: tuple[str, ...], where: str) -> str:
    """The qualified name to list for ``expr``: a covering constant's ``source`` when it names this very object,
    else the global name it was reached by."""
    for cid in ids:
        module, _, name = C.constant(cid).source.rpartition(".")
        if getattr(sys.modules.get(module), name, None) is expr:  # never imports: a source may be free text
            return f"{module}.{name}"
    return where


def derive(pinned: list[str], listed: list[str], module_ast: Callable[[str], ast.Module]) -> Derivation:
    """The obligations the constants ``listed`` bring, and the Expr constants the definitions ``pinned`` reach
    that they do not cover (module docstring). ``module_ast(name)`` parses a module's source (the digest's copy).
    Raises :class:`ConstantError` for a listed name that cannot be imported or is an Expr no known constant
    covers."""
    constants: dict[str, tuple[str, ...]] = {}
    for qualname in listed:
        obj = _resolve(qualname)
        if not isinstance(obj, Expr):
            constants[qualname] = ()
            continue
        ids, why = _cover(obj)
        if ids is None:
            raise ConstantError(f"constants: {qualname} is an Expr with rounding steps ({obj}) that no known constant "
                                f"covers ({why}); {REGISTER_HOW}")
        constants[qualname] = ids
    covered = {i for ids in constants.values() for i in ids}
    missing = []
    for expr, where, root in _uses(pinned, module_ast).values():
        ids, why = _cover(expr)
        if ids is None:
            missing.append(f"{where} (used by {root}) is an Expr with rounding steps that no known constant covers "
                           f"({why}): {REGISTER_HOW}, and list it in constants:")
        elif not set(ids) <= covered:
            home = _home(expr, ids, where)
            missing.append(f"{home} (constant {', '.join(i for i in ids if i not in covered)}, used by {root}) is "
                           f"not covered by constants:; add {home}")
    cids = list(dict.fromkeys(i for ids in constants.values() for i in ids))
    return Derivation(merge_obligations(cids), constants, tuple(sorted(set(missing))))
