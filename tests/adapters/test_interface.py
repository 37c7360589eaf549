"""The adapter interface's hooks: what each platform's webhook answers, read through the hook the
webhook route calls (``webhook_ack``, ``handshake``) rather than through the platform's name."""

from __future__ import annotations

import json

import pytest
from multidict import CIMultiDict

from adapters.interface import Adapter, WebhookAck
from adapters.messenger import MessengerAdapter
from adapters.telegram import TelegramAdapter
from adapters.telegram.callbacks import thanks
from bot.core.messages import InboundMessage, RawRequest, Vote
from bot.core.settings import TelegramSettings
from bot.core.types import Channel
from tests.adapters.messenger._support import VERIFY_TOKEN, make_settings
from tests.adapters.zalo._support import offline_adapter

OK = WebhookAck(200, "ok", "text/plain")


def adapters() -> list[Adapter]:
    return [
        TelegramAdapter(TelegramSettings()),
        MessengerAdapter(make_settings()),
        offline_adapter(),
    ]


def vote(channel: Channel, ack_id: str | None) -> InboundMessage:
    return InboundMessage(channel, "evt-1", "111222333", "vote", "👎", vote=Vote(987, -1, ack_id))


def test_a_delivery_without_votes_is_acknowledged_with_a_plain_ok_on_every_platform() -> None:
    assert [adapter.webhook_ack([]) for adapter in adapters()] == [OK, OK, OK]


@pytest.mark.parametrize("taken", [True, False])
def test_a_telegram_vote_is_answered_in_the_acknowledgement_itself(taken: bool) -> None:
    tap = vote("telegram", "4382bfdwdsb323b2da")
    ack = TelegramAdapter(TelegramSettings()).webhook_ack([(tap, taken)])
    assert (ack.status, ack.content_type) == (200, "application/json")
    assert json.loads(ack.body) == {
        "method": "answerCallbackQuery",
        "callback_query_id": "4382bfdwdsb323b2da",
        "text": thanks(tap, taken),
    }


def test_a_telegram_vote_without_a_query_id_gets_the_plain_ok() -> None:
    ack = TelegramAdapter(TelegramSettings()).webhook_ack([(vote("telegram", None), True)])
    assert ack == OK


def test_messenger_and_zalo_votes_get_the_plain_ok() -> None:
    # Their votes are quick replies / hidden texts: nothing to answer in the response.
    assert MessengerAdapter(make_settings()).webhook_ack([(vote("messenger", None), True)]) == OK
    assert offline_adapter().webhook_ack([(vote("zalo", None), True)]) == OK


def test_only_messenger_answers_a_subscription_check() -> None:
    query = {"hub.mode": "subscribe", "hub.verify_token": VERIFY_TOKEN, "hub.challenge": "1158"}
    check = RawRequest("GET", CIMultiDict(), query, b"")
    assert [adapter.handshake(check) for adapter in adapters()] == [None, "1158", None]
