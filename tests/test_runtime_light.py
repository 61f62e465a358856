"""The light runtime (issue 22, point 4): what a production mechanism imports loads NumPy and vetdp's own light
modules only, never the harness (z3, sympy, scipy, ...)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

# What a production client must never load by importing the runtime or a bundled mechanism.
HEAVY = ("z3", "sympy", "scipy", "matplotlib", "sklearn", "statsmodels", "hypothesis", "mpmath", "click", "rich")
RUNTIME_MODULES = ("vetdp", "vetdp.core", "vetdp.sampling", "vetdp.arith.rounding", "vetdp.arith.expr",
                   "vetdp.arith.constants")
IMPL_MODULES = ("vetdp.impl.randomized_response", "vetdp.impl.randomized_response_bool",
                "vetdp.impl.randomized_response_bitvec", "vetdp.impl.k_rappor", "vetdp.impl.rappor",
                "vetdp.impl.buffling", "vetdp.impl.rappor_decoding")


def loaded_heavy(python: str, modules: tuple[str, ...], cwd: str | None = None) -> list[str]:
    """The HEAVY modules (and vetdp's harness packages) loaded after importing ``modules`` in a fresh ``python``."""
    code = ("import importlib, json, sys\n"
            f"for m in {list(modules)!r}: importlib.import_module(m)\n"
            f"print(json.dumps(sorted(h for h in {list(HEAVY) + ['vetdp.engine', 'vetdp.obligations']!r} "
            "if h in sys.modules)))")
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, cwd=cwd, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("module", RUNTIME_MODULES + IMPL_MODULES)
def test_runtime_module_imports_nothing_heavy(module):
    assert loaded_heavy(sys.executable, (module,)) == []


def test_builtin_ids_reserved_by_the_light_module_are_the_bundled_constants():
    from vetdp.arith import constants as light
    from vetdp.obligations import constants as oblig

    assert light.BUILTIN_IDS == set(oblig.CONSTANTS)
    assert all(cid.split(".")[0] in light.RESERVED_PREFIXES for cid in (*oblig.SEED_DIRECTED, *oblig.NAIVE))


def test_register_constant_is_one_definition_reexported_where_it_was():
    from vetdp import api
    from vetdp.arith import constants as light
    from vetdp.obligations import constants as oblig
    from vetdp.obligations import z3encode

    assert api.register_constant is oblig.register_constant is light.register_constant
    assert oblig.USER_CONSTANTS is light.USER_CONSTANTS
    assert z3encode.ConstantSpec is oblig.ConstantSpec is light.ConstantSpec
    assert z3encode.VarRange is oblig.VarRange is light.VarRange
