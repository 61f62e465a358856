"""Sampler primitives checked one level down: exact distributions over every byte path.

The byte-level algorithms are enumerated over all byte paths (each byte 1/256) and the
resulting probabilities compared EXACTLY with the specifications: P[True] = Fraction(prob)
for the Bernoulli sampler, 2**-(i+1) for the geometric buffer, 1/n for uniform integers.
"""

from __future__ import annotations

import asyncio
import math
import threading
from fractions import Fraction

import pytest
from _enumeration_helpers import (
    FixedBytesSource,
    bernoulli_reference,
    byte_distribution,
    choice_distribution,
    enumerate_runs,
)
from hypothesis import example, given, settings
from hypothesis import strategies as st

from vetdp.sampling import primitives as P
from vetdp.sampling.sources import (
    BranchingSource,
    RecordingSource,
    SeededSource,
    SystemSource,
    current_source,
    use_source,
)

TINY = 5e-324
SUBNORMAL = 1.2345678901234567e-310  # a random-looking subnormal
BERNOULLI_PROBS = [0.0, 1.0, 0.5, 0.1, 1 / 3, 2.0**-60, TINY, 2.2250738585072014e-308, SUBNORMAL, 1 - 2.0**-53]


# ------------------------------------------------------------------ the enumerator itself

def test_byte_enumeration_visits_every_path_once_with_exact_probability():
    def fn():
        first = P.sample_geometric_buffer(1)
        return first, (P.sample_uniform_int_below(3) if first is None else None)

    runs = enumerate_runs(fn, lambda prefix: BranchingSource(prefix, max_choices=2, branch_bytes=True))
    paths = [path for path, _, _ in runs]
    assert len(paths) == len(set(paths)) == 255 + 256
    assert sum(p for _, p, _ in runs) == 1
    assert {path for path in paths if len(path) == 1} == {(b,) for b in range(1, 256)}


# ------------------------------------------------------------------ (a) Bernoulli, by bytes

def _last_set_bit(prob: float) -> int:
    """1-based position L of the last set bit of prob = Σ b_i 2**-i (0 for 0 and 1)."""
    return 0 if prob in (0.0, 1.0) else Fraction(prob).denominator.bit_length() - 1


def _assert_bernoulli_byte_paths_exact(prob: float) -> None:
    runs = enumerate_runs(lambda: P.sample_bernoulli_float(prob, constant_time=False),
                          lambda prefix: BranchingSource(prefix, branch_bytes=True))
    p_true = sum((p for _, p, result in runs if result), Fraction(0))
    assert p_true == Fraction(prob)
    assert sum(p for _, p, _ in runs) == 1
    # no path reads beyond the byte holding prob's last set bit
    assert max(len(path) for path, _, _ in runs) == (_last_set_bit(prob) + 7) // 8


@pytest.mark.parametrize("prob", BERNOULLI_PROBS,
                         ids=["zero", "one", "half", "tenth", "third", "2^-60", "tiny", "min-normal", "subnormal",
                              "1-2^-53"])
def test_bernoulli_variable_time_byte_paths_give_prob_exactly(prob):
    _assert_bernoulli_byte_paths_exact(prob)


short_expansions = st.builds(lambda m, e: m / 2**e, st.integers(0, 2**40), st.integers(40, 64)).filter(
    lambda x: x <= 1.0)


@settings(max_examples=30, deadline=None, derandomize=True)
@given(prob=short_expansions)
def test_bernoulli_variable_time_byte_paths_hypothesis_short_expansions(prob):
    _assert_bernoulli_byte_paths_exact(prob)


@pytest.mark.deep
@settings(max_examples=60, deadline=None, derandomize=True)
@given(prob=st.floats(min_value=0.0, max_value=1.0))
def test_bernoulli_variable_time_byte_paths_hypothesis_deep(prob):
    _assert_bernoulli_byte_paths_exact(prob)


@pytest.mark.parametrize("prob", [0.1, 1 / 3, 0.75, 1 - 2.0**-53, 2.0**-14 + 2.0**-16])
def test_bernoulli_constant_time_form_over_all_two_byte_buffers_truncates_prob(prob):
    # with a 16-bit buffer, P[True] is prob's expansion cut after bit 16 -- every buffer tried
    total = sum(P.bernoulli_from_bytes(prob, bytes([a, b])) for a in range(256) for b in range(256))
    assert Fraction(total, 2**16) == Fraction(math.floor(Fraction(prob) * 2**16), 2**16)


# ------------------------------------------------------------------ (b) uniform integers, by bytes

@pytest.mark.parametrize("n", [1, 2, 3, 5, 129, 255, 256, 257, 300, 40000, 65536])
def test_uniform_attempt_every_value_has_equally_many_preimages(n):
    width = P.uniform_attempt_bytes(n)
    bits = (n - 1).bit_length()
    counts: dict = {}
    for raw in range(256**width):
        v = P.uniform_attempt(n, raw.to_bytes(width, "big"))
        counts[v] = counts.get(v, 0) + 1
    per_value = 2 ** (8 * width - bits)
    assert {v: c for v, c in counts.items() if v is not None} == dict.fromkeys(range(n), per_value)
    assert counts.get(None, 0) == 256**width - n * per_value
    assert n * per_value * 2 > 256**width  # an attempt succeeds with probability > 1/2


@pytest.mark.parametrize("n,attempts", [(3, 2), (5, 2), (200, 2), (300, 1)])
def test_uniform_int_below_byte_paths_are_uniform_within_attempts(n, attempts):
    # paths cut after `attempts` attempts: every value has the same exact mass, and the
    # unfinished mass is the rejection probability to the power `attempts`
    width = P.uniform_attempt_bytes(n)
    dist = byte_distribution(lambda: P.sample_uniform_int_below(n), max_bytes=attempts * width)
    unfinished = dist.pop("<limit>")
    reject = 1 - Fraction(n, 2 ** (n - 1).bit_length())
    assert unfinished == reject**attempts
    assert set(dist) == set(range(n))
    assert len(set(dist.values())) == 1
    assert sum(dist.values()) == 1 - unfinished


def test_uniform_int_below_one_reads_no_bytes():
    rec = RecordingSource(SeededSource(0))
    with use_source(rec):
        assert P.sample_uniform_int_below(1) == 0
    assert rec.bytes_read == 0


# ------------------------------------------------------------------ (c) geometric buffer, by bytes

@pytest.mark.parametrize("constant_time", [False, True], ids=["variable", "constant"])
@pytest.mark.parametrize("buffer_len", [1, 2])
def test_geometric_buffer_byte_paths_give_exact_distribution(buffer_len, constant_time):
    dist = byte_distribution(lambda: P.sample_geometric_buffer(buffer_len, constant_time))
    bits = 8 * buffer_len
    expected = {i: Fraction(1, 2 ** (i + 1)) for i in range(bits)}
    expected[None] = Fraction(1, 2**bits)
    assert dist == expected


@pytest.mark.parametrize("buffer_len", [1, 3, 17])
def test_geometric_buffer_constant_time_reads_every_byte(buffer_len):
    rec = RecordingSource(FixedBytesSource(bytes([0x40]) + bytes(buffer_len - 1)))
    with use_source(rec):
        assert P.sample_geometric_buffer(buffer_len, constant_time=True) == 1
    assert rec.bytes_read == buffer_len


# ------------------------------------------------------------------ (d) constant vs variable time

buffers = st.builds(
    lambda zeros, tail: bytes(zeros) + tail[zeros:],
    st.integers(0, P.BERNOULLI_BUFFER_BYTES),
    st.binary(min_size=P.BERNOULLI_BUFFER_BYTES, max_size=P.BERNOULLI_BUFFER_BYTES),
)
probs = st.one_of(st.floats(min_value=0.0, max_value=1.0), st.sampled_from(BERNOULLI_PROBS),
                  st.integers(1, 2**52 - 1).map(lambda m: m * TINY))


def _run(prob: float, buffer: bytes, constant_time: bool) -> tuple[bool, int]:
    rec = RecordingSource(FixedBytesSource(buffer))
    with use_source(rec):
        answer = P.sample_bernoulli_float(prob, constant_time=constant_time)
    return answer, rec.bytes_read


@settings(max_examples=800, deadline=None, derandomize=True)
@given(prob=probs, buffer=buffers)
@example(prob=TINY, buffer=bytes(134) + b"\x20")  # bit 1075: beyond every float's expansion
@example(prob=TINY, buffer=bytes(134) + b"\x40")  # bit 1074 = 8*134 + 2: TINY's only set bit
@example(prob=1.0, buffer=bytes(135))
@example(prob=0.5, buffer=bytes(135))
def test_bernoulli_constant_and_variable_time_agree_on_the_same_bytes(prob, buffer):
    ct_answer, ct_read = _run(prob, buffer, constant_time=True)
    vt_answer, vt_read = _run(prob, buffer, constant_time=False)
    assert ct_read == P.BERNOULLI_BUFFER_BYTES
    first_nonzero = next((i + 1 for i, b in enumerate(buffer) if b), P.BERNOULLI_BUFFER_BYTES)
    # the variable-time form stops at the first non-zero byte or after prob's last set bit
    assert vt_read == min(first_nonzero, (_last_set_bit(prob) + 7) // 8)
    assert ct_answer == vt_answer == bernoulli_reference(prob, buffer)


def test_bernoulli_tiny_prob_answers_true_only_at_bit_1074():
    # bit 1074 = 8*134 + 2 is the second bit (0x40) of byte 134
    for constant_time in (True, False):
        assert _run(TINY, bytes(134) + b"\x40", constant_time) == (True, 135)
        assert _run(TINY, bytes(134) + b"\x80", constant_time)[0] is False
        assert _run(TINY, bytes(134) + b"\x20", constant_time)[0] is False
        assert _run(TINY, bytes(133) + b"\x01\x40", constant_time)[0] is False


# ------------------------------------------------------------------ (e) mechanism-level branching

@pytest.mark.parametrize("prob", BERNOULLI_PROBS)
def test_bernoulli_under_branching_source_branches_with_exact_probability(prob):
    dist = choice_distribution(lambda: P.sample_bernoulli_float(prob))
    expected = {True: Fraction(prob), False: 1 - Fraction(prob)}
    assert dist == {k: v for k, v in expected.items() if v}


@pytest.mark.parametrize("n", [1, 2, 3, 7, 100])
def test_uniform_int_below_under_branching_source_is_one_over_n(n):
    assert choice_distribution(lambda: P.sample_uniform_int_below(n)) == dict.fromkeys(range(n), Fraction(1, n))


def test_geometric_buffer_under_branching_source_is_exact():
    expected = {i: Fraction(1, 2 ** (i + 1)) for i in range(16)} | {None: Fraction(1, 2**16)}
    assert choice_distribution(lambda: P.sample_geometric_buffer(2)) == expected


def test_random_bytes_under_branching_source_branches_over_every_byte():
    assert choice_distribution(lambda: P.random_bytes(1)) == {bytes([b]): Fraction(1, 256) for b in range(256)}
    two = choice_distribution(lambda: P.random_bytes(2))
    assert len(two) == 256**2 and set(two.values()) == {Fraction(1, 256**2)}


# ------------------------------------------------------------------ (f) sources and contexts

def test_seeded_source_is_reproducible_and_chunking_invariant():
    a, b = SeededSource(7), SeededSource(7)
    whole = a.random_bytes(1000)
    pieces = b.random_bytes(1) + b.random_bytes(31) + b.random_bytes(500) + b.random_bytes(468)
    assert whole == pieces
    assert len(set(whole)) > 200


@pytest.mark.parametrize("s1,s2", [(1, 2), (0, -1), ("a", "b"), (b"x", b"y"), (255, 256)])
def test_seeded_source_different_seeds_differ(s1, s2):
    assert SeededSource(s1).random_bytes(64) != SeededSource(s2).random_bytes(64)


def test_system_source_is_the_default():
    assert isinstance(current_source(), SystemSource)
    assert len(P.random_bytes(16)) == 16


def test_use_source_restores_previous_source_even_on_error():
    outer = SeededSource(1)
    with use_source(outer):
        with pytest.raises(RuntimeError), use_source(SeededSource(2)):
            raise RuntimeError
        assert current_source() is outer
    assert isinstance(current_source(), SystemSource)


def test_use_source_rejects_non_sources():
    with pytest.raises(TypeError, match="source="), use_source(object()):
        pass


def test_use_source_is_invisible_to_other_threads():
    seen = []
    with use_source(SeededSource(3)):
        thread = threading.Thread(target=lambda: seen.append(current_source()))
        thread.start()
        thread.join()
    assert isinstance(seen[0], SystemSource)


def test_use_source_is_local_to_each_asyncio_task():
    async def worker(seed: int, gate: asyncio.Event, other: asyncio.Event) -> list:
        source = SeededSource(seed)
        observed = []
        with use_source(source):
            gate.set()
            await other.wait()  # the other task is inside its own use_source now
            observed.append(current_source() is source)
            await asyncio.sleep(0)
            observed.append(current_source() is source)
        observed.append(isinstance(current_source(), SystemSource))
        return observed

    async def main():
        e1, e2 = asyncio.Event(), asyncio.Event()
        return await asyncio.gather(worker(1, e1, e2), worker(2, e2, e1))

    assert asyncio.run(main()) == [[True, True, True], [True, True, True]]


# ------------------------------------------------------------------ (g) validation

@pytest.mark.parametrize("prob,exc", [
    pytest.param(math.nan, ValueError, id="nan"),
    pytest.param(-0.1, ValueError, id="negative"),
    pytest.param(1.5, ValueError, id="above-one"),
    pytest.param(math.inf, ValueError, id="inf"),
    pytest.param("0.5", TypeError, id="str"),
    pytest.param(True, TypeError, id="bool"),
    pytest.param(None, TypeError, id="None"),
])
@pytest.mark.parametrize("constant_time", [False, True])
def test_bernoulli_bad_prob_raises_before_reading(prob, exc, constant_time):
    rec = RecordingSource(SeededSource(0))
    with use_source(rec), pytest.raises(exc, match="prob=") as info:
        P.sample_bernoulli_float(prob, constant_time)
    assert repr(prob) in str(info.value)
    assert rec.bytes_read == 0


@pytest.mark.parametrize("constant_time", [1, 0, "yes", None])
def test_bernoulli_non_bool_constant_time_raises(constant_time):
    with pytest.raises(TypeError, match="constant_time="):
        P.sample_bernoulli_float(0.5, constant_time)


@pytest.mark.parametrize("n,exc", [
    pytest.param(0, ValueError, id="zero"),
    pytest.param(-1, ValueError, id="negative"),
    pytest.param(2.5, TypeError, id="float"),
    pytest.param(2.0, TypeError, id="integral-float"),
    pytest.param(True, TypeError, id="bool"),
    pytest.param("3", TypeError, id="str"),
])
def test_uniform_int_below_bad_n_raises_before_reading(n, exc):
    rec = RecordingSource(SeededSource(0))
    with use_source(rec), pytest.raises(exc, match="n=") as info:
        P.sample_uniform_int_below(n)
    assert repr(n) in str(info.value)
    assert rec.bytes_read == 0


@pytest.mark.parametrize("buffer_len", [0, -1, True, 1.0])
def test_geometric_buffer_bad_length_raises(buffer_len):
    with pytest.raises(ValueError, match="buffer_len="):
        P.sample_geometric_buffer(buffer_len)


@pytest.mark.parametrize("n", [-1, True, 1.5])
def test_random_bytes_bad_count_raises(n):
    with pytest.raises(ValueError, match="n="):
        P.random_bytes(n)


@pytest.mark.parametrize("n", [P.MAX_RANDOM_BYTES + 1, 10**12])
def test_random_bytes_beyond_one_gib_is_refused_naming_n_before_allocating(n):
    """Issue 24: random_bytes(10**12) raised a MemoryError with an empty message."""
    with pytest.raises(ValueError, match=rf"n={n} must be an int in \[0, {P.MAX_RANDOM_BYTES}\]"):
        P.random_bytes(n)
