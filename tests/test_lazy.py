"""Lazily drawn uniform integers (vetdp.sampling.lazy): the same exact law as branching over every value."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import vetdp.sampling.lazy as lazy
import vetdp.sampling.primitives as primitives
from vetdp.engine.enumerate import EnumerationBudgetExceeded, enumerate_law, output_distribution
from vetdp.sampling.lazy import LazyInt
from vetdp.sampling.primitives import sample_uniform_int_below
from vetdp.sampling.sources import BranchingSource, PathLimitExceeded, SeededSource, use_source

CONSTANTS = st.one_of(st.integers(-40, 40), st.sampled_from([0.5, 2.5, -3.25, 1e-3, 7.0, Fraction(1, 3)]))
STEPS = st.one_of(
    st.tuples(st.sampled_from(["+", "-", "r-", "*", "/", "//"]), CONSTANTS),
    st.tuples(st.sampled_from([">>", "<<"]), st.integers(0, 4)),
    st.tuples(st.sampled_from(["neg", "invert", "floor", "ceil", "round"]), st.none()),
)
USES = st.one_of(
    st.tuples(st.sampled_from(["<", "<=", ">", ">=", "==", "!="]), CONSTANTS),
    st.tuples(st.sampled_from(["bool", "int", "index", "hash", "%"]), st.just(3)),
)


def _apply(v, step):
    op, c = step
    return {"+": lambda: v + c, "-": lambda: v - c, "r-": lambda: c - v, "*": lambda: v * c, "/": lambda: v / c,
            "//": lambda: v // c, ">>": lambda: v >> c, "<<": lambda: v << c, "neg": lambda: -v,
            "invert": lambda: ~v, "floor": lambda: math.floor(v), "ceil": lambda: math.ceil(v),
            "round": lambda: round(v)}[op]()


def _use(v, use):
    op, c = use
    return {"<": lambda: v < c, "<=": lambda: v <= c, ">": lambda: v > c, ">=": lambda: v >= c,
            "==": lambda: v == c, "!=": lambda: v != c, "bool": lambda: bool(v), "int": lambda: int(v),
            "index": lambda: "abc"[int(v) % 3], "hash": lambda: hash(v) % 7, "%": lambda: v % c}[op]()


def _program(n: int, steps: list, uses: list):
    def run(_x):
        v = sample_uniform_int_below(n)
        out = []
        for step in steps:
            v = _apply(v, step)
        for use in uses:
            r = _use(v, use)
            out.append(r if isinstance(r, (bool, str)) else float(r))
        return tuple(out)

    return run


def _law(fn, lazy_from: int) -> dict:
    with pytest.MonkeyPatch.context() as m:
        m.setattr(primitives, "LAZY_FROM", lazy_from)
        return output_distribution(fn, 0)


@settings(max_examples=150, deadline=None)
@given(n=st.integers(1, 150), steps=st.lists(STEPS, max_size=3), uses=st.lists(USES, min_size=1, max_size=3))
def test_a_lazy_draw_has_the_law_of_branching_over_every_value(n, steps, uses):
    # every draw lazy (LAZY_FROM = 1) against every value branched over; errors (x / 0.0 after a step, a float
    # shifted) are outcomes too and must agree, message and all
    fn = _program(n, steps, uses)
    assert _law(fn, 1) == _law(fn, 1 << 60)


def test_an_inverse_cdf_over_2_to_the_54_is_exact():
    def fn(_x):
        u = sample_uniform_int_below(2**54)
        return u / 2**54 < 0.3, u // 2**52, (u % 2 if u < 5 else -1)

    law = output_distribution(fn, 0)
    assert law[(True, 0, 0)] == Fraction(3, 2**54) and law[(True, 0, 1)] == Fraction(2, 2**54)
    # 0.3 is 5404319552844595/2**54 exactly: u/2**54 < 0.3 holds for u < 5404319552844595
    assert sum(p for y, p in law.items() if y[0]) == Fraction(5404319552844595, 2**54)
    assert {y[1] for y in law} == {0, 1, 2, 3} and sum(law.values()) == 1


def test_a_value_used_with_too_many_level_sets_halts_the_run_instead_of_guessing():
    def fn(_x):
        return sample_uniform_int_below(2**40) % 3

    with use_source(BranchingSource()), pytest.raises(PathLimitExceeded, match="lazily drawn integer on"):
        fn(0)
    with pytest.raises(EnumerationBudgetExceeded):
        output_distribution(fn, 0)
    assert not enumerate_law(fn, 0, budget=1000).complete


def test_a_lazy_value_in_the_output_is_fixed_under_the_run_not_sampled_after_it():
    # the output holds the view u // 2**38 itself: freezing it must branch under the enumeration
    def fn(_x):
        return sample_uniform_int_below(2**40) // 2**38

    assert output_distribution(fn, 0) == {0: Fraction(1, 4), 1: Fraction(1, 4), 2: Fraction(1, 4), 3: Fraction(1, 4)}


def test_a_lazy_int_escaping_its_enumeration_is_sampled_from_the_current_source():
    escaped = LazyInt.uniform_below(2**40) // 2**38
    with use_source(SeededSource("escaped")):
        v = int(escaped)
    assert v in range(4) and int(escaped) == v  # fixed once, then the same value


def test_comparisons_with_non_numbers_and_infinities_behave_as_an_int_would():
    lz = LazyInt.uniform_below(2**30)
    assert (lz == "a") is False and (lz != "a") is True
    assert (lz < math.inf) is True and (lz > math.nan) is False
    with pytest.raises(TypeError):
        lz < "a"  # noqa: B015 - the comparison is the test


def test_the_fix_limit_is_the_documented_constant(monkeypatch):
    # a use taking FIX_LIMIT values is enumerated; one more halts
    monkeypatch.setattr(lazy, "FIX_LIMIT", 8)
    lazy._level_cuts.cache_clear()
    assert len(output_distribution(lambda _x: int(sample_uniform_int_below(2**30) // 2**27), 0)) == 8
    lazy._level_cuts.cache_clear()
    with pytest.raises(EnumerationBudgetExceeded):
        output_distribution(lambda _x: int(sample_uniform_int_below(2**30) // 2**26), 0)
    lazy._level_cuts.cache_clear()
