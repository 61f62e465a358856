"""Accountants under test: the protocol, built-in adapters by name, and loading ``MODULE:ATTR``.

Built-in names (optional extras): ``dp_accounting``, ``autodp``, ``prv_accountant``. See
:mod:`vetdp.accounting.accountants.protocol` for what a user's accountant provides.
"""

from __future__ import annotations

import importlib
import inspect

from vetdp.accounting.accountants.protocol import (
    KINDS,
    Accountant,
    AccountantSuite,
    FunctionEntryPoint,
    RREvent,
    describe_events,
)

__all__ = ["KINDS", "Accountant", "AccountantSuite", "FunctionEntryPoint", "RREvent", "describe_events",
           "BUILTIN", "load_accountant", "AccountantLoadError"]

BUILTIN = {
    "dp_accounting": ("vetdp.accounting.accountants.dp_accounting_adapter", "dp_accounting_suite"),
    "autodp": ("vetdp.accounting.accountants.autodp_adapter", "autodp_suite"),
    "prv_accountant": ("vetdp.accounting.accountants.prv_adapter", "prv_suite"),
}


class AccountantLoadError(ValueError):
    """The accountant named cannot be loaded (the message says why and what is accepted)."""


def _is_entry_point(obj: object) -> bool:
    return isinstance(getattr(obj, "name", None), str) and (hasattr(obj, "epsilon") or hasattr(obj, "delta"))


def load_accountant(ref: str) -> AccountantSuite:
    """The suite named by ``ref``: a built-in NAME, or ``MODULE:ATTR`` (a module in the working directory too)
    naming an entry point, a suite, or a class / zero-argument function returning one, imported and built fenced
    (:mod:`vetdp.fence`). Raises :class:`AccountantLoadError` naming ``ref`` otherwise, and
    :class:`vetdp.fence.UserCodeError` when the module exits, raises or hangs at import."""
    if not isinstance(ref, str) or not ref.strip():
        raise AccountantLoadError(f"accountant={ref!r} must be one of {', '.join(BUILTIN)} or MODULE:ATTR")
    if ref in BUILTIN:
        module, attr = BUILTIN[ref]
        try:
            return getattr(importlib.import_module(module), attr)()
        except ImportError as e:
            raise AccountantLoadError(f"accountant={ref!r} needs the library {ref!r}, which is not installed "
                                      f"({e}); install vetdp[accounting]") from None
    if ":" not in ref:
        raise AccountantLoadError(f"accountant={ref!r} must be one of {', '.join(BUILTIN)} or MODULE:ATTR "
                                  "(e.g. mypkg.acct:MyAccountant)")
    from vetdp import fence

    what = f"accountant={ref!r}:"
    try:
        obj = fence.load(ref, what)
    except ValueError as e:
        raise AccountantLoadError(f"accountant={ref!r} cannot be loaded: {e}") from None
    if inspect.isclass(obj) or (callable(obj) and not (_is_entry_point(obj) or hasattr(obj, "entry_points"))):
        try:  # a class or a factory: the accountant is what it returns
            with fence.fenced(what, "calling it with no arguments"):
                obj = obj()
        except fence.UserCodeError as e:
            raise AccountantLoadError(str(e)) from None
    if hasattr(obj, "entry_points"):
        try:
            with fence.fenced(what, "listing entry_points"):
                eps = list(obj.entry_points)
        except fence.UserCodeError as e:
            raise AccountantLoadError(str(e)) from None
        bad = [e for e in eps if not _is_entry_point(e)]
        if not eps or bad:
            raise AccountantLoadError(f"accountant={ref!r}: entry_points must be a non-empty list of objects with a "
                                      f"str name and an epsilon(events, delta) and/or delta(events, epsilon) method")
        return AccountantSuite(str(getattr(obj, "library", ref)), str(getattr(obj, "version", "")), eps)
    if _is_entry_point(obj):
        return AccountantSuite(ref, str(getattr(obj, "version", "")), [obj])
    raise AccountantLoadError(f"accountant={ref!r} is {type(obj).__name__}: it needs a str 'name' and an "
                              "epsilon(events, delta) and/or delta(events, epsilon) method, or 'entry_points'")
