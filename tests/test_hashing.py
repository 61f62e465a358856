"""Hashing mechanisms (OLH, Hadamard response, CMS, HCMS): decided exactly through public randomness and keyed
encodings (vetdp.engine.public); every wrong variant rejected on its clause with a witness, sound variants
written differently accepted, the published variance formulas shown wrong exactly."""

from fractions import Fraction

import pytest

from tests.mutants import hashing_mutants as H
from vetdp.engine.estimators import check_estimator_spec
from vetdp.engine.public import NotEstablished, keyed_world_laws
from vetdp.engine.runner import RunConfig, check_measurement_spec, evaluate_params
from vetdp.engine.spec import find_spec
from vetdp.impl.olh import olh_count_variance, olh_keep_probability, wang_olh_variance

CFG = RunConfig(strict_messages=False, impl_ref="tests.mutants.hashing_mutants", max_examples=4)

OLH = {"d": 7, "epsilon": 2.0**-40, "g": 3, "constant_time": False}
CMS = {"m": 4, "k": 3, "epsilon": 1.0, "hash_key": 7, "constant_time": False}
MEASUREMENT_MUTANTS = [  # (spec, mutant, clause, the parameters it fails at)
    ("olh", H.olh_p_over_g, "privacy.sound", OLH),
    ("olh", H.olh_lie_over_all_g, "privacy.sound", OLH),
    ("olh", H.olh_seed_not_released, "function.law", OLH),
    ("olh", H.olh_seed_reused, "function.law", OLH),
    ("olh", H.olh_modulo_bias, "function.law", OLH),
    ("hadamard_response", H.hr_row_off_by_one, "errors.data_independent", {"k": 3, "epsilon": 1.0}),
    ("count_mean_sketch", H.cms_epsilon_not_split, "privacy.sound", CMS),
    ("hadamard_count_mean_sketch", H.hcms_map_half_epsilon, "privacy.sound", {**CMS, "m": 8}),
]


def _failing(spec_name, ctor, cfg=CFG, params=None):
    spec = find_spec(spec_name)
    small = type(spec)(**{**spec.__dict__, "scale_examples": ()})  # the scale examples run in test_scale_*
    results = list(check_measurement_spec(small, ctor=ctor, cfg=cfg, only_params=params))
    return {r.check: r for r in results if r.status.is_failure}, results


@pytest.mark.parametrize("spec_name,mutant,clause,params", MEASUREMENT_MUTANTS,
                         ids=[m.__name__ for _, m, _, _ in MEASUREMENT_MUTANTS])
def test_hashing_mutant_is_rejected_on_its_clause(spec_name, mutant, clause, params):
    failing, _ = _failing(spec_name, mutant, params=params)
    assert clause in failing, f"{mutant.__name__} passed {clause}; failing: {sorted(failing)}"
    r = failing[clause]
    assert r.status.value == "fail", r.message
    assert r.witness, r.message
    assert r.repro.startswith(f"vetdp verify {spec_name} --impl tests.mutants.hashing_mutants --params ")
    if clause == "privacy.sound":
        assert r.slack < 0 and {"x", "x_prime", "public[0]"} <= set(r.witness)


@pytest.mark.parametrize("spec_name,variant", [("olh", H.olh_keep_first), ("hadamard_response", H.hr_members_listed)],
                         ids=["olh_keep_first", "hr_members_listed"])
def test_sound_variant_written_differently_passes(spec_name, variant):
    failing, results = _failing(spec_name, variant, RunConfig(max_examples=1, strict_messages=False))
    assert not failing, {k: r.message for k, r in failing.items()}
    assert any(r.check == "privacy.tight" and r.status.value == "pass" for r in results)


@pytest.mark.parametrize("mutant", [H.olh_input_hashed_by_hand, H.olh_swallows_the_seal],
                         ids=["hashed_by_hand", "swallows_the_seal"])
def test_input_used_otherwise_is_undecided_with_the_cause(mutant):
    m = mutant(5, 1.0, 3)
    with pytest.raises(NotEstablished, match="used other than as an encoding"):
        keyed_world_laws(m.function)
    out = evaluate_params(find_spec("olh"), mutant, {"d": 5, "epsilon": 1.0, "g": 3, "constant_time": False},
                          RunConfig())
    assert out["privacy.sound"].undecided and "other than through keyed_encoding" in out["privacy.sound"].message


OLH_EST = {"d": 2, "epsilon": 0.5, "g": 3, "constant_time": False, "dataset": [1, 0]}
CMS_EST = {"m": 2, "k": 2, "epsilon": 1.0, "hash_key": 0, "constant_time": False, "dataset": ["a", "a"]}


@pytest.mark.parametrize("spec_name,estimator,variance,clause,params", [
    ("estimate_olh_counts", H.olh_estimator_modulo_bias, None, "estimator.unbiased", {**OLH_EST, "dataset": [0]}),
    ("estimate_olh_counts", None, H.olh_wang_variance, "estimator.variance", {**OLH_EST, "dataset": [0, 0]}),
    ("estimate_cms_counts", None, H.cms_variance_without_collisions, "estimator.variance", CMS_EST),
], ids=["olh_modulo_bias", "olh_wang_variance", "cms_without_collisions"])
def test_hashing_estimator_mutant_is_rejected(spec_name, estimator, variance, clause, params):
    results = list(check_estimator_spec(find_spec(spec_name), cfg=RunConfig(max_examples=1), estimator=estimator,
                                        variance=variance, only_params=params))
    failing = {r.check: r for r in results if r.status.is_failure}
    assert clause in failing, sorted(failing)
    assert failing[clause].witness


def test_wang_variance_drops_exactly_the_count_and_seed_collision_terms():
    counts = [2, 1]  # two users hold 0, one holds 1
    exact = olh_count_variance(counts, 1, 1.0, 3, exact=True)
    published = wang_olh_variance(3, 1.0, 3, exact=True)
    p = Fraction(olh_keep_probability(1.0, 3))
    q, r = Fraction(1, 3), (1 - p) / 2
    count_term = 1 * (p * (1 - p) - q * (1 - q)) / (p - q) ** 2
    seed_term = 2 * Fraction(1, 2**32) * (p - r) ** 2 * q * (1 - q) * 1 / (p - q) ** 2
    assert exact - published == count_term + seed_term
    assert seed_term > 0 and count_term > 0


@pytest.mark.parametrize("spec_name", ["olh", "hadamard_response", "count_mean_sketch", "hadamard_count_mean_sketch"])
def test_our_hashing_constructor_passes_every_clause(spec_name):
    failing, results = _failing(spec_name, None, RunConfig(max_examples=1))
    assert not failing, {k: r.message for k, r in failing.items()}
    sound = next(r for r in results if r.check == "privacy.sound")
    assert sound.status.value == "pass"
    # the passing row carries the argument why what was examined covers every public value and every input
    argument = ("decided over all" if spec_name == "hadamard_response" else
                "the law given the public draws depends on the input only through")
    assert argument in sound.message, sound.message


@pytest.mark.deep
@pytest.mark.parametrize("spec_name", ["olh", "hadamard_response", "count_mean_sketch", "hadamard_count_mean_sketch"])
def test_scale_example_is_decided_exactly(spec_name):
    spec = find_spec(spec_name)
    for params in spec.scale_examples:
        out = evaluate_params(spec, spec.load_constructor(), params, RunConfig(), scale=True)
        for clause in ("privacy.sound", "privacy.tight", "function.law"):
            assert out[clause].ok and not out[clause].undecided, (clause, out[clause].message)


# ------------------------------------------------------------------ the constant-time uniform sampler

@pytest.mark.parametrize("n", [1, 2, 3, 7, 64, 255, 257, 2**32 - 5, 2**32])
def test_constant_time_uniform_reads_a_fixed_number_of_bytes(n):
    from vetdp.sampling.primitives import sample_uniform_int_below, uniform_attempt_constant_time_bytes
    from vetdp.sampling.sources import RecordingSource, SeededSource, use_source

    counts = set()
    for seed in range(40):
        rec = RecordingSource(SeededSource(f"ct/{n}/{seed}"))
        with use_source(rec):
            v = sample_uniform_int_below(n, constant_time=True)
        assert 0 <= v < n
        counts.add(rec.bytes_read)
    assert counts == {uniform_attempt_constant_time_bytes(n)}


def test_constant_time_uniform_is_exact_over_every_byte_string_of_a_narrow_attempt():
    from collections import Counter

    from vetdp.sampling.primitives import uniform_attempt_constant_time

    for n in (3, 5, 6, 7, 200):
        hits = Counter(uniform_attempt_constant_time(n, v.to_bytes(2, "big")) for v in range(2**16))
        rejected = hits.pop(None, 0)
        assert set(hits) == set(range(n)) and len(set(hits.values())) == 1 and rejected == 2**16 % n


def test_constant_time_lemma_and_its_z3_part_pass():
    from vetdp.obligations.lemmas import run_lemma

    result = run_lemma("uniform.constant_time_exact")
    assert result.status == "proved" and "unsat" in result.detail


def test_olh_constant_time_reads_the_same_bytes_for_every_input():
    out = evaluate_params(find_spec("olh"), None or find_spec("olh").load_constructor(),
                          {"d": 6, "epsilon": 1.0, "g": 5, "constant_time": True}, RunConfig())
    assert out["timing.constant_bytes"].ok and not out["timing.constant_bytes"].skipped
    assert "bytes read for every input and outcome" in out["timing.constant_bytes"].message
