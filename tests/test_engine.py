"""The engine's parts: exact enumeration, divergences, decided comparisons, spec discovery."""

import math
from fractions import Fraction

import pytest

from vetdp import bitvector_domain, discrete_distance
from vetdp.engine.divergence import (
    Verdict,
    compare_claim,
    hockey_stick_delta,
    ln_ratio_bracket,
    max_divergence,
    renyi_divergence,
)
from vetdp.engine.enumerate import EnumerationBudgetExceeded, Raised, freeze, output_distribution
from vetdp.engine.registry import CheckOptions
from vetdp.engine.spec import EstimatorSpec, MeasurementSpec, discover_specs
from vetdp.engine.specs_provider import check_specs
from vetdp.impl import make_randomized_response, make_randomized_response_bitvec
from vetdp.sampling import sample_bernoulli_float, sample_uniform_int_below


def test_enumerate_rr_matches_the_seed_distribution():
    # seed 001: truth with p, each other category with (1-p)/(t-1), outside input uniform 1/t
    m = make_randomized_response(["a", "b", "c"], 0.5)
    assert output_distribution(m, "a") == {"a": Fraction(1, 2), "b": Fraction(1, 4), "c": Fraction(1, 4)}
    assert output_distribution(m, "zz") == {c: Fraction(1, 3) for c in "abc"}


def test_enumerate_bitvec_matches_product_of_flips():
    m = make_randomized_response_bitvec(bitvector_domain(max_weight=1, length=2), discrete_distance(), 0.5)
    dist = output_distribution(m, (True, False))
    q = Fraction(1, 4)  # f/2
    assert dist[(True, False)] == (1 - q) * (1 - q)
    assert dist[(False, True)] == q * q
    assert sum(dist.values()) == 1 and len(dist) == 4


def test_enumerate_budget_exceeded_raises_clear_error():
    def ten_coins(_):
        return [sample_bernoulli_float(0.5) for _ in range(10)]

    with pytest.raises(EnumerationBudgetExceeded, match="budget=100"):
        output_distribution(ten_coins, None, budget=100)


def test_enumerate_records_exceptions_as_outcomes():
    def sometimes_fails(_):
        if sample_uniform_int_below(4) == 0:
            raise ValueError("bad luck")
        return "ok"

    assert output_distribution(sometimes_fails, None) == {Raised("ValueError", "bad luck"): Fraction(1, 4),
                                                           "ok": Fraction(3, 4)}


def test_freeze_makes_outputs_hashable():
    import numpy as np

    assert freeze(np.array([True, False])) == (True, False)
    assert freeze([1, [2, 3]]) == (1, (2, 3))


def test_max_divergence_finds_the_witness():
    dists = {"x": {0: Fraction(3, 4), 1: Fraction(1, 4)}, "y": {0: Fraction(1, 8), 1: Fraction(7, 8)}}
    md = max_divergence(dists)
    # output 0: (3/4)/(1/8) = 6 beats output 1: (7/8)/(1/4) = 7/2
    assert (md.ratio, md.x, md.x_prime, md.y) == (Fraction(6), "x", "y", 0)


def test_max_divergence_infinite_when_support_differs():
    md = max_divergence({"x": {0: Fraction(1)}, "y": {0: Fraction(1, 2), 1: Fraction(1, 2)}})
    assert md.ratio is None and md.y == 1


@pytest.mark.parametrize("claim,verdict", [
    (math.log(3) + 1e-15, Verdict.SOUND),  # the float above ln 3
    (1.0986122886681098, Verdict.SOUND),  # nearest float to ln 3 lies above it
    (1.0986122886681096, Verdict.UNSOUND),  # one ulp below
], ids=["above", "nearest_above", "ulp_below"])
def test_compare_claim_decides_against_ln3(claim, verdict):
    assert compare_claim(claim, ln_ratio_bracket(Fraction(3))).verdict is verdict


def test_compare_claim_undecided_when_enclosure_never_separates():
    never = lambda prec: (Fraction(1) - Fraction(1, 2**prec), Fraction(1) + Fraction(1, 2**prec))  # noqa: E731
    result = compare_claim(1.0, never, max_prec=256)
    assert result.verdict is Verdict.UNDECIDED


def test_compare_claim_infinite_truth_is_unsound():
    assert compare_claim(1e300, None).verdict is Verdict.UNSOUND


def test_hockey_stick_of_rr_vanishes_at_its_epsilon_and_is_tv_at_zero():
    p, q = {0: Fraction(3, 4), 1: Fraction(1, 4)}, {0: Fraction(1, 4), 1: Fraction(3, 4)}
    lo, hi = hockey_stick_delta(p, q, 0.0)(128)
    assert lo <= Fraction(1, 2) <= hi and hi - lo < Fraction(1, 2**100)
    lo, hi = hockey_stick_delta(p, q, math.nextafter(math.log(3), 10))(128)
    assert lo == 0


def test_renyi_divergence_kl_and_order_two():
    p, q = {0: Fraction(3, 4), 1: Fraction(1, 4)}, {0: Fraction(1, 4), 1: Fraction(3, 4)}
    assert abs(renyi_divergence(p, q, 1) - 0.5 * math.log(3)) < 1e-15
    assert abs(renyi_divergence(p, q, 2) - math.log(7 / 3)) < 1e-15


def test_every_impl_constructor_has_a_spec_with_the_same_stem():
    import importlib
    import pkgutil

    import vetdp.impl

    specs = discover_specs()
    measured = {s.name for s in specs if isinstance(s, MeasurementSpec)}
    for info in pkgutil.iter_modules(vetdp.impl.__path__):
        module = importlib.import_module(f"vetdp.impl.{info.name}")
        for name in dir(module):
            if name.startswith("make_") and getattr(module, name).__module__ == module.__name__:
                assert info.name in measured, f"impl/{info.name}.py has {name} but no specs/{info.name}.py"
    assert all(isinstance(s, (MeasurementSpec, EstimatorSpec)) for s in specs)


@pytest.mark.deep  # the whole of `vetdp check`'s specs, ~110 s: .ci/run runs `vetdp check` itself
def test_bundled_specs_all_pass():
    results = list(check_specs(CheckOptions()))
    failures = [(r.spec, r.check, r.message) for r in results if r.status.is_failure]
    assert not failures
    assert {r.check for r in results} >= {"privacy.sound", "privacy.tight", "errors.data_independent",
                                           "domain.rejects_outside", "estimator.unbiased", "estimator.variance"}
