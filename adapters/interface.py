"""The one interface every platform adapter implements.

``verify`` and ``parse`` are pure: bytes and headers in, values out, no I/O, so each platform's
payloads are tested without a server. ``send``, ``typing`` and ``mark_seen`` talk to the platform
over the ``aiohttp.ClientSession`` the process owns. Adapters never touch the database. What a
platform allows (its messaging window, quick replies, a typing indicator...) is its
``capabilities``: the worker asks them instead of naming the platform.
"""

from __future__ import annotations

from typing import Protocol

import aiohttp

from bot.core.messages import Capabilities, InboundBatch, OutboundReply, RawRequest, SendResult
from bot.core.types import Channel


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
