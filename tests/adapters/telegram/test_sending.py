"""Sending through a fake Bot API: escaped HTML, parts, keyboards, source buttons, errors,
typing."""

from __future__ import annotations

import html
from collections.abc import AsyncIterator, Callable

import aiohttp
import pytest
from pydantic import SecretStr

from adapters.telegram import TelegramAdapter
from adapters.telegram.sending import MESSAGE_LIMIT
from bot.core.errors import SendError
from bot.core.messages import OutboundReply
from bot.core.settings import TelegramSettings
from tests.adapters._support import CITED
from tests.fakes.telegram_api import FakeTelegramApi

MakeAdapter = Callable[[TelegramSettings], TelegramAdapter]


@pytest.fixture
async def make_adapter() -> AsyncIterator[MakeAdapter]:
    """Adapters whose Bot API clients are closed after the test."""
    made: list[TelegramAdapter] = []

    def make(settings: TelegramSettings) -> TelegramAdapter:
        made.append(TelegramAdapter(settings))
        return made[-1]

    yield make
    for adapter in made:
        await adapter.aclose()


async def test_reply_is_sent_as_escaped_html(
    api: FakeTelegramApi, http: aiohttp.ClientSession, make_adapter: MakeAdapter
) -> None:
    text = "Dùng <script>alert(1)</script> & <b>không</b> được in đậm: a<b & c>d"
    result = await make_adapter(api.settings()).send(http, OutboundReply("111222333", text))
    (call,) = api.calls_to("sendMessage")
    assert call.body["parse_mode"] == "HTML"
    assert call.body["chat_id"] == 111222333
    assert call.body["link_preview_options"] == {"is_disabled": True}
    assert "<" not in call.body["text"]
    assert "&lt;script&gt;" in call.body["text"]
    assert html.unescape(call.body["text"]) == text
    assert result.parts == 1
    assert result.external_ids == ("101",)


async def test_long_answer_is_split_on_borders_within_the_limit(
    api: FakeTelegramApi, http: aiohttp.ClientSession, make_adapter: MakeAdapter
) -> None:
    # Escaping makes the parts longer than 4096 characters; Telegram counts after parsing.
    sentence = "Điểm chuẩn ngành A&B <năm 2026> là 24,5 điểm. "
    paragraphs = [(sentence * 10).strip() for _ in range(20)]
    text = "\n\n".join(paragraphs)
    assert 9000 <= len(text) <= 10000

    result = await make_adapter(api.settings()).send(http, OutboundReply("42", text))

    sent = [html.unescape(c.body["text"]) for c in api.calls_to("sendMessage")]
    assert len(sent) == result.parts == 3
    assert all(len(part) <= MESSAGE_LIMIT for part in sent)
    assert any(len(c.body["text"]) > MESSAGE_LIMIT for c in api.calls_to("sendMessage"))
    assert all(part.endswith("điểm.") for part in sent)  # cut at a paragraph border
    assert " ".join(sent).split() == text.split()  # in order, nothing lost
    assert len(set(result.external_ids)) == 3


async def test_quick_replies_become_a_keyboard_under_the_last_part(
    api: FakeTelegramApi, http: aiohttp.ClientSession, make_adapter: MakeAdapter
) -> None:
    reply = OutboundReply("42", "Học phí năm 2026 là 30 triệu.", quick_replies=("Học bổng?",))
    await make_adapter(api.settings()).send(http, reply)
    markup = api.calls_to("sendMessage")[0].body["reply_markup"]
    assert markup["keyboard"] == [[{"text": "Học bổng?"}]]
    assert markup["one_time_keyboard"] is True


async def test_sources_become_link_buttons_under_the_reply(
    api: FakeTelegramApi, http: aiohttp.ClientSession, make_adapter: MakeAdapter
) -> None:
    await make_adapter(api.settings()).send(http, OutboundReply("42", CITED))
    [call] = api.calls_to("sendMessage")
    text = html.unescape(call.body["text"])
    assert "Nguồn:" not in text
    assert "https://" not in text
    assert "32.500.000 đồng/năm. [1]" in text
    assert text.endswith("kiểm tra lại với phòng tuyển sinh.")  # the disclaimer stays
    assert call.body["reply_markup"]["inline_keyboard"] == [
        [
            {
                "text": "[1] Học phí năm học 2026–2027",
                "url": "https://tuyensinh.shut.example.vn/hoc-phi",
            }
        ],
        [{"text": "[2] Lịch tuyển sinh 2026", "url": "https://tuyensinh.shut.example.vn/lich"}],
    ]


async def test_sources_without_a_web_address_stay_in_the_text(
    api: FakeTelegramApi, http: aiohttp.ClientSession, make_adapter: MakeAdapter
) -> None:
    text = "Học phí là 30 triệu. [1]\n\nNguồn:\n[1] Học phí — hoc-phi-2026.pdf, trang 2"
    await make_adapter(api.settings()).send(http, OutboundReply("42", text))
    [call] = api.calls_to("sendMessage")
    assert html.unescape(call.body["text"]) == text
    assert "reply_markup" not in call.body


async def test_flood_limit_is_retryable_after_the_given_time(
    api: FakeTelegramApi, http: aiohttp.ClientSession, make_adapter: MakeAdapter
) -> None:
    api.fail("sendMessage", 429, "Too Many Requests: retry after 7", retry_after=7)
    with pytest.raises(SendError) as caught:
        await make_adapter(api.settings()).send(http, OutboundReply("42", "Xin chào"))
    assert caught.value.retryable is True
    assert caught.value.retry_after == 7
    assert caught.value.status == 429
    assert api.token not in str(caught.value)


@pytest.mark.parametrize(
    "description",
    ["Forbidden: bot was blocked by the user", "Bad Request: chat not found"],
)
async def test_blocked_user_or_unknown_chat_is_not_retried(
    api: FakeTelegramApi, http: aiohttp.ClientSession, description: str, make_adapter: MakeAdapter
) -> None:
    api.fail("sendMessage", 403 if description.startswith("Forbidden") else 400, description)
    with pytest.raises(SendError, match=description) as caught:
        await make_adapter(api.settings()).send(http, OutboundReply("42", "Xin chào"))
    assert caught.value.retryable is False
    assert caught.value.retry_after is None


@pytest.mark.parametrize("body", [None, "<html>502 Bad Gateway</html>"])
async def test_server_errors_are_retryable(
    api: FakeTelegramApi, http: aiohttp.ClientSession, body: str | None, make_adapter: MakeAdapter
) -> None:
    api.fail("sendMessage", 502 if body else 500, "Internal Server Error", body=body)
    with pytest.raises(SendError) as caught:
        await make_adapter(api.settings()).send(http, OutboundReply("42", "Xin chào"))
    assert caught.value.retryable is True
    assert caught.value.status in (500, 502)


async def test_network_failure_is_retryable_and_never_shows_the_token(
    http: aiohttp.ClientSession, make_adapter: MakeAdapter
) -> None:
    token = "987654:NEVER-SHOW-this_token"
    for api_base in ("http://127.0.0.1:9", "http://127.0.0.1:bad-port"):
        settings = TelegramSettings(token=SecretStr(token), api_base=api_base)
        with pytest.raises(SendError) as caught:
            await make_adapter(settings).send(http, OutboundReply("42", "Xin chào"))
        assert caught.value.retryable is True
        assert token not in str(caught.value)
        assert caught.value.__cause__ is None  # aiohttp's text may hold the URL
        assert caught.value.__suppress_context__


async def test_errors_never_show_the_token(
    api: FakeTelegramApi, http: aiohttp.ClientSession, make_adapter: MakeAdapter
) -> None:
    wrong = TelegramSettings(token=SecretStr("555:wrong-token"), api_base=api.api_base)
    with pytest.raises(SendError, match="Unauthorized") as caught:
        await make_adapter(wrong).send(http, OutboundReply("42", "Xin chào"))
    assert "wrong-token" not in str(caught.value)
    api.fail(None, 400, f"Bad Request: something about {api.token}")
    with pytest.raises(SendError) as caught:
        await make_adapter(api.settings()).send(http, OutboundReply("42", "Xin chào"))
    assert api.token not in str(caught.value)


async def test_typing_sends_a_chat_action_and_never_raises(
    api: FakeTelegramApi, http: aiohttp.ClientSession, make_adapter: MakeAdapter
) -> None:
    adapter = make_adapter(api.settings())
    await adapter.typing(http, "111222333")
    (call,) = api.calls_to("sendChatAction")
    assert call.body == {"chat_id": 111222333, "action": "typing"}
    api.fail("sendChatAction", 403, "Forbidden: bot was blocked by the user")
    await adapter.typing(http, "111222333")
    await make_adapter(TelegramSettings()).typing(http, "1")  # no token at all
