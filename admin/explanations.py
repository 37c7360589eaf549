"""Why a reply is what it is, in the staff's words: read from the structured ``why`` stored with
it (bot.answer.why), never by translating the English ``reason``.

``explain_reply`` gives what a page shows in plain words, the outcome ("Trả lời từ tài liệu:
trích nguyên văn (3 đoạn).", "Chưa trả lời được: …"), apart from what it keeps folded under
"Chi tiết kỹ thuật": how the FAQ entries were weighed (the guard's reasons: "Mục #25: câu hỏi
hỏi về … nhưng mục này không nói về …", which read as engine talk to an admissions officer)
and the figures (similarities, thresholds, the scorer's confidence, the English reason, the time
taken). A reply stored before ``why`` existed is explained by its tier alone.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from admin.confidence import confidence_of, percent
from admin.i18n import Translator, add_strings
from bot.conversations.store import HELD_ERROR

add_strings(
    {
        "why.technical": ("Chi tiết kỹ thuật", "Technical details"),
        "why.faq.accepted": (
            "Trả lời từ câu hỏi thường gặp #{id}",
            "Answered from FAQ entry #{id}",
        ),
        "why.faq.verbatim": (
            "Trả lời từ câu hỏi thường gặp #{id} (hỏi đúng một cách hỏi đã lưu)",
            "Answered from FAQ entry #{id} (asked exactly as one of its phrasings)",
        ),
        "why.faq.none": (
            "Chưa có câu hỏi thường gặp nào gần với câu hỏi này",
            "No FAQ entry comes near this question",
        ),
        "why.faq.similarity": (
            "Không tìm thấy câu hỏi đủ giống (gần nhất: mục #{id})",
            "No FAQ entry is close enough (the nearest: #{id})",
        ),
        "why.faq.missing": (
            "Mục #{id}: câu hỏi hỏi về {values} nhưng mục này không nói về {values}",
            "Entry #{id}: the question asks about {values} but the entry does not say it",
        ),
        "why.faq.conflict": (
            "Mục #{id}: câu hỏi nói về {asked} ({label}), mục này nói về {said}",
            "Entry #{id}: the question is about {asked} ({label}), the entry about {said}",
        ),
        "why.faq.conflict_unnamed": (
            "Mục #{id} chỉ dành cho {said} ({label}), câu hỏi không nói tới",
            "Entry #{id} is only about {said} ({label}), which the question does not name",
        ),
        "why.faq.conflict_unsaid": (
            "Mục #{id} không nói về {asked} ({label}) mà câu hỏi nhắc tới",
            "Entry #{id} does not name {asked} ({label}), which the question does",
        ),
        "why.faq.coverage": (
            "Mục #{id} không chứa đủ ý của câu hỏi (thiếu: {words})",
            "Entry #{id} does not hold enough of the question (missing: {words})",
        ),
        "why.faq.ambiguous": (
            "Mục #{id} và mục #{rival} có câu trả lời khác nhau mà giống câu hỏi gần như nhau",
            "Entries #{id} and #{rival} have different answers and match about equally",
        ),
        "why.faq.same_phrasing": (
            "Mục #{id} và mục #{rival} có chung một cách hỏi nhưng câu trả lời khác nhau",
            "Entries #{id} and #{rival} share a phrasing but have different answers",
        ),
        "why.faq.lower": ("Mục #{id} kém giống hơn mục trên", "Entry #{id} ranks below"),
        "why.faq.unsure": (
            "Mục #{id} gần nhất nhưng tuvan chưa đủ chắc chắn để trả lời nguyên văn",
            "Entry #{id} is the likeliest, but tuvan is not sure enough to answer it verbatim",
        ),
        "why.faq.contrast": (
            "Mục #{id}: câu hỏi nói “{asked}”, mục này nói “{said}”",
            "Entry #{id}: the question says “{asked}”, the entry “{said}”",
        ),
        "why.docs.extractive": (
            "Trả lời từ tài liệu: trích nguyên văn ({n} đoạn)",
            "Answered from the documents: quoted word for word ({n} passages)",
        ),
        "why.docs.by_part": (
            "Trả lời từ tài liệu, từng ý của câu hỏi một ({n} đoạn)",
            "Answered from the documents, one part of the question at a time ({n} passages)",
        ),
        "why.docs.facts_by_part": (
            "Trả lời từng ý: ý nào bảng số liệu của trường có thì lấy nguyên giá trị trong bảng, "
            "ý còn lại trích từ tài liệu ({n} đoạn)",
            "Answered part by part: the school's tables give the parts they hold, as they write "
            "them; the documents are quoted for the rest ({n} passages)",
        ),
        "why.docs.llm": (
            "Trả lời từ tài liệu: mô hình ngôn ngữ viết lại, có trích nguồn ({n} đoạn)",
            "Answered from the documents: written by the language model, cited ({n} passages)",
        ),
        "why.docs.facts": (
            "Trả lời từ tài liệu: giá trị trong bảng số liệu của trường, giữ nguyên như bảng "
            "ghi ({n} nguồn)",
            "Answered from the documents: values of the school's tables, as the tables write "
            "them ({n} sources)",
        ),
        "why.docs.faq_passage": (
            "Đoạn đầu tiên là câu trả lời của mục #{id}",
            "The first passage is the answer of entry #{id}",
        ),
        "why.docs.below": (
            "Không có đoạn tài liệu nào đủ giống câu hỏi",
            "No document passage is close enough to the question",
        ),
        "why.docs.out_of_scope": (
            "Câu hỏi nói về {values} ({label}) nhưng tài liệu tìm được không nói về điều này",
            "The question names {values} ({label}), which the passages found never do",
        ),
        "why.docs.abstained": (
            "Tìm được {n} đoạn tài liệu liên quan nhưng không đoạn nào nói điều được hỏi; "
            "gửi kèm các nguồn có thể liên quan",
            "{n} related passages were found, none saying what is asked; the sources were "
            "offered as possibly related",
        ),
        "why.docs.not_cited": (
            "Câu trả lời do mô hình ngôn ngữ viết không trích đúng nguồn nên bị bỏ",
            "The language model's answer cited no source it was given, so it was dropped",
        ),
        "why.fallback": (
            "Chưa trả lời được: gửi thông tin liên hệ của phòng tuyển sinh",
            "Not answered: the admissions office's contacts were sent",
        ),
        "why.not_a_question": (
            "Tin nhắn không phải câu hỏi: trả lời lời chào",
            "The message asks nothing: a greeting was sent",
        ),
        "why.small_talk.greeting": ("Lời chào: trả lời lời chào", "A greeting: greeted back"),
        "why.small_talk.thanks": ("Lời cảm ơn: trả lời lịch sự", "Thanks: a polite reply"),
        "why.small_talk.goodbye": ("Lời tạm biệt: chào lại", "A goodbye: said goodbye"),
        "why.small_talk.opener": (
            "Lời mở đầu, chưa hỏi gì: mời người hỏi cứ hỏi",
            "An opener, nothing asked yet: invited the question",
        ),
        "why.small_talk.human": (
            "Người hỏi muốn gặp cán bộ tư vấn: gửi thông tin liên hệ",
            "The student asked for a person: the contacts were sent",
        ),
        "why.small_talk.other": (
            "Không cần tìm kiếm: trả lời lịch sự",
            "Nothing to search: a polite reply",
        ),
        "why.error": (
            "Có lỗi khi trả lời: gửi thông tin liên hệ của phòng tuyển sinh",
            "Answering failed: the admissions office's contacts were sent",
        ),
        "why.skip.staff": (
            "Nhân viên đang tiếp quản: trợ lý không trả lời tin nhắn này",
            "Staff had taken over: the assistant did not answer this message",
        ),
        "why.skip.held": (
            "Tạm giữ: quá nhiều câu hỏi của hội thoại này đang chờ trả lời",
            "Held: too many questions of this conversation were waiting",
        ),
        "why.skip.other": (
            "Có trục trặc khi xử lý tin nhắn này",
            "Something went wrong with this message",
        ),
        "why.fig.error": ("Lỗi", "Error"),
        "why.tier.faq": ("Trả lời từ câu hỏi thường gặp", "Answered from the FAQ"),
        "why.tier.documents": ("Trả lời từ tài liệu", "Answered from the documents"),
        "why.tier.fallback": ("Chưa trả lời được", "Not answered"),
        "why.fig.score": ("Điểm", "Score"),
        "why.fig.score_value": ("{score} (ngưỡng {threshold})", "{score} (threshold {threshold})"),
        "why.fig.reason": ("Ghi chú của hệ thống", "System note"),
        "why.fig.time": ("Thời gian trả lời", "Time to answer"),
        "why.fig.ms": ("{ms} ms", "{ms} ms"),
    }
)

SHOWN_STEPS = 3  # FAQ entries explained under a reply; the rest are in Try it's table


@dataclass(frozen=True)
class Explanation:
    """What a page says of one reply: the outcome in plain words (``sentences``), and what it
    keeps folded: how the FAQ entries were weighed (``steps``) and the figures."""

    sentences: list[str]
    figures: list[tuple[str, str]] = field(default_factory=list)
    steps: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return ". ".join(s.rstrip(".") for s in self.sentences) + "." if self.sentences else ""


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _names(values: Any) -> str:
    return ", ".join(str(v) for v in _list(values))


def step_sentences(t: Translator, step: Mapping[str, Any]) -> list[str]:
    """What became of one FAQ entry tier 1 weighed (bot.answer.why's step), in words."""
    code = str(step.get("result") or "")
    entry = step.get("faq_id", "?")
    if code == "guard":
        said = [
            t("why.faq.missing", id=entry, values=_names(m.get("values")))
            for m in map(_mapping, _list(step.get("missing")))
        ]
        for c in map(_mapping, _list(step.get("conflicts"))):
            asked, named = _names(c.get("question")), _names(c.get("entry"))
            label = str(c.get("label") or c.get("category") or "")
            if asked and named:
                said.append(t("why.faq.conflict", id=entry, asked=asked, said=named, label=label))
            elif asked:
                said.append(t("why.faq.conflict_unsaid", id=entry, asked=asked, label=label))
            else:
                said.append(t("why.faq.conflict_unnamed", id=entry, said=named, label=label))
        return said or [t("why.faq.similarity", id=entry)]
    if code == "coverage":
        return [t("why.faq.coverage", id=entry, words=_names(step.get("unsaid")))]
    if code == "contrast":
        return [
            t(
                "why.faq.contrast",
                id=entry,
                asked=f"{c.get('head', '')} {c.get('question', '')}",
                said=f"{c.get('head', '')} {c.get('entry', '')}",
            )
            for c in map(_mapping, _list(step.get("contrast")))
        ] or [t("why.faq.unsure", id=entry)]
    if code == "unsure":
        return [t("why.faq.unsure", id=entry)]
    if code in ("ambiguous", "same_phrasing", "verbatim", "accepted", "similarity", "lower"):
        return [t(f"why.faq.{code}", id=entry, rival=step.get("rival_id", "?"))]
    return [t("why.faq.similarity", id=entry)]


def _documents(t: Translator, docs: Mapping[str, Any]) -> list[str]:
    result = str(docs.get("result") or "")
    n = docs.get("passages", 0)
    if result == "answered":
        how = str(docs.get("how") or "extractive")
        return [t(f"why.docs.{how}" if t.knows(f"why.docs.{how}") else "why.docs.extractive", n=n)]
    if result == "out_of_scope":
        return [
            t("why.docs.out_of_scope", values=_names(named.get("values")), label=named.get("label"))
            for named in map(_mapping, _list(docs.get("named")))
        ]
    if result in ("abstained", "not_cited"):
        return [t(f"why.docs.{result}", n=n)]
    return [t("why.docs.below")]


def summary(t: Translator, tier: str | None, why: Mapping[str, Any]) -> list[str]:
    """The sentences that say, in plain words, what became of the question: which entry or the
    documents answered it, or why nothing could (``weighing`` says how the FAQ was read)."""
    if why.get("error"):
        return [t("why.error")]
    if why.get("not_a_question"):
        return [t("why.not_a_question")]
    if why.get("small_talk"):
        key = f"why.small_talk.{why['small_talk']}"
        return [t(key if t.knows(key) else "why.small_talk.other")]
    if "faq" not in why:  # stored before replies said why
        key = f"why.tier.{tier}"
        return [t(key)] if t.knows(key) else []
    steps = [_mapping(s) for s in _list(why.get("faq"))]
    if steps and steps[0].get("result") in ("accepted", "verbatim"):
        return step_sentences(t, steps[0])
    said = _documents(t, _mapping(why.get("documents")))
    if tier == "fallback":
        said.append(t("why.fallback"))
    return said


def weighing(t: Translator, why: Mapping[str, Any]) -> list[str]:
    """How the nearest FAQ entries were weighed before the documents answered (or nothing did):
    the guard's reasons, for "Chi tiết kỹ thuật"; empty when an entry answered."""
    if "faq" not in why or any(why.get(k) for k in ("error", "not_a_question", "small_talk")):
        return []
    steps = [_mapping(s) for s in _list(why.get("faq"))]
    if steps and steps[0].get("result") in ("accepted", "verbatim"):
        return []
    said = [s for step in steps[:SHOWN_STEPS] for s in step_sentences(t, step)]
    if not steps:
        said.append(t("why.faq.none"))
    faq_passage = _mapping(why.get("documents")).get("faq_passage")
    if faq_passage:
        said.append(t("why.docs.faq_passage", id=faq_passage))
    return said


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def explain_reply(
    t: Translator,
    tier: str | None,
    details: Mapping[str, Any],
    score: float | None = None,
    threshold: float | None = None,
) -> Explanation:
    """A stored reply (its tier and ``details``) explained; ``score`` and ``threshold`` are the
    figures it rests on (admin.conversation_store.reply_score)."""
    figures: list[tuple[str, str]] = []
    if score is not None:
        value = f"{score:.3f}"
        if threshold is not None:
            value = t("why.fig.score_value", score=value, threshold=f"{threshold:.3f}")
        figures.append((t("why.fig.score"), value))
    confidence = confidence_of(details)
    if confidence is not None:
        value = t("confidence.figure_value", pct=percent(confidence))
        figures.append((t("confidence.figure"), value))
    reason = details.get("reason")
    if isinstance(reason, str) and reason:
        figures.append((t("why.fig.reason"), reason))
    total = _number(_mapping(details.get("timings_ms")).get("total"))
    if total is not None:
        figures.append((t("why.fig.time"), t("why.fig.ms", ms=f"{total:.0f}")))
    why = _mapping(details.get("why"))
    return Explanation(summary(t, tier, why), figures, weighing(t, why))


# Errors a message is stored with that staff see often, in their words (the rest: a general
# sentence, the error itself under "Chi tiết kỹ thuật").
_KNOWN_ERRORS = {"staff answering": "why.skip.staff", HELD_ERROR: "why.skip.held"}


def explain_error(t: Translator, error: str) -> Explanation:
    """The error a message was stored with (why it was skipped, or not answered or sent)."""
    known = _KNOWN_ERRORS.get(error)
    if known is not None:
        return Explanation([t(known)])
    return Explanation([t("why.skip.other")], [(t("why.fig.error"), error)])
