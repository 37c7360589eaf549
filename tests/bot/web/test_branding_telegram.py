"""Telegram's /start reply carries the branding: the welcome, how to reach a person, the privacy
note and the suggested questions as a reply keyboard; a tapped suggestion is answered. Real HTTP
on 127.0.0.1 into tuvan, the real worker, the fake Bot API."""

from __future__ import annotations

import html
from typing import Any

import pytest

from bot.core.branding import brand_texts
from bot.core.settings import BrandSettings
from bot.worker.loop import Worker
from tests.bot.web._support import SECRET, Stack, chat_id, post_telegram, telegram_update

pytestmark = pytest.mark.usefixtures("demo_kb")

CUSTOM = BrandSettings(
    name_vi="Học viện Kỹ thuật Biển",
    name_en="Maritime Engineering Academy",
    welcome_vi="Xin chào từ {name}! <Hỏi gì cũng được>",
    welcome_en="Welcome to {name}!",
    suggestions_vi=(
        "Mã trường của Trường Đại học Công nghệ Sông Hồng là gì?",
        "Giá phòng ký túc xá bao nhiêu một tháng?",
        "Học bổng tuyển sinh năm 2026 gồm những loại nào?",
    ),
    suggestions_en=(
        "What is the tuition fee for international students in the standard programme?",
        "What English level do international students need?",
        "Does SHUT offer programmes taught fully in English?",
    ),
    privacy_note_en="We keep messages for a year.",
    privacy_url="https://hvb.example.edu.vn/privacy",
)


def branded_worker(stack: Stack, brand: BrandSettings) -> Worker:
    settings = stack.settings.model_copy(update={"brand": brand})
    return Worker(settings, stack.sm, stack.worker.answerer, stack.adapters, stack.http)


def with_language(update: dict[str, Any], code: str) -> dict[str, Any]:
    update["message"]["from"]["language_code"] = code
    return update


def keyboard_of(body: dict[str, Any]) -> list[str]:
    rows = body["reply_markup"]["keyboard"]
    assert all(len(row) == 1 for row in rows), "one question a row: long ones stay readable"
    return [row[0]["text"] for row in rows]


async def test_start_gets_the_default_welcome_privacy_note_and_suggestions(stack: Stack) -> None:
    chat = chat_id()
    assert await post_telegram(stack, telegram_update(chat + 7, chat, "/start"), SECRET) == 200
    await stack.worker.drain()
    [sent] = stack.telegram.calls_to("sendMessage")
    texts = brand_texts(BrandSettings(), "vi")
    text = html.unescape(sent.body["text"])
    assert text.startswith(texts.welcome)
    assert stack.settings.contact.phone in text
    assert f"{texts.privacy_note} {texts.privacy_url}" in text
    assert keyboard_of(sent.body) == list(texts.suggestions)
    assert sent.body["reply_markup"]["one_time_keyboard"] is True


async def test_start_speaks_the_language_of_the_students_app(stack: Stack) -> None:
    chat = chat_id()
    worker = branded_worker(stack, CUSTOM)
    await post_telegram(stack, with_language(telegram_update(chat + 8, chat, "/start"), "en"))
    await worker.drain()
    [sent] = stack.telegram.calls_to("sendMessage")
    text = html.unescape(sent.body["text"])
    assert text.startswith("Welcome to Maritime Engineering Academy!\nTo reach a person:")
    assert "We keep messages for a year. https://hvb.example.edu.vn/privacy" in text
    assert keyboard_of(sent.body) == list(CUSTOM.suggestions_en)


async def test_a_tapped_suggestion_is_answered_as_a_question(stack: Stack) -> None:
    chat = chat_id()
    worker = branded_worker(stack, CUSTOM)
    await post_telegram(stack, telegram_update(chat + 9, chat, "/start"))
    await worker.drain()
    [greeting] = stack.telegram.calls_to("sendMessage")
    assert html.unescape(greeting.body["text"]).startswith(
        "Xin chào từ Học viện Kỹ thuật Biển! <Hỏi gì cũng được>\n"
    )
    tapped = keyboard_of(greeting.body)[0]  # a reply keyboard sends the button's text
    await post_telegram(stack, telegram_update(chat + 10, chat, tapped))
    await worker.drain()
    answer = stack.telegram.calls_to("sendMessage")[1]
    assert "SHT" in html.unescape(answer.body["text"])  # shut-faq01's answer
    assert "keyboard" not in answer.body.get("reply_markup", {})  # answers carry none
