"""Follow-up questions: "còn ngành CNTT thì sao?" after "Học phí ngành KHMT năm 2026?".

The answerer matches one standalone question, so a follow-up is rewritten first. With an LLM the
model rewrites it from the conversation; without one (or when the model fails) rules carry the
previous question over (3/6), with the near-miss guard's vocabulary:

- a follow-up marked as one ("còn …", "… thì sao"): the values it names (a major, a year, a
  method...) replace those of the same kind in the previous question, or are added to it;
- a reference ("ngành đó", "trường này"): replaced by the value the previous question named;
- a short question that leaves out whom it is about ("học phí bao nhiêu" after a question on
  KHMT): the previous question's values of the kinds it names none of are added (not its year:
  "học phí" after "điểm chuẩn 2025" asks this year's fee);
- a short question the vocabulary reads nothing in ("thứ 7 có làm việc không" after "sđt phòng
  tuyển sinh"): what the previous question was about goes in front ("phòng tuyển sinh: …").
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence

from bot.answer.small_talk import small_talk
from bot.core.errors import TuvanError
from bot.llm.client import LlmClient
from retrieval.guard.checks import NearMissGuard
from retrieval.text.folding import fold
from retrieval.text.terms import TextProcessor

log = logging.getLogger(__name__)

# Folded, so "còn"/"con" and "thì sao"/"thi sao" are one marker each.
_STARTS = ("con ", "vay con ", "the con ", "what about ", "how about ", "and ")
_ENDS = (" thi sao", " thi the nao", " thi nhu the nao", " the nao", " what about it")
MAX_FOLLOW_UP_WORDS = 10

REWRITE_PROMPT = (
    "You rewrite a student's last message to a university admissions chatbot into one "
    "standalone question, using the earlier questions for what it leaves out. Keep the "
    "student's language. Reply with the question only. If the last message already stands "
    "alone, repeat it unchanged."
)


# "ngành đó", "trường này": a reference to the value of that category in the previous question.
_REFERENCE = re.compile(
    r"\b(?P<noun>nganh|truong|chuong trinh|phuong thuc|co so|he|khoa|that major|this major)"
    r"(?: hoc)? (?P<det>do|nay|ay|kia|tren|vua roi|vua hoi)\b"
)
_REFERRED = {
    "nganh": "major",
    "khoa": "major",
    "that major": "major",
    "this major": "major",
    "truong": "institution",
    "chuong trinh": "programme",
    "he": "programme",
    "phuong thuc": "method",
    "co so": "campus",
}
MAX_ELLIPTICAL_WORDS = 10
# Categories a question may name and still be about the previous one's topic ("thứ 7").
_NOT_A_TOPIC = frozenset({"number", "duration", "year"})
# Carried into a short question that names none (the year is not: see the module's docstring).
_CARRIED = ("major", "programme", "method", "campus", "institution", "major_code", "round")


def looks_like_follow_up(question: str) -> bool:
    folded = re.sub(r"[?!.…,]+", " ", fold(question)).strip()
    if not folded or len(folded.split()) > MAX_FOLLOW_UP_WORDS:
        return False
    padded = f" {folded} "
    return any(padded.startswith(" " + m) for m in _STARTS) or any(
        padded.rstrip().endswith(m) for m in _ENDS
    )


def carry_over(
    question: str,
    previous: str | Sequence[str],
    guard: NearMissGuard,
    processor: TextProcessor | None = None,
) -> str | None:
    """The follow-up made standalone with the previous questions (oldest first; the rules in
    the module's docstring); None if there is nothing to carry."""
    turns = [previous] if isinstance(previous, str) else list(previous)
    if not turns:
        return None
    last = turns[-1]
    if looks_like_follow_up(question):
        replaced = _replace_values(question, last, guard)
        if replaced:
            return replaced
    if len(question.split()) > MAX_ELLIPTICAL_WORDS:
        return None
    return _resolve_reference(question, turns, guard) or _add_missing(
        question, turns, guard, processor
    )


def _named(turns: Sequence[str], guard: NearMissGuard) -> dict[str, str]:
    """The words naming a value of each entity category, the latest turn that names one
    first."""
    out: dict[str, str] = {}
    for text in reversed(turns):
        words = text.split()
        entities = guard.entities(text)
        for start, end, category in guard.entity_spans(text):
            if category in entities:
                out.setdefault(category, " ".join(words[start:end]).strip("?!.,"))
    return out


def _resolve_reference(question: str, turns: Sequence[str], guard: NearMissGuard) -> str | None:
    folded_words = [fold(w) for w in question.split()]
    folded = " ".join(folded_words)
    match = _REFERENCE.search(folded)
    if match is None:
        return None
    value = _named(turns, guard).get(_REFERRED[match.group("noun")])
    if value is None:
        return None
    # Word indexes of the match in the question (folding keeps one word per word).
    first = len(folded[: match.start()].split())
    last = first + len(match.group(0).split())
    words = question.split()
    noun = " ".join(words[first : first + len(match.group("noun").split())])
    return " ".join([*words[:first], noun, value, *words[last:]])


def _add_missing(
    question: str, turns: Sequence[str], guard: NearMissGuard, processor: TextProcessor | None
) -> str | None:
    body = question.rstrip("?!. ")
    end = "?" if question.rstrip().endswith("?") else ""
    if (
        processor is not None
        and not set(guard.facets(processor.expand_query(question))) - _NOT_A_TOPIC
    ):
        # Nothing the vocabulary knows in the question: what the last question was about, in
        # front ("phòng tuyển sinh: thứ 7 có làm việc không"; a question split in parts
        # carries it in its first one).
        topic = _topic(turns[-1], guard, processor)
        if topic and fold(topic) not in fold(question):
            return f"{topic}: {question}"
    mine = guard.entities(question)
    named = _named(turns, guard)
    carried = [named[c] for c in _CARRIED if c in named and c not in mine]
    if carried:
        return f"{body} {' '.join(dict.fromkeys(carried))}{end}"
    return None


def _topic(text: str, guard: NearMissGuard, processor: TextProcessor) -> str:
    """What ``text`` is about: its words less those asking for a kind of value ("sđt", "bao
    nhiêu tiền") and less the question words and particles at its ends ("là gì ạ")."""
    words = [w.strip("?!.,") for w in text.split() if not guard.asked_kinds(w)]
    words = [w for w in words if w]
    while words and not processor.query_terms(words[0]):
        words.pop(0)
    while words and not processor.query_terms(words[-1]):
        words.pop()
    return " ".join(words)


def _replace_values(question: str, previous: str, guard: NearMissGuard) -> str | None:
    """Marked follow-ups: the previous question with the follow-up's values put in."""
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


async def standalone_question(
    question: str,
    previous: Sequence[str],
    guard: NearMissGuard | None,
    llm: LlmClient | None,
    processor: TextProcessor | None = None,
) -> str:
    """The question to answer: ``question`` itself, or its rewrite when it follows up on
    ``previous`` (the user's earlier questions, oldest first)."""
    if not previous or small_talk(question):
        return question  # "cảm ơn ạ" after a question is a thank-you, not a follow-up
    if llm is not None and len(question.split()) <= 2 * MAX_FOLLOW_UP_WORDS:
        turns = "\n".join(f"- {q}" for q in previous[-3:])
        try:
            reply = await llm.complete(
                [
                    {"role": "system", "content": REWRITE_PROMPT},
                    {
                        "role": "user",
                        "content": f"Earlier questions:\n{turns}\n\nLast message: {question}",
                    },
                ]
            )
        except TuvanError as exc:
            log.warning("follow-up rewrite by the LLM failed, using the rule: %s", exc)
        else:
            rewritten = reply.strip().strip('"').strip()
            if rewritten and "\n" not in rewritten and len(rewritten) < 4 * len(question) + 200:
                return rewritten
    if guard is not None:
        carried = carry_over(question, previous, guard, processor)
        if carried:
            return carried
    return question
