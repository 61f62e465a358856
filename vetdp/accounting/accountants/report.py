"""Renderings of a :class:`~vetdp.accounting.battery.BatteryResult`: JSON, JUnit XML, Markdown.

All three format the same row values; none computes anything. JSON shape (schema_version 1)::

    {"schema_version", "library", "version", "command",
     "rows": [{"question": {...}, "entry_point", "direction", "answer", "exact_lower", "exact_upper",
               "given", "given_lower", "given_upper", "status", "ratio", "message", "repro", "shortfall", "seconds"}],
     "summary": {"violation", "translation", "loose", "ok", "error"},
     "unsupported": {entry point: {"count", "reason"}},
     "seconds", "exact_seconds"}

A non-finite answer or ratio is ``null`` (the message says which).
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections import Counter
from typing import Any

__all__ = ["to_json", "to_junit", "to_markdown", "per_entry_point"]


def to_json(result: Any, command: str = "") -> str:
    doc = result.as_dict()
    doc["command"] = command
    return json.dumps(doc, indent=2, ensure_ascii=False)


def per_entry_point(result: Any) -> dict[str, dict[str, Any]]:
    """entry point -> counts per status, the worst (lowest) and the largest ratio, seconds."""
    out: dict[str, dict[str, Any]] = {}
    for r in result.rows:
        d = out.setdefault(r.entry_point, {"violation": 0, "translation": 0, "loose": 0, "ok": 0, "error": 0,
                                           "min_ratio": None, "max_ratio": None, "seconds": 0.0})
        d[r.status] += 1
        d["seconds"] += r.seconds
        if r.ratio is not None and r.ratio == r.ratio and r.ratio != float("inf"):
            d["min_ratio"] = r.ratio if d["min_ratio"] is None else min(d["min_ratio"], r.ratio)
            d["max_ratio"] = r.ratio if d["max_ratio"] is None else max(d["max_ratio"], r.ratio)
    return out


def _case_names(rows: list) -> list[str]:
    names = [f"{r.question.id}" for r in rows]
    totals, seen, out = Counter(names), Counter(), []
    for n in names:
        seen[n] += 1
        out.append(n if totals[n] == 1 else f"{n} #{seen[n]}")
    return out


def _bracket(r: Any) -> str:
    lo = "(" if r.direction == "epsilon" else "["
    name = "ε" if r.direction == "epsilon" else "δ"
    text = f"exact {name} in {lo}{r.exact_lower!r}, {r.exact_upper!r}]"
    if r.given is not None:
        text += f"; for what the library was handed ({r.given}): {lo}{r.given_lower!r}, {r.given_upper!r}]"
    return text


def to_junit(result: Any, title: str) -> str:
    """One testsuite per entry point, one testcase per question; a violation is a failure, a library error an
    error; translation, loose and ok rows pass (a translation or loose one says why in system-out)."""
    root = ET.Element("testsuites", name=title)
    by_ep: dict[str, list] = {}
    for r in result.rows:
        by_ep.setdefault(r.entry_point, []).append(r)
    for ep, rows in by_ep.items():
        n = Counter(r.status for r in rows)
        suite = ET.SubElement(root, "testsuite", name=f"{result.library}::{ep}", tests=str(len(rows)),
                              failures=str(n["violation"]), errors=str(n["error"]), skipped="0",
                              time=f"{sum(r.seconds for r in rows):.3f}")
        for r, name in zip(rows, _case_names(rows), strict=True):
            case = ET.SubElement(suite, "testcase", classname=f"{result.library}.{ep}", name=name,
                                 time=f"{r.seconds:.3f}")
            body = f"answer: {r.answer!r}\n{_bracket(r)}\nratio: {r.ratio!r}\nreproduce:\n{r.repro}"
            if r.status == "violation":
                ET.SubElement(case, "failure", message=r.message, type="violation").text = body
            elif r.status == "error":
                ET.SubElement(case, "error", message=r.message).text = body
            elif r.status in ("loose", "translation"):
                ET.SubElement(case, "system-out").text = f"{r.status}: {r.message}"
    return ET.tostring(root, encoding="unicode", xml_declaration=True)


def _md(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _num(x: float | None) -> str:
    return "—" if x is None else f"{x:.6g}"


def to_markdown(result: Any, title: str) -> str:
    """Per-entry-point summary table, then every violation and error with its reproduction."""
    s = result.summary()
    lines = [f"# {title}", "", f"{result.library} {result.version}: " + ", ".join(f"**{v}** {k}" for k, v in s.items())
             + f" of {len(result.rows)} answers ({result.seconds:.1f} s)", "",
             "| entry point | violation | translation | loose | ok | error | lowest ratio | highest ratio | seconds |",
             "|---|---|---|---|---|---|---|---|---|"]
    for ep, d in per_entry_point(result).items():
        lines.append(f"| {_md(ep)} | {d['violation']} | {d['translation']} | {d['loose']} | {d['ok']} | {d['error']} | "
                     f"{_num(d['min_ratio'])} | {_num(d['max_ratio'])} | {d['seconds']:.2f} |")
    if result.unsupported:
        lines += ["", "Not asked (cannot be expressed, or over a size limit):", ""]
        lines += [f"- {_md(ep)}: {u['count']} questions — {_md(u['reason'])}" for ep, u in result.unsupported.items()]
    for heading, status in (("Violations", "violation"), ("Errors", "error")):
        chosen = [r for r in result.rows if r.status == status]
        if not chosen:
            continue
        lines += ["", f"## {heading}", ""]
        for r in chosen:
            lines += [f"### {_md(r.entry_point)}: {_md(r.question.id)}", "", f"- {_md(r.message)}",
                      f"- answer {r.answer!r}; {_bracket(r)}; ratio {_num(r.ratio)}", "", "```python", r.repro,
                      "```", ""]
    return "\n".join(lines) + "\n"
