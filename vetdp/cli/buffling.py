"""``vetdp buffling``: the analysis of shuffled, flipped Bloom filters (seed 004).

Examples::

    vetdp buffling snr --n-pub 3 --n-bit 100 --flip-prob 0.1 --skew 1 --plot snr.png
    vetdp buffling one-bf --n-bit 20 --flip-prob 0.1 --delta 1e-3
    vetdp buffling privacy --n-pub 6 --n-bit 100000 --flip-prob 0.2 --delta 1e-6 --simulate 100000
    vetdp buffling flip-prob --n-pub 6 --n-bit 100000 --epsilon 1 --delta 1e-6 --json out.json

Exit codes: 0 done; 2 bad parameters (the message names the parameter and its allowed range).
"""

from __future__ import annotations

import contextlib
import json
import math
import re
import sys
from collections.abc import Callable, Iterator
from fractions import Fraction
from typing import Any

import click
from rich.console import Console
from rich.markup import escape
from rich.progress import Progress
from rich.table import Table

from vetdp.cli import ExitCode, Integer, Real, output_path, write_output

__all__ = ["buffling", "simulation_limit", "ONE_BF_MAX_BITS"]

console = Console()

# one-bf works in exact rationals: its time grows like m^3 (measured: m = 40 in 7 s, m = 80 in 27 s on one core), so
# the command line stops at m = 100 rather than run for many minutes; the Python API takes larger m knowingly.
ONE_BF_MAX_BITS = 100
_MEMORY_BUDGET = 2**30  # bytes a Monte Carlo run may allocate


def simulation_limit(n_pub: int) -> int:
    """The most Monte Carlo draws that fit in 1 GiB: each draw holds two (k+1)-vectors of int64 counts plus
    temporaries (about 3(k+1) + 4 words)."""
    return _MEMORY_BUDGET // (8 * (3 * (n_pub + 1) + 4))


def _check_simulation(option: str, n_pub: int, n_simu: int) -> None:
    limit = simulation_limit(n_pub)
    if n_simu > limit:
        raise click.BadParameter(f"{n_simu} must be <= {limit} with --n-pub={n_pub}: the draws would need "
                                 f"about {n_simu * 8 * (3 * (n_pub + 1) + 4) / 2**30:.1f} GiB (limit 1 GiB)",
                                 param_hint=option)


_FLIP = Real(0, 0.5, lo_open=True)
_DELTA = Real(0, 1, lo_open=True, hi_open=True)


_OPTION_NAMES = {"n_pub": "--n-pub", "n_bit": "--n-bit", "flip_prob": "--flip-prob", "r_cap": "--r-cap",
                 "grid_bits": "--grid-bits", "n_simu": "--n-simu", "rel_tol": "--rel-tol", "delta": "--delta",
                 "epsilon": "--epsilon", "depth": "--depth", "skew": "--skew", "seed": "--seed"}


def _fail(e: Exception) -> None:
    """Exit 2 with the library's message, its parameter names spelt as this command's options."""
    text = re.sub(r"(?<![\w-])(" + "|".join(_OPTION_NAMES) + r")\b", lambda m: _OPTION_NAMES[m.group(1)], str(e))
    click.echo(f"error: {text}", err=True)
    sys.exit(ExitCode.ERROR)


def _write_json(path: str | None, command: str, payload: dict) -> None:
    if path:
        doc = {"schema_version": 1, "command": f"buffling {command}", **payload}
        write_output("--json", path, json.dumps(doc, indent=2, default=_jsonable, allow_nan=False))


def _jsonable(x: Any) -> Any:
    if isinstance(x, Fraction):
        return {"fraction": f"{x.numerator}/{x.denominator}", "approx": float(x)}
    if isinstance(x, float) and not math.isfinite(x):
        return repr(x)
    return repr(x)


def _fin(x: float) -> float | str | None:
    """A float for JSON: itself when finite, 'inf'/'-inf' as text, None (null) for an undefined NaN."""
    if math.isnan(x):
        return None
    return x if math.isfinite(x) else repr(x)


def _console(json_path: str | None) -> Console:
    """Where tables go: standard output, or standard error when the JSON document goes to standard output."""
    return Console(stderr=True) if json_path == "-" else console


@contextlib.contextmanager
def _nothing() -> Iterator[None]:
    yield


def _run(fn: Callable[[], Any]) -> Any:
    try:
        return fn()
    except (ValueError, TypeError, ArithmeticError) as e:
        _fail(e)


@click.group()
def buffling() -> None:
    """Privacy of shuffling + flipping k Bloom filters of m bits (seed 004), exact where the document simulates."""


@buffling.command()
@click.option("--n-pub", type=Integer(1, 10, why="2^k logos: the table is 4^k entries"), required=True,
              help="k, the number of publishers (Bloom filters), 1..10")
@click.option("--n-bit", type=Integer(1, 10**8), required=True, help="m, the number of columns, 1..10^8")
@click.option("--flip-prob", type=_FLIP, required=True, help="p in (0, 0.5]")
@click.option("--skew", type=str, default="1", show_default=True,
              help="s in [0, 1]: counts m((1−s)·uniform + s·e_0); a fraction like 1/2 is exact")
@output_path("--plot", "plot_path", help="write the SNR heat map (PNG)")
@output_path("--json", "json_path", help="also write the results as JSON")
def snr(n_pub: int, n_bit: int, flip_prob: float, skew: str, plot_path: str | None, json_path: str | None) -> None:
    """SNR of every incremental change j → i, its maximum and maximisers (Part I)."""
    from vetdp.buffling.snr import concentration, skewed_counts, snr_table

    try:
        s = Fraction(skew.strip())
    except (ValueError, ZeroDivisionError):
        raise click.BadParameter(f"{skew!r} is not a number or fraction; it must be in [0, 1]",
                                 param_hint="--skew") from None
    if not 0 <= s <= 1:
        raise click.BadParameter(f"{skew!r} must be in [0, 1]", param_hint="--skew")
    err = Console(stderr=True)
    with err.status("SNR table ...") if err.is_terminal else _nothing():
        t = _run(lambda: snr_table(n_pub, flip_prob, skewed_counts(n_pub, n_bit, s)))
    K = (1 << n_pub) - 1
    table = Table(title=escape(f"SNR, k={n_pub} m={n_bit} p={flip_prob} skew={skew} "
                               f"({'exact' if t.exact else 'float'})"))
    for col in ("quantity", "value"):
        table.add_column(col)
    top = t.argmax()
    conc = concentration(t.coef[0][K])
    table.add_row("max SNR", f"{float(t.maximum):.10g}")
    shown = ", ".join(map(str, top[:8])) + (f", … ({len(top)} pairs)" if len(top) > 8 else "")
    table.add_row(escape("argmax (i, j) [change j → i]"), escape(shown))
    table.add_row(f"SNR(0 → {K})", f"{float(t.snr[K][0]):.10g}")
    table.add_row(f"concentration of c for {K} → 0",
                  "undefined (c = 0: the output carries no signal)" if math.isnan(conc) else f"{conc:.6g}")
    _console(json_path).print(table)
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
        "exact": t.exact, "max_snr": float(t.maximum), "argmax": top, "concentration_K_to_0": _fin(conc),
        "snr": [[float(v) for v in row] for row in t.snr],
        "coef_K_to_0": [float(v) for v in t.coef[0][K]]})


@buffling.command("one-bf")
@click.option("--n-bit", type=Integer(1, ONE_BF_MAX_BITS, why="exact rationals: time grows like m^3, ~1 min at 100"),
              required=True, help=f"m, the number of bits, 1..{ONE_BF_MAX_BITS} (exact rationals: time grows like m^3)")
@click.option("--flip-prob", type=_FLIP, required=True, help="p in (0, 0.5]")
@click.option("--delta", type=_DELTA, default=1e-3, show_default=True, help="δ in (0, 1)")
@click.option("--depth", type=Integer(0, 10**4), default=None,
              help="continued-fraction depth in [0, 10^4] (default: exact termination)")
@output_path("--json", "json_path", help="also write the results as JSON")
def one_bf(n_bit: int, flip_prob: float, delta: float, depth: int | None, json_path: str | None) -> None:
    """One Bloom filter: the three routes to R(y_x | y_d) and ε per y_d (Part II)."""
    from vetdp.buffling.one_bf import compare_routes, one_bf_privacy

    err = Console(stderr=True)
    with err.status("ε per y_d (exact) ...") if err.is_terminal else _nothing():
        res = _run(lambda: one_bf_privacy(n_bit, flip_prob, delta))
    worst = Fraction(0)
    routes: set[str] = set()
    with Progress(disable=not err.is_terminal, console=err, transient=True) as bar:
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
    _console(json_path).print(table)
    _console(json_path).print(f"routes used: {sorted(routes)}; worst relative disagreement with the exact value: "
                  f"{float(worst):.3e}")
    _write_json(json_path, "one-bf", {
        "parameters": {"n_bit": n_bit, "flip_prob": flip_prob, "delta": delta, "depth": depth},
        "eps_pure": res.eps_pure, "eps_quantile": res.eps_quantile, "eps_hockey": res.eps_hockey,
        "max": {"pure": res.max_pure, "quantile": res.max_quantile, "hockey": res.max_hockey},
        "routes_worst_relative_error": float(worst), "routes": sorted(routes)})


@buffling.command()
@click.option("--n-pub", type=Integer(1, 16), required=True, help="k in [1, 16]")
@click.option("--n-bit", type=Integer(1, 10**8), required=True, help="m in [1, 10^8]")
@click.option("--flip-prob", type=_FLIP, required=True, help="p in (0, 0.5]")
@click.option("--delta", type=_DELTA, default=1e-6, show_default=True, help="δ in (0, 1)")
@click.option("--grid-bits", type=Integer(8, 26, why="2^bits float64 cells per law"), default=20, show_default=True,
              help="2^bits grid cells, bits in [8, 26]")
@click.option("--r-cap", type=Real(2, 2.0**40), default=128.0, show_default=True,
              help="grid covers R in [0, R-CAP), R-CAP in [2, 2^40]")
@click.option("--simulate", "n_simu", type=Integer(0, None), default=0,
              help="also run the document's Monte Carlo with this many draws (0: none; else >= 10, memory-bounded)")
@click.option("--seed", type=Integer(0, 2**63 - 1), default=None, help="seed of the simulation (reproducible)")
@output_path("--json", "json_path", help="also write the results as JSON")
def privacy(n_pub: int, n_bit: int, flip_prob: float, delta: float, grid_bits: int, r_cap: float, n_simu: int,
            seed: int | None, json_path: str | None) -> None:
    """Many Bloom filters: certified ε(δ) by hockey-stick and by the quantile rule (Part III)."""
    from vetdp.buffling.bounds import many_bf_epsilon
    from vetdp.buffling.many_bf import many_bf_distribution
    from vetdp.buffling.montecarlo import simulate_many_bf

    if n_simu:
        if n_simu < 10:
            raise click.BadParameter(f"{n_simu} must be 0 (no simulation) or >= 10", param_hint="--simulate")
        _check_simulation("--simulate", n_pub, n_simu)
    err = Console(stderr=True)
    with err.status("certified grid laws ...") if err.is_terminal else _nothing():
        dist = _run(lambda: many_bf_distribution(n_pub, n_bit, flip_prob, grid_bits=grid_bits, r_cap=r_cap))
        e = _run(lambda: many_bf_epsilon(dist, delta))
    half = flip_prob == 0.5  # every bit is a fair coin whatever the input: the output law does not depend on it
    table = Table(title=f"k={n_pub} m={n_bit} p={flip_prob} δ={delta:g} ({dist.method})")
    for col in ("statement", "ε lower", "ε upper", "valid (ε, δ)-DP?"):
        table.add_column(col)
    width = e.hockey_upper - e.hockey_lower
    lit_lo, lit_hi = e.literal_quantile_lower, e.literal_quantile_upper
    if half:
        exact = "yes: ε = 0 exactly (at flip_prob = 1/2 the output does not depend on the input)"
        for statement in ("hockey-stick δ(ε) <= δ", "quantile rule, both losses", "quantile rule as printed"):
            table.add_row(statement, "0", "0", exact)
    else:
        if width <= 1e-3 * max(e.hockey_upper, 1e-300):
            verdict = f"yes (tight: bracket width {width:.2g})"
        else:
            verdict = (f"yes (upper bound; bracket width {width:.2g} is not tight at this grid: raise --grid-bits "
                       "or --r-cap)")
        table.add_row("hockey-stick δ(ε) <= δ", f"{e.hockey_lower:.6g}", f"{e.hockey_upper:.6g}", verdict)
        table.add_row("quantile rule, both losses", f"{e.quantile_lower:.6g}", f"{e.quantile_upper:.6g}",
                      "yes (probabilistic DP ⇒ DP), looser")
        lit_note = "no" if lit_hi < e.hockey_lower else "not in general"
        if lit_lo < 0 or lit_hi < 0:
            lit_note += "; the rule's value is negative, shown clamped at 0 (no ε is negative)"
        table.add_row("quantile rule as printed", f"{max(lit_lo, 0.0):.6g}", f"{max(lit_hi, 0.0):.6g}", lit_note)
    mc = None
    if n_simu:
        with err.status(f"Monte Carlo, {n_simu} draws ...") if err.is_terminal else _nothing():
            mc = _run(lambda: simulate_many_bf(n_pub, n_bit, flip_prob, delta, n_simu=n_simu, seed=seed))
        lo, hi = mc.epsilon_ci
        table.add_row(f"Monte Carlo, {n_simu} draws (95% CI)", f"{lo:.6g}", f"{hi:.6g}",
                      f"estimate {mc.epsilon:.6g}; no guarantee")
    _console(json_path).print(table)
    _console(json_path).print(f"coupling gap in R: {dist.gap_r:.3g}; grid step {dist.h:.3g}; slack {dist.slack_up:.3g}")
    _write_json(json_path, "privacy", {
        "parameters": {"n_pub": n_pub, "n_bit": n_bit, "flip_prob": flip_prob, "delta": delta,
                       "grid_bits": grid_bits, "r_cap": r_cap},
        "method": dist.method, "epsilon_exact": 0.0 if half else None,
        "hockey": [e.hockey_lower, e.hockey_upper], "quantile": [e.quantile_lower, e.quantile_upper],
        "literal_quantile": [_fin(e.literal_quantile_lower), _fin(e.literal_quantile_upper)],
        "literal_quantile_clamped": [_fin(max(lit_lo, 0.0)), _fin(max(lit_hi, 0.0))],
        "montecarlo": None if mc is None else {"epsilon": mc.epsilon, "ci": [_fin(x) for x in mc.epsilon_ci],
                                               "n_simu": n_simu, "seed": seed, "seconds": mc.seconds}})


@buffling.command("flip-prob")
@click.option("--n-pub", type=Integer(1, 16), required=True, help="k in [1, 16]")
@click.option("--n-bit", type=Integer(1, 10**8), required=True, help="m in [1, 10^8]")
@click.option("--epsilon", type=Real(0, 700), required=True, help="target ε in [0, 700]")
@click.option("--delta", type=_DELTA, default=1e-6, show_default=True, help="δ in (0, 1)")
@click.option("--method", type=click.Choice(["exact", "montecarlo"]), default="exact", show_default=True)
@click.option("--rel-tol", type=Real(0, 1, lo_open=True, hi_open=True), default=1e-3, show_default=True,
              help="relative width of the final bracket, in (0, 1)")
@click.option("--n-simu", type=Integer(10, None), default=100_000, show_default=True,
              help="Monte Carlo draws per evaluation (>= 10, memory-bounded)")
@click.option("--seed", type=Integer(0, 2**63 - 1), default=0, show_default=True, help="Monte Carlo seed")
@output_path("--json", "json_path", help="also write the results as JSON")
def flip_prob(n_pub: int, n_bit: int, epsilon: float, delta: float, method: str, rel_tol: float, n_simu: int,
              seed: int, json_path: str | None) -> None:
    """The smallest flip probability reaching (ε, δ) for the heuristic pair (monotone search)."""
    from vetdp.buffling.search import estimate_flip_prob

    if method == "montecarlo":
        _check_simulation("--n-simu", n_pub, n_simu)
    err = Console(stderr=True)
    with Progress(disable=not err.is_terminal, console=err, transient=True) as bar:
        task = bar.add_task("search", total=None)
        r = _run(lambda: estimate_flip_prob(n_pub, n_bit, epsilon, delta, method=method, rel_tol=rel_tol,
                                            n_simu=n_simu, seed=seed, progress=lambda n: bar.update(task,
                                                                                                     completed=n)))
    table = Table(title=f"flip probability for ε={epsilon} δ={delta:g}, k={n_pub} m={n_bit} ({method})")
    for col in ("flip_prob", "fails at", "evaluations", "certified δ(ε) at flip_prob"):
        table.add_column(col)
    table.add_row(f"{r.flip_prob:.8g}", f"{r.infeasible_below:.8g}", str(r.evaluations),
                  "—" if r.delta_upper_at_result is None else f"{r.delta_upper_at_result:.4g}")
    _console(json_path).print(table)
    _write_json(json_path, "flip-prob", {
        "parameters": {"n_pub": n_pub, "n_bit": n_bit, "epsilon": epsilon, "delta": delta, "method": method,
                       "rel_tol": rel_tol},
        "flip_prob": r.flip_prob, "infeasible_below": r.infeasible_below, "evaluations": r.evaluations,
        "delta_upper_at_result": r.delta_upper_at_result})
