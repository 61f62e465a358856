"""``vetdp buffling``: the analysis of shuffled, flipped Bloom filters (seed 004).

Examples::

    vetdp buffling snr --n-pub 3 --n-bit 100 --flip-prob 0.1 --skew 1 --plot snr.png
    vetdp buffling one-bf --n-bit 20 --flip-prob 0.1 --delta 1e-3
    vetdp buffling privacy --n-pub 6 --n-bit 100000 --flip-prob 0.2 --delta 1e-6 --simulate 100000
    vetdp buffling flip-prob --n-pub 6 --n-bit 100000 --epsilon 1 --delta 1e-6 --json out.json
    vetdp buffling one-bf --n-bit 1000000 --flip-prob 0.1 --y-d 500000      # certified intervals above m = 100
    vetdp buffling vet --impl mypkg.analysis:ratio --quick                  # docs/buffling-vet.md

Exit codes: 0 done; 2 bad parameters (the message names the parameter and its allowed range); ``vet`` exits 1
when a user function is outside tolerance at some point.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import re
import sys
from collections.abc import Callable, Iterator
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import click

from vetdp.cli import ExitCode, Integer, Real, given, output_path, write_output
from vetdp.cli.check import dask_options, removed_time_budget, report_options, runner_scope, safety_limit_option
from vetdp.engine.budgets import CHAIN_WORK, MAX_GRID_BITS

if TYPE_CHECKING:  # rich loads when a command runs, not for --help
    from rich.console import Console

__all__ = ["buffling", "simulation_limit", "ONE_BF_MAX_BITS", "CERTIFIED_MAX_BITS", "vet"]

# one-bf works in exact rationals: its time grows like m^3 (measured: m = 40 in 7 s, m = 80 in 27 s on one core), so
# the command line stops at m = 100 rather than run for many minutes; the Python API takes larger m knowingly.
ONE_BF_MAX_BITS = 100
CERTIFIED_MAX_BITS = 10**7  # above ONE_BF_MAX_BITS one-bf uses vetdp.buffling.certified (work ~ sqrt(m) per point)
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
    from rich.console import Console

    return Console(stderr=json_path == "-")


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
@output_path("--plot", "plot_path", help="write the SNR heat map (.png, .svg or .pdf: the format follows the suffix)",
             suffixes=(".png", ".svg", ".pdf"))
@output_path("--json", "json_path", help="also write the results as JSON")
def snr(n_pub: int, n_bit: int, flip_prob: float, skew: str, plot_path: str | None, json_path: str | None) -> None:
    """SNR of every incremental change j → i, its maximum and maximisers (Part I)."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

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
@click.option("--n-bit", type=Integer(1, CERTIFIED_MAX_BITS), required=True,
              help=f"m, the number of bits, 1..10^7: exact rationals up to {ONE_BF_MAX_BITS} (ε per y_d), certified "
                   "intervals above (R(y_x | y_d) over a grid)")
@click.option("--flip-prob", type=_FLIP, required=True, help="p in (0, 0.5]")
@click.option("--delta", type=_DELTA, default=1e-3, show_default=True,
              help="δ in (0, 1): ε(δ) per y_d (exact up to --n-bit 100, certified brackets above)")
@click.option("--depth", type=Integer(0, 10**4), default=None,
              help="continued-fraction depth in [0, 10^4] (default: exact termination; exact mode only)")
@click.option("--y-d", "y_ds", type=Integer(0, None), multiple=True,
              help="certified mode: the input counts y_d to tabulate (repeatable; default 0, m/10, m/2, m−1)")
@dask_options
@output_path("--json", "json_path", help="also write the results as JSON")
def one_bf(n_bit: int, flip_prob: float, delta: float, depth: int | None, y_ds: tuple[int, ...],
           workers: int | None, scheduler: str | None, json_path: str | None) -> None:
    """One Bloom filter: the three routes to R(y_x | y_d) and ε per y_d (Part II); certified intervals for large m.

    With --workers N or --scheduler ADDRESS the rows y_d are computed on Dask, with the same results."""
    if n_bit <= ONE_BF_MAX_BITS and y_ds:
        raise click.BadParameter(f"--y-d applies above --n-bit={ONE_BF_MAX_BITS} (certified mode); at "
                                 f"--n-bit={n_bit} every y_d is computed exactly", param_hint="--y-d")
    if n_bit > ONE_BF_MAX_BITS and depth is not None:  # an option that would change nothing is not accepted silently
        raise click.BadParameter(f"--depth applies to the exact mode (--n-bit <= {ONE_BF_MAX_BITS}), whose routes it "
                                 f"truncates; at --n-bit={n_bit} the certified mode has no continued fraction",
                                 param_hint="--depth")
    for y in y_ds:
        if y > n_bit - 1:
            raise click.BadParameter(f"{y} must be in [0, {n_bit - 1}] (y_d <= m − 1)", param_hint="--y-d")
    with runner_scope(workers, scheduler) as runner:
        if n_bit > ONE_BF_MAX_BITS:
            _one_bf_certified(n_bit, flip_prob, delta, y_ds, json_path, runner)
        else:
            _one_bf_exact(n_bit, flip_prob, delta, depth, json_path, runner)


def _grid_task(fn: Callable) -> Callable:
    """A task of a buffling grid: it arms no time limit (it runs in the Dask worker's thread) and travels by value
    (a worker imports the buffling modules it uses, not every command of vetdp.cli)."""
    from vetdp.distributed import by_value, without_budgets

    return by_value(without_budgets(fn))


@_grid_task
def _privacy_rows(task: tuple[int, float, float, list[int]]) -> Any:
    """ε per y_d for the rows ``y_ds`` (a task of one-bf; rows are independent, so pieces concatenate exactly)."""
    from vetdp.buffling.one_bf import one_bf_privacy

    m, p, delta, y_ds = task
    return one_bf_privacy(m, p, delta, y_d=y_ds)


@_grid_task
def _route_rows(task: tuple[int, float, int | None, list[int]]) -> tuple[Fraction, set[str]]:
    """The worst relative disagreement of the two routes with the exact ratio, and the routes used, over the rows
    ``y_ds`` (every y_x): max and union, so pieces combine exactly."""
    from vetdp.buffling.one_bf import compare_routes

    m, p, depth, y_ds = task
    worst, routes = Fraction(0), set()
    for y_d in y_ds:
        for y_x in range(m + 1):
            r = compare_routes(m, p, y_d, y_x, depth)
            worst = max(worst, r.rel_err_hyp2f1, r.rel_err_cf)
            routes |= {r.hyp2f1_route, re.sub(r"depth \d+", "depth n", r.cf_route)}
    return worst, routes


def _pieces(items: list, runner: Any, serial_pieces: int, per_worker: int = 4) -> list[list]:
    """How a grid is cut into tasks: ``serial_pieces`` pieces serially, ``per_worker`` per worker on Dask (results
    never depend on the cut)."""
    from vetdp.distributed import SerialRunner, split

    return split(items, serial_pieces if isinstance(runner, SerialRunner) else per_worker * runner.workers)


def _one_bf_exact(n_bit: int, flip_prob: float, delta: float, depth: int | None, json_path: str | None,
                  runner: Any) -> None:
    """one-bf up to the exact limit: ε per y_d on exact rationals and the three routes compared at every point."""
    from rich.console import Console
    from rich.progress import Progress
    from rich.table import Table

    rows = list(range(n_bit))
    privacy_pieces = _pieces(rows, runner, 1, 1)  # each piece builds the exact law again: as few as there are workers
    route_pieces = _pieces(rows, runner, n_bit)  # one row per piece serially: the bar moves per row
    handles = runner.handles(_privacy_rows, [(n_bit, flip_prob, delta, r) for r in privacy_pieces])
    route_handles = runner.handles(_route_rows, [(n_bit, flip_prob, depth, r) for r in route_pieces])
    err = Console(stderr=True)
    with err.status("ε per y_d (exact) ...") if err.is_terminal else _nothing():
        parts = [_run(h) for h in handles]
    res = dataclasses.replace(parts[0], eps_pure=[e for r in parts for e in r.eps_pure],
                              eps_quantile=[e for r in parts for e in r.eps_quantile],
                              eps_hockey=[e for r in parts for e in r.eps_hockey])
    worst = Fraction(0)
    routes: set[str] = set()
    with Progress(disable=not err.is_terminal, console=err, transient=True) as bar:
        task = bar.add_task("routes", total=n_bit)
        for piece, h in zip(route_pieces, route_handles, strict=True):
            w, used = _run(h)
            worst, routes = max(worst, w), routes | used
            bar.advance(task, len(piece))
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
        "mode": "exact",
        "parameters": {"n_bit": n_bit, "flip_prob": flip_prob, "delta": delta, "depth": depth},
        "eps_pure": res.eps_pure, "eps_quantile": res.eps_quantile, "eps_hockey": res.eps_hockey,
        "max": {"pure": res.max_pure, "quantile": res.max_quantile, "hockey": res.max_hockey},
        "routes_worst_relative_error": float(worst), "routes": sorted(routes)})


@_grid_task
def _enclosures(task: tuple[int, float, list[tuple[int, int, str]]]) -> list:
    """Certified enclosures of R(y_x | y_d) at the points of one piece of the certified one-bf grid."""
    from vetdp.buffling.certified import ratio_enclosure

    m, p, points = task
    return [ratio_enclosure(y_d, y_x, p, m) for y_d, y_x, _ in points]


def _one_bf_certified(m: int, p: float, delta: float, y_ds: tuple[int, ...], json_path: str | None,
                      runner: Any) -> None:
    """one-bf above the exact limit: certified enclosures of R(y_x | y_d) over the vet grid's rows, and a
    certified bracket on the hockey-stick ε(y_d; δ) per y_d."""
    from rich.console import Console
    from rich.markup import escape
    from rich.progress import Progress
    from rich.table import Table

    from vetdp.buffling.one_bf import ln_down, ln_up
    from vetdp.buffling.one_bf_delta import one_bf_epsilon
    wanted = sorted(set(y_ds)) if y_ds else sorted({0, m // 10, m // 2, m - 1})
    rows = []
    err = Console(stderr=True)
    points = [(d, x, r) for d in wanted for x, r in _rows_for(m, p, d)]
    pieces = _pieces(points, runner, len(points))  # one point per piece serially
    handles = runner.handles(_enclosures, [(m, p, piece) for piece in pieces])
    with Progress(disable=not err.is_terminal, console=err, transient=True) as bar:
        task = bar.add_task("certified R(y_x | y_d)", total=len(points))
        for piece, h in zip(pieces, handles, strict=True):
            for (y_d, y_x, region), enc in zip(piece, _run(h), strict=True):
                rows.append((y_d, y_x, region, enc))
            bar.advance(task, len(piece))
    table = Table(title=f"one BF, m={m} p={p} (certified intervals)")
    for col in ("y_d", "y_x", "region", "R lower", "R upper", "ln R in"):
        table.add_column(col)
    for y_d, y_x, region, enc in rows:
        table.add_row(str(y_d), str(y_x), escape(region), f"{float(enc.lo):.17g}", f"{float(enc.hi):.17g}",
                      f"[{ln_down(enc.lo):.12g}, {ln_up(enc.hi):.12g}]")
    fp = Fraction(p)
    eps_pure = ln_up((1 - fp) / fp)
    out = _console(json_path)
    out.print(table)
    out.print(f"ε pure = max over y_x of |ln R| = ln(q/p) <= {eps_pure:.17g} for every y_d (R(0 | y_d) = p/q and "
              "R(m | y_d) = q/p exactly, R increasing in y_x)")
    with Progress(disable=not err.is_terminal, console=err, transient=True) as bar:
        task = bar.add_task(f"certified ε(y_d; δ={delta:g})", total=len(wanted))
        hockey = []
        for y_d in wanted:
            hockey.append(_run(lambda y_d=y_d: one_bf_epsilon(m, y_d, p, delta)))
            bar.advance(task)
    eps_table = Table(title=f"one BF, m={m} p={p}: hockey-stick ε(y_d; δ={delta:g}) (certified brackets)")
    for col in ("y_d", "ε lower", "ε upper"):
        eps_table.add_column(col)
    for h in hockey:
        eps_table.add_row(str(h.y_d), f"{h.lower:.12g}", f"{h.upper:.12g}")
    out.print(eps_table)
    _write_json(json_path, "one-bf", {
        "mode": "certified", "parameters": {"n_bit": m, "flip_prob": p, "delta": delta, "y_d": wanted},
        "eps_pure_upper": eps_pure,
        "ratio": [{"y_d": d, "y_x": x, "region": r, "lo": e.lo, "hi": e.hi} for d, x, r, e in rows],
        "eps_hockey": [{"y_d": h.y_d, "lower": h.lower, "upper": h.upper} for h in hockey]})


def _rows_for(m: int, p: float, y_d: int) -> list[tuple[int, str]]:
    """The vet grid's (y_x, region) for one input count, in increasing y_x."""
    from vetdp.buffling.vet import y_x_values

    return sorted({x: r for x, r in reversed(y_x_values(m, y_d, p, quick=False))}.items())


@buffling.command()
@click.option("--n-pub", type=Integer(1, 16), required=True, help="k in [1, 16]")
@click.option("--n-bit", type=Integer(1, 10**8), required=True, help="m in [1, 10^8]")
@click.option("--flip-prob", type=_FLIP, required=True, help="p in (0, 0.5]")
@click.option("--delta", type=_DELTA, default=1e-6, show_default=True, help="δ in (0, 1)")
@click.option("--grid-bits", type=Integer(8, MAX_GRID_BITS, why="about 100 bytes of memory per cell: 2^23 cells take "
              "0.9 GB"), default=20, show_default=True, help=f"2^bits grid cells, bits in [8, {MAX_GRID_BITS}] "
              "(about 100 bytes of memory per cell)")
@click.option("--r-cap", type=Real(2, 2.0**40), default=128.0, show_default=True,
              help="grid covers R in [0, R-CAP), R-CAP in [2, 2^40]")
@click.option("--simulate", "n_simu", type=Integer(0, None), default=0,
              help="also run the document's Monte Carlo with this many draws (0: none; else >= 10, memory-bounded)")
@click.option("--seed", type=Integer(0, 2**63 - 1), default=None, help="seed of the simulation (reproducible)")
@click.option("--chain-work", type=Real(1e6, 1e15), default=float(CHAIN_WORK), show_default=True,
              help="the category chains' budget of multiply-adds, where they run (many publishers): work, not "
                   "seconds, so that the bracket is the same on any machine")
@removed_time_budget("--chain-work N (multiply-adds)")
@output_path("--json", "json_path", help="also write the results as JSON")
def privacy(n_pub: int, n_bit: int, flip_prob: float, delta: float, grid_bits: int, r_cap: float, n_simu: int,
            seed: int | None, chain_work: float, json_path: str | None) -> None:
    """Many Bloom filters: certified ε(δ) by hockey-stick and by the quantile rule (Part III)."""
    from rich.console import Console
    from rich.table import Table

    from vetdp.buffling.bounds import many_bf_epsilon
    from vetdp.buffling.many_bf import many_bf_distribution
    from vetdp.buffling.montecarlo import simulate_many_bf

    if n_simu:
        if n_simu < 10:
            raise click.BadParameter(f"{n_simu} must be 0 (no simulation) or >= 10", param_hint="--simulate")
        _check_simulation("--simulate", n_pub, n_simu)
    elif given("seed"):
        raise click.BadParameter("--seed seeds the Monte Carlo of --simulate N; without it nothing is drawn "
                                 "(the certified bounds use no randomness)", param_hint="--seed")
    from vetdp.buffling.bounds import CHAIN_TARGET, certified_epsilon
    from vetdp.buffling.category_chain import ChainBudgetExceeded, chain_epsilon
    from vetdp.buffling.logo_counts import conditional_epsilon, exact_epsilon, exact_is_cheap

    err = Console(stderr=True)
    half = flip_prob == 0.5  # every bit is a fair coin whatever the input: the output law does not depend on it
    with err.status("certified grid laws ...") if err.is_terminal else _nothing():
        dist = _run(lambda: many_bf_distribution(n_pub, n_bit, flip_prob, grid_bits=grid_bits, r_cap=r_cap))
        try:
            e, no_grid = many_bf_epsilon(dist, delta), ""
        except ArithmeticError as why:  # this grid does not reach δ: the quantile rows need it, the hockey row not
            e, no_grid = None, str(why)
    # the hockey-stick row, finer where it fits: exact enumeration of logo counts, else conditioning
    hockey, hockey_method = ((e.hockey_lower, e.hockey_upper) if e else (0.0, 0.0) if half else (math.inf, math.inf)
                             ), dist.method
    if e is None and not half:
        with err.status("certified ε(δ), the grid laws not reaching δ ...") if err.is_terminal else _nothing():
            try:
                b = certified_epsilon(n_pub, n_bit, flip_prob, delta, grid_bits=grid_bits, r_cap=r_cap,
                                      chain_work=chain_work)
            except ChainBudgetExceeded as why:  # more work would have helped: say which option gives it
                _fail(ArithmeticError(f"{why}; raise --chain-work"))
            except ArithmeticError as why:  # past every certified method: say so, and what remains
                _fail(ArithmeticError(f"cannot certify: {why}; fewer publishers (--n-pub) or a larger --flip-prob "
                                      "bring it within reach, and --simulate N estimates it without a guarantee"))
            except (ValueError, TypeError) as why:
                _fail(why)
        hockey_method = {"enumeration": f"exact enumeration of {b.work} logo counts",
                         "conditional": f"conditional ({b.work} prefixes)",
                         "coupling": f"grid laws with --r-cap raised ({b.work} cells)",
                         "chain": f"category chains ({b.work} cells)"}.get(b.method, b.method)
        hockey = (b.lower, b.upper)
    elif not half:
        with err.status("exact / conditional ε(δ) ...") if err.is_terminal else _nothing():
            if exact_is_cheap(n_pub, n_bit):
                x = _run(lambda: exact_epsilon(n_pub, n_bit, flip_prob, delta))
                finer = (x.lower, x.upper, f"exact enumeration of {x.outcomes} logo counts")
            else:
                c = _run(lambda: conditional_epsilon(n_pub, n_bit, flip_prob, delta))
                finer = None if c is None else (c.lower, c.upper, f"conditional ({c.work} prefixes)")
                if c is None and e.hockey_upper - e.hockey_lower > CHAIN_TARGET * e.hockey_upper:
                    try:  # a numerical limit of the chains: the grid laws' certified bracket stands alone
                        c = chain_epsilon(n_pub, n_bit, flip_prob, delta, work=chain_work)
                    except ArithmeticError:
                        c = None
                    finer = None if c is None else (c.lower, c.upper, f"category chains ({c.work} cells)")
        if finer is not None:  # both brackets are certified: keep their intersection
            hockey = (max(hockey[0], finer[0]), min(hockey[1], finer[1]))
            hockey_method = finer[2]
    table = Table(title=f"k={n_pub} m={n_bit} p={flip_prob} δ={delta:g} (hockey-stick: {hockey_method}; "
                        f"quantile rules: {dist.method})")
    for col in ("statement", "ε lower", "ε upper", "valid (ε, δ)-DP?"):
        table.add_column(col)
    width = hockey[1] - hockey[0]
    lit_lo, lit_hi = (e.literal_quantile_lower, e.literal_quantile_upper) if e else (math.nan, math.nan)
    if half:
        exact = "yes: ε = 0 exactly (at flip_prob = 1/2 the output does not depend on the input)"
        for statement in ("hockey-stick δ(ε) <= δ", "quantile rule, both losses", "quantile rule as printed"):
            table.add_row(statement, "0", "0", exact)
    else:
        if width <= 1e-3 * max(hockey[1], 1e-300):
            verdict = f"yes (tight: bracket width {width:.2g})"
        elif hockey_method == dist.method:
            verdict = (f"yes (upper bound; bracket width {width:.2g} is not tight at this grid: raise --grid-bits "
                       "or --r-cap)")
        else:
            verdict = f"yes (upper bound; certified bracket width {width:.2g}, {width / hockey[1]:.2%} of ε)"
        table.add_row("hockey-stick δ(ε) <= δ", f"{hockey[0]:.10g}", f"{hockey[1]:.10g}", verdict)
        if e is None:
            for statement in ("quantile rule, both losses", "quantile rule as printed"):
                table.add_row(statement, "—", "—", f"not computed: {no_grid}")
        else:
            table.add_row("quantile rule, both losses", f"{e.quantile_lower:.6g}", f"{e.quantile_upper:.6g}",
                          "yes (probabilistic DP ⇒ DP), looser")
            lit_note = "no" if lit_hi < hockey[0] else "not in general"
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
        "method": dist.method, "hockey_method": hockey_method, "epsilon_exact": 0.0 if half else None,
        "hockey": list(hockey), "quantile": [e.quantile_lower, e.quantile_upper] if e else None,
        "literal_quantile": [_fin(e.literal_quantile_lower), _fin(e.literal_quantile_upper)] if e else None,
        "literal_quantile_clamped": [_fin(max(lit_lo, 0.0)), _fin(max(lit_hi, 0.0))] if e else None,
        "quantile_not_computed": no_grid or None,
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
    from rich.console import Console
    from rich.progress import Progress
    from rich.table import Table

    from vetdp.buffling.search import estimate_flip_prob

    if method == "montecarlo":
        _check_simulation("--n-simu", n_pub, n_simu)
    else:
        for option in ("n_simu", "seed"):
            if given(option):
                raise click.BadParameter(f"--{option.replace('_', '-')} applies with --method montecarlo; the exact "
                                         "search draws nothing", param_hint=f"--{option.replace('_', '-')}")
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


def _int_list(option: str, text: str, lo: int, hi: int) -> list[int]:
    """A comma-separated list of integers in [lo, hi] (exponent forms such as 1e6 allowed); BadParameter else."""
    out = []
    for part in text.split(","):
        part = part.strip()
        try:
            v = int(part) if part.lstrip("-").isdigit() else int(float(part)) if float(part).is_integer() else None
        except ValueError:
            v = None
        if v is None or not lo <= v <= hi:
            raise click.BadParameter(f"{part!r} must be an integer in [{lo}, {hi:g}] (comma-separated list "
                                     f"{text!r})", param_hint=option)
        out.append(v)
    if not out:
        raise click.BadParameter("the list is empty", param_hint=option)
    return sorted(set(out))


def _load(option: str, ref: str | None) -> Callable | None:
    if ref is None:
        return None
    from vetdp.cli.verify import load_callable

    fn = load_callable(ref, option)
    if not callable(fn):
        raise click.BadParameter(f"{option}={ref!r} is a {type(fn).__name__}, not a function", param_hint=option)
    return fn


@buffling.command("vet")
@click.option("--impl", "impl_ref", default=None,
              help="MODULE:ATTR or file.py:ATTR of a ratio function (y_d, y_x, p, m) -> R(y_x | y_d)")
@click.option("--pmf", "pmf_ref", default=None,
              help="MODULE:ATTR or file.py:ATTR of a pmf (y_x, y_d, p, m) -> f(y_x | y_d) = Pr[y_x ones out | y_d in]")
@click.option("--epsilon", "epsilon_ref", default=None,
              help="MODULE:ATTR or file.py:ATTR of a many-filter ε(δ) function (k, m, p, delta) -> ε")
@click.option("--scales", default=None,
              help="comma-separated m values in [1, 10^7] (default the seed's 10,100,1000,1e4,1e5,1e6; "
                   "--quick: 10,1000,1e5)")
@click.option("--flip-prob", "flip_probs", type=_FLIP, multiple=True,
              help="p in (0, 0.5], repeatable (default 0.1 and 0.3; --quick: 0.1)")
@click.option("--n-pub", "n_pubs", default=None, help="--epsilon: comma-separated k values in [1, 16] (default 1,3,6)")
@click.option("--delta", type=_DELTA, default=1e-6, show_default=True, help="--epsilon: δ in (0, 1)")
@click.option("--epsilon-kind", type=click.Choice(["hockey", "quantile"]), default="hockey", show_default=True,
              help="--epsilon: which ε(δ) the function computes (tight hockey-stick, or the seed's quantile rule)")
@click.option("--tolerance", type=Real(0, 1, hi_open=True), default=1e-9, show_default=True,
              help="relative tolerance in [0, 1): a value outside [lo·(1−tol), hi·(1+tol)] of the certified "
                   "interval fails")
@click.option("--quick", is_flag=True, help="a smaller grid at m = 10, 1000, 10^5 and p = 0.1 (seconds)")
@safety_limit_option("wall-clock seconds one (m, p[, k]) cell of the grid may take, and importing each module "
                     "named (a safety net for a function that hangs: the cell is 'stopped', exit 2; serial runs "
                     "only, as Dask runs cells in worker threads)")
@dask_options
@report_options
def vet(impl_ref: str | None, pmf_ref: str | None, epsilon_ref: str | None, scales: str | None,
        flip_probs: tuple[float, ...], n_pubs: str | None, delta: float, epsilon_kind: str, tolerance: float,
        quick: bool, time_limit: float, workers: int | None, scheduler: str | None, json_path: str | None,
        junit_path: str | None, markdown_path: str | None) -> None:
    """Vet a user's one-filter ratio, pmf, or many-filter ε(δ) against vetdp's certified values.

    Exit codes: 0 every point within tolerance; 1 a point outside it (or the function raised, returned NaN, an
    infinity or a non-number); 2 bad usage or an engine error. With --workers N or --scheduler ADDRESS each
    (m, p[, k]) cell of the grid is a task on Dask, with the same report.
    """
    from vetdp.buffling import vet as v

    if not (impl_ref or pmf_ref or epsilon_ref):
        raise click.UsageError("give at least one of --impl MODULE:ATTR (ratio), --pmf MODULE:ATTR, "
                               "--epsilon MODULE:ATTR")
    if epsilon_ref is None:
        for name, option in (("n_pubs", "--n-pub"), ("delta", "--delta"), ("epsilon_kind", "--epsilon-kind")):
            if given(name):  # they shape the many-filter ε(δ) grid only
                raise click.BadParameter(f"{option} applies with --epsilon MODULE:ATTR (a many-filter ε(δ) "
                                         "function)", param_hint=option)
    ratio_fn, pmf_fn, eps_fn = _load("--impl", impl_ref), _load("--pmf", pmf_ref), _load("--epsilon", epsilon_ref)
    ms = _int_list("--scales", scales, 1, 10**7) if scales is not None else \
        list(v.QUICK_SCALES if quick else v.SEED_SCALES)
    ps = sorted(set(flip_probs)) or list(v.QUICK_FLIP_PROBS if quick else v.DEFAULT_FLIP_PROBS)
    ks = _int_list("--n-pub", n_pubs, 1, 16) if n_pubs is not None else list(v.DEFAULT_N_PUBS)
    collected: list = []
    cells: list[tuple[str, tuple]] = []
    for m in ms:
        for p in ps:
            if ratio_fn:
                cells.append((f"ratio m={m} p={p}", ("ratio", time_limit, ratio_fn, m, p, tolerance, quick,
                                                     impl_ref)))
            if pmf_fn:
                cells.append((f"pmf m={m} p={p}", ("pmf", time_limit, pmf_fn, m, p, tolerance, quick, pmf_ref)))
            if eps_fn:
                for k in ks:
                    cells.append((f"epsilon k={k} m={m} p={p}", ("epsilon", time_limit, eps_fn, k, m, p, delta,
                                                                 tolerance, epsilon_kind, epsilon_ref)))
    from vetdp.cli.check import run_and_report
    from vetdp.engine.results import CheckResult, Status

    def stage(label: str, handle: Callable[[], Any]) -> Callable[[], list]:
        def run() -> list:
            if any(r.status is Status.STOPPED for r in collected):  # a hang: the rest would wait as long
                return [CheckResult("buffling.vet", label.split()[0], Status.SKIPPED, label.partition(" ")[2],
                                    message="not run: a cell before it was stopped by --time-limit")]
            r = handle()
            collected.append(r)
            return [r]
        return run

    with runner_scope(workers, scheduler) as runner:
        handles = runner.handles(_vet_cell, [task for _, task in cells])
        code = run_and_report([(label, stage(label, h)) for (label, _), h in zip(cells, handles, strict=True)],
                              command="buffling vet", title="buffling vet: user analysis code against certified "
                              "values", json_path=json_path, junit_path=junit_path, markdown_path=markdown_path,
                              nothing_selected="no grid point was checked")
    _print_outside(collected, json_path, junit_path, markdown_path)
    sys.exit(code)


@_grid_task
def _vet_cell(task: tuple) -> Any:
    """One cell of the vet grid (a task): ``("ratio" | "pmf", time_limit, fn, m, p, tol, quick, ref)`` or
    ``("epsilon", time_limit, fn, k, m, p, delta, tol, kind, ref)``; the cell's CheckResult. The user's function is
    fenced (:mod:`vetdp.fence`): what it does at a point is that point's finding, a hang past ``time_limit`` stops
    the cell (no verdict)."""
    import time

    from vetdp import fence
    from vetdp.buffling import vet as v
    from vetdp.engine.results import CheckResult, Status

    kind, limit, *args = task
    ref = args[-1]
    option = {"ratio": "--impl", "pmf": "--pmf", "epsilon": "--epsilon"}[kind]
    t0 = time.perf_counter()
    try:
        with fence.fenced(f"{option}={ref!r}:", seconds=limit, exceptions=False):
            return {"ratio": v.vet_ratio, "pmf": v.vet_pmf, "epsilon": v.vet_epsilon}[kind](*args)
    except fence.UserCodeError as e:
        subject = f"k={args[1]} m={args[2]} p={args[3]!r}" if kind == "epsilon" else f"m={args[1]} p={args[2]!r}"
        return CheckResult(v.SPEC, kind, Status.STOPPED if e.stopped else Status.ERROR, subject, message=str(e),
                           seconds=time.perf_counter() - t0)


_SHOWN_POINTS = 40


def _print_outside(results: list, *paths: str | None) -> None:
    """A table of the points outside tolerance (the first 40; every one is in the JSON report's witnesses)."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    rows = [(r, pt) for r in results for pt in (r.witness or {}).get("outside", [])]
    if not rows:
        return
    out = Console(stderr="-" in paths)
    if not out.is_terminal:  # a log or a CI page: wide rows rather than folded ones
        out = Console(width=200, stderr=out.stderr)
    table = Table(title=f"points outside tolerance ({len(rows)})")
    for col in ("check", "parameters", "y_d", "y_x", "region", "value", "certified (mid)", "rel. error", "problem"):
        table.add_column(col, overflow="fold")
    for r, pt in rows[:_SHOWN_POINTS]:
        table.add_row(r.check, escape(r.subject), str(pt["y_d"]), str(pt["y_x"]), escape(pt["region"]),
                      "—" if pt["value"] is None else f"{pt['value']:.17g}",
                      f"{(pt['truth_lo'] + pt['truth_hi']) / 2:.17g}",
                      "—" if pt["rel_error"] is None else f"{pt['rel_error']:.3g}", escape(pt["problem"]))
    out.print(table)
    if len(rows) > _SHOWN_POINTS:
        out.print(f"… {len(rows) - _SHOWN_POINTS} more points outside tolerance (all of them: --json)")
