"""Check providers: the subsystems whose checks ``vetdp check`` runs.

A provider is a function ``provider(options: CheckOptions) -> Iterable[CheckResult]``.
It yields results as it goes (the command line shows progress), honours
``options.selected(name)`` for ``-k`` selection and ``options.deep`` for deeper
exploration, and never raises for a failed check (it yields a FAIL or ERROR result).
Mechanisms are not registered here: every spec under specs/ is found by the spec
provider on its own.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import importlib
from collections.abc import Callable, Iterable

from vetdp.engine.results import CheckResult

__all__ = ["CheckOptions", "Provider", "PROVIDERS", "load_providers"]


@dataclasses.dataclass(frozen=True)
class CheckOptions:
    deep: bool = False
    pattern: str | None = None  # -k: a substring or glob matched against "spec::check"
    seed: int = 0
    deep_only: tuple[str, ...] = ()  # globs of checks that run only with --deep (ci/gate.toml)

    def selected(self, name: str) -> bool:
        """Whether the check called ``name`` (e.g. ``randomized_response::privacy``) is selected."""
        if not self.deep and any(fnmatch.fnmatch(name, pat) for pat in self.deep_only):
            return False
        if not self.pattern:
            return True
        return self.pattern in name or fnmatch.fnmatch(name, self.pattern)


Provider = Callable[[CheckOptions], Iterable[CheckResult]]

# "module:function" of every provider, in the order they run.
PROVIDERS: list[str] = [
    "vetdp.engine.primitives_check:check_primitives",
    "vetdp.obligations.provider:check_proofs",
    "vetdp.accounting.provider:check_accounting",
    "vetdp.buffling.provider:check_buffling",
]


def load_providers() -> list[tuple[str, Provider]]:
    out = []
    for ref in PROVIDERS:
        module, _, attr = ref.partition(":")
        out.append((ref, getattr(importlib.import_module(module), attr)))
    return out
