"""The bundled specs' reference laws, edge labels and widened strategies.

* Every measurement spec states its law; on pinned and drawn parameter sets it equals the exact
  enumerated distribution of our implementation on every input, and sums to exactly 1.
* Each law rejects realistic wrong implementations (labels shifted by one, bit order reversed,
  flip probability f instead of f/2, round-to-nearest f/2, a quarter of k-RAPPOR's budget, no
  shuffle, an inverted coin): their enumerated distributions differ from the law.
* edges() names the boundary classes of the pinned examples.
* The strategies reach where bugs live: t >= 1000 (--deep), shuffled categories, outsiders
  below/between/above, every residue of n mod 4 for f = n·2**-1074 (subnormal and lowest
  normal binade), inexact ε/(2m), NumPy containers inside and outside the domain.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, find, settings

from vetdp.engine.enumerate import freeze, output_distribution
from vetdp.engine.spec import MeasurementSpec, discover_specs, find_spec, tiny_float, tiny_numerator
from vetdp.impl.k_rappor import k_rappor_flip_probability
from vetdp.impl.randomized_response_bitvec import flip_probability
from vetdp.sampling.primitives import sample_bernoulli_float, sample_uniform_int_below
from vetdp.specs import buffling as buffling_spec
from vetdp.specs import randomized_response as rr_spec
from vetdp.specs import randomized_response_bitvec as bitvec_spec

MEASUREMENT_SPECS = [s for s in discover_specs() if isinstance(s, MeasurementSpec)]
NAMES = [s.name for s in MEASUREMENT_SPECS]
# find() without shrinking: the first generated example that satisfies the predicate
FIND = settings(database=None, deadline=None, max_examples=2000, derandomize=True, phases=[Phase.generate],
                suppress_health_check=list(HealthCheck))


def drawn(spec: MeasurementSpec, count: int, deep: bool = False) -> list[dict]:
    """The first ``count`` parameter sets the spec's strategy generates (seeded, reproducible)."""
    seen: list[dict] = []

    def collect(p: dict) -> bool:
        seen.append(p)
        return len(seen) >= count

    find(spec.params(deep), collect, settings=settings(FIND, max_examples=count))
    return seen


def law_of(spec: MeasurementSpec, p: dict, x) -> dict:
    return {freeze(y): q for y, q in spec.law(p, x).items()}


def short(p: dict) -> str:
    return ",".join(f"{k}={v if not isinstance(v, list) or len(v) < 5 else f'<{len(v)}>'}" for k, v in p.items())


# specs with public randomness state a law given the public draws instead (conditional_law: tests/test_hashing.py)
CASES = [(s.name, p) for s in MEASUREMENT_SPECS if s.law is not None for p in [*s.examples, *drawn(s, 4)]]


def test_every_bundled_measurement_spec_states_a_law_and_edges():
    assert set(NAMES) == {"randomized_response", "randomized_response_bool", "randomized_response_bitvec",
                          "k_rappor", "buffling", "rappor", "rappor_reports", "rappor_client", "rappor_client_report",
                          "olh", "hadamard_response", "count_mean_sketch", "hadamard_count_mean_sketch"}
    for spec in MEASUREMENT_SPECS:
        assert (spec.law is not None or spec.conditional_law is not None) and spec.edges is not None, spec.name


@pytest.mark.parametrize("name,p", CASES, ids=[f"{n}[{short(p)}]" for n, p in CASES])
def test_law_equals_enumerated_distribution_of_our_implementation(name, p):
    spec = find_spec(name)
    m = spec.build(spec.load_constructor(), p)
    if spec.memoised is not None:  # the law is the first call's: every call on a measurement built afresh
        from vetdp.engine.calls import first_calls

        m = first_calls(lambda: spec.build(spec.load_constructor(), p), m)
    xs = spec.inputs(p)
    assert xs, "a spec with no inputs checks nothing"
    for x in xs:
        law = law_of(spec, p, x)
        assert sum(law.values()) == 1 and all(isinstance(q, Fraction) and q > 0 for q in law.values())
        assert output_distribution(m, x) == law, f"{name}: law differs from the implementation at x={x!r}"


def test_law_sums_to_one_at_two_thousand_categories():
    p = {"categories": rr_spec.layout(2000, "int", step=3, offset=-7, order="shuffled", seed=5),
         "prob": math.nextafter(1.0, 0.0)}
    for x in rr_spec.inputs(p):
        law = rr_spec.law(p, x)
        assert len(law) == 2000 and sum(law.values()) == 1


def test_laws_refuse_inputs_of_the_wrong_type():
    with pytest.raises(TypeError, match="bool"):
        find_spec("randomized_response_bool").law({"prob": 0.75, "constant_time": False}, 1)
    with pytest.raises(TypeError, match="int"):
        rr_spec.law({"categories": [1, 2], "prob": 0.5}, "1")
    with pytest.raises(ValueError, match="bits"):
        bitvec_spec.law({"k": 2, "m": 2, "f": 0.5, "constant_time": False}, (0, 2))


# ------------------------------------------------------------------ wrong implementations the laws reject

def rr_labels_shifted(p, x):
    """Honest answers report the next category in the list (off by one)."""
    cats = p["categories"]
    i = cats.index(x)
    lie = sample_uniform_int_below(len(cats) - 1)
    lie += lie >= i
    return cats[(i + 1) % len(cats)] if sample_bernoulli_float(p["prob"]) else cats[lie]


def bitvec_reversed(p, x):
    """Correct flips, bits returned in reverse order."""
    q = flip_probability(p["f"])
    return tuple(reversed([b ^ sample_bernoulli_float(q) for b in x]))


def bitvec_flips_with_f(p, x):
    """Flips each bit with probability f, not f/2."""
    return tuple(b ^ sample_bernoulli_float(p["f"]) for b in x)


def bitvec_f_half_to_nearest(p, x):
    """f/2 rounded to nearest (ties to even) instead of up."""
    return tuple(b ^ sample_bernoulli_float(p["f"] / 2) for b in x)


def k_rappor_quarter_budget(p, x):
    """Flips with the probability for ε/4: four times the noise ε asks for."""
    q = k_rappor_flip_probability(p["epsilon"] / 4, p["m"])
    return tuple(b ^ sample_bernoulli_float(q) for b in x)


def buffling_no_shuffle(p, x):
    """Flips every bit, never shuffles the columns."""
    return tuple(tuple(b ^ sample_bernoulli_float(p["flip_prob"]) for b in row) for row in x)


def bool_inverted(p, x):
    """Keeps the truth with probability 1 − prob."""
    return x ^ sample_bernoulli_float(p["prob"])


WRONG = [
    ("randomized_response", rr_labels_shifted, {"categories": rr_spec.layout(5, "int", 2, -3, "shuffled", 3),
                                                "prob": 0.5}),
    ("randomized_response", rr_labels_shifted, {"categories": ["c0", "c1"], "prob": 0.75}),
    ("randomized_response_bitvec", bitvec_reversed, {"k": 3, "m": 2, "f": 0.25, "constant_time": False}),
    ("randomized_response_bitvec", bitvec_flips_with_f, {"k": 2, "m": 1, "f": 0.5, "constant_time": False}),
    ("randomized_response_bitvec", bitvec_f_half_to_nearest, {"k": 2, "m": 1, "f": tiny_float(5),
                                                              "constant_time": False}),
    ("randomized_response_bitvec", bitvec_f_half_to_nearest, {"k": 2, "m": 1, "f": tiny_float(2**52 + 1),
                                                              "constant_time": False}),
    ("k_rappor", k_rappor_quarter_budget, {"k": 3, "m": 3, "epsilon": 1.0, "constant_time": False}),
    ("buffling", buffling_no_shuffle, {"n_pub": 1, "n_bit": 2, "flip_prob": 0.25}),
    ("randomized_response_bool", bool_inverted, {"prob": 0.75, "constant_time": False}),
]


@pytest.mark.parametrize("name,wrong,p", WRONG, ids=[f"{w.__name__}[{short(p)}]" for _, w, p in WRONG])
def test_law_rejects_a_wrong_implementation(name, wrong, p):
    spec = find_spec(name)
    differs = [x for x in spec.inputs(p)
               if not isinstance(x, np.ndarray) and output_distribution(lambda v: wrong(p, v), x) != law_of(spec, p, x)]
    assert differs, f"{wrong.__name__} has the law of {name} on every input"


def test_round_to_nearest_f_half_is_only_visible_at_n_1_mod_4():
    """Why every residue matters: for odd n, ties-to-even rounds n/2 down when n ≡ 1 mod 4 (less noise
    than promised) and up when n ≡ 3 mod 4 (the same float as rounding up)."""
    spec = find_spec("randomized_response_bitvec")
    for n, visible in ((1, True), (5, True), (3, False), (7, False), (2**52 + 1, True), (2**52 + 3, False)):
        p = {"k": 1, "m": 1, "f": tiny_float(n), "constant_time": False}
        wrong = output_distribution(lambda v, p=p: bitvec_f_half_to_nearest(p, v), (True,))
        assert (wrong != law_of(spec, p, (True,))) is visible, n


# ------------------------------------------------------------------ edge labels

EDGE_CASES = [
    ("randomized_response", {"categories": ["c0", "c1", "c2"], "prob": float(Fraction(1, 3)) + 2**-54},
     {"prob=1/t↑", "str categories", "outsider below", "outsider between", "outsider above", "numpy input"}),
    ("randomized_response", {"categories": [0, 1, 2, 3], "prob": 0.25}, {"prob=1/t exact (uniform)"}),
    ("randomized_response", {"categories": [0, 1, 2], "prob": math.nextafter(1.0, 0.0)}, {"prob=1−2⁻⁵³"}),
    ("randomized_response", {"categories": rr_spec.layout(7, "int", 3, -4, "shuffled", 1), "prob": 0.5},
     {"shuffled categories", "int categories with gaps", "negative categories", "outsider between"}),
    ("randomized_response", {"categories": rr_spec.layout(1000, "int", 1, 0, "reversed"), "prob": 0.5},
     {"t>=1000", "reversed categories"}),
    ("randomized_response_bitvec", {"k": 2, "m": 1, "f": 1.5e-323, "constant_time": True},
     {"f=n·2⁻¹⁰⁷⁴ n≡3 mod 4 subnormal small n", "f/2 inexact (rounded up)", "constant_time", "k=2m"}),
    ("randomized_response_bitvec", {"k": 2, "m": 1, "f": tiny_float(2**52 + 1), "constant_time": False},
     {"f=n·2⁻¹⁰⁷⁴ n≡1 mod 4 lowest normal binade", "f/2 inexact (rounded up)"}),
    ("randomized_response_bitvec", {"k": 4, "m": 2, "f": 1.0, "constant_time": False}, {"f=1 (pure noise)"}),
    ("randomized_response_bitvec", {"k": 3, "m": 2, "f": 0.25, "constant_time": False}, {"k<2m", "numpy input"}),
    ("randomized_response_bitvec", {"k": 8, "m": 3, "f": 0.375, "constant_time": False},
     {"k>=8", "input subset", "k>2m"}),
    ("k_rappor", {"k": 8, "m": 3, "epsilon": 1.0, "constant_time": False}, {"ε/(2m) inexact", "k>2m"}),
    ("k_rappor", {"k": 4, "m": 2, "epsilon": 2.0, "constant_time": True}, {"ε/(2m) exact"}),
    ("k_rappor", {"k": 2, "m": 1, "epsilon": 5e-324, "constant_time": False},
     {"ε subnormal", "q=1/2 (pure noise)"}),
    ("buffling", {"n_pub": 2, "n_bit": 1, "flip_prob": 5e-324}, {"flip_prob subnormal", "n_bit=1 (no shuffle)"}),
    ("buffling", {"n_pub": 1, "n_bit": 3, "flip_prob": 0.5}, {"flip_prob=1/2 (pure noise)", "shape 1×3"}),
    ("randomized_response_bool", {"prob": 0.5, "constant_time": False}, {"prob=1/2 (pure noise)"}),
    ("randomized_response_bool", {"prob": math.nextafter(0.5, 1.0), "constant_time": True},
     {"prob=1/2+ulp", "constant_time"}),
]


@pytest.mark.parametrize("name,p,expected", EDGE_CASES, ids=[f"{n}[{short(p)}]" for n, p, _ in EDGE_CASES])
def test_edges_name_the_boundary_classes(name, p, expected):
    labels = find_spec(name).edges(p)
    assert expected <= set(labels), f"missing {expected - set(labels)} in {labels}"


def test_pinned_examples_cover_the_edges_the_issue_names():
    def labels(name: str) -> set[str]:
        spec = find_spec(name)
        return {label for p in spec.examples for label in spec.edges(p)}

    bitvec = labels("randomized_response_bitvec")
    for r in range(4):
        assert any(label.startswith(f"f=n·2⁻¹⁰⁷⁴ n≡{r} mod 4 subnormal") for label in bitvec), r
    assert any("lowest normal binade" in label for label in bitvec)
    assert {"ε/(2m) inexact", "k>2m", "k<2m"} <= labels("k_rappor")
    assert {"shuffled categories", "outsider below", "outsider between", "outsider above", "prob=1/t↑",
            "prob=1−2⁻⁵³", "str categories", "int categories with gaps"} <= labels("randomized_response")


# ------------------------------------------------------------------ the strategies reach where bugs live

def test_categorical_search_reaches_large_t_with_deep_only_spread_inputs():
    p = find(rr_spec.params(True), lambda p: len(p["categories"]) >= 1000, settings=FIND)
    cats = p["categories"]
    xs = rr_spec.inputs(p)
    assert len(xs) <= rr_spec.SPREAD + 2 + 4  # spread, smallest, largest, outsiders, NumPy str
    members = [x for x in xs if x in set(cats)]
    assert {cats[0], cats[-1], min(cats), max(cats)} <= set(members)
    default_top = max(hi for (_, hi), _ in rr_spec.T_BANDS[False])
    assert max(len(q["categories"]) for q in drawn(find_spec("randomized_response"), 40)) <= default_top


def test_categorical_search_draws_shuffled_categories_and_outsiders_below_between_above():
    params = rr_spec.params(False)
    p = find(params, lambda p: "shuffled categories" in rr_spec.edges(p) and len(p["categories"]) > 2, settings=FIND)
    assert p["categories"] != sorted(p["categories"]) and p["categories"] != sorted(p["categories"])[::-1]
    p = find(params, lambda p: isinstance(p["categories"][0], int) and "outsider between" in rr_spec.edges(p),
             settings=FIND)
    where = rr_spec.outsiders(p["categories"])
    cats = p["categories"]
    assert where["below"] < min(cats) and where["above"] > max(cats) and min(cats) < where["between"] < max(cats)
    assert not set(where.values()) & set(cats) and set(where.values()) <= set(rr_spec.inputs(p))
    p = find(params, lambda p: isinstance(p["categories"][0], str) and "outsider between" in rr_spec.edges(p),
             settings=FIND)
    where = rr_spec.outsiders(p["categories"])
    assert where["below"] < min(p["categories"]) < where["between"] < max(p["categories"]) < where["above"]


@pytest.mark.parametrize("residue", range(4))
@pytest.mark.parametrize("normal", [False, True], ids=["subnormal", "lowest_normal_binade"])
def test_bitvec_search_reaches_every_residue_of_tiny_f(residue, normal):
    def hit(p: dict) -> bool:
        n = tiny_numerator(p["f"])
        return n is not None and n % 4 == residue and (n >= 2**52) == normal and n > 64

    p = find(bitvec_spec.params(False), hit, settings=FIND)
    assert tiny_float(tiny_numerator(p["f"])) == p["f"]
    small = find(bitvec_spec.params(False), lambda p: (tiny_numerator(p["f"]) or 10**6) <= 64
                 and tiny_numerator(p["f"]) % 4 == residue, settings=FIND)
    assert tiny_numerator(small["f"]) % 4 == residue


@pytest.mark.parametrize("deep", [False, True])
def test_bitvec_search_reaches_long_vectors_whose_subset_holds_the_farthest_pair(deep):
    spec = find_spec("randomized_response_bitvec")
    longest = bitvec_spec.LONGEST[deep]
    assert longest >= (10 if deep else 7)
    # pinned: a bit vector beyond a byte (a uint8 report breaks at 9 bits), and k-RAPPOR at 8 bits
    assert any(p["k"] == 9 for p in spec.examples) and any(p["k"] == 8 for p in find_spec("k_rappor").examples)
    for m in (1, 3, longest):
        p = find(spec.params(deep), lambda p, m=m: p["k"] == longest and p["m"] == m, settings=FIND)
        xs = [x for x in spec.inputs(p) if isinstance(x, tuple) and all(isinstance(b, bool) for b in x)]
        assert len(xs) < 2 ** longest  # a subset, not every vector
        d = max(sum(a != b for a, b in zip(x, y, strict=True)) for x in xs for y in xs)
        assert d == min(2 * m, longest)  # ... holding a pair at the largest Hamming distance
    find(spec.params(False), lambda p: p["k"] < 2 * p["m"] <= 2 * p["k"], settings=FIND)


def test_k_rappor_search_reaches_inexact_epsilon_over_2m_on_long_vectors():
    spec = find_spec("k_rappor")
    p = find(spec.params(False), lambda p: "ε/(2m) inexact" in spec.edges(p) and p["m"] in (3, 5, 6, 7)
             and p["k"] >= 2 * p["m"] - 1 and p["k"] >= 5, settings=FIND)
    ratio = Fraction(p["epsilon"]) / (2 * p["m"])
    assert Fraction(float(ratio)) != ratio


@pytest.mark.parametrize("name", ["randomized_response_bitvec", "k_rappor", "buffling"])
def test_inputs_and_outside_come_in_numpy_containers(name):
    spec = find_spec(name)
    p = spec.examples[0]
    xs = spec.inputs(p)
    assert any(isinstance(x, np.ndarray) and x.dtype == np.bool_ for x in xs)
    assert any(isinstance(x, np.ndarray) and np.issubdtype(x.dtype, np.integer) for x in xs)
    assert any(isinstance(x, list) for x in xs)
    bad = [x for x in spec.outside(p) if isinstance(x, np.ndarray)]
    assert len(bad) >= 3
    m = spec.build(spec.load_constructor(), p)
    for x in bad:
        with pytest.raises((ValueError, TypeError)):
            m(x)


def test_categorical_outside_holds_numpy_scalars_and_arrays():
    for cats in ([3, 1, 2], ["b", "a"]):
        xs = rr_spec.outside({"categories": cats, "prob": 0.75})
        assert any(isinstance(x, np.ndarray) for x in xs)
    assert any(isinstance(x, np.integer) for x in rr_spec.outside({"categories": [3, 1, 2], "prob": 0.75}))
    assert any(isinstance(x, np.str_) for x in rr_spec.inputs({"categories": ["b", "a"], "prob": 0.75}))


def test_buffling_distance_counts_differing_columns():
    p = {"n_pub": 2, "n_bit": 3, "flip_prob": 0.25}
    x = ((0, 0, 0), (0, 0, 0))
    assert buffling_spec.column_distance(p, x, x) == 0
    assert buffling_spec.column_distance(p, x, ((1, 0, 0), (1, 0, 0))) == 1
    assert buffling_spec.column_distance(p, x, np.array([[1, 0, 1], [0, 1, 0]])) == 3
