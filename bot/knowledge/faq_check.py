"""The FAQ self-check (2/6): what staff should fix before students meet it.

Every phrasing of an entry (its question and its variants) is asked the way a student would
type it, except that the verbatim match is left out: asked word for word, a stored phrasing
always answers its own entry (retrieval.faq), so the check asks what happens when it is typed a
little differently. Three problems are reported:

- **not answered by its entry**: tier 1 abstains (its scorer is not sure enough for this FAQ's
  threshold, or the school's contrasts set the entry apart) and the entry is not even tier 2's
  first passage; the phrasing works only word for word. A phrasing tier 1 is merely unsure of
  while the entry is the one tier 2 quotes first (cited as the entry) is no problem: it is
  counted apart (``quoted``), since the student reads the entry's own sentences;
- **answered by another entry**: tier 1 gives another entry's answer, the two entries are
  confusable (one's phrasing is matched by the other);
- **confusable**: it answers its own entry, but another entry with another answer would take
  it if this one were not there;
- **refused by the guard**: the guard reads in the phrasing something the entry does not say
  or contradicts ("Câu hỏi hỏi về học phí nhưng mục này không nói về học phí");
- **a near miss answered** (1/4): the entry's question with one value changed for another the
  knowledge base knows (another campus, major, programme: retrieval.faq.near_misses) still gets
  this entry's answer.

`tuvan faq import` prints a summary line; the admin's FAQ editor shows the entry's problems in
plain Vietnamese; `tuvan faq check` lists them all.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import selectinload

from bot.answer.answerer import Answerer
from bot.answer.lookup import faq_passage, passage_floor
from bot.db.models import FaqEntry, FaqStatus
from retrieval.faq.candidates import FaqCandidate
from retrieval.faq.decision import FaqDecision
from retrieval.faq.near_misses import known_values, near_misses

# A probability the scorer gives another entry at which staff are told of it: more likely right
# than not, so the two entries cannot be told apart by this phrasing.
LOOK_ALIKE = 0.5

Problem = Literal["unanswered", "other_entry", "confusable", "guard", "near_miss"]


@dataclass(frozen=True)
class PhrasingProblem:
    faq_id: int
    external_id: str | None
    phrasing: str
    problem: Problem
    detail: str  # why, in the trace's words (the CLI, the admin in English)
    staff_detail: str  # why, in plain Vietnamese (the admin)
    other_id: int | None = None  # the entry that answered it instead
    other_question: str | None = None


@dataclass(frozen=True)
class FaqCheck:
    entries: int
    phrasings: int
    problems: tuple[PhrasingProblem, ...]
    quoted: int = 0  # phrasings tier 2 answers by quoting their own entry first

    def count(self, problem: Problem) -> int:
        return sum(p.problem == problem for p in self.problems)

    @property
    def summary(self) -> str:
        """One line for the CLI."""
        return (
            f"self-check: {self.entries} entries, {self.phrasings} phrasings; "
            f"{self.quoted} quoted from their entry in tier 2 (tier 1 not sure enough), "
            f"{self.count('unanswered')} not answered by their entry, "
            f"{self.count('other_entry')} answered by another entry, "
            f"{self.count('confusable')} confusable with another entry, "
            f"{self.count('guard')} refused by the guard, "
            f"{self.count('near_miss')} near misses answered"
        )


async def check_entries(
    answerer: Answerer, session: AsyncSession, faq_ids: Sequence[int] | None = None
) -> FaqCheck:
    """Check the phrasings of the given published entries (all of them when None)."""
    query = (
        select(FaqEntry)
        .where(FaqEntry.status == FaqStatus.published)
        .options(selectinload(FaqEntry.variants))
        .order_by(FaqEntry.id)
    )
    if faq_ids is not None:
        query = query.where(FaqEntry.id.in_(list(faq_ids)))
    entries = (await session.scalars(query)).all()
    problems: list[PhrasingProblem] = []
    phrasings = quoted = 0
    judge = await answerer.judge(session)
    t_doc = (await answerer.thresholds(session)).t_doc
    floor = passage_floor(answerer.parts)
    lexicon = judge.lexicon
    texts = [f"{e.question}\n{e.answer}" for e in lexicon.entries.values()]
    known = known_values(judge.guard, [*texts, *lexicon.headings]) if judge.guard else {}
    for entry in entries:
        for phrasing in dict.fromkeys([entry.question, *(v.text for v in entry.variants)]):
            phrasings += 1
            read = await answerer.read(session, phrasing)
            decision = await answerer.match_faq(session, *read, verbatim=False)
            found = _problem(entry, phrasing, decision)
            if found is not None and _quoted(entry, decision, t_doc, floor, found):
                quoted += 1
                continue
            if found is None:
                alone = await answerer.match_faq(session, *read, verbatim=False, without=entry.id)
                found = _rival(entry, phrasing, alone)
            if found is not None:
                problems.append(found)
        # Questions one value away (another campus, major, programme this FAQ knows) must not
        # get this entry's answer.
        for miss in near_misses(entry.question, lexicon.contrasts, judge.guard, known):
            read = await answerer.read(session, miss.text)
            taken = (await answerer.match_faq(session, *read, verbatim=False)).accepted
            if taken is not None and (
                taken.faq_id == entry.id or _same(taken.answer, entry.answer)
            ):
                problems.append(
                    PhrasingProblem(
                        entry.id,
                        entry.external_id,
                        miss.text,
                        "near_miss",
                        f"a question one value away ({miss.changed}) gets this entry's answer",
                        f"câu hỏi khác một chi tiết ({miss.changed}) vẫn nhận câu trả lời "
                        "của mục này",
                    )
                )
    return FaqCheck(len(entries), phrasings, tuple(problems), quoted)


def _quoted(
    entry: FaqEntry, decision: FaqDecision, t_doc: float, floor: float, found: PhrasingProblem
) -> bool:
    """Tier 1 was only unsure, with no look-alike in the way, and the entry is the passage tier 2
    quotes first (bot.answer.lookup.faq_passage): the student still reads the entry."""
    if found.problem != "unanswered" or found.other_id is not None:
        return False
    passage = faq_passage(decision, t_doc, floor)
    return passage is not None and passage.faq_id == entry.id


def _same(a: str, b: str) -> bool:
    return " ".join(a.split()) == " ".join(b.split())


def _rival(entry: FaqEntry, phrasing: str, alone: FaqDecision) -> PhrasingProblem | None:
    """The entry with another answer that takes ``phrasing`` when ``entry`` is left out."""
    other = alone.accepted
    if other is None or _same(other.answer, entry.answer):
        return None
    return PhrasingProblem(
        entry.id,
        entry.external_id,
        phrasing,
        "confusable",
        f"entry {other.faq_id} would answer it without this one: {other.question}",
        f"mục #{other.faq_id} cũng nhận cách hỏi này",
        other.faq_id,
        other.question,
    )


def _problem(entry: FaqEntry, phrasing: str, decision: FaqDecision) -> PhrasingProblem | None:
    accepted = decision.accepted
    if accepted is not None and (
        accepted.faq_id == entry.id or _same(accepted.answer, entry.answer)
    ):
        return None
    if accepted is not None:
        return PhrasingProblem(
            entry.id,
            entry.external_id,
            phrasing,
            "other_entry",
            f"answered by entry {accepted.faq_id}: {accepted.question}",
            f"được trả lời bằng mục #{accepted.faq_id}",
            accepted.faq_id,
            accepted.question,
        )
    own = next((v for v in decision.verdicts if v.candidate.faq_id == entry.id), None)
    if own is not None and own.guard is not None and not own.guard.ok:
        return PhrasingProblem(
            entry.id,
            entry.external_id,
            phrasing,
            "guard",
            own.guard.reason,
            own.guard.staff_reason,
        )
    reason = own.reason if own is not None else "the entry is not among the candidates"
    staff = _staff_reason(own.code if own is not None else None)
    look_alike = _look_alike(entry, decision)
    if look_alike is None:
        return PhrasingProblem(entry.id, entry.external_id, phrasing, "unanswered", reason, staff)
    # Tier 1 abstains because another entry with another answer fits the phrasing as well:
    # staff merge the two or tell them apart.
    return PhrasingProblem(
        entry.id,
        entry.external_id,
        phrasing,
        "unanswered",
        f"{reason}; entry {look_alike.faq_id} with another answer fits it too: "
        f"{look_alike.question}",
        f"{staff}: mục #{look_alike.faq_id} có câu trả lời khác cũng khớp cách hỏi này",
        look_alike.faq_id,
        look_alike.question,
    )


def _look_alike(entry: FaqEntry, decision: FaqDecision) -> FaqCandidate | None:
    """The entry with another answer the scorer finds more likely right than not for this
    phrasing, if any: why tier 1 could not choose."""
    others = [
        v
        for v in decision.verdicts
        if v.candidate.faq_id != entry.id
        and not _same(v.candidate.answer, entry.answer)
        and (v.probability or 0.0) >= LOOK_ALIKE
    ]
    if not others:
        return None
    return max(others, key=lambda v: v.probability or 0.0).candidate


# What became of the entry (retrieval.faq.decision's code), in the staff's words.
_STAFF_REASONS = {
    "unsure": "tuvan chưa đủ chắc chắn mục này là câu trả lời đúng",
    "contrast": "câu hỏi nêu một chi tiết khác với mục này (cơ sở, hệ, đợt…)",
    "same_phrasing": "một mục khác có câu trả lời khác dùng đúng cách hỏi này",
}


def _staff_reason(code: str | None) -> str:
    return _STAFF_REASONS.get(code or "", "mục này không nằm trong các mục gần nhất")
