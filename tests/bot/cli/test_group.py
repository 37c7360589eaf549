"""The ``tuvan`` group: its help lists every command without importing any of them, and each
listed command is the one that runs."""

from __future__ import annotations

import json
import subprocess
import sys

import click
import pytest
from click.testing import CliRunner

from bot.cli.group import COMMANDS, cli, log_level

# What made `tuvan --help` take 6.6 s: the models, the database, the PDF reader, the LLM client.
HEAVY = ("torch", "sentence_transformers", "sqlalchemy", "pymupdf", "openai", "bot.runtime")


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_each_listed_command_is_the_one_that_runs(name: str) -> None:
    command = cli.get_command(click.Context(cli), name)
    assert isinstance(command, click.Command)
    assert command.name == name
    # The summary is the command's own short help, so the list never drifts from the docstrings.
    assert command.get_short_help_str(limit=10_000) == COMMANDS[name].summary


def test_help_imports_no_command() -> None:
    probe = (
        "import json, sys\n"
        "from bot.cli.group import cli\n"
        "try:\n"
        "    cli(['--help'], prog_name='tuvan')\n"
        "except SystemExit:\n"
        "    pass\n"
        f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    *help_lines, loaded = done.stdout.strip().splitlines()
    assert json.loads(loaded) == []
    listed = "\n".join(help_lines)
    for name in COMMANDS:
        assert f"  {name} " in listed


def test_an_unknown_command_is_named() -> None:
    result = CliRunner().invoke(cli, ["sevre"])
    assert result.exit_code == 2
    assert "No such command 'sevre'" in result.output


@pytest.mark.parametrize(
    ("command", "verbose", "explicit", "level"),
    [
        ("ask", False, False, "WARNING"),  # a person reads the answer, not the log
        ("eval", False, False, "WARNING"),
        ("serve", False, False, "INFO"),  # a service's log is what its operator reads
        ("worker", False, False, "INFO"),
        ("demo", False, False, "INFO"),
        ("ask", False, True, "INFO"),  # TUVAN_LOG_LEVEL set: as set
        ("ask", True, False, "DEBUG"),
        ("serve", True, True, "DEBUG"),
    ],
)
def test_a_command_a_person_reads_logs_only_warnings_by_default(
    command: str, verbose: bool, explicit: bool, level: str
) -> None:
    assert log_level(command, verbose, "info", explicit=explicit) == level
