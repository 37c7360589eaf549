"""Facebook Messenger: the Page webhook (handshake, signature, batched events) and the Send API.

Meta's references this follows:
https://developers.facebook.com/docs/messenger-platform/webhooks (handshake, signature),
https://developers.facebook.com/docs/messenger-platform/reference/webhook-events (event shapes),
https://developers.facebook.com/docs/messenger-platform/reference/send-api (sending, errors).
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Literal

import aiohttp

from adapters.base import (
    button_title,
    json_body,
    secrets_equal,
    send_parts,
    split_text,
)
from bot.core.citations import SourceBlock, source_links
from bot.core.errors import SendError, WebhookAuthError, WebhookPayloadError
from bot.core.messages import (
    Capabilities,
    InboundKind,
    InboundMessage,
    OutboundReply,
    RawRequest,
    SendResult,
)
from bot.core.redact import without_secret
from bot.core.settings import MessengerSettings
from bot.core.types import Channel

log = logging.getLogger(__name__)

# Text must be under 2000 characters; quick replies at most 13, titles 20, payloads 1000.
TEXT_LIMIT = 1999
QUICK_REPLY_MAX = 13
# A button template: at most 3 buttons, each title at most 20 characters, text at most 640.
TEMPLATE_BUTTONS = 3
BUTTON_TITLE_MAX = 20
QUICK_REPLY_TITLE_MAX = 20
QUICK_REPLY_PAYLOAD_MAX = 1000

# The Page Inbox (Meta Business Suite) app: its echoes are a person answering in the inbox.
PAGE_INBOX_APP_ID = "263902037430900"

SIGNATURE_HEADER = "X-Hub-Signature-256"
_SIGNATURE_PREFIX = "sha256="

# Payloads of a "Get Started" button or a persistent-menu "start again" item, compared after
# _payload_key(); anything else a postback carries is read as a question.
GET_STARTED_PAYLOADS = frozenset({"GET_STARTED", "GET_STARTED_PAYLOAD", "START", "RESTART"})
# A postback payload that looks like a developer's code ("MENU_TUITION") is not a question:
# the button's title is what the user saw and tapped.
_OPAQUE_PAYLOAD = re.compile(r"[A-Z0-9_:.\-]+")

# Event fields that are not the event's kind, and, in order, the kinds worth naming in a
# fallback event id.
_ENVELOPE = frozenset({"sender", "recipient", "timestamp"})
_EVENT_TYPES = (
    "message",
    "postback",
    "delivery",
    "read",
    "reaction",
    "optin",
    "referral",
    "pass_thread_control",
    "take_thread_control",
    "request_thread_control",
    "app_roles",
    "account_linking",
    "policy_enforcement",
    "message_edit",
)

# Send API error codes (https://developers.facebook.com/docs/messenger-platform/error-codes).
_OUTSIDE_WINDOW_SUBCODES = frozenset({2018278, 2018065})
_RATE_LIMIT_CODES = frozenset({4, 17, 32, 613})
_TRANSIENT_CODES = frozenset({2, 1200})  # "unexpected error, retry", "temporary send failure"

SenderAction = Literal["typing_on", "typing_off", "mark_seen"]


class MessengerAdapter:
    channel: Channel = "messenger"

    def __init__(self, settings: MessengerSettings) -> None:
        self.settings = settings

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(
            window_hours=self.settings.window_hours,
            staff_window_hours=self.settings.human_agent_hours,
            quick_replies=self.settings.quick_replies,
        )

    # -- webhook --------------------------------------------------------------------------

    def handshake(self, raw: RawRequest) -> str:
        """The ``hub.challenge`` to answer (as text/plain, 200) to Meta's subscription check."""
        expected = self.settings.verify_token
        if (
            raw.method.upper() != "GET"
            or raw.query.get("hub.mode") != "subscribe"
            or expected is None
            or not secrets_equal(raw.query.get("hub.verify_token"), expected.get_secret_value())
        ):
            raise WebhookAuthError("messenger: subscription check with a wrong verify token")
        challenge = raw.query.get("hub.challenge")
        if not challenge:
            raise WebhookAuthError("messenger: subscription check without hub.challenge")
        return challenge

    def verify(self, raw: RawRequest) -> None:
        # The algorithm is fixed: a header naming another one ("sha1=") is rejected, never
        # followed. The HMAC is over the body's bytes as sent: Meta signs JSON with escaped
        # unicode ("\u1ecd"), which a re-serialisation would not reproduce.
        secret = self.settings.app_secret
        if secret is None or not secret.get_secret_value():
            raise WebhookAuthError("messenger: no app secret configured to check signatures")
        given = _header(raw.headers, SIGNATURE_HEADER)
        if given is None:
            raise WebhookAuthError(f"messenger: no {SIGNATURE_HEADER} header")
        if not given.startswith(_SIGNATURE_PREFIX):
            raise WebhookAuthError(f"messenger: {SIGNATURE_HEADER} is not sha256")
        expected = hmac.new(
            secret.get_secret_value().encode(), raw.body, hashlib.sha256
        ).hexdigest()
        digest = given[len(_SIGNATURE_PREFIX) :].strip().lower()
        if not hmac.compare_digest(digest.encode("utf-8", "replace"), expected.encode()):
            raise WebhookAuthError("messenger: signature does not match the body")

    def parse(self, raw: RawRequest) -> list[InboundMessage]:
        body = json_body(raw)
        if not isinstance(body, dict) or body.get("object") != "page":
            raise WebhookPayloadError("messenger: body is not a page webhook")
        entries = body.get("entry")
        if not isinstance(entries, list):
            raise WebhookPayloadError("messenger: entry is not a list")
        out: list[InboundMessage] = []
        for entry in entries:
            if not isinstance(entry, dict):
                raise WebhookPayloadError("messenger: an entry is not an object")
            # Another app owning the thread (handover protocol) sends ours "standby" events:
            # stored, never answered.
            for field, standby in (("messaging", False), ("standby", True)):
                events = entry.get(field, [])
                if not isinstance(events, list):
                    raise WebhookPayloadError(f"messenger: entry.{field} is not a list")
                for event in events:
                    if not isinstance(event, dict):
                        raise WebhookPayloadError(
                            f"messenger: an entry.{field} item is not an object"
                        )
                    out.append(self._event(event, entry, standby=standby))
        return out

    def _event(
        self, event: dict[str, Any], entry: Mapping[str, Any], *, standby: bool
    ) -> InboundMessage:
        sender = _id(event.get("sender"))
        recipient = _id(event.get("recipient"))
        sent_at = _time(event.get("timestamp")) or _time(entry.get("time"))
        event_type = next((t for t in _EVENT_TYPES if t in event), None) or next(
            (k for k in event if k not in _ENVELOPE), "event"
        )
        message = event.get("message")
        postback = event.get("postback")
        user = sender
        kind: InboundKind = "event"
        text = ""
        mid: Any = None

        if isinstance(message, dict):
            mid = message.get("mid")
            text = _str(message.get("text"))
            if message.get("is_echo"):
                # Our page's own send, echoed: the user is the recipient.
                user = recipient
                kind = "staff" if self._by_a_person(message.get("app_id")) else "event"
            elif message.get("is_deleted"):
                kind = "event"  # the user unsent a message
            else:
                quick_reply = message.get("quick_reply")
                payload = _str(quick_reply.get("payload")) if isinstance(quick_reply, dict) else ""
                # Our quick replies carry the whole FAQ question as payload; the title may be cut.
                text = (payload or text).strip()
                kind = "text" if text else "unsupported"
        elif isinstance(postback, dict):
            mid = postback.get("mid")
            payload = _str(postback.get("payload")).strip()
            title = _str(postback.get("title")).strip()
            if _payload_key(payload) in GET_STARTED_PAYLOADS:
                kind, text = "command", "/start"
            else:
                text = title if (not payload or _OPAQUE_PAYLOAD.fullmatch(payload)) else payload
                text = text or payload
                kind = "text" if text else "event"
        elif "optin" in event and user is None:
            # The checkbox plugin's opt-in names the person by user_ref, not by PSID.
            optin = event["optin"]
            user = _str(optin.get("user_ref")) if isinstance(optin, dict) else None

        if not user:
            raise WebhookPayloadError(f"messenger: a {event_type} event without a sender id")
        if standby and kind != "staff":
            kind = "event"  # the thread is another app's: a person's echo still pauses us
        return InboundMessage(
            channel=self.channel,
            event_id=_str(mid) or _fallback_id(event_type, user, event),
            external_user_id=user,
            kind=kind,
            text=text,
            sent_at=sent_at,
            raw=event,
        )

    def _by_a_person(self, app_id: Any) -> bool:
        """Whether an echo was sent by someone other than tuvan: a person in the Page Inbox,
        or another app."""
        sender_app = _str(app_id)
        ours = self.settings.app_id
        if ours:
            return sender_app != ours
        # Without our app id only the Page Inbox is known for sure; anything else may be us,
        # and taking our own echo for a person would silence the bot.
        return sender_app == PAGE_INBOX_APP_ID

    # -- Send API -------------------------------------------------------------------------

    @property
    def messages_url(self) -> str:
        base = self.settings.api_base.rstrip("/")
        return f"{base}/{self.settings.api_version}/me/messages"

    async def send(self, http: aiohttp.ClientSession, reply: OutboundReply) -> SendResult:
        # The sources become a last message of link buttons (a button template), not lines of
        # URLs in the text.
        text, sources = source_links(reply.text)
        if sources is not None and len(sources.links) > TEMPLATE_BUTTONS:
            text, sources = reply.text, None  # more sources than buttons: all of them as text
        parts: list[str | SourceBlock] = list(split_text(text, TEXT_LIMIT))
        if not parts:
            raise SendError("messenger: empty reply", retryable=False)
        if sources is not None:
            parts.append(sources)
        quick_replies = self._quick_replies(reply.quick_replies)

        async def send_one(index: int, part: str | SourceBlock) -> str | None:
            message: dict[str, Any] = (
                {"text": part} if isinstance(part, str) else _button_template(part)
            )
            if quick_replies and index == len(parts) - 1:
                message["quick_replies"] = quick_replies
            body: dict[str, Any] = {
                "messaging_type": "RESPONSE",
                "recipient": {"id": reply.external_user_id},
                "message": message,
            }
            if reply.human_agent:
                # Past the 24 h window a person (never the bot) may answer for 7 days with the
                # HUMAN_AGENT tag; the Page needs Meta's Human Agent permission for it.
                body["messaging_type"] = "MESSAGE_TAG"
                body["tag"] = "HUMAN_AGENT"
            data = await self._post(http, body)
            return _str(data.get("message_id")) or None

        return await send_parts(parts, reply.first_part, send_one)

    async def typing(self, http: aiohttp.ClientSession, external_user_id: str) -> None:
        await self.sender_action(http, external_user_id, "typing_on")

    async def mark_seen(self, http: aiohttp.ClientSession, external_user_id: str) -> None:
        await self.sender_action(http, external_user_id, "mark_seen")

    async def sender_action(
        self, http: aiohttp.ClientSession, external_user_id: str, action: SenderAction
    ) -> None:
        """Best effort: a sender action goes in a request of its own, and failures are logged."""
        try:
            await self._post(http, {"recipient": {"id": external_user_id}, "sender_action": action})
        except SendError as exc:
            log.warning("messenger %s for %s failed: %s", action, external_user_id, exc)

    def _quick_replies(self, questions: tuple[str, ...]) -> list[dict[str, str]]:
        limit = max(0, min(self.settings.quick_replies, QUICK_REPLY_MAX))
        out: list[dict[str, str]] = []
        seen: set[str] = set()
        for question in questions:
            question = " ".join(question.split())
            if not question or question in seen or len(out) >= limit:
                continue
            seen.add(question)
            title = question
            if len(title) > QUICK_REPLY_TITLE_MAX:
                title = title[: QUICK_REPLY_TITLE_MAX - 1].rstrip() + "…"
            out.append(
                {
                    "content_type": "text",
                    "title": title,
                    "payload": question[:QUICK_REPLY_PAYLOAD_MAX],
                }
            )
        return out

    async def _post(self, http: aiohttp.ClientSession, payload: dict[str, Any]) -> dict[str, Any]:
        token = self.settings.page_token.get_secret_value() if self.settings.page_token else ""
        if not token:
            raise SendError("messenger: no page token configured", retryable=False)
        try:
            async with http.post(
                self.messages_url, params={"access_token": token}, json=payload
            ) as response:
                status = response.status
                retry_after = _retry_after(response.headers.get("Retry-After"))
                try:
                    data: Any = await response.json(content_type=None)
                except ValueError:
                    data = None
        except (TimeoutError, aiohttp.ClientError) as exc:
            detail = without_secret(f"{type(exc).__name__}: {exc}", token)
            error = SendError(f"messenger send API unreachable: {detail}"[:500], retryable=True)
            # aiohttp may put the URL, with the token in its query, in its exception's text:
            # then the cause is dropped so that no traceback logs it.
            if token in f"{exc!s}{exc!r}":
                raise error from None
            raise error from exc
        if status == 200 and isinstance(data, dict) and "error" not in data:
            return data
        raise _send_error(status, data, retry_after)


def _send_error(status: int, data: Any, retry_after: float | None) -> SendError:
    error = data.get("error") if isinstance(data, dict) else None
    if not isinstance(error, dict):
        return SendError(
            f"messenger send API: HTTP {status} without a Graph error",
            retryable=status == 429 or status >= 500,
            retry_after=retry_after,
            status=status,
        )
    code = error.get("code")
    subcode = error.get("error_subcode")
    text = _str(error.get("message"))
    detail = (
        f"messenger send API: HTTP {status}: ({code}/{subcode}) {text} "
        f"[fbtrace_id {_str(error.get('fbtrace_id'))}]"
    )[:500]
    if subcode in _OUTSIDE_WINDOW_SUBCODES or (code == 10 and "window" in text.lower()):
        # Only a tagged message may go out now; trying again will not help.
        return SendError(detail, retryable=False, status=status, code="outside_window")
    retryable = (
        code in _RATE_LIMIT_CODES
        or code in _TRANSIENT_CODES
        or error.get("is_transient") is True
        or status == 429
        or status >= 500
    )
    return SendError(
        detail,
        retryable=retryable,
        retry_after=retry_after,
        status=status,
        code=None if code is None else str(code),
    )


def _header(headers: Mapping[str, str], name: str) -> str | None:
    value = headers.get(name)
    if value is None:  # a plain dict rather than the CIMultiDict RawRequest asks for
        lowered = name.lower()
        value = next((v for k, v in headers.items() if k.lower() == lowered), None)
    return value


def _id(party: Any) -> str | None:
    if isinstance(party, dict):
        value = party.get("id")
        if isinstance(value, str | int) and not isinstance(value, bool) and str(value):
            return str(value)
    return None


def _str(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)  # echoes give app_id as a number
    return ""


def _time(value: Any) -> datetime | None:
    if not isinstance(value, int | float) or isinstance(value, bool) or value <= 0:
        return None
    # Webhook timestamps are milliseconds; a few of Meta's own examples show seconds.
    seconds = value / 1000 if value > 100_000_000_000 else value
    try:
        return datetime.fromtimestamp(seconds, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return None


def _payload_key(payload: str) -> str:
    return re.sub(r"[^A-Z0-9]+", "_", payload.upper()).strip("_")


def _fallback_id(event_type: str, user: str, event: Mapping[str, Any]) -> str:
    """A stable id for an event without a mid of its own (delivery, read, reaction, ...): the
    same event re-delivered gets the same id."""
    parts = [event_type, user, _str(event.get("timestamp")) or "0"]
    detail = event.get(event_type)
    if isinstance(detail, dict):
        # A reaction's mid is the reacted-to message's, so it cannot be this event's id alone.
        parts += [_str(detail.get(k)) for k in ("watermark", "mid", "action") if k in detail]
    return ":".join(parts)


def _retry_after(value: str | None) -> float | None:
    try:
        return max(0.0, float(value)) if value else None
    except ValueError:
        return None


def _button_template(sources: SourceBlock) -> dict[str, Any]:
    """The sources as a button template: their heading, and a link button for each of the
    first three."""
    return {
        "attachment": {
            "type": "template",
            "payload": {
                "template_type": "button",
                "text": f"{sources.heading}:",
                "buttons": [
                    {
                        "type": "web_url",
                        "url": link.url,
                        "title": button_title(link, BUTTON_TITLE_MAX),
                    }
                    for link in sources.links[:TEMPLATE_BUTTONS]
                ],
            },
        }
    }
