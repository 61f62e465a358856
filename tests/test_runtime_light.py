"""The light runtime (issue 22, point 4): what a production mechanism imports loads NumPy and vetdp's own light
modules only, never the harness (z3, sympy, scipy, ...)."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import mpmath
import pytest

# What a production client must never load by importing the runtime or a bundled mechanism.
HEAVY = ("z3", "sympy", "scipy", "matplotlib", "sklearn", "statsmodels", "hypothesis", "mpmath", "click", "rich")
RUNTIME_MODULES = ("vetdp", "vetdp.core", "vetdp.sampling", "vetdp.sampling.public", "vetdp.arith.rounding",
                   "vetdp.arith.expr", "vetdp.arith.constants")
IMPL_MODULES = ("vetdp.impl.randomized_response", "vetdp.impl.randomized_response_bool",
                "vetdp.impl.randomized_response_bitvec", "vetdp.impl.k_rappor", "vetdp.impl.rappor",
                "vetdp.impl.buffling", "vetdp.impl.rappor_decoding", "vetdp.impl.rappor_client", "vetdp.rappor_io",
                "vetdp.impl.olh", "vetdp.impl.hadamard_response", "vetdp.impl.count_mean_sketch",
                "vetdp.impl.hadamard_count_mean_sketch")


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


# ------------------------------------------------------------------ a production install: `pip install vetdp`

# Run inside the runtime-only venv: every runtime and mechanism module, some mechanisms (seeded, to compare with this
# process bit for bit; one on the production source), what they loaded and which distributions are installed.
_PRODUCTION = r"""
import importlib, importlib.metadata, json, sys
for m in MODULES:
    importlib.import_module(m)
from vetdp import bitvector_domain, discrete_distance, SeededSource, use_source
from vetdp.impl.buffling import make_buffling
from vetdp.impl.k_rappor import make_k_rappor
from vetdp.impl.randomized_response import make_randomized_response
from vetdp.impl.randomized_response_bitvec import make_randomized_response_bitvec
from vetdp.impl.randomized_response_bool import make_randomized_response_bool
from vetdp.arith.rounding import inf_exp, inf_ln, neg_inf_log1p
rr = make_randomized_response(["a", "b"], 0.75)
production = rr("a")  # the default source: os.urandom
dom = bitvector_domain(max_weight=2, length=4)
mechanisms = {"rr": rr, "bool": make_randomized_response_bool(0.75),
              "bitvec": make_randomized_response_bitvec(dom, discrete_distance(), 0.25),
              "k_rappor": make_k_rappor(bitvector_domain(max_weight=1, length=4), discrete_distance(), 1.5),
              "buffling": make_buffling(2, 8, 0.1)}
inputs = {"rr": "a", "bool": True, "bitvec": (True, False, True, False), "k_rappor": (False, True, False, False),
          "buffling": [(True, False) * 4, (False, True) * 4]}
with use_source(SeededSource(22)):
    draws = {name: repr([m(inputs[name]) for _ in range(5)]) for name, m in mechanisms.items()}
maps = {name: m.map(1).hex() for name, m in mechanisms.items()}
arith = [inf_ln(3.0).hex(), inf_exp(-700.5).hex(), neg_inf_log1p(5e-324).hex()]
print(json.dumps({"production": production, "draws": draws, "maps": maps, "arith": arith,
                  "loaded": sorted(h for h in HEAVY if h in sys.modules),
                  "distributions": sorted(d.metadata["Name"].lower() for d in importlib.metadata.distributions())}))
"""


@pytest.fixture(scope="module")
def runtime_bin(tmp_path_factory):
    """bin/ of a fresh venv holding `pip install <this tree>`: the runtime, with its base dependencies only."""
    from _install_helpers import runtime_install

    return runtime_install(tmp_path_factory.mktemp("runtime"))


def _production_run(python: str, cwd: str) -> dict:
    code = _PRODUCTION.replace("MODULES", repr(RUNTIME_MODULES + IMPL_MODULES)).replace("HEAVY", repr(HEAVY))
    r = subprocess.run([python, "-c", code], capture_output=True, text=True, cwd=cwd, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_runtime_installs_with_numpy_alone_and_runs_the_mechanisms(runtime_bin, tmp_path):
    there = _production_run(str(runtime_bin / "python"), str(tmp_path))
    assert there["distributions"] == ["numpy", "vetdp"]  # nothing of the harness was installed
    assert there["loaded"] == []
    assert there["production"] in ("a", "b")
    here = _production_run(sys.executable, str(tmp_path))  # the full install: the same values, bit for bit
    assert there["maps"] == here["maps"] and there["draws"] == here["draws"] and there["arith"] == here["arith"]
    eps = float.fromhex(there["maps"]["rr"])  # ln(0.75/0.25) = ln 3, rounded up: the least float above it
    with mpmath.workprec(200):
        assert mpmath.mpf(math.nextafter(eps, 0)) < mpmath.log(3) < mpmath.mpf(eps)


@pytest.mark.parametrize("argv", [["--help"], ["check"], ["proofs", "status"]])
def test_vetdp_command_without_the_harness_exits_2_with_the_install_line(runtime_bin, tmp_path, argv):
    from vetdp.launch import missing_harness_message

    r = subprocess.run([str(runtime_bin / "vetdp"), *argv], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.splitlines() == [missing_harness_message("click")], r.stderr
    assert "pip install 'vetdp[harness]'" in r.stderr and "Traceback" not in r.stderr


def test_rappor_decoding_without_the_harness_names_what_it_needs(runtime_bin, tmp_path):
    """The server-side decoder imports (NumPy only) and counts bits; decoding itself needs the harness extra."""
    code = ("import numpy as np\n"
            "from vetdp.impl.rappor_decoding import decode, estimate_bit_counts\n"
            "reports = np.array([[1, 0], [0, 1], [1, 1]], dtype=bool)\n"
            "print(estimate_bit_counts(reports, [0, 1, 1], 2, 0.0, 0.25, 0.75)[1].tolist())\n"
            "try:\n"
            "    decode(reports, [0, 1, 1], ['x'], k=2, h=1, f=0.0, p=0.25, q=0.75, num_cohorts=2)\n"
            "except ModuleNotFoundError as e:\n"
            "    print(e.name)\n")
    r = subprocess.run([str(runtime_bin / "python"), "-c", code], capture_output=True, text=True, cwd=tmp_path,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    sizes, missing = r.stdout.splitlines()
    assert sizes == "[1, 2]" and missing.split(".")[0] in ("scipy", "statsmodels", "sklearn", "threadpoolctl")


def test_harness_modules_are_the_import_names_of_the_harness_extra():
    """vetdp.launch.HARNESS_MODULES (what the command checks) and pyproject's `harness` extra name the same
    distributions."""
    import importlib.metadata
    import re

    from vetdp.launch import HARNESS_MODULES

    extra = {re.split(r"[<>=!~ \[;]", r, maxsplit=1)[0].lower().replace("_", "-")
             for r in importlib.metadata.requires("vetdp") if 'extra == "harness"' in r}
    owners = importlib.metadata.packages_distributions()
    named = {d.lower().replace("_", "-") for m in HARNESS_MODULES for d in owners.get(m, [])}
    assert named == extra, (sorted(named ^ extra))


def test_vetdp_package_all_is_exactly_its_lazy_names():
    import vetdp

    assert set(vetdp.__all__) == set(vetdp._LAZY) | {"__version__"}
    assert all(getattr(vetdp, name) is not None for name in vetdp.__all__)


def test_a_users_production_module_written_against_vetdp_api_imports_nothing_heavy():
    """examples/oue's mechanism imports vetdp.api and registers its constants at import: still the runtime only."""
    from _install_helpers import REPO

    src = str(REPO / "examples" / "oue" / "src")
    code = (f"import sys; sys.path.insert(0, {src!r})\n"
            "import oue_example.oue as m\n"
            "from vetdp.arith.constants import USER_CONSTANTS\n"
            "assert {'oue.flip_probability', 'oue.epsilon'} <= set(USER_CONSTANTS)\n"
            "assert 0 < m.make_oue(4, 1.0).map(1) < 1.01\n"
            f"print(sorted(h for h in {list(HEAVY) + ['vetdp.engine', 'vetdp.obligations']!r} if h in sys.modules))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip() == "[]"


@pytest.mark.parametrize("module", ["vetdp.arith.constants", "vetdp.arith.rounding", "vetdp.launch", "vetdp.cli"])
def test_new_modules_all_names_resolve(module):
    import importlib

    mod = importlib.import_module(module)
    assert mod.__all__ and len(set(mod.__all__)) == len(mod.__all__)
    assert all(getattr(mod, name) is not None for name in mod.__all__)
