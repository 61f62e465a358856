"""The package installs under one namespace and its mechanisms construct."""

import importlib.metadata

import vetdp
from vetdp.impl import make_randomized_response


def test_public_names_are_importable():
    for name in vetdp.__all__:
        assert hasattr(vetdp, name), name


def test_console_script_is_declared():
    scripts = {ep.name: ep.value for ep in importlib.metadata.entry_points(group="console_scripts")}
    assert scripts.get("vetdp") == "vetdp.launch:main"


def test_only_the_vetdp_namespace_is_installed():
    top_level = importlib.metadata.distribution("vetdp").read_text("top_level.txt").split()
    assert top_level == ["vetdp"]


def test_every_subpackage_is_declared_for_the_wheel():
    # setuptools' package list is explicit: a subpackage missing from it is missing from `pip install .`
    import tomllib
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    declared = set(tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {".".join(("vetdp", *d.relative_to(root / "vetdp").parts)).rstrip(".")
             for d in [root / "vetdp", *(root / "vetdp").rglob("*")] if (d / "__init__.py").is_file()}
    assert found - declared == set(), f"add to [tool.setuptools] packages: {sorted(found - declared)}"


def test_randomized_response_map_value():
    # ln(0.75 * 2 / 0.25) = ln 6 = 1.7917594692280550008...; the nearest float,
    # 1.791759469228055, lies below it, so rounding up gives the next float
    assert make_randomized_response(["a", "b", "c"], 0.75).map(1) == 1.7917594692280552
