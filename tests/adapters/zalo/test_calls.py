"""One mapping of a failed Zalo call to a ``SendError``, for sending and for the token refresh
alike: a server on 127.0.0.1 answers both APIs' paths with the same scripted failure."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from adapters.zalo import ZaloAdapter
from adapters.zalo.calls import post_zalo
from adapters.zalo.tokens import refresh_tokens
from bot.core.errors import SendError
from bot.core.messages import OutboundReply
from tests.adapters.zalo._support import APP_SECRET, USER, MemoryTokens, settings_for


@dataclass(frozen=True)
class Failure:
    status: int
    body: str
    content_type: str = "application/json"
    retry_after: str | None = None


class ScriptedZalo:
    """Answers every POST with ``failure``: a Zalo in trouble, whichever API is called."""

    def __init__(self) -> None:
        self.failure = Failure(200, "{}")

    async def answer(self, request: web.Request) -> web.Response:
        headers = {"Retry-After": self.failure.retry_after} if self.failure.retry_after else {}
        return web.Response(
            status=self.failure.status,
            text=self.failure.body,
            content_type=self.failure.content_type,
            headers=headers,
        )


@pytest.fixture
async def zalo() -> AsyncIterator[tuple[ScriptedZalo, str]]:
    scripted = ScriptedZalo()
    app = web.Application()
    app.router.add_post("/{path:.*}", scripted.answer)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    try:
        yield scripted, str(server.make_url("")).rstrip("/")
    finally:
        await server.close()


def _said(error: SendError) -> tuple[str, bool, int | None, float | None]:
    """The error without the name of the call it came from."""
    return str(error).split(": ", 1)[1], error.retryable, error.status, error.retry_after


async def _both(http: aiohttp.ClientSession, base: str) -> tuple[SendError, SendError]:
    settings = settings_for(base)
    tokens = MemoryTokens(http, settings)
    with pytest.raises(SendError) as sending:
        await ZaloAdapter(settings, tokens).send(http, OutboundReply(USER, "hi"))
    with pytest.raises(SendError) as refreshing:
        await refresh_tokens(http, settings, "rt-0")
    assert str(sending.value).startswith("zalo send: ")
    assert str(refreshing.value).startswith("zalo token refresh: ")
    return sending.value, refreshing.value


CASES = [
    (
        Failure(503, '{"message": "busy"}', retry_after="7"),
        ('HTTP 503: {"message": "busy"}', True, 503, 7.0),
    ),
    (Failure(429, "slow down", "text/plain"), ("HTTP 429: slow down", True, 429, None)),
    (Failure(400, '{"message": "bad"}'), ('HTTP 400: {"message": "bad"}', False, 400, None)),
    (
        Failure(200, "<html>", "text/html"),
        ("HTTP 200 with a body that is not JSON", False, 200, None),
    ),
]


@pytest.mark.parametrize(("failure", "said"), CASES)
async def test_sending_and_refreshing_map_a_failed_call_alike(
    zalo: tuple[ScriptedZalo, str],
    http: aiohttp.ClientSession,
    failure: Failure,
    said: tuple[str, bool, int | None, float | None],
) -> None:
    scripted, base = zalo
    scripted.failure = failure
    sending, refreshing = await _both(http, base)
    assert _said(sending) == _said(refreshing) == said


async def test_an_answer_that_is_not_an_object_is_retried_only_when_sending(
    zalo: tuple[ScriptedZalo, str], http: aiohttp.ClientSession
) -> None:
    # A refresh may have spent its single-use token already: another attempt cannot help.
    scripted, base = zalo
    scripted.failure = Failure(200, "[1, 2]")
    sending, refreshing = await _both(http, base)
    assert _said(sending) == ("the answer is not a JSON object", True, None, None)
    assert _said(refreshing) == ("the answer is not a JSON object", False, None, None)


async def test_an_unreachable_zalo_is_a_retryable_network_error_for_both(
    http: aiohttp.ClientSession,
) -> None:
    with socket.socket() as s:  # a port that nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    sending, refreshing = await _both(http, f"http://127.0.0.1:{port}")
    assert (
        _said(sending)
        == _said(refreshing)
        == ("network error: ClientConnectorError", True, None, None)
    )


async def test_the_secrets_of_a_call_never_reach_its_error(
    zalo: tuple[ScriptedZalo, str], http: aiohttp.ClientSession
) -> None:
    scripted, base = zalo
    scripted.failure = Failure(400, f"refused at-0 with rt-0 signed {APP_SECRET}", "text/plain")
    sending, refreshing = await _both(http, base)
    assert str(sending) == f"zalo send: HTTP 400: refused *** with rt-0 signed {APP_SECRET}"
    assert str(refreshing) == "zalo token refresh: HTTP 400: refused at-0 with *** signed ***"
    with pytest.raises(SendError) as direct:
        await post_zalo(http, f"{base}/x", "zalo test", headers={}, secrets=["signed", "refused"])
    assert "signed" not in str(direct.value)
    assert "refused" not in str(direct.value)
