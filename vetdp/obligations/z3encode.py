"""Translate a privacy-constant :class:`~vetdp.arith.expr.Expr` to z3 and state its proof obligations.

Every node ``n`` of the expression gets two z3 reals: ``R[n]``, the float64 the code computes,
and ``V[n]``, the ideal real value (every step exact). The encoder walks the one definition
(``expr.walk()``), reading each operation's ideal meaning (``Op.info.ideal``) and rounding
direction (``Op.info.direction``); nothing about a formula is retyped here.

Rounding is the IEEE 754 model of a correctly rounded operation on the exact result ``x``:

* ``up``: ``x <= R <= x + |x|·2^-52 + 2^-1074`` (a result below ``-MAX`` saturates to ``-MAX``);
* ``down``: ``x - |x|·2^-52 - 2^-1074 <= R <= x`` (a result above ``MAX`` saturates to ``MAX``);
* ``nearest``: ``|R - x| <= |x|·2^-52 + 2^-1074`` (covers libm's ln/exp, within one ulp);

and in all modes rounding never crosses a float (0, ±2^-1074, ½, 1, 2). ``MAX`` is the
largest float64. The model follows from IEEE 754's definition of directed rounding (the
least float >= x, the greatest <= x) and the float64 gap lemma, which z3 proves over all
bit patterns (obligation ``contract.float64_gap``, :mod:`vetdp.obligations.contracts`);
rounding a symbolic real directly in z3's floating-point theory timed out at 30 s even on
[1, 2). That each primitive *is* that directed rounding is checked against z3's IEEE
semantics and MPFR (``contract.<op>``, ``tests/test_rounding.py``).

ln and exp are one uninterpreted function each, constrained only by instances of facts
that :mod:`vetdp.obligations.contracts` checks with mpmath: monotone, sign, range.

Obligations (each a z3 query whose negation must be unsatisfiable):

* ``step<i>.defined``: step i never overflows in its rounding direction, never divides by
  zero, and takes ln only of a positive number — assuming the preconditions and steps < i;
* ``sound``: the ideal value is defined and the float result is >= it (an upper bound) or
  <= it (a lower bound), as the constant requires.
"""

from __future__ import annotations

import dataclasses
import itertools
import time
from fractions import Fraction

import z3

from vetdp.arith.constants import ConstantSpec, VarRange  # defined in the light runtime; re-exported
from vetdp.arith.expr import Const, Expr, Op, Var
from vetdp.obligations.limits import rlimit_spent

__all__ = ["VarRange", "ConstantSpec", "Encoding", "Query", "run_query", "solve", "Z3Run", "MAX_FLOAT", "REL_ERR",
           "ABS_ERR"]

MAX_FLOAT = Fraction(2**1024 - 2**971)
REL_ERR = Fraction(1, 2**52)  # one ulp relative (directed rounding moves less than an ulp)
ABS_ERR = Fraction(1, 2**1074)  # one subnormal ulp
# Facts about ln/exp used as axioms; each is checked with mpmath in contracts.py.
LN_OF_MIN_SUBNORMAL_LB = Fraction(-745)  # ln(2^-1074) ≈ -744.44
LN_OF_MAX_UB = Fraction(710)  # ln(MAX) ≈ 709.78
EXP_SAFE_ARG = Fraction(709)  # exp(709) ≈ 8.2e307 < MAX
MIN_SUBNORMAL = Fraction(1, 2**1074)
_FIXED_FLOATS = [z3.RealVal(c) for c in (-MIN_SUBNORMAL, 0, MIN_SUBNORMAL, Fraction(1, 2), 1, 2)]


def _real(q: Fraction | int) -> z3.ArithRef:
    return z3.RealVal(Fraction(q))


def _abs(x: z3.ArithRef) -> z3.ArithRef:
    return z3.If(x >= 0, x, -x)


@dataclasses.dataclass
class Query:
    """One obligation: assumptions and a goal; proved when assumptions ∧ ¬goal is unsat."""

    id: str
    assumptions: list
    goal: z3.BoolRef
    leaves: dict  # variable name -> z3 real (to read a counterexample)


@dataclasses.dataclass
class QueryOutcome:
    status: str  # "proved" | "refuted" | "unknown"
    seconds: float
    rlimit_used: int  # z3 resource units the query spent (deterministic, see :func:`solve`)
    reason: str = ""
    model: dict | None = None  # variable name -> Fraction (refuted only)


@dataclasses.dataclass
class Z3Run:
    """One z3 check: the answer, the solver (its model when sat), the resource units spent, whether the limit
    was what stopped it, and the seconds it took (reported, never a limit)."""

    result: z3.CheckSatResult
    solver: z3.Solver
    ctx: z3.Context
    rlimit: int
    rlimit_used: int
    seconds: float

    @property
    def exhausted(self) -> bool:
        return self.result == z3.unknown and self.rlimit_used >= self.rlimit

    def unknown_reason(self) -> str:
        """Why z3 answered unknown: the resource limit spent (see :func:`rlimit_spent`), or z3's own reason."""
        return rlimit_spent(self.rlimit) if self.exhausted else f"z3: {self.solver.reason_unknown()}"


def solve(assertions: list, rlimit: int) -> Z3Run:
    """Check the conjunction of ``assertions`` with z3, bounded by ``rlimit`` resource units, never by time.

    The assertions are translated into a fresh z3 context, so the units spent (z3's ``rlimit count``) and the
    answer depend only on the query and the z3 version, not on what ran before in the process nor on the load
    of the machine. ``rlimit`` must be a positive int."""
    if isinstance(rlimit, bool) or not isinstance(rlimit, int) or rlimit < 1:
        raise ValueError(f"rlimit={rlimit!r} must be an int in [1, inf)")
    ctx = z3.Context()
    s = z3.Solver(ctx=ctx)
    s.set("rlimit", rlimit)
    s.add(*[a.translate(ctx) for a in assertions])
    t0 = time.perf_counter()
    r = s.check()
    dt = time.perf_counter() - t0
    used = int(s.statistics().get_key_value("rlimit count"))
    return Z3Run(r, s, ctx, rlimit, used, dt)


def run_query(q: Query, rlimit: int) -> QueryOutcome:
    """Decide ``q`` with z3 within ``rlimit`` resource units (:func:`solve`); "unknown" says why."""
    run = solve([*q.assumptions, z3.Not(q.goal)], rlimit)
    if run.result == z3.unsat:
        return QueryOutcome("proved", run.seconds, run.rlimit_used)
    if run.result == z3.sat:
        m = run.solver.model()
        model = {}
        for name, term in q.leaves.items():
            v = m.eval(term.translate(run.ctx), model_completion=True)
            model[name] = _z3_to_fraction(v)
        return QueryOutcome("refuted", run.seconds, run.rlimit_used, model=model)
    return QueryOutcome("unknown", run.seconds, run.rlimit_used, reason=run.unknown_reason())


def _z3_to_fraction(v: z3.ExprRef) -> Fraction:
    if z3.is_rational_value(v):
        return Fraction(v.numerator_as_long(), v.denominator_as_long())
    if z3.is_algebraic_value(v):
        return Fraction(v.approx(40).as_fraction())
    raise ValueError(f"z3 value {v} is not a number")


class Encoding:
    """The z3 translation of one :class:`ConstantSpec` (see the module docstring)."""

    def __init__(self, spec: ConstantSpec):
        self.spec = spec
        self.ln = z3.Function("ln!", z3.RealSort(), z3.RealSort())  # '!' keeps them apart from any variable
        self.exp = z3.Function("exp!", z3.RealSort(), z3.RealSort())
        self.R: dict[Expr, z3.ArithRef] = {}
        self.V: dict[Expr, z3.ArithRef] = {}
        self.leaves: dict[str, z3.ArithRef] = {}
        self.pre: list = []
        self.steps: list[Op] = []
        self.model: dict[Op, list] = {}  # rounding model of each step
        self.defined: dict[Op, z3.BoolRef] = {}  # step is defined on its float arguments
        self.ideal_defined: list = []  # every ideal step is defined
        self.ln_args: list[z3.ArithRef] = []
        self.exp_args: list[z3.ArithRef] = []
        for node in spec.expr.walk():
            if node not in self.R:
                self._encode(node)
        if spec.relations is not None:
            self.pre.extend(spec.relations(self.leaves))

    # ------------------------------------------------------------------ nodes
    def _encode(self, node: Expr) -> None:
        if isinstance(node, Var):
            x = z3.Real(node.name)
            rng = self.spec.range_of(node.name)
            self.pre += [x >= _real(rng.lo), x <= _real(rng.hi)]
            self.leaves[node.name] = x
            self.R[node] = self.V[node] = x  # int casts are exact: see contracts.cast_obligation
            return
        if isinstance(node, Const):
            self.R[node] = self.V[node] = _real(Fraction(node.value))
            return
        assert isinstance(node, Op)
        i = len(self.steps)
        self.steps.append(node)
        info = node.info
        ra = [self.R[a] for a in node.args]
        va = [self.V[a] for a in node.args]
        x, dom = self._ideal(info.ideal, ra)
        v, vdom = self._ideal(info.ideal, va)
        r = z3.Real(f"R{i}_{node.name}")
        self.R[node], self.V[node] = r, v
        self.ideal_defined.extend(vdom)
        direction = info.direction
        mx = _real(MAX_FLOAT)
        err = _abs(x) * _real(REL_ERR) + _real(ABS_ERR)
        # rounding is monotone and fixes every float, so it never crosses a float such as 0 or 1
        sign = [z3.And(z3.Implies(x >= c, r >= c), z3.Implies(x <= c, r <= c)) for c in _FIXED_FLOATS]
        if direction == "up":
            rng = [x <= mx]
            model = [z3.If(x < -mx, r == -mx, z3.And(r >= x, r <= x + err))]
        elif direction == "down":
            rng = [x >= -mx]
            model = [z3.If(x > mx, r == mx, z3.And(r <= x, r >= x - err))]
        else:
            rng = [x <= mx, x >= -mx]
            model = [r - x <= err, x - r <= err]
        self.defined[node] = z3.And(*dom, *rng)
        self.model[node] = model + sign

    def _ideal(self, ideal: str, a: list[z3.ArithRef]) -> tuple[z3.ArithRef, list]:
        """The exact operation on z3 reals and the condition under which it is defined."""
        if ideal == "add":
            return a[0] + a[1], []
        if ideal == "sub":
            return a[0] - a[1], []
        if ideal == "mul":
            return a[0] * a[1], []
        if ideal == "div":
            return a[0] / a[1], [a[1] != 0]
        if ideal == "ln":
            self.ln_args.append(a[0])
            return self.ln(a[0]), [a[0] > 0]
        if ideal == "log1p":
            self.ln_args.append(1 + a[0])
            return self.ln(1 + a[0]), [a[0] > -1]
        if ideal == "exp":
            self.exp_args.append(a[0])
            return self.exp(a[0]), []
        if ideal == "expm1":
            self.exp_args.append(a[0])
            return self.exp(a[0]) - 1, []
        raise ValueError(f"operation with ideal {ideal!r} has no z3 encoding")

    # ------------------------------------------------------------------ axioms
    def axioms(self) -> list:
        """Instances of the ln/exp facts for every argument term (pairs for monotonicity)."""
        ax = []
        ln, ex = self.ln, self.exp
        for a in self.ln_args:
            ax += [z3.Implies(a > 0, ln(a) <= a - 1),
                   z3.Implies(a >= 1, ln(a) >= 0), z3.Implies(z3.And(a > 0, a <= 1), ln(a) <= 0),
                   z3.Implies(a == 1, ln(a) == 0),
                   z3.Implies(a >= _real(MIN_SUBNORMAL), ln(a) >= _real(LN_OF_MIN_SUBNORMAL_LB)),
                   z3.Implies(z3.And(a > 0, a <= _real(MAX_FLOAT)), ln(a) <= _real(LN_OF_MAX_UB))]
        for a, b in itertools.permutations(self.ln_args, 2):
            ax.append(z3.Implies(z3.And(a > 0, a <= b), ln(a) <= ln(b)))
        for a in self.exp_args:
            ax += [ex(a) > 0, ex(a) >= 1 + a, z3.Implies(a <= 0, ex(a) <= 1),
                   z3.Implies(a <= _real(EXP_SAFE_ARG), ex(a) <= _real(MAX_FLOAT))]
        for a, b in itertools.permutations(self.exp_args, 2):
            ax.append(z3.Implies(a <= b, ex(a) <= ex(b)))
        return ax

    # ------------------------------------------------------------------ obligations
    def queries(self) -> list[Query]:
        """``step<i>.defined`` for every step, then ``sound``."""
        out = []
        base = self.pre + self.axioms()
        earlier: list = []
        for i, step in enumerate(self.steps):
            out.append(Query(f"step{i}.{step.name}.defined", base + earlier, self.defined[step], self.leaves))
            earlier = earlier + [self.defined[step]] + self.model[step]
        root = self.spec.expr
        r, v = self.R[root], self.V[root]
        order = r >= v if self.spec.bound == "upper" else r <= v
        out.append(Query("sound", base + earlier, z3.And(*self.ideal_defined, order), self.leaves))
        if self.spec.result is not None:
            lo, hi = self.spec.result
            out.append(Query("range", base + earlier, z3.And(r >= _real(lo), r <= _real(hi)), self.leaves))
        return out
