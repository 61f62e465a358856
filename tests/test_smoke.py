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


def test_no_generic_top_level_packages_installed():
    files = importlib.metadata.files("vetdp") or []
    tops = {str(f).split("/")[0] for f in files}
    assert not {"impl", "specs"} & tops


def test_randomized_response_map_value():
    # ln(0.75 * 2 / 0.25) = ln 6 = 1.791759469228055..., rounded up
    assert make_randomized_response(["a", "b", "c"], 0.75).map(1) == 1.791759469228055
