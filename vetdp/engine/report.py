"""Renderings of CheckResult values: terminal table, JSON, JUnit XML, Markdown.

Each renderer only formats the values; none decides anything.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Sequence

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from vetdp.engine.results import CheckResult, Status

__all__ = ["summary", "render_table", "render_failures", "to_json", "to_junit", "to_markdown", "SCHEMA_VERSION"]

SCHEMA_VERSION = 1
_STYLE = {Status.PASS: "green", Status.FAIL: "bold red", Status.UNDECIDED: "yellow", Status.SKIPPED: "dim",
          Status.WARNING: "yellow", Status.ERROR: "bold magenta", Status.STOPPED: "bold magenta"}
TRUE = "true"  # the default label of CheckResult.true; an audit's is a confidence lower bound


def summary(results: Sequence[CheckResult]) -> dict[str, int]:
    counts = Counter(r.status.value for r in results)
    return {s.value: counts.get(s.value, 0) for s in Status} | {"total": len(results)}


def _num(x: float | None) -> str:
    return "" if x is None else f"{x:.17g}"


def render_table(results: Sequence[CheckResult], console: Console, title: str = "vetdp",
                 true_label: str = TRUE) -> None:
    """The terminal table: one row per result, in the order given; every name is shown verbatim (escaped)."""
    table = Table(title=escape(title), show_lines=False, header_style="bold")
    for col in ("spec", "check", "status", "claimed", true_label, "slack", "detail"):
        table.add_column(escape(col), overflow="fold", no_wrap=col in ("status",))
    for r in results:
        detail = r.message if r.status is not Status.PASS or not r.subject else r.subject
        table.add_row(escape(r.spec), escape(r.check), f"[{_STYLE[r.status]}]{r.status.value}[/]", _num(r.claimed),
                      _num(r.true), _num(r.slack), escape(detail[:160]))
    console.print(table)
    s = summary(results)
    parts = [f"[{_STYLE[st]}]{s[st.value]} {st.value}[/]" for st in Status if s[st.value]]
    console.print(f"{s['total']} checks: " + ", ".join(parts))


def render_failures(results: Sequence[CheckResult], console: Console, true_label: str = TRUE) -> None:
    """Details of every failing result (parameters, witness, true versus claimed, reproduction), then of every
    warning; names are shown verbatim (escaped)."""
    for r in [r for r in results if r.status.is_failure] + [r for r in results if r.status is Status.WARNING]:
        console.rule(f"[{_STYLE[r.status]}]{r.status.value.upper()}[/] {escape(r.spec)} :: {escape(r.check)}")
        console.print(f"[bold]clause[/]     {escape(r.check)}")
        if r.subject:
            console.print(f"[bold]parameters[/] {escape(r.subject)}")
        console.print(f"[bold]finding[/]    {escape(r.message)}")
        if r.claimed is not None or r.true is not None:
            console.print(f"[bold]claimed[/]    {_num(r.claimed)}   [bold]{escape(true_label)}[/] {_num(r.true)}   "
                          f"[bold]slack[/] {_num(r.slack)}")
        if r.witness:
            for k, v in r.witness.items():
                text = str(v) if len(str(v)) < 300 else str(v)[:300] + "…"
                console.print(f"[bold]witness[/]    {escape(k)} = {escape(text)}")
        if r.repro:
            console.print(f"[bold]reproduce[/]  {escape(r.repro)}")


def _json_key(label: str) -> str:
    return "_".join(label.replace("-", " ").split()).lower()


def to_json(results: Sequence[CheckResult], command: str, true_label: str = TRUE) -> str:
    """The JSON report. With a ``true_label`` other than ``"true"`` (an audit's confidence lower bound), each result
    carries that value under the label's key (e.g. ``epsilon_lower_bound``) instead of ``true``."""
    from vetdp import __version__

    key = _json_key(true_label)
    rows = []
    for r in results:
        d = r.to_json()
        if key != TRUE:
            d = {(key if k == TRUE else k): v for k, v in d.items()}
        rows.append(d)
    doc = {"schema_version": SCHEMA_VERSION, "tool": "vetdp", "version": __version__, "command": command,
           "summary": summary(results), "results": rows}
    return json.dumps(doc, indent=2)


def to_junit(results: Sequence[CheckResult], name: str = "vetdp", true_label: str = TRUE) -> str:
    """JUnit XML: one suite per spec, one uniquely named testcase per result (a warning passes, saying so)."""
    root = ET.Element("testsuites", name=name)
    by_spec: dict[str, list[CheckResult]] = {}
    for r in results:
        by_spec.setdefault(r.spec, []).append(r)
    for spec, rs in by_spec.items():
        s = summary(rs)
        suite = ET.SubElement(root, "testsuite", name=spec, tests=str(len(rs)),
                              failures=str(s["fail"] + s["undecided"]), errors=str(s["error"] + s["stopped"]),
                              skipped=str(s["skipped"]), time=f"{sum(r.seconds for r in rs):.3f}")
        for r, case_name in zip(rs, _unique_names(rs), strict=True):
            case = ET.SubElement(suite, "testcase", classname=spec, name=case_name, time=f"{r.seconds:.3f}")
            loss = f"claimed: {_num(r.claimed)} {true_label}: {_num(r.true)} slack: {_num(r.slack)}"
            body = "\n".join(x for x in (
                f"parameters: {r.subject}" if r.subject else "",
                loss if r.claimed is not None else "",
                f"witness: {json.dumps(r.to_json()['witness'])}" if r.witness else "",
                f"reproduce: {r.repro}" if r.repro else "") if x)
            if r.status in (Status.FAIL, Status.UNDECIDED):
                ET.SubElement(case, "failure", message=r.message, type=r.status.value).text = body
            elif r.status in (Status.ERROR, Status.STOPPED):  # no verdict: the run did not finish its work
                ET.SubElement(case, "error", message=r.message, type=r.status.value).text = body
            elif r.status is Status.SKIPPED:
                ET.SubElement(case, "skipped", message=r.message)
            elif r.status is Status.WARNING:  # JUnit has no warning: a passing case that says so
                ET.SubElement(case, "system-out").text = f"warning: {r.message}" + (f"\n{body}" if body else "")
    return ET.tostring(root, encoding="unicode", xml_declaration=True)


def _unique_names(rs: Sequence[CheckResult]) -> list[str]:
    """One testcase name per result, unique within the suite: the check, then its parameters, then a counter."""
    counts = Counter(r.check for r in rs)
    names = [r.check if counts[r.check] == 1 or not r.subject else f"{r.check} {r.subject}" for r in rs]
    seen: Counter[str] = Counter()
    out = []
    totals = Counter(names)
    for n in names:
        seen[n] += 1
        out.append(n if totals[n] == 1 else f"{n} #{seen[n]}")
    return out


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def to_markdown(results: Sequence[CheckResult], title: str = "vetdp report", true_label: str = TRUE) -> str:
    """A Markdown report: the table, then a section per failure and per warning."""
    s = summary(results)
    lines = [f"# {title}", "", ", ".join(f"**{v}** {k}" for k, v in s.items() if v and k != "total")
             + f" of {s['total']} checks", "",
             f"| spec | check | status | claimed | {_md(true_label)} | slack | detail |",
             "|---|---|---|---|---|---|---|"]
    for r in results:
        detail = r.message if r.status is not Status.PASS or not r.subject else r.subject
        lines.append(f"| {_md(r.spec)} | {_md(r.check)} | {r.status.value} | {_num(r.claimed)} | {_num(r.true)} | "
                     f"{_num(r.slack)} | {_md(detail[:200])} |")
    for heading, chosen in (("Failures", [r for r in results if r.status.is_failure]),
                            ("Warnings", [r for r in results if r.status is Status.WARNING])):
        if not chosen:
            continue
        lines += ["", f"## {heading}", ""]
        for r in chosen:
            lines += [f"### {_md(r.spec)} :: {_md(r.check)} ({r.status.value})", "", f"- finding: {_md(r.message)}"]
            if r.subject:
                lines.append(f"- parameters: `{r.subject}`")
            if r.claimed is not None:
                lines.append(f"- claimed {_num(r.claimed)}, {true_label} {_num(r.true)}, slack {_num(r.slack)}")
            if r.witness:
                lines.append(f"- witness: `{_md(json.dumps(r.to_json()['witness']))[:500]}`")
            if r.repro:
                lines += ["", "```bash", r.repro, "```"]
            lines.append("")
    return "\n".join(lines) + "\n"
