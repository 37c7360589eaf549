"""The branding (``TUVAN_BRAND__*``) in the chat page and the widget as served over real HTTP on
127.0.0.1: values escaped, the colour in the one hashed style, the logo's origin (and no other)
allowed by the Content-Security-Policy."""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from bot.answer.answerer import Answerer
from bot.answer.parts import AnswererParts
from bot.core.settings import BrandSettings, Settings
from bot.runtime import Runtime

Client = TestClient[web.Request, web.Application]
CUSTOM = BrandSettings(
    name_vi='Học viện <b>Biển</b> & "Cảng"',
    name_en="Maritime Academy",
    logo_url="https://cdn.hvb.edu.vn:8443/logo.png?v=2&size=64",
    color="#B3261E",
    welcome_vi="Xin chào từ {name}! </script><script>alert(1)</script>",
    suggestions_vi=("Học phí bao nhiêu?", "Hạn nộp hồ sơ <khi nào>?", "Có KTX không?"),
    privacy_note_vi="Chúng tôi lưu tin nhắn <90 ngày>.",
    privacy_url="https://hvb.edu.vn/bao-mat?a=1&b=2",
)


@pytest.fixture
async def serve_with(
    serve_webchat: Any,
    settings: Settings,
    engine: AsyncEngine,
    sessionmaker: async_sessionmaker[AsyncSession],
    parts: AnswererParts,
) -> Any:
    """``await serve_with(brand)``: the web chat's routes with that branding, on a real port."""

    async def start(brand: BrandSettings) -> Client:
        branded = settings.model_copy(update={"brand": brand})
        answerer = Answerer(parts, sessionmaker)
        started, _ = await serve_webchat(Runtime(branded, engine, sessionmaker, parts, answerer))
        return started

    return start


def policy_of(header: str) -> dict[str, str]:
    directives = (part.strip().split(" ", 1) for part in header.split(";"))
    return {d[0]: d[1] if len(d) > 1 else "" for d in directives}


def sha256_source(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def brand_data(page: str) -> Any:
    [block] = re.findall(
        r'<script type="application/json" id="brand">(.*?)</script>', page, flags=re.DOTALL
    )
    return json.loads(block)


async def test_a_custom_branding_is_served_escaped_with_the_logo_origin_allowed_only(
    serve_with: Any,
) -> None:
    client = await serve_with(CUSTOM)
    response = await client.get("/")
    assert response.status == 200
    page = await response.text()
    assert f'<h1 id="brand-name">{html.escape(CUSTOM.name_vi)}</h1>' in page
    assert "<b>Biển</b>" not in page
    assert "<khi nào>" not in page
    assert "<90 ngày>" not in page
    assert '<img id="logo" src="https://cdn.hvb.edu.vn:8443/logo.png?v=2&amp;size=64"' in page
    assert 'href="https://hvb.edu.vn/bao-mat?a=1&amp;b=2"' in page
    assert html.escape(CUSTOM.privacy_note_vi) in page
    # The data for the script holds the texts exactly, and cannot end its own block.
    data = brand_data(page)
    assert data["vi"]["welcome"] == (
        'Xin chào từ Học viện <b>Biển</b> & "Cảng"! </script><script>alert(1)</script>'
    )
    assert data["vi"]["suggestions"] == list(CUSTOM.suggestions_vi)
    assert data["en"]["name"] == "Maritime Academy"
    assert data["en"]["suggestions"] == list(BrandSettings().suggestions_en)
    # The colour is in the one inline style, and the policy's hashes are those of the page.
    policy = policy_of(response.headers["Content-Security-Policy"])
    [style] = re.findall(r"<style>(.*?)</style>", page, flags=re.DOTALL)
    [script] = re.findall(r"<script>(.*?)</script>", page, flags=re.DOTALL)
    assert "--brand: #b3261e; --brand-ink: #ffffff;" in style
    assert policy["style-src"] == sha256_source(style)
    assert policy["script-src"] == sha256_source(script)
    assert policy["img-src"] == "'self' data: https://cdn.hvb.edu.vn:8443"
    assert policy["default-src"] == "'none'"
    assert policy["connect-src"] == "'self'"


async def test_the_default_branding_shows_the_built_in_mark_and_allows_no_other_images(
    serve_with: Any,
) -> None:
    client = await serve_with(BrandSettings())
    response = await client.get("/?embed=1")
    page = await response.text()
    assert '<svg id="logo"' in page
    assert "<img" not in page
    assert "Trường Đại học Công nghệ Sông Hồng</h1>" in page
    assert policy_of(response.headers["Content-Security-Policy"])["img-src"] == "'self' data:"
    assert brand_data(page)["vi"]["suggestions"] == list(BrandSettings().suggestions_vi)


async def test_the_widget_carries_the_colour_and_the_name(serve_with: Any) -> None:
    client = await serve_with(CUSTOM)
    response = await client.get("/widget.js")
    assert response.status == 200
    source = await response.text()
    found = re.search(r"var BRAND = (\{.*?\});\n", source)
    assert found, "the widget states its branding"
    assert json.loads(found.group(1)) == {
        "color": "#b3261e",
        "ink": "#ffffff",
        "name": {"vi": CUSTOM.name_vi, "en": "Maritime Academy"},
    }
    assert "<" not in found.group(1)
    assert "{{" not in source
