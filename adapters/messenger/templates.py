"""What a Messenger reply carries besides its text: quick replies (an answer's 👍/👎 and the
suggested questions) and a button template (the sources as link buttons), within the Send
API's limits."""

from __future__ import annotations

from typing import Any

from adapters.sending import button_title
from bot.core.citations import SourceBlock
from bot.core.types import Language
from bot.core.votes import DOWN, LABELS, UP, vote_payload

# Quick replies: at most 13, titles at most 20 characters, payloads at most 1000.
QUICK_REPLY_MAX = 13
QUICK_REPLY_TITLE_MAX = 20
QUICK_REPLY_PAYLOAD_MAX = 1000
# A button template: at most 3 buttons, each title at most 20 characters, text at most 640.
TEMPLATE_BUTTONS = 3
BUTTON_TITLE_MAX = 20


def quick_replies(questions: tuple[str, ...], limit: int) -> list[dict[str, str]]:
    """Up to ``limit`` (and Meta's 13) distinct questions as text quick replies; the whole
    question is the payload, which comes back as the user's message when tapped."""
    limit = max(0, min(limit, QUICK_REPLY_MAX))
    out: list[dict[str, str]] = []
    seen: set[str] = set()
    for question in questions:
        question = " ".join(question.split())
        if not question or question in seen or len(out) >= limit:
            continue
        seen.add(question)
        title = question
        if len(title) > QUICK_REPLY_TITLE_MAX:
            title = title[: QUICK_REPLY_TITLE_MAX - 1].rstrip() + "…"
        out.append(
            {
                "content_type": "text",
                "title": title,
                "payload": question[:QUICK_REPLY_PAYLOAD_MAX],
            }
        )
    return out


def with_votes(
    feedback_id: int | None, questions: list[dict[str, str]], language: Language = "vi"
) -> list[dict[str, str]]:
    """An answer's quick replies: 👍 and 👎 first, labelled in the answer's ``language`` (their
    payload names the answer and the language, and comes back as
    ``message.quick_reply.payload``), then as many suggested questions as still fit."""
    if feedback_id is None:
        return questions
    votes = [
        {
            "content_type": "text",
            "title": LABELS[language][value],
            "payload": vote_payload(feedback_id, value, language),
        }
        for value in (UP, DOWN)
    ]
    return votes + questions[: QUICK_REPLY_MAX - len(votes)]


def button_template(sources: SourceBlock) -> dict[str, Any]:
    """The sources as a button template: their heading, and a link button for each of the
    first three."""
    return {
        "attachment": {
            "type": "template",
            "payload": {
                "template_type": "button",
                "text": f"{sources.heading}:",
                "buttons": [
                    {
                        "type": "web_url",
                        "url": link.url,
                        "title": button_title(link, BUTTON_TITLE_MAX),
                    }
                    for link in sources.links[:TEMPLATE_BUTTONS]
                ],
            },
        }
    }
