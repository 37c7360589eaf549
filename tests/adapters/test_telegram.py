"""The Telegram adapter: documented update shapes, the webhook secret, sending through a fake Bot
API, the webhook helpers, and long polling into the real database."""

from __future__ import annotations

import asyncio
import html
import json
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from typing import Any

import aiohttp
import pytest
from click.testing import CliRunner
from multidict import CIMultiDict
from pydantic import SecretStr
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from adapters.telegram import (
    MESSAGE_LIMIT,
    SECRET_HEADER,
    TelegramAdapter,
    delete_webhook,
    get_updates,
    parse_update,
    poll,
    set_webhook,
)
from bot.cli.commands.telegram import poll_into_store, telegram_group
from bot.core.errors import ConfigError, SendError, WebhookAuthError, WebhookPayloadError
from bot.core.messages import InboundMessage, OutboundReply, RawRequest
from bot.core.settings import Settings, TelegramSettings
from bot.db.models import Contact, Conversation, Message, MessageStatus
from tests.fakes.telegram_api import FakeTelegramApi, start_telegram_api

SECRET = "s3cret_Token-42"
DATE = 1_767_225_600  # 2026-01-01 00:00:00 UTC
USER = {
    "id": 111222333,
    "is_bot": False,
    "first_name": "Lan",
    "last_name": "Nguyễn",
    "username": "lan_ng",
    "language_code": "vi",
}
# A whole Sticker (PTB's types need its required fields).
STICKER = {
    "file_id": "s",
    "file_unique_id": "s",
    "type": "regular",
    "width": 512,
    "height": 512,
    "is_animated": False,
    "is_video": False,
}
PRIVATE_CHAT = {"id": 111222333, "first_name": "Lan", "last_name": "Nguyễn", "type": "private"}


def message_update(update_id: int, **fields: Any) -> dict[str, Any]:
    message = {"message_id": 7, "from": USER, "chat": PRIVATE_CHAT, "date": DATE, **fields}
    return {"update_id": update_id, "message": message}


def raw_request(body: Any, headers: dict[str, str] | None = None) -> RawRequest:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    headers = {SECRET_HEADER: SECRET} if headers is None else headers
    return RawRequest("POST", CIMultiDict(headers), {}, data)


def only(messages: list[InboundMessage]) -> InboundMessage:
    assert len(messages) == 1
    return messages[0]


@pytest.fixture
async def api() -> AsyncIterator[FakeTelegramApi]:
    api = await start_telegram_api()
    try:
        yield api
    finally:
        await api.close()


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


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


# -- parsing documented update shapes -----------------------------------------------------------


def test_private_text_message_is_a_question_from_the_chat() -> None:
    update = message_update(900001, text="Học phí ngành CNTT năm 2026 là bao nhiêu?")
    message = only(TelegramAdapter(TelegramSettings()).parse(raw_request(update)))
    assert message.channel == "telegram"
    assert message.event_id == "900001"
    assert message.kind == "text"
    assert message.external_user_id == "111222333"
    assert message.text == "Học phí ngành CNTT năm 2026 là bao nhiêu?"
    assert message.user_name == "Lan Nguyễn"
    assert message.locale == "vi"
    assert message.sent_at == datetime(2026, 1, 1, tzinfo=UTC)
    assert message.raw == update


@pytest.mark.parametrize(
    ("text", "command"),
    [
        ("/start", "/start"),
        ("/start@my_bot", "/start"),
        ("/start hoc-bong", "/start"),  # a deep link's payload
        ("/help", "/help"),
        ("/help@my_bot", "/help"),
    ],
)
def test_start_and_help_are_commands(text: str, command: str) -> None:
    entities = [{"offset": 0, "length": len(text.split()[0]), "type": "bot_command"}]
    message = only(parse_update(message_update(5, text=text, entities=entities)))
    assert (message.kind, message.text) == ("command", command)


def test_other_slash_words_and_lookalikes_stay_text() -> None:
    for text in ("/startup là gì?", "/hocphi", "hãy gõ /start"):
        message = only(parse_update(message_update(5, text=text)))
        assert (message.kind, message.text) == ("text", text)


def test_sticker_is_unsupported() -> None:
    sticker = {
        "file_id": "CAACAgIAAxkBAAIBY2",
        "file_unique_id": "AgADYQ",
        "type": "regular",
        "width": 512,
        "height": 512,
        "is_animated": False,
        "is_video": False,
        "emoji": "👍",
    }
    message = only(parse_update(message_update(6, sticker=sticker)))
    assert (message.kind, message.text) == ("unsupported", "")
    assert message.external_user_id == "111222333"


def test_photo_with_caption_is_unsupported_and_keeps_the_caption() -> None:
    photo = [
        {"file_id": "AgACAgQ1", "file_unique_id": "AQAD1", "width": 90, "height": 67},
        {"file_id": "AgACAgQ2", "file_unique_id": "AQAD2", "width": 1280, "height": 960},
    ]
    update = message_update(7, photo=photo, caption="Giấy báo nhập học của em")
    message = only(parse_update(update))
    assert (message.kind, message.text) == ("unsupported", "Giấy báo nhập học của em")


@pytest.mark.parametrize(
    "field",
    [
        {"voice": {"file_id": "v", "file_unique_id": "v", "duration": 3}},
        {"document": {"file_id": "d", "file_unique_id": "d", "file_name": "hoso.pdf"}},
        {"location": {"latitude": 10.77, "longitude": 106.69}},
    ],
)
def test_other_media_are_unsupported(field: dict[str, Any]) -> None:
    assert only(parse_update(message_update(8, **field))).kind == "unsupported"


def test_service_message_is_an_event() -> None:
    update = message_update(9, pinned_message={"message_id": 3, "chat": PRIVATE_CHAT, "date": 0})
    assert only(parse_update(update)).kind == "event"


def test_edited_message_is_stored_not_answered() -> None:
    edited = {
        "message_id": 7,
        "from": USER,
        "chat": PRIVATE_CHAT,
        "date": DATE,
        "edit_date": DATE + 30,
        "text": "Học phí ngành CNTT năm 2026?",
    }
    message = only(parse_update({"update_id": 10, "edited_message": edited}))
    assert message.kind == "event"
    assert message.external_user_id == "111222333"
    assert message.event_id == "10"


def test_callback_query_is_an_event_of_the_chat() -> None:
    update = {
        "update_id": 11,
        "callback_query": {
            "id": "4382bfdwdsb323b2d9",
            "from": USER,
            "message": {"message_id": 42, "chat": PRIVATE_CHAT, "date": DATE, "text": "Chọn:"},
            "chat_instance": "-8271717171",
            "data": "faq:12",
        },
    }
    message = only(parse_update(update))
    assert (message.kind, message.external_user_id) == ("event", "111222333")
    assert message.user_name == "Lan Nguyễn"
    assert message.raw == update


def test_my_chat_member_is_an_event_of_the_chat() -> None:
    bot = {"id": 7000000001, "is_bot": True, "first_name": "Tư vấn", "username": "tuvan_bot"}
    update = {
        "update_id": 12,
        "my_chat_member": {
            "chat": PRIVATE_CHAT,
            "from": USER,
            "date": DATE,
            "old_chat_member": {"user": bot, "status": "member"},
            "new_chat_member": {"user": bot, "status": "kicked", "until_date": 0},
        },
    }
    message = only(parse_update(update))
    assert (message.kind, message.external_user_id) == ("event", "111222333")
    assert message.sent_at == datetime(2026, 1, 1, tzinfo=UTC)


def test_channel_post_and_unknown_updates_are_events() -> None:
    channel = {"id": -1001234567890, "title": "Tin tuyển sinh", "type": "channel"}
    post = {"update_id": 13, "channel_post": {"message_id": 1, "chat": channel, "date": DATE}}
    assert only(parse_update(post)).external_user_id == "-1001234567890"
    odd = only(parse_update({"update_id": 14, "something_new": {"x": 1}}))
    assert (odd.kind, odd.external_user_id) == ("event", "unknown")


@pytest.mark.parametrize(
    "body",
    [
        b"{not json",
        b"\xff\xfe",
        b"[]",
        b'"update"',
        b"{}",
        b'{"update_id": "1"}',
        b'{"update_id": 1, "message": "hi"}',
        b'{"update_id": 1, "message": {"message_id": 1, "date": 0}}',
        b'{"update_id": 1, "message": {"chat": {"id": "x"}, "text": "hi"}}',
        b'{"update_id": 1, "message": {"chat": {"id": 1}, "text": 5}}',
    ],
)
def test_malformed_body_is_a_payload_error(body: bytes) -> None:
    with pytest.raises(WebhookPayloadError):
        TelegramAdapter(TelegramSettings()).parse(raw_request(body))


# -- the webhook secret -------------------------------------------------------------------------


def test_right_secret_is_accepted_whatever_the_header_case() -> None:
    adapter = TelegramAdapter(TelegramSettings(secret_token=SecretStr(SECRET)))
    adapter.verify(raw_request({}, {SECRET_HEADER: SECRET}))
    adapter.verify(raw_request({}, {SECRET_HEADER.lower(): SECRET}))


@pytest.mark.parametrize(
    "headers",
    [{SECRET_HEADER: "wrong"}, {SECRET_HEADER: ""}, {SECRET_HEADER: SECRET + "x"}, {}],
)
def test_wrong_or_missing_secret_is_rejected(headers: dict[str, str]) -> None:
    adapter = TelegramAdapter(TelegramSettings(secret_token=SecretStr(SECRET)))
    with pytest.raises(WebhookAuthError):
        adapter.verify(raw_request({}, headers))


def test_without_a_configured_secret_every_request_is_rejected() -> None:
    adapter = TelegramAdapter(TelegramSettings(token=SecretStr("1:x")))
    with pytest.raises(WebhookAuthError, match="TUVAN_TELEGRAM__SECRET_TOKEN"):
        adapter.verify(raw_request({}, {SECRET_HEADER: ""}))


# -- sending ------------------------------------------------------------------------------------


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


CITED = (
    "Theo tài liệu tuyển sinh của trường:\n- Học phí năm 2026 là 32.500.000 đồng/năm. [1]\n"
    "- Hạn nộp học phí là 28/8/2026. [2]\n\n"
    "Nguồn:\n[1] Học phí năm học 2026–2027 — https://tuyensinh.shut.example.vn/hoc-phi\n"
    "[2] Lịch tuyển sinh 2026 — https://tuyensinh.shut.example.vn/lich\n\n"
    "Thông tin trích từ tài liệu; bạn nên kiểm tra lại với phòng tuyển sinh."
)


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


# -- webhook helpers and polling ----------------------------------------------------------------


async def test_set_webhook_sends_url_and_secret(
    api: FakeTelegramApi, http: aiohttp.ClientSession
) -> None:
    url = "https://tuyensinh.example.vn/webhooks/telegram"
    await set_webhook(http, api.settings(secret_token=SECRET), url, drop_pending=True)
    (call,) = api.calls_to("setWebhook")
    assert call.body == {"url": url, "secret_token": SECRET, "drop_pending_updates": True}
    await delete_webhook(http, api.settings())
    assert api.calls_to("deleteWebhook")[0].body == {"drop_pending_updates": False}
    assert api.webhook is None


@pytest.mark.parametrize("secret", [None, "has space", "x" * 257, "dấu"])
async def test_set_webhook_refuses_a_missing_or_invalid_secret(
    api: FakeTelegramApi, http: aiohttp.ClientSession, secret: str | None
) -> None:
    with pytest.raises(ConfigError, match="TUVAN_TELEGRAM__SECRET_TOKEN"):
        await set_webhook(http, api.settings(secret_token=secret), "https://x.example/t")
    assert api.calls == []


async def test_get_updates_passes_offset_and_timeout(
    api: FakeTelegramApi, http: aiohttp.ClientSession
) -> None:
    api.push_update(message_update(1, text="a"))
    api.push_update(message_update(2, text="b"))
    updates = await get_updates(http, api.settings(), None, 0)
    assert [u["update_id"] for u in updates] == [1, 2]
    assert await get_updates(http, api.settings(), 3, 0) == []
    assert api.calls_to("getUpdates")[1].body == {"offset": 3, "timeout": 0}


async def wait_for(condition: Any, seconds: float = 10.0) -> None:
    async with asyncio.timeout(seconds):
        while not condition():  # noqa: ASYNC110 (the fake's state has no event to wait on)
            await asyncio.sleep(0.02)


async def poll_until(
    api: FakeTelegramApi,
    http: aiohttp.ClientSession,
    sessionmaker: async_sessionmaker[AsyncSession],
    offset: int,
) -> None:
    """Poll into the store until the fake has been asked for updates from ``offset`` on."""
    stop = asyncio.Event()
    task = asyncio.create_task(
        poll_into_store(api.settings(), sessionmaker, http, stop=stop, timeout=1)
    )
    try:
        await wait_for(lambda: offset in api.offsets or task.done())
    finally:
        stop.set()
        await asyncio.wait_for(task, 5)


async def test_poll_stores_updates_once_and_advances_the_offset(
    api: FakeTelegramApi,
    http: aiohttp.ClientSession,
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    api.push_update(message_update(501, text="Học phí bao nhiêu?"))
    api.push_update(message_update(502, sticker=STICKER))
    await poll_until(api, http, sessionmaker, 503)
    # Telegram re-sends what was not confirmed (here: across a restart); new updates come.
    api.push_update(message_update(502, sticker=STICKER))
    api.push_update(message_update(503, text="/start"))
    await poll_until(api, http, sessionmaker, 504)

    assert api.offsets[0] is None
    assert api.offsets.index(503) < api.offsets.index(504)
    async with sessionmaker() as session:
        rows = (
            await session.execute(
                select(Message.event_id, Message.kind, Message.text, Message.status)
                .where(Message.channel == "telegram")
                .order_by(Message.event_id)
            )
        ).all()
        contact = await session.scalar(
            select(Contact)
            .join(Conversation, Conversation.contact_id == Contact.id)
            .where(Contact.channel == "telegram", Contact.external_id == "111222333")
        )
    assert [tuple(r) for r in rows] == [
        ("501", "text", "Học phí bao nhiêu?", MessageStatus.received),
        ("502", "unsupported", "", MessageStatus.received),
        ("503", "command", "/start", MessageStatus.received),
    ]
    assert contact is not None
    assert (contact.name, contact.locale) == ("Lan Nguyễn", "vi")


async def test_poll_fetches_again_what_it_could_not_deliver(
    api: FakeTelegramApi, http: aiohttp.ClientSession
) -> None:
    api.push_update(message_update(1, text="a"))
    api.push_update({"update_id": 2, "message": "not a message"})  # skipped, logged
    delivered: list[list[str]] = []
    stop = asyncio.Event()

    async def deliver(messages: list[InboundMessage]) -> None:
        delivered.append([m.event_id for m in messages])
        if len(delivered) == 1:
            raise RuntimeError("database down")
        stop.set()

    await asyncio.wait_for(poll(api.settings(), http, deliver, stop=stop, timeout=0), 10)
    assert delivered == [["1"], ["1"]]
    assert api.offsets[:2] == [None, None]  # not advanced past the failed batch


async def test_poll_stops_with_a_hint_while_a_webhook_is_set(
    api: FakeTelegramApi, http: aiohttp.ClientSession
) -> None:
    api.webhook = {"url": "https://x.example/t"}

    async def deliver(messages: list[InboundMessage]) -> None:
        raise AssertionError("nothing to deliver")

    with pytest.raises(SendError, match="tuvan telegram delete-webhook"):
        await poll(api.settings(), http, deliver, stop=asyncio.Event(), timeout=0)


async def test_poll_returns_promptly_when_stopped_during_a_long_poll(
    api: FakeTelegramApi, http: aiohttp.ClientSession
) -> None:
    async def deliver(messages: list[InboundMessage]) -> None:
        raise AssertionError("nothing to deliver")

    stop = asyncio.Event()
    task = asyncio.create_task(poll(api.settings(), http, deliver, stop=stop, timeout=30))
    await wait_for(lambda: api.offsets)
    stop.set()
    await asyncio.wait_for(task, 2)


# -- the CLI ------------------------------------------------------------------------------------


async def test_cli_set_webhook_uses_the_settings_from_the_environment(
    api: FakeTelegramApi, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TUVAN_TELEGRAM__TOKEN", api.token)
    monkeypatch.setenv("TUVAN_TELEGRAM__SECRET_TOKEN", SECRET)
    monkeypatch.setenv("TUVAN_TELEGRAM__API_BASE", api.api_base)
    settings = Settings(_env_file=None)
    url = "https://tuyensinh.example.vn/webhooks/telegram"
    # The command runs its own event loop: in a thread, while this loop serves the fake API.
    result = await asyncio.to_thread(
        CliRunner().invoke, telegram_group, ["set-webhook", url, "--drop-pending"], obj=settings
    )
    assert result.exit_code == 0, result.output
    assert url in result.output
    assert api.webhook == {"url": url, "secret_token": SECRET, "drop_pending_updates": True}

    result = await asyncio.to_thread(
        CliRunner().invoke, telegram_group, ["delete-webhook"], obj=settings
    )
    assert result.exit_code == 0, result.output
    assert api.webhook is None


async def test_cli_without_a_token_says_what_to_set(api: FakeTelegramApi) -> None:
    settings = Settings(_env_file=None, telegram=TelegramSettings())
    for args in (["set-webhook", "https://x.example/t"], ["delete-webhook"], ["poll"]):
        result = await asyncio.to_thread(CliRunner().invoke, telegram_group, args, obj=settings)
        assert result.exit_code == 1
        assert "TUVAN_TELEGRAM__TOKEN" in result.output
    assert api.calls == []


async def test_cli_set_webhook_without_a_secret_fails_cleanly(api: FakeTelegramApi) -> None:
    settings = Settings(_env_file=None, telegram=api.settings())
    args = ["set-webhook", "https://x.example/t"]
    result = await asyncio.to_thread(CliRunner().invoke, telegram_group, args, obj=settings)
    assert result.exit_code == 1
    assert "TUVAN_TELEGRAM__SECRET_TOKEN" in result.output
    assert api.token not in result.output
