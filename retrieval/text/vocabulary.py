"""The word lists behind text processing: bundled YAML files, and an operator's overrides."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from bot.core.errors import ConfigError
from bot.core.settings import TextSettings
from retrieval.text.datafiles import DATA_DIR, read_yaml
from retrieval.text.folding import fold
from retrieval.text.terms import Abbreviation, TextProcessor


def load_text_processor(settings: TextSettings | None = None) -> TextProcessor:
    """The bundled abbreviations and stopwords, extended by ``settings.abbreviations_file``."""
    override = settings.abbreviations_file if settings is not None else None
    return _load(override.resolve() if override is not None else None)


@lru_cache(maxsize=8)
def _load(override: Path | None) -> TextProcessor:
    entries = _read_abbreviations(DATA_DIR / "abbreviations.yaml")
    if override is not None:
        for key, value in _read_abbreviations(override).items():
            if value is None:
                entries.pop(key, None)
            else:
                entries[key] = value
    stopwords = read_yaml(DATA_DIR / "stopwords.yaml")
    return TextProcessor(
        {k: v for k, v in entries.items() if v is not None},
        {lang: [str(w) for w in words or []] for lang, words in stopwords.items()},
    )


def read_word_lists(path: Path, keys: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    """A YAML mapping of exactly ``keys``, each to a list of non-empty strings; ConfigError
    naming the file and the key otherwise."""
    data = read_yaml(path)
    if set(data) != set(keys):
        raise ConfigError(f"{path}: expected the lists {list(keys)}, found {sorted(data)}")
    lists: dict[str, tuple[str, ...]] = {}
    for key in keys:
        items = data[key]
        if not isinstance(items, list) or not all(isinstance(i, str) and i.strip() for i in items):
            raise ConfigError(f"{path}: `{key}` must be a list of non-empty strings")
        lists[key] = tuple(i.strip() for i in items)
    return lists


def _read_abbreviations(path: Path) -> dict[str, Abbreviation | None]:
    data = read_yaml(path)
    unknown = set(data) - {"chat", "domain"}
    if unknown:
        raise ConfigError(f"{path}: unknown sections {sorted(unknown)}; expected chat, domain")
    entries: dict[str, Abbreviation | None] = {}
    for section in ("chat", "domain"):
        items = data.get(section) or {}
        if not isinstance(items, dict):
            raise ConfigError(f"{path}: `{section}` must map abbreviations to expansions")
        for key, value in items.items():
            folded = fold(str(key))
            if not _ABBREVIATION_KEY.fullmatch(folded):
                raise ConfigError(f"{path}: {key!r} is not one word of letters and digits")
            entries[folded] = _abbreviation(path, str(key), value, chat=section == "chat")
    return entries


_ABBREVIATION_KEY = re.compile(r"[a-z0-9]+")


def _abbreviation(path: Path, key: str, value: Any, *, chat: bool) -> Abbreviation | None:
    if value is None:
        return None
    options: dict[str, Any] = value if isinstance(value, dict) else {"expand": value}
    expand = options.get("expand")
    expansions = tuple(str(e) for e in (expand if isinstance(expand, list) else [expand]) if e)
    if not expansions or set(options) - {"expand", "at_end", "second_near"}:
        raise ConfigError(
            f"{path}: entry {key!r} needs `expand` (and optionally `at_end`, `second_near`)"
        )
    near = options.get("second_near") or []
    if not isinstance(near, list) or (near and len(expansions) < 2):
        raise ConfigError(f"{path}: entry {key!r}: `second_near` lists words, for two expansions")
    return Abbreviation(
        expansions,
        chat=chat,
        at_end=bool(options.get("at_end", False)),
        second_near=frozenset(fold(str(w)) for w in near),
    )
