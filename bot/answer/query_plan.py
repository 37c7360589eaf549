"""LLM query enhancement (``TUVAN_ANSWER__QUERY_EXPANSION``): one call plans the search.

When tier 1 has not answered, the model turns the question into three search queries (the
question made standalone and in standard Vietnamese, its abbreviations written out, its key
terms); each is searched like the question itself, and the rankings — the question's too — are
fused by reciprocal rank fusion. The same call may say that no search is needed (a greeting,
thanks): the reply is then one of the fixed polite texts below, never a fact and never a citation.

Nothing here may fail an answer: any error of the LLM or of its reply means the plain question
is searched as if planning were off. A chunk found only through a rewritten query is still held
to t_doc by its similarity to the *question*, so a query the model made up cannot let an
out-of-scope question through.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from sqlalchemy.ext.asyncio import AsyncSession

from bot.answer import replies
from bot.answer.replies import Answer
from bot.core.errors import TuvanError
from bot.core.settings import ContactSettings, SearchSettings
from bot.core.types import Language
from bot.llm.client import LlmClient
from retrieval.embedders.base import Embedder, embed_off_loop
from retrieval.search.dense import chunk_similarities
from retrieval.search.fusion import rrf
from retrieval.search.hits import Hit, diversify
from retrieval.search.hybrid import search_chunks
from retrieval.search.rerank import Reranker
from retrieval.text.terms import TextProcessor

log = logging.getLogger(__name__)

MAX_QUERIES = 3
MAX_QUERY_CHARS = 300
# A message the model calls small talk is answered without a search only if it is this short:
# a real question misread as a greeting must not lose its answer.
MAX_SMALL_TALK_WORDS = 8
SMALL_TALK_KINDS = ("greeting", "thanks", "goodbye", "smalltalk")


@dataclass(frozen=True)
class QueryPlan:
    retrieve: bool
    queries: tuple[str, ...] = ()  # besides the question itself
    kind: str = ""  # what the message is, when no search is needed

    @classmethod
    def plain(cls) -> QueryPlan:
        return cls(retrieve=True)


def parse_plan(reply: str, question: str) -> QueryPlan:
    """The model's JSON reply as a plan; anything unusable is the plain plan."""
    start, end = reply.find("{"), reply.rfind("}")
    try:
        data: Any = json.loads(reply[start : end + 1]) if 0 <= start < end else None
    except json.JSONDecodeError:
        data = None
    if not isinstance(data, dict):
        log.info("query plan: not a JSON object, searching the question: %.200s", reply)
        return QueryPlan.plain()
    if data.get("retrieve") is False:
        kind = str(data.get("kind", ""))
        if kind in SMALL_TALK_KINDS and len(question.split()) <= MAX_SMALL_TALK_WORDS:
            return QueryPlan(retrieve=False, kind=kind)
        return QueryPlan.plain()
    raw = data.get("queries")
    queries = [
        " ".join(q.split())
        for q in (raw if isinstance(raw, list) else [])
        if isinstance(q, str) and q.strip() and len(q) <= MAX_QUERY_CHARS
    ]
    unique = [q for q in dict.fromkeys(queries) if q.casefold() != question.casefold()]
    return QueryPlan(retrieve=True, queries=tuple(unique[:MAX_QUERIES]))


async def plan_queries(
    llm: LlmClient, prompt: str, question: str, previous: Sequence[str] = ()
) -> QueryPlan:
    """One call: search queries for ``question``, or no search. Never raises a TuvanError.

    ``previous`` are the user's earlier questions, oldest first (the answerer gets a question
    already made standalone by bot.answer.followup, so it passes none).
    """
    user = question
    if previous:
        turns = "\n".join(f"- {q}" for q in previous[-3:])
        user = f"Earlier questions:\n{turns}\n\nMessage: {question}"
    try:
        reply = await llm.complete(
            [{"role": "system", "content": prompt}, {"role": "user", "content": user}]
        )
    except TuvanError as exc:
        log.warning("query plan failed, searching the question as it is: %s", exc)
        return QueryPlan.plain()
    return parse_plan(reply, question)


def small_talk_answer(
    kind: str, language: Language, contact: ContactSettings, *, how: str = "query plan"
) -> Answer:
    """A short, polite reply that states nothing about the university and invites the question;
    a request for a person gets the office's contact and when staff answer. An opener ("ad ơi",
    "cho em hỏi") says a question is coming: the reply only bids the student ask it."""
    if kind == "greeting":
        text = replies.not_a_question_reply(language)
    elif kind == "human":
        text = replies.person_reply(contact, language)
    elif language == "vi":
        text = {
            "thanks": "Không có gì ạ! Bạn cần hỏi thêm về tuyển sinh cứ nhắn cho mình nhé.",
            "opener": "Chào bạn, bạn cứ hỏi nhé, mình đang nghe đây.",
            "goodbye": "Chào bạn, chúc bạn một ngày tốt lành! Cần gì cứ nhắn cho mình nhé.",
        }.get(kind, replies.not_a_question_reply(language))
    else:
        text = {
            "thanks": "You're welcome! Ask me anything else about admissions.",
            "opener": "Hi! Go ahead and ask, I'm listening.",
            "goodbye": "Goodbye, and good luck! Write again any time.",
        }.get(kind, replies.not_a_question_reply(language))
    return Answer(
        tier="fallback",
        answer=text,
        language=language,
        reason=f"no search needed: {kind} ({how})",
        why={"small_talk": kind},
        wants_staff=kind == "human",
    )


@dataclass(frozen=True)
class PlannedSearch:
    """What searching a plan needs (the answerer's parts, without importing the answerer)."""

    embedder: Embedder
    processor: TextProcessor
    settings: SearchSettings
    reranker: Reranker | None = None


async def search_plan(
    session: AsyncSession,
    how: PlannedSearch,
    plan: QueryPlan,
    question: str,
    vector: np.ndarray[Any, Any],
    terms: Sequence[str],
    *,
    limit: int,
) -> list[Hit]:
    """The question and each planned query searched, the rankings fused by RRF.

    Every hit's ``similarity`` is its cosine to the question (what t_doc is held to); its
    ``score`` the fused one.
    """
    rankings = [
        await search_chunks(
            session,
            vector,
            terms,
            how.settings,
            limit=limit,
            query_text=question,
            reranker=how.reranker,
        )
    ]
    if plan.queries:
        expanded = [how.processor.expand_query(q) for q in plan.queries]
        vectors = await embed_off_loop(how.embedder.embed_queries, expanded)
        for query, query_vector in zip(plan.queries, vectors, strict=True):
            rankings.append(
                await search_chunks(
                    session,
                    query_vector,
                    how.processor.query_terms(query),
                    how.settings,
                    limit=limit,
                    query_text=query,
                    reranker=how.reranker,
                )
            )
    fused = rrf([[h.chunk_id for h in ranking] for ranking in rankings], how.settings.rrf_k)
    by_id: dict[int, Hit] = {}
    for ranking in rankings:
        for h in ranking:
            by_id.setdefault(h.chunk_id, h)
    similarity = await chunk_similarities(session, vector, list(by_id))
    hits = [
        replace(h, score=fused[cid], similarity=similarity.get(cid, h.similarity))
        for cid, h in by_id.items()
    ]
    hits.sort(key=lambda h: (-h.score, h.chunk_id))
    return diversify(hits, how.settings.max_chunks_per_doc)[:limit]
