"""An FAQ answer's source on the platforms, end to end (webhook, real worker, fake platform API
over real HTTP): the document the entry names ("tong-quan.md" in the demo FAQ) cited by its
title and address, as a documents answer is: Telegram's link button, Messenger's button
template, Zalo's text footer; never the file's name."""

from __future__ import annotations

import uuid

import pytest

from tests.bot.web._support import Stack, chat_id
from tests.bot.web._votes import (
    messenger_answer,
    messenger_sent,
    telegram_answer,
    zalo_answer,
    zalo_sent,
)

pytestmark = pytest.mark.usefixtures("demo_kb")

# The demo FAQ's shut-faq01 (the question of tests.bot.web._support.FAQ_QUESTION) names
# "tong-quan.md"; the demo document of that name has this title and address.
TITLE = "Tổng quan về Trường Đại học Công nghệ Sông Hồng"
URL = "https://tuyensinh.shut.example.vn/tong-quan"


async def test_telegram_shows_an_faq_answers_source_as_the_documents_link_button(
    stack: Stack,
) -> None:
    chat = chat_id()
    await telegram_answer(stack, chat)
    [call] = stack.telegram.calls_to("sendMessage")
    assert "tong-quan.md" not in call.body["text"]
    assert "Nguồn:" not in call.body["text"]  # the source list became the button
    links = [b for row in call.body["reply_markup"]["inline_keyboard"] for b in row if "url" in b]
    assert links == [{"text": f"[1] {TITLE}", "url": URL}]


async def test_messenger_shows_an_faq_answers_source_as_a_link_button(stack: Stack) -> None:
    psid = f"9{uuid.uuid4().int % 10**12}"
    await messenger_answer(stack, psid)
    text, template = messenger_sent(stack, psid)
    assert "tong-quan.md" not in text["text"]
    payload = template["attachment"]["payload"]
    assert payload["text"] == "Nguồn:"
    [button] = payload["buttons"]
    assert (button["type"], button["url"]) == ("web_url", URL)
    assert button["title"].startswith("[1] Tổng quan")


async def test_zalo_shows_an_faq_answers_source_as_a_titled_line_with_its_address(
    stack: Stack,
) -> None:
    user = f"9{uuid.uuid4().int % 10**12}"
    await zalo_answer(stack, user)
    [answer] = zalo_sent(stack, user)
    assert answer["text"].endswith(f"\n\nNguồn:\n[1] {TITLE} — {URL}")
    assert "tong-quan.md" not in answer["text"]
