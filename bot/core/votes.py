"""The 👍/👎 buttons under the bot's answers, as every channel spells them: the payload a
button carries back (``vote_payload``, read by ``read_vote_payload``) and the buttons' labels.

A payload names the answer by its row id in ``messages``, the vote's direction and the
language the answer was given in, e.g. ``tuvan-vote:1234:up:en``: at most 38 bytes, within
Telegram's 64-byte ``callback_data`` and Messenger's 1000-character quick-reply payload. The
language comes back with the tap, so the vote is thanked in the student's language without a
look-up (a payload of the buttons sent before it was added has none: Vietnamese). It proves
nothing by itself: the store checks that the answer is the bot's, in the voter's own
conversation (``bot.conversations.feedback``), so a typed or forged payload changes no one
else's vote.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final

from bot.core.messages import Vote
from bot.core.types import Language

UP: Final = 1
DOWN: Final = -1

_PREFIX = "tuvan-vote"
_PAYLOAD = re.compile(r"tuvan-vote:([1-9][0-9]{0,18}):(up|down)(?::(vi|en))?", re.ASCII)
_BIGINT_MAX = 2**63 - 1

# Labels of the buttons. The web chat and Telegram show the thumbs alone; Messenger's quick
# replies and Zalo's buttons, which read as the student's own words, say a little more, in the
# answer's language (a quick reply's title: at most 20 characters).
THUMBS: Final = {UP: "👍", DOWN: "👎"}
LABELS: Final[Mapping[Language, Mapping[int, str]]] = {
    "vi": {UP: "👍 Hữu ích", DOWN: "👎 Chưa đúng ý"},
    "en": {UP: "👍 Helpful", DOWN: "👎 Not helpful"},
}
# What the student is told once a vote is taken: Telegram's toast (answerCallbackQuery's text,
# at most 200 characters), the message Messenger and Zalo get for a first vote on an answer,
# the web chat's note under the buttons (the page holds its own copy).
THANKS: Final[Mapping[Language, str]] = {
    "vi": "Cảm ơn bạn đã góp ý!",
    "en": "Thanks for your feedback!",
}
NOT_TAKEN: Final[Mapping[Language, str]] = {
    "vi": "Không ghi nhận được góp ý cho tin nhắn này.",
    "en": "This feedback could not be recorded for this message.",
}


def vote_payload(answer_id: int, value: int, language: Language = "vi") -> str:
    """The payload of the button voting ``value`` (``UP`` or ``DOWN``) on ``answer_id``, an
    answer given in ``language``."""
    if value not in (UP, DOWN):
        raise ValueError("a vote is 1 (👍) or -1 (👎)")
    return f"{_PREFIX}:{answer_id}:{'up' if value == UP else 'down'}:{language}"


def read_vote_payload(payload: str) -> tuple[int, int] | None:
    """``(answer_id, value)`` if ``payload`` is one of ours (surrounding spaces aside), else
    None: any other text stays what it was (a question, a postback)."""
    vote = read_vote(payload)
    return None if vote is None else (vote.answer_id, vote.value)


def read_vote(payload: str, ack_id: str | None = None) -> Vote | None:
    """The vote ``payload`` casts (``ack_id``: what the platform wants acknowledged), or None
    if it is not one of ours."""
    match = _PAYLOAD.fullmatch(payload.strip())
    if match is None:
        return None
    answer_id = int(match[1])
    if answer_id > _BIGINT_MAX:
        return None
    language: Language = "en" if match[3] == "en" else "vi"
    return Vote(answer_id, UP if match[2] == "up" else DOWN, ack_id=ack_id, language=language)
