"""Zalo Official Account, API v3: the webhook signature, its events, customer-service messages,
and the token refresh.

Holds ``ZaloAdapter``, the ``Adapter`` for Zalo, made of the modules beside it: ``signature``
(the webhook's mac), ``events`` (reading an event), ``oa_api`` (sending, Zalo's error codes),
``tokens`` (``TokenProvider``, the refresh). Imports ``adapters``' shared modules and
``bot.core`` only.
"""

from __future__ import annotations

import aiohttp

from adapters.interface import Adapter
from adapters.zalo.events import parse_event
from adapters.zalo.oa_api import MAX_TEXT, send_reply
from adapters.zalo.signature import verify_signature
from adapters.zalo.tokens import TokenProvider
from bot.core.messages import Capabilities, InboundBatch, OutboundReply, RawRequest, SendResult
from bot.core.settings import ZaloSettings
from bot.core.types import Channel


class ZaloAdapter(Adapter):
    channel: Channel = "zalo"

    def __init__(self, settings: ZaloSettings, tokens: TokenProvider) -> None:
        self.settings = settings
        self.tokens = tokens

    @property
    def capabilities(self) -> Capabilities:
        # The OA API has no typing indicator, no read receipt and no quick replies.
        return Capabilities(
            window_hours=self.settings.window_hours,
            typing=False,
            read_receipts=False,
            text_limit=MAX_TEXT,
        )

    def verify(self, raw: RawRequest) -> None:
        verify_signature(self.settings, raw)

    def parse(self, raw: RawRequest) -> InboundBatch:
        """The one event of a request (none for OA-level notices, which name no user)."""
        return parse_event(raw)

    async def send(self, http: aiohttp.ClientSession, reply: OutboundReply) -> SendResult:
        """Send ``reply`` as customer-service messages; a rejected token is refreshed once."""
        return await send_reply(http, self.settings, self.tokens, reply)

    async def typing(self, http: aiohttp.ClientSession, external_user_id: str) -> None:
        """Zalo's OA API has no typing indicator."""

    async def mark_seen(self, http: aiohttp.ClientSession, external_user_id: str) -> None:
        """Zalo's OA API has no read receipts."""

    async def aclose(self) -> None:
        """Nothing to close: requests go over the process's session."""
