"""RAPPOR end to end (Erlingsson, Pihur, Korolova, CCS 2014): Bloom-filter encoding of strings, cohorts, and the
two-stage randomization (permanent then instantaneous randomized response) with its privacy maps.

Spec: specs/rappor.py · Proof: proofs/rappor.md

Encoding (deviation from the paper, which uses MD5 per cohort): bit positions come from SHA-256 over an
unambiguous byte string (:func:`hash_message`), read as 64-bit words reduced to [0, k) by rejection, so every
position is exactly uniform when SHA-256 is modelled as a random function (no modulo bias).
"""

from __future__ import annotations

import hashlib
import numbers
from collections.abc import Callable, Iterable, Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from vetdp.arith.constants import register_constant
from vetdp.arith.expr import ONE, TWO, Expr, Op, Var, var
from vetdp.core.measurement import (
    BitVectorDomain,
    DiscreteDistance,
    MaxDivergence,
    Measurement,
    PrivacyConstant,
    as_bit_rows,
)
from vetdp.core.validation import check_bool, check_float, check_int, check_interval, exact_rational
from vetdp.impl.randomized_response_bitvec import RANDOMIZED_RESPONSE_BITVEC_EPSILON, flip_probability
from vetdp.sampling.batch import sample_bernoulli_batch
from vetdp.sampling.primitives import sample_bernoulli_float

__all__ = [
    "RAPPOR_EPSILON_ONE",
    "RAPPOR_EPSILON_INFINITY",
    "RAPPOR_REPORT_GAP",
    "RAPPOR_P_STAR",
    "RAPPOR_ONE_MINUS_Q_STAR",
    "RAPPOR_LOG_RATIO",
    "RAPPOR_EPSILON_ONE_SUM",
    "RAPPOR_MIN_REPORT_PROBABILITY",
    "make_rappor_report",
    "make_rappor_reports",
    "rappor_flip_probability",
    "rappor_report_loss_weights",
    "HASH_TAG",
    "COHORT_TAG",
    "MAX_COHORT",
    "MAX_K",
    "hash_message",
    "HASHES",
    "md5_message",
    "bloom_positions",
    "bloom_positions_many",
    "bloom_filter",
    "bloom_filter_matrix",
    "assign_cohort",
    "assign_cohorts",
    "rappor_permanent_batch",
    "rappor_instantaneous_batch",
]

HASH_TAG = b"vetdp-rappor-bloom-v1"  # domain separation: Bloom positions
COHORT_TAG = b"vetdp-rappor-cohort-v1"  # domain separation: cohort assignment
MAX_COHORT = 2**64 - 1  # cohorts are encoded in 8 bytes
MAX_K = 2**32  # the largest k (and number of cohorts): a 64-bit word is rejected with chance < 2**-32
IRR_BLOCK_CELLS = 1 << 18  # cells per block of rappor_instantaneous_batch (a block's masks stay in the CPU cache)
# Bloom position hashes: vetdp's SHA-256 stream (the default), or the reference client's MD5 (google/rappor: byte i of
# MD5(4-byte big-endian cohort ‖ value) mod k is position i), for reports that the reference's tools must read
HASHES = ("sha256", "md5")
MD5_MAX_K = 256  # one digest byte per position: positions beyond 255 are never set
MD5_MAX_H = 16  # one digest byte per hash function
MD5_MAX_COHORT = 2**32 - 1  # the cohort is hashed as 4 bytes


# ------------------------------------------------------------------ encoding

def _value_bytes(name: str, value: object) -> bytes:
    """``value`` as bytes: a str as its UTF-8 encoding, bytes (or bytearray/memoryview) as they are."""
    if isinstance(value, str):
        try:
            return value.encode("utf-8")
        except UnicodeEncodeError as e:
            raise ValueError(f"{name}={value!r} must be encodable as UTF-8 ({e.reason})") from None
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    raise TypeError(f"{name}={value!r} must be a str or bytes, not {type(value).__name__}")


def _check_shape(k: object, h: object, hash: object = "sha256") -> tuple[int, int]:
    if hash not in HASHES:
        raise ValueError(f"hash={hash!r} must be one of {', '.join(HASHES)}")
    k = check_int("k", k, lo=1, hi=MAX_K)
    h = check_int("h", h, lo=1)
    if hash == "md5" and (k > MD5_MAX_K or h > MD5_MAX_H):
        raise ValueError(f"k={k!r}, h={h!r}: hash='md5' (the reference's positions, one MD5 byte each) needs k in "
                         f"[1, {MD5_MAX_K}] and h in [1, {MD5_MAX_H}]")
    if h > k:
        raise ValueError(f"h={h!r} must be in [1, k={k}] (at most one hash function per bit)")
    return k, h


def md5_message(cohort: int, value: bytes) -> bytes:
    """The byte string whose MD5 gives the reference client's Bloom positions of ``value`` in ``cohort``: the
    cohort as 4 bytes big-endian unsigned, then the value's bytes (google/rappor's documented encoding)."""
    return cohort.to_bytes(4, "big") + value


def _md5_positions_many(values: Sequence[bytes], value_index: Sequence[int], cohorts: Sequence[int], k: int,
                        h: int) -> np.ndarray:
    """The reference's positions of every pair (values[value_index[i]], cohorts[i]) as a (len(cohorts), h) int64
    array: byte j of MD5(:func:`md5_message`) mod k for j < h."""
    md5 = hashlib.md5
    heads = {c: c.to_bytes(4, "big") for c in set(cohorts)}
    digests = b"".join(md5(heads[c] + values[v]).digest() for v, c in zip(value_index, cohorts, strict=True))
    return np.frombuffer(digests, dtype=np.uint8).reshape(len(cohorts), 16)[:, :h].astype(np.int64) % k


def hash_message(cohort: int, block: int, value: bytes) -> bytes:
    """The byte string whose SHA-256 is block ``block`` of the position stream of ``value`` in ``cohort``:
    HASH_TAG, then cohort (8 bytes), block (4 bytes), len(value) (8 bytes), all big-endian unsigned, then the
    value's bytes. Fixed widths and the length prefix make it injective."""
    return HASH_TAG + cohort.to_bytes(8, "big") + block.to_bytes(4, "big") + len(value).to_bytes(8, "big") + value


def _word_limit(k: int) -> int:
    """The largest multiple of k that is <= 2**64: a 64-bit word below it, taken mod k, is uniform on [0, k)."""
    return (1 << 64) - (1 << 64) % k


def _reduce(digest_of, n: int) -> int:
    """A value in [0, n) from 256-bit digests, by rejection: the first attempt whose digest d (big-endian)
    is below the largest multiple of n that fits in 256 bits gives d mod n (rejection chance < n/2**256)."""
    limit = (1 << 256) - (1 << 256) % n
    attempt = 0
    while True:
        d = int.from_bytes(digest_of(attempt), "big")
        if d < limit:
            return d % n
        attempt += 1  # pragma: no cover - probability < 2**-224 for n <= 2**32


def _positions(value: bytes, cohort: int, k: int, h: int) -> tuple[int, ...]:
    """The h (not necessarily distinct) bit positions of ``value`` in ``cohort``: the first h accepted 64-bit words
    of the stream SHA-256(hash_message(cohort, 0, value)) ‖ SHA-256(hash_message(cohort, 1, value)) ‖ …, each
    taken mod k (see :func:`bloom_positions`)."""
    limit = _word_limit(k)
    out: list[int] = []
    block = 0
    while len(out) < h:
        digest = hashlib.sha256(hash_message(cohort, block, value)).digest()
        for j in range(0, 32, 8):
            w = int.from_bytes(digest[j:j + 8], "big")
            if w < limit and len(out) < h:
                out.append(w % k)
        block += 1
    return tuple(out)


def _positions_many(values: Sequence[bytes], value_index: Sequence[int], cohorts: Sequence[int], k: int,
                    h: int) -> np.ndarray:
    """:func:`_positions` of every pair (values[value_index[i]], cohorts[i]) as a (len(cohorts), h) int64 array:
    the digests of the ceil(h/4) blocks each pair needs are read as big-endian 64-bit words at once; a row with a
    rejected word (chance < h·k/2**64) is recomputed by :func:`_positions`."""
    blocks = (h + 3) // 4
    sha = hashlib.sha256
    tails = [len(v).to_bytes(8, "big") + v for v in values]
    prefixes = {c: [HASH_TAG + c.to_bytes(8, "big") + b.to_bytes(4, "big") for b in range(blocks)]
                for c in set(cohorts)}
    if blocks == 1:  # the lookups by map (in C), then one concatenation and one hash per pair
        first = {c: pre[0] for c, pre in prefixes.items()}
        digests = [sha(pre + tail).digest()
                   for pre, tail in zip(map(first.__getitem__, cohorts), map(tails.__getitem__, value_index),
                                        strict=True)]
    else:
        digests = [sha(pre + tails[v]).digest() for v, c in zip(value_index, cohorts, strict=True)
                   for pre in prefixes[c]]
    words = np.frombuffer(b"".join(digests), dtype=">u8").reshape(len(cohorts), 4 * blocks)[:, :h]
    out = (words % np.uint64(k)).astype(np.int64)
    limit = _word_limit(k)
    if limit < 1 << 64:  # k not a power of two: some words are rejected
        for row in np.flatnonzero((words >= np.uint64(limit)).any(axis=1)):  # pragma: no cover - chance < 2**-29
            out[row] = _positions(values[value_index[row]], cohorts[row], k, h)
    return out


def bloom_positions(value: str | bytes, cohort: int, k: int, h: int, hash: str = "sha256") -> tuple[int, ...]:
    """The positions of hash functions 0..h−1 for ``value`` in ``cohort``, in order (repeats are collisions).

    ``hash="sha256"`` (vetdp's): the bytes SHA-256(:func:`hash_message`(cohort, 0, value)) ‖ SHA-256(hash_message(
    cohort, 1, value)) ‖ … are read as big-endian 64-bit words; a word below the largest multiple of k under 2**64 is
    accepted (others, a chance < k/2**64 each, are skipped) and position i is the i-th accepted word mod k. So each
    position is exactly uniform on [0, k) when SHA-256 is modelled as a random function (no modulo bias), one hash
    serves up to four positions, and the result is deterministic across runs and machines.

    ``hash="md5"``: the reference client's positions, byte i of MD5(:func:`md5_message`(cohort, value)) mod k (k <=
    256, h <= 16, cohort < 2**32; uniform on [0, k) when MD5 is modelled as a random function and k divides 256,
    else biased towards the low positions, as in the reference). Either way a str is hashed as its UTF-8 bytes
    (``"a"`` and ``b"a"`` agree).

    Preconditions: ``value`` a str or bytes; ``cohort`` an int in [0, 2**64 − 1]; ``k`` in [1, 2**32];
    ``h`` in [1, k]; ``hash`` one of :data:`HASHES` (md5: k <= 256, h <= 16, cohort <= 2**32 − 1).
    """
    data = _value_bytes("value", value)
    k, h = _check_shape(k, h, hash)
    cohort = check_int("cohort", cohort, lo=0, hi=MAX_COHORT if hash == "sha256" else MD5_MAX_COHORT)
    if hash == "md5":
        return tuple(int(x) for x in _md5_positions_many([data], [0], [cohort], k, h)[0])
    return _positions(data, cohort, k, h)


def bloom_positions_many(values: Sequence[str | bytes], cohorts: Sequence[int], k: int, h: int,
                         hash: str = "sha256") -> np.ndarray:
    """An (n, h) int64 array whose row i is ``bloom_positions(values[i], cohorts[i], k, h, hash)`` (the positions
    in hash order, repeats kept), computed at once. Preconditions as :func:`bloom_positions`, for every entry;
    ``values`` and ``cohorts`` of equal length."""
    k, h = _check_shape(k, h, hash)
    data = [_value_bytes(f"values[{i}]", v) for i, v in enumerate(values)]
    cohort_list = [int(c) for c in _as_cohorts(cohorts, len(data), MAX_COHORT if hash == "sha256"
                                               else MD5_MAX_COHORT).tolist()]
    if not data:
        return np.zeros((0, h), dtype=np.int64)
    many = _positions_many if hash == "sha256" else _md5_positions_many
    return many(data, range(len(data)), cohort_list, k, h)


def bloom_filter(value: str | bytes, cohort: int, k: int, h: int, hash: str = "sha256") -> tuple[bool, ...]:
    """The k-bit Bloom filter of ``value`` in ``cohort``: bit j is set iff some hash function 0..h−1 maps to j.

    Postcondition: a tuple of k bools with between 1 and h set bits (fewer than h exactly when hash functions
    collide), i.e. a member of ``BitVectorDomain(max_weight=h, length=k)``; see :func:`bloom_positions` for the
    hash. Preconditions as :func:`bloom_positions`.
    """
    positions = set(bloom_positions(value, cohort, k, h, hash))
    return tuple(j in positions for j in range(k))


def _as_cohorts(cohorts: Any, n: int, hi: int = MAX_COHORT) -> np.ndarray:
    """``cohorts`` as a 1-D array of n ints in [0, hi] (int64, uint64, or object for Python ints beyond)."""
    if isinstance(cohorts, (str, bytes)):
        raise TypeError(f"cohorts={cohorts!r} must be a sequence of ints, not {type(cohorts).__name__}")
    if isinstance(cohorts, np.ndarray):
        arr = cohorts
        if arr.ndim == 1 and arr.size and (arr.dtype == np.bool_ or not np.issubdtype(arr.dtype, np.integer)):
            raise TypeError(f"cohorts must hold ints, got dtype {arr.dtype}")
    else:
        items = list(cohorts)
        for i, c in enumerate(items):
            if isinstance(c, bool) or not isinstance(c, numbers.Integral):
                raise TypeError(f"cohorts[{i}]={c!r} must be an int, not {type(c).__name__}")
        ints = [int(c) for c in items]
        fits = all(-(2**63) <= c < 2**63 for c in ints)
        arr = np.array(ints, dtype=np.int64 if fits else object)
    if arr.ndim != 1 or arr.shape[0] != n:
        raise ValueError(f"cohorts must be one-dimensional with len(values) = {n} entries, got shape {arr.shape}")
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    lo, high = (min(arr.tolist()), max(arr.tolist())) if arr.dtype == object else (int(arr.min()), int(arr.max()))
    if lo < 0 or high > hi:
        bad = lo if lo < 0 else high
        raise ValueError(f"cohorts holds {bad}; every cohort must be in [0, {hi}]")
    return arr


def bloom_filter_matrix(values: Sequence[str | bytes], cohorts: Sequence[int] | np.ndarray, k: int,
                        h: int, hash: str = "sha256") -> np.ndarray:
    """An (n, k) bool array whose row i is ``bloom_filter(values[i], cohorts[i], k, h)``.

    Hashes once per distinct (cohort, value) pair and fills the rows by fancy indexing, so 10**6 rows over
    10**4 values and 128 cohorts cost one hash round per distinct pair. Preconditions as :func:`bloom_filter`,
    for every entry; ``values`` and ``cohorts`` of equal length (NumPy integer arrays accepted for cohorts).
    """
    k, h = _check_shape(k, h, hash)
    if isinstance(values, (str, bytes)) or not isinstance(values, (Sequence, np.ndarray)):
        raise TypeError(f"values must be a sequence of str or bytes, not {type(values).__name__}")
    n = len(values)
    cohort_arr = _as_cohorts(cohorts, n, MAX_COHORT if hash == "sha256" else MD5_MAX_COHORT)
    if n == 0:
        return np.zeros((0, k), dtype=bool)
    try:  # keyed by the value itself: "a" and b"a" get two ids but the same positions
        raw = {v: j for j, v in enumerate(dict.fromkeys(values))}  # ids in order of first appearance
        value_ids = np.fromiter(map(raw.__getitem__, values), dtype=np.int64, count=n)
    except TypeError:  # an unhashable value (e.g. a bytearray): convert every entry first, naming a bad one
        data = [_value_bytes(f"values[{i}]", v) for i, v in enumerate(values)]
        raw = {v: j for j, v in enumerate(dict.fromkeys(data))}
        value_ids = np.fromiter(map(raw.__getitem__, data), dtype=np.int64, count=n)
    distinct: list[bytes] = []
    for j, v in enumerate(raw):
        try:
            distinct.append(_value_bytes("value", v))
        except (TypeError, ValueError):
            i = int(np.argmax(value_ids == j))
            _value_bytes(f"values[{i}]", v)  # raises, naming the first entry with this value
            raise
    if cohort_arr.dtype == object:  # cohorts beyond int64: key on the pair's Python ints
        pairs = list(zip(value_ids.tolist(), cohort_arr.tolist(), strict=True))
        index: dict[tuple[int, int], int] = {}
        inverse = np.array([index.setdefault(pr, len(index)) for pr in pairs], dtype=np.int64)
        unique_values, unique_cohorts = [v for v, _ in index], [c for _, c in index]
    else:
        low = cohort_arr.min()
        span = int(cohort_arr.max() - low) + 1
        if len(raw) * span <= max(4 * n, 1 << 20):  # few possible pairs: mark them in a table (no sort)
            key = value_ids * span + (cohort_arr - low).astype(np.int64)
            present = np.zeros(len(raw) * span, dtype=bool)
            present[key] = True
            unique_keys = np.flatnonzero(present)
            inverse = (np.cumsum(present, dtype=np.int64) - 1)[key]  # rank of each row's pair among those present
            unique_values = (unique_keys // span).tolist()
            unique_cohorts = ((unique_keys % span).astype(cohort_arr.dtype) + low).tolist()
        else:
            cohort_ids, cohort_inverse = np.unique(cohort_arr.astype(np.uint64), return_inverse=True)
            key = value_ids * len(cohort_ids) + cohort_inverse.reshape(-1)
            unique_keys, inverse = np.unique(key, return_inverse=True)
            unique_values = (unique_keys // len(cohort_ids)).tolist()
            unique_cohorts = cohort_ids[unique_keys % len(cohort_ids)].tolist()
    many = _positions_many if hash == "sha256" else _md5_positions_many
    positions = many(distinct, unique_values, unique_cohorts, k, h)
    table = np.zeros((len(unique_cohorts), k), dtype=bool)
    table[np.arange(len(unique_cohorts))[:, None], positions] = True
    return np.take(table, inverse.reshape(-1), axis=0)


def _id_bytes(client_id: object) -> bytes:
    """An injective encoding of a client id: a type tag (b"b" for str/bytes — a str as UTF-8 — b"i" for an int, as
    its minimal two's-complement big-endian bytes), the 8-byte length of the id's bytes, the id's bytes."""
    if isinstance(client_id, bool):
        raise TypeError(f"client_id={client_id!r} must be a str, bytes or int, not bool")
    if isinstance(client_id, numbers.Integral):
        x = int(client_id)
        tag, data = b"i", x.to_bytes((x.bit_length() + 8) // 8, "big", signed=True)
    else:
        tag, data = b"b", _value_bytes("client_id", client_id)
    return tag + len(data).to_bytes(8, "big") + data


def assign_cohort(client_id: str | bytes | int, num_cohorts: int) -> int:
    """The cohort in [0, num_cohorts) of ``client_id``, deterministic across runs and machines.

    SHA-256 of COHORT_TAG, a one-byte type tag (b"b" for str/bytes — a str as UTF-8 — b"i" for an int, as its
    minimal two's-complement big-endian bytes), the 8-byte length of the id's bytes, the id's bytes and a 4-byte
    attempt counter 0, 1, …: the first digest d (a 256-bit big-endian integer) below the largest multiple of
    num_cohorts under 2**256 gives d mod num_cohorts, uniform over cohorts when SHA-256 is modelled as a random
    function. (The paper assigns cohorts at random; a hash of a stable client id gives the
    same distribution and lets a client recompute its cohort.)

    Preconditions: ``client_id`` a str, bytes or int (not a bool); ``num_cohorts`` an int in [1, 2**32].
    """
    num_cohorts = check_int("num_cohorts", num_cohorts, lo=1, hi=MAX_K)
    prefix = COHORT_TAG + _id_bytes(client_id)
    return _reduce(lambda a: hashlib.sha256(prefix + a.to_bytes(4, "big")).digest(), num_cohorts)


def _digests_mod(digests: bytes, n: int) -> tuple[np.ndarray, np.ndarray]:
    """For concatenated 32-byte digests: each digest d (a 256-bit big-endian integer) mod n as int64, and the rows
    that may need a second attempt (d >= the largest multiple of n under 2**256, see :func:`_reduce`).

    d mod n by Horner's rule over the eight big-endian 32-bit words, r <- (r·2**32 + w) mod n, exact in uint64
    since r < n <= 2**32. A rejected d exceeds 2**256 − n > 2**256 − 2**32, so its first word is 0xFFFFFFFF: the
    rows returned are those (a superset of the rejected ones, chance 2**-32 each); the caller recomputes them."""
    words = np.frombuffer(digests, dtype=">u4").reshape(-1, 8).astype(np.uint64)
    modulus = np.uint64(n)
    residue = np.zeros(words.shape[0], dtype=np.uint64)
    for j in range(8):
        residue = ((residue << np.uint64(32)) | words[:, j]) % modulus
    return residue.astype(np.int64), np.flatnonzero(words[:, 0] == 0xFFFFFFFF)


def assign_cohorts(client_ids: Iterable[str | bytes | int], num_cohorts: int) -> np.ndarray:
    """The cohorts of many clients: an int64 array whose entry i is ``assign_cohort(client_ids[i], num_cohorts)``.

    The same hash as :func:`assign_cohort` (bit for bit), with the argument checks done once and the reduction
    vectorised (:func:`_digests_mod`); a digest that the rejection rule might refuse (first 32 bits all ones,
    chance 2**-32) is compared with the limit exactly and, if refused, recomputed by :func:`assign_cohort` itself.
    Three to four times faster than calling :func:`assign_cohort` in a loop (SHA-256 itself is most of the rest).

    Preconditions: ``client_ids`` an iterable (list, tuple, range, NumPy array, ...) of str, bytes or int (not
    bool), not itself a str or bytes; ``num_cohorts`` an int in [1, 2**32]. A bad entry raises naming its index.
    """
    num_cohorts = check_int("num_cohorts", num_cohorts, lo=1, hi=MAX_K)
    if isinstance(client_ids, (str, bytes, bytearray, memoryview)):
        raise TypeError(f"client_ids={client_ids!r} must be a sequence of ids, not a single "
                        f"{type(client_ids).__name__}")
    if isinstance(client_ids, np.ndarray):
        if client_ids.ndim != 1:
            raise ValueError(f"client_ids must be one-dimensional, got shape {client_ids.shape}")
        client_ids = client_ids.tolist()  # Python ints, str or bytes: their types are checked below
    elif not isinstance(client_ids, Iterable):
        raise TypeError(f"client_ids={client_ids!r} must be an iterable of str, bytes or int, not "
                        f"{type(client_ids).__name__}")
    elif not isinstance(client_ids, Sequence):
        client_ids = list(client_ids)  # a generator: kept, as a rejected digest needs its id again
    sha = hashlib.sha256
    attempt0 = bytes(4)
    int_heads = [COHORT_TAG + b"i" + m.to_bytes(8, "big") for m in range(17)]  # heads of ids up to 16 bytes
    byte_heads = [COHORT_TAG + b"b" + m.to_bytes(8, "big") for m in range(256)]
    digests: list[bytes] = []
    append = digests.append
    for i, x in enumerate(client_ids):
        kind = type(x)
        if kind is int:
            data = x.to_bytes((x.bit_length() + 8) // 8, "big", signed=True)
            head = int_heads[len(data)] if len(data) <= 16 else COHORT_TAG + b"i" + len(data).to_bytes(8, "big")
        else:
            if kind is str:
                try:
                    data = x.encode("utf-8")
                except UnicodeEncodeError:
                    data = _value_bytes(f"client_ids[{i}]", x)  # raises, naming the entry
            elif kind is bytes:
                data = x
            elif isinstance(x, bool):
                raise TypeError(f"client_ids[{i}]={x!r} must be a str, bytes or int, not bool")
            elif isinstance(x, numbers.Integral):
                y = int(x)
                data = y.to_bytes((y.bit_length() + 8) // 8, "big", signed=True)
                append(sha(COHORT_TAG + b"i" + len(data).to_bytes(8, "big") + data + attempt0).digest())
                continue
            else:
                data = _value_bytes(f"client_ids[{i}]", x)  # str/bytes subclasses, bytearray; raises otherwise
            head = byte_heads[len(data)] if len(data) < 256 else COHORT_TAG + b"b" + len(data).to_bytes(8, "big")
        append(sha(head + data + attempt0).digest())
    if not digests:
        return np.zeros(0, dtype=np.int64)
    out, suspects = _digests_mod(b"".join(digests), num_cohorts)
    if suspects.size and num_cohorts & (num_cohorts - 1):  # a power of two divides 2**256: nothing rejected
        limit = (1 << 256) - (1 << 256) % num_cohorts
        for row in suspects.tolist():
            if int.from_bytes(digests[row], "big") >= limit:  # rejected: further attempts, as assign_cohort makes
                out[row] = assign_cohort(client_ids[row], num_cohorts)
    return out


# ------------------------------------------------------------------ batch randomization

def _bool_rows(name: str, rows: Any) -> np.ndarray:
    arr = np.asarray(rows)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array (n, k), got shape {arr.shape}")
    if arr.dtype != np.bool_:
        if not np.issubdtype(arr.dtype, np.integer) or not np.isin(arr, (0, 1)).all():
            raise ValueError(f"{name} must hold only bits: 0, 1, False or True")
        arr = arr.astype(bool)
    return arr


def _check_f(f_value: object) -> float:
    x = check_float("f", f_value)
    check_interval("f", x, 0, 1, lo_closed=True, hi_closed=False)
    return x


def _check_pq(p_value: object, q_value: object) -> tuple[float, float]:
    pv, qv = check_float("p", p_value), check_float("q", q_value)
    check_interval("p", pv, 0, 1, lo_closed=True, hi_closed=False)
    check_interval("q", qv, 0, 1, lo_closed=False, hi_closed=True)
    if not pv < qv:
        raise ValueError(f"p={p_value!r}, q={q_value!r}: must have 0 <= p < q <= 1 (a set bit must be reported "
                         "as 1 more often than a clear one)")
    return pv, qv


def rappor_flip_probability(f_value: float) -> float:
    """The probability r with which the permanent response flips a bit: f/2 rounded up (the bit-vector
    randomized response's :data:`~vetdp.impl.randomized_response_bitvec.FLIP_PROBABILITY`; exact for every
    normal f). Keeping a bit w.p. 1 − f and else setting it to a fair coin is the same law: flip w.p. f/2."""
    return flip_probability(_check_f(f_value))


RAPPOR_MIN_REPORT_PROBABILITY = 2.0**-1000  # the least p* and 1 − q* accepted: larger losses (> 693 per bit) refused
_MIN_REPORT_PROBABILITY = Fraction(RAPPOR_MIN_REPORT_PROBABILITY)


def _report_probabilities_ok(rv: float, pv: float, qv: float) -> bool:
    """Whether p < q and p* = p + r(q − p) and 1 − q* = 1 − q + r(q − p) are both >= 2**-1000 (exactly).

    Written as p* = p(1 − r) + rq and 1 − q* = (1 − q)(1 − r) + r(1 − p), sums of products of numbers in [0, 1],
    and decided from p (p* >= p) and 1 − q (1 − q* >= 1 − q) first: the same answer, which the harness's symbolic
    floats (:mod:`vetdp.engine.symbolic`) also decide on whole regions of (f, p, q)."""
    if not pv < qv:
        return False
    r, p_, q_ = exact_rational(rv), exact_rational(pv), exact_rational(qv)
    low = _MIN_REPORT_PROBABILITY
    return ((p_ >= low or p_ * (1 - r) + r * q_ >= low)
            and (1 - q_ >= low or (1 - q_) * (1 - r) + r * (1 - p_) >= low))


def _check_report_probabilities(f_value: float, p_value: float, q_value: float) -> float:
    """The flip probability r for (f, p, q), after refusing parameters whose one-report loss is infinite or
    beyond 693 per bit (p* or 1 − q* below 2**-1000, e.g. f = 0 with p = 0 or q = 1)."""
    rv = rappor_flip_probability(f_value)
    if not _report_probabilities_ok(rv, p_value, q_value):
        raise ValueError(
            f"f={f_value!r}, p={p_value!r}, q={q_value!r}: the report probabilities p* = p + r(q − p) and "
            f"1 − q* = 1 − q + r(q − p) (r = f/2) must both be in [2**-1000, 1]; below that a report's privacy loss "
            "is infinite (f = 0 with p = 0 or q = 1) or exceeds 693 per bit")
    return rv


def rappor_permanent_batch(bloom_rows: Any, f: float) -> np.ndarray:
    """Permanent randomized response of every row of an (n, k) bit array: bit B'_ij = B_ij XOR F_ij with
    F_ij ~ Bernoulli(:func:`rappor_flip_probability`(f)) independent, i.e. P[B' = 1] = 1 − r if B = 1 and r if
    B = 0, r = f/2 rounded up (exactly the law of :func:`make_rappor_report`'s first stage). Randomness from
    :func:`vetdp.sampling.batch.sample_bernoulli_batch` (the context's byte source: a CSPRNG by default).

    Preconditions: ``bloom_rows`` a 2-D array of bits (bool, or integers 0/1); ``f`` a float in [0, 1).
    """
    arr = _bool_rows("bloom_rows", bloom_rows)
    r = rappor_flip_probability(_check_f(f))
    out = sample_bernoulli_batch(r, arr.size).reshape(arr.shape)
    return np.bitwise_xor(arr, out, out=out)  # in place: no second (n, k) array


def rappor_instantaneous_batch(permanent_rows: Any, p: float, q: float) -> np.ndarray:
    """Instantaneous randomized response of every cell of an (n, k) bit array: S_ij ~ Bernoulli(q) where
    B'_ij = 1 and Bernoulli(p) where B'_ij = 0, independently (the floats p and q exactly). Rows are drawn in
    blocks of about :data:`IRR_BLOCK_CELLS` cells, in order; within a block the cells with B' = 1 draw first (in
    row-major order), then those with B' = 0. (Blocks keep the index arrays small; the byte order changes nothing
    in the law, as every cell reads its own bytes.)

    Preconditions: ``permanent_rows`` a 2-D array of bits; ``p``, ``q`` floats with 0 <= p < q <= 1.
    """
    arr = _bool_rows("permanent_rows", permanent_rows)
    p_value, q_value = _check_pq(p, q)
    out = np.empty(arr.shape, dtype=bool)
    flat_in, flat_out = np.ascontiguousarray(arr).reshape(-1), out.reshape(-1)
    step = max(1, IRR_BLOCK_CELLS // max(1, arr.shape[1])) * arr.shape[1]  # whole rows per block
    for lo in range(0, flat_in.size, max(step, 1)):  # (no cells: no block)
        block = flat_in[lo:lo + step]
        ones = np.flatnonzero(block) + lo  # integer indices: scattering through them beats a boolean mask
        zeros = np.flatnonzero(~block) + lo
        flat_out[ones] = sample_bernoulli_batch(q_value, ones.size)
        flat_out[zeros] = sample_bernoulli_batch(p_value, zeros.size)
    return out


# ------------------------------------------------------------------ privacy constants

r, p, q, a, b = var("r"), var("p"), var("q"), var("a", "int"), var("b", "int")
g, d, l1, l0 = var("g"), var("d"), var("l1"), var("l0")

# A report bit is 1 with probability q* = q − r(q − p) when the Bloom bit is set and p* = p + r(q − p) when it is
# clear (r the flip probability actually used; with r = f/2 these are the paper's ½f(p + q) + (1 − f)q and
# ½f(p + q) + (1 − f)p), and q* − p* = (1 − 2r)(q − p) exactly. The one-report loss is built from three bounds,
# each written as a sum or product of non-negative parts so that rounding never cancels:
# q* − p* rounded up: 2r rounded down (it is exact) makes 1 − 2r, and q − p, upper bounds.
RAPPOR_REPORT_GAP = register_constant(
    "rappor.report_gap", ONE.inf_sub(TWO.neg_inf_mul(r)).inf_mul(q.inf_sub(p)),
    {"r": (0, Fraction(1, 2)), "p": (0, 1), "q": (0, 1)}, bound="upper", result=(0, 1),
    relations=lambda x: [x["p"] < x["q"]], relations_text="p < q", accepts=lambda env: env["p"] < env["q"],
    source="vetdp.impl.rappor.RAPPOR_REPORT_GAP")
# p* rounded down: q − p and r(q − p) rounded down, then the sum down. It stays >= 2**-1023 (the range
# obligation) when the exact p* >= 2**-1000 (a precondition), so the quotient below cannot overflow.
RAPPOR_P_STAR = register_constant(
    "rappor.p_star", p.neg_inf_add(r.neg_inf_mul(q.neg_inf_sub(p))),
    {"r": (0, Fraction(1, 2)), "p": (0, 1), "q": (0, 1)}, bound="lower", result=(Fraction(1, 2**1002), 1),
    relations=lambda x: [x["p"] < x["q"], x["p"] + x["r"] * (x["q"] - x["p"]) >= _MIN_REPORT_PROBABILITY],
    relations_text="p < q, p* = p + r(q − p) >= 2**-1000",
    accepts=lambda env: _report_probabilities_ok(env["r"], env["p"], env["q"]),
    source="vetdp.impl.rappor.RAPPOR_P_STAR")
# 1 − q* = (1 − q) + r(q − p) rounded down, likewise.
RAPPOR_ONE_MINUS_Q_STAR = register_constant(
    "rappor.one_minus_q_star", ONE.neg_inf_sub(q).neg_inf_add(r.neg_inf_mul(q.neg_inf_sub(p))),
    {"r": (0, Fraction(1, 2)), "p": (0, 1), "q": (0, 1)}, bound="lower", result=(Fraction(1, 2**1002), 1),
    relations=lambda x: [x["p"] < x["q"], 1 - x["q"] + x["r"] * (x["q"] - x["p"]) >= _MIN_REPORT_PROBABILITY],
    relations_text="p < q, 1 − q* = 1 − q + r(q − p) >= 2**-1000",
    accepts=lambda env: _report_probabilities_ok(env["r"], env["p"], env["q"]),
    source="vetdp.impl.rappor.RAPPOR_ONE_MINUS_Q_STAR")
# ln(q*/p*) = log1p((q* − p*)/p*) and ln((1 − p*)/(1 − q*)) = log1p((q* − p*)/(1 − q*)): an upper bound g of the
# numerator over a lower bound d of the denominator, quotient and log1p rounded up. The log1p form stays tight
# when q − p is tiny (no ratio of nearly equal numbers), and g/d <= 2**1002 never overflows.
RAPPOR_LOG_RATIO = register_constant(
    "rappor.log_ratio", g.inf_div(d).inf_log1p(), {"g": (0, 1), "d": (Fraction(1, 2**1002), 1)}, bound="upper",
    result=(0, 711), source="vetdp.impl.rappor.RAPPOR_LOG_RATIO")
# ε = a·l1 + b·l0, products and sum rounded up: a bits set where the neighbour's are clear (each costing
# l1 = ln(q*/p*)) and b the other way round (l0 = ln((1 − p*)/(1 − q*))).
RAPPOR_EPSILON_ONE_SUM = register_constant(
    "rappor.epsilon_one_sum", a.inf_mul(l1).inf_add(b.inf_mul(l0)),
    {"a": (0, MAX_K), "b": (0, MAX_K), "l1": (0, 711), "l0": (0, 711)}, bound="upper", result=(0, 2**43),
    source="vetdp.impl.rappor.RAPPOR_EPSILON_ONE_SUM")


def _substitute(expr: Expr, values: dict[str, Expr]) -> Expr:
    """``expr`` with every variable named in ``values`` replaced by its expression (the same rounding steps)."""
    if isinstance(expr, Var):
        return values.get(expr.name, expr)
    if isinstance(expr, Op):
        return Op(expr.name, tuple(_substitute(x, values) for x in expr.args))
    return expr


# ε₁ over (r, p, q, a, b): the pieces above composed, one definition each (no step retyped). Its float is the
# chain of the pieces' floats; each piece is sound (its z3 obligations) and the ideal a·ln(1 + G/P) + b·ln(1 + G/Q)
# grows with G and falls with P, Q, so the float is >= the exact loss (proofs/rappor.md). With a = b = h it is the
# paper's h·ln(q*(1 − p*)/(p*(1 − q*))).
RAPPOR_EPSILON_ONE = _substitute(RAPPOR_EPSILON_ONE_SUM, {
    "l1": _substitute(RAPPOR_LOG_RATIO, {"g": RAPPOR_REPORT_GAP, "d": RAPPOR_P_STAR}),
    "l0": _substitute(RAPPOR_LOG_RATIO, {"g": RAPPOR_REPORT_GAP, "d": RAPPOR_ONE_MINUS_Q_STAR}),
})

# ε∞ = min(2h, k)·ln((1 − r)/r): the permanent response alone is bit-vector randomized response with flip
# probability r on inputs at Hamming distance <= min(2h, k), and every number of reports is post-processing of it.
# One definition: the bit-vector constant itself (its obligations are randomized_response_bitvec.epsilon.*), with
# q := r and d := min(2h, k); it is the paper's 2h·ln((1 − f/2)/(f/2)) whenever f/2 is a float and 2h <= k.
RAPPOR_EPSILON_INFINITY = RANDOMIZED_RESPONSE_BITVEC_EPSILON


def rappor_report_loss_weights(h: int, k: int) -> list[tuple[int, int]]:
    """The (a, b) at which :data:`RAPPOR_EPSILON_ONE` attains the largest one-report loss for inputs of length k
    with at most h set bits: a bits set where the neighbour's are clear and b the other way round, a, b <= h and
    a + b <= k. With h' = min(h, k): [(h', h')] when 2h' <= k, else [(h', k − h'), (k − h', h')] (the larger log
    takes h' bits; which one is larger depends on p*, q*, so both are evaluated)."""
    h = check_int("h", h, lo=1)
    k = check_int("k", k, lo=1)
    hh = min(h, k)
    return [(hh, hh)] if 2 * hh <= k else [(hh, k - hh), (k - hh, hh)]


def _check_domain(ctor: str, input_domain: object, input_metric: object) -> tuple[int, int]:
    if not isinstance(input_domain, BitVectorDomain):
        raise TypeError(f"input_domain={input_domain!r} must be a BitVectorDomain")
    if not isinstance(input_metric, DiscreteDistance):
        raise TypeError(f"input_metric={input_metric!r} must be a DiscreteDistance")
    if input_domain.max_weight is None:
        raise ValueError(f"input_domain.max_weight=None: {ctor} requires a max_weight h in [1, inf) (the number of "
                         "hash functions) to bound the privacy loss")
    if input_domain.length is None or input_domain.length > MAX_K:
        raise ValueError(f"input_domain.length={input_domain.length!r}: {ctor} requires a fixed length k in "
                         f"[1, {MAX_K}] (so that a report's length never reveals its input's)")
    return input_domain.max_weight, input_domain.length


def _discrete_distance_map(epsilon: float) -> Callable[[int], float]:
    """The privacy map of an ε-DP mechanism under the discrete distance: map(0) = 0, map(1) = ε, and d_in > 1
    refused (one input changes at a time)."""

    def privacy_map(d_in: int) -> float:
        if d_in == 0:
            return 0.0
        if d_in > 1:
            raise ValueError(f"d_in={d_in} must be 0 or 1 under the discrete distance")
        return epsilon

    return privacy_map


def _permanent(bits: tuple[bool, ...], rv: float, constant_time: bool) -> tuple[bool, ...]:
    """B' with B'_i = B_i XOR Bernoulli(r): 1 w.p. 1 − r if B_i = 1, w.p. r if B_i = 0."""
    return tuple(bit ^ sample_bernoulli_float(rv, constant_time) for bit in bits)


def _instantaneous(bits: tuple[bool, ...], pv: float, qv: float, constant_time: bool) -> tuple[bool, ...]:
    """S with S_i ~ Bernoulli(q) if B'_i = 1, Bernoulli(p) if B'_i = 0."""
    return tuple(sample_bernoulli_float(qv if bit else pv, constant_time) for bit in bits)


def _one_report_constant(rv: float, pv: float, qv: float, h: int, k: int) -> PrivacyConstant:
    envs = [{"r": rv, "p": pv, "q": qv, "a": wa, "b": wb} for wa, wb in rappor_report_loss_weights(h, k)]
    return max((PrivacyConstant(RAPPOR_EPSILON_ONE, env) for env in envs), key=lambda c: c.value)


def make_rappor_report(input_domain: BitVectorDomain, input_metric: DiscreteDistance, f: float, p: float, q: float,
                       constant_time: bool = False) -> Measurement:
    """One RAPPOR report of a Bloom filter: permanent randomized response with f, then instantaneous with p, q.

    Each bit independently: B' = B XOR Bernoulli(r), r = f/2 rounded up (:func:`rappor_flip_probability`), then
    S ~ Bernoulli(q) if B' = 1 else Bernoulli(p). So P[S_i = 1 | B_i = 1] = q* = q − r(q − p) and
    P[S_i = 1 | B_i = 0] = p* = p + r(q − p) (the paper's ½f(p + q) + (1 − f)q and ½f(p + q) + (1 − f)p).

    Preconditions: ``input_domain`` a BitVectorDomain with max_weight h (the hash functions) and length k <= 2**32;
    ``input_metric`` a DiscreteDistance; ``f`` a float in [0, 1); ``p``, ``q`` floats with 0 <= p < q <= 1;
    p* and 1 − q* at least 2**-1000 (this refuses f = 0 with p = 0 or q = 1, whose loss is infinite);
    ``constant_time`` a bool (every Bernoulli then reads the same bytes whatever its probability).

    Privacy: map(0) = 0; map(1) = ε₁ = h·ln(q*(1 − p*)/(p*(1 − q*))) rounded up when 2h <= k
    (:data:`RAPPOR_EPSILON_ONE`, for the r actually used), and the exact worst case a·ln(q*/p*) + b·ln((1 − p*)/
    (1 − q*)) over :func:`rappor_report_loss_weights` when 2h > k; map(d_in > 1) raises. It holds for ONE report:
    repeated reports of a value need :func:`make_rappor_reports` (or :class:`vetdp.impl.rappor_client.RapporClient`)
    and ε∞.

    Proof: proofs/rappor.md
    """
    h, k = _check_domain("make_rappor_report", input_domain, input_metric)
    f_value = _check_f(f)
    p_value, q_value = _check_pq(p, q)
    check_bool("constant_time", constant_time)
    rv = _check_report_probabilities(f_value, p_value, q_value)
    constant = _one_report_constant(rv, p_value, q_value, h, k)
    epsilon = constant.value

    privacy_map = _discrete_distance_map(epsilon)

    def function(bits: tuple[bool, ...]) -> tuple[bool, ...]:
        return _instantaneous(_permanent(bits, rv, constant_time), p_value, q_value, constant_time)

    def batch(rows: Any) -> np.ndarray:
        """Randomise an (n, k) array of Bloom filters at once; every row is checked against the domain first."""
        arr = as_bit_rows(rows, k, h)
        return rappor_instantaneous_batch(rappor_permanent_batch(arr, f_value), p_value, q_value)

    return Measurement(
        input_domain=input_domain,
        input_metric=input_metric,
        output_measure=MaxDivergence(),
        function=function,
        privacy_map=privacy_map,
        output_domain=BitVectorDomain(length=k),
        privacy_constant=constant,
        parameters={"input_domain": input_domain, "input_metric": input_metric, "f": f_value, "p": p_value,
                    "q": q_value, "constant_time": constant_time},
        batch=batch,
        name="make_rappor_report",
    )


def make_rappor_reports(input_domain: BitVectorDomain, input_metric: DiscreteDistance, f: float, p: float, q: float,
                        reports: int, constant_time: bool = False) -> Measurement:
    """``reports`` RAPPOR reports of one Bloom filter sharing ONE permanent response (the memoization), as a tuple
    of report tuples: B' = B XOR Bernoulli(r) once, then each report S^(t)_i ~ Bernoulli(q if B'_i else p) afresh.

    Preconditions: as :func:`make_rappor_report`, with ``f`` in (0, 1) (f = 0 has no permanent response and no
    finite ε∞); ``reports`` an int in [1, inf).

    Privacy: map(0) = 0; map(1) = ε∞ = min(2h, k)·ln((1 − r)/r) rounded up (:data:`RAPPOR_EPSILON_INFINITY`,
    the paper's 2h·ln((1 − f/2)/(f/2)) when 2h <= k), whatever ``reports`` is: the reports are post-processing of
    B'. It is an upper bound, not the exact loss of finitely many reports (the loss tends to it as reports grow);
    map(d_in > 1) raises.

    Proof: proofs/rappor.md
    """
    h, k = _check_domain("make_rappor_reports", input_domain, input_metric)
    f_value = _check_f(f)
    if f_value == 0:
        raise ValueError("f=0.0 must be in (0, 1) for make_rappor_reports: without a permanent response repeated "
                         "reports have no loss bound independent of their number (ε∞ is infinite)")
    p_value, q_value = _check_pq(p, q)
    n_reports = check_int("reports", reports, lo=1)
    check_bool("constant_time", constant_time)
    rv = _check_report_probabilities(f_value, p_value, q_value)
    constant = PrivacyConstant(RAPPOR_EPSILON_INFINITY, {"q": rv, "d": min(2 * h, k)})
    epsilon = constant.value

    privacy_map = _discrete_distance_map(epsilon)

    def function(bits: tuple[bool, ...]) -> tuple[tuple[bool, ...], ...]:
        permanent = _permanent(bits, rv, constant_time)
        return tuple(_instantaneous(permanent, p_value, q_value, constant_time) for _ in range(n_reports))

    def batch(rows: Any) -> np.ndarray:
        """An (n, reports, k) array: for each (n, k) input row one permanent response and ``reports`` reports."""
        arr = as_bit_rows(rows, k, h)
        permanent = rappor_permanent_batch(arr, f_value)
        repeated = np.repeat(permanent[:, None, :], n_reports, axis=1).reshape(-1, k)
        return rappor_instantaneous_batch(repeated, p_value, q_value).reshape(arr.shape[0], n_reports, k)

    return Measurement(
        input_domain=input_domain,
        input_metric=input_metric,
        output_measure=MaxDivergence(),
        function=function,
        privacy_map=privacy_map,
        output_domain=None,
        privacy_constant=constant,
        parameters={"input_domain": input_domain, "input_metric": input_metric, "f": f_value, "p": p_value,
                    "q": q_value, "reports": n_reports, "constant_time": constant_time},
        batch=batch,
        name="make_rappor_reports",
    )

