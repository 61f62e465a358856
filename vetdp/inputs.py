"""Reading what a user gives vetdp to read — files and JSON values — validated before use.

Every failure is an :class:`InputError` (a ValueError) whose message is one line naming the source, the place
(line and column, or the key) and the rule broken: a file that cannot be read or is too large, bytes that are not
UTF-8, JSON that is malformed, nested too deeply, holds an integer too long to convert or a NaN/Infinity token.
Callers add their own checks of types and ranges with :func:`require`, in the same message style.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

__all__ = ["InputError", "MAX_BYTES", "MAX_DEPTH", "read_text", "parse_json", "read_json", "require", "shown"]

MAX_BYTES = 1 << 30  # a file read whole is at most 1 GiB (its size is checked before it is read)
MAX_DEPTH = 100  # JSON arrays and objects nested deeper than this are refused (no input of vetdp needs 10)


class InputError(ValueError):
    """What the user gave cannot be read as required; the message names the source, the place and the rule."""


def read_text(path: Path | str, source: str, max_bytes: int = MAX_BYTES) -> str:
    """The UTF-8 text of the file ``path`` (``source`` names it in messages, e.g. ``--params='@p.json'``). Refused:
    missing, a directory, unreadable, larger than ``max_bytes``, bytes that are not UTF-8 (line and column said)."""
    p = Path(path)
    try:
        if p.is_dir():
            raise InputError(f"{source}: {str(p)!r} is a directory; give a file")
        size = p.stat().st_size
        if size > max_bytes:
            raise InputError(f"{source}: the file has {size} bytes; at most {max_bytes} are read")
        data = p.read_bytes()
    except OSError as e:
        raise InputError(f"{source}: cannot read {str(p)!r}: {e.strerror or e}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        column = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise InputError(f"{source}: line {line}, column {column}: byte 0x{data[e.start]:02x} is not UTF-8; the "
                         "file must be UTF-8 text") from None


def _no_constant(name: str) -> Any:
    raise InputError(f"{name} is not a JSON number (write a finite number)")


def _depth(value: Any) -> int:
    """How deeply arrays and objects nest in the parsed ``value`` (iteratively; 0 for a scalar)."""
    deepest, todo = 0, [(value, 1)]
    while todo:
        v, d = todo.pop()
        if isinstance(v, dict):
            v = list(v.values())
        if isinstance(v, list):
            deepest = max(deepest, d)
            todo.extend((item, d + 1) for item in v if isinstance(item, (list, dict)))
    return deepest


def parse_json(text: str, source: str, max_depth: int = MAX_DEPTH, non_finite: bool = False) -> Any:
    """The JSON value of ``text``, strictly: malformed JSON (line and column said), NaN/Infinity, an integer of more
    digits than Python converts (``sys.get_int_max_str_digits()``), arrays and objects nested more than
    ``max_depth`` deep are refused with an :class:`InputError` naming ``source``. ``non_finite=True`` reads the
    tokens NaN, Infinity and -Infinity as floats (``verify --params``: a parameter outside the spec's
    preconditions is itself checked against third-party code, and its reproduction must be able to say it)."""
    try:
        value = json.loads(text) if non_finite else json.loads(text, parse_constant=_no_constant)
    except InputError as e:
        raise InputError(f"{source}: {e}") from None
    except json.JSONDecodeError as e:
        raise InputError(f"{source}: line {e.lineno}, column {e.colno}: {e.msg} (not valid JSON)") from None
    except RecursionError:
        raise InputError(f"{source}: arrays or objects nested too deeply (at most {max_depth} levels)") from None
    except ValueError as e:  # an integer literal longer than Python converts
        digits = re.search(r"value has (\d+) digits", str(e))
        raise InputError(f"{source}: an integer has {digits.group(1) if digits else 'too many'} digits; at most "
                         f"{sys.get_int_max_str_digits()} are converted") from None
    if _depth(value) > max_depth:
        raise InputError(f"{source}: arrays or objects nested too deeply (at most {max_depth} levels)")
    return value


def read_json(path: Path | str, source: str, max_bytes: int = MAX_BYTES) -> Any:
    """:func:`parse_json` of :func:`read_text` of ``path``."""
    return parse_json(read_text(path, source, max_bytes), source)


def shown(text: str, width: int = 60) -> str:
    """``text`` as a message quotes it: repr, cut to about ``width`` characters (a long value stays one short line)."""
    return repr(text) if len(text) <= width else repr(text[:width]) + f"… ({len(text)} characters)"


def require(ok: bool, source: str, place: str, rule: str) -> None:
    """Raise :class:`InputError` ``"<source>: <place> <rule>"`` unless ``ok`` (e.g. ``require(isinstance(k, int),
    "--reports='r.json'", "parameters.k = '2'", "must be an integer in [1, 4096]")``)."""
    if not ok:
        raise InputError(f"{source}: {place} {rule}")
