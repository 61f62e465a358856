"""Hoare triple of make_randomized_response (impl/randomized_response.py) and its estimator.

Pre: >= 2 distinct categories of one type; prob a float with 1/t <= prob < 1 (exactly).
Law: an input among the t categories is kept with probability prob and otherwise replaced by
one of the other t − 1 categories, uniformly: P[y = x] = prob, P[y = c] = (1 − prob)/(t − 1)
for c != x. An input of the categories' type but outside them yields a uniform category:
P[y = c] = 1/t.
Post: map(0) = 0, map(d >= 1) >= the exact max-divergence over the enumerated categories
plus outsiders below, between and above them (tight within 2**-30; the discrete distance, so
map(d) is the same for every d >= 1); no input-dependent errors; other types rejected, NumPy
scalars and arrays included.
Search: t from 2 to 16 (every category enumerated), 17..64, and with --deep up to 300 and
1000..2000 (T_BANDS; beyond 16 a spread of categories: first, last, smallest, largest and
seeded others, each costing ~2t paths); pinned at t = 32, 40, 101, 128, 255, 257 and 1000;
int categories with gaps, possibly negative, and str categories, in shuffled, reversed or
sorted order; prob at 1/t rounded up, the next float, 1/2 and 1 − 2**-53.
Estimator: E[N̂_y] = N_y exactly; Var(N̂_y) = randomized_response_count_variance.
Proof: proofs/randomized_response.md
"""

import itertools
import math
from fractions import Fraction

import numpy as np
from hypothesis import strategies as st

from vetdp.accounting.curves import RRFamily, randomized_response_curve
from vetdp.accounting.pld import one_run_delta
from vetdp.core.measurement import PrivacyConstant
from vetdp.engine.spec import (
    BadParams,
    EstimatorSpec,
    MeasurementSpec,
    Universal,
    at_least,
    boundary_probabilities,
    exact_value,
    floats_in,
    seeded_permutation,
    spread,
)
from vetdp.impl.randomized_response import RANDOMIZED_RESPONSE_EPSILON, randomized_response_count_variance

P_MAX = math.nextafter(1.0, 0.0)
ALL_CATEGORIES_UP_TO = 16  # larger t enumerates a spread of SPREAD categories (plus outsiders)
SPREAD = 5
# Bands of t as ((low, high), weight), for the default run and for --deep. One input costs about 2t
# enumerated paths; while sample_uniform_int_below branches over a list of t outcomes per call, a path
# costs O(t) too, so t in the thousands (8 s per input at t = 2000) stays behind --deep.
T_BANDS = {False: [((2, ALL_CATEGORIES_UP_TO), 4), ((17, 64), 2)],
           True: [((2, ALL_CATEGORIES_UP_TO), 3), ((17, 300), 2), ((1000, 2000), 1)]}

def categories_of(t: int, kind: str) -> list:
    return list(range(t)) if kind == "int" else [f"c{i}" for i in range(t)]


def layout(t: int, kind: str, step: int = 1, offset: int = 0, order: str = "sorted", seed: int = 0) -> list:
    """t categories of ``kind`` ("int", "str" or "float": quarters offset by 1/8, never integral) spaced
    ``step`` apart from ``offset``, in ``order`` ("sorted", "reversed" or "shuffled" by ``seed``)."""
    values = [offset + step * i for i in range(t)]
    cats = (values if kind == "int" else [v / 4 + 0.125 for v in values] if kind == "float"
            else [f"c{v}" for v in values])
    if kind == "str" and order == "sorted":
        cats.sort()
    if order == "reversed":
        cats.reverse()
    elif order == "shuffled":
        cats = [cats[i] for i in seeded_permutation(t, seed)]
    return cats


def build(ctor, p):
    return ctor(p["categories"], p["prob"])


def category_counts(deep: bool) -> st.SearchStrategy[int]:
    """t drawn from the bands of :data:`T_BANDS`, each band as often as its weight says."""
    bands = [band for band, weight in T_BANDS[deep] for _ in range(weight)]
    return st.sampled_from(bands).flatmap(lambda band: st.integers(*band))


def params(deep: bool):
    def for_t(t: int):
        arrangement = st.builds(layout, st.just(t), st.sampled_from(["int", "str", "int", "str", "float"]),
                                st.integers(1, 4),
                                st.integers(-5, 5), st.sampled_from(["sorted", "shuffled", "reversed", "shuffled"]),
                                st.integers(0, 255))
        return st.fixed_dictionaries({
            "categories": arrangement,
            "prob": floats_in(at_least(Fraction(1, t)), P_MAX, edges=boundary_probabilities(t)),
        })

    return category_counts(deep).flatmap(for_t)


def outsiders(cats: list) -> dict[str, object]:
    """Values of the categories' type outside them, keyed "below", "between" and "above" (those that exist)."""
    found: dict[str, object] = {}
    members = set(cats)
    ordered = sorted(cats)
    if isinstance(cats[0], bool):
        return found
    if isinstance(cats[0], int):
        found["below"], found["above"] = ordered[0] - 1, ordered[-1] + 1
        gap = next((a + 1 for a, b in itertools.pairwise(ordered) if b > a + 1), None)
        if gap is not None:
            found["between"] = gap
    elif isinstance(cats[0], str):
        if "" not in members:
            found["below"] = ""
        found["above"] = ordered[-1] + "\x00"
        between = ordered[0] + "\x00"
        if between not in members and between < ordered[1]:
            found["between"] = between
    elif isinstance(cats[0], float):
        found["below"], found["above"] = ordered[0] - 1.0, ordered[-1] + 1.0
        middle = ordered[0] / 2 + ordered[1] / 2
        if middle not in members:
            found["between"] = middle
    return found


def chosen_categories(cats: list) -> list:
    """All categories when t <= ALL_CATEGORIES_UP_TO, else the first and last in list order, the
    smallest and the largest, and seeded others."""
    t = len(cats)
    if t <= ALL_CATEGORIES_UP_TO:
        return list(cats)
    picked = set(spread(t, SPREAD, seed=t))
    ordered = sorted(range(t), key=cats.__getitem__)
    picked |= {ordered[0], ordered[-1]}
    return [cats[i] for i in sorted(picked)]


def inputs(p, every: bool = False):
    """Enumerated inputs: :func:`chosen_categories` (``every``: all categories), the outsiders below/between/above
    (none exist for bool categories), and for str categories one category as a NumPy str scalar (a str subclass the
    domain accepts)."""
    cats = p["categories"]
    out = [*(cats if every else chosen_categories(cats)), *outsiders(cats).values()]
    if isinstance(cats[0], str):
        out.append(np.str_(cats[-1]))
    return out


def law(p, x):
    """P[M(x) = y] for an in-domain x (see the module docstring), exactly."""
    cats = p["categories"]
    kind = type(cats[0])
    if not isinstance(x, kind) or (kind is int and isinstance(x, bool)):
        raise TypeError(f"x={x!r} is not of the categories' type {kind.__name__}")
    t = len(cats)
    prob = exact_value(p["prob"])
    if x in set(cats):
        lie = (1 - prob) / (t - 1)
        dist = {c: lie for c in cats}
        dist[cats[cats.index(x)]] = prob
        return {c: q for c, q in dist.items() if q}
    return {c: Fraction(1, t) for c in cats}


def edges(p) -> list[str]:
    """Boundary classes: t band, prob edges, category type, order and gaps, outsiders, NumPy inputs."""
    cats, prob = p["categories"], p["prob"]
    t = len(cats)
    out = ["t=2" if t == 2 else f"t<={ALL_CATEGORIES_UP_TO}" if t <= ALL_CATEGORIES_UP_TO
           else "t<1000" if t < 1000 else "t>=1000"]
    lo = at_least(Fraction(1, t))
    if Fraction(prob) == Fraction(1, t):
        out.append("prob=1/t exact (uniform)")
    elif prob == lo:
        out.append("prob=1/t↑")
    elif prob == math.nextafter(lo, 1.0):
        out.append("prob=1/t↑+ulp")
    if prob == P_MAX:
        out.append("prob=1−2⁻⁵³")
    if prob == 0.5:
        out.append("prob=1/2")
    kind = type(cats[0]).__name__
    out.append(f"{kind} categories")
    ordered = sorted(cats)
    out.append("sorted categories" if cats == ordered else "reversed categories" if cats == ordered[::-1]
               else "shuffled categories")
    if isinstance(cats[0], int) and ordered[-1] - ordered[0] + 1 > t:
        out.append("int categories with gaps")
    if isinstance(cats[0], int) and ordered[0] < 0:
        out.append("negative categories")
    out += [f"outsider {where}" for where in outsiders(cats)]
    if isinstance(cats[0], str):
        out.append("numpy input")
    out.append("numpy outside")
    return out


def outside(p):
    """Values of other types (NumPy scalars and arrays of a category included), which must be rejected."""
    cats = p["categories"]
    c = cats[0]
    if isinstance(c, int):
        return ["c0", 1.5, None, True, float(c), np.int64(c), np.array(c), np.array([c]), [c], (c,)]
    if isinstance(c, float):  # another float is an outsider of the domain's type, not of another type
        return ["c0", None, True, b"c0", np.array(c), np.array([c]), [c], (c,)]
    return [0, None, b"c0", 1.5, np.array(c), np.array([c]), [c], (c,), np.bytes_(b"c0")]


def accountant_family(p) -> RRFamily:
    """t-ary randomized response at the keep probability given (the worst pair: any two categories): its RDP
    curve and PLD are what an accountant composes with (privacy.rdp, privacy.pld check them against the code)."""
    return randomized_response_curve(prob=p["prob"], categories=len(p["categories"]))


def _bad(id_, error, names=("prob",), **kw):
    return BadParams(id_, {"categories": ["a", "b", "c"], "prob": 0.5, **kw}, error, names)


UNIVERSAL_UP_TO = 32  # every t up to this is explored for every prob (every input); larger t at sampled sets
UNIVERSAL_DEEP_UP_TO = 64  # with --deep


def universal_bases(deep: bool) -> list[dict]:
    """Every t from 2 to UNIVERSAL_UP_TO (UNIVERSAL_DEEP_UP_TO with ``deep``) with int categories, and t = 3 with
    str, t = 5 with float categories."""
    top = UNIVERSAL_DEEP_UP_TO if deep else UNIVERSAL_UP_TO
    return ([{"categories": categories_of(t, "int")} for t in range(2, top + 1)]
            + [{"categories": categories_of(3, "str")}, {"categories": layout(5, "float", step=3, offset=-2)}])


UNIVERSAL = Universal(
    bases=universal_bases,
    inputs=lambda p: inputs(p, every=True),
    floats=lambda p: {"prob": (at_least(Fraction(1, len(p["categories"]))), P_MAX)},
    # ε of the reference law, ln(prob·(t−1)/(1−prob)) rounded up (obligation randomized_response.epsilon.sound)
    constant=lambda p: PrivacyConstant(RANDOMIZED_RESPONSE_EPSILON, {"prob": p["prob"], "t": len(p["categories"])}),
)


MEASUREMENT = MeasurementSpec(
    name="randomized_response",
    constructor="make_randomized_response",
    size=lambda p: ("categories", len(p["categories"])),
    build=build,
    params=params,
    examples=[
        {"categories": [0, 1], "prob": 0.5},
        {"categories": ["c0", "c1", "c2"], "prob": at_least(Fraction(1, 3))},
        {"categories": [0, 1, 2], "prob": P_MAX},
        {"categories": [0, 1, 2, 3], "prob": 0.25},
        {"categories": categories_of(7, "str"), "prob": at_least(Fraction(1, 7))},
        {"categories": categories_of(32, "int"), "prob": 0.9},
        {"categories": layout(7, "int", step=3, offset=-4, order="shuffled", seed=1), "prob": at_least(Fraction(1, 7))},
        {"categories": layout(12, "str", step=2, order="shuffled", seed=2), "prob": P_MAX},
        {"categories": layout(40, "int", step=2, offset=1, order="reversed"), "prob": 0.5},
        {"categories": layout(5, "float", step=3, offset=-2, order="shuffled", seed=3), "prob": 0.5},
        # past the drawn bands (t <= 64): odd and even t around 100, 128 and 256 (about 0.5 to 1 s each)
        {"categories": layout(101, "str", order="shuffled", seed=4), "prob": 0.5},
        {"categories": categories_of(128, "int"), "prob": at_least(Fraction(1, 128))},
        {"categories": layout(255, "int", step=3, offset=-7, order="shuffled", seed=5), "prob": 0.9},
        {"categories": categories_of(257, "str"), "prob": P_MAX},
        # t in the thousands: a spread of the categories is enumerated, each over all t outputs
        {"categories": layout(1000, "int", step=2, offset=-3, order="shuffled", seed=9),
         "prob": at_least(Fraction(1, 1000))},
    ],
    bad=[
        _bad("one_category", ValueError, ("categories",), categories=["a"]),
        _bad("no_categories", ValueError, ("categories",), categories=[]),
        _bad("duplicate_categories", ValueError, ("categories", "'a'"), categories=["a", "b", "a"]),
        _bad("mixed_type_categories", TypeError, ("categories",), categories=["a", 1]),
        _bad("categories_str", TypeError, ("categories",), categories="abc"),
        _bad("categories_none", TypeError, ("categories",), categories=None),
        _bad("nan_category", ValueError, ("nan",), categories=[math.nan, 1.0]),
        _bad("prob_below_one_over_t", ValueError, ("prob", "1/3"), prob=0.3333333333333333),
        _bad("prob_one", ValueError, prob=1.0),
        _bad("prob_nan", ValueError, prob=math.nan),
        _bad("prob_inf", ValueError, prob=math.inf),
        _bad("prob_negative", ValueError, prob=-0.1),
        _bad("prob_str", TypeError, prob="0.5"),
        _bad("prob_bool", TypeError, prob=True),
    ],
    inputs=inputs,
    outside=outside,
    describe="categorical randomized response",
    law=law,
    rdp_curve=lambda p: accountant_family(p).rdp_upper,
    delta_curve=lambda p: one_run_delta(accountant_family(p)),
    accountant_pair=lambda p: accountant_family(p).pair_plds,
    max_d_in=3,
    edges=edges,
    universal=UNIVERSAL,
)


def estimator_params(deep: bool):
    def for_t(t: int):
        cats = categories_of(t, "str")
        return st.fixed_dictionaries({
            "categories": st.just(cats),
            # prob = 1/t carries no signal: the estimator rejects it
            "prob": floats_in(math.nextafter(at_least(Fraction(1, t)), 1.0), P_MAX, edges=[0.75, 0.9]).filter(
                lambda q: Fraction(q) > Fraction(1, t)),
            "dataset": st.lists(st.sampled_from(cats), min_size=1, max_size=3),
        })

    return st.integers(2, 4).flatmap(for_t)


def _estimate(est, answers, p):
    values = est(list(answers), p["categories"], p["prob"], exact=True)
    return [values[c] for c in p["categories"]]


def _truth(p):
    return [Fraction(p["dataset"].count(c)) for c in p["categories"]]


def _variance(p, variance=randomized_response_count_variance):
    n, t = len(p["dataset"]), len(p["categories"])
    return [variance(n, p["dataset"].count(c), p["prob"], t, exact=True) for c in p["categories"]]


ESTIMATOR = EstimatorSpec(
    name="debias_randomized_response",
    module="randomized_response",
    estimator="debias_randomized_response",
    mechanism=MEASUREMENT,
    params=estimator_params,
    examples=[{"categories": ["c0", "c1"], "prob": 0.75, "dataset": ["c0", "c0", "c1"]},
              {"categories": ["c0", "c1", "c2"], "prob": 0.5, "dataset": ["c2"]}],
    estimate=_estimate,
    truth=_truth,
    claims=lambda p: {"variance": _variance(p)},
    claim_calls={"variance": lambda fn, p: _variance(p, fn)},
    bad=[
        ("prob_one_over_t", lambda est: est(["a"], ["a", "b"], 0.5), ValueError, ("prob",)),
        ("no_answers", lambda est: est([], ["a", "b"], 0.75), ValueError, ("answers",)),
        ("answer_outside", lambda est: est(["a", "z"], ["a", "b"], 0.75), ValueError, ("answers[1]", "'z'")),
        ("prob_nan", lambda est: est(["a"], ["a", "b"], math.nan), ValueError, ("prob",)),
        ("answers_str", lambda est: est("ab", ["a", "b"], 0.75), TypeError, ("answers",)),
    ],
    describe="categorical randomized response count estimator",
)

SPECS = [MEASUREMENT, ESTIMATOR]
