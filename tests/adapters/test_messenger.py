"""The Messenger adapter: handshake, signature, every event of a batch, the Send API."""

from __future__ import annotations

import hashlib
import hmac
import json
import socket
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import aiohttp
import pytest
from multidict import CIMultiDict
from pydantic import SecretStr

from adapters.messenger import PAGE_INBOX_APP_ID, MessengerAdapter
from bot.core.errors import SendError, WebhookAuthError, WebhookPayloadError
from bot.core.messages import OutboundReply, RawRequest
from bot.core.settings import MessengerSettings
from tests.fakes.messenger_api import MessengerApiFake, start_messenger_api

APP_SECRET = "app-secret-0123456789"
PAGE_TOKEN = "EAAG-page-token-do-not-leak"
VERIFY_TOKEN = "verify-me"
APP_ID = "1517776481860111"
PAGE_ID = "104857600000001"
PSID = "6543210987654321"
PSID_2 = "1234567890123456"
TS = 1_727_000_000_123  # ms
TS_AT = datetime.fromtimestamp(TS / 1000, tz=UTC)


def make_settings(**overrides: Any) -> MessengerSettings:
    values: dict[str, Any] = {
        "page_token": SecretStr(PAGE_TOKEN),
        "app_secret": SecretStr(APP_SECRET),
        "verify_token": SecretStr(VERIFY_TOKEN),
        "app_id": APP_ID,
    }
    values.update(overrides)
    return MessengerSettings(**values)


def sign(body: bytes, secret: str = APP_SECRET) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def post(body: bytes, signature: str | None = None) -> RawRequest:
    headers: CIMultiDict[str] = CIMultiDict({"Content-Type": "application/json"})
    if signature is not None:
        headers["X-Hub-Signature-256"] = signature
    return RawRequest("POST", headers, {}, body)


def webhook(*entries: list[dict[str, Any]]) -> bytes:
    return json.dumps(
        {
            "object": "page",
            "entry": [{"id": PAGE_ID, "time": TS + 500, "messaging": events} for events in entries],
        }
    ).encode()


def from_user(psid: str = PSID, ts: int = TS, **event: Any) -> dict[str, Any]:
    return {"sender": {"id": psid}, "recipient": {"id": PAGE_ID}, "timestamp": ts, **event}


def echo(app_id: int | None, text: str = "Chào bạn", mid: str = "m_echo1") -> dict[str, Any]:
    message: dict[str, Any] = {"is_echo": True, "mid": mid, "text": text}
    if app_id is not None:
        message["app_id"] = app_id
    return {
        "sender": {"id": PAGE_ID},
        "recipient": {"id": PSID},
        "timestamp": TS,
        "message": message,
    }


@pytest.fixture
def adapter() -> MessengerAdapter:
    return MessengerAdapter(make_settings())


# -- handshake ------------------------------------------------------------------------------


def handshake_request(**query: str) -> RawRequest:
    return RawRequest("GET", CIMultiDict(), query, b"")


def test_handshake_with_the_verify_token_returns_the_challenge(adapter: MessengerAdapter) -> None:
    raw = handshake_request(
        **{"hub.mode": "subscribe", "hub.verify_token": VERIFY_TOKEN, "hub.challenge": "1158201444"}
    )
    assert adapter.handshake(raw) == "1158201444"


@pytest.mark.parametrize(
    "query",
    [
        {"hub.mode": "subscribe", "hub.verify_token": "wrong", "hub.challenge": "1"},
        {"hub.mode": "unsubscribe", "hub.verify_token": VERIFY_TOKEN, "hub.challenge": "1"},
        {"hub.mode": "subscribe", "hub.challenge": "1"},
        {"hub.mode": "subscribe", "hub.verify_token": VERIFY_TOKEN},
    ],
)
def test_handshake_without_the_right_token_is_rejected(
    adapter: MessengerAdapter, query: dict[str, str]
) -> None:
    with pytest.raises(WebhookAuthError):
        adapter.handshake(handshake_request(**query))


def test_handshake_without_a_configured_verify_token_is_rejected() -> None:
    adapter = MessengerAdapter(make_settings(verify_token=None))
    raw = handshake_request(
        **{"hub.mode": "subscribe", "hub.verify_token": "", "hub.challenge": "1"}
    )
    with pytest.raises(WebhookAuthError):
        adapter.handshake(raw)


# -- signature ------------------------------------------------------------------------------


def test_valid_messenger_signature_is_accepted(adapter: MessengerAdapter) -> None:
    body = webhook([from_user(message={"mid": "m_1", "text": "hi"})])
    adapter.verify(post(body, sign(body)))


def test_forged_messenger_signature_is_rejected(adapter: MessengerAdapter) -> None:
    body = webhook([from_user(message={"mid": "m_1", "text": "hi"})])
    with pytest.raises(WebhookAuthError):
        adapter.verify(post(body, sign(body, secret="another-secret")))
    with pytest.raises(WebhookAuthError):
        adapter.verify(post(body + b" ", sign(body)))


def test_missing_signature_header_is_rejected(adapter: MessengerAdapter) -> None:
    body = webhook([])
    with pytest.raises(WebhookAuthError):
        adapter.verify(post(body))


def test_signature_with_another_algorithm_prefix_is_rejected(adapter: MessengerAdapter) -> None:
    body = webhook([])
    sha1 = "sha1=" + hmac.new(APP_SECRET.encode(), body, hashlib.sha1).hexdigest()
    with pytest.raises(WebhookAuthError):
        adapter.verify(post(body, sha1))
    # The hex of a correct sha256 under another name is still refused.
    with pytest.raises(WebhookAuthError):
        adapter.verify(post(body, sign(body).replace("sha256=", "sha512=")))


def test_signature_is_over_the_raw_escaped_bytes_not_a_reserialisation(
    adapter: MessengerAdapter,
) -> None:
    # Meta sends (and signs) JSON with escaped unicode: "H\u1ecdc ph\u00ed".
    event = from_user(message={"mid": "m_vi", "text": "Học phí ngành CNTT?"})
    body = json.dumps({"object": "page", "entry": [{"id": PAGE_ID, "messaging": [event]}]})
    raw_bytes = body.encode()
    assert b"\\u1ecd" in raw_bytes
    adapter.verify(post(raw_bytes, sign(raw_bytes)))
    reserialised = json.dumps(json.loads(raw_bytes), ensure_ascii=False).encode()
    assert reserialised != raw_bytes
    with pytest.raises(WebhookAuthError):
        adapter.verify(post(raw_bytes, sign(reserialised)))
    # And what is parsed is the unescaped text.
    assert adapter.parse(post(raw_bytes))[0].text == "Học phí ngành CNTT?"


def test_signature_is_rejected_when_no_app_secret_is_configured() -> None:
    adapter = MessengerAdapter(make_settings(app_secret=None))
    body = webhook([])
    with pytest.raises(WebhookAuthError):
        adapter.verify(post(body, sign(body)))
    empty = MessengerAdapter(make_settings(app_secret=SecretStr("")))
    with pytest.raises(WebhookAuthError):
        empty.verify(post(body, "sha256=" + hmac.new(b"", body, hashlib.sha256).hexdigest()))


# -- parsing --------------------------------------------------------------------------------


def test_every_event_of_every_entry_of_a_batch_is_parsed(adapter: MessengerAdapter) -> None:
    body = webhook(
        [
            from_user(message={"mid": "m_a1", "text": "Học phí bao nhiêu?"}),
            from_user(psid=PSID_2, message={"mid": "m_a2", "text": "Điểm chuẩn 2024?"}),
        ],
        [
            from_user(ts=TS + 1, message={"mid": "m_b1", "text": "Có ký túc xá không?"}),
            from_user(psid=PSID_2, delivery={"mids": ["m_x"], "watermark": TS}),
        ],
    )
    parsed = adapter.parse(post(body))
    assert [(m.event_id, m.external_user_id, m.kind) for m in parsed] == [
        ("m_a1", PSID, "text"),
        ("m_a2", PSID_2, "text"),
        ("m_b1", PSID, "text"),
        (f"delivery:{PSID_2}:{TS}:{TS}", PSID_2, "event"),
    ]
    assert all(m.channel == "messenger" for m in parsed)


def test_text_message_becomes_a_text_inbound(adapter: MessengerAdapter) -> None:
    event = from_user(message={"mid": "m_1457764197618", "text": "Học phí ngành CNTT?"})
    [message] = adapter.parse(post(webhook([event])))
    assert message.kind == "text"
    assert message.event_id == "m_1457764197618"
    assert message.external_user_id == PSID
    assert message.text == "Học phí ngành CNTT?"
    assert message.sent_at == TS_AT
    assert message.raw == event  # this event's JSON, not the batch


@pytest.mark.parametrize(
    "attachment",
    [
        {"type": "image", "payload": {"url": "https://scontent.xx.fbcdn.net/a.jpg"}},
        {"type": "image", "payload": {"url": "https://x/s.png", "sticker_id": 369239263222822}},
        {"type": "audio", "payload": {"url": "https://cdn.fbsbx.com/v.mp4"}},
        {"type": "file", "payload": {"url": "https://cdn.fbsbx.com/a.pdf"}},
        {"type": "location", "payload": {"coordinates": {"lat": 10.7, "long": 106.6}}},
    ],
)
def test_attachment_only_message_is_unsupported(
    adapter: MessengerAdapter, attachment: dict[str, Any]
) -> None:
    event = from_user(message={"mid": "m_att", "attachments": [attachment]})
    [message] = adapter.parse(post(webhook([event])))
    assert (message.kind, message.event_id, message.text) == ("unsupported", "m_att", "")


def test_get_started_postback_is_a_command(adapter: MessengerAdapter) -> None:
    event = from_user(postback={"mid": "m_pb1", "title": "Bắt đầu", "payload": "GET_STARTED"})
    [message] = adapter.parse(post(webhook([event])))
    assert (message.kind, message.event_id, message.text) == ("command", "m_pb1", "/start")


def test_other_postback_is_a_question_from_its_payload_or_title(adapter: MessengerAdapter) -> None:
    question = from_user(
        postback={"mid": "m_pb2", "title": "Học phí", "payload": "Học phí năm 2025 là bao nhiêu?"}
    )
    coded = from_user(ts=TS + 1, postback={"title": "Điểm chuẩn", "payload": "MENU_SCORES"})
    first, second = adapter.parse(post(webhook([question, coded])))
    assert (first.kind, first.text) == ("text", "Học phí năm 2025 là bao nhiêu?")
    assert (second.kind, second.text) == ("text", "Điểm chuẩn")
    # A postback without a mid gets a stable id of its own.
    assert second.event_id == f"postback:{PSID}:{TS + 1}"
    assert adapter.parse(post(webhook([coded])))[0].event_id == second.event_id


def test_quick_reply_is_read_as_its_payload_question(adapter: MessengerAdapter) -> None:
    event = from_user(
        message={
            "mid": "m_qr",
            "text": "Học bổng cho tân sinh…",
            "quick_reply": {"payload": "Học bổng cho tân sinh viên gồm những loại nào?"},
        }
    )
    [message] = adapter.parse(post(webhook([event])))
    assert (message.kind, message.text) == (
        "text",
        "Học bổng cho tân sinh viên gồm những loại nào?",
    )


def test_echo_of_our_own_send_is_an_event(adapter: MessengerAdapter) -> None:
    [message] = adapter.parse(post(webhook([echo(int(APP_ID))])))
    assert message.kind == "event"
    assert message.external_user_id == PSID
    assert message.event_id == "m_echo1"


def test_echo_from_the_page_inbox_is_staff_in_the_users_thread(adapter: MessengerAdapter) -> None:
    event = echo(int(PAGE_INBOX_APP_ID), text="Em để lại số điện thoại nhé")
    [message] = adapter.parse(post(webhook([event])))
    assert message.kind == "staff"
    assert message.external_user_id == PSID  # the recipient: the user staff wrote to
    assert message.text == "Em để lại số điện thoại nhé"


def test_echo_from_another_app_is_staff(adapter: MessengerAdapter) -> None:
    [message] = adapter.parse(post(webhook([echo(999000111222)])))
    assert message.kind == "staff"


def test_echo_without_our_app_id_configured_is_staff_only_from_the_page_inbox() -> None:
    adapter = MessengerAdapter(make_settings(app_id=None))
    ours, inbox = adapter.parse(
        post(webhook([echo(int(APP_ID)), echo(int(PAGE_INBOX_APP_ID), mid="m_echo2")]))
    )
    assert (ours.kind, inbox.kind) == ("event", "staff")


def test_delivery_read_and_other_events_are_stored_not_answered(
    adapter: MessengerAdapter,
) -> None:
    events = [
        from_user(delivery={"mids": ["m_echo1"], "watermark": TS - 10}),
        from_user(ts=TS + 1, read={"watermark": TS}),
        from_user(
            ts=TS + 2,
            reaction={"reaction": "love", "emoji": "❤", "action": "react", "mid": "m_echo1"},
        ),
        from_user(ts=TS + 3, pass_thread_control={"new_owner_app_id": "123", "metadata": ""}),
        from_user(ts=TS + 4, optin={"type": "notification_messages", "payload": "x"}),
        from_user(ts=TS + 5, message={"mid": "m_gone", "is_deleted": True}),
    ]
    parsed = adapter.parse(post(webhook(events)))
    assert [m.kind for m in parsed] == ["event"] * len(events)
    assert [m.external_user_id for m in parsed] == [PSID] * len(events)
    ids = [m.event_id for m in parsed]
    assert len(set(ids)) == len(ids)
    assert "m_echo1" not in ids  # a reaction's mid is the reacted-to message's
    assert ids[1] == f"read:{PSID}:{TS + 1}:{TS}"
    assert [m.raw for m in parsed] == events


def test_standby_events_are_stored_not_answered(adapter: MessengerAdapter) -> None:
    body = json.dumps(
        {
            "object": "page",
            "entry": [
                {
                    "id": PAGE_ID,
                    "time": TS,
                    "standby": [
                        from_user(message={"mid": "m_sb", "text": "Cho em hỏi"}),
                        echo(int(PAGE_INBOX_APP_ID), mid="m_sb_echo"),
                    ],
                }
            ],
        }
    ).encode()
    user, staff = adapter.parse(post(body))
    assert (user.kind, user.event_id) == ("event", "m_sb")
    assert staff.kind == "staff"


@pytest.mark.parametrize(
    "body",
    [
        b"{not json",
        b"\xff\xfe",
        b"[]",
        json.dumps({"object": "instagram", "entry": []}).encode(),
        json.dumps({"object": "page"}).encode(),
        json.dumps({"object": "page", "entry": [{"messaging": {"sender": {}}}]}).encode(),
        json.dumps({"object": "page", "entry": [{"messaging": [{"message": {}}]}]}).encode(),
        json.dumps({"object": "page", "entry": ["x"]}).encode(),
    ],
)
def test_malformed_body_is_a_payload_error(adapter: MessengerAdapter, body: bytes) -> None:
    with pytest.raises(WebhookPayloadError):
        adapter.parse(post(body))


# -- sending --------------------------------------------------------------------------------


@pytest.fixture
async def api() -> AsyncIterator[MessengerApiFake]:
    fake = await start_messenger_api(page_token=PAGE_TOKEN)
    try:
        yield fake
    finally:
        await fake.close()


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


def sender(api: MessengerApiFake, **overrides: Any) -> MessengerAdapter:
    return MessengerAdapter(make_settings(api_base=api.base_url, **overrides))


async def test_send_posts_a_response_with_the_token_only_in_the_query(
    api: MessengerApiFake, http: aiohttp.ClientSession
) -> None:
    result = await sender(api).send(http, OutboundReply(PSID, "Học phí là 12 triệu đồng."))
    [request] = api.requests
    assert request.path == "/v21.0/me/messages"
    assert request.query == {"access_token": PAGE_TOKEN}
    assert request.body == {
        "messaging_type": "RESPONSE",
        "recipient": {"id": PSID},
        "message": {"text": "Học phí là 12 triệu đồng."},
    }
    assert PAGE_TOKEN not in json.dumps(request.body)
    assert PAGE_TOKEN not in " ".join(f"{k}: {v}" for k, v in request.headers.items())
    assert result.external_ids == ("m_fake1",)
    assert result.parts == 1


def long_vietnamese_answer() -> str:
    sentences = [
        f"Mục {i}, Trường Đại học Khoa học và Công nghệ tuyển sinh ngành Công nghệ thông tin "
        f"với chỉ tiêu {100 + i} sinh viên, học phí khoảng {12 + i % 5} triệu đồng mỗi học kỳ."
        for i in range(36)
    ]
    paragraphs = [" ".join(sentences[i : i + 4]) for i in range(0, len(sentences), 4)]
    return "\n\n".join(paragraphs)


async def test_long_answer_is_split_under_2000_on_borders_in_order(
    api: MessengerApiFake, http: aiohttp.ClientSession
) -> None:
    text = long_vietnamese_answer()
    assert 4400 < len(text) < 5500
    questions = ("Học bổng cho tân sinh viên gồm những loại nào?", "Ký túc xá?")
    result = await sender(api).send(http, OutboundReply(PSID, text, quick_replies=questions))
    sent = [m["message"]["text"] for m in api.messages]
    assert len(sent) == result.parts >= 3
    assert result.external_ids == tuple(f"m_fake{i}" for i in range(1, len(sent) + 1))
    assert all(len(part) < 2000 for part in sent)
    assert all(part.endswith("kỳ.") for part in sent)  # cut at sentence borders
    assert " ".join(" ".join(sent).split()) == " ".join(text.split())  # nothing lost, in order
    assert all("quick_replies" not in m["message"] for m in api.messages[:-1])
    quick = api.messages[-1]["message"]["quick_replies"]
    assert quick == [
        {
            "content_type": "text",
            "title": "Học bổng cho tân si…",
            "payload": "Học bổng cho tân sinh viên gồm những loại nào?",
        },
        {"content_type": "text", "title": "Ký túc xá?", "payload": "Ký túc xá?"},
    ]


CITED = (
    "Theo tài liệu tuyển sinh của trường:\n- Học phí năm 2026 là 32.500.000 đồng/năm. [1]\n"
    "- Hạn nộp học phí là 28/8/2026. [2]\n\n"
    "Nguồn:\n[1] Học phí năm học 2026–2027 — https://tuyensinh.shut.example.vn/hoc-phi\n"
    "[2] Lịch tuyển sinh 2026 — https://tuyensinh.shut.example.vn/lich\n\n"
    "Thông tin trích từ tài liệu; bạn nên kiểm tra lại với phòng tuyển sinh."
)


async def test_sources_become_a_last_message_of_link_buttons(
    api: MessengerApiFake, http: aiohttp.ClientSession
) -> None:
    result = await sender(api).send(http, OutboundReply(PSID, CITED, quick_replies=("Học bổng?",)))
    text, template = (m["message"] for m in api.messages)
    assert result.parts == 2
    assert "Nguồn:" not in text["text"]
    assert "https://" not in text["text"]
    assert "quick_replies" not in text  # they go under the last message
    payload = template["attachment"]["payload"]
    assert payload["template_type"] == "button"
    assert payload["text"] == "Nguồn:"
    assert payload["buttons"] == [
        {
            "type": "web_url",
            "url": "https://tuyensinh.shut.example.vn/hoc-phi",
            "title": "[1] Học phí năm học…",
        },
        {
            "type": "web_url",
            "url": "https://tuyensinh.shut.example.vn/lich",
            "title": "[2] Lịch tuyển sinh…",
        },
    ]
    assert all(len(b["title"]) <= 20 for b in payload["buttons"])
    assert template["quick_replies"][0]["payload"] == "Học bổng?"


async def test_quick_replies_are_capped_by_settings_and_by_messenger(
    api: MessengerApiFake, http: aiohttp.ClientSession
) -> None:
    questions = tuple(f"Câu hỏi thường gặp số {i} về tuyển sinh?" for i in range(20))
    await sender(api).send(http, OutboundReply(PSID, "Trả lời.", quick_replies=questions))
    await sender(api, quick_replies=50).send(
        http, OutboundReply(PSID, "Trả lời.", quick_replies=questions)
    )
    await sender(api, quick_replies=0).send(
        http, OutboundReply(PSID, "Trả lời.", quick_replies=questions)
    )
    default, many, none = (m["message"] for m in api.messages)
    assert len(default["quick_replies"]) == 3
    assert len(many["quick_replies"]) == 13
    assert all(len(q["title"]) <= 20 for q in many["quick_replies"])
    assert "quick_replies" not in none


async def test_outside_window_error_is_not_retryable(
    api: MessengerApiFake, http: aiohttp.ClientSession
) -> None:
    api.fail_outside_window()
    with pytest.raises(SendError) as caught:
        await sender(api).send(http, OutboundReply(PSID, "Chào bạn"))
    assert caught.value.retryable is False
    assert caught.value.code == "outside_window"
    assert caught.value.status == 400
    assert PAGE_TOKEN not in str(caught.value)


async def test_rate_limit_is_retryable(api: MessengerApiFake, http: aiohttp.ClientSession) -> None:
    api.fail_rate_limit()
    with pytest.raises(SendError) as caught:
        await sender(api).send(http, OutboundReply(PSID, "Chào bạn"))
    assert caught.value.retryable is True
    assert caught.value.code == "613"


async def test_server_error_is_retryable(
    api: MessengerApiFake, http: aiohttp.ClientSession
) -> None:
    api.fail(500)
    with pytest.raises(SendError) as caught:
        await sender(api).send(http, OutboundReply(PSID, "Chào bạn"))
    assert (caught.value.retryable, caught.value.status) == (True, 500)
    api.fail_not_json(502)
    with pytest.raises(SendError) as caught:
        await sender(api).send(http, OutboundReply(PSID, "Chào bạn"))
    assert (caught.value.retryable, caught.value.status) == (True, 502)


async def test_other_client_errors_are_not_retryable(
    api: MessengerApiFake, http: aiohttp.ClientSession
) -> None:
    with pytest.raises(SendError) as caught:
        await sender(api, page_token=SecretStr("wrong-token")).send(http, OutboundReply(PSID, "x"))
    assert (caught.value.retryable, caught.value.code) == (False, "190")
    assert "wrong-token" not in str(caught.value)


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


async def test_network_error_is_retryable_and_never_shows_the_token(
    http: aiohttp.ClientSession,
) -> None:
    adapter = MessengerAdapter(make_settings(api_base=f"http://127.0.0.1:{closed_port()}"))
    with pytest.raises(SendError) as caught:
        await adapter.send(http, OutboundReply(PSID, "Chào bạn"))
    assert caught.value.retryable is True
    seen = [caught.value, caught.value.__cause__, caught.value.__context__]
    assert all(PAGE_TOKEN not in f"{e!s}{e!r}" for e in seen if e is not None)


async def test_send_without_a_page_token_is_not_retryable(http: aiohttp.ClientSession) -> None:
    adapter = MessengerAdapter(make_settings(page_token=None))
    with pytest.raises(SendError) as caught:
        await adapter.send(http, OutboundReply(PSID, "Chào bạn"))
    assert caught.value.retryable is False


async def test_typing_and_mark_seen_are_requests_of_their_own(
    api: MessengerApiFake, http: aiohttp.ClientSession
) -> None:
    adapter = sender(api)
    await adapter.typing(http, PSID)
    await adapter.mark_seen(http, PSID)
    assert api.actions == [
        {"recipient": {"id": PSID}, "sender_action": "typing_on"},
        {"recipient": {"id": PSID}, "sender_action": "mark_seen"},
    ]
    assert all(r.query == {"access_token": PAGE_TOKEN} for r in api.requests)


async def test_typing_failure_is_logged_not_raised(
    api: MessengerApiFake, http: aiohttp.ClientSession, caplog: pytest.LogCaptureFixture
) -> None:
    api.fail(500)
    await sender(api).typing(http, PSID)
    closed = MessengerAdapter(make_settings(api_base=f"http://127.0.0.1:{closed_port()}"))
    await closed.mark_seen(http, PSID)
    assert len([r for r in caplog.records if r.name == "adapters.messenger"]) == 2
    assert PAGE_TOKEN not in caplog.text
