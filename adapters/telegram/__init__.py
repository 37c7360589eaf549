"""Telegram: updates in (webhook or long polling), replies out, over the Bot API.

Holds ``TelegramAdapter``, the ``Adapter`` for Telegram, made of the modules beside it:
``webhook`` (the secret Telegram echoes; setting the webhook), ``updates`` (reading an Update),
``sending`` (parts, escaping, buttons), ``callbacks`` (answering a tap on 👍/👎), ``client``
(python-telegram-bot's ``Bot`` and its errors as ``SendError``), ``polling`` (``getUpdates``).
Imports ``adapters``' shared modules and ``bot.core`` only.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence

import aiohttp

from adapters.interface import Adapter, WebhookAck
from adapters.payloads import is_json_int, json_body
from adapters.telegram.callbacks import acknowledge_vote, webhook_answer
from adapters.telegram.client import BotApiClient
from adapters.telegram.sending import (
    MESSAGE_LIMIT,
    SOURCE_BUTTONS,
    SUGGESTION_BUTTONS,
    send_reply,
    send_typing,
)
from adapters.telegram.updates import parse_update
from adapters.telegram.webhook import verify_secret
from bot.core.errors import ConfigError, SendError, WebhookPayloadError
from bot.core.messages import (
    Capabilities,
    InboundBatch,
    InboundMessage,
    OutboundReply,
    RawRequest,
    SendResult,
    SkippedEvent,
)
from bot.core.settings import TelegramSettings
from bot.core.types import Channel

log = logging.getLogger(__name__)


class TelegramAdapter(Adapter):
    channel: Channel = "telegram"

    def __init__(self, settings: TelegramSettings) -> None:
        self.settings = settings
        self._client: BotApiClient | None = None

    @property
    def capabilities(self) -> Capabilities:
        # No messaging window: a bot may write to a chat at any time. ``send`` shows
        # suggested questions as a keyboard: the branding's with the greeting (/start), none
        # under answers (quick_replies 0).
        return Capabilities(
            window_hours=None,
            quick_replies=0,
            suggestions=SUGGESTION_BUTTONS,
            typing=True,
            read_receipts=False,
            text_limit=MESSAGE_LIMIT,
            source_buttons=SOURCE_BUTTONS,
        )

    def verify(self, raw: RawRequest) -> None:
        verify_secret(self.settings, raw)

    def parse(self, raw: RawRequest) -> InboundBatch:
        """The body's one Update. An object with an integer ``update_id`` is an Update, even
        when the rest cannot be read: that one is skipped (and acknowledged), or Telegram
        would send it again and again."""
        data = json_body(raw)
        if not isinstance(data, dict) or not is_json_int(data.get("update_id")):
            raise WebhookPayloadError("a Telegram update must be an object with an update_id")
        try:
            return InboundBatch(parse_update(data))
        except WebhookPayloadError as exc:
            return InboundBatch(skipped=[SkippedEvent(f"update {data['update_id']}", str(exc))])

    def _bot(self) -> BotApiClient:
        """The adapter's Bot API client, made on first use (``ConfigError`` without a token)."""
        if self._client is None:
            self._client = BotApiClient(self.settings)
        return self._client

    async def aclose(self) -> None:
        """Close the Bot API client's connections (the adapter may be used again after)."""
        client, self._client = self._client, None
        if client is not None:
            await client.aclose()

    async def send(self, http: aiohttp.ClientSession, reply: OutboundReply) -> SendResult:
        """Send ``reply`` with the adapter's ``telegram.Bot``; ``http`` is not used (the
        signature is the one all adapters share)."""
        return await send_reply(self._bot, reply)

    async def typing(self, http: aiohttp.ClientSession, external_user_id: str) -> None:
        """``sendChatAction`` typing (``http`` is not used, as in ``send``)."""
        try:
            await send_typing(self._bot(), external_user_id)
        except (SendError, ConfigError) as exc:
            log.debug("telegram typing indicator not shown: %s", exc)

    async def mark_seen(self, http: aiohttp.ClientSession, external_user_id: str) -> None:
        """The Bot API has no read receipts."""

    def webhook_ack(self, votes: Sequence[tuple[InboundMessage, bool]]) -> WebhookAck:
        """A tap on 👍/👎 is answered in the response itself, as its ``answerCallbackQuery``
        (one update per request: at most one vote), so there is no request of ours to wait on."""
        answer = webhook_answer(*votes[0]) if votes else None
        if answer is None:
            return WebhookAck()
        return WebhookAck(body=json.dumps(answer), content_type="application/json")

    async def acknowledge_vote(self, vote: InboundMessage, recorded: bool) -> None:
        """Answer the tap and mark the choice on the keyboard (long polling); best effort."""
        try:
            await acknowledge_vote(self._bot(), vote, recorded)
        except (SendError, ConfigError) as exc:
            log.warning("telegram: a vote was stored but not acknowledged: %s", exc)
