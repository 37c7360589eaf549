"""The chat page's Content-Security-Policy: its one inline script and one inline style are
allowed by hash, nothing else runs, images come from the page's own origin and the logo's
(``TUVAN_BRAND__LOGO_URL``) only, and only the allowed sites may frame it."""

from __future__ import annotations

import base64
import hashlib
import re

from bot.core.branding import logo_origin
from bot.core.settings import Settings


def inline_hash(page: str, tag: str) -> str:
    """The CSP source for the one inline ``<tag>`` block of the page."""
    found = re.findall(rf"<{tag}>(.*?)</{tag}>", page, flags=re.DOTALL)
    if len(found) != 1:
        raise RuntimeError(f"chat.html must hold exactly one inline <{tag}> block")
    digest = hashlib.sha256(found[0].encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode()}'"


class ContentSecurityPolicy:
    """The policy of one page, its hashes computed once."""

    def __init__(self, page: str) -> None:
        self.script_src = inline_hash(page, "script")
        self.style_src = inline_hash(page, "style")

    def header(self, settings: Settings) -> str:
        ancestors = " ".join(["'self'", *settings.web.allowed_origins])
        images = " ".join(["'self'", "data:", *filter(None, [logo_origin(settings.brand)])])
        return (
            f"default-src 'none'; script-src {self.script_src}; style-src {self.style_src}; "
            f"connect-src 'self'; img-src {images}; base-uri 'none'; form-action 'none'; "
            f"frame-ancestors {ancestors}"
        )
