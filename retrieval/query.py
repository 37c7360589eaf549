"""A question made ready for search: restored, expanded, keyword terms, and split into its parts.

Every consumer of a question (the answerer, the FAQ match, the evaluation, the admin's Try it)
goes through ``prepare_query``, so that a question is read the same way everywhere:

- marks put back when it was typed without them (retrieval.restore), for the dense embedder;
- abbreviations written out for the dense embedder ("cntt" → "Công nghệ Thông tin"); the keyword
  side folds everything anyway, so its terms come from the question as typed;
- a question that asks several things ("bao nhiêu chỉ tiêu, học phí ra sao và học ở đâu?") split
  into its parts, each searched on its own (retrieval.search.search_parts) so that every part's
  passage reaches the answer. Greetings and fillers ("Xin chào, cho em hỏi…", "ạ", "vậy ad") are
  not parts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np
from sqlalchemy.ext.asyncio import AsyncSession

from bot.core.settings import SearchSettings
from bot.core.types import SearchMode
from retrieval.restore.restorer import DiacriticRestorer
from retrieval.search.hits import Hit
from retrieval.search.hybrid import search_chunks, search_parts
from retrieval.search.rerank import Reranker
from retrieval.text.folding import fold
from retrieval.text.pack import VOCATIVES_SLOT, alternatives, load_pack
from retrieval.text.sentences import ends_with_abbreviation
from retrieval.text.terms import CLOSING_PARTICLES, TextProcessor, WrittenOut

MAX_PARTS = 4
# A part needs this many keyword terms of its own; a shorter piece stays with its neighbour.
MIN_PART_TERMS = 2

# Question words, folded, from the language pack (questions). A clause asks something of its
# own when it holds a question word that is one wherever it stands ("bao nhiêu", "khi nào"), or
# ends with one that is one only at the end of a clause ("... gì", "... nào", "... không"),
# particles such as "ạ", "vậy", "ad" left aside.
_WORDS = load_pack().questions
_ANYWHERE = re.compile(rf"\b{alternatives(_WORDS.anywhere)}\b")
_AT_END = re.compile(rf"\b{alternatives(_WORDS.at_end)}$")
# An English question opens with its verb: "Is there an application fee, and how much is …"
# (also what bot.answer.read takes for a part that asks).
OPENS_WITH_VERB = re.compile(rf"^\W*(?:and |but |also )?{alternatives(_WORDS.part_asks_first)}\b")
_PARTICLES = CLOSING_PARTICLES | _WORDS.closing_too
# Where a question may be cut: at the end of a sentence ("?", ";", "!", or a full stop before a
# word, unless it ends an abbreviation: "TP. HCM" holds) always; before "," and the conjunctions
# only when the clauses on both sides ask something of their own.
_SENTENCE_END = re.compile(r"(?<=[?;!])\s+|(?<=[^\W\d_]\.)\s+(?=[^\W\d_])")
_CLAUSE_CUT = re.compile(
    r",\s*|\s+(?=(?:và|va|với lại|voi lai|còn|con|rồi|roi|and|also)\s)", re.IGNORECASE
)
# Openings and closings that ask nothing: a greeting, "cho em hỏi", a thank-you, each maybe
# followed by whom it is addressed to.
_VOCATIVE = rf"(?:\s+{alternatives(_WORDS.vocatives)})*"
_FILLER = re.compile(
    rf"^{alternatives(tuple(f.replace(VOCATIVES_SLOT, _VOCATIVE) for f in _WORDS.fillers))}\b"
)


@dataclass(frozen=True)
class QueryPart:
    """One thing a question asks: what the dense side embeds and the keyword side matches."""

    text: str  # the part as typed (restored when the question was)
    dense: str  # restored and expanded: what is embedded
    terms: tuple[str, ...]


@dataclass(frozen=True)
class PreparedQuery:
    question: str  # as asked (cleaned)
    restored: str | None  # the question with its marks put back, when it was typed without
    dense: str  # the whole question for the embedder
    terms: tuple[str, ...]
    parts: tuple[QueryPart, ...]  # two or more for a multi-part question, else empty
    # ``dense`` with where each word written out came from (the student's "hp" for "học phí")
    written: WrittenOut | None = None

    @property
    def readable(self) -> str:
        """The question as the dense side and a reader see it: restored when it was."""
        return self.restored or self.question

    @property
    def dense_texts(self) -> list[str]:
        """What to embed, in one batch: the parts of a multi-part question, else the question
        (a multi-part question's own vector is the mean of its parts')."""
        return [p.dense for p in self.parts] if self.parts else [self.dense]


def prepare_query(
    question: str,
    processor: TextProcessor,
    restorer: DiacriticRestorer | None = None,
    *,
    split: bool = True,
) -> PreparedQuery:
    restored = None
    if restorer is not None and restorer.needs_restoring(question):
        text = restorer.restore(question).text
        restored = text if text != question else None
    readable = restored or question
    parts: tuple[QueryPart, ...] = ()
    if split:
        pieces = split_question(readable, processor)
        if len(pieces) > 1:
            parts = tuple(
                QueryPart(p, processor.expand_query(p), tuple(processor.query_terms(p)))
                for p in pieces
            )
    written = processor.written_out(readable)
    return PreparedQuery(
        question=question,
        restored=restored,
        dense=written.text,
        terms=tuple(processor.query_terms(question)),
        parts=parts,
        written=written,
    )


def split_question(question: str, processor: TextProcessor) -> list[str]:
    """The parts of a question that asks several things; ``[question]`` when it asks one."""
    pieces: list[str] = []
    for sentence in _sentences(question.strip()):
        pieces.extend(_clauses(sentence))
    parts: list[str] = []
    for piece in pieces:
        piece = piece.strip(" ,;")
        if not piece or _is_filler(piece, processor):
            continue
        if parts and len(processor.query_terms(piece)) < MIN_PART_TERMS:
            parts[-1] = f"{parts[-1]}, {piece}"
        else:
            parts.append(piece)
    if len(parts) > 1 and len(processor.query_terms(parts[0])) < MIN_PART_TERMS:
        parts[1] = f"{parts[0]}, {parts[1]}"
        parts.pop(0)
    if len(parts) > MAX_PARTS:
        parts = [*parts[: MAX_PARTS - 1], ", ".join(parts[MAX_PARTS - 1 :])]
    return parts if len(parts) > 1 else [question]


def _sentences(text: str) -> list[str]:
    out: list[str] = []
    for piece in _SENTENCE_END.split(text):
        if out and ends_with_abbreviation(out[-1]):
            out[-1] = f"{out[-1]} {piece}"
        else:
            out.append(piece)
    return out


def _clauses(sentence: str) -> list[str]:
    """A sentence cut before each clause that asks something of its own."""
    out: list[str] = []
    start = 0
    for cut in _CLAUSE_CUT.finditer(sentence):
        before, after = sentence[start : cut.start()], sentence[cut.end() :]
        if _asks(before) and _asks(_up_to_next_cut(after)):
            out.append(before)
            start = cut.end()
    out.append(sentence[start:])
    return out


def _up_to_next_cut(text: str) -> str:
    found = _CLAUSE_CUT.search(text)
    return text[: found.start()] if found else text


def asks_something(text: str) -> bool:
    """Whether a message asks a question of its own: a question word wherever it stands, or
    one that closes it ("… không", "… nào"), particles aside."""
    return _asks(text)


def _asks(text: str) -> bool:
    """Whether a clause asks something (see _ANYWHERE)."""
    if any(w in text.lower() for w in _WORDS.with_marks):  # "mấy": folded, it is also "máy"
        return True
    words = fold(text).split()
    words = [w.strip(".,!?…") for w in words]
    while words and words[-1] in _PARTICLES:
        words.pop()
    folded = " ".join(words)
    return bool(
        _ANYWHERE.search(folded)
        or _AT_END.search(" ".join(words[-2:]))
        or OPENS_WITH_VERB.match(folded)
    )


def _is_filler(piece: str, processor: TextProcessor) -> bool:
    """A greeting or a formula ("cho em hỏi", "cảm ơn ad") with nothing asked after it."""
    folded = fold(piece).strip(" .!?")
    if not processor.query_terms(piece):
        return True
    rest = _FILLER.sub("", folded, count=1).strip(" ,.!?")
    return rest != folded and not _asks(rest) and len(processor.query_terms(rest)) < MIN_PART_TERMS


def question_vector(prepared: PreparedQuery, vectors: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """The question's own vector from what ``dense_texts`` embedded: the one vector, or the
    normalised mean of the parts' (what tier 1 matches and t_doc is held to)."""
    rows: np.ndarray[Any, Any] = np.asarray(vectors, dtype=np.float32)
    if len(rows) == 1:
        first: np.ndarray[Any, Any] = rows[0]
        return first
    mean: np.ndarray[Any, Any] = rows.mean(axis=0)
    norm = float(np.linalg.norm(mean))
    return mean / norm if norm > 0 else mean


async def search_query(
    session: AsyncSession,
    prepared: PreparedQuery,
    vectors: np.ndarray[Any, Any],
    settings: SearchSettings,
    *,
    limit: int,
    mode: SearchMode | None = None,
    reranker: Reranker | None = None,
) -> list[Hit]:
    """Search a prepared question: as one query, or the whole question and each of its parts
    (retrieval.search.search_parts)."""
    whole = question_vector(prepared, vectors)
    if not prepared.parts:
        return await search_chunks(
            session,
            whole,
            prepared.terms,
            settings,
            limit=limit,
            mode=mode,
            query_text=prepared.readable,
            reranker=reranker,
        )
    return await search_parts(
        session,
        [whole, *vectors],
        [prepared.terms, *(p.terms for p in prepared.parts)],
        settings,
        limit=limit,
        mode=mode,
        query_texts=[prepared.readable, *(p.text for p in prepared.parts)],
        reranker=reranker,
    )
