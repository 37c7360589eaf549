"""A fake OpenAI-compatible server on loopback: the one stand-in for an LLM (none is reachable).

    stub = await start_openai_stub(dimension=8)
    stub.script_chat("Học phí là ... [1]")          # next chat reply (queue, first in first out)
    stub.script_chat(lambda body: "...")             # or computed from the request's JSON body
    stub.fail(500)                                   # the next request gets HTTP 500
    client = openai.AsyncOpenAI(base_url=stub.base_url, api_key="k")
    ...
    stub.requests[-1].body["messages"]; stub.requests[-1].headers["Authorization"]
    await stub.close()

Endpoints: ``POST /v1/chat/completions`` (plain, and ``stream: true`` as server-sent events in
OpenAI's chunk format ending with ``data: [DONE]``), ``POST /v1/embeddings`` (deterministic
bag-of-words pseudo-embeddings: identical texts give identical vectors, texts sharing words
give similar ones; not normalised, like some real servers), ``GET /v1/models``.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import re
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from aiohttp import web
from multidict import CIMultiDict

ChatReply = str | Callable[[dict[str, Any]], str]


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: CIMultiDict[str]
    body: dict[str, Any]


@dataclass
class ScriptedChat:
    reply: ChatReply
    delay_s: float = 0.0
    # Streaming only: after this many content chunks, send an error event instead of the rest.
    stream_error_after: int | None = None
    finish_reason: str = "stop"


@dataclass
class ScriptedFailure:
    status: int
    message: str
    path: str | None  # None: any endpoint


@dataclass
class OpenAIStub:
    dimension: int
    model: str = "stub-model"
    requests: list[RecordedRequest] = field(default_factory=list)
    base_url: str = ""
    _chats: deque[ScriptedChat] = field(default_factory=deque)
    _failures: deque[ScriptedFailure] = field(default_factory=deque)
    _runner: web.AppRunner | None = None

    # -- scripting ----------------------------------------------------------------------------

    def script_chat(
        self,
        reply: ChatReply,
        *,
        delay_s: float = 0.0,
        stream_error_after: int | None = None,
        finish_reason: str = "stop",
    ) -> None:
        """Queue the reply to the next chat completion (streamed or not)."""
        self._chats.append(ScriptedChat(reply, delay_s, stream_error_after, finish_reason))

    def fail(
        self,
        status: int,
        *,
        times: int = 1,
        message: str = "stub failure",
        path: str | None = None,
    ) -> None:
        """Answer the next ``times`` requests (to ``path``, e.g. "/v1/embeddings", or to any
        endpoint) with HTTP ``status`` and an OpenAI-shaped error body."""
        for _ in range(times):
            self._failures.append(ScriptedFailure(status, message, path))

    def requests_to(self, path: str) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path == path]

    @staticmethod
    def embed(text: str, dimension: int) -> list[float]:
        """The stub's vector for ``text``: a sum of per-word pseudo-random vectors."""
        words = re.findall(r"\w+", text.lower()) or [text]
        total = np.zeros(dimension)
        for word in words:
            seed = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "big")
            total += np.random.default_rng(seed).standard_normal(dimension)
        return [float(x) for x in total * 3.0]

    # -- serving ------------------------------------------------------------------------------

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_post("/v1/embeddings", self._embeddings)
        app.router.add_get("/v1/models", self._models)
        return app

    async def close(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def _record(self, request: web.Request) -> dict[str, Any]:
        raw = await request.read()
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            body = {"_raw": raw.decode("utf-8", "replace")}
        self.requests.append(
            RecordedRequest(request.method, request.path, CIMultiDict(request.headers), body)
        )
        return body if isinstance(body, dict) else {"_json": body}

    def _failure(self, path: str) -> web.Response | None:
        for failure in self._failures:
            if failure.path in (None, path):
                self._failures.remove(failure)
                return _error(failure.status, failure.message, "server_error")
        return None

    async def _models(self, request: web.Request) -> web.Response:
        await self._record(request)
        return web.json_response(
            {"object": "list", "data": [{"id": self.model, "object": "model", "owned_by": "stub"}]}
        )

    async def _embeddings(self, request: web.Request) -> web.Response:
        body = await self._record(request)
        if (failed := self._failure(request.path)) is not None:
            return failed
        texts = body.get("input")
        if isinstance(texts, str):
            texts = [texts]
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            return _error(400, "stub: 'input' must be a string or a list of strings")
        dimension = int(body.get("dimensions") or self.dimension)
        as_base64 = body.get("encoding_format") == "base64"
        data = []
        for index, text in enumerate(texts):
            vector = self.embed(text, dimension)
            embedding: Any = (
                base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode()
                if as_base64
                else vector
            )
            data.append({"object": "embedding", "index": index, "embedding": embedding})
        tokens = sum(len(t.split()) for t in texts)
        return web.json_response(
            {
                "object": "list",
                "data": data,
                "model": body.get("model", self.model),
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            }
        )

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        body = await self._record(request)
        if (failed := self._failure(request.path)) is not None:
            return failed
        if not self._chats:
            return _error(500, "openai_stub: no scripted chat reply (call script_chat first)")
        scripted = self._chats.popleft()
        if scripted.delay_s:
            await asyncio.sleep(scripted.delay_s)
        text = scripted.reply(body) if callable(scripted.reply) else scripted.reply
        model = body.get("model", self.model)
        completion_id = f"chatcmpl-stub{len(self.requests)}"
        created = int(time.time())
        usage = {
            "prompt_tokens": sum(
                len(str(m.get("content", "")).split()) for m in body.get("messages", [])
            ),
            "completion_tokens": len(text.split()),
        }
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        if not body.get("stream"):
            return web.json_response(
                {
                    "id": completion_id,
                    "object": "chat.completion",
                    "created": created,
                    "model": model,
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": text},
                            "finish_reason": scripted.finish_reason,
                        }
                    ],
                    "usage": usage,
                }
            )

        response = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        )
        await response.prepare(request)

        async def send(payload: object) -> None:
            data = payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=False)
            await response.write(f"data: {data}\n\n".encode())

        def chunk(delta: dict[str, str], finish_reason: str | None = None) -> dict[str, Any]:
            return {
                "id": completion_id,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
            }

        await send(chunk({"role": "assistant", "content": ""}))
        # Word-sized deltas, keeping the spaces, so that joining them gives the text back.
        for sent, piece in enumerate(re.findall(r"\S+\s*|\s+", text)):
            if scripted.stream_error_after is not None and sent >= scripted.stream_error_after:
                await send({"error": {"message": "stub stream failure", "type": "server_error"}})
                await response.write_eof()
                return response
            await send(chunk({"content": piece}))
        await send(chunk({}, scripted.finish_reason))
        if (body.get("stream_options") or {}).get("include_usage"):
            await send({**chunk({}), "choices": [], "usage": usage})
        await send("[DONE]")
        await response.write_eof()
        return response


def _error(status: int, message: str, kind: str = "invalid_request_error") -> web.Response:
    return web.json_response(
        {"error": {"message": message, "type": kind, "param": None, "code": None}}, status=status
    )


async def start_openai_stub(dimension: int = 8, *, model: str = "stub-model") -> OpenAIStub:
    """Serve a new stub on 127.0.0.1, on a free port. Close it with ``await stub.close()``."""
    stub = OpenAIStub(dimension=dimension, model=model)
    runner = web.AppRunner(stub.app(), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    stub._runner = runner
    stub.base_url = f"http://127.0.0.1:{port}/v1"
    return stub
