"""Public randomness and keyed encodings: the primitives of hashing mechanisms (OLH, sketches, Hadamard response).

A hashing mechanism releases part of its randomness with its report (a hash seed, a sketch row, a Hadamard
coefficient index) and touches its input only through a deterministic function keyed by that public value (the
bucket H_s(x)). Written with these primitives, vetdp decides it exactly (:mod:`vetdp.engine.public`): the loss
is the worst over the public values of the loss given them, and the laws given them depend on the input only
through the encodings' values.

* :func:`sample_public_uniform_int_below` — a uniform draw that the mechanism releases in its output;
* :func:`hash_bucket` — the bucket of a value under a key, exactly uniform on [0, size) when SHA-256 is modelled
  as a random function (no modulo bias);
* :func:`keyed_encoding` — any deterministic function ``fn(key, value)`` into [0, size) (a Hadamard coefficient of
  a hashed bucket, a sketch row's hash), declared as such;
* :func:`sample_uniform_member` — a uniform element of {y in [0, size) : fn(y, value) == cls} (Hadamard
  response's halves).

In production each is what its name says (randomness from the current source, os.urandom by default). Under an
enumerating :class:`~vetdp.sampling.sources.BranchingSource` they enumerate exactly like the other primitives;
under the engine's conditioning source (anything with the ``condition_*`` hooks) they return what the engine
conditions on.
"""

from __future__ import annotations

import functools
import hashlib
import numbers
import struct
from collections.abc import Callable
from typing import Any

from vetdp.sampling.primitives import sample_uniform_int_below
from vetdp.sampling.sources import BranchingSource, current_source

__all__ = ["sample_public_uniform_int_below", "hash_bucket", "keyed_encoding", "sample_uniform_member",
           "hash_bucket_fn", "encode_key", "HASH_TAG", "MAX_SIZE"]

HASH_TAG = b"vetdp-hash-bucket-v1"  # domain separation of hash_bucket
MAX_SIZE = 2**64  # the largest range of a bucket: one 256-bit digest is rejected with chance < 2**-192


def _check_size(name: str, size: object) -> int:
    if isinstance(size, bool) or not isinstance(size, numbers.Integral):
        raise TypeError(f"{name}={size!r} must be an int, not {type(size).__name__}")
    if not 1 <= int(size) <= MAX_SIZE:
        raise ValueError(f"{name}={size!r} must be in [1, 2**64]")
    return int(size)


def sample_public_uniform_int_below(n: int, constant_time: bool = False) -> int:
    """An integer uniform on [0, n) that the mechanism releases with its output (public randomness).

    Identical to :func:`~vetdp.sampling.primitives.sample_uniform_int_below` in production (``constant_time``:
    a fixed number of bytes read, see there). The mechanism must place the value in its output: the engine
    conditions on it, which is exact only for a released value, and checks that it is released.
    Raises TypeError unless ``n`` is an int, ValueError unless n >= 1.
    """
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise TypeError(f"n={n!r} must be an int, not {type(n).__name__}")
    if n < 1:
        raise ValueError(f"n={n!r} must be in [1, inf)")
    hook = getattr(current_source(), "condition_public", None)
    if hook is not None:
        return hook(int(n))
    return sample_uniform_int_below(int(n), constant_time=constant_time)


def encode_key(value: Any) -> bytes:
    """An unambiguous byte string for a key or value: ints, str, bytes, bools, None and tuples of them, each
    tagged with its type and length (so that 1, "1", b"1" and (1,) differ). Raises TypeError for other types."""
    if value is None:
        return b"N"
    if isinstance(value, bool):
        return b"B1" if value else b"B0"
    if isinstance(value, numbers.Integral):
        v = int(value)
        raw = v.to_bytes((v.bit_length() + 8) // 8, "big", signed=True)
        return b"I" + struct.pack(">Q", len(raw)) + raw
    if isinstance(value, str):
        raw = value.encode("utf-8", "surrogatepass")
        return b"S" + struct.pack(">Q", len(raw)) + raw
    if isinstance(value, (bytes, bytearray, memoryview)):
        raw = bytes(value)
        return b"Y" + struct.pack(">Q", len(raw)) + raw
    if isinstance(value, tuple):
        return b"T" + struct.pack(">Q", len(value)) + b"".join(encode_key(v) for v in value)
    raise TypeError(f"value={value!r} must be an int, str, bytes, bool, None or a tuple of them, "
                    f"not {type(value).__name__}")


def hash_bucket_fn(key: Any, value: Any, size: int) -> int:
    """The bucket of ``value`` under ``key`` in [0, size): SHA-256(HASH_TAG ‖ key ‖ value ‖ counter) read as a
    256-bit integer d, accepted when d < the largest multiple of size below 2**256 (then d mod size), else the next
    counter. Every bucket is exactly equally likely when SHA-256 is modelled as a random function."""
    limit = (1 << 256) - (1 << 256) % size
    prefix = HASH_TAG + encode_key(key) + encode_key(value)
    counter = 0
    while True:
        d = int.from_bytes(hashlib.sha256(prefix + struct.pack(">Q", counter)).digest(), "big")
        if d < limit:
            return d % size
        counter += 1  # pragma: no cover - probability < size/2**256


def keyed_encoding(fn: Callable[[Any, Any], int], key: Any, value: Any, size: int) -> int:
    """``fn(key, value)``, a deterministic function into [0, size), declared as the way the input reaches the
    mechanism: vetdp conditions on its value (the engine's hook), so that the laws given the public key depend on
    the input only through it. Raises ValueError when ``fn`` returns something outside [0, size)."""
    size = _check_size("size", size)
    hook = getattr(current_source(), "condition_encoding", None)
    if hook is not None:
        return hook(fn, key, value, size)
    out = fn(key, value)
    if isinstance(out, bool) or not isinstance(out, numbers.Integral) or not 0 <= out < size:
        raise ValueError(f"keyed_encoding: fn({key!r}, {value!r}) = {out!r} must be an int in [0, {size})")
    return int(out)


def hash_bucket(key: Any, value: Any, size: int) -> int:
    """The bucket of ``value`` under the (public) ``key`` in [0, size): :func:`hash_bucket_fn` through
    :func:`keyed_encoding`. Keys and values: ints, str, bytes, bools, None and tuples of them."""
    size = _check_size("size", size)
    return keyed_encoding(functools.partial(hash_bucket_fn, size=size), key, value, size)


def sample_uniform_member(fn: Callable[[Any, Any], int], value: Any, size: int, cls: int) -> int:
    """An integer uniform on {y in [0, size) : fn(y, value) == cls} (rejection sampling in production).

    Under enumeration the class is listed and branched over uniformly; under the engine's conditioning source
    (``condition_member``) the engine receives the class and computes its size for every input.
    Precondition: the class is not empty (ValueError under enumeration; production would not end).
    """
    size = _check_size("size", size)
    source = current_source()
    hook = getattr(source, "condition_member", None)
    if hook is not None:
        return hook(fn, value, size, cls)
    if isinstance(source, BranchingSource) and not source.branch_bytes:
        members = [y for y in range(size) if fn(y, value) == cls]
        if not members:
            raise ValueError(f"sample_uniform_member: no y in [0, {size}) has fn(y, {value!r}) == {cls!r}")
        return members[source.branch_uniform(len(members))]
    while True:
        y = sample_uniform_int_below(size)
        if fn(y, value) == cls:
            return y
