"""The Conversations pages over real HTTP with the real worker and a fake Telegram Bot API:
take over (the bot stays quiet), reply (delivered through the channel, stored as staff),
hand back (the bot answers again); the list's filters; escaping; the web chat's polling flag;
"cần xử lý" (a request for a person, a 👎) first and counted in the menu, cleared by a reply or
"Đã xử lý"; contacts without a name shown by channel, first question and time.

The worker's queues are about transactions between sessions, so this module commits for real
(``sessionmaker`` is overridden) and deletes what each test added afterwards.
"""

from __future__ import annotations

import hashlib
import html
import json
import re
import uuid
from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import timedelta
from typing import Any

import aiohttp
import pytest
from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from adapters.telegram import TelegramAdapter
from bot.answer.answerer import Answerer
from bot.answer.parts import AnswererParts
from bot.conversations.store import record_inbound
from bot.core.clock import utcnow
from bot.core.messages import InboundMessage
from bot.core.settings import Settings
from bot.db.models import AuditEntry, Author, Conversation, Direction, Message, MessageStatus
from bot.worker.loop import Worker
from tests.admin._support import AdminBrowser
from tests.fakes.telegram_api import FakeTelegramApi, start_telegram_api

pytestmark = pytest.mark.usefixtures("demo_kb")

FAQ_QUESTION = "Mã trường của Trường Đại học Công nghệ Sông Hồng là gì?"
STAFF_TEXT = "Chào em, cô ở phòng tuyển sinh trả lời em nhé: mã trường là SHT."
SCRIPT = "<script>alert('x')</script>"


@pytest.fixture(autouse=True)
async def forget_what_tests_commit(engine: AsyncEngine) -> AsyncIterator[None]:
    """Rows above the marks taken before the test are the test's own: delete them after."""
    queries = {
        "contacts": "SELECT coalesce(max(id), 0) FROM contacts",
        "staff": "SELECT coalesce(max(id), 0) FROM staff_users",
        "audit": "SELECT coalesce(max(id), 0) FROM audit_log",
        "logins": "SELECT coalesce(max(id), 0) FROM login_attempts",
    }
    async with engine.connect() as conn:
        marks = {k: int(await conn.scalar(text(q)) or 0) for k, q in queries.items()}
    yield
    async with engine.begin() as conn:
        await conn.execute(text("DELETE FROM contacts WHERE id > :m"), {"m": marks["contacts"]})
        await conn.execute(text("DELETE FROM staff_users WHERE id > :m"), {"m": marks["staff"]})
        await conn.execute(text("DELETE FROM audit_log WHERE id > :m"), {"m": marks["audit"]})
        await conn.execute(text("DELETE FROM login_attempts WHERE id > :m"), {"m": marks["logins"]})


@pytest.fixture
def sessionmaker(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    """Real transactions: the worker and the admin are separate sessions, as in production."""
    return async_sessionmaker(engine, expire_on_commit=False)


@pytest.fixture
async def telegram() -> AsyncIterator[FakeTelegramApi]:
    api = await start_telegram_api()
    try:
        yield api
    finally:
        await api.close()


@pytest.fixture
def admin_settings(settings: Settings, telegram: FakeTelegramApi) -> Settings:
    return settings.model_copy(update={"telegram": telegram.settings()})


@pytest.fixture
async def worker(
    admin_settings: Settings,
    sessionmaker: async_sessionmaker[AsyncSession],
    parts: AnswererParts,
) -> AsyncIterator[Worker]:
    test_parts = replace(parts, settings=admin_settings)
    adapter = TelegramAdapter(admin_settings.telegram)
    async with aiohttp.ClientSession() as http:
        try:
            yield Worker(
                admin_settings,
                sessionmaker,
                Answerer(test_parts, sessionmaker),
                {"telegram": adapter},
                http,
            )
        finally:
            await adapter.aclose()


def chat_id() -> str:
    return str(900_000_000 + uuid.uuid4().int % 99_999_999)


async def ask(
    sm: async_sessionmaker[AsyncSession], user: str, question: str, *, channel: str = "telegram"
) -> int:
    """A student's message arrives (as the webhook would store it); its conversation id."""
    async with sm.begin() as session:
        recorded = await record_inbound(
            session,
            InboundMessage(
                channel=channel,  # type: ignore[arg-type]
                event_id=f"evt-{uuid.uuid4()}",
                external_user_id=user,
                kind="text",
                text=question,
                user_name="Lan",
            ),
        )
    return recorded.conversation_id


async def thread(sm: async_sessionmaker[AsyncSession], conversation_id: int) -> list[Message]:
    async with sm() as session:
        rows = await session.scalars(
            select(Message).where(Message.conversation_id == conversation_id).order_by(Message.id)
        )
        return list(rows.all())


def sent_texts(api: FakeTelegramApi, chat: str) -> list[str]:
    return [
        str(c.body["text"]) for c in api.calls_to("sendMessage") if str(c.body["chat_id"]) == chat
    ]


async def audit_actions(sm: async_sessionmaker[AsyncSession], conversation_id: int) -> list[str]:
    async with sm() as session:
        rows = await session.scalars(
            select(AuditEntry.action)
            .where(AuditEntry.entity == "conversation", AuditEntry.entity_id == conversation_id)
            .order_by(AuditEntry.id)
        )
        return list(rows.all())


async def test_take_over_keeps_the_bot_quiet_in_that_conversation(
    editor: AdminBrowser,
    worker: Worker,
    telegram: FakeTelegramApi,
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    chat = chat_id()
    conversation = await ask(sessionmaker, chat, FAQ_QUESTION)
    await worker.drain()
    assert len(sent_texts(telegram, chat)) == 1  # the bot answers before the take-over

    response = await editor.post(f"/admin/conversations/{conversation}/take-over")
    assert response.status == 303
    assert response.headers["Location"] == f"/admin/conversations/{conversation}?msg=taken_over"
    page = await editor.page(f"/admin/conversations/{conversation}")
    assert 'data-testid="conv-hand-back"' in page

    await ask(sessionmaker, chat, "Học phí một năm là bao nhiêu?")
    await worker.drain()
    rows = await thread(sessionmaker, conversation)
    assert [(m.direction, m.author, m.status) for m in rows] == [
        ("in", "user", "answered"),
        ("out", "bot", "sent"),
        ("in", "user", "skipped"),  # stored, not answered: a person has the conversation
    ]
    assert len(sent_texts(telegram, chat)) == 1
    assert await audit_actions(sessionmaker, conversation) == ["take_over"]


async def test_a_staff_reply_goes_out_through_the_channel_and_is_stored_as_staff(
    editor: AdminBrowser,
    worker: Worker,
    telegram: FakeTelegramApi,
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    chat = chat_id()
    conversation = await ask(sessionmaker, chat, FAQ_QUESTION)
    await worker.drain()

    response = await editor.post(f"/admin/conversations/{conversation}/reply", {"text": STAFF_TEXT})
    assert response.status == 303
    page = await editor.page(f"/admin/conversations/{conversation}")
    staff = (await thread(sessionmaker, conversation))[-1]
    assert (staff.author, staff.direction, staff.status, staff.text) == (
        "staff",
        "out",
        "queued",
        STAFF_TEXT,
    )
    assert STAFF_TEXT in page  # shown at once, with its status
    assert f'data-testid="status-{staff.id}">chờ gửi<' in page

    await worker.drain()
    assert sent_texts(telegram, chat)[-1] == STAFF_TEXT
    async with sessionmaker() as session:
        delivered = await session.get(Message, staff.id)
        mode = await session.scalar(
            select(Conversation.mode).where(Conversation.id == conversation)
        )
        [actor] = await session.scalars(
            select(AuditEntry.actor).where(
                AuditEntry.entity_id == conversation, AuditEntry.action == "reply"
            )
        )
    assert delivered is not None
    assert delivered.status == "sent"
    assert delivered.details["staff"] == actor
    assert actor in page  # who wrote it is shown beside it
    assert mode == "human"  # replying took the conversation over
    page = await editor.page(f"/admin/conversations/{conversation}")
    assert f'data-testid="status-{staff.id}">đã gửi<' in page
    assert await audit_actions(sessionmaker, conversation) == ["take_over", "reply"]


async def test_hand_back_lets_the_bot_answer_again(
    editor: AdminBrowser,
    worker: Worker,
    telegram: FakeTelegramApi,
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    chat = chat_id()
    conversation = await ask(sessionmaker, chat, "Xin chào")
    await worker.drain()
    await editor.post(f"/admin/conversations/{conversation}/take-over")
    await ask(sessionmaker, chat, FAQ_QUESTION)
    await worker.drain()
    before = len(sent_texts(telegram, chat))

    response = await editor.post(f"/admin/conversations/{conversation}/hand-back")
    assert response.headers["Location"] == f"/admin/conversations/{conversation}?msg=handed_back"
    await ask(sessionmaker, chat, FAQ_QUESTION)
    await worker.drain()
    rows = await thread(sessionmaker, conversation)
    assert [(m.author, m.status) for m in rows[-2:]] == [("user", "answered"), ("bot", "sent")]
    assert rows[-1].tier == "faq"
    assert len(sent_texts(telegram, chat)) == before + 1
    assert "SHT" in sent_texts(telegram, chat)[-1]
    assert await audit_actions(sessionmaker, conversation) == ["take_over", "hand_back"]


async def test_actions_need_an_editor_and_the_csrf_token(
    viewer: AdminBrowser, editor: AdminBrowser, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    conversation = await ask(sessionmaker, chat_id(), FAQ_QUESTION)
    page = await viewer.page(f"/admin/conversations/{conversation}")
    assert "conv-take-over" not in page
    assert "conv-reply-form" not in page
    for action, form in (("take-over", {}), ("reply", {"text": "x"}), ("hand-back", {})):
        path = f"/admin/conversations/{conversation}/{action}"
        assert (await viewer.post(path, form)).status == 403
        assert (await editor.post(path, form, csrf="")).status == 403
    assert [m.author for m in await thread(sessionmaker, conversation)] == ["user"]
    assert await audit_actions(sessionmaker, conversation) == []
    assert (await editor.post("/admin/conversations/999999999/take-over")).status == 404


async def test_an_empty_or_too_long_reply_is_refused_with_a_message(
    editor: AdminBrowser, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    conversation = await ask(sessionmaker, chat_id(), FAQ_QUESTION)
    empty = await editor.post(f"/admin/conversations/{conversation}/reply", {"text": "  "})
    assert empty.status == 400
    assert "Tin nhắn trống." in await empty.text()
    long = await editor.post(f"/admin/conversations/{conversation}/reply", {"text": "a" * 4001})
    assert long.status == 400
    assert [m.author for m in await thread(sessionmaker, conversation)] == ["user"]


async def test_the_list_filters_and_the_transcript_shows_tier_sources_and_escapes(
    viewer: AdminBrowser, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    chat = chat_id()
    conversation = await ask(sessionmaker, chat, f"Câu hỏi {SCRIPT} về học bổng")
    citations = [
        {"n": 1, "title": f"Quy chế {SCRIPT}", "source": "docs/a.md", "url": "https://x.vn/a"},
        {"n": 2, "title": "Trang lạ", "source": "docs/b.md", "url": "javascript:alert(1)"},
    ]
    details = {"scores": {"chunks": [{"similarity": 0.861}], "t_doc": 0.84}, "reason": "why"}
    async with sessionmaker.begin() as session:
        question = (await thread(sessionmaker, conversation))[0]
        session.add(
            Message(
                conversation_id=conversation,
                channel="telegram",
                direction=Direction.outbound,
                author=Author.bot,
                text="Theo quy chế [1]…",
                tier="documents",
                citations=citations,
                details=details,
                status=MessageStatus.failed,
                attempts=5,
                error="Forbidden: bot was blocked by the user",
                reply_to_id=question.id,
            )
        )
        await session.execute(
            text("UPDATE messages SET status = 'failed', attempts = 3 WHERE id = :id"),
            {"id": question.id},
        )

    page = await viewer.page(f"/admin/conversations/{conversation}")
    assert SCRIPT not in page
    assert "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;" in page
    assert '<a href="https://x.vn/a"' in page
    assert "javascript:" not in page  # not a link; shown as its title only
    # the figures and the platform's error are folded under "Chi tiết kỹ thuật"
    opening = '<details class="technical"><summary>Chi tiết kỹ thuật</summary>'
    folded = "".join(part.split("</details>")[0] for part in page.split(opening)[1:])
    assert "<strong>Điểm:</strong> 0.861 (ngưỡng 0.840)" in folded
    assert "Forbidden: bot was blocked by the user" in folded
    assert "Có trục trặc khi xử lý tin nhắn này." in page
    # A question given up after its tries, and a reply: the admin sees how many.
    assert f'data-testid="failed-{question.id}">Không trả lời được sau 3 lần thử<' in page
    assert ">Không gửi được sau 5 lần thử<" in page

    listed = await viewer.page(f"/admin/conversations?channel=telegram&q={chat}")
    assert f'data-testid="conv-row-{conversation}"' in listed
    past_the_end = await viewer.page(f"/admin/conversations?q={chat}&page=9")
    assert f'data-testid="conv-row-{conversation}"' in past_the_end  # the last page instead
    assert "Trang 1/1 · 1 mục" in past_the_end
    searched = await viewer.page("/admin/conversations?q=h%E1%BB%8Dc+b%E1%BB%95ng")  # học bổng
    assert f'data-testid="conv-row-{conversation}"' in searched
    unaccented = await viewer.page("/admin/conversations?q=HOC+BONG")
    assert f'data-testid="conv-row-{conversation}"' in unaccented
    assert f"conv-row-{conversation}" not in await viewer.page("/admin/conversations?q=hoc+phi")
    assert f"conv-row-{conversation}" not in await viewer.page("/admin/conversations?mode=human")
    assert f"conv-row-{conversation}" not in await viewer.page("/admin/conversations?channel=zalo")
    assert f"conv-row-{conversation}" not in await viewer.page("/admin/conversations?to=2020-01-01")


async def history(b: AdminBrowser, visitor: str) -> dict[str, Any]:
    async with b.http.get(b.url("/api/chat/history"), headers={"X-Visitor-Id": visitor}) as r:
        assert r.status == 200
        body: dict[str, Any] = json.loads(await r.text())
        return body


async def test_the_web_chat_history_says_when_staff_have_the_conversation(
    editor: AdminBrowser, worker: Worker, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    visitor = f"visitor-{uuid.uuid4().hex[:12]}"
    conversation = await ask(sessionmaker, visitor, FAQ_QUESTION, channel="web")
    assert (await history(editor, visitor))["human"] is False
    await editor.post(f"/admin/conversations/{conversation}/take-over")
    assert (await history(editor, visitor))["human"] is True  # the page polls while this holds

    await editor.post(f"/admin/conversations/{conversation}/reply", {"text": STAFF_TEXT})
    await worker.drain()  # a web reply is marked sent: the browser reads it from the store
    body = await history(editor, visitor)
    assert body["messages"][-1]["author"] == "staff"
    assert body["messages"][-1]["text"] == STAFF_TEXT

    await editor.post(f"/admin/conversations/{conversation}/hand-back")
    assert (await history(editor, visitor))["human"] is False
    assert (await history(editor, "never-seen-visitor"))["human"] is False


async def test_staff_of_every_role_see_a_web_visitor_as_a_tag_never_their_id(
    viewer: AdminBrowser, admin: AdminBrowser, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    visitor = uuid.uuid4().hex  # the key to the visitor's conversation in the chat page
    web = await ask(sessionmaker, visitor, FAQ_QUESTION, channel="web")
    chat = chat_id()
    telegram = await ask(sessionmaker, chat, FAQ_QUESTION)
    tag = hashlib.sha256(visitor.encode()).hexdigest()[:6]
    for b in (viewer, admin):
        listing = await b.page("/admin/conversations")
        assert f"conv-row-{web}" in listing
        transcript = await b.page(f"/admin/conversations/{web}")
        for page in (listing, transcript):
            assert visitor not in page
            assert f'data-testid="conv-contact-ref">Khách web · {tag}<' in page
        # a platform's id opens nothing by itself: it is still shown
        assert chat in await b.page(f"/admin/conversations/{telegram}")


async def test_a_long_transcript_pages_back_to_older_messages(
    viewer: AdminBrowser, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    conversation = await ask(sessionmaker, chat_id(), "tin nhắn số 0")
    async with sessionmaker.begin() as session:
        session.add_all(
            Message(
                conversation_id=conversation,
                channel="telegram",
                direction=Direction.inbound,
                author=Author.user,
                text=f"tin nhắn số {i}",
                status=MessageStatus.skipped,
            )
            for i in range(1, 205)
        )
    newest = await viewer.page(f"/admin/conversations/{conversation}")
    assert "tin nhắn số 204<" in newest
    assert "tin nhắn số 4<" not in newest  # 200 a page: 5..204
    older = re.search(r'href="([^"]*)" data-testid="conv-older"', newest)
    assert older
    page = await viewer.page(html.unescape(older.group(1)))
    assert "tin nhắn số 4<" in page
    assert "tin nhắn số 0<" in page
    assert "tin nhắn số 5<" not in page
    assert 'data-testid="conv-newest"' in page
    assert 'data-testid="conv-older"' not in page


async def test_a_student_asking_for_a_person_waits_at_the_top_until_staff_reply(
    editor: AdminBrowser,
    worker: Worker,
    telegram: FakeTelegramApi,
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    quiet = await ask(sessionmaker, chat_id(), FAQ_QUESTION)
    chat = chat_id()
    waiting = await ask(sessionmaker, chat, "e muốn nói chuyện với người thật được ko ạ")
    await worker.drain()
    later = await ask(sessionmaker, chat_id(), FAQ_QUESTION)  # newer activity than both
    await worker.drain()

    reply = sent_texts(telegram, chat)[-1]
    assert "giờ hành chính" in reply  # the bot says when staff usually answer
    async with sessionmaker() as session:
        marks = dict(
            (
                await session.execute(
                    select(Conversation.id, Conversation.waiting_since).where(
                        Conversation.id.in_([quiet, waiting, later])
                    )
                )
            ).all()
        )
    assert marks[waiting] is not None
    assert marks[quiet] is None
    assert marks[later] is None

    page = await editor.page("/admin/conversations")
    order = [int(n) for n in re.findall(r'data-testid="conv-row-(\d+)"', page)]
    assert order[0] == waiting  # waiting for a person: first, before newer activity
    assert order.index(later) < order.index(quiet)
    assert page.count('data-testid="conv-waiting"') == 1

    response = await editor.post(f"/admin/conversations/{waiting}/reply", {"text": STAFF_TEXT})
    assert response.status == 303
    async with sessionmaker() as session:
        conversation = await session.get(Conversation, waiting)
        assert conversation is not None
        assert conversation.waiting_since is None  # a person answered
    page = await editor.page("/admin/conversations")
    assert 'data-testid="conv-waiting"' not in page


# -- "cần xử lý": a request for a person or a 👎, first in the list and counted in the menu -------


async def flag(sm: async_sessionmaker[AsyncSession], conversation_id: int, **marks: Any) -> None:
    """Set ``waiting_since`` / ``flagged_since`` as the answerer and the 👎 button do."""
    async with sm.begin() as session:
        conversation = await session.get(Conversation, conversation_id)
        assert conversation is not None
        for name, value in marks.items():
            setattr(conversation, name, value)


def menu_count(page: str) -> int | None:
    found = re.search(r'data-testid="nav-attention"[^>]*>(\d+)<', page)
    return int(found.group(1)) if found else None


async def attention_rows(sm: async_sessionmaker[AsyncSession]) -> int:
    async with sm() as session:
        return int(
            await session.scalar(
                text(
                    "SELECT count(*) FROM conversations "
                    "WHERE waiting_since IS NOT NULL OR flagged_since IS NOT NULL"
                )
            )
            or 0
        )


async def test_a_thumbs_down_puts_the_conversation_first_with_its_reason_and_in_the_menu_count(
    viewer: AdminBrowser, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    before = await attention_rows(sessionmaker)
    flagged = await ask(sessionmaker, chat_id(), "Học phí ngành Luật bao nhiêu?")
    waiting = await ask(sessionmaker, chat_id(), "Cho em gặp cán bộ tư vấn")
    both = await ask(sessionmaker, chat_id(), "Câu trả lời sai rồi, cho em gặp người thật")
    newer = await ask(sessionmaker, chat_id(), FAQ_QUESTION)  # the newest activity, no mark
    start = utcnow() - timedelta(minutes=30)
    await flag(sessionmaker, flagged, flagged_since=start)
    await flag(sessionmaker, waiting, waiting_since=start + timedelta(minutes=1))
    await flag(sessionmaker, both, waiting_since=start + timedelta(minutes=5), flagged_since=start)

    page = await viewer.page("/admin/conversations")
    order = [int(n) for n in re.findall(r'data-testid="conv-row-(\d+)"', page)]
    assert order.index(newer) > max(order.index(c) for c in (flagged, waiting, both))
    assert order.index(flagged) < order.index(waiting)  # the longest waiting first

    def row(conversation: int) -> str:
        found = re.search(rf'data-testid="conv-row-{conversation}".*?</tr>', page, re.S)
        assert found
        return found.group(0)

    assert "cần xử lý" in row(flagged)
    assert 'data-testid="conv-flagged">chê một câu trả lời (👎)<' in row(flagged)
    assert 'data-testid="conv-waiting"' not in row(flagged)
    assert 'data-testid="conv-waiting">muốn gặp cán bộ tư vấn<' in row(waiting)
    assert 'data-testid="conv-flagged"' in row(both)
    assert 'data-testid="conv-waiting"' in row(both)
    assert "cần xử lý" not in row(newer)
    assert menu_count(page) == before + 3
    # The count is in the menu of every page, not only the list's.
    assert menu_count(await viewer.page("/admin/faq")) == before + 3


async def test_a_staff_reply_clears_both_marks(
    editor: AdminBrowser, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    conversation = await ask(sessionmaker, chat_id(), "Câu trả lời sai rồi")
    await flag(sessionmaker, conversation, waiting_since=utcnow(), flagged_since=utcnow())
    response = await editor.post(f"/admin/conversations/{conversation}/reply", {"text": STAFF_TEXT})
    assert response.status == 303
    async with sessionmaker() as session:
        found = await session.get(Conversation, conversation)
        assert found is not None
        assert (found.waiting_since, found.flagged_since) == (None, None)


async def test_handled_clears_both_marks_is_audited_and_needs_the_csrf_token(
    editor: AdminBrowser, viewer: AdminBrowser, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    conversation = await ask(sessionmaker, chat_id(), "Câu trả lời sai rồi")
    flagged_at = utcnow() - timedelta(minutes=3)
    await flag(sessionmaker, conversation, waiting_since=flagged_at, flagged_since=flagged_at)
    view = await editor.page(f"/admin/conversations/{conversation}")
    assert 'data-testid="conv-handled"' in view
    assert 'data-testid="conv-handled"' not in await viewer.page(
        f"/admin/conversations/{conversation}"
    )

    path = f"/admin/conversations/{conversation}/handled"
    assert (await editor.post(path, csrf="")).status == 403  # no token: nothing cleared
    assert (await viewer.post(path)).status == 403  # a viewer may not
    assert await attention_rows(sessionmaker) >= 1
    async with sessionmaker() as session:
        still = await session.get(Conversation, conversation)
        assert still is not None
        assert still.flagged_since is not None

    response = await editor.post(path)
    assert response.status == 303
    assert "msg=handled" in response.headers["Location"]
    async with sessionmaker() as session:
        found = await session.get(Conversation, conversation)
        assert found is not None
        assert (found.waiting_since, found.flagged_since) == (None, None)
        entry = await session.scalar(
            select(AuditEntry).where(
                AuditEntry.entity == "conversation",
                AuditEntry.entity_id == conversation,
                AuditEntry.action == "handled",
            )
        )
    assert entry is not None
    assert entry.before == {
        "waiting_since": flagged_at.isoformat(),
        "flagged_since": flagged_at.isoformat(),
    }
    assert entry.after == {"waiting_since": None, "flagged_since": None}
    page = await editor.page(f"/admin/conversations/{conversation}?msg=handled")
    assert "Đã đánh dấu là đã xử lý." in page
    assert 'data-testid="conv-handled"' not in page
    assert (await editor.post("/admin/conversations/999999999/handled")).status == 404


# -- a contact without a name: channel, first question, time ----------------------------------


async def test_a_contact_without_a_name_shows_its_channel_first_question_and_time(
    viewer: AdminBrowser, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    question = (
        "Cho em hỏi học phí ngành Công nghệ thông tin hệ chất lượng cao năm 2026 là bao nhiêu ạ?"
    )
    visitor = uuid.uuid4().hex
    made = []
    async with sessionmaker.begin() as session:
        for channel, user in (("web", visitor), ("zalo", f"z{uuid.uuid4().hex[:12]}")):
            recorded = await record_inbound(
                session,
                InboundMessage(
                    channel=channel,  # type: ignore[arg-type]
                    event_id=f"evt-{uuid.uuid4()}",
                    external_user_id=user,
                    kind="text",
                    text=question,
                ),
            )
            made.append(recorded.conversation_id)
    rows = []
    for conversation in made:
        first = (await thread(sessionmaker, conversation))[0]
        rows.append((conversation, first.channel, first.created_at))
    shortened = "Cho em hỏi học phí ngành Công nghệ thông tin hệ chất lượng…"
    listing = await viewer.page("/admin/conversations")
    for conversation, channel, at in rows:
        name = "Khách web" if channel == "web" else "Zalo"
        label = html.escape(f"{name} · “{shortened}” · {at.strftime('%d/%m/%Y %H:%M')}")
        found = re.search(rf'data-testid="conv-row-{conversation}".*?</tr>', listing, re.S)
        assert found
        assert f'data-testid="conv-label">{label}<' in found.group(0)
        assert "(không tên)" not in found.group(0)
        view = await viewer.page(f"/admin/conversations/{conversation}")
        assert f'data-testid="conv-label">{label}<' in view
        assert visitor not in view
