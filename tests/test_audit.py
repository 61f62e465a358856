"""Black-box audits (vetdp/audit/blackbox.py, driver.py): validity at β, power, and input checks.

Every sampled test runs under a SeededSource, so its outcome is fixed; the confidence each
audit states is β = 0.05 unless a test says otherwise.
"""

import math

import numpy as np
import pytest
from scipy.stats import binom

from vetdp.audit import clopper_pearson_lower, clopper_pearson_upper, epsilon_lower_bound, run_audit
from vetdp.audit.blackbox import audit_tallies
from vetdp.audit.driver import as_sampler, draw_tally
from vetdp.core.measurement import bitvector_domain, discrete_distance
from vetdp.impl import make_randomized_response, make_randomized_response_bitvec, make_randomized_response_bool
from vetdp.sampling import SeededSource, sample_uniform_int_below_batch, use_source

BETA = 0.05


def rr_prob(eps: float) -> float:
    """prob of binary RR whose exact loss is (the float nearest) eps."""
    return math.exp(eps) / (1 + math.exp(eps))


# ------------------------------------------------------------------ Clopper–Pearson

@pytest.mark.parametrize("n", [1, 7, 100])
def test_clopper_pearson_edges_have_closed_forms(n):
    a = 0.025
    assert clopper_pearson_lower(0, n, a) == 0.0
    assert clopper_pearson_upper(n, n, a) == 1.0
    assert clopper_pearson_upper(0, n, a) == pytest.approx(1 - a ** (1 / n), rel=1e-12)
    assert clopper_pearson_lower(n, n, a) == pytest.approx(a ** (1 / n), rel=1e-12)


@pytest.mark.parametrize("n,p", [(20, 0.1), (50, 0.5), (200, 0.03), (1000, 0.73)])
def test_clopper_pearson_one_sided_coverage_is_at_least_one_minus_alpha(n, p):
    """P[lower > p] <= α and P[upper < p] <= α, summed exactly over the binomial."""
    a = 0.025
    ks = np.arange(n + 1)
    pmf = binom.pmf(ks, n, p)
    miss_lo = sum(pmf[k] for k in ks if clopper_pearson_lower(int(k), n, a) > p)
    miss_hi = sum(pmf[k] for k in ks if clopper_pearson_upper(int(k), n, a) < p)
    assert miss_lo <= a + 1e-12 and miss_hi <= a + 1e-12
    # and they are not vacuous: the bounds move with k
    assert clopper_pearson_lower(n // 2, n, a) < n / 2 / n < clopper_pearson_upper(n // 2, n, a)


def test_epsilon_lower_bound_combines_bonferroni_halves():
    lo = clopper_pearson_lower(700, 1000, 0.05)
    hi = clopper_pearson_upper(250, 1000, 0.05)
    assert epsilon_lower_bound(700, 1000, 250, 1000, 0.1) == pytest.approx(math.log(lo / hi), rel=1e-12)
    assert epsilon_lower_bound(700, 1000, 250, 1000, 0.1, delta=0.2) == pytest.approx(math.log((lo - 0.2) / hi))
    assert epsilon_lower_bound(10, 1000, 250, 1000, 0.1, delta=0.2) == -math.inf


# ------------------------------------------------------------------ no false alarms

def _flagged(sampler, inputs, claim, runs, samples, seed):
    flagged = 0
    for r in range(runs):
        with use_source(SeededSource(f"{seed}/{r}")):
            flagged += run_audit(sampler, inputs, claim, samples=samples, beta=BETA).violation
    return flagged


def test_correct_rr_at_its_exact_epsilon_is_rarely_flagged():
    """200 audits of binary RR(ε=1) claiming exactly its true ε, 2,000 samples each: <= β·200."""
    m = make_randomized_response_bool(rr_prob(1.0))
    flagged = _flagged(m, [True, False], m.map(1), runs=200, samples=2000, seed="fa-rr")
    assert flagged <= 10, f"{flagged} of 200 correct audits flagged at β={BETA}"


def _uniform_sampler(width: int):
    """ε = 0: the output ignores the input and is uniform on `width` values."""
    return lambda x, n: sample_uniform_int_below_batch(width, n)


def test_many_outputs_do_not_cause_false_alarms():
    """Identical distributions over 64 outputs claimed 0-DP: event selection must not inflate the bound."""
    flagged = _flagged(_uniform_sampler(64), [0, 1], 0.0, runs=200, samples=2000, seed="fa-uniform")
    assert flagged <= 10, f"{flagged} of 200 correct audits flagged at β={BETA}"


def test_choosing_the_event_on_the_test_split_would_raise_false_alarms():
    """Why the split matters: the same audit, selecting on the very counts it then bounds, is flagged often."""
    fn = _uniform_sampler(64)
    flagged = 0
    for r in range(100):
        with use_source(SeededSource(f"reuse/{r}")):
            t = [draw_tally(fn, x, 1000) for x in (0, 1)]
        flagged += audit_tallies(t, t, t, [0, 1], 1000, 1000, 1000, 0.0, beta=BETA).violation
    assert flagged > 20


def test_many_candidate_inputs_do_not_cause_false_alarms():
    m = make_randomized_response(list(range(5)), 0.5)
    flagged = _flagged(m, list(range(5)), m.map(1), runs=100, samples=2000, seed="fa-pairs")
    assert flagged <= 5


@pytest.mark.deep
def test_correct_mechanisms_false_alarm_rate_over_1000_runs():
    m = make_randomized_response_bool(rr_prob(0.5))
    assert _flagged(m, [True, False], m.map(1), runs=1000, samples=4000, seed="fa-deep") <= 50


# ------------------------------------------------------------------ power

def test_binary_rr_eps_1_lower_bound_from_a_million_samples_is_at_least_0_9():
    m = make_randomized_response_bool(rr_prob(1.0))
    with use_source(SeededSource("lb")):
        r = run_audit(m, [True, False], 1.0, samples=500_000, beta=BETA)  # 10^6 samples in all
    assert 0.9 <= r.epsilon_lower <= 1.0 and not r.violation
    assert r.samples_test == 250_000 and "β=0.05" in r.describe()


@pytest.mark.parametrize("claim", [0.1, 0.5, 1.0, 2.0, 4.0])
def test_binary_rr_whose_true_eps_is_1_5_times_its_claim_is_flagged(claim):
    m = make_randomized_response_bool(rr_prob(1.5 * claim))
    with use_source(SeededSource(f"power/{claim}")):
        r = run_audit(m, [True, False], claim, samples=500_000, beta=BETA)
    assert r.violation and r.epsilon_lower > claim


def test_bitvec_whose_true_eps_is_1_5_times_its_claim_is_flagged_through_its_differing_bits():
    k = 16
    m = make_randomized_response_bitvec(bitvector_domain(max_weight=1, length=k), discrete_distance(), 0.6)
    x, x_prime = (True,) + (False,) * (k - 1), (False, True) + (False,) * (k - 2)
    claim = m.map(1) / 1.5
    with use_source(SeededSource("power-bitvec")):
        r = run_audit(m, [x, x_prime], claim, samples=500_000, beta=BETA)
    assert r.violation and r.statistic == "coordinates [0, 1]"


def test_categorical_rr_under_a_pair_search_is_flagged():
    m = make_randomized_response(list(range(4)), 0.6)
    with use_source(SeededSource("power-cat")):
        r = run_audit(m, [0, 1, 2, 3], m.map(1) / 1.5, samples=200_000, beta=BETA)
    assert r.violation and r.x != r.x_prime


def test_approximate_dp_claims_subtract_delta():
    """RR(ε=1) needs δ = p − e^0.5·(1−p) ≈ 0.288 at ε = 0.5: δ = 0.2 is flagged, δ = 0.3 is not."""
    m = make_randomized_response_bool(rr_prob(1.0))
    with use_source(SeededSource("delta")):
        low = run_audit(m, [True, False], 0.5, delta=0.2, samples=200_000)
        high = run_audit(m, [True, False], 0.5, delta=0.3, samples=200_000)
    assert low.violation and not high.violation


@pytest.mark.deep
def test_power_repeated_twenty_times():
    m = make_randomized_response_bool(rr_prob(1.5))
    assert _flagged(m, [True, False], 1.0, runs=20, samples=500_000, seed="power-deep") == 20


# ------------------------------------------------------------------ inputs

def test_measurement_without_batch_is_called_once_per_sample():
    calls = []
    m = make_randomized_response_bool(0.75)
    from dataclasses import replace

    plain = replace(m, batch=None, function=lambda x: calls.append(x) or x)
    out = as_sampler(plain)(True, 5)
    assert out == [True] * 5 and len(calls) == 5


@pytest.mark.parametrize("kwargs,error,names", [
    ({"epsilon": -1.0}, ValueError, "epsilon=-1.0"),
    ({"epsilon": math.nan}, ValueError, "epsilon=nan"),
    ({"beta": 0.0}, ValueError, "beta=0.0"),
    ({"beta": 1.5}, ValueError, "beta=1.5"),
    ({"delta": 1.0}, ValueError, "delta=1.0"),
    ({"samples": 3}, ValueError, "samples=3"),
    ({"samples": 10.5}, TypeError, "samples=10.5"),
    ({"inputs": [True]}, ValueError, "inputs"),
    ({"sampler": 3}, TypeError, "sampler=3"),
    ({"sampler": lambda x: x}, TypeError, "(x, n)"),
])
def test_bad_audit_arguments_are_rejected_by_name(kwargs, error, names):
    args = {"sampler": make_randomized_response_bool(0.75), "inputs": [True, False], "epsilon": 1.0,
            "samples": 100, **kwargs}
    with pytest.raises(error, match=names.replace("(", r"\(").replace(")", r"\)")):
        run_audit(**args)


def test_a_sampler_returning_the_wrong_count_is_rejected():
    with pytest.raises(ValueError, match="returned 1 outputs"):
        run_audit(lambda x, n: [x], [0, 1], 1.0, samples=100)


@pytest.mark.parametrize("returned,said", [(None, "returned NoneType"), ((i for i in range(3)), "a generator"),
                                           (5, "returned int")], ids=["none", "generator", "number"])
def test_a_sampler_returning_no_sequence_is_rejected_saying_what_it_returned(returned, said):
    with pytest.raises(ValueError, match=f"{said}.*must return a list, tuple or array"):
        run_audit(lambda x, n: returned, [0, 1], epsilon=1.0, samples=100)


def test_audit_chunks_are_drawn_a_window_at_a_time():
    """Issue 24: --samples 1e12 listed every chunk up front (4e7 tasks) and ended in MemoryError. Chunks are now made
    and tallied a window at a time: every chunk once, at most WINDOW in memory."""
    from vetdp.audit.driver import WINDOW
    from vetdp.distributed import SerialRunner

    class Recording(SerialRunner):
        def __init__(self):
            self.sizes = []

        def map(self, fn, items, progress=None):
            items = list(items)
            self.sizes.append(len(items))
            return super().map(fn, items, progress)

    rr = make_randomized_response_bool(prob=0.75)
    runner = Recording()
    r = run_audit(rr, [False, True], epsilon=1.2, samples=4000, chunk=1, seed=3, runner=runner)
    assert sum(runner.sizes) == 2 * 4000 and max(runner.sizes) == WINDOW and len(runner.sizes) > 1
    assert r.samples_test == 2000 and not r.violation
