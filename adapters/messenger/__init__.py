"""Facebook Messenger: the Page webhook (handshake, signature, batched events) and the Send API.

Holds ``MessengerAdapter``, the ``Adapter`` for Messenger, made of the modules beside it:
``webhook`` (handshake, signature), ``events`` (the batched events), ``send_api`` (sending, sender
actions, Graph errors), ``templates`` (quick replies, the sources' button template). Imports
``adapters``' shared modules and ``bot.core`` only.
"""

from __future__ import annotations

import logging

import aiohttp

from adapters.interface import Adapter
from adapters.messenger.events import parse_page_webhook
from adapters.messenger.send_api import TEXT_LIMIT, SenderAction, post_sender_action, send_reply
from adapters.messenger.templates import QUICK_REPLY_MAX, TEMPLATE_BUTTONS
from adapters.messenger.webhook import handshake_challenge, verify_signature
from bot.core.errors import SendError
from bot.core.messages import Capabilities, InboundBatch, OutboundReply, RawRequest, SendResult
from bot.core.settings import MessengerSettings
from bot.core.types import Channel

log = logging.getLogger(__name__)


class MessengerAdapter(Adapter):
    channel: Channel = "messenger"

    def __init__(self, settings: MessengerSettings) -> None:
        self.settings = settings

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(
            window_hours=self.settings.window_hours,
            staff_window_hours=self.settings.human_agent_hours,
            quick_replies=max(0, min(self.settings.quick_replies, QUICK_REPLY_MAX)),
            typing=True,
            read_receipts=True,
            text_limit=TEXT_LIMIT,
            source_buttons=TEMPLATE_BUTTONS,
            staff_pause_minutes=self.settings.staff_pause_minutes,
        )

    def handshake(self, raw: RawRequest) -> str:
        """The ``hub.challenge`` to answer (as text/plain, 200) to Meta's subscription check."""
        return handshake_challenge(self.settings, raw)

    def verify(self, raw: RawRequest) -> None:
        verify_signature(self.settings, raw)

    def parse(self, raw: RawRequest) -> InboundBatch:
        return parse_page_webhook(self.settings, raw)

    async def send(self, http: aiohttp.ClientSession, reply: OutboundReply) -> SendResult:
        return await send_reply(http, self.settings, reply)

    async def typing(self, http: aiohttp.ClientSession, external_user_id: str) -> None:
        await self.sender_action(http, external_user_id, "typing_on")

    async def mark_seen(self, http: aiohttp.ClientSession, external_user_id: str) -> None:
        await self.sender_action(http, external_user_id, "mark_seen")

    async def sender_action(
        self, http: aiohttp.ClientSession, external_user_id: str, action: SenderAction
    ) -> None:
        """Best effort: failures are logged, not raised."""
        try:
            await post_sender_action(http, self.settings, external_user_id, action)
        except SendError as exc:
            log.warning("messenger %s for %s failed: %s", action, external_user_id, exc)

    async def aclose(self) -> None:
        """Nothing to close: requests go over the process's session."""
