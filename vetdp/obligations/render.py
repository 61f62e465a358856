"""Render proof documents to standalone HTML: Markdown via markdown-it-py, LaTeX math as
MathML via latex2mathml (typeset by the browser, no network), and a status banner."""

from __future__ import annotations

import html
import re
from pathlib import Path

from latex2mathml.converter import convert as latex_to_mathml
from markdown_it import MarkdownIt

from vetdp.obligations.pinning import Pinning, ProofDoc, ProofStatus

__all__ = ["render_doc", "render_all", "math_to_mathml"]

_MATH = re.compile(r"\$\$(.+?)\$\$|\$(.+?)\$", re.S)
_FENCE = re.compile(r"(```.*?```)", re.S)
_BANNER = {"up to date": "#2e7d32", "outdated": "#b26a00", "incomplete": "#c62828", "failing": "#c62828",
           "invalid": "#c62828"}


def math_to_mathml(markdown: str) -> tuple[str, dict[str, str]]:
    """``markdown`` with each $...$ / $$...$$ (outside code fences) replaced by a placeholder,
    and the placeholder -> MathML map. Raises ValueError naming the formula it cannot convert."""
    pieces, table = [], {}
    for part in _FENCE.split(markdown):
        if part.startswith("```"):
            pieces.append(part)
            continue

        def sub(m: re.Match) -> str:
            tex, display = (m.group(1), True) if m.group(1) is not None else (m.group(2), False)
            key = f"MATHPLACEHOLDER{len(table)}X"
            try:
                table[key] = latex_to_mathml(tex.strip(), display="block" if display else "inline")
            except Exception as e:  # noqa: BLE001 - report which formula failed
                raise ValueError(f"cannot typeset formula {tex!r}: {e}") from None
            return key

        pieces.append(_MATH.sub(sub, part))
    return "".join(pieces), table


def render_doc(doc: ProofDoc, status: ProofStatus) -> str:
    """The HTML page of one proof."""
    text, table = math_to_mathml(doc.body)
    body = MarkdownIt("commonmark").enable("table").render(text)
    for key, mathml in table.items():
        body = body.replace(key, mathml)
    color = _BANNER[status.state]
    failing = f"<br>failing: {html.escape(', '.join(status.failing))}" if status.failing else ""
    failing += "".join(f"<br>warning: {html.escape(w)}" for w in status.warnings)
    rows = {**doc.meta, "obligations (derived from constants)": list(status.obligations)}
    meta = "".join(f"<li><b>{html.escape(k)}</b>: {html.escape(', '.join(v) if isinstance(v, list) else v)}</li>"
                   for k, v in rows.items())
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(doc.stem)}</title>"
            "<style>body{font-family:sans-serif;max-width:60em;margin:auto;line-height:1.5}"
            "table{border-collapse:collapse}td,th{border:1px solid #999;padding:.3em}"
            "pre{background:#f4f4f4;padding:.6em;overflow:auto}"
            "details li{font-size:.85em;word-break:break-all}</style></head><body>"
            f"<div class='banner' style='background:{color};color:white;padding:.6em'>"
            f"<b>{html.escape(status.state)}</b> — {html.escape(status.message)}{failing}</div>"
            f"{body}<details><summary>pinning</summary><ul>{meta}</ul></details></body></html>")


def render_all(pin: Pinning, out_dir: Path, z3_rlimit: int | None = None) -> list[Path]:
    """Write ``<stem>.html`` for every proof into ``out_dir`` (z3 within ``z3_rlimit`` units per query); returns the
    paths written."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for stem in pin.stems():
        page = render_doc(pin.doc(stem), pin.status(stem, z3_rlimit=z3_rlimit))
        path = out_dir / f"{stem}.html"
        path.write_text(page, encoding="utf-8")
        paths.append(path)
    return paths
