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


# --- subcommands: each lives in its own module of this package ---
from vetdp.cli.account import account, plot  # noqa: E402
from vetdp.cli.audit import audit  # noqa: E402
from vetdp.cli.buffling import buffling  # noqa: E402
from vetdp.cli.check import check  # noqa: E402
from vetdp.cli.proofs import proofs  # noqa: E402
from vetdp.cli.verify import verify  # noqa: E402

for _command in (check, verify, proofs, account, plot, buffling, audit):
    main.add_command(_command)
