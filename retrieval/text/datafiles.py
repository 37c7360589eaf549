"""Where the bundled data files live (retrieval/data), and reading one YAML mapping."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from bot.core.errors import ConfigError

DATA_DIR = Path(__file__).parents[1] / "data"


def read_yaml(path: Path) -> dict[str, Any]:
    """A YAML mapping, or ConfigError naming the file."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping at the top level")
    return data
