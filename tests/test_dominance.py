"""Blackwell dominance of privacy-loss distributions (vetdp.engine.dominance) and the accountant's RR pairs.

The oracles are independent of the kink argument: an explicit channel (a garbled pair must be dominated), a
linear programme for the existence of a channel (scipy), and hockey-stick sums taken directly over the laws."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from vetdp.accounting.curves import RRFamily, rappor_curve, rr_product_pld
from vetdp.engine.dominance import Excess, decide_domination, first_excess, pair_enclosure, pld_of_laws
from vetdp.engine.structure import convolve, coordinate_pld, delta_at_ratio, joint_terms, pld_of_terms


def law(weights: list[int]) -> dict[int, Fraction]:
    total = sum(weights)
    return {i: Fraction(w, total) for i, w in enumerate(weights)}


def pld_of(p: dict, q: dict) -> dict:
    return pld_of_terms(joint_terms(p, q))


def direct_delta(p: dict, q: dict, s: Fraction) -> Fraction:
    return sum((max(Fraction(0), p[y] - s * q.get(y, Fraction(0))) for y in p), Fraction(0))


weights = st.lists(st.integers(0, 6), min_size=2, max_size=4).filter(lambda w: sum(w) > 0)
pairs = st.integers(2, 4).flatmap(lambda n: st.tuples(
    st.lists(st.integers(0, 6), min_size=n, max_size=n).filter(lambda w: sum(w) > 0),
    st.lists(st.integers(0, 6), min_size=n, max_size=n).filter(lambda w: sum(w) > 0)))


@given(pairs, st.fractions(min_value=0, max_value=20, max_denominator=7))
def test_the_profile_of_a_pairs_pld_is_the_hockey_stick_sum_over_its_laws(pair, s):
    p, q = law(pair[0]), law(pair[1])
    assert delta_at_ratio(pld_of(p, q), s) == direct_delta(p, q, s)


@given(pairs, st.integers(1, 4), st.data())
@settings(max_examples=150)
def test_a_pair_sent_through_any_channel_is_dominated_by_it(pair, outputs, data):
    p, q = law(pair[0]), law(pair[1])
    rows = [law(data.draw(st.lists(st.integers(0, 5), min_size=outputs, max_size=outputs)
                          .filter(lambda w: sum(w) > 0))) for _ in p]
    kp = {z: sum(p[y] * rows[y][z] for y in p) for z in range(outputs)}
    kq = {z: sum(q[y] * rows[y][z] for y in q) for z in range(outputs)}
    assert first_excess(pld_of(kp, kq), pld_of(p, q)) is None


def garbling_exists(code: tuple[dict, dict], bound: tuple[dict, dict]) -> bool:
    """A stochastic matrix K (bound outputs x code outputs) with P*K = P and Q*K = Q, by linear programming."""
    (p, q), (ps, qs) = code, bound
    n, m = len(ps), len(p)
    a_eq, b_eq = [], []
    for src, dst in ((ps, p), (qs, q)):
        for z in range(m):
            row = np.zeros(n * m)
            for y in range(n):
                row[y * m + z] = float(src[y])
            a_eq.append(row)
            b_eq.append(float(dst[z]))
    for y in range(n):
        row = np.zeros(n * m)
        row[y * m:(y + 1) * m] = 1
        a_eq.append(row)
        b_eq.append(1.0)
    res = linprog(np.zeros(n * m), A_eq=np.array(a_eq), b_eq=b_eq, bounds=(0, 1), method="highs")
    return res.status == 0


@given(pairs, pairs)
@settings(max_examples=200, deadline=None)
def test_no_excess_exactly_when_a_channel_exists(code, bound):
    # Blackwell's theorem for two laws, checked against a linear programme for the channel itself
    c = (law(code[0]), law(code[1]))
    b = (law(bound[0]), law(bound[1]))
    assert (first_excess(pld_of(*c), pld_of(*b)) is None) == garbling_exists(c, b)


@given(pairs, st.fractions(min_value=Fraction(1, 9), max_value=1, max_denominator=9))
def test_a_mirrored_excess_is_the_same_excess_of_the_swapped_laws(pair, s):
    p, q = law(pair[0]), law(pair[1])
    e = Excess(s, direct_delta(p, q, s), direct_delta(q, p, s)).mirrored()
    assert e.threshold == 1 / s
    assert e.code_delta == direct_delta(q, p, 1 / s)
    assert e.bound_delta == direct_delta(p, q, 1 / s)


@pytest.mark.parametrize("t,d", [(2, 1), (2, 5), (3, 1), (4, 3)])
def test_the_rr_product_pld_is_the_convolution_of_its_coordinates(t, d):
    r = Fraction(7, 3)
    one_p = {0: r / (r + t - 1), 1: 1 / (r + t - 1), **{c: 1 / (r + t - 1) for c in range(2, t)}}
    one_q = {0: one_p[1], 1: one_p[0], **{c: one_p[c] for c in range(2, t)}}
    expected = {Fraction(1): Fraction(1)}
    for _ in range(d):
        expected = convolve(expected, coordinate_pld(one_p, one_q))
    got = rr_product_pld(t, d, r)
    assert got == {k: v for k, v in expected.items() if v}
    assert sum(got.values()) == 1


def test_rr_pairs_are_ordered_by_their_ratio_and_an_irrational_one_is_enclosed():
    small, large = rr_product_pld(2, 4, Fraction(3)), rr_product_pld(2, 4, Fraction(3) + Fraction(1, 10**9))
    assert first_excess(small, large) is None
    assert first_excess(large, small) is not None
    assert first_excess(rr_product_pld(3, 1, Fraction(5)), rr_product_pld(2, 1, Fraction(5))) is None  # t-ary ≼ binary
    lower, upper = rappor_curve(1.0, k=2).pair_plds(128)
    assert lower != upper and first_excess(lower, upper) is None and first_excess(upper, lower) is not None
    assert RRFamily(2, 3, ratio=Fraction(9)).pair_plds()[0] == rr_product_pld(2, 3, Fraction(9))


def test_decide_domination_refines_an_irrational_pair_until_it_separates_the_code():
    # the code's per-bit ratio is 1 + 2^-100 below e^(1/4): only a precision finer than 100 bits tells them apart
    family = rappor_curve(1.0, k=2)
    from vetdp.arith.rounding import exp_bracket

    below = exp_bracket(Fraction(1, 4), 200)[0] * (1 - Fraction(1, 2**100))
    verdict = decide_domination([(rr_product_pld(2, 4, below), "x", "x'")], family.pair_plds)
    assert verdict.holds is True and verdict.prec >= 128
    above = exp_bracket(Fraction(1, 4), 200)[1] * (1 + Fraction(1, 2**100))
    verdict = decide_domination([(rr_product_pld(2, 4, above), "x", "x'")], family.pair_plds)
    assert verdict.holds is False and verdict.witness == ("x", "x'")
    assert verdict.excess.code_delta > verdict.excess.bound_delta


def test_bad_inputs_are_refused_with_the_parameter_named():
    with pytest.raises(ValueError, match="lower pair's PLD sums to 1/2, not 1"):
        decide_domination([({Fraction(1): Fraction(1)}, 0, 1)], pair_enclosure({Fraction(2): Fraction(1, 2)}))
    with pytest.raises(ValueError, match="at least one pair"):
        decide_domination([], lambda prec: ({}, {}))
    with pytest.raises(ValueError, match="probability -1/2 of ratio 2"):
        first_excess({Fraction(2): Fraction(-1, 2)}, {Fraction(1): Fraction(1)})
    with pytest.raises(ValueError, match="likelihood ratio -1"):
        first_excess({Fraction(1): Fraction(1)}, {Fraction(-1): Fraction(1)})
    with pytest.raises(TypeError, match="accountant_pair must give a PLD dict"):
        pair_enclosure(0.5)
    with pytest.raises(ValueError, match="ratio=1/2 must be a Fraction in"):
        rr_product_pld(2, 1, Fraction(1, 2))
    with pytest.raises(ValueError, match="coordinates"):
        rr_product_pld(2, 0, Fraction(2))
    with pytest.raises(ValueError, match="threshold=0 must be > 0"):
        Excess(Fraction(0), Fraction(1), Fraction(1)).mirrored()
    assert math.isfinite(float(next(iter(pair_enclosure({Fraction(1): Fraction(1)})(64)[0]))))
    with pytest.raises(ValueError, match=r"first\['a'\]=0.5 must be a non-negative Fraction"):
        pld_of_laws({"a": 0.5, "b": Fraction(1, 2)}, {"a": Fraction(1)})
    with pytest.raises(ValueError, match="the second law sums to 1/2, not 1"):
        pld_of_laws({"a": Fraction(1)}, {"a": Fraction(1, 2)})
    assert pld_of_laws({"a": 1, "b": 0}, {"a": Fraction(1, 4), "b": Fraction(3, 4)}) == {Fraction(4): Fraction(1)}


@pytest.mark.parametrize("variant,k,m,f", [
    ("vetdp", 3, 2, 0.2), ("vetdp", 5, 2, 0.5),
    ("uneven_flips_between_the_checked_points", 3, 2, 0.2), ("uneven_flips_same_epsilon", 2, 1, 0.5),
])
def test_the_product_structures_pair_classes_give_the_worst_delta_of_every_pair_enumerated(variant, k, m, f):
    # the k = 128 route (structure, dominating pair classes) against brute force over every ordered pair of inputs:
    # the same worst δ at every kink of the accountant's pair, so the same dominance verdict
    import itertools

    from specs.randomized_response_bitvec import accountant_family
    from tests.mutants import unseen_bitvec
    from vetdp.core.measurement import BitVectorDomain, DiscreteDistance
    from vetdp.engine.enumerate import output_distribution
    from vetdp.engine.structure import discover_product_structure, pair_classes, privacy_loss_distribution
    from vetdp.impl.randomized_response_bitvec import make_randomized_response_bitvec

    domain = BitVectorDomain(max_weight=m, length=k)
    make = make_randomized_response_bitvec if variant == "vetdp" else getattr(unseen_bitvec, variant)
    meas = make(domain, DiscreteDistance(), f)
    structure = discover_product_structure(meas.function, k)
    by_structure = [(privacy_loss_distribution(structure, x, x2), x, x2) for x, x2 in pair_classes(structure, domain)]
    inputs = [x for x in itertools.product((False, True), repeat=k) if sum(x) <= m]
    laws = {x: output_distribution(meas.function, x) for x in inputs}
    by_brute_force = [(pld_of(laws[x], laws[x2]), x, x2) for x in inputs for x2 in inputs if x != x2]
    family = accountant_family({"k": k, "m": m, "f": f})
    bound = family.pair_plds()[0]
    kinks = sorted({Fraction(0)} | {r for r in bound if r is not None})

    def worst(pairs):
        return [max(delta_at_ratio(p, s) for p, _, _ in pairs) for s in kinks]

    assert worst(by_structure) == worst(by_brute_force)
    holds = decide_domination(by_structure, family.pair_plds).holds
    assert holds == decide_domination(by_brute_force, family.pair_plds).holds == (variant == "vetdp")
