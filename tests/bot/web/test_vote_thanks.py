"""A vote is thanked in the student's language on every platform, end to end through the fake
platform APIs over real HTTP: Telegram's own toast (the callback's answer, in the webhook's
response or by long polling) for every tap; on Messenger and Zalo, which have none, one short
message for the first vote on an answer, none for a vote changed or cast again. The buttons'
words are in the answer's language too. (The web chat's thanks: test_webchat_faq_browser.)"""

from __future__ import annotations

import uuid

import pytest
from sqlalchemy import text

from bot.core.types import Language
from bot.core.votes import LABELS, NOT_TAKEN, THANKS, read_vote
from tests.bot.web._support import FAQ_QUESTION, Stack, chat_id, post_zalo, zalo_text
from tests.bot.web._votes import (
    ENGLISH_FAQ_QUESTION,
    callback_update,
    feedback,
    messenger_answer,
    messenger_sent,
    poll_until,
    post_callback,
    post_messenger,
    quick_reply_event,
    telegram_answer,
    votes_of,
    zalo_answer,
    zalo_sent,
)

pytestmark = pytest.mark.usefixtures("demo_kb")

QUESTIONS: dict[Language, str] = {"vi": FAQ_QUESTION, "en": ENGLISH_FAQ_QUESTION}


def user_id() -> str:
    return f"9{uuid.uuid4().int % 10**12}"


# -- Telegram -----------------------------------------------------------------------------------


@pytest.mark.parametrize("language", ["vi", "en"])
async def test_a_telegram_vote_is_thanked_in_the_answers_language_by_its_toast(
    stack: Stack, language: Language
) -> None:
    chat = chat_id()
    sent, data = await telegram_answer(stack, chat, QUESTIONS[language])
    assert [v.language for d in data if (v := read_vote(d)) is not None] == [language] * 2
    ack = await post_callback(stack, callback_update(chat + 1, chat, sent, data[0]))
    assert ack["text"] == f"{THANKS[language]} 👍"
    # Cast again: the same passing toast (Telegram wants every tap answered), nothing in the chat.
    again = await post_callback(stack, callback_update(chat + 2, chat, sent, data[0]))
    assert again["text"] == ack["text"]
    await stack.worker.drain()
    assert len(stack.telegram.calls_to("sendMessage")) == 1  # the answer only


async def test_a_refused_telegram_vote_says_so_in_the_answers_language(stack: Stack) -> None:
    chat, intruder = chat_id(), chat_id()
    sent, data = await telegram_answer(stack, chat, ENGLISH_FAQ_QUESTION)
    ack = await post_callback(stack, callback_update(intruder, intruder, sent, data[1]))
    assert ack["text"] == NOT_TAKEN["en"]


async def test_telegram_long_polling_thanks_in_english_for_an_english_answer(
    stack: Stack,
) -> None:
    chat = chat_id()
    sent, data = await telegram_answer(stack, chat, ENGLISH_FAQ_QUESTION)
    stack.telegram.push_update(callback_update(chat + 1, chat, sent, data[1]))
    await poll_until(stack, "answerCallbackQuery")
    [answered] = stack.telegram.calls_to("answerCallbackQuery")
    assert answered.body["text"] == f"{THANKS['en']} 👎"


# -- Messenger ----------------------------------------------------------------------------------


@pytest.mark.parametrize("language", ["vi", "en"])
async def test_messenger_vote_buttons_speak_the_answers_language_and_a_first_vote_is_thanked_once(
    stack: Stack, language: Language
) -> None:
    psid = user_id()
    quick = await messenger_answer(stack, psid, QUESTIONS[language])
    up, down = quick[0], quick[1]
    assert (up["title"], down["title"]) == (LABELS[language][1], LABELS[language][-1])
    answered = len(messenger_sent(stack, psid))

    await post_messenger(stack, quick_reply_event(psid, f"v1-{psid}", up["title"], up["payload"]))
    await stack.worker.drain()
    thanks = {"text": THANKS[language]}
    assert messenger_sent(stack, psid)[answered:] == [thanks]  # no buttons under it

    # A change of mind, then the same vote again: stored, and nothing more in the chat.
    await post_messenger(
        stack, quick_reply_event(psid, f"v2-{psid}", down["title"], down["payload"])
    )
    await post_messenger(
        stack, quick_reply_event(psid, f"v3-{psid}", down["title"], down["payload"])
    )
    await stack.worker.drain()
    assert messenger_sent(stack, psid)[answered:] == [thanks]
    [(_, _, value)] = await feedback(stack, psid)
    assert value == -1


async def test_a_vote_while_staff_have_the_conversation_is_stored_and_not_thanked(
    stack: Stack,
) -> None:
    psid = user_id()
    quick = await messenger_answer(stack, psid)
    answered = len(messenger_sent(stack, psid))
    async with stack.sm.begin() as session:
        await session.execute(
            text(
                "UPDATE conversations SET mode = 'human' WHERE contact_id = "
                "(SELECT id FROM contacts WHERE channel = 'messenger' AND external_id = :u)"
            ),
            {"u": psid},
        )
    await post_messenger(
        stack, quick_reply_event(psid, f"v-{psid}", quick[1]["title"], quick[1]["payload"])
    )
    await stack.worker.drain()
    assert len(await feedback(stack, psid)) == 1
    assert messenger_sent(stack, psid)[answered:] == []  # the bot stays quiet there


# -- Zalo ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("language", ["vi", "en"])
async def test_zalo_vote_buttons_speak_the_answers_language_and_a_first_vote_is_thanked_once(
    stack: Stack, language: Language
) -> None:
    user = user_id()
    buttons = await zalo_answer(stack, user, QUESTIONS[language])
    assert [b["title"] for b in buttons] == [LABELS[language][1], LABELS[language][-1]]
    [(answer_id, _), _] = votes_of([b["payload"] for b in buttons])
    answered = len(zalo_sent(stack, user))

    assert await post_zalo(stack, zalo_text(user, f"v1-{user}", buttons[0]["payload"])) == 200
    await stack.worker.drain()
    thanks = {"text": THANKS[language]}
    assert zalo_sent(stack, user)[answered:] == [thanks]

    # Zalo's buttons stay under the answer: tapped again and again, still one thank-you.
    for n, button in enumerate((buttons[1], buttons[1], buttons[0]), start=2):
        assert await post_zalo(stack, zalo_text(user, f"v{n}-{user}", button["payload"])) == 200
    await stack.worker.drain()
    assert zalo_sent(stack, user)[answered:] == [thanks]
    assert await feedback(stack, user) == [(answer_id, "zalo", 1)]
