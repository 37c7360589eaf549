"""What crosses between the platform adapters and the rest of tuvan: plain values, no I/O.

An adapter turns a platform's raw webhook request into ``InboundMessage`` values and sends an
``OutboundReply``; the conversation store and the worker never see a platform's JSON shapes.

Errors an adapter raises::

    ChannelError
    ├── WebhookAuthError     the request is not from the platform (forged, unsigned) → 403
    ├── WebhookPayloadError  the body is not what the platform sends (bad JSON, shape) → 400;
    │                        one bad event in a good body is a ``SkippedEvent`` instead
    └── SendError            a send failed; ``retryable`` says whether to try again, and
                             ``retry_after`` how long the platform asked us to wait
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from bot.core.types import Channel, Language

# What a student sent, as far as tuvan cares:
#   text         a question to answer
#   command      /start, /help (Telegram), a "get started" postback: greet
#   follow       the user followed / opened the chat: greet
#   unsupported  a sticker, image, file, voice...: say that only text is understood
#   staff        a person replied from the platform's own inbox (Messenger echo from another app)
#   event        anything else worth keeping (delivery, read, unfollow): stored, not answered
#   vote         a 👍/👎 on one of the bot's answers (``InboundMessage.vote``): recorded as
#                feedback, never answered
InboundKind = Literal["text", "command", "follow", "unsupported", "staff", "event", "vote"]


@dataclass(frozen=True)
class RawRequest:
    """A webhook request exactly as it arrived: signatures are over the body's bytes."""

    method: str
    headers: Mapping[str, str]  # case-insensitive lookups: pass a CIMultiDict or multidict proxy
    query: Mapping[str, str]
    body: bytes


@dataclass(frozen=True)
class Vote:
    """A student's 👍 (``value`` 1) or 👎 (-1) on the answer stored as ``answer_id`` (the id a
    vote button carries, ``bot.core.votes``). ``ack_id``: what the platform needs to hear back
    (Telegram's callback query id), if anything: the platform then shows the thanks itself;
    without one, the first vote on an answer is thanked by a message. ``language``: the
    answer's, which the button carries back; the thanks speak it."""

    answer_id: int
    value: int
    ack_id: str | None = None
    language: Language = "vi"


@dataclass(frozen=True)
class InboundMessage:
    channel: Channel
    event_id: str  # the platform's id of this event; unique per channel (the dedup key)
    external_user_id: str  # who to answer: Telegram chat id, Messenger PSID, Zalo user id
    kind: InboundKind
    text: str = ""
    sent_at: datetime | None = None  # the platform's timestamp, UTC
    user_name: str | None = None
    locale: str | None = None
    raw: Mapping[str, Any] = field(default_factory=dict)  # this event's JSON, stored as JSONB
    vote: Vote | None = None  # kind "vote": which answer, which way


@dataclass(frozen=True)
class SkippedEvent:
    """An event of an authentic body that could not be read (no sender, not an object...):
    left out of the batch so that the rest is stored, and kept in quarantine by the caller.
    ``where`` names it in the body ("entry[0].messaging[1]"), ``reason`` says what is wrong."""

    where: str
    reason: str


@dataclass(frozen=True)
class InboundBatch:
    """What one webhook body holds: the events read, and those that could not be."""

    messages: list[InboundMessage] = field(default_factory=list)
    skipped: list[SkippedEvent] = field(default_factory=list)


@dataclass(frozen=True)
class ReplyCitation:
    n: int
    title: str
    url: str | None


@dataclass(frozen=True)
class OutboundReply:
    """One reply to one user. Adapters split ``text`` to their platform's limit."""

    external_user_id: str
    text: str
    citations: tuple[ReplyCitation, ...] = ()
    quick_replies: tuple[str, ...] = ()  # related FAQ questions the user may tap
    first_part: int = 0  # parts already delivered by an earlier attempt: send from this one
    # A person's reply sent past the platform's standard window (Messenger's HUMAN_AGENT tag).
    human_agent: bool = False
    # The id of the bot's answer this reply is: the platform shows 👍/👎 buttons naming it
    # (``bot.core.votes``). None for greetings and staff replies, which get no buttons.
    feedback_id: int | None = None
    language: Language = "vi"  # the answer's: the buttons' labels speak it
    # Called with the number of parts delivered after each part the platform accepted (the
    # worker records it); an exception from it stops the send.
    on_part_sent: Callable[[int], Awaitable[None]] | None = field(default=None, compare=False)


@dataclass(frozen=True)
class SendResult:
    external_ids: tuple[str, ...] = ()  # the platform's ids of the messages sent (one per part)
    parts: int = 1


@dataclass(frozen=True)
class Capabilities:
    """What a channel allows, asked of its adapter instead of naming the platform.

    ``window_hours``: replies only this long after the user's last message (None: always).
    ``staff_window_hours``: how long a person may still write (Messenger's HUMAN_AGENT tag);
    0: the standard window holds for staff too. ``quick_replies``: how many suggested questions
    a reply may carry as buttons. ``typing``: a typing indicator can be shown. ``delivers``:
    False when the client reads replies from the store itself (the web chat).
    ``read_receipts``: the adapter's ``mark_seen`` shows the user the question was read
    (Messenger). ``text_limit``: the characters of one message; a longer reply goes in parts
    (None: no limit). ``source_buttons``: how many sources a reply shows as link buttons
    instead of lines of text (0: the source list stays in the text). ``staff_pause_minutes``:
    how long the bot stays quiet in a thread after a person replied there from the platform's
    own inbox (Messenger's Page inbox; 0: never). ``suggestions``: how many of the
    branding's suggested questions a greeting (/start) may carry as buttons. Every adapter sends
    plain text: none renders markup from the answer (Telegram's is escaped).
    """

    window_hours: int | None = None
    staff_window_hours: int = 0
    quick_replies: int = 0
    typing: bool = True
    delivers: bool = True
    read_receipts: bool = False
    text_limit: int | None = None
    source_buttons: int = 0
    staff_pause_minutes: int = 0
    suggestions: int = 0
