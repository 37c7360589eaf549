"""The conversation step (1/4): a message is read alone first, and takes from the conversation
only what it lacks.

Students ask several questions in a row; most stand alone ("hp chương trình clc bn 1 năm vậy
ad" after a question about AI asks about CLC, not about AI). Only a message that, alone, names
no attribute or no subject to answer about (bot.answer.standalone) looks back, and then takes
only what it lacks:

- a marked follow-up ("còn khmt thì sao", "… thì sao") names a subject and asks nothing: the
  previous question with the new value put in its place (``why`` "follow_up");
- a reference ("ngành đó học phí bao nhiêu"): the value the previous question named
  (``why`` "reference"); "bên đó", "chỗ đó" point to its subject of a category the message
  does not name itself, or, when it names none, to its topic;
- an attribute asked of nobody ("học phí bao nhiêu", "thế điểm chuẩn 2025 xét thpt là bn"):
  the previous question's subject — its major, programme, school — added (``why``
  "no_subject"); a message with words of its own beside the attribute ("hạn xác nhận nhập học
  là ngày mấy") has its own subject and stands alone;
- nothing the vocabulary reads ("thứ 7 có làm việc không" after "sđt phòng tuyển sinh"): the
  previous question's topic in front (``why`` "no_subject");
- a subject and no attribute ("khmt thì sao" without "còn", "ngành attt?"): the previous
  question with the new subject (``why`` "no_attribute").

Whether a message that lacks something is a follow-up or a question of its own ("năm nhất thì
học ở cơ sở nào") is the context scorer's decision when one is fitted
(retrieval/data/decisions.json, "context"), over what the message names and holds; without one,
the rule above. Context never crosses small talk ("cảm ơn ạ", or an opener: "ad ơi", "cho e
hỏi" gives the question after it nothing to take), a pause longer than
``TUVAN_ANSWER__CONTEXT_PAUSE_MINUTES``, or a question that stood alone before the last one. The
message is read once as it comes in (bot.answer.read.read_message): small talk is read
alone, and the rules read a question without the opener in front of it ("ad ơi còn khmt thì
sao" follows up like "còn khmt thì sao"). The reading is stored with the answer and shown to
staff (``Reading.to_json``). With an LLM, the model writes the standalone form, but only for a
message the rule says lacks something.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Literal

from bot.answer.read import Read, read_asked, read_message
from bot.answer.standalone import (
    NOT_A_TOPIC,
    SUBJECTS,
    Alone,
    asks_for_a_subject,
    asks_in_own_words,
    looks_like_follow_up,
    read_alone,
    reference_in,
    stands_alone,
    topic_of,
)
from bot.core.errors import TuvanError
from bot.llm.client import LlmClient
from retrieval.decisions.store import Decision
from retrieval.guard.checks import NearMissGuard
from retrieval.text.folding import fold
from retrieval.text.pack import load_pack
from retrieval.text.terms import TextProcessor

log = logging.getLogger(__name__)

REWRITE_PROMPT = (
    "You rewrite a student's last message to a university admissions chatbot into one "
    "standalone question, taking from the earlier question only what the last message leaves "
    "out (whom or what it is about, or what it asks). Keep the student's language. Reply with "
    "the question only."
)
# What a follow-up may take from the previous question, from the language pack (follow_up).
_CARRIED = load_pack().follow_up.carried

Why = Literal["follow_up", "reference", "no_subject", "no_attribute"]
# Why the earlier questions were not used: small talk between, a long pause, nothing before, or
# for a message naming nothing the vocabulary reads: (``answered_alone``) alone it is answered,
# or (``new_topic``) the earlier topic put in front found nothing holding half of its own words
# (bot.answer.conversation).
Stopped = Literal["small_talk", "pause", "none_before", "new_topic", "answered_alone"]


@dataclass(frozen=True)
class Turn:
    """An earlier question of the conversation, as it was answered (its standalone form)."""

    text: str
    at: datetime | None = None
    small_talk: bool = False  # it was a greeting, an opener, a thank-you…: context stops there


@dataclass(frozen=True)
class Taken:
    slot: str  # the guard's category ("major"), or "topic" for words put in front
    label: str  # in staff's words ("ngành")
    words: str
    from_text: str


@dataclass(frozen=True)
class Reading:
    """How a message was read: alone, or with what it took from the conversation."""

    mode: Literal["alone", "context"]
    asked: str  # the text answered
    taken: tuple[Taken, ...] = ()
    why: Why | None = None
    stopped: Stopped | None = None
    probability: float | None = None  # the context scorer's, when it decided
    features: tuple[float, ...] = field(default=(), compare=False)
    # The message read alone, as it came in: its small talk, or its question less an opener.
    message: Read | None = field(default=None, compare=False)

    def answering(self) -> Read:
        """What the answerer is given: the message's own reading when it was read alone (its
        small talk is answered as such), else the question written with its context."""
        if self.mode == "alone" and self.message is not None:
            return self.message
        return read_asked(self.asked)

    def to_json(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "asked": self.asked,
            "taken": [
                {"slot": t.slot, "label": t.label, "words": t.words, "from_text": t.from_text}
                for t in self.taken
            ],
            "why": self.why,
            "stopped": self.stopped,
            "probability": self.probability,
        }


def alone(message: Read, stopped: Stopped | None = None) -> Reading:
    return Reading("alone", message.question, stopped=stopped, message=message)


def takes_a_topic(reading: Reading) -> bool:
    """Read with the earlier question's whole topic put in front (the message named nothing the
    vocabulary reads): the reading whose answer must still be about the message's own words."""
    return reading.mode == "context" and any(t.slot == "topic" for t in reading.taken)


# -- the step -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ContextRules:
    guard: NearMissGuard
    processor: TextProcessor
    decision: Decision | None = None  # the fitted context scorer
    pause_s: float = 30 * 60.0


def read_in_context(
    text: str | Read, turns: Sequence[Turn], rules: ContextRules, now: datetime | None = None
) -> Reading:
    """The message (its text, or as read when it came in) read alone, or with what it lacks
    from the last question (the module docstring's rules)."""
    message = text if isinstance(text, Read) else read_message(text)
    if not turns:
        return alone(message, "none_before")
    last = turns[-1]
    if message.kind is not None:
        return alone(message)
    if last.small_talk:
        return alone(message, "small_talk")
    if now is not None and last.at is not None and (now - last.at).total_seconds() > rules.pause_s:
        return alone(message, "pause")
    text = message.question
    guard, processor = rules.guard, rules.processor
    mine = read_alone(text, guard, processor)
    message = message.with_alone(mine)
    probability = None
    if rules.decision is not None and not mine.marked:
        probability = rules.decision.scorer.probability(mine.features)
        if probability < rules.decision.point(0.5).threshold:
            return Reading(
                "alone", text, probability=probability, features=mine.features, message=message
            )
    elif not mine.marked and stands_alone(mine):
        return alone(message)
    reading = _with_context(text, mine, last.text, guard, processor)
    if reading is None:
        return Reading(
            "alone", text, probability=probability, features=mine.features, message=message
        )
    return Reading(
        "context",
        reading[0],
        reading[2],
        reading[1],
        probability=probability,
        features=mine.features,
        message=message,
    )


def _with_context(
    text: str, mine: Alone, previous: str, guard: NearMissGuard, processor: TextProcessor
) -> tuple[str, Why, tuple[Taken, ...]] | None:
    """The message with what it lacks from ``previous``, why, and what was taken."""
    resolved = _resolve_reference(text, mine, previous, guard, processor)
    if resolved is not None:
        asked, taken = resolved
        taken = taken or _taken(mine, asked, previous, guard)
        # The major it lacks: "chương trình đó" after "điểm chuẩn CNTT clc" is CNTT's
        # programme (and so for the next question referring to it). Not the other way: "ngành
        # đó" after a question on CNTT's clc names the major, not its programme.
        named = guard.entities(asked)
        extra = [
            (c, w) for c, w in _carried(mine, previous, guard) if c not in named and c in _MAJOR
        ]
        if extra:
            asked = _with_words(asked, [w for _, w in extra])
            taken = (*taken, *(Taken(c, guard.label(c), w, previous) for c, w in extra))
        return asked, "reference", taken
    if (looks_like_follow_up(text) and not _asks_its_own(text, mine)) or (
        mine.subject and not mine.attribute
    ):
        replaced = _replace_values(text, previous, guard)
        if replaced is not None:
            why: Why = "follow_up" if looks_like_follow_up(text) else "no_attribute"
            return replaced, why, _taken(mine, replaced, previous, guard)
    if mine.subject or asks_for_a_subject(text):
        return None  # it names its own subject, or asks which one: never another's
    if not mine.attribute and not mine.qualifier:
        topic = topic_of(previous, guard, processor)
        if topic and fold(topic) not in fold(text):
            return f"{topic}: {text}", "no_subject", (Taken("topic", "chủ đề", topic, previous),)
        return None
    carried = _carried(mine, previous, guard)
    if not carried:
        return None
    # The same thing asked again of another method keeps its year ("còn xét dgnl thì điểm
    # chuẩn bao nhiêu" after "điểm chuẩn khmt 2025"); another thing asks this year's.
    year, asks = _named(previous, guard).get("year"), mine.typed.facets.get("attribute")
    theirs = guard.facets(previous).get("attribute", frozenset())
    if year and asks and asks <= theirs and "year" not in mine.typed.facets:
        carried.append(("year", year))
    asked = _with_words(text, [words for _, words in carried])
    return asked, "no_subject", tuple(Taken(c, guard.label(c), w, previous) for c, w in carried)


def _with_words(text: str, words: Sequence[str]) -> str:
    """``text`` with ``words`` put at its end, before its question mark."""
    body = text.rstrip("?!. ")
    end = "?" if text.rstrip().endswith("?") else ""
    return f"{body} {' '.join(words)}{end}"


_MAJOR = frozenset({"major", "major_code"})


def _asks_its_own(text: str, mine: Alone) -> bool:
    """A marked follow-up that names what it asks and asks it in words of its own ("còn lệ phí
    xét tuyển nộp lúc nào", not "còn học phí thì sao"): a question of its own, which takes only
    what it lacks (a subject), never the earlier question's other words."""
    return mine.attribute and asks_in_own_words(text)


def _named(text: str, guard: NearMissGuard) -> dict[str, str]:
    """The words naming a value of each entity category in ``text``."""
    words = text.split()
    entities = guard.entities(text)
    out: dict[str, str] = {}
    for start, end, category in guard.entity_spans(text):
        if category in entities:
            out.setdefault(category, " ".join(words[start:end]).strip("?!.,"))
    return out


def _carried(mine: Alone, previous: str, guard: NearMissGuard) -> list[tuple[str, str]]:
    named = _named(previous, guard)
    return [(c, named[c]) for c in _CARRIED if c in named and c not in mine.typed.entities]


def _taken(mine: Alone, asked: str, previous: str, guard: NearMissGuard) -> tuple[Taken, ...]:
    """What ``asked`` holds that the message (``mine``) does not, with the words ``previous``
    said it in."""
    named_here = mine.typed.facets
    theirs = guard.facets(asked)
    named = _named(previous, guard)
    out = []
    for category in theirs:
        if category in named_here or category in NOT_A_TOPIC - {"year"}:
            continue
        words = named.get(category) or ", ".join(sorted(theirs[category]))
        out.append(Taken(category, guard.label(category), words, previous))
    return tuple(out)


def _resolve_reference(
    question: str, mine: Alone, previous: str, guard: NearMissGuard, processor: TextProcessor
) -> tuple[str, tuple[Taken, ...]] | None:
    """The question with the value its reference points to put after the reference's noun
    ("ngành đó" → "ngành ktpm"), and, when that value is the previous question's topic ("chỗ
    đó" after the dorm's prices), what was taken."""
    folded = " ".join(fold(w) for w in question.split())
    found = reference_in(folded)
    if found is None:
        return None
    category, match, kept = found
    named = _named(previous, guard)
    taken: tuple[Taken, ...] = ()
    value = named.get(category)
    if category in NOT_A_TOPIC:
        # "với điểm đó": the one figure the previous question gave ("e thi đgnl được 850")
        figures = {
            previous[s.start : s.end] for s in guard.spans(previous) if s.category == category
        }
        value = figures.pop() if len(figures) == 1 else None
        if value is not None:
            taken = (Taken(category, guard.label(category), value, previous),)
    elif value is None:
        # "bên đó", or "hb đó" after "hb tài năng" (a kind of programme to the guard): the
        # previous subject of a category the message does not name itself ("sang bên đó học
        # có hb nào" names a scholarship; "bên đó" is the programme before).
        own = set(mine.typed.entities)
        value = next(
            (named[c] for c in (*_CARRIED, *SUBJECTS) if c in named and c not in own), None
        )
        if value is None and not mine.subject:
            value = topic_of(previous, guard, processor) or None
            if value is not None:
                taken = (Taken("topic", "chủ đề", value, previous),)
    if value is None:
        return None
    # Word indexes of the match in the question (folding keeps one word per word).
    first = len(folded[: match.start()].split())
    last = first + len(match.group(0).split())
    words = question.split()
    mark = words[last - 1][len(words[last - 1].rstrip("?!.,;")) :]  # "that program?" keeps "?"
    return " ".join([*words[: first + kept], value + mark, *words[last:]]), taken


def _replace_values(question: str, previous: str, guard: NearMissGuard) -> str | None:
    """The previous question with the follow-up's values put in."""
    new_words = question.split()
    new: dict[str, str] = {}
    for start, end, category in guard.entity_spans(question):
        new.setdefault(category, " ".join(new_words[start:end]).strip("?!.,"))
    if not new:
        return None
    words = previous.split()
    replace_at: dict[int, tuple[int, str]] = {}  # first word -> (end word, replacement)
    dropped: set[int] = set()
    seen: set[str] = set()
    for start, end, category in guard.entity_spans(previous):
        if category not in new:
            continue
        if category in seen:
            dropped.update(range(start, end))
        else:
            replace_at[start] = (end, new[category])
            seen.add(category)
    out: list[str] = []
    i = 0
    while i < len(words):
        if i in replace_at:
            end, text = replace_at[i]
            trail = re.search(r"[?!.,]+$", words[end - 1])
            out.append(text + (trail.group(0) if trail else ""))
            i = end
            continue
        if i not in dropped:
            out.append(words[i])
        i += 1
    rewritten = " ".join(out)
    missing = [text for category, text in new.items() if category not in seen]
    if missing:
        body = rewritten.rstrip("?!. ")
        end_mark = "?" if rewritten.rstrip().endswith("?") else ""
        rewritten = f"{body} {' '.join(missing)}{end_mark}"
    return rewritten


async def rewrite_with_llm(llm: LlmClient, reading: Reading, text: str, previous: str) -> Reading:
    """With an LLM, a message the rule read with context is written standalone by the model
    (the rule's reading is kept when the model fails or answers off the point)."""
    try:
        reply = await llm.complete(
            [
                {"role": "system", "content": REWRITE_PROMPT},
                {
                    "role": "user",
                    "content": f"Earlier question: {previous}\n\nLast message: {text}",
                },
            ]
        )
    except TuvanError as exc:
        log.warning("follow-up rewrite by the LLM failed, using the rule: %s", exc)
        return reading
    rewritten = reply.strip().strip('"').strip()
    if rewritten and "\n" not in rewritten and len(rewritten) < 4 * len(text) + 200:
        return replace(reading, asked=rewritten, stopped=None, features=())
    return reading
