"""The "Cần xem lại" queue: the bot's answers of a period that staff should look at again.

An answer is in the queue for one or more of these signals:

- ``disliked``: the student marked it 👎 (``answer_feedback``, value -1: the latest vote wins,
  so a 👍 alone, or a 👎 taken back, puts nothing here);
- ``rephrased``: the student's next question in the conversation came at most 60 s after the
  answer and asks the same again (admin.rephrasing decides, in Python, on the pair SQL finds);
- ``unsure``: an answer from the FAQ or the documents whose stored confidence (the scorer's
  probability that it is right, admin.confidence) is below the line staff set
  (``TUVAN_ADMIN__REVIEW_BELOW``); a reply without a confidence is never unsure;
- ``fallback``: the fallback tier answered, i.e. neither an FAQ entry nor a passage did. Small
  talk (thanks, greetings, a request for a person) and non-questions also get the fallback
  tier; they are left out by the reasons bot.answer stores with them (``SMALL_TALK_REASONS``).

An answer with no signal is not here, however close its similarity was to a threshold: that
heuristic listed correct answers and missed the confidently wrong ones; the scorer's confidence,
fitted on whether answers were right, replaces it.

An answer staff marked "đã xem" (``settled_answers``) leaves the queue; a 👎 cast after that
brings it back. Everything is read in one query driven by the period's replies
(``ix_messages_created_at``), each joined to its question by primary key and to the next
question of its conversation by ``ix_messages_conversation_id_id``; the confidence is read from
the reply's row itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from sqlalchemy import text
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from admin import audit
from admin.confidence import REVIEW_BELOW, SCORED_TIERS, confidence_sql
from admin.period import Period
from admin.rephrasing import WINDOW_S, means_the_same
from bot.core.clock import utcnow
from bot.db.models import SettledAnswer
from retrieval.text.terms import TextProcessor

Signal = Literal["disliked", "rephrased", "unsure", "fallback"]
SIGNALS: tuple[Signal, ...] = ("disliked", "rephrased", "unsure", "fallback")
MAX_ITEMS = 2000  # the newest candidates of the period; grouping embeds each new phrasing once
MAX_SETTLE = 500  # answers one "đã xem" of a whole group may settle

# What bot.answer.query_plan.small_talk_answer and bot.answer.tiers.not_a_question store as
# the reason of a fallback that was no failure (tests/admin/test_recheck.py answers "cảm ơn"
# with the real answerer to hold these to what it writes).
SMALL_TALK_REASONS = ("no search needed:%", "empty or not a question%")

_ITEMS = """
    WITH r AS (
        SELECT DISTINCT ON (m.reply_to_id)
               m.id, m.reply_to_id, m.tier, m.created_at,
               coalesce(m.details ->> 'reason', '') AS reason,
               {confidence} AS confidence
        FROM messages m
        WHERE m.direction = 'out' AND m.author = 'bot' AND m.reply_to_id IS NOT NULL
          AND {answers}
        ORDER BY m.reply_to_id, m.id
    ), found AS (
        SELECT r.id, r.tier, r.created_at AS answered_at,
               (r.tier = 'fallback' AND r.reason NOT LIKE :small_talk_1
                AND r.reason NOT LIKE :small_talk_2) AS fallback,
               (r.tier = ANY(:scored) AND r.confidence < :review_below) IS TRUE AS unsure,
               r.confidence,
               q.id AS question_id, q.text AS asked, q.question AS standalone,
               q.created_at AS at, q.channel, q.conversation_id,
               f.updated_at AS voted_at, nxt.text AS next_text, nxt.created_at AS next_at,
               s.settled_by, s.settled_at
        FROM r
        JOIN messages q ON q.id = r.reply_to_id
        LEFT JOIN answer_feedback f ON f.message_id = r.id AND f.value = -1
        LEFT JOIN LATERAL (
            SELECT n.text, n.created_at
            FROM messages n
            WHERE n.conversation_id = q.conversation_id AND n.id > q.id
              AND n.direction = 'in' AND n.author = 'user' AND n.kind = 'text'
            ORDER BY n.id
            LIMIT 1
        ) AS nxt ON nxt.created_at <= r.created_at + make_interval(secs => :window)
        LEFT JOIN settled_answers s ON s.message_id = r.id
        WHERE q.direction = 'in' AND q.kind = 'text' AND {questions}
    )
    SELECT * FROM found {having}
"""

_PERIOD_ITEMS = text(
    _ITEMS.format(
        confidence=confidence_sql("m"),
        answers="m.created_at >= :since",
        questions="q.created_at >= :since AND q.created_at < :until",
        having="""WHERE (fallback OR unsure OR voted_at IS NOT NULL OR next_text IS NOT NULL)
                    AND (settled_at IS NULL OR voted_at > settled_at)
                  ORDER BY at DESC, id DESC LIMIT :limit""",
    )
)
_ONE_ITEM = text(
    _ITEMS.format(
        confidence=confidence_sql("m"), answers="m.id = :message_id", questions="TRUE", having=""
    )
)


@dataclass(frozen=True)
class RecheckItem:
    """One answer of the queue (``id`` is the bot's outbound message) and why it is there."""

    id: int
    question_id: int
    asked: str  # what the student wrote
    standalone: str | None  # a follow-up as a question of its own, when it was rewritten
    at: datetime  # when the question came
    answered_at: datetime
    channel: str
    conversation_id: int
    tier: str | None
    signals: tuple[Signal, ...]
    confidence: float | None = None  # the scorer's, when the reply carries one
    voted_at: datetime | None = None  # of the 👎
    rephrased_as: str | None = None  # the next question, when it asked the same again
    rephrased_after_s: float | None = None  # seconds from the answer to it
    settled_by: str | None = None
    settled_at: datetime | None = None

    @property
    def question(self) -> str:
        """The question as grouped and offered to the FAQ: the standalone form first."""
        return self.standalone or self.asked

    @property
    def settled(self) -> bool:
        return self.settled_at is not None and (
            self.voted_at is None or self.voted_at <= self.settled_at
        )


def _params(review_below: float) -> dict[str, Any]:
    return {
        "small_talk_1": SMALL_TALK_REASONS[0],
        "small_talk_2": SMALL_TALK_REASONS[1],
        "window": WINDOW_S,
        "scored": list(SCORED_TIERS),
        "review_below": review_below,
    }


def _item(row: Any, processor: TextProcessor) -> RecheckItem:
    rephrased = row.next_text is not None and means_the_same(processor, row.asked, row.next_text)
    signals: list[Signal] = []
    if row.voted_at is not None:
        signals.append("disliked")
    if rephrased:
        signals.append("rephrased")
    if row.unsure:
        signals.append("unsure")
    if row.fallback:
        signals.append("fallback")
    return RecheckItem(
        id=row.id,
        question_id=row.question_id,
        asked=row.asked,
        standalone=row.standalone if row.standalone and row.standalone != row.asked else None,
        at=row.at,
        answered_at=row.answered_at,
        channel=row.channel,
        conversation_id=row.conversation_id,
        tier=row.tier,
        signals=tuple(signals),
        confidence=row.confidence,
        voted_at=row.voted_at,
        rephrased_as=row.next_text if rephrased else None,
        rephrased_after_s=(
            max(0.0, (row.next_at - row.answered_at).total_seconds()) if rephrased else None
        ),
        settled_by=row.settled_by,
        settled_at=row.settled_at,
    )


async def queue_items(
    session: AsyncSession,
    period: Period,
    processor: TextProcessor,
    limit: int = MAX_ITEMS,
    *,
    review_below: float = REVIEW_BELOW,
) -> tuple[list[RecheckItem], bool]:
    """The period's answers with a signal, not settled, newest question first; and whether
    the candidates reached ``limit`` (older ones were not considered). ``review_below``: the
    confidence under which an answer is unsure (``TUVAN_ADMIN__REVIEW_BELOW``; 0: never)."""
    rows = (
        await session.execute(
            _PERIOD_ITEMS,
            {
                **_params(review_below),
                "since": period.since,
                "until": period.until,
                "limit": limit,
            },
        )
    ).all()
    items = [_item(r, processor) for r in rows]
    return [i for i in items if i.signals], len(rows) >= limit


async def queue_item(
    session: AsyncSession,
    message_id: int,
    processor: TextProcessor,
    *,
    review_below: float = REVIEW_BELOW,
) -> RecheckItem | None:
    """One bot answer with its signals (none, when nothing put it in the queue)."""
    params = {**_params(review_below), "message_id": message_id}
    row = (await session.execute(_ONE_ITEM, params)).first()
    return None if row is None else _item(row, processor)


async def settle(session: AsyncSession, message_ids: list[int], actor: str) -> list[int]:
    """Mark bot answers "đã xem" (again: the newest settling counts), each audited; the ids
    settled (ids of anything else are ignored)."""
    ids = sorted(set(message_ids))[:MAX_SETTLE]
    if not ids:
        return []
    now = utcnow()
    answers = text(
        "SELECT id FROM messages WHERE id = ANY(:ids) AND direction = 'out' AND author = 'bot'"
    )
    found = [int(i) for i in (await session.scalars(answers, {"ids": ids})).all()]
    if not found:
        return []
    statement = insert(SettledAnswer).values(
        [{"message_id": i, "settled_by": actor, "settled_at": now} for i in found]
    )
    await session.execute(
        statement.on_conflict_do_update(
            index_elements=[SettledAnswer.message_id],
            set_={"settled_by": statement.excluded.settled_by, "settled_at": now},
        )
    )
    for message_id in found:
        await audit.record(session, actor, "settle", "answer", message_id, None, {"settled": True})
    return found
