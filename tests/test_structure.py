"""Product structure established from the code's own run (vetdp.engine.structure).

The structured law and worst pair are checked against brute-force enumeration on every
parameter set both can run (k <= 8 here), and code without the structure is refused.
"""

from __future__ import annotations

import itertools
import random
from fractions import Fraction

import pytest

from vetdp.core.measurement import BitVectorDomain, bitvector_domain, discrete_distance
from vetdp.engine.divergence import Verdict, compare_claim, ln_ratio_bracket
from vetdp.engine.enumerate import enumerate_law
from vetdp.engine.structure import NotStructured, discover_product_structure, worst_pair
from vetdp.impl.randomized_response_bitvec import flip_probability, make_randomized_response_bitvec
from vetdp.sampling.primitives import random_bytes, sample_bernoulli_float, sample_uniform_int_below

TINY = 5e-324


def _domain_inputs(k: int, m: int) -> list[tuple[bool, ...]]:
    return [x for x in itertools.product((False, True), repeat=k) if sum(x) <= m]


def _brute_worst_ratio(fn, k: int, m: int) -> Fraction | None:
    laws = {x: enumerate_law(fn, x).dist for x in _domain_inputs(k, m)}
    best = Fraction(0)
    for x, x2 in itertools.product(laws, repeat=2):
        for y, p in laws[x].items():
            q = laws[x2].get(y, Fraction(0))
            if q == 0:
                return None
            best = max(best, p / q)
    return best


def _heterogeneous(k: int, flips: list[float]):
    """Coordinate i flips with its own probability: the worst pair must pick the best coordinates."""
    def function(bits):
        return tuple(b ^ sample_bernoulli_float(flips[i]) for i, b in enumerate(bits))
    return function


@pytest.mark.parametrize("k,m,f", [(1, 1, 0.5), (3, 1, 0.3), (4, 2, 0.01), (5, 2, 1.0), (6, 3, 0.75),
                                   (6, 6, 0.5), (4, 1, TINY), (8, 2, 0.1)])
def test_structured_law_and_worst_pair_equal_brute_force(k, m, f):
    meas = make_randomized_response_bitvec(bitvector_domain(max_weight=m, length=k), discrete_distance(), f)
    structure = discover_product_structure(meas.function, k)
    for x in _domain_inputs(k, m):
        law = enumerate_law(meas.function, x).dist
        assert sum(law.values()) == 1
        assert {y: structure.law_of(x, y) for y in law} == law
    worst = worst_pair(structure, meas.input_domain)
    assert worst.ratio == _brute_worst_ratio(meas.function, k, m)
    q = Fraction(flip_probability(f))
    if q not in (0, 1) and q != Fraction(1, 2):
        assert sum(a != b for a, b in zip(worst.x, worst.x_prime, strict=True)) == min(2 * m, k)
        assert worst.ratio == ((1 - q) / q) ** min(2 * m, k)
    # the witness is real: its ratio is the structure's law ratio at y
    if worst.ratio is not None:
        assert structure.law_of(worst.x, worst.y) / structure.law_of(worst.x_prime, worst.y) == worst.ratio


@pytest.mark.parametrize("seed", range(6))
def test_worst_pair_picks_the_leakiest_coordinates_as_brute_force_does(seed):
    rng = random.Random(seed)
    k, m = 6, rng.choice([1, 2, 3])
    flips = [rng.choice([0.5, 0.25, 0.1, 0.3, 0.45, 0.02]) for _ in range(k)]
    fn = _heterogeneous(k, flips)
    worst = worst_pair(discover_product_structure(fn, k), BitVectorDomain(max_weight=m, length=k))
    assert worst.ratio == _brute_worst_ratio(fn, k, m)


@pytest.mark.parametrize("k,m,f", [(128, 8, 0.5), (128, 8, 0.01), (128, 8, TINY), (128, 64, 0.9)])
def test_k128_decided_exactly_against_the_map(k, m, f):
    meas = make_randomized_response_bitvec(bitvector_domain(max_weight=m, length=k), discrete_distance(), f)
    structure = discover_product_structure(meas.function, k)
    worst = worst_pair(structure, meas.input_domain)
    q = Fraction(flip_probability(f))
    assert worst.ratio == ((1 - q) / q) ** min(2 * m, k)
    assert compare_claim(meas.map(1), ln_ratio_bracket(worst.ratio)).verdict is Verdict.SOUND
    # a map one coordinate short is decided unsound
    short = (min(2 * m, k) - 1) / min(2 * m, k) * meas.map(1)
    assert compare_claim(short, ln_ratio_bracket(worst.ratio)).verdict is Verdict.UNSOUND


def test_k128_one_coordinate_flipping_less_raises_the_loss_above_the_map():
    k, m, f = 128, 8, 0.5
    meas = make_randomized_response_bitvec(bitvector_domain(max_weight=m, length=k), discrete_distance(), f)
    q = flip_probability(f)

    def leaky(bits):
        return tuple(b ^ sample_bernoulli_float(q / 2 if i == 77 else q) for i, b in enumerate(bits))

    worst = worst_pair(discover_product_structure(leaky, k), meas.input_domain)
    assert worst.x[77] != worst.x_prime[77]
    assert compare_claim(meas.map(1), ln_ratio_bracket(worst.ratio)).verdict is Verdict.UNSOUND


# ------------------------------------------------------------------ code without the structure is refused

def _shared_draw(bits):
    d = sample_bernoulli_float(0.25)
    return tuple(b ^ d for b in bits)


def _neighbour_bit(bits):
    return tuple(bits[(i + 1) % len(bits)] ^ sample_bernoulli_float(0.25) for i in range(len(bits)))


def _branches_on_draw(bits):
    out = []
    for b in bits:
        if sample_bernoulli_float(0.25):
            out.append(not b)
        else:
            out.append(b)
    return tuple(out)


def _type_test(bits):
    # behaves differently on a symbolic bit than on a real one: the replays must catch it
    return tuple((b if isinstance(b, bool) else False) ^ sample_bernoulli_float(0.25) for b in bits)


def _foreign(bits):
    return tuple(b ^ (random.random() < 0.25) for b in bits)


def _raw_bytes(bits):
    return tuple(b ^ (random_bytes(1)[0] < 64) for b in bits)


def _joint(bits):
    u = [sample_uniform_int_below(2**13) for _ in bits]
    return tuple(b ^ (u[i] + u[(i + 1) % len(bits)] > 2**13) for i, b in enumerate(bits))


@pytest.mark.parametrize("fn,why", [
    (_shared_draw, "read the same draw"),
    (_neighbour_bit, "not only its own"),
    (_branches_on_draw, "control flow"),
    (_type_test, "differs from the symbolic prediction"),
    (_foreign, "foreign randomness"),
    (_raw_bytes, "raw random bytes"),
    (_joint, "jointly"),
])
def test_code_without_product_structure_is_refused(fn, why):
    with pytest.raises(NotStructured, match=why):
        discover_product_structure(fn, 6)


def test_wrong_output_length_is_refused():
    with pytest.raises(NotStructured, match="coordinates"):
        discover_product_structure(lambda bits: tuple(bits)[:-1], 4)


# ------------------------------------------------------------------ through verify and check

def _verify(impl: str, params: dict | None = None):
    import json

    from click.testing import CliRunner

    from vetdp.cli import main

    argv = ["verify", "randomized_response_bitvec", "--impl", impl]
    if params is not None:
        argv += ["--params", json.dumps(params)]
    return CliRunner().invoke(main, argv, catch_exceptions=False)


K128 = {"k": 128, "m": 8, "f": 0.5, "constant_time": False}
OURS = "vetdp.impl.randomized_response_bitvec:make_randomized_response_bitvec"


def test_verify_at_128_bits_decides_our_mechanism_from_its_structure():
    res = _verify(OURS, K128)
    assert res.exit_code == 0, res.output
    assert "product" in res.output.replace("\n", " ") or "symbolic" in res.output


def test_verify_at_128_bits_catches_a_leak_that_small_lengths_cannot_see():
    res = _verify("tests.mutants.structured_bitvec:leaks_beyond_bit_100", K128)
    assert res.exit_code == 1 and "privacy.sound" in res.output and "fail" in res.output
    small = _verify("tests.mutants.structured_bitvec:leaks_beyond_bit_100", {**K128, "k": 8})
    assert small.exit_code == 0, small.output


def test_verify_of_code_without_structure_at_128_bits_asked_for_is_undecided_never_a_pass():
    res = _verify("tests.mutants.structured_bitvec:flips_by_branching", K128)
    assert res.exit_code == 1 and "undecided" in res.output


def test_spec_scale_examples_skip_code_without_structure_with_the_reason_and_catch_the_leak():
    from tests.mutants import structured_bitvec as sb
    from vetdp.engine.runner import RunConfig, evaluate_params
    from vetdp.engine.spec import find_spec

    spec = find_spec("randomized_response_bitvec")
    assert K128 in list(spec.scale_examples)
    ctor = sb.flips_by_branching
    out = evaluate_params(spec, ctor, K128, RunConfig(), scale=True)
    assert out["privacy.sound"].ok and out["privacy.sound"].skipped and "control flow" in out["privacy.sound"].message
    leak = evaluate_params(spec, sb.leaks_beyond_bit_100, K128, RunConfig(), scale=True)
    assert not leak.get("privacy.sound").ok and not leak["privacy.sound"].undecided
