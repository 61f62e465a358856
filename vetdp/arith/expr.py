"""Privacy constants as small expressions over the directed-rounding primitives.

A constant such as ``ln(p·(t−1)/(1−p))`` is written once, as an :class:`Expr` built from
variables, constants and the operations of :mod:`vetdp.arith.rounding`::

    EPSILON = prob.inf_mul(t.inf_sub(1)).inf_div(ONE.neg_inf_sub(prob)).inf_ln()

The one object then answers every question the harness asks of the formula:

* :meth:`Expr.to_float` — the float64 a privacy map returns (each step rounded in the
  direction its name says);
* :meth:`Expr.enclose` — a rational interval containing the *ideal* real value (every step
  exact), as narrow as the requested precision allows;
* :meth:`Expr.to_sympy` — the ideal formula as a sympy expression;
* :meth:`Expr.steps` — the rounding steps in evaluation order, for solver encodings.

Variables are ``float`` (a finite float64) or ``int`` (an integer cast to float64 exactly,
or rejected).
"""

from __future__ import annotations

import abc
import dataclasses
import math
from collections.abc import Callable, Iterator, Mapping
from fractions import Fraction

from vetdp.arith import rounding as R

__all__ = ["Expr", "Var", "Const", "Op", "var", "const", "OPS", "ZERO", "ONE", "TWO", "Interval"]

Interval = tuple[Fraction, Fraction]
Env = Mapping[str, float | int]


@dataclasses.dataclass(frozen=True)
class OpInfo:
    """What an operation means: its rounded float form, its ideal interval form, sympy form."""

    name: str
    arity: int
    rounded: Callable[..., float]
    exact: Callable[..., Interval] | None  # interval extension (args are intervals, prec)
    symbol: str
    direction: str  # "up" (toward +inf), "down" (toward -inf) or "nearest" (naive IEEE)
    ideal: str  # name of the ideal operation: add, sub, mul, div, ln, exp, log1p, expm1


def _iadd(a: Interval, b: Interval, prec: int) -> Interval:
    return a[0] + b[0], a[1] + b[1]


def _isub(a: Interval, b: Interval, prec: int) -> Interval:
    return a[0] - b[1], a[1] - b[0]


def _imul(a: Interval, b: Interval, prec: int) -> Interval:
    products = [x * y for x in a for y in b]
    return min(products), max(products)


def _idiv(a: Interval, b: Interval, prec: int) -> Interval:
    if b[0] <= 0 <= b[1]:
        raise R.FloatArithmeticError(f"division by an interval containing zero: [{float(b[0])}, {float(b[1])}]")
    return _imul(a, (1 / b[1], 1 / b[0]), prec)


def _monotone(bracket: Callable[[Fraction, int], tuple[Fraction, Fraction]], lower_limit: Fraction | None):
    def extension(a: Interval, prec: int) -> Interval:
        if lower_limit is not None and a[0] <= lower_limit:
            raise R.FloatArithmeticError(f"argument interval [{float(a[0])}, {float(a[1])}] leaves the domain "
                                         f"({float(lower_limit)}, inf)")
        return bracket(a[0], prec)[0], bracket(a[1], prec)[1]

    return extension


def _log1p_bracket(q: Fraction, prec: int) -> tuple[Fraction, Fraction]:
    return R.ln_bracket(1 + q, prec)


_EXP_ARG_LIMIT = Fraction(800)  # e^±800 lies within 2^±1155, inside the brackets' exact range


def _exp_enclosure(q: Fraction, prec: int) -> tuple[Fraction, Fraction]:
    """Rationals lo <= exp(q) <= hi, valid as real bounds (not just for float rounding).

    The rounding brackets clamp magnitudes beyond 2^±1200, which keeps float rounding right
    but is no real enclosure; arguments are therefore limited to |q| <= 800 here, with
    exp(q) in [0, e^-800] below that and an error above it.
    """
    if q > _EXP_ARG_LIMIT:
        raise R.FloatArithmeticError(f"exp({float(q)!r}) is beyond what an enclosure covers (argument <= 800)")
    if q < -_EXP_ARG_LIMIT:
        return Fraction(0), Fraction(1, 2**1154)  # e^-800 < 2^-1154
    return R.exp_bracket(q, prec)


def _expm1_bracket(q: Fraction, prec: int) -> tuple[Fraction, Fraction]:
    lo, hi = _exp_enclosure(q, prec)
    return lo - 1, hi - 1


def _op(name: str, arity: int, rounded: Callable[..., float], exact, symbol: str, ideal: str) -> OpInfo:
    direction = "down" if name.startswith("neg_") else "nearest" if name.startswith("near_") else "up"
    return OpInfo(name, arity, rounded, exact, symbol, direction, ideal)


def _nearest(name: str, fn: Callable[..., float]) -> Callable[..., float]:
    """Plain float64 arithmetic (round to nearest, libm for ln/exp), as the seeds' pseudocode
    computes; raises FloatArithmeticError where IEEE would give inf or NaN."""
    def rounded(*args: float) -> float:
        for i, a in enumerate(args):
            R.exact_fraction(f"{name}: arg{i}", a)
        try:
            out = fn(*(float(a) for a in args))
        except (ZeroDivisionError, OverflowError, ValueError) as e:
            raise R.FloatArithmeticError(f"{name}{tuple(args)!r}: {e}") from None
        if not math.isfinite(out):
            raise R.RoundingOverflowError(f"{name}{tuple(args)!r} is {out} in float64")
        return out + 0.0

    rounded.__name__ = name
    return rounded


OPS: dict[str, OpInfo] = {
    info.name: info
    for info in [
        _op("inf_add", 2, R.inf_add, _iadd, "+", "add"),
        _op("neg_inf_add", 2, R.neg_inf_add, _iadd, "+", "add"),
        _op("inf_sub", 2, R.inf_sub, _isub, "-", "sub"),
        _op("neg_inf_sub", 2, R.neg_inf_sub, _isub, "-", "sub"),
        _op("inf_mul", 2, R.inf_mul, _imul, "*", "mul"),
        _op("neg_inf_mul", 2, R.neg_inf_mul, _imul, "*", "mul"),
        _op("inf_div", 2, R.inf_div, _idiv, "/", "div"),
        _op("neg_inf_div", 2, R.neg_inf_div, _idiv, "/", "div"),
        _op("inf_ln", 1, R.inf_ln, _monotone(R.ln_bracket, Fraction(0)), "ln", "ln"),
        _op("neg_inf_ln", 1, R.neg_inf_ln, _monotone(R.ln_bracket, Fraction(0)), "ln", "ln"),
        _op("inf_exp", 1, R.inf_exp, _monotone(_exp_enclosure, None), "exp", "exp"),
        _op("neg_inf_exp", 1, R.neg_inf_exp, _monotone(_exp_enclosure, None), "exp", "exp"),
        _op("inf_log1p", 1, R.inf_log1p, _monotone(_log1p_bracket, Fraction(-1)), "log1p", "log1p"),
        _op("neg_inf_log1p", 1, R.neg_inf_log1p, _monotone(_log1p_bracket, Fraction(-1)), "log1p", "log1p"),
        _op("inf_expm1", 1, R.inf_expm1, _monotone(_expm1_bracket, None), "expm1", "expm1"),
        _op("neg_inf_expm1", 1, R.neg_inf_expm1, _monotone(_expm1_bracket, None), "expm1", "expm1"),
        # round-to-nearest forms: only for writing down the seeds' naive formulas, never a constant of ours
        _op("near_add", 2, _nearest("near_add", lambda a, b: a + b), _iadd, "+", "add"),
        _op("near_sub", 2, _nearest("near_sub", lambda a, b: a - b), _isub, "-", "sub"),
        _op("near_mul", 2, _nearest("near_mul", lambda a, b: a * b), _imul, "*", "mul"),
        _op("near_div", 2, _nearest("near_div", lambda a, b: a / b), _idiv, "/", "div"),
        _op("near_ln", 1, _nearest("near_ln", math.log), _monotone(R.ln_bracket, Fraction(0)), "ln", "ln"),
        _op("near_exp", 1, _nearest("near_exp", math.exp), _monotone(_exp_enclosure, None), "exp", "exp"),
    ]
}


def _has_symbolic(env: Env) -> bool:
    """Whether a value in ``env`` is one of the harness's symbolic floats (vetdp.engine.symbolic)."""
    return any(getattr(type(v), "_vetdp_symbolic_", False) for v in env.values())


def _symbolic_value(expr: Expr, env: Env):
    """``expr`` over symbolic values: a symbolic float whose term is ``expr`` with their terms substituted."""
    symbolic = next(v for v in env.values() if getattr(type(v), "_vetdp_symbolic_", False))
    return type(symbolic).__vetdp_eval__(expr, env)


def _lift(x: Expr | float | int) -> Expr:
    if isinstance(x, Expr):
        return x
    return Const(x)


class Expr(abc.ABC):
    """A privacy-constant expression; see the module docstring."""

    # ----- building (method names mirror the rounding primitives)
    def _apply(self, name: str, *others: Expr | float | int) -> Op:
        return Op(name, (self, *map(_lift, others)))

    def inf_add(self, other): return self._apply("inf_add", other)  # noqa: E704
    def neg_inf_add(self, other): return self._apply("neg_inf_add", other)  # noqa: E704
    def inf_sub(self, other): return self._apply("inf_sub", other)  # noqa: E704
    def neg_inf_sub(self, other): return self._apply("neg_inf_sub", other)  # noqa: E704
    def inf_mul(self, other): return self._apply("inf_mul", other)  # noqa: E704
    def neg_inf_mul(self, other): return self._apply("neg_inf_mul", other)  # noqa: E704
    def inf_div(self, other): return self._apply("inf_div", other)  # noqa: E704
    def neg_inf_div(self, other): return self._apply("neg_inf_div", other)  # noqa: E704
    def inf_ln(self): return self._apply("inf_ln")  # noqa: E704
    def neg_inf_ln(self): return self._apply("neg_inf_ln")  # noqa: E704
    def inf_exp(self): return self._apply("inf_exp")  # noqa: E704
    def neg_inf_exp(self): return self._apply("neg_inf_exp")  # noqa: E704
    def inf_log1p(self): return self._apply("inf_log1p")  # noqa: E704
    def neg_inf_log1p(self): return self._apply("neg_inf_log1p")  # noqa: E704
    def inf_expm1(self): return self._apply("inf_expm1")  # noqa: E704
    def neg_inf_expm1(self): return self._apply("neg_inf_expm1")  # noqa: E704

    # ----- evaluation
    @abc.abstractmethod
    def to_float(self, env: Env) -> float:
        """The float64 this expression evaluates to, every step rounded as its name says."""

    @abc.abstractmethod
    def enclose(self, env: Env, prec: int = 128) -> Interval:
        """Rationals ``lo <= ideal value <= hi``, every step computed exactly over the reals."""

    @abc.abstractmethod
    def to_sympy(self):
        """The ideal (unrounded) formula as a sympy expression over its variables."""

    def variables(self) -> dict[str, str]:
        """Variable name -> kind ("float" or "int")."""
        return {v.name: v.kind for v in self.walk() if isinstance(v, Var)}

    def walk(self) -> Iterator[Expr]:
        """Every node, children before parents (evaluation order)."""
        yield self

    def steps(self) -> list[Op]:
        """The operations in evaluation order."""
        return [node for node in self.walk() if isinstance(node, Op)]

    def real_value(self, env: Env, digits: int = 30) -> Fraction:
        """The ideal value to about ``digits`` significant digits (midpoint of an enclosure)."""
        prec = max(64, int(digits * 3.33) + 16)
        while True:
            lo, hi = self.enclose(env, prec)
            mid = (lo + hi) / 2
            if hi - lo <= abs(mid) * Fraction(1, 10**digits) or prec > 1 << 14:
                return mid
            prec *= 2


@dataclasses.dataclass(frozen=True, eq=True)
class Var(Expr):
    name: str
    kind: str = "float"

    def __post_init__(self):
        if self.kind not in ("float", "int"):
            raise ValueError(f"kind={self.kind!r} must be 'float' or 'int'")

    def value(self, env: Env) -> Fraction:
        if self.name not in env:
            raise KeyError(f"no value for variable {self.name!r} (have {sorted(env)})")
        x = env[self.name]
        if self.kind == "int":
            return Fraction(R.exact_int_to_float(self.name, x))
        return R.exact_fraction(self.name, x)

    def to_float(self, env: Env) -> float:
        if _has_symbolic(env):
            return _symbolic_value(self, env)
        return float(self.value(env))

    def enclose(self, env: Env, prec: int = 128) -> Interval:
        v = self.value(env)
        return v, v

    def to_sympy(self):
        import sympy

        if self.kind == "int":
            return sympy.Symbol(self.name, integer=True, positive=True)
        return sympy.Symbol(self.name, real=True)

    def __str__(self) -> str:
        return self.name


@dataclasses.dataclass(frozen=True, eq=True)
class Const(Expr):
    value: float | int

    def __post_init__(self):
        R.exact_fraction("constant", self.value)  # finite float or int only
        if isinstance(self.value, int):
            R.exact_int_to_float("constant", self.value)

    def to_float(self, env: Env) -> float:
        return float(self.value)

    def enclose(self, env: Env, prec: int = 128) -> Interval:
        v = Fraction(self.value)
        return v, v

    def to_sympy(self):
        import sympy

        return sympy.Rational(Fraction(self.value))

    def __str__(self) -> str:
        return repr(self.value) if not float(self.value).is_integer() else str(int(self.value))


@dataclasses.dataclass(frozen=True, eq=True)
class Op(Expr):
    name: str
    args: tuple[Expr, ...]

    def __post_init__(self):
        info = OPS.get(self.name)
        if info is None:
            raise ValueError(f"operation {self.name!r} is not one of {sorted(OPS)}")
        if len(self.args) != info.arity:
            raise ValueError(f"{self.name} takes {info.arity} argument(s), got {len(self.args)}")
        object.__setattr__(self, "_hash", hash((self.name, self.args)))  # terms are hashed often; compute once

    def __hash__(self) -> int:
        return self._hash

    @property
    def info(self) -> OpInfo:
        return OPS[self.name]

    def to_float(self, env: Env) -> float:
        if _has_symbolic(env):
            return _symbolic_value(self, env)
        return self.info.rounded(*(a.to_float(env) for a in self.args))

    def enclose(self, env: Env, prec: int = 128) -> Interval:
        return self.info.exact(*(a.enclose(env, prec) for a in self.args), prec)

    def to_sympy(self):
        import sympy

        args = [a.to_sympy() for a in self.args]
        ideal = self.info.ideal
        if ideal == "add":
            return args[0] + args[1]
        if ideal == "sub":
            return args[0] - args[1]
        if ideal == "mul":
            return args[0] * args[1]
        if ideal == "div":
            return args[0] / args[1]
        if ideal == "ln":
            return sympy.log(args[0])
        if ideal == "exp":
            return sympy.exp(args[0])
        if ideal == "log1p":
            return sympy.log(1 + args[0])
        return sympy.exp(args[0]) - 1  # expm1

    def walk(self) -> Iterator[Expr]:
        for a in self.args:
            yield from a.walk()
        yield self

    def __str__(self) -> str:
        arrow = {"up": "↑", "down": "↓"}.get(self.info.direction, "≈")
        if self.info.arity == 2:
            return f"({self.args[0]} {self.info.symbol}{arrow} {self.args[1]})"
        return f"{self.info.symbol}{arrow}({self.args[0]})"


def var(name: str, kind: str = "float") -> Var:
    """A named parameter of a privacy constant."""
    return Var(name, kind)


def const(value: float | int) -> Const:
    """A literal float64 (or exactly representable int)."""
    return Const(value)


ZERO, ONE, TWO = Const(0), Const(1), Const(2)
