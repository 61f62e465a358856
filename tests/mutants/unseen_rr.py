"""Categorical randomized response written the way outside users write it (issue 10, "Evidence").

Every function here takes ``(categories, prob)`` like ``make_randomized_response`` and returns a
:class:`vetdp.core.measurement.Measurement`. None of them is built from vetdp's constructor: each
validates its arguments, keeps its own category table and draws through vetdp's primitives in its
own way. The privacy map is computed from vetdp's public constant ``RANDOMIZED_RESPONSE_EPSILON``
unless the docstring says otherwise.

Docstrings start with "Defect:" (a realistic bug ``vetdp verify`` must reject, and on which clause)
or "Sound:" (a correct implementation written differently, which it must accept).
"""

from __future__ import annotations

import bisect
import decimal
import math
import numbers
import sys
from collections.abc import Hashable
from fractions import Fraction

from vetdp.core.measurement import AtomDomain, DiscreteDistance, MaxDivergence, Measurement
from vetdp.impl.randomized_response import RANDOMIZED_RESPONSE_EPSILON
from vetdp.sampling.primitives import sample_bernoulli_float, sample_uniform_int_below

__all__ = [
    # wrong
    "label_shifted_by_one",
    "last_category_handled_as_outsider",
    "skips_the_skip_for_large_t",
    "outsider_below_takes_next_category",
    "sorted_table_original_index",
    "resample_compares_index_with_category",
    "map_zero_beyond_distance_one",
    "map_not_monotone",
    "linear_search_never_ends",
    "constructor_exits_on_high_prob",
    "map_one_and_a_half_epsilon",
    "table_keyed_by_integer_part",
    "inverse_cdf_threshold_off_by_one",
    "answers_memoised_after_four_calls",
    # sound
    "lie_by_rotation",
    "lie_by_resampling",
    "coin_first_then_skip",
    "map_by_decimal_logarithm",
    "map_constant_beyond_distance_one",
    "inverse_cdf_one_uniform",
    "keep_below_1074_bit_uniform",
]


# ------------------------------------------------------------------ shared by every variant

def _validated(categories, prob) -> tuple[list, float]:
    """The categories as a list and prob as a float, or the ValueError/TypeError a user expects."""
    if isinstance(categories, (str, bytes)) or not isinstance(categories, (list, tuple, set, frozenset)):
        raise TypeError(f"categories={categories!r} must be a list, tuple or set, not {type(categories).__name__}")
    cats = list(categories)
    if len(cats) < 2:
        raise ValueError(f"categories={cats!r} must hold at least 2 categories")
    if len({type(c) for c in cats}) != 1:
        raise TypeError(f"categories={cats!r} must share one type")
    for c in cats:
        if not isinstance(c, Hashable):
            raise TypeError(f"category {c!r} is not hashable")
        if isinstance(c, float) and math.isnan(c):
            raise ValueError(f"categories holds nan: {c!r}")
    if len(set(cats)) != len(cats):
        raise ValueError(f"categories={cats!r} must be distinct")
    if isinstance(prob, bool) or not isinstance(prob, numbers.Real):
        raise TypeError(f"prob={prob!r} must be a float")
    p = float(prob)
    if not math.isfinite(p) or not Fraction(1, len(cats)) <= Fraction(p) < 1:
        raise ValueError(f"prob={prob!r} must be in [1/{len(cats)}, 1)")
    return cats, p


def _epsilon(p: float, t: int) -> float:
    return RANDOMIZED_RESPONSE_EPSILON.to_float({"prob": p, "t": t})


def _measurement(cats: list, function, epsilon: float, name: str, privacy_map=None) -> Measurement:
    def standard_map(d_in: int) -> float:
        return 0.0 if d_in == 0 else epsilon

    return Measurement(
        input_domain=AtomDomain(type(cats[0])),
        input_metric=DiscreteDistance(),
        output_measure=MaxDivergence(),
        function=function,
        privacy_map=privacy_map or standard_map,
        output_domain=AtomDomain(type(cats[0])),
        parameters={"categories": cats},
        name=name,
    )


# ------------------------------------------------------------------ wrong variants

def label_shifted_by_one(categories, prob):
    """Defect: [class 1, ``function.law``] every answer is reported under the next label.

    The author numbers categories from 1 in one place and from 0 in another, so the answer for
    index j is ``cats[(j + 1) % t]``. A fixed relabelling of the output does not change the
    privacy loss: only a comparison with the reference law sees it.
    """
    cats, p = _validated(categories, prob)
    t = len(cats)
    position = {c: i for i, c in enumerate(cats)}

    def function(x):
        i = position.get(x)
        if i is None:
            j = sample_uniform_int_below(t)
        else:
            j = sample_uniform_int_below(t - 1)
            j = j + 1 if j >= i else j
            if sample_bernoulli_float(p):
                j = i
        return cats[(j + 1) % t]

    return _measurement(cats, function, _epsilon(p, t), "label_shifted_by_one")


def last_category_handled_as_outsider(categories, prob):
    """Defect: [class 1/3, ``function.law``] the lookup table is built from ``cats[:-1]``.

    The last category is then treated like an input outside the categories and answered
    uniformly. The loss stays below ln(p(t−1)/(1−p)), so only the law is wrong, and only for the
    last category.
    """
    cats, p = _validated(categories, prob)
    t = len(cats)
    position = {c: i for i, c in enumerate(cats[:-1])}

    def function(x):
        i = position.get(x)
        if i is None:
            return cats[sample_uniform_int_below(t)]
        if sample_bernoulli_float(p):
            return x
        j = sample_uniform_int_below(t - 1)
        return cats[j + (j >= i)]

    return _measurement(cats, function, _epsilon(p, t), "last_category_handled_as_outsider")


def skips_the_skip_for_large_t(categories, prob):
    """Defect: [class 3, ``privacy.sound``; only for t >= 1000] the lie may equal the truth.

    "With a thousand categories a collision is negligible", so for t >= 1000 the lie is drawn
    uniformly over all t categories. Then P[M(x) = x] = p + (1−p)/t and the loss is
    ln((pt + 1 − p)/(1 − p)) > ln(p(t−1)/(1−p)).
    """
    cats, p = _validated(categories, prob)
    t = len(cats)
    position = {c: i for i, c in enumerate(cats)}

    def function(x):
        i = position.get(x)
        if i is not None and sample_bernoulli_float(p):
            return x
        if i is None or t >= 1000:
            return cats[sample_uniform_int_below(t)]
        j = sample_uniform_int_below(t - 1)
        return cats[j + (j >= i)]

    return _measurement(cats, function, _epsilon(p, t), "skips_the_skip_for_large_t")


def outsider_below_takes_next_category(categories, prob):
    """Defect: [class 3, ``function.law``] membership by bisection over the sorted categories.

    ``bisect_left`` finds where x would go; the author checks only that this position is inside
    the table, not that the category there equals x. An input below the smallest category (or
    between two) is answered as if it were the next category, instead of uniformly. The loss is
    unchanged; the law of outsiders below or between the categories is wrong.
    """
    cats, p = _validated(categories, prob)
    t = len(cats)
    table = sorted(cats)

    def function(x):
        k = bisect.bisect_left(table, x)
        if k == t:  # "above every category: not one of them"
            return table[sample_uniform_int_below(t)]
        if sample_bernoulli_float(p):
            return table[k]
        j = sample_uniform_int_below(t - 1)
        return table[j + (j >= k)]

    return _measurement(cats, function, _epsilon(p, t), "outsider_below_takes_next_category")


def sorted_table_original_index(categories, prob):
    """Defect: [class 3, ``function.law``; only for unsorted categories] two orders mixed.

    The lie table is sorted "for reproducibility" but the truth's index is looked up in the list
    as given. With sorted categories the two agree; with shuffled ones the skip removes the wrong
    entry, so the lie can equal the truth and another category is never a lie.
    """
    cats, p = _validated(categories, prob)
    t = len(cats)
    table = sorted(cats)
    position = {c: i for i, c in enumerate(cats)}

    def function(x):
        i = position.get(x)
        if i is None:
            return table[sample_uniform_int_below(t)]
        if sample_bernoulli_float(p):
            return x
        j = sample_uniform_int_below(t - 1)
        return table[j + (j >= i)]

    return _measurement(cats, function, _epsilon(p, t), "sorted_table_original_index")


def resample_compares_index_with_category(categories, prob):
    """Defect: [class 5, ``function.law`` and ``privacy.sound``] a rejection loop with the wrong test.

    "Resample until different" compares the drawn *index* with the *category*. For the categories
    0..t−1 this is right; for any other categories (strings, ints with gaps, shuffled) the loop
    ends at once and the lie may equal the truth.
    """
    cats, p = _validated(categories, prob)
    t = len(cats)
    members = set(cats)

    def function(x):
        if x in members and sample_bernoulli_float(p):
            return x
        if x not in members:
            return cats[sample_uniform_int_below(t)]
        while True:
            j = sample_uniform_int_below(t)
            if j != x:
                return cats[j]

    return _measurement(cats, function, _epsilon(p, t), "resample_compares_index_with_category")


def map_zero_beyond_distance_one(categories, prob):
    """Defect: [class 2, ``privacy.distance``] map(d) = 0 for every d >= 2.

    The author handles "same input" and "one change" and lets everything else fall through to 0.
    Under the discrete distance inputs at distance <= 2 still differ, with loss ε.
    """
    cats, p = _validated(categories, prob)
    t = len(cats)
    eps = _epsilon(p, t)
    position = {c: i for i, c in enumerate(cats)}

    def function(x):
        i = position.get(x)
        if i is None:
            return cats[sample_uniform_int_below(t)]
        j = sample_uniform_int_below(t - 1)
        return x if sample_bernoulli_float(p) else cats[j + (j >= i)]

    def privacy_map(d_in: int) -> float:
        return eps if d_in == 1 else 0.0

    return _measurement(cats, function, eps, "map_zero_beyond_distance_one", privacy_map)


def map_not_monotone(categories, prob):
    """Defect: [class 2, ``privacy.monotone``] sound at every distance but not monotone.

    Group privacy d·ε "for small d", then the discrete bound ε: map(2) = 2ε > map(3) = ε. Every
    value is an upper bound, but a map that decreases in d_in breaks composition with anything
    that relies on monotonicity.
    """
    cats, p = _validated(categories, prob)
    t = len(cats)
    eps = _epsilon(p, t)
    position = {c: i for i, c in enumerate(cats)}

    def function(x):
        i = position.get(x)
        if i is None:
            return cats[sample_uniform_int_below(t)]
        j = sample_uniform_int_below(t - 1)
        return x if sample_bernoulli_float(p) else cats[j + (j >= i)]

    def privacy_map(d_in: int) -> float:
        if d_in == 0:
            return 0.0
        return math.nextafter(d_in * eps, math.inf) if d_in <= 2 else eps

    return _measurement(cats, function, eps, "map_not_monotone", privacy_map)


def linear_search_never_ends(categories, prob):
    """Defect: [class 6, the run must not hang] the truth's index is found by a wrapping search.

    ``while cats[i] != x: i = (i + 1) % t`` never ends for an input of the right type outside the
    categories; no randomness is drawn before the loop, so only a time budget can stop it.
    """
    cats, p = _validated(categories, prob)
    t = len(cats)

    def function(x):
        i = 0
        while cats[i] != x:
            i = (i + 1) % t
        if sample_bernoulli_float(p):
            return x
        j = sample_uniform_int_below(t - 1)
        return cats[j + (j >= i)]

    return _measurement(cats, function, _epsilon(p, t), "linear_search_never_ends")


def constructor_exits_on_high_prob(categories, prob):
    """Defect: [class 6, ``construct``] the constructor calls ``sys.exit(3)`` for prob > 0.99.

    A library calling sys.exit is a bug; vetdp must report it as a failing ``construct`` clause
    for those parameters and keep checking the others (which are correct).
    """
    cats, p = _validated(categories, prob)
    if p > 0.99:
        print("prob > 0.99 gives no privacy worth having; refusing", file=sys.stderr)
        sys.exit(3)
    return lie_by_rotation(cats, p)


def map_one_and_a_half_epsilon(categories, prob):
    """Defect: [class 8, ``privacy.tight``] a sound but loose map, 1.5·ε rounded up.

    ``verify`` reports it as a WARNING (exit 0) with the slack; ``verify --strict`` and ``check``
    fail it.
    """
    m = lie_by_rotation(categories, prob)
    cats, p = _validated(categories, prob)
    loose = math.nextafter(1.5 * _epsilon(p, len(cats)), math.inf)

    def privacy_map(d_in: int) -> float:
        return 0.0 if d_in == 0 else loose

    return _measurement(cats, m.function, loose, "map_one_and_a_half_epsilon", privacy_map)


def table_keyed_by_integer_part(categories, prob):
    """Defect: (function.law, float categories only) the index table is keyed by ``int(c)`` so that 1 and 1.0
    "match"; float categories sharing an integer part collide and the earlier one answers as the later."""
    cats, p = _validated(categories, prob)
    t = len(cats)
    index = {int(c) if isinstance(c, float) else c: i for i, c in enumerate(cats)}
    members = frozenset(cats)

    def function(x):
        if x not in members:
            return cats[sample_uniform_int_below(t)]
        i = index[int(x) if isinstance(x, float) else x]
        if sample_bernoulli_float(p):
            return cats[i]
        j = sample_uniform_int_below(t - 1)
        return cats[j + (j >= i)]

    return _measurement(cats, function, _epsilon(p, t), "table_keyed_by_integer_part")


def answers_memoised_after_four_calls(categories, prob):
    """Defect: [class 6, ``randomness.through_primitives``] from the fifth call with an input on, the last answer
    for it is returned again ("cache the report"): the output depends on earlier calls, not only on the input and
    the primitives' choices. The first enumeration of each input sees four consistent calls; enumerating it again
    replays choices that are no longer drawn, so its paths sum to 3/2 (once an engine error, now a finding)."""
    cats, p = _validated(categories, prob)
    t = len(cats)
    position = {c: i for i, c in enumerate(cats)}
    last: dict = {}
    calls: dict = {}

    def function(x):
        calls[x] = calls.get(x, 0) + 1
        if x in last and calls[x] > 4:
            return last[x]
        i = position.get(x)
        if i is None:
            return cats[sample_uniform_int_below(t)]
        if sample_bernoulli_float(p):
            y = x
        else:
            j = sample_uniform_int_below(t - 1)
            y = cats[j + (j >= i)]
        last[x] = y
        return y

    return _measurement(cats, function, _epsilon(p, t), "answers_memoised_after_four_calls")


# ------------------------------------------------------------------ sound variants

def _inverse_cdf(categories, prob, keep_at_boundary: bool, name: str) -> Measurement:
    """RR from one uniform integer U over the whole unit interval at prob's resolution (about 2**53 values per
    lie): U below prob's numerator·(t−1) keeps the truth, above it the lie's rank is U's position among the
    t−1 equal slices of the rest."""
    cats, p = _validated(categories, prob)
    t = len(cats)
    position = {c: i for i, c in enumerate(cats)}
    num, den = Fraction(p).as_integer_ratio()
    keep = num * (t - 1)

    def function(x):
        i = position.get(x)
        if i is None:
            return cats[sample_uniform_int_below(t)]
        u = sample_uniform_int_below(den * (t - 1))
        if u < keep or (keep_at_boundary and u == keep):
            return x
        rank = (u - keep) // (den - num)
        return cats[rank + (rank >= i)]

    return _measurement(cats, function, _epsilon(p, t), name)


def inverse_cdf_threshold_off_by_one(categories, prob):
    """Defect: [class 3, ``function.law``] the inverse-CDF sampler keeps the truth when U <= threshold, not <:
    one of about 2**53·(t−1) values too many tells the truth (prob + 2**-53/(t−1) or so). Only an exact
    law sees it; vetdp must enumerate U lazily, by intervals, to see it at all."""
    return _inverse_cdf(categories, prob, True, "inverse_cdf_threshold_off_by_one")


def inverse_cdf_one_uniform(categories, prob):
    """Sound: the whole answer from one uniform integer below den·(t−1) (den = 2**53-ish: prob's denominator),
    compared with thresholds and floor-divided into the lie's rank (an inverse CDF)."""
    return _inverse_cdf(categories, prob, False, "inverse_cdf_one_uniform")


def keep_below_1074_bit_uniform(categories, prob):
    """Sound: the truth is kept exactly when a uniform 1074-bit integer U falls below prob·2**1074 (an integer:
    every float is a multiple of 2**-1074), else the lie is U{0..t−2} with the truth's index skipped.

    One uniform over 2**1074 values per call: the engine must enumerate it by intervals (two paths, not 2**1074),
    and the lie gives t−1 paths per input, so each input has t paths (issue 22: slow to enumerate at t = 1000)."""
    cats, p = _validated(categories, prob)
    t = len(cats)
    position = {c: i for i, c in enumerate(cats)}
    threshold = int(Fraction(p) * 2**1074)

    def function(x):
        i = position.get(x)
        if i is None:
            return cats[sample_uniform_int_below(t)]
        if sample_uniform_int_below(2**1074) < threshold:
            return x
        j = sample_uniform_int_below(t - 1)
        return cats[j + (j >= i)]

    return _measurement(cats, function, _epsilon(p, t), "keep_below_1074_bit_uniform")


def lie_by_rotation(categories, prob):
    """Sound: the lie is the truth rotated by 1 + U{0..t−2} positions; the coin is tossed first.

    Categories live in a dict; the lie is drawn only when the coin says lie.
    """
    cats, p = _validated(categories, prob)
    t = len(cats)
    index = dict(zip(cats, range(t), strict=True))

    def function(x):
        if x not in index:
            return cats[sample_uniform_int_below(t)]
        if sample_bernoulli_float(p):
            return x
        return cats[(index[x] + 1 + sample_uniform_int_below(t - 1)) % t]

    return _measurement(cats, function, _epsilon(p, t), "lie_by_rotation")


def lie_by_resampling(categories, prob):
    """Sound: the textbook lie, "draw a category until it differs from the truth" (a rejection loop).

    The loop ends with probability 1 and its output is uniform over the other t−1 categories;
    enumerating it needs the engine to solve the loop (renewal) or bound its residual.
    """
    cats, p = _validated(categories, prob)
    t = len(cats)
    members = frozenset(cats)

    def function(x):
        if x not in members:
            return cats[sample_uniform_int_below(t)]
        if sample_bernoulli_float(p):
            return x
        while True:
            y = cats[sample_uniform_int_below(t)]
            if y != x:
                return y

    return _measurement(cats, function, _epsilon(p, t), "lie_by_resampling")


def coin_first_then_skip(categories, prob):
    """Sound: U{0..t−2} and skip the truth's index (the brief's "sample_uniform_int_below(t−1) + skip").

    Written with an explicit ``if`` and the categories kept in a tuple.
    """
    cats, p = _validated(categories, prob)
    table = tuple(cats)
    t = len(table)

    def function(x):
        try:
            i = table.index(x)
        except ValueError:
            return table[sample_uniform_int_below(t)]
        keep = sample_bernoulli_float(p)
        if keep:
            return x
        j = sample_uniform_int_below(t - 1)
        if j >= i:
            j += 1
        return table[j]

    return _measurement(list(table), function, _epsilon(p, t), "coin_first_then_skip")


def _epsilon_by_decimal(p: float, t: int) -> float:
    """An upper bound of ln(p(t−1)/(1−p)) as a float, computed with the ``decimal`` module.

    Proof of soundness: r = p(t−1)/(1−p) is an exact rational (p is a dyadic float). At 60
    significant digits the quotient D = r(1 + δ₁) and ln(D) = ln(D)(1 + δ₂) are each rounded
    to nearest (Decimal.ln is correctly rounded), |δ₁|, |δ₂| <= 5·10⁻⁶⁰. Hence
    |ln D − ln r| <= |δ₁|/(1 − |δ₁|) and the computed value is within 10⁻⁵⁸·max(1, |ln r|) of
    ln r. Adding 10⁻⁵⁰·max(1, |value|) (exactly, in Decimal at 80 digits) gives an upper bound
    U >= ln r; the float returned is the smallest float >= U (checked as rationals). It exceeds
    ln r by at most one float ulp plus 10⁻⁵⁰ relative, far below the 2⁻³⁰ tightness allowance.
    """
    r = Fraction(p) * (t - 1) / (1 - Fraction(p))
    with decimal.localcontext() as ctx:
        ctx.prec = 60
        value = (decimal.Decimal(r.numerator) / decimal.Decimal(r.denominator)).ln()
        ctx.prec = 80
        upper = value + decimal.Decimal("1e-50") * max(decimal.Decimal(1), abs(value))
    x = float(upper)
    if Fraction(x) < Fraction(upper):
        x = math.nextafter(x, math.inf)
    return x


def map_by_decimal_logarithm(categories, prob):
    """Sound: the map computed another way, with ``decimal`` at 60 digits and an exact upward pad
    (see :func:`_epsilon_by_decimal` for the proof that it stays above the exact loss)."""
    cats, p = _validated(categories, prob)
    t = len(cats)
    eps = _epsilon_by_decimal(p, t)
    return _measurement(cats, coin_first_then_skip(cats, p).function, eps, "map_by_decimal_logarithm")


def map_constant_beyond_distance_one(categories, prob):
    """Sound: map(d) = ε for every d >= 1 (under the discrete distance no two inputs are farther
    apart than 1, so this is exact at every d), written with a lookup instead of a branch."""
    cats, p = _validated(categories, prob)
    t = len(cats)
    eps = _epsilon(p, t)
    values = (0.0, eps)

    def privacy_map(d_in: int) -> float:
        return values[min(d_in, 1)]

    return _measurement(cats, lie_by_rotation(cats, p).function, eps, "map_constant_beyond_distance_one",
                        privacy_map)
