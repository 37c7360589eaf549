"""``tuvan serve`` and ``tuvan demo`` on a port that is taken: one line, exit 1, no traceback,
before any model or database is loaded."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest
from click.testing import CliRunner

from bot.cli.group import cli


@pytest.fixture
def busy_port() -> Iterator[int]:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        yield int(holder.getsockname()[1])


@pytest.mark.parametrize("command", ["serve", "demo"])
def test_a_busy_port_is_one_line_not_a_traceback(command: str, busy_port: int) -> None:
    result = CliRunner().invoke(cli, [command, "--host", "127.0.0.1", "--port", str(busy_port)])
    assert result.exit_code == 1
    expected = (
        f"port {busy_port} is in use on 127.0.0.1: "
        "stop what holds it, or choose another with --port"
    )
    assert result.output.strip().splitlines()[-1] == f"Error: {expected}"
    assert "Traceback" not in result.output
