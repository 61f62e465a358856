"""One OpenDP measurement invoked many times, at the cost of its FFI call rather than of OpenDP's Python wrapper.

``meas(x)`` in OpenDP's Python package converts ``x`` to an ``AnyObject`` (asking the library for the input
carrier type and parsing it), calls ``opendp_core__measurement_invoke``, asks the output's type, parses it,
unloads the value and frees both objects: about ten FFI calls and several type parsings per sample, 200–400 µs
on this machine, while the audit of opaque code draws 10⁴ samples per input. :class:`Invoker` makes the same
``measurement_invoke`` call on the same ``AnyObject`` OpenDP's own conversion builds, converted once per distinct
argument, and unloads the output by the type the first output named (an OpenDP measurement's output carrier type
is a type parameter of the compiled measurement: ``bool``, ``String``, ``i32``, ``BitVector`` … for every call).
Errors are OpenDP's own: a failed conversion raises what ``py_to_c`` raises, a failed call the
``OpenDPException`` that ``unwrap`` builds from the library's error, exactly as ``meas(x)`` would.

It relies on OpenDP's private modules (``opendp._lib``, ``opendp._convert``) of the pinned version (the
``opendp`` extra); :func:`invoker` returns None when they are not as expected, and callers then use ``meas(x)``.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["Invoker", "invoker", "MAX_CACHED_ARGUMENTS"]

MAX_CACHED_ARGUMENTS = 4096  # distinct converted arguments kept per measurement (beyond: converted per call)

try:
    from opendp._convert import ATOM_MAP, _slice_to_py, c_to_py, py_to_c
    from opendp._lib import AnyObjectPtr, FfiResult, FfiSlice, lib, unwrap
    from opendp.core import measurement_input_carrier_type
    from opendp.mod import Measurement as _OpenDPMeasurement
    from opendp.typing import RuntimeType

    def _prototype(name: str, *argtypes: Any) -> Any:
        # a function object of our own: setting argtypes here leaves OpenDP's shared `lib.<name>` untouched
        return ctypes.CFUNCTYPE(FfiResult, *argtypes)((name, lib))

    _INVOKE = _prototype("opendp_core__measurement_invoke", _OpenDPMeasurement, AnyObjectPtr)
    _OBJECT_TYPE = _prototype("opendp_data__object_type", ctypes.c_void_p)
    _AS_SLICE = _prototype("opendp_data__object_as_slice", ctypes.c_void_p)
    _SLICE_FREE = _prototype("opendp_data__slice_free", ctypes.c_void_p)
    _OBJECT_FREE = _prototype("opendp_data__object_free", ctypes.c_void_p)
    _STR_FREE = _prototype("opendp_data__str_free", ctypes.c_void_p)
    # outputs unloaded here; any other type (a queryable, a profile, a vector of objects) goes through c_to_py
    _SLICE = ctypes.POINTER(FfiSlice)  # FfiSlicePtr without its bookkeeping finalizer (the slice is freed here)
    _PLAIN = frozenset(t for t in ATOM_MAP if not t.endswith("Ptr")) | {"String", "BitVector"}
    AVAILABLE = True
except (ImportError, AttributeError):  # pragma: no cover - another OpenDP: the public path is used
    AVAILABLE = False


def _argument_key(x: Any) -> tuple | None:
    """A key under which equal keys mean the same OpenDP argument (type and value), or None: not cached.

    ``True == 1 == 1.0`` in Python, but they are different OpenDP arguments, so the type is part of the key, and
    the value is compared by ``repr`` (which tells ``-0.0`` from ``0.0`` and compares ``nan`` with itself)."""
    if type(x) in (bool, int, float, str):
        return (type(x), repr(x))
    if type(x) is np.ndarray and x.dtype == np.uint8 and x.ndim == 1:
        return (np.ndarray, x.tobytes())
    return None


def _ok(result: Any, type_: Any) -> Any:
    """The payload of an FFI result, or OpenDP's own exception for its error (:func:`opendp._lib.unwrap`)."""
    return unwrap(result, type_) if result.tag else result.payload.Ok


class Invoker:
    """``invoker(x)`` is ``meas(x)``: the same FFI call on the same converted argument, the output unloaded the
    same way (see the module docstring)."""

    def __init__(self, meas: Any):
        self._meas = py_to_c(meas, c_type=_OpenDPMeasurement, type_name=None)
        self._carrier = measurement_input_carrier_type(meas)
        self._arguments: dict[tuple, Any] = {}
        self._output_type: Any = None

    def _argument(self, x: Any) -> Any:
        key = _argument_key(x)
        if key is not None and key in self._arguments:
            return self._arguments[key]
        c_arg = py_to_c(x, c_type=AnyObjectPtr, type_name=self._carrier)  # raises as meas(x) would
        if key is not None and len(self._arguments) < MAX_CACHED_ARGUMENTS:
            self._arguments[key] = c_arg
        return c_arg

    def _type_of(self, obj: int) -> Any:
        text = _ok(_OBJECT_TYPE(obj), ctypes.c_char_p)
        try:
            return RuntimeType.parse(ctypes.cast(text, ctypes.c_char_p).value.decode())
        finally:
            _ok(_STR_FREE(text), ctypes.c_void_p)

    def __call__(self, x: Any) -> Any:
        return self._invoke(self._argument(x))

    def bound(self, x: Any) -> Callable[[], Any]:
        """``call()`` is ``self(x)``, with ``x`` converted now (raising now what ``self(x)`` would raise)."""
        c_arg = self._argument(x)
        return lambda: self._invoke(c_arg)

    def _invoke(self, c_arg: Any) -> Any:
        obj = _ok(_INVOKE(self._meas, c_arg), ctypes.c_void_p)
        if self._output_type is None:
            try:
                self._output_type = self._type_of(obj)
            except BaseException:
                _ok(_OBJECT_FREE(obj), ctypes.c_void_p)
                raise
        if not isinstance(self._output_type, str) or self._output_type not in _PLAIN:
            return c_to_py(ctypes.cast(obj, AnyObjectPtr))  # OpenDP's general unloading; the pointer owns obj
        try:
            raw = _ok(_AS_SLICE(obj), ctypes.c_void_p)
            piece = ctypes.cast(raw, _SLICE)
            try:
                return _slice_to_py(piece, self._output_type)
            finally:
                _ok(_SLICE_FREE(raw), ctypes.c_void_p)
        finally:
            _ok(_OBJECT_FREE(obj), ctypes.c_void_p)


def invoker(meas: Any) -> Invoker | None:
    """An :class:`Invoker` of OpenDP measurement ``meas``, or None when OpenDP's private API is not the expected
    one or ``meas`` cannot be fronted (then call ``meas(x)``)."""
    if not AVAILABLE:
        return None
    try:
        return Invoker(meas)
    except Exception:  # noqa: BLE001 - e.g. another OpenDP version: the public path still works
        return None
