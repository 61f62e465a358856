"""A RAPPOR client whose permanent responses last: each is derived from a client secret, so that every run of the
client reports a value through the same permanent randomized response (PRR), as Google's reference client does
(google/rappor: HMAC-SHA256 of the secret over the Bloom filter).

Spec: specs/rappor_client.py · Proof: proofs/rappor_client.md

Two derivations of the PRR of a Bloom filter B from a secret, both deterministic functions of (secret, B, f):

* ``"vetdp"`` (any k): the permanent stage of :func:`vetdp.impl.rappor.rappor_permanent_batch` — B XOR flips,
  each flip an exact Bernoulli(r), r = f/2 rounded up — reading its bytes from the stream SHAKE-256(STREAM_TAG ‖
  HMAC-SHA256(secret, :func:`prr_message`(B, f))) instead of the operating system. If HMAC-SHA256 is a pseudo-random
  function and SHAKE-256 a random oracle, the stream is indistinguishable from uniform bytes, so the PRR has the law
  of a fresh permanent response.
* ``"reference"`` (k <= 32): the reference's rule. Byte i of HMAC-SHA256(secret, B as a 4-byte big-endian integer)
  decides bit i: if its top 7 bits, as an integer, are below 128·f, bit i is the byte's lowest bit, else B_i. Under
  the same assumption bit i flips with probability :func:`reference_flip_probability` (f), i.e. f rounded up to a
  multiple of 1/128, halved.

The instantaneous responses are drawn afresh for every report through vetdp's samplers (the OS CSPRNG by default).
"""

from __future__ import annotations

import functools
import hashlib
import hmac
from collections.abc import Sequence
from typing import Any

import numpy as np

from vetdp.core.measurement import (
    BitVectorDomain,
    DiscreteDistance,
    MaxDivergence,
    Measurement,
    PrivacyConstant,
)
from vetdp.core.validation import check_bool, check_int
from vetdp.impl.rappor import (
    MAX_COHORT,
    MD5_MAX_COHORT,
    RAPPOR_EPSILON_INFINITY,
    _bool_rows,
    _check_domain,
    _check_f,
    _check_pq,
    _check_report_probabilities,
    _check_shape,
    _discrete_distance_map,
    _id_bytes,
    _instantaneous,
    _one_report_constant,
    _permanent,
    bloom_filter,
    rappor_flip_probability,
    rappor_permanent_batch,
)
from vetdp.sampling.primitives import bernoulli_bytes_needed, random_bytes
from vetdp.sampling.sources import RandomSource, use_source

__all__ = [
    "PRR_TAG",
    "STREAM_TAG",
    "CLIENT_TAG",
    "SECRET_BYTES",
    "MIN_SECRET_BYTES",
    "DERIVATIONS",
    "REFERENCE_MAX_K",
    "PrfSource",
    "new_secret",
    "check_secret",
    "client_key",
    "client_keys",
    "prr_message",
    "reference_flip_probability",
    "derivation_flip_probability",
    "derived_permanent_batch",
    "HmacPermanentResponses",
    "LazyPermanentResponses",
    "RapporClient",
    "client_epsilons",
    "make_rappor_client_reports",
    "make_rappor_client_report",
]

PRR_TAG = b"vetdp-rappor-prr-v1"  # domain separation: the PRR message
STREAM_TAG = b"vetdp-rappor-prr-stream-v1"  # domain separation: the stream expanded from a PRR seed
CLIENT_TAG = b"vetdp-rappor-client-v1"  # domain separation: a client's key derived from a master secret
SECRET_BYTES = 32  # a new secret: 256 bits from the OS
MIN_SECRET_BYTES = 16  # the least accepted: 128 bits
DERIVATIONS = ("vetdp", "reference")
REFERENCE_MAX_K = 32  # the reference hashes B as 4 bytes and reads one digest byte per bit


class PrfSource(RandomSource):
    """The bytes of SHAKE-256(STREAM_TAG ‖ HMAC-SHA256(key, message)), in order: a deterministic stream of (key,
    message) — one HMAC gives a 32-byte seed, SHAKE-256 expands it to any length. Independent uniform bytes when
    HMAC-SHA256 is a pseudo-random function and SHAKE-256 a random oracle."""

    def __init__(self, key: bytes, message: bytes):
        self._xof = hashlib.shake_256(STREAM_TAG + hmac.digest(bytes(key), bytes(message), "sha256"))
        self._at = 0

    def random_bytes(self, n: int) -> bytes:
        out = self._xof.digest(self._at + n)[self._at:]
        self._at += n
        return out

    def __repr__(self) -> str:
        return f"PrfSource(<key>, <message>, at byte {self._at})"


def new_secret() -> bytes:
    """A fresh secret of :data:`SECRET_BYTES` bytes from the current source (the OS CSPRNG by default). Keep it:
    the permanent responses are derived from it."""
    return random_bytes(SECRET_BYTES)


def check_secret(name: str, secret: object) -> bytes:
    """``secret`` as bytes, refused unless it is bytes (or bytearray/memoryview) of at least
    :data:`MIN_SECRET_BYTES` bytes."""
    if not isinstance(secret, (bytes, bytearray, memoryview)):
        raise TypeError(f"{name} must be bytes, not {type(secret).__name__}")
    data = bytes(secret)
    if len(data) < MIN_SECRET_BYTES:
        raise ValueError(f"{name} holds {len(data)} bytes; a secret needs at least {MIN_SECRET_BYTES} (128 bits)")
    return data


def client_key(master: bytes, client_id: str | bytes | int) -> bytes:
    """The secret of client ``client_id`` under the master secret ``master``: HMAC-SHA256(master, CLIENT_TAG ‖ a type
    tag (b"b" for str/bytes, a str as UTF-8; b"i" for an int, as its minimal two's-complement big-endian bytes) ‖
    the 8-byte length of the id's bytes ‖ the id's bytes) — the id encoding of
    :func:`vetdp.impl.rappor.assign_cohort`, injective. Distinct ids get independent keys under the PRF assumption.

    Preconditions: ``master`` bytes of at least 16 bytes; ``client_id`` a str, bytes or int (not a bool)."""
    master = check_secret("master", master)
    return hmac.digest(master, CLIENT_TAG + _id_bytes(client_id), "sha256")


def client_keys(master: bytes, client_ids: Sequence[str | bytes | int]) -> list[bytes]:
    """``[client_key(master, i) for i in client_ids]``, the master secret checked once."""
    master = check_secret("master", master)
    digest = hmac.digest
    return [digest(master, CLIENT_TAG + _id_bytes(i), "sha256") for i in client_ids]


def prr_message(bits: Any, f: float) -> bytes:
    """The HMAC message of the ``"vetdp"`` derivation for Bloom filter ``bits`` (k bits, bit i = position i) and
    flip parameter f: PRR_TAG ‖ k (8 bytes big-endian) ‖ f as an IEEE-754 binary64 (big-endian) ‖ the bits packed
    eight to a byte, bit i at bit 7 − (i mod 8) of byte i // 8 (``numpy.packbits``). Injective in (k, f, bits)."""
    row = np.asarray(bits, dtype=bool).reshape(-1)
    return (PRR_TAG + len(row).to_bytes(8, "big") + np.float64(f).astype(">f8").tobytes()
            + np.packbits(row).tobytes())


def reference_flip_probability(f: float) -> float:
    """The probability that the reference's rule flips a bit: (the number of v in 0..127 with v < 128·f)/256, i.e.
    ⌈128 f⌉/256 for f in [0, 1) — f/2 when 128·f is an integer, else more. Exact (a multiple of 1/256).
    Precondition: f a float in [0, 1)."""
    f = _check_f(f)
    return sum(1 for v in range(128) if v < 128 * f) / 256  # 128·f is exact: a power-of-two scaling


def derivation_flip_probability(f: float, derivation: str) -> float:
    """The flip probability of the PRR under ``derivation``: :func:`~vetdp.impl.rappor.rappor_flip_probability`
    (f/2 rounded up) for ``"vetdp"``, :func:`reference_flip_probability` for ``"reference"``."""
    if derivation not in DERIVATIONS:
        raise ValueError(f"derivation={derivation!r} must be one of {', '.join(DERIVATIONS)}")
    return rappor_flip_probability(f) if derivation == "vetdp" else reference_flip_probability(f)


def _effective_f(f: float, derivation: str) -> float:
    """The f whose :func:`rappor_flip_probability` is the derivation's flip probability (f itself for vetdp, 2·r
    for the reference, a multiple of 1/128), refused when the reference's rounding reaches 1."""
    f = _check_f(f)
    if derivation == "vetdp":
        return f
    effective = 2 * reference_flip_probability(f)
    if effective >= 1:
        raise ValueError(f"f={f!r}: derivation='reference' rounds f up to a multiple of 1/128, here to 1 (every "
                         f"permanent bit a coin flip, nothing reported); use f <= 127/128")
    return effective


class _BufferSource(RandomSource):
    """Serves ``data`` in order, then ones (the caller recomputes every row that read past ``data``)."""

    def __init__(self, data: bytes):
        self._data, self._at = data, 0

    def random_bytes(self, n: int) -> bytes:
        out = self._data[self._at:self._at + n]
        self._at += n
        return out + b"\x01" * (n - len(out))


def _vetdp_row(key: bytes, row: np.ndarray, f: float) -> np.ndarray:
    """The definition of the ``"vetdp"`` PRR of one row: rappor_permanent_batch on the row, reading the PRF stream."""
    with use_source(PrfSource(key, prr_message(row, f))):
        return rappor_permanent_batch(row[None, :], f)[0]


def _vetdp_rows(keys: Sequence[bytes], rows: np.ndarray, f: float) -> np.ndarray:
    """:func:`_vetdp_row` of every row, vectorised: the first k bytes of every row's stream decide every cell whose
    byte is non-zero (the batch sampler's first round); a row with a zero byte among them, which reads further
    bytes when r needs more than one byte, is recomputed by :func:`_vetdp_row`. The messages are
    :func:`prr_message`'s, built for all rows at once."""
    n, k = rows.shape
    head = PRR_TAG + k.to_bytes(8, "big") + np.float64(f).astype(">f8").tobytes()
    packed = np.packbits(rows, axis=1)
    width, flat = packed.shape[1], packed.tobytes()
    digest, shake = hmac.digest, hashlib.shake_256
    stream = b"".join(shake(STREAM_TAG + digest(key, head + flat[i * width:(i + 1) * width], "sha256")).digest(k)
                      for i, key in enumerate(keys))
    first = np.frombuffer(stream, dtype=np.uint8).reshape(n, k)
    with use_source(_BufferSource(stream)):
        out = rappor_permanent_batch(rows, f)
    if bernoulli_bytes_needed(rappor_flip_probability(f)) > 1:
        for i in np.flatnonzero((first == 0).any(axis=1)):
            out[i] = _vetdp_row(keys[i], rows[i], f)
    return out


def _reference_rows(keys: Sequence[bytes], rows: np.ndarray, f: float) -> np.ndarray:
    """The reference's PRR of every row: byte i of HMAC-SHA256(key, B as 4 bytes big-endian) gives bit i."""
    n, k = rows.shape
    weights = (1 << np.arange(k, dtype=np.uint64)).astype(np.uint64)  # bit i of the integer B is position i
    values = (rows.astype(np.uint64) * weights).sum(axis=1, dtype=np.uint64) if k else np.zeros(n, np.uint64)
    digests = b"".join(hmac.digest(key, int(v).to_bytes(4, "big"), "sha256")
                       for key, v in zip(keys, values.tolist(), strict=True))
    d = np.frombuffer(digests, dtype=np.uint8).reshape(n, 32)[:, :k]
    noise = (d >> 1) < 128 * f
    return np.where(noise, (d & 1).astype(bool), rows)


def derived_permanent_batch(keys: Sequence[bytes], bloom_rows: Any, f: float, derivation: str = "vetdp") -> np.ndarray:
    """The PRR of every row of an (n, k) bit array, row i derived from the secret ``keys[i]`` (see the module
    docstring): a deterministic function of (keys[i], row i, f, derivation), the same in every run and on every
    machine. Under the PRF assumption each row's bits flip independently with probability
    :func:`derivation_flip_probability` (f, derivation), independently across rows with distinct (key, row).

    Preconditions: ``keys`` n bytes objects of at least 16 bytes; ``bloom_rows`` a 2-D array of bits; ``f`` a float
    in [0, 1); ``derivation`` one of :data:`DERIVATIONS` (``"reference"``: k <= 32 and f <= 127/128).
    """
    rows = _bool_rows("bloom_rows", bloom_rows)
    f = _check_f(f)
    if derivation not in DERIVATIONS:
        raise ValueError(f"derivation={derivation!r} must be one of {', '.join(DERIVATIONS)}")
    if isinstance(keys, (str, bytes)) or len(keys) != rows.shape[0]:
        raise ValueError(f"keys must hold one secret per row ({rows.shape[0]})")
    keys = [check_secret(f"keys[{i}]", key) for i, key in enumerate(keys)]
    if derivation == "reference":
        if rows.shape[1] > REFERENCE_MAX_K:
            raise ValueError(f"k={rows.shape[1]}: derivation='reference' hashes the Bloom filter as 4 bytes and "
                             f"reads one digest byte per bit, so it needs k in [1, {REFERENCE_MAX_K}]")
        _effective_f(f, derivation)
        return _reference_rows(keys, rows, f)
    return _vetdp_rows(keys, rows, f)


class HmacPermanentResponses:
    """The permanent responses of one secret: :meth:`of` (B) = :func:`derived_permanent_batch` ([secret], [B], f,
    derivation) — nothing is stored, so every run recomputes the same response."""

    def __init__(self, secret: bytes, f: float, derivation: str):
        self.secret, self.f, self.derivation = secret, f, derivation

    def of(self, bits: tuple[bool, ...]) -> tuple[bool, ...]:
        row = derived_permanent_batch([self.secret], np.array([bits], dtype=bool), self.f, self.derivation)[0]
        return tuple(bool(b) for b in row)


class LazyPermanentResponses:
    """The idealised secret (a random function, drawn lazily): :meth:`of` (B) draws B XOR Bernoulli(r) flips through
    the sampler primitives (the context's source; the engine enumerates them) the first time B is asked for and
    returns the same response ever after. What :class:`HmacPermanentResponses` is when HMAC-SHA256 is replaced by a
    truly random function."""

    def __init__(self, flip: float, constant_time: bool = False):
        self.flip, self.constant_time = flip, constant_time
        self._drawn: dict[tuple[bool, ...], tuple[bool, ...]] = {}

    def of(self, bits: tuple[bool, ...]) -> tuple[bool, ...]:
        found = self._drawn.get(bits)
        if found is None:
            found = self._drawn[bits] = _permanent(bits, self.flip, self.constant_time)
        return found


def _privacy(h: int, k: int, f: float, p: float, q: float, derivation: str) -> tuple[PrivacyConstant, PrivacyConstant,
                                                                                      float, float, float]:
    """(ε₁ constant, ε∞ constant, ε₁, ε∞, flip probability) of a client under ``derivation`` (checks f, p, q)."""
    f_value = _effective_f(f, derivation)
    if f_value == 0:
        raise ValueError("f=0.0 must be in (0, 1) for a RAPPOR client: without a permanent response repeated "
                         "reports have no loss bound independent of their number (ε∞ is infinite)")
    p_value, q_value = _check_pq(p, q)
    rv = _check_report_probabilities(f_value, p_value, q_value)
    return (*_constants(h, k, rv, p_value, q_value), rv)


@functools.lru_cache(maxsize=64)
def _constants(h: int, k: int, rv: float, pv: float, qv: float) -> tuple[PrivacyConstant, PrivacyConstant, float,
                                                                          float]:
    """(ε₁ constant, ε∞ constant, their values) of checked parameters: a function of its arguments alone, kept for
    the last 64 (each value costs milliseconds of directed rounding; a client per call would pay them per call)."""
    one = _one_report_constant(rv, pv, qv, h, k)
    many = PrivacyConstant(RAPPOR_EPSILON_INFINITY, {"q": rv, "d": min(2 * h, k)})
    return one, many, one.value, many.value


def client_epsilons(k: int, h: int, f: float, p: float, q: float, derivation: str = "vetdp") -> tuple[float, float]:
    """(ε₁, ε∞) of a client (:attr:`RapporClient.epsilon_one`, :attr:`RapporClient.epsilon_infinity`) without making
    one: one report, and all reports of one value over every run with one secret, at the derivation's flip
    probability. Preconditions as :class:`RapporClient` (hash aside)."""
    k, h = _check_shape(k, h)
    if derivation not in DERIVATIONS:
        raise ValueError(f"derivation={derivation!r} must be one of {', '.join(DERIVATIONS)}")
    if derivation == "reference" and k > REFERENCE_MAX_K:
        raise ValueError(f"k={k}: derivation='reference' needs k in [1, {REFERENCE_MAX_K}]")
    _, _, one, many, _ = _privacy(h, k, f, p, q, derivation)
    return one, many


class RapporClient:
    """One RAPPOR client: reports string values through its cohort's Bloom filter, each value through one permanent
    response (PRR) derived from the client's ``secret`` — the same PRR in this run and in every later run with the
    same secret — and a fresh instantaneous response per report.

    ``secret``: bytes (at least 16; :func:`new_secret` makes one; :func:`client_key` derives one per client from a
    master secret). Without a secret (None) the client draws each PRR the first time it reports the value and keeps it
    for as long as the object lives only: the idealised secret of :class:`LazyPermanentResponses`, for tests and the
    engine; a later run would draw anew and lose the ε∞ bound across runs. ``derivation``: ``"vetdp"`` or
    ``"reference"`` (k <= 32; the reference client's PRR bit for bit); ``hash``: the Bloom positions
    (:data:`vetdp.impl.rappor.HASHES`).

    Preconditions: ``k`` in [1, 2**32] (md5: <= 256; reference derivation: <= 32), ``h`` in [1, k]; ``f`` in (0, 1)
    (reference: <= 127/128); 0 <= p < q <= 1 with p*, 1 − q* >= 2**-1000; ``cohort`` in [0, 2**64 − 1] (md5:
    < 2**32); ``constant_time`` a bool (the instantaneous draws; the PRR is computed once per value from the secret).

    Privacy: all reports of one value (of one Bloom filter) together, over every run with this secret, are
    :attr:`epsilon_infinity`-DP if HMAC-SHA256 is a pseudo-random function (exactly the law of
    :func:`make_rappor_client_reports`); a single report is :attr:`epsilon_one`-DP. Both use the derivation's flip
    probability (:attr:`flip`). Values are keyed by their Bloom filter, a str hashed as its UTF-8.

    Proof: proofs/rappor_client.md
    """

    def __init__(self, k: int, h: int, f: float, p: float, q: float, cohort: int, secret: bytes | None = None, *,
                 hash: str = "sha256", derivation: str = "vetdp", constant_time: bool = False):
        k, h = _check_shape(k, h, hash)
        if derivation not in DERIVATIONS:
            raise ValueError(f"derivation={derivation!r} must be one of {', '.join(DERIVATIONS)}")
        if derivation == "reference" and k > REFERENCE_MAX_K:
            raise ValueError(f"k={k}: derivation='reference' needs k in [1, {REFERENCE_MAX_K}]")
        check_bool("constant_time", constant_time)
        _, _, one, many, flip = _privacy(h, k, f, p, q, derivation)
        self.k, self.h, self.f, self.p, self.q = k, h, _check_f(f), *_check_pq(p, q)
        self.hash, self.derivation, self.flip, self.constant_time = hash, derivation, flip, constant_time
        self.cohort = check_int("cohort", cohort, lo=0, hi=MAX_COHORT if hash == "sha256" else MD5_MAX_COHORT)
        self.epsilon_one: float = one
        self.epsilon_infinity: float = many
        if secret is None:
            self.secret = None
            self._responses: Any = LazyPermanentResponses(flip, constant_time)
        else:
            self.secret = check_secret("secret", secret)
            self._responses = HmacPermanentResponses(self.secret, self.f, derivation)

    def bloom_filter(self, value: str | bytes) -> tuple[bool, ...]:
        """The Bloom filter of ``value`` in this client's cohort."""
        return bloom_filter(value, self.cohort, self.k, self.h, self.hash)

    def permanent_response(self, value: str | bytes) -> tuple[bool, ...]:
        """The permanent response of ``value``: a function of (secret, Bloom filter of value, f) only."""
        return self._responses.of(self.bloom_filter(value))

    def report(self, value: str | bytes) -> tuple[bool, ...]:
        """One report of ``value``: a fresh instantaneous response of its permanent response."""
        return _instantaneous(self.permanent_response(value), self.p, self.q, self.constant_time)


def make_rappor_client_reports(input_domain: BitVectorDomain, input_metric: DiscreteDistance, f: float, p: float,
                               q: float, runs: int, derivation: str = "vetdp",
                               constant_time: bool = False) -> Measurement:
    """The reports of one Bloom filter made by one client in ``runs`` separate runs, one report per run, every run
    deriving the permanent response from the client's secret — modelled, as the PRF assumption allows, by one
    :class:`LazyPermanentResponses` shared by the runs (a fresh secret per call of the function).

    Preconditions: as :func:`vetdp.impl.rappor.make_rappor_reports` (f in (0, 1)); ``runs`` an int >= 1;
    ``derivation`` one of :data:`DERIVATIONS` (``"reference"``: k <= 32, f <= 127/128).

    Privacy: map(1) = ε∞ = min(2h, k)·ln((1 − r)/r) rounded up, r = the derivation's flip probability, whatever
    ``runs`` is: every run's report is post-processing of the one permanent response. map(d_in > 1) raises.

    Proof: proofs/rappor_client.md
    """
    return _client_measurement("make_rappor_client_reports", input_domain, input_metric, f, p, q, runs, derivation,
                               constant_time)


def make_rappor_client_report(input_domain: BitVectorDomain, input_metric: DiscreteDistance, f: float, p: float,
                              q: float, derivation: str = "vetdp", constant_time: bool = False) -> Measurement:
    """One client reporting one Bloom filter per call, its permanent responses kept across calls: the measurement is
    the client (:meth:`RapporClient.report` on Bloom filters). The first call on a Bloom filter B draws B's permanent
    response from the client's secret, modelled as the PRF assumption allows by one
    :class:`LazyPermanentResponses` held by the measurement (one measurement, one client, one secret); every call
    reports a fresh instantaneous response of it.

    Preconditions: as :func:`make_rappor_client_reports`, without ``runs``.

    Privacy: map(1) = ε₁ (one call, one report) at the derivation's flip probability r; map(d_in > 1) raises. The
    calls on one Bloom filter share its permanent response (declared by the spec as memoisation): together they are
    ε∞ = min(2h, k)·ln((1 − r)/r)-DP, the bound of :func:`make_rappor_client_reports`.

    Proof: proofs/rappor_client.md
    """
    return _client_measurement("make_rappor_client_report", input_domain, input_metric, f, p, q, None, derivation,
                               constant_time)


def _client_measurement(name: str, input_domain: BitVectorDomain, input_metric: DiscreteDistance, f: float, p: float,
                        q: float, runs: int | None, derivation: str, constant_time: bool) -> Measurement:
    """The two client measurements, preconditions checked: ``runs`` reports of a fresh client per call (map ε∞), or
    (``runs`` None) one report per call of one client, its permanent responses kept across calls (map ε₁)."""
    h, k = _check_domain(name, input_domain, input_metric)
    if derivation not in DERIVATIONS:
        raise ValueError(f"derivation={derivation!r} must be one of {', '.join(DERIVATIONS)}")
    if derivation == "reference" and k > REFERENCE_MAX_K:
        raise ValueError(f"k={k}: derivation='reference' needs k in [1, {REFERENCE_MAX_K}]")
    one, many, epsilon_one, epsilon_infinity, flip = _privacy(h, k, f, p, q, derivation)
    p_value, q_value = _check_pq(p, q)
    n_runs = None if runs is None else check_int("runs", runs, lo=1)
    check_bool("constant_time", constant_time)
    if n_runs is None:
        responses = LazyPermanentResponses(flip, constant_time)  # this client's secret, for every call

        def function(bits: tuple[bool, ...]) -> Any:
            return _instantaneous(responses.of(tuple(bits)), p_value, q_value, constant_time)
    else:
        def function(bits: tuple[bool, ...]) -> Any:
            secret = LazyPermanentResponses(flip, constant_time)  # one client, one secret, every run
            return tuple(_instantaneous(secret.of(tuple(bits)), p_value, q_value, constant_time)
                         for _ in range(n_runs))

    return Measurement(
        input_domain=input_domain,
        input_metric=input_metric,
        output_measure=MaxDivergence(),
        function=function,
        privacy_map=_discrete_distance_map(epsilon_one if n_runs is None else epsilon_infinity),
        output_domain=None,
        privacy_constant=one if n_runs is None else many,
        parameters={"input_domain": input_domain, "input_metric": input_metric, "f": _check_f(f), "p": p_value,
                    "q": q_value, **({} if n_runs is None else {"runs": n_runs}), "derivation": derivation,
                    "constant_time": constant_time},
        name=name,
    )
