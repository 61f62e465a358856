"""OpenDP's randomized-response constructors, called with vetdp's argument conventions.

Each ``make_*`` here takes the same arguments as its namesake in :mod:`vetdp.impl` and
returns a vetdp :class:`Measurement` whose ``function`` invokes OpenDP's compiled
measurement and whose ``privacy_map`` is OpenDP's ``map``. Only representations are
translated; every check is left to OpenDP, so that vetting the adapter vets OpenDP:

* domains: our ``BitVectorDomain(max_weight, length)`` becomes
  ``opendp.domains.bitvector_domain(max_weight=...)`` (OpenDP's bit vectors have no
  length), ``AtomDomain(bool)`` becomes ``atom_domain(T=bool)``; our
  ``DiscreteDistance`` becomes ``discrete_distance()``; anything else is passed as is;
* bit vectors: a sequence of k bits becomes ⌈k/8⌉ bytes, least-significant bit first;
  OpenDP's answer is read back the same way and cut to k bits (the padding bits are
  noise OpenDP adds and we drop);
* errors: ``OpenDPException`` becomes ``TypeError`` for type/cast variants and
  ``ValueError`` otherwise, ``UnknownTypeException`` becomes ``TypeError``; the message
  is kept. The input domain only translates: it does not check membership, OpenDP does
  (or does not).

The adapter needs the ``opendp`` extra (``pip install vetdp[opendp]``); importing this
module without it raises ImportError. :func:`reproduction` writes, for a finding, a
Python snippet that uses OpenDP alone.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.metadata
import os
import sys
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from vetdp.audit._opendp_invoke import invoker
from vetdp.audit._opendp_repro import reproduction
from vetdp.core.measurement import (
    AtomDomain,
    BitVectorDomain,
    DiscreteDistance,
    Domain,
    DomainError,
    MaxDivergence,
    Measurement,
    as_bit_tuple,
)

# OpenDP's errors capture a Rust backtrace when RUST_BACKTRACE=1 is set (as on some CI machines): 0.13 s per refused
# call, e.g. 1,200 refused map(d_in) calls of the distance survey took 156 s. Library backtraces are off unless the
# user asks for them (RUST_LIB_BACKTRACE); panics keep theirs. Set before OpenDP's library first reads it.
os.environ.setdefault("RUST_LIB_BACKTRACE", "0")

try:
    import opendp.prelude as dp
    from opendp.mod import OpenDPException, UnknownTypeException
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError("the OpenDP adapter needs the opendp extra: pip install -e '.[opendp]' at the vetdp "
                      "repository root (vetdp is not on PyPI)") from e

dp.enable_features("contrib")


def _quiet_opendp_finalizers(previous: Callable[[Any], None]) -> Callable[[Any], None]:
    """An ``sys.unraisablehook`` that drops exactly one known OpenDP nuisance: a finalizer (``Metric.__del__``,
    ``Domain.__del__``, ...) of an object OpenDP never finished building fails with "null pointer" while being
    garbage-collected, and Python prints "Exception ignored in ..." with a traceback in the middle of a report.
    Nothing is lost (the object owned no memory); every other unraisable exception goes to ``previous``."""

    def hook(unraisable: Any) -> None:
        obj, exc = getattr(unraisable, "object", None), getattr(unraisable, "exc_value", None)
        owner = getattr(obj, "__qualname__", "") or ""
        if (isinstance(exc, OpenDPException) and "null pointer" in str(exc).lower() and owner.endswith(".__del__")
                and (getattr(obj, "__module__", "") or "").startswith("opendp")):
            return
        previous(unraisable)

    hook.vetdp_opendp_filter = True  # type: ignore[attr-defined]
    return hook


if not getattr(sys.unraisablehook, "vetdp_opendp_filter", False):
    sys.unraisablehook = _quiet_opendp_finalizers(sys.unraisablehook)

__all__ = [
    "ADAPTERS",
    "adapter_for",
    "make_randomized_response",
    "make_randomized_response_bool",
    "make_randomized_response_bitvec",
    "debias_randomized_response_bitvec",
    "bits_to_bytes",
    "bytes_to_bits",
    "translate_errors",
    "OPENDP_VERSION",
    "reproduction",
]

OPENDP_VERSION: str = importlib.metadata.version("opendp")
_TYPE_VARIANTS = {"FailedCast", "Type", "TypeParse"}


def _translated(e: Exception) -> Exception:
    if isinstance(e, OpenDPException):
        text = f"opendp {e.variant}: {e.message}"
        return TypeError(text) if e.variant in _TYPE_VARIANTS else ValueError(text)
    if isinstance(e, UnknownTypeException):
        return TypeError(f"opendp: {e}")
    return e


def translate_errors(call: Callable[[], Any]) -> Any:
    """``call()``, with OpenDP's exceptions re-raised as TypeError/ValueError keeping the message."""
    try:
        return call()
    except (OpenDPException, UnknownTypeException) as e:
        raise _translated(e) from e


@dataclasses.dataclass(frozen=True)
class PassThroughDomain(Domain):
    """Accepts every value unchanged: membership is left to the OpenDP measurement it fronts."""

    describes: str

    def check_member(self, x: Any) -> Any:
        return x

    def __repr__(self) -> str:
        return f"PassThroughDomain({self.describes})"


def bits_to_bytes(bits: Sequence[bool]) -> np.ndarray:
    """k bits as ⌈k/8⌉ uint8 bytes, bit i of the vector in bit (i mod 8) of byte ⌊i/8⌋ (LSB first)."""
    return np.packbits(np.asarray(bits, dtype=np.uint8), bitorder="little")


def bytes_to_bits(data: Any, k: int) -> tuple[bool, ...]:
    """The first k bits of LSB-first ``data`` (bytes or a uint8 array) as a tuple of bools."""
    arr = np.frombuffer(bytes(data), dtype=np.uint8)
    bits = np.unpackbits(arr, bitorder="little")
    if bits.size < k:
        raise ValueError(f"opendp returned {bits.size} bits; {k} were expected")
    return tuple(bool(b) for b in bits[:k])


@dataclasses.dataclass(frozen=True, eq=False)
class OpenDPMeasurement(Measurement):
    """A :class:`Measurement` fronting an OpenDP measurement; ``draws(x, n)`` gives ``n`` calls' outcomes at once."""

    def draws(self, x: Any, n: int) -> list | None:
        """The outcomes of ``n`` independent calls ``self(x)``, in order: each an output, or the exception that
        call raised (the audit of opaque code counts them: :func:`vetdp.audit.opaque.distribution_audit`): the same
        OpenDP call each time, without converting ``x`` again or passing through the wrappers of a single call.
        None when the function is not OpenDP's (another put in its place): then call it ``n`` times."""
        many = getattr(self.function, "draws", None)
        if many is None:
            return None
        try:
            x = self.input_domain.check_member(x)
        except Exception as e:  # noqa: BLE001 - raised before anything is drawn, on every call alike
            return [e] * n
        return many(x, n)


def _wrap(meas: Any, name: str, input_domain: Domain, parameters: dict,
          encode: Callable[[Any], Any] = lambda x: x, decode: Callable[[Any, Any], Any] = lambda x, y: y,
          output_domain: Domain | None = None) -> Measurement:
    # meas(x) through OpenDP's FFI call at its own cost, not its Python wrapper's (same call, same errors)
    fast = invoker(meas)
    invoke = fast or meas

    def function(x: Any) -> Any:
        return decode(x, translate_errors(lambda: invoke(encode(x))))

    def draws(x: Any, n: int) -> list:  # the outcomes of n calls function(x)
        try:  # what a call does before OpenDP draws anything: encoding and conversion
            call = fast.bound(encode(x)) if fast is not None else functools.partial(meas, encode(x))
        except Exception as e:  # noqa: BLE001 - deterministic: every call would raise it
            return [_translated(e)] * n
        out: list = []
        for _ in range(n):
            try:
                out.append(decode(x, call()))
            except Exception as e:  # noqa: BLE001 - an outcome, as for a single call
                out.append(_translated(e))
        return out

    function.draws = draws  # type: ignore[attr-defined]

    def privacy_map(d_in: int) -> float:
        return translate_errors(lambda: meas.map(d_in))

    return OpenDPMeasurement(input_domain=input_domain, input_metric=DiscreteDistance(),
                             output_measure=MaxDivergence(), function=function, privacy_map=privacy_map,
                             output_domain=output_domain, parameters=parameters, batch=None, name=f"opendp.{name}")


def make_randomized_response_bool(prob: float, constant_time: bool = False) -> Measurement:
    """OpenDP's ``make_randomized_response_bool(prob, constant_time)`` as a vetdp Measurement."""
    meas = translate_errors(lambda: dp.m.make_randomized_response_bool(prob, constant_time))
    return _wrap(meas, "make_randomized_response_bool", PassThroughDomain("bool"),
                 {"prob": prob, "constant_time": constant_time}, output_domain=AtomDomain(bool))


def make_randomized_response(categories: Sequence[Any], prob: float) -> Measurement:
    """OpenDP's ``make_randomized_response(categories, prob)`` (T inferred by OpenDP) as a Measurement."""
    meas = translate_errors(lambda: dp.m.make_randomized_response(categories, prob))
    return _wrap(meas, "make_randomized_response", PassThroughDomain("category"),
                 {"categories": categories, "prob": prob})


def _domain_to_opendp(domain: Any) -> Any:
    if isinstance(domain, BitVectorDomain):
        return dp.bitvector_domain(max_weight=domain.max_weight)
    if isinstance(domain, AtomDomain):
        return dp.atom_domain(T=domain.T)
    return domain


def _metric_to_opendp(metric: Any) -> Any:
    return dp.discrete_distance() if isinstance(metric, DiscreteDistance) else metric


def _encode_bits(x: Any) -> np.ndarray:
    if _plain_bits(x):  # the audit's inputs: packed once each
        return _packed(x)
    try:
        return bits_to_bytes(as_bit_tuple("x", x))
    except DomainError as e:
        raise DomainError(f"{e} (OpenDP bit vectors are bytes: only 0/1 bits can be passed)") from None


def _plain_bits(x: Any) -> bool:
    """Whether ``x`` is a tuple of bools (equal such tuples are the same input: :func:`_packed` may be shared)."""
    return type(x) is tuple and all(type(b) is bool for b in x)


@functools.lru_cache(maxsize=4096)
def _packed(x: tuple[bool, ...]) -> np.ndarray:
    out = bits_to_bytes(x)
    out.flags.writeable = False  # shared between calls
    return out


@functools.lru_cache(maxsize=1 << 16)
def _unpacked(data: bytes, k: int) -> tuple[bool, ...]:
    return bytes_to_bits(data, k)


def make_randomized_response_bitvec(input_domain: BitVectorDomain, input_metric: DiscreteDistance, f: float,
                                    constant_time: bool = False) -> Measurement:
    """OpenDP's ``make_randomized_response_bitvec`` as a Measurement on tuples of bits.

    An input of k bits is sent as ⌈k/8⌉ LSB-first bytes; the output is OpenDP's answer cut
    to k bits. The domain's length is not passed (OpenDP's domain has none).
    """
    meas = translate_errors(lambda: dp.m.make_randomized_response_bitvec(
        _domain_to_opendp(input_domain), _metric_to_opendp(input_metric), f, constant_time))
    length = input_domain.length if isinstance(input_domain, BitVectorDomain) else None

    def decode(x: Any, y: Any) -> tuple[bool, ...]:
        k = len(x) if _plain_bits(x) else len(as_bit_tuple("x", x))
        return _unpacked(y, k) if type(y) is bytes else bytes_to_bits(y, k)

    return _wrap(meas, "make_randomized_response_bitvec", PassThroughDomain("bit vector"),
                 {"input_domain": input_domain, "input_metric": input_metric, "f": f,
                  "constant_time": constant_time}, encode=_encode_bits, decode=decode,
                 output_domain=BitVectorDomain(length=length))


def debias_randomized_response_bitvec(answers: Any, f: float, exact: bool = False) -> list:
    """OpenDP's ``debias_randomized_response_bitvec`` on bit-tuple answers, cut to their bit length.

    OpenDP returns floats; ``exact=True`` returns them as Fractions (exactly the floats).
    Answers whose bit lengths differ cannot be expressed in OpenDP's bytes when they pack
    to the same number of bytes: that is rejected here with ValueError.
    """
    if isinstance(answers, (list, tuple)) and answers:
        rows = [as_bit_tuple(f"answers[{i}]", a) for i, a in enumerate(answers)]
        k = len(rows[0])
        for i, r in enumerate(rows):
            if len(r) != k:
                raise ValueError(f"answers[{i}] has length {len(r)}; answers[0] has length {k} (OpenDP bit vectors "
                                 "are whole bytes, so unequal bit lengths cannot be passed through)")
        payload: Any = [bytes(bits_to_bytes(r)) for r in rows]
    else:
        payload, k = answers, None
    out = translate_errors(lambda: dp.m.debias_randomized_response_bitvec(payload, f))
    values = list(out)[:k] if k is not None else list(out)
    return [Fraction(v) for v in values] if exact else [float(v) for v in values]


ADAPTERS: dict[str, Callable[..., Any]] = {
    "randomized_response": make_randomized_response,
    "randomized_response_bool": make_randomized_response_bool,
    "randomized_response_bitvec": make_randomized_response_bitvec,
    "debias_randomized_response_bitvec": debias_randomized_response_bitvec,
}


def adapter_for(spec_name: str) -> Callable[..., Any]:
    """The adapted OpenDP callable vetted by spec ``spec_name``; KeyError naming the choices otherwise."""
    if spec_name not in ADAPTERS:
        raise KeyError(f"spec={spec_name!r} has no OpenDP counterpart; choose one of {sorted(ADAPTERS)}")
    return ADAPTERS[spec_name]

