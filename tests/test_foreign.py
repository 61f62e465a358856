"""Foreign randomness: the watcher sees every usual source decisively; the opaque audit states what it can see.

Statistical tests here audit at a stated β (false-alarm probability per audit) and seed the
foreign variants' generators (patched inside the test only), so they are deterministic.
"""

import dataclasses
import json
import math
import os
import random
import secrets
import sys
import time
from fractions import Fraction
from os import urandom as urandom_alias  # imported before any watch: must still be seen
from random import random as random_alias

import numpy as np
import pytest
from click.testing import CliRunner

from tests.mutants import foreign_variants as fv
from vetdp.audit.opaque import audited_inputs, detectable_deviation, distribution_audit, opaque_findings
from vetdp.cli import main
from vetdp.core.measurement import bitvector_domain, discrete_distance
from vetdp.engine.enumerate import freeze, output_distribution
from vetdp.engine.foreign import check_determinism, reachable_generators, watch_foreign_randomness
from vetdp.engine.results import Status
from vetdp.engine.runner import RunConfig, check_measurement_spec
from vetdp.engine.spec import at_least, find_spec
from vetdp.impl.randomized_response import make_randomized_response
from vetdp.impl.randomized_response_bitvec import make_randomized_response_bitvec
from vetdp.sampling.primitives import random_bytes, sample_bernoulli_float, sample_uniform_int_below
from vetdp.sampling.sources import BranchingSource, RecordingSource, SeededSource, SystemSource, use_source

P_MAX = math.nextafter(1.0, 0.0)
RUN_BETA = 1e-4  # the per-run false-alarm budget the default sample size is chosen for
PARAMETER_SETS = 30  # ... split over about this many parameter sets
BETA = RUN_BETA / PARAMETER_SETS
PROPOSED_SAMPLES = 10_000  # the default audit_samples proposed for RunConfig

USER_RANDOM = random.Random(7)
USER_SYSTEM_RANDOM = random.SystemRandom()
OLD_GENERATOR = np.random.default_rng(11)


# ------------------------------------------------------------------ the watcher sees each source

SOURCES = {
    "random.random": (lambda: random.random(), "random.random"),
    "alias from random import random": (lambda: random_alias(), "random.random"),
    "random.randint": (lambda: random.randint(1, 6), "random.Random.randint"),
    "random.shuffle": (lambda: random.shuffle([1, 2, 3]), "random.Random.shuffle"),
    "user Random() instance": (lambda: USER_RANDOM.random(), "random.Random.random"),
    "Random() made in the block": (lambda: random.Random(), "random.Random"),
    "SystemRandom instance": (lambda: USER_SYSTEM_RANDOM.random(), "os.urandom via random.SystemRandom.random"),
    "os.urandom": (lambda: os.urandom(4), "os.urandom"),
    "alias from os import urandom": (lambda: urandom_alias(4), "os.urandom"),
    "secrets.token_bytes": (lambda: secrets.token_bytes(4), "os.urandom via secrets.token_bytes"),
    "secrets.randbelow": (lambda: secrets.randbelow(10), "os.urandom via secrets.randbelow"),
    "secrets.choice": (lambda: secrets.choice("abc"), "os.urandom via random.SystemRandom.choice"),
    "np.random.random (legacy)": (lambda: np.random.random(), "legacy global RandomState"),
    "np.random.standard_normal (legacy)": (lambda: np.random.standard_normal(), "legacy global RandomState"),
    "np.random.RandomState(1)": (lambda: np.random.RandomState(1).rand(), "BitGenerator construction"),
    "default_rng() unseeded": (lambda: np.random.default_rng().random(), "os.urandom"),
    "default_rng(3) seeded": (lambda: np.random.default_rng(3).random(), "BitGenerator construction"),
    "PCG64(5)": (lambda: np.random.PCG64(5), "BitGenerator construction"),
    "SeedSequence() unseeded": (lambda: np.random.SeedSequence(), "os.urandom"),
    "a Generator made before the block": (lambda: OLD_GENERATOR.random(), "state changed"),
    "its bit generator's random_raw": (lambda: OLD_GENERATOR.bit_generator.random_raw(), "state changed"),
}


@pytest.mark.parametrize("name", list(SOURCES))
def test_watcher_sees_source(name):
    call, label = SOURCES[name]
    with watch_foreign_randomness() as use:
        call()
    assert use.used and any(label in s for s in use.sources), use.sources


def test_watcher_sees_a_generator_reachable_from_roots_without_the_heap_scan():
    m = fv.rr_numpy([0, 1], 0.5)
    assert len(reachable_generators([m])) == 1
    with watch_foreign_randomness(scan_heap=False) as blind:
        m(0)
    with watch_foreign_randomness(m, scan_heap=False) as use:
        m(0)
    assert not blind.used  # documented: neither reachable nor scanned
    assert use.sources == ["numpy.random.Generator (state changed: a draw)"]


def test_watcher_lists_sources_in_first_seen_order_once_each():
    with watch_foreign_randomness() as use:
        os.urandom(1)
        random.random()
        os.urandom(1)
    assert use.sources == ["os.urandom", "random.random (module-level random)"]


def vetdp_primitives_only():
    return sample_bernoulli_float(0.3), sample_uniform_int_below(5), random_bytes(3)


@pytest.mark.parametrize("source", [None, SeededSource(1), RecordingSource(SystemSource())],
                         ids=["system", "seeded", "recording-system"])
def test_watcher_sees_nothing_for_vetdp_primitives(source):
    with watch_foreign_randomness() as use:
        if source is None:
            vetdp_primitives_only()  # the default SystemSource reads os.urandom: vetdp's own, not foreign
        else:
            with use_source(source):
                vetdp_primitives_only()
    assert not use.used, use.sources


def test_watcher_sees_nothing_while_enumerating_our_rr_and_rappor():
    rr = make_randomized_response(["a", "b", "c"], 0.5)
    bv = make_randomized_response_bitvec(bitvector_domain(max_weight=1, length=3), discrete_distance(), 0.5)
    with watch_foreign_randomness(rr, bv) as use:
        output_distribution(rr, "a")
        output_distribution(bv, (True, False, False))
    assert not use.used


def test_system_source_called_around_the_current_source_counts():
    with watch_foreign_randomness() as use, use_source(BranchingSource()):
        SystemSource().random_bytes(4)  # bypasses the engine's source: foreign
    assert use.sources == ["os.urandom"]


def test_watcher_restores_and_feeds_a_previous_profiler():
    events: list[str] = []

    def previous(frame, event, arg):
        events.append(event)

    sys.setprofile(previous)
    try:
        with watch_foreign_randomness() as use:
            assert sys.getprofile() is not previous
            os.urandom(1)
        assert sys.getprofile() is previous
    finally:
        sys.setprofile(None)
    assert use.used and "c_call" in events  # the previous profiler kept receiving events in the block


def test_watcher_restores_no_profiler_and_nests():
    with watch_foreign_randomness() as outer:
        with watch_foreign_randomness() as inner:
            random.random()
        assert inner.used
    assert outer.used and sys.getprofile() is None


# ------------------------------------------------------------------ determinism of enumeration

def test_check_determinism_accepts_our_rr_with_its_exact_law():
    m = make_randomized_response([0, 1, 2], 0.5)
    inputs = [0, 1, 2, 3]
    d = check_determinism(m, inputs, budget=1000)
    assert d.deterministic and d.sources == ()
    assert d.distributions == {freeze(x): output_distribution(m, x) for x in inputs}


@pytest.mark.parametrize("variant", ["rr_random", "rr_numpy", "rr_secrets"])
def test_check_determinism_flags_foreign_rr_where_reruns_agree(variant):
    # prob = 1 − 2⁻⁵³: every foreign run tells the truth, so two runs always agree; only watching decides
    m = getattr(fv, variant)([0, 1, 2], P_MAX)
    assert all(m(x) == x for x in (0, 1, 2) for _ in range(20))
    d = check_determinism(m, [0, 1, 2, 3], budget=1000)
    assert not d.deterministic and d.sources and d.distributions is None


def test_check_determinism_flags_foreign_rappor_at_the_smallest_f():
    m = fv.bitvec_random(bitvector_domain(max_weight=1, length=2), discrete_distance(), 5e-324)
    d = check_determinism(m, [(False, False), (True, False)], budget=1000)
    assert not d.deterministic and "random.getrandbits (module-level random)" in d.sources


def test_check_determinism_flags_hidden_state_by_repetition():
    calls = [0]

    def stateful(x):
        calls[0] += 1
        return x if calls[0] % 2 else not x

    d = check_determinism(stateful, [True, False], budget=10)
    assert not d.deterministic and d.sources == () and d.x is True


# ------------------------------------------------------------------ the audit: what it can see

def test_detectable_deviation_shrinks_as_one_over_root_samples():
    for p in (Fraction(1, 2), Fraction(1, 10)):
        d1, d4 = detectable_deviation(p, 2_500, 1e-7), detectable_deviation(p, 10_000, 1e-7)
        assert 1.85 < d1 / d4 < 2.15
    # p = 0: about ln(1/alpha)/samples
    assert detectable_deviation(0, 10_000, 1e-7) == pytest.approx(math.log(1e7) / 10_000, rel=0.01)


@pytest.mark.parametrize("p", [5e-324, 2 * 5e-324, Fraction(5e-324) * (1 - Fraction(5e-324)), 1 - 2**-53])
def test_detectable_deviation_at_a_subnormal_expected_count_is_stated_not_raised(p):
    # RAPPOR at f = 1e-323 has cells of probability about 5e-324: n·p is subnormal, where scipy's beta
    # quantile overflows; `vetdp verify` on a correct foreign RAPPOR then ended in an engine error
    seen = detectable_deviation(p, 10_000, 1e-7)
    assert 0 < seen < 0.01 and math.isfinite(seen)


def test_distribution_audit_reports_its_detectable_deviation_and_it_shrinks_with_samples():
    m = make_randomized_response([0, 1, 2], 0.5)
    exact = {freeze(x): output_distribution(m, x) for x in (0, 1, 2)}
    seen = {}
    for n in (1_000, 4_000):
        with use_source(SeededSource(f"audit/{n}")):
            f = distribution_audit(m, exact, [0, 1, 2], n, BETA)
        assert f.ok and f.witness["samples"] == n
        seen[n] = f.witness["detectable_deviation"]
        assert f"detects a deviation of about {seen[n]:.3g}" in f.message
    assert 1.85 < seen[1_000] / seen[4_000] < 2.15


def test_distribution_audit_rejects_bad_arguments_by_name():
    m = make_randomized_response([0, 1], 0.5)
    exact = {0: output_distribution(m, 0)}
    with pytest.raises(ValueError, match="samples"):
        distribution_audit(m, exact, [0], 0, BETA)
    with pytest.raises(ValueError, match="beta"):
        distribution_audit(m, exact, [0], 10, 0.0)
    with pytest.raises(ValueError, match="inputs"):
        distribution_audit(m, exact, [], 10, BETA)


def test_audited_inputs_all_when_few_else_spread_with_both_ends():
    assert audited_inputs([1, 2, 3, 2]) == [1, 2, 3]
    many = list(range(20))
    picked = audited_inputs(many)
    assert len(picked) == 8 and picked[0] == 0 and picked[-1] == 19 and len(set(picked)) == 8


def test_audit_sees_a_bug_at_one_category():
    # every input is audited when the spec has few: a sampler wrong only on input 2 is flagged
    good = make_randomized_response([0, 1, 2], 0.5)
    bad_at_2 = make_randomized_response([0, 1, 2], 0.75)
    exact = {freeze(x): output_distribution(good, x) for x in (0, 1, 2, 3)}

    def fn(x):
        return bad_at_2(x) if x == 2 else good(x)

    with use_source(SeededSource("one-category")):
        f = distribution_audit(fn, exact, audited_inputs([0, 1, 2, 3]), 4_000, BETA)
    assert not f.ok and f.witness["x"] == "2"


def test_a_flag_the_fresh_confirmation_pass_does_not_repeat_is_cleared_and_said():
    # a correct sampler flagged by chance must not fail the gate: a flagged first pass (forced here: the first
    # 4,000 calls keep the truth with probability 0.9) is re-drawn on a fresh, larger pass before the clause fails
    good = make_randomized_response([0, 1, 2], 0.5)
    truthful = make_randomized_response([0, 1, 2], 0.9)
    exact = {freeze(x): output_distribution(good, x) for x in (0, 1, 2)}
    calls = {"n": 0}

    def fn(x):
        calls["n"] += 1
        return (truthful if calls["n"] <= 4_000 else good)(x)

    with use_source(SeededSource("confirm/cleared")):
        f = distribution_audit(fn, exact, [0, 1, 2], 4_000, BETA)
    assert f.ok, f.message
    assert f.witness["confirmation_samples"] == 16_000 and f.witness["unconfirmed"]["x"] == "0"
    assert "did not confirm it" in f.message and "β²" in f.message
    calls["n"] = 0
    with use_source(SeededSource("confirm/off")):
        unconfirmed = distribution_audit(fn, exact, [0, 1, 2], 4_000, BETA, confirm=0)
    assert not unconfirmed.ok and "confirmation_samples" not in unconfirmed.witness


def test_a_real_deviation_is_confirmed_and_the_failure_shows_the_larger_pass():
    good = make_randomized_response([0, 1, 2], 0.5)
    bad = make_randomized_response([0, 1, 2], 0.75)
    exact = {freeze(x): output_distribution(good, x) for x in (0, 1, 2)}
    with use_source(SeededSource("confirm/real")):
        f = distribution_audit(bad, exact, [0, 1, 2], 2_000, BETA)
    assert not f.ok and f.witness["out_of"] == 8_000 and f.witness["samples"] == 2_000
    assert "/8000, outside" in f.message and "confirmed by a fresh pass of 8000" in f.message
    with pytest.raises(ValueError, match="confirm"):
        distribution_audit(bad, exact, [0], 10, BETA, confirm=-1)


# ------------------------------------------------------------------ the foreign variants under the audit

RR_PARAMS = [{"categories": [0, 1], "prob": 0.5},
             {"categories": [0, 1, 2], "prob": at_least(Fraction(1, 3))},
             {"categories": list(range(8)), "prob": 0.9}]
BV_PARAMS = [{"k": 2, "m": 1, "f": 0.5, "constant_time": False},
             {"k": 3, "m": 3, "f": 1.0, "constant_time": False}]


@pytest.fixture
def seeded(monkeypatch):
    """Make the NumPy and ``random`` variants reproducible (their generators seeded, in this test only)."""
    monkeypatch.setattr(fv, "numpy_generator", lambda: np.random.default_rng(20240601))
    monkeypatch.setattr(fv, "python_random", lambda: random.Random(20240601))


def audit(spec_name, ctor, params, samples=PROPOSED_SAMPLES, beta=BETA):
    spec = find_spec(spec_name)
    m = spec.build(ctor, params)
    cfg = RunConfig(audit_samples=samples)
    return opaque_findings(spec, m, params, spec.inputs(params), cfg, beta=beta)


def _id(p):
    return ",".join(f"{k}={v if k != 'categories' else len(v)}" for k, v in p.items() if k != "constant_time")


@pytest.mark.parametrize("params", RR_PARAMS, ids=_id)
@pytest.mark.parametrize("variant", ["rr_numpy", "rr_random"])
def test_correct_foreign_rr_passes(seeded, variant, params):
    out = audit("randomized_response", getattr(fv, variant), params)
    assert out["audit.distribution"].ok, out["audit.distribution"].message
    assert out["privacy.sound"].ok and out["privacy.tight"].ok
    assert out["audit.distribution"].witness["detectable_deviation"] < 0.03


@pytest.mark.parametrize("params", RR_PARAMS, ids=_id)
@pytest.mark.parametrize("variant", ["rr_numpy_keep_low", "rr_random_keep_low"])
def test_foreign_rr_keeping_003_too_little_fails(seeded, variant, params):
    out = audit("randomized_response", getattr(fv, variant), params)
    f = out["audit.distribution"]
    assert not f.ok and f.witness["detectable_deviation"] < 0.03
    assert out["privacy.sound"].ok  # the map is ours: only the samples show the defect


def test_secrets_rr_passes_unseeded():
    # not seedable: a false alarm has probability <= β = 1e-6
    out = audit("randomized_response", fv.rr_secrets, RR_PARAMS[1], beta=1e-6)
    assert out["audit.distribution"].ok, out["audit.distribution"].message


@pytest.mark.parametrize("params", BV_PARAMS, ids=_id)
def test_foreign_rappor_right_passes_and_003_low_fails(seeded, params):
    assert audit("randomized_response_bitvec", fv.bitvec_numpy, params)["audit.distribution"].ok
    assert audit("randomized_response_bitvec", fv.bitvec_random, params)["audit.distribution"].ok
    low = audit("randomized_response_bitvec", fv.bitvec_numpy_keep_low, params)["audit.distribution"]
    assert not low.ok


def test_default_audit_samples_see_a_003_deviation():
    # RR t=8 (the most cells), per-run β=1e-4 over 30 parameter sets: the default must see 0.03
    spec = find_spec("randomized_response")
    params = RR_PARAMS[2]
    inputs = audited_inputs(spec.inputs(params))
    exact = {freeze(x): spec.law(params, x) for x in inputs}
    samples = RunConfig().audit_samples
    cells = sum(len(exact[freeze(x)]) + 1 for x in inputs)
    worst = max(detectable_deviation(p, samples, BETA / (2 * cells)) for d in exact.values() for p in d.values())
    assert worst < 0.03, f"audit_samples={samples} sees only {worst:.3f}; propose {PROPOSED_SAMPLES}"


# ------------------------------------------------------------------ the command a user runs, 100 times
#
# Each rerun is the whole default command ``vetdp verify SPEC --impl FILE:ATTR`` (every parameter set
# the default search draws, the default audit sample size), run in-process through CliRunner (no
# interpreter start-up per rerun). Nothing in these tests seeds the variants: NumPy variants build
# an OS-seeded Generator per construction, the ``random`` ones draw from the module-level generator,
# reseeded from the OS before the reruns (as a fresh process would be).

RERUNS = 100
CORRECT_FOREIGN = [("randomized_response", "rr_numpy"), ("randomized_response", "rr_random"),
                   ("randomized_response_bitvec", "bitvec_numpy"), ("randomized_response_bitvec", "bitvec_random")]
KEEP_LOW_FOREIGN = [("randomized_response", "rr_numpy_keep_low"), ("randomized_response", "rr_random_keep_low"),
                    ("randomized_response_bitvec", "bitvec_numpy_keep_low"),
                    ("randomized_response_bitvec", "bitvec_random_keep_low")]


def _verify(spec, impl, *extra):
    return CliRunner().invoke(main, ["verify", spec, "--impl", f"tests/mutants/foreign_variants.py:{impl}", *extra],
                              catch_exceptions=False)


@pytest.fixture
def os_seeded_random():
    """Python's module-level generator reseeded from the OS (an earlier test may have seeded it)."""
    random.seed()


@pytest.mark.deep
@pytest.mark.parametrize("spec,impl", CORRECT_FOREIGN, ids=[impl for _, impl in CORRECT_FOREIGN])
def test_verify_accepts_correct_foreign_variant_100_times_in_a_row(os_seeded_random, tmp_path, spec, impl):
    # their laws are right, their generators are not cryptographic (NumPy's PCG64, Python's Mersenne Twister): every
    # rerun fails randomness.cryptographic and nothing else, so the audit never raises a false alarm
    out = tmp_path / "r.json"
    for done in range(RERUNS):
        start = time.monotonic()
        result = _verify(spec, impl, "--json", str(out))
        failing = sorted(r["check"] for r in json.loads(out.read_text())["results"]
                         if r["status"] in ("fail", "undecided", "error", "stopped"))
        print(f"{impl}: rerun {done + 1} exit {result.exit_code} in {time.monotonic() - start:.1f} s", flush=True)
        if result.exit_code != 1 or failing != ["randomness.cryptographic"]:
            pytest.fail(f"{impl}: rerun {done + 1} exited {result.exit_code} with {failing} after {done} passes\n"
                        f"{result.output[-4000:]}")


@pytest.mark.deep
@pytest.mark.parametrize("spec,impl", KEEP_LOW_FOREIGN, ids=[impl for _, impl in KEEP_LOW_FOREIGN])
def test_verify_rejects_foreign_variant_keeping_003_too_little(os_seeded_random, tmp_path, spec, impl):
    out = tmp_path / "r.json"
    result = _verify(spec, impl, "--json", str(out))
    assert result.exit_code == 1, result.output[-4000:]
    failing = {r["check"]: r for r in json.loads(out.read_text())["results"] if r["status"] == "fail"}
    assert set(failing) == {"audit.distribution", "randomness.cryptographic"}, sorted(failing)
    assert failing["audit.distribution"]["witness"]["detectable_deviation"] < 0.03


def test_opaque_privacy_pass_says_it_judged_the_map_against_the_law_not_the_code(seeded):
    # a lie of probability 2**-53 never told is beyond any sample size: the pass must say what it rests on
    out = audit("randomized_response", fv.rr_random, RR_PARAMS[1])
    assert out["privacy.sound"].ok and "its own loss is not observable" in out["privacy.sound"].message


def test_slow_foreign_code_keeps_its_map_decided_when_its_audit_is_stopped_by_the_time_limit():
    # the audit (10,000 calls per input of a 5 ms sampler: over 50 s of sleep per input, whatever the machine)
    # always runs past a 10 s time limit; the map's clauses (milliseconds) were decided first, as clauses of their
    # own, and must keep their verdict
    def slow_rr(categories, prob):
        m = fv.rr_random(categories, prob)
        inner = m.function

        def function(x):
            time.sleep(0.005)
            return inner(x)

        return dataclasses.replace(m, function=function)

    cfg = RunConfig(fallback_opaque=True, reference_law=True, strict_messages=False, time_limit=10.0,
                    max_examples=0)
    params = {"categories": [0, 1, 2], "prob": 0.5}
    by_clause = {r.check: r for r in check_measurement_spec(find_spec("randomized_response"), ctor=slow_rr, cfg=cfg,
                                                            only_params=params)}
    audit_result = by_clause["audit.distribution"]
    assert audit_result.status is Status.STOPPED, audit_result.message
    assert audit_result.message.startswith("stopped: time") and "--samples" in audit_result.message
    assert "--time-limit" in audit_result.message
    assert by_clause["search.coverage"].status is Status.STOPPED  # the run exits 2: no verdict
    for clause in ("privacy.sound", "privacy.tight", "privacy.distance"):
        assert by_clause[clause].status is Status.PASS, (clause, by_clause[clause].message)
