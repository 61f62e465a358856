"""RAPPOR's encoding and two-stage randomization (impl/rappor.py): pinned hashes re-derived with hashlib, exact laws
against brute force written here, the privacy maps from both sides, batch forms, and mutants rejected by the engine
on the clause their defect breaks. The client (secrets, lasting permanent responses) is tested in
tests/test_rappor_client.py."""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import strategies as st

from tests.mutants import rappor_mutants as mut
from vetdp.arith import rounding as R
from vetdp.core.measurement import BitVectorDomain, DomainError, bitvector_domain, discrete_distance
from vetdp.engine.divergence import Verdict, compare_claim
from vetdp.engine.enumerate import output_distribution
from vetdp.engine.runner import RunConfig, check_measurement_spec, evaluate_params
from vetdp.engine.spec import find_spec
from vetdp.impl import rappor
from vetdp.impl.rappor import (
    RAPPOR_EPSILON_ONE,
    assign_cohort,
    assign_cohorts,
    bloom_filter,
    bloom_filter_matrix,
    bloom_positions,
    make_rappor_report,
    make_rappor_reports,
    rappor_instantaneous_batch,
    rappor_permanent_batch,
)
from vetdp.sampling.sources import RandomSource, SeededSource, use_source

DD = discrete_distance()


# ------------------------------------------------------------------ encoding

def _positions_by_hand(value: bytes, cohort: int, k: int, h: int) -> tuple[int, ...]:
    """Bit positions re-derived from the documented layout with hashlib: 64-bit big-endian words of SHA-256 blocks
    (tag, cohort 8 bytes, block 4 bytes, length 8 bytes, value), each mod k; the test asserts that no word is
    rejected (a chance < k/2**64 each), so the i-th word gives position i."""
    words = []
    for block in range((h + 3) // 4):
        message = (b"vetdp-rappor-bloom-v1" + cohort.to_bytes(8, "big") + block.to_bytes(4, "big")
                   + len(value).to_bytes(8, "big") + value)
        digest = hashlib.sha256(message).digest()
        words += [int.from_bytes(digest[j:j + 8], "big") for j in range(0, 32, 8)]
    assert all(w < 2**64 - 2**64 % k for w in words[:h])
    return tuple(w % k for w in words[:h])


@pytest.mark.parametrize("value,cohort,k,h,expected", [
    ("abc", 0, 16, 2, (2, 1)),
    ("hello world", 7, 100, 3, (48, 58, 80)),
    (b"\xff\x00", 2**64 - 1, 128, 2, (42, 100)),
    ("x", 1, 1000, 6, (504, 395, 837, 426, 953, 411)),  # two SHA-256 blocks
], ids=["abc", "hello-k100", "bytes-max-cohort", "two-blocks"])
def test_bloom_positions_pinned_and_rederived_with_hashlib(value, cohort, k, h, expected):
    data = value.encode() if isinstance(value, str) else value
    assert bloom_positions(value, cohort, k, h) == expected
    assert _positions_by_hand(data, cohort, k, h) == expected
    bits = bloom_filter(value, cohort, k, h)
    assert bits == tuple(j in expected for j in range(k))


@pytest.mark.parametrize("value,cohort,k,h", [("V_1", 0, 128, 2), ("v17", 63, 32, 1), (b"\xff\x00", 2**32 - 1, 256, 16),
                                            ("abc", 5, 100, 3)], ids=["map-csv", "demo", "k256-h16", "k100"])
def test_md5_positions_are_the_references_bytes_mod_k(value, cohort, k, h):
    data = value.encode() if isinstance(value, str) else value
    digest = hashlib.md5(cohort.to_bytes(4, "big") + data).digest()  # the reference: 4-byte big-endian cohort, value
    expected = tuple(digest[i] % k for i in range(h))
    assert bloom_positions(value, cohort, k, h, hash="md5") == expected
    assert bloom_filter(value, cohort, k, h, hash="md5") == tuple(j in expected for j in range(k))
    row = bloom_filter_matrix([value, "other", value], [cohort, 0, cohort], k, h, hash="md5")
    assert tuple(row[0]) == tuple(row[2]) == bloom_filter(value, cohort, k, h, hash="md5")


def test_md5_pinned_and_differs_from_sha256():
    assert bloom_positions("V_1", 0, 128, 2, hash="md5") == (56, 7)
    assert bloom_positions("V_1", 0, 128, 2) != (56, 7)


@pytest.mark.parametrize("call,words", [
    (lambda: bloom_positions("a", 0, 257, 2, hash="md5"), ["k=257", "md5", "256"]),
    (lambda: bloom_positions("a", 0, 32, 17, hash="md5"), ["h=17", "md5", "16"]),
    (lambda: bloom_positions("a", 2**32, 32, 2, hash="md5"), ["cohort=4294967296"]),
    (lambda: bloom_filter_matrix(["a"], [2**32], 32, 2, hash="md5"), ["cohorts holds 4294967296"]),
    (lambda: bloom_filter("a", 0, 32, 2, hash="sha1"), ["hash='sha1'", "sha256, md5"]),
], ids=["k", "h", "cohort", "matrix-cohort", "unknown"])
def test_md5_preconditions_name_the_limit(call, words):
    with pytest.raises(ValueError) as e:
        call()
    assert all(w in str(e.value) for w in words), str(e.value)


def test_str_hashes_as_its_utf8_bytes_and_cohorts_change_positions():
    assert bloom_filter("é", 3, 64, 2) == bloom_filter("é".encode(), 3, 64, 2)
    assert len({bloom_positions("value", c, 2**20, 2) for c in range(8)}) == 8


def test_bloom_filter_weight_between_one_and_h_and_in_domain():
    seen_weights = set()
    for k, h in [(1, 1), (2, 2), (4, 2), (8, 3), (128, 2)]:
        domain = BitVectorDomain(max_weight=h, length=k)
        for i in range(60):
            bits = bloom_filter(f"item-{i}", i % 5, k, h)
            assert domain.check_member(bits) == bits
            assert 1 <= sum(bits) <= h and sum(bits) == len(set(bloom_positions(f"item-{i}", i % 5, k, h)))
            seen_weights.add((k, h, sum(bits)))
    assert (4, 2, 1) in seen_weights and (4, 2, 2) in seen_weights  # collisions lower the weight
    assert bloom_positions("v4", 0, 4, 2) == (3, 3) and sum(bloom_filter("v4", 0, 4, 2)) == 1


def test_bloom_filter_matrix_equals_rows_and_caches_per_pair():
    values = ["a", b"b", "a", "c", "a", "b"]
    cohorts = np.array([0, 1, 0, 2, 3, 1])
    mat = bloom_filter_matrix(values, cohorts, 16, 2)
    assert mat.shape == (6, 16) and mat.dtype == np.bool_
    for i, (v, c) in enumerate(zip(values, cohorts, strict=True)):
        assert tuple(mat[i]) == bloom_filter(v, int(c), 16, 2)
    assert bloom_filter_matrix([], [], 8, 2).shape == (0, 8)
    many = bloom_filter_matrix(["p", "q", bytearray(b"p"), "p"], [4, 4, 4, 9], 100, 9)  # two blocks, unhashable
    assert [tuple(row) for row in many] == [bloom_filter(v, c, 100, 9) for v, c in [("p", 4), ("q", 4), ("p", 4),
                                                                                 ("p", 9)]]
    big = bloom_filter_matrix(["x", "y"], [2**64 - 1, 5], 32, 3)  # cohorts beyond int64
    assert tuple(big[0]) == bloom_filter("x", 2**64 - 1, 32, 3) and tuple(big[1]) == bloom_filter("y", 5, 32, 3)


@pytest.mark.parametrize("cohorts", [
    np.array([7, 9, 7, 8, 9, 7], dtype=np.int32),  # few possible pairs: the table of pairs present
    np.array([2**64 - 1, 2**64 - 3, 2**64 - 1, 2**64 - 2, 2**64 - 3, 2**64 - 1], dtype=np.uint64),
    np.array([0, 10**12, 3, 10**12, 0, 3], dtype=np.int64),  # a wide span of cohorts: numbered by sorting
], ids=["int32", "uint64_top", "wide_span"])
def test_bloom_filter_matrix_rows_equal_bloom_filter_whichever_way_pairs_are_numbered(cohorts):
    values = ["a", b"b", b"a", "c", "b", "a"]
    mat = bloom_filter_matrix(values, cohorts, 16, 3)
    assert [tuple(row) for row in mat] == [bloom_filter(v, int(c), 16, 3) for v, c in zip(values, cohorts,
                                                                                          strict=True)]


def test_assign_cohort_pinned_rederived_and_covers_every_cohort():
    assert assign_cohort("client-1", 64) == 29 and assign_cohort(12345, 128) == 55 and assign_cohort(b"", 3) == 1
    message = b"vetdp-rappor-cohort-v1" + b"b" + (8).to_bytes(8, "big") + b"client-1" + bytes(4)
    assert int.from_bytes(hashlib.sha256(message).digest(), "big") % 64 == 29
    assert assign_cohort("5", 1000) != assign_cohort(5, 1000) or assign_cohort("6", 1000) != assign_cohort(6, 1000)
    assert assign_cohort("x", 1) == 0
    assert {assign_cohort(i, 4) for i in range(200)} == {0, 1, 2, 3}


_CLIENT_IDS = (list(range(-300, 300)) + [2**64, -2**127, 2**127 - 1, 2**200, "", "é", "client-1", "x" * 300, b"",
               b"\xff" * 256, bytearray(b"ab"), np.int64(7), np.uint8(200), np.str_("np"), np.bytes_(b"nb")])


@pytest.mark.parametrize("num_cohorts", [1, 2, 3, 64, 1000, 2**31 + 11, 2**32 - 1, 2**32])
def test_assign_cohorts_equals_assign_cohort_elementwise(num_cohorts):
    got = assign_cohorts(_CLIENT_IDS, num_cohorts)
    assert got.dtype == np.int64 and got.shape == (len(_CLIENT_IDS),)
    assert got.tolist() == [assign_cohort(c, num_cohorts) for c in _CLIENT_IDS]
    if num_cohorts >= 2**32 - 1:  # residues of 32 bits survive the vectorised reduction
        assert got.max() >= 2**31


def test_assign_cohorts_accepts_ranges_arrays_and_generators():
    expected = [assign_cohort(i, 7) for i in range(50)]
    assert assign_cohorts(range(50), 7).tolist() == expected
    assert assign_cohorts(np.arange(50), 7).tolist() == expected
    assert assign_cohorts((i for i in range(50)), 7).tolist() == expected
    assert assign_cohorts(np.array(["a", "bc"]), 9).tolist() == [assign_cohort("a", 9), assign_cohort("bc", 9)]
    assert assign_cohorts([], 5).shape == (0,)


def test_assign_cohorts_repeats_a_rejected_digest_as_assign_cohort_does(monkeypatch):
    """A first-attempt digest of 2**256 − 1 is rejected for 3 cohorts (2**256 mod 3 = 1): both functions must move
    on to the second attempt (the real SHA-256), which the vectorised reduction alone would not."""
    real = hashlib.sha256

    def rigged(message=b""):
        if message.endswith(b"victim" + bytes(4)):
            return type("Rigged", (), {"digest": lambda self: b"\xff" * 32})()
        return real(message)

    monkeypatch.setattr(hashlib, "sha256", rigged)
    head = b"vetdp-rappor-cohort-v1" + b"b" + (6).to_bytes(8, "big") + b"victim"
    second = int.from_bytes(real(head + (1).to_bytes(4, "big")).digest(), "big") % 3
    assert second != (2**256 - 1) % 3  # so a batch that skipped the second attempt would answer differently
    assert assign_cohort("victim", 3) == second
    assert assign_cohorts(["a", "victim", 5], 3).tolist() == [assign_cohort("a", 3), second, assign_cohort(5, 3)]
    assert assign_cohort("victim", 2) == 1 == assign_cohorts(["victim"], 2)[0]  # 2 divides 2**256: never rejected


def test_digests_mod_is_the_residue_of_each_256_bit_digest_and_flags_the_top_words():
    rng = np.random.default_rng(5)
    digests = [bytes(32), b"\xff" * 32, b"\xff" * 4 + bytes(28), b"\xff" * 3 + bytes(29)]
    digests += [rng.bytes(32) for _ in range(200)]
    for n in (1, 2, 3, 10, 64, 2**32 - 5, 2**32):
        residues, suspects = rappor._digests_mod(b"".join(digests), n)
        assert residues.tolist() == [int.from_bytes(d, "big") % n for d in digests], n
        assert suspects.tolist() == [i for i, d in enumerate(digests) if d[:4] == b"\xff" * 4]


@pytest.mark.parametrize("call,error,words", [
    (lambda: assign_cohorts(["a", 1.5], 4), TypeError, ("client_ids[1]=1.5",)),
    (lambda: assign_cohorts([3, True], 4), TypeError, ("client_ids[1]=True", "bool")),
    (lambda: assign_cohorts(["a", "\ud800"], 4), ValueError, ("client_ids[1]=", "UTF-8")),
    (lambda: assign_cohorts("abc", 4), TypeError, ("client_ids='abc'",)),
    (lambda: assign_cohorts(5, 4), TypeError, ("client_ids=5",)),
    (lambda: assign_cohorts(np.zeros((2, 2), dtype=np.int64), 4), ValueError, ("one-dimensional",)),
    (lambda: assign_cohorts(["a"], 0), ValueError, ("num_cohorts=0",)),
    (lambda: assign_cohorts(["a"], 2**32 + 1), ValueError, ("num_cohorts=",)),
], ids=["float", "bool", "surrogate", "single_str", "int", "two_dim", "zero_cohorts", "too_many_cohorts"])
def test_assign_cohorts_rejects_bad_arguments_naming_them(call, error, words):
    with pytest.raises(error) as info:
        call()
    assert all(w in str(info.value) for w in words), str(info.value)


@pytest.mark.parametrize("call,error,words", [
    (lambda: bloom_filter("a", 0, 0, 1), ValueError, ("k=0",)),
    (lambda: bloom_filter("a", 0, 4, 0), ValueError, ("h=0",)),
    (lambda: bloom_filter("a", 0, 4, 5), ValueError, ("h=5", "k=4")),
    (lambda: bloom_filter("a", -1, 4, 2), ValueError, ("cohort=-1",)),
    (lambda: bloom_filter("a", 2**64, 4, 2), ValueError, ("cohort=",)),
    (lambda: bloom_filter(7, 0, 4, 2), TypeError, ("value=7",)),
    (lambda: bloom_filter("a", 1.0, 4, 2), TypeError, ("cohort=1.0",)),
    (lambda: bloom_filter_matrix(["a"], [0, 1], 4, 2), ValueError, ("cohorts",)),
    (lambda: bloom_filter_matrix(["a", "b"], [0, -3], 4, 2), ValueError, ("-3",)),
    (lambda: bloom_filter_matrix(["a", 3], [0, 0], 4, 2), TypeError, ("values[1]=3",)),
    (lambda: bloom_filter_matrix(["a", "a", [3]], [0, 0, 0], 4, 2), TypeError, ("values[2]=[3]",)),
    (lambda: bloom_filter_matrix("ab", [0, 0], 4, 2), TypeError, ("values",)),
    (lambda: bloom_filter_matrix(["a"], [0.5], 4, 2), TypeError, ("cohorts[0]=0.5",)),
    (lambda: bloom_filter_matrix(["a"], np.array([0.5]), 4, 2), TypeError, ("cohorts", "float64")),
    (lambda: assign_cohort("a", 0), ValueError, ("num_cohorts=0",)),
    (lambda: assign_cohort(True, 4), TypeError, ("client_id=True",)),
    (lambda: assign_cohort(1.5, 4), TypeError, ("client_id=1.5",)),
], ids=["k0", "h0", "h_above_k", "cohort_negative", "cohort_huge", "value_int", "cohort_float", "cohorts_length",
        "cohorts_negative", "values_int", "values_list", "values_str", "cohorts_float", "cohorts_float_array",
        "num_cohorts0", "client_bool", "client_float"])
def test_encoding_rejects_bad_arguments_naming_them(call, error, words):
    with pytest.raises(error) as e:
        call()
    for w in words:
        assert w in str(e.value)


# ------------------------------------------------------------------ preconditions

@pytest.mark.parametrize("kw,error,words", [
    ({"f": 1.0}, ValueError, ("f=1.0", "[0, 1)")),
    ({"f": -0.0625}, ValueError, ("f=-0.0625",)),
    ({"f": math.nan}, ValueError, ("f=nan",)),
    ({"p": 0.75, "q": 0.75}, ValueError, ("p=0.75", "q=0.75", "0 <= p < q <= 1")),
    ({"q": 1.5}, ValueError, ("q=1.5", "(0, 1]")),
    ({"p": "0.5"}, TypeError, ("p='0.5'",)),
    ({"f": 0.0, "p": 0.0}, ValueError, ("f=0.0", "p=0.0", "p*")),
    ({"f": 0.0, "q": 1.0}, ValueError, ("f=0.0", "q=1.0", "q*")),
    ({"constant_time": 1}, TypeError, ("constant_time=1",)),
], ids=["f_one", "f_negative", "f_nan", "p_eq_q", "q_above", "p_str", "f0_p0", "f0_q1", "ct_int"])
def test_one_report_preconditions_rejected_with_messages(kw, error, words):
    args = {"f": 0.5, "p": 0.25, "q": 0.75, "constant_time": False, **kw}
    with pytest.raises(error) as e:
        make_rappor_report(bitvector_domain(2, 4), DD, **args)
    for w in words:
        assert w in str(e.value)


def test_reports_refuse_f_zero_and_bad_counts_but_one_report_accepts_f_zero():
    with pytest.raises(ValueError, match=r"f=0.0 must be in \(0, 1\)"):
        make_rappor_reports(bitvector_domain(1, 2), DD, 0.0, 0.25, 0.75, 2)
    with pytest.raises(ValueError, match="reports=0"):
        make_rappor_reports(bitvector_domain(1, 2), DD, 0.5, 0.25, 0.75, 0)
    m = make_rappor_report(bitvector_domain(1, 2), DD, 0.0, 0.25, 0.75)
    assert m.map(1) == pytest.approx(2 * math.log(3), rel=1e-12)  # plain RR: ln(0.75/0.25) + ln(0.75/0.25)
    with pytest.raises(ValueError, match="length"):
        make_rappor_report(bitvector_domain(1, 2**32 + 1), DD, 0.5, 0.25, 0.75)


# ------------------------------------------------------------------ exact laws against brute force

def _brute_force_one(x, r: Fraction, p: Fraction, q: Fraction) -> dict:
    """Σ over every permanent vector b' of P[b' | x]·P[y | b'], for every y (no per-bit factorisation)."""
    k = len(x)
    out = {}
    for y in itertools.product((False, True), repeat=k):
        total = Fraction(0)
        for bp in itertools.product((False, True), repeat=k):
            pb = math.prod((1 - r) if bp[i] == x[i] else r for i in range(k))
            py = math.prod((q if bp[i] else p) if y[i] else (1 - q if bp[i] else 1 - p) for i in range(k))
            total += pb * py
        if total:
            out[y] = total
    return out


def _brute_force_many(x, n: int, r: Fraction, p: Fraction, q: Fraction) -> dict:
    k = len(x)
    out = {}
    for flat in itertools.product((False, True), repeat=n * k):
        ys = tuple(flat[t * k:(t + 1) * k] for t in range(n))
        total = Fraction(0)
        for bp in itertools.product((False, True), repeat=k):
            pb = math.prod((1 - r) if bp[i] == x[i] else r for i in range(k))
            total += pb * math.prod((q if bp[i] else p) if y[i] else (1 - q if bp[i] else 1 - p)
                                    for y in ys for i in range(k))
        if total:
            out[ys] = total
    return out


def _max_ratio(dists: dict) -> Fraction:
    best = Fraction(1)
    for a, b in itertools.permutations(dists, 2):
        for y, pa in dists[a].items():
            best = max(best, pa / dists[b][y])
    return best


def _verdict(claim: float, ratio: Fraction) -> Verdict:
    return compare_claim(claim, lambda prec: R.ln_bracket(ratio, prec)).verdict


def _inputs(k: int, h: int) -> list[tuple[bool, ...]]:
    return [v for v in itertools.product((False, True), repeat=k) if sum(v) <= h]


@pytest.mark.parametrize("k,h,f,p,q", [
    (3, 1, 0.5, 0.5, 0.75), (4, 2, 0.5, 0.5, 0.75), (3, 2, 0.5, 0.5, 0.75), (3, 2, 0.5, 0.0625, 0.5),
    (2, 1, 0.0, 0.25, 0.75), (2, 1, 1e-300, 0.25, 0.5), (3, 1, 0.25, 0.0, 1.0),
], ids=["k3h1", "paper_k4h2", "k_lt_2h", "k_lt_2h_other_split", "f0", "f_tiny", "p0_q1"])
def test_one_report_law_equals_brute_force_and_map_is_tight_from_both_sides(k, h, f, p, q):
    m = make_rappor_report(bitvector_domain(h, k), DD, f, p, q)
    r = Fraction(rappor.rappor_flip_probability(f))
    dists = {}
    for x in _inputs(k, h):
        law = output_distribution(m, x)
        assert law == _brute_force_one(x, r, Fraction(p), Fraction(q))
        dists[x] = law
    ratio = _max_ratio(dists)
    eps = m.map(1)
    assert _verdict(eps, ratio) is Verdict.SOUND
    assert _verdict(eps * (1 - 2.0**-30), ratio) is Verdict.UNSOUND  # a slightly smaller claim fails
    assert m.map(0) == 0.0
    with pytest.raises(ValueError, match="d_in=2"):
        m.map(2)


def test_epsilon_one_is_the_papers_formula_when_2h_le_k():
    f, p, q, h = 0.5, 0.5, 0.75, 2
    q_star = Fraction(1, 2) * Fraction(f) * (Fraction(p) + Fraction(q)) + (1 - Fraction(f)) * Fraction(q)
    p_star = Fraction(1, 2) * Fraction(f) * (Fraction(p) + Fraction(q)) + (1 - Fraction(f)) * Fraction(p)
    paper = q_star * (1 - p_star) / (p_star * (1 - q_star))
    env = {"r": rappor.rappor_flip_probability(f), "p": p, "q": q, "a": h, "b": h}
    lo, hi = RAPPOR_EPSILON_ONE.enclose(env, 200)
    t_lo, t_hi = R.ln_bracket(paper, 200)
    assert lo <= h * t_hi and h * t_lo <= hi and hi - lo < Fraction(1, 2**150)
    assert make_rappor_report(bitvector_domain(h, 2 * h), DD, f, p, q).map(1) == RAPPOR_EPSILON_ONE.to_float(env)
    assert _verdict(RAPPOR_EPSILON_ONE.to_float(env), paper**h) is Verdict.SOUND


def test_epsilon_one_ideal_is_the_papers_formula_symbolically():
    import sympy as sp

    e = RAPPOR_EPSILON_ONE.to_sympy()
    syms = {s.name: s for s in e.free_symbols}
    f = sp.Symbol("f", positive=True)
    r, p, q, a, b = (syms[n] for n in "rpqab")
    q_star = sp.Rational(1, 2) * f * (p + q) + (1 - f) * q
    p_star = sp.Rational(1, 2) * f * (p + q) + (1 - f) * p
    one_each = sp.exp(e.subs({r: f / 2, a: 1, b: 1}))
    assert sp.simplify(one_each - q_star * (1 - p_star) / (p_star * (1 - q_star))) == 0
    only_set = sp.exp(e.subs({r: f / 2, a: 1, b: 0}))  # a bit set only in x costs ln(q*/p*)
    assert sp.simplify(only_set - q_star / p_star) == 0


def test_rappor_proof_is_pinned_up_to_date_and_relies_on_every_obligation():
    from vetdp.obligations.check import constant_obligations, run_obligation
    from vetdp.obligations.pinning import Pinning

    pin = Pinning()
    assert pin.status("rappor").state == "up to date", pin.status("rappor")
    derived = pin.derivation(pin.doc("rappor")).obligations  # from its constants:, ε₁ through its pieces
    for cid in ("rappor.report_gap", "rappor.p_star", "rappor.one_minus_q_star", "rappor.log_ratio",
                "rappor.epsilon_one_sum", "randomized_response_bitvec.epsilon",
                "randomized_response_bitvec.flip_probability"):
        assert set(constant_obligations(cid)) <= set(derived), cid
    assert all(run_obligation(oid).proved for oid in derived if oid.startswith("rappor."))
    assert {"vetdp.impl.rappor.make_rappor_report", "vetdp.impl.rappor.make_rappor_reports",
            "vetdp.impl.rappor.bloom_positions"} <= set(pin.doc("rappor").meta["proves"])
    assert pin.status("rappor_client").state == "up to date", pin.status("rappor_client")
    assert {"vetdp.impl.rappor_client.RapporClient", "vetdp.impl.rappor_client.make_rappor_client_reports",
            "vetdp.impl.rappor_client.derived_permanent_batch"} <= set(pin.doc("rappor_client").meta["proves"])


@pytest.mark.parametrize("k,h,n,f,p,q", [
    (2, 1, 1, 0.5, 0.5, 0.75), (2, 1, 2, 0.5, 0.5, 0.75), (2, 1, 3, 0.5, 0.5, 0.75), (2, 2, 2, 0.25, 0.0, 1.0),
], ids=["n1", "n2", "n3", "p0q1_n2"])
def test_many_reports_law_equals_brute_force_and_stays_below_epsilon_infinity(k, h, n, f, p, q):
    m = make_rappor_reports(bitvector_domain(h, k), DD, f, p, q, n)
    r = Fraction(rappor.rappor_flip_probability(f))
    dists = {x: output_distribution(m, x) for x in _inputs(k, h)}
    for x, law in dists.items():
        assert law == _brute_force_many(x, n, r, Fraction(p), Fraction(q))
    eps_inf = m.map(1)
    assert eps_inf == pytest.approx(min(2 * h, k) * math.log((1 - float(r)) / float(r)), rel=1e-14)
    assert _verdict(eps_inf, _max_ratio(dists)) is Verdict.SOUND
    one = make_rappor_report(bitvector_domain(h, k), DD, f, p, q).map(1)
    if n >= 2 and p > 0:  # shared permanent response: more than one report's loss, less than ε∞
        assert _verdict(one, _max_ratio(dists)) is Verdict.UNSOUND


def test_many_reports_loss_grows_with_n_towards_epsilon_infinity():
    losses = []
    for n in (1, 2, 3):
        m = make_rappor_reports(bitvector_domain(1, 1), DD, 0.5, 0.25, 0.75, n)
        dists = {x: output_distribution(m, x) for x in _inputs(1, 1)}
        losses.append(_max_ratio(dists))
    assert losses[0] < losses[1] < losses[2] < 3  # ε∞ = ln 3 for h = 1, k = 1, f = 1/2


# ------------------------------------------------------------------ batch forms

class _Cycle(RandomSource):
    """Bytes 1, 2, ..., 255, 1, 2, ... (never 0: each Bernoulli cell reads exactly one byte)."""

    def __init__(self):
        self.i = 0

    def random_bytes(self, n: int) -> bytes:
        out = bytes((self.i + j) % 255 + 1 for j in range(n))
        self.i += n
        return out


def _bernoulli_of_byte(prob: float, byte: int) -> bool:
    """The answer of an exact Bernoulli to one non-zero byte: bit G of prob's expansion, G = first set bit."""
    g = 9 - byte.bit_length()
    return (Fraction(prob) * 2**g).__floor__() % 2 == 1


def test_permanent_batch_flips_each_cell_by_its_own_byte():
    rows = np.array([[1, 0, 0, 1], [0, 0, 1, 0], [1, 1, 0, 0]], dtype=bool)
    with use_source(_Cycle()):
        out = rappor_permanent_batch(rows, 0.75)  # r = 0.375
    expected = [[bool(rows[i, j]) ^ _bernoulli_of_byte(0.375, 4 * i + j + 1) for j in range(4)] for i in range(3)]
    assert out.tolist() == expected


def test_instantaneous_batch_draws_q_for_ones_then_p_for_zeros():
    rows = np.array([[1, 0, 1], [0, 1, 0]], dtype=bool)
    with use_source(_Cycle()):
        out = rappor_instantaneous_batch(rows, 0.3, 0.8)
    ones = [(0, 0), (0, 2), (1, 1)]
    zeros = [(0, 1), (1, 0), (1, 2)]
    expected = np.zeros((2, 3), dtype=bool)
    for n, (i, j) in enumerate(ones):
        expected[i, j] = _bernoulli_of_byte(0.8, n + 1)
    for n, (i, j) in enumerate(zeros):
        expected[i, j] = _bernoulli_of_byte(0.3, len(ones) + n + 1)
    assert out.tolist() == expected.tolist()


class _Pattern(RandomSource):
    """The bytes 200, 100, 50, 25, 12, 6, 3, 1 over and over: first set bit at 1, 2, ..., 8 in turn."""

    PATTERN = (200, 100, 50, 25, 12, 6, 3, 1)

    def __init__(self):
        self.i = 0

    def random_bytes(self, n: int) -> bytes:
        out = bytes(self.PATTERN[(self.i + j) % 8] for j in range(n))
        self.i += n
        return out


def test_instantaneous_batch_blocks_each_cell_reads_its_own_byte(monkeypatch):
    """Blocks of two rows (6 cells): within each block the ones draw q first, then the zeros draw p, in row-major
    order; each cell answers exactly as the exact Bernoulli of its own probability on its own byte. p = 0.3
    (0.0100 1100…) and q = 0.6 (0.1001 1001…) differ at bits 1, 2, 4, 5, 6, 8, which the bytes reach."""
    monkeypatch.setattr(rappor, "IRR_BLOCK_CELLS", 6)
    rows = np.array([[1, 0, 1], [0, 1, 0], [1, 1, 1], [0, 0, 0], [0, 1, 1]], dtype=bool)
    with use_source(_Pattern()):
        out = rappor_instantaneous_batch(rows, 0.3, 0.6)
    expected = np.zeros(rows.shape, dtype=bool)
    byte = 0
    for lo in range(0, 5, 2):
        block = [(i, j) for i in range(lo, min(lo + 2, 5)) for j in range(3)]
        for i, j in [c for c in block if rows[c]] + [c for c in block if not rows[c]]:
            expected[i, j] = _bernoulli_of_byte(0.6 if rows[i, j] else 0.3, _Pattern.PATTERN[byte % 8])
            byte += 1
    assert 0 < expected.sum() < expected.size
    assert out.tolist() == expected.tolist()
    with use_source(_Pattern()):  # the same cells through an int array, not contiguous in memory
        strided = rappor_instantaneous_batch(np.repeat(rows.astype(np.int64), 2, axis=1)[:, ::2], 0.3, 0.6)
    assert strided.tolist() == expected.tolist()


def test_permanent_batch_leaves_its_input_unchanged():
    rows = np.array([[1, 0, 0, 1]] * 20, dtype=bool)
    before = rows.copy()
    with use_source(SeededSource(2)):
        out = rappor_permanent_batch(rows, 0.9)
    assert (rows == before).all() and not (out == rows).all() and out is not rows


def test_batch_per_cell_frequencies_are_exact_over_every_byte():
    """Over the 255 non-zero bytes (each decides its cell in the first round) a probability whose binary expansion
    ends within 8 bits answers True exactly for the bytes whose first set bit hits a 1 of that expansion."""
    rows = np.zeros((255, 1), dtype=bool)
    with use_source(_Cycle()):
        flipped = rappor_permanent_batch(rows, 0.5)  # r = 0.25: True exactly for bytes 64..127
    assert flipped[:, 0].tolist() == [64 <= b <= 127 for b in range(1, 256)]
    with use_source(_Cycle()):
        reported = rappor_instantaneous_batch(np.ones((255, 1), dtype=bool), 0.0, 0.75)  # q = 0.75: bytes >= 64
    assert reported[:, 0].tolist() == [b >= 64 for b in range(1, 256)]


def test_measurement_batches_check_the_domain_and_have_the_right_shapes():
    m1 = make_rappor_report(bitvector_domain(2, 4), DD, 0.5, 0.25, 0.75)
    mn = make_rappor_reports(bitvector_domain(2, 4), DD, 0.5, 0.25, 0.75, 3)
    rows = np.array([[1, 0, 0, 1], [0, 0, 0, 0]], dtype=np.int64)
    with use_source(SeededSource(1)):
        assert m1.batch(rows).shape == (2, 4)
        assert mn.batch(rows).shape == (2, 3, 4)
    with pytest.raises(DomainError, match="at most 2"):
        m1.batch(np.ones((1, 4), dtype=bool))
    with pytest.raises(DomainError, match=r"shape \(n, 4\)"):
        mn.batch(np.zeros((2, 5), dtype=bool))


def test_many_reports_batch_shares_the_permanent_response():
    """With q = 1 and p = 0 every report equals B': the reports of one row must all be equal."""
    mn = make_rappor_reports(bitvector_domain(2, 8), DD, 0.5, 0.0, 1.0, 4)
    rows = np.zeros((50, 8), dtype=bool)
    rows[:, :2] = True
    with use_source(SeededSource(3)):
        out = mn.batch(rows)
    assert (out == out[:, :1, :]).all()
    assert not (out[:, 0, :] == rows).all()  # the permanent response did flip something


# ------------------------------------------------------------------ mutants

CFG = RunConfig(strict_messages=False, impl_ref="tests.mutants", max_examples=1)
PINNED_ONLY = RunConfig(strict_messages=False, impl_ref="tests.mutants", max_examples=1)

def _without_probe_bases(spec):
    """The spec without its universal probe bases (long filters, law only: about 14 s and 26 s of CPU), for tests of
    the other clauses; tests/test_universal_rappor.py covers the probe bases."""
    return dataclasses.replace(spec, universal=dataclasses.replace(spec.universal, probe_bases=None))


BASE_ONE = {"k": 3, "m": 1, "f": 0.5, "p": 0.25, "q": 0.75, "constant_time": False}
BASE_MANY = {"k": 2, "m": 1, "f": 0.5, "p": 0.5, "q": 0.75, "constant_time": False, "reports": 2}
# each mutant is judged on the spec's preconditions and on pinned parameter sets that reach its defect (the full
# spec also catches them, more slowly: enumerating fresh permanent responses costs 4**(n·k) paths per input)
MUTANTS = [
    ("rappor_reports", mut.reports_not_memoized, "privacy.sound", [{**BASE_MANY, "p": 0.0, "q": 1.0}]),
    ("rappor_reports", mut.reports_map_is_epsilon_one, "privacy.sound", [BASE_MANY]),
    ("rappor_reports", mut.reports_accept_f_zero, "precondition[f_zero]", [BASE_MANY]),
    ("rappor_reports", mut.reports_distance_h_when_2h_exceeds_k, "privacy.sound",
     [{**BASE_MANY, "k": 3, "m": 2, "p": 0.0, "q": 1.0}]),
    ("rappor_reports", mut.reports_distance_capped_at_three_hash_functions, "privacy.sound",
     [{**BASE_MANY, "k": 7, "m": 4, "p": 0.0, "q": 1.0, "reports": 1}]),
    ("rappor", mut.epsilon_one_without_h, "privacy.sound", [{**BASE_ONE, "k": 4, "m": 2}]),
    ("rappor", mut.epsilon_one_with_p_q, "privacy.tight", [BASE_ONE]),
    ("rappor", mut.epsilon_one_paper_formula_always, "privacy.tight", [{**BASE_ONE, "m": 2}]),
    ("rappor", mut.prr_round_to_nearest, "function.law", [{**BASE_ONE, "k": 2, "f": 5e-324}]),
    ("rappor", mut.prr_flips_with_f, "function.law", [BASE_ONE]),
    ("rappor", mut.irr_swaps_p_and_q, "function.law", [BASE_ONE]),
]


# 11 to 19 s: run by .ci/run (-m slow)
SLOW_MUTANTS = {"reports_map_is_epsilon_one", "prr_round_to_nearest", "reports_distance_capped_at_three_hash_functions"}


@pytest.mark.parametrize("spec_name,mutant,clause,examples", [
    pytest.param(*row, id=row[1].__name__, marks=[pytest.mark.slow] if row[1].__name__ in SLOW_MUTANTS else [])
    for row in MUTANTS])
def test_rappor_mutant_is_rejected_on_its_clause(spec_name, mutant, clause, examples):
    # the pinned examples only: the strategy draws the first of them again
    spec = dataclasses.replace(_without_probe_bases(find_spec(spec_name)), examples=examples,
                               params=lambda deep: st.just(examples[0]))
    results = list(check_measurement_spec(spec, ctor=mutant, cfg=PINNED_ONLY))
    failing = {r.check: r for r in results if r.status.is_failure}
    assert clause in failing, f"{mutant.__name__} passed {clause}; failing: {sorted(failing)}"
    assert failing[clause].repro.startswith(f"vetdp verify {spec_name} --impl tests.mutants --params ")
    ours = list(check_measurement_spec(spec, ctor=spec.load_constructor(), cfg=PINNED_ONLY))
    assert clause in {r.check for r in ours if r.status.name == "PASS"}  # the same examples pass our code


def test_the_default_search_of_many_reports_reaches_a_weight_between_half_the_length_and_the_length():
    # h < k < 2h: min(2h, k) = k differs from both 2h and h; a map taking h there is short (3.4 s of CPU)
    results = list(check_measurement_spec(_without_probe_bases(find_spec("rappor_reports")),
                                          ctor=mut.reports_distance_h_when_2h_exceeds_k,
                                          cfg=RunConfig(strict_messages=False, impl_ref="tests.mutants")))
    assert "privacy.sound" in {r.check for r in results if r.status.is_failure}


def test_the_default_search_of_many_reports_reaches_more_reports_than_it_draws():
    # ε∞ is claimed for every number of reports; the search draws at most 3, and 4 and 7 are pinned at k = 1
    results = list(check_measurement_spec(_without_probe_bases(find_spec("rappor_reports")),
                                          ctor=mut.reports_last_from_raw_bits_from_four,
                                          cfg=RunConfig(strict_messages=False, impl_ref="tests.mutants")))
    failing = {r.check: r for r in results if r.status.is_failure}
    assert "privacy.sound" in failing and '"reports": 4' in failing["privacy.sound"].subject, failing


def _law_at_the_first_scale_example(spec_name: str, base: dict, mutant):
    """function.law's row for ``mutant`` on ``base`` and the spec's first scale example (no universal pass)."""
    spec = find_spec(spec_name)
    first = dataclasses.replace(spec, examples=[base], params=lambda deep: st.just(base),
                                scale_examples=spec.scale_examples[:1])
    rows = {r.check: r for r in check_measurement_spec(first, ctor=mutant,
                                                       cfg=dataclasses.replace(PINNED_ONLY, max_regions=0))}
    return rows["function.law"]


def test_a_permanent_response_missing_past_the_eighth_bit_fails_the_law_at_the_scale_examples():
    # the code branches on each permanent bit (no product structure over symbolic bits) and every drawn Bloom filter
    # is at most 5 bits long: only the scale examples (k = 32, 65, 128), read output bit by output bit, reach bit 8
    spec = find_spec("rappor")
    law = _law_at_the_first_scale_example("rappor", BASE_ONE, mut.prr_on_first_8_bits_only)
    assert law.status.is_failure and '"k": 32' in law.subject, law
    assert "on the input 00000000000000000000000000000000, output bit 8 (input bit 0) has the exact law {False: " \
           "3/4, True: 1/4}; the spec's coordinate law is {False: 5/8, True: 3/8}" in law.message
    for ctor in (spec.load_constructor(), mut.prr_and_irr_interleaved):
        for params in spec.scale_examples:
            findings = evaluate_params(spec, ctor, params, PINNED_ONLY, scale=True)
            assert findings and all(f.ok for f in findings.values()), findings
            inputs = 3 if params["m"] < params["k"] else 2  # zeros, heaviest prefix and suffix (all ones: m = k)
            assert f"on {inputs} concrete input(s) every output bit's exact law is the spec's coordinate law" in \
                findings["function.law"].message


def test_reports_memoising_the_first_eight_bits_only_fail_the_law_at_the_scale_examples():
    # bit i of every report (a column) against its law given input bit i; the search draws at most 3 bits
    spec = find_spec("rappor_reports")
    law = _law_at_the_first_scale_example("rappor_reports", BASE_MANY, mut.reports_memo_first_8_bits_only)
    assert law.status.is_failure and '"k": 32' in law.subject, law
    assert "output bit 8 (input bit 0) has the exact law {(False, False, False): " in law.message, law.message
    for params in spec.scale_examples:
        findings = evaluate_params(spec, spec.load_constructor(), params, PINNED_ONLY, scale=True)
        assert findings and all(f.ok for f in findings.values()), findings
        assert "every output bit's exact law is the spec's coordinate law" in findings["function.law"].message


@pytest.mark.deep  # ~10 s each on a loaded machine; `vetdp check` runs the same specs in the gate
@pytest.mark.parametrize("spec_name", ["rappor", "rappor_reports"])
def test_our_rappor_constructors_pass_the_same_strictness(spec_name):
    spec = find_spec(spec_name)
    results = list(check_measurement_spec(spec, ctor=spec.load_constructor(), cfg=CFG))
    assert results and not [r.check for r in results if r.status.is_failure]


def test_module_all_lists_exactly_the_public_names():
    import inspect

    public = {n for n, v in vars(rappor).items() if not n.startswith("_") and (inspect.isfunction(v) or
              inspect.isclass(v)) and v.__module__ == rappor.__name__}
    assert public <= set(rappor.__all__) and all(hasattr(rappor, n) for n in rappor.__all__)


@pytest.mark.parametrize("k,h,f,p,q", [(4, 2, 0.5, 0.5, 0.75), (3, 2, 0.25, 0.0, 1.0), (128, 2, 0.5, 0.5, 0.75),
                                       (8, 8, 2.0**-20, 0.25, 0.5), (2, 1, math.nextafter(1.0, 0.0), 0.0, 1.0)])
def test_epsilon_one_never_exceeds_epsilon_infinity(k, h, f, p, q):
    one = make_rappor_report(bitvector_domain(h, k), DD, f, p, q).privacy_constant
    many = make_rappor_reports(bitvector_domain(h, k), DD, f, p, q, 5).privacy_constant
    lo_one, _ = one.enclose(200)
    _, hi_many = many.enclose(200)
    assert lo_one <= hi_many  # ideal ε₁ <= ideal ε∞ (equal when p = 0 and q = 1)
