"""How tuvan read a student's message, in the staff's words: from ``details["reading"]``, stored
with each bot reply by the answerer, never from English.

The stored value is parsed at the edge into a ``Reading`` (``parse_reading``): older replies
have none, and a malformed one is ignored (None), so a page never fails on it. ``sentences``
then says it:

- read alone: "Đọc riêng tin nhắn này.", with why earlier questions were not used if it says
  ("Không dùng câu hỏi trước: đã cách quá lâu.");
- read with earlier questions: what the message lacked and what was taken from which question
  ("Tin nhắn không nói ngành nên lấy ngành “khmt” từ câu hỏi trước: “chỉ tiêu ngành khmt năm
  nay bn”."), then the question actually answered when it is not the message itself;
- and, when stored (since 1/4's reading made once, bot.answer.read), the words of the question
  that named each value it was answered about ("Câu hỏi nêu: điều được hỏi “hp” (học phí),
  ngành “cntt” (Công nghệ thông tin).").

tests/admin/test_readings.py holds the cases, one row each.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Literal, TypeVar, get_args

from admin.i18n import Translator, add_strings

Mode = Literal["alone", "context"]
Lacked = Literal["no_attribute", "no_subject", "reference", "follow_up"]
Stopped = Literal["small_talk", "pause", "new_topic", "answered_alone"]
MODES: tuple[Mode, ...] = get_args(Mode)
LACKED: tuple[Lacked, ...] = get_args(Lacked)
STOPPED: tuple[Stopped, ...] = get_args(Stopped)
_T = TypeVar("_T", bound=str)

add_strings(
    {
        "reading.title": ("Cách đọc tin nhắn", "How the message was read"),
        "reading.alone": ("Đọc riêng tin nhắn này.", "This message was read on its own."),
        "reading.try_alone": ("Đọc riêng câu hỏi này.", "This question is read on its own."),
        "reading.stopped.pause": (
            "Không dùng câu hỏi trước: đã cách quá lâu.",
            "The earlier questions were not used: they were too long ago.",
        ),
        "reading.stopped.small_talk": (
            "Không dùng câu hỏi trước: tin nhắn trước đó là lời chào, cảm ơn hay tạm biệt.",
            "The earlier questions were not used: the message before was a greeting, thanks "
            "or goodbye.",
        ),
        "reading.stopped.new_topic": (
            "Không dùng câu hỏi trước: tin nhắn này hỏi sang chuyện khác.",
            "The earlier questions were not used: this message asks about something else.",
        ),
        "reading.stopped.answered_alone": (
            "Không dùng câu hỏi trước: đọc riêng, tin nhắn này đã có câu trả lời.",
            "The earlier questions were not used: read on its own, this message was answered.",
        ),
        "reading.lacked.no_subject": ("Tin nhắn không nói {label}", "The message names no {label}"),
        "reading.lacked.no_attribute": (
            "Tin nhắn không tự hỏi điều gì",
            "The message asks nothing by itself",
        ),
        "reading.lacked.reference": (
            "Tin nhắn nhắc tới {label} đã nói trước đó",
            "The message refers to the {label} named before",
        ),
        "reading.lacked.follow_up": (
            "Tin nhắn hỏi tiếp câu trước",
            "The message follows up on the question before",
        ),
        "reading.took": (
            "{lacked} nên lấy {label} “{words}” từ câu hỏi trước{source}.",
            "{lacked}, so {label} “{words}” was taken from an earlier question{source}.",
        ),
        "reading.took_plain": (
            "Lấy {label} “{words}” từ câu hỏi trước{source}.",
            "{label} “{words}” was taken from an earlier question{source}.",
        ),
        "reading.source": (": “{text}”", ": “{text}”"),
        "reading.context": (
            "Tin nhắn được đọc cùng câu hỏi trước.",
            "The message was read with the earlier questions.",
        ),
        "reading.asked": ("Câu được trả lời: “{text}”.", "The question answered: “{text}”."),
        "reading.something": ("thông tin", "information"),
        "reading.said": ("Câu hỏi nêu: {items}.", "The question names: {items}."),
    }
)


@dataclass(frozen=True)
class Taken:
    """One thing taken from an earlier question: of which kind (``slot``, e.g. "major", and its
    Vietnamese ``label``, "ngành"), its words, and the question they came from."""

    slot: str
    label: str
    words: str
    from_text: str


@dataclass(frozen=True)
class Said:
    """A value the question answered named (``value``, of the kind ``label``), and its words."""

    label: str
    value: str
    words: str


@dataclass(frozen=True)
class Reading:
    """How a message was read: alone, or with ``taken`` from earlier questions because it
    ``lacked`` something; ``asked`` is the text actually answered."""

    mode: Mode
    asked: str
    taken: tuple[Taken, ...] = ()
    lacked: Lacked | None = None
    stopped: Stopped | None = None  # why earlier questions were not used, when read alone
    said: tuple[Said, ...] = ()  # replies stored before 1/4's reading made once have none


def _text(value: object) -> str:
    return value.strip() if isinstance(value, str) else ""


def _one_of(value: object, allowed: tuple[_T, ...]) -> _T | None:
    return next((a for a in allowed if a == value), None)


def _taken(value: object) -> Taken | None:
    if not isinstance(value, Mapping):
        return None
    words = _text(value.get("words"))
    if not words:
        return None
    slot = _text(value.get("slot"))
    return Taken(slot, _text(value.get("label")), words, _text(value.get("from_text")))


def _said(value: object) -> Said | None:
    if not isinstance(value, Mapping):
        return None
    words, said = _text(value.get("words")), _text(value.get("value"))
    if not words or not said:
        return None
    return Said(_text(value.get("label")) or _text(value.get("slot")), said, words)


def parse_reading(value: object) -> Reading | None:
    """``details["reading"]`` as a ``Reading``; None when absent or not one (a missing optional
    part is left out, an unknown ``why`` or ``stopped`` read as none)."""
    if not isinstance(value, Mapping):
        return None
    mode = _one_of(value.get("mode"), MODES)
    if mode is None:
        return None
    raw = value.get("taken")
    taken = [_taken(item) for item in (raw if isinstance(raw, list) else [])]
    named = value.get("said")
    said = [_said(item) for item in (named if isinstance(named, list) else [])]
    return Reading(
        mode=mode,
        asked=_text(value.get("asked")),
        taken=tuple(item for item in taken if item is not None),
        lacked=_one_of(value.get("why"), LACKED),
        stopped=_one_of(value.get("stopped"), STOPPED),
        said=tuple(item for item in said if item is not None),
    )


def with_said(reading: Reading, said: Sequence[Mapping[str, str]]) -> Reading:
    """``reading`` naming the words that said each value (``said``, as stored with an answer)."""
    found = tuple(item for item in (_said(value) for value in said) if item is not None)
    return replace(reading, said=found) if found else reading


def _took(t: Translator, item: Taken, lacked: Lacked | None) -> str:
    label = item.label or t("reading.something")
    source = t("reading.source", text=item.from_text) if item.from_text else ""
    if lacked is None:
        return t("reading.took_plain", label=label, words=item.words, source=source)
    because = t(f"reading.lacked.{lacked}", label=label)
    return t("reading.took", lacked=because, label=label, words=item.words, source=source)


def sentences(
    t: Translator,
    reading: Reading | None,
    message: str | None = None,
    *,
    alone: str = "reading.alone",
) -> list[str]:
    """What a page says of ``reading`` (nothing when there is none); ``message`` is what the
    student wrote, so the question answered is named only when it differs; ``alone`` the
    sentence for a message read on its own (Try it says "câu hỏi")."""
    if reading is None:
        return []
    if reading.mode == "alone":
        said = [t(alone)]
        if reading.stopped is not None:
            said.append(t(f"reading.stopped.{reading.stopped}"))
        return [*said, *_named(t, reading)]
    said = [_took(t, item, reading.lacked) for item in reading.taken] or [t("reading.context")]
    if reading.asked and reading.asked != (message or "").strip():
        said.append(t("reading.asked", text=reading.asked))
    return [*said, *_named(t, reading)]


def _named(t: Translator, reading: Reading) -> list[str]:
    """The sentence naming the words that said each value (none when none were stored)."""
    if not reading.said:
        return []
    items = [
        f"{s.label} “{s.words}”" + (f" ({s.value})" if s.words.lower() != s.value.lower() else "")
        for s in reading.said
    ]
    return [t("reading.said", items=", ".join(items))]
