"""The 👍/👎 buttons under the bot's answers, as every channel spells them: the payload a
button carries back (``vote_payload``, read by ``read_vote_payload``) and the buttons' labels.

A payload names the answer by its row id in ``messages`` and the vote's direction, e.g.
``tuvan-vote:1234:up``: at most 35 bytes, within Telegram's 64-byte ``callback_data`` and
Messenger's 1000-character quick-reply payload. It proves nothing by itself: the store checks
that the answer is the bot's, in the voter's own conversation
(``bot.conversations.feedback``), so a typed or forged payload changes no one else's vote.
"""

from __future__ import annotations

import re
from typing import Final

UP: Final = 1
DOWN: Final = -1

_PREFIX = "tuvan-vote"
_PAYLOAD = re.compile(r"tuvan-vote:([1-9][0-9]{0,18}):(up|down)", re.ASCII)
_BIGINT_MAX = 2**63 - 1

# Labels of the buttons. The web chat and Telegram show the thumbs alone; Messenger's quick
# replies and Zalo's buttons, which read as the student's own words, say a little more.
THUMBS: Final = {UP: "👍", DOWN: "👎"}
LABELS: Final = {UP: "👍 Hữu ích", DOWN: "👎 Chưa đúng ý"}
# What Telegram shows for a moment once a vote is taken (answerCallbackQuery's text).
THANKS: Final = "Cảm ơn bạn đã góp ý!"
NOT_TAKEN: Final = "Không ghi nhận được góp ý cho tin nhắn này."


def vote_payload(answer_id: int, value: int) -> str:
    """The payload of the button voting ``value`` (``UP`` or ``DOWN``) on ``answer_id``."""
    if value not in (UP, DOWN):
        raise ValueError("a vote is 1 (👍) or -1 (👎)")
    return f"{_PREFIX}:{answer_id}:{'up' if value == UP else 'down'}"


def read_vote_payload(payload: str) -> tuple[int, int] | None:
    """``(answer_id, value)`` if ``payload`` is one of ours (surrounding spaces aside), else
    None: any other text stays what it was (a question, a postback)."""
    match = _PAYLOAD.fullmatch(payload.strip())
    if match is None:
        return None
    answer_id = int(match[1])
    if answer_id > _BIGINT_MAX:
        return None
    return answer_id, UP if match[2] == "up" else DOWN
