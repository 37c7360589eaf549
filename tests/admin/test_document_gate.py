"""Ingestions in `serve` take turns through the process's gate and load their file in a child
process: while one is loading a document, /healthz on the same app answers, and a second one
waits for the first. Each ingestion reads its PDF from a named pipe the test writes to, so it is
held, for real, in the middle of loading until the test lets it go (no timing involved)."""

from __future__ import annotations

import asyncio
import errno
import os
from pathlib import Path

import aiohttp
import pymupdf
from aiohttp.test_utils import TestServer
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from admin.document_files import IngestOutcome, ingest_file
from bot.db.models import Document
from bot.keys import RUNTIME

RULE = "The dormitory opens on the first of September for every first-year student."


def pdf_bytes(line: str) -> bytes:
    pdf = pymupdf.open()
    pdf.new_page().insert_text((56, 72), line, fontsize=10)
    data: bytes = pdf.tobytes()
    pdf.close()
    return data


def writer_end(fifo: Path) -> int | None:
    """The pipe's write end if a reader has it open (the ingestion is loading it), else None."""
    try:
        return os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # no reader
            return None
        raise


async def reader_opened(fifo: Path, task: asyncio.Task[IngestOutcome]) -> int:
    """Wait until the ingestion opens `fifo` to load it; the write end."""
    while (fd := writer_end(fifo)) is None:
        assert not task.done(), task.result()
        await asyncio.sleep(0.01)
    return fd


def opened_here(path: Path) -> int:
    """How many of this process's file descriptors are `path` (Linux's /proc)."""
    fds = Path("/proc/self/fd")
    return sum(1 for fd in fds.iterdir() if os.path.realpath(fd) == str(path.resolve()))


def feed(fd: int, data: bytes) -> None:
    os.set_blocking(fd, True)
    with os.fdopen(fd, "wb") as pipe:
        pipe.write(data)


async def test_healthz_answers_while_an_upload_loads_and_a_second_waits_its_turn(
    admin_server: TestServer,
    sessionmaker: async_sessionmaker[AsyncSession],
    tmp_path: Path,
) -> None:
    rt = admin_server.app[RUNTIME]
    assert rt.ingest_gate.limit == 1  # ingest.concurrency's default
    first, second = tmp_path / "first.pdf", tmp_path / "second.pdf"
    os.mkfifo(first)
    os.mkfifo(second)
    one = asyncio.create_task(ingest_file(rt, first, "editor@shut.example.vn", "reingest"))
    first_end = await reader_opened(first, one)
    two = asyncio.create_task(ingest_file(rt, second, "editor@shut.example.vn", "reingest"))
    await asyncio.sleep(0)  # the second runs up to the gate: nothing it awaits comes before
    assert rt.ingest_gate.waiting == 1

    async with (
        aiohttp.ClientSession() as client,
        client.get(admin_server.make_url("/healthz")) as health,
    ):
        assert (health.status, await health.json()) == (200, {"status": "ok"})
    assert not one.done()  # answered while the first ingestion was loading
    assert (rt.ingest_gate.running, rt.ingest_gate.waiting) == (1, 1)
    assert writer_end(second) is None  # the second has not started to load
    # MuPDF holds the GIL while it renders: the file is read in a child process, not in a
    # thread of this one, where the only end of the pipe open is the test's.
    assert opened_here(first) == 1

    await asyncio.to_thread(feed, first_end, pdf_bytes(RULE))
    assert (await one).status == "indexed"
    second_end = await reader_opened(second, two)
    await asyncio.to_thread(feed, second_end, pdf_bytes(RULE.replace("first", "second")))
    assert (await two).status == "indexed"

    async with sessionmaker() as session:
        sources = await session.scalars(
            select(Document.source).where(Document.source.in_([str(first), str(second)]))
        )
        assert sorted(sources) == sorted([str(first), str(second)])
    assert (rt.ingest_gate.running, rt.ingest_gate.waiting) == (0, 0)
