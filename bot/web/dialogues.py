"""Dialogues asked through the web chat's own API (`tuvan eval dialogues`, 1/4): tuvan's web app
over a throwaway database, served on 127.0.0.1, each message a ``POST /api/chat`` as the page
sends it (bot.evaluation.dialogues scores the replies)."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import replace
from typing import Any

import aiohttp
from aiohttp import web
from sqlalchemy import text

from bot.answer.answerer import Answerer
from bot.answer.parts import AnswererParts
from bot.core.errors import DatasetError
from bot.evaluation.dialogues import DialogueEvaluation, DialogueTurn, ask_dialogues
from bot.evaluation.workspace import Workspace, indexer_for, throwaway_database
from bot.knowledge.demo import load_demo_kb
from bot.runtime import Runtime
from bot.web.app import create_app

_DETAILS = text("SELECT details FROM messages WHERE id = :id")


@asynccontextmanager
async def chat_server(parts: AnswererParts, workspace: Workspace) -> AsyncIterator[str]:
    """tuvan's web app over ``workspace`` on 127.0.0.1 (a free port), with limits a whole
    dialogue file fits under; its base URL."""
    settings = parts.settings
    # every bucket, whatever its name: a dialogue file is asked from one address in one go
    limits = settings.limits.model_copy(
        update={
            name: 10_000
            for name in type(settings.limits).model_fields
            if name.endswith(("_per_minute", "_burst"))
        }
    )
    settings = settings.model_copy(
        update={
            "limits": limits,
            "admin": settings.admin.model_copy(update={"enabled": False}),
            "web": settings.web.model_copy(update={"enabled": True}),
        }
    )
    parts = replace(parts, settings=settings)
    runtime = Runtime(
        settings,
        workspace.engine,
        workspace.sessionmaker,
        parts,
        Answerer(parts, workspace.sessionmaker),
    )
    async with aiohttp.ClientSession() as http:
        runner = web.AppRunner(create_app(runtime, adapters={}, http=http))
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        try:
            yield f"http://127.0.0.1:{runner.addresses[0][1]}"
        finally:
            await runner.cleanup()


async def post_chat(
    http: aiohttp.ClientSession, base: str, visitor: str, question: str
) -> dict[str, Any]:
    """One message through ``POST /api/chat``: the final ``done`` event's payload."""
    body = {"visitor_id": visitor, "message_id": str(uuid.uuid4()), "text": question}
    async with http.post(f"{base}/api/chat", json=body) as response:
        raw = await response.text()
        if response.status != 200:
            raise DatasetError(f"the web chat answered {response.status}: {raw[:200]}")
    done: dict[str, Any] | None = None
    event = ""
    for line in raw.splitlines():
        if line.startswith("event:"):
            event = line.split(":", 1)[1].strip()
        elif line.startswith("data:") and event == "done":
            done = json.loads(line.split(":", 1)[1])
    if done is None:
        raise DatasetError("the web chat's stream ended without a done event")
    return done


async def dialogues_through_web_chat(
    parts: AnswererParts,
    turns: Sequence[DialogueTurn],
    *,
    load: Callable[[Workspace], Awaitable[Any]] | None = None,
    server_url: str | None = None,
    on_turn: Callable[[int], None] | None = None,
) -> DialogueEvaluation:
    """Every turn asked in session order through the web chat, over a throwaway store that
    ``load`` fills (default: the demo knowledge base)."""
    async with throwaway_database(server_url) as workspace:
        if load is None:
            await load_demo_kb(workspace.sessionmaker, indexer_for(parts))
        else:
            await load(workspace)
        async with chat_server(parts, workspace) as base, aiohttp.ClientSession() as http:

            async def ask(visitor: str, question: str) -> tuple[dict[str, Any], dict[str, Any]]:
                done = await post_chat(http, base, visitor, question)
                details: dict[str, Any] = {}
                if done.get("reply_id") is not None:
                    async with workspace.sessionmaker() as session:
                        details = await session.scalar(_DETAILS, {"id": done["reply_id"]}) or {}
                return done, details

            return await ask_dialogues(turns, ask, on_turn)
