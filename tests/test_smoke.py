"""The package installs under one namespace and its mechanisms construct."""

import importlib.metadata

import vetdp
from vetdp.impl import make_randomized_response


def test_public_names_are_importable():
    for name in vetdp.__all__:
        assert hasattr(vetdp, name), name


def test_console_script_is_declared():
    scripts = {ep.name: ep.value for ep in importlib.metadata.entry_points(group="console_scripts")}
    assert scripts.get("vetdp") == "vetdp.cli:main"


def test_only_the_vetdp_namespace_is_installed():
    top_level = importlib.metadata.distribution("vetdp").read_text("top_level.txt").split()
    assert top_level == ["vetdp"]


def test_randomized_response_map_value():
    # ln(0.75 * 2 / 0.25) = ln 6 = 1.7917594692280550008...; the nearest float,
    # 1.791759469228055, lies below it, so rounding up gives the next float
    assert make_randomized_response(["a", "b", "c"], 0.75).map(1) == 1.7917594692280552
