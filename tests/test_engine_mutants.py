"""Evidence that the engine catches bugs: every deliberately wrong variant is rejected on the
clause its defect breaks, and our own constructors pass the same checks."""

import pytest

from tests.mutants import bitvec_mutants, other_mutants, rappor_mutants, rr_mutants
from vetdp.engine.estimators import check_estimator_spec
from vetdp.engine.runner import RunConfig, check_measurement_spec
from vetdp.engine.spec import find_spec

MEASUREMENT_MUTANTS = [
    ("randomized_response", rr_mutants.missing_t_minus_1, "privacy.sound"),
    ("randomized_response", rr_mutants.map_rounded_down, "privacy.sound"),
    ("randomized_response", rr_mutants.leaks_outside, "privacy.sound"),
    ("randomized_response", rr_mutants.outside_not_uniform, "privacy.sound"),
    ("randomized_response", rr_mutants.lie_not_uniform, "privacy.sound"),
    ("randomized_response", rr_mutants.accepts_prob_below_one_over_t, "precondition[prob_below_one_over_t]"),
    ("randomized_response", rr_mutants.domain_unchecked, "domain.rejects_outside"),
    # reached only by the pinned t = 101 and 255 (the search draws t <= 64)
    ("randomized_response", rr_mutants.lie_misses_the_last_category_for_odd_t_past_100, "function.law"),
    # reached only by the pinned k = 4, h = 4 with p + q != 1 (the search draws h <= 3, or a huge h with k <= 3)
    ("rappor", rappor_mutants.epsilon_one_weights_capped_at_three, "privacy.sound"),
    # reached only by the universal exploration's probe base k = 10 (a band of q 2**-30 wide, bits 8 and up)
    ("rappor", rappor_mutants.irr_band_of_q_past_the_eighth_bit, "search.universal"),
    ("randomized_response_bitvec", bitvec_mutants.flips_with_f, "privacy.sound"),
    ("randomized_response_bitvec", bitvec_mutants.last_bit_unflipped, "privacy.sound"),
    ("randomized_response_bitvec", bitvec_mutants.naive_round_to_nearest_map, "privacy.sound"),
    ("randomized_response_bitvec", bitvec_mutants.map_uses_m_not_2m, "privacy.sound"),
    ("randomized_response_bitvec", bitvec_mutants.no_length_check, "domain.rejects_outside"),
    ("randomized_response_bitvec", bitvec_mutants.ignores_constant_time, "timing.constant_bytes"),
    ("randomized_response_bitvec", bitvec_mutants.randomness_outside_primitives, "randomness.through_primitives"),
    ("randomized_response_bool", other_mutants.bool_map_rounded_down, "privacy.sound"),
    ("randomized_response_bool", other_mutants.bool_accepts_prob_below_half, "precondition[prob_below_half]"),
    ("k_rappor", other_mutants.k_rappor_without_factor_2, "privacy.sound"),
    ("k_rappor", other_mutants.k_rappor_round_to_nearest, "privacy.sound"),
]

ESTIMATOR_MUTANTS = [
    ("debias_randomized_response_bitvec", other_mutants.debias_bitvec_wrong_denominator, "estimator.unbiased"),
    ("debias_randomized_response", other_mutants.debias_rr_uses_one_over_t, "estimator.unbiased"),
]

CFG = RunConfig(strict_messages=False, impl_ref="tests.mutants", max_examples=8)  # pinned edges + 8 drawn


# 17 to 40 s each: the default suite skips them, .ci/run runs them (-m slow --deep)
SLOW_MUTANTS = {"no_length_check", "domain_unchecked", "naive_round_to_nearest_map",
                "lie_misses_the_last_category_for_odd_t_past_100", "epsilon_one_weights_capped_at_three",
                "irr_band_of_q_past_the_eighth_bit"}


@pytest.mark.parametrize("spec_name,mutant,clause", [
    pytest.param(*row, id=row[1].__name__, marks=[pytest.mark.slow] if row[1].__name__ in SLOW_MUTANTS else [])
    for row in MEASUREMENT_MUTANTS])
def test_measurement_mutant_is_rejected_on_its_clause(spec_name, mutant, clause):
    results = list(check_measurement_spec(find_spec(spec_name), ctor=mutant, cfg=CFG))
    failing = {r.check: r for r in results if r.status.is_failure}
    assert clause in failing, f"{mutant.__name__} passed {clause}; failing: {sorted(failing)}"
    r = failing[clause]
    assert r.repro and r.repro.startswith(f"vetdp verify {spec_name} --impl tests.mutants --params ")
    if clause.startswith("privacy.") and "not a finite float" not in r.message:
        assert r.claimed is not None and r.true is not None and r.slack < 0  # exact shortfall, may be < 1 ulp
        assert {"x", "x_prime", "y"} <= set(r.witness)
    elif clause.startswith("privacy."):  # e.g. the seeds' 2*m*log((2-f)/f) overflows for tiny f
        assert r.claimed == float("inf")


@pytest.mark.parametrize("spec_name,mutant,clause", ESTIMATOR_MUTANTS,
                         ids=[m.__name__ for _, m, _ in ESTIMATOR_MUTANTS])
def test_estimator_mutant_is_rejected(spec_name, mutant, clause):
    failing = {r.check for r in check_estimator_spec(find_spec(spec_name), estimator=mutant) if r.status.is_failure}
    assert clause in failing


@pytest.mark.parametrize("spec_name", ["randomized_response", "randomized_response_bool",
                                       "randomized_response_bitvec",
                                       pytest.param("k_rappor", marks=pytest.mark.slow)])  # ~15 s
def test_our_constructor_passes_the_same_strictness(spec_name):
    spec = find_spec(spec_name)
    results = list(check_measurement_spec(spec, ctor=spec.load_constructor(), cfg=CFG))
    assert not [r.check for r in results if r.status.is_failure]
