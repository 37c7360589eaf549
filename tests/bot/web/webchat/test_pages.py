"""The web chat over real HTTP on 127.0.0.1: the page and the embeddable widget."""

from __future__ import annotations

import base64
import hashlib
import re

from tests.bot.web.webchat._support import SITE, Client


async def test_page_is_vietnamese_first_html_with_a_strict_policy(client: Client) -> None:
    response = await client.get("/")
    assert response.status == 200
    assert response.content_type == "text/html"
    assert response.charset == "utf-8"
    page = await response.text()
    assert '<html lang="vi">' in page
    assert "Tư vấn tuyển sinh" in page
    assert "Admissions assistant" in page  # the English labels, switched in the browser
    policy = response.headers["Content-Security-Policy"]
    [script] = re.findall(r"<script>(.*?)</script>", page, flags=re.DOTALL)
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in policy
    assert f"frame-ancestors 'self' {SITE}" in policy
    assert "unsafe-inline" not in policy
    embedded = await client.get("/?embed=1")
    assert embedded.status == 200


async def test_page_puts_text_in_with_text_content_only(client: Client) -> None:
    page = await (await client.get("/")).text()
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("):
        assert sink not in page
    assert "textContent" in page


async def test_widget_is_javascript_that_frames_the_embedded_page(client: Client) -> None:
    response = await client.get("/widget.js")
    assert response.status == 200
    assert response.content_type == "text/javascript"
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    source = await response.text()
    assert '"/?embed=1"' in source
    assert "innerHTML" not in source
    assert "attachShadow" in source
