"""What the universal exploration proves for the bundled mechanisms: per spec and clause, the regions proved for
every value of the float parameters, those checked at a spec's probe bases (not proved), those left open (with the
commonest reason) and those failing.

Run:  .venv/bin/python benchmarks/universal_coverage.py            (the default bases, as `vetdp verify` explores)
      .venv/bin/python benchmarks/universal_coverage.py --deep     (the --deep bases)
      .venv/bin/python benchmarks/universal_coverage.py --only k_rappor,rappor

Each spec with a ``universal`` field is explored with its bundled constructor (:func:`vetdp.engine.universal.
explore_spec`), and the table prints the CPU seconds of each exploration. Open regions are checked at sampled
points by ``vetdp verify``; this table is the list of what is proved and what is still sampled, and why.
"""

from __future__ import annotations

import argparse
import collections
import time

from rich.console import Console
from rich.table import Table

from vetdp.engine.spec import discover_specs
from vetdp.engine.universal import UNIVERSAL_CLAUSES, explore_spec


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deep", action="store_true", help="explore the --deep bases")
    parser.add_argument("--only", default="", help="comma-separated spec names (default: every spec with a "
                                                   "universal field)")
    args = parser.parse_args()
    only = {s for s in args.only.split(",") if s}
    specs = [s for s in discover_specs() if getattr(s, "universal", None) is not None and (not only or s.name in only)]
    unknown = only - {s.name for s in specs}
    if unknown:
        parser.error(f"--only names {sorted(unknown)}: no bundled spec with a universal field has that name")
    table = Table(title=f"universal exploration ({'--deep' if args.deep else 'default'} bases)")
    for column in ("spec", "bases (+probe)", "CPU s", "clause", "proved", "checked", "open", "failed",
                   "commonest reason left open"):
        table.add_column(column, overflow="fold")
    for spec in specs:
        ctor = spec.load_constructor()
        t0 = time.process_time()
        report = explore_spec(spec, lambda p, spec=spec, ctor=ctor: spec.build(ctor, p), deep=args.deep)
        seconds = time.process_time() - t0
        for i, clause in enumerate(UNIVERSAL_CLAUSES):
            cov = report.clauses[clause]
            reasons = collections.Counter(why.split(":")[0][:140] for _, why in cov.open)
            common = f"{reasons.most_common(1)[0][0]} ({reasons.most_common(1)[0][1]})" if reasons else ""
            bases = f"{len(report.bases)} (+{len(report.probe_bases)})" if i == 0 else ""
            table.add_row(spec.name if i == 0 else "", bases, f"{seconds:.1f}" if i == 0 else "", clause,
                          str(len(cov.proved)), str(len(cov.checked)), str(len(cov.open)), str(len(cov.failed)), common)
    Console(width=200).print(table)


if __name__ == "__main__":
    main()
