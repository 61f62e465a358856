"""Program-state fingerprints at choice points, for renewal detection during enumeration.

A fingerprint is a hashable value such that two choice points with equal fingerprints have
futures with the same law. It is built from

* the call chain from the enumerated call down to the code that asked the branching source
  for a choice: each frame's code object and call instruction, verified to be a plain
  Python-to-Python call (so no C function holds hidden state in between, such as the
  iterator inside ``list(map(f, xs))`` or the half-built tuple inside ``tuple(genexpr)``);
* each frame's value stack below that call: read from the interpreter's frame when the frame
  is suspended in an inlined call (the read is validated against the frame's code, globals,
  builtins and the stack depth the bytecode implies), so a ``for`` loop's iterator, a pending
  ``out.append(...)`` or a half-computed expression are part of the state; when the stack
  cannot be read, only values whose origin the bytecode proves (constants, locals not stored
  since, closure cells just loaded for a primitive) may sit below the call;
* a deep value snapshot of every frame's live locals (cells, free variables, and the fast
  locals its code may read or delete again before storing them, found by a liveness analysis
  of the bytecode over normal flow, jumps and exception handlers; all locals when the code can
  read them by name: ``locals()``, ``vars()``, ``eval``, frame objects, zero-argument ``super``)
  and stack values, of the globals those code objects read (modules, functions and classes are
  treated as constants), and of the choice's own arguments; the snapshot records aliasing
  between mutable objects. The built-in iterators (over ranges, lists, tuples, strings and
  bytes, reversed lists, and enumerate, zip, map and filter over those) are snapshot by their
  remaining items: the sequence they walk (with its aliasing) and their position, as their
  ``__reduce__`` states them.

Assumption (stated, not checked): the future of a run depends only on its frames' live locals
and value stacks, the globals they and the functions they reach read, and the objects reachable
from those; modules, classes and module-level functions are not mutated during a run; no code
reads another frame's locals through frame objects (``sys._getframe(1).f_locals``, tracebacks).
Anything the snapshot cannot represent faithfully (objects implemented in C other than the
common immutable values and the iterators above, generators, files, numpy views, ...) makes
the fingerprint ``None``: no renewal is detected at that point, which is always sound.

Supported interpreter: CPython 3.11 bytecode (``CALL``/``PRECALL``) and its frame layout
(``_PyInterpreterFrame``); on other versions every fingerprint is ``None``, and on a build
whose frame layout does not validate, stacks are not read (the bytecode rule above applies).
"""

from __future__ import annotations

import contextvars
import ctypes
import dis
import functools
import sys
import types
from collections.abc import Hashable
from fractions import Fraction
from typing import Any

import numpy as np

__all__ = ["fingerprint", "Unrepresentable", "SUPPORTED"]

SUPPORTED = sys.version_info[:2] == (3, 11)

_HEAPTYPE = 1 << 9
_GENERATOR_FLAGS = 0x20 | 0x80 | 0x100 | 0x200  # generator, coroutine, iterable coroutine, async generator
_NO_FALLTHROUGH = {"JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT"}
_TERMINAL = {"RETURN_VALUE", "RAISE_VARARGS", "RERAISE"}
_CALLS = {"CALL", "CALL_FUNCTION_EX"}
_NAME_LOADS = {"LOAD_FAST", "LOAD_DEREF", "LOAD_GLOBAL", "LOAD_NAME"}
_OPTIMIZED = 0x1  # CO_OPTIMIZED: locals are fast locals, not a dict read by name
# names through which code can read its own locals other than by LOAD_FAST: such code keeps every local
_INTROSPECTION = frozenset({"locals", "vars", "eval", "exec", "dir", "_getframe", "currentframe", "f_locals",
                            "f_back", "tb_frame", "gi_frame", "cr_frame", "stack", "trace", "settrace", "super"})


class Unrepresentable(Exception):
    """A value the snapshot cannot represent faithfully."""


# ------------------------------------------------------------------ static analysis of a code object

def _pops(ins: dis.Instruction) -> int | None:
    """Items an instruction pops (as dis.stack_effect accounts them); None: not allowed in a call's span."""
    op, arg = ins.opname, ins.arg or 0
    if op in ("LOAD_FAST", "LOAD_CONST", "LOAD_DEREF", "LOAD_CLOSURE", "LOAD_NAME", "LOAD_GLOBAL", "PUSH_NULL",
              "KW_NAMES", "NOP", "LOAD_ASSERTION_ERROR"):
        return 0
    if op in ("LOAD_ATTR", "LOAD_METHOD", "UNARY_NEGATIVE", "UNARY_NOT", "UNARY_INVERT", "UNARY_POSITIVE",
              "GET_ITER", "JUMP_IF_FALSE_OR_POP", "JUMP_IF_TRUE_OR_POP") or op.startswith("POP_JUMP_"):
        return 1
    if op in ("JUMP_FORWARD", "JUMP_BACKWARD"):
        return 0
    if op in ("BINARY_OP", "BINARY_SUBSCR", "COMPARE_OP", "IS_OP", "CONTAINS_OP"):
        return 2
    if op in ("BUILD_TUPLE", "BUILD_LIST", "BUILD_SET", "BUILD_STRING", "BUILD_SLICE", "PRECALL"):
        return arg
    if op == "BUILD_MAP":
        return 2 * arg
    if op == "BUILD_CONST_KEY_MAP":
        return arg + 1
    if op == "CALL":
        return 2
    if op == "CALL_FUNCTION_EX":
        return 3 + (arg & 1)
    if op == "MAKE_FUNCTION":
        return 1 + bin(arg & 0xF).count("1")
    if op == "FORMAT_VALUE":
        return 2 if arg & 4 else 1
    return None


class _CodeInfo:
    """Stack depths before every instruction reachable by normal flow (None: not analysable)."""

    def __init__(self, code: types.CodeType):
        self.code = code
        self.instrs = list(dis.get_instructions(code))
        self.offsets = [ins.offset for ins in self.instrs]
        self.depth: dict[int, int] | None = self._depths()
        self._live: list[frozenset[str]] | None | bool = False  # False: not computed yet

    def live_after(self, k: int) -> frozenset[str] | None:
        """Fast locals that may be read (or deleted) after instruction ``k`` before being stored again,
        on some path (normal flow, jumps and exception handlers); None: every local counts as live."""
        if self._live is False:
            self._live = self._liveness()
        return None if self._live is None else self._live[k]

    def _liveness(self) -> list[frozenset[str]] | None:
        code = self.code
        if not code.co_flags & _OPTIMIZED or _INTROSPECTION & set(code.co_names):
            return None  # locals read by name (exec, locals(), frame objects): keep them all
        index = {ins.offset: k for k, ins in enumerate(self.instrs)}
        n = len(self.instrs)
        succ: list[list[int]] = [[] for _ in range(n)]
        try:
            handlers = dis._parse_exception_table(code)
        except Exception:  # noqa: BLE001 - a private helper of dis: without it, no pruning
            return None
        for k, ins in enumerate(self.instrs):
            if ins.opcode in dis.hasjrel or ins.opcode in dis.hasjabs:
                if ins.argval not in index:
                    return None
                succ[k].append(index[ins.argval])
            if ins.opname not in _NO_FALLTHROUGH and ins.opname not in _TERMINAL and k + 1 < n:
                succ[k].append(k + 1)
            for entry in handlers:
                if entry.start <= ins.offset < entry.end:
                    if entry.target not in index:
                        return None
                    succ[k].append(index[entry.target])
        use = [frozenset((ins.argval,)) if ins.opname in ("LOAD_FAST", "DELETE_FAST") else frozenset()
               for ins in self.instrs]
        kill = [frozenset((ins.argval,)) if ins.opname == "STORE_FAST" else frozenset() for ins in self.instrs]
        live_in = [frozenset()] * n
        changed = True
        while changed:
            changed = False
            for k in range(n - 1, -1, -1):
                out = frozenset().union(*(live_in[j] for j in succ[k]))
                new = use[k] | (out - kill[k])
                if new != live_in[k]:
                    live_in[k], changed = new, True
        return [frozenset().union(*(live_in[j] for j in succ[k])) for k in range(n)]

    def _depths(self) -> dict[int, int] | None:
        index = {ins.offset: k for k, ins in enumerate(self.instrs)}
        depth: dict[int, int] = {}
        work = [(0, 0)]
        while work:
            k, d = work.pop()
            while k < len(self.instrs):
                ins = self.instrs[k]
                if ins.offset in depth:
                    if depth[ins.offset] != d:
                        return None
                    break
                depth[ins.offset] = d
                arg = ins.arg if ins.opcode >= dis.HAVE_ARGUMENT else None
                try:
                    if ins.opcode in dis.hasjrel or ins.opcode in dis.hasjabs:
                        if ins.argval not in index:
                            return None
                        work.append((index[ins.argval], d + dis.stack_effect(ins.opcode, arg, jump=True)))
                        if ins.opname in _NO_FALLTHROUGH:
                            break
                        d += dis.stack_effect(ins.opcode, arg, jump=False)
                    elif ins.opname in _TERMINAL:
                        break
                    else:
                        d += dis.stack_effect(ins.opcode, arg)
                except ValueError:
                    return None
                k += 1
        return depth

    def call_at(self, lasti: int) -> int | None:
        """Index of the instruction containing byte offset ``lasti`` (its inline caches included)."""
        lo, hi = 0, len(self.offsets)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if self.offsets[mid] <= lasti:
                lo = mid
            else:
                hi = mid
        return lo if self.offsets and self.offsets[lo] <= lasti else None


_CODE_INFO: dict[types.CodeType, _CodeInfo] = {}


def _info(code: types.CodeType) -> _CodeInfo:
    info = _CODE_INFO.get(code)
    if info is None:
        info = _CODE_INFO[code] = _CodeInfo(code)
    return info


def _last_at_depth(info: _CodeInfo, before: int, depth: int) -> int | None:
    """Index of the last instruction before ``before`` entered at stack depth ``depth`` (all between deeper)."""
    j = before - 1
    while j >= 0 and info.depth.get(info.instrs[j].offset) != depth:
        if info.instrs[j].offset not in info.depth:
            return None
        j -= 1
    return j if j >= 0 else None


def _untouched(info: _CodeInfo, first: int, last: int, floor: int) -> bool:
    """No instruction in [first, last) pops into the stack slots up to ``floor`` (1-based, from the bottom)."""
    for ins in info.instrs[first:last]:
        pops = _pops(ins)
        d = info.depth.get(ins.offset)
        if pops is None or d is None or d - pops < floor:
            return False
    return True


# ------------------------------------------------------------------ reading a suspended frame's value stack
#
# CPython 3.11 (Include/internal/pycore_frame.h, Include/cpython/frameobject.h): a PyFrameObject is
# PyObject_HEAD, f_back, f_frame (the _PyInterpreterFrame); that holds f_func, f_globals, f_builtins,
# f_locals, f_code, frame_obj, previous, prev_instr, then ``int stacktop`` (localsplus + stacktop is the
# top of the value stack), is_entry and owner, then localsplus: the fast locals, cells and free
# variables, followed by the value stack. The interpreter sets stacktop to -1 whenever a frame runs and
# stores the real depth only when the frame makes an inlined Python-to-Python call (or calls a tracer),
# so a depth that matches the bytecode's is the stack of the call the frame is suspended in.

_PTR = ctypes.sizeof(ctypes.c_void_p)
_STACK_READABLE = SUPPORTED and sys.implementation.name == "cpython" and not hasattr(sys, "getobjects")
_FRAME_DATA = 3 * _PTR  # PyFrameObject.f_frame (after ob_refcnt, ob_type, f_back)
_F_GLOBALS, _F_BUILTINS, _F_CODE, _F_FRAME_OBJ, _F_STACKTOP = _PTR, 2 * _PTR, 4 * _PTR, 5 * _PTR, 8 * _PTR
_F_LOCALSPLUS = -(-(8 * _PTR + 4 + 2) // _PTR) * _PTR  # after int stacktop, bool is_entry, char owner


class _Null:
    """A NULL slot of the value stack (e.g. below a pending call of a plain function)."""

    def __repr__(self) -> str:
        return "<NULL>"


_NULL = _Null()


def _address(at: int) -> int | None:
    return ctypes.c_void_p.from_address(at).value


def _n_localsplus(code: types.CodeType) -> int:
    """Slots of ``localsplus`` before the stack: locals, then cells that are not arguments, then free variables."""
    local = set(code.co_varnames)
    return len(code.co_varnames) + sum(1 for c in code.co_cellvars if c not in local) + len(code.co_freevars)


def _stack_values(frame: types.FrameType, depth: int) -> tuple | None:
    """The ``depth`` values on ``frame``'s value stack (bottom first), or None when they cannot be read.

    Read only when the interpreter frame's code, globals, builtins and frame object are the ones
    ``frame`` reports, its stored stack depth is exactly ``depth`` (the bytecode's depth below the
    call the frame is suspended in), and its plain locals are the objects ``frame.f_locals`` shows.
    """
    if not _STACK_READABLE:
        return None
    data = _address(id(frame) + _FRAME_DATA)
    if not data:
        return None
    if (_address(data + _F_CODE) != id(frame.f_code) or _address(data + _F_GLOBALS) != id(frame.f_globals)
            or _address(data + _F_BUILTINS) != id(frame.f_builtins) or _address(data + _F_FRAME_OBJ) != id(frame)):
        return None
    code = frame.f_code
    n = _n_localsplus(code)
    if ctypes.c_int.from_address(data + _F_STACKTOP).value != n + depth:
        return None
    local_values = frame.f_locals
    cells = set(code.co_cellvars)
    for i, name in enumerate(code.co_varnames):  # the fast locals sit where the layout says
        if name in cells:
            continue
        at = _address(data + _F_LOCALSPLUS + i * _PTR)
        if at != (id(local_values[name]) if name in local_values else None):
            return None
    values = []
    for i in range(n, n + depth):
        at = _address(data + _F_LOCALSPLUS + i * _PTR)
        values.append(_NULL if at is None else ctypes.cast(at, ctypes.py_object).value)
    return tuple(values)


def _call_site(frame: types.FrameType) -> tuple[int, Any, tuple, frozenset[str]] | None:
    """(index of the call instruction, callable resolved now, stack values below the call, locals whose
    values wait on the stack) for a frame suspended in a call whose value stack is known; None otherwise.

    The stack below the call's own block is read from the frame (:func:`_stack_values`). When it
    cannot be read it may only hold values pushed by LOAD_CONST, by LOAD_FAST of a local not stored
    since (so the value is the local's current value, which the snapshot records), or by LOAD_DEREF
    of a closure variable when the call is a vetdp primitive's (the stack values returned are then
    ``()``: the code and the locals named in the last item determine them); a for-iterator, a
    with-exit or a computed partial result then gives None.
    """
    code = frame.f_code
    if code.co_flags & _GENERATOR_FLAGS:
        return None
    info = _info(code)
    if info.depth is None:
        return None
    k = info.call_at(frame.f_lasti)
    if k is None:
        return None
    call = info.instrs[k]
    if call.opname not in _CALLS or call.offset not in info.depth:
        return None
    temps = info.depth[call.offset] - (1 - dis.stack_effect(call.opcode, call.arg))
    if temps < 0:
        return None
    start = _last_at_depth(info, k, temps)  # the call block starts here
    if start is None:
        return None
    callee, span, floor = _resolve_callable(frame, info, start, k, temps)
    if callee is _MISSING or not _untouched(info, span, k, floor):
        return None
    if temps == 0:
        return k, callee, (), frozenset()
    stack = _stack_values(frame, temps)
    if stack is not None:
        return k, callee, stack, frozenset()
    pinned: set[str] = set()
    boundary = start
    for slot in range(temps, 0, -1):
        pusher = _last_at_depth(info, boundary, slot - 1)
        if pusher is None or not _untouched(info, pusher + 1, k, slot):
            return None
        ins = info.instrs[pusher]
        if ins.opname == "LOAD_FAST":
            if any(later.opname in ("STORE_FAST", "DELETE_FAST") and later.argval == ins.argval
                   for later in info.instrs[pusher + 1:k]):
                return None
            pinned.add(ins.argval)
        elif ins.opname == "LOAD_DEREF" and getattr(callee, "__module__", None) == "vetdp.sampling.primitives":
            # a closure variable waiting below a direct call of a primitive (e.g. ``cats[sample(...)]``): no user
            # code runs between the load and the choice point, so the cell still holds the value on the stack
            if any(later.opname in ("STORE_DEREF", "DELETE_DEREF") and later.argval == ins.argval
                   for later in info.instrs[pusher + 1:k]):
                return None
        elif ins.opname != "LOAD_CONST":
            return None
        boundary = pusher
    return k, callee, (), frozenset(pinned)


_MISSING = object()


def _is_name_load(ins: dis.Instruction, with_null: bool) -> bool:
    if ins.opname == "LOAD_GLOBAL":
        return bool(ins.arg & 1) == with_null
    return not with_null and ins.opname in _NAME_LOADS


class _Made:
    """A function made in the call block itself and called at once (a comprehension, an inline lambda)."""

    def __init__(self, code: types.CodeType):
        self.code = code


def _made_function(info: _CodeInfo, start: int, call: int, base: int) -> tuple[Any, int, int] | None:
    """``[PUSH_NULL] [LOAD_CLOSURE... BUILD_TUPLE] LOAD_CONST <code> MAKE_FUNCTION`` (no defaults, no
    annotations) at the start of a call block: (the made function's code, where its arguments start, the
    stack slot the function occupies until the call)."""
    instrs = info.instrs
    null = int(instrs[start].opname == "PUSH_NULL")
    slot = base + 1 + null
    first = j = start + null
    while j < call and instrs[j].opname == "LOAD_CLOSURE":
        j += 1
    flags = 0
    if j > first:
        if j >= call or instrs[j].opname != "BUILD_TUPLE" or instrs[j].arg != j - first:
            return None
        j, flags = j + 1, 0x08
    if j + 2 > call or instrs[j].opname != "LOAD_CONST" or not isinstance(instrs[j].argval, types.CodeType):
        return None
    made = instrs[j + 1]
    if made.opname != "MAKE_FUNCTION" or made.arg != flags or info.depth.get(made.offset) != slot + (flags > 0):
        return None
    return _Made(instrs[j].argval), j + 2, slot


def _resolve_callable(frame: types.FrameType, info: _CodeInfo, start: int, call: int,
                      base: int) -> tuple[Any, int, int]:
    """The object a call block (instructions start..call) calls, looked up now, where its arguments start,
    and the highest stack slot that must keep its value until the call (the callable and a method's self).

    Understood shapes: ``name(...)``, ``name.attr...attr(...)`` and ``name.attr...method(...)``
    with ``name`` a local, free or global variable, and a function made and called in the block
    (:func:`_made_function`); anything else gives _MISSING.
    """
    instrs = info.instrs
    first = instrs[start]
    if _is_name_load(first, with_null=True):
        obj, j, slot, method = _load_name(frame, first), start + 1, base + 2, False
    elif first.opname == "PUSH_NULL" and start + 1 < call and _is_name_load(instrs[start + 1], with_null=False):
        obj, j, slot, method = _load_name(frame, instrs[start + 1]), start + 2, base + 2, False
    elif _is_name_load(first, with_null=False):
        obj, j, slot, method = _load_name(frame, first), start + 1, base + 1, True
    else:
        made = _made_function(info, start, call, base)
        return made if made is not None else (_MISSING, call, base + 2)
    while j < call and instrs[j].opname == "LOAD_ATTR" and info.depth.get(instrs[j].offset) == slot:
        obj = _static_attribute(obj, instrs[j].argval)
        j += 1
    if method:
        if j >= call or instrs[j].opname != "LOAD_METHOD" or info.depth.get(instrs[j].offset) != slot:
            return _MISSING, call, base + 2
        obj = _static_attribute(obj, instrs[j].argval)
        j += 1
    return obj, j, base + 2


def _lookup_global(frame: types.FrameType, name: str) -> Any:
    value = frame.f_globals.get(name, _MISSING)
    if value is _MISSING:
        value = frame.f_builtins.get(name, _MISSING)
    return value


def _load_name(frame: types.FrameType, ins: dis.Instruction) -> Any:
    if ins.opname in ("LOAD_FAST", "LOAD_DEREF"):
        return frame.f_locals.get(ins.argval, _MISSING)
    if ins.opname == "LOAD_NAME":
        value = frame.f_locals.get(ins.argval, _MISSING)
        return _lookup_global(frame, ins.argval) if value is _MISSING else value
    return _lookup_global(frame, ins.argval)


def _static_attribute(obj: Any, name: str) -> Any:
    """``obj.name`` found without running any Python code, or _MISSING when that is not possible."""
    if obj is _MISSING:
        return _MISSING
    if isinstance(obj, types.ModuleType):
        return obj.__dict__.get(name, _MISSING)
    owner = obj if isinstance(obj, type) else type(obj)
    found = _MISSING
    for klass in owner.__mro__:
        if name in klass.__dict__:
            found = klass.__dict__[name]
            break
    if isinstance(obj, type):
        if isinstance(found, staticmethod):
            return found.__func__
        return found if isinstance(found, types.FunctionType) else _MISSING
    if found is not _MISSING and (hasattr(type(found), "__set__") or hasattr(type(found), "__delete__")):
        return _MISSING  # a data descriptor (property, slot, ...) would run code
    instance_dict = getattr(obj, "__dict__", None)
    if isinstance(instance_dict, dict) and name in instance_dict:
        return instance_dict[name]
    if isinstance(found, types.FunctionType):
        return types.MethodType(found, obj)
    if isinstance(found, staticmethod):
        return found.__func__
    return _MISSING


def _target_code(callee: Any) -> types.CodeType | None:
    """The code object a call of ``callee`` runs directly (no C code with state in between)."""
    if isinstance(callee, _Made):
        return callee.code
    if isinstance(callee, types.MethodType):
        callee = callee.__func__
    if isinstance(callee, types.FunctionType):
        return callee.__code__
    if isinstance(callee, type) or callee is _MISSING:
        return None
    call = None
    for klass in type(callee).__mro__:
        if "__call__" in klass.__dict__:
            call = klass.__dict__["__call__"]
            break
    return call.__code__ if isinstance(call, types.FunctionType) else None


# ------------------------------------------------------------------ value snapshots

_ATOMS = (int, str, bytes, type(None))
_LRU_WRAPPER = type(functools.lru_cache(maxsize=1)(len))
_MISSING_VALUE = object()
_CONSTANT_KINDS = (types.ModuleType, type, types.FunctionType, types.BuiltinFunctionType, np.ufunc)
# methods of built-in types (``list.append`` waiting on the stack for its argument): immutable constants
_DESCRIPTORS = (types.MethodDescriptorType, types.WrapperDescriptorType, types.ClassMethodDescriptorType)
_RANGE_ITERATORS = (type(iter(range(0))), type(iter(range(1 << 64))))
# built-in iterators whose __reduce__ states everything their future depends on: the objects they walk
# (the very objects, so aliasing is kept) and their position
_REDUCIBLE_ITERATORS = frozenset({type(iter([])), type(iter(())), type(reversed([])), type(iter("")),
                                  type(iter(b"")), enumerate, zip, map, filter})


def _global_names(code: types.CodeType, acc: set[str] | None = None) -> set[str]:
    acc = set() if acc is None else acc
    acc.update(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            _global_names(const, acc)
    return acc


class _Snapshot:
    def __init__(self, source: Any):
        self.memo: dict[int, int] = {}
        self.keep: list[Any] = []
        self.source = source
        self.globals_done: set[tuple[int, str]] = set()
        self.globals: list[Any] = []

    def _ref(self, v: Any) -> tuple | None:
        key = id(v)
        if key in self.memo:
            return ("ref", self.memo[key])
        self.memo[key] = len(self.memo)
        self.keep.append(v)
        return None

    def globals_of(self, code: types.CodeType, g: dict) -> None:
        """Record the globals ``code`` reads (transitively through module-level functions)."""
        for name in sorted(_global_names(code)):
            key = (id(g), name)
            if key in self.globals_done or name not in g:
                continue
            self.globals_done.add(key)
            value = g[name]
            if isinstance(value, types.FunctionType):
                self.globals_of(value.__code__, value.__globals__)
                continue
            if isinstance(value, _CONSTANT_KINDS):
                continue
            self.globals.append((g.get("__name__"), name, self.snap(value)))

    def snap(self, v: Any) -> Hashable:  # noqa: C901 - one case per kind of value
        t = type(v)
        if t in _ATOMS:
            return v
        if t is bool:
            return ("b", v)
        if t is float:
            return ("f", v.hex())
        if t is complex:
            return ("c", v.real.hex(), v.imag.hex())
        if t is Fraction:
            return ("Q", v.numerator, v.denominator)
        if t is tuple:
            return ("T",) + tuple(self.snap(x) for x in v)
        if t is frozenset:
            return ("FS",) + tuple(self.snap(x) for x in v)
        if t is range:
            return ("R", v.start, v.stop, v.step)
        if v is self.source:
            return ("source",)
        if isinstance(v, (types.ModuleType, type)):
            return ("const", v)
        if t is types.BuiltinFunctionType:
            owner = v.__self__
            if owner is None or isinstance(owner, (types.ModuleType, type)):
                return ("const", v)
            return ("builtin-method", v.__name__, self.snap(owner))
        if isinstance(v, np.ufunc):
            return ("const", v)
        if isinstance(v, np.generic) and v.dtype.kind != "O":
            return ("g", v.dtype.str, v.tobytes())
        if t is np.dtype:
            return ("dtype", v.str)
        if t is contextvars.ContextVar:
            return ("contextvar", v, self.snap(v.get(_MISSING_VALUE)))
        if t is _LRU_WRAPPER:  # a memoised function: the cache does not change what it returns
            return ("lru", self.snap(v.__wrapped__))
        if v is _MISSING_VALUE:
            return ("missing",)
        if v is _NULL:
            return ("null",)
        if t in _DESCRIPTORS:
            return ("const", v)
        ref = self._ref(v)
        if ref is not None:
            return ref
        index = self.memo[id(v)]
        if t is list:
            return ("L", index) + tuple(self.snap(x) for x in v)
        if t is dict:
            return ("D", index) + tuple((self.snap(k), self.snap(x)) for k, x in v.items())
        if t is set:
            return ("S", index) + tuple(self.snap(x) for x in v)
        if t is bytearray:
            return ("BA", index, bytes(v))
        if t is np.ndarray:
            if v.dtype.kind == "O" or v.base is not None:
                raise Unrepresentable("object arrays and views")
            return ("A", index, v.dtype.str, v.shape, v.tobytes(), v.flags.writeable)
        if t is types.FunctionType:
            cells = tuple(self._cell(c) for c in (v.__closure__ or ()))
            self.globals_of(v.__code__, v.__globals__)
            return ("F", index, v.__code__, cells, self.snap(v.__defaults__), self.snap(v.__kwdefaults__))
        if t is types.MethodType:
            return ("BM", index, self.snap(v.__func__), self.snap(v.__self__))
        if t is types.CellType:
            return ("cell", index, self._cell(v))
        if t in _RANGE_ITERATORS:
            _, (walked,), position = v.__reduce__()
            rest = walked[position:]  # the items still to come, as a range: canonical (length, first, step)
            return ("RI", index, len(rest), rest.start if rest else None, rest.step if len(rest) > 1 else None)
        if t in _REDUCIBLE_ITERATORS:
            return ("IT", index, t, self.snap(v.__reduce__()[1:]))
        return self._object(v, t, index)

    def _cell(self, cell: types.CellType) -> Hashable:
        try:
            return self.snap(cell.cell_contents)
        except ValueError:
            return ("empty-cell",)

    def _object(self, v: Any, t: type, index: int) -> Hashable:
        mro = t.__mro__
        if not all(k.__flags__ & _HEAPTYPE for k in mro[:-1]) or mro[-1] is not object:
            raise Unrepresentable(f"an instance of {t.__qualname__} (C-level state)")
        parts: list[Hashable] = ["O", index, t]
        if t.__dictoffset__:
            instance_dict = object.__getattribute__(v, "__dict__")
            if type(instance_dict) is not dict:
                raise Unrepresentable(f"the __dict__ of a {t.__qualname__}")
            parts.append(self.snap(instance_dict))
        for klass in mro[:-1]:
            slots = klass.__dict__.get("__slots__", ())
            for name in (slots,) if isinstance(slots, str) else slots:
                if name in ("__dict__", "__weakref__"):
                    continue
                attr = f"_{klass.__name__.lstrip('_')}{name}" if name.startswith("__") else name
                value = getattr(v, attr, _MISSING)
                parts.append((name, ("unset",) if value is _MISSING else self.snap(value)))
        return tuple(parts)


# ------------------------------------------------------------------ the fingerprint

def _live_locals(frame: types.FrameType, k: int, pinned: frozenset[str]) -> dict:
    """``frame``'s locals that its future can observe once the call at instruction ``k`` returns: cells,
    free variables, and fast locals read (or deleted) again before being stored (see
    :meth:`_CodeInfo.live_after`), plus ``pinned``. A dead local's value, or whether it is bound at
    all, cannot change what the frame does, so two states differing only there have the same future."""
    values = dict(frame.f_locals)
    code = frame.f_code
    live = _info(code).live_after(k)
    if live is None:
        return values
    keep = live | pinned | set(code.co_cellvars) | set(code.co_freevars)
    return {name: value for name, value in values.items() if name in keep}


def fingerprint(root_code: types.CodeType, top: types.FrameType, entry: types.CodeType, source: Any,
                extra: Any) -> Hashable | None:
    """The state at a choice point, or None when it cannot be captured faithfully.

    ``top`` is the innermost user (or primitive) frame, suspended in the call that entered the
    branching source through the code object ``entry``; the chain ends at the enumerator's frame
    running ``root_code``, which called the enumerated function (its own locals, the function
    and its input, are not part of the state: it only returns what the call returns).
    ``extra`` are the choice's own arguments.
    """
    if not SUPPORTED:
        return None
    chain: list[types.FrameType] = []
    frame: types.FrameType | None = top
    while frame is not None and frame.f_code is not root_code:
        chain.append(frame)
        frame = frame.f_back
    if frame is None:
        return None
    chain.append(frame)
    chain.reverse()  # the root first
    snapshot = _Snapshot(source)
    parts: list[Hashable] = []
    try:
        for depth, f in enumerate(chain):
            site = _call_site(f)
            if site is None:
                return None
            k, callee, stack, pinned = site
            inner = chain[depth + 1].f_code if depth + 1 < len(chain) else entry
            if _target_code(callee) is not inner:
                return None
            if depth == 0:
                continue
            code = f.f_code
            snapshot.globals_of(code, f.f_globals)
            parts.append((code, _info(code).offsets[k], snapshot.snap(_live_locals(f, k, pinned)),
                          snapshot.snap(stack)))
        parts.append(snapshot.snap(extra))
        return ("FP", tuple(parts), tuple(snapshot.globals))
    except (Unrepresentable, RecursionError):
        return None
