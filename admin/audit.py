"""The audit log: who changed what, when, with the row before and after.

Every change made through the admin writes one ``AuditEntry`` in the same transaction as the
change itself (so a change is never stored without its record, nor the reverse). History pages
show each entry as the fields that changed, before → after.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.core.clock import utcnow
from bot.db.models import AuditEntry


async def record(
    session: AsyncSession,
    actor: str,
    action: str,
    entity: str,
    entity_id: int | None,
    before: dict[str, Any] | None = None,
    after: dict[str, Any] | None = None,
) -> None:
    session.add(
        AuditEntry(
            at=utcnow(),
            actor=actor,
            action=action,
            entity=entity,
            entity_id=entity_id,
            before=before,
            after=after,
        )
    )
    await session.flush()


@dataclass(frozen=True)
class FieldChange:
    name: str
    before: Any
    after: Any


@dataclass(frozen=True)
class HistoryItem:
    at: datetime
    actor: str
    action: str
    changes: list[FieldChange]


def field_changes(before: dict[str, Any] | None, after: dict[str, Any] | None) -> list[FieldChange]:
    """The fields whose value differs, in a stable order (a created row: every field)."""
    old, new = before or {}, after or {}
    names = list(dict.fromkeys([*old, *new]))
    return [FieldChange(n, old.get(n), new.get(n)) for n in names if old.get(n) != new.get(n)]


async def history(
    session: AsyncSession, entity: str, entity_id: int, limit: int = 200
) -> list[HistoryItem]:
    rows = await session.scalars(
        select(AuditEntry)
        .where(AuditEntry.entity == entity, AuditEntry.entity_id == entity_id)
        .order_by(AuditEntry.at.desc(), AuditEntry.id.desc())
        .limit(limit)
    )
    return [HistoryItem(r.at, r.actor, r.action, field_changes(r.before, r.after)) for r in rows]


def word_diff(before: Any, after: Any) -> list[tuple[str, str]]:
    """Two values as ``(op, text)`` runs, op in same/del/ins, word by word: an edited answer
    shows what was changed, not two walls of text. The template escapes every run."""
    old = "" if before is None else str(before)
    new = "" if after is None else str(after)
    a, b = old.split(" "), new.split(" ")
    runs: list[tuple[str, str]] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            runs.append(("same", " ".join(a[i1:i2])))
            continue
        if i2 > i1:
            runs.append(("del", " ".join(a[i1:i2])))
        if j2 > j1:
            runs.append(("ins", " ".join(b[j1:j2])))
    return [(op, text) for op, text in runs if text]
