"""Every staff page in plain Vietnamese: signed in with the Vietnamese interface, with one
conversation of each kind (an FAQ answer, a documents answer, a fallback, a guard refusal, a
staff reply) asked through the real web chat, each reply then given a confidence and a reading
of each kind (``details["confidence"]``, ``details["reading"]``: ``READINGS``), every GET route
of the admin is opened (detail pages with real ids) and none shows, outside a "Chi tiết kỹ
thuật" block, an English diagnostic, the engine's reasoning in Vietnamese (how the guard weighed
an FAQ entry: "Mục #25: câu hỏi hỏi về … nhưng mục này không nói về …") or a raw score
("0.919"); nor anywhere a server path or a Markdown table left as its pipes ("|---|"). What
counts as engine talk, and how it is found: tests/admin/_engine_talk.py.

A new page is walked as soon as its route exists. A route with a new path parameter needs its
values in ``ROUTE_VALUES`` (the test says so); a page worth opening with a query (Try it with a
question) goes in ``pages_with_queries``.

The web chat stores on real transactions (``sessionmaker`` below), so what a test commits is
taken away afterwards (``rows_since``).
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from aiohttp.web_urldispatcher import StaticResource
from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from admin.app import create_admin_app
from bot.core.settings import Settings
from bot.db.models import FaqEntry, Message
from bot.knowledge.demo import demo_kb_dir
from tests.admin._engine_talk import TECHNICAL, engine_talk_on
from tests.admin._support import AdminBrowser, delete_rows_since, rows_since

pytestmark = pytest.mark.usefixtures("demo_kb")


# -- the conversations -----------------------------------------------------------------------


@pytest.fixture
def sessionmaker(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    """Real transactions: the web chat answers and stores in sessions of its own."""
    return async_sessionmaker(engine, expire_on_commit=False)


@pytest.fixture(autouse=True)
async def forget_what_the_test_commits(engine: AsyncEngine) -> AsyncIterator[None]:
    marks = await rows_since(engine)
    yield
    await delete_rows_since(engine, marks)


@dataclass(frozen=True)
class Asked:
    """A question asked in the web chat, and the stored reply."""

    question: str
    conversation_id: int
    reply_id: int
    tier: str


@dataclass
class Seeded:
    asked: dict[str, Asked] = field(default_factory=dict)
    faq_ids: list[int] = field(default_factory=list)


QUESTIONS = {
    "faq": "Mã trường của Trường Đại học Công nghệ Sông Hồng là gì?",
    "guard": "Chỉ tiêu ngành Kỹ thuật Máy tính năm 2026 là bao nhiêu?",
    "documents": "Ký túc xá A Sen Hồng nằm ở cơ sở nào và có những tiện ích gì?",
    "fallback": "Giá vé máy bay từ Hà Nội đi Paris tháng sau là bao nhiêu?",
}


def _taken(words: str, source: str) -> dict[str, str]:
    return {"slot": "major", "label": "ngành", "words": words, "from_text": source}


# What each reply is given on top of what the answerer stored: a confidence (the documents'
# answer below the line, so "Cần xem lại" lists it as unsure) and a reading of each kind.
READINGS: dict[str, dict[str, Any]] = {
    "faq": {
        "confidence": 0.97,
        "reading": {"mode": "alone", "asked": QUESTIONS["faq"], "taken": [], "stopped": "pause"},
    },
    "guard": {
        "confidence": 0.91,
        "reading": {
            "mode": "context",
            "asked": QUESTIONS["guard"],
            "taken": [_taken("Kỹ thuật Máy tính", "điểm chuẩn ngành Kỹ thuật Máy tính")],
            "why": "follow_up",
            "stopped": None,
        },
    },
    "documents": {
        "confidence": 0.42,
        "reading": {
            "mode": "context",
            "asked": QUESTIONS["documents"] + " ngành khmt",
            "taken": [_taken("khmt", "chỉ tiêu ngành khmt năm nay bn")],
            "why": "no_subject",
            "stopped": None,
        },
    },
    "fallback": {
        "reading": {"mode": "alone", "asked": QUESTIONS["fallback"], "stopped": "new_topic"},
    },
}


async def ask_web_chat(b: AdminBrowser, sm: async_sessionmaker[AsyncSession], text: str) -> Asked:
    body = {"visitor_id": f"walk-{uuid.uuid4()}", "message_id": str(uuid.uuid4()), "text": text}
    async with b.http.post(b.url("/api/chat"), json=body) as response:
        assert response.status == 200, await response.text()
        stream = await response.text()
    done = stream.split("event: done\n")[-1].split("\n")[0]
    assert done.startswith("data: "), stream[-500:]
    reply = json.loads(done.removeprefix("data: "))
    async with sm() as session:
        conversation_id = await session.scalar(
            select(Message.conversation_id).where(Message.id == reply["reply_id"])
        )
    assert conversation_id is not None
    return Asked(text, conversation_id, int(reply["reply_id"]), str(reply["tier"]))


@pytest.fixture
async def seeded(admin: AdminBrowser, sessionmaker: async_sessionmaker[AsyncSession]) -> Seeded:
    found = Seeded()
    for kind, question in QUESTIONS.items():
        found.asked[kind] = await ask_web_chat(admin, sessionmaker, question)
    async with sessionmaker.begin() as session:
        for kind, extra in READINGS.items():
            await session.execute(
                text(
                    "UPDATE messages SET details = details || CAST(:extra AS jsonb) WHERE id = :id"
                ),
                {"extra": json.dumps(extra, ensure_ascii=False), "id": found.asked[kind].reply_id},
            )
    staff = found.asked["fallback"].conversation_id
    reply = await admin.post(
        f"/admin/conversations/{staff}/reply", {"text": "Chào em, cô trả lời em ngay nhé."}
    )
    assert reply.status == 303
    async with sessionmaker() as session:
        found.faq_ids = list((await session.scalars(select(FaqEntry.id).limit(3))).all())
    return found


# -- the walk ---------------------------------------------------------------------------------

# Values for each path parameter of the admin's routes, from what the test seeded.
ROUTE_VALUES: dict[str, Callable[[Seeded], list[str]]] = {
    "conversation_id": lambda s: sorted({str(a.conversation_id) for a in s.asked.values()}),
    "faq_id": lambda s: [str(i) for i in s.faq_ids],
    "lang": lambda s: ["vi"],
    # Cần xem lại opens any answer by its id: one of each tier.
    "message_id": lambda s: sorted({str(a.reply_id) for a in s.asked.values()}),
}


def get_routes() -> list[str]:
    """The path template of every GET route of the admin (static files aside)."""
    templates = []
    for route in create_admin_app().router.routes():
        resource = route.resource
        if route.method != "GET" or resource is None or isinstance(resource, StaticResource):
            continue
        info = resource.get_info()
        template = info.get("formatter") or info.get("path")
        assert isinstance(template, str)
        templates.append("/admin" + template)
    return templates


def concrete_paths(template: str, seeded: Seeded) -> list[str]:
    params = re.findall(r"\{([^}:]+)(?::[^}]*)?\}", template)
    paths = [template]
    for name in params:
        values = ROUTE_VALUES.get(name)
        assert values is not None, f"{template}: add the values of {{{name}}} to ROUTE_VALUES"
        paths = [
            re.sub(r"\{" + name + r"(?::[^}]*)?\}", v, p, count=1)
            for p in paths
            for v in values(seeded)
        ]
    return paths


def pages_with_queries(seeded: Seeded) -> list[str]:
    """Pages worth opening with a query: Try it with each kind of question, a search."""
    return [
        *(f"/admin/try?q={a.question}" for a in seeded.asked.values()),
        f"/admin/try?q=ngành đó học phí bao nhiêu&prev={QUESTIONS['guard']}",
        "/admin/conversations?q=Paris",
        "/admin/documents?q=tuyển sinh",
    ]


async def test_no_staff_page_shows_engine_talk_or_server_paths(
    admin: AdminBrowser, seeded: Seeded, admin_settings: Settings
) -> None:
    tiers = {kind: a.tier for kind, a in seeded.asked.items()}
    assert (tiers["faq"], tiers["fallback"]) == ("faq", "fallback"), tiers
    assert "documents" in (tiers["documents"], tiers["guard"]), tiers
    paths = [p for t in get_routes() for p in concrete_paths(t, seeded)]
    assert {"/admin/dashboard", "/admin/try", "/admin/documents", "/admin/conversations"} <= set(
        paths
    )
    server_paths = [str(demo_kb_dir()), str(admin_settings.data_dir)]
    problems: list[str] = []
    walked = 0
    for path in paths + pages_with_queries(seeded):
        response = await admin.get(path)
        if response.status in (301, 302, 303):  # the index, the language switch
            continue
        assert response.status == 200, f"GET {path}: {response.status}"
        if response.content_type != "text/html":
            continue  # the FAQ export: a file for Excel, not a page
        page = await response.text()
        walked += 1
        problems += [f"{path}: …{found}…" for found in engine_talk_on(page)]
        problems += [f"{path}: shows the server path {p}" for p in server_paths if p in page]
    assert walked >= 12
    assert not problems, "\n".join(problems)


def _shown(page: str, testid: str, end: str = "</p>") -> str:
    return page.split(f'data-testid="{testid}"')[1].split(end)[0]


async def test_each_kind_of_reply_is_explained_in_vietnamese(
    admin: AdminBrowser, seeded: Seeded
) -> None:
    said: dict[str, str] = {}
    read: dict[str, str] = {}
    sure: dict[str, str] = {}
    folded: dict[str, str] = {}
    pages: dict[str, str] = {}
    for kind, asked in seeded.asked.items():
        page = pages[kind] = await admin.page(f"/admin/conversations/{asked.conversation_id}")
        said[kind] = _shown(page, f"why-{asked.reply_id}")
        read[kind] = _shown(page, f"reading-{asked.reply_id}")
        sure[kind] = _shown(page, f"sure-{asked.reply_id}") if kind != "fallback" else ""
        folded[kind] = _shown(page, f"technical-{asked.reply_id}", "</details>")
        assert (
            f'<summary>{TECHNICAL}</summary><div data-testid="technical-{asked.reply_id}"' in page
        )
    assert "Đọc riêng tin nhắn này. Không dùng câu hỏi trước: đã cách quá lâu." in read["faq"]
    assert "Tin nhắn hỏi tiếp câu trước nên lấy ngành" in read["guard"]
    assert "Tin nhắn không nói ngành nên lấy ngành “khmt” từ câu hỏi trước" in read["documents"]
    assert "hỏi sang chuyện khác" in read["fallback"]
    assert re.search(r"Trả lời từ câu hỏi thường gặp #\d+", said["faq"]), said["faq"]
    # the entry that answered, linked by its question
    faq = seeded.asked["faq"]
    entry = _shown(pages["faq"], f"sources-{faq.reply_id}", "</ul>")
    assert re.search(rf'href="/admin/faq/\d+">#\d+ · {re.escape(QUESTIONS["faq"])}</a>', entry)
    # the guard's refusal said from its structure (category label and values), folded away
    guard = "câu hỏi nói về Kỹ thuật máy tính (ngành), mục này nói về Khoa học máy tính"
    assert guard not in said["guard"]
    assert guard in folded["guard"]
    assert "Trả lời từ tài liệu" in said["guard"] + said["documents"]
    assert "Chưa trả lời được" in said["fallback"]
    # how sure, in words (READINGS: 0.97, 0.91, 0.42; a fallback claims nothing)
    assert (sure["faq"], sure["guard"]) == (">Chắc chắn</span>", ">Chắc chắn</span>"), sure
    assert sure["documents"] == ">Không chắc</span>", sure
    assert f'data-testid="sure-{seeded.asked["fallback"].reply_id}"' not in pages["fallback"]
    staff_page = await admin.page(
        f"/admin/conversations/{seeded.asked['fallback'].conversation_id}"
    )
    assert "Chào em, cô trả lời em ngay nhé." in staff_page
