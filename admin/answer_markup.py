"""An answer's Markdown (bold, lists, tables, links) as HTML a staff page may show.

markdown-it-py (CommonMark) with raw HTML off, so a ``<script>`` in an answer or a document is
text; tables and strike-through on; images off (a page fetches nothing an answer names); only
http(s) links, which open in a new tab without the admin as referrer. A line break is kept as
one: replies put each source on a line of its own. This is the one place the admin marks HTML
as safe, and it is safe because markdown-it escapes every piece of text it writes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.rules_core import StateCore
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict
from markupsafe import Markup

MAX_ANSWER_CHARS = 20_000  # longer is not an answer; shown as it is, cut
# A bare web address in the text ("[1] Đề án 2026 — https://…"); trailing punctuation is not
# part of it.
_BARE_URL = re.compile(r"https?://[^\s<>\"'`]+[^\s<>\"'`.,;:!?)\]]")


def _web_link(url: str) -> bool:
    return url.strip().lower().startswith(("http://", "https://"))


def _link_open(
    renderer: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    tokens[idx].attrSet("rel", "noopener noreferrer")
    tokens[idx].attrSet("target", "_blank")
    return renderer.renderToken(tokens, idx, options, env)


def _link_bare_urls(state: StateCore) -> None:
    """Make each bare web address of a text outside a link a link (the sources' lines)."""
    for block in state.tokens:
        if block.type != "inline" or not block.children:
            continue
        out: list[Token] = []
        in_link = 0
        for token in block.children:
            in_link += {"link_open": 1, "link_close": -1}.get(token.type, 0)
            if token.type != "text" or in_link or not _BARE_URL.search(token.content):
                out.append(token)
                continue
            at = 0
            for found in _BARE_URL.finditer(token.content):
                if found.start() > at:
                    out.append(_text(token.content[at : found.start()]))
                opened = Token("link_open", "a", 1)
                opened.attrSet("href", found.group(0))
                out += [opened, _text(found.group(0)), Token("link_close", "a", -1)]
                at = found.end()
            if at < len(token.content):
                out.append(_text(token.content[at:]))
        block.children = out


def _text(content: str) -> Token:
    token = Token("text", "", 0)
    token.content = content
    return token


def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "breaks": True, "linkify": False})
    md.enable(["table", "strikethrough"])
    md.disable("image")
    md.validateLink = _web_link  # type: ignore[method-assign]
    md.add_render_rule("link_open", _link_open)
    md.core.ruler.push("link_bare_urls", _link_bare_urls)
    return md


_MD = _parser()


def answer_html(text: Any) -> Markup:
    """``text`` rendered as HTML (escaped text, http(s) links only)."""
    return Markup(_MD.render(str(text)[:MAX_ANSWER_CHARS]))  # noqa: S704 - markdown-it escapes


def excerpt_html(text: str, limit: int) -> Markup:
    """The start of ``text`` (a passage found) rendered like an answer, cut after the last whole
    line within ``limit`` characters, so a table cut short is still a table (fewer rows), not
    its pipes; a first line longer than ``limit`` is cut where it reaches it."""
    if len(text) <= limit:
        return answer_html(text)
    cut = text.rfind("\n", 0, limit + 1)
    kept = text[:cut] if cut > 0 else text[:limit]
    return answer_html(kept.rstrip() + "\n\n…")
