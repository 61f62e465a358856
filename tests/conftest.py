"""Test-suite options: ``--deep`` runs the long explorations marked ``deep`` (skipped by default)."""

import pytest


def pytest_addoption(parser):
    parser.addoption("--deep", action="store_true", default=False,
                     help="run the long explorations marked deep (e.g. 100 reruns of verify on foreign samplers)")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--deep"):
        return
    skip = pytest.mark.skip(reason="deep exploration: run with pytest --deep")
    for item in items:
        if "deep" in item.keywords:
            item.add_marker(skip)
