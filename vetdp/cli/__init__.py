"""The ``vetdp`` command line. Each subcommand lives in its own module of this package.

Exit codes (:class:`ExitCode`): 0 everything passed; 1 a check found a violation;
2 bad usage or an engine error.
"""

from __future__ import annotations

import enum

import click

__all__ = ["main", "ExitCode"]


class ExitCode(enum.IntEnum):
    OK = 0  # every check passed
    VIOLATION = 1  # at least one check failed
    ERROR = 2  # bad usage, or the engine itself failed


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="vetdp")
def main() -> None:
    """vetdp: executable proofs for differential-privacy mechanisms."""


# --- subcommands: one import and one add_command line per module ---
from vetdp.cli.check import check, verify  # noqa: E402

main.add_command(check)
main.add_command(verify)
from vetdp.cli.account import account, plot  # noqa: E402

main.add_command(account)
main.add_command(plot)

from vetdp.cli.proofs import proofs  # noqa: E402
main.add_command(proofs)
from vetdp.cli.buffling import buffling  # noqa: E402
main.add_command(buffling)
from vetdp.cli.audit import audit  # noqa: E402

main.add_command(audit)
