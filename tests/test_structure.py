"""Product structure established from the code's own run (vetdp.engine.structure).

The structured law, worst pair, Rényi moments and privacy-loss distributions are checked against
brute-force enumeration of the real code over every input of the domain: by default a few cases up
to k = 12 (and one k = 16 law); with --deep every (k, m) whose brute force takes at most 300,000
paths (53 shapes, k <= 14; Rényi and δ where every ordered pair at every output is at most 10^6 terms)
and k = 16 with m = 1 (17 inputs x 65,536 paths). Code without the structure is refused.
"""

from __future__ import annotations

import itertools
import random
from fractions import Fraction

import pytest

from tests.mutants import rappor_mutants
from vetdp.core.measurement import BitVectorDomain, bitvector_domain, discrete_distance
from vetdp.engine.divergence import Verdict, compare_claim, ln_ratio_bracket
from vetdp.engine.enumerate import enumerate_law
from vetdp.engine.structure import (
    ExactWorkExceeded,
    NotStructured,
    convolve,
    decide_renyi,
    delta_at_ratio,
    discover_product_structure,
    exact_work,
    forked_coordinate_laws,
    pair_classes,
    pld_power,
    privacy_loss_distribution,
    probe_vectors,
    renyi_moment_bracket,
    renyi_worst,
    worst_delta,
    worst_pair,
)
from vetdp.impl.randomized_response_bitvec import flip_probability, make_randomized_response_bitvec
from vetdp.impl.rappor import make_rappor_report
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


K129 = {"k": 129, "m": 65, "f": 0.5, "constant_time": False}  # a third word; a weight above 64


@pytest.mark.parametrize("variant", ["hamming_bound_capped_at_64", "quarter_flips_from_bit_128"])
def test_a_defect_only_past_128_bits_with_a_weight_above_64_fails_the_spec_scale_example(variant):
    from tests.mutants import structured_bitvec as sb
    from vetdp.engine.clauses import privacy_findings
    from vetdp.engine.spec import find_spec

    spec = find_spec("randomized_response_bitvec")
    assert K129 in list(spec.scale_examples)  # the run's pinned sets; its clauses from the structure, as here

    def sound(p):
        m = spec.build(getattr(sb, variant), p)
        structure = discover_product_structure(m.function, p["k"])
        return privacy_findings(spec, m, {}, p, worst=worst_pair(structure, m.input_domain))["privacy.sound"]

    assert not sound(K129).ok and not sound(K129).undecided
    assert sound({**K128, "m": 65}).ok  # correct at 128 bits, whatever the weight
    if variant == "hamming_bound_capped_at_64":
        assert sound({**K129, "m": 64}).ok


@pytest.mark.slow  # two default searches, about 8 s of CPU each
@pytest.mark.parametrize("variant", ["hamming_bound_capped_at_64", "quarter_flips_from_bit_128"])
def test_verify_by_default_fails_a_defect_only_past_128_bits(variant):
    res = _verify(f"tests.mutants.structured_bitvec:{variant}")
    assert res.exit_code == 1 and "privacy.sound" in res.output, res.output


# ------------------------------------------------------------------ against brute force up to k = 16

def _brute_laws(fn, k: int, m: int) -> dict[tuple[bool, ...], dict]:
    """The law of every input of the domain, enumerated path by path (2^k paths each)."""
    laws = {}
    for x in _domain_inputs(k, m):
        law = enumerate_law(fn, x, budget=2**k + 1)
        assert law.complete and sum(law.dist.values()) == 1
        laws[x] = law.dist
    return laws


def _brute_worst_ratio_of(laws: dict) -> Fraction | None:
    """max over ordered pairs of distinct inputs and outputs of P/Q (per output: largest over smallest)."""
    best = Fraction(0)
    outputs = set().union(*(d.keys() for d in laws.values()))
    for y in outputs:
        probs = [d.get(y, Fraction(0)) for d in laws.values()]
        if min(probs) == 0:
            return None
        best = max(best, max(probs) / min(probs))
    return best


def _brute_moment(laws: dict, alpha: int) -> Fraction | None:
    """max over ordered pairs of distinct inputs of Σ_y P^α Q^(1−α) (integer α), None for +inf."""
    best = Fraction(1)
    for x, x2 in itertools.permutations(laws, 2):
        total = Fraction(0)
        for y, p in laws[x].items():
            q = laws[x2].get(y, Fraction(0))
            if q == 0:
                return None
            total += p**alpha / q ** (alpha - 1)
        best = max(best, total)
    return best


def _brute_pld(p: dict, q: dict) -> dict:
    out: dict = {}
    for y, py in p.items():
        key = None if q.get(y, 0) == 0 else py / q[y]
        out[key] = out.get(key, Fraction(0)) + py
    return out


def _check_against_brute_force(fn, k: int, m: int, divergences: bool = True) -> None:
    """Structured law, worst ratio and (with ``divergences``) worst Rényi moments at α = 2, 3 and worst δ at
    e^ε = 3/2 and 5 all equal brute force over every input of the domain, exactly."""
    structure = discover_product_structure(fn, k)
    domain = BitVectorDomain(max_weight=m, length=k)
    laws = _brute_laws(fn, k, m)
    for x, law in laws.items():
        assert {y: structure.law_of(x, y) for y in law} == law
    assert worst_pair(structure, domain).ratio == _brute_worst_ratio_of(laws)
    if not divergences or len(laws) < 2:
        return
    for alpha in (2, 3):
        worst = renyi_worst(structure, domain, alpha)
        assert worst.exact and worst.lower == _brute_moment(laws, alpha)
    classes = pair_classes(structure, domain)
    for threshold in (Fraction(3, 2), Fraction(5)):
        brute = max(delta_at_ratio(_brute_pld(laws[x], laws[x2]), threshold)
                    for x, x2 in itertools.permutations(laws, 2))
        assert max(delta_at_ratio(privacy_loss_distribution(structure, x, x2), threshold)
                   for x, x2 in classes) == brute


def _bitvec(k: int, m: int, f: float):
    return make_randomized_response_bitvec(bitvector_domain(max_weight=m, length=k), discrete_distance(), f).function


@pytest.mark.parametrize("k,m,f", [(5, 2, 0.1), (6, 2, 0.75), (3, 3, TINY)])
def test_structure_equals_brute_force_on_every_input_default_sizes(k, m, f):
    _check_against_brute_force(_bitvec(k, m, f), k, m)


@pytest.mark.parametrize("k,m,f,deep", [(12, 2, 0.3, False), pytest.param(16, 1, 0.25, True, marks=pytest.mark.deep)])
def test_structure_equals_brute_force_on_the_witness_pair(k, m, f, deep):
    """k = 12 by default, k = 16 with --deep (65,536 paths per input): the structured laws of the worst pair equal
    the enumerated laws at every output, and the enumerated ratio at the witness output is the decided worst."""
    fn = _bitvec(k, m, f)
    structure = discover_product_structure(fn, k)
    worst = worst_pair(structure, BitVectorDomain(max_weight=m, length=k))
    laws = {x: enumerate_law(fn, x, budget=2**k + 1).dist for x in (worst.x, worst.x_prime)}
    for x, law in laws.items():
        assert len(law) == 2**k and {y: structure.law_of(x, y) for y in law} == law
    assert laws[worst.x][worst.y] / laws[worst.x_prime][worst.y] == worst.ratio == _brute_worst_ratio_of(laws)
    q = Fraction(flip_probability(f))
    assert worst.ratio == ((1 - q) / q) ** min(2 * m, k)


def _deep_shapes() -> list[tuple[int, int]]:
    """Every (k, m), k <= 16, whose brute force over the whole domain takes at most 300,000 paths."""
    from math import comb

    shapes = [(k, m) for k in range(1, 17) for m in range(1, k + 1)
              if sum(comb(k, w) for w in range(m + 1)) * 2**k <= 300_000]
    return shapes + [(16, 1)]


@pytest.mark.deep
@pytest.mark.parametrize("k,m", _deep_shapes())
def test_structure_equals_brute_force_on_every_shape_deep(k, m):
    from math import comb

    f = [0.5, 0.1, 0.875, TINY][(k + m) % 4]
    n = sum(comb(k, w) for w in range(m + 1))
    # the brute-force Rényi and δ compare every ordered pair at every output: kept to 10^6 (pair, output) terms
    _check_against_brute_force(_bitvec(k, m, f), k, m, divergences=n * (n - 1) * 2**k <= 10**6 and f != TINY)


@pytest.mark.deep
@pytest.mark.parametrize("seed", range(8))
def test_heterogeneous_coordinates_equal_brute_force_deep(seed):
    rng = random.Random(100 + seed)
    k, m = rng.choice([7, 8, 9]), rng.choice([1, 2])
    flips = [rng.choice([0.5, 0.25, 0.1, 0.3, 0.45, 0.02]) for _ in range(k)]
    _check_against_brute_force(_heterogeneous(k, flips), k, m, divergences=m == 1)


# ------------------------------------------------------------------ Rényi and privacy-loss curves from the structure

@pytest.mark.parametrize("seed", range(4))
def test_renyi_and_delta_of_heterogeneous_coordinates_equal_brute_force(seed):
    rng = random.Random(seed)
    k, m = 5, rng.choice([1, 2])
    flips = [rng.choice([0.5, 0.25, 0.1, 0.3, 0.45, 0.02]) for _ in range(k)]
    _check_against_brute_force(_heterogeneous(k, flips), k, m)


def test_renyi_of_non_integer_order_encloses_brute_force():
    k, m, f = 5, 2, 0.3
    fn = _bitvec(k, m, f)
    structure = discover_product_structure(fn, k)
    laws = _brute_laws(fn, k, m)
    alpha = Fraction(3, 2)
    worst = renyi_worst(structure, BitVectorDomain(max_weight=m, length=k), alpha, prec=200)
    assert not worst.exact and worst.lower < worst.upper < worst.lower * (1 + Fraction(1, 2**150))
    brute = [renyi_moment_bracket(laws[x], laws[x2], alpha, 200) for x, x2 in itertools.permutations(laws, 2)]
    assert max(lo for lo, _ in brute) <= worst.upper and worst.lower <= max(hi for _, hi in brute)


@pytest.mark.parametrize("atoms", [
    {Fraction(3): Fraction(3, 4), Fraction(1, 3): Fraction(1, 4)},  # randomized response's two losses
    {Fraction(2): Fraction(1, 2), Fraction(1): Fraction(1, 4), None: Fraction(1, 4)},  # an infinite loss
    {Fraction(5, 2): Fraction(5, 8)},  # one atom (not a law: the power is still the product)
    {Fraction(2): Fraction(1, 8), Fraction(1, 2): Fraction(1, 8), Fraction(4): Fraction(3, 8),
     Fraction(1, 4): Fraction(3, 8)},  # losses that coincide across splits (2·1/2 = 4·1/4)
])
@pytest.mark.parametrize("n", [0, 1, 2, 5, 13])
def test_pld_power_equals_convolving_the_coordinate_n_times(atoms, n):
    expected = {Fraction(1): Fraction(1)}
    for _ in range(n):
        expected = convolve(expected, atoms)
    assert pld_power(atoms, n) == expected


def test_pld_power_refuses_more_splits_than_its_atom_bound_and_a_negative_count():
    atoms = {Fraction(2): Fraction(1, 4), Fraction(3): Fraction(1, 4), Fraction(5): Fraction(1, 2)}
    with pytest.raises(NotStructured, match="more than 10 atoms"):
        pld_power(atoms, 4, max_atoms=10)  # C(6, 2) = 15 splits
    assert len(pld_power(atoms, 3, max_atoms=10)) == 10
    with pytest.raises(ValueError, match="n=-1"):
        pld_power(atoms, -1)


def test_pld_of_the_worst_pair_at_128_bits_equals_the_binomial_formula():
    from math import comb

    k, m, f = 128, 8, 0.5
    meas = make_randomized_response_bitvec(bitvector_domain(max_weight=m, length=k), discrete_distance(), f)
    structure = discover_product_structure(meas.function, k)
    classes = pair_classes(structure, meas.input_domain)
    assert len(classes) == 1  # one group of identical coordinates, n >= 2m: both weights at the cap
    x, x2 = classes[0]
    assert sum(x) == sum(x2) == m and not any(a and b for a, b in zip(x, x2, strict=True))
    q = Fraction(flip_probability(f))
    r = (1 - q) / q
    d = 2 * m
    # j of the d differing coordinates flipped: ratio r^(d − 2j) with probability C(d, j) q^j (1−q)^(d−j)
    expected = {}
    for j in range(d + 1):
        expected[r ** (d - 2 * j)] = expected.get(r ** (d - 2 * j), 0) + comb(d, j) * q**j * (1 - q) ** (d - j)
    assert privacy_loss_distribution(structure, x, x2) == expected
    enclose = worst_delta(structure, meas.input_domain, 1.0)
    lo, hi = enclose(128)
    assert lo <= hi and hi - lo < Fraction(1, 2**100)
    # a claimed δ just below the truth is unsound, just above sound
    assert compare_claim(float(hi) * (1 + 2**-40), enclose).verdict is Verdict.SOUND
    assert compare_claim(float(lo) * (1 - 2**-40), enclose).verdict is Verdict.UNSOUND


@pytest.mark.parametrize("alpha", [2, 10, 1.5, 33.25])
def test_rdp_curve_of_the_map_decided_at_128_bits_and_equal_to_the_closed_form(alpha):
    from vetdp.accounting.curves import bit_flip_curve
    from vetdp.accounting.measures import make_renyi

    k, m, f = 128, 8, 0.5
    meas = make_randomized_response_bitvec(bitvector_domain(max_weight=m, length=k), discrete_distance(), f)
    structure = discover_product_structure(meas.function, k)
    curve = make_renyi(meas).map(1)
    assert decide_renyi(structure, meas.input_domain, alpha, curve(alpha)).verdict is Verdict.SOUND
    assert decide_renyi(structure, meas.input_domain, alpha, curve(alpha) * (1 - 2**-30)).verdict is Verdict.UNSOUND
    lo, hi = renyi_worst(structure, meas.input_domain, alpha).truth()(200)
    c_lo, c_hi = bit_flip_curve(flip_probability(f), 2 * m).rdp_bounds(alpha)
    assert Fraction(c_lo) <= hi and lo <= Fraction(c_hi)


def test_rdp_claim_of_the_uniform_curve_is_unsound_for_a_coordinate_that_flips_less():
    from vetdp.accounting.measures import make_renyi

    k, m, f = 128, 8, 0.5
    meas = make_randomized_response_bitvec(bitvector_domain(max_weight=m, length=k), discrete_distance(), f)
    q = flip_probability(f)

    def leaky(bits):
        return tuple(b ^ sample_bernoulli_float(q / 2 if i == 77 else q) for i, b in enumerate(bits))

    structure = discover_product_structure(leaky, k)
    curve = make_renyi(meas).map(1)
    worst = renyi_worst(structure, meas.input_domain, 2)
    assert worst.x[77] != worst.x_prime[77]
    assert decide_renyi(structure, meas.input_domain, 2, curve(2)).verdict is Verdict.UNSOUND


def test_renyi_order_outside_range_raises():
    structure = discover_product_structure(_bitvec(3, 1, 0.5), 3)
    domain = BitVectorDomain(max_weight=1, length=3)
    for bad in (1, 0.5, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="alpha"):
            renyi_worst(structure, domain, bad)
    with pytest.raises(TypeError, match="alpha"):
        renyi_worst(structure, domain, "2")
    with pytest.raises(ValueError, match="epsilon"):
        worst_delta(structure, domain, -1.0)


def test_infinite_renyi_and_delta_for_a_coordinate_that_never_flips():
    def never(bits):
        return tuple(b ^ sample_bernoulli_float(0.0 if i == 0 else 0.25) for i, b in enumerate(bits))

    structure = discover_product_structure(never, 4)
    domain = BitVectorDomain(max_weight=1, length=4)
    worst = renyi_worst(structure, domain, 2)
    assert worst.lower is None and worst.truth() is None
    assert decide_renyi(structure, domain, 2, 1e300).verdict is Verdict.UNSOUND
    assert worst_delta(structure, domain, 50.0)(64)[0] > 0  # the impossible output's mass is δ at any ε


def _branching_on_bits(bits):
    # branches on each input bit (bool(b) on a symbolic bit is not representable) and draws two coins per bit
    out = []
    for b in bits:
        flip = sample_bernoulli_float(0.5) & sample_bernoulli_float(0.5)
        out.append(True ^ flip if bool(b) else flip)
    return tuple(out)


def test_code_branching_on_its_bits_has_its_structure_established_input_by_input():
    with pytest.raises(NotStructured, match="control flow"):
        discover_product_structure(_branching_on_bits, 4)
    for x in [(False, True, True, False), (True, True, True, True)]:
        structure = discover_product_structure(_branching_on_bits, 4, at=x)
        law = enumerate_law(_branching_on_bits, x)  # 4^4 paths for 2^4 outputs
        assert law.complete
        product = {y: structure.law_of(x, y) for y in itertools.product((False, True), repeat=4)}
        assert {y: p for y, p in product.items() if p} == law.dist


@pytest.mark.parametrize("eps", [0.0, 0.3, 1.1])
def test_worst_delta_of_laws_groups_equal_terms_without_changing_the_value(eps):
    from vetdp.engine.divergence import hockey_stick_delta
    from vetdp.engine.structure import worst_delta_of_laws

    m = make_randomized_response_bitvec(bitvector_domain(max_weight=2, length=3), discrete_distance(), 0.5)
    xs = [x for x in itertools.product((False, True), repeat=3) if sum(x) <= 2]
    dists = {x: enumerate_law(m, x).dist for x in xs}
    got = worst_delta_of_laws(dists, eps)(128)
    if eps == 0:  # e^0 = 1 exactly: the total variation distance, exact
        tv = max(sum(max(Fraction(0), p - dists[xp].get(y, Fraction(0))) for y, p in dists[x].items())
                 for x in xs for xp in xs if x != xp)
        assert got == (tv, tv)
        return
    each = [hockey_stick_delta(dists[x], dists[xp], eps)(128) for x in xs for xp in xs if x != xp]
    assert got == (max(lo for lo, _ in each), max(hi for _, hi in each))


def test_worst_delta_beyond_e_to_the_832_is_exact_not_clamped():
    """Issue 25: a subnormal f gives a per-bit loss of about 709, so map(1)/2 = 2127 exceeds the clamp of exp_bracket
    (832): δ at ε = 2127 is 0 exactly (no loss reaches it), and at ε = 1000 (below the loss 1418) it is the mass of
    the two-bit flips, enclosed; never the δ = 1 of a clamped e^ε."""
    from vetdp.engine.divergence import hockey_stick_delta
    from vetdp.engine.structure import worst_delta_of_laws

    f = 2.225073858507168e-308
    m = make_randomized_response_bitvec(bitvector_domain(max_weight=1, length=2), discrete_distance(), f)
    xs = [(False, False), (True, False), (False, True)]
    dists = {x: enumerate_law(m, x).dist for x in xs}
    assert worst_delta_of_laws(dists, 2127.2686971384724)(128) == (0, 0)
    assert hockey_stick_delta(dists[xs[1]], dists[xs[2]], 2127.2686971384724)(128) == (0, 0)
    lo, hi = worst_delta_of_laws(dists, 1000.0)(128)
    q = Fraction(flip_probability(f))
    assert 0 < lo <= hi and hi - lo < lo * Fraction(1, 2**100)
    # only y = x counts: δ = (1 − q)² − e^1000·q², and e^1000 < 2^1443
    assert (1 - q) ** 2 - 2**1443 * q**2 <= lo and hi <= (1 - q) ** 2


# ------------------------------------------------------------------ the exact arithmetic's work budget

# the red team's k_rappor at a subnormal flip probability (ε = 4.3e156): every probability a multiple of 2**-1074,
# so a product of k coordinates' laws holds rationals of about 1074·k bits
SUBNORMAL_K_RAPPOR = {"epsilon": 4.2770907296516885e+156, "k": 13, "m": 13, "constant_time": False}


def _subnormal_structure(k: int):
    from vetdp.impl.k_rappor import make_k_rappor

    meas = make_k_rappor(bitvector_domain(max_weight=k, length=k), discrete_distance(),
                         SUBNORMAL_K_RAPPOR["epsilon"])
    return discover_product_structure(meas.function, k), meas.input_domain


def test_exact_work_is_counted_in_word_operations_the_same_every_run_and_ends_past_its_budget():
    structure, domain = _subnormal_structure(13)
    x, x2 = pair_classes(structure, domain)[0]
    spent = []
    for _ in range(2):
        fresh, _ = _subnormal_structure(13)  # a structure keeps its PLDs: a second call on it costs nothing
        with exact_work(10**12) as used:
            pld = privacy_loss_distribution(fresh, x, x2)
        spent.append(used())
    assert spent[0] == spent[1] > 10**5  # a count of work, not of time
    with pytest.raises(ExactWorkExceeded, match="--exact-work"), exact_work(spent[0] - 1):
        privacy_loss_distribution(structure, x, x2)
    assert privacy_loss_distribution(structure, x, x2) == pld  # outside a block nothing is counted or refused
    with exact_work(1) as used:
        assert privacy_loss_distribution(structure, x, x2) == pld and used() == 0  # kept
    with pytest.raises(ExactWorkExceeded), exact_work(10**5):
        renyi_worst(structure, domain, 2)


def test_curve_clauses_at_subnormal_flips_end_undecided_at_their_work_budget_never_by_time():
    # red team: at k = 65 privacy.rdp, .pld and .dominated ran until the wall-clock limit stopped them (exit 2). At
    # k = 13 they need 2.4e8 to 8.2e8 word operations; 5e6 lets the worst pair be decided and ends the three
    from vetdp.engine.results import Status
    from vetdp.engine.runner import RunConfig, check_measurement_spec
    from vetdp.engine.spec import find_spec
    from vetdp.impl.k_rappor import make_k_rappor

    cfg = RunConfig(max_examples=1, max_regions=0, exact_work=5 * 10**6)
    results = {r.check: r for r in check_measurement_spec(find_spec("k_rappor"), ctor=make_k_rappor, cfg=cfg,
                                                          only_params=SUBNORMAL_K_RAPPOR)}
    for clause in ("privacy.rdp", "privacy.pld", "privacy.dominated"):
        assert results[clause].status is Status.UNDECIDED, (clause, results[clause].message)
        assert "5,000,000 word operations (--exact-work" in results[clause].message
    assert results["privacy.sound"].status is Status.PASS, results["privacy.sound"].message
    assert not any(r.status is Status.STOPPED for r in results.values())


def test_verify_reports_the_exact_work_budget_it_ran_out_of_with_exit_one():
    import json

    from click.testing import CliRunner

    from vetdp.cli import main

    argv = ["verify", "k_rappor", "--impl", "vetdp.impl:make_k_rappor", "--params", json.dumps(SUBNORMAL_K_RAPPOR),
            "--max-regions", "0", "--exact-work", "5000000"]
    res = CliRunner().invoke(main, argv, catch_exceptions=False)
    assert res.exit_code == 1, res.output
    assert "undecided" in res.output and "--exact-work" in res.output and "stopped" not in res.output


def _every_split_maximum(groups, cap):
    best = Fraction(0)
    ranges = [[(a, b) for a in range(len(m) + 1) for b in range(len(m) - a + 1)] for _, m in groups]
    for splits in itertools.product(*ranges):
        if sum(a for a, _ in splits) > cap or sum(b for _, b in splits) > cap:
            continue
        total = Fraction(1)
        for ((f10, f01), _), (a, b) in zip(groups, splits, strict=True):
            for f, e in ((f10, a), (f01, b)):
                if e and (total is None or f is None):
                    total = None
                elif e:
                    total *= f**e
        if best is not None and (total is None or total > best):
            best = total
    return best


def test_the_worst_split_by_corners_of_the_last_group_equals_every_split():
    from vetdp.engine.structure import _maximise

    rng = random.Random(2026)
    factors = [Fraction(0), Fraction(1, 3), Fraction(1), Fraction(2), Fraction(7, 2), None]
    for _ in range(300):
        sizes = [rng.randint(1, 4) for _ in range(rng.randint(1, 3))]
        groups, start = [], 0
        for n in sizes:
            groups.append(((rng.choice(factors), rng.choice(factors)), list(range(start, start + n))))
            start += n
        cap = rng.randint(0, start)
        value, splits = _maximise(groups, cap)
        assert value == _every_split_maximum(groups, cap), (groups, cap)
        assert sum(a for a, _ in splits) <= cap and sum(b for _, b in splits) <= cap


# ------------------------------------------------------------------ forked runs: code branching on its own draws

def _enumerated_marginals(fn, x) -> list[dict]:
    """Each output bit's law from the code's full enumeration (path by path), zero probabilities dropped."""
    law = enumerate_law(fn, x).dist
    out = []
    for i in range(len(x)):
        marginal = {b: sum((p for y, p in law.items() if bool(y[i]) == b), Fraction(0)) for b in (False, True)}
        out.append({b: p for b, p in marginal.items() if p})
    return out


def _forked(fn, x) -> list[dict]:
    return [{bool(y): p for y, p in c.laws[()].items() if p} for c in forked_coordinate_laws(fn, x)]


def _rappor_function(ctor, k, m=None, f=0.5, p=0.25, q=0.75):
    return ctor(bitvector_domain(max_weight=m or k, length=k), discrete_distance(), f, p, q).function


def _two_branches_per_bit(bits):
    # each output bit depends on two forks together (read fork by fork, not by codes)
    out = []
    for b in bits:
        first, second = bool(sample_bernoulli_float(0.5)), bool(sample_bernoulli_float(0.25))
        out.append(b ^ sample_bernoulli_float(0.125 if first and second else 0.375))
    return tuple(out)


@pytest.mark.parametrize("fn", [
    _rappor_function(make_rappor_report, 3, f=0.75, p=0.125, q=0.625),
    _rappor_function(rappor_mutants.prr_and_irr_interleaved, 3, f=0.75, p=0.125, q=0.625),
    _rappor_function(rappor_mutants.irr_swaps_p_and_q, 3, f=0.75, p=0.125, q=0.625),
    _rappor_function(rappor_mutants.prr_flips_with_f, 3, f=0.75, p=0.125, q=0.625),
    _two_branches_per_bit,
], ids=["rappor", "interleaved", "irr_swaps_p_and_q", "prr_flips_with_f", "two_branches_per_bit"])
def test_forked_laws_equal_the_marginals_of_the_full_enumeration_on_every_input(fn):
    with pytest.raises(NotStructured, match="control flow depends on"):
        discover_product_structure(fn, 3)  # one symbolic run cannot follow a branch on a draw
    for x in itertools.product((False, True), repeat=3):
        assert _forked(fn, x) == _enumerated_marginals(fn, x), x


def test_forked_laws_show_a_defect_past_the_eighth_bit_exactly():
    # the permanent response on bits 0-7 only: bit 8 reads the filter itself, 1 w.p. p = 1/4 for a 0 (p* = 3/8)
    laws = _forked(_rappor_function(rappor_mutants.prr_on_first_8_bits_only, 10, m=2), (False,) * 10)
    assert laws[:8] == [{True: Fraction(3, 8), False: Fraction(5, 8)}] * 8
    assert laws[8:] == [{True: Fraction(1, 4), False: Fraction(3, 4)}] * 2


def _coins_then_reports(bits):
    sides = [bool(b ^ sample_bernoulli_float(0.25)) for b in bits]
    return [sample_bernoulli_float(0.75 if s else 0.25) for s in sides], sides


def _hidden_joint_dependence(bits):
    out, sides = _coins_then_reports(bits)
    if sum(sides[1:6]) >= 2:  # no single branch changes output bit 0; two of five together do
        out[0] = out[0] ^ True
    return tuple(out)


def _branches_inside_branches(bits):
    out = []
    for b in bits:
        if sample_bernoulli_float(0.5):
            out.append(b ^ True if sample_bernoulli_float(0.5) else b)  # a second branch on one side only
        else:
            out.append(b)
    return tuple(out)


def _tests_its_types(bits):
    out, _ = _coins_then_reports(bits)
    return tuple(y if isinstance(y, bool) else y ^ True for y in out)  # another law than a real run's


def _draws_foreign_randomness(bits):
    import random

    out, _ = _coins_then_reports(bits)
    return tuple(y ^ (random.random() < 0.5) for y in out)


@pytest.mark.parametrize("fn,words", [
    (_hidden_joint_dependence, "combination of branches"),
    (_branches_inside_branches, "along one plan"),
    (_tests_its_types, "differs from the forked run's prediction"),
    (_draws_foreign_randomness, "foreign randomness"),
])
def test_forked_reading_refuses_code_it_cannot_read_rather_than_give_a_law(fn, words):
    with pytest.raises(NotStructured, match=words):
        forked_coordinate_laws(fn, (False,) * 6)


def test_forked_reading_is_bounded_by_a_count_of_runs():
    fn = _rappor_function(make_rappor_report, 8, m=2)
    with pytest.raises(NotStructured, match="more than 12 runs"):
        forked_coordinate_laws(fn, (False,) * 8, max_runs=12)
    # at most 1 + 8 single flips + 8 mixed plans (each bit's law depends on its own branch only)
    assert len(forked_coordinate_laws(fn, (False,) * 8, max_runs=17)) == 8


def test_forks_read_by_codes_and_one_by_one_give_the_same_laws(monkeypatch):
    from vetdp.engine import structure

    fn = _rappor_function(rappor_mutants.prr_on_first_8_bits_only, 11, m=3, f=0.75, p=0.125, q=0.625)
    x = (True, False, False, True, False, False, False, False, False, True, False)
    by_codes = _forked(fn, x)
    monkeypatch.setattr(structure, "_decoded", lambda *args: None)
    assert _forked(fn, x) == by_codes
    assert by_codes[0] != by_codes[9] and by_codes[1] != by_codes[10]  # bits 9, 10 without the permanent response


@pytest.mark.parametrize("k,m,expected", [
    (5, 2, ["00000", "11000", "00011"]),  # m < ⌈k/2⌉: zeros, heaviest prefix and suffix
    (5, 3, ["10101", "01010"]),  # ⌈k/2⌉ <= m < k: every bit read at both values by two inputs
    (4, 2, ["1010", "0101"]),
    (3, 3, ["000", "111"]),  # m = k: zeros and ones
    (1, 1, ["0", "1"]),
])
def test_probe_vectors_read_every_bit_at_both_values_when_the_weight_allows(k, m, expected):
    shown = ["".join("1" if b else "0" for b in x) for x in probe_vectors(BitVectorDomain(max_weight=m, length=k))]
    assert shown == expected
    if m >= (k + 1) // 2:
        assert all({x[i] for x in probe_vectors(BitVectorDomain(max_weight=m, length=k))} == {False, True}
                   for i in range(k))
