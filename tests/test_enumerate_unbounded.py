"""Enumeration of every documented primitive, of unbounded loops, and decisions with a residual.

Truths are hand-derived Fractions; the independent odometer of ``_enumeration_helpers`` checks
the engine's own passes. ``max_choices=1`` forces the best-first pass (the exhaustive pass gives
up after one choice), so the renewal machinery is exercised on trees whose law is known.
"""

from __future__ import annotations

import math
import signal
import sys
from fractions import Fraction

import pytest
from _enumeration_helpers import choice_distribution

from tests.mutants import unseen_bitvec
from vetdp import bitvector_domain, discrete_distance
from vetdp.engine.divergence import (
    Verdict,
    decide_bracket,
    max_divergence,
    max_divergence_bracket,
)
from vetdp.engine.enumerate import (
    EnumerationBudgetExceeded,
    Law,
    Raised,
    ReplayMismatch,
    enumerate_law,
    enumerate_paths,
    output_distribution,
)
from vetdp.engine.fingerprint import _stack_values
from vetdp.engine.timeout import DeadlineExceeded, deadline
from vetdp.impl import make_randomized_response, make_randomized_response_bitvec
from vetdp.sampling import primitives as P
from vetdp.sampling.primitives import sample_uniform_int_below
from vetdp.sampling.sources import current_source

BEST_FIRST = {"max_choices": 1}


# ------------------------------------------------------------------ raw bytes and the geometric buffer

def test_raw_byte_bernoulli_quarter_is_exact():
    law = enumerate_law(lambda _: P.random_bytes(1)[0] < 64, None)
    assert law.complete and law.stop_reason == "complete" and law.residual == 0
    assert law.dist == {True: Fraction(1, 4), False: Fraction(3, 4)}


def test_two_raw_bytes_mod_three_is_exact():
    # 65536 = 3 * 21845 + 1: residue 0 has one preimage more
    law = enumerate_law(lambda _: int.from_bytes(P.random_bytes(2), "big") % 3, None)
    assert law.dist == {0: Fraction(21846, 65536), 1: Fraction(21845, 65536), 2: Fraction(21845, 65536)}


def test_raw_byte_rejection_sampler_is_exact_through_renewal():
    def uniform3(_):
        while True:
            v = P.random_bytes(1)[0] & 3
            if v < 3:
                return v

    law = enumerate_law(uniform3, None)
    assert law.complete and law.renewals > 0
    assert law.dist == dict.fromkeys(range(3), Fraction(1, 3))


def _geometric_bernoulli(prob: float) -> bool:
    g = P.sample_geometric_buffer(P.BERNOULLI_BUFFER_BYTES)
    return g is not None and bool((P.expansion_bits(prob) >> (1080 - (g + 1))) & 1)


@pytest.mark.parametrize("prob", [0.3, 1 / 3, 5e-324])
def test_geometric_buffer_bernoulli_is_exact(prob):
    law = enumerate_law(_geometric_bernoulli, prob)
    assert law.complete
    assert law.dist == {k: v for k, v in {True: Fraction(prob), False: 1 - Fraction(prob)}.items() if v}


def _bitvec_truth(x, p_one=0.75, p_zero=0.25) -> dict:
    law = {(): Fraction(1)}
    for b in x:
        q = Fraction(p_one if b else p_zero)
        law = {y + (bit,): m * (q if bit else 1 - q) for y, m in law.items() for bit in (True, False)}
    return law


def test_geometric_buffer_bitvec_in_a_for_loop_is_exact_by_merging_states():
    def bitvec(x):
        out = []
        for b in x:  # the iterator's position and the pending out.append are read from the frame's stack
            out.append(_geometric_bernoulli(0.75 if b else 0.25))
        return tuple(out)

    law = enumerate_law(bitvec, (1, 0), budget=20_000, **BEST_FIRST)
    assert law.complete and law.renewals > 0
    assert law.dist == _bitvec_truth((1, 0))


def test_a_tree_whose_first_path_predicts_more_paths_than_the_budget_goes_best_first_at_once():
    # three coins of 1081 outcomes each: the odometer would need 1081**3 runs; Knuth's estimate from its
    # first run (the product of the branching factors) says so, and the merged best-first pass finishes
    domain = bitvector_domain(max_weight=1, length=3)
    variant = unseen_bitvec.coins_from_geometric_buffer_in_a_for_loop(domain, discrete_distance(), 5e-324)
    x = (True, False, False)
    law = enumerate_law(variant, x, budget=20_000)
    assert law.complete and law.dist == output_distribution(make_randomized_response_bitvec(
        domain, discrete_distance(), 5e-324), x)
    assert law.paths < 20_000  # without the estimate, the odometer alone spends the whole budget first


def test_geometric_buffer_bitvec_fed_by_a_generator_to_tuple_is_truncated_with_its_residual_stated():
    def bitvec(x):
        # tuple() holds the half-built report in C, out of the fingerprint's sight: no renewal, a stated residual
        return tuple(_geometric_bernoulli(0.75 if b else 0.25) for b in x)

    law = enumerate_law(bitvec, (1, 0, 1), budget=4_000)
    truth = _bitvec_truth((1, 0, 1))
    assert not law.complete and law.stop_reason == "budget" and law.renewals == 0
    assert 0 < law.residual < Fraction(1, 2**16)
    assert law.residual == 1 - sum(law.dist.values())
    for y, m in truth.items():
        lo, hi = law.bounds(y)
        assert lo <= m <= hi


@pytest.mark.parametrize("f", [5e-324, 0.5])
def test_geometric_buffer_rappor_variant_in_a_for_loop_has_the_exact_law_at_any_f(f):
    # sample_geometric_buffer over 135 bytes at subnormal f (1081 outcomes per coin); the loop keeps the
    # previous coin's `g` in a dead local, which the fingerprint leaves out
    domain = bitvector_domain(max_weight=1, length=2)
    variant = unseen_bitvec.coins_from_geometric_buffer_in_a_for_loop(domain, discrete_distance(), f)
    reference = make_randomized_response_bitvec(domain, discrete_distance(), f)
    x = (True, False)
    law = enumerate_law(variant, x, budget=20_000, **BEST_FIRST)
    assert law.complete and law.renewals > 0
    assert law.dist == output_distribution(reference, x)


def test_geometric_buffer_bitvec_written_as_statements_is_exact_by_merging_states():
    def bitvec(x):
        out = []
        i = 0
        while i < len(x):
            bit = _geometric_bernoulli(0.75 if x[i] else 0.25)
            out.append(bit)
            i += 1
        return tuple(out)

    law = enumerate_law(bitvec, (1, 0), budget=20_000)
    assert law.complete and law.dist == _bitvec_truth((1, 0))


# ------------------------------------------------------------------ rejection loops and their look-alikes

def _rr_by_rejection(x, t, p):
    if P.sample_bernoulli_float(p):
        return x
    while True:  # the lie: resample until different from the truth
        y = P.sample_uniform_int_below(t)
        if y != x:
            return y


def _rr_truth(x, t, p) -> dict:
    p = Fraction(p)
    return {y: p if y == x else (1 - p) / (t - 1) for y in range(t)}


@pytest.mark.parametrize("t,p", [(2, 0.5), (3, 0.5), (4, 0.3), (5, 0.9)])
def test_rejection_loop_rr_has_exactly_the_law_of_ordinary_rr(t, p):
    for x in range(t):
        law = enumerate_law(lambda v: _rr_by_rejection(v, t, p), x)
        assert law.complete and law.renewals > 0
        assert law.dist == _rr_truth(x, t, p)
        assert output_distribution(lambda v: _rr_by_rejection(v, t, p), x) == _rr_truth(x, t, p)


def test_rejection_loop_rr_matches_the_bundled_rr_law():
    m = make_randomized_response(["a", "b", "c"], 0.5)
    cats = ["a", "b", "c"]
    for i, c in enumerate(cats):
        law = enumerate_law(lambda v: _rr_by_rejection(v, 3, 0.5), i)
        assert {cats[y]: mass for y, mass in law.dist.items()} == output_distribution(m, c)


def test_a_local_waiting_on_the_stack_does_not_prevent_renewal():
    def shifted(x):
        offset = 10
        return offset + _rr_by_rejection(x, 3, 0.5)  # `offset` sits below the call on the value stack

    law = enumerate_law(shifted, 0)
    assert law.complete and law.renewals > 0
    assert law.dist == {10 + y: m for y, m in _rr_truth(0, 3, 0.5).items()}


def _capped_truth(x, t, cap) -> dict:
    stay = Fraction(1, t) ** cap
    return {y: stay if y == x else (1 - stay) / (t - 1) for y in range(t)}


def test_capped_retry_loop_is_not_a_renewal():
    def capped(x, t=3):
        tries = 0
        while tries < 3:
            y = P.sample_uniform_int_below(t)
            if y != x:
                return y
            tries += 1
        return x

    for options in ({}, BEST_FIRST):
        law = enumerate_law(capped, 1, **options)
        assert law.complete and law.dist == _capped_truth(1, 3, 3)
        assert law.dist != _rr_truth(1, 3, 0)


class _Counter:
    def __init__(self):
        self.n = 0


class _Slotted:
    __slots__ = ("n",)

    def __init__(self):
        self.n = 0


@pytest.mark.parametrize("make", [_Counter, _Slotted], ids=["dict-attribute", "slot"])
def test_loop_mutating_an_attribute_is_not_a_renewal(make):
    def capped(x, t=3):
        box = make()
        while True:
            if box.n >= 3:
                return x
            y = P.sample_uniform_int_below(t)
            if y != x:
                return y
            box.n += 1

    law = enumerate_law(capped, 0, **BEST_FIRST)
    assert law.complete and law.dist == _capped_truth(0, 3, 3)


_TRIES = [0]


def test_loop_mutating_a_global_is_not_a_renewal():
    def capped(x, t=3):
        _TRIES[0] = 0
        while True:
            if _TRIES[0] >= 3:
                return x
            y = P.sample_uniform_int_below(t)
            if y != x:
                return y
            _TRIES[0] += 1

    law = enumerate_law(capped, 2, **BEST_FIRST)
    assert law.complete and law.dist == _capped_truth(2, 3, 3)


def test_for_loop_with_equal_locals_is_not_a_renewal():
    def three_tries(_):
        for _v in (0, 0, 0):  # same locals every iteration; only the hidden iterator moves
            if P.sample_bernoulli_float(0.5):
                return "hit"
        return "miss"

    law = enumerate_law(three_tries, None, **BEST_FIRST)
    assert law.complete and law.dist == {"hit": Fraction(7, 8), "miss": Fraction(1, 8)}


ITERABLES = {
    "list": lambda: [7, 8, 9],
    "tuple": lambda: (7, 8, 9),
    "range": lambda: range(3),
    "long range": lambda: range(2**64, 2**64 + 3),
    "reversed list": lambda: reversed([7, 8, 9]),
    "str": lambda: "abc",
    "bytes": lambda: b"abc",
    "enumerate": lambda: enumerate([7, 8, 9]),
    "zip": lambda: zip([1, 2, 3], "abc", strict=True),
    "map": lambda: map(str, [7, 8, 9]),
    "filter": lambda: filter(None, [7, 8, 9]),
}


@pytest.mark.parametrize("kind", list(ITERABLES))
def test_for_loop_states_differing_only_in_the_remaining_items_are_not_merged(kind):
    make = ITERABLES[kind]

    def three_tries(_):
        for v in make():
            v = None  # noqa: F841 - the locals agree at every draw: only the iterator's position differs
            if P.sample_bernoulli_float(0.5):
                return "hit"
        return "miss"

    law = enumerate_law(three_tries, None, **BEST_FIRST)
    assert law.complete and law.dist == {"hit": Fraction(7, 8), "miss": Fraction(1, 8)}


@pytest.mark.parametrize("kind", list(ITERABLES))
def test_for_loop_states_with_equal_remaining_items_merge(kind):
    make = ITERABLES[kind]

    def count_hits(_):
        hits = 0
        for _v in make():
            hits += P.sample_bernoulli_float(0.5)  # `hits` waits on the stack during the draw
        return hits

    law = enumerate_law(count_hits, None, **BEST_FIRST)
    assert law.complete and law.renewals > 0  # (hit, miss) and (miss, hit) reach one state at the third draw
    assert law.dist == {0: Fraction(1, 8), 1: Fraction(3, 8), 2: Fraction(3, 8), 3: Fraction(1, 8)}


def test_list_iterator_state_includes_the_walked_list_as_it_is_now():
    def grow(_):
        items = [0]
        for _v in items:  # the body appends to the list being walked
            if len(items) < 3 and P.sample_bernoulli_float(0.5):
                items.append(0)
        return len(items)

    law = enumerate_law(grow, None, **BEST_FIRST)
    assert law.complete and law.dist == {1: Fraction(1, 2), 2: Fraction(1, 4), 3: Fraction(1, 4)}


def test_a_computed_value_waiting_on_the_stack_is_part_of_the_state():
    def pending(_):
        n = 1
        while True:
            # n's old value waits on the stack while n is already 0: only the stack tells iteration 1 from 2
            total = [n, (n := 0)][0] + P.sample_bernoulli_float(0.5)
            if total != 1:
                return total

    law = enumerate_law(pending, None, **BEST_FIRST)
    assert law.complete and law.renewals > 0
    assert law.dist == {2: Fraction(1, 2), 0: Fraction(1, 2)}


def test_a_dead_local_is_left_out_of_the_state():
    def retry(_):
        while True:
            a = P.sample_uniform_int_below(4)  # a's previous value (2 or 3) is never read again
            if a < 2:
                return a

    law = enumerate_law(retry, None, **BEST_FIRST)
    assert law.complete and law.dist == {0: Fraction(1, 2), 1: Fraction(1, 2)}
    assert law.states == 1  # the first draw (a unbound) and every retry (a = 2 or 3) are one state


def test_a_local_read_only_by_an_exception_handler_is_live():
    def third_failure(_):
        failures = 0
        while True:
            try:
                if P.sample_bernoulli_float(0.5):
                    raise ValueError("again")
                return "ok"
            except ValueError:
                if failures == 2:
                    return "third"
                failures += 1

    law = enumerate_law(third_failure, None, **BEST_FIRST)
    assert law.complete and law.dist == {"ok": Fraction(7, 8), "third": Fraction(1, 8)}


def test_code_reading_its_locals_by_name_keeps_every_local():
    def by_name(_):
        while True:
            if P.sample_bernoulli_float(0.5):
                return locals().get("seen", "first")
            seen = "again"  # noqa: F841 - read through locals() only

    law = enumerate_law(by_name, None, **BEST_FIRST)
    assert law.complete and law.dist == {"first": Fraction(1, 2), "again": Fraction(1, 2)}


def _stack_of_caller(depth):
    return _stack_values(sys._getframe(1), depth)


def test_stack_values_are_read_from_a_frame_suspended_in_a_python_call():
    def caller():
        items = [1]
        return (items, 5, _stack_of_caller(2)), items

    (_, _, stack), items = caller()
    assert stack is not None and stack[0] is items and stack[1] == 5

    def wrong_depth():
        return (1, _stack_of_caller(2))

    assert wrong_depth()[1] is None  # the depth the bytecode implies is 1: nothing is read


def test_stack_values_are_not_read_from_a_frame_suspended_in_a_c_call():
    def through_c():
        me = sys._getframe()
        return list(map(lambda _: _stack_values(me, 0), [0]))  # `list` (C) sits between the frames

    assert through_c() == [None]


def _rejection_coin() -> bool:
    while True:  # a fair coin from a uniform draw over three, retried on 2
        v = P.sample_uniform_int_below(3)
        if v < 2:
            return v == 1


def test_list_comprehension_of_rejection_coins_is_exact():
    def three_coins(_):
        return tuple([_rejection_coin() for _v in range(3)])  # the half-built list waits on the stack

    law = enumerate_law(three_coins, None, budget=3_000, **BEST_FIRST)
    assert law.complete and law.renewals > 0
    assert law.dist == {(a, b, c): Fraction(1, 8) for a in (False, True) for b in (False, True) for c in (False, True)}


def test_list_comprehension_with_a_closure_is_exact():
    def biased(_):
        weights = (1, 2)  # a cell of the outer function, a free variable of the comprehension

        def coin():
            while True:
                v = P.sample_uniform_int_below(4)
                if v < 3:
                    return v < weights[0]

        return tuple([coin() for _v in range(2)])

    law = enumerate_law(biased, None, budget=3_000, **BEST_FIRST)
    assert law.complete and law.renewals > 0
    p = {True: Fraction(1, 3), False: Fraction(2, 3)}
    assert law.dist == {(a, b): p[a] * p[b] for a in (False, True) for b in (False, True)}


def test_lambda_called_in_place_is_followed():
    def capped(_):
        n = 0
        while True:
            if (lambda: P.sample_bernoulli_float(0.5))():
                return n
            n = min(n + 1, 2)

    law = enumerate_law(capped, None, budget=3_000, **BEST_FIRST)
    assert law.complete and law.renewals > 0
    assert law.dist == {0: Fraction(1, 2), 1: Fraction(1, 4), 2: Fraction(1, 4)}


_TWENTY_LOW = tuple((v, Fraction(1, 20)) for v in range(0, 20))
_TWENTY_HIGH = tuple((v, Fraction(1, 20)) for v in (*range(1, 19), 20, 21))


def test_choice_points_differing_only_in_their_large_outcome_lists_are_not_merged():
    def pick_a_table(_):
        source = current_source()
        while True:
            low = P.sample_bernoulli_float(0.5)
            # `low` is dead after the next line: only the outcome list passed to branch() tells the rounds apart
            v = source.branch(_TWENTY_LOW if low else _TWENTY_HIGH)
            if v == 0:  # only in the low table: 1 in 20
                return "low"
            if v >= 20:  # only in the high table: 2 in 20
                return "high"

    law = enumerate_law(pick_a_table, None, **BEST_FIRST)
    assert law.complete and law.renewals > 0
    assert law.dist == {"low": Fraction(1, 3), "high": Fraction(2, 3)}


def test_callback_from_c_code_is_not_a_renewal():
    def step(_):
        return P.sample_bernoulli_float(0.5)

    def any_of_three(_):
        return any(map(step, (0, 0, 0)))  # `any` holds the map iterator in C

    law = enumerate_law(any_of_three, None, **BEST_FIRST)
    assert law.complete and law.dist == {True: Fraction(7, 8), False: Fraction(1, 8)}


def test_unbounded_non_renewal_loop_stops_with_a_stated_residual():
    def geometric(_):
        n = 0
        while P.sample_bernoulli_float(0.5):
            n += 1
        return n

    law = enumerate_law(geometric, None, budget=40)
    assert law.stop_reason == "budget" and not law.complete
    assert law.residual == 1 - sum(law.dist.values()) > 0
    for n, m in law.dist.items():
        assert m == Fraction(1, 2 ** (n + 1))
    target = Fraction(1, 2**20)
    law = enumerate_law(geometric, None, residual_target=target)
    assert law.stop_reason == "residual" and 0 < law.residual <= target


def test_loop_that_never_returns_but_draws_is_reported_as_diverging():
    def spin(_):
        while True:
            P.sample_bernoulli_float(0.5)

    law = enumerate_law(spin, None)
    assert law.stop_reason == "diverges" and law.residual == 1 and law.dist == {}


def test_mixed_exit_and_divergence():
    def half_spin(_):
        if P.sample_bernoulli_float(0.25):
            return "out"
        while True:
            P.sample_uniform_int_below(3)

    law = enumerate_law(half_spin, None)
    assert law.stop_reason == "diverges" and law.dist == {"out": Fraction(1, 4)} and law.residual == Fraction(3, 4)


# ------------------------------------------------------------------ budgets in work; time only as a safety net

def test_a_loop_without_choices_is_ended_by_the_callers_deadline_and_leaves_no_alarm():
    def forever(_):
        while True:
            pass

    with pytest.raises(DeadlineExceeded), deadline(0.3):
        enumerate_law(forever, None)  # no clock of its own: the caller's wall-clock limit passes through it
    assert signal.getitimer(signal.ITIMER_REAL)[0] == 0  # no alarm left behind


def test_a_drawing_loop_that_never_renews_ends_on_its_path_budget_with_the_same_law_every_time():
    def count(_):
        n = 0
        while True:  # the counter changes the state: no renewal, every path is new
            n += P.sample_uniform_int_below(2)

    first = enumerate_law(count, None, budget=300)
    assert first.stop_reason == "budget" and first.residual == 1 and first.paths == 1 + 300  # a 10_000-deep first run
    assert enumerate_law(count, None, budget=300) == first  # counted in work: the same Law on any machine


def test_a_run_deeper_than_max_depth_leaves_its_mass_residual():
    def deep(_):
        n = 0
        while n < 500 and P.sample_bernoulli_float(1 - 2**-20):  # about 500 choices on the likely path
            n += 1
        return n

    short = enumerate_law(deep, None, max_choices=1, max_depth=100, budget=1_000)
    assert not short.complete and short.stop_reason == "budget" and short.depth == 100
    assert short.residual > Fraction(1, 2)  # the likely path ran past 100 choices: its mass is unexplored
    assert enumerate_law(deep, None, max_choices=1, max_depth=1_000, budget=1_000).complete


def test_code_that_keeps_state_between_calls_raises_replay_mismatch():
    seen = {}

    def memo(x):  # the first answer for x is kept: replaying another choice finds no choice at all
        if x not in seen:
            seen[x] = P.sample_bernoulli_float(0.5)
        return seen[x]

    with pytest.raises(ReplayMismatch, match="sum to 3/2"):
        enumerate_law(memo, 0)
    assert not issubclass(ReplayMismatch, AssertionError)  # a finding about the code, not an engine assertion


def test_bad_arguments_are_rejected():
    with pytest.raises(ValueError, match="budget=0"):
        enumerate_law(lambda _: 0, None, budget=0)
    with pytest.raises(ValueError, match="max_depth=0"):
        enumerate_law(lambda _: 0, None, max_depth=0)
    with pytest.raises(ValueError, match="residual_target=2"):
        enumerate_law(lambda _: 0, None, residual_target=Fraction(2))


# ------------------------------------------------------------------ finite trees, both passes

def _mixed(_):
    a = P.sample_uniform_int_below(3)
    if a == 0:
        return ("a", P.sample_bernoulli_float(0.1))
    if a == 1 and P.sample_bernoulli_float(1 / 3):
        raise ValueError("odd")
    return ("b", P.sample_geometric_buffer(1))


@pytest.mark.parametrize("renewal", [True, False])
def test_finite_trees_give_the_same_law_in_both_passes(renewal):
    exhaustive = enumerate_law(_mixed, None)
    best_first = enumerate_law(_mixed, None, renewal=renewal, **BEST_FIRST)
    independent = {}
    for out, p in choice_distribution_with_raised(lambda: _mixed(None)).items():
        independent[out] = p
    assert exhaustive.complete and best_first.complete
    assert exhaustive.dist == best_first.dist == output_distribution(_mixed, None) == independent


def choice_distribution_with_raised(fn):
    def wrapped():
        try:
            return fn()
        except ValueError as e:
            return Raised("ValueError", str(e))

    return choice_distribution(wrapped)


def test_bundled_mechanisms_give_identical_laws():
    rr = make_randomized_response(["a", "b", "c"], 0.5)
    bv = make_randomized_response_bitvec(bitvector_domain(max_weight=1, length=3), discrete_distance(), 0.4)
    for m, x in [(rr, "a"), (rr, "zz"), (bv, (True, False, False))]:
        exact = output_distribution(m, x)
        assert enumerate_law(m, x).dist == exact
        assert enumerate_law(m, x, **BEST_FIRST).dist == exact


def test_output_distribution_still_raises_over_budget():
    def ten_coins(_):
        return [P.sample_bernoulli_float(0.5) for _ in range(10)]

    with pytest.raises(EnumerationBudgetExceeded, match="budget=100"):
        output_distribution(ten_coins, None, budget=100)


def test_enumerate_paths_refuses_an_unbounded_path_quickly():
    def spin():
        while True:
            P.sample_bernoulli_float(0.5)

    with pytest.raises(EnumerationBudgetExceeded, match="max_choices=50"):
        list(enumerate_paths(spin, max_choices=50))


def test_best_first_runs_start_in_non_increasing_probability():
    starts: list[Fraction] = []

    def tree(_):
        n = 0
        while P.sample_bernoulli_float(0.7):
            n += P.sample_uniform_int_below(3)
        return n

    law = enumerate_law(tree, None, budget=300, trace=lambda prefix, p: starts.append(p))
    assert len(starts) > 100
    assert all(a >= b for a, b in zip(starts, starts[1:], strict=False))
    assert starts[0] == 1 and law.residual > 0


# ------------------------------------------------------------------ decisions with a residual

def _rr_laws(t: int, p: float) -> dict:
    m = make_randomized_response(list(range(t)), p)
    return {x: enumerate_law(m, x) for x in range(t)}


def test_bracket_agrees_with_max_divergence_when_complete():
    laws = _rr_laws(3, 0.6)
    bracket = max_divergence_bracket(laws)
    md = max_divergence({x: law.dist for x, law in laws.items()})
    p = Fraction(0.6)
    assert bracket.lower == bracket.upper == md.ratio == p / ((1 - p) / 2)
    assert bracket.witness == md and bracket.exact
    pairs = [(0, 1), (1, 0)]
    assert max_divergence_bracket(laws, pairs).witness == max_divergence({x: law.dist for x, law in laws.items()},
                                                                       pairs)


def test_bracket_with_residual_bounds_the_ratio():
    exact = {"y": Fraction(1, 2), "z": Fraction(1, 2)}
    laws = {0: Law({"y": Fraction(3, 4)}, Fraction(1, 4), 1, False, "budget"),
            1: Law(exact, Fraction(0), 1, True, "complete")}
    bracket = max_divergence_bracket(laws, [(0, 1)])
    assert bracket.lower == Fraction(3, 2) and bracket.upper is None  # 0's unexplored mass may sit where 1 has none
    assert bracket.witness.y == "y" and bracket.residual == Fraction(1, 4)
    bracket = max_divergence_bracket(laws, [(1, 0)])
    # y: 1/2 over [3/4, 1]; z: 1/2 over [0, 1/4]
    assert bracket.lower == Fraction(2) and bracket.upper is None
    laws[0] = Law({"y": Fraction(3, 4), "z": Fraction(1, 8)}, Fraction(1, 8), 1, False, "budget")
    bracket = max_divergence_bracket(laws, [(1, 0)])
    assert bracket.upper == Fraction(4) and bracket.lower == Fraction(2)  # numerator exact: a finite upper bound


def test_decisions_with_a_residual():
    laws = {0: Law({"y": Fraction(3, 4)}, Fraction(1, 4), 1, False, "budget"),
            1: Law({"y": Fraction(1, 4), "z": Fraction(3, 4)}, Fraction(0), 1, True, "complete")}
    bracket = max_divergence_bracket(laws, [(0, 1)])
    assert bracket.lower == 3
    assert decide_bracket(math.log(3) - 1e-9, bracket).verdict is Verdict.UNSOUND
    undecided = decide_bracket(5.0, bracket)
    assert undecided.verdict is Verdict.UNDECIDED and "unexplored mass 1/4" in undecided.message
    complete = max_divergence_bracket({0: Law({"y": Fraction(3, 4), "z": Fraction(1, 4)}, Fraction(0), 1, True,
                                              "complete"), 1: laws[1]})
    assert complete.lower == complete.upper == 3
    assert decide_bracket(math.log(3) + 1e-9, complete).verdict is Verdict.SOUND
    assert decide_bracket(math.log(3) - 1e-9, complete).verdict is Verdict.UNSOUND
    impossible = {0: Law({"w": Fraction(1, 2)}, Fraction(1, 2), 1, False, "budget"), 1: laws[1]}
    assert decide_bracket(100.0, max_divergence_bracket(impossible, [(0, 1)])).verdict is Verdict.UNSOUND


def test_rejection_loop_rr_is_decided_sound_at_its_claim_and_unsound_below():
    t, p = 3, 0.5
    laws = {x: enumerate_law(lambda v: _rr_by_rejection(v, t, p), x) for x in range(t)}
    bracket = max_divergence_bracket(laws)
    assert bracket.exact and bracket.upper == Fraction(1, 2) / Fraction(1, 4)
    claim = math.log(2)
    ok = decide_bracket(math.nextafter(claim, math.inf), bracket)
    assert ok.verdict is Verdict.SOUND
    assert decide_bracket(math.nextafter(claim, 0), bracket).verdict is Verdict.UNSOUND


def _closure_rejection_rr(cats):
    t = len(cats)

    def function(x):
        while True:
            y = cats[sample_uniform_int_below(t)]  # a closure variable waits on the stack during the draw
            if y != x:
                return y

    return function


def test_rejection_loop_indexing_a_closure_list_is_exact():
    law = enumerate_law(_closure_rejection_rr(["a", "b", "c"]), "a")
    assert law.complete and law.renewals >= 1
    assert law.dist == {"b": Fraction(1, 2), "c": Fraction(1, 2)}


def test_closure_rebound_by_a_user_call_is_indexed_at_its_old_value():
    def function(x):
        cats = [0, 1, 2]

        def draw():
            nonlocal cats
            cats = cats[1:] + cats[:1]  # rotates the list the caller is about to index
            return sample_uniform_int_below(2)

        while True:
            y = cats[draw()]  # indexes the list loaded before draw() rebound `cats`: it waits on the stack
            if y != x:
                return y

    # round 1 indexes [0, 1, 2] at 0 or 1, round 2 indexes [1, 2, 0] at 0 or 1: never 0 again
    law = enumerate_law(function, 0, budget=2_000, **BEST_FIRST)
    assert law.complete and law.dist == {1: Fraction(3, 4), 2: Fraction(1, 4)}
    assert enumerate_law(function, 0, budget=2_000).dist == law.dist


def test_the_curve_clauses_say_undecided_when_the_laws_keep_a_residual():
    # a loop whose parity flips the report: the laws are known only up to a residual, so the accountant's curves
    # (privacy.rdp, privacy.pld, privacy.dominated) cannot be decided, and the report must say so, not leave them out
    import dataclasses

    from vetdp.engine.runner import RunConfig, check_measurement_spec
    from vetdp.engine.spec import find_spec
    from vetdp.impl import make_randomized_response_bool

    def make(prob, constant_time=False):
        m = make_randomized_response_bool(prob, constant_time)

        def function(x):
            n = 0
            while P.sample_bernoulli_float(0.5):
                n += 1
            y = m.function(x)
            return y if n % 2 == 0 else not y

        return dataclasses.replace(m, function=function)

    results = {r.check: r for r in check_measurement_spec(
        find_spec("randomized_response_bool"), make, RunConfig(budget=200),
        only_params={"prob": 0.75, "constant_time": False})}
    for clause in ("privacy.rdp", "privacy.pld", "privacy.dominated"):
        r = results[clause]
        assert r.status.value == "undecided" and "exact laws" in r.message and "unexplored mass" in r.message, r
