"""Messenger's Send API against a fake: parts, templates, quick replies, errors, sender actions."""

from __future__ import annotations

import json
import socket
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from pydantic import SecretStr

from adapters.messenger import MessengerAdapter
from bot.core.errors import SendError
from bot.core.messages import OutboundReply
from tests.adapters._support import CITED
from tests.adapters.messenger._support import (
    PAGE_TOKEN,
    PSID,
    make_settings,
)
from tests.fakes.messenger_api import MessengerApiFake, start_messenger_api


@pytest.fixture
async def api() -> AsyncIterator[MessengerApiFake]:
    fake = await start_messenger_api(page_token=PAGE_TOKEN)
    try:
        yield fake
    finally:
        await fake.close()


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
