"""Reading Telegram's documented update shapes: messages, commands, media, events, malformed
bodies."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from adapters.telegram import TelegramAdapter
from adapters.telegram.updates import parse_update
from bot.core.errors import WebhookPayloadError
from bot.core.messages import InboundMessage, Vote
from bot.core.settings import TelegramSettings
from tests.adapters.telegram._support import (
    DATE,
    PRIVATE_CHAT,
    USER,
    message_update,
    raw_request,
)


def only(messages: list[InboundMessage]) -> InboundMessage:
    assert len(messages) == 1
    return messages[0]


def test_private_text_message_is_a_question_from_the_chat() -> None:
    update = message_update(900001, text="Học phí ngành CNTT năm 2026 là bao nhiêu?")
    message = only(TelegramAdapter(TelegramSettings()).parse(raw_request(update)).messages)
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


def test_a_tap_on_a_vote_button_is_a_vote_of_the_chat_with_its_query_id() -> None:
    update = {
        "update_id": 12,
        "callback_query": {
            "id": "4382bfdwdsb323b2da",
            "from": USER,
            "message": {"message_id": 43, "chat": PRIVATE_CHAT, "date": DATE, "text": "30 triệu"},
            "chat_instance": "-8271717171",
            "data": "tuvan-vote:987:down",
        },
    }
    message = only(parse_update(update))
    assert (message.kind, message.external_user_id, message.text) == ("vote", "111222333", "👎")
    assert message.vote == Vote(987, -1, ack_id="4382bfdwdsb323b2da")
    assert message.raw == update


def test_a_vote_carries_the_language_its_button_was_labelled_in() -> None:
    update = {
        "update_id": 13,
        "callback_query": {
            "id": "q-en",
            "from": USER,
            "message": {"message_id": 44, "chat": PRIVATE_CHAT, "date": DATE, "text": "…"},
            "chat_instance": "-8271717171",
            "data": "tuvan-vote:987:up:en",
        },
    }
    message = only(parse_update(update))
    assert message.vote == Vote(987, 1, ack_id="q-en", language="en")


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
    [b"{not json", b"\xff\xfe", b"[]", b'"update"', b"{}", b'{"update_id": "1"}'],
)
def test_a_body_that_is_not_an_update_is_a_payload_error(body: bytes) -> None:
    with pytest.raises(WebhookPayloadError):
        TelegramAdapter(TelegramSettings()).parse(raw_request(body))


@pytest.mark.parametrize(
    "body",
    [
        b'{"update_id": 1, "message": "hi"}',
        b'{"update_id": 1, "message": {"message_id": 1, "date": 0}}',
        b'{"update_id": 1, "message": {"chat": {"id": "x"}, "text": "hi"}}',
        b'{"update_id": 1, "message": {"chat": {"id": 1}, "text": 5}}',
    ],
)
def test_an_update_that_cannot_be_read_is_skipped_not_refused(body: bytes) -> None:
    batch = TelegramAdapter(TelegramSettings()).parse(raw_request(body))
    assert batch.messages == []
    [skipped] = batch.skipped
    assert skipped.where == "update 1"
    assert "Telegram" in skipped.reason
    with pytest.raises(WebhookPayloadError):  # polling still sees the error
        parse_update(json.loads(body))
