"""The RAPPOR client with a secret (impl/rappor_client.py): the permanent response is the same in every run, is
derived from the secret by the documented rules (re-derived here with hmac), has the stated law over every byte the
PRF can give, and the mutants that redraw it per run are caught by the spec's clauses."""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import strategies as st

from tests.mutants import rappor_mutants as mut
from vetdp.core.measurement import bitvector_domain, discrete_distance
from vetdp.engine.enumerate import enumerate_paths, output_distribution
from vetdp.engine.runner import RunConfig, check_measurement_spec
from vetdp.engine.spec import find_spec
from vetdp.impl import rappor_client
from vetdp.impl.rappor import bloom_filter, make_rappor_reports, rappor_permanent_batch
from vetdp.impl.rappor_client import (
    LazyPermanentResponses,
    PrfSource,
    RapporClient,
    client_key,
    derived_permanent_batch,
    make_rappor_client_reports,
    new_secret,
    prr_message,
    reference_flip_probability,
)
from vetdp.sampling.primitives import bernoulli_bytes_needed
from vetdp.sampling.sources import RandomSource, SeededSource, SystemSource, use_source

DD = discrete_distance()
SECRET = bytes(range(32))


# ------------------------------------------------------------------ a permanent response that is permanent

def test_every_run_with_one_secret_gives_the_same_permanent_response():
    prrs, reports = set(), set()
    for source in (SeededSource(1), SeededSource(2), SystemSource()):
        with use_source(source):
            client = RapporClient(128, 2, 0.5, 0.5, 0.75, cohort=3, secret=SECRET)  # a new run: a new object
            prrs.add(client.permanent_response("apple"))
            reports.add(client.report("apple"))
    assert len(prrs) == 1 and len(reports) == 3  # the PRR lasts; the instantaneous response is fresh
    other = RapporClient(128, 2, 0.5, 0.5, 0.75, cohort=3, secret=bytes(32))
    assert other.permanent_response("apple") not in prrs  # another secret, another PRR
    assert other.permanent_response(b"apple") == other.permanent_response("apple")  # a str is its UTF-8


def test_a_client_that_ignores_its_secret_draws_a_new_response_per_run():
    """The defect the issue found (the CLI memoised within one run): two runs with one secret disagree."""
    runs = []
    for seed in (1, 2):
        with use_source(SeededSource(seed)):
            runs.append(mut.ClientWithoutSecret(128, 2, 0.5, 0.5, 0.75, cohort=3, secret=SECRET)
                        .permanent_response("apple"))
    assert runs[0] != runs[1]


def test_without_a_secret_the_response_lasts_for_the_object_only():
    with use_source(SeededSource(7)):
        c = RapporClient(16, 2, 0.5, 0.25, 0.75, cohort=3)
        first = c.permanent_response("apple")
        assert c.permanent_response("apple") is first and c.secret is None
        assert len({c.report("apple") for _ in range(40)}) > 1
    assert c.epsilon_infinity == pytest.approx(4 * math.log(3), rel=1e-14)
    assert c.epsilon_one < c.epsilon_infinity


# ------------------------------------------------------------------ the derivations, re-derived by hand

def _first_set_bit(byte: int) -> int:
    return 9 - byte.bit_length()  # 1-based, most significant bit first


def test_vetdp_derivation_rederived_with_hmac():
    """The stream is SHAKE-256(tag ‖ HMAC-SHA256(key, message)). f = 1/2: r = 1/4 = 0.01 in binary, so a cell flips
    exactly when its byte's first set bit is bit 2 (the batch sampler's first round: bit G of r's expansion, G the
    first set bit); one byte per cell."""
    key, k = client_key(SECRET, "client-7"), 40
    bits = np.zeros(k, dtype=bool)
    bits[[3, 17]] = True
    message = (b"vetdp-rappor-prr-v1" + k.to_bytes(8, "big") + np.float64(0.5).astype(">f8").tobytes()
               + np.packbits(bits).tobytes())
    assert prr_message(bits, 0.5) == message
    seed = hmac.digest(key, message, "sha256")
    stream = hashlib.shake_256(b"vetdp-rappor-prr-stream-v1" + seed).digest(k)
    flips = np.array([b != 0 and _first_set_bit(b) == 2 for b in stream])
    assert (derived_permanent_batch([key], bits[None, :], 0.5)[0] == (bits ^ flips)).all()
    assert client_key(SECRET, "client-7") == hmac.digest(
        SECRET, b"vetdp-rappor-client-v1" + b"b" + (8).to_bytes(8, "big") + b"client-7", "sha256")
    assert len({client_key(SECRET, i) for i in (1, "1", 2)}) == 3  # an int and its digits are different ids
    assert client_key(SECRET, "1") == client_key(SECRET, b"1")  # a str is its UTF-8


def test_reference_derivation_rederived_with_hmac():
    """The reference's rule: byte i of HMAC-SHA256(secret, B as 4 bytes big-endian); noise when its top 7 bits are
    below 128·f, then bit i is its lowest bit."""
    secret, k, f = b"c17-not-a-secret", 32, 0.45
    bits = np.array(bloom_filter("v7", 5, k, 2, hash="md5"))
    value = sum(1 << i for i in range(k) if bits[i])
    digest = hmac.digest(secret, value.to_bytes(4, "big"), "sha256")
    expected = [(digest[i] & 1) == 1 if (digest[i] >> 1) < 128 * f else bool(bits[i]) for i in range(k)]
    assert derived_permanent_batch([secret * 1], bits[None, :], f, "reference")[0].tolist() == expected
    client = RapporClient(k, 2, f, 0.25, 0.75, cohort=5, secret=secret, hash="md5", derivation="reference")
    assert list(client.permanent_response("v7")) == expected


class _Bytes(RandomSource):
    def __init__(self, data: bytes):
        self.data = data

    def random_bytes(self, n: int) -> bytes:
        out, self.data = self.data[:n], self.data[n:]
        return out


@pytest.mark.parametrize("f", [0.5, 0.25, 0.75, 0.875])
def test_vetdp_derivation_law_over_every_pair_of_bytes_is_independent_flips(f):
    """The idealised PRF gives uniform bytes: over all 65536 first-round bytes of a 2-bit row (r needs one byte
    here), each bit flips with probability exactly r = f/2, independently. The 65536 byte pairs are served to 65536
    rows of one batch call, row by row in cell order, so that row (a, b) reads exactly the bytes a and b."""
    assert bernoulli_bytes_needed(f / 2) == 1
    r = Fraction(f) / 2
    pairs = np.array([(a, b) for a in range(256) for b in range(256)], dtype=np.uint8)
    rows = np.tile(np.array([[True, False]]), (65536, 1))
    with use_source(_Bytes(pairs.tobytes())):
        flips = rappor_permanent_batch(rows, f) ^ rows
    counts: dict[tuple[bool, bool], int] = {}
    for fa, fb in flips.tolist():
        counts[(fa, fb)] = counts.get((fa, fb), 0) + 1
    for (fa, fb), c in counts.items():
        assert Fraction(c, 65536) == (r if fa else 1 - r) * (r if fb else 1 - r)
    with use_source(_Bytes(bytes(pairs[1000]))):  # the same row alone reads the same two bytes
        assert (rappor_permanent_batch(rows[:1], f)[0] ^ rows[0]).tolist() == flips[1000].tolist()


@pytest.mark.parametrize("f,flip", [(0.5, Fraction(1, 4)), (0.45, Fraction(58, 256)), (2.0**-20, Fraction(1, 256)),
                                    (0.25, Fraction(1, 8)), (0.99, Fraction(127, 256))])
def test_reference_rule_flips_with_ceil_128f_over_256_over_every_byte(f, flip):
    flips = sum(1 for byte in range(256) if (byte >> 1) < 128 * f and (byte & 1) != 1)  # a set bit turned off
    assert Fraction(flips, 256) == flip == Fraction(reference_flip_probability(f))


@pytest.mark.parametrize("f", [0.5, 0.3, 0.01])
def test_vectorised_derivation_equals_the_definition_row_by_row(f):
    rng = np.random.default_rng(0)
    rows = rng.random((120, 128)) < 0.02
    keys = [client_key(SECRET, i) for i in range(120)]
    fast = derived_permanent_batch(keys, rows, f)
    for i in range(120):
        with use_source(PrfSource(keys[i], prr_message(rows[i], f))):
            assert (fast[i] == rappor_permanent_batch(rows[i:i + 1], f)[0]).all()
    assert (fast != rows).mean() == pytest.approx(float(rappor_client.rappor_flip_probability(f)), abs=0.01)


def test_pinned_derived_response():
    bits = np.zeros((1, 16), dtype=bool)
    bits[0, [2, 9]] = True
    got = derived_permanent_batch([SECRET], bits, 0.5)[0]
    assert "".join("1" if b else "0" for b in got) == "1011100000001000"


# ------------------------------------------------------------------ the law of many runs and the mutants

def test_runs_law_equals_make_rappor_reports_and_the_client_is_that_model():
    dom = bitvector_domain(2, 3)
    runs = make_rappor_client_reports(dom, DD, 0.5, 0.25, 0.75, 2)
    bits = bloom_filter("v", 1, 3, 2)
    law = output_distribution(runs, bits)
    assert law == output_distribution(make_rappor_reports(dom, DD, 0.5, 0.25, 0.75, 2), bits)

    def client_twice():  # one object, no secret: the lazily drawn random function of the model
        c = RapporClient(3, 2, 0.5, 0.25, 0.75, cohort=1)
        return (c.report("v"), c.report("v"))

    enumerated: dict = {}
    for out, prob in enumerate_paths(client_twice):
        enumerated[out] = enumerated.get(out, 0) + prob
    assert enumerated == law
    assert runs.map(1) == make_rappor_reports(dom, DD, 0.5, 0.25, 0.75, 2).map(1)


PINNED_ONLY = RunConfig(strict_messages=False, impl_ref="tests.mutants", max_examples=1)
BASE = {"k": 2, "m": 1, "f": 0.5, "p": 0.0, "q": 1.0, "constant_time": False, "runs": 2, "derivation": "vetdp"}
MUTANTS = [
    (mut.client_redraws_per_run, "function.law", BASE),
    (mut.client_redraws_per_run, "privacy.sound", BASE),
    (mut.client_reference_flips_f_half, "function.law", {**BASE, "f": 0.45, "derivation": "reference"}),
]


@pytest.mark.parametrize("mutant,clause,example", MUTANTS, ids=[f"{m.__name__}-{c}" for m, c, _ in MUTANTS])
def test_client_mutant_is_rejected_on_its_clause(mutant, clause, example):
    spec = dataclasses.replace(find_spec("rappor_client"), examples=[example], params=lambda deep: st.just(example))
    failing = {r.check for r in check_measurement_spec(spec, ctor=mutant, cfg=PINNED_ONLY) if r.status.is_failure}
    assert clause in failing, f"{mutant.__name__} passed {clause}"
    ours = check_measurement_spec(spec, ctor=spec.load_constructor(), cfg=PINNED_ONLY)
    assert clause in {r.check for r in ours if r.status.name == "PASS"}


# ------------------------------------------------------------------ privacy figures and bad input

def test_reference_derivation_privacy_uses_its_own_flip_probability():
    c = RapporClient(32, 2, 0.45, 0.25, 0.75, cohort=0, secret=SECRET, derivation="reference")
    assert c.flip == 58 / 256
    assert c.epsilon_infinity == pytest.approx(4 * math.log(198 / 58), rel=1e-14)
    vetdp = RapporClient(32, 2, 0.45, 0.25, 0.75, cohort=0, secret=SECRET)
    assert c.epsilon_infinity < vetdp.epsilon_infinity == pytest.approx(4 * math.log(0.775 / 0.225), rel=1e-14)


def test_new_secret_reads_32_bytes_of_the_current_source():
    with use_source(SeededSource(3)):
        a = new_secret()
    with use_source(SeededSource(3)):
        assert new_secret() == a and len(a) == 32


@pytest.mark.parametrize("kwargs,error,words", [
    ({"secret": b"short"}, ValueError, ["secret", "5 bytes", "16"]),
    ({"secret": "a str secret of enough length"}, TypeError, ["secret", "bytes"]),
    ({"k": 33, "derivation": "reference"}, ValueError, ["k=33", "reference", "32"]),
    ({"k": 300, "hash": "md5"}, ValueError, ["k=300", "md5", "256"]),
    ({"derivation": "sha"}, ValueError, ["derivation='sha'"]),
    ({"f": 0.0}, ValueError, ["f=0.0", "ε∞"]),
    ({"f": 0.995, "derivation": "reference"}, ValueError, ["f=0.995", "127/128"]),
    ({"cohort": -1}, ValueError, ["cohort=-1"]),
    ({"h": 9, "k": 8}, ValueError, ["h=9"]),
], ids=["short", "str", "ref-k", "md5-k", "derivation", "f0", "ref-f", "cohort", "h"])
def test_client_rejects_bad_parameters_naming_them(kwargs, error, words):
    args = {"k": 32, "h": 2, "f": 0.5, "p": 0.25, "q": 0.75, "cohort": 0, "secret": SECRET, **kwargs}
    with pytest.raises(error) as e:
        RapporClient(**args)
    assert all(w in str(e.value) for w in words), str(e.value)


def test_derived_batch_rejects_bad_keys_and_shapes():
    rows = np.zeros((2, 4), dtype=bool)
    with pytest.raises(ValueError, match="one secret per row"):
        derived_permanent_batch([SECRET], rows, 0.5)
    with pytest.raises(ValueError, match=r"keys\[1\] holds 3 bytes"):
        derived_permanent_batch([SECRET, b"abc"], rows, 0.5)
    with pytest.raises(ValueError, match="k=40"):
        derived_permanent_batch([SECRET], np.zeros((1, 40), dtype=bool), 0.5, "reference")


def test_module_all_lists_exactly_the_public_names():
    import inspect

    public = {n for n, v in vars(rappor_client).items() if not n.startswith("_") and (
        inspect.isfunction(v) or inspect.isclass(v)) and v.__module__ == rappor_client.__name__}
    assert public <= set(rappor_client.__all__) and all(hasattr(rappor_client, n) for n in rappor_client.__all__)


def test_lazy_responses_draw_once_per_bloom_filter():
    with use_source(SeededSource(5)):
        lazy = LazyPermanentResponses(0.25)
        a = lazy.of((True, False, False))
        assert lazy.of((True, False, False)) is a
