"""Directed-rounding primitives and privacy-constant expressions, checked against oracles.

Every primitive's result r is checked against the *characterisation* of directed rounding,
decided against the true value: for ``inf_*``, r >= truth and the next float below r is
< truth (r is the least float >= truth); for ``neg_inf_*`` the mirror. The truth of a
rational operation is an exact Fraction; the truth of a transcendental one is an mpmath
value at >= 200 bits, with the precision raised until the comparison is decided. gmpy2
(MPFR, 53-bit subnormalizing context) is a second, independent oracle.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from fractions import Fraction

import gmpy2
import mpmath
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from vetdp.arith import rounding as R
from vetdp.arith.expr import ONE, OPS, Const, Op, Var, const, var

MAX = sys.float_info.max
TINY = 5e-324
MIN_NORMAL = 2.2250738585072014e-308

EDGES = [
    0.0, TINY, 1e-323, math.nextafter(MIN_NORMAL, 0), MIN_NORMAL, 1e-300, 1e-20, 2**-53, 2**-52, 1e-5, 0.25,
    0.5, math.nextafter(0.5, 0), 1 - 2**-53, 1.0, 1 + 2**-52, 2.0, 3.0, 10.0, 709.782712893384,
    709.7827128933841, 710.0, 744.4400719213812, 745.1332191019411, 745.1332191019412, 746.0, 1e10, 2.0**512,
    1e300, math.nextafter(MAX, 0), MAX,
]
SIGNED_EDGES = EDGES + [-x for x in EDGES if x]

subnormals = st.integers(-(2**52 - 1), 2**52 - 1).map(lambda m: m * TINY)
near_one = st.integers(-(2**12), 2**12).map(lambda k: 1.0 + k * 2.0**-53)
any_floats = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(SIGNED_EDGES),
    subnormals,
    near_one,
    st.floats(min_value=-800.0, max_value=800.0),
)

SETTINGS = settings(max_examples=1500, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


# ------------------------------------------------------------------ deciding against the truth

def _sign(q: Fraction) -> int:
    return (q > 0) - (q < 0)


def mp_sign(c: float | Fraction, truth: Callable[[], mpmath.mpf]) -> int:
    """sign(c - truth), decided with mpmath at >= 200 bits, raising precision until sure.

    mpmath's elementary functions are accurate to a few units in the last place of the
    working precision; a margin of 2**20 such units makes the decision sound.
    """
    prec = 200
    while prec <= 1 << 16:
        with mpmath.workprec(prec):
            t = truth()
            cm = mpmath.mpf(c) if isinstance(c, float) else mpmath.mpf(c.numerator) / c.denominator
            diff = cm - t
            if abs(diff) > (abs(cm) + abs(t)) * mpmath.mpf(2) ** (20 - prec):
                return 1 if diff > 0 else -1
            if t == 0 and cm == 0:
                return 0
        prec *= 4
    raise AssertionError(f"could not decide {c!r} against the truth")


def check_directed(op: str, fn: Callable[..., float], args: tuple, sign_of: Callable[[float], int],
                   up: bool) -> float | None:
    """Assert that ``fn(*args)`` rounds the truth (known through ``sign_of``) as ``up`` says.

    ``sign_of(c)`` is sign(c - truth). Returns the result, or None when it rightly raised.
    """
    overflows = sign_of(MAX) < 0 if up else sign_of(-MAX) > 0
    if overflows:
        with pytest.raises(R.RoundingOverflowError) as info:
            fn(*args)
        assert op in str(info.value) or op.startswith("round_"), info.value
        return None
    r = fn(*args)
    assert isinstance(r, float) and math.isfinite(r), (op, r)
    assert math.copysign(1.0, r) == 1.0 or r != 0.0, f"{op} returned -0.0"
    if up:
        assert sign_of(r) >= 0, f"{op} = {r!r} is below the truth"
        if r != -MAX:
            assert sign_of(math.nextafter(r, -math.inf)) < 0, f"{op} = {r!r} is not the least float >= truth"
    else:
        assert sign_of(r) <= 0, f"{op} = {r!r} is above the truth"
        if r != MAX:
            assert sign_of(math.nextafter(r, math.inf)) > 0, f"{op} = {r!r} is not the greatest float <= truth"
    return r


def mpfr_context(up: bool) -> gmpy2.context:
    return gmpy2.context(precision=53, emin=-1073, emax=1024, subnormalize=True,
                         round=gmpy2.RoundUp if up else gmpy2.RoundDown)


def mpfr_oracle(fn: Callable, args: tuple[float, ...], up: bool) -> float:
    with gmpy2.context(mpfr_context(up)):
        return float(fn(*(gmpy2.mpfr(a) for a in args)))


def assert_matches_mpfr(r: float | None, fn: Callable, args: tuple[float, ...], up: bool) -> None:
    g = mpfr_oracle(fn, args, up)
    if r is None:
        assert math.isinf(g), f"MPFR gives {g!r} for {args} where the primitive raised"
    else:
        assert r == g, f"primitive gives {r!r}, MPFR gives {g!r} for {args}"


# ------------------------------------------------------------------ rational operations

RATIONAL = {
    "add": (lambda a, b: a + b, gmpy2.add),
    "sub": (lambda a, b: a - b, gmpy2.sub),
    "mul": (lambda a, b: a * b, gmpy2.mul),
    "div": (lambda a, b: a / b, gmpy2.div),
}


@pytest.mark.parametrize("name", sorted(RATIONAL))
@SETTINGS
@given(a=any_floats, b=any_floats)
@example(a=MAX, b=MAX)
@example(a=-MAX, b=MAX)
@example(a=1.0, b=2.0**-53)
@example(a=1.0, b=-(2.0**-54))
@example(a=TINY, b=0.5)
@example(a=-TINY, b=3.0)
@example(a=1e308, b=10.0)
@example(a=1e308, b=0.1)
@example(a=1.0, b=3.0)
@example(a=0.1, b=0.1)
def test_rational_primitive_rounds_exact_value_in_its_direction(name, a, b):
    exact, mpfr_fn = RATIONAL[name]
    if name == "div" and b == 0:
        return
    truth = exact(Fraction(a), Fraction(b))

    def sign_of(c: float) -> int:
        return _sign(Fraction(c) - truth)

    for up in (True, False):
        op = ("inf_" if up else "neg_inf_") + name
        fn = getattr(R, op)
        r = check_directed(op, fn, (a, b), sign_of, up)
        assert_matches_mpfr(r, mpfr_fn, (a, b), up)


@pytest.mark.parametrize("name", ["add", "sub"])
@settings(max_examples=500, deadline=None, derandomize=True)
@given(a=any_floats, ulps=st.integers(-4, 4))
def test_add_sub_near_cancellation_are_directed(name, a, ulps):
    b = a
    for _ in range(abs(ulps)):
        b = math.nextafter(b, math.inf if ulps > 0 else -math.inf)
    if not math.isfinite(b):
        return
    b = -b if name == "add" else b
    exact, _ = RATIONAL[name]
    truth = exact(Fraction(a), Fraction(b))
    for up in (True, False):
        op = ("inf_" if up else "neg_inf_") + name
        check_directed(op, getattr(R, op), (a, b), lambda c: _sign(Fraction(c) - truth), up)


def _outcome(fn: Callable, a: float, b: float) -> tuple:
    try:
        r = fn(a, b)
    except Exception as e:  # noqa: BLE001 - the error's type is part of the outcome compared
        return type(e), None
    return None, r, math.copysign(1.0, r)


@pytest.mark.parametrize("name", sorted(RATIONAL))
@SETTINGS
@given(a=any_floats, b=any_floats)
@example(a=-TINY, b=TINY)  # a result of -0.0 in hardware: the exact path gives +0.0
@example(a=MAX, b=-TINY)  # next to MAX: the neighbour beyond it is infinite
@example(a=-MAX, b=TINY)
def test_fast_rational_path_answers_as_the_exact_one(name, a, b):
    """The hardware-checked path (_directed_fast) gives the same float, sign of zero and error as Fraction alone."""
    for op in ("inf_" + name, "neg_inf_" + name):
        fn = getattr(R, op)
        assert _outcome(fn, a, b) == _outcome(fn.exactly, a, b), f"{op}({a!r}, {b!r})"


def test_fast_rational_path_is_taken_and_checks_the_hardware(monkeypatch):
    """The fast path answers ordinary arguments itself; given a hardware result two ulps off (another rounding mode,
    a broken FPU), its exact check refuses it and the exact path answers."""
    assert R._directed_fast("add", 0.1, 0.2, True) == R.inf_add.exactly(0.1, 0.2)
    assert R._directed_fast("div", 1.0, 3.0, False) == R.neg_inf_div.exactly(1.0, 3.0)
    monkeypatch.setitem(R._NEAREST, "add", lambda a, b: math.nextafter(math.nextafter(a + b, 0.0), 0.0))
    assert R._directed_fast("add", 0.1, 0.2, True) is None
    assert R.inf_add(0.1, 0.2) == R.inf_add.exactly(0.1, 0.2) == 0.1 + 0.2  # the exact sum lies just below


def test_exact_zero_result_is_positive_zero():
    for op in ("inf_sub", "neg_inf_sub"):
        r = getattr(R, op)(1.0, 1.0)
        assert r == 0.0 and math.copysign(1.0, r) == 1.0
    r = R.neg_inf_add(-0.5, 0.5)
    assert r == 0.0 and math.copysign(1.0, r) == 1.0


# ------------------------------------------------------------------ transcendental operations

TRANSCENDENTAL = {
    # name: (mpmath function, gmpy2 function, strategy of arguments in the domain)
    "ln": (mpmath.log, gmpy2.log, st.one_of(any_floats.map(abs).filter(lambda x: x > 0),
                                            st.floats(min_value=TINY, max_value=4.0))),
    "exp": (mpmath.exp, gmpy2.exp, any_floats),
    "log1p": (mpmath.log1p, gmpy2.log1p, st.one_of(any_floats.filter(lambda x: x > -1),
                                                   st.floats(min_value=-1.0, max_value=1.0, exclude_min=True))),
    "expm1": (mpmath.expm1, gmpy2.expm1, any_floats),
}


EXACT_POINTS = {"ln": 1.0, "exp": 0.0, "log1p": 0.0, "expm1": 0.0}  # the only exactly representable results


def _transcendental_case(name: str, x: float) -> None:
    mp_fn, mpfr_fn, _ = TRANSCENDENTAL[name]
    if x == EXACT_POINTS[name]:
        return  # test_transcendental_exact_points; elsewhere the truth is irrational

    def sign_of(c: float) -> int:
        if name == "expm1" and x < -1:
            # e^x - 1 is within e^x of -1, beyond any precision for x = -1e308: compare c + 1
            # (exact) with e^x instead, the same question without the cancellation
            return mp_sign(Fraction(c) + 1, lambda: mpmath.exp(mpmath.mpf(x)))
        return mp_sign(c, lambda: mp_fn(mpmath.mpf(x)))

    for up in (True, False):
        op = ("inf_" if up else "neg_inf_") + name
        fn = getattr(R, op)
        r = check_directed(op, fn, (x,), sign_of, up)
        assert_matches_mpfr(r, mpfr_fn, (x,), up)


@pytest.mark.parametrize("name", sorted(TRANSCENDENTAL))
def test_transcendental_primitive_on_edge_floats_is_directed(name):
    domain_ok = {"ln": lambda x: x > 0, "log1p": lambda x: x > -1}.get(name, lambda x: True)
    for x in SIGNED_EDGES:
        if domain_ok(x):
            _transcendental_case(name, x)


def _make_transcendental_test(name: str):
    @SETTINGS
    @given(x=TRANSCENDENTAL[name][2])
    def test(x):
        _transcendental_case(name, x)

    return test


test_inf_and_neg_inf_ln_are_correctly_directed = _make_transcendental_test("ln")
test_inf_and_neg_inf_exp_are_correctly_directed = _make_transcendental_test("exp")
test_inf_and_neg_inf_log1p_are_correctly_directed = _make_transcendental_test("log1p")
test_inf_and_neg_inf_expm1_are_correctly_directed = _make_transcendental_test("expm1")


def test_transcendental_exact_points():
    assert R.inf_ln(1.0) == R.neg_inf_ln(1.0) == 0.0
    assert R.inf_exp(0.0) == R.neg_inf_exp(0.0) == 1.0
    assert R.inf_exp(-0.0) == 1.0
    for op in ("inf_log1p", "neg_inf_log1p", "inf_expm1", "neg_inf_expm1"):
        assert getattr(R, op)(0.0) == 0.0


def test_directed_pairs_straddle_ln2():
    # ln 2 = 0.693147180559945309417232...; the two directions are adjacent floats around it
    lo, hi = R.neg_inf_ln(2.0), R.inf_ln(2.0)
    assert math.nextafter(lo, math.inf) == hi
    assert Fraction(lo) < Fraction("0.693147180559945309417232121458") < Fraction(hi)


# ------------------------------------------------------------------ errors

ALL_PRIMITIVES = [name for name in R.__all__ if name.startswith(("inf_", "neg_inf_"))]
BINARY = [n for n in ALL_PRIMITIVES if n.split("_")[-1] in RATIONAL]
UNARY = [n for n in ALL_PRIMITIVES if n not in BINARY]

BAD_ARGS = [
    pytest.param(math.nan, R.FloatArithmeticError, id="nan"),
    pytest.param(math.inf, R.FloatArithmeticError, id="inf"),
    pytest.param(-math.inf, R.FloatArithmeticError, id="-inf"),
    pytest.param(True, TypeError, id="bool"),
    pytest.param("1.0", TypeError, id="str"),
    pytest.param(None, TypeError, id="None"),
]


def test_primitive_lists_cover_sixteen_operations():
    assert len(BINARY) == 8 and len(UNARY) == 8


@pytest.mark.parametrize("bad,exc", BAD_ARGS)
@pytest.mark.parametrize("op", UNARY)
def test_unary_primitive_bad_argument_raises(op, bad, exc):
    with pytest.raises(exc) as info:
        getattr(R, op)(bad)
    assert op in str(info.value) and repr(bad) in str(info.value)


@pytest.mark.parametrize("bad,exc", BAD_ARGS)
@pytest.mark.parametrize("position", [0, 1])
@pytest.mark.parametrize("op", BINARY)
def test_binary_primitive_bad_argument_raises(op, position, bad, exc):
    args = [2.0, 2.0]
    args[position] = bad
    with pytest.raises(exc) as info:
        getattr(R, op)(*args)
    assert op in str(info.value) and repr(bad) in str(info.value)


def test_float_arithmetic_error_is_a_value_error():
    assert issubclass(R.FloatArithmeticError, ValueError)
    assert issubclass(R.RoundingOverflowError, R.FloatArithmeticError)


@pytest.mark.parametrize("op", ["inf_ln", "neg_inf_ln"])
@pytest.mark.parametrize("x", [0.0, -0.0, -TINY, -1.0, -MAX])
def test_ln_outside_domain_raises(op, x):
    with pytest.raises(R.FloatArithmeticError, match=r"\(0, inf\)") as info:
        getattr(R, op)(x)
    assert op in str(info.value) and repr(x) in str(info.value)


@pytest.mark.parametrize("op", ["inf_log1p", "neg_inf_log1p"])
@pytest.mark.parametrize("x", [-1.0, -1.5, -MAX])
def test_log1p_outside_domain_raises(op, x):
    with pytest.raises(R.FloatArithmeticError, match=r"\(-1, inf\)") as info:
        getattr(R, op)(x)
    assert op in str(info.value)


@pytest.mark.parametrize("op", ["inf_div", "neg_inf_div"])
@pytest.mark.parametrize("b", [0.0, -0.0])
def test_division_by_zero_raises(op, b):
    with pytest.raises(R.FloatArithmeticError, match="by zero") as info:
        getattr(R, op)(1.5, b)
    assert "1.5" in str(info.value)


@pytest.mark.parametrize("op,args", [
    pytest.param("inf_exp", (710.0,), id="inf_exp"),
    pytest.param("inf_expm1", (710.0,), id="inf_expm1"),
    pytest.param("inf_mul", (1e308, 10.0), id="inf_mul"),
    pytest.param("neg_inf_mul", (-1e308, 10.0), id="neg_inf_mul"),
    pytest.param("inf_add", (MAX, MAX), id="inf_add"),
    pytest.param("neg_inf_sub", (-MAX, MAX), id="neg_inf_sub"),
    pytest.param("inf_div", (1e308, 0.1), id="inf_div"),
    pytest.param("neg_inf_div", (1e308, -1e-10), id="neg_inf_div"),
])
def test_overflow_toward_rounding_direction_raises(op, args):
    with pytest.raises(R.RoundingOverflowError) as info:
        getattr(R, op)(*args)
    assert op in str(info.value)
    assert isinstance(info.value, OverflowError) and isinstance(info.value, ValueError)


@pytest.mark.parametrize("op,args,expected", [
    pytest.param("neg_inf_exp", (1e308,), MAX, id="neg_inf_exp"),
    pytest.param("neg_inf_exp", (710.0,), MAX, id="neg_inf_exp_710"),
    pytest.param("neg_inf_expm1", (710.0,), MAX, id="neg_inf_expm1"),
    pytest.param("neg_inf_mul", (1e308, 10.0), MAX, id="neg_inf_mul"),
    pytest.param("inf_mul", (-1e308, 10.0), -MAX, id="inf_mul_negative"),
    pytest.param("neg_inf_add", (MAX, MAX), MAX, id="neg_inf_add"),
    pytest.param("inf_exp", (-1e308,), TINY, id="inf_exp_underflow"),
    pytest.param("neg_inf_exp", (-1e308,), 0.0, id="neg_inf_exp_underflow"),
    pytest.param("inf_expm1", (-1e308,), math.nextafter(-1.0, 0), id="inf_expm1_minus_one"),
    pytest.param("neg_inf_expm1", (-1e308,), -1.0, id="neg_inf_expm1_minus_one"),
])
def test_overflow_away_from_rounding_direction_saturates(op, args, expected):
    assert getattr(R, op)(*args) == expected


# ------------------------------------------------------------------ conversions

@pytest.mark.parametrize("n", [0, 1, -1, 2**53, -(2**53), 2**53 + 2, 2**60, 3 * 2**70, 2**1023, 2**1024 - 2**971])
def test_exact_int_to_float_representable_is_exact(n):
    x = R.exact_int_to_float("n", n)
    assert isinstance(x, float) and Fraction(x) == n


@pytest.mark.parametrize("n", [2**53 + 1, -(2**53 + 1), 2**60 + 1, 2**1024 - 2**970, 2**1024, 10**400])
def test_exact_int_to_float_inexact_raises(n):
    with pytest.raises(R.FloatArithmeticError) as info:
        R.exact_int_to_float("count", n)
    assert "count=" in str(info.value)


@pytest.mark.parametrize("n", [True, 1.0, "3", None])
def test_exact_int_to_float_non_int_raises(n):
    with pytest.raises(TypeError, match="count="):
        R.exact_int_to_float("count", n)


fractions = st.one_of(
    st.fractions(),
    st.builds(Fraction, st.integers(-(2**1100), 2**1100), st.integers(1, 2**1100)),
    st.builds(lambda m, e: Fraction(m, 2**e), st.integers(-(2**60), 2**60), st.integers(1000, 1200)),
    st.builds(lambda m, e: Fraction(m * 2**e), st.integers(-(2**60), 2**60), st.integers(960, 1030)),
)


@settings(max_examples=1500, deadline=None, derandomize=True)
@given(q=fractions)
@example(q=Fraction(1, 3))
@example(q=Fraction(1, 2**1075))
@example(q=Fraction(-1, 2**1075))
@example(q=Fraction(2**1024 - 2**970))
@example(q=Fraction(2**1024 - 2**971))
def test_round_up_and_round_down_are_directed(q):
    def sign_of(c: float) -> int:
        return _sign(Fraction(c) - q)

    check_directed("round_up", R.round_up, (q,), sign_of, up=True)
    check_directed("round_down", R.round_down, (q,), sign_of, up=False)


# ------------------------------------------------------------------ expressions

def test_expr_ops_table_maps_each_name_to_its_primitive():
    directed = {name: info for name, info in OPS.items() if not name.startswith("near_")}
    assert sorted(directed) == sorted(ALL_PRIMITIVES)
    assert all(info.direction == "nearest" for name, info in OPS.items() if name not in directed)
    for name, info in directed.items():
        assert info.rounded is getattr(R, name)
        assert info.direction == ("down" if name.startswith("neg_") else "up")
        assert info.ideal == name.split("_")[-1]
        assert info.arity == (2 if name in BINARY else 1)


_LEAVES = st.sampled_from(["x", "y", "c"])


def _trees(depth: int):
    if depth == 0:
        return _LEAVES
    sub = _trees(depth - 1)
    return st.one_of(
        _LEAVES,
        st.tuples(st.sampled_from(BINARY), sub, sub),
        st.tuples(st.sampled_from(UNARY), sub),
    )


def _build(tree) -> object:
    if tree == "c":
        return const(0.75)
    if isinstance(tree, str):
        return var(tree)
    return Op(tree[0], tuple(_build(t) for t in tree[1:]))


def _step_by_step(tree, env) -> float:
    if tree == "c":
        return 0.75
    if isinstance(tree, str):
        return env[tree]
    return getattr(R, tree[0])(*(_step_by_step(t, env) for t in tree[1:]))


_MP_IDEAL = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
             "div": lambda a, b: a / b, "ln": mpmath.log, "exp": mpmath.exp, "log1p": mpmath.log1p,
             "expm1": mpmath.expm1}


def _mp_ideal(tree, env):
    if tree == "c":
        return mpmath.mpf(0.75)
    if isinstance(tree, str):
        return mpmath.mpf(env[tree])
    return _MP_IDEAL[tree[0].split("_")[-1]](*(_mp_ideal(t, env) for t in tree[1:]))


_small = st.floats(min_value=-3.0, max_value=3.0)


@settings(max_examples=400, deadline=None, derandomize=True)
@given(tree=_trees(3), x=_small, y=_small)
def test_expr_to_float_equals_step_by_step_composition(tree, x, y):
    env = {"x": x, "y": y}
    expr = _build(tree)
    try:
        expected = _step_by_step(tree, env)
    except R.FloatArithmeticError as e:
        with pytest.raises(type(e)):
            expr.to_float(env)
        return
    assert expr.to_float(env) == expected


@settings(max_examples=300, deadline=None, derandomize=True)
@given(tree=_trees(3), x=_small, y=_small)
def test_expr_enclose_brackets_the_high_precision_ideal(tree, x, y):
    env = {"x": x, "y": y}
    expr = _build(tree)
    try:
        lo, hi = expr.enclose(env, 128)
    except R.FloatArithmeticError:
        return  # an intermediate interval left a domain; nothing is claimed
    with mpmath.workprec(400):
        try:
            ideal = _mp_ideal(tree, env)
        except (ZeroDivisionError, ValueError):
            return
        if not mpmath.isfinite(ideal) or isinstance(ideal, mpmath.mpc):
            return
        slack = abs(ideal) * mpmath.mpf(2) ** -380 + mpmath.mpf(2) ** -2000
        assert mpmath.mpf(lo.numerator) / lo.denominator <= ideal + slack
        assert mpmath.mpf(hi.numerator) / hi.denominator >= ideal - slack


def test_expr_enclosure_of_rr_constant_is_narrow_and_contains_ln6():
    p, t = var("p"), var("t", "int")
    eps = p.inf_mul(t.inf_sub(1)).inf_div(ONE.neg_inf_sub(p)).inf_ln()
    lo, hi = eps.enclose({"p": 0.75, "t": 3}, 128)
    with mpmath.workprec(300):
        ln6 = mpmath.log(6)
        assert mpmath.mpf(lo.numerator) / lo.denominator < ln6 < mpmath.mpf(hi.numerator) / hi.denominator
    assert hi - lo < Fraction(1, 2**100)


def test_expr_misdirected_ln_falls_below_the_enclosure():
    """The enclosure tells a sound constant from one that rounds the wrong way."""
    p, t = var("p"), var("t", "int")
    sound = p.inf_mul(t.inf_sub(1)).inf_div(ONE.neg_inf_sub(p)).inf_ln()
    broken = p.inf_mul(t.inf_sub(1)).inf_div(ONE.neg_inf_sub(p)).neg_inf_ln()
    env = {"p": 0.75, "t": 3}
    lo, hi = sound.enclose(env, 128)
    assert broken.enclose(env, 128) == (lo, hi)  # the ideal value does not depend on directions
    assert Fraction(sound.to_float(env)) >= hi
    assert Fraction(broken.to_float(env)) < lo


@pytest.mark.parametrize("value,exc", [
    pytest.param(math.nan, R.FloatArithmeticError, id="nan"),
    pytest.param(math.inf, R.FloatArithmeticError, id="inf"),
    pytest.param(True, TypeError, id="bool"),
    pytest.param("1", TypeError, id="str"),
    pytest.param(2**53 + 1, R.FloatArithmeticError, id="inexact-int"),
])
def test_const_invalid_value_raises(value, exc):
    with pytest.raises(exc, match="constant"):
        Const(value)


def test_var_invalid_kind_raises():
    with pytest.raises(ValueError, match="kind='complex'"):
        Var("x", "complex")


@pytest.mark.parametrize("env,exc,text", [
    pytest.param({}, KeyError, "'x'", id="missing"),
    pytest.param({"x": math.nan, "n": 1}, R.FloatArithmeticError, "x=nan", id="nan"),
    pytest.param({"x": True, "n": 1}, TypeError, "x=True", id="bool"),
    pytest.param({"x": 1.0, "n": 2**53 + 1}, R.FloatArithmeticError, "n=9007199254740993", id="inexact-int"),
    pytest.param({"x": 1.0, "n": 1.5}, TypeError, "n=1.5", id="float-for-int"),
])
def test_var_bad_environment_raises(env, exc, text):
    expr = var("x").inf_add(var("n", "int"))
    with pytest.raises(exc, match=text):
        expr.to_float(env)


def test_op_unknown_name_or_wrong_arity_raises():
    with pytest.raises(ValueError, match="'inf_pow'"):
        Op("inf_pow", (ONE, ONE))
    with pytest.raises(ValueError, match="inf_ln takes 1"):
        Op("inf_ln", (ONE, ONE))


# ------------------------------------------------------------------ the enclosures behind ln and exp
# ln_bracket and exp_bracket are vetdp's own integer arithmetic (no mpmath); mpmath is the oracle here.

def _exactly(f: Callable, q: Fraction) -> Callable[[], mpmath.mpf]:
    """f(q) for mp_sign, with q converted without rounding (q = 1 + 2^-200 must not become 1 before ln)."""
    def truth() -> mpmath.mpf:
        with mpmath.workprec(mpmath.mp.prec + q.numerator.bit_length() + q.denominator.bit_length()):
            return f(mpmath.mpf(q.numerator) / q.denominator)

    return truth


def bracket_fault(name: str, q: Fraction, prec: int) -> str | None:
    """Why ``R.<name>_bracket(q, prec)`` breaks its contract (lo <= f(q) <= hi, hi − lo <= |f(q)|·2^-prec), or
    None. The truth is decided by mp_sign (mpmath at rising precision)."""
    lo, hi = getattr(R, f"{name}_bracket")(q, prec)
    if (name, q) in (("ln", 1), ("exp", 0)):
        return None if lo == hi == (0 if name == "ln" else 1) else f"{lo}, {hi} at the exact point"
    truth = _exactly({"ln": mpmath.log, "exp": mpmath.exp}[name], q)
    if mp_sign(lo, truth) > 0:
        return f"lo = {float(lo)!r} is above {name}({q})"
    if mp_sign(hi, truth) < 0:
        return f"hi = {float(hi)!r} is below {name}({q})"
    if not (lo <= 0 <= hi) and hi - lo > min(abs(lo), abs(hi)) / 2**prec:
        return f"hi - lo = {float(hi - lo)!r} is wider than 2^-{prec} relative"
    return None


positive_fractions = st.one_of(
    st.fractions(min_value=Fraction(1, 10**6)).filter(lambda q: q > 0),
    st.builds(Fraction, st.integers(1, 2**1100), st.integers(1, 2**1100)),
    st.builds(lambda k, e: 1 + Fraction(k, 2**e), st.integers(-(2**20), 2**20).filter(bool), st.integers(20, 1100)),
    any_floats.map(abs).filter(lambda x: x > 0).map(Fraction),
)
exp_arguments = st.one_of(
    st.fractions(min_value=-832, max_value=832),
    st.floats(min_value=-832.0, max_value=832.0).map(Fraction),
    st.builds(lambda m, e: Fraction(m, 2**e), st.integers(-(2**60), 2**60), st.integers(60, 1200)),
)
PRECS = st.sampled_from([1, 8, 53, 64, 200, 700])


@settings(max_examples=600, deadline=None, derandomize=True)
@given(q=positive_fractions, prec=PRECS)
@example(q=Fraction(2), prec=64)
@example(q=Fraction(1, 2**1074), prec=200)
@example(q=Fraction(2**1024 - 2**971), prec=200)
@example(q=Fraction(3, 2) + Fraction(1, 2**200), prec=64)
def test_ln_bracket_encloses_ln_within_the_promised_width(q, prec):
    assert bracket_fault("ln", q, prec) is None


@settings(max_examples=600, deadline=None, derandomize=True)
@given(q=exp_arguments, prec=PRECS)
@example(q=Fraction(0), prec=64)
@example(q=Fraction(709.782712893384), prec=200)
@example(q=Fraction(-745.1332191019412), prec=200)
@example(q=Fraction(832), prec=64)
@example(q=Fraction(-832), prec=64)
@example(q=Fraction(1, 2**1074), prec=64)
def test_exp_bracket_encloses_exp_within_the_promised_width(q, prec):
    assert bracket_fault("exp", q, prec) is None


@pytest.mark.parametrize("q,expected", [(Fraction(833), 2**1200), (Fraction(10**300), 2**1200),
                                         (Fraction(-833), Fraction(1, 2**1200))])
def test_exp_bracket_clamps_beyond_832_where_every_rounding_agrees(q, expected):
    assert R.exp_bracket(q, 64) == (expected, expected)


@pytest.mark.parametrize("q", [Fraction(0), Fraction(-1, 3)])
def test_ln_bracket_outside_its_domain_raises(q):
    with pytest.raises(R.FloatArithmeticError, match=r"ln_bracket: q=.*\(0, inf\)"):
        R.ln_bracket(q, 64)


BRACKET_POINTS = [Fraction(x) for x in (2.0, 3.0, 0.1, 1e-300, 1e300, 1 + 2**-40)]


@pytest.mark.parametrize("series,name,points", [
    ("_atanh_fixed", "ln", BRACKET_POINTS),
    ("_exp_fixed", "exp", [Fraction(x) for x in (0.3, 1.0, 50.0, -0.2, -700.0)]),
])
def test_a_series_without_its_error_budget_is_caught(monkeypatch, series, name, points):
    """Mutant: the series' upper end without its error budget (hi = lo); the oracle must see hi below the truth.
    The same points pass with the real series (the tests above)."""
    assert all(bracket_fault(name, q, 64) is None for q in points)
    real = getattr(R, series)
    monkeypatch.setattr(R, series, lambda *a: (real(*a)[0], real(*a)[0]))
    faults = [bracket_fault(name, q, 64) for q in points]
    assert any(f and "is below" in f for f in faults), faults


@pytest.mark.parametrize("op,arg,truth", [
    ("inf_ln", 3.0, lambda: mpmath.log(3)), ("neg_inf_ln", 0.1, lambda: mpmath.log(mpmath.mpf(0.1))),
    ("inf_exp", 1.0, lambda: mpmath.exp(1)), ("neg_inf_exp", -745.0, lambda: mpmath.exp(-745)),
    ("inf_log1p", 1e-300, lambda: mpmath.log1p(mpmath.mpf(1e-300))),
    ("neg_inf_expm1", 5e-324, lambda: mpmath.expm1(mpmath.mpf(5e-324))),
])
@pytest.mark.parametrize("ulps", [1, -1])
def test_a_result_one_ulp_off_fails_the_oracle(op, arg, truth, ulps):
    """Mutant: the correct result moved one float up or down; the directed-rounding check rejects it, so the
    tests above would catch an implementation off by one ulp."""
    up = op.startswith("inf_")
    good = getattr(R, op)
    check_directed(op, good, (arg,), lambda c: mp_sign(c, truth), up)

    def off(x: float) -> float:
        return math.nextafter(good(x), math.inf if ulps > 0 else -math.inf)

    with pytest.raises(AssertionError, match="below the truth|above the truth|not the least|not the greatest"):
        check_directed(op, off, (arg,), lambda c: mp_sign(c, truth), up)


@settings(max_examples=1500, deadline=None, derandomize=True)
@given(n=st.one_of(st.integers(-(2**80), 2**80), st.integers(-(2**60), 2**60).map(lambda m: m | 1)),
       e=st.integers(-1250, 1100))
@example(n=2**53 - 1, e=971)
@example(n=2**54 - 1, e=970)
@example(n=-(2**54 - 1), e=970)
@example(n=1, e=-1075)
@example(n=-1, e=-1075)
@example(n=3, e=-1076)
def test_round_scaled_agrees_with_round_of_the_same_rational(n, e):
    """The transcendental functions round n·2^e without building a Fraction; that shortcut must be _round."""
    q = Fraction(n) * Fraction(2) ** e
    for up in (True, False):
        try:
            expected = R._round(q, up)
        except R.RoundingOverflowError:
            with pytest.raises(R.RoundingOverflowError):
                R._round_scaled(n, e, up)
            continue
        got = R._round_scaled(n, e, up)
        assert got == expected and math.copysign(1.0, got) == math.copysign(1.0, expected), (n, e, up, got)


@pytest.mark.parametrize("q", [Fraction(833), Fraction(2127), Fraction(-2127), Fraction(5000, 3), Fraction(-1663, 2)])
def test_exp_enclosure_encloses_exp_beyond_the_clamp(q):
    """exp_bracket clamps beyond |q| = 832 (no enclosure there); exp_enclosure squares the bracket of q/2^k."""
    lo, hi = R.exp_enclosure(q, 64)
    with mpmath.workprec(400):
        true = mpmath.exp(mpmath.mpf(q.numerator) / q.denominator)
        assert mpmath.mpf(lo.numerator) / lo.denominator <= true <= mpmath.mpf(hi.numerator) / hi.denominator
        assert (hi - lo) / lo < Fraction(1, 2**60)
    assert R.exp_enclosure(Fraction(7, 3), 80) == R.exp_bracket(Fraction(7, 3), 80)
