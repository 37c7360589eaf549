"""What a staff page must not show, and how the plain-words tests find it: outside a "Chi tiết
kỹ thuật" block, an English diagnostic (``ENGLISH``), the engine's reasoning in Vietnamese (how
the guard weighed an FAQ entry: "Mục #25: câu hỏi hỏi về … nhưng mục này không nói về …") or a
raw score ("0.919"); nor anywhere a Markdown table left as its pipes ("|---|").

A new English phrase to look out for goes in ``ENGLISH``. The guard's sentences are read from
the admin's own words (``GUARD_KEYS``), so a new reason of the guard is looked out for as soon as
it is written.
"""

from __future__ import annotations

import re
import string
from html.parser import HTMLParser
from typing import Any

from admin.app import create_admin_app
from admin.i18n import STRINGS

TECHNICAL = "Chi tiết kỹ thuật"

# English diagnostics a staff page must not show outside "Chi tiết kỹ thuật": the answerer's
# reasons and the guard's, as they are written in bot.answer and retrieval (whole words).
ENGLISH = [
    r"t_faq",
    r"t_doc",
    r"chunks?",
    r"below",
    r"passed",
    r"answered (?:extractive|llm)",
    r"similarity",
    r"near-miss guard",
    r"no conflict",
    r"asked verbatim",
    r"(?:question|FAQ) names",
    r"entry never says",
    r"lower than the",
    r"ambiguous",
    r"no published FAQ entry",
    r"best similarity",
    r"no search needed",
    r"abstained",
    r"error while answering",
    r"staff answering",
    r"held: too many",
    r"fallback",
    r"not a question",
    # details["confidence"] and details["reading"]: its keys and values
    r"confidence",
    r"context",
    r"alone",
    r"no_subject",
    r"no_attribute",
    r"follow_up",
    r"new_topic",
    r"answered_alone",
    r"small_talk",
    r"from_text",
]
_ENGLISH = re.compile(r"\b(?:" + "|".join(ENGLISH) + r")\b", re.IGNORECASE)

# The admin's sentences for how the guard weighed an FAQ entry that did not answer (and which
# entry's answer a passage was): the engine's reasoning, for "Chi tiết kỹ thuật" only. An entry
# that answered is said plainly ("why.faq.accepted", "why.faq.verbatim").
GUARD_KEYS = re.compile(r"why\.faq\.(?!accepted$|verbatim$)\w+|why\.docs\.faq_passage")
# A raw score or probability as the pages write them ("0.919", "0.9466"); Vietnamese decimals
# take a comma, and no amount of money starts with "0.".
RAW_SCORE = re.compile(r"(?<![\d.,])0\.\d{3,}\b")
# A Markdown table's delimiter row left as text.
RAW_TABLE = re.compile(r"\|\s*:?-{3,}:?\s*\|")


def _sentence_pattern(template: str) -> str:
    """A Vietnamese sentence of the admin's words as a pattern: its placeholders match anything
    (an entry's number a number), the rest as written."""
    parts = []
    for literal, name, _, _ in string.Formatter().parse(template):
        parts.append(re.escape(literal))
        if name is not None:
            parts.append(r"\d+" if name in ("id", "rival") else r".+?")
    return "".join(parts)


def guard_sentences() -> re.Pattern[str]:
    create_admin_app()  # every page module adds its words
    keys = [key for key in STRINGS if GUARD_KEYS.fullmatch(key)]
    assert len(keys) >= 10, keys  # the guard's reasons are where this test looks for them
    return re.compile("|".join(_sentence_pattern(STRINGS[key][0]) for key in keys))


_GUARD = guard_sentences()


class VisibleText(HTMLParser):
    """The text a page shows, without scripts, styles and form fields (what staff type is not
    what the page says): ``text`` without the "Chi tiết kỹ thuật" blocks, ``everything`` with
    them."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.frames: list[dict[str, Any]] = [{"texts": [], "summary": []}]
        self.hidden = 0  # inside <script>, <style> or <textarea>
        self.in_summary = 0
        self.everything: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("script", "style", "textarea"):
            self.hidden += 1
        elif tag == "details":
            self.frames.append({"texts": [], "summary": []})
        elif tag == "summary":
            self.in_summary += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style", "textarea"):
            self.hidden = max(0, self.hidden - 1)
        elif tag == "summary":
            self.in_summary = max(0, self.in_summary - 1)
        elif tag == "details" and len(self.frames) > 1:
            frame = self.frames.pop()
            if "".join(frame["summary"]).strip() != TECHNICAL:
                self.frames[-1]["texts"] += frame["texts"]

    def handle_data(self, data: str) -> None:
        if self.hidden:
            return
        self.everything.append(data)
        frame = self.frames[-1]
        frame["texts"].append(data)
        if self.in_summary:
            frame["summary"].append(data)

    @property
    def text(self) -> str:
        return " ".join(t for frame in self.frames for t in frame["texts"])


def _around(text: str, pattern: re.Pattern[str]) -> list[str]:
    return [text[max(0, m.start() - 60) : m.end() + 60] for m in pattern.finditer(text)]


def _read(page: str) -> VisibleText:
    parser = VisibleText()
    parser.feed(page)
    parser.close()
    return parser


def english_on(page: str) -> list[str]:
    """The English diagnostics ``page`` shows outside its "Chi tiết kỹ thuật" blocks."""
    return _around(" ".join(_read(page).text.split()), _ENGLISH)


def engine_talk_on(page: str) -> list[str]:
    """What ``page`` shows of the engine: English diagnostics, the guard's reasoning and raw
    scores outside its "Chi tiết kỹ thuật" blocks, and a Markdown table's pipes anywhere."""
    parser = _read(page)
    text = " ".join(parser.text.split())
    found = _around(text, _ENGLISH) + _around(text, _GUARD) + _around(text, RAW_SCORE)
    return found + _around(" ".join(parser.everything), RAW_TABLE)
