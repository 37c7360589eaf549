"""Finding what answers a question: read it (restore, expand, split; the message's reading
gains what the school's vocabulary reads in it, bot.answer.read), embed it, match the FAQ
(tier 1) and, when no entry is accepted, search the documents for tier 2's passages."""

from __future__ import annotations

from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.answer.extractive import about_first, naming_what_is_asked
from bot.answer.found import Found, Timer
from bot.answer.parts import AnswererParts
from bot.answer.query_plan import PlannedSearch, plan_queries, search_plan, small_talk_answer
from bot.answer.read import Read
from bot.answer.replies import Answer
from bot.core.types import Language
from retrieval.changes import signature_expression
from retrieval.facts.book import BOOK_TABLES, current_book
from retrieval.faq.candidates import FaqCandidate, coverage_terms, faq_candidates
from retrieval.faq.decision import FaqDecision, decide_faq
from retrieval.faq.judge import FaqJudge, current_judge
from retrieval.faq.lexicon import SETTINGS_COLUMNS, current_lexicon
from retrieval.faq.sources import SourceDocument, source_documents
from retrieval.guard.verdicts import Facets
from retrieval.index.state import get_index_state
from retrieval.query import PreparedQuery, prepare_query, question_vector, search_query
from retrieval.restore.store import RESTORER_TABLES, current_restorer
from retrieval.search.hits import Hit, diversify
from retrieval.thresholds import Thresholds, resolve_thresholds

FAQ_CANDIDATES = 8  # FAQ entries weighed for a question, best first (as the fit weighs them)

# What a question needs to know of the knowledge before it is read, in one round trip instead of
# four (2.5 ms of the event loop and 1 ms of PostgreSQL an answer): the HNSW settings and the FAQ
# lexicon's signature, the restorer's and the facts book's signatures, the stored thresholds.
_KNOWLEDGE_STATE = text(
    f"SELECT {SETTINGS_COLUMNS}, "  # noqa: S608 - constant: the modules' own table names
    f"{signature_expression(RESTORER_TABLES)} AS restorer, "
    f"{signature_expression(BOOK_TABLES)} AS book, "
    "(SELECT thresholds FROM index_state WHERE id = 1) AS thresholds"
)


class Lookup:
    """Tier 1's decision and tier 2's passages for a question, read from the knowledge store."""

    def __init__(
        self, parts: AnswererParts, sessionmaker: async_sessionmaker[AsyncSession]
    ) -> None:
        self.parts = parts
        self.settings = parts.settings
        self.sessionmaker = sessionmaker

    async def thresholds(self, session: AsyncSession) -> Thresholds:
        state = await get_index_state(session)
        return resolve_thresholds(
            self.settings.answer, self.parts.embedder.name, state.thresholds if state else None
        )

    async def find(self, read: Read, timer: Timer) -> Found:
        """Read the question (restore, expand, split), embed it, match the FAQ, and (when no
        FAQ entry is accepted) search the documents. ``read``: the message as read when it
        came in; ``Found.read`` is that reading with what the school's vocabulary reads in it."""
        question, language = read.question, read.language
        parts = self.parts
        search = self.settings.search
        async with self.sessionmaker() as session:
            state = (await session.execute(_KNOWLEDGE_STATE)).one()
            thresholds = resolve_thresholds(
                self.settings.answer, parts.embedder.name, state.thresholds
            )
            with timer.stage("restore"):
                prepared = await self.prepare(session, question, signature=state.restorer)
            with timer.stage("embed"):
                vectors = await parts.embed_queries(prepared.dense_texts)
            vector = question_vector(prepared, vectors)
            terms = list(prepared.terms)
            # the school's majors read by every tier's guard (retrieval.guard.catalogue)
            book = await current_book(session, signature=state.book)
            parts.read_catalogue(book)
            read = read.with_restored(
                prepared, parts.guard, parts.processor, guarded=self.settings.answer.near_miss_guard
            )
            with timer.stage("faq"):
                decision = await self.match_faq(
                    session,
                    prepared,
                    vector,
                    lexicon_signature=state.signature,
                    facets=read.asks.facets if read.asks is not None else None,
                )
                accepted = decision.accepted
                cited: dict[int, SourceDocument] = {}
                if accepted is not None:  # its source, cited as documents are (tiers.faq_answer)
                    cited = await source_documents(session, [accepted.faq_id])
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
            "faq_threshold": round(decision.threshold, 4),
            "faq_probability": (
                round(decision.probability, 4) if decision.probability is not None else None
            ),
            "t_doc": thresholds.t_doc,
            "thresholds_from": thresholds.origin,
        }
        found = Found(question, language, terms, thresholds, decision, hits, trace, scores)
        found.read = read
        found.small_talk = small_talk
        found.facts = book
        found.faq_document = cited.get(accepted.faq_id) if accepted is not None else None
        found.expanded = prepared.dense
        found.parts = tuple((p.text, p.dense) for p in prepared.parts)
        if decision.accepted is not None or small_talk is not None:
            return found
        passing = [h for h in hits if h.similarity >= thresholds.t_doc]
        passing = diversify(passing, self.settings.search.max_chunks_per_doc)
        # Passages about another year, major or method than the question go last, so that the
        # page about the one asked is quoted even when it ranked sixth (3/6).
        passing = about_first(
            passing,
            read.answering,
            self.parts.guard_in_use,
            [p.reading for p in read.parts],
            self.settings.answer.document_scope,
        )
        entry = faq_passage(decision, thresholds.t_doc, passage_floor(self.parts))
        if entry is not None:  # the staff-approved fact first, quoted and cited like the rest
            passing = [entry, *passing]
            trace["faq_passage"] = entry.faq_id
        # A question of several parts quotes from the passages of each.
        keep = self.settings.answer.top_k * max(1, len(prepared.parts))
        passing = naming_what_is_asked(passing, read.answering, self.parts.guard_in_use, keep)
        passing = passing[:keep]
        found.out_of_scope = self._outside_documents(read, passing)
        if found.out_of_scope:
            trace["out_of_scope"] = found.out_of_scope
            passing = []
        else:  # each passage on its own: none about another year, or silent on another school
            passing = [h for h in passing if not self._outside_documents(read, [h])]
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
        vectors = await self.parts.embed_queries(prepared.dense_texts)
        return prepared, question_vector(prepared, vectors)

    async def judge(self, session: AsyncSession, lexicon_signature: str | None = None) -> FaqJudge:
        """Tier 1's judge for the FAQ this session sees: the fitted scorer, this FAQ's threshold
        for the risk target, the guard told the school's own names. ``lexicon_signature``: as
        ``current_lexicon`` takes it."""
        lexicon = await current_lexicon(session, self.parts.processor, signature=lexicon_signature)
        return await current_judge(
            lexicon,
            self.parts.processor,
            self.parts.guard_in_use,
            self.parts.decisions.faq,
            self.settings.answer.faq_risk,
            self.settings.brand.own_names,
        )

    async def faq_candidates(
        self,
        session: AsyncSession,
        prepared: PreparedQuery,
        vector: Any,
        judge: FaqJudge,
        *,
        verbatim: bool = True,
        without: int | None = None,
    ) -> list[FaqCandidate]:
        """Tier 1's candidates for a read question, best first. Without ``verbatim``, a stored
        phrasing asked word for word is not taken as such; ``without`` leaves one entry out
        (the FAQ self-check asks both)."""
        candidates = await faq_candidates(
            session,
            self.parts.processor,
            prepared.question if verbatim else "",
            prepared.terms,
            vector,
            limit=FAQ_CANDIDATES + (without is not None),
            covering=coverage_terms(prepared.readable, self.parts.processor, judge.guard),
            lexicon=judge.lexicon,
        )
        return [c for c in candidates if c.faq_id != without][:FAQ_CANDIDATES]

    async def match_faq(
        self,
        session: AsyncSession,
        prepared: PreparedQuery,
        vector: Any,
        *,
        verbatim: bool = True,
        without: int | None = None,
        lexicon_signature: str | None = None,
        facets: Facets | None = None,
    ) -> FaqDecision:
        """Tier 1 alone, as ``answer`` runs it (``faq_candidates``, then the decision).
        ``facets``: what the guard every tier reads (``guard_in_use``) reads in the question,
        read once already; the judge takes them when its guard is that one (no own names of
        the school to read as nothing)."""
        judge = await self.judge(session, lexicon_signature)
        candidates = await self.faq_candidates(
            session, prepared, vector, judge, verbatim=verbatim, without=without
        )
        covering = coverage_terms(prepared.readable, self.parts.processor, judge.guard)
        # The guard reads shorthand written out ("hp" is học phí).
        same = judge.guard is not None and judge.guard is self.parts.guard_in_use
        return decide_faq(prepared.dense, covering, candidates, judge, facets if same else None)

    async def prepare(
        self, session: AsyncSession, question: str, *, signature: str | None = None
    ) -> PreparedQuery:
        """The question read for search: restored (with the knowledge's restorer), expanded,
        split into its parts (retrieval.query). ``signature``: the restorer's, read already."""
        search = self.settings.search
        restorer = None
        if search.restore_diacritics:
            restorer = await current_restorer(
                session,
                self.sessionmaker,
                self.parts.processor.dense_expansions,
                signature=signature,
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
            plan = await plan_queries(self.parts.llm, self.parts.prompt("query_plan"), question)
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

    def _outside_documents(self, read: Read, passing: list[Hit]) -> dict[str, frozenset[str]]:
        """What the question names (a year, another school) that the passing chunks never do."""
        guard = self.parts.guard_in_use
        if not passing or guard is None:
            return {}
        texts = [f"{h.title}\n{h.heading_path}\n{h.text}" for h in passing]
        scope = self.settings.answer.document_scope
        return guard.missing_from(read.question, texts, scope, mine=read.typed)


# An entry tier 1 turned down is a tier-2 passage only when its scorer still finds it more likely
# right than wrong: below that, it was mostly a near line of another question ("Mã trường là
# gì" for "khối Toán Sinh Anh đăng ký được ngành nào"), and tier 2 quoted it with confidence.
FAQ_PASSAGE_PROBABILITY = 0.5


def passage_floor(parts: AnswererParts) -> float:
    """How likely right an entry tier 1 turned down must be to be a tier-2 passage: with no
    tier-1 scorer, every entry has probability 0, and none is ruled out so."""
    return FAQ_PASSAGE_PROBABILITY if parts.decisions.faq is not None else 0.0


def faq_passage(decision: FaqDecision, t_doc: float, least: float = 0.0) -> Hit | None:
    """The FAQ entry tier 1 weighed and did not accept, as a tier-2 passage (2/6).

    Only the likeliest entry nothing ruled out (no conflict with the guard or the school's
    contrasts, every slot asked said by it) that reaches ``t_doc``: tier 1 was not sure enough
    for a verbatim answer, but a quoted, cited passage is fine. The hotline question then gets
    the hotline entry, not another office's number from a document. With a tier-1 scorer, the
    entry must be at ``least`` that likely right (``FAQ_PASSAGE_PROBABILITY``).
    """
    considered = decision.considered
    if considered is None or considered.accepted:
        return None
    entry = considered.candidate
    if entry.similarity < t_doc:
        return None
    if (considered.probability or 0.0) < least:
        return None  # tier 1's scorer finds it likelier another question's entry than this one
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
