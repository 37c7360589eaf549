"""The chat page (``GET /``, also the widget's frame with ``?embed=1``) and the embeddable
widget (``GET /widget.js``), read once from ``static/``, branded with ``TUVAN_BRAND__*`` and
served with their headers.

The templates hold ``{{slot}}`` marks, each filled once per branding: text goes into the HTML
escaped, data for the scripts as JSON with ``< > &`` escaped too (it cannot close its
``<script>`` block), and the colour, validated ``#rrggbb``, into the page's one inline style,
whose hash the Content-Security-Policy is computed from afterwards."""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass
from importlib import resources

from aiohttp import web

from bot.core.branding import brand_texts, ink_on
from bot.core.settings import BrandSettings
from bot.keys import RUNTIME
from bot.web.webchat.csp import ContentSecurityPolicy
from bot.web.webchat.protocol import MAX_CHAT_TEXT

# In static/chat.html, the textarea's maxlength: filled in from the limit the API checks.
MAXLENGTH_SLOT = 'maxlength="MAX_CHAT_TEXT"'
SLOT = re.compile(r"\{\{(\w+)\}\}")
# The header's mark when no logo is set: a mortarboard, in the primary colour on white.
BUILT_IN_MARK = (
    '<svg id="logo" viewBox="0 0 24 24" aria-hidden="true">'
    '<path fill="currentColor" d="M12 3.5 1.5 9 12 14.5 20 10.3V16h1.6V9z"/>'
    '<path fill="currentColor" d="M5.5 12v4.2c0 1.9 2.9 3.3 6.5 3.3s6.5-1.4 6.5-3.3V12L12 '
    '15.4z"/></svg>'
)


def fill(template: str, values: dict[str, str]) -> str:
    """``template`` with each ``{{slot}}`` replaced; a slot without a value is an error (a
    template and its code out of step), never shown to a visitor."""

    def value(found: re.Match[str]) -> str:
        if found.group(1) not in values:
            raise RuntimeError(f"no value for the slot {found.group(0)} of a web chat template")
        return values[found.group(1)]

    return SLOT.sub(value, template)


def script_json(data: object) -> str:
    """JSON safe inside a ``<script>`` block or a JavaScript file: ASCII only, and none of
    ``< > &`` (no ``</script>``, no ``<!--``)."""
    text = json.dumps(data, ensure_ascii=True, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def chat_page(template: str, brand: BrandSettings) -> str:
    vi, en = brand_texts(brand, "vi"), brand_texts(brand, "en")
    per_language = {
        language: {
            "name": texts.name,
            "welcome": texts.welcome,
            "suggestions": list(texts.suggestions),
            "privacy_note": texts.privacy_note,
        }
        for language, texts in (("vi", vi), ("en", en))
    }
    logo = BUILT_IN_MARK
    if brand.logo_url is not None:
        logo = f'<img id="logo" src="{html.escape(brand.logo_url)}" alt="">'
    return fill(
        template,
        {
            "color": brand.color,
            "ink": ink_on(brand.color),
            "name": html.escape(vi.name),
            "logo": logo,
            "privacy_note": html.escape(vi.privacy_note),
            "privacy_url": html.escape(vi.privacy_url),
            "brand": script_json(per_language),
        },
    )


def widget_script(template: str, brand: BrandSettings) -> str:
    data = {
        "color": brand.color,
        "ink": ink_on(brand.color),
        "name": {"vi": brand.name_vi, "en": brand.name_en},
    }
    return fill(template, {"brand": script_json(data)})


@dataclass(frozen=True)
class BrandedPages:
    """The page, its policy and the widget for one branding."""

    brand: BrandSettings
    page: str
    csp: ContentSecurityPolicy
    widget_js: str


class Pages:
    def __init__(self) -> None:
        static = resources.files("bot.web.webchat") / "static"
        page = (static / "chat.html").read_text(encoding="utf-8")
        self.template = page.replace(MAXLENGTH_SLOT, f'maxlength="{MAX_CHAT_TEXT}"')
        self.widget_template = (static / "widget.js").read_text(encoding="utf-8")
        self._branded: BrandedPages | None = None

    def branded(self, brand: BrandSettings) -> BrandedPages:
        """The pages for ``brand``, made on first use (settings are read once: one branding
        per process, but a test may run apps with others)."""
        if self._branded is None or self._branded.brand is not brand:
            page = chat_page(self.template, brand)
            widget = widget_script(self.widget_template, brand)
            self._branded = BrandedPages(brand, page, ContentSecurityPolicy(page), widget)
        return self._branded

    async def chat_page(self, request: web.Request) -> web.Response:
        settings = request.config_dict[RUNTIME].settings
        branded = self.branded(settings.brand)
        headers = {
            "Content-Security-Policy": branded.csp.header(settings),
            "X-Content-Type-Options": "nosniff",
            "Cache-Control": "no-cache",
        }
        return web.Response(
            text=branded.page, content_type="text/html", charset="utf-8", headers=headers
        )

    async def widget(self, request: web.Request) -> web.Response:
        branded = self.branded(request.config_dict[RUNTIME].settings.brand)
        headers = {"X-Content-Type-Options": "nosniff", "Cache-Control": "public, max-age=3600"}
        return web.Response(
            text=branded.widget_js, content_type="text/javascript", charset="utf-8", headers=headers
        )
