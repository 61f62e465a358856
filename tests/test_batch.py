"""Batch samplers and mechanism batches agree with the scalar forms.

Per cell: the batch Bernoulli answers exactly as the scalar variable-time sampler does on
the bytes that cell consumed. In distribution: batch outputs are compared with the EXACT
single-form probabilities (enumerated) by exact binomial tests at alpha = 1e-6, under
fixed seeds, so every run is the same run.
"""

from __future__ import annotations

from collections import Counter
from fractions import Fraction

import numpy as np
import pytest
import scipy.stats
from _enumeration_helpers import FixedBytesSource, bernoulli_reference, byte_distribution, choice_distribution

from vetdp.core.measurement import BitVectorDomain, DiscreteDistance, DomainError
from vetdp.impl import (
    make_k_rappor,
    make_randomized_response,
    make_randomized_response_bitvec,
    make_randomized_response_bool,
)
from vetdp.sampling import batch as B
from vetdp.sampling import primitives as P
from vetdp.sampling.sources import (
    BranchingSource,
    PathLimitExceeded,
    RandomSource,
    RecordingSource,
    SeededSource,
    use_source,
)

ALPHA = 1e-6  # per binomial test; seeds are fixed, so the outcome is deterministic
TINY = 5e-324


class ZeroHeavySource(RandomSource):
    """Deterministic bytes that are 0 about 98% of the time, to drive cells deep into the buffer."""

    def __init__(self, seed: int):
        self.inner = SeededSource(seed)

    def random_bytes(self, n: int) -> bytes:
        raw = self.inner.random_bytes(2 * n)
        return bytes(raw[2 * i + 1] if raw[2 * i] >= 251 else 0 for i in range(n))


# ------------------------------------------------------------------ (a) Bernoulli batch, per cell

BATCH_PROBS = [0.0, 1.0, 0.5, 0.3, 1 / 3, 1 - 2.0**-53, 2.0**-60, TINY, 1.2345678901234567e-310,
               2.2250738585072014e-308]


@pytest.mark.parametrize("chunk", [B.FIRST_ROUND_CHUNK, 7])
@pytest.mark.parametrize("source_kind", ["seeded", "zero-heavy"])
@pytest.mark.parametrize("prob", BATCH_PROBS)
def test_bernoulli_batch_each_cell_answers_as_scalar_on_its_bytes(prob, source_kind, chunk, monkeypatch):
    # chunk 7: the first round is read in many pieces, whose boundaries must not disturb the cells
    monkeypatch.setattr(B, "FIRST_ROUND_CHUNK", chunk)
    inner = SeededSource(11) if source_kind == "seeded" else ZeroHeavySource(11)
    rec = RecordingSource(inner)
    with use_source(rec):
        out = B.sample_bernoulli_batch(prob, 400, record=True)
    cells = B.BatchCellBytes.last
    assert out.dtype == np.bool_ and out.shape == (400,)
    assert sum(map(len, cells)) == rec.bytes_read
    for c, cell in enumerate(cells):
        src = FixedBytesSource(bytes(cell))
        with use_source(src):
            scalar = P.sample_bernoulli_float(prob, constant_time=False)
        assert src.position == len(cell), f"cell {c}: the scalar form read {src.position} of {len(cell)} bytes"
        assert bool(out[c]) == scalar == bernoulli_reference(prob, bytes(cell)), (c, bytes(cell))


def test_bernoulli_batch_zero_heavy_source_reaches_deep_cells():
    # the per-cell test above is only as good as the depths it reaches
    with use_source(ZeroHeavySource(11)):
        B.sample_bernoulli_batch(TINY, 400, record=True)
    lengths = [len(c) for c in B.BatchCellBytes.last]
    assert max(lengths) == 135 and min(lengths) == 1


def test_bernoulli_batch_count_zero_reads_nothing():
    rec = RecordingSource(SeededSource(0))
    with use_source(rec):
        assert B.sample_bernoulli_batch(0.5, 0).shape == (0,)
    assert rec.bytes_read == 0


@pytest.mark.parametrize("prob,count,exc", [
    pytest.param(float("nan"), 3, ValueError, id="nan-prob"),
    pytest.param(1.5, 3, ValueError, id="prob-above-one"),
    pytest.param("0.5", 3, TypeError, id="str-prob"),
    pytest.param(0.5, -1, ValueError, id="negative-count"),
    pytest.param(0.5, True, ValueError, id="bool-count"),
    pytest.param(0.5, 2.0, ValueError, id="float-count"),
])
def test_bernoulli_batch_bad_arguments_raise_before_reading(prob, count, exc):
    rec = RecordingSource(SeededSource(0))
    with use_source(rec), pytest.raises(exc):
        B.sample_bernoulli_batch(prob, count)
    assert rec.bytes_read == 0


def _independent(law: dict, count: int) -> dict:
    """The law of ``count`` independent draws from ``law``, as tuples."""
    out = {(): Fraction(1)}
    for _ in range(count):
        out = {t + (v,): p * q for t, p in out.items() for v, q in law.items() if q}
    return out


@pytest.mark.parametrize("prob", [0.0, 1.0, 0.3, TINY, 1 - 2.0**-53])
def test_bernoulli_batch_enumerates_to_independent_scalar_laws(prob):
    # the engine's source (branching over the primitives' outcomes): the exact law of the batch, not a refusal
    law = choice_distribution(lambda: tuple(B.sample_bernoulli_batch(prob, 3).tolist()))
    assert law == _independent({True: Fraction(prob), False: 1 - Fraction(prob)}, 3)


def test_bernoulli_batch_byte_algorithm_enumerates_to_the_same_law():
    # branching over bytes (65,536 paths): the batch's own byte algorithm, two cells, has the product law too
    law = byte_distribution(lambda: tuple(B.sample_bernoulli_batch(0.75, 2).tolist()))
    assert law == _independent({True: Fraction(3, 4), False: Fraction(1, 4)}, 2)


def test_uniform_batch_enumerates_to_independent_uniform_laws():
    law = choice_distribution(lambda: tuple(B.sample_uniform_int_below_batch(3, 2).tolist()))
    assert law == _independent({v: Fraction(1, 3) for v in range(3)}, 2)
    assert choice_distribution(lambda: tuple(B.sample_uniform_int_below_batch(1, 4).tolist())) == {(0,) * 4: 1}
    # n >= 2**20: the int64 array fixes a lazily drawn value, 2**40 values: the run halts at the engine's path
    # limit (a budget the engine reports), never with an exception recorded as the code's outcome
    source = BranchingSource()
    with use_source(source), pytest.raises(PathLimitExceeded):
        B.sample_uniform_int_below_batch(2**40, 1)
    assert isinstance(source.halted, PathLimitExceeded)


# ------------------------------------------------------------------ (b) first-set-bit table

def test_first_set_bit_table_matches_scalar_definition_for_all_bytes():
    for b in range(256):
        expected = next((j + 1 for j in range(8) if (b >> (7 - j)) & 1), 0)
        assert int(B._FIRST_BIT[b]) == expected, b
        with use_source(FixedBytesSource(bytes([b]))):
            geometric = P.sample_geometric_buffer(1)
        assert (0 if geometric is None else geometric + 1) == expected, b


# ------------------------------------------------------------------ (c) uniform batch

def _replay_uniform_batch(n: int, count: int, chunks: list[bytes]) -> tuple[list[int], list[bytes]]:
    """What the scalar attempts give on the chunks the batch read: rounds over pending cells."""
    width = P.uniform_attempt_bytes(n)
    out: list[int | None] = [None] * count
    per_cell = [b""] * count
    pending = list(range(count))
    for chunk in chunks:
        assert len(chunk) == width * len(pending)
        still = []
        for j, c in enumerate(pending):
            piece = chunk[j * width:(j + 1) * width]
            per_cell[c] += piece
            v = P.uniform_attempt(n, piece)
            if v is None:
                still.append(c)
            else:
                out[c] = v
        pending = still
    assert not pending
    return out, per_cell


@pytest.mark.parametrize("n", [2, 3, 7, 129, 256, 257, 1000, 2**31 + 1, 2**62])
def test_uniform_batch_equals_scalar_attempts_on_the_same_bytes(n):
    count = 300
    rec = RecordingSource(SeededSource(n))
    with use_source(rec):
        out = B.sample_uniform_int_below_batch(n, count)
    assert out.dtype == np.int64 and out.shape == (count,)
    expected, per_cell = _replay_uniform_batch(n, count, rec.chunks)
    assert out.tolist() == expected
    for c in range(0, count, 7):
        with use_source(FixedBytesSource(per_cell[c])):
            assert P.sample_uniform_int_below(n) == expected[c]


def test_uniform_batch_n_one_reads_nothing():
    rec = RecordingSource(SeededSource(0))
    with use_source(rec):
        assert B.sample_uniform_int_below_batch(1, 5).tolist() == [0] * 5
    assert rec.bytes_read == 0


def test_uniform_batch_chi_square_at_fixed_seed():
    # alpha = 1e-6; seed fixed, so this is one deterministic draw
    with use_source(SeededSource(2024)):
        out = B.sample_uniform_int_below_batch(7, 70_000)
    counts = np.bincount(out, minlength=7)
    assert counts.sum() == 70_000 and len(counts) == 7
    assert scipy.stats.chisquare(counts).pvalue > ALPHA


@pytest.mark.parametrize("n,exc", [
    pytest.param(0, ValueError, id="zero"), pytest.param(-3, ValueError, id="negative"),
    pytest.param(2.0, TypeError, id="float"), pytest.param(True, TypeError, id="bool"),
    pytest.param(2**62 + 1, ValueError, id="too-large"),
])
def test_uniform_batch_bad_n_raises(n, exc):
    with pytest.raises(exc, match="n="):
        B.sample_uniform_int_below_batch(n, 3)


# ------------------------------------------------------------------ (d) mechanism batches

def _bitvec(m=1, k=3, f=0.5):
    return make_randomized_response_bitvec(BitVectorDomain(max_weight=m, length=k), DiscreteDistance(), f)


BAD_BATCHES = [
    # (id, measurement factory, bad single input, batch containing it, exception both raise)
    ("bool-int", lambda: make_randomized_response_bool(0.75), 2, [True, 2, False], TypeError),
    ("bool-str", lambda: make_randomized_response_bool(0.75), "True", [True, "True"], TypeError),
    ("bool-None", lambda: make_randomized_response_bool(0.75), None, [None, True], TypeError),
    ("bool-nested", lambda: make_randomized_response_bool(0.75), [True], [[True], [False]], TypeError),
    ("rr-int-for-str", lambda: make_randomized_response(["a", "b", "c"], 0.5), 1, ["a", 1], TypeError),
    ("rr-None", lambda: make_randomized_response(["a", "b", "c"], 0.5), None, ["b", None], TypeError),
    ("rr-bool-for-int", lambda: make_randomized_response([1, 2, 3], 0.5), True, [1, True], TypeError),
    ("bitvec-too-many-bits", _bitvec, (1, 1, 0), [(0, 0, 1), (1, 1, 0)], DomainError),
    ("bitvec-wrong-length", _bitvec, (1, 0), [(1, 0)], DomainError),
    ("bitvec-value-2", _bitvec, (2, 0, 0), [(0, 0, 0), (2, 0, 0)], DomainError),
    ("bitvec-half", _bitvec, (0.5, 0, 0), [(0.5, 0, 0)], DomainError),
    ("k-rappor-too-many-bits",
     lambda: make_k_rappor(BitVectorDomain(max_weight=1, length=3), DiscreteDistance(), 1.0),
     (0, 1, 1), [(0, 1, 1)], DomainError),
]


@pytest.mark.parametrize("make,single,rows,exc", [pytest.param(*case[1:], id=case[0]) for case in BAD_BATCHES])
def test_mechanism_batch_rejects_bad_input_before_any_byte_like_single_form(make, single, rows, exc):
    meas = make()
    for call, arg in ((meas, single), (meas.batch, rows)):
        rec = RecordingSource(SeededSource(0))
        with use_source(rec), pytest.raises(exc):
            call(arg)
        assert rec.bytes_read == 0, f"{call} read {rec.bytes_read} bytes before rejecting {arg!r}"


def test_rr_bool_batch_of_no_values_is_empty():
    meas = make_randomized_response_bool(0.75)
    assert meas.batch([]).tolist() == []
    assert make_randomized_response(["a", "b"], 0.75).batch([]) == []


def _assert_frequencies_match(observed: Counter, n: int, exact: dict) -> None:
    unexpected = set(observed) - set(exact)
    assert not unexpected, f"batch produced outputs the single form never does: {unexpected}"
    assert sum(exact.values()) == 1
    for y, p in exact.items():
        test = scipy.stats.binomtest(observed.get(y, 0), n, float(p))
        assert test.pvalue > ALPHA, f"output {y!r}: {observed.get(y, 0)}/{n} vs exact {p} (p-value {test.pvalue})"


N = 20_000


@pytest.mark.parametrize("prob", [0.75, 0.5, 0.9])
@pytest.mark.parametrize("truth", [True, False])
def test_rr_bool_batch_matches_exact_single_form_distribution(prob, truth):
    meas = make_randomized_response_bool(prob)
    exact = choice_distribution(lambda: meas(truth))
    assert exact[truth] == Fraction(prob)
    with use_source(SeededSource(f"rr-bool-{prob}-{truth}")):
        out = meas.batch([truth] * N)
    _assert_frequencies_match(Counter(bool(v) for v in out), N, exact)


@pytest.mark.parametrize("truth", ["a", "c", "outside"])
def test_categorical_rr_batch_matches_exact_single_form_distribution(truth):
    meas = make_randomized_response(["a", "b", "c"], 0.5)
    exact = choice_distribution(lambda: meas(truth))
    with use_source(SeededSource(f"rr-{truth}")):
        out = meas.batch([truth] * N)
    _assert_frequencies_match(Counter(out), N, exact)


def test_categorical_rr_batch_mixed_inputs_keep_their_order():
    meas = make_randomized_response(["a", "b", "c"], 0.9)
    inputs = ["a", "b", "c"] * (N // 3)
    with use_source(SeededSource("mixed")):
        out = meas.batch(inputs)
    for truth in ("a", "b", "c"):
        exact = choice_distribution(lambda truth=truth: meas(truth))
        column = Counter(o for i, o in zip(inputs, out, strict=True) if i == truth)
        _assert_frequencies_match(column, N // 3, exact)


@pytest.mark.parametrize("make,row", [
    pytest.param(lambda: _bitvec(1, 3, 0.5), (1, 0, 0), id="bitvec-one-hot"),
    pytest.param(lambda: _bitvec(2, 3, 0.25), (0, 0, 0), id="bitvec-zeros"),
    pytest.param(lambda: make_k_rappor(BitVectorDomain(max_weight=1, length=3), DiscreteDistance(), 1.0),
                 (0, 1, 0), id="k-rappor"),
])
def test_bitvec_batch_matches_exact_single_form_distribution(make, row):
    meas = make()
    exact = choice_distribution(lambda: meas(row))
    with use_source(SeededSource(f"bitvec-{row}")):
        out = meas.batch(np.array([row] * N))
    assert out.shape == (N, len(row)) and out.dtype == np.bool_
    _assert_frequencies_match(Counter(tuple(bool(b) for b in r) for r in out), N, exact)
