"""The web chat over real HTTP on 127.0.0.1: a citation of an uploaded file names its title,
not where the file lies on the server."""

from __future__ import annotations

import uuid
from pathlib import Path

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.knowledge.ingest import ingest_paths
from retrieval.index.indexer import Indexer
from tests.bot.web._webchat import chat_body, parse_sse
from tests.bot.web.webchat._support import Client, get_history, stored

INTERNAL_DOC = """# Quy định nhận thẻ dự thi năng khiếu

Thí sinh dự thi năng khiếu nhận thẻ dự thi màu tím tại phòng B105, nhà C3, từ ngày 3 tháng 7.
Khi nhận thẻ dự thi màu tím, thí sinh mang theo căn cước công dân và biên lai lệ phí.
"""


async def test_a_citation_of_an_uploaded_file_shows_its_title_not_its_server_path(
    client: Client,
    sessionmaker: async_sessionmaker[AsyncSession],
    indexer: Indexer,
    tmp_path: Path,
) -> None:
    folder = tmp_path / "srv" / "tuvan" / "uploads"
    folder.mkdir(parents=True)
    path = folder / "the-du-thi-nang-khieu.md"  # no web address in it: an uploaded file
    path.write_text(INTERNAL_DOC, encoding="utf-8")
    assert (await ingest_paths(sessionmaker, indexer, [path])).indexed == [str(path)]

    visitor = uuid.uuid4().hex
    body = chat_body("Nhận thẻ dự thi màu tím ở phòng nào?", visitor=visitor)
    response = await client.post("/api/chat", json=body)
    raw = await response.text()
    done = parse_sse(raw)[-1].data
    assert done["tier"] == "documents", done
    assert "B105" in done["answer"]
    title = "Quy định nhận thẻ dự thi năng khiếu"
    assert {"n": 1, "title": title, "url": None, "page": None} in done["citations"]
    assert f"[1] {title}" in done["answer"]
    history = await (await get_history(client, visitor)).text()
    for shown in (raw, history):
        assert str(tmp_path) not in shown
        assert "/srv/tuvan" not in shown
        assert "uploads" not in shown
    _, [reply] = await stored(sessionmaker, body["message_id"])  # sent as is on every channel
    assert reply.text == done["answer"]
    assert reply.citations[0]["source"] == str(path)  # staff still see where it came from
