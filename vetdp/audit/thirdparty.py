"""The named third-party implementations ``vetdp verify SPEC --impl NAME`` can vet.

====================  =====================================  ==========================================
``--impl NAME``       adapter module                         specs it vets
====================  =====================================  ==========================================
``opendp``            :mod:`vetdp.audit.opendp_adapter`      randomized_response(_bool, _bitvec),
                                                             debias_randomized_response_bitvec
``pure-ldp``          :mod:`vetdp.audit.ldp_adapters.pure_ldp`        randomized_response(_bool, _bitvec),
                                                             debias_randomized_response(_bitvec),
                                                             oue, estimate_oue_counts (a project's)
``multi-freq-ldpy``   :mod:`vetdp.audit.ldp_adapters.multi_freq_ldpy` randomized_response(_bool, _bitvec),
                                                             debias_randomized_response,
                                                             debias_randomized_response_bitvec_frequencies,
                                                             oue, estimate_oue_counts (a project's)
``diffprivlib``       :mod:`vetdp.audit.ldp_adapters.diffprivlib`     randomized_response_bool
====================  =====================================  ==========================================

Every one is run as *opaque* code: its randomness is its own, so its map is compared with the
exact loss and its samples are audited against the exact law (:mod:`vetdp.audit.opaque`). The
LDP libraries take ε where the specs take probabilities: their entry points vet a *view* of the
spec (:func:`vetdp.audit.ldp_adapters.spec_view`), the spec's law at the library's own floats over
the parameters the library can express. :func:`resolve` returns what ``verify`` needs.

``oue`` and ``estimate_oue_counts`` are not bundled: they resolve when the active project defines
specs of those names with optimized unary encoding's parameters (``vetdp --project examples/oue
verify oue --impl pure-ldp``); a project spec of the same name with other parameters is refused.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable
from typing import Any

__all__ = ["Resolved", "IMPLEMENTATIONS", "resolve", "check_translatable", "UnknownImplementation"]


@dataclasses.dataclass(frozen=True)
class _Library:
    module: str
    extra: str  # the pyproject extra that installs it
    label: str


IMPLEMENTATIONS: dict[str, _Library] = {
    "opendp": _Library("vetdp.audit.opendp_adapter", "opendp", "OpenDP"),
    "pure-ldp": _Library("vetdp.audit.ldp_adapters.pure_ldp", "ldp", "pure-ldp"),
    "multi-freq-ldpy": _Library("vetdp.audit.ldp_adapters.multi_freq_ldpy", "ldp", "multi-freq-ldpy"),
    "diffprivlib": _Library("vetdp.audit.ldp_adapters.diffprivlib", "ldp", "diffprivlib"),
}


class UnknownImplementation(KeyError):
    """A name or spec with no third-party adapter; ``args[0]`` is the message."""


@dataclasses.dataclass(frozen=True)
class Resolved:
    """What ``verify`` runs: the constructor (or estimator), the spec as the library sees it, RunConfig fields."""

    ctor: Callable[..., Any]
    spec: Any
    config: dict
    entry: Any = None  # the EntryPoint of an LDP library (None for OpenDP)


def _module(name: str) -> Any:
    if name not in IMPLEMENTATIONS:
        raise UnknownImplementation(f"--impl={name!r} is not a known third-party implementation; choose one of "
                                    f"{sorted(IMPLEMENTATIONS)} or give MODULE:ATTR")
    lib = IMPLEMENTATIONS[name]
    try:
        return importlib.import_module(lib.module)
    except ImportError as e:
        raise ImportError(f"--impl={name!r} needs the {lib.extra} extra ({e})") from e


def resolve(name: str, spec: Any) -> Resolved:
    """The third-party counterpart ``name`` of ``spec``.

    Raises UnknownImplementation (a KeyError whose ``args[0]`` names the choices) when ``name``
    is unknown or has no counterpart of ``spec``, ImportError when its extra is missing.
    """
    module = _module(name)
    if name == "opendp":
        try:
            ctor = module.adapter_for(spec.name)
        except KeyError as e:
            raise UnknownImplementation(e.args[0]) from None
        return Resolved(ctor, spec, {"opaque": True, "reproduce": module.reproduction})
    from vetdp.audit.ldp_adapters import spec_view

    entry = module.ENTRY_POINTS.get(spec.name)
    if entry is None:
        raise UnknownImplementation(f"spec={spec.name!r} has no {IMPLEMENTATIONS[name].label} counterpart; choose "
                                    f"one of {sorted(module.ENTRY_POINTS)}")
    why = entry.shape(spec)
    if why is not None:
        raise UnknownImplementation(f"{why}: it has no {IMPLEMENTATIONS[name].label} counterpart")
    return Resolved(entry.ctor, spec_view(spec, entry), {"opaque": True, "reproduce": module.reproduction}, entry)


def check_translatable(resolved: Resolved, params: dict) -> None:
    """ValueError (an :class:`~vetdp.audit.ldp_adapters.Untranslatable`) when ``params`` have no translation
    into the library's parameters or lie outside its documented range; nothing for OpenDP."""
    if resolved.entry is not None:
        resolved.entry.check(params)
