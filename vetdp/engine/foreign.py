"""Seeing randomness drawn outside vetdp's primitives ("foreign" randomness), decisively.

Exact enumeration (:mod:`vetdp.engine.enumerate`) is only valid for code whose every random
choice goes through vetdp's sampler primitives. Code that also draws from Python's
``random``, ``os.urandom``, ``secrets`` or NumPy has outputs that the branching source does
not control; enumerating it yields one random run, not the law. Comparing two runs cannot
tell them apart when the foreign draws happen to agree (certain at prob = 1 − 2⁻⁵³), so
:func:`watch_foreign_randomness` observes the calls themselves:

* a ``sys.setprofile`` hook (current thread only) sees every call, made from Python code,
  of a C method of a ``random.Random`` instance (module-level ``random.random``, aliases
  such as ``from random import random``, user-made ``Random()`` objects; ``SystemRandom``
  and ``secrets`` end in ``os.urandom``), of ``os.urandom`` and ``os.getrandom`` under any
  alias, and the seed check that every NumPy BitGenerator construction performs (so
  ``default_rng(...)``, ``RandomState(...)``, ``PCG64(...)`` are seen, seeded or not;
  unseeded ones also read ``os.urandom``);
* NumPy's generator methods are compiled (Cython) and invisible to the profiler, so draws
  from generators that exist before the block are seen by their state: the legacy global
  ``RandomState`` behind ``np.random.*``, every generator alive when the block starts
  (``scan_heap``, the default), and generators reachable from ``roots`` (e.g. the
  measurement under test: closures, globals its code names, defaults, attributes). A
  generator's state changes with every draw, so a draw in the block is seen unless the
  block itself restores the state.

Not seen: draws on other threads, compiled code that reads entropy without going through
these Python-level entry points, and (with ``scan_heap=False``) NumPy generators that exist
before the block but are not reachable from ``roots``. For those the engine still repeats
the enumeration (:func:`check_determinism`) and treats any disagreement as foreign use.

Cost: the profiler slows the code run in the block about 4x (a no-op ``sys.setprofile``
hook alone costs 2.5–3x on CPython 3.11); the heap scan costs one pass over the garbage
collector's objects per block.

vetdp's own :class:`~vetdp.sampling.sources.SystemSource` does not count when it is the
current source (or wrapped by it): that is a primitive drawing as designed. Called
directly while another source is current (bypassing the engine), it counts.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import gc
import os
import random
import secrets
import sys
import types
from collections.abc import Callable, Iterable, Iterator
from fractions import Fraction
from typing import Any

from vetdp.sampling.sources import RecordingSource, SystemSource, current_source

__all__ = ["ForeignUse", "Determinism", "watch_foreign_randomness", "check_determinism", "reachable_generators",
           "non_cryptographic"]

_URANDOM_FUNCTIONS = tuple(f for f in (getattr(os, "urandom", None), getattr(os, "getrandom", None)) if f is not None)
_SYSTEM_SOURCE_CODE = SystemSource.random_bytes.__code__
_STDLIB_RANDOM_FILES = {random.__file__, secrets.__file__}
try:  # every isinstance() against an ABC calls this C function from ABCMeta.__instancecheck__
    from _abc import _abc_instancecheck as _ABC_C_INSTANCECHECK
except ImportError:  # pragma: no cover - the pure-Python abc (_py_abc) is not used by CPython
    _ABC_C_INSTANCECHECK = None


def _random_base() -> type:
    import _random

    return _random.Random


_RANDOM_BASE = _random_base()


@dataclasses.dataclass
class ForeignUse:
    """What a :func:`watch_foreign_randomness` block saw: the foreign sources, first seen first."""

    sources: list[str] = dataclasses.field(default_factory=list)

    @property
    def used(self) -> bool:
        """True when some randomness outside vetdp's primitives was drawn in the block."""
        return bool(self.sources)

    def _add(self, label: str) -> None:
        if label not in self.sources:
            self.sources.append(label)


# ------------------------------------------------------------------ NumPy generators, seen by their state

def _numpy_random_types() -> tuple[type, ...]:
    """Generator, BitGenerator and RandomState, if NumPy's random package is already imported."""
    if "numpy.random" not in sys.modules:
        return ()
    np_random = sys.modules["numpy.random"]
    found = []
    for name in ("Generator", "RandomState"):
        t = getattr(np_random, name, None)
        if isinstance(t, type):
            found.append(t)
    bit_generator = sys.modules.get("numpy.random.bit_generator")
    t = getattr(bit_generator, "BitGenerator", None) if bit_generator is not None else None
    if isinstance(t, type):
        found.append(t)
    return tuple(found)


def _plain(value: Any) -> Any:
    """A comparable copy of a generator state (dicts, ints, floats, arrays)."""
    if isinstance(value, dict):
        return tuple(sorted((str(k), _plain(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_plain(v) for v in value)
    tobytes = getattr(value, "tobytes", None)
    if callable(tobytes):  # a NumPy array or scalar
        return (str(getattr(value, "dtype", "")), tuple(getattr(value, "shape", ())), tobytes())
    return value


def _state_of(obj: Any) -> Any:
    get_state = getattr(obj, "get_state", None)
    if callable(get_state) and type(obj).__name__ == "RandomState":  # includes the cached Gaussian
        return _plain(get_state(legacy=False))
    bit_generator = getattr(obj, "bit_generator", None)
    return _plain((bit_generator if bit_generator is not None else obj).state)


def _label(obj: Any) -> str:
    legacy = sys.modules.get("numpy.random.mtrand")
    if legacy is not None and obj is getattr(legacy, "_rand", None):
        return "numpy.random legacy global RandomState (np.random.* functions)"
    return f"numpy.random.{type(obj).__name__} (state changed: a draw)"


def reachable_generators(roots: Iterable[Any], limit: int = 20_000) -> list[Any]:
    """NumPy Generator/BitGenerator/RandomState objects reachable from ``roots``.

    Followed: function closures, defaults, the globals (and attributes of modules) named by
    the function's code and nested code, bound methods, ``functools.partial``, instance
    ``__dict__``/slots, containers. At most ``limit`` objects are visited.
    """
    kinds = _numpy_random_types()
    if not kinds:
        return []
    found: list[Any] = []
    seen: set[int] = set()
    stack: list[tuple[Any, frozenset[str] | None]] = [(r, None) for r in roots]
    while stack and len(seen) < limit:
        obj, names = stack.pop()
        if id(obj) in seen or obj is None or isinstance(obj, (str, bytes, int, float, complex, bool)):
            continue
        seen.add(id(obj))
        if isinstance(obj, kinds):
            found.append(obj)
            continue
        if isinstance(obj, (types.ModuleType, type)):
            if names:  # only the attributes the code names: np.random.foo names np, random, foo
                namespace = vars(obj)
                stack.extend((namespace[n], names) for n in names if n in namespace)
            continue
        if isinstance(obj, types.FunctionType):
            code_names = _code_names(obj.__code__)
            stack.extend((c.cell_contents, None) for c in obj.__closure__ or () if _cell_full(c))
            stack.extend((v, None) for v in obj.__defaults__ or ())
            stack.extend((v, None) for v in (obj.__kwdefaults__ or {}).values())
            g = obj.__globals__
            stack.extend((g[n], code_names) for n in code_names if n in g)
            wrapped = getattr(obj, "__wrapped__", None)
            if wrapped is not None:
                stack.append((wrapped, None))
            continue
        if isinstance(obj, types.MethodType):
            stack.extend([(obj.__func__, None), (obj.__self__, None)])
            continue
        if isinstance(obj, dict):
            stack.extend((v, names) for v in obj.values())
            continue
        if isinstance(obj, (list, tuple, set, frozenset)):
            stack.extend((v, names) for v in obj)
            continue
        if isinstance(obj, functools.partial):
            stack.extend([(obj.func, None), (obj.args, None), (obj.keywords, None)])
            continue
        d = getattr(obj, "__dict__", None)
        if isinstance(d, dict):
            stack.extend((v, names) for v in d.values())
        for slot in getattr(type(obj), "__slots__", ()) or ():
            if isinstance(slot, str) and hasattr(obj, slot):
                stack.append((getattr(obj, slot), names))
        if callable(obj) and not isinstance(obj, types.BuiltinFunctionType):
            call = vars(type(obj)).get("__call__")
            if isinstance(call, types.FunctionType):
                stack.append((call, None))
    return found


def _cell_full(cell: Any) -> bool:
    try:
        cell.cell_contents  # noqa: B018 - an empty cell raises
    except ValueError:
        return False
    return True


def _code_names(code: types.CodeType) -> frozenset[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _code_names(const)
    return frozenset(names)


def _heap_generators() -> list[Any]:
    kinds = _numpy_random_types()
    # type(o), not isinstance: a dead weakref.proxy on the heap raises ReferenceError for its __class__
    return [o for o in gc.get_objects() if issubclass(type(o), kinds)] if kinds else []


# ------------------------------------------------------------------ the profiler

def _is_vetdp_system_source(frame: types.FrameType) -> bool:
    """The c_call of os.urandom comes from SystemSource.random_bytes reached as the current source."""
    if frame.f_code is not _SYSTEM_SOURCE_CODE:
        return False
    me = frame.f_locals.get("self")
    source = current_source()
    while True:
        if source is me:
            return True
        if not isinstance(source, RecordingSource):
            return False
        source = source.inner


def _stdlib_caller(frame: types.FrameType | None) -> str | None:
    """The outermost random/secrets function on the stack above ``frame`` (its label), if any."""
    label = None
    while frame is not None and frame.f_code.co_filename in _STDLIB_RANDOM_FILES:
        module = "secrets" if frame.f_code.co_filename.endswith("secrets.py") else "random"
        owner = frame.f_locals.get("self") if frame.f_code.co_varnames[:1] == ("self",) else None
        name = (f"{type(owner).__qualname__}.{frame.f_code.co_name}" if isinstance(owner, _RANDOM_BASE)
                else frame.f_code.co_qualname)
        label = f"{module}.{name}"
        frame = frame.f_back
    return label


def _random_label(arg: Any, frame: types.FrameType) -> str:
    owner = arg.__self__
    outer = _stdlib_caller(frame)
    if outer is not None:
        return outer
    if owner is getattr(random, "_inst", None):
        return f"random.{arg.__name__} (module-level random)"
    return f"{type(owner).__module__}.{type(owner).__qualname__}.{arg.__name__}"


def _is_seed_check(frame: types.FrameType) -> bool:
    """An isinstance(seed, ISeedSequence) check: the first step of every NumPy BitGenerator's construction."""
    cls = frame.f_locals.get("cls")
    return (getattr(cls, "__name__", "") in ("ISeedSequence", "ISpawnableSeedSequence")
            and str(getattr(cls, "__module__", "")).startswith("numpy.random"))


def _make_profiler(record: ForeignUse, previous: Callable | None) -> Callable:
    """The ``sys.setprofile`` callback: every 'c_call' is checked by identity and type only (cheap)."""
    urandoms = _URANDOM_FUNCTIONS
    random_base = _RANDOM_BASE
    abc_check = _ABC_C_INSTANCECHECK

    def seen(frame: types.FrameType, arg: Any) -> None:
        if arg in urandoms:
            if not _is_vetdp_system_source(frame):
                outer = _stdlib_caller(frame)
                record._add(f"os.{arg.__name__}" + (f" via {outer}" if outer else ""))
        elif arg is abc_check:  # frame: ABCMeta.__instancecheck__(cls, instance)
            if _is_seed_check(frame):
                record._add("numpy.random BitGenerator construction (default_rng, RandomState, PCG64, ...)")
        else:
            record._add(_random_label(arg, frame))

    if previous is None:
        def profiler(frame: types.FrameType, event: str, arg: Any) -> None:
            if event == "c_call" and (arg in urandoms or arg is abc_check or isinstance(arg.__self__, random_base)):
                seen(frame, arg)
    else:
        def profiler(frame: types.FrameType, event: str, arg: Any) -> None:
            if event == "c_call" and (arg in urandoms or arg is abc_check or isinstance(arg.__self__, random_base)):
                seen(frame, arg)
            previous(frame, event, arg)

    return profiler


@contextlib.contextmanager
def watch_foreign_randomness(*roots: Any, scan_heap: bool = True) -> Iterator[ForeignUse]:
    """Record every draw of foreign randomness made in the block (see the module docstring).

    Yields a :class:`ForeignUse`; its ``sources`` are complete when the block ends. With
    ``scan_heap`` (the default) every NumPy generator alive at the start is watched (one pass
    over the garbage collector's objects, ~30 ms with vetdp's imports); without it only the
    legacy global one and those reachable from ``roots``. Any
    profiler installed before (``sys.setprofile``) still receives every event in the block
    when it is a Python callable, and is reinstated on exit; a C-level profiler such as
    ``cProfile`` is re-enabled on exit and misses the block's events. Blocks nest: an outer
    block sees what an inner one sees.
    """
    record = ForeignUse()
    watched: dict[int, tuple[Any, Any]] = {}
    legacy = sys.modules.get("numpy.random.mtrand")
    candidates = [getattr(legacy, "_rand", None)] if legacy is not None else []
    candidates += reachable_generators(roots) if roots else []
    candidates += _heap_generators() if scan_heap else []
    for g in candidates:
        if g is not None and id(g) not in watched:
            with contextlib.suppress(Exception):
                watched[id(g)] = (g, _state_of(g))
    previous = sys.getprofile()
    chained = previous if callable(previous) else None
    sys.setprofile(_make_profiler(record, chained))
    try:
        yield record
    finally:
        if previous is None or chained is not None:
            sys.setprofile(previous)
        else:
            sys.setprofile(None)
            enable = getattr(previous, "enable", None)
            if callable(enable):
                enable()
        for g, before in watched.values():
            try:
                changed = _state_of(g) != before
            except Exception:  # noqa: BLE001 - a state that cannot be read any more was tampered with
                changed = True
            if changed:
                record._add(_label(g))


def non_cryptographic(sources: Iterable[str]) -> list[str]:
    """The sources seen by :func:`watch_foreign_randomness` (its labels) that are not the operating system's CSPRNG:
    everything but ``os.urandom``/``os.getrandom``, called directly or by ``secrets`` and ``random.SystemRandom``.
    Python's ``random.Random`` (Mersenne Twister: 624 outputs give its state) and NumPy's generators (PCG64 and the
    legacy MT19937, seeded or not) are predictable from their seed or their outputs."""
    return [s for s in sources if not s.startswith(("os.urandom", "os.getrandom"))]


# ------------------------------------------------------------------ determinism of enumeration

@dataclasses.dataclass(frozen=True)
class Determinism:
    """Whether a function's outputs are determined by vetdp's primitives' choices.

    ``deterministic`` is True only when no foreign source was seen while enumerating every
    checked input and the repeated enumerations agreed path by path; ``distributions`` then
    holds the exact law per (frozen) input. ``sources`` names what was seen; ``x`` is an
    input on which a difference showed (or None).
    """

    deterministic: bool
    sources: tuple[str, ...]
    message: str
    x: Any = None
    distributions: dict[Any, dict[Any, Fraction]] | None = None


def check_determinism(fn: Callable[[Any], Any], inputs: list, budget: int, repeats: int = 3,
                      roots: Iterable[Any] = ()) -> Determinism:
    """Enumerate ``fn`` on every input under :func:`watch_foreign_randomness`; enumerate up to ``repeats`` again.

    Guarantee: if a watched source (module docstring) is drawn from on any path of any
    input, the result is not deterministic, whatever values the draws returned. Other
    nondeterminism shows when a repeated enumeration differs from the first. ``fn`` itself
    and ``roots`` are searched for NumPy generators whose state to watch. Raises
    :class:`~vetdp.engine.enumerate.EnumerationBudgetExceeded` like ``output_distribution``.
    """
    from vetdp.engine.enumerate import freeze, output_distribution

    dists: dict[Any, dict[Any, Fraction]] = {}
    with watch_foreign_randomness(fn, *roots) as use:
        for i, x in enumerate(inputs):
            dists[freeze(x)] = output_distribution(fn, x, budget=budget)
            again = output_distribution(fn, x, budget=budget) if i < repeats else dists[freeze(x)]
            if use.used:
                return Determinism(False, tuple(use.sources), _foreign_message(use), x=x)
            if again != dists[freeze(x)]:
                return Determinism(False, (), "two enumerations of the same input differ: the output is not "
                                   "determined by the primitives' choices (randomness or state outside vetdp)", x=x)
    if use.used:  # seen by a generator's state, known only once the block has ended
        return Determinism(False, tuple(use.sources), _foreign_message(use))
    return Determinism(True, (), "all randomness flows through vetdp's primitives (no foreign source seen on any "
                       f"path; {min(repeats, len(inputs))} inputs enumerated twice alike)", distributions=dists)


def _foreign_message(use: ForeignUse) -> str:
    return ("the function draws randomness outside vetdp's primitives (" + ", ".join(use.sources) +
            "), so exact enumeration does not apply")
