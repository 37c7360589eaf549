"""Typed keys of the admin sub-app's own state (the shared ones are in ``bot.keys``)."""

from __future__ import annotations

import asyncio

import jinja2
from aiohttp import web

from admin.document_files import IngestOutcome
from admin.question_groups import QuestionVectors

JINJA = web.AppKey("admin_jinja", jinja2.Environment)
# Uploads being loaded and indexed in the background, awaited on shutdown.
INGESTS = web.AppKey("admin_ingest_tasks", set[asyncio.Task[IngestOutcome]])
# The embeddings of asked questions, cached between views of the "Cần xem lại" queue.
QUESTION_VECTORS = web.AppKey("admin_question_vectors", QuestionVectors)
