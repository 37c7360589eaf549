"""What an answer is, and the fixed texts around it, in the question's language."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any

from bot.core.branding import brand_texts
from bot.core.citations import RELATED_HEADING, SOURCES_HEADING, Citation, citation_line
from bot.core.settings import AnswerSettings, BrandSettings, ContactSettings
from bot.core.types import Language, Tier

if TYPE_CHECKING:
    from bot.answer.read import Read


@dataclass
class Answer:
    tier: Tier
    answer: str
    language: Language
    citations: list[Citation] = field(default_factory=list)
    # A fallback's sources that may be related (3/6): offered as links, no fact taken from them.
    related: list[Citation] = field(default_factory=list)
    faq_id: int | None = None
    faq_external_id: str | None = None
    chunk_ids: list[int] = field(default_factory=list)
    scores: dict[str, Any] = field(default_factory=dict)
    timings_ms: dict[str, float] = field(default_factory=dict)
    reason: str = ""  # why this tier answered (or why the ones before it did not)
    # The same as data, for the admin to say in staff's words (bot.answer.why).
    why: dict[str, Any] = field(default_factory=dict)
    wants_staff: bool = False  # the student asked for a person: the conversation waits for one
    # How the question was read: "restored" (marks put back, or None), its "parts" if several.
    query: dict[str, Any] = field(default_factory=dict)
    # The scorer's probability that this answer is right (tier 1 or 2), None where nothing
    # was decided by a scorer (the fallback, small talk); staff see the unsure ones.
    confidence: float | None = None
    # How the message was read (bot.answer.followup.Reading.to_json): alone or with context.
    reading: dict[str, Any] | None = None
    # What "Try it" and the evaluation need to explain the decision; not part of the reply.
    trace: dict[str, Any] = field(default_factory=dict)
    # The question as read once and used by every step (bot.answer.read); not stored as such.
    read: Read | None = field(default=None, repr=False, compare=False)

    def to_json(self) -> dict[str, Any]:
        # ``read`` is typed, not data: ``reading`` holds what staff see of it.
        data = asdict(replace(self, read=None, trace={}))
        data.pop("trace")
        data.pop("read")
        return data


def sources_block(citations: list[Citation], language: Language) -> str:
    heading = SOURCES_HEADING[language]
    return "\n".join([heading, *(citation_line(c, language) for c in citations)])


def documents_reply(
    body: str, citations: list[Citation], language: Language, settings: AnswerSettings
) -> str:
    disclaimer = settings.disclaimer_docs_vi if language == "vi" else settings.disclaimer_docs_en
    return f"{body}\n\n{sources_block(citations, language)}\n\n{disclaimer}"


def extractive_intro(language: Language) -> str:
    if language == "vi":
        return "Theo tài liệu tuyển sinh của trường:"
    return "According to the university's admission documents:"


def part_not_found(language: Language, missing: Sequence[str] = ()) -> str:
    """The line closing a multi-part answer when the documents answer some parts and not
    others: what was not found (``missing``, in the guard's words), or that a part is left.
    Said as what tuvan did not find, never as what the school's documents lack: a search that
    missed a quota must not tell a student the school has none."""
    named = ", ".join(missing)
    if language == "vi":
        if named:
            return f"Mình chưa tìm thấy thông tin về {named} trong tài liệu của trường."
        return (
            "Mình chưa tìm thấy thông tin cho một phần câu hỏi của bạn trong tài liệu của trường."
        )
    if named:
        return f"I did not find anything about {named} in the university's documents."
    return "I did not find an answer to part of your question in the university's documents."


def contact_line(contact: ContactSettings, language: Language) -> str:
    name = contact.name_vi if language == "vi" else contact.name_en
    parts = [p for p in (contact.phone, contact.email, contact.url) if p]
    return f"{name}: {' · '.join(parts)}"


def no_information_reply(contact: ContactSettings, language: Language) -> str:
    if language == "vi":
        text = (
            "Xin lỗi, mình chưa có thông tin đáng tin cậy để trả lời câu hỏi này. "
            "Bạn vui lòng liên hệ trực tiếp để được tư vấn chính xác:"
        )
    else:
        text = (
            "Sorry, I don't have reliable information to answer this question. "
            "Please contact the admissions office for an accurate answer:"
        )
    return f"{text}\n{contact_line(contact, language)}"


def related_block(related: list[Citation], language: Language) -> str:
    heading = RELATED_HEADING[language]
    return "\n".join([heading, *(citation_line(c, language) for c in related)])


def with_related(text: str, related: list[Citation], language: Language) -> str:
    """A fallback reply followed by the sources that may be related, if any."""
    return f"{text}\n\n{related_block(related, language)}" if related else text


def llm_fallback_reply(
    body: str, settings: AnswerSettings, contact: ContactSettings, language: Language
) -> str:
    disclaimer = settings.disclaimer_llm_vi if language == "vi" else settings.disclaimer_llm_en
    return f"{body}\n\n⚠️ {disclaimer}\n{contact_line(contact, language)}"


def not_a_question_reply(language: Language) -> str:
    if language == "vi":
        return (
            "Chào bạn! Mình là trợ lý tư vấn tuyển sinh. Bạn hãy gõ câu hỏi về ngành học, "
            "học phí, phương thức xét tuyển, hạn nộp hồ sơ, học bổng... nhé."
        )
    return (
        "Hello! I'm the admissions assistant. Please type a question about programmes, "
        "tuition, admission methods, deadlines, scholarships and so on."
    )


def person_reply(contact: ContactSettings, language: Language) -> str:
    """The answer to "can I talk to a person?": how to reach the admissions office now. The
    message stays in the conversation, where staff can read it and reply."""
    if language == "vi":
        return (
            "Mình là trợ lý tự động. Bạn có thể gặp cán bộ tư vấn tuyển sinh qua:\n"
            + contact_line(contact, language)
            + "\nTin nhắn của bạn được lưu lại; cán bộ tư vấn thường trả lời tại đây "
            + f"{contact.staff_hours_vi}."
        )
    return (
        "I'm an automated assistant. You can reach an admissions officer at:\n"
        + contact_line(contact, language)
        + "\nYour message is kept; admissions staff usually reply here "
        + f"{contact.staff_hours_en}."
    )


def greeting_reply(contact: ContactSettings, brand: BrandSettings, language: Language) -> str:
    """The answer to /start, a follow, a "get started": the university's welcome (who this is,
    what to ask), how to reach a person, and the privacy note with its link. The suggested
    questions go with it as buttons where the channel has them (``greeting_suggestions``)."""
    texts = brand_texts(brand, language)
    person = "Cần gặp cán bộ tư vấn:" if language == "vi" else "To reach a person:"
    return (
        f"{texts.welcome}\n{person}\n{contact_line(contact, language)}\n\n"
        f"🔒 {texts.privacy_note} {texts.privacy_url}"
    )


def greeting_suggestions(brand: BrandSettings, language: Language) -> list[str]:
    """The questions offered with the greeting, in its language."""
    return list(brand_texts(brand, language).suggestions)


def text_only_reply(language: Language) -> str:
    if language == "vi":
        return (
            "Xin lỗi, hiện mình chỉ đọc được tin nhắn chữ. Bạn gõ câu hỏi giúp mình nhé "
            "(ví dụ: “Học phí ngành Công nghệ thông tin là bao nhiêu?”)."
        )
    return (
        "Sorry, I can only read text messages for now. Please type your question "
        "(for example: “What is the tuition for Computer Science?”)."
    )


def answer_body(answer: Answer) -> str:
    """What the reply says, without its sources block (titles and URLs there would match short
    key facts such as a year)."""
    if answer.tier not in ("documents", "faq"):
        return answer.answer
    for heading in (f"\n\n{h}" for h in SOURCES_HEADING.values()):
        if heading in answer.answer:
            return answer.answer.split(heading, 1)[0]
    return answer.answer
