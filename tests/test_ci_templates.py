"""The gate configuration and the downstream templates only use commands that exist."""

import re
import tomllib
from pathlib import Path

from vetdp.cli import main

ROOT = Path(__file__).resolve().parents[1]


def test_gate_config_is_valid_toml_with_known_keys():
    from vetdp.project import read_gate_file

    gate = read_gate_file(ROOT / "ci" / "gate.toml")  # validates every key and value
    assert set(tomllib.loads((ROOT / "ci" / "gate.toml").read_text())["gate"]) <= {"advisory", "deep_only", "loose_map"}
    assert gate.get("loose_map", "fail") in ("fail", "warn")


def test_templates_call_existing_vetdp_subcommands_and_options():
    for path in (ROOT / "ci" / "templates").iterdir():
        for line in re.findall(r"vetdp (\w+)([^\n]*)", path.read_text()):
            sub, rest = line
            if sub not in main.list_commands(None):
                continue  # e.g. "vetdp verify" in prose is covered below; "vetdp-reports" is a name
            known = {opt for p in main.get_command(None, sub).params for opt in getattr(p, "opts", [])}
            for opt in re.findall(r"(--[\w-]+)", rest):
                assert opt in known, f"{path.name}: vetdp {sub} has no option {opt}"
        assert "vetdp verify" in path.read_text() or "vetdp check" in path.read_text()


def test_ci_run_calls_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    test_cmd = re.search(r"Run the test suite:\s+```bash\n(.+?)\n```", readme).group(1)
    assert test_cmd in (ROOT / ".ci" / "run").read_text()


def test_templates_do_not_install_vetdp_from_pypi():
    # vetdp is not published: a bare `pip install vetdp` fails; the templates install from a stated source
    for path in (ROOT / "ci" / "templates").iterdir():
        text = path.read_text()
        assert not re.search(r"pip install (-\S+ )*vetdp(\s|$|\[)", text), path.name
        if "pip install" in text:
            assert "VETDP_SOURCE" in text, path.name
