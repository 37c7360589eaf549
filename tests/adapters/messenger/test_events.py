"""Reading Messenger's batched events: every event of a batch, postbacks, quick replies,
echoes, standby."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from adapters.messenger import MessengerAdapter
from adapters.messenger.events import PAGE_INBOX_APP_ID
from bot.core.errors import WebhookPayloadError
from bot.core.messages import Vote
from tests.adapters.messenger._support import (
    APP_ID,
    PAGE_ID,
    PSID,
    TS,
    from_user,
    make_settings,
    post,
    webhook,
)

PSID_2 = "1234567890123456"


TS_AT = datetime.fromtimestamp(TS / 1000, tz=UTC)


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
    parsed = adapter.parse(post(body)).messages
    assert [(m.event_id, m.external_user_id, m.kind) for m in parsed] == [
        ("m_a1", PSID, "text"),
        ("m_a2", PSID_2, "text"),
        ("m_b1", PSID, "text"),
        (f"delivery:{PSID_2}:{TS}:{TS}", PSID_2, "event"),
    ]
    assert all(m.channel == "messenger" for m in parsed)


def test_text_message_becomes_a_text_inbound(adapter: MessengerAdapter) -> None:
    event = from_user(message={"mid": "m_1457764197618", "text": "Học phí ngành CNTT?"})
    [message] = adapter.parse(post(webhook([event]))).messages
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
    [message] = adapter.parse(post(webhook([event]))).messages
    assert (message.kind, message.event_id, message.text) == ("unsupported", "m_att", "")


def test_get_started_postback_is_a_command(adapter: MessengerAdapter) -> None:
    event = from_user(postback={"mid": "m_pb1", "title": "Bắt đầu", "payload": "GET_STARTED"})
    [message] = adapter.parse(post(webhook([event]))).messages
    assert (message.kind, message.event_id, message.text) == ("command", "m_pb1", "/start")


def test_other_postback_is_a_question_from_its_payload_or_title(adapter: MessengerAdapter) -> None:
    question = from_user(
        postback={"mid": "m_pb2", "title": "Học phí", "payload": "Học phí năm 2025 là bao nhiêu?"}
    )
    coded = from_user(ts=TS + 1, postback={"title": "Điểm chuẩn", "payload": "MENU_SCORES"})
    first, second = adapter.parse(post(webhook([question, coded]))).messages
    assert (first.kind, first.text) == ("text", "Học phí năm 2025 là bao nhiêu?")
    assert (second.kind, second.text) == ("text", "Điểm chuẩn")
    # A postback without a mid gets a stable id of its own.
    assert second.event_id == f"postback:{PSID}:{TS + 1}"
    assert adapter.parse(post(webhook([coded]))).messages[0].event_id == second.event_id


def test_quick_reply_is_read_as_its_payload_question(adapter: MessengerAdapter) -> None:
    event = from_user(
        message={
            "mid": "m_qr",
            "text": "Học bổng cho tân sinh…",
            "quick_reply": {"payload": "Học bổng cho tân sinh viên gồm những loại nào?"},
        }
    )
    [message] = adapter.parse(post(webhook([event]))).messages
    assert (message.kind, message.text) == (
        "text",
        "Học bổng cho tân sinh viên gồm những loại nào?",
    )


def test_a_vote_quick_reply_is_a_vote_not_a_question(adapter: MessengerAdapter) -> None:
    event = from_user(
        message={
            "mid": "m_vote",
            "text": "👍 Hữu ích",
            "quick_reply": {"payload": "tuvan-vote:55:up"},
        }
    )
    [message] = adapter.parse(post(webhook([event]))).messages
    assert (message.kind, message.text, message.event_id) == ("vote", "👍", "m_vote")
    assert message.vote == Vote(55, 1)


def test_an_english_vote_quick_reply_is_a_vote_in_english(adapter: MessengerAdapter) -> None:
    event = from_user(
        message={
            "mid": "m_vote_en",
            "text": "👎 Not helpful",
            "quick_reply": {"payload": "tuvan-vote:55:down:en"},
        }
    )
    [message] = adapter.parse(post(webhook([event]))).messages
    assert message.vote == Vote(55, -1, language="en")


def test_echo_of_our_own_send_is_an_event(adapter: MessengerAdapter) -> None:
    [message] = adapter.parse(post(webhook([echo(int(APP_ID))]))).messages
    assert message.kind == "event"
    assert message.external_user_id == PSID
    assert message.event_id == "m_echo1"


def test_echo_from_the_page_inbox_is_staff_in_the_users_thread(adapter: MessengerAdapter) -> None:
    event = echo(int(PAGE_INBOX_APP_ID), text="Em để lại số điện thoại nhé")
    [message] = adapter.parse(post(webhook([event]))).messages
    assert message.kind == "staff"
    assert message.external_user_id == PSID  # the recipient: the user staff wrote to
    assert message.text == "Em để lại số điện thoại nhé"


def test_echo_from_another_app_is_staff(adapter: MessengerAdapter) -> None:
    [message] = adapter.parse(post(webhook([echo(999000111222)]))).messages
    assert message.kind == "staff"


def test_echo_without_our_app_id_configured_is_staff_only_from_the_page_inbox() -> None:
    adapter = MessengerAdapter(make_settings(app_id=None))
    ours, inbox = adapter.parse(
        post(webhook([echo(int(APP_ID)), echo(int(PAGE_INBOX_APP_ID), mid="m_echo2")]))
    ).messages
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
    parsed = adapter.parse(post(webhook(events))).messages
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
    user, staff = adapter.parse(post(body)).messages
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
        json.dumps({"object": "page", "entry": {"messaging": []}}).encode(),
    ],
)
def test_malformed_body_is_a_payload_error(adapter: MessengerAdapter, body: bytes) -> None:
    with pytest.raises(WebhookPayloadError):
        adapter.parse(post(body))


def test_an_event_without_a_sender_is_skipped_and_the_rest_of_the_batch_read(
    adapter: MessengerAdapter,
) -> None:
    question = from_user(message={"mid": "m_q", "text": "Học phí bao nhiêu?"})
    roles = {"recipient": {"id": PAGE_ID}, "timestamp": TS, "app_roles": {"123": ["primary"]}}
    enforcement = {
        "recipient": {"id": PAGE_ID},
        "timestamp": TS,
        "policy-enforcement": {"action": "block", "reason": "spam"},
    }
    body = json.dumps(
        {
            "object": "page",
            "entry": [
                "x",
                {"id": PAGE_ID, "time": TS, "messaging": [roles, question, 7, enforcement]},
                {"id": PAGE_ID, "time": TS, "standby": {"not": "a list"}},
            ],
        }
    ).encode()
    batch = adapter.parse(post(body))
    [message] = batch.messages
    assert (message.kind, message.event_id, message.text) == ("text", "m_q", "Học phí bao nhiêu?")
    assert [s.where for s in batch.skipped] == [
        "entry[0]",
        "entry[1].messaging[0]",
        "entry[1].messaging[2]",
        "entry[1].messaging[3]",
        "entry[2].standby",
    ]
    assert "app_roles event without a sender" in batch.skipped[1].reason
    assert "policy-enforcement event without a sender" in batch.skipped[3].reason
