"""The environment names of every setting, and the ``TUVAN_*`` names set that are none of them.

pydantic-settings ignores a variable it does not know (``extra="ignore"``), so a misspelt one
(``TUVAN_TELEGRAM__BOT_TOKEN``, ``TUVAN_LLM_BASE_URL`` with one underscore) silently leaves its
setting at the default. ``misspelt`` finds such names in the environment and the ``.env`` file,
each with the nearest real name, for a warning at start-up.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dotenv import dotenv_values
from pydantic import BaseModel

from bot.core.settings import Settings

PREFIX = "TUVAN_"


@dataclass(frozen=True)
class Misspelt:
    name: str  # as set
    nearest: str | None  # the closest real name, if any is close

    def warning(self) -> str:
        hint = f"; did you mean {self.nearest}?" if self.nearest else ""
        return f"{self.name} is not a tuvan setting and is ignored{hint}"


def _names(model: type[BaseModel], prefix: str) -> Iterator[str]:
    for field, info in model.model_fields.items():
        name = f"{prefix}{field.upper()}"
        yield name  # a section may also be set whole, as JSON
        annotation: Any = info.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            yield from _names(annotation, f"{name}__")


def setting_names() -> frozenset[str]:
    """Every environment name a setting is read from (``TUVAN_WEB__ALLOWED_ORIGINS``, …)."""
    return frozenset(_names(Settings, PREFIX))


def misspelt(environ: Mapping[str, str], env_file: Path | None = Path(".env")) -> list[Misspelt]:
    """The ``TUVAN_*`` names set in ``environ`` or ``env_file`` that no setting reads, sorted."""
    set_names = {name.upper() for name in environ}
    if env_file is not None and env_file.is_file():
        set_names |= {name.upper() for name in dotenv_values(env_file)}
    known = setting_names()
    found = []
    for name in sorted(n for n in set_names if n.startswith(PREFIX) and n not in known):
        found.append(Misspelt(name, nearest_name(name, known)))
    return found


def nearest_name(name: str, known: frozenset[str]) -> str | None:
    """The real name ``name`` was most likely meant to be: the shortest that begins with it (a
    name cut short: ``…__LEASE`` for ``…__LEASE_S``), else the most similar, if similar enough."""
    longer = sorted((k for k in known if k.startswith(name)), key=len)
    if longer:
        return longer[0]
    close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.75)
    return close[0] if close else None
