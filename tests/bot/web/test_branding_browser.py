"""The branded chat page in a real browser (Debian's headless Chromium, driven by Playwright), at
desktop and phone sizes, with the default branding and a custom one: the name, the logo, the
colour as the browser computes it, the welcome, the suggested questions (one tapped and answered)
and the privacy link, visible before the first message; and the widget's launcher on another
site. The whole web app on 127.0.0.1 over the session's PostgreSQL on committed transactions
(removed after each test); the logo and the host page come from a second server on 127.0.0.1,
so that the Content-Security-Policy must let the logo's origin through.

Each test saves a screenshot of the page before the first message: into ``$TUVAN_SCREENSHOTS``
when it is set (the docs' pictures: ``brand-<default|custom>-<desktop|phone>.png``), else into
the test's temporary folder.
"""

from __future__ import annotations

import os
import re
import struct
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from playwright.async_api import Browser, Page, ViewportSize, expect
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.answer.answerer import Answerer
from bot.answer.parts import AnswererParts
from bot.core.branding import brand_texts
from bot.core.settings import BrandSettings, Settings
from bot.db.engine import make_sessionmaker
from bot.runtime import Runtime
from bot.web.app import create_app
from tests.admin._support import ANSWER_TIMEOUT_MS, chromium_browser, delete_rows_since, rows_since

pytestmark = pytest.mark.usefixtures("demo_kb")

SIZES: dict[str, ViewportSize] = {
    "desktop": {"width": 1280, "height": 800},
    "phone": {"width": 390, "height": 844},
}
ANSWERED = re.compile(r"\btier-(faq|documents)\b")  # answered from the knowledge base
LOGO = (
    '<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64" viewBox="0 0 64 64">'
    '<rect width="64" height="64" rx="10" fill="#b3261e"/>'
    '<path d="M32 10v40M18 38c0 8 6 12 14 12s14-4 14-12M24 18h16" stroke="#fff" '
    'stroke-width="5" fill="none" stroke-linecap="round"/></svg>'
)


def custom_brand(logo_url: str) -> BrandSettings:
    return BrandSettings(
        name_vi="Học viện Kỹ thuật Biển <HVB>",
        name_en="Maritime Engineering Academy",
        logo_url=logo_url,
        color="#b3261e",
        welcome_vi="Chào bạn! Mình là trợ lý tuyển sinh của {name}. Hỏi mình bất cứ điều gì nhé.",
        suggestions_vi=(
            "Mã trường của Trường Đại học Công nghệ Sông Hồng là gì?",
            "Giá phòng ký túc xá bao nhiêu một tháng?",
            "Học bổng tuyển sinh năm 2026 gồm những loại nào?",
            "Hồ sơ nhập học năm 2026 gồm những giấy tờ gì?",
            "Trường có mấy cơ sở và ở đâu?",
        ),
        privacy_note_vi="Học viện lưu tin nhắn 12 tháng để trả lời bạn.",
        privacy_url="https://hvb.example.edu.vn/quyen-rieng-tu",
    )


@dataclass(frozen=True)
class Site:
    """A second origin on 127.0.0.1: the university's CDN (the logo) and its own site."""

    origin: str
    logo_url: str


@dataclass(frozen=True)
class Chat:
    base: str
    brand: BrandSettings


StartChat = Callable[[BrandSettings], Awaitable[Chat]]


@pytest.fixture(scope="module")
async def chromium() -> AsyncIterator[Browser]:
    async with chromium_browser() as browser:
        yield browser


@pytest.fixture
async def site() -> AsyncIterator[Site]:
    """The logo at /logo.svg; a page of the university's site at /host.html?chat=<base>."""

    async def logo(request: web.Request) -> web.Response:
        return web.Response(text=LOGO, content_type="image/svg+xml")

    async def host(request: web.Request) -> web.Response:
        chat = request.query["chat"]
        page = (
            '<!doctype html><html lang="vi"><head><meta charset="utf-8"><title>HVB</title>'
            "</head><body><h1>Học viện Kỹ thuật Biển</h1>"
            f'<script src="{chat}/widget.js" data-lang="vi" async></script></body></html>'
        )
        return web.Response(text=page, content_type="text/html")

    app = web.Application()
    app.router.add_get("/logo.svg", logo)
    app.router.add_get("/host.html", host)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    origin = str(server.make_url("")).rstrip("/")
    try:
        yield Site(origin, f"{origin}/logo.svg")
    finally:
        await server.close()


@pytest.fixture
async def start_chat(
    settings: Settings, engine: AsyncEngine, parts: AnswererParts, site: Site
) -> AsyncIterator[StartChat]:
    """``await start_chat(brand)``: the web app with that branding on a real port; the site's
    origin may embed it."""
    marks = await rows_since(engine)
    sessionmaker = make_sessionmaker(engine)
    servers: list[TestServer] = []
    async with aiohttp.ClientSession() as platforms:

        async def start(brand: BrandSettings) -> Chat:
            web_settings = settings.web.model_copy(update={"allowed_origins": (site.origin,)})
            branded = settings.model_copy(update={"brand": brand, "web": web_settings})
            answerer = Answerer(parts, sessionmaker)
            runtime = Runtime(branded, engine, sessionmaker, parts, answerer)
            server = TestServer(create_app(runtime, {}, platforms), host="127.0.0.1")
            await server.start_server()
            servers.append(server)
            return Chat(str(server.make_url("")).rstrip("/"), brand)

        try:
            yield start
        finally:
            for server in servers:
                await server.close()
            await delete_rows_since(engine, marks)


@pytest.fixture
async def new_page(chromium: Browser) -> AsyncIterator[Callable[..., Awaitable[Page]]]:
    pages: list[Page] = []

    async def make(size: str) -> Page:
        context = await chromium.new_context(locale="vi-VN", viewport=SIZES[size])
        pages.append(await context.new_page())
        return pages[-1]

    yield make
    for page in pages:
        await page.context.close()


def screenshot_file(tmp_path: Path, name: str) -> Path:
    folder = Path(os.environ.get("TUVAN_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{name}.png"


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "a PNG file"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def rgb(colour: str) -> str:
    """ "#b3261e" as the browser computes it: "rgb(179, 38, 30)"."""
    red, green, blue = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgb({red}, {green}, {blue})"


async def check_branded_page(page: Page, chat: Chat, size: str, shot: Path) -> None:
    """Everything the branding puts on the page, seen before the first message; a screenshot;
    then one suggestion tapped and answered."""
    texts = brand_texts(chat.brand, "vi")
    await page.goto(f"{chat.base}/")
    await expect(page.locator("#brand-name")).to_have_text(texts.name)
    await expect(page).to_have_title(f"Tư vấn tuyển sinh – {texts.name}")
    logo = page.locator("#logo")
    await expect(logo).to_be_visible()
    if chat.brand.logo_url is not None:  # loaded: its origin got through the page's policy
        await expect(logo).to_have_attribute("src", chat.brand.logo_url)
        await page.wait_for_function(
            "() => document.getElementById('logo').complete"
            " && document.getElementById('logo').naturalWidth > 0"
        )
    colour = rgb(chat.brand.color)
    for selector in ("header", "#send"):
        await expect(page.locator(selector)).to_have_css("background-color", colour)
    welcome = page.locator("#log .msg.bot .body").first
    await expect(welcome).to_have_text(texts.welcome)
    chips = page.locator("#log .chips .chip")
    await expect(chips).to_have_text(list(texts.suggestions))
    await expect(chips.first).to_have_css("border-top-color", colour)
    for chip in await chips.all():
        await expect(chip).to_be_in_viewport()
    privacy = page.locator("#privacy-link")
    await expect(privacy).to_have_attribute("href", texts.privacy_url)
    await expect(privacy).to_have_text("Chính sách bảo mật")
    await expect(privacy).to_be_in_viewport()
    await expect(page.locator("#privacy-note")).to_have_text(texts.privacy_note)
    if size == "phone":  # nothing sticks out sideways
        width = await page.evaluate("document.documentElement.scrollWidth")
        assert width <= SIZES["phone"]["width"]
    await page.screenshot(path=str(shot))
    assert png_size(shot) == (SIZES[size]["width"], SIZES[size]["height"])

    tapped = texts.suggestions[1]
    await chips.nth(1).click()
    await expect(page.locator("#log .msg.user")).to_have_text([tapped])
    reply = page.locator("#log .msg.bot").nth(1)
    await expect(reply).to_have_class(ANSWERED, timeout=ANSWER_TIMEOUT_MS)
    await expect(page.locator("#log .chips")).to_have_count(0)  # asked: the suggestions go
    await expect(page.locator("#send")).to_be_enabled()


@pytest.mark.parametrize("size", ["desktop", "phone"])
async def test_the_default_branding_is_shown_and_a_suggestion_answered(
    start_chat: StartChat, new_page: Callable[..., Awaitable[Page]], tmp_path: Path, size: str
) -> None:
    chat = await start_chat(BrandSettings())
    page = await new_page(size)
    await check_branded_page(page, chat, size, screenshot_file(tmp_path, f"brand-default-{size}"))


@pytest.mark.parametrize("size", ["desktop", "phone"])
async def test_a_custom_branding_is_shown_and_a_suggestion_answered(
    start_chat: StartChat,
    new_page: Callable[..., Awaitable[Page]],
    site: Site,
    tmp_path: Path,
    size: str,
) -> None:
    chat = await start_chat(custom_brand(site.logo_url))
    page = await new_page(size)
    await check_branded_page(page, chat, size, screenshot_file(tmp_path, f"brand-custom-{size}"))


async def test_the_english_interface_shows_the_english_branding(
    start_chat: StartChat, new_page: Callable[..., Awaitable[Page]], site: Site
) -> None:
    brand = custom_brand(site.logo_url)
    chat = await start_chat(brand)
    page = await new_page("desktop")
    await page.goto(f"{chat.base}/")
    await expect(page.locator("#log .chips .chip")).to_have_count(len(brand.suggestions_vi))
    await page.locator("#lang").click()
    english = brand_texts(brand, "en")
    await expect(page.locator("#brand-name")).to_have_text("Maritime Engineering Academy")
    await expect(page.locator("#log .msg.bot .body").first).to_have_text(english.welcome)
    await expect(page.locator("#log .chips .chip")).to_have_text(list(english.suggestions))
    await expect(page.locator("#privacy-link")).to_have_text("Privacy policy")
    await expect(page.locator("#privacy-note")).to_have_text(english.privacy_note)


async def test_the_widget_launcher_on_the_universitys_site_takes_the_colour_and_name(
    start_chat: StartChat, new_page: Callable[..., Awaitable[Page]], site: Site
) -> None:
    brand = custom_brand(site.logo_url)
    chat = await start_chat(brand)
    page = await new_page("desktop")
    await page.goto(f"{site.origin}/host.html?chat={chat.base}")
    launcher = page.locator("button.launch")  # in the widget's shadow root
    await expect(launcher).to_have_css("background-color", rgb(brand.color))
    await expect(launcher).to_have_attribute("title", f"Tư vấn tuyển sinh – {brand.name_vi}")
    await launcher.click()
    frame = page.frame_locator("iframe")
    await expect(frame.locator("#brand-name")).to_have_text(brand.name_vi)
    await expect(frame.locator("#log .chips .chip")).to_have_count(len(brand.suggestions_vi))
    assert await page.locator("iframe").get_attribute("title") == (
        f"Trợ lý tư vấn tuyển sinh – {brand.name_vi}"
    )
