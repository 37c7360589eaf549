"""The guard's vocabulary: the language pack's ``guard`` section, extended by an operator's file."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from bot.core.errors import ConfigError
from bot.core.settings import TextSettings
from retrieval.guard.categories import value_spec
from retrieval.guard.checks import NearMissGuard
from retrieval.text.datafiles import read_yaml
from retrieval.text.pack import load_pack


def merge_vocabulary(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """``override`` applied to ``base`` as the guard section describes (values merged by
    canonical name).

    A university mostly adds (its majors, campuses, a partner's name as an alias), so a value's
    aliases are extended, not replaced; ``null`` removes a value or a whole category.
    """
    merged = copy.deepcopy(dict(base))
    categories: dict[str, Any] = merged.setdefault("categories", {}) or {}
    merged["categories"] = categories
    for name, spec in (override.get("categories") or {}).items():
        if spec is None:
            categories.pop(name, None)
            continue
        target = categories.setdefault(name, {})
        for key, value in spec.items():
            if key == "policy":
                target["policy"] = {**(target.get("policy") or {}), **(value or {})}
            elif key == "values":
                values = target.setdefault("values", {}) or {}
                target["values"] = values
                for canonical, aliases in (value or {}).items():
                    if aliases is None:
                        values.pop(canonical, None)
                    else:
                        values[canonical] = _extend(values.get(canonical), aliases)
            else:
                target[key] = value
    merged["ignore"] = [*(merged.get("ignore") or []), *(override.get("ignore") or [])]
    merged["kinds"] = {**(merged.get("kinds") or {}), **(override.get("kinds") or {})}
    merged["asks"] = {**(merged.get("asks") or {}), **(override.get("asks") or {})}
    for key in ("entities", "must_name"):
        if override.get(key) is not None:
            merged[key] = override[key]
    return merged


def _extend(base: Any, extra: Any) -> Any:
    """A value's aliases, patterns and kinds from ``base`` plus those of ``extra``."""
    base_aliases, base_patterns = value_spec(base)
    extra_aliases, extra_patterns = value_spec(extra)
    kinds = [*_kinds_of(base), *_kinds_of(extra)]
    generic = any(isinstance(s, Mapping) and s.get("generic") for s in (base, extra))
    return {
        "aliases": [*base_aliases, *extra_aliases],
        "patterns": [*base_patterns, *extra_patterns],
        **({"kinds": list(dict.fromkeys(kinds))} if kinds else {}),
        **({"generic": True} if generic else {}),
    }


def _kinds_of(spec: Any) -> list[str]:
    return [str(k) for k in spec.get("kinds") or []] if isinstance(spec, Mapping) else []


def load_guard(settings: TextSettings | None = None) -> NearMissGuard:
    """The bundled vocabulary, extended by ``settings.guard_vocabulary_file``."""
    override = settings.guard_vocabulary_file if settings is not None else None
    return _load(override.resolve() if override is not None else None)


@lru_cache(maxsize=8)
def _load(override: Path | None) -> NearMissGuard:
    vocabulary = dict(load_pack().guard)
    if override is not None:
        try:
            vocabulary = merge_vocabulary(vocabulary, read_yaml(override))
        except (AttributeError, TypeError, ValueError) as exc:
            raise ConfigError(f"{override}: not a guard vocabulary ({exc})") from exc
    return NearMissGuard(vocabulary)
