"""The one interface every platform adapter implements.

``verify`` and ``parse`` are pure: bytes and headers in, values out, no I/O, so each platform's
payloads are tested without a server. ``send``, ``typing`` and ``mark_seen`` talk to the platform
over the ``aiohttp.ClientSession`` the process owns. Adapters never touch the database. What a
platform allows (its messaging window, quick replies, a typing indicator...) is its
``capabilities``: the worker asks them instead of naming the platform.

What a webhook answers once its events are stored is the adapter's too (``webhook_ack``), and so
is a subscription check on GET (``handshake``): both have a default here, overridden by the
platforms that need more (Telegram answers a vote tap in the response, Messenger echoes
Meta's challenge), so the webhook route never names a platform. The adapters subclass
``Adapter`` to inherit the defaults; anything with the same methods still fits it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import aiohttp

from bot.core.messages import (
    Capabilities,
    InboundBatch,
    InboundMessage,
    OutboundReply,
    RawRequest,
    SendResult,
)
from bot.core.types import Channel


@dataclass(frozen=True)
class WebhookAck:
    """The HTTP response a webhook gives the platform once a delivery is stored."""

    status: int = 200
    body: str = "ok"
    content_type: str = "text/plain"


class Adapter(Protocol):
    channel: Channel

    @property
    def capabilities(self) -> Capabilities:
        """The messaging window, quick replies, typing: what the worker asks before sending."""

    def verify(self, raw: RawRequest) -> None:
        """Raise ``WebhookAuthError`` unless the request comes from the platform."""

    def parse(self, raw: RawRequest) -> InboundBatch:
        """Every event in the body (a list: Messenger batches); ``WebhookPayloadError`` if the
        body as a whole is not the platform's shape. One event that cannot be read (no sender,
        not an object) is skipped, named in ``skipped``, and the others still come back.
        Events tuvan has no use for come back as kind ``event``, so that they are stored.
        Called only after ``verify``: the body is authentic."""

    async def send(self, http: aiohttp.ClientSession, reply: OutboundReply) -> SendResult:
        """Deliver ``reply`` (split to the platform's limit), or raise ``SendError``."""

    async def typing(self, http: aiohttp.ClientSession, external_user_id: str) -> None:
        """Show that an answer is coming; best effort (errors are logged, not raised). A no-op
        where ``capabilities.typing`` is False."""

    async def mark_seen(self, http: aiohttp.ClientSession, external_user_id: str) -> None:
        """Show the user that the question was read; best effort. A no-op where
        ``capabilities.read_receipts`` is False."""

    async def aclose(self) -> None:
        """Let go of any client the adapter owns (python-telegram-bot's connection pool)."""

    def webhook_ack(self, votes: Sequence[tuple[InboundMessage, bool]]) -> WebhookAck:
        """The response to a stored delivery. ``votes``: its votes stored for the first time,
        each with whether it was taken (False: refused, not the sender's answer). A plain
        200 "ok" unless the platform reads more from the response."""
        return WebhookAck()

    def handshake(self, raw: RawRequest) -> str | None:
        """The text to answer (200) to the platform's subscription check, a GET; None where
        the platform has none. ``WebhookAuthError`` if the check is not the platform's."""
        return None
