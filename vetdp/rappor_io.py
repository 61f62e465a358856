"""RAPPOR files: the bit strings of vetdp's reports files, the client secret file, and the file formats of Google's
reference implementation (google/rappor), read and written.

The reference's formats, as its tools write and read them:

* **params CSV** (``k,h,m,p,q,f``, one row of values): the parameters. R's ``write.csv`` quotes the header, a
  hand-written file may put spaces after the commas; both are read.
* **reports CSV** (``client,cohort,bloom,prr,irr``, the reference simulator's output): one report per row, each
  bit string written most significant bit first, i.e. character j is Bloom bit k − 1 − j (the reference's bit order).
* **counts CSV** (``sum_bits``'s output, no header): one row per cohort, the number of reports in it, then the number
  with bit 0, bit 1, …, bit k − 1 set.
* **map CSV** (``hash_candidates``'s output, no header): one row per candidate, the string, then for each cohort j its
  h Bloom positions as 1-based rows j·k + bit + 1 of the (m·k)-row design; R's simulation leaves empty fields where
  positions collide.

None of them records its hash or bit order: the reference's tools always hash with MD5 (``hash="md5"``) and write bit
strings in the reference's order, so a file in these formats is read as such, and vetdp writes them only for MD5
reports. Every malformed file raises :class:`RapporFileError`, a ValueError whose one-line message names the option,
the file, the line and what was expected.
"""

from __future__ import annotations

import csv
import io
import math
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "RapporFileError",
    "BIT_ORDERS",
    "REFERENCE_HASH",
    "REFERENCE_BIT_ORDER",
    "REPORTS_HEADER",
    "PARAMS_HEADER",
    "bits_to_strings",
    "strings_to_bits",
    "read_lines",
    "read_secret",
    "read_params_csv",
    "params_csv_text",
    "is_reference_reports",
    "read_reference_reports",
    "reference_reports_text",
    "read_counts_csv",
    "counts_csv_text",
    "read_map_csv",
    "map_csv_text",
    "map_mismatch",
    "REPORTS_SUFFIXES",
    "REPORTS_SCHEMA_VERSION",
    "read_reports_file",
    "write_reports_file",
    "write_text_file",
]

BIT_ORDERS = ("vetdp", "reference")  # character i is Bloom bit i / Bloom bit k − 1 − i
REFERENCE_HASH, REFERENCE_BIT_ORDER = "md5", "reference"
REPORTS_HEADER = ("client", "cohort", "bloom", "prr", "irr")
PARAMS_HEADER = ("k", "h", "m", "p", "q", "f")


class RapporFileError(ValueError):
    """A RAPPOR file that cannot be used: unreadable, malformed, or disagreeing with the parameters."""


def _where(option: str, path: str, line: int | None = None) -> str:
    return f"{option}={path!r}" + (f", line {line}" if line is not None else "")


def _text(option: str, path: str) -> str:
    """The file's UTF-8 text, read through :func:`vetdp.inputs.read_text` (size, encoding: line and column said)."""
    from vetdp.inputs import InputError, read_text

    try:
        return read_text(path, f"{option}={path!r}")
    except InputError as e:
        raise RapporFileError(str(e)) from None


def _json(text: str, where: str) -> Any:
    """``text`` as strict JSON (:func:`vetdp.inputs.parse_json`: no NaN, bounded nesting and integer length)."""
    from vetdp.inputs import InputError, parse_json

    try:
        return parse_json(text, where)
    except InputError as e:
        raise RapporFileError(str(e)) from None


MAX_COHORT = 2**63 - 1  # cohorts are held as int64; their range against num_cohorts is checked by the caller


def _cohorts(values: Sequence[Any], where: str, place: Callable[[int], str]) -> np.ndarray:
    """Cohorts read from a file (ints, or decimal digits in a CSV) as int64; each must be an integer in
    [0, MAX_COHORT] (``place(i)`` names entry i in the message)."""
    out = []
    for i, v in enumerate(values):
        if isinstance(v, str):
            v = int(v.strip()) if v.strip().isascii() and v.strip().isdigit() else v
        if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= MAX_COHORT:
            raise RapporFileError(f"{where}: {place(i)} = {v!r:.40} must be a cohort, an integer in [0, "
                                  "num_cohorts)")
        out.append(v)
    return np.array(out, dtype=np.int64)


# ------------------------------------------------------------------ bit strings

def bits_to_strings(rows: np.ndarray, bit_order: str = "vetdp") -> list[str]:
    """Each row of an (n, k) bit array as a string of '0'/'1': character i is bit i (``"vetdp"``) or bit k − 1 − i
    (``"reference"``, most significant bit first, as the reference's ``bit_string``)."""
    if bit_order not in BIT_ORDERS:
        raise ValueError(f"bit_order={bit_order!r} must be one of {', '.join(BIT_ORDERS)}")
    a = np.asarray(rows, dtype=bool)
    if bit_order == "reference":
        a = a[:, ::-1]
    k = a.shape[1]
    flat = np.where(a, np.uint8(49), np.uint8(48)).astype(np.uint8).tobytes().decode("ascii")
    return [flat[i * k:(i + 1) * k] for i in range(a.shape[0])]


def strings_to_bits(strings: Sequence[Any], k: int, bit_order: str, where: str, what: str = "report",
                    first_line: int = 1) -> np.ndarray:
    """The (n, k) bool array of bit strings written in ``bit_order``; refused (naming ``where``, the line and the
    string) unless every entry is a str of exactly k characters '0'/'1'. Line numbers count from ``first_line``."""
    for i, s in enumerate(strings):
        if not isinstance(s, str) or len(s) != k:
            got = f"{len(s)} characters" if isinstance(s, str) else f"a {type(s).__name__}"
            raise RapporFileError(f"{where}, line {first_line + i}: {what} {str(s)[:40]!r} has {got}; every {what} "
                                  f"must be a string of k={k} '0'/'1' (rows with fewer or more bits are refused)")
    buf = np.frombuffer("".join(strings).encode("ascii", errors="replace"), dtype=np.uint8).reshape(len(strings), k)
    ok = (buf == 48) | (buf == 49)
    if not ok.all():
        i = int(np.flatnonzero(~ok.all(axis=1))[0])
        raise RapporFileError(f"{where}, line {first_line + i}: {what} {strings[i][:40]!r} must hold only '0' and '1'")
    bits = buf == 49
    return bits[:, ::-1].copy() if bit_order == "reference" else bits


# ------------------------------------------------------------------ lists of strings, the secret

def read_lines(option: str, path: str, what: str) -> list[str]:
    """One string per line (UTF-8, line endings removed); refused: unreadable, empty, or a blank line (which would
    otherwise be the empty string, a value nobody meant)."""
    lines = _text(option, path).splitlines()
    if not lines:
        raise RapporFileError(f"{option}={path!r} holds no {what}; it must hold at least one")
    for i, line in enumerate(lines):
        if not line.strip():
            raise RapporFileError(f"{option}={path!r}, line {i + 1} is blank; every line must hold one {what[:-1]} "
                                  "(remove blank lines; an empty string is never a value)")
    return lines


def read_secret(option: str, path: str, create: bool = True, min_bytes: int = 16,
                new: Any = None) -> tuple[bytes, bool]:
    """(the secret, created): the bytes of the file ``path`` — its content with surrounding whitespace removed, read
    as hex when it is hex — or, when the file does not exist and ``create``, a new secret ``new()`` written there as
    hex with permissions 0600 (readable by its owner only). Refused: unreadable, or shorter than ``min_bytes``."""
    p = Path(path)
    if not p.exists():
        if not create:
            raise RapporFileError(f"{option}={path!r} does not exist")
        secret = new()
        try:
            fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w", encoding="ascii") as fh:
                fh.write(secret.hex() + "\n")
        except OSError as e:
            raise RapporFileError(f"{option}={path!r}: cannot create the secret file: {e.strerror or e}") from None
        return secret, True
    try:
        raw = p.read_bytes().strip()
    except OSError as e:
        raise RapporFileError(f"{option}={path!r}: cannot read: {e.strerror or e}") from None
    try:
        secret = bytes.fromhex(raw.decode("ascii"))
    except (UnicodeDecodeError, ValueError):
        secret = raw
    if len(secret) < min_bytes:
        raise RapporFileError(f"{option}={path!r} holds a secret of {len(secret)} bytes; it needs at least "
                              f"{min_bytes} (delete the file to have a new one made)")
    return secret, False


# ------------------------------------------------------------------ params CSV

def read_params_csv(option: str, path: str) -> dict[str, Any]:
    """{k, h, num_cohorts, p, q, f} from the reference's params CSV: header k,h,m,p,q,f (quotes and spaces allowed),
    one row of values (k, h, m integers; p, q, f numbers); refused otherwise."""
    rows = [r for r in csv.reader(io.StringIO(_text(option, path)), skipinitialspace=True) if r]
    if len(rows) != 2:
        raise RapporFileError(f"{option}={path!r} has {len(rows)} non-empty rows; the reference's params CSV has two: "
                              "the header k,h,m,p,q,f and one row of values")
    header = tuple(c.strip() for c in rows[0])
    if header != PARAMS_HEADER:
        raise RapporFileError(f"{_where(option, path, 1)}: header {','.join(header)!r} must be k,h,m,p,q,f")
    if len(rows[1]) != 6:
        raise RapporFileError(f"{_where(option, path, 2)}: {len(rows[1])} values; the header names 6")
    out: dict[str, Any] = {}
    for name, key, value in zip(PARAMS_HEADER, ("k", "h", "num_cohorts", "p", "q", "f"), rows[1], strict=True):
        text = value.strip()
        try:
            number = int(text) if name in ("k", "h", "m") else float(text)
        except ValueError:
            kind = "an integer" if name in ("k", "h", "m") else "a number"
            raise RapporFileError(f"{_where(option, path, 2)}: {name}={text!r} must be {kind}") from None
        if isinstance(number, float) and not math.isfinite(number):
            raise RapporFileError(f"{_where(option, path, 2)}: {name}={text!r} must be finite")
        out[key] = number
    return out


def params_csv_text(params: dict[str, Any]) -> str:
    """The reference's params CSV of {k, h, num_cohorts, p, q, f} (floats written so that they read back exactly)."""
    values = [params["k"], params["h"], params["num_cohorts"], params["p"], params["q"], params["f"]]
    return ",".join(PARAMS_HEADER) + "\n" + ",".join(repr(v) if isinstance(v, float) else str(v) for v in values) + "\n"


# ------------------------------------------------------------------ reports CSV

def is_reference_reports(first_line: str) -> bool:
    """Whether a CSV's first line is the reference simulator's header client,cohort,bloom,prr,irr."""
    return tuple(c.strip().strip('"') for c in first_line.split(",")) == REPORTS_HEADER


def read_reference_reports(option: str, path: str, k: int | None = None) -> tuple[list[str], np.ndarray, np.ndarray]:
    """(clients, cohorts (n,) int64, irr (n, k) bool in Bloom bit order) from the reference's reports CSV. Each irr is
    read in the reference's bit order (character j is bit k − 1 − j); k is the first row's length unless given.
    Refused: a wrong header, a row without 5 fields, a cohort that is not an integer >= 0, an irr of another
    length or with other characters, no rows."""
    reader = csv.reader(io.StringIO(_text(option, path)))
    rows = list(reader)
    if not rows or tuple(c.strip() for c in rows[0]) != REPORTS_HEADER:
        head = ",".join(rows[0]) if rows else ""
        raise RapporFileError(f"{_where(option, path, 1)}: header {head[:60]!r} must be client,cohort,bloom,prr,irr "
                              "(the reference's reports CSV)")
    body = [(i + 2, r) for i, r in enumerate(rows[1:]) if r]
    if not body:
        raise RapporFileError(f"{option}={path!r} holds no reports; it must hold at least one")
    clients, cohorts, irr = [], [], []
    for line, r in body:
        if len(r) != 5:
            raise RapporFileError(f"{_where(option, path, line)}: {len(r)} fields; the header names 5")
        try:
            c = int(r[1])
        except ValueError:
            c = -1
        if c < 0:
            raise RapporFileError(f"{_where(option, path, line)}: cohort {r[1]!r} must be an integer >= 0")
        clients.append(r[0])
        cohorts.append(c)
        irr.append(r[4].strip())
    width = len(irr[0]) if k is None else k
    bits = _rows_to_bits(irr, width, _where(option, path), [line for line, _ in body])
    return clients, np.array(cohorts, dtype=np.int64), bits


def _rows_to_bits(strings: list[str], k: int, where: str, lines: list[int]) -> np.ndarray:
    try:
        return strings_to_bits(strings, k, REFERENCE_BIT_ORDER, where, "irr")
    except RapporFileError as e:  # name the file's own line, not the row's index
        msg = str(e)
        index = int(msg.split(", line ")[1].split(":")[0]) - 1
        raise RapporFileError(msg.replace(f", line {index + 1}:", f", line {lines[index]}:", 1)) from None


def reference_reports_text(clients: Sequence[Any], cohorts: Sequence[int], irr: np.ndarray,
                           bloom: np.ndarray | None = None, prr: np.ndarray | None = None) -> str:
    """The reference's reports CSV: header client,cohort,bloom,prr,irr, then one row per report, bit strings in the
    reference's order. ``bloom`` and ``prr`` are written only when given (for tests: they are not private); their
    fields are empty otherwise, which the reference's ``sum_bits`` ignores."""
    n = len(cohorts)
    columns = [bits_to_strings(a, REFERENCE_BIT_ORDER) if a is not None else [""] * n for a in (bloom, prr, irr)]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(REPORTS_HEADER)
    for i in range(n):
        writer.writerow([clients[i], int(cohorts[i]), columns[0][i], columns[1][i], columns[2][i]])
    return out.getvalue()


# ------------------------------------------------------------------ counts CSV

def read_counts_csv(option: str, path: str, k: int, num_cohorts: int) -> tuple[np.ndarray, np.ndarray]:
    """(counts (m, k) int64, cohort sizes (m,) int64) from the reference's counts CSV: m = ``num_cohorts`` rows of
    k + 1 non-negative integers, the cohort's reports then its count for bit 0, …, k − 1, each count at most the
    cohort's reports. Refused otherwise, naming the line."""
    rows = [(i + 1, r) for i, r in enumerate(csv.reader(io.StringIO(_text(option, path)))) if r]
    if len(rows) != num_cohorts:
        raise RapporFileError(f"{option}={path!r} has {len(rows)} rows; the counts CSV has one per cohort, "
                              f"--num-cohorts={num_cohorts}")
    out = np.zeros((num_cohorts, k + 1), dtype=np.int64)
    for j, (line, r) in enumerate(rows):
        if len(r) != k + 1:
            raise RapporFileError(f"{_where(option, path, line)}: {len(r)} values; a counts row holds the cohort's "
                                  f"reports and one count per bit, k + 1 = {k + 1} (--k={k})")
        for i, v in enumerate(r):
            try:
                x = float(v)
            except ValueError:
                x = -1.0
            if not (math.isfinite(x) and x >= 0 and x.is_integer()):
                raise RapporFileError(f"{_where(option, path, line)}: value {i + 1} = {v.strip()!r} must be an "
                                      "integer >= 0")
            out[j, i] = int(x)
        if (out[j, 1:] > out[j, 0]).any():
            raise RapporFileError(f"{_where(option, path, line)}: a bit count exceeds the cohort's {out[j, 0]} "
                                  "reports")
    return out[:, 1:], out[:, 0]


def counts_csv_text(counts: np.ndarray, sizes: np.ndarray) -> str:
    """The reference's counts CSV: per cohort, its reports, then its count of bit 0, …, k − 1 (``sum_bits``)."""
    return "".join(",".join(str(int(v)) for v in [n, *row]) + "\n" for n, row in zip(sizes, counts, strict=True))


# ------------------------------------------------------------------ map CSV

def read_map_csv(option: str, path: str, k: int, h: int, num_cohorts: int) -> tuple[list[str], Any]:
    """(candidates, design): the reference's map CSV read as R reads it — each row a candidate string and at most
    h·m 1-based positions in [1, m·k] (empty fields allowed, where R's simulation dropped a collision) — into the
    (m·k, M) 0/1 sparse design matrix (a position listed twice counts once). Refused: a blank or repeated candidate, a
    row with more than h·m positions, a position that is not an integer in [1, m·k], no rows."""
    import scipy.sparse as sp

    rows = [(i + 1, r) for i, r in enumerate(csv.reader(io.StringIO(_text(option, path)))) if r]
    if not rows:
        raise RapporFileError(f"{option}={path!r} holds no candidates; it must hold at least one")
    candidates: list[str] = []
    seen: dict[str, int] = {}
    row_idx, col_idx = [], []
    for m, (line, r) in enumerate(rows):
        name = r[0]
        if not name.strip():
            raise RapporFileError(f"{_where(option, path, line)}: the candidate is blank; every row must name one")
        if name in seen:
            raise RapporFileError(f"{_where(option, path, line)}: candidate {name[:60]!r} repeats line {seen[name]}")
        seen[name] = line
        fields = r[1:]
        if len(fields) > h * num_cohorts:
            raise RapporFileError(f"{_where(option, path, line)}: {len(fields)} positions; a map row holds h·m = "
                                  f"{h * num_cohorts} (--h={h}, --num-cohorts={num_cohorts})")
        positions = set()
        for v in fields:
            if not v.strip():
                continue
            try:
                x = int(v)
            except ValueError:
                x = 0
            if not 1 <= x <= num_cohorts * k:
                raise RapporFileError(f"{_where(option, path, line)}: position {v.strip()!r} must be an integer in "
                                      f"[1, m·k = {num_cohorts * k}]")
            positions.add(x - 1)
        candidates.append(name)
        row_idx += sorted(positions)
        col_idx += [m] * len(positions)
    design = sp.csc_matrix((np.ones(len(row_idx)), (row_idx, col_idx)), shape=(num_cohorts * k, len(candidates)))
    return candidates, design


def map_csv_text(candidates: Sequence[str], positions: np.ndarray, k: int) -> str:
    """The reference's map CSV (``hash_candidates``): per candidate m its string, then for each cohort j its h Bloom
    positions ``positions[m, j]`` (0-based, in hash order, a collision written twice as the reference does) as the
    1-based rows j·k + position + 1."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    pos = np.asarray(positions, dtype=np.int64)
    rows = (np.arange(pos.shape[1], dtype=np.int64)[None, :, None] * k + pos + 1).reshape(pos.shape[0], -1)
    for name, row in zip(candidates, rows.tolist(), strict=True):
        writer.writerow([name, *row])
    return out.getvalue()


def map_mismatch(candidates: Sequence[str], design: Any, expected: Any, num_cohorts: int, k: int) -> str | None:
    """None when the map's design equals ``expected`` (the candidates' Bloom bits under the reports' hash), else a
    one-line description of the first candidate and cohort whose positions differ."""
    import scipy.sparse as sp

    a, b = sp.csc_matrix(design), sp.csc_matrix(expected)
    if a.shape == b.shape and (a != b).nnz == 0:
        return None
    for m, name in enumerate(candidates):
        got = set(a.indices[a.indptr[m]:a.indptr[m + 1]].tolist())
        want = set(b.indices[b.indptr[m]:b.indptr[m + 1]].tolist())
        if got != want:
            j = min(x // k for x in got ^ want)
            show = lambda s, j=j: sorted(x - j * k for x in s if j * k <= x < (j + 1) * k)  # noqa: E731
            return (f"candidate {name[:60]!r} has in cohort {j} the bits {show(got)}, not {show(want)}, the bits of "
                    "its Bloom filter")
    return "the map's shape differs from the candidates' design"


# ------------------------------------------------------------------ reports files, every format

REPORTS_SUFFIXES = (".json", ".npz", ".csv")
REPORTS_SCHEMA_VERSION = 1
_VETDP_CSV_COLUMNS = {"cohort", "reports", "bloom_filters"}


def _packed_rows(option: str, path: str, name: str, packed: np.ndarray, k: int, bit_order: str) -> np.ndarray:
    """Unpack an NPZ array of bit rows, refusing rows whose width is not k bits (numpy.unpackbits would pad a short
    row with zeros, and decode it silently)."""
    width = (k + 7) // 8
    if packed.ndim != 2 or packed.dtype != np.uint8 or packed.shape[1] != width:
        raise RapporFileError(f"{option}={path!r}: {name} are stored as {packed.shape} {packed.dtype}; rows of k={k} "
                              f"bits pack into {width} bytes each")
    if k % 8 and (packed[:, -1] & np.uint8((1 << (8 - k % 8)) - 1)).any():
        raise RapporFileError(f"{option}={path!r}: {name} have bits set beyond k={k}; the file's rows are wider")
    bits = np.unpackbits(packed, axis=1, count=k).astype(bool)
    return bits[:, ::-1].copy() if bit_order == "reference" else bits


def read_reports_file(option: str, path: str, bit_order: str = "vetdp",
                      k: int | None = None) -> tuple[dict[str, Any], np.ndarray, np.ndarray, list[str] | None]:
    """(parameters the file carries, cohorts (n,) int64, reports (n, k) bool in Bloom bit order, clients or None)
    from a reports file: vetdp's JSON, NPZ or CSV (its bit strings in the file's recorded ``bit_order``, else the
    given one), or the reference's reports CSV (``client,cohort,bloom,prr,irr``: it carries hash md5 and bit order
    reference). ``k``: the width a CSV without parameters must have (default: its first row's).

    Refused, with a one-line :class:`RapporFileError`: another suffix, an unreadable or corrupt file, Bloom filters
    only, rows whose width is not k, unknown CSV columns, cohorts and rows of unequal number, no rows."""
    suffix = Path(path).suffix.lower()
    clients: list[str] | None = None
    if suffix not in REPORTS_SUFFIXES:
        raise RapporFileError(f"{option}={path!r} must end in .json, .npz or .csv (the format is read from the suffix)")
    if suffix == ".npz":
        params, cohorts, reports = _read_npz(option, path, bit_order)
    elif suffix == ".csv":
        text = _text(option, path)
        first = text.split("\n", 1)[0]
        if is_reference_reports(first):
            clients, cohorts, reports = read_reference_reports(option, path, k)
            params = {"hash": REFERENCE_HASH, "bit_order": REFERENCE_BIT_ORDER, "format": "reference"}
        else:
            params, cohorts, reports = _read_vetdp_csv(option, path, text, bit_order, k)
    else:
        params, cohorts, reports = _read_json(option, path, bit_order)
    if len(cohorts) != len(reports):
        raise RapporFileError(f"{option}={path!r}: {len(cohorts)} cohorts for {len(reports)} reports; there must be "
                              "one per report")
    if len(reports) == 0:
        raise RapporFileError(f"{option}={path!r} holds no reports; it must hold at least one")
    return params, cohorts, reports, clients


def _read_npz(option: str, path: str, bit_order: str) -> tuple[dict, np.ndarray, np.ndarray]:
    import zipfile

    try:
        with open(path, "rb") as fh:
            magic = fh.read(4)
    except OSError as e:
        raise RapporFileError(f"{option}={path!r}: cannot read: {e.strerror or e}") from None
    if magic != b"PK\x03\x04":
        raise RapporFileError(f"{option}={path!r} is not a readable NPZ reports file: not a zip archive (corrupt, "
                              "or not written by vetdp rappor)")
    try:
        with np.load(path, allow_pickle=False) as z:
            files = set(z.files)
            if "reports" not in files:
                raise RapporFileError(f"{option}={path!r} holds no randomized reports (arrays: {sorted(files)}); "
                                      "encode with --randomize")
            params = _json(str(z["parameters"]), f"{option}={path!r}: parameters") if "parameters" in files else {}
            if not isinstance(params, dict) or not isinstance(params.get("k"), int):
                raise RapporFileError(f"{option}={path!r}: NPZ reports need the parameter k to unpack the bits")
            cohorts = np.asarray(z["cohorts"])
            packed = np.asarray(z["reports"])
    except RapporFileError:
        raise
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as e:
        reason = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise RapporFileError(f"{option}={path!r} is not a readable NPZ reports file: {reason}") from None
    if cohorts.ndim != 1 or (cohorts.size and not np.issubdtype(cohorts.dtype, np.integer)):
        raise RapporFileError(f"{option}={path!r}: cohorts must be one integer per report")
    order = params.get("bit_order", bit_order)
    return params, cohorts.astype(np.int64), _packed_rows(option, path, "reports", packed, params["k"], order)


def _read_json(option: str, path: str, bit_order: str) -> tuple[dict, np.ndarray, np.ndarray]:
    doc = _json(_text(option, path), f"{option}={path!r}")
    if not isinstance(doc, dict) or "cohorts" not in doc:
        raise RapporFileError(f"{option}={path!r}: expected a JSON object with 'parameters', 'cohorts' and 'reports'")
    if "reports" not in doc:
        raise RapporFileError(f"{option}={path!r} holds no randomized reports (keys: {sorted(doc)}); encode with "
                              "--randomize")
    params = doc.get("parameters") or {}
    strings, cohorts = doc["reports"], doc["cohorts"]
    if not isinstance(params, dict):
        raise RapporFileError(f"{option}={path!r}: 'parameters' is a {type(params).__name__}; it must be a JSON "
                              'object such as {"k": 128, "h": 2, "num_cohorts": 64}')
    if not isinstance(strings, list) or not isinstance(cohorts, list):
        raise RapporFileError(f"{option}={path!r}: 'parameters' must be an object, 'reports' and 'cohorts' lists")
    cohort_array = _cohorts(cohorts, f"{option}={path!r}", lambda i: f"cohorts[{i}]")
    k = params.get("k", len(strings[0]) if strings and isinstance(strings[0], str) else 0)
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise RapporFileError(f"{option}={path!r}: parameters.k = {k!r:.40} must be an integer >= 1")
    bits = strings_to_bits(strings, k, params.get("bit_order", bit_order), f"{option}={path!r}",
                           "report") if strings else np.zeros((0, k), dtype=bool)
    return params, cohort_array, bits


def _read_vetdp_csv(option: str, path: str, text: str, bit_order: str,
                    k: int | None) -> tuple[dict, np.ndarray, np.ndarray]:
    lines = text.splitlines()
    params: dict[str, Any] = {}
    first = 1
    if lines and lines[0].startswith("# rappor "):
        params = _json(lines[0][len("# rappor "):], f"{_where(option, path, 1)}: the parameter line")
        if not isinstance(params, dict):
            raise RapporFileError(f"{_where(option, path, 1)}: the parameter line must be a JSON object")
        lines, first = lines[1:], 2
    if not lines:
        raise RapporFileError(f"{option}={path!r} is empty; expected a header 'cohort,reports' and one row per report")
    header = [c.strip() for c in lines[0].split(",")]
    unknown = [c for c in header if c not in _VETDP_CSV_COLUMNS]
    if unknown:
        hint = (" (the reference's reports CSV has exactly the header client,cohort,bloom,prr,irr)"
                if {"client", "prr", "bloom", "irr"} & set(header) else "")
        raise RapporFileError(f"{_where(option, path, first)}: unknown columns {unknown}; vetdp's reports CSV has "
                              f"'cohort', 'reports' and optionally 'bloom_filters'{hint}")
    if "reports" not in header and "bloom_filters" in header:
        raise RapporFileError(f"{option}={path!r} holds no randomized reports (columns: {header}); encode with "
                              "--randomize")
    if "cohort" not in header or "reports" not in header:
        raise RapporFileError(f"{_where(option, path, first)}: the header {lines[0]!r} must name the columns 'cohort' "
                              "and 'reports'")
    ci, ri = header.index("cohort"), header.index("reports")
    rows = []
    for i, line in enumerate(lines[1:]):
        if not line.strip():
            raise RapporFileError(f"{_where(option, path, first + 1 + i)} is blank; every line holds one report")
        fields = line.split(",")
        if len(fields) != len(header):
            raise RapporFileError(f"{_where(option, path, first + 1 + i)}: {len(fields)} fields; the header has "
                                  f"{len(header)}")
        rows.append(fields)
    cohorts = _cohorts([r[ci] for r in rows], f"{option}={path!r}", lambda i: f"line {first + 1 + i}: cohort")
    strings = [r[ri].strip() for r in rows]
    width = params.get("k", k if k is not None else (len(strings[0]) if strings else 1))
    bits = strings_to_bits(strings, width, params.get("bit_order", bit_order), f"{option}={path!r}", "report",
                           first_line=first + 1)
    return params, cohorts, bits


def write_reports_file(option: str, path: str, params: dict[str, Any], cohorts: np.ndarray,
                       bloom: np.ndarray | None, reports: np.ndarray | None, command: str,
                       layout: str = "vetdp", clients: Sequence[Any] | None = None,
                       prr: np.ndarray | None = None) -> str | None:
    """Write a reports file; returns the text instead when ``path`` is '-' (JSON, for standard output).

    vetdp's formats (from the suffix): ``parameters`` (k, h, num_cohorts, hash, bit_order, and f, p, q when
    randomized, and what else the caller records), ``cohorts``, ``bloom_filters`` and/or ``reports``, rows in the
    ``bit_order`` of the parameters. JSON adds ``schema_version`` and ``command``; NPZ packs the rows
    (numpy.packbits, axis 1) and stores the parameters as a JSON string; CSV has the first line
    ``# rappor {parameters as JSON}``. ``layout="reference"`` (a .csv): the reference's reports CSV, for MD5 reports
    in the reference's bit order only. Refused: another suffix, an unwritable file."""
    import json

    if path != "-" and Path(path).suffix.lower() not in REPORTS_SUFFIXES:
        raise RapporFileError(f"{option}={path!r} must end in .json, .npz or .csv (the format is chosen by the "
                              "suffix), or be '-' for JSON on standard output")
    order = params.get("bit_order", "vetdp")
    if layout == "reference":
        if path == "-" or Path(path).suffix.lower() != ".csv":
            raise RapporFileError(f"{option}={path!r}: the reference's layout is a CSV; give a .csv file")
        if params.get("hash") != REFERENCE_HASH or order != REFERENCE_BIT_ORDER or reports is None:
            raise RapporFileError(f"{option}={path!r}: the reference's reports CSV holds randomized MD5 reports in "
                                  f"its bit order; these have hash={params.get('hash')!r}, bit_order={order!r}")
        ids = clients if clients is not None else list(range(len(cohorts)))
        _write(option, path, reference_reports_text(ids, cohorts, reports, bloom, prr))
        return None
    stored = {name: (a[:, ::-1] if order == "reference" else a) for name, a in (("bloom_filters", bloom),
                                                                               ("reports", reports)) if a is not None}
    if path != "-" and Path(path).suffix.lower() == ".npz":
        arrays = {"cohorts": np.asarray(cohorts, dtype=np.int64), "parameters": np.array(json.dumps(params)),
                  **{name: np.packbits(a, axis=1) for name, a in stored.items()}}
        try:
            with open(path, "wb") as fh:
                np.savez_compressed(fh, **arrays)
        except OSError as e:
            raise RapporFileError(f"{option}={path!r}: cannot write: {e.strerror or e}") from None
        return None
    columns = [(name, bits_to_strings(a)) for name, a in stored.items()]
    if path != "-" and Path(path).suffix.lower() == ".csv":
        lines = ["# rappor " + json.dumps(params), ",".join(["cohort", *(n for n, _ in columns)])]
        lines += [",".join([str(int(c)), *(col[i] for _, col in columns)]) for i, c in enumerate(cohorts)]
        _write(option, path, "\n".join(lines) + "\n")
        return None
    text = json.dumps({"schema_version": REPORTS_SCHEMA_VERSION, "command": command, "parameters": params,
                       "cohorts": [int(c) for c in cohorts], **dict(columns)})
    if path == "-":
        return text
    _write(option, path, text)
    return None


def _write(option: str, path: str, text: str) -> None:
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as e:
        raise RapporFileError(f"{option}={path!r}: cannot write: {e.strerror or e}") from None


def write_text_file(option: str, path: str, text: str, suffix: str = ".csv") -> str | None:
    """Write ``text`` to ``path`` (which must end in ``suffix``), or return it when ``path`` is '-'."""
    if path == "-":
        return text
    if Path(path).suffix.lower() != suffix:
        raise RapporFileError(f"{option}={path!r} must end in {suffix} (it is written as {suffix[1:].upper()}), or "
                              "be '-' for standard output")
    _write(option, path, text)
    return None
