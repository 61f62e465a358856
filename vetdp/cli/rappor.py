"""``vetdp rappor``: encode values as RAPPOR reports, simulate populations, decode reports against candidates.

Examples::

    vetdp rappor encode --values urls.txt --clients clients.txt --randomize --output reports.npz
    vetdp rappor simulate --num-candidates 1000 --num-reports 1e5 --seed 1 --output reports.npz --truth truth.json
    vetdp rappor decode --reports reports.npz --candidates truth.json --truth truth.json --plot decode.png
    vetdp rappor simulate --num-candidates 100 --num-reports 1e5 --seed 1 --decode --json run.json --plot run.png

Every file a command writes carries the parameters it was made with (k, h, number of cohorts, f, p, q), so that
``decode`` never decodes with parameters other than the ones that encoded. Reports files are JSON (``.json``, bit
strings), NPZ (``.npz``, packed bits; the format for millions of reports) or CSV (``.csv``, bit strings, parameters
in a first comment line). See docs/rappor.md.

Exit codes: 0 done; 2 bad input (the message names the option or file, the value and the allowed range).
"""

from __future__ import annotations

import contextlib
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
REPORT_SUFFIXES = (".json", ".npz", ".csv")  # the format of a reports file follows its suffix
MAX_CELLS = 2**30  # reports × k bits held in memory at once (one byte each as NumPy bools): 1 GiB
CHUNK_ROWS = 1 << 16  # rows encoded / randomized per progress step

# The defaults: h = 2, 64 cohorts, f = 1/2, p = 1/2, q = 3/4 as in the RAPPOR paper's examples and Google's reference
# client; k = 128 bits as in the paper's simulations and the issue's benchmark.
DEFAULTS = {"k": 128, "h": 2, "num_cohorts": 64, "f": 0.5, "p": 0.5, "q": 0.75}
_PARAMS = ("k", "h", "num_cohorts", "f", "p", "q")
_OPTION = {"k": "--k", "h": "--h", "num_cohorts": "--num-cohorts", "f": "--f", "p": "--p", "q": "--q",
           "alpha": "--alpha", "num_candidates": "--num-candidates", "num_reports": "--num-reports",
           "zipf_exponent": "--zipf-exponent", "num_extra": "--num-extra", "num_decoys": "--num-decoys",
           "seed": "--seed"}


# ----------------------------------------------------------------------------------------------- small helpers

def _fail(message: str) -> None:
    """Exit 2 with ``message`` (library parameter names spelt as this command's options)."""
    text = re.sub(r"(?<![\w-])(" + "|".join(sorted(_OPTION, key=len, reverse=True)) + r")(?==)",
                  lambda m: _OPTION[m.group(1)], message)
    click.echo(f"error: {text}", err=True)
    sys.exit(ExitCode.ERROR)


def _run(fn: Callable[[], Any]) -> Any:
    """Call ``fn``; a ValueError/TypeError from the library (a refused argument) exits 2 with its message."""
    try:
        return fn()
    except (ValueError, TypeError, ArithmeticError) as e:
        _fail(str(e))


def _err_console() -> Console:
    from rich.console import Console

    return Console(stderr=True)


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


# the type and range of each parameter, as an option and as carried by a reports file
_TYPES = {"k": Integer(1, 4096), "h": Integer(1, 64), "num_cohorts": Integer(1, 10**5),
          "f": Real(0, 1, hi_open=True), "p": Real(0, 1), "q": Real(0, 1)}


def _param_options(f: Callable) -> Callable:
    """--k --h --num-cohorts --f --p --q; default None so that a value carried by an input file can be told apart
    from one given on the command line."""
    opts = [
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


def _resolve(given: dict[str, Any], carried: dict[str, Any] | None, source: str,
             need: Sequence[str] = _PARAMS) -> dict[str, Any]:
    """The parameters to use: those ``carried`` by an input file, which a command-line value must equal; the
    defaults where neither says. Decoding with parameters other than the encoding's is refused (exit 2)."""
    out: dict[str, Any] = {}
    for name in need:
        g, c = given.get(name), (carried or {}).get(name)
        if g is not None and c is not None and g != c:
            _fail(f"{_OPTION[name]}={g!r} disagrees with {source}, which was made with {name}={c!r}; leave the "
                  f"option out or give {c!r}")
        out[name] = g if g is not None else c if c is not None else DEFAULTS[name]
    if "h" in out and "k" in out and out["h"] > out["k"]:
        _fail(f"--h={out['h']} must be in [1, {out['k']}] (at most --k={out['k']} hash functions)")
    if "p" in out and "q" in out and not out["p"] < out["q"]:
        _fail(f"--p={out['p']!r} must be < --q={out['q']!r} (0 <= p < q <= 1)")
    return out


def _carried(source: str, params: Any) -> dict[str, Any]:
    """The parameters a reports file carries (``parameters``), each of the type and in the range of its option;
    exit 2 naming the file, the parameter and the rule otherwise."""
    if not isinstance(params, dict):
        _fail(f"{source}: 'parameters' is a {type(params).__name__}; it must be a JSON object such as "
              '{"k": 128, "h": 2, "num_cohorts": 64}')
    for name in _PARAMS:
        if name not in params:
            continue
        value, kind = params[name], _TYPES[name]
        integer = isinstance(kind, Integer)
        if isinstance(value, bool) or not isinstance(value, int if integer else (int, float)):
            _fail(f"{source}: parameters.{name} = {value!r:.60} must be {'an integer' if integer else 'a number'} "
                  f"(not {type(value).__name__})")
        try:
            kind.convert(value, None, None)
        except click.BadParameter as e:
            _fail(f"{source}: parameters.{name} = {value!r}: {e.message}")
    return params


def _check_cells(option: str, rows: int, k: int) -> None:
    if rows * k > MAX_CELLS:
        _fail(f"{option}={rows} with --k={k} must satisfy reports × k <= {MAX_CELLS} (2^30 bits in memory, 1 GiB); "
              f"here {rows * k}")


def _epsilons(prm: dict[str, Any]) -> tuple[float, float]:
    """(ε₁, ε∞) of the mechanism's privacy maps: one report, and any number of reports of one memoized value (inf
    when f = 0: without a permanent response the loss grows with the number of reports)."""
    from vetdp.core.measurement import BitVectorDomain, DiscreteDistance
    from vetdp.impl.rappor import make_rappor_report, make_rappor_reports

    dom = BitVectorDomain(max_weight=prm["h"], length=prm["k"])
    one = make_rappor_report(dom, DiscreteDistance(), prm["f"], prm["p"], prm["q"]).map(1)
    if prm["f"] == 0:  # no permanent response: repeated reports of one value have no bound independent of their number
        return float(one), math.inf
    many = make_rappor_reports(dom, DiscreteDistance(), prm["f"], prm["p"], prm["q"], 2).map(1)
    return float(one), float(many)


# ------------------------------------------------------------------------------------------------ file formats

def read_strings(option: str, path: str, key: str) -> list[str]:
    """Strings from ``path``: a ``.json`` file holding a list of strings, or an object whose ``key`` is one; any
    other file: one string per line (UTF-8, line endings removed). Refused (exit 2): unreadable, malformed, empty."""
    from vetdp.inputs import InputError, parse_json, read_text

    try:
        text = read_text(path, f"{option}={path!r}")
        doc = parse_json(text, f"{option}={path!r}") if path.lower().endswith(".json") else None
    except InputError as e:
        _fail(str(e))
    if path.lower().endswith(".json"):
        if isinstance(doc, dict):
            if key not in doc:
                _fail(f"{option}={path!r}: a JSON object must have a {key!r} list (keys found: {sorted(doc)})")
            doc = doc[key]
        if not isinstance(doc, list) or not all(isinstance(v, str) for v in doc):
            _fail(f"{option}={path!r}: expected a JSON list of strings (or an object with a {key!r} list)")
        values = doc
    else:
        values = text.splitlines()
    if not values:
        _fail(f"{option}={path!r} holds no {key}; it must hold at least one")
    return values


def _read_ints(option: str, path: str, lo: int, hi: int) -> list[int]:
    """Integers in [lo, hi] from a ``.json`` list or one per line."""
    from vetdp.inputs import InputError, read_json

    raw = read_strings(option, path, "cohorts") if not path.lower().endswith(".json") else None
    if raw is None:
        try:
            doc = read_json(path, f"{option}={path!r}")
        except InputError as e:
            _fail(str(e))
        raw = doc.get("cohorts") if isinstance(doc, dict) else doc
        if not isinstance(raw, list):
            _fail(f"{option}={path!r}: expected a JSON list of integers")
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


def _cohort(source: str, place: str, value: Any) -> int:
    """A cohort read from a file: an integer in [0, 2^63) (its range against --num-cohorts is checked later)."""
    if isinstance(value, str):
        value = int(value) if value.isascii() and value.isdigit() else value
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**63:
        _fail(f"{source}: {place} = {value!r:.40} must be a cohort, an integer in [0, num_cohorts)")
    return value


def _bits_to_strings(a: np.ndarray) -> list[str]:
    import numpy as np

    chars = np.where(a, np.uint8(49), np.uint8(48)).astype(np.uint8)
    k = a.shape[1]
    flat = chars.tobytes().decode("ascii")
    return [flat[i * k:(i + 1) * k] for i in range(a.shape[0])]


def _strings_to_bits(option: str, path: str, what: str, strings: Sequence[Any], k: int) -> np.ndarray:
    import numpy as np

    if not all(isinstance(s, str) and len(s) == k for s in strings):
        bad = next(i for i, s in enumerate(strings) if not (isinstance(s, str) and len(s) == k))
        _fail(f"{option}={path!r}: {what}[{bad}] = {str(strings[bad])[:40]!r} must be a string of k={k} '0'/'1'")
    buf = np.frombuffer("".join(strings).encode("ascii", errors="replace"), dtype=np.uint8).reshape(len(strings), k)
    if not np.isin(buf, (48, 49)).all():
        bad = int(np.flatnonzero(~np.isin(buf, (48, 49)).all(axis=1))[0])
        _fail(f"{option}={path!r}: {what}[{bad}] = {strings[bad][:40]!r} must hold only '0' and '1'")
    return buf == 49


def write_reports(path: str, params: dict[str, Any], cohorts: np.ndarray, bloom: np.ndarray | None,
                  reports: np.ndarray | None, extra: dict[str, Any] | None = None) -> None:
    """Write a reports file (format from the suffix: .json, .npz, .csv; ``-``: JSON on standard output).

    Schema (every format): ``parameters`` {k, h, num_cohorts, and f, p, q when randomized}; ``cohorts`` (one int
    per row); ``bloom_filters`` and/or ``reports`` (one k-bit row per input, bit i = character/bit i). JSON adds
    ``schema_version`` and ``command``; NPZ stores the rows packed (numpy.packbits, axis 1, big-endian bit order)
    and the parameters as a JSON string; CSV has a first line ``# rappor {parameters as JSON}``."""
    import numpy as np

    doc_params = {**params, **(extra or {})}
    suffix = "" if path == "-" else Path(path).suffix.lower()
    if suffix == ".npz":
        arrays: dict[str, np.ndarray] = {"cohorts": np.asarray(cohorts, dtype=np.int64),
                                         "parameters": np.array(json.dumps(doc_params))}
        if bloom is not None:
            arrays["bloom_filters"] = np.packbits(bloom, axis=1)
        if reports is not None:
            arrays["reports"] = np.packbits(reports, axis=1)
        write_output("--output", path, lambda fh: np.savez_compressed(fh, **arrays))
        return
    columns = [("bloom_filters", bloom), ("reports", reports)]
    columns = [(name, _bits_to_strings(a)) for name, a in columns if a is not None]
    if suffix == ".csv":
        lines = ["# rappor " + json.dumps(doc_params), ",".join(["cohort", *(n for n, _ in columns)])]
        lines += [",".join([str(int(c)), *(col[i] for _, col in columns)]) for i, c in enumerate(cohorts)]
        write_output("--output", path, "\n".join(lines) + "\n")
        return
    doc = {"schema_version": REPORTS_SCHEMA_VERSION, "command": "rappor encode", "parameters": doc_params,
           "cohorts": [int(c) for c in cohorts], **dict(columns)}
    write_output("--output", path, json.dumps(doc))


def read_reports(option: str, path: str) -> tuple[dict[str, Any], np.ndarray, np.ndarray]:
    """(parameters carried by the file, cohorts (n,) int64, randomized reports (n, k) bool) from a file written by
    :func:`write_reports` (or a CSV ``cohort,report`` of the user's, then without parameters). Exit 2 when it is
    unreadable, malformed, holds Bloom filters only, or rows of unequal length."""
    import zipfile

    import numpy as np

    from vetdp.inputs import InputError, parse_json, read_json, read_text

    source = f"{option}={path!r}"
    suffix = Path(path).suffix.lower()
    try:
        if suffix == ".npz":
            with np.load(path, allow_pickle=False) as z:
                if "reports" not in z.files:
                    _fail(f"{option}={path!r} holds no randomized reports (arrays: {sorted(z.files)}); encode with "
                          "--randomize")
                params = _carried(source, parse_json(str(z["parameters"]), f"{source}: parameters")
                                  if "parameters" in z.files else {})
                cohorts = np.asarray(z["cohorts"])
                if cohorts.ndim != 1 or not np.issubdtype(cohorts.dtype, np.integer):
                    _fail(f"{source}: 'cohorts' must be a one-dimensional array of integers")
                cohorts = cohorts.astype(np.int64)
                k = params.get("k")
                if not isinstance(k, int):
                    _fail(f"{option}={path!r}: NPZ reports need the parameter k to unpack the bits")
                reports = np.unpackbits(z["reports"], axis=1, count=k).astype(bool)
        elif suffix == ".csv":
            lines = read_text(path, source).splitlines()
            params = {}
            if lines and lines[0].startswith("# rappor "):
                params = _carried(source, parse_json(lines[0][len("# rappor "):], f"{source}: line 1"))
                lines = lines[1:]
            if not lines:
                _fail(f"{option}={path!r} is empty; expected a header 'cohort,reports' and one row per report")
            header = [c.strip() for c in lines[0].split(",")]
            if "reports" not in header and "bloom_filters" in header:
                _fail(f"{option}={path!r} holds no randomized reports (columns: {header}); encode with --randomize")
            if "cohort" not in header or "reports" not in header:
                _fail(f"{option}={path!r}: the CSV header {lines[0]!r} must name the columns 'cohort' and 'reports'")
            ci, ri = header.index("cohort"), header.index("reports")
            rows = [line.split(",") for line in lines[1:] if line.strip()]
            if any(len(r) != len(header) for r in rows):
                bad = next(i for i, r in enumerate(rows) if len(r) != len(header))
                _fail(f"{option}={path!r}: row {bad} has {len(rows[bad])} fields; the header has {len(header)}")
            cohorts = np.array([_cohort(source, f"row {i + 1}", r[ci].strip()) for i, r in enumerate(rows)],
                               dtype=np.int64)
            strings = [r[ri].strip() for r in rows]
            k = params.get("k", len(strings[0]) if strings else 0)
            reports = _strings_to_bits(option, path, "reports", strings, k)
        else:
            doc = read_json(path, source)
            if not isinstance(doc, dict) or "cohorts" not in doc:
                _fail(f"{option}={path!r}: expected a JSON object with 'parameters', 'cohorts' and 'reports'")
            if "reports" not in doc:
                _fail(f"{option}={path!r} holds no randomized reports (keys: {sorted(doc)}); encode with --randomize")
            params = _carried(source, doc.get("parameters", {}))
            strings = doc["reports"]
            if not isinstance(strings, list) or not isinstance(doc["cohorts"], list):
                _fail(f"{option}={path!r}: 'reports' and 'cohorts' must be lists")
            cohorts = np.array([_cohort(source, f"cohorts[{i}]", c) for i, c in enumerate(doc["cohorts"])],
                               dtype=np.int64)
            k = params.get("k", len(strings[0]) if strings and isinstance(strings[0], str) else 0)
            reports = _strings_to_bits(option, path, "reports", strings, k)
    except InputError as e:
        _fail(str(e))
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as e:  # a truncated or foreign .npz
        _fail(f"{source}: cannot read reports ({type(e).__name__}: {getattr(e, 'strerror', None) or e}); it must be "
              "a .json, .npz or .csv file written by vetdp rappor encode or simulate")
    if len(cohorts) != len(reports):
        _fail(f"{option}={path!r}: {len(cohorts)} cohorts for {len(reports)} reports; there must be one per report")
    if len(reports) == 0:
        _fail(f"{option}={path!r} holds no reports; it must hold at least one")
    return {n: params[n] for n in _PARAMS if n in params}, cohorts, reports


def _read_truth(option: str, path: str) -> dict[str, float]:
    """value -> true number of reports, from a truth file written by ``simulate --truth``."""
    from vetdp.inputs import InputError, read_json

    try:
        doc = read_json(path, f"{option}={path!r}")
    except InputError as e:
        _fail(str(e))
    counts = doc.get("true_counts") if isinstance(doc, dict) else None
    if not isinstance(counts, dict) or not all(isinstance(v, int) and v >= 0 for v in counts.values()):
        _fail(f"{option}={path!r}: expected an object with 'true_counts' mapping each value to a count >= 0 "
              "(as written by vetdp rappor simulate --truth)")
    return counts


# ------------------------------------------------------------------------------------------ decode: table, JSON

def decode_document(result: Any, params: dict[str, Any], alpha: float, truth: dict[str, int] | None,
                    score: dict[str, Any] | None, command: str, seconds: float) -> dict[str, Any]:
    """The JSON document of a decode (schema_version 1): ``parameters`` (k, h, num_cohorts, f, p, q, alpha),
    ``num_reports``, ``threshold`` (the corrected p-value cut), counts of candidates / selected / significant, and
    ``candidates``: one object per candidate in input order with ``value``, ``estimate`` (reports), ``std_error``,
    ``interval`` [lo, hi] at level 1 − alpha, ``p_value``, ``selected`` (kept by the lasso), ``significant``, and
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
            "num_reports": int(result.num_reports), "threshold": _fin(result.threshold),
            "num_candidates": len(cands), "num_selected": int(np.sum(result.selected)),
            "num_significant": int(np.sum(result.significant)), "seconds": seconds,
            "candidates": cands, "score": score}


def _print_decode(out: Console, doc: dict[str, Any], top: int) -> None:
    from rich.markup import escape
    from rich.table import Table

    rows = sorted((c for c in doc["candidates"] if c["significant"]), key=lambda c: -(c["estimate"] or 0.0))
    level = 1 - doc["parameters"]["alpha"]
    truth = any("true_count" in c for c in doc["candidates"])
    table = Table(title=f"RAPPOR decode: {doc['num_significant']} significant of {doc['num_candidates']} candidates "
                        f"({doc['num_selected']} kept by the lasso), {doc['num_reports']} reports, p-value cut "
                        f"{doc['threshold']:.3g}")
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
                  f"{doc['threshold']:.3g}; {doc['num_selected']} kept by the lasso of {doc['num_candidates']})")
    for c in rows[:top]:
        lo, hi = c["interval"]
        table.add_row(escape(c["value"][:80]), num(c["estimate"], ".1f"), num(c["std_error"], ".1f"),
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
              ("kept by the lasso, not significant", "tab:orange", "o",
               lambda c: c["selected"] and not c["significant"]),
              ("not kept by the lasso (estimate 0)", "tab:gray", "x", lambda c: not c["selected"]))
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
    populations with known truth, decode reports against candidate strings. Guarantees: docs/rappor.md."""


def _given(k, h, num_cohorts, f, p, q) -> dict[str, Any]:
    return {"k": k, "h": h, "num_cohorts": num_cohorts, "f": f, "p": p, "q": q}


@rappor.command()
@click.option("--values", "values_path", type=click.Path(exists=True, dir_okay=False), required=True,
              help="the values: one per line (UTF-8), or a .json list of strings (or an object with 'values')")
@click.option("--clients", "clients_path", type=click.Path(exists=True, dir_okay=False), default=None,
              help="client ids, one per line (or .json list), one per value: the cohort is assign_cohort(id) and "
                   "a client reporting the same value again reuses its permanent response")
@click.option("--cohorts", "cohorts_path", type=click.Path(exists=True, dir_okay=False), default=None,
              help="cohorts in [0, num_cohorts), one per line (or .json list), one per value (each row its own "
                   "client); default: row i is client i, cohort assign_cohort(i)")
@_param_options
@click.option("--randomize", is_flag=True,
              help="also randomize (permanent then instantaneous randomized response); implied by --f/--p/--q")
@click.option("--keep-bloom", is_flag=True,
              help="with --randomize, also write the true Bloom filters (for tests only: they are not private)")
@click.option("--seed", type=Integer(0, 2**63 - 1), default=None,
              help="randomize from a seeded stream (reproducible; NOT private, for tests); default: the OS CSPRNG")
@output_path("--output", "output", suffixes=REPORT_SUFFIXES,
             help="the reports file: .json, .npz (big outputs) or .csv; '-': JSON on standard output")
def encode(values_path: str, clients_path: str | None, cohorts_path: str | None, k: int | None, h: int | None,
           num_cohorts: int | None, f: float | None, p: float | None, q: float | None, randomize: bool,
           keep_bloom: bool, seed: int | None, output: str | None) -> None:
    """Values → Bloom filters (k bits, h hashes, per cohort), and with --randomize the RAPPOR reports."""
    import numpy as np
    from rich.console import Console
    from rich.markup import escape

    from vetdp.impl.rappor import assign_cohorts, bloom_filter_matrix

    if output is None:
        raise click.UsageError("give --output FILE (.json, .npz, .csv) or --output - (JSON on standard output)")
    if clients_path and cohorts_path:
        raise click.UsageError("give --clients or --cohorts, not both (a client's cohort is assign_cohort(id))")
    randomize = randomize or any(x is not None for x in (f, p, q))
    if keep_bloom and not randomize:
        raise click.UsageError("--keep-bloom applies with --randomize (without it only Bloom filters are written)")
    if seed is not None and not randomize:
        raise click.UsageError("--seed applies with --randomize (encoding alone is deterministic)")
    prm = _resolve(_given(k, h, num_cohorts, f, p, q), None, "", _PARAMS if randomize else ("k", "h", "num_cohorts"))
    eps = _run(lambda: _epsilons(prm)) if randomize else None  # the mechanism refuses bad (f, p, q) before work
    values = read_strings("--values", values_path, "values")
    n, m = len(values), prm["num_cohorts"]
    _check_cells("--values", n, prm["k"])
    err = _err_console()
    out = err if output == "-" else Console()
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
        else:
            task = bar.add_task("cohorts", total=n)
            cohorts = np.empty(n, dtype=np.int64)
            for lo in range(0, n, CHUNK_ROWS):
                hi = min(n, lo + CHUNK_ROWS)
                cohorts[lo:hi] = _run(lambda lo=lo, hi=hi: assign_cohorts(clients[lo:hi], m))
                bar.advance(task, hi - lo)
        # one permanent response per distinct (client, value): a client re-reporting a value reuses it (the
        # memoization behind ε∞); without --clients every row is its own client
        if clients_path:
            index: dict[tuple[str, str], int] = {}
            row_of = np.array([index.setdefault((c, v), len(index)) for c, v in zip(clients, values, strict=True)],
                              dtype=np.int64)
            first = np.unique(row_of, return_index=True)[1]  # labels count up from 0 in order of appearance
        else:
            row_of = first = np.arange(n, dtype=np.int64)
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
                [v for _, v in chunk], np.array([c for c, _ in chunk], dtype=np.int64), prm["k"], prm["h"]))
            bar.advance(task, len(chunk))
        bloom = table[pair_of]
        reports = None
        if randomize:
            reports = _randomize(bar, bloom, row_of, prm, seed)
    seconds = time.perf_counter() - start
    bloom_rows = bloom[row_of] if (not randomize or keep_bloom) else None
    write_reports(output, prm, cohorts, bloom_rows, reports,
                  {"randomized": randomize, "memoized_by_client": bool(clients_path)})
    summary = f"{n} values ({len(first)} distinct client-value pairs) in {len(np.unique(cohorts))} cohorts → "
    summary += f"{'reports' if randomize else 'Bloom filters'} of k={prm['k']} bits, h={prm['h']}"
    if eps is not None:
        eps1, eps_inf = eps
        summary += f"; f={prm['f']} p={prm['p']} q={prm['q']}: ε₁ = {eps1:.6g} (one report), ε∞ = {eps_inf:.6g}"
        summary += " (any number of reports of one value by one client)"
    out.print(escape(summary + f"; {seconds:.2f} s"))


def _randomize(bar: Progress, bloom: np.ndarray, row_of: np.ndarray, prm: dict[str, Any],
               seed: int | None) -> np.ndarray:
    """Permanent randomized response once per distinct (client, value) row of ``bloom``, then instantaneous
    randomized response once per report (``row_of`` maps reports to those rows), in chunks with progress."""
    import numpy as np

    from vetdp.impl.rappor import rappor_instantaneous_batch, rappor_permanent_batch
    from vetdp.sampling import SeededSource, use_source

    ctx = use_source(SeededSource(seed)) if seed is not None else contextlib.nullcontext()
    with ctx:
        permanent = np.empty_like(bloom)
        task = bar.add_task("permanent randomized response", total=len(bloom))
        for lo in range(0, len(bloom), CHUNK_ROWS):
            chunk = bloom[lo:lo + CHUNK_ROWS]
            permanent[lo:lo + len(chunk)] = _run(lambda c=chunk: rappor_permanent_batch(c, prm["f"]))
            bar.advance(task, len(chunk))
        reports = np.empty((len(row_of), bloom.shape[1]), dtype=bool)
        task = bar.add_task("instantaneous randomized response", total=len(row_of))
        for lo in range(0, len(row_of), CHUNK_ROWS):
            chunk = permanent[row_of[lo:lo + CHUNK_ROWS]]
            reports[lo:lo + len(chunk)] = _run(lambda c=chunk: rappor_instantaneous_batch(c, prm["p"], prm["q"]))
            bar.advance(task, len(chunk))
    return reports


_ALPHA = Real(0, 1, lo_open=True, hi_open=True)


def _decode_and_report(reports: np.ndarray, cohorts: np.ndarray, candidates: list[str], prm: dict[str, Any],
                       alpha: float, truth: dict[str, int] | None, json_path: str | None, plot_path: str | None,
                       top: int, command: str) -> dict[str, Any]:
    """Decode, score against the truth when known, print the table, write --json and --plot; the document."""
    from rich.console import Console

    from vetdp.impl.rappor_decoding import decode

    err = _err_console()
    start = time.perf_counter()
    with _progress(err) as bar, _phase(bar, f"decoding {len(reports)} reports against {len(candidates)} "
                                            "candidates (bit counts, design matrix, lasso, least squares)"):
        result = _run(lambda: decode(reports, cohorts, candidates, k=prm["k"], h=prm["h"], f=prm["f"], p=prm["p"],
                                     q=prm["q"], num_cohorts=prm["num_cohorts"], alpha=alpha))
    seconds = time.perf_counter() - start
    score = _score(result, truth) if truth is not None else None
    doc = decode_document(result, prm, alpha, truth, score, command, seconds)
    _print_decode(err if json_path == "-" else Console(), doc, top)
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


@rappor.command("decode")
@click.option("--reports", "reports_path", type=click.Path(exists=True, dir_okay=False), required=True,
              help="the reports file (.json, .npz, .csv) written by 'vetdp rappor encode --randomize' or 'simulate'")
@click.option("--candidates", "candidates_path", type=click.Path(exists=True, dir_okay=False), required=True,
              help="candidate strings: one per line, or a .json list (or object with 'candidates', e.g. a truth file)")
@_param_options
@click.option("--alpha", type=_ALPHA, default=0.05, show_default=True,
              help="intervals at level 1 − alpha; significance at alpha, corrected for the number of candidates")
@click.option("--truth", "truth_path", type=click.Path(exists=True, dir_okay=False), default=None,
              help="a truth file written by 'simulate --truth': adds true counts, the score and the truth plot")
@click.option("--top", type=Integer(0, 10**6), default=30, show_default=True,
              help="significant candidates shown in the table (all of them in --json)")
@output_path("--json", "json_path", help="write the decode as JSON (schema_version 1); '-': standard output")
@_plot_option
def decode_command(reports_path: str, candidates_path: str, k: int | None, h: int | None, num_cohorts: int | None,
                   f: float | None, p: float | None, q: float | None, alpha: float, truth_path: str | None, top: int,
                   json_path: str | None, plot_path: str | None) -> None:
    """Reports + candidates → estimated counts, standard errors, intervals and p-values of the candidates.

    The parameters are those the reports file carries (an option that disagrees is refused); a file without them
    (a CSV of one's own) takes the options, or the defaults."""
    import numpy as np

    carried, cohorts, reports = read_reports("--reports", reports_path)
    prm = _resolve(_given(k, h, num_cohorts, f, p, q), carried, f"--reports={reports_path!r}")
    if reports.shape[1] != prm["k"]:
        _fail(f"--reports={reports_path!r} holds reports of {reports.shape[1]} bits; --k={prm['k']} must equal it")
    bad = (cohorts < 0) | (cohorts >= prm["num_cohorts"])
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        _fail(f"--reports={reports_path!r}: report {i} has cohort {int(cohorts[i])}; every cohort must be in "
              f"[0, {prm['num_cohorts'] - 1}] (--num-cohorts={prm['num_cohorts']})")
    candidates = read_strings("--candidates", candidates_path, "candidates")
    _check_candidates("--candidates", candidates_path, candidates)
    truth = _read_truth("--truth", truth_path) if truth_path else None
    _decode_and_report(reports, cohorts, candidates, prm, alpha, truth, json_path, plot_path, top, "rappor decode")


@rappor.command()
@click.option("--num-candidates", type=Integer(1, 10**5), default=100, show_default=True,
              help="candidate strings, Zipf-distributed, in [1, 10^5]")
@click.option("--num-reports", type=Integer(1, 10**7, why="reports × k bits are held in memory"), default=100_000,
              show_default=True, help="reports (one per simulated client), in [1, 10^7]")
@_param_options
@click.option("--zipf-exponent", type=Real(0, 10), default=1.0, show_default=True,
              help="s in [0, 10]: candidate i is reported with probability ∝ 1/i^s")
@click.option("--num-extra", type=Integer(0, 10**5), default=0, show_default=True,
              help="strings reported but not in the candidate list, in [0, 10^5]")
@click.option("--num-decoys", type=Integer(0, 10**5), default=None,
              help="candidates nobody reports (default: half of --num-candidates), in [0, num_candidates]")
@click.option("--seed", type=Integer(0, 2**63 - 1), default=0, show_default=True,
              help="the simulation's seed (population and randomization are reproducible; NOT private)")
@output_path("--output", "output", suffixes=REPORT_SUFFIXES, help="write the reports (.json, .npz, .csv)")
@output_path("--truth", "truth_path", suffixes=(".json",),
             help="write the truth as JSON: candidates, true counts, parameters")
@click.option("--decode", "then_decode", is_flag=True, help="then decode against the candidates and score")
@click.option("--alpha", type=_ALPHA, default=0.05, show_default=True, help="with --decode: as for decode")
@click.option("--top", type=Integer(0, 10**6), default=30, show_default=True, help="with --decode: rows shown")
@output_path("--json", "json_path", help="with --decode: the decode and its score as JSON; '-': standard output")
@_plot_option
def simulate(num_candidates: int, num_reports: int, k: int | None, h: int | None, num_cohorts: int | None,
             f: float | None, p: float | None, q: float | None, zipf_exponent: float, num_extra: int,
             num_decoys: int | None, seed: int, output: str | None, truth_path: str | None, then_decode: bool,
             alpha: float, top: int, json_path: str | None, plot_path: str | None) -> None:
    """A seeded population with known truth → reports (+ truth file); with --decode, decoded and scored."""
    import numpy as np
    from rich.console import Console
    from rich.markup import escape

    from vetdp.impl.rappor_decoding import simulate_population

    if not then_decode:
        for name, given in (("--json", json_path), ("--plot", plot_path)):
            if given:
                raise click.UsageError(f"{name} applies with --decode (the decode's result); use --output and "
                                       "--truth for the simulated data")
    prm = _resolve(_given(k, h, num_cohorts, f, p, q), None, "")
    _check_cells("--num-reports", num_reports, prm["k"])
    eps1, eps_inf = _run(lambda: _epsilons(prm))  # the mechanism refuses bad (f, p, q) before any work
    err = _err_console()
    start = time.perf_counter()
    with _progress(err) as bar, _phase(bar, f"simulating {num_reports} reports (Zipf over {num_candidates} "
                                            "candidates, Bloom filters, permanent and instantaneous RR)"):
        sim = _run(lambda: simulate_population(num_candidates, num_reports, prm["num_cohorts"], k=prm["k"],
                                               h=prm["h"], f=prm["f"], p=prm["p"], q=prm["q"],
                                               zipf_exponent=zipf_exponent, num_extra=num_extra,
                                               num_decoys=num_decoys, seed=seed))
    seconds = time.perf_counter() - start
    candidates = [str(c) for c in sim.candidates]
    truth = _truth_of(sim)
    setup = {"num_candidates": num_candidates, "num_reports": num_reports, "zipf_exponent": zipf_exponent,
             "num_extra": num_extra, "num_decoys": num_candidates // 2 if num_decoys is None else num_decoys,
             "seed": seed}
    if output:
        write_reports(output, prm, np.asarray(sim.cohorts), None, np.asarray(sim.reports),
                      {"randomized": True, "simulated": setup})
    if truth_path:
        write_output("--truth", truth_path, json.dumps({
            "schema_version": 1, "command": "rappor simulate", "parameters": {**prm, **setup},
            "candidates": candidates, "true_counts": truth}, indent=1))
    out = err if json_path == "-" else Console()
    heavy = sorted(truth.items(), key=lambda kv: -kv[1])[:5]
    in_list = sum(truth.get(c, 0) for c in candidates)
    out.print(escape(
        f"simulated {num_reports} reports in {prm['num_cohorts']} cohorts (k={prm['k']}, h={prm['h']}, f={prm['f']}, "
        f"p={prm['p']}, q={prm['q']}; ε₁ = {eps1:.6g}, ε∞ = {eps_inf:.6g}), seed {seed}, {seconds:.2f} s; "
        f"{num_candidates} candidates (Zipf s={zipf_exponent}) hold {in_list / num_reports:.1%} of the reports; "
        "heaviest: " + ", ".join(f"{v} {c / num_reports:.2%}" for v, c in heavy)))
    if then_decode:
        _decode_and_report(np.asarray(sim.reports), np.asarray(sim.cohorts), candidates, prm, alpha, truth, json_path,
                           plot_path, top, "rappor simulate --decode")
