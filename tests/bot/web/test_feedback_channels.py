"""👍/👎 on the messaging platforms, end to end: a question in through the webhook, the real
worker's answer out to the fake platform with its vote buttons, the student's tap back in through
the webhook, stored as feedback (never answered as a question); a forged vote, or one on someone
else's answer, changes nothing; a staff reply carries no buttons. Telegram's long polling takes
votes too. How a vote is thanked, in which language: test_vote_thanks."""

from __future__ import annotations

import uuid

import pytest
from sqlalchemy import text

from admin.recheck_queue import queue_item
from bot.conversations.store import queue_staff_reply
from bot.core.votes import NOT_TAKEN, THANKS
from tests.bot.web._support import FAQ_QUESTION, Stack, chat_id, post_zalo, zalo_text
from tests.bot.web._votes import (
    callback_update,
    feedback,
    inbound,
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


async def flagged(stack: Stack, external_id: str) -> bool:
    async with stack.sm() as session:
        since = await session.scalar(
            text(
                "SELECT c.flagged_since FROM conversations c JOIN contacts k "
                "ON k.id = c.contact_id WHERE k.external_id = :u"
            ),
            {"u": external_id},
        )
        return since is not None


async def conversation_of(stack: Stack, external_id: str) -> int:
    async with stack.sm() as session:
        found = await session.scalar(
            text(
                "SELECT c.id FROM conversations c JOIN contacts k ON k.id = c.contact_id "
                "WHERE k.external_id = :u"
            ),
            {"u": external_id},
        )
    assert found is not None
    return int(found)


async def staff_reply(stack: Stack, external_id: str) -> None:
    async with stack.sm.begin() as session:
        await queue_staff_reply(
            session, await conversation_of(stack, external_id), "Chị là cán bộ tư vấn.", "an"
        )
    await stack.worker.drain()


async def recheck_signals(stack: Stack, answer_id: int) -> tuple[str, ...]:
    """Why the staff's "Cần xem lại" queue lists this answer: what its page shows at the next
    load (the queue is read per request, nothing cached)."""
    async with stack.sm() as session:
        item = await queue_item(session, answer_id, stack.runtime.parts.processor)
    return () if item is None else item.signals


# -- Telegram -----------------------------------------------------------------------------------


async def test_a_telegram_answer_has_vote_buttons_and_a_tap_is_stored_and_acknowledged(
    stack: Stack,
) -> None:
    chat = chat_id()
    sent, data = await telegram_answer(stack, chat)
    [(answer_id, up), (same_id, down)] = votes_of(data)
    assert answer_id == same_id
    assert (up, down) == (1, -1)
    assert all(len(d.encode()) <= 64 for d in data)

    ack = await post_callback(stack, callback_update(chat + 1, chat, sent, data[1]))
    assert ack == {
        "method": "answerCallbackQuery",
        "callback_query_id": f"cbq-{chat + 1}",
        "text": f"{THANKS['vi']} 👎",
    }
    assert await feedback(stack, str(chat)) == [(answer_id, "telegram", -1)]
    assert await flagged(stack, str(chat))
    assert "disliked" in await recheck_signals(stack, answer_id)

    await post_callback(stack, callback_update(chat + 2, chat, sent, data[0]))  # changed mind
    assert await feedback(stack, str(chat)) == [(answer_id, "telegram", 1)]
    assert not await flagged(stack, str(chat))
    assert "disliked" not in await recheck_signals(stack, answer_id)

    await stack.worker.drain()
    assert len(stack.telegram.calls_to("sendMessage")) == 1  # a vote is never answered
    assert await inbound(stack, str(chat)) == [
        ("text", "answered", FAQ_QUESTION),
        ("vote", "skipped", "👎"),
        ("vote", "skipped", "👍"),
    ]


async def test_a_telegram_vote_on_another_chats_answer_is_refused(stack: Stack) -> None:
    chat, intruder = chat_id(), chat_id()
    sent, data = await telegram_answer(stack, chat)
    ack = await post_callback(stack, callback_update(intruder, intruder, sent, data[1]))
    assert ack["text"] == NOT_TAKEN["vi"]
    # A payload made up for an answer that is not the bot's (the question's own id) as well.
    answer_id = votes_of(data)[0][0]
    forged = f"tuvan-vote:{answer_id - 1}:down"
    ack = await post_callback(stack, callback_update(chat + 1, chat, sent, forged))
    assert ack["text"] == NOT_TAKEN["vi"]
    assert await feedback(stack, str(chat)) == []
    assert await feedback(stack, str(intruder)) == []
    assert not await flagged(stack, str(chat))


async def test_a_telegram_staff_reply_has_no_vote_buttons(stack: Stack) -> None:
    chat = chat_id()
    await telegram_answer(stack, chat)
    await staff_reply(stack, str(chat))
    calls = stack.telegram.calls_to("sendMessage")
    assert len(calls) == 2
    assert "Chị là cán bộ tư vấn." in calls[1].body["text"]
    assert "reply_markup" not in calls[1].body


async def test_telegram_long_polling_stores_a_vote_and_marks_the_choice(stack: Stack) -> None:
    chat = chat_id()
    sent, data = await telegram_answer(stack, chat)
    stack.telegram.push_update(callback_update(chat + 1, chat, sent, data[0]))
    await poll_until(stack, "editMessageReplyMarkup")
    [answered] = stack.telegram.calls_to("answerCallbackQuery")
    assert answered.body["callback_query_id"] == f"cbq-{chat + 1}"
    assert answered.body["text"] == f"{THANKS['vi']} 👍"
    [edited] = stack.telegram.calls_to("editMessageReplyMarkup")
    assert edited.body["message_id"] == sent["message_id"]
    labels = [b["text"] for row in edited.body["reply_markup"]["inline_keyboard"] for b in row]
    assert labels[-2:] == ["👍 ✓", "👎"]
    assert await feedback(stack, str(chat)) == [(votes_of(data)[0][0], "telegram", 1)]


# -- Messenger ----------------------------------------------------------------------------------


async def test_a_messenger_quick_reply_vote_is_stored_and_not_answered(stack: Stack) -> None:
    psid = f"9{uuid.uuid4().int % 10**12}"
    quick = await messenger_answer(stack, psid)
    up, down = quick[0], quick[1]
    assert (up["title"], down["title"]) == ("👍 Hữu ích", "👎 Chưa đúng ý")
    answer_id = votes_of([up["payload"]])[0][0]

    await post_messenger(
        stack, quick_reply_event(psid, f"v-{psid}", down["title"], down["payload"])
    )
    assert await feedback(stack, psid) == [(answer_id, "messenger", -1)]
    assert await flagged(stack, psid)
    assert "disliked" in await recheck_signals(stack, answer_id)
    sent_before = len(messenger_sent(stack, psid))
    await stack.worker.drain()
    # not a question: nothing answered, only thanked
    assert messenger_sent(stack, psid)[sent_before:] == [{"text": THANKS["vi"]}]
    assert (await inbound(stack, psid))[-1] == ("vote", "skipped", "👎")


async def test_a_messenger_vote_on_someone_elses_answer_is_refused(stack: Stack) -> None:
    psid, intruder = (f"9{uuid.uuid4().int % 10**12}" for _ in range(2))
    quick = await messenger_answer(stack, psid)
    await post_messenger(
        stack, quick_reply_event(intruder, f"v-{intruder}", "👎", quick[1]["payload"])
    )
    assert await feedback(stack, psid) == []
    assert await feedback(stack, intruder) == []
    assert not await flagged(stack, psid)
    await stack.worker.drain()
    assert messenger_sent(stack, intruder) == []  # a refused vote is not thanked


async def test_a_messenger_staff_reply_has_no_vote_quick_replies(stack: Stack) -> None:
    psid = f"9{uuid.uuid4().int % 10**12}"
    await messenger_answer(stack, psid)
    await staff_reply(stack, psid)
    last = [m for m in stack.messenger.messages if m["recipient"]["id"] == psid][-1]
    assert last["message"]["text"] == "Chị là cán bộ tư vấn."
    assert not votes_of([q["payload"] for q in last["message"].get("quick_replies", [])])


# -- Zalo ---------------------------------------------------------------------------------------


async def test_a_zalo_answer_has_vote_buttons_and_a_tap_is_stored_and_not_answered(
    stack: Stack,
) -> None:
    user = f"9{uuid.uuid4().int % 10**12}"
    buttons = await zalo_answer(stack, user)
    assert [b["type"] for b in buttons] == ["oa.query.hide", "oa.query.hide"]
    [(answer_id, up), (_, down)] = votes_of([b["payload"] for b in buttons])
    assert (up, down) == (1, -1)

    # The hidden query comes back as the user's text: its payload.
    assert await post_zalo(stack, zalo_text(user, f"v-{user}", buttons[1]["payload"])) == 200
    assert await feedback(stack, user) == [(answer_id, "zalo", -1)]
    assert await flagged(stack, user)
    assert "disliked" in await recheck_signals(stack, answer_id)
    sends = len(zalo_sent(stack, user))
    await stack.worker.drain()
    assert zalo_sent(stack, user)[sends:] == [{"text": THANKS["vi"]}]  # thanked, not answered
    assert (await inbound(stack, user))[-1] == ("vote", "skipped", "👎")


async def test_a_zalo_vote_on_someone_elses_answer_is_refused(stack: Stack) -> None:
    user, intruder = (f"9{uuid.uuid4().int % 10**12}" for _ in range(2))
    buttons = await zalo_answer(stack, user)
    assert (
        await post_zalo(stack, zalo_text(intruder, f"v-{intruder}", buttons[1]["payload"])) == 200
    )
    assert await feedback(stack, user) == []
    assert await feedback(stack, intruder) == []


async def test_a_zalo_staff_reply_has_no_vote_buttons(stack: Stack) -> None:
    user = f"9{uuid.uuid4().int % 10**12}"
    await zalo_answer(stack, user)
    await staff_reply(stack, user)
    last = [s for s in stack.zalo.sends if s.body["recipient"]["user_id"] == user][-1]
    assert last.body["message"] == {"text": "Chị là cán bộ tư vấn."}


async def test_without_zalo_vote_buttons_an_answer_goes_as_plain_text(stack: Stack) -> None:
    stack.settings.zalo.vote_buttons = False  # the adapter reads its settings at each send
    try:
        user = f"9{uuid.uuid4().int % 10**12}"
        assert await post_zalo(stack, zalo_text(user, f"q-{user}", FAQ_QUESTION)) == 200
        await stack.worker.drain()
        [send] = [s for s in stack.zalo.sends if s.body["recipient"]["user_id"] == user]
        assert "attachment" not in send.body["message"]
    finally:
        stack.settings.zalo.vote_buttons = True
