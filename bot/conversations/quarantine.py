"""Authentic inbound events that cannot be stored as they came: repaired when that is safe,
otherwise quarantined, and told apart from a database outage.

A platform retries a webhook until it gets a 200. An event PostgreSQL refuses for what it holds
(a NUL in a text, ``NaN`` in the JSON, an id longer than its column) would be refused again on
every retry, so the caller keeps it here and acknowledges it. A database that cannot be reached
is another matter: the same event will store fine later, so the caller answers 503 and the
platform retries. Functions take the session (or connection) first and never commit.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.exc import (
    DataError,
    DBAPIError,
    DisconnectionError,
    IntegrityError,
    InterfaceError,
    OperationalError,
    StatementError,
)
from sqlalchemy.exc import TimeoutError as PoolTimeoutError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from bot.core.messages import InboundMessage
from bot.db.models import QuarantinedEvent

# What storing an event can raise because of the event itself (DataError, IntegrityError, a
# ValueError from the driver's encoding) or of the database (OperationalError...): catch these,
# then ask ``unstorable`` which one it is.
STORE_ERRORS = (DBAPIError, StatementError, ValueError, TypeError, RecursionError)
_OUTAGE = (OperationalError, InterfaceError, DisconnectionError, PoolTimeoutError, OSError)
_EVENT_FAULTS = (ValueError, TypeError, RecursionError)  # UnicodeEncodeError is a ValueError

_REASON_CHARS = 1000
_LOCATION_CHARS = 200


def unstorable(exc: BaseException) -> bool:
    """Whether ``exc`` says this event can never be stored (quarantine it, acknowledge it)
    rather than that the database is out of reach (503: the platform retries)."""
    if isinstance(exc, _OUTAGE):
        return False
    if isinstance(exc, DBAPIError):
        # DataError: a NUL, NaN, a value too long; IntegrityError: a constraint the event breaks.
        return not exc.connection_invalidated and isinstance(exc, DataError | IntegrityError)
    if isinstance(exc, StatementError):  # a bind parameter that could not be converted
        return isinstance(exc.orig, _EVENT_FAULTS)
    return isinstance(exc, _EVENT_FAULTS)


def repair_inbound(message: InboundMessage) -> tuple[InboundMessage, list[str]]:
    """``message`` with what PostgreSQL can never hold removed, and what was removed.

    NUL ("\\x00", or "\\u0000" in JSON) is refused by ``text`` and ``jsonb``; an unpaired
    surrogate ("\\ud800") cannot be encoded to UTF-8. Neither carries meaning in a student's
    message, so dropping them (or a "?" for a surrogate) is safe, and the repaired event is
    stored and answered instead of quarantined.
    """
    repairs: set[str] = set()

    def clean(value: str) -> str:
        if "\x00" in value:
            value = value.replace("\x00", "")
            repairs.add("NUL removed")
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            value = value.encode("utf-8", "replace").decode("utf-8")
            repairs.add("unpaired surrogate replaced")
        return value

    def clean_json(value: Any) -> Any:
        if isinstance(value, str):
            return clean(value)
        if isinstance(value, dict):
            return {clean(str(k)): clean_json(v) for k, v in value.items()}
        if isinstance(value, list):
            return [clean_json(v) for v in value]
        return value

    try:
        raw = clean_json(dict(message.raw))
    except RecursionError:  # nested past what Python recurses: left as it is, for quarantine
        raw = message.raw
    repaired = replace(
        message,
        event_id=clean(message.event_id),
        external_user_id=clean(message.external_user_id),
        text=clean(message.text),
        user_name=clean(message.user_name) if message.user_name is not None else None,
        locale=clean(message.locale) if message.locale is not None else None,
        raw=raw,
    )
    return (repaired, sorted(repairs)) if repairs else (message, [])


def body_text(body: bytes) -> str:
    """A request body as ``text`` can hold it: UTF-8 as it is, other bytes and NUL escaped."""
    return body.decode("utf-8", "backslashreplace").replace("\x00", "\\x00")


async def quarantine_event(
    session: AsyncSession | AsyncConnection, channel: str, body: bytes, location: str, reason: str
) -> bool:
    """Keep an authentic event that was not stored; False if this event (the same body and
    location) is in quarantine already: a platform's retry adds no row."""
    location = body_text(location.encode("utf-8", "backslashreplace"))[:_LOCATION_CHARS]
    fingerprint = hashlib.sha256(body + b"\n" + location.encode()).hexdigest()
    inserted = await session.scalar(
        insert(QuarantinedEvent)
        .values(
            channel=channel,
            location=location,
            reason=body_text(reason.encode("utf-8", "backslashreplace"))[:_REASON_CHARS],
            raw_body=body_text(body),
            fingerprint=fingerprint,
        )
        .on_conflict_do_nothing(constraint="uq_quarantined_events_channel")
        .returning(QuarantinedEvent.id)
    )
    return inserted is not None


async def count_quarantined(session: AsyncSession) -> int:
    """How many events are in quarantine, for the admin."""
    return int(await session.scalar(select(func.count()).select_from(QuarantinedEvent)) or 0)
