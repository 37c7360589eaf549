"""The bundled demo knowledge base: a fictional university's admission handbook and FAQ."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from importlib import resources
from pathlib import Path

from sqlalchemy import func, select

from bot.faqio import read_faq_file
from bot.models import Document, FaqEntry, StaffRole, StaffUser
from bot.runtime import Runtime
from retrieval.index import upsert_faq
from retrieval.ingest import ingest_paths


def demo_kb_dir() -> Path:
    return Path(str(resources.files("bot") / "demo_kb"))


async def load_demo_kb(rt: Runtime, progress: Callable[[int], None] | None = None) -> str:
    """Load the demo documents and FAQ into an empty store; '' when the store had content."""
    async with rt.sessionmaker() as session:
        faqs = await session.scalar(select(func.count()).select_from(FaqEntry))
        docs = await session.scalar(select(func.count()).select_from(Document))
    if faqs or docs:
        return ""
    kb = demo_kb_dir()
    report = await ingest_paths(rt.sessionmaker, rt.indexer, [kb / "docs"], on_chunks=progress)
    drafts = read_faq_file(kb / "faq.jsonl")
    async with rt.sessionmaker.begin() as session:
        for draft in drafts:
            draft.updated_by = "demo"
            await upsert_faq(session, rt.indexer, draft)
            if progress:
                progress(1)
    return f"{len(report.indexed)} documents ({report.chunks} chunks), {len(drafts)} FAQ entries"


DEMO_ADMIN = "admin@demo.tuvan.local"


async def ensure_demo_admin(rt: Runtime) -> tuple[str, str] | None:
    """A first admin account for the demo, with a fresh random password, when no account
    exists yet: (e-mail, password) to show once; None when staff accounts exist already."""
    from admin.accounts import create_user

    async with rt.sessionmaker.begin() as session:
        if await session.scalar(select(func.count()).select_from(StaffUser)):
            return None
        password = secrets.token_urlsafe(12)
        await create_user(session, DEMO_ADMIN, password, StaffRole.admin)
    return DEMO_ADMIN, password
