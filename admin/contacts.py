"""How the staff pages name a contact.

A platform's id (a Telegram chat, a Messenger PSID, a Zalo user) is shown as it is: it opens
nothing by itself. A web visitor's id is the key to their conversation (whoever holds it reads
it in the chat page), so no staff role sees it: it shows as "Khách web · 3f9a1c", the first six
hex digits of its SHA-256, enough to tell visitors apart on a page and impossible to turn back
into the id (128 random bits).

A contact the platform gave no name (every web visitor) is named by its channel, its first
question (``shortened``) and the time of its first message, instead of "(không tên)".
"""

from __future__ import annotations

import hashlib

WEB_CHANNEL = "web"
TAG_LENGTH = 6


def visitor_tag(external_id: str) -> str:
    """A short, non-reversible tag of a web visitor's id."""
    return hashlib.sha256(external_id.encode("utf-8", "surrogatepass")).hexdigest()[:TAG_LENGTH]


def contact_reference(channel: str, external_id: str) -> str:
    """What a page shows of a contact's id: the tag for a web visitor, else the id."""
    return visitor_tag(external_id) if channel == WEB_CHANNEL else external_id


FIRST_QUESTION_LENGTH = 60


def shortened(text: str, limit: int = FIRST_QUESTION_LENGTH) -> str:
    """``text`` on one line, cut at a word before ``limit`` characters, with "…" when cut."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    cut = flat[: limit - 1]
    if " " in cut:
        cut = cut.rsplit(" ", 1)[0]
    return cut.rstrip(" ,.;:") + "…"
