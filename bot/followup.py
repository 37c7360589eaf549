"""Follow-up questions: "còn ngành CNTT thì sao?" after "Học phí ngành KHMT năm 2026?".

The answerer matches one standalone question, so a follow-up is rewritten first. With an LLM the
model rewrites it from the conversation; without one (or when the model fails) a rule carries
the previous question over: the values the follow-up names (a major, a year, a programme...,
found with the near-miss guard's vocabulary) replace those of the same kind in the previous
question, or are added to it.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence

from bot.errors import TuvanError
from bot.llm import LlmClient
from retrieval.guard import NearMissGuard
from retrieval.text import fold

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


def looks_like_follow_up(question: str) -> bool:
    folded = re.sub(r"[?!.…,]+", " ", fold(question)).strip()
    if not folded or len(folded.split()) > MAX_FOLLOW_UP_WORDS:
        return False
    padded = f" {folded} "
    return any(padded.startswith(" " + m) for m in _STARTS) or any(
        padded.rstrip().endswith(m) for m in _ENDS
    )


def carry_over(question: str, previous: str, guard: NearMissGuard) -> str | None:
    """The previous question with the follow-up's values put in; None if there is nothing to
    carry (not a follow-up, or it names nothing the vocabulary knows)."""
    if not looks_like_follow_up(question):
        return None
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
) -> str:
    """The question to answer: ``question`` itself, or its rewrite when it follows up on
    ``previous`` (the user's earlier questions, oldest first)."""
    if not previous:
        return question
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
        carried = carry_over(question, previous[-1], guard)
        if carried:
            return carried
    return question
