"""``vetdp rappor``: encode values as RAPPOR reports, simulate populations, decode reports against candidates, and
read and write the file formats of Google's reference implementation (google/rappor).

Examples::

    vetdp rappor encode --values urls.txt --clients clients.txt --secret client.key --output reports.npz
    vetdp rappor simulate --num-candidates 1000 --num-reports 1e5 --seed 1 --output reports.npz --truth truth.json
    vetdp rappor decode --reports reports.npz --candidates truth.json --truth truth.json --plot decode.png
    vetdp rappor decode --counts counts.csv --map map.csv --params params.csv          # the reference's files
    vetdp rappor sum-bits --reports reports.csv --output counts.csv                   # its sum_bits
    vetdp rappor hash-candidates --candidates candidates.txt --params params.csv --output map.csv

Every file a command writes carries the parameters it was made with (k, h, number of cohorts, f, p, q, the Bloom
hash and the bit order), so that ``decode`` never decodes with parameters other than the ones that encoded. Reports
files are JSON (``.json``, bit strings), NPZ (``.npz``, packed bits; the format for millions of reports) or CSV
(``.csv``, bit strings, parameters in a first comment line; or, with ``--format reference``, the reference's
``client,cohort,bloom,prr,irr``). The reference's formats carry no hash or bit order: they are MD5 and the
reference's order, and are read so. See docs/rappor.md.

Exit codes: 0 done; 2 bad input (the message names the option or file, the value and the allowed range).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import re
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from vetdp.cli import ExitCode, Integer, Real, output_path, write_output

if TYPE_CHECKING:  # NumPy and rich load when a command runs, not for --help
    import numpy as np
    from rich.console import Console
    from rich.progress import Progress

__all__ = ["rappor", "read_reports", "write_reports", "read_strings", "decode_document", "write_plot",
           "REPORTS_SCHEMA_VERSION", "MAX_CELLS"]

REPORTS_SCHEMA_VERSION = 1
MAX_CELLS = 2**30  # reports × k bits held in memory at once (one byte each as NumPy bools): 1 GiB
CHUNK_ROWS = 1 << 16  # rows encoded / randomized per progress step

# The defaults: h = 2, 64 cohorts, f = 1/2, p = 1/2, q = 3/4 as in the RAPPOR paper's examples and Google's reference
# client; k = 128 bits as in the paper's simulations and the issue's benchmark; vetdp's SHA-256 positions and bit order
DEFAULTS = {"k": 128, "h": 2, "num_cohorts": 64, "f": 0.5, "p": 0.5, "q": 0.75, "hash": "sha256", "bit_order": "vetdp"}
_PARAMS = ("k", "h", "num_cohorts", "f", "p", "q", "hash", "bit_order")
_SHAPE = ("k", "h", "num_cohorts", "hash", "bit_order")
_REFERENCE = {"hash": "md5", "bit_order": "reference"}  # what the reference's formats are
_OPTION = {"k": "--k", "h": "--h", "num_cohorts": "--num-cohorts", "f": "--f", "p": "--p", "q": "--q",
           "hash": "--hash", "bit_order": "--bit-order", "alpha": "--alpha", "num_candidates": "--num-candidates",
           "num_reports": "--num-reports", "zipf_exponent": "--zipf-exponent", "num_extra": "--num-extra",
           "num_decoys": "--num-decoys", "seed": "--seed", "distribution": "--distribution",
           "reports_per_client": "--reports-per-client", "method": "--method", "derivation": "--derivation",
           "preset": "--preset"}
SEED_SECRET_TAG = b"vetdp-rappor-seed-secret-v1"  # --seed without --secret: the master secret is a hash of the seed
# the choices of --hash, --bit-order and --method, spelt here so that --help imports no NumPy (a test checks them
# against vetdp.impl.rappor.HASHES, vetdp.rappor_io.BIT_ORDERS and vetdp.impl.rappor_decoding.DECODE_METHODS)
REPORT_SUFFIXES = (".json", ".npz", ".csv")  # a reports file's format follows its suffix (vetdp.rappor_io's too)
HASH_CHOICES = ("sha256", "md5")
BIT_ORDER_CHOICES = ("vetdp", "reference")
METHOD_CHOICES = ("auto", "all", "split", "paper")


# ----------------------------------------------------------------------------------------------- small helpers

def _fail(message: str) -> None:
    """Exit 2 with ``message`` (library parameter names spelt as this command's options)."""
    text = re.sub(r"(?<![\w-])(" + "|".join(sorted(_OPTION, key=len, reverse=True)) + r")(?==)",
                  lambda m: _OPTION[m.group(1)], message)
    click.echo(f"error: {text}", err=True)
    sys.exit(ExitCode.ERROR)


def _run(fn: Callable[[], Any]) -> Any:
    """Call ``fn``; a ValueError/TypeError from the library (a refused argument or file) exits 2 with its message."""
    try:
        return fn()
    except (ValueError, TypeError, ArithmeticError) as e:
        _fail(str(e))


def _err_console() -> Console:
    from rich.console import Console

    return Console(stderr=True)


def _console() -> Console:
    """Standard output's console (made when a command prints, so that --help loads no rich)."""
    from rich.console import Console

    return Console()


def _escape(text: str) -> str:
    """``text`` with rich's markup characters escaped (values and file names print as they are)."""
    from rich.markup import escape

    return escape(text)


def _table_console(out: Console) -> Console:
    """``out``, or when it is not a terminal (a pipe, a log) a wide console, so that a table keeps every column."""
    from rich.console import Console

    return out if out.is_terminal else Console(width=200, stderr=out.stderr)


def _progress(err: Console) -> Progress:
    """A progress bar on standard error; nothing at all when standard error is not a terminal."""
    from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeElapsedColumn

    return Progress(TextColumn("{task.description}"), BarColumn(), TaskProgressColumn(), TimeElapsedColumn(),
                    console=err, disable=not err.is_terminal, transient=True)


@contextlib.contextmanager
def _phase(bar: Progress, description: str) -> Iterator[None]:
    """One step of unknown length shown as a pulsing bar, completed when the block ends."""
    task = bar.add_task(description, total=None)
    yield
    bar.update(task, total=1, completed=1)


def _fin(x: float) -> float | None:
    """A float for JSON: itself when finite, null otherwise (an estimate the decoder left undefined)."""
    x = float(x)
    return x if math.isfinite(x) else None


# the type and range of each numeric parameter, as an option and as carried by a reports file
_TYPES = {"k": Integer(1, 4096), "h": Integer(1, 64), "num_cohorts": Integer(1, 10**5),
          "f": Real(0, 1, hi_open=True), "p": Real(0, 1), "q": Real(0, 1)}


def _param_options(f: Callable) -> Callable:
    """--k --h --num-cohorts --f --p --q --hash --bit-order --params; default None so that a value carried by an input
    file can be told apart from one given on the command line."""
    opts = [
        click.option("--params", "params_path", type=click.Path(exists=True, dir_okay=False), default=None,
                     help="the reference's params CSV (k,h,m,p,q,f): those parameters, with MD5 positions and the "
                          "reference's bit order unless --hash/--bit-order say otherwise"),
        click.option("--bit-order", "bit_order", type=click.Choice(BIT_ORDER_CHOICES), default=None,
                     help="bit strings: 'vetdp' (character i is Bloom bit i) or 'reference' (most significant "
                          "first, as google/rappor writes them) (default vetdp)"),
        click.option("--hash", "hash_name", type=click.Choice(HASH_CHOICES), default=None,
                     help="Bloom positions: 'sha256' (vetdp's) or 'md5' (the reference's: k <= 256, h <= 16) "
                          "(default sha256)"),
        click.option("--q", type=_TYPES["q"], default=None, help=f"q = Pr[report bit 1 | permanent bit 1], in "
                     f"[0, 1], q > p (default {DEFAULTS['q']})"),
        click.option("--p", type=_TYPES["p"], default=None, help=f"p = Pr[report bit 1 | permanent bit 0], in "
                     f"[0, 1), p < q (default {DEFAULTS['p']})"),
        click.option("--f", type=_TYPES["f"], default=None,
                     help=f"f, the permanent randomized response's noise, in [0, 1) (default {DEFAULTS['f']})"),
        click.option("--num-cohorts", type=_TYPES["num_cohorts"], default=None,
                     help=f"number of cohorts (hash families), in [1, 10^5] (default {DEFAULTS['num_cohorts']})"),
        click.option("--h", type=_TYPES["h"], default=None,
                     help=f"hash functions per Bloom filter, in [1, 64], h <= k (default {DEFAULTS['h']})"),
        click.option("--k", type=_TYPES["k"], default=None,
                     help=f"Bloom filter bits, in [1, 4096] (default {DEFAULTS['k']})"),
    ]
    for opt in opts:
        f = opt(f)
    return f


class _Given:
    """The parameters given for a run: options, then the reference's params file (``--params``) for what the options
    leave out, then what a command implies (e.g. ``--format reference``); each value remembers who gave it."""

    def __init__(self, kw: dict[str, Any]):
        self.values: dict[str, Any] = {}
        self.source: dict[str, str] = {}
        options = {"k": kw.get("k"), "h": kw.get("h"), "num_cohorts": kw.get("num_cohorts"), "f": kw.get("f"),
                   "p": kw.get("p"), "q": kw.get("q"), "hash": kw.get("hash_name"), "bit_order": kw.get("bit_order")}
        for name, v in options.items():
            if v is not None:
                self.values[name], self.source[name] = v, _OPTION[name]
        path = kw.get("params_path")
        if path:
            from vetdp.rappor_io import read_params_csv

            self.imply(_run(lambda: read_params_csv("--params", path)), f"--params={path!r}")
            self.imply(_REFERENCE, f"--params={path!r} (the reference's)", strict=False)

    def imply(self, values: dict[str, Any], source: str, strict: bool = True) -> None:
        """Fill in ``values`` where nothing was given; with ``strict``, a given value that differs is refused."""
        for name, v in values.items():
            if name not in self.values:
                self.values[name], self.source[name] = v, source
            elif strict and self.values[name] != v:
                _fail(f"{self.said(name)} disagrees with {source}, which says {name}: {v!r}")

    def get(self, name: str) -> Any:
        return self.values.get(name)

    def said(self, name: str) -> str:
        """Who gave ``name`` and what: ``--p=0.25`` for an option, ``--params='p.csv' (p=0.25)`` for a file."""
        source, value = self.source[name], self.values[name]
        return f"{source}={value!r}" if source == _OPTION.get(name) else f"{source} ({name}: {value!r})"


def _resolve(given: _Given, carried: dict[str, Any] | None, source: str, need: Sequence[str] = _PARAMS,
             defaults: dict[str, Any] | None = None) -> dict[str, Any]:
    """The parameters to use: those ``carried`` by an input file, which a given value must equal; the defaults where
    neither says. Decoding with parameters other than the encoding's is refused (exit 2)."""
    defaults = {**DEFAULTS, **(defaults or {})}
    out: dict[str, Any] = {}
    for name in need:
        g, c = given.get(name), (carried or {}).get(name)
        if g is not None and c is not None and g != c:
            _fail(f"{given.said(name)} disagrees with {source}, which was made with {name}={c!r}; leave it out "
                  f"or give {c!r}")
        out[name] = g if g is not None else c if c is not None else defaults[name]
    if "h" in out and "k" in out and out["h"] > out["k"]:
        _fail(f"--h={out['h']} must be in [1, {out['k']}] (at most --k={out['k']} hash functions)")
    if "p" in out and "q" in out and not out["p"] < out["q"]:
        _fail(f"--p={out['p']!r} must be < --q={out['q']!r} (0 <= p < q <= 1)")
    if out.get("hash") == "md5" and "k" in out and (out["k"] > 256 or out["h"] > 16):
        _fail(f"--k={out['k']}, --h={out['h']}: --hash md5 (one MD5 byte per position) needs k in [1, 256] and h in "
              "[1, 16]")
    return out


def _check_cells(option: str, rows: int, k: int) -> None:
    if rows * k > MAX_CELLS:
        _fail(f"{option}={rows} with --k={k} must satisfy reports × k <= {MAX_CELLS} (2^30 bits in memory, 1 GiB); "
              f"here {rows * k}")


def _epsilons(prm: dict[str, Any], derivation: str = "vetdp") -> tuple[float, float]:
    """(ε₁, ε∞) of the mechanism's privacy maps: one report, and all reports of one value by one client over every
    run with its secret (inf when f = 0: without a permanent response the loss grows with the number of reports)."""
    from vetdp.core.measurement import BitVectorDomain, DiscreteDistance
    from vetdp.impl.rappor import make_rappor_report
    from vetdp.impl.rappor_client import client_epsilons

    if prm["f"] == 0:  # no permanent response: repeated reports of one value have no bound independent of their number
        dom = BitVectorDomain(max_weight=prm["h"], length=prm["k"])
        return float(make_rappor_report(dom, DiscreteDistance(), prm["f"], prm["p"], prm["q"]).map(1)), math.inf
    return client_epsilons(prm["k"], prm["h"], prm["f"], prm["p"], prm["q"], derivation)


def _check_output(option: str, path: str | None, suffixes: Sequence[str], dash: bool = True) -> None:
    """Refuse an output file whose suffix is not one of ``suffixes`` before any work (the suffix picks the format)."""
    if path is None or (dash and path == "-"):
        return
    if Path(path).suffix.lower() not in suffixes:
        listed = ", ".join(suffixes[:-1]) + (" or " if len(suffixes) > 1 else "") + suffixes[-1]
        _fail(f"{option}={path!r} must end in {listed} (the suffix chooses the format)"
              + (", or be '-' for standard output" if dash else ""))


# ------------------------------------------------------------------------------------------------ file formats

def read_strings(option: str, path: str, key: str) -> list[str]:
    """Strings from ``path``: a ``.json`` file holding a list of strings, or an object whose ``key`` is one; any
    other file: one string per line (UTF-8, line endings removed). Refused (exit 2): unreadable, malformed, empty,
    or holding a blank line or an empty string (never a value anybody meant)."""
    from vetdp.rappor_io import read_lines

    if not path.lower().endswith(".json"):
        return _run(lambda: read_lines(option, path, key))
    doc = _read_json_file(option, path)
    if isinstance(doc, dict):
        if key not in doc:
            _fail(f"{option}={path!r}: a JSON object must have a {key!r} list (keys found: {sorted(doc)})")
        doc = doc[key]
    if not isinstance(doc, list) or not all(isinstance(v, str) for v in doc):
        _fail(f"{option}={path!r}: expected a JSON list of strings (or an object with a {key!r} list)")
    if not doc:
        _fail(f"{option}={path!r} holds no {key}; it must hold at least one")
    blank = next((i for i, v in enumerate(doc) if not v.strip()), None)
    if blank is not None:
        _fail(f"{option}={path!r}: entry {blank} is blank; an empty string is never a value")
    return doc


def _read_ints(option: str, path: str, lo: int, hi: int) -> list[int]:
    """Integers in [lo, hi] from a ``.json`` list or one per line."""
    if path.lower().endswith(".json"):
        doc = _read_json_file(option, path)
        raw = doc.get("cohorts") if isinstance(doc, dict) else doc
        if not isinstance(raw, list):
            _fail(f"{option}={path!r}: expected a JSON list of integers")
    else:
        raw = read_strings(option, path, "cohorts")
    out = []
    for i, v in enumerate(raw):
        try:
            n = int(v.strip()) if isinstance(v, str) else v
        except ValueError:
            n = None
        if isinstance(n, bool) or not isinstance(n, int) or not lo <= n <= hi:
            _fail(f"{option}={path!r}: entry {i} = {v!r:.60} must be an integer in [{lo}, {hi}]")
        out.append(n)
    return out


def write_reports(path: str, params: dict[str, Any], cohorts: np.ndarray, bloom: np.ndarray | None,
                  reports: np.ndarray | None, extra: dict[str, Any] | None = None, command: str = "rappor encode",
                  layout: str = "vetdp", clients: Sequence[Any] | None = None, prr: np.ndarray | None = None) -> None:
    """Write a reports file (:func:`vetdp.rappor_io.write_reports_file`: the format from the suffix; ``-``: JSON on
    standard output); a refused file exits 2."""
    from vetdp.rappor_io import write_reports_file

    text = _run(lambda: write_reports_file("--output", path, {**params, **(extra or {})}, cohorts, bloom, reports,
                                           command, layout, clients, prr))
    if text is not None:
        click.echo(text)


def read_reports(option: str, path: str, bit_order: str = "vetdp",
                 k: int | None = None) -> tuple[dict[str, Any], np.ndarray, np.ndarray]:
    """(parameters carried by the file, cohorts (n,) int64, randomized reports (n, k) bool in Bloom bit order) from
    any reports file (:func:`vetdp.rappor_io.read_reports_file`); exit 2 when it is refused."""
    from vetdp.rappor_io import read_reports_file

    params, cohorts, reports, _ = _run(lambda: read_reports_file(option, path, bit_order, k))
    _check_carried(f"{option}={path!r}", params)
    return {n: params[n] for n in (*_PARAMS, "format") if n in params}, cohorts, reports


def _check_carried(source: str, params: dict[str, Any]) -> None:
    """Each parameter a reports file carries is of the type and in the range of its option (exit 2 naming the
    file, the parameter and the rule otherwise)."""
    choices = {"hash": HASH_CHOICES, "bit_order": BIT_ORDER_CHOICES}
    for name, value in params.items():
        if name in choices and value not in choices[name]:
            _fail(f"{source}: parameters.{name} = {value!r:.60} must be one of {list(choices[name])}")
        if name not in _TYPES:
            continue
        integer = isinstance(_TYPES[name], Integer)
        if isinstance(value, bool) or not isinstance(value, int if integer else (int, float)):
            _fail(f"{source}: parameters.{name} = {value!r:.60} must be {'an integer' if integer else 'a number'} "
                  f"(not {type(value).__name__})")
        try:
            _TYPES[name].convert(value, None, None)
        except click.BadParameter as e:
            _fail(f"{source}: parameters.{name} = {value!r}: {e.message}")


def _read_json_file(option: str, path: str) -> Any:
    """The JSON value of the file (:func:`vetdp.inputs.read_json`: UTF-8, size, strict JSON); exit 2 otherwise."""
    from vetdp.inputs import InputError, read_json

    try:
        return read_json(path, f"{option}={path!r}")
    except InputError as e:
        _fail(str(e))


def _read_truth(option: str, path: str) -> dict[str, float]:
    """value -> true number of reports, from a truth file written by ``simulate --truth``."""
    doc = _read_json_file(option, path)
    counts = doc.get("true_counts") if isinstance(doc, dict) else None
    if not isinstance(counts, dict) or not all(isinstance(v, int) and v >= 0 for v in counts.values()):
        _fail(f"{option}={path!r}: expected an object with 'true_counts' mapping each value to a count >= 0 "
              "(as written by vetdp rappor simulate --truth)")
    return counts


# ------------------------------------------------------------------------------------------ decode: table, JSON

def decode_document(result: Any, params: dict[str, Any], alpha: float, truth: dict[str, int] | None,
                    score: dict[str, Any] | None, command: str, seconds: float) -> dict[str, Any]:
    """The JSON document of a decode (schema_version 1): ``parameters`` (k, h, num_cohorts, f, p, q, hash, bit_order,
    alpha), ``method`` (the decoder that ran: all, split or paper), ``num_reports``, ``threshold`` (the corrected
    p-value cut, alpha over the candidates tested), counts of candidates / selected / significant, and
    ``candidates``: one object per candidate in input order with ``value``, ``estimate`` (reports), ``std_error``,
    ``interval`` [lo, hi] at level 1 − alpha, ``p_value``, ``selected`` (in the fitted model), ``significant``, and
    ``true_count`` when the truth is known; ``score`` (recall, false discoveries, coverage) then too. A number the
    decoder left undefined (NaN) is null."""
    import numpy as np

    cands = []
    for i, value in enumerate(result.candidates):
        lo, hi = result.confidence_intervals[i]
        row = {"value": value if isinstance(value, str) else repr(value), "estimate": _fin(result.estimates[i]),
               "std_error": _fin(result.std_errors[i]), "interval": [_fin(lo), _fin(hi)],
               "p_value": _fin(result.p_values[i]), "selected": bool(result.selected[i]),
               "significant": bool(result.significant[i])}
        if truth is not None:
            row["true_count"] = int(truth.get(value, 0))
        cands.append(row)
    return {"schema_version": 1, "command": command, "parameters": {**params, "alpha": alpha},
            "method": result.method, "num_reports": int(result.num_reports), "threshold": _fin(result.threshold),
            "num_candidates": len(cands), "num_selected": int(np.sum(result.selected)),
            "num_significant": int(np.sum(result.significant)), "seconds": seconds,
            "candidates": cands, "score": score}


def _print_decode(out: Console, doc: dict[str, Any], top: int) -> None:
    rows = sorted((c for c in doc["candidates"] if c["significant"]), key=lambda c: -(c["estimate"] or 0.0))
    level = 1 - doc["parameters"]["alpha"]
    truth = any("true_count" in c for c in doc["candidates"])
    out = _table_console(out)
    kept = "in the model" if doc.get("method") == "all" else "kept by the lasso"
    from rich.table import Table

    table = Table(title=f"RAPPOR decode ({doc.get('method', 'split')}): {doc['num_significant']} significant of "
                        f"{doc['num_candidates']} candidates ({doc['num_selected']} {kept}), {doc['num_reports']} "
                        f"reports, p-value cut {doc['threshold']:.3g}")
    width = min(40, max((len(c["value"]) for c in rows[:top]), default=9))
    table.add_column("candidate", min_width=width, overflow="fold")
    for col in ("estimate", "s.e.", f"{level:.0%} interval", "p-value", "share", *(("true",) if truth else ())):
        table.add_column(col, justify="right", no_wrap=True)
    n = doc["num_reports"]

    def num(x: float | None, fmt: str) -> str:
        if x == 0 and fmt.endswith("e"):
            return "< 1e-300"  # a p-value below the smallest double
        return "—" if x is None else format(x, fmt)

    if not rows:
        out.print(f"no candidate is significant at alpha = {doc['parameters']['alpha']} (p-value cut "
                  f"{doc['threshold']:.3g}; {doc['num_selected']} {kept} of {doc['num_candidates']})")
    for c in rows[:top]:
        lo, hi = c["interval"]
        table.add_row(_escape(c["value"][:80]), num(c["estimate"], ".1f"), num(c["std_error"], ".1f"),
                      f"[{num(lo, '.1f')}, {num(hi, '.1f')}]", num(c["p_value"], ".2e"),
                      num(None if c["estimate"] is None else c["estimate"] / n, ".2%"),
                      *((str(c.get("true_count", 0)),) if truth else ()))
    if rows and top:
        out.print(table)
    if len(rows) > top:
        out.print(f"… {len(rows) - top} more significant candidates (all of them: --json)")
    if doc.get("score"):
        s = doc["score"]
        out.print("score against the truth: " + ", ".join(f"{k} = {_show(v)}" for k, v in s.items()))


def _show(v: Any) -> str:
    return f"{v:.4g}" if isinstance(v, float) else str(v)


# ------------------------------------------------------------------------------------------------------- plot

def _prepare_plot(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    from vetdp.cli import _prepare_output

    value = _prepare_output(ctx, param, value)
    if value is not None:
        if value == "-":
            raise click.BadParameter("'-' is not a file: the plot is written as PNG and SVG files", ctx=ctx,
                                     param=param)
        if Path(value).suffix.lower() not in ("", ".png", ".svg"):
            raise click.BadParameter(f"{value!r} must end in .png, .svg or have no suffix (both files are written)",
                                     ctx=ctx, param=param)
    return value


def _plot_option(f: Callable) -> Callable:
    return click.option("--plot", "plot_path", type=click.Path(dir_okay=False), callback=_prepare_plot,
                        help="write the estimates with their intervals as PATH.png and PATH.svg (against the true "
                             "frequencies when the truth is known)")(f)


PLOT_POINTS = 60  # candidates drawn (the largest by truth or estimate): enough to read, small files


def write_plot(path: str, doc: dict[str, Any]) -> tuple[Path, Path]:
    """Write PATH.png and PATH.svg (matplotlib, Agg) of a decode document; returns both paths.

    With the truth: estimated against true share of reports, interval bars at level 1 − alpha, the diagonal, the
    significant candidates marked; without it: the estimates with their intervals, largest first."""
    import matplotlib
    import numpy as np

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    base = Path(path)
    png, svg = base.with_suffix(".png"), base.with_suffix(".svg")
    n = doc["num_reports"]
    cands = [c for c in doc["candidates"] if c["estimate"] is not None]
    truth = any("true_count" in c for c in cands)
    level = 1 - doc["parameters"]["alpha"]
    fig, ax = plt.subplots(figsize=(7, 5))
    groups = (("significant", "tab:blue", "o", lambda c: c["significant"]),
              ("in the model, not significant", "tab:orange", "o",
               lambda c: c["selected"] and not c["significant"]),
              ("not in the model (estimate 0)", "tab:gray", "x", lambda c: not c["selected"]))
    if truth:
        cands.sort(key=lambda c: -max(c["true_count"], c["estimate"]))
        shown = cands[:PLOT_POINTS]
        for label, colour, marker, member in groups:
            pts = [c for c in shown if member(c)]
            if not pts:
                continue
            x = np.array([c["true_count"] for c in pts]) / n
            y = np.array([c["estimate"] for c in pts]) / n
            lo = np.array([c["interval"][0] if c["interval"][0] is not None else c["estimate"] for c in pts]) / n
            hi = np.array([c["interval"][1] if c["interval"][1] is not None else c["estimate"] for c in pts]) / n
            ax.errorbar(x, y, yerr=[y - lo, hi - y], fmt=marker, ms=3, color=colour, ecolor=colour, alpha=0.8,
                        capsize=2, label=label)
        top = max(max(c["true_count"] for c in shown), max(c["interval"][1] or 0 for c in shown)) / n
        ax.plot([0, top], [0, top], color="black", lw=0.8, ls="--", label="estimate = truth")
        ax.set_xlabel("true share of reports")
        ax.set_ylabel(f"estimated share ({level:.0%} interval)")
        ax.set_title(f"RAPPOR decode: {len(shown)} largest of {len(doc['candidates'])} candidates, {n} reports")
        ax.legend(loc="upper left", fontsize=8)
    else:
        cands.sort(key=lambda c: -c["estimate"])
        shown = cands[:PLOT_POINTS]
        r = np.arange(len(shown))
        y = np.array([c["estimate"] for c in shown]) / n
        lo = np.array([c["interval"][0] if c["interval"][0] is not None else c["estimate"] for c in shown]) / n
        hi = np.array([c["interval"][1] if c["interval"][1] is not None else c["estimate"] for c in shown]) / n
        for label, colour, marker, member in groups:
            idx = np.array([i for i, c in enumerate(shown) if member(c)], dtype=np.int64)
            if idx.size:
                ax.errorbar(r[idx], y[idx], yerr=[y[idx] - lo[idx], hi[idx] - y[idx]], fmt=marker, ms=3,
                            color=colour, ecolor=colour, capsize=2, label=label)
        ax.legend(loc="upper right", fontsize=8)
        ax.axhline(0, color="black", lw=0.6)
        ax.set_xticks(r)
        ax.set_xticklabels([c["value"][:18] for c in shown], rotation=90, fontsize=6)
        ax.set_ylabel(f"estimated share ({level:.0%} interval)")
        ax.set_title(f"RAPPOR decode: {len(shown)} largest estimates of {len(doc['candidates'])} candidates")
    fig.tight_layout()
    try:
        fig.savefig(png, dpi=110)
        fig.savefig(svg)
    except OSError as e:
        raise click.UsageError(f"--plot={path!r}: cannot write: {e.strerror or e}") from None
    finally:
        plt.close(fig)
    return png, svg


# --------------------------------------------------------------------------------------------------- commands

@click.group()
def rappor() -> None:
    """RAPPOR (Erlingsson, Pihur, Korolova 2014): encode strings as randomized Bloom-filter reports, simulate
    populations with known truth, decode reports against candidate strings; read and write the file formats of
    Google's reference implementation. Guarantees: docs/rappor.md."""


def _format_option(f: Callable) -> Callable:
    return click.option("--format", "layout", type=click.Choice(["vetdp", "reference"]), default="vetdp",
                        show_default=True,
                        help="with a .csv --output: 'reference' writes the reference's client,cohort,bloom,prr,irr "
                             "(MD5 positions and its bit order, implied)")(f)


def _imply_layout(given: _Given, layout: str, output: str | None) -> None:
    """--format reference: the reference's CSV, hence MD5 and its bit order (a contrary option is refused)."""
    if layout == "reference":
        if output is None or output == "-" or Path(output).suffix.lower() != ".csv":
            _fail(f"--format reference writes the reference's reports CSV: --output={output!r} must end in .csv")
        given.imply(_REFERENCE, "--format reference (the reference's reports CSV)")


def _write_params_csv(path: str | None, prm: dict[str, Any]) -> None:
    from vetdp.rappor_io import params_csv_text, write_text_file

    if path:
        text = _run(lambda: write_text_file("--params-output", path, params_csv_text(prm)))
        if text is not None:
            click.echo(text, nl=False)


def _params_output_option(f: Callable) -> Callable:
    return output_path("--params-output", "params_output",
                       help="also write the parameters as the reference's params CSV (k,h,m,p,q,f)")(f)


def _master_secret(secret_path: str | None, seed: int | None, err: Console) -> tuple[bytes, str]:
    """The master secret the clients' permanent responses are derived from, and how it was obtained: the --secret
    file (created with 32 bytes from the OS when missing), else a hash of --seed (reproducible, not private)."""
    from vetdp.impl.rappor_client import MIN_SECRET_BYTES, new_secret
    from vetdp.rappor_io import read_secret

    if secret_path:
        secret, created = _run(lambda: read_secret("--secret", secret_path, True, MIN_SECRET_BYTES, new_secret))
        if created:
            err.print(_escape(f"created the secret file {secret_path} (32 random bytes, readable by you only): keep "
                             "it; every later run must use it"))
        return secret, f"--secret={secret_path!r}"
    if seed is None:
        _fail("--randomize needs --secret FILE: the clients' secret, from which each permanent response is derived so "
              "that every run reports a value through the same one (the file is created with 32 random bytes if it "
              "does not exist), or --seed N for a reproducible test run (not private)")
    return hashlib.sha256(SEED_SECRET_TAG + seed.to_bytes(8, "big")).digest(), f"--seed={seed} (not private)"


@rappor.command()
@click.option("--values", "values_path", type=click.Path(exists=True, dir_okay=False), required=True,
              help="the values: one per line (UTF-8), or a .json list of strings (or an object with 'values')")
@click.option("--clients", "clients_path", type=click.Path(exists=True, dir_okay=False), default=None,
              help="client ids, one per line (or .json list), one per value: the cohort is assign_cohort(id) unless "
                   "--cohorts gives it, and a client's permanent response of a value is derived from its secret")
@click.option("--cohorts", "cohorts_path", type=click.Path(exists=True, dir_okay=False), default=None,
              help="cohorts in [0, num_cohorts), one per line (or .json list), one per value (with --clients: one "
                   "cohort per client, as the reference's input); default: assign_cohort of the client id (row i "
                   "is client i without --clients)")
@_param_options
@click.option("--randomize", is_flag=True,
              help="also randomize (permanent then instantaneous randomized response); implied by --f/--p/--q, "
                   "--secret and --format reference")
@click.option("--secret", "secret_path", type=click.Path(dir_okay=False), default=None,
              help="the clients' master secret file (created with 32 random bytes if missing): each client's "
                   "permanent response of a value is derived from it, the same in every run")
@click.option("--derivation", type=click.Choice(["vetdp", "reference"]), default="vetdp", show_default=True,
              help="how the permanent response is derived from the secret: vetdp's (any k) or the reference "
                   "client's (k <= 32; f rounded up to a multiple of 1/128)")
@click.option("--keep-bloom", is_flag=True,
              help="with --randomize, also write the true Bloom filters (and, in the reference's layout, the "
                   "permanent responses): for tests only, they are not private")
@click.option("--seed", type=Integer(0, 2**63 - 1), default=None,
              help="randomize from a seeded stream, and without --secret derive the secret from it (reproducible; "
                   "NOT private, for tests); default: the OS CSPRNG")
@_format_option
@output_path("--output", "output", suffixes=REPORT_SUFFIXES,
             help="the reports file: .json, .npz (big outputs) or .csv; '-': JSON on standard output")
@_params_output_option
def encode(values_path: str, clients_path: str | None, cohorts_path: str | None, randomize: bool,
           secret_path: str | None, derivation: str, keep_bloom: bool, seed: int | None, layout: str,
           output: str | None, params_output: str | None, **kw: Any) -> None:
    """Values → Bloom filters (k bits, h hashes, per cohort), and with --randomize the RAPPOR reports."""
    import numpy as np

    from vetdp.impl.rappor import assign_cohorts, bloom_filter_matrix

    if output is None:
        raise click.UsageError("give --output FILE (.json, .npz, .csv) or --output - (JSON on standard output)")
    _check_output("--output", output, (".json", ".npz", ".csv"))
    _check_output("--params-output", params_output, (".csv",))
    randomize = (randomize or any(kw.get(x) is not None for x in ("f", "p", "q")) or layout == "reference"
                 or secret_path is not None)
    if keep_bloom and not randomize:
        raise click.UsageError("--keep-bloom applies with --randomize (without it only Bloom filters are written)")
    if seed is not None and not randomize:
        raise click.UsageError("--seed applies with --randomize (encoding alone is deterministic)")
    given = _Given(kw)
    _imply_layout(given, layout, output)
    prm = _resolve(given, None, "", _PARAMS if randomize else _SHAPE)
    eps = _run(lambda: _epsilons(prm, derivation)) if randomize else None  # refuses bad (f, p, q) before work
    values = read_strings("--values", values_path, "values")
    n, m = len(values), prm["num_cohorts"]
    _check_cells("--values", n, prm["k"])
    err = _err_console()
    out = err if output == "-" else _console()
    master, secret_source = _master_secret(secret_path, seed, err) if randomize else (b"", "")
    start = time.perf_counter()
    with _progress(err) as bar:
        if clients_path:
            clients: Sequence[Any] = read_strings("--clients", clients_path, "clients")
            if len(clients) != n:
                _fail(f"--clients={clients_path!r} holds {len(clients)} ids for {n} values; give one per value")
        else:
            clients = range(n)
        if cohorts_path:
            cohorts = np.array(_read_ints("--cohorts", cohorts_path, 0, m - 1), dtype=np.int64)
            if len(cohorts) != n:
                _fail(f"--cohorts={cohorts_path!r} holds {len(cohorts)} cohorts for {n} values; give one per value")
            if clients_path:  # as the reference's input (client, cohort, value): one cohort per client
                seen: dict[Any, int] = {}
                for i, (c, j) in enumerate(zip(clients, cohorts.tolist(), strict=True)):
                    if seen.setdefault(c, j) != j:
                        _fail(f"--cohorts={cohorts_path!r}: line {i + 1} puts client {str(c)[:40]!r} in cohort {j}, "
                              f"an earlier line in cohort {seen[c]}; a client has one cohort")
        else:
            task = bar.add_task("cohorts", total=n)
            cohorts = np.empty(n, dtype=np.int64)
            for lo in range(0, n, CHUNK_ROWS):
                hi = min(n, lo + CHUNK_ROWS)
                cohorts[lo:hi] = _run(lambda lo=lo, hi=hi: assign_cohorts(clients[lo:hi], m))
                bar.advance(task, hi - lo)
        # one permanent response per distinct (client, value), derived from the client's secret: the same in this
        # run and every later one (the promise ε∞ rests on); without --clients every row is its own client
        index: dict[tuple[Any, str], int] = {}
        row_of = np.array([index.setdefault((c, v), len(index)) for c, v in zip(clients, values, strict=True)],
                          dtype=np.int64)
        first = np.unique(row_of, return_index=True)[1]  # labels count up from 0 in order of appearance
        # each distinct (cohort, value) is hashed once, in chunks (the progress steps)
        pair_index: dict[tuple[int, str], int] = {}
        pair_of = np.fromiter((pair_index.setdefault((c, values[i]), len(pair_index))
                               for c, i in zip(cohorts[first].tolist(), first.tolist(), strict=True)),
                              dtype=np.int64, count=len(first))
        pairs = list(pair_index)
        table = np.empty((len(pairs), prm["k"]), dtype=bool)
        task = bar.add_task("Bloom filters", total=len(pairs))
        for lo in range(0, len(pairs), CHUNK_ROWS):
            chunk = pairs[lo:lo + CHUNK_ROWS]
            table[lo:lo + len(chunk)] = _run(lambda chunk=chunk: bloom_filter_matrix(
                [v for _, v in chunk], np.array([c for c, _ in chunk], dtype=np.int64), prm["k"], prm["h"],
                prm["hash"]))
            bar.advance(task, len(chunk))
        bloom = table[pair_of]
        reports = permanent = None
        if randomize:
            ids = [clients[i] for i in first.tolist()]
            permanent, reports = _randomize(bar, bloom, ids, row_of, prm, master, derivation, seed)
    seconds = time.perf_counter() - start
    keep = not randomize or keep_bloom
    extra = {"randomized": randomize}
    if randomize:
        extra |= {"derivation": derivation, "secret": "seed" if secret_path is None else "file"}
    write_reports(output, prm, cohorts, bloom[row_of] if keep else None, reports, extra, "rappor encode", layout,
                  list(clients), permanent[row_of] if (keep_bloom and permanent is not None) else None)
    _write_params_csv(params_output, prm)
    summary = f"{n} values ({len(first)} distinct client-value pairs) in {len(np.unique(cohorts))} cohorts → "
    summary += f"{'reports' if randomize else 'Bloom filters'} of k={prm['k']} bits, h={prm['h']}, {prm['hash']}"
    if eps is not None:
        eps1, eps_inf = eps
        summary += f"; f={prm['f']} p={prm['p']} q={prm['q']}: ε₁ = {eps1:.6g} per report; ε∞ = {eps_inf:.6g} over "
        summary += f"all reports of one value by one client, in every run with the secret of {secret_source}"
    out.print(_escape(summary + f"; {seconds:.2f} s"))


def _randomize(bar: Progress, bloom: np.ndarray, ids: list[Any], row_of: np.ndarray, prm: dict[str, Any],
               master: bytes, derivation: str, seed: int | None) -> tuple[np.ndarray, np.ndarray]:
    """(permanent, reports): the permanent response of every distinct (client, value) row of ``bloom`` derived from
    the client's key under ``master`` (client ``ids[i]`` for row i), then an instantaneous response per report
    (``row_of`` maps reports to those rows) from the OS CSPRNG, or --seed's stream; in chunks with progress."""
    import numpy as np

    from vetdp.impl.rappor import rappor_instantaneous_batch
    from vetdp.impl.rappor_client import client_keys, derived_permanent_batch
    from vetdp.sampling import SeededSource, use_source

    distinct = list(dict.fromkeys(ids))
    keys = dict(zip(distinct, _run(lambda: client_keys(master, distinct)), strict=True))
    permanent = np.empty_like(bloom)
    task = bar.add_task("permanent randomized response (from the secret)", total=len(bloom))
    for lo in range(0, len(bloom), CHUNK_ROWS):
        chunk = bloom[lo:lo + CHUNK_ROWS]
        chunk_keys = [keys[i] for i in ids[lo:lo + CHUNK_ROWS]]
        permanent[lo:lo + len(chunk)] = _run(lambda c=chunk, ck=chunk_keys: derived_permanent_batch(
            ck, c, prm["f"], derivation))
        bar.advance(task, len(chunk))
    ctx = use_source(SeededSource(seed)) if seed is not None else contextlib.nullcontext()
    with ctx:
        reports = np.empty((len(row_of), bloom.shape[1]), dtype=bool)
        task = bar.add_task("instantaneous randomized response", total=len(row_of))
        for lo in range(0, len(row_of), CHUNK_ROWS):
            chunk = permanent[row_of[lo:lo + CHUNK_ROWS]]
            reports[lo:lo + len(chunk)] = _run(lambda c=chunk: rappor_instantaneous_batch(c, prm["p"], prm["q"]))
            bar.advance(task, len(chunk))
    return permanent, reports


_ALPHA = Real(0, 1, lo_open=True, hi_open=True)


def _decode_and_report(counts: np.ndarray, sizes: np.ndarray, candidates: list[str], design: Any,
                       prm: dict[str, Any], alpha: float, method: str, truth: dict[str, int] | None,
                       json_path: str | None, plot_path: str | None, top: int, command: str) -> dict[str, Any]:
    """Decode the bit counts, score against the truth when known, print the table, write --json and --plot; the
    document."""
    from vetdp.impl.rappor_decoding import decode_counts

    err = _err_console()
    start = time.perf_counter()
    with _progress(err) as bar, _phase(bar, f"decoding {int(sizes.sum())} reports against {len(candidates)} "
                                            "candidates (design matrix, least squares)"):
        result = _run(lambda: decode_counts(counts, sizes, candidates, k=prm["k"], h=prm["h"], f=prm["f"],
                                            p=prm["p"], q=prm["q"], alpha=alpha, hash=prm["hash"], design=design,
                                            method=method))
    seconds = time.perf_counter() - start
    score = _score(result, truth) if truth is not None else None
    doc = decode_document(result, prm, alpha, truth, score, command, seconds)
    _print_decode(err if json_path == "-" else _console(), doc, top)
    if json_path:
        write_output("--json", json_path, json.dumps(doc, indent=1, allow_nan=False))
    if plot_path:
        write_plot(plot_path, doc)
    return doc


def _truth_of(sim: Any) -> dict[str, int]:
    """value -> true number of reports: every candidate (decoys 0) and every extra (non-candidate) string."""
    truth = {str(c): int(n) for c, n in zip(sim.candidates, sim.true_counts, strict=True)}
    truth.update({str(c): int(n) for c, n in zip(sim.extra_values, sim.extra_counts, strict=True)})
    return truth


def _score(result: Any, truth: dict[str, int]) -> dict[str, Any]:
    """The decoding module's score (recall, false discoveries, coverage) of ``result`` against ``truth``."""
    import numpy as np

    from vetdp.impl.rappor_decoding import RapporSimulation, score_decode

    cands = tuple(result.candidates)
    counts = np.array([int(truth.get(c, 0)) for c in cands], dtype=np.int64)
    # score_decode reads the candidates and their true counts only; the simulation's reports are not needed
    sim = RapporSimulation(cands, counts, (), np.zeros(0, dtype=np.int64), np.zeros((0, 1), dtype=bool),
                           np.zeros(0, dtype=np.int64), {})
    s = _run(lambda: score_decode(result, sim))
    return {"present": s.present, "found": s.found, "recall": _fin(s.recall), "absent": s.absent,
            "false_discoveries": s.false_discoveries, "significant": s.significant,
            "false_discovery_proportion": _fin(s.false_discovery_proportion), "selected": s.selected,
            "covered": s.covered, "coverage": _fin(s.coverage)}


def _check_candidates(option: str, path: str, candidates: list[str]) -> None:
    seen: set[str] = set()
    for i, c in enumerate(candidates):
        if c in seen:
            _fail(f"{option}={path!r}: candidate {i} = {c[:60]!r} appears twice; every candidate must be distinct")
        seen.add(c)



def _method_option(f: Callable) -> Callable:
    return click.option("--method", type=click.Choice(METHOD_CHOICES), default="auto", show_default=True,
                        help="auto: least squares on every candidate when they fit in a quarter of the rows, else "
                             "a lasso screen on a third of the cohorts; all; split; paper (the paper's, for "
                             "comparison: its intervals and tests have no stated rate)")(f)


def _read_counts(path: str, given: _Given) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    """The reference's counts CSV: its shape gives k and the number of cohorts (options must agree), it is MD5."""
    from vetdp.rappor_io import read_counts_csv

    try:
        with open(path, encoding="utf-8") as fh:
            rows = [line for line in fh.read().splitlines() if line.strip()]
    except (OSError, UnicodeDecodeError) as e:
        _fail(f"--counts={path!r}: cannot read: {getattr(e, 'strerror', None) or e}")
    if not rows:
        _fail(f"--counts={path!r} is empty; the counts CSV has one row per cohort")
    carried = {"k": len(rows[0].split(",")) - 1, "num_cohorts": len(rows), **_REFERENCE}
    for name in ("k", "num_cohorts"):
        if given.get(name) is not None and given.get(name) != carried[name]:
            _fail(f"{given.said(name)} disagrees with --counts={path!r}, whose shape says "
                  f"{name}={carried[name]!r} ({'a row holds k + 1 values' if name == 'k' else 'one row per cohort'})")
    counts, sizes = _run(lambda: read_counts_csv("--counts", path, max(carried["k"], 1), carried["num_cohorts"]))
    return counts, sizes, carried


@rappor.command("decode")
@click.option("--reports", "reports_path", type=click.Path(exists=True, dir_okay=False), default=None,
              help="the reports: a file of 'vetdp rappor encode --randomize' or 'simulate' (.json, .npz, .csv), or "
                   "the reference's reports CSV (client,cohort,bloom,prr,irr)")
@click.option("--counts", "counts_path", type=click.Path(exists=True, dir_okay=False), default=None,
              help="instead of --reports: the reference's counts CSV (sum_bits: per cohort its reports, then one "
                   "count per bit); give --params or --f, --p, --q")
@click.option("--candidates", "candidates_path", type=click.Path(exists=True, dir_okay=False), default=None,
              help="candidate strings: one per line, or a .json list (or object with 'candidates', e.g. a truth file)")
@click.option("--map", "map_path", type=click.Path(exists=True, dir_okay=False), default=None,
              help="instead of --candidates: the reference's map CSV (hash_candidates), candidates with their Bloom "
                   "positions; with --reports they must be the reports' hash's positions")
@_param_options
@_method_option
@click.option("--alpha", type=_ALPHA, default=0.05, show_default=True,
              help="intervals at level 1 − alpha; significance at alpha, corrected for the candidates tested")
@click.option("--truth", "truth_path", type=click.Path(exists=True, dir_okay=False), default=None,
              help="a truth file written by 'simulate --truth': adds true counts, the score and the truth plot")
@click.option("--top", type=Integer(0, 10**6), default=30, show_default=True,
              help="significant candidates shown in the table (all of them in --json)")
@output_path("--json", "json_path", help="write the decode as JSON (schema_version 1); '-': standard output")
@_plot_option
def decode_command(reports_path: str | None, counts_path: str | None, candidates_path: str | None,
                   map_path: str | None, method: str, alpha: float, truth_path: str | None, top: int,
                   json_path: str | None, plot_path: str | None, **kw: Any) -> None:
    """Reports (or bit counts) + candidates (or a map) → estimated counts, standard errors, intervals and p-values.

    The parameters are those the input carries (an option that disagrees is refused); a file without them takes the
    options, --params, or the defaults. The reference's files are MD5 and its bit order."""
    import numpy as np

    from vetdp.impl.rappor_decoding import bit_counts, candidate_design_sparse
    from vetdp.rappor_io import map_mismatch, read_map_csv

    if (reports_path is None) == (counts_path is None):
        raise click.UsageError("give --reports FILE or --counts FILE (the reference's counts CSV), one of them")
    if (candidates_path is None) == (map_path is None):
        raise click.UsageError("give --candidates FILE or --map FILE (the reference's map CSV), one of them")
    given = _Given(kw)
    if reports_path:
        order, width = given.get("bit_order") or DEFAULTS["bit_order"], given.get("k")
        carried, cohorts, reports = read_reports("--reports", reports_path, order, width)
        source = f"--reports={reports_path!r}"
        missing = [_OPTION[n] for n in ("num_cohorts", "f", "p", "q") if given.get(n) is None]
        if carried.get("format") == "reference" and missing:
            _fail(f"{source} is the reference's reports CSV, which carries no parameters: give --params FILE (the "
                  f"reference's params CSV) or {', '.join(missing)}")
        prm = _resolve(given, carried, source)
        if reports.shape[1] != prm["k"]:
            _fail(f"--reports={reports_path!r} holds reports of {reports.shape[1]} bits; --k={prm['k']} must equal "
                  "it (rows with fewer or more bits than k are refused)")
        bad = (cohorts < 0) | (cohorts >= prm["num_cohorts"])
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            _fail(f"--reports={reports_path!r}: report {i} has cohort {int(cohorts[i])}; every cohort must be in "
                  f"[0, {prm['num_cohorts'] - 1}] (--num-cohorts={prm['num_cohorts']})")
        counts, sizes = _run(lambda: bit_counts(reports, cohorts, prm["num_cohorts"]))
    else:
        if given.get("f") is None or given.get("p") is None or given.get("q") is None:
            _fail(f"--counts={counts_path!r} carries no f, p, q: give --params FILE (the reference's params CSV) or "
                  "--f, --p and --q")
        counts, sizes, carried = _read_counts(counts_path, given)
        source = f"--counts={counts_path!r} (the reference's counts CSV)"
        prm = _resolve(given, carried, source)
    design = None
    if map_path:
        candidates, design = _run(lambda: read_map_csv("--map", map_path, prm["k"], prm["h"], prm["num_cohorts"]))
        if reports_path:  # the map's positions must be those of the reports' hash, or the decode is meaningless
            expected = _run(lambda: candidate_design_sparse(candidates, prm["num_cohorts"], prm["k"], prm["h"],
                                                            prm["hash"]))
            wrong = map_mismatch(candidates, design, expected, prm["num_cohorts"], prm["k"])
            if wrong:
                _fail(f"--map={map_path!r} does not match {source}, hashed with {prm['hash']}: {wrong}")
    else:
        candidates = read_strings("--candidates", candidates_path, "candidates")
        _check_candidates("--candidates", candidates_path, candidates)
    truth = _read_truth("--truth", truth_path) if truth_path else None
    _decode_and_report(counts, sizes, candidates, design, prm, alpha, method, truth, json_path, plot_path, top,
                       "rappor decode")


@rappor.command()
@click.option("--num-candidates", type=Integer(1, 10**5), default=None,
              help="candidate strings, in [1, 10^5] (default 100)")
@click.option("--num-reports", type=Integer(1, 10**7, why="reports × k bits are held in memory"), default=None,
              help="reports, in [1, 10^7] (default 100000)")
@_param_options
@click.option("--distribution", type=click.Choice(["zipf", "exponential", "normal", "uniform"]), default=None,
              help="how the reported strings share the reports (the reference simulator's laws; default zipf)")
@click.option("--zipf-exponent", type=Real(0, 10), default=None,
              help="s in [0, 10] for --distribution zipf: the string of rank i is reported with probability ∝ 1/i^s "
                   "(default 1)")
@click.option("--reports-per-client", type=Integer(1, 10**4), default=None,
              help="values each client reports, in [1, 10^4]; a client reporting a value twice reuses its permanent "
                   "response (default 1)")
@click.option("--num-extra", type=Integer(0, 10**5), default=None,
              help="strings reported but not in the candidate list, in [0, 10^5] (default 0)")
@click.option("--num-decoys", type=Integer(0, 10**5), default=None,
              help="candidates nobody reports (default: half of --num-candidates), in [0, num_candidates]")
@click.option("--preset", default=None, metavar="NAME",
              help="one of the reference's test cases: demo1 … demo5, or DIST-SIZE-CONFIG (e.g. exp-small-typical; "
                   "DIST unif|gauss|exp|zipf1|zipf1.5, SIZE tiny|small|medium|large, CONFIG typical|sharp|loose|"
                   "over_x2|over_x10): its population and parameters, which options override")
@click.option("--seed", type=Integer(0, 2**63 - 1), default=0, show_default=True,
              help="the simulation's seed (population and randomization are reproducible; NOT private)")
@_format_option
@output_path("--output", "output", suffixes=REPORT_SUFFIXES, help="write the reports (.json, .npz, .csv)")
@output_path("--truth", "truth_path", suffixes=(".json",),
             help="write the truth as JSON: candidates, true counts, parameters")
@_params_output_option
@click.option("--decode", "then_decode", is_flag=True, help="then decode against the candidates and score")
@_method_option
@click.option("--alpha", type=_ALPHA, default=0.05, show_default=True, help="with --decode: as for decode")
@click.option("--top", type=Integer(0, 10**6), default=30, show_default=True, help="with --decode: rows shown")
@output_path("--json", "json_path", help="with --decode: the decode and its score as JSON; '-': standard output")
@_plot_option
def simulate(num_candidates: int | None, num_reports: int | None, distribution: str | None,
             zipf_exponent: float | None, reports_per_client: int | None, num_extra: int | None,
             num_decoys: int | None, preset: str | None, seed: int, layout: str, output: str | None,
             truth_path: str | None, params_output: str | None, then_decode: bool, method: str, alpha: float,
             top: int, json_path: str | None, plot_path: str | None, **kw: Any) -> None:
    """A seeded population with known truth → reports (+ truth file); with --decode, decoded and scored."""
    import numpy as np

    from vetdp.impl.rappor_decoding import bit_counts, reference_preset, simulate_population

    if not then_decode:
        for name, given_path in (("--json", json_path), ("--plot", plot_path)):
            if given_path:
                raise click.UsageError(f"{name} applies with --decode (the decode's result); use --output and "
                                       "--truth for the simulated data")
    _check_output("--output", output, (".json", ".npz", ".csv"))
    _check_output("--params-output", params_output, (".csv",))
    setup = {"num_candidates": 100, "num_reports": 100_000, "distribution": "zipf", "zipf_exponent": 1.0,
             "reports_per_client": 1, "num_extra": 0, "num_decoys": None}
    given = _Given(kw)
    if preset:
        chosen = _run(lambda: reference_preset(preset))
        setup.update({name: chosen[name] for name in setup if name in chosen})
        given.imply({name: chosen[name] for name in ("k", "h", "num_cohorts", "f", "p", "q")}, f"--preset={preset!r}",
                    strict=False)
    asked = {"num_candidates": num_candidates, "num_reports": num_reports, "distribution": distribution,
             "zipf_exponent": zipf_exponent, "reports_per_client": reports_per_client, "num_extra": num_extra,
             "num_decoys": num_decoys}
    setup.update({name: v for name, v in asked.items() if v is not None})
    if setup["num_reports"] > 10**7:
        _fail(f"--num-reports={setup['num_reports']} must be in [1, 10^7] (reports × k bits are held in memory)")
    if output is not None:
        _imply_layout(given, layout, output)
    elif layout == "reference":
        raise click.UsageError("--format reference applies to --output FILE.csv")
    prm = _resolve(given, None, "")
    _check_cells("--num-reports", setup["num_reports"], prm["k"])
    eps1, eps_inf = _run(lambda: _epsilons(prm))  # the mechanism refuses bad (f, p, q) before any work
    err = _err_console()
    start = time.perf_counter()
    with _progress(err) as bar, _phase(bar, f"simulating {setup['num_reports']} reports ({setup['distribution']} "
                                            f"over {setup['num_candidates']} candidates, Bloom filters, permanent "
                                            "and instantaneous RR)"):
        sim = _run(lambda: simulate_population(
            setup["num_candidates"], setup["num_reports"], prm["num_cohorts"], k=prm["k"], h=prm["h"], f=prm["f"],
            p=prm["p"], q=prm["q"], zipf_exponent=setup["zipf_exponent"], num_extra=setup["num_extra"],
            num_decoys=setup["num_decoys"], distribution=setup["distribution"],
            reports_per_client=setup["reports_per_client"], hash=prm["hash"], seed=seed))
    seconds = time.perf_counter() - start
    candidates = [str(c) for c in sim.candidates]
    truth = _truth_of(sim)
    setup = {**setup, "num_decoys": setup["num_candidates"] // 2 if setup["num_decoys"] is None else
             setup["num_decoys"], "seed": seed, **({"preset": preset} if preset else {})}
    if output:
        clients = [f"c{i // setup['reports_per_client']}" for i in range(sim.num_reports)]
        write_reports(output, prm, np.asarray(sim.cohorts), None, np.asarray(sim.reports),
                      {"randomized": True, "simulated": setup}, "rappor simulate", layout, clients)
    if truth_path:
        write_output("--truth", truth_path, json.dumps({
            "schema_version": 1, "command": "rappor simulate", "parameters": {**prm, **setup},
            "candidates": candidates, "true_counts": truth}, indent=1))
    _write_params_csv(params_output, prm)
    out = err if json_path == "-" else _console()
    heavy = sorted(truth.items(), key=lambda kv: -kv[1])[:5]
    in_list = sum(truth.get(c, 0) for c in candidates)
    out.print(_escape(
        f"simulated {sim.num_reports} reports in {prm['num_cohorts']} cohorts (k={prm['k']}, h={prm['h']}, "
        f"{prm['hash']}, f={prm['f']}, p={prm['p']}, q={prm['q']}; ε₁ = {eps1:.6g} per report, ε∞ = {eps_inf:.6g} "
        f"over all reports of one value by one client), seed {seed}, {seconds:.2f} s; {setup['num_candidates']} "
        f"candidates ({setup['distribution']}) hold {in_list / sim.num_reports:.1%} of the reports; heaviest: "
        + ", ".join(f"{v} {c / sim.num_reports:.2%}" for v, c in heavy)))
    if then_decode:
        counts, sizes = _run(lambda: bit_counts(np.asarray(sim.reports), np.asarray(sim.cohorts), prm["num_cohorts"]))
        _decode_and_report(counts, sizes, candidates, None, prm, alpha, method, truth, json_path, plot_path, top,
                           "rappor simulate --decode")


@rappor.command("sum-bits")
@click.option("--reports", "reports_path", type=click.Path(exists=True, dir_okay=False), required=True,
              help="the reports file (.json, .npz, .csv, or the reference's reports CSV); MD5 reports only")
@_param_options
@output_path("--output", "output", help="the counts CSV (the reference's sum_bits output); '-': standard output")
@_params_output_option
def sum_bits(reports_path: str, output: str | None, params_output: str | None, **kw: Any) -> None:
    """Reports → the reference's counts CSV (per cohort: its reports, then the count of each bit), as its sum_bits.

    The counts CSV records no hash: its readers hash candidates with MD5, so only MD5 reports are summed."""
    from vetdp.impl.rappor_decoding import bit_counts
    from vetdp.rappor_io import counts_csv_text, write_text_file

    if output is None:
        raise click.UsageError("give --output FILE.csv (or - for standard output)")
    _check_output("--output", output, (".csv",))
    _check_output("--params-output", params_output, (".csv",))
    given = _Given(kw)
    carried, cohorts, reports = read_reports("--reports", reports_path, given.get("bit_order") or "vetdp",
                                             given.get("k"))
    source = f"--reports={reports_path!r}"
    if carried.get("format") == "reference" and given.get("num_cohorts") is None:
        _fail(f"{source} is the reference's reports CSV, which does not say how many cohorts there are: give --params "
              "FILE (the reference's params CSV) or --num-cohorts")
    prm = _resolve(given, carried, source)
    if prm["hash"] != "md5":
        _fail(f"{source} holds reports hashed with {prm['hash']}; the reference's counts CSV records no hash and its "
              "readers hash candidates with MD5, so only MD5 reports (--hash md5) are summed into one")
    if reports.shape[1] != prm["k"]:
        _fail(f"{source} holds reports of {reports.shape[1]} bits; --k={prm['k']} must equal it")
    counts, sizes = _run(lambda: bit_counts(reports, cohorts, prm["num_cohorts"]))
    text = _run(lambda: write_text_file("--output", output, counts_csv_text(counts, sizes)))
    if text is not None:
        click.echo(text, nl=False)
    _write_params_csv(params_output, prm)
    if output != "-":
        _console().print(_escape(f"{len(reports)} reports in {int((sizes > 0).sum())} of {prm['num_cohorts']} "
                                 f"cohorts → {output} ({prm['num_cohorts']} rows of 1 + k = {prm['k'] + 1} counts)"))


@rappor.command("hash-candidates")
@click.option("--candidates", "candidates_path", type=click.Path(exists=True, dir_okay=False), required=True,
              help="candidate strings: one per line, or a .json list")
@_param_options
@output_path("--output", "output", help="the map CSV (the reference's hash_candidates output); '-': standard output")
def hash_candidates(candidates_path: str, output: str | None, **kw: Any) -> None:
    """Candidates → the reference's map CSV: each candidate, then its h MD5 Bloom positions in every cohort as
    1-based rows cohort·k + bit + 1, as its hash_candidates writes them."""
    from vetdp.impl.rappor import bloom_positions_many
    from vetdp.rappor_io import map_csv_text, write_text_file

    if output is None:
        raise click.UsageError("give --output FILE.csv (or - for standard output)")
    _check_output("--output", output, (".csv",))
    given = _Given(kw)
    given.imply({"hash": "md5"}, "hash-candidates (the reference's map: MD5 positions)")
    prm = _resolve(given, None, "", ("k", "h", "num_cohorts", "hash"))
    candidates = read_strings("--candidates", candidates_path, "candidates")
    _check_candidates("--candidates", candidates_path, candidates)
    m = prm["num_cohorts"]
    positions = _run(lambda: bloom_positions_many([c for c in candidates for _ in range(m)],
                                                  [j for _ in candidates for j in range(m)], prm["k"], prm["h"],
                                                  "md5"))
    text = _run(lambda: write_text_file("--output", output, map_csv_text(
        candidates, positions.reshape(len(candidates), m, prm["h"]), prm["k"])))
    if text is not None:
        click.echo(text, nl=False)
    else:
        _console().print(_escape(f"{len(candidates)} candidates × {m} cohorts × h={prm['h']} MD5 positions → {output}"))
