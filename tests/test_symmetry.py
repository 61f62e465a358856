"""Categorical laws compared by classes of equal probability (vetdp.engine.symmetry), and the runner's use of them.

Every class-based worst ratio is checked against the output-by-output brute force
(vetdp.engine.divergence.max_divergence) on the same exact enumerated laws.
"""

from __future__ import annotations

import dataclasses
import itertools
import random
from fractions import Fraction

import pytest

from vetdp.engine import runner
from vetdp.engine.divergence import max_divergence
from vetdp.engine.enumerate import enumerate_law
from vetdp.engine.runner import RunConfig, evaluate_params
from vetdp.engine.spec import find_spec
from vetdp.engine.symmetry import NotSymmetric, class_law, coverage, pair_worst, worst_over
from vetdp.impl.randomized_response import make_randomized_response
from vetdp.sampling.primitives import sample_bernoulli_float, sample_uniform_int_below


def _laws(fn, inputs) -> dict:
    out = {}
    for x in inputs:
        law = enumerate_law(fn, x)
        assert law.complete
        out[x] = law.dist
    return out


@pytest.mark.parametrize("t,prob", [(2, 0.75), (3, 0.5), (7, 1 / 7 + 1e-9), (16, 0.999)])
def test_rr_laws_fall_into_two_classes_and_one_for_an_outsider(t, prob):
    m = make_randomized_response(list(range(t)), prob)
    laws = _laws(m, [0, t - 1, t])
    p = Fraction(prob)
    assert class_law(0, laws[0]).classes == ((p, frozenset({0})), ((1 - p) / (t - 1), frozenset(range(1, t))))
    assert class_law(t, laws[t]).classes == ((Fraction(1, t), frozenset(range(t))),)


@pytest.mark.parametrize("t", [2, 3, 5, 16])
def test_class_worst_equals_output_by_output_brute_force_for_every_pair(t):
    m = make_randomized_response([f"c{i}" for i in range(t)], 0.6 if t <= 2 else 0.4)
    inputs = [f"c{i}" for i in range(t)] + ["", "zz"]
    laws = _laws(m, inputs)
    classed = [class_law(x, d) for x, d in laws.items()]
    for i, j in itertools.permutations(range(len(classed)), 2):
        brute = max_divergence(laws, [(inputs[i], inputs[j])])
        got = pair_worst(classed[i], classed[j])
        assert got.ratio == brute.ratio
        assert got.p == laws[inputs[i]][got.y] and got.q == laws[inputs[j]].get(got.y, 0)
    assert worst_over(classed).ratio == max_divergence(laws).ratio


def _skewed(t: int, seed: int):
    """A categorical mechanism whose laws take several probabilities and, for one input, miss an output."""
    rng = random.Random(seed)
    weights = [rng.choice([1, 2, 3]) for _ in range(t)]

    def function(x: int) -> int:
        lie = sample_uniform_int_below(sum(weights))
        cumulative = itertools.accumulate(weights)
        y = next(i for i, c in enumerate(cumulative) if lie < c)
        if x == 0 and y == t - 1:
            return 0  # input 0 never reports t - 1
        return x if sample_bernoulli_float(0.5) else y

    return function


@pytest.mark.parametrize("seed", range(4))
def test_class_worst_equals_brute_force_with_several_classes_and_an_infinite_ratio(seed):
    t = 6
    laws = _laws(_skewed(t, seed), list(range(t)))
    classed = [class_law(x, d) for x, d in laws.items()]
    assert max(len(c.classes) for c in classed) >= 2
    for i, j in itertools.permutations(range(t), 2):
        assert pair_worst(classed[i], classed[j]).ratio == max_divergence(laws, [(i, j)]).ratio
    worst = worst_over(classed)
    assert worst.ratio is None and worst.x != 0 and worst.x_prime == 0 and worst.y == t - 1


def test_law_with_many_probabilities_is_not_a_small_class_structure():
    dist = {i: Fraction(2 * i + 1, 100**2) for i in range(100)}  # Σ (2i+1) = 100², all distinct
    with pytest.raises(NotSymmetric, match="more than 16 distinct probabilities"):
        class_law("x", dist)
    assert len(class_law("x", dist, max_classes=100).classes) == 100


def test_class_law_rejects_what_is_not_a_distribution():
    with pytest.raises(ValueError, match="sums to 1/2"):
        class_law(0, {0: Fraction(1, 2)})
    with pytest.raises(ValueError, match="negative"):
        class_law(0, {0: Fraction(3, 2), 1: Fraction(-1, 2)})
    with pytest.raises(ValueError, match="at least two"):
        worst_over([class_law(0, {0: Fraction(1)})])


def test_coverage_counts_enumerated_inputs_inside_and_outside_the_outputs():
    t = 10
    m = make_randomized_response(list(range(t)), 0.5)
    cov = coverage([class_law(x, d) for x, d in _laws(m, [0, 4, 9, -1]).items()])
    counts = (cov.values, cov.enumerated_inside, cov.enumerated_outside, cov.not_examined, cov.classes)
    assert counts == (10, 3, 1, 7, 2)
    assert "the other 7 values were not examined as inputs" in cov.describe()


# ------------------------------------------------------------------ through the runner

SPEC = find_spec("randomized_response")
T = 100
PARAMS = {"categories": list(range(T)), "prob": 0.5}


def _leaky_at(category: int):
    """make_randomized_response, except that ``category`` is kept with probability 3/4 (the map is unchanged)."""
    def ctor(categories, prob):
        m = make_randomized_response(categories, prob)
        honest = m.function

        def function(x):
            if x == category:
                lie = sample_uniform_int_below(len(categories) - 1)
                keep = sample_bernoulli_float(0.75)
                return x if keep else categories[lie + (lie >= categories.index(x))]
            return honest(x)

        return dataclasses.replace(m, function=function)

    return ctor


@pytest.fixture
def small_threshold(monkeypatch):
    """Laws of T = 100 outputs go through the class path (the production threshold is 4096 outputs)."""
    monkeypatch.setattr(runner, "CLASSES_FROM_OUTPUTS", 64)


def test_runner_decides_large_categorical_laws_by_classes_and_says_what_was_not_examined(small_threshold):
    out = evaluate_params(SPEC, make_randomized_response, PARAMS, RunConfig())
    sound = out["privacy.sound"]
    assert sound.ok and not sound.skipped and not sound.undecided
    enumerated = SPEC.inputs(PARAMS)
    inside = sum(1 for x in enumerated if x in range(T))
    assert f"{len(enumerated)} inputs enumerated exactly ({inside} of the {T} values" in sound.message
    assert f"the other {T - inside} values were not examined as inputs" in sound.message
    assert out["privacy.tight"].ok and out["function.law"].ok and out["privacy.distance"].ok


def test_runner_class_path_agrees_with_the_output_by_output_path(small_threshold, monkeypatch):
    classed = evaluate_params(SPEC, make_randomized_response, PARAMS, RunConfig())["privacy.sound"]
    monkeypatch.setattr(runner, "CLASSES_FROM_OUTPUTS", 10**9)
    plain = evaluate_params(SPEC, make_randomized_response, PARAMS, RunConfig())["privacy.sound"]
    assert "not examined" not in plain.message
    assert (classed.ok, classed.true, classed.claimed) == (plain.ok, plain.true, plain.claimed)


def test_runner_class_path_catches_a_leak_on_an_enumerated_category(small_threshold):
    enumerated = [x for x in SPEC.inputs(PARAMS) if x in range(T)]
    out = evaluate_params(SPEC, _leaky_at(enumerated[2]), PARAMS, RunConfig())
    assert not out["privacy.sound"].ok and not out["privacy.sound"].undecided
    assert enumerated[2] in (out["privacy.sound"].witness["x"], out["privacy.sound"].witness["x_prime"])


def test_runner_class_path_never_claims_a_category_it_did_not_enumerate(small_threshold):
    enumerated = set(SPEC.inputs(PARAMS))
    hidden = next(c for c in range(T) if c not in enumerated)
    out = evaluate_params(SPEC, _leaky_at(hidden), PARAMS, RunConfig())
    # the leak is on an input that was not examined: the pass says so, with the count of inputs left out
    assert out["privacy.sound"].ok and "not examined" in out["privacy.sound"].message


def test_report_of_a_run_states_the_coverage(small_threshold):
    results = list(runner.check_measurement_spec(SPEC, make_randomized_response, RunConfig(), only_params=PARAMS))
    sound = next(r for r in results if r.check == "privacy.sound")
    assert sound.status.value == "pass" and "not examined as inputs" in sound.message
    assert f"of the {T} values the outputs take" in sound.message
    # the curve clauses rest on the same enumerated inputs, and say so too
    for clause in ("privacy.distance", "privacy.rdp", "privacy.pld", "privacy.dominated"):
        r = next(r for r in results if r.check == clause)
        assert r.status.value == "pass" and "not examined as inputs" in r.message, (clause, r.message)


@pytest.mark.deep
def test_verify_at_t_65536_decides_by_classes(tmp_path):
    """vetdp verify randomized_response at t = 2^16 through the CLI (CliRunner: the JSON list of 65,536 categories
    is longer than one argv string of a real shell may be). Measured 250 s on the shared 2-core machine."""
    import json
    import time

    from click.testing import CliRunner

    from vetdp.cli import main

    params = {"categories": list(range(2**16)), "prob": 0.5}
    report = tmp_path / "report.json"
    t0 = time.perf_counter()
    res = CliRunner().invoke(main, ["verify", "randomized_response", "--impl",
                                    "vetdp.impl.randomized_response:make_randomized_response",
                                    "--params", json.dumps(params), "--time-limit", "3000", "--json", str(report)],
                             catch_exceptions=False)
    print(f"verify at t = 65536: {time.perf_counter() - t0:.1f} s")
    assert res.exit_code == 0, res.output
    text = report.read_text()
    assert "of the 65536 values the outputs take" in text and "not examined as inputs" in text
