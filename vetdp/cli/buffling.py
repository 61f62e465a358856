"""``vetdp buffling``: the analysis of shuffled, flipped Bloom filters (seed 004).

Examples::

    vetdp buffling snr --n-pub 3 --n-bit 100 --flip-prob 0.1 --skew 1 --plot snr.png
    vetdp buffling one-bf --n-bit 20 --flip-prob 0.1 --delta 1e-3
    vetdp buffling privacy --n-pub 6 --n-bit 100000 --flip-prob 0.2 --delta 1e-6 --simulate 100000
    vetdp buffling flip-prob --n-pub 6 --n-bit 100000 --epsilon 1 --delta 1e-6 --json out.json

Exit codes: 0 done; 2 bad parameters (the message names the parameter and its allowed range).
"""

from __future__ import annotations

import json
import math
import pathlib
import re
import sys
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import click
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from vetdp.cli import ExitCode

__all__ = ["buffling"]

console = Console()


def _fail(e: Exception) -> None:
    click.echo(f"error: {e}", err=True)
    sys.exit(ExitCode.ERROR)


def _write_json(path: str | None, command: str, payload: dict) -> None:
    if path:
        doc = {"schema_version": 1, "command": f"buffling {command}", **payload}
        pathlib.Path(path).write_text(json.dumps(doc, indent=2, default=_jsonable))


def _jsonable(x: Any) -> Any:
    if isinstance(x, Fraction):
        return {"fraction": f"{x.numerator}/{x.denominator}", "approx": float(x)}
    if isinstance(x, float) and not math.isfinite(x):
        return repr(x)
    return repr(x)


def _fin(x: float) -> float | str:
    return x if math.isfinite(x) else repr(x)


def _run(fn: Callable[[], Any]) -> Any:
    try:
        return fn()
    except (ValueError, TypeError, ArithmeticError) as e:
        _fail(e)


@click.group()
def buffling() -> None:
    """Privacy of shuffling + flipping k Bloom filters of m bits (seed 004), exact where the document simulates."""


@buffling.command()
@click.option("--n-pub", type=int, required=True, help="k, the number of publishers (Bloom filters), 1..10")
@click.option("--n-bit", type=int, required=True, help="m, the number of columns")
@click.option("--flip-prob", type=float, required=True, help="p in (0, 0.5]")
@click.option("--skew", type=str, default="1", show_default=True,
              help="s in [0, 1]: counts m((1−s)·uniform + s·e_0); a fraction like 1/2 is exact")
@click.option("--plot", "plot_path", type=click.Path(dir_okay=False), help="write the SNR heat map (PNG)")
@click.option("--json", "json_path", type=click.Path(dir_okay=False), help="also write the results as JSON")
def snr(n_pub: int, n_bit: int, flip_prob: float, skew: str, plot_path: str | None, json_path: str | None) -> None:
    """SNR of every incremental change j → i, its maximum and maximisers (Part I)."""
    from vetdp.buffling.snr import concentration, skewed_counts, snr_table

    s = _run(lambda: Fraction(skew))
    t = _run(lambda: snr_table(n_pub, flip_prob, skewed_counts(n_pub, n_bit, s)))
    K = (1 << n_pub) - 1
    table = Table(title=f"SNR, k={n_pub} m={n_bit} p={flip_prob} skew={skew} ({'exact' if t.exact else 'float'})")
    for col in ("quantity", "value"):
        table.add_column(col)
    table.add_row("max SNR", f"{float(t.maximum):.10g}")
    table.add_row("argmax (i, j) [change j → i]", str(t.argmax()))
    table.add_row(f"SNR(0 → {K})", f"{float(t.snr[K][0]):.10g}")
    table.add_row(f"concentration of c for {K} → 0", f"{concentration(t.coef[0][K]):.6g}")
    console.print(table)
    if plot_path:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(5, 4))
        im = ax.imshow([[float(v) for v in row] for row in t.snr], cmap="viridis")
        ax.set_xlabel("j (from)")
        ax.set_ylabel("i (to)")
        ax.set_title(f"SNR(j → i), k={n_pub}, skew={skew}")
        fig.colorbar(im)
        fig.savefig(plot_path, dpi=120)
        plt.close(fig)
    _write_json(json_path, "snr", {
        "parameters": {"n_pub": n_pub, "n_bit": n_bit, "flip_prob": flip_prob, "skew": skew},
        "exact": t.exact, "max_snr": float(t.maximum), "argmax": t.argmax(),
        "snr": [[float(v) for v in row] for row in t.snr],
        "coef_K_to_0": [float(v) for v in t.coef[0][K]]})


@buffling.command("one-bf")
@click.option("--n-bit", type=int, required=True, help="m, the number of bits (exact rationals: keep m <= ~300)")
@click.option("--flip-prob", type=float, required=True, help="p in (0, 0.5]")
@click.option("--delta", type=float, default=1e-3, show_default=True, help="δ in (0, 1)")
@click.option("--depth", type=int, default=None, help="continued-fraction depth (default: exact termination)")
@click.option("--json", "json_path", type=click.Path(dir_okay=False), help="also write the results as JSON")
def one_bf(n_bit: int, flip_prob: float, delta: float, depth: int | None, json_path: str | None) -> None:
    """One Bloom filter: the three routes to R(y_x | y_d) and ε per y_d (Part II)."""
    from vetdp.buffling.one_bf import compare_routes, one_bf_privacy

    res = _run(lambda: one_bf_privacy(n_bit, flip_prob, delta))
    worst = Fraction(0)
    routes: set[str] = set()
    with Progress(disable=not sys.stderr.isatty(), console=Console(stderr=True)) as bar:
        task = bar.add_task("routes", total=n_bit)
        for y_d in range(n_bit):
            for y_x in range(n_bit + 1):
                r = _run(lambda y_d=y_d, y_x=y_x: compare_routes(n_bit, flip_prob, y_d, y_x, depth))
                worst = max(worst, r.rel_err_hyp2f1, r.rel_err_cf)
                routes |= {r.hyp2f1_route, re.sub(r"depth \d+", "depth n", r.cf_route)}
            bar.advance(task)
    table = Table(title=f"one BF, m={n_bit} p={flip_prob} δ={delta:g}")
    for col in ("y_d", "ε pure", "ε quantile rule", "ε hockey-stick"):
        table.add_column(col)
    for y_d in range(n_bit):
        table.add_row(str(y_d), f"{res.eps_pure[y_d]:.10g}", f"{res.eps_quantile[y_d]:.10g}",
                      f"{res.eps_hockey[y_d]:.10g}")
    table.add_row("max", f"{res.max_pure:.10g}", f"{res.max_quantile:.10g}", f"{res.max_hockey:.10g}")
    console.print(table)
    console.print(f"routes used: {sorted(routes)}; worst relative disagreement with the exact value: "
                  f"{float(worst):.3e}")
    _write_json(json_path, "one-bf", {
        "parameters": {"n_bit": n_bit, "flip_prob": flip_prob, "delta": delta, "depth": depth},
        "eps_pure": res.eps_pure, "eps_quantile": res.eps_quantile, "eps_hockey": res.eps_hockey,
        "max": {"pure": res.max_pure, "quantile": res.max_quantile, "hockey": res.max_hockey},
        "routes_worst_relative_error": float(worst), "routes": sorted(routes)})


@buffling.command()
@click.option("--n-pub", type=int, required=True, help="k in [1, 16]")
@click.option("--n-bit", type=int, required=True, help="m >= 1")
@click.option("--flip-prob", type=float, required=True, help="p in (0, 0.5]")
@click.option("--delta", type=float, default=1e-6, show_default=True, help="δ in (0, 1)")
@click.option("--grid-bits", type=int, default=20, show_default=True, help="2^bits grid cells")
@click.option("--r-cap", type=float, default=128.0, show_default=True, help="grid covers R in [0, r_cap)")
@click.option("--simulate", "n_simu", type=int, default=0, help="also run the document's Monte Carlo")
@click.option("--seed", type=int, default=None, help="seed of the simulation (reproducible)")
@click.option("--json", "json_path", type=click.Path(dir_okay=False), help="also write the results as JSON")
def privacy(n_pub: int, n_bit: int, flip_prob: float, delta: float, grid_bits: int, r_cap: float, n_simu: int,
            seed: int | None, json_path: str | None) -> None:
    """Many Bloom filters: certified ε(δ) by hockey-stick and by the quantile rule (Part III)."""
    from vetdp.buffling.bounds import many_bf_epsilon
    from vetdp.buffling.many_bf import many_bf_distribution
    from vetdp.buffling.montecarlo import simulate_many_bf

    dist = _run(lambda: many_bf_distribution(n_pub, n_bit, flip_prob, grid_bits=grid_bits, r_cap=r_cap))
    e = _run(lambda: many_bf_epsilon(dist, delta))
    table = Table(title=f"k={n_pub} m={n_bit} p={flip_prob} δ={delta:g} ({dist.method})")
    for col in ("statement", "ε lower", "ε upper", "valid (ε, δ)-DP?"):
        table.add_column(col)
    table.add_row("hockey-stick δ(ε) <= δ", f"{e.hockey_lower:.6g}", f"{e.hockey_upper:.6g}", "yes (tight)")
    table.add_row("quantile rule, both losses", f"{e.quantile_lower:.6g}", f"{e.quantile_upper:.6g}",
                  "yes (probabilistic DP ⇒ DP), looser")
    table.add_row("quantile rule as printed", f"{e.literal_quantile_lower:.6g}", f"{e.literal_quantile_upper:.6g}",
                  "no" if e.literal_quantile_upper < e.hockey_lower else "not in general")
    mc = None
    if n_simu:
        mc = _run(lambda: simulate_many_bf(n_pub, n_bit, flip_prob, delta, n_simu=n_simu, seed=seed))
        lo, hi = mc.epsilon_ci
        table.add_row(f"Monte Carlo, {n_simu} draws (95% CI)", f"{lo:.6g}", f"{hi:.6g}",
                      f"estimate {mc.epsilon:.6g}; no guarantee")
    console.print(table)
    console.print(f"coupling gap in R: {dist.gap_r:.3g}; grid step {dist.h:.3g}; slack {dist.slack_up:.3g}")
    _write_json(json_path, "privacy", {
        "parameters": {"n_pub": n_pub, "n_bit": n_bit, "flip_prob": flip_prob, "delta": delta,
                       "grid_bits": grid_bits, "r_cap": r_cap},
        "method": dist.method,
        "hockey": [e.hockey_lower, e.hockey_upper], "quantile": [e.quantile_lower, e.quantile_upper],
        "literal_quantile": [_fin(e.literal_quantile_lower), _fin(e.literal_quantile_upper)],
        "montecarlo": None if mc is None else {"epsilon": mc.epsilon, "ci": [_fin(x) for x in mc.epsilon_ci],
                                               "n_simu": n_simu, "seed": seed, "seconds": mc.seconds}})


@buffling.command("flip-prob")
@click.option("--n-pub", type=int, required=True, help="k in [1, 16]")
@click.option("--n-bit", type=int, required=True, help="m >= 1")
@click.option("--epsilon", type=float, required=True, help="target ε >= 0")
@click.option("--delta", type=float, default=1e-6, show_default=True, help="δ in (0, 1)")
@click.option("--method", type=click.Choice(["exact", "montecarlo"]), default="exact", show_default=True)
@click.option("--rel-tol", type=float, default=1e-3, show_default=True, help="relative width of the final bracket")
@click.option("--n-simu", type=int, default=100_000, show_default=True, help="Monte Carlo draws per evaluation")
@click.option("--seed", type=int, default=0, show_default=True, help="Monte Carlo seed")
@click.option("--json", "json_path", type=click.Path(dir_okay=False), help="also write the results as JSON")
def flip_prob(n_pub: int, n_bit: int, epsilon: float, delta: float, method: str, rel_tol: float, n_simu: int,
              seed: int, json_path: str | None) -> None:
    """The smallest flip probability reaching (ε, δ) for the heuristic pair (monotone search)."""
    from vetdp.buffling.search import estimate_flip_prob

    with Progress(disable=not sys.stderr.isatty(), console=Console(stderr=True)) as bar:
        task = bar.add_task("search", total=None)
        r = _run(lambda: estimate_flip_prob(n_pub, n_bit, epsilon, delta, method=method, rel_tol=rel_tol,
                                            n_simu=n_simu, seed=seed, progress=lambda n: bar.update(task,
                                                                                                     completed=n)))
    table = Table(title=f"flip probability for ε={epsilon} δ={delta:g}, k={n_pub} m={n_bit} ({method})")
    for col in ("flip_prob", "fails at", "evaluations", "certified δ(ε) at flip_prob"):
        table.add_column(col)
    table.add_row(f"{r.flip_prob:.8g}", f"{r.infeasible_below:.8g}", str(r.evaluations),
                  "—" if r.delta_upper_at_result is None else f"{r.delta_upper_at_result:.4g}")
    console.print(table)
    _write_json(json_path, "flip-prob", {
        "parameters": {"n_pub": n_pub, "n_bit": n_bit, "epsilon": epsilon, "delta": delta, "method": method,
                       "rel_tol": rel_tol},
        "flip_prob": r.flip_prob, "infeasible_below": r.infeasible_below, "evaluations": r.evaluations,
        "delta_upper_at_result": r.delta_upper_at_result})
