"""The documentation lists what the code has: every spec field, every configuration key, every clause (with the
numbers of its rule). A field, key or clause added to the code without its line in the docs fails here."""

from __future__ import annotations

import dataclasses
import re
import tomllib
from pathlib import Path

from vetdp.engine.clauses import TIGHTNESS, TIGHTNESS_FLOOR
from vetdp.engine.estimators import ESTIMATOR_CLAUSES, FLOAT_ALLOWANCE
from vetdp.engine.runner import MEASUREMENT_CLAUSES
from vetdp.engine.spec import EstimatorSpec, MeasurementSpec
from vetdp.project import GATE_KEYS, KNOWN_KEYS, LOOSE_MAP

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
GUIDE = (ROOT / "docs" / "vet-your-own-mechanism.md").read_text(encoding="utf-8")
ROW_LABELLED = {"precondition[<id>]", "privacy.sound[<id>]", "privacy.outside[<kind>]"}  # per row, per kind


def _table_after(text: str, heading: str) -> list[list[str]]:
    """The rows (cells) of the first Markdown table after ``heading``."""
    start = text.index(heading)
    rows = []
    for line in text[start:].splitlines()[1:]:
        if line.startswith("|"):
            if not set(line) <= set("|-: "):
                rows.append([c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]])
        elif rows:
            break
    return rows[1:]  # without the header


def _names(cell: str) -> set[str]:
    return set(re.findall(r"`([^`]+)`", cell))


def test_every_spec_field_is_documented_and_nothing_else():
    for cls, heading in ((MeasurementSpec, "Every field of `MeasurementSpec`"),
                         (EstimatorSpec, "and of `EstimatorSpec`")):
        documented = [row[0].strip("`") for row in _table_after(GUIDE, heading)]
        assert sorted(documented) == sorted(f.name for f in dataclasses.fields(cls)), cls.__name__


def test_every_configuration_key_is_documented_with_its_values():
    block = GUIDE[GUIDE.index("## Configuration reference"):]
    toml = tomllib.loads(block[block.index("```toml") + 7:block.index("```", block.index("```toml") + 7)])
    table = toml["tool"]["vetdp"]
    assert set(table) == set(KNOWN_KEYS)  # gate: here a table (or a file name)
    assert tuple(table["gate"]) == GATE_KEYS and table["gate"]["loose_map"] in LOOSE_MAP
    config = README[README.index("`--config ci/gate.toml`"):][:400]
    assert all(f"`{key}`" in config for key in GATE_KEYS), config
    assert all(f'"{v}"' in config for v in LOOSE_MAP)


def test_every_clause_is_documented_with_its_rule():
    verify = set().union(*(_names(row[0]) for row in _table_after(README, "What `verify` checks")))
    check = set().union(*(_names(row[0]) for row in _table_after(README, "| clause | meaning |")))
    code = set(MEASUREMENT_CLAUSES) | set(ESTIMATOR_CLAUSES) | ROW_LABELLED
    assert verify == code, (sorted(code - verify), sorted(verify - code))
    assert check <= code, sorted(check - code)


def test_the_documented_numbers_are_the_codes():
    assert TIGHTNESS == 2**-30 and TIGHTNESS_FLOOR == 2**-40 and FLOAT_ALLOWANCE == 2**-40
    rows = {name: row[1] for row in _table_after(README, "| clause | meaning |") for name in _names(row[0])}
    assert "L·(1 + 2⁻³⁰) + 2⁻⁴⁰" in rows["privacy.tight"]
    assert "all-0x00" in rows["timing.constant_bytes"] and "random outcome" in rows["timing.constant_bytes"]
