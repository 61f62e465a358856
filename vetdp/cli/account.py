"""``vetdp account`` (ε, δ) of a composed mechanism by every method; ``vetdp plot`` the post's figures.

Examples::

    vetdp account rappor --epsilon 1 --k 2 --compose 100 --delta 1e-6 --json out.json
    vetdp account rr --epsilon 1 --categories 4 --compose 50
    vetdp plot --out out/figures
"""

from __future__ import annotations

import contextlib
import json
import math
import sys

import click

from vetdp.cli import ExitCode, Integer, Real, output_folder, output_path, write_output

__all__ = ["account", "plot", "compose_limit"]

# The exact PLD of m = n·d binary steps (rr with t = 2: d = 1; (k-)RAPPOR: d = 2k) sums only the O(√m) terms of
# the binomial that matter, so its time grows like √m and its memory stays bounded; categorical rr (t > 2) runs
# a recurrence over all m steps once, so its time grows like m with bounded memory. At these limits the whole
# command takes about 6 s and 0.25 GB on a 2-core machine (measured: `vetdp account rr --epsilon 1 --compose 1e9`
# 6.0 s / 0.24 GB; `... --categories 4 --compose 1e6` 3.5 s / 0.17 GB; benchmarks/bench_pld.py prints the exact
# PLD's own share); larger sizes are refused up front.
_MAX_STEPS_BINARY = 10**9
_MAX_RUNS_CATEGORICAL = 10**6


def compose_limit(mechanism: str, categories: int, k: int) -> int:
    """The largest ``--compose`` the exact PLD of ``mechanism`` is allowed (see the measured limits above)."""
    if mechanism == "rr":
        return _MAX_STEPS_BINARY if categories == 2 else _MAX_RUNS_CATEGORICAL
    return _MAX_STEPS_BINARY // (2 * k)


def _family(mechanism: str, epsilon: float, categories: int, k: int):
    from vetdp.accounting.curves import randomized_response_curve, rappor_curve

    if mechanism == "rr":
        if k != 1:
            raise click.BadParameter(f"{k} applies to k-rappor only", param_hint="--k")
        return randomized_response_curve(epsilon, categories=categories)
    if categories != 2:
        raise click.BadParameter(f"{categories} applies to rr only", param_hint="--categories")
    return rappor_curve(epsilon, k=k)


@click.command()
@click.argument("mechanism", type=click.Choice(["rr", "rappor", "k-rappor"]))
@click.option("--epsilon", type=Real(0, 700, lo_open=True), required=True,
              help="per-run ε of the mechanism, in (0, 700] (e^ε must be a finite float)")
@click.option("--categories", type=Integer(2, 10**9), default=2, show_default=True,
              help="rr: number of categories t in [2, 10^9]")
@click.option("--k", "k", type=Integer(1, 10**5), default=1, show_default=True,
              help="k-RAPPOR: at most k set bits, in [1, 10^5]")
@click.option("--compose", type=Integer(1, None), default=1, show_default=True,
              help=f"number of runs n >= 1; the exact PLD allows n <= {_MAX_STEPS_BINARY:.0e} for binary rr, "
                   f"{_MAX_RUNS_CATEGORICAL:.0e} for categorical rr, 2k·n <= {_MAX_STEPS_BINARY:.0e} for rappor")
@click.option("--delta", type=Real(0, 1, lo_open=True, hi_open=True), default=1e-6, show_default=True,
              help="target δ in (0, 1)")
@output_path("--json", "json_path", help="also write the results as JSON (shape: README, 'Accounting')")
def account(mechanism: str, epsilon: float, categories: int, k: int, compose: int, delta: float,
            json_path: str | None) -> None:
    """(ε, δ)-DP of MECHANISM run --compose times, by every method side by side; the exact one marked."""
    from rich.console import Console
    from rich.table import Table

    from vetdp.accounting.composition import compare_methods

    limit = compose_limit(mechanism, categories, k)
    if compose > limit:
        raise click.BadParameter(
            f"{compose} must be <= {limit} for {mechanism}" + (f" with --k={k}" if k > 1 else "") +
            (f" with --categories={categories}" if categories > 2 else "") +
            ": the exact PLD's time grows with the runs (about 6 s at the limit)", param_hint="--compose")
    family = _family(mechanism, epsilon, categories, k)
    err = Console(stderr=True)
    try:
        with err.status(f"exact PLD of {compose} runs ...") if err.is_terminal else contextlib.nullcontext():
            rows = compare_methods(family, compose, delta)
    except (ValueError, TypeError, ArithmeticError) as e:
        click.echo(f"error: --epsilon={epsilon!r} --compose={compose} --delta={delta!r}: "
                   f"{type(e).__name__}: {e}", err=True)
        sys.exit(ExitCode.ERROR)
    table = Table(title=f"{family.describe()} composed {compose}×, δ = {delta:g}")
    for col in ("method", "ε", "δ", "", "note"):
        table.add_column(col)
    for c in rows:
        mark = " ".join(m for m, on in (("exact", c.exact), ("tightest", c.tightest)) if on)
        alpha = f" (α={c.alpha:.4g})" if c.alpha else ""
        table.add_row(c.method, f"{c.epsilon:.10g}", f"{c.delta:g}", mark, c.note + alpha,
                      style="bold green" if c.tightest else None)
    console = Console(stderr=json_path == "-")  # with --json -, standard output holds only the JSON
    console.print(table)
    console.print(f"zCDP ρ per run: {family.zcdp_rho():.10g}" + ("" if family.zcdp_tight else " (upper bound)")
                  + f"; KL per run: {family.kl():.10g}; pure ε per run: {family.max_divergence:.10g}")
    tightest = next(c.method for c in rows if c.tightest)
    why = ("the exact PLD is the tightest possible ε at this δ" if tightest == "pld"
           else "ties with or rounds below the exact PLD's certified ε")
    console.print(f"tightest: {tightest} ({why})")
    if json_path:
        doc = {"schema_version": 1, "mechanism": mechanism, "epsilon": epsilon, "categories": categories, "k": k,
               "compose": compose, "delta": delta, "rho": family.zcdp_rho(), "rho_tight": family.zcdp_tight,
               "exact": "pld", "tightest": tightest,
               "methods": [{"method": c.method, "epsilon": c.epsilon if math.isfinite(c.epsilon) else None,
                            "delta": c.delta, "exact": c.exact,
                            "tightest": c.tightest, "alpha": c.alpha, "note": c.note} for c in rows]}
        write_output("--json", json_path, json.dumps(doc, indent=2))


@click.command()
@output_folder("--out", default="out/figures", help="directory for the PNG and SVG files (created if missing, and "
               "found writable before any figure is drawn)")
def plot(out: str) -> None:
    """Regenerate the seed post's three figures (RDP/zCDP bounds, composition, MAE) as PNG and SVG."""
    from vetdp.accounting.plots import write_figures

    for path in write_figures(out):
        click.echo(str(path))
