"""The ``vetdp`` console script, and what the harness extra provides.

The ``vetdp`` distribution installs the runtime (NumPy only); the command, the engine, the obligations and the pytest
plugin need the extra ``harness`` (``pip install 'vetdp[harness]'``). Without it the command exits 2 with one line
naming the first missing module and that install command, never a traceback.
"""

from __future__ import annotations

import importlib.util
import sys

__all__ = ["HARNESS_MODULES", "INSTALL_HARNESS", "missing_harness_module", "missing_harness_message", "main"]

# The import names of the harness extra's distributions (pyproject.toml [project.optional-dependencies] harness;
# tests/test_runtime_light.py checks that the two lists agree).
HARNESS_MODULES = ("click", "rich", "scipy", "mpmath", "sympy", "z3", "hypothesis", "matplotlib", "latex2mathml",
                   "markdown_it", "sklearn", "statsmodels", "threadpoolctl")
INSTALL_HARNESS = "pip install 'vetdp[harness]'"


def missing_harness_module() -> str | None:
    """The first module of :data:`HARNESS_MODULES` that cannot be found (without importing any), or None."""
    for name in HARNESS_MODULES:
        if importlib.util.find_spec(name) is None:
            return name
    return None


def missing_harness_message(name: str) -> str:
    """The one line that tells what is missing and how to install it."""
    return (f"vetdp: the harness is not installed (no module named {name!r}); "
            f"install it with: {INSTALL_HARNESS}")


def main() -> None:
    """Run the vetdp command line (:func:`vetdp.cli.main`), or exit 2 with one line when the harness is missing."""
    name = missing_harness_module()
    if name is None:
        try:
            from vetdp.cli import main as cli

            cli(prog_name="vetdp")
            return
        except ModuleNotFoundError as e:  # a harness module removed after the check above: the same answer
            top = (e.name or "").split(".")[0]
            if top not in HARNESS_MODULES:
                raise
            name = top
    print(missing_harness_message(name), file=sys.stderr)
    sys.exit(2)
