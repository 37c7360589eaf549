"""Misspelt ``TUVAN_*`` variables get a warning naming the setting they were meant to be."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from bot.cli.group import cli
from bot.core.setting_names import misspelt, setting_names

# As newcomers and operators have typed them, and the setting each was meant to be.
MISSPELT = [
    ("TUVAN_TELEGRAM__BOT_TOKEN", "TUVAN_TELEGRAM__TOKEN"),
    ("TUVAN_LLM_BASE_URL", "TUVAN_LLM__BASE_URL"),
    ("TUVAN_ANSWER__FAQRISK", "TUVAN_ANSWER__FAQ_RISK"),
    ("TUVAN_WORKER__LEASE", "TUVAN_WORKER__LEASE_S"),
    ("TUVAN_ZALO__OA_SECRET", "TUVAN_ZALO__OA_SECRET_KEY"),
    ("TUVAN_TELEGRAM__SECRET", "TUVAN_TELEGRAM__SECRET_TOKEN"),
    ("TUVAN_MESSENGER__PAGE_ACCESS_TOKEN", "TUVAN_MESSENGER__PAGE_TOKEN"),
    ("TUVAN_DATABASEURL", "TUVAN_DATABASE_URL"),
    ("TUVAN_EMBEDER", "TUVAN_EMBEDDER"),
    ("TUVAN_WEB__ALLOWED_ORIGIN", "TUVAN_WEB__ALLOWED_ORIGINS"),
    ("TUVAN_ADMIN__COOKIE_SECURED", "TUVAN_ADMIN__COOKIE_SECURE"),
    ("TUVAN_RETENTION__MESSAGE_DAYS", "TUVAN_RETENTION__MESSAGES_DAYS"),
    ("tuvan_llm__modle", "TUVAN_LLM__MODEL"),
]


@pytest.mark.parametrize(("name", "meant"), MISSPELT)
def test_a_misspelt_variable_is_named_with_the_setting_it_was_meant_to_be(
    name: str, meant: str
) -> None:
    [found] = misspelt({name: "x", "PATH": "/usr/bin"}, env_file=None)
    assert (found.name, found.nearest) == (name.upper(), meant)
    assert found.warning().endswith(f"did you mean {meant}?")


def test_real_settings_and_other_variables_pass_and_a_stranger_gets_no_guess() -> None:
    real = {"TUVAN_TELEGRAM__TOKEN": "x", "TUVAN_WEB": "{}", "TUVAN_LIMITS__ANSWERS_IN_FLIGHT": "2"}
    assert misspelt({**real, "HOME": "/root"}, env_file=None) == []
    [stranger] = misspelt({"TUVAN_XYZZY_PLUGH": "1"}, env_file=None)
    assert stranger.nearest is None
    assert "did you mean" not in stranger.warning()
    assert {"TUVAN_SEARCH__GRAPH__SEED", "TUVAN_EMBEDDER_BASE_URL"} <= setting_names()


def test_names_in_the_env_file_are_checked_too(tmp_path: Path) -> None:
    env_file = tmp_path / ".env"
    env_file.write_text("TUVAN_LLM__BASE_URL=http://x\nTUVAN_LLM__APIKEY=sk\n", encoding="utf-8")
    [found] = misspelt({}, env_file=env_file)
    assert (found.name, found.nearest) == ("TUVAN_LLM__APIKEY", "TUVAN_LLM__API_KEY")


def test_the_command_warns_at_start_up(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TUVAN_TELEGRAM__BOT_TOKEN", "123:abc")
    result = CliRunner().invoke(cli, ["db", "--help"])
    assert result.exit_code == 0
    warning = (
        "warning: TUVAN_TELEGRAM__BOT_TOKEN is not a tuvan setting and is ignored; "
        "did you mean TUVAN_TELEGRAM__TOKEN?"
    )
    assert warning in result.output
