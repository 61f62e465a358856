"""Universal verdicts: the float line explored by regions through the real code (vetdp.engine.symbolic,
vetdp.engine.polynomial, vetdp.engine.universal)."""

from __future__ import annotations

import dataclasses
import json
import math
import operator
import shlex
from fractions import Fraction

import pytest
from _install_helpers import REPO

from tests.mutants import universal_variants as uv
from vetdp.arith.expr import Const, Op, var
from vetdp.engine import universal
from vetdp.engine.bisection import bisect_comparison
from vetdp.engine.polynomial import ProbPoly
from vetdp.engine.runner import draw_params
from vetdp.engine.spec import find_spec
from vetdp.engine.symbolic import (
    Box,
    SymFloat,
    explore_regions,
    float_cut,
    float_from_key,
    float_key,
    floats_between,
    monotonicity,
)
from vetdp.engine.universal import explore_spec, terms_equal

MAX = 1.7976931348623157e308


# ------------------------------------------------------------------ the float order and cuts

@pytest.mark.parametrize("x", [-MAX, -1.0, -5e-324, -0.0, 0.0, 5e-324, 2.2250738585072014e-308, 0.5, 1.0, MAX])
def test_float_key_round_trips_and_orders_like_the_reals(x):
    assert float_from_key(float_key(x)) == x and math.copysign(1, float_from_key(float_key(x))) == math.copysign(1, x)
    up = math.nextafter(x, math.inf)
    # consecutive floats have consecutive keys; -0.0 and 0.0 are two keys for one number
    assert float_key(up) == float_key(x) + (2 if x == 0 and math.copysign(1, x) < 0 else 1) or x == MAX


def test_floats_between_counts_zero_once():
    assert floats_between(-5e-324, 5e-324) == 3  # -tiny, 0, tiny
    assert floats_between(1.0, 1.0) == 1
    assert floats_between(0.5, 1.0) == 2**52 + 1


def test_float_cut_finds_the_first_float_of_the_other_answer():
    assert float_cut(lambda x: x >= 0.1, 0.0, 1.0) == 0.1
    assert float_cut(lambda x: x * 3 > 1.0, 0.0, 1.0) == math.nextafter(1 / 3, 1.0) or \
        float_cut(lambda x: x * 3 > 1.0, 0.0, 1.0) * 3 > 1.0 >= math.nextafter(
            float_cut(lambda x: x * 3 > 1.0, 0.0, 1.0), 0.0) * 3


def test_monotonicity_follows_signs_through_division_and_subtraction():
    f = var("f")
    box = Box.of({"f": (0.25, 0.75)})
    assert monotonicity(f.inf_div(2), "f", box) == 1
    assert monotonicity(Const(1.0).neg_inf_sub(f), "f", box) == -1
    ratio = f.inf_div(Const(1.0).neg_inf_sub(f))  # p/(1−p): increasing on (0, 1)
    assert monotonicity(ratio.inf_ln(), "f", box) == 1
    assert monotonicity(Op("near_mul", (f, Const(1.0).neg_inf_sub(f))), "f", box) is None  # p(1−p) is not


# ------------------------------------------------------------------ exploring regions

def test_a_band_is_split_off_exactly_at_its_ends():
    def run(p):
        f = p["f"]
        return "band" if 0.25 < f < 0.2525 else "outside"

    leaves, open_ = explore_regions(run, {"f": (0.0, 1.0)})
    assert not open_
    band = [leaf.box["f"] for leaf in leaves if leaf.result == "band"]
    assert band == [(math.nextafter(0.25, 1.0), math.nextafter(0.2525, 0.0))]
    assert sum(leaf.box.size() for leaf in leaves) == floats_between(0.0, 1.0)


def test_a_table_index_from_a_rounded_parameter_gives_one_region_per_entry():
    leaves, _ = explore_regions(lambda p: [10, 20, 30, 40, 50][int(p["f"] * 4)], {"f": (0.0, 1.0)})
    assert sorted(leaf.result for leaf in leaves) == [10, 20, 30, 40, 50]
    assert [leaf.box["f"] for leaf in leaves if leaf.result == 20] == [(0.25, math.nextafter(0.5, 0.0))]


def test_a_float_conversion_pins_the_parameter_and_says_where():
    leaves, open_ = explore_regions(lambda p: math.log(p["f"]), {"f": (0.5, 1.0)})
    assert [leaf.box.size() for leaf in leaves] == [1]
    assert leaves[0].escapes and leaves[0].escapes[0].what == "float()"
    assert open_ and all("float()" in why for _, why in open_)


def test_a_division_that_can_be_by_zero_splits_the_region():
    def run(p):
        try:
            return 1.0 / p["x"]
        except ZeroDivisionError:
            return "zero"

    leaves, _ = explore_regions(run, {"x": (-1.0, 1.0)})
    assert [leaf.box["x"] for leaf in leaves if leaf.result == "zero"] == [(-0.0, 0.0)] or \
        [leaf.box.size() for leaf in leaves if leaf.result == "zero"] == [1]


def test_the_region_budget_counts_runs_and_leaves_the_rest_open():
    leaves, open_ = explore_regions(lambda p: [0, 1, 2, 3, 4, 5, 6, 7][int(p["f"] * 7)], {"f": (0.0, 1.0)}, budget=3)
    assert len(leaves) < 8 and open_ and all("budget of 3 runs" in why for _, why in open_)


# ------------------------------------------------------------------ polynomial probabilities

def test_complements_multiply_out_to_one_canonical_form():
    leaves, _ = explore_regions(lambda p: _complement_checks(p["q"]), {"q": (0.25, 0.5)})
    assert [leaf.result for leaf in leaves] == [(True, True, True, True)]


def _complement_checks(q: SymFloat):
    a = ProbPoly.atom(q)
    b = 1 - a
    total = a * a + 2 * a * b + b * b  # (q + (1 − q))² = 1
    return (total.same_as(ProbPoly.constant(1)), not (b * b).same_as(b), a > 0, b >= Fraction(1, 2))


def test_a_probability_compared_with_a_number_splits_the_region():
    leaves, _ = explore_regions(lambda p: bool(1 - ProbPoly.atom(p["q"]) > Fraction(3, 4)), {"q": (0.0, 0.5)})
    assert {leaf.result: leaf.box["q"] for leaf in leaves} == {True: (0.0, math.nextafter(0.25, 0.0)),
                                                               False: (0.25, 0.5)}


# ------------------------------------------------------------------ equal float terms by z3

def test_z3_proves_doubling_then_halving_exact_and_finds_halving_a_subnormal_inexact():
    f = var("f")
    assert terms_equal(Op("inf_div", (Op("near_mul", (Const(2.0), f)), Const(2.0))), f,
                       Box.of({"f": (0.0, 0.5)})) is True
    nearest, upward = Op("near_div", (f, Const(2.0))), Op("inf_div", (f, Const(2.0)))
    assert terms_equal(nearest, upward, Box.of({"f": (0.25, 1.0)})) is True  # exact for normal f
    assert terms_equal(nearest, upward, Box.of({"f": (5e-324, 1.0)})) is False  # an odd subnormal rounds


# ------------------------------------------------------------------ specs and variants

def _spec(name: str, bases=None):
    spec = find_spec(name)
    if bases is not None:
        spec = dataclasses.replace(spec, universal=dataclasses.replace(spec.universal, bases=lambda deep: bases))
    return spec


def _explore(spec, ctor=None):
    ctor = ctor if ctor is not None else spec.load_constructor()
    return explore_spec(spec, lambda p: spec.build(ctor, p))


SMALL_BITVEC = [{"k": k, "m": m, "constant_time": False} for k, m in [(1, 1), (2, 1), (3, 2), (4, 1)]]


@pytest.mark.parametrize("name,bases", [("randomized_response_bool", None), ("randomized_response", None),
                                        ("randomized_response_bitvec", SMALL_BITVEC)])
def test_bundled_specs_are_proved_for_every_float(name, bases):
    report = _explore(_spec(name, bases))
    for clause in ("precondition.regions", "function.law", "privacy.sound", "privacy.tight"):
        cov = report.clauses[clause]
        assert cov.proved and not cov.failed and not cov.open, (clause, report.describe(clause))
    assert not report.witnesses


def test_the_band_is_caught_with_a_witness_inside_it_where_a_seeded_search_misses_it():
    spec = _spec("randomized_response_bitvec", SMALL_BITVEC)
    report = _explore(spec, uv.bitvec_band)
    failed = report.clauses["function.law"].failed
    assert failed and all(uv.BAND[0] < witness["f"] < uv.BAND[1] for _, witness, _ in failed)
    assert report.clauses["privacy.sound"].proved  # outside the band the law and the map are vetdp's
    drawn = [p["f"] for seed in range(5) for p in draw_params(spec.params(False), 25, seed)]
    assert not any(uv.BAND[0] < f < uv.BAND[1] for f in drawn)


def test_a_category_outside_the_sampled_spread_is_caught_on_every_t_the_exploration_covers():
    # the sampled clauses enumerate a spread of categories at t > 16; the exploration enumerates every category
    from vetdp.specs.randomized_response import UNIVERSAL_UP_TO, categories_of, chosen_categories

    assert UNIVERSAL_UP_TO >= 32
    bases = [{"categories": categories_of(t, "int")} for t in (27, 31, 32)]
    report = _explore(_spec("randomized_response", bases), uv.rr_one_category)
    failed = report.clauses["function.law"].failed
    assert sorted(len(w["categories"]) for _, w, _ in failed) == [31, 32]
    assert all("P[M(27) = " in why for *_, why in failed)
    assert all(uv.ONE_CATEGORY not in chosen_categories(categories_of(t, "int")) for t in (31, 32))
    assert report.clauses["function.law"].proved  # t = 27: the bundled code


def test_a_table_of_flip_probabilities_fails_the_law():
    report = _explore(_spec("randomized_response_bitvec", SMALL_BITVEC[:2]), uv.bitvec_table)
    assert report.clauses["function.law"].failed and not report.clauses["privacy.sound"].proved


def test_the_word_size_bug_is_caught_at_65_bits_and_not_at_64():
    spec = _spec("randomized_response_bitvec", [{"k": 64, "m": 1, "constant_time": False},
                                                {"k": 65, "m": 1, "constant_time": False}])
    report = _explore(spec, uv.bitvec_words)
    failed = report.clauses["function.law"].failed
    assert [w["k"] for _, w, _ in failed] == [65]
    assert "output bit 64" in failed[0][2]


def test_a_map_short_only_past_128_bits_fails_privacy_sound_with_a_short_witness():
    # the law is vetdp's; the map's Hamming bound caps the weight at 64. At k = 129, m = 65 the map is 128/129 of
    # the loss of a listed pair at distance 129, for every f: failed on the region, at f = 0.5 (its short point),
    # not left open because the map is another formula than the spec's constant
    spec = _spec("randomized_response_bitvec", [{"k": 128, "m": 65, "constant_time": False},
                                                {"k": 129, "m": 64, "constant_time": False},
                                                {"k": 129, "m": 65, "constant_time": False}])
    report = _explore(spec, uv.bitvec_map_weight_capped)
    failed = report.clauses["privacy.sound"].failed
    assert [(w["k"], w["m"], w["f"]) for _, w, _ in failed] == [(129, 65, 0.5)], report.describe("privacy.sound")
    assert "below the loss" in failed[0][2] and "Hamming distance 129" in failed[0][2]
    assert len(report.clauses["privacy.sound"].proved) == 2  # k = 128 and m = 64: the cap changes nothing
    # privacy.tight holds (a map below the loss is tight); its identity is refused numerically, not by sympy
    assert not report.clauses["privacy.tight"].failed


def test_a_wrong_multiple_of_a_129th_power_is_refused_without_sympy_expanding_it(monkeypatch):
    import sympy

    from vetdp.engine import tightness
    from vetdp.engine.symbolic import explore_regions

    def run(s):
        q_atom = ProbPoly.atom(s["f"] / 2)
        return (1 - q_atom) ** 129, q_atom**129

    leaves, _ = explore_regions(run, {"f": (0.5, 0.5)})
    p, q = leaves[0].result
    atom = Op("near_div", (var("f"), Const(2.0)))  # f / 2: the flip probability's term
    loss = Op("near_ln", (Op("near_div", (Op("near_sub", (Const(1.0), atom)), atom)),))
    wrong = Op("near_mul", (Const(128.0), loss))  # 128·ln((1 − q)/q) where the pair's loss is 129·ln((1 − q)/q)
    monkeypatch.setattr(sympy, "expand", lambda *a, **k: pytest.fail("sympy.expand was called"))
    refused = tightness._Identity(wrong, p, q)
    assert not refused.holds and "they differ by -0.693147" in refused.why, refused.why


def test_a_long_bit_vector_with_an_admissible_flip_is_not_failed_and_its_map_is_left_open():
    # one ulp more noise: the spec admits any flip within 2**-30 of f/2 (red team: failed function.law on long
    # bases, where only the reference coordinate law was compared, while short bases admitted it)
    bases = [{"k": 7, "m": 2, "constant_time": False}, {"k": 65, "m": 3, "constant_time": False}]
    report = _explore(_spec("randomized_response_bitvec", bases), uv.bitvec_one_ulp_more_noise)
    law, sound = report.clauses["function.law"], report.clauses["privacy.sound"]
    assert not law.failed and law.proved, report.describe("function.law")
    assert not sound.failed and sound.open, report.describe("privacy.sound")  # not the reference law: not proved
    wrong = _explore(_spec("randomized_response_bitvec", bases), uv.bitvec_band)
    assert wrong.clauses["function.law"].failed  # a flip outside the window still fails


def test_code_branching_on_its_input_bits_is_read_input_by_input_and_a_long_bit_defect_fails_the_law():
    # bool(b) on each input bit: no product structure over symbolic bits (every region open before); the structure
    # at the all-zero input and at the heaviest prefix shows bit 64 never flipped, on every ε of the region
    bases = [{"k": 64, "m": 65, "constant_time": False}, {"k": 65, "m": 66, "constant_time": False}]
    wrong = _explore(_spec("k_rappor", bases), uv.k_rappor_first_64_bits_by_bool)
    failed = wrong.clauses["function.law"].failed
    assert [(w["k"], w["epsilon"]) for _, w, _ in failed] == [(65, 1.0)], wrong.describe("function.law")
    assert "on the input 000" in failed[0][2] and "output bit 64 (input bit 0) is False with probability 1" in \
        failed[0][2]
    sound = _explore(_spec("k_rappor", bases), uv.k_rappor_by_bool)
    law = sound.clauses["function.law"]
    assert not law.failed and not sound.witnesses and len(law.open) == 2  # never a proof for every input
    assert all("follows the reference coordinate law on 2 concrete input(s)" in why for _, why in law.open)


def test_sound_variants_with_several_branches_are_proved():
    bitvec = _explore(_spec("randomized_response_bitvec", SMALL_BITVEC), uv.bitvec_branches)
    boolean = _explore(_spec("randomized_response_bool"), uv.bool_branches)
    for report in (bitvec, boolean):
        for clause in ("function.law", "privacy.sound", "privacy.tight"):
            assert not report.clauses[clause].failed and not report.clauses[clause].open, report.describe(clause)
        assert len(report.clauses["function.law"].proved) > len(report.bases)  # several regions per base


def test_a_bool_band_two_to_the_minus_twenty_wide_is_caught():
    report = _explore(_spec("randomized_response_bool"), uv.bool_band)
    failed = report.clauses["function.law"].failed
    assert failed and all(0.9 < w["prob"] < 0.9 + 2.0**-20 for _, w, _ in failed)


# ------------------------------------------------------------------ in the gate: search.universal

def _rows(spec, ctor, **cfg):
    from vetdp.engine.runner import RunConfig, check_measurement_spec

    return {r.check: r for r in check_measurement_spec(spec, ctor, RunConfig(max_examples=3, **cfg))}


def test_check_reports_the_band_through_search_universal_and_the_concrete_clauses_at_its_witness():
    spec = _spec("randomized_response_bool")
    rows = _rows(spec, uv.bool_band)
    universal = rows["search.universal"]
    assert universal.status == "fail" and 0.9 < universal.witness["prob"] < 0.9 + 2.0**-20
    assert "function.law" in universal.message and universal.repro and "--params" in universal.repro
    # the witness is checked concretely too: function.law fails there, with its exact probabilities
    assert rows["function.law"].status == "fail" and 0.9 < json.loads(rows["function.law"].subject)["prob"] < 0.91
    assert "chosen by the universal exploration" in rows["search.coverage"].message


def test_without_the_exploration_the_sampled_search_accepts_the_band():
    rows = _rows(_spec("randomized_response_bool"), uv.bool_band, max_regions=0)
    assert "search.universal" not in rows
    assert rows["function.law"].status == "pass" and rows["privacy.sound"].status == "pass"


def test_a_sound_variant_passes_and_each_clause_says_where_it_holds_universally():
    rows = _rows(_spec("randomized_response_bool"), uv.bool_branches)
    assert rows["search.universal"].status == "pass", rows["search.universal"].message
    assert "universally: proved for every prob" in rows["function.law"].message
    assert "universally: proved for every prob" in rows["privacy.sound"].message
    assert "universally: proved for every prob" in rows["privacy.tight"].message


def test_code_that_turns_its_parameter_into_a_plain_float_leaves_the_line_open_as_a_warning():
    from vetdp.impl.randomized_response_bool import make_randomized_response_bool

    def through_numpy(prob, constant_time=False):  # np.float64(prob) calls float(): prob is pinned to one value
        import numpy as np

        return make_randomized_response_bool(float(np.float64(prob)), constant_time)

    rows = _rows(_spec("randomized_response_bool"), through_numpy)
    assert rows["search.universal"].status == "warning"
    assert "not decided symbolically" in rows["search.universal"].message
    assert rows["function.law"].status == "pass"  # the sampled search still decides


def test_a_long_bit_vector_without_a_stated_length_is_left_open_not_enumerated_input_by_input():
    # bases k = 7..128 are decided from the product structure, which needs the domain's length: a domain that
    # forgets it left each base to per-input enumeration up to the path budget (640 s for this mutant); now those
    # regions stay open, named, and are sampled
    # (the mutant's failing clause, domain.rejects_outside, is test_engine_mutants' business)
    from tests.mutants.bitvec_mutants import no_length_check
    from vetdp.engine.runner import RunConfig, _explore_universally

    report, r = _explore_universally(find_spec("randomized_response_bitvec"), no_length_check, RunConfig())
    assert r.status.value == "warning" and "states no length to read it at" in r.message, r.message
    assert report is not None and report.clauses["function.law"].open


# ------------------------------------------------------------------ privacy.tight for every value

def test_a_map_twice_the_loss_in_a_band_two_to_the_minus_twenty_wide_fails_tight_with_a_witness_inside_it():
    report = _explore(_spec("randomized_response_bool"), uv.bool_loose_band)
    tight = report.clauses["privacy.tight"]
    assert tight.failed and all(uv.LOOSE_BAND[0] < w["prob"] < uv.LOOSE_BAND[1] for _, w, _ in tight.failed)
    assert "exceeds the exact loss" in tight.failed[0][2]
    assert tight.proved and not tight.open  # outside the band the map is vetdp's constant, proved tight
    assert not report.clauses["function.law"].failed and not report.clauses["privacy.sound"].failed


def test_the_rounding_bound_decides_tightness_not_a_tolerance(monkeypatch):
    # with each operation allowed 2**20 units in the last place the bound exceeds 2**-30 relative somewhere:
    # the region is left open (never proved), so the proof rests on the rounding analysis
    from vetdp.engine import tightness

    monkeypatch.setattr(tightness, "_ULPS", 2**20)
    tight = _explore(_spec("randomized_response_bool", [{"constant_time": False}])).clauses["privacy.tight"]
    assert not tight.proved and not tight.failed and "exceeds the allowance" in tight.open[0][1]


def test_without_the_exploration_the_sampled_search_accepts_the_loose_band():
    rows = _rows(_spec("randomized_response_bool"), uv.bool_loose_band, max_regions=0)
    assert "search.universal" not in rows
    assert rows["privacy.tight"].status == "pass" and rows["privacy.sound"].status == "pass"


def test_each_failing_region_prints_a_reproduce_line_that_fails_the_same_clause():
    from vetdp.cli.findings import run_in_process

    ref = "tests.mutants.universal_variants:bool_loose_band"  # how a user names the code: reproductions say so
    universal = _rows(_spec("randomized_response_bool"), uv.bool_loose_band, impl_ref=ref)["search.universal"]
    assert universal.status == "fail"
    lines = [line for line in universal.message.splitlines() if line.startswith("reproduce privacy.tight on")]
    assert len(lines) == 2  # one per failing region (a base each)
    command = lines[0].split(": ", 1)[1]
    argv = shlex.split(command)
    assert argv[0] == "vetdp" and argv[argv.index("--impl") + 1] == ref and "--strict" in argv
    prob = json.loads(argv[argv.index("--params") + 1])["prob"]
    assert uv.LOOSE_BAND[0] < prob < uv.LOOSE_BAND[1]
    outcome = run_in_process(tuple(argv[1:]), cwd=REPO)
    assert outcome.exit_code == 1, outcome.error
    failed = {r["check"] for r in outcome.doc["results"] if r["status"] == "fail"}
    assert "privacy.tight" in failed, failed


def _doubled_bitvec(input_domain, input_metric, f, constant_time=False):
    """A bit vector whose map claims twice vetdp's ε: sound, loose everywhere."""
    from vetdp.impl.randomized_response_bitvec import make_randomized_response_bitvec

    m = make_randomized_response_bitvec(input_domain, input_metric, f, constant_time)
    return dataclasses.replace(m, privacy_map=lambda d: 2.0 * m.privacy_map(d))


@pytest.mark.slow  # over ~14 s: run by .ci/run (-m slow --deep)
def test_long_bit_vectors_are_proved_tight_from_the_farthest_listed_pair_and_a_doubled_map_is_not():
    bases = [{"k": 65, "m": 66, "constant_time": False}, {"k": 65, "m": 1, "constant_time": False}]
    spec = _spec("randomized_response_bitvec", bases)
    tight = _explore(spec).clauses["privacy.tight"]
    assert len(tight.proved) == 2 and not tight.open and not tight.failed
    loose = _explore(spec, _doubled_bitvec)
    tight = loose.clauses["privacy.tight"]
    assert not tight.proved and not tight.failed  # farther pairs than the listed ones are not excluded: open
    assert all("against the listed pair at Hamming distance" in why and "exceeds the exact loss" in why
               for _, why in tight.open), tight.open
    assert loose.samples  # the sampled search checks the witness concretely


# ------------------------------------------------------------------ comparisons not monotone in the parameter

def _brute(pieces, holds, values, per_piece=64, seed=0):
    """Every decided piece checked at its ends and at random floats inside it."""
    import random

    rng = random.Random(seed)
    for lo, hi, answer in pieces:
        if answer is None:
            continue
        keys = [float_key(lo), float_key(hi)] + [rng.randint(float_key(lo), float_key(hi)) for _ in range(per_piece)]
        for k in keys:
            assert holds(*values(float_from_key(k))) is answer, (lo, hi, answer, float_from_key(k))


def _crossing_at_one(x):
    return x, 2 * x - 1  # both increasing; x < 2x − 1 exactly when x > 1 (2x − 1 is exact on [0.5, 4])


def test_bisection_decides_two_increasing_terms_up_to_their_crossing_float():
    pieces = bisect_comparison(lambda a, b: a < b, _crossing_at_one, (1, 1), (-1, 1), 0.5, 4.0, budget=512)
    assert pieces == [(0.5, 1.0, False), (math.nextafter(1.0, 2.0), 4.0, True)]


def test_bisection_at_a_small_budget_leaves_the_crossing_undecided_and_every_decided_piece_is_right():
    pieces = bisect_comparison(lambda a, b: a < b, _crossing_at_one, (1, 1), (-1, 1), 0.5, 4.0, budget=12)
    at_crossing = [answer for lo, hi, answer in pieces if lo <= 1.0 <= hi]
    assert at_crossing == [None]  # 12 sub-intervals cannot reach the crossing float
    assert {answer for *_, answer in pieces} == {False, None, True}
    # the pieces cover [0.5, 4] in order, with no gap and no overlap
    assert pieces[0][0] == 0.5 and pieces[-1][1] == 4.0
    assert all(float_key(a[1]) + 1 == float_key(b[0]) for a, b in zip(pieces, pieces[1:], strict=False))
    _brute(pieces, lambda a, b: a < b, _crossing_at_one)


@pytest.mark.parametrize("budget", [0, -1, True, 1.5])
def test_bisection_budget_outside_its_range_raises_naming_it(budget):
    with pytest.raises(ValueError, match="budget="):
        bisect_comparison(lambda a, b: a < b, _crossing_at_one, (1, 1), (-1, 1), 0.5, 4.0, budget=budget)


def test_explore_regions_splits_a_comparison_of_two_increasing_terms_at_its_crossing():
    def run(p):
        x = p["x"]
        return min(x, x * 0.5 + 1.0) is x  # min keeps x unless x/2 + 1 < x, i.e. unless x > 2

    leaves, unexplored = explore_regions(run, {"x": (0.25, 8.0)}, bisections=1024)  # down to the crossing float
    assert not unexplored and not any(leaf.escapes for leaf in leaves)
    assert [(leaf.box["x"], leaf.result) for leaf in leaves] == [((0.25, 2.0), True),
                                                                   ((math.nextafter(2.0, 3.0), 8.0), False)]


def test_explore_regions_leaves_a_chaotic_comparison_open_never_as_a_leaf():
    def run(p):
        x = p["x"]
        return x * 3.0 / 3.0 < x  # one ulp either way, float by float

    leaves, unexplored = explore_regions(run, {"x": (1.0, 2.0)}, bisections=16)
    assert unexplored and all("near a crossing" in why for _, why in unexplored)
    for leaf in leaves:  # each leaf's answer holds at every float of it that is probed
        lo, hi = leaf.box["x"]
        for k in range(float_key(lo), min(float_key(hi), float_key(lo) + 50) + 1):
            x = float_from_key(k)
            assert (x * 3.0 / 3.0 < x) is leaf.result


# ------------------------------------------------------------------ k-RAPPOR: min(ε, bound(ε)) for every ε

K_RAPPOR_SHORT = [{"k": k, "m": m, "constant_time": False} for k, m in [(1, 1), (3, 2), (7, 8)]]  # length < 2m


def _floats_of(boxes):
    return sum(floats_between(*b["epsilon"]) for b in boxes)


def _proved_for_every_epsilon(report, clause, bases=1):
    """The clause proved on regions that tile the valid line once per base, with nothing failed or open."""
    cov = report.clauses[clause]
    assert not cov.failed and not cov.open, report.describe(clause)
    assert _floats_of(cov.proved) == bases * floats_between(5e-324, MAX)
    return cov


def test_k_rappor_privacy_sound_is_proved_for_every_epsilon_where_the_length_is_below_2m():
    spec = _spec("k_rappor", K_RAPPOR_SHORT)
    report = explore_spec(spec, lambda p: spec.build(spec.load_constructor(), p), deep=True)
    _proved_for_every_epsilon(report, "privacy.sound", len(K_RAPPOR_SHORT))


def test_k_rappor_bounds_equal_up_to_rounding_are_proved_by_exploring_each_side_of_the_comparison():
    # length 2m: the bound is ε up to rounding and min(ε, bound) flips float after float, which no bisection budget
    # decides; each side is an admissible constant on the whole region, so whichever the code takes is sound
    spec = _spec("k_rappor", [{"k": 2, "m": 1, "constant_time": False}])
    report = _explore(spec)
    _proved_for_every_epsilon(report, "privacy.sound")
    # privacy.tight too: the bound's side is proved tight on the whole region, and ε's side is taken only where
    # ε <= bound (the comparison it assumed), so it is at most a map proved tight there
    _proved_for_every_epsilon(report, "privacy.tight")


def test_a_side_twice_the_loss_is_never_proved_tight_and_fails_only_where_the_code_takes_it():
    # where bound < ε the map takes 2·bound, else ε: near the crossing one side is twice the loss
    ctor = uv.k_rappor_doubled_side
    for base in ({"k": 2, "m": 1, "constant_time": False}, {"k": 3, "m": 2, "constant_time": False}):
        spec = _spec("k_rappor", [base])
        report = _explore(spec, ctor)
        forked = [b for b, why in report.clauses["privacy.sound"].open if "explored with each answer" in why]
        tight = report.clauses["privacy.tight"]
        assert forked and not any(b in tight.proved for b in forked)
        failed = [(b, w, why) for b, w, why in tight.failed if b in forked]
        assert failed, report.describe("privacy.tight")
        for _, w, why in failed:  # the witness is a value where the code itself returns twice the bound
            assert spec.build(ctor, w).map(1) != w["epsilon"] and "the code's own run" in why


def test_the_larger_of_two_bounds_equal_up_to_rounding_is_not_proved_tight_by_the_comparison_it_assumed():
    # max(ε, bound): ε's side is taken where ε >= bound, which says nothing of ε against the loss
    spec = _spec("k_rappor", [{"k": 2, "m": 1, "constant_time": False}])
    report = _explore(spec, uv.k_rappor_max_map)
    sound, tight = report.clauses["privacy.sound"], report.clauses["privacy.tight"]
    assert not sound.open and not sound.failed
    assert not tight.proved, report.describe("privacy.tight")
    assert any("the code's own run" in why for _, _, why in tight.failed)  # where the code's map is ε, above the loss


def test_forks_whose_answers_do_not_cover_every_answer_prove_nothing():
    key_a, key_b = ("a", operator.lt, "b"), ("c", operator.le, "d")
    assert universal._covers([((key_a, True),), ((key_a, False),)])
    assert universal._covers([((key_a, True), (key_b, True)), ((key_a, True), (key_b, False)), ((key_a, False),)])
    assert not universal._covers([((key_a, True),)])  # a side that split further: its other part is elsewhere
    assert not universal._covers([((key_a, True), (key_b, True)), ((key_a, False),)])
    assert not universal._covers([((key_a, True),), ((key_b, False),)])



def test_a_side_at_most_a_side_proved_only_where_it_is_taken_is_not_proved(monkeypatch):
    # z is proved tight on the whole region; y <= z where y's side is taken, so y's side is tight; x <= y where x's
    # side is taken says nothing of x: y is tight only where its own side is taken, not at x's values
    from vetdp.engine.tightness import TightOutcome

    x, y, z = var("x"), var("y"), var("z")
    whole = {z}
    monkeypatch.setattr(universal._Judge, "_tight_outcome",
                        lambda self, spec, box, claim, law: TightOutcome(proved=claim.term in whole, why="not proved"))
    box = Box.of({"x": (1.0, 2.0)})

    def side(term, small, large):
        result = dataclasses.make_dataclass("Claim", ["claim"])(SymFloat(term, 1.5))
        return universal.Leaf(box, result, (), ((f"{small} < {large}", True),), (((small, operator.lt, large), True),))

    def judged(forks):
        report = universal.UniversalReport("chain", ("x",))
        universal._Judge(report, {}, {"x": (1.0, 2.0)})._tight_forks(None, box, forks, None, None)
        return report.clauses["privacy.tight"]

    assert judged([side(z, z, z), side(y, y, z)]).proved == [box]
    cov = judged([side(z, z, z), side(y, y, z), side(x, x, y)])
    assert not cov.proved and "x < y assumed True" in cov.open[0][1]

def test_where_every_pair_ties_the_pair_whose_loss_is_the_maps_formula_proves_tightness():
    # for ε below ~2e-17 the rounded flip probability is exactly 1/2: every output is equally likely, every ratio is
    # 1 and the worst pair at the region's point is any pair; the map is the loss of a farther pair, which ties
    spec = _spec("k_rappor", [{"k": 3, "m": 2, "constant_time": False}])
    tight = _proved_for_every_epsilon(_explore(spec), "privacy.tight")
    assert any(b["epsilon"] == (5e-324, 2.1196152472091612e-17) for b in tight.proved)


def test_a_side_of_an_undecided_comparison_that_is_no_admissible_constant_leaves_the_region_open_never_failed():
    # sound (the nudged bound is above the bound) but not a constant term for term: open where the sides are
    # explored, and not failed (a side may be taken at no point of the region)
    spec = _spec("k_rappor", [{"k": 2, "m": 1, "constant_time": False}])
    report = _explore(spec, uv.k_rappor_nudged_min)
    cov = report.clauses["privacy.sound"]
    assert not cov.failed, report.describe("privacy.sound")
    forked = [(b, why) for b, why in cov.open if "explored with each answer" in why]
    assert forked and all("assumed True" in why and "assumed False" in why for _, why in forked)
    for box, _ in forked:  # and handed to the sampled search
        lo, hi = box["epsilon"]
        assert any(float_key(lo) <= float_key(p["epsilon"]) <= float_key(hi) for p in report.samples)


def test_k_rappor_map_too_small_in_a_narrow_band_fails_privacy_sound_with_a_witness_in_the_band():
    spec = _spec("k_rappor", [{"k": 3, "m": 2, "constant_time": False}])
    report = _explore(spec, uv.k_rappor_band_map)
    failed = report.clauses["privacy.sound"].failed
    assert failed and all(uv.K_RAPPOR_BAND[0] < w["epsilon"] < uv.K_RAPPOR_BAND[1] for _, w, _ in failed)
    assert "below the exact loss" in failed[0][2]
    assert report.witnesses and not report.clauses["function.law"].failed
    drawn = [p["epsilon"] for seed in range(5) for p in draw_params(spec.params(False), 25, seed)]
    assert not any(uv.K_RAPPOR_BAND[0] < e < uv.K_RAPPOR_BAND[1] for e in drawn)


def test_k_rappor_map_taking_the_larger_bound_is_sound_for_every_epsilon():
    spec = _spec("k_rappor", K_RAPPOR_SHORT[:2])
    report = explore_spec(spec, lambda p: spec.build(uv.k_rappor_max_map, p), deep=True)
    cov = report.clauses["privacy.sound"]
    assert not cov.failed and not cov.open, report.describe("privacy.sound")


def test_a_failure_of_vetdps_own_computation_in_the_exploration_is_an_engine_error_never_an_open_base(monkeypatch):
    # an exception raised with no frame of the code under test or its spec running (here a C call in place of
    # the tightness judge) is vetdp's failure: the search.universal row is an error (exit 2), not a base left open
    # as if the code could not run symbolically
    import functools

    from vetdp.engine import tightness
    from vetdp.engine.runner import RunConfig, _explore_universally

    spec = _spec("randomized_response_bool")
    monkeypatch.setattr(tightness, "decide_tight", functools.partial(divmod, 1, 0))
    report, row = _explore_universally(spec, spec.load_constructor(), RunConfig())
    assert report is None and row.status.value == "error", row.message
    assert row.message.startswith("engine error in the universal exploration: TypeError") and "not a finding" in \
        row.message
    monkeypatch.undo()
    report, row = _explore_universally(spec, spec.load_constructor(), RunConfig())
    assert row.status.value == "pass", row.message


def test_a_witness_outside_the_preconditions_is_reported_not_handed_to_the_concrete_clauses():
    # the spec's accountant refuses prob < 1/t: checking the witness concretely was an engine error (exit 2)
    rows = _rows(_spec("randomized_response", [{"categories": [0, 1]}]), uv.rr_accepts_below_one_over_t)
    universal_row = rows["search.universal"]
    assert universal_row.status == "fail" and "accepts parameters outside" in universal_row.message
    assert universal_row.witness["prob"] < 0.5
    assert not [r for r in rows.values() if r.status == "error"], [r.message for r in rows.values()]


# ------------------------------------------------------------------ the short point handed to the concrete clauses

def _significant_bits(x: float) -> int:
    m = Fraction(abs(x))
    return (m.numerator >> ((m.numerator & -m.numerator).bit_length() - 1)).bit_length() if x else 0


@pytest.mark.parametrize(("lo", "hi", "expected"), [
    (5e-324, 1.0, 0.5),  # the median float is near 1e-154, whose exact powers are long
    (0.0, 1.0, 0.5),
    (0.25, 0.5, 0.375),  # strictly inside
    (-3.0, -0.1, -1.0),
    (-5.0, 5.0, 1.0),  # positive before negative, never 0 while another value is inside
    (2.0, 1e300, 4.0),
    (0.7301, 0.7302, 0.7301025390625),
    (1.0, 1.0000000000000002, 1.0),  # nothing strictly inside: lo
    (1.0, 1.0, 1.0),
])
def test_simplest_float_examples(lo, hi, expected):
    from vetdp.engine.symbolic import simplest_float

    assert simplest_float(lo, hi) == expected


def test_simplest_float_is_strictly_inside_and_no_float_between_has_fewer_bits():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from vetdp.engine.symbolic import float_from_key, float_key, simplest_float

    finite = st.floats(allow_nan=False, allow_infinity=False)

    @settings(max_examples=400, deadline=None, derandomize=True)
    @given(finite, finite)
    def check(a, b):
        lo, hi = min(a, b, key=float_key), max(a, b, key=float_key)
        c = simplest_float(lo, hi)
        if float_key(hi) - float_key(lo) < 2:
            assert c == lo
            return
        assert float_key(lo) < float_key(c) < float_key(hi)
        assert c != 0 or (lo <= 0 <= hi and float_key(hi) - float_key(lo) <= 3)
        # the neighbours that share c's sign have at least as many bits; the median and both inner ends too
        inside = [float_from_key(k) for k in (float_key(lo) + 1, float_key(hi) - 1,
                                               (float_key(lo) + float_key(hi)) // 2)]
        assert all(_significant_bits(c) <= _significant_bits(x) for x in inside if x * c > 0), (lo, hi, c)

    check()


def test_an_open_region_is_handed_on_at_its_short_point():
    from vetdp.engine.symbolic import Box

    box = Box((("f", 5e-324, 1.0),))
    assert box.point()["f"] < 1e-150 and box.simple_point() == {"f": 0.5}
    ordered = Box((("p", 0.0, 1.0), ("q", 0.0, 1.0)), orders=(("p", "q", True),))._tight()
    env = ordered.simple_point()  # p = q = 0.5 breaks p < q: the median point instead
    assert ordered.contains(env) and env == ordered.point()


def test_the_universal_row_names_its_bases_not_every_parameter_value():
    # a pass on RAPPOR's one base k = 2, h = 1 read "every parameter value", as if every length were proved
    from vetdp.engine.runner import universal_subject

    assert universal_subject(find_spec("rappor"), False) == \
        "every f, p, q on 1 base (k = 2, m = 1); the law checked on 1 probe base (k = 10, m = 5)"
    assert universal_subject(find_spec("rappor"), True).endswith("3 probe bases (k in 10..66, m in 5..33)")
    assert universal_subject(find_spec("randomized_response"), False) == \
        "every prob on 33 bases (len(categories) in 2..32)"
