"""Reading Zalo OA events: text, follow, media, events about the OA's messages, malformed bodies."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from bot.core.errors import WebhookPayloadError
from bot.core.messages import Vote
from tests.adapters.zalo._support import (
    APP_ID,
    TEXT_EVENT,
    USER,
    offline_adapter,
    request,
    signed,
)


def test_user_send_text_becomes_a_text_message() -> None:
    [message] = offline_adapter().parse(signed(TEXT_EVENT)).messages
    assert message.channel == "zalo"
    assert message.kind == "text"
    assert message.event_id == "a1b2c3d4e5f6"
    assert message.external_user_id == USER
    assert message.text == "Học phí ngành CNTT bao nhiêu?"
    assert message.sent_at == datetime(2023, 11, 3, 9, 31, 21, 354000, tzinfo=UTC)
    assert message.raw == TEXT_EVENT


def test_a_vote_buttons_hidden_query_is_a_vote_in_its_language() -> None:
    body = {**TEXT_EVENT, "message": {"text": "tuvan-vote:31:down:en", "msg_id": "v1"}}
    [message] = offline_adapter().parse(signed(body)).messages
    assert (message.kind, message.text) == ("vote", "👎")
    assert message.vote == Vote(31, -1, language="en")


def test_numeric_zalo_ids_are_kept_as_strings() -> None:
    body = {
        **TEXT_EVENT,
        "sender": {"id": 2512523625412515},
        "message": {"text": "hi", "msg_id": 77},
        "timestamp": 1699003881354,
    }
    [message] = offline_adapter().parse(request(body)).messages
    assert message.external_user_id == "2512523625412515"
    assert message.event_id == "77"


def test_follow_becomes_a_follow_with_a_stable_id() -> None:
    body = {
        "oa_id": "579745863508352884",
        "follower": {"id": USER},
        "user_id_by_app": "552177279717587730",
        "event_name": "follow",
        "source": "oa_profile",
        "app_id": APP_ID,
        "timestamp": "1699003881354",
    }
    [first] = offline_adapter().parse(request(body)).messages
    [again] = offline_adapter().parse(request(body)).messages
    assert first.kind == "follow"
    assert first.external_user_id == USER
    assert first.event_id == again.event_id == f"follow:{USER}:1699003881354"


@pytest.mark.parametrize("event", ["user_send_sticker", "user_send_image", "user_send_location"])
def test_media_from_a_user_is_unsupported(event: str) -> None:
    body = {
        **TEXT_EVENT,
        "event_name": event,
        "message": {"msg_id": "m-9", "attachments": [{"type": "sticker", "payload": {}}]},
    }
    [message] = offline_adapter().parse(request(body)).messages
    assert message.kind == "unsupported"
    assert message.event_id == "m-9"
    assert message.external_user_id == USER


def test_unfollow_is_stored_as_an_event() -> None:
    body = {
        "oa_id": "579745863508352884",
        "follower": {"id": USER},
        "event_name": "unfollow",
        "app_id": APP_ID,
        "timestamp": "1699003999000",
    }
    [message] = offline_adapter().parse(request(body)).messages
    assert message.kind == "event"
    assert message.external_user_id == USER
    assert message.event_id == f"unfollow:{USER}:1699003999000"


def test_user_seen_message_is_an_event_of_the_recipient_user() -> None:
    body = {
        "event_name": "user_seen_message",
        "app_id": APP_ID,
        "sender": {"id": "579745863508352884"},  # the OA
        "recipient": {"id": USER},
        "message": {"msg_ids": ["x1", "x2"]},
        "timestamp": "1699003999000",
    }
    [message] = offline_adapter().parse(request(body)).messages
    assert message.kind == "event"
    assert message.external_user_id == USER
    assert message.event_id == f"user_seen_message:{USER}:1699003999000"


def test_events_about_one_oa_message_get_distinct_ids() -> None:
    base = {"app_id": APP_ID, "sender": {"id": "oa"}, "recipient": {"id": USER}}
    sent = {**base, "event_name": "oa_send_text", "message": {"msg_id": "k"}, "timestamp": "1"}
    got = {**base, "event_name": "user_received_message", "message": {"msg_id": "k"}}
    [a] = offline_adapter().parse(request(sent)).messages
    [b] = offline_adapter().parse(request({**got, "timestamp": "2"})).messages
    assert (a.kind, b.kind) == ("event", "event")
    assert a.event_id != b.event_id
    assert a.external_user_id == b.external_user_id == USER


def test_event_naming_no_user_yields_nothing() -> None:
    body = {"event_name": "change_oa_daily_quota", "app_id": APP_ID, "timestamp": "1"}
    assert offline_adapter().parse(request(body)).messages == []


@pytest.mark.parametrize("body", [b"[1, 2]", b"nope", b'"event"'])
def test_a_body_that_is_not_an_object_is_a_payload_error(body: bytes) -> None:
    with pytest.raises(WebhookPayloadError):
        offline_adapter().parse(request(body))


@pytest.mark.parametrize(
    "body",
    [
        json.dumps({**TEXT_EVENT, "event_name": None}).encode(),
        json.dumps({k: v for k, v in TEXT_EVENT.items() if k != "event_name"}).encode(),
        json.dumps({k: v for k, v in TEXT_EVENT.items() if k != "sender"}).encode(),
        json.dumps({**TEXT_EVENT, "message": {"text": "hi"}}).encode(),
        json.dumps({**TEXT_EVENT, "message": "hi"}).encode(),
        json.dumps({**TEXT_EVENT, "sender": {"id": True}}).encode(),
        json.dumps({"event_name": "follow", "timestamp": "1"}).encode(),
    ],
)
def test_an_event_that_cannot_be_read_is_skipped_not_refused(body: bytes) -> None:
    batch = offline_adapter().parse(request(body))
    assert batch.messages == []
    [skipped] = batch.skipped
    assert skipped.reason.startswith("zalo: ")
