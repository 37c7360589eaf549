"""The URAG answerer (Algorithm 1): FAQ verbatim → cited documents → fallback.

Handlers are tried in order and the first that answers wins, like a bot framework's handlers.
Critical facts are never paraphrased: a tier-1 answer is the stored text as staff wrote it; a
tier-2 answer quotes the documents (or an LLM answer whose citations were checked); the
fallback states no fact of the university at all.
"""

from __future__ import annotations

import logging
import re
import time
import unicodedata
from collections.abc import AsyncIterator, Iterator
from contextlib import aclosing, contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.answer import replies
from bot.answer.extractive import (
    Quote,
    Reading,
    about_first,
    read_question,
    render_quotes,
    select_quotes,
)
from bot.answer.llm_answer import (
    Generated,
    check_citations,
    generate_answer,
    generate_fallback,
    stream_answer,
)
from bot.answer.query_plan import PlannedSearch, plan_queries, search_plan, small_talk_answer
from bot.answer.replies import Answer
from bot.answer.small_talk import small_talk
from bot.core.citations import Citation
from bot.core.errors import LlmError
from bot.core.settings import Settings
from bot.core.types import Language, Tier
from bot.llm.client import LlmClient, load_prompt
from retrieval.embedders.base import Embedder, embed_off_loop
from retrieval.faq.candidates import FaqCandidate, coverage_terms, faq_candidates
from retrieval.faq.decision import FaqDecision, decide_faq
from retrieval.guard.checks import NearMissGuard
from retrieval.index.state import get_index_state
from retrieval.query import PreparedQuery, prepare_query, question_vector, search_query
from retrieval.restore.store import current_restorer
from retrieval.search.hits import Hit, diversify
from retrieval.search.rerank import Reranker
from retrieval.text.folding import fold
from retrieval.text.language import detect_language
from retrieval.text.terms import TextProcessor
from retrieval.thresholds import Thresholds, resolve_thresholds

log = logging.getLogger(__name__)

MAX_QUESTION_CHARS = 2000
_HAS_WORD = re.compile(r"\w", re.UNICODE)


FAQ_CANDIDATES = 5  # FAQ entries read for a question, best first


def clean_question(raw: str) -> str:
    """Drop control characters (PostgreSQL rejects NUL), compose characters, cap the length.

    A 100 KB paste is cut to its first ``MAX_QUESTION_CHARS`` characters: a question is short,
    and embedding models read ~512 tokens anyway. Decomposed Vietnamese (some keyboards and
    copied PDFs send "ư" + "̛" + "̣") becomes NFC, the form the rest of the pipeline reads.
    """
    raw = unicodedata.normalize("NFC", raw)
    kept = "".join(ch if unicodedata.category(ch)[0] != "C" or ch in "\n\t" else " " for ch in raw)
    return " ".join(kept.split())[:MAX_QUESTION_CHARS].strip()


def is_question(text: str) -> bool:
    """Whether there is anything to search for: letters or digits, not only emoji/punctuation."""
    return bool(_HAS_WORD.search(text.replace("_", "")))


class Timer:
    def __init__(self) -> None:
        self.ms: dict[str, float] = {}

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.ms[name] = round((time.perf_counter() - start) * 1000, 2)


# -- what answer_stream() yields ---------------------------------------------------------------


@dataclass(frozen=True)
class StreamMeta:
    """The tier the streamed text belongs to (a ``StreamReplace`` may still change it)."""

    tier: Tier


@dataclass(frozen=True)
class StreamToken:
    """The next piece of the reply's body, to append to what was shown."""

    text: str


@dataclass(frozen=True)
class StreamReplace:
    """Drop the text streamed so far: the final answer is another one."""

    reason: str


@dataclass(frozen=True)
class StreamDone:
    """The final answer, exactly as ``answer()`` returns it; always the last event."""

    answer: Answer


StreamEvent = StreamMeta | StreamToken | StreamReplace | StreamDone


@dataclass
class _Retrieval:
    """What tier 1 and the search found for one question, and how it scored."""

    question: str
    language: Language
    terms: list[str]
    thresholds: Thresholds
    decision: FaqDecision
    hits: list[Hit]
    trace: dict[str, Any]
    scores: dict[str, Any]
    passing: list[Hit] = field(default_factory=list)
    out_of_scope: dict[str, frozenset[str]] = field(default_factory=dict)
    small_talk: Answer | None = None  # the query plan found nothing to search (a greeting)
    reading: Reading | None = None  # what tier 2 reads the question to ask (bot.answer.extractive)


@dataclass
class AnswererParts:
    """Everything the answerer needs, built once at start-up (see bot.web.app.build_parts)."""

    settings: Settings
    embedder: Embedder
    processor: TextProcessor
    guard: NearMissGuard
    llm: LlmClient | None = None
    reranker: Reranker | None = None


class Answerer:
    def __init__(
        self, parts: AnswererParts, sessionmaker: async_sessionmaker[AsyncSession]
    ) -> None:
        self.parts = parts
        self.settings = parts.settings
        self.sessionmaker = sessionmaker
        self._prompts: dict[str, str] = {}

    async def thresholds(self, session: AsyncSession) -> Thresholds:
        state = await get_index_state(session)
        return resolve_thresholds(
            self.settings.answer, self.parts.embedder.name, state.thresholds if state else None
        )

    def _prompt(self, name: str) -> str:
        if name not in self._prompts:
            self._prompts[name] = load_prompt(self.settings.llm, name)
        return self._prompts[name]

    async def answer(self, raw_question: str) -> Answer:
        timer = Timer()
        started = time.perf_counter()
        question = clean_question(raw_question)
        language: Language = detect_language(question)
        if not is_question(question):
            return _not_a_question(language)
        chat = self._small_talk(question, language)
        if chat is not None:
            return chat
        found = await self._retrieve(question, language, timer)
        return _finish(await self._answer_found(found, timer), found, timer, started)

    def _small_talk(self, question: str, language: Language) -> Answer | None:
        """A greeting, a thank-you, a goodbye or a request for a person: a polite reply, no
        search (bot.answer.small_talk)."""
        kind = small_talk(question)
        if kind is None:
            return None
        return small_talk_answer(kind, language, self.settings.contact, how="small talk")

    async def answer_stream(self, raw_question: str) -> AsyncIterator[StreamEvent]:
        """``answer()`` as events, streaming the LLM's tier-2 reply as it is written.

        Tier 1 and retrieval run exactly as in ``answer()``. Only a tier-2 answer in LLM mode
        streams: ``StreamMeta("documents")``, then a ``StreamToken`` per delta; the whole reply
        then goes through the same citation check. If the check fails (or the stream breaks
        off), ``StreamReplace`` tells the reader to drop what was shown, and the final answer is
        the one ``answer()`` would have given in that case. Every stream ends with one
        ``StreamDone`` carrying the final ``Answer`` (for the streamed body: with its sources and
        disclaimer, as ``answer()`` formats them). Without an LLM, or when tier 1 answers, the
        stream is that single ``StreamDone``.
        """
        timer = Timer()
        started = time.perf_counter()
        question = clean_question(raw_question)
        language: Language = detect_language(question)
        if not is_question(question):
            yield StreamDone(_not_a_question(language))
            return
        chat = self._small_talk(question, language)
        if chat is not None:
            yield StreamDone(chat)
            return
        found = await self._retrieve(question, language, timer)
        llm = self.parts.llm
        if found.decision.accepted is not None or not found.passing or llm is None:
            yield StreamDone(_finish(await self._answer_found(found, timer), found, timer, started))
            return

        yield StreamMeta("documents")
        pieces: list[str] = []
        result: Answer | None = None
        with timer.stage("compose"):
            deltas = stream_answer(llm, self._prompt("answer"), question, found.passing)
            try:
                async with aclosing(deltas):
                    async for delta in deltas:
                        pieces.append(delta)
                        yield StreamToken(delta)
            except LlmError as exc:
                log.warning("tier 2 LLM stream failed, answering extractively: %s", exc)
                if pieces:
                    yield StreamReplace("the LLM stream broke off")
                result = self._extractive_answer(found)
            else:
                raw = "".join(pieces)
                generated = check_citations(raw, len(found.passing))
                if generated is None:
                    log.info("tier 2 LLM reply rejected (no or unknown citation): %.200s", raw)
                    yield StreamReplace("the reply cites no source or an unknown one")
                else:
                    result = self._generated_answer(generated, found.passing, language)
        if result is None:
            result = await self._timed_fallback(found, timer)
        yield StreamDone(_finish(result, found, timer, started))

    async def _retrieve(self, question: str, language: Language, timer: Timer) -> _Retrieval:
        """Read the question (restore, expand, split), embed it, match the FAQ, and (when no
        FAQ entry is accepted) search the documents."""
        parts = self.parts
        search = self.settings.search
        async with self.sessionmaker() as session:
            thresholds = await self.thresholds(session)
            with timer.stage("restore"):
                prepared = await self.prepare(session, question)
            with timer.stage("embed"):
                vectors = await embed_off_loop(parts.embedder.embed_queries, prepared.dense_texts)
            vector = question_vector(prepared, vectors)
            terms = list(prepared.terms)
            with timer.stage("faq"):
                decision = await self.match_faq(session, prepared, vector, thresholds.t_faq)
            hits: list[Hit] = []
            planned = decision.accepted is None and self._plans_queries
            if decision.accepted is None and not planned:
                with timer.stage("search"):
                    hits = await search_query(
                        session,
                        prepared,
                        vectors,
                        search,
                        limit=max(self.settings.answer.top_k * 4, 20),
                        reranker=parts.reranker,
                    )
        small_talk = None
        if planned:  # outside the session: no transaction stays open across an LLM call
            hits, small_talk = await self._planned_search(question, language, vector, terms, timer)
        trace: dict[str, Any] = {
            "question": question,
            "restored": prepared.restored,
            "expanded": prepared.dense,
            "parts": [p.text for p in prepared.parts],
            "part_dense": [p.dense for p in prepared.parts],
            "terms": terms,
            "thresholds": thresholds,
            "faq": decision,
            "hits": hits,
        }
        scores: dict[str, Any] = {
            "faq_best": round(decision.best_similarity, 4),
            "t_faq": thresholds.t_faq,
            "t_doc": thresholds.t_doc,
            "thresholds_from": thresholds.origin,
        }
        found = _Retrieval(question, language, terms, thresholds, decision, hits, trace, scores)
        found.small_talk = small_talk
        if decision.accepted is not None or small_talk is not None:
            return found
        passing = [h for h in hits if h.similarity >= thresholds.t_doc]
        passing = diversify(passing, self.settings.search.max_chunks_per_doc)
        # Passages about another year, major or method than the question go last, so that the
        # page about the one asked is quoted even when it ranked sixth (3/6).
        found.reading = self._reading(found)
        passing = about_first(passing, found.reading, self._guard)
        entry = faq_passage(decision, thresholds.t_doc, self.settings.answer.faq_min_coverage)
        if entry is not None:  # the staff-approved fact first, quoted and cited like the rest
            passing = [entry, *passing]
            trace["faq_passage"] = entry.faq_id
        # A question of several parts quotes from the passages of each.
        passing = passing[: self.settings.answer.top_k * max(1, len(prepared.parts))]
        found.out_of_scope = self._outside_documents(question, passing)
        if found.out_of_scope:
            trace["out_of_scope"] = found.out_of_scope
            passing = []
        else:  # each passage on its own: none about another year, or silent on another school
            passing = [h for h in passing if not self._outside_documents(question, [h])]
        trace["passing"] = passing
        scores["chunks"] = [
            {
                "chunk_id": h.chunk_id,
                "similarity": round(h.similarity, 4),
                "score": round(h.score, 5),
            }
            for h in passing
        ]
        found.passing = passing
        return found

    async def read(self, session: AsyncSession, question: str) -> tuple[PreparedQuery, Any]:
        """The question read (``prepare``) and its vector, as ``answer`` embeds it."""
        prepared = await self.prepare(session, question)
        vectors = await embed_off_loop(self.parts.embedder.embed_queries, prepared.dense_texts)
        return prepared, question_vector(prepared, vectors)

    async def faq_candidates(
        self,
        session: AsyncSession,
        prepared: PreparedQuery,
        vector: Any,
        *,
        verbatim: bool = True,
        without: int | None = None,
    ) -> list[FaqCandidate]:
        """Tier 1's candidates for a read question, best first. Without ``verbatim``, a stored
        phrasing asked word for word is not taken as such; ``without`` leaves one entry out
        (the FAQ self-check asks both)."""
        guard = self.parts.guard if self.settings.answer.near_miss_guard else None
        candidates = await faq_candidates(
            session,
            self.parts.processor,
            prepared.question if verbatim else "",
            prepared.terms,
            vector,
            limit=FAQ_CANDIDATES + (without is not None),
            covering=coverage_terms(prepared.readable, self.parts.processor, guard),
        )
        return [c for c in candidates if c.faq_id != without][:FAQ_CANDIDATES]

    async def match_faq(
        self,
        session: AsyncSession,
        prepared: PreparedQuery,
        vector: Any,
        t_faq: float | None = None,
        *,
        verbatim: bool = True,
        without: int | None = None,
    ) -> FaqDecision:
        """Tier 1 alone, as ``answer`` runs it (``faq_candidates``, then the decision);
        ``t_faq`` is read from the settings and the index when not given."""
        answer = self.settings.answer
        if t_faq is None:
            t_faq = (await self.thresholds(session)).t_faq
        candidates = await self.faq_candidates(
            session, prepared, vector, verbatim=verbatim, without=without
        )
        return decide_faq(
            prepared.dense,  # the guard reads shorthand written out ("hp" is học phí)
            candidates,
            threshold=t_faq,
            margin=answer.faq_margin,
            guard=self.parts.guard if answer.near_miss_guard else None,
            min_coverage=answer.faq_min_coverage,
        )

    async def prepare(self, session: AsyncSession, question: str) -> PreparedQuery:
        """The question read for search: restored (with the knowledge's restorer), expanded,
        split into its parts (retrieval.query)."""
        search = self.settings.search
        restorer = None
        if search.restore_diacritics:
            restorer = await current_restorer(
                session, self.sessionmaker, self.parts.processor.dense_expansions
            )
        return prepare_query(question, self.parts.processor, restorer, split=search.split_questions)

    @property
    def _plans_queries(self) -> bool:
        return self.settings.answer.query_expansion and self.parts.llm is not None

    async def _planned_search(
        self, question: str, language: Language, vector: Any, terms: list[str], timer: Timer
    ) -> tuple[list[Hit], Answer | None]:
        """TUVAN_ANSWER__QUERY_EXPANSION: the LLM's queries searched and fused (query_plan),
        or the polite reply to a message that needs no search."""
        assert self.parts.llm is not None  # checked by _plans_queries
        with timer.stage("plan"):
            plan = await plan_queries(self.parts.llm, self._prompt("query_plan"), question)
        if not plan.retrieve:
            return [], small_talk_answer(plan.kind, language, self.settings.contact)
        how = PlannedSearch(
            self.parts.embedder, self.parts.processor, self.settings.search, self.parts.reranker
        )
        with timer.stage("search"):
            async with self.sessionmaker() as session:
                hits = await search_plan(
                    session,
                    how,
                    plan,
                    question,
                    vector,
                    terms,
                    limit=max(self.settings.answer.top_k * 4, 20),
                )
        return hits, None

    async def _answer_found(self, found: _Retrieval, timer: Timer) -> Answer:
        """Tier 1, else tier 2 (in one piece), else the fallback."""
        if found.decision.accepted is not None:
            return self._faq_answer(found.decision, found.language)
        if found.small_talk is not None:
            return found.small_talk
        result = None
        if found.passing:
            with timer.stage("compose"):
                result = await self._documents_answer(found)
        return result or await self._timed_fallback(found, timer)

    async def _timed_fallback(self, found: _Retrieval, timer: Timer) -> Answer:
        with timer.stage("fallback"):
            answer = await self._fallback(
                found.question,
                found.language,
                found.decision,
                found.hits,
                found.thresholds,
                found.out_of_scope,
            )
        if found.trace.get("abstained"):
            # Passages about the question, none holding what it asks: offered as links that
            # may help, with no fact stated from them.
            answer.related = _related(found.passing)
            answer.reason += "; documents: no quoted unit holds what is asked (abstained)"
            answer.answer = replies.with_related(answer.answer, answer.related, found.language)
        return answer

    def _faq_answer(self, decision: FaqDecision, language: Language) -> Answer:
        entry = decision.accepted
        assert entry is not None  # checked by the caller
        citations = []
        if entry.source or entry.source_url:
            citations.append(
                Citation(
                    n=1,
                    title=entry.source or entry.source_url or "",
                    source=entry.source or "",
                    url=entry.source_url,
                    page=None,
                )
            )
        return Answer(
            tier="faq",
            answer=entry.answer,  # verbatim, by design
            language=language,
            citations=citations,
            faq_id=entry.faq_id,
            faq_external_id=entry.external_id,
            scores={"faq": round(entry.similarity, 4), "faq_matched": entry.matched_text},
            reason=decision.reason,
        )

    async def _documents_answer(self, found: _Retrieval) -> Answer | None:
        question, hits, language = found.question, found.passing, found.language
        llm = self.parts.llm
        if llm is not None:
            try:
                generated, raw = await generate_answer(llm, self._prompt("answer"), question, hits)
            except LlmError as exc:
                log.warning("tier 2 LLM failed, answering extractively: %s", exc)
            else:
                if generated is None:
                    log.info("tier 2 LLM reply rejected (no or unknown citation): %.200s", raw)
                    return None
                return self._generated_answer(generated, hits, language)
        return self._extractive_answer(found)

    def _generated_answer(
        self, generated: Generated, hits: list[Hit], language: Language
    ) -> Answer:
        citations = [_citation(n, hits[n - 1]) for n in generated.cited]
        return self._cited(generated.text, citations, hits, language, "llm")

    @property
    def _guard(self) -> NearMissGuard | None:
        return self.parts.guard if self.settings.answer.near_miss_guard else None

    def _reading(self, found: _Retrieval) -> Reading:
        """What the question asks (the guard's vocabulary, on shorthand written out), read
        once per question."""
        if found.reading is None:
            found.reading = read_question(
                found.trace.get("expanded") or found.question, self._guard, self.parts.processor
            )
        return found.reading

    def _extractive_answer(self, found: _Retrieval) -> Answer | None:
        hits = found.passing
        guard = self._guard
        parts = list(
            zip(found.trace.get("parts", []), found.trace.get("part_dense", []), strict=False)
        )
        if len(parts) > 1:
            return self._multi_part_answer(found, parts, guard)
        quotes = select_quotes(
            found.terms,
            hits,
            self.parts.processor,
            limit=self.settings.answer.extractive_sentences,
            reading=self._reading(found),
            guard=guard,
        )
        return self._quoted(found, quotes)

    def _quoted(self, found: _Retrieval, quotes: list[Quote]) -> Answer | None:
        """The quotes as a cited answer; None (the fallback, with related links) if none."""
        if not quotes:
            found.trace["abstained"] = True
            return None
        quotes, citations = _numbered(quotes, found.passing)
        body = f"{replies.extractive_intro(found.language)}\n{render_quotes(quotes)}"
        return self._cited(body, citations, found.passing, found.language, "extractive")

    def _multi_part_answer(
        self, found: _Retrieval, parts: list[tuple[str, str]], guard: NearMissGuard | None
    ) -> Answer | None:
        """A question that asks several things, answered part by part: each part's own units
        (its reading, with the entities the other parts name: "điểm chuẩn TTNT 2025, chỉ tiêu
        năm nay" asks the quota of TTNT too), or a line saying the documents do not say it."""
        hits, language = found.passing, found.language
        whole = found.trace.get("expanded") or found.question
        parts = asking_parts(parts)
        processor = self.parts.processor
        per_part: list[list[Quote]] = []
        for _, dense in parts:
            text = _with_entities(dense, whole, guard)
            per_part.append(
                select_quotes(
                    processor.query_terms(text),
                    hits,
                    processor,
                    limit=PART_QUOTES,
                    reading=read_question(text, guard, processor),
                    guard=guard,
                )
            )
        taken: set[tuple[int, int]] = set()
        for i, quotes in enumerate(per_part):  # a unit answers the first part that chose it
            per_part[i] = [q for q in quotes if (q.hit_index, q.position) not in taken]
            taken.update((q.hit_index, q.position) for q in quotes)
        if len(parts) == 1:
            return self._quoted(found, per_part[0])
        if not any(per_part):
            found.trace["abstained"] = True
            return None
        numbered, citations = _numbered([q for quotes in per_part for q in quotes], hits)
        lines = [replies.extractive_intro(language)]
        at = 0
        for (label, _), quotes in zip(parts, per_part, strict=True):
            lines.append(f"{label.rstrip(' ?.!')}:")
            if quotes:
                lines.append(render_quotes(numbered[at : at + len(quotes)]))
                at += len(quotes)
            else:
                lines.append(f"- {replies.part_not_found(language)}")
        return self._cited("\n".join(lines), citations, hits, language, "extractive, by part")

    def _cited(
        self, body: str, citations: list[Citation], hits: list[Hit], language: Language, how: str
    ) -> Answer:
        return Answer(
            tier="documents",
            answer=replies.documents_reply(body, citations, language, self.settings.answer),
            language=language,
            citations=citations,
            chunk_ids=[h.chunk_id for h in hits if h.faq_id is None],
            reason=f"{len(hits)} chunks passed t_doc; answered {how}",
        )

    def _outside_documents(self, question: str, passing: list[Hit]) -> dict[str, frozenset[str]]:
        """What the question names (a year, another school) that the passing chunks never do."""
        guard = self.parts.guard
        if not passing or guard is None or not self.settings.answer.near_miss_guard:
            return {}
        texts = [f"{h.title}\n{h.heading_path}\n{h.text}" for h in passing]
        return guard.missing_from(question, texts, self.settings.answer.document_scope)

    async def _fallback(
        self,
        question: str,
        language: Language,
        decision: FaqDecision,
        hits: list[Hit],
        thresholds: Thresholds,
        out_of_scope: dict[str, frozenset[str]] | None = None,
    ) -> Answer:
        best_doc = max((h.similarity for h in hits), default=0.0)
        documents = f"best similarity {best_doc:.3f} (t_doc {thresholds.t_doc:.3f})"
        if out_of_scope:
            named = "; ".join(f"{c} {', '.join(sorted(v))}" for c, v in out_of_scope.items())
            documents = f"the passages that passed t_doc never mention {named}"
        reason = f"FAQ: {decision.reason}; documents: {documents}"
        text = replies.no_information_reply(self.settings.contact, language)
        llm = self.parts.llm
        if llm is not None:
            try:
                body = await generate_fallback(llm, self._prompt("fallback"), question)
            except LlmError as exc:
                log.warning("fallback LLM failed: %s", exc)
            else:
                if body:
                    text = replies.llm_fallback_reply(
                        body, self.settings.answer, self.settings.contact, language
                    )
        return Answer(
            tier="fallback",
            answer=text,
            language=language,
            scores={"doc_best": round(best_doc, 4)},
            reason=reason,
        )


def _not_a_question(language: Language) -> Answer:
    return Answer(
        tier="fallback",
        answer=replies.not_a_question_reply(language),
        language=language,
        reason="empty or not a question",
    )


def _finish(result: Answer, found: _Retrieval, timer: Timer, started: float) -> Answer:
    result.scores = {**found.scores, **result.scores}
    result.timings_ms = {**timer.ms, "total": round((time.perf_counter() - started) * 1000, 2)}
    result.trace = found.trace
    result.query = {"restored": found.trace.get("restored"), "parts": found.trace.get("parts", [])}
    return result


def _citation(n: int, hit: Hit) -> Citation:
    return Citation(
        n=n,
        title=hit.title,
        source=hit.source,
        url=hit.url,
        page=hit.page,
        chunk_id=hit.chunk_id if hit.faq_id is None else None,
    )


RELATED_SOURCES = 3  # links a fallback offers as "có thể liên quan"
PART_QUOTES = 2  # units quoted for each part of a multi-part question


def _numbered(quotes: list[Quote], hits: list[Hit]) -> tuple[list[Quote], list[Citation]]:
    """One number per cited source (document and page), in order of first quote: two chunks
    of the same page are one source to the reader."""
    numbers: dict[tuple[int, int | None], int] = {}
    first_hit: dict[int, int] = {}
    for q in quotes:
        key = (hits[q.hit_index].document_id, hits[q.hit_index].page)
        if key not in numbers:
            numbers[key] = len(numbers) + 1
            first_hit[numbers[key]] = q.hit_index
    renumbered = [
        replace(q, source_n=numbers[(hits[q.hit_index].document_id, hits[q.hit_index].page)])
        for q in quotes
    ]
    return renumbered, [_citation(n, hits[hi]) for n, hi in first_hit.items()]


# A part that asks something: a question mark or a question word. "Mình đã tốt nghiệp cao
# đẳng và muốn học liên thông" only says who asks; it is read with the next part.
_ASKS = re.compile(
    r"\?|\b(?:gi|j|nao|dau|bao nhieu|bao lau|bao xa|bn|may|sao|khong|ko|k|hong|chua|"
    r"khi nao|bao gio|ai|the nao|ntn|what|which|where|when|how|who|why|can|do|does|is|are)\b"
)


def asking_parts(parts: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """``parts`` with each one that asks nothing read with the part after it (or, at the end,
    the part before it); all of them when none asks."""
    out: list[tuple[str, str]] = []
    context = ""
    for label, dense in parts:
        dense = f"{context} {dense}" if context else dense
        if _ASKS.search(fold(label)):
            out.append((label, dense))
            context = ""
        else:
            context = dense
    if not out:
        return parts
    if context:
        out[-1] = (out[-1][0], f"{out[-1][1]} {context}")
    return out


def _with_entities(part: str, whole: str, guard: NearMissGuard | None) -> str:
    """``part`` with the names ``whole`` gives in the categories the part names none of (not
    a year: in "điểm chuẩn 2025 bao nhiêu, năm nay tuyển mấy chỉ tiêu" the quota is this
    year's), and the other parts' topic when it names none."""
    if guard is None:
        return part
    mine = guard.entities(part)
    carried = set(guard.entities(whole)) - set(mine) - {"year"}
    if "attribute" not in guard.facets(part):
        carried.add("attribute")  # "khi nào mở đăng ký" after "ktx …": the dormitory's
    words = whole.split()
    extra = [
        " ".join(words[start:end])
        for start, end, category in guard.entity_spans(whole)
        if category in carried and " ".join(words[start:end]) not in part
    ]
    return " ".join([part, *dict.fromkeys(extra)])


def _related(hits: list[Hit]) -> list[Citation]:
    """The first distinct sources of ``hits`` (a document or an FAQ entry), numbered."""
    seen: set[int] = set()
    out: list[Citation] = []
    for hit in hits:
        if hit.document_id in seen:
            continue
        seen.add(hit.document_id)
        out.append(_citation(len(out) + 1, hit))
        if len(out) == RELATED_SOURCES:
            break
    return out


def faq_passage(decision: FaqDecision, t_doc: float, min_coverage: float) -> Hit | None:
    """The FAQ entry tier 1 considered and did not accept, as a tier-2 passage (2/6).

    Only the entry the guard let through (nothing it names conflicts, every slot asked is said
    by it), that holds enough of the question's words and reaches ``t_doc``: tier 1 turned it
    down for a similarity under ``t_faq`` or a rival within the margin, which makes a verbatim
    answer unsafe but a quoted, cited passage fine. The hotline question then gets the hotline
    entry, not another office's number from a document.
    """
    considered = next(
        (v for v in decision.verdicts if v.guard is not None and v.guard.ok and not v.accepted),
        None,
    )
    if considered is None:
        return None
    entry = considered.candidate
    if entry.similarity < t_doc or entry.coverage < min_coverage:
        return None
    return Hit(
        chunk_id=-entry.faq_id,
        document_id=-entry.faq_id,
        text=entry.answer,
        heading_path="",
        page=None,
        ordinal=0,
        external_id=entry.external_id,
        title=entry.question,
        source=entry.source or "FAQ",
        url=entry.source_url,
        similarity=entry.similarity,
        score=entry.score,
        faq_id=entry.faq_id,
    )
