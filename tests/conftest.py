"""Test-suite options: ``--deep`` runs the long explorations marked ``deep`` and the slow tests marked ``slow``
(both skipped by default, to keep the default suite under ten minutes; .ci/run runs every ``slow`` one); the ``tree``
fixture: a copy of this repository's proofs/ and impl/."""

import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def pytest_addoption(parser):
    parser.addoption("--deep", action="store_true", default=False,
                     help="run the long explorations marked deep (e.g. 100 reruns of verify on foreign samplers)")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--deep"):
        return
    skip = pytest.mark.skip(reason="deep exploration: run with pytest --deep")
    slow = pytest.mark.skip(reason="slow (over ~9 s): run with pytest --deep (.ci/run runs -m slow --deep)")
    for item in items:
        if "deep" in item.keywords:
            item.add_marker(skip)
        elif "slow" in item.keywords:
            item.add_marker(slow)


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, Path]:
    """(proofs, impl): copies of proofs/ and impl/, to edit without touching the repository."""
    proofs, impl = tmp_path / "proofs", tmp_path / "impl"
    shutil.copytree(REPO / "proofs", proofs)
    shutil.copytree(REPO / "impl", impl)
    return proofs, impl
