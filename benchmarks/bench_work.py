"""Benchmark (not a test): the work every check needs, against the work budgets that decide verdicts.

Run:  .venv/bin/python benchmarks/bench_work.py                 (the gate's specs and examples/oue)
      .venv/bin/python benchmarks/bench_work.py --mutants       (also the tests of tests/mutants, minutes)
      .venv/bin/python benchmarks/bench_work.py --chains        (the buffling chains on the seed's grid)

Verdicts are decided by budgets counted in work (``vetdp.engine.budgets``): runs of the code per input and
enumeration pass (``--max-paths``), random choices per run (``--max-choices``) and per input in all
(``--max-steps``). This prints, for each group of checks, the largest amount of each that one enumeration needed and
the margin (budget / need): a verdict that needs far less than its budget does not change when the machine is
slower, and a margin of 10 or more means a change of the code has room before a budget decides. ``--chains`` prints
the buffling chains' multiply-adds per point of the seed's grid (where ``buffling privacy`` runs them) against
``--chain-work`` likewise.

Every enumeration goes through ``vetdp.engine.enumerate._enumerate``; this wraps it to record each law's work and
labels it with the spec being checked (or the test being run, with ``--mutants``).
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

NEEDS: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0, 0, 0])  # label -> paths, choices, depth, laws
LABEL = ["-"]


def _record() -> None:
    import vetdp.engine.enumerate as enumerate_module

    real = enumerate_module._enumerate

    def recording(*args, **kwargs):
        law = real(*args, **kwargs)
        need = NEEDS[LABEL[0]]
        need[0], need[1], need[2] = max(need[0], law.paths), max(need[1], law.choices), max(need[2], law.depth)
        need[3] += 1
        return law

    enumerate_module._enumerate = recording


def _gate(project: Path | None) -> None:
    from vetdp.engine.registry import CheckOptions
    from vetdp.engine.spec import discover_specs
    from vetdp.engine.specs_provider import check_specs
    from vetdp.project import project_scope

    with project_scope(None if project is None else str(project)) as p:
        for spec in discover_specs(p):
            LABEL[0] = f"{'' if project is None else project.name + ':'}{spec.name}"
            t0 = time.perf_counter()
            statuses = collections.Counter(r.status.value for r in check_specs(CheckOptions(), [spec]))
            print(f"  {LABEL[0]:<44} {time.perf_counter() - t0:7.1f} s  {dict(statuses)}", flush=True)


class _LabelTests:
    """A pytest plugin: labels the work of each test by its file."""

    def pytest_runtest_setup(self, item):  # noqa: D102 - pytest hook
        LABEL[0] = "tests/" + item.nodeid.split("::")[0].rsplit("/", 1)[-1]


def _mutants() -> None:
    import pytest

    files = ["tests/test_engine_mutants.py", "tests/test_unseen_variants.py", "tests/test_foreign.py",
             "tests/test_truth_beyond_preconditions.py", "tests/test_enumerate_unbounded.py", "tests/test_symmetry.py"]
    pytest.main(["-q", "-p", "no:cacheprovider", *[str(ROOT / f) for f in files]], plugins=[_LabelTests()])


def _report() -> None:
    from vetdp.engine.budgets import BEST_FIRST_MAX_CHOICES, DEFAULT_BUDGET, DEFAULT_MAX_STEPS

    print(f"\nbudgets: --max-paths {DEFAULT_BUDGET}, --max-steps {DEFAULT_MAX_STEPS}, --max-choices "
          f"{BEST_FIRST_MAX_CHOICES}; need = the largest one enumeration used, margin = budget / need")
    print(f"{'group':<46} {'laws':>6} {'paths':>8} {'margin':>7} {'choices':>10} {'margin':>7} {'depth':>6} "
          f"{'margin':>7}")
    worst = [0, 0, 0]
    for label, (paths, choices, depth, laws) in sorted(NEEDS.items()):
        worst = [max(worst[0], paths), max(worst[1], choices), max(worst[2], depth)]
        print(f"{label:<46} {laws:>6} {paths:>8} {DEFAULT_BUDGET / max(paths, 1):>7.0f} {choices:>10} "
              f"{DEFAULT_MAX_STEPS / max(choices, 1):>7.0f} {depth:>6} {BEST_FIRST_MAX_CHOICES / max(depth, 1):>7.0f}")
    paths, choices, depth = worst
    print(f"{'largest':<46} {'':>6} {paths:>8} {DEFAULT_BUDGET / max(paths, 1):>7.0f} {choices:>10} "
          f"{DEFAULT_MAX_STEPS / max(choices, 1):>7.0f} {depth:>6} {BEST_FIRST_MAX_CHOICES / max(depth, 1):>7.0f}")


def _chains() -> None:
    from vetdp.buffling.bounds import certified_epsilon
    from vetdp.engine.budgets import CHAIN_WORK

    print(f"buffling privacy's certified ε(δ = 1e-6) on the seed's grid: the method certified_epsilon picks and, where "
          f"it runs the category chains, their multiply-adds against --chain-work {CHAIN_WORK:.3g}")
    points = [(k, m, p) for k in (3, 4, 6) for p in (0.1, 0.2, 0.3) for m in (100, 1000, 10**4, 10**5, 10**6)]
    for k, m, p in points + [(8, 1000, 0.1)]:
        t0 = time.perf_counter()
        r = certified_epsilon(k, m, p, 1e-6)
        work = (f"{r.products:.3g} multiply-adds (margin {CHAIN_WORK / r.products:.0f})" if r.method == "chain"
                else f"{r.work} ({r.method})")
        print(f"  k={k} m={m:>7} p={p}: [{r.lower:.6g}, {r.upper:.6g}] width {r.relative_width:.3%}, {work}, "
              f"{time.perf_counter() - t0:.1f} s", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mutants", action="store_true", help="also run the mutant tests (minutes)")
    parser.add_argument("--chains", action="store_true", help="only the buffling chains on the seed's grid")
    args = parser.parse_args()
    if args.chains:
        _chains()
        return
    sys.path.insert(0, str(ROOT))
    _record()
    print("the gate's specs (vetdp check) and examples/oue:")
    with contextlib.chdir(ROOT):
        _gate(None)
        _gate(ROOT / "examples" / "oue")
        if args.mutants:
            _mutants()
    _report()


if __name__ == "__main__":
    main()
