"""``float(x)`` on a symbolic parameter, kept symbolic: the module under exploration gets a ``float`` that returns it.

``p = float(prob)`` is the most common first line of a constructor. Python's ``float()`` always returns a plain
float, so a symbolic parameter passed through it would be pinned to one value, and a defect in a narrow band of
the parameter would be left to the sampled search. When that happens inside a scope (:func:`keeping_symbols`, which
the universal exploration opens), the calling module's global name ``float`` is bound to :class:`SymbolicAwareFloat`
and the region is run again: ``float(x)`` then returns a symbolic ``x`` unchanged and converts anything else as
``float`` does, and ``isinstance(x, float)`` holds for a symbolic float as for a plain one. On leaving the scope each
module gets back what it had.

A module is adopted only where this changes nothing but the type of ``float(symbolic)``: every use of the name
``float`` in its source is a call, a type tested by ``isinstance``/``issubclass``, or an annotation (``type(x) is
float`` would see the shim and is refused), and it is neither vetdp's (whose escapes are meant) nor the standard
library's.

``Fraction(prob)`` likewise, once it raised on a symbolic value: the module's names for ``fractions.Fraction`` (only
called or tested against) are bound to :class:`SymbolicAwareFraction`, whose ``Fraction(x)`` of a symbolic ``x`` is
an :class:`ExactValue`, compared exactly for the whole region (``Fraction(1, t) <= Fraction(prob)``).

``math.isfinite(prob)`` (and ``isnan``, ``isinf``) likewise: a module whose line tests one of them on a symbolic value
gets, under the names bound to ``math`` or to those functions, their counterparts that answer for a symbolic value
as for every value of a region (finite), and call ``math``'s own for anything else.
"""

from __future__ import annotations

import ast
import contextlib
import contextvars
import linecache
import math
import operator
import re
import sys
from collections.abc import Callable, Iterator
from fractions import Fraction
from pathlib import Path
from types import FrameType, ModuleType
from typing import Any

__all__ = ["SymbolicAwareFloat", "SymbolicAwareFraction", "ExactValue", "MATH_FOR_SYMBOLS", "keeping_symbols", "adopt"]

_REAL_FLOAT = float
_VETDP = Path(__file__).resolve().parents[1]  # vetdp's package: its own float() calls are deliberate escapes
_CALL = re.compile(r"(?<![\w.])float\s*\(")
_TEST_CALL = re.compile(r"(?<![\w])(isfinite|isnan|isinf)\s*\(")
_MISSING = object()


class _FloatLike(type):
    """isinstance/issubclass answer as for ``float``, a symbolic float counted as a float."""

    def __instancecheck__(cls, obj: Any) -> bool:
        from vetdp.engine.symbolic import SymFloat

        return isinstance(obj, (_REAL_FLOAT, SymFloat))

    def __subclasscheck__(cls, sub: type) -> bool:
        from vetdp.engine.symbolic import SymFloat

        return issubclass(sub, (_REAL_FLOAT, SymFloat))


class SymbolicAwareFloat(_REAL_FLOAT, metaclass=_FloatLike):
    """``float`` for a module under exploration: a symbolic float is returned as it is, anything else converted
    by the built-in ``float`` (the same value and type as there)."""

    def __new__(cls, x: Any = 0.0) -> Any:
        from vetdp.engine.symbolic import SymFloat

        return x if isinstance(x, SymFloat) else _REAL_FLOAT(x)


SymbolicAwareFloat.__name__ = SymbolicAwareFloat.__qualname__ = "float"

class ExactValue:
    """``Fraction(x)`` of a symbolic float ``x``: the exact value of every float of the region. Compared exactly
    (as a Fraction compares), without pinning; any other use (arithmetic, hash, numerator, float()) pins the
    parameters to the run's point and acts on the plain Fraction there."""

    __slots__ = ("sym",)

    def __init__(self, sym: Any):
        self.sym = sym

    def __repr__(self) -> str:
        return f"Fraction({self.sym!r})"

    def concrete(self, what: str) -> Fraction:
        from vetdp.engine.symbolic import current_exploration

        return current_exploration().escape(f"Fraction(x).{what}", tuple(self.sym.term.variables()),
                                            Fraction(self.sym.value))

    def _comparable(self, other: Any) -> Any:
        from vetdp.engine.symbolic import SymFloat

        if isinstance(other, ExactValue):
            return other.sym
        if isinstance(other, (int, Fraction)):
            return Fraction(other)
        if isinstance(other, (_REAL_FLOAT, SymFloat)):
            return other  # a float compares with a float exactly
        return NotImplemented

    def __getattr__(self, name: str) -> Any:
        return getattr(self.concrete(name), name)


def _exact_comparison(op: Callable[[Any, Any], bool]) -> Callable[[ExactValue, Any], Any]:
    def compare(self: ExactValue, other: Any) -> Any:
        o = self._comparable(other)
        return NotImplemented if o is NotImplemented else op(self.sym, o)

    return compare


def _pinned(name: str) -> Callable[..., Any]:
    def act(self: ExactValue, *args: Any) -> Any:
        plain = [a.concrete(name) if isinstance(a, ExactValue) else a for a in args]
        return getattr(self.concrete(name), name)(*plain)

    return act


for _op in (operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne):
    setattr(ExactValue, f"__{_op.__name__}__", _exact_comparison(_op))
for _name in ("add", "radd", "sub", "rsub", "mul", "rmul", "truediv", "rtruediv", "floordiv", "rfloordiv", "mod",
              "rmod", "pow", "rpow", "neg", "pos", "abs", "trunc", "floor", "ceil", "round", "int", "float", "hash",
              "bool"):
    setattr(ExactValue, f"__{_name}__", _pinned(f"__{_name}__"))


class _FractionLike(type):
    """isinstance/issubclass answer as for ``Fraction``, an exact value of a symbolic float counted as one; other
    class attributes (``from_float``, ...) are Fraction's. Not a subclass of Fraction: the ABCs' subclass checks
    would come back here without end."""

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, (Fraction, ExactValue))

    def __subclasscheck__(cls, sub: type) -> bool:
        return issubclass(sub, (Fraction, ExactValue))

    def __getattr__(cls, name: str) -> Any:
        return getattr(Fraction, name)


class SymbolicAwareFraction(metaclass=_FractionLike):
    """``Fraction`` for a module under exploration: ``Fraction(x)`` of one symbolic float is its
    :class:`ExactValue`; anything else is built by ``fractions.Fraction`` (the same value and type as there)."""

    def __new__(cls, numerator: Any = 0, denominator: Any = None) -> Any:
        from vetdp.engine.symbolic import SymFloat

        if denominator is None and isinstance(numerator, SymFloat):
            return ExactValue(numerator)
        if denominator is None and isinstance(numerator, ExactValue):
            return numerator
        return Fraction(numerator, denominator)


SymbolicAwareFraction.__name__ = SymbolicAwareFraction.__qualname__ = "Fraction"


def _finite_test(name: str, answer: bool) -> Any:
    real = getattr(math, name)

    def test(x: Any) -> bool:
        from vetdp.engine.symbolic import SymFloat

        return answer if isinstance(x, SymFloat) else real(x)

    test.__name__ = test.__qualname__ = name
    test.__doc__ = real.__doc__
    return test


_FINITE_TESTS = {"isfinite": _finite_test("isfinite", True), "isnan": _finite_test("isnan", False),
                 "isinf": _finite_test("isinf", False)}
MATH_FOR_SYMBOLS = ModuleType("math", math.__doc__)
MATH_FOR_SYMBOLS.__dict__.update({k: v for k, v in vars(math).items() if not k.startswith("__")}, **_FINITE_TESTS)

# the open scope: (id(module globals), name) -> (those globals, the name, what it held there, or _MISSING)
_scope: contextvars.ContextVar[dict | None] = contextvars.ContextVar("vetdp_float_scope", default=None)


@contextlib.contextmanager
def keeping_symbols() -> Iterator[None]:
    """Within the block, :func:`adopt` may give modules the float that keeps symbols; each is restored on exit."""
    adopted: dict[tuple[int, str], tuple[dict, str, Any]] = {}
    token = _scope.set(adopted)
    try:
        yield
    finally:
        _scope.reset(token)
        for namespace, name, previous in adopted.values():
            if previous is _MISSING:
                namespace.pop(name, None)
            else:
                namespace[name] = previous


def _bind(adopted: dict, namespace: dict, name: str, value: Any) -> None:
    adopted[(id(namespace), name)] = (namespace, name, namespace.get(name, _MISSING))
    namespace[name] = value


def adopt(frame: FrameType | None, calling: bool = True) -> bool:
    """Give the module of ``frame`` the float that keeps symbols: code that just called ``float()`` on a symbolic
    value (``calling``: its line holds a ``float(...)`` call), or that raised with symbolic values and names
    ``float`` (e.g. ``isinstance(x, float)``); and, where the line tests ``isfinite``/``isnan``/``isinf``, the
    counterparts of ``math`` and of those functions. True when something was given now (the run should be repeated);
    False where no scope is open, the module is vetdp's or the standard library's, already adopted, or not safe to
    adopt."""
    adopted = _scope.get()
    if adopted is None or frame is None or _never_adopted(frame.f_globals, frame.f_code.co_filename):
        return False
    line = linecache.getline(frame.f_code.co_filename, frame.f_lineno) if calling else ""
    tests = _adopt_finite_tests(adopted, frame.f_globals) if _TEST_CALL.search(line) else False
    fraction = False if calling else _adopt_fraction(adopted, frame)
    return _adopt_float(adopted, frame, calling and not _CALL.search(line)) or tests or fraction


def _adopt_float(adopted: dict, frame: FrameType, refused: bool) -> bool:
    namespace = frame.f_globals
    if refused or (id(namespace), "float") in adopted or namespace.get("float", _REAL_FLOAT) is not _REAL_FLOAT:
        return False
    source = _source(frame.f_code.co_filename)
    if source is None or not re.search(r"\bfloat\b", source) or not _only_called(source, "float"):
        return False
    _bind(adopted, namespace, "float", SymbolicAwareFloat)
    return True


def _adopt_fraction(adopted: dict, frame: FrameType) -> bool:
    """Bind the names of the frame's module that hold ``fractions.Fraction`` to :class:`SymbolicAwareFraction`,
    where each is only called or tested against."""
    namespace, given = frame.f_globals, False
    source = _source(frame.f_code.co_filename)
    for name, value in list(namespace.items()):
        if value is Fraction and (id(namespace), name) not in adopted and source and _only_called(source, name):
            _bind(adopted, namespace, name, SymbolicAwareFraction)
            given = True
    return given


def _adopt_finite_tests(adopted: dict, namespace: dict) -> bool:
    """Bind the names of ``namespace`` that hold ``math`` or its isfinite/isnan/isinf to their counterparts."""
    given = False
    for name, value in list(namespace.items()):
        if (id(namespace), name) in adopted:
            continue
        if value is math:
            _bind(adopted, namespace, name, MATH_FOR_SYMBOLS)
            given = True
        elif any(value is getattr(math, test) for test in _FINITE_TESTS):
            _bind(adopted, namespace, name, _FINITE_TESTS[value.__name__])
            given = True
    return given


def _never_adopted(namespace: dict, filename: str) -> bool:
    """vetdp's own modules and Python's standard library."""
    if str(namespace.get("__name__", "")).partition(".")[0] in sys.stdlib_module_names:
        return True
    try:
        return Path(filename).resolve().is_relative_to(_VETDP)
    except (OSError, ValueError):
        return True


def _source(filename: str) -> str | None:
    lines = linecache.getlines(filename)
    return "".join(lines) if lines else None


def _only_called(source: str, name: str) -> bool:
    """Whether every use of ``name`` (``float``, ``Fraction``) in ``source`` is a call, a type tested by
    isinstance/issubclass, or an annotation, and nothing rebinds it."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return False
    allowed: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id == name:
                allowed.add(id(node.func))
            elif node.func.id in ("isinstance", "issubclass") and len(node.args) == 2:
                tested = node.args[1]
                allowed.update(id(e) for e in (tested.elts if isinstance(tested, ast.Tuple) else [tested]))
        for annotation in _annotations(node):
            allowed.update(id(n) for n in ast.walk(annotation))
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == name and id(node) not in allowed:
            return False
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
            return False
        if isinstance(node, ast.arg) and node.arg == name:
            return False
        if isinstance(node, ast.alias) and (node.asname or node.name) == name and node.name != name:
            return False  # "import x as Fraction" rebinds it; "from fractions import Fraction" is the binding itself
        if isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
            return False
    return True


def _annotations(node: ast.AST) -> list[ast.AST]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        args = node.args
        every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
        return [a.annotation for a in every if a is not None and a.annotation is not None] + (
            [node.returns] if node.returns is not None else [])
    if isinstance(node, ast.AnnAssign):
        return [node.annotation]
    return []
