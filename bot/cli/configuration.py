"""Reading the settings for a ``tuvan`` command: a bad value becomes one line per setting, named
as it is set (``TUVAN_SECTION__FIELD``), instead of pydantic's traceback. Light on purpose: the
command group imports it before it knows which command runs."""

from __future__ import annotations

import click
from pydantic import ValidationError

from bot.core.settings import Settings


def load_settings() -> Settings:
    try:
        return Settings()
    except ValidationError as exc:
        raise click.ClickException(config_problems(exc)) from exc


def config_problems(exc: ValidationError) -> str:
    """One line per bad setting, named as it is set (pydantic's text names the field and
    adds a documentation link per error)."""
    lines = ["invalid configuration:"]
    for error in exc.errors():
        loc = error["loc"]
        name = "TUVAN_" + "__".join(str(part) for part in loc).upper() if loc else "settings"
        got = f" (got {error['input']!r})" if isinstance(error.get("input"), str) else ""
        lines.append(f"  {name}: {error['msg']}{got}")
    return "\n".join(lines)
