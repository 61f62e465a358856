"""``vetdp account`` (ε, δ) of a composed mechanism by every method; ``vetdp plot`` the post's figures.

Examples::

    vetdp account rappor --epsilon 1 --k 2 --compose 100 --delta 1e-6 --json out.json
    vetdp account rr --epsilon 1 --categories 4 --compose 50
    vetdp plot --out out/figures
"""

from __future__ import annotations

import json
import pathlib
import sys

import click
from rich.console import Console
from rich.table import Table

from vetdp.accounting.composition import compare_methods
from vetdp.accounting.curves import randomized_response_curve, rappor_curve
from vetdp.cli import ExitCode

__all__ = ["account", "plot"]


def _family(mechanism: str, epsilon: float, categories: int, k: int):
    if mechanism == "rr":
        if k != 1:
            raise ValueError(f"--k={k} applies to k-rappor only")
        return randomized_response_curve(epsilon, categories=categories)
    if categories != 2:
        raise ValueError(f"--categories={categories} applies to rr only")
    return rappor_curve(epsilon, k=k)


@click.command()
@click.argument("mechanism", type=click.Choice(["rr", "rappor", "k-rappor"]))
@click.option("--epsilon", type=float, required=True, help="per-run ε of the mechanism, in (0, inf)")
@click.option("--categories", type=int, default=2, show_default=True, help="rr: number of categories t >= 2")
@click.option("--k", "k", type=int, default=1, show_default=True, help="k-RAPPOR: at most k set bits")
@click.option("--compose", type=int, default=1, show_default=True, help="number of runs n >= 1")
@click.option("--delta", type=float, default=1e-6, show_default=True, help="target δ in (0, 1)")
@click.option("--json", "json_path", type=click.Path(dir_okay=False), help="also write the results as JSON")
def account(mechanism: str, epsilon: float, categories: int, k: int, compose: int, delta: float,
            json_path: str | None) -> None:
    """(ε, δ)-DP of MECHANISM run --compose times, by every method side by side; the exact one marked."""
    try:
        family = _family(mechanism, epsilon, categories, k)
        rows = compare_methods(family, compose, delta)
    except (ValueError, TypeError) as e:
        click.echo(f"error: {e}", err=True)
        sys.exit(ExitCode.ERROR)
    table = Table(title=f"{family.describe()} composed {compose}×, δ = {delta:g}")
    for col in ("method", "ε", "δ", "", "note"):
        table.add_column(col)
    for c in rows:
        mark = " ".join(m for m, on in (("exact", c.exact), ("tightest", c.tightest)) if on)
        alpha = f" (α={c.alpha:.4g})" if c.alpha else ""
        table.add_row(c.method, f"{c.epsilon:.10g}", f"{c.delta:g}", mark, c.note + alpha,
                      style="bold green" if c.tightest else None)
    console = Console()
    console.print(table)
    console.print(f"zCDP ρ per run: {family.zcdp_rho():.10g}" + ("" if family.zcdp_tight else " (upper bound)")
                  + f"; KL per run: {family.kl():.10g}; pure ε per run: {family.max_divergence:.10g}")
    tightest = next(c.method for c in rows if c.tightest)
    console.print(f"tightest: {tightest} (the exact PLD is the tightest possible ε at this δ)")
    if json_path:
        doc = {"schema_version": 1, "mechanism": mechanism, "epsilon": epsilon, "categories": categories, "k": k,
               "compose": compose, "delta": delta, "rho": family.zcdp_rho(), "rho_tight": family.zcdp_tight,
               "exact": "pld", "tightest": tightest,
               "methods": [{"method": c.method, "epsilon": c.epsilon, "delta": c.delta, "exact": c.exact,
                            "tightest": c.tightest, "alpha": c.alpha, "note": c.note} for c in rows]}
        pathlib.Path(json_path).write_text(json.dumps(doc, indent=2))


@click.command()
@click.option("--out", type=click.Path(file_okay=False), default="out/figures", show_default=True,
              help="directory for the PNG and SVG files")
def plot(out: str) -> None:
    """Regenerate the seed post's three figures (RDP/zCDP bounds, composition, MAE) as PNG and SVG."""
    from vetdp.accounting.plots import write_figures

    for path in write_figures(out):
        click.echo(str(path))
