"""The rounding analysis behind privacy.tight (vetdp/engine/tightness.py), checked against exact arithmetic: its
bounds |computed − ideal| <= r·|ideal| + a and <= e hold for every subterm at random points of random boxes, down to
subnormal floats, for RAPPOR's one-report loss (a sum of two log1p of quotients); and the exp form of the formula
proof accepts that map and refuses a wrong one."""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from vetdp.arith.expr import Const, Var
from vetdp.engine import tightness
from vetdp.engine.polynomial import ProbPoly
from vetdp.engine.symbolic import Box, evaluate, explore_regions
from vetdp.impl.rappor import RAPPOR_EPSILON_ONE, _substitute


def _loss_term(a: int, b: int):
    return _substitute(RAPPOR_EPSILON_ONE, {"a": Const(a), "b": Const(b)})


def _ideal(t, env: dict) -> mpmath.mpf:
    """The term's value with every rounded operation taken exactly (the atoms exact), in 400-bit arithmetic."""
    if isinstance(t, Var):
        return mpmath.mpf(env[t.name])
    if isinstance(t, Const):
        return mpmath.mpf(t.value)
    a = [_ideal(x, env) for x in t.args]
    return {"add": lambda: a[0] + a[1], "sub": lambda: a[0] - a[1], "mul": lambda: a[0] * a[1],
            "div": lambda: a[0] / a[1], "log1p": lambda: mpmath.log1p(a[0]), "ln": lambda: mpmath.log(a[0])
            }[t.info.ideal]()


def _subterms(t):
    yield t
    for x in getattr(t, "args", ()):
        yield from _subterms(x)


def _tiny_or_not():
    return st.one_of(st.floats(0.0, 1.0), st.integers(-1070, -1).map(lambda e: 2.0**e),
                     st.integers(-1074, 0).flatmap(lambda e: st.floats(0.0, 2.0**e)))


def _spread(x: float, steps: int) -> tuple[float, float]:
    lo, hi = x, x
    for _ in range(steps):
        lo, hi = math.nextafter(lo, -1.0), math.nextafter(hi, 2.0)
    return lo, hi


@settings(max_examples=100, deadline=None, derandomize=True)
@given(r=st.one_of(st.floats(0.0, 0.5), _tiny_or_not().map(lambda x: x / 2)), p=_tiny_or_not(), q=_tiny_or_not(),
       steps=st.sampled_from([0, 0, 3, 2**20]), a=st.integers(1, 3), b=st.integers(0, 3), near=st.booleans(),
       assumed=st.booleans(), floor=st.one_of(st.none(), st.none(), st.integers(2, 999)))
def test_the_bounds_of_the_rounding_analysis_hold_at_every_point_of_a_box(r, p, q, steps, a, b, near, assumed, floor):
    q = math.nextafter(p, 2.0) if near else q  # q − p one float apart: the least difference the orders allow
    if floor is not None:  # p* = r·q = 1.5·2**-1000, on a box of r where p* runs from 2**-1001 to 2**-999
        r, p, q = 1.5 * 2.0**-floor, 0.0, 2.0 ** (floor - 1000)
    assume(p < q and r <= 0.5 and q <= 1.0)
    assume(p + r * (q - p) >= 2.0**-1000 and 1 - q + r * (q - p) >= 2.0**-1000)  # the spec's precondition
    term = _loss_term(a, b)
    try:
        evaluate(term, {"r": r, "p": p, "q": q})
    except ArithmeticError:
        return
    ranges = {n: _spread(x, steps) for n, x in (("r", r), ("p", p), ("q", q))}
    ranges = {n: (max(lo, 0.0), min(hi, 0.5 if n == "r" else 1.0)) for n, (lo, hi) in ranges.items()}
    if floor is not None:
        ranges["r"] = (2.0 ** -(floor + 1), 2.0 ** -(floor - 1))
    box = Box.of(ranges).ordered("p", "q", True)
    assume(box is not None)
    ctx = tightness._iv()
    atoms = {Var(n): ctx.mpf(list(box[n])) for n in box.names}
    env = {"r": r, "p": p, "q": q}
    # a fork side's assumptions, p* >= 2**-1000 and 1 − q* >= 2**-1000, hold at the point (the box may hold others)
    bounds = _precondition_bounds() if assumed else ()
    with mpmath.workprec(400):
        for sub in _subterms(term):  # every subterm's bounds, not only the map's
            analysed = tightness._analyse(sub, atoms, ctx, under_log=False, box=box, split=False, bounds=bounds)
            if isinstance(analysed, str):
                continue  # no bound claimed for it on this box
            value, error, rel, floor = analysed
            ideal = _ideal(sub, env)
            assert mpmath.mpf(value.a) <= ideal <= mpmath.mpf(value.b), sub
            miss = abs(mpmath.mpf(evaluate(sub, env)) - ideal)
            assert miss <= mpmath.mpf(error.b), (sub, miss, error)
            if rel is not None:
                assert miss <= mpmath.mpf(rel.b) * abs(ideal) + mpmath.mpf(floor.b), (sub, miss, rel, floor, ideal)


def _report_probabilities():
    """(q*(1 − p*), p*(1 − q*), 1 − p*, p*, 1 − q*) as polynomials in the atoms r, p, q: a report's probabilities
    for two inputs that differ in one bit each way, and factors of them."""

    def run(s):
        r, p, q = (ProbPoly.atom(s[n]) for n in "rpq")
        p_star, q_star = p + r * (q - p), q - r * (q - p)
        return q_star * (1 - p_star), p_star * (1 - q_star), 1 - p_star, p_star, 1 - q_star

    leaves, _ = explore_regions(run, {"r": (0.25, 0.25), "p": (0.25, 0.25), "q": (0.5, 0.5)})
    return leaves[0].result


def _precondition_bounds():
    """RAPPOR's joint precondition as a fork side assumes it: p* < 2**-1000 and 1 − q* < 2**-1000 answered False."""
    *_, one_minus_p_star, p_star, one_minus_q_star = _report_probabilities()
    return tightness.assumed_bounds({("polynomial", "lt", frozenset(x.expanded().items()), Fraction(2) ** -1000): False
                                     for x in (p_star, one_minus_q_star)})


def test_assumed_answers_bound_exactly_the_polynomials_they_compare_and_their_multiples():
    *_, p_star, _ = _report_probabilities()
    key = ("polynomial", "lt", frozenset(p_star.expanded().items()), Fraction(1, 8))
    assert tightness.assumed_bounds({key: False}) == ((key[2], Fraction(1, 8), None),)  # p* >= 1/8
    assert tightness.assumed_bounds({key: True}) == ((key[2], None, Fraction(1, 8)),)  # p* < 1/8
    assert tightness.assumed_bounds({("polynomial", "eq", key[2], Fraction(1, 8)): True}) == (
        (key[2], Fraction(1, 8), Fraction(1, 8)),)
    assert tightness.assumed_bounds({("polynomial", "ne", key[2], Fraction(1, 8)): True, ("x", "<", "y"): True}) == ()
    ctx = tightness._iv()
    bounds = tightness.assumed_bounds({key: False})
    poly = p_star.expanded()
    everything = ctx.mpf([-1, 1])
    assert tightness._bounded(ctx, everything, poly, bounds).a == 0.125
    minus_twice = {m: -2 * c for m, c in poly.items()}  # −2·p* <= −1/4
    narrowed = tightness._bounded(ctx, everything, minus_twice, bounds)
    assert narrowed.a == -1 and narrowed.b == -0.25
    other = {m: c * (2 if i == 0 else 1) for i, (m, c) in enumerate(poly.items())}  # not a multiple: untouched
    assert tightness._bounded(ctx, everything, other, bounds) == everything
    assert tightness._assumed_sign(poly, bounds) == 1 and tightness._assumed_sign(minus_twice, bounds) == -1
    assert tightness._assumed_sign(poly, tightness.assumed_bounds({key: True})) is None


def test_the_rappor_map_is_proved_by_the_exp_form_and_a_wrong_weighting_is_not():
    worst, neighbour, *_ = _report_probabilities()
    proved = tightness._Identity(_loss_term(1, 1), worst, neighbour)
    assert proved.holds and not proved.splits_logs and proved.p_factors is not None
    for wrong in (_loss_term(2, 1), _loss_term(1, 0)):
        refused = tightness._Identity(wrong, worst, neighbour)
        assert not refused.holds and "is not the reference law's loss" in refused.why


def test_a_probability_is_shown_positive_from_its_factors_where_its_expanded_interval_contains_zero():
    one_minus_p_star = _report_probabilities()[2]  # (1 − p)(1 − r) + r(1 − q) > 0 for p < q < 1
    identity = tightness._Identity(Const(0.0), one_minus_p_star, one_minus_p_star)
    identity._sympy(Const(0.0))
    for n in "rpq":
        identity._symbol(Var(n))
    factored = identity._factors(one_minus_p_star)
    box = Box.of({"r": (1e-8, 1.1e-8), "p": (0.5, 0.9999999999999998), "q": (0.5, 0.9999999999999999)})
    ctx = tightness._iv()
    ranges = {Var(n): ctx.mpf(list(box[n])) for n in "rpq"}
    spans = {Var(n): box[n] for n in "rpq"}
    assert tightness._poly_interval(one_minus_p_star, ranges, ctx, split=False).a <= 0  # intervals alone cannot
    assert tightness._factors_positive(factored, ranges, spans, ctx, box.ordered("p", "q", True))
    # without the order p < q the slope in r, q − p, has no sign: nothing is decided
    assert not tightness._factors_positive(factored, ranges, spans, ctx, box)
