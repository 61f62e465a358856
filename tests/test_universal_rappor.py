"""RAPPOR's one report decided for every (f, p, q) jointly (issue 23, point 7): regions with orders between
parameters (p < q), polynomial comparisons in several atoms, the spec's joint precondition, and variants wrong in
a narrow band of one float."""

from __future__ import annotations

import dataclasses
import functools
import math
from fractions import Fraction

import pytest

from tests.mutants import universal_variants as uv
from vetdp.engine.polynomial import ProbPoly
from vetdp.engine.spec import find_spec
from vetdp.engine.symbolic import MAX_JOINT_HALVINGS, Box, explore_regions
from vetdp.engine.universal import explore_spec

K2 = [{"k": 2, "m": 1, "constant_time": False}]


def _spec(bases=K2, probes=()):
    spec = find_spec("rappor")
    return dataclasses.replace(spec, universal=dataclasses.replace(spec.universal, bases=lambda deep: bases,
                                                                   probe_bases=lambda deep: probes))


def _explore(ctor=None, bases=K2):
    if ctor is None and bases is K2:
        return _bundled()
    spec = _spec(bases)
    ctor = ctor if ctor is not None else spec.load_constructor()
    return explore_spec(spec, lambda p: spec.build(ctor, p))


@functools.lru_cache(maxsize=1)
def _bundled():
    """The bundled report's exploration, once per test process (the tests only read it)."""
    spec = _spec()
    ctor = spec.load_constructor()
    return explore_spec(spec, lambda p: spec.build(ctor, p))


# ------------------------------------------------------------------ the engine: orders and joint comparisons

def test_an_order_between_two_parameters_splits_the_region_in_two_exactly():
    leaves, open_ = explore_regions(lambda p: p["p"] < p["q"], {"p": (0.0, 1.0), "q": (0.0, 1.0)})
    assert not open_ and sorted(leaf.result for leaf in leaves) == [False, True]
    below = next(leaf.box for leaf in leaves if leaf.result)
    assert below.orders == (("p", "q", True),) and below["p"] == (0.0, math.nextafter(1.0, 0.0))
    assert below.point()["p"] < below.point()["q"]  # the run's point lies in the region
    assert below.contains({"p": 0.5, "q": math.nextafter(0.5, 1.0)}) and not below.contains({"p": 0.5, "q": 0.5})


def test_an_order_then_a_cut_keeps_every_part_tight_and_drops_empty_ones():
    box = Box.of({"p": (0.0, 1.0), "q": (0.0, 1.0)}).ordered("p", "q", True)
    assert box["q"][0] == 5e-324 and box.implies("p", "q", True) and not box.implies("q", "p", False)
    parts = box.split("q", 0.25)
    below = math.nextafter(math.nextafter(0.25, 0.0), 0.0)  # p < q <= the float below 1/4
    assert [part["p"] for part in parts] == [(0.0, below), (0.0, math.nextafter(1.0, 0.0))]
    assert Box.of({"p": (0.5, 1.0), "q": (0.0, 0.5)}).ordered("p", "q", True) is None


def test_a_polynomial_in_several_atoms_is_decided_from_its_bounds_and_halved_where_they_straddle():
    def run(s):
        r, p, q = (ProbPoly.atom(s[n]) for n in "rpq")
        return bool(p * (1 - r) + r * q >= Fraction(1, 4))

    leaves, open_ = explore_regions(run, {"r": (0.0, 0.5), "p": (0.25, 0.5), "q": (0.5, 1.0)})
    assert [leaf.result for leaf in leaves] == [True] and not open_  # p* >= p >= 1/4 on the whole box
    leaves, open_ = explore_regions(run, {"r": (0.25, 0.5), "p": (0.0625, 0.125), "q": (0.5, 1.0)})
    assert {leaf.result for leaf in leaves} == {False, True}
    assert open_ and all(f"after {MAX_JOINT_HALVINGS} halvings" in why for _, why in open_)  # the curve p* = 1/4


def test_a_comparison_of_two_float_terms_of_two_parameters_is_decided_by_enclosures_and_forked_near_its_curve():
    # x + y > x·y + 1/2 (both sides grow with x and y) changes along the hyperbola (1 − x)(1 − y) = 1/2: a region
    # whose two enclosures are apart is decided for every point of it, a region the curve still crosses after the
    # halvings is run once per answer, each leaf carrying the answer it assumed
    import random

    def run(s):
        return bool(s["x"] + s["y"] > s["x"] * s["y"] + 0.5)

    box = {"x": (0.0625, 0.5), "y": (0.0625, 0.5)}  # three binades: halvings by float count stay coarse
    leaves, open_ = explore_regions(run, box, forks=1)
    decided = [leaf for leaf in leaves if not leaf.assumed]
    assert {leaf.result for leaf in decided} == {False, True} and not open_
    assert [leaf for leaf in leaves if leaf.assumed]  # near the curve
    rng = random.Random(5)
    for leaf in decided:  # the answer holds at random floats of every decided region
        for _ in range(40):
            x, y = (rng.uniform(*leaf.box[n]) for n in "xy")
            assert (x + y > x * y + 0.5) == leaf.result, (leaf.box.describe(), x, y)
    leaves, open_ = explore_regions(run, box)  # without forks the curve's regions stay open, never decided
    assert open_ and all(f"after {MAX_JOINT_HALVINGS} halvings" in why for _, why in open_)


# ------------------------------------------------------------------ RAPPOR's one report

def test_rappor_one_report_is_proved_for_every_f_p_q_the_joint_boundary_too():
    # the regions the curves p* = 2**-1000 and 1 − q* = 2**-1000 still cross after the halvings are explored once
    # per answer of the comparison (the code's and the spec's precondition take the same answer): nothing is open
    report = _explore()
    for clause in ("precondition.regions", "function.law", "privacy.sound"):
        cov = report.clauses[clause]
        assert cov.proved and not cov.failed and not cov.open, (clause, report.describe(clause))
    assert not report.witnesses
    proved = report.clauses["privacy.sound"].proved
    for point in ({"f": 0.5, "p": 0.25, "q": 0.75}, {"f": 0.5, "p": 0.5, "q": 0.75}, {"f": 0.0, "p": 0.25, "q": 0.5},
                  {"f": 5e-324, "p": 0.5, "q": math.nextafter(0.5, 1.0)}, {"f": 0.75, "p": 0.0, "q": 1.0}):
        assert any(box.contains(point) for box in proved), point
    near = {"f": 2.0**-600, "p": 0.0, "q": 2.0**-399}  # p* = 2**-1000 exactly: on the curve
    assert any(box.contains(near) for box in proved)
    assert not report.samples  # no region left open: nothing for the sampled search to cover


def test_rappor_one_report_is_proved_tight_for_every_f_p_q_the_joint_boundary_and_its_tiny_corners_too():
    # the map, a·log1p(G/p*) + b·log1p(G/(1 − q*)), is proved equal to ln(P/P') of the worst pair by comparing
    # exponentials (one rational function), and its rounding by relative error bounds that survive q − p -> 0; on
    # a forked boundary region the accepting side's assumption p* >= 2**-1000 bounds the divisor p* away from 0
    report = _explore()
    tight = report.clauses["privacy.tight"]
    assert tight.proved and not tight.failed and not tight.open, report.describe("privacy.tight")
    for point in ({"f": 0.5, "p": 0.25, "q": 0.75}, {"f": 0.0, "p": 0.25, "q": 0.5}, {"f": 0.75, "p": 0.0, "q": 1.0},
                  {"f": 5e-324, "p": 0.5, "q": math.nextafter(0.5, 1.0)}, {"f": 0.25, "p": 0.5, "q": 0.5 + 2**-40},
                  {"f": 2.0**-600, "p": 0.0, "q": 2.0**-399}):  # the last: p* = 2**-1000, on a forked region
        assert any(box.contains(point) for box in tight.proved), point


def test_a_rappor_map_loose_along_the_joint_boundary_is_not_proved_tight_there():
    # the assumption p* >= 2**-1000 bounds the loss's terms, not the map: a map loose by 2**-20 for p < 2**-990 is
    # proved nowhere there, forked regions included, and its points go to the sampled search
    report = _explore(uv.rappor_loose_floor)
    tight = report.clauses["privacy.tight"]
    on_the_curve = {"f": 2.0**-600, "p": 0.0, "q": 2.0**-399}
    assert any(box.contains(on_the_curve) for box, *_ in tight.open + tight.failed)
    assert not [box for box in tight.proved if box["p"][0] < uv.RAPPOR_LOOSE_FLOOR], report.describe("privacy.tight")
    assert any(box.contains({"f": 0.5, "p": 0.25, "q": 0.75}) for box in tight.proved)
    from vetdp.specs.rappor import accepted

    # the regions left open send points the joint precondition accepts to the sampled search
    assert any(s["p"] < uv.RAPPOR_LOOSE_FLOOR for s in report.samples + report.witnesses)
    assert report.samples and all(accepted(s) for s in report.samples)


def test_a_rappor_map_loose_by_two_to_the_minus_twenty_in_a_band_of_q_fails_tight_with_a_witness_inside_it():
    report = _explore(uv.rappor_loose_band)
    tight = report.clauses["privacy.tight"]
    assert tight.failed and all(uv.RAPPOR_LOOSE_BAND[0] < w["q"] < uv.RAPPOR_LOOSE_BAND[1] for _, w, _ in tight.failed)
    assert "exceeds the exact loss" in tight.failed[0][2]
    assert tight.proved and not report.clauses["privacy.sound"].failed  # sound everywhere, loose in the band only


def test_a_precondition_that_differs_from_the_spec_along_the_joint_boundary_is_never_proved_there():
    # the code refuses p* < 2**-999, the spec only p* < 2**-1000: the forks of the boundary's regions compare two
    # different polynomials, so no side where the code and the spec disagree is proved
    report = _explore(uv.rappor_strict_floor)
    pre = report.clauses["precondition.regions"]
    between = {"f": 2.0**-600, "p": 0.0, "q": 1.5 * 2.0**-399}  # p* = 1.5·2**-1000: valid, refused by the code
    assert not any(box.contains(between) for box in pre.proved)
    assert any(box.contains(between) for box, *_ in pre.failed + pre.open)
    assert any(box.contains({"f": 0.5, "p": 0.25, "q": 0.75}) for box in pre.proved)  # far from it, the same


def test_a_forked_region_whose_other_side_the_run_budget_cut_is_not_proved():
    # at 89 runs the budget ends the pass between the two sides of a forked boundary region: the side explored proves
    # the law, the other is unexplored, so nothing is proved where the two overlap
    from vetdp.engine.universal import _overlap

    spec = _spec()
    ctor = spec.load_constructor()
    law = explore_spec(spec, lambda p: spec.build(ctor, p), region_budget=89).clauses["function.law"]
    spent = [box for box, why in law.open if "budget" in why]
    assert spent and law.proved
    assert not [box for box in law.proved for cut in spent if _overlap(box, cut)]


def test_rappor_precondition_regions_follow_the_specs_joint_condition():
    report = _explore()
    pre = report.clauses["precondition.regions"]
    # p >= q is rejected on whole regions with an order, not box by box along the diagonal
    assert any(box.orders and ("q", "p", False) in box.orders for box in pre.proved)
    assert not pre.failed


def test_a_band_of_p_two_to_the_minus_eighteen_wide_fails_with_a_witness_inside_it():
    report = _explore(uv.rappor_band)
    failed = report.clauses["function.law"].failed
    assert failed and all(uv.RAPPOR_P_BAND[0] < w["p"] < uv.RAPPOR_P_BAND[1] for _, w, _ in failed)
    assert report.clauses["function.law"].proved  # outside the band the law is vetdp's


def test_a_band_of_f_with_the_flip_rounded_down_fails_with_a_witness_inside_it():
    report = _explore(uv.rappor_flip_band)
    failed = report.clauses["function.law"].failed
    assert failed and all(uv.RAPPOR_F_BAND[0] < w["f"] < uv.RAPPOR_F_BAND[1] for _, w, _ in failed)


K1 = [{"k": 1, "m": 1, "constant_time": False}]  # 2h > k: the map is the larger of two weightings' ε₁


@pytest.mark.slow  # ~17 s of CPU
def test_rappor_with_2h_above_k_is_proved_for_every_f_p_q_where_the_map_is_the_larger_of_two_terms():
    # the code compares the two weightings' ε₁ (their order changes along p + q = 1): enclosures decide the
    # comparison off the line, the regions it crosses are forked on it, and the spec's constant takes the same
    # comparison, so every clause is proved on both sides
    report = _explore(bases=K1)
    for clause in ("precondition.regions", "function.law", "privacy.sound", "privacy.tight"):
        cov = report.clauses[clause]
        assert cov.proved and not cov.failed and not cov.open, (clause, report.describe(clause))
    proved = report.clauses["privacy.tight"].proved
    for point in ({"f": 0.5, "p": 0.25, "q": 0.5}, {"f": 0.5, "p": 0.5, "q": 0.75}, {"f": 0.25, "p": 0.25, "q": 0.75},
                  {"f": 0.0, "p": 0.125, "q": 0.875}):  # p + q below 1, above it, and on the line
        assert any(box.contains(point) for box in proved), point


@pytest.mark.slow  # ~17 s of CPU
def test_a_rappor_map_taking_the_smaller_of_two_terms_fails_sound_with_a_witness():
    report = _explore(uv.rappor_smaller_weighting, K1)
    sound = report.clauses["privacy.sound"]
    assert sound.failed, report.describe("privacy.sound")
    below = {"f": 0.5, "p": 0.25, "q": 0.5}  # p + q < 1: the two terms differ by far more than their rounding
    assert not any(box.contains(below) for box in sound.proved)
    assert report.clauses["function.law"].proved  # the law is the reference law: only the map is wrong


def _rows(ctor, **cfg):
    from vetdp.engine.runner import RunConfig, check_measurement_spec

    return {r.check: r for r in check_measurement_spec(_spec(), ctor, RunConfig(max_examples=3, **cfg))}


def test_the_bundled_report_passes_the_gate_with_every_region_proved():
    from vetdp.impl.rappor import make_rappor_report

    rows = _rows(make_rappor_report)
    assert rows["search.universal"].status == "pass"  # nothing open: the joint boundary's regions are proved too
    assert "privacy.tight: proved for every f, p, q on 63 region(s)" in rows["search.universal"].message
    assert not [r.check for r in rows.values() if r.status != "pass"]


def test_a_map_loose_along_the_joint_boundary_fails_the_gate_at_a_point_the_exploration_chose():
    rows = _rows(uv.rappor_loose_floor)
    assert rows["search.universal"].status == "fail" and "privacy.tight" in rows["search.universal"].message
    assert rows["privacy.tight"].status == "fail"  # checked concretely there
    assert "chosen by the universal exploration" in rows["search.coverage"].message


@pytest.mark.parametrize("ctor", [pytest.param(uv.rappor_band, marks=pytest.mark.slow),  # ~20 s
                                  pytest.param(uv.rappor_flip_band, marks=pytest.mark.deep)])
def test_the_gate_fails_the_band_and_the_sampled_search_alone_accepts_it(ctor):
    rows = _rows(ctor)
    assert rows["search.universal"].status == "fail" and "function.law" in rows["search.universal"].message
    assert rows["function.law"].status == "fail"  # checked concretely at the witness too
    sampled = _rows(ctor, max_regions=0)
    assert "search.universal" not in sampled
    assert sampled["function.law"].status == "pass" and sampled["privacy.sound"].status == "pass"


# ------------------------------------------------------------------ RAPPOR's n reports (the memoised bound ε∞)

def _explore_many(ctor=None, probes=()):
    spec = find_spec("rappor_reports")
    spec = dataclasses.replace(spec, universal=dataclasses.replace(spec.universal, probe_bases=lambda deep: probes))
    ctor = ctor if ctor is not None else spec.load_constructor()
    return explore_spec(spec, lambda p: spec.build(ctor, p))


def test_rappor_reports_share_one_permanent_response_for_every_f_p_q():
    report = _explore_many()
    for clause in ("precondition.regions", "function.law", "privacy.sound"):
        cov = report.clauses[clause]
        assert cov.proved and not cov.failed and not cov.open, (clause, report.describe(clause))
    assert any(box.contains({"f": 0.5, "p": 0.5, "q": 0.75}) for box in report.clauses["privacy.sound"].proved)


def test_reports_that_redraw_the_permanent_response_fail_the_law_everywhere_and_f_zero_fails_the_precondition():
    from tests.mutants.rappor_mutants import reports_accept_f_zero, reports_not_memoized

    fresh = _explore_many(reports_not_memoized).clauses["function.law"]
    assert fresh.failed and not fresh.proved
    zero = _explore_many(reports_accept_f_zero).clauses["precondition.regions"]
    assert zero.failed and all(w["f"] == 0 for _, w, _ in zero.failed)


def test_reports_that_keep_a_memo_across_calls_leave_the_exploration_open_never_an_engine_error():
    # the memo of the permanent response outlives the call: replaying a first run's choices on a later call draws
    # another sequence (ReplayMismatch), a finding of state.independent_calls, not vetdp's own failure (was exit 2)
    from tests.mutants.rappor_mutants import reports_memo_by_weight

    report = _explore_many(reports_memo_by_weight)
    law = report.clauses["function.law"]
    assert law.open and not law.proved and not law.failed
    assert all("state kept between calls" in why for _, why in law.open), report.describe("function.law")


def test_a_parameter_pinned_to_a_point_is_compared_with_a_wide_one_by_a_cut_not_by_its_point():
    def run(s):
        p = float(s["p"])  # pins p to the run's point
        return p < s["q"]

    leaves, _ = explore_regions(run, {"p": (0.5, 0.5), "q": (0.25, 1.0)})
    assert {leaf.result: leaf.box["q"] for leaf in leaves} == {False: (0.25, 0.5),
                                                               True: (math.nextafter(0.5, 1.0), 1.0)}


def test_an_order_keeps_both_signed_zeros_on_the_side_their_value_belongs_to():
    # a in [0.0, 1.0], b in [-1.0, -0.0], a <= b: exactly a = 0.0, b = -0.0 (equal values), not an empty region
    box = Box.of({"a": (0.0, 1.0), "b": (-1.0, -0.0)}).ordered("a", "b", False)
    assert box is not None and box["a"] == (0.0, 0.0) and box["b"] == (-0.0, -0.0)
    assert Box.of({"a": (0.0, 1.0), "b": (-1.0, -0.0)}).ordered("a", "b", True) is None


# ------------------------------------------------------------------ probe bases: long filters, f, p, q symbolic

def test_a_band_of_q_past_the_eighth_bit_fails_the_law_at_the_probe_base_and_no_sampled_set_reaches_it():
    # the code branches on each permanent bit, so k = 10 is read at two concrete inputs by forked runs, with f, p,
    # q still symbolic: the band is a region of its own there
    from tests.mutants.rappor_mutants import irr_band_of_q_past_the_eighth_bit as band
    from vetdp.engine.runner import RunConfig, evaluate_params

    spec = find_spec("rappor")
    probes = spec.universal.probe_bases(False)
    assert probes == [{"k": 10, "m": 5, "constant_time": False}]
    report = explore_spec(_spec(probes=probes), lambda p: spec.build(band, p))
    law = report.clauses["function.law"]
    assert law.failed and all(0.6 < w["q"] < 0.6 + 2**-30 and w["k"] == 10 for _, w, _ in law.failed)
    assert "on the input 1010101010, output bit 8 (input bit 1)" in law.failed[0][2]
    assert report.probe_witnesses and not report.parameter_sets()  # reported by the row, not sampled at k = 10
    assert law.proved  # the base k = 2 is proved (bits 8 and up do not exist there)
    # the sampled reach at production lengths: the scale examples' q is never in the band, so k = 32 passes
    assert evaluate_params(spec, band, spec.scale_examples[0], RunConfig(max_examples=0), scale=True)["function.law"].ok


@pytest.mark.parametrize("ctor", ["bundled", pytest.param("interleaved", marks=pytest.mark.slow)])  # ~25 s each
def test_rappor_and_an_interleaved_rewrite_are_checked_on_every_region_of_the_probe_base_never_open(ctor):
    from tests.mutants.rappor_mutants import prr_and_irr_interleaved

    spec = find_spec("rappor")
    code = spec.load_constructor() if ctor == "bundled" else prr_and_irr_interleaved
    report = explore_spec(_spec(probes=spec.universal.probe_bases(False)), lambda p: spec.build(code, p))
    law = report.clauses["function.law"]
    assert not law.failed and not law.open and len(law.checked) == len(law.proved) == 63
    assert all(why.startswith("on 2 concrete input(s) every output bit's law is the reference coordinate law")
               for _, why in law.checked)
    assert any(why.endswith("(the same polynomials)") for _, why in law.checked)
    assert report.probe_bases == [{"k": 10, "m": 5, "constant_time": False}]
    assert "checked, not proved, on 63 region(s) of 1 probe base(s) (k=10, m=5" in report.describe("function.law")
    for clause in ("privacy.sound", "privacy.tight"):  # not explored at a probe base
        assert not report.clauses[clause].checked and not report.clauses[clause].open


@pytest.mark.slow  # ~35 s
def test_reports_memoising_the_first_eight_bits_only_fail_at_the_probe_base_and_ours_are_checked():
    from tests.mutants.rappor_mutants import reports_memo_first_8_bits_only

    probes = find_spec("rappor_reports").universal.probe_bases(False)
    law = _explore_many(reports_memo_first_8_bits_only, probes).clauses["function.law"]
    assert law.failed and all(w["k"] == 10 for _, w, _ in law.failed)
    ours = _explore_many(probes=probes).clauses["function.law"]
    assert not ours.failed and not ours.open and ours.checked
