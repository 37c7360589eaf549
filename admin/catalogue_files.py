"""The catalogue's file: JSON Lines, one item a line (``{"kind", "name", "code", "aliases",
"hidden"}``), written by the Catalogue page's export and read, checked whole, by its import."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from bot.db.models import CatalogueRow
from retrieval.facts.model import CATALOGUE_KINDS

MAX_ALIASES = 20


def item_json(item: CatalogueRow) -> dict[str, Any]:
    return {
        "kind": item.kind,
        "name": item.name,
        "code": item.code,
        "aliases": list(item.aliases or ()),
        "hidden": item.hidden,
    }


def catalogue_lines(items: Iterable[CatalogueRow]) -> str:
    """``items`` as the file's lines."""
    return "".join(json.dumps(item_json(i), ensure_ascii=False) + "\n" for i in items)


def read_catalogue_file(raw: bytes) -> list[dict[str, Any]]:
    """The items of a catalogue file, or ValueError naming the first bad line."""
    items = []
    for number, line in enumerate(raw.decode("utf-8-sig").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"line {number}: {exc.msg}") from exc
        if (
            not isinstance(item, dict)
            or item.get("kind") not in CATALOGUE_KINDS
            or not isinstance(item.get("name"), str)
            or not item["name"].strip()
        ):
            raise ValueError(f"line {number}: no kind or name")
        aliases = item.get("aliases") or []
        if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
            raise ValueError(f"line {number}: aliases must be a list of texts")
        code = item.get("code")
        items.append(
            {
                "kind": item["kind"],
                "name": item["name"].strip()[:300],
                "code": str(code)[:64] if code else None,
                "aliases": [a.strip() for a in aliases if a.strip()][:MAX_ALIASES],
                "hidden": bool(item.get("hidden", False)),
            }
        )
    return items
