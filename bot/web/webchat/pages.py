"""The chat page (``GET /``, also the widget's frame with ``?embed=1``) and the embeddable
widget (``GET /widget.js``), read once from ``static/`` and served with their headers."""

from __future__ import annotations

from importlib import resources

from aiohttp import web

from bot.keys import RUNTIME
from bot.web.webchat.csp import ContentSecurityPolicy
from bot.web.webchat.protocol import MAX_CHAT_TEXT

# In static/chat.html, the textarea's maxlength: filled in from the limit the API checks.
MAXLENGTH_SLOT = 'maxlength="MAX_CHAT_TEXT"'


class Pages:
    def __init__(self) -> None:
        static = resources.files("bot.web.webchat") / "static"
        page = (static / "chat.html").read_text(encoding="utf-8")
        self.page = page.replace(MAXLENGTH_SLOT, f'maxlength="{MAX_CHAT_TEXT}"')
        self.widget_js = (static / "widget.js").read_text(encoding="utf-8")
        self.csp = ContentSecurityPolicy(self.page)

    async def chat_page(self, request: web.Request) -> web.Response:
        settings = request.config_dict[RUNTIME].settings
        headers = {
            "Content-Security-Policy": self.csp.header(settings),
            "X-Content-Type-Options": "nosniff",
            "Cache-Control": "no-cache",
        }
        return web.Response(
            text=self.page, content_type="text/html", charset="utf-8", headers=headers
        )

    async def widget(self, request: web.Request) -> web.Response:
        headers = {"X-Content-Type-Options": "nosniff", "Cache-Control": "public, max-age=3600"}
        return web.Response(
            text=self.widget_js, content_type="text/javascript", charset="utf-8", headers=headers
        )
