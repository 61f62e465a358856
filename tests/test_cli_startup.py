"""Instant start (issue 22, point 3): `vetdp --help` and every `vetdp X [Y] --help` import none of the heavy modules,
and the root's table of subcommands (listed without importing them) says what each command says of itself.

These are tests on imports, not on time; benchmarks/bench_startup.py prints the times."""

from __future__ import annotations

import json
import subprocess
import sys

import click
import pytest

from vetdp.cli import SUBCOMMANDS, load_command, main

# Never loaded to print help: the solvers, the numerics and vetdp's own heavy packages (any module of them, except
# the budgets the options' help quotes: vetdp.obligations.limits (z3's rlimit) and vetdp.engine.budgets (paths, choices,
# chain work) import nothing, by their contract; so does the packages' own __init__).
HEAVY = ("z3", "sympy", "scipy", "matplotlib", "sklearn", "statsmodels", "hypothesis", "mpmath", "vetdp.engine",
         "vetdp.obligations", "vetdp.accounting")
LIGHT = ("vetdp.obligations", "vetdp.obligations.limits", "vetdp.engine", "vetdp.engine.budgets")


def _help_paths() -> list[tuple[str, ...]]:
    paths: list[tuple[str, ...]] = [()]
    for name in SUBCOMMANDS:
        paths.append((name,))
        command = load_command(name)
        if isinstance(command, click.Group):
            paths += [(name, sub) for sub in command.list_commands(click.Context(command))]
    return paths


HELP_PATHS = _help_paths()

_PROBE = r"""
import json, sys
from vetdp.launch import main
sys.argv = ["vetdp", *sys.argv[1:]]
try:
    main()
except SystemExit as e:
    code = e.code
heavy, light = %r, %r
loaded = sorted(m for m in sys.modules if m.split(".")[0] in heavy or any(m == h or m.startswith(h + ".")
                                                                         for h in heavy if "." in h))
print(json.dumps({"code": code, "loaded": [m for m in loaded if m not in light]}), file=sys.stderr)
"""


def _run_in_fresh_interpreter(*argv: str) -> tuple[dict, str]:
    """`vetdp ARGV` through the console script's entry point: its exit code, the HEAVY modules it loaded, stdout."""
    r = subprocess.run([sys.executable, "-c", _PROBE % (HEAVY, LIGHT), *argv], capture_output=True, text=True,
                       timeout=600)
    return json.loads(r.stderr.strip().splitlines()[-1]), r.stdout


def test_help_paths_cover_every_subcommand_and_the_nested_ones():
    assert {p[0] for p in HELP_PATHS if p} == set(SUBCOMMANDS)
    assert ("buffling", "privacy") in HELP_PATHS and ("proofs", "status") in HELP_PATHS
    assert ("rappor", "decode") in HELP_PATHS and ("vet", "accountant") in HELP_PATHS


@pytest.mark.parametrize("path", HELP_PATHS, ids=lambda p: " ".join(p) or "vetdp")
def test_help_imports_no_heavy_module(path):
    outcome, out = _run_in_fresh_interpreter(*path, "--help")
    assert outcome["code"] == 0 and "Usage: vetdp" in out, (outcome, out)
    assert outcome["loaded"] == [], f"`vetdp {' '.join(path)} --help` loaded {outcome['loaded']}"


def test_the_probe_sees_a_heavy_import():
    """The probe is not blind: running a command (not its help) that needs the obligations does load them."""
    outcome, out = _run_in_fresh_interpreter("proofs", "status", "randomized_response_bool")
    assert outcome["code"] == 0 and "up to date" in out, (outcome, out)
    assert "z3" in outcome["loaded"] and "vetdp.obligations.pinning" in outcome["loaded"]


@pytest.mark.parametrize("name", sorted(SUBCOMMANDS))
def test_table_short_help_is_the_commands_own(name):
    module, attr, short = SUBCOMMANDS[name]
    command = load_command(name)
    assert command.callback.__module__ == module and command.name in (name, attr.replace("_", "-"))
    assert short == command.get_short_help_str(limit=10**6)


@pytest.mark.parametrize("width", [50, 80, 100, 200])
def test_root_help_lists_what_the_loaded_commands_would_say(width):
    """The root's help, rendered from the table, equals click's own rendering with every command loaded."""
    from click.testing import CliRunner

    lazy = CliRunner().invoke(main, ["--help"], prog_name="vetdp", terminal_width=width)
    eager = click.Group(name=main.name, params=main.params, help=main.help,
                        context_settings=main.context_settings,
                        commands={name: load_command(name) for name in SUBCOMMANDS})
    loaded = CliRunner().invoke(eager, ["--help"], prog_name="vetdp", terminal_width=width)
    assert lazy.exit_code == loaded.exit_code == 0
    assert lazy.output == loaded.output and all(f"  {name} " in lazy.output for name in SUBCOMMANDS)


def test_every_click_command_of_the_cli_package_is_in_the_table():
    import importlib
    import pkgutil

    import vetdp.cli as cli

    defined = set()
    for info in pkgutil.iter_modules(cli.__path__):
        module = importlib.import_module(f"vetdp.cli.{info.name}")
        for value in vars(module).values():
            if isinstance(value, click.Command) and value.callback.__module__ == module.__name__ \
                    and not _is_subcommand(value):
                defined.add((module.__name__, value.name))
    assert defined == {(m, load_command(n).name) for n, (m, _, _) in SUBCOMMANDS.items()}


def _is_subcommand(command: click.Command) -> bool:
    """True when ``command`` is registered under one of the CLI's groups (e.g. ``proofs status``)."""
    return any(isinstance(g := load_command(n), click.Group) and command in g.commands.values() for n in SUBCOMMANDS)
