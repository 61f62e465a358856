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
import re
import time
from collections.abc import Callable, Iterable, Iterator

from vetdp.engine.results import CheckResult, Status

__all__ = ["CheckOptions", "Provider", "PROVIDERS", "load_providers", "pattern_matches",
           "glob_matches", "run_provider"]


@dataclasses.dataclass(frozen=True)
class CheckOptions:
    deep: bool = False
    pattern: str | None = None  # -k: a substring or glob matched against "spec::check"
    seed: int = 0
    deep_only: tuple[str, ...] = ()  # globs of checks that run only with --deep (ci/gate.toml)
    loose_map_warns: bool = False  # [gate] loose_map = "warn": a sound but loose map is a warning, not a failure
    z3_rlimit: int | None = None  # --z3-rlimit: z3 resource units per obligation query (None: the default)
    # work budgets of the specs' enumeration (--max-paths, --max-choices, --max-steps; None: the defaults) and the
    # wall-clock safety limit per clause (--time-limit; None: the default): see vetdp.engine.budgets
    max_paths: int | None = None
    max_choices: int | None = None
    max_steps: int | None = None
    max_regions: int | None = None  # --max-regions: the universal exploration's runs per base (0: off)
    exact_work: int | None = None  # --exact-work: word operations of one clause's exact arithmetic on a product
    time_limit: float | None = None

    def selected(self, name: str) -> bool:
        """Whether the check called ``name`` (e.g. ``randomized_response::privacy``) is selected."""
        if not self.deep and any(glob_matches(pat, name) for pat in self.deep_only):
            return False
        if not self.pattern:
            return True
        return pattern_matches(self.pattern, name)


def pattern_matches(pattern: str, name: str) -> bool:
    """Whether ``-k pattern`` selects ``name``: as a literal substring first, then as a glob, then as a glob whose
    ``[``/``]`` are literal (so ``*precondition[prob_nan]`` selects the row it names rather than a character class)."""
    return pattern in name or glob_matches(pattern, name)


def glob_matches(pattern: str, name: str) -> bool:
    """Whether the glob ``pattern`` matches all of ``name``, its ``[``/``]`` taken as character classes or, failing
    that, literally (``*precondition[prob_nan]`` matches ``rr::precondition[prob_nan]``)."""
    if fnmatch.fnmatchcase(name, pattern):
        return True
    literal_brackets = re.sub(r"([\[\]])", r"[\1]", pattern)
    return literal_brackets != pattern and fnmatch.fnmatchcase(name, literal_brackets)


Provider = Callable[[CheckOptions], Iterable[CheckResult]]

# "module:function" of every provider, in the order they run.
PROVIDERS: list[str] = [
    "vetdp.engine.primitives_check:check_primitives",
    "vetdp.obligations.provider:check_proofs",
    "vetdp.accounting.provider:check_accounting",
    "vetdp.buffling.provider:check_buffling",
    "vetdp.specs.rappor_decoding:check_rappor_decoding",
]


def load_providers() -> list[tuple[str, Provider]]:
    out = []
    for ref in PROVIDERS:
        module, _, attr = ref.partition(":")
        out.append((ref, getattr(importlib.import_module(module), attr)))
    return out


_END = object()


def run_provider(label: str, provider: Provider, options: CheckOptions) -> Iterator[CheckResult]:
    """The results of ``provider(options)``, run as code the user names (:func:`vetdp.fence.fenced`): the wait for
    each result is bounded by the safety limit (``options.time_limit``, per clause); anything the provider does
    instead of yielding CheckResults — ``sys.exit``, ``os._exit``, an exception, a hang, an object that is not a
    CheckResult — ends it with one ERROR (or STOPPED) result naming ``label`` and what it did. Never raises for
    the provider's own failures."""
    from vetdp import fence

    what = f"provider {label}:"
    t0 = time.perf_counter()
    results = None
    while True:
        try:
            with fence.fenced(what, seconds=options.time_limit):
                if results is None:
                    results = iter(provider(options))
                r = next(results, _END)
        except fence.UserCodeError as e:
            yield CheckResult(label, "engine", Status.STOPPED if e.stopped else Status.ERROR, message=str(e),
                              seconds=time.perf_counter() - t0)
            return
        if r is _END:
            return
        if not isinstance(r, CheckResult):
            yield CheckResult(label, "engine", Status.ERROR, message=f"{what} yielded {r!r:.200}, which is not a "
                              "vetdp CheckResult (a provider yields CheckResult values)",
                              seconds=time.perf_counter() - t0)
            return
        yield r
        t0 = time.perf_counter()
