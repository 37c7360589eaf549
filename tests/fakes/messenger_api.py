"""A fake Graph API Send endpoint on loopback: Messenger's stand-in in tests.

    api = await start_messenger_api(page_token="page-token")
    settings = MessengerSettings(page_token=SecretStr("page-token"), api_base=api.base_url)
    api.fail_outside_window()        # the next send gets Meta's (#10) window error
    api.fail_rate_limit(times=2)     # (#613) twice
    api.fail(500)                    # HTTP 500 with a Graph error body
    ...
    api.requests[-1].query["access_token"]; api.requests[-1].body["message"]["text"]
    api.messages  # bodies of the text sends; api.actions: bodies of the sender actions
    await api.close()

``POST /{version}/me/messages`` answers ``{"recipient_id", "message_id"}`` for a message and
``{"recipient_id"}`` for a sender action, and checks what the real one checks and tests rely
on: the access token, the recipient, text under 2000 characters, at most 13 quick replies with
titles of at most 20 characters.
"""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web
from multidict import CIMultiDict

TEXT_LIMIT = 2000  # "text must be UTF-8 and has a 2000 character limit"


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    query: dict[str, str]
    headers: CIMultiDict[str]
    body: dict[str, Any]


@dataclass
class ScriptedFailure:
    status: int
    error: dict[str, Any] | None  # None: a body that is not JSON
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class MessengerApiFake:
    page_token: str | None = None  # None: any token is accepted
    requests: list[RecordedRequest] = field(default_factory=list)
    base_url: str = ""
    _failures: deque[ScriptedFailure] = field(default_factory=deque)
    _runner: web.AppRunner | None = None
    _sent: int = 0
    delay_s: float = 0.0  # every request waits this long first: a platform that hangs
    _fail_at: dict[int, int] = field(default_factory=dict)  # request number -> HTTP status
    _delay_at: dict[int, float] = field(default_factory=dict)  # request number -> seconds

    # -- scripting ----------------------------------------------------------------------------

    def fail(
        self,
        status: int,
        *,
        code: int = 1200,
        subcode: int | None = None,
        message: str = "Temporary send message failure. Please try again later.",
        times: int = 1,
        headers: dict[str, str] | None = None,
    ) -> None:
        """Answer the next ``times`` requests with HTTP ``status`` and a Graph error body."""
        error: dict[str, Any] = {
            "message": message,
            "type": "OAuthException",
            "code": code,
            "fbtrace_id": "AbCdEfGhIjK",
        }
        if subcode is not None:
            error["error_subcode"] = subcode
        for _ in range(times):
            self._failures.append(ScriptedFailure(status, error, dict(headers or {})))

    def fail_request(self, number: int, status: int = 500) -> None:
        """Answer the request numbered ``number`` (1-based, counting every request) with
        HTTP ``status`` and a Graph error body: e.g. the second part of a split reply."""
        self._fail_at[number] = status

    def delay_request(self, number: int, seconds: float) -> None:
        """Hold the request numbered ``number`` (1-based) ``seconds`` before answering it."""
        self._delay_at[number] = seconds

    def fail_outside_window(self, *, times: int = 1) -> None:
        self.fail(
            400,
            code=10,
            subcode=2018278,
            message="(#10) This message is sent outside of allowed window.",
            times=times,
        )

    def fail_rate_limit(self, *, times: int = 1) -> None:
        self.fail(
            400,
            code=613,
            message="(#613) Calls to this api have exceeded the rate limit.",
            times=times,
        )

    def fail_not_json(self, status: int, *, times: int = 1) -> None:
        for _ in range(times):
            self._failures.append(ScriptedFailure(status, None))

    @property
    def messages(self) -> list[dict[str, Any]]:
        return [r.body for r in self.requests if "message" in r.body]

    @property
    def actions(self) -> list[dict[str, Any]]:
        return [r.body for r in self.requests if "sender_action" in r.body]

    # -- serving ------------------------------------------------------------------------------

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/{version}/me/messages", self._messages)
        return app

    async def close(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def _messages(self, request: web.Request) -> web.Response:
        try:
            body = await request.json()
        except ValueError:
            body = None
        self.requests.append(
            RecordedRequest(
                request.method,
                request.path,
                dict(request.query),
                CIMultiDict(request.headers),
                body if isinstance(body, dict) else {"_raw": body},
            )
        )
        number = len(self.requests)
        if delay := self.delay_s + self._delay_at.pop(number, 0.0):
            await asyncio.sleep(delay)
        if (status := self._fail_at.pop(number, None)) is not None:
            return _graph_error(status, 2, "An unexpected error has occurred.")
        if self._failures:
            failure = self._failures.popleft()
            if failure.error is None:
                return web.Response(status=failure.status, text="<html>Bad gateway</html>")
            return web.json_response(
                {"error": failure.error}, status=failure.status, headers=failure.headers
            )
        token = request.query.get("access_token")
        if not token or (self.page_token is not None and token != self.page_token):
            return _graph_error(400, 190, "Invalid OAuth access token.")
        if not isinstance(body, dict):
            return _graph_error(400, 100, "(#100) The parameter recipient is required")
        recipient = body.get("recipient")
        psid = recipient.get("id") if isinstance(recipient, dict) else None
        if not isinstance(psid, str) or not psid:
            return _graph_error(400, 100, "(#100) The parameter recipient is required")
        if "sender_action" in body:
            if "message" in body:
                return _graph_error(
                    400, 100, "(#100) Cannot send both message and state at the same time.", 2018015
                )
            return web.json_response({"recipient_id": psid})
        if (problem := _message_problem(body.get("message"))) is not None:
            return _graph_error(400, 100, problem)
        self._sent += 1
        return web.json_response({"recipient_id": psid, "message_id": f"m_fake{self._sent}"})


def _message_problem(message: Any) -> str | None:
    if not isinstance(message, dict):
        return "(#100) The parameter message is required"
    if "attachment" in message:
        problem = _template_problem(message["attachment"])
        if problem is not None:
            return problem
        return _quick_replies_problem(message.get("quick_replies", []))
    text = message.get("text")
    if not isinstance(text, str) or not text:
        return "(#100) The parameter message[text] is required"
    if len(text) >= TEXT_LIMIT:
        return "(#100) Length of param message[text] must be less than or equal to 2000"
    return _quick_replies_problem(message.get("quick_replies", []))


def _quick_replies_problem(quick_replies: Any) -> str | None:
    if not isinstance(quick_replies, list) or len(quick_replies) > 13:
        return "(#100) param message[quick_replies] must have at most 13 elements"
    for quick in quick_replies:
        title = quick.get("title") if isinstance(quick, dict) else None
        if not isinstance(title, str) or not 0 < len(title) <= 20:
            return "(#100) param message[quick_replies][title] must be at most 20 characters"
        payload = quick.get("payload")
        if not isinstance(payload, str) or len(payload) > 1000:
            return "(#100) param message[quick_replies][payload] must be at most 1000 characters"
    return None


def _graph_error(status: int, code: int, message: str, subcode: int | None = None) -> web.Response:
    error: dict[str, Any] = {
        "message": message,
        "type": "OAuthException",
        "code": code,
        "fbtrace_id": "AbCdEfGhIjK",
    }
    if subcode is not None:
        error["error_subcode"] = subcode
    return web.json_response({"error": error}, status=status)


async def start_messenger_api(page_token: str | None = None) -> MessengerApiFake:
    """Serve a new fake on 127.0.0.1, on a free port; its ``base_url`` is the settings'
    ``api_base``. Close it with ``await api.close()``."""
    api = MessengerApiFake(page_token=page_token)
    runner = web.AppRunner(api.app(), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    api._runner = runner
    api.base_url = f"http://127.0.0.1:{port}"
    return api


def _template_problem(attachment: Any) -> str | None:
    """The button template as Meta documents it: text up to 640 characters, 1 to 3 buttons,
    a web_url button with an http(s) url and a title of at most 20 characters."""
    payload = attachment.get("payload") if isinstance(attachment, dict) else None
    if not isinstance(payload, dict) or attachment.get("type") != "template":
        return "(#100) param message[attachment] is invalid"
    if payload.get("template_type") != "button":
        return "(#100) Unsupported template_type"
    text = payload.get("text")
    if not isinstance(text, str) or not text or len(text) > 640:
        return "(#100) param message[attachment][payload][text] must be 1-640 characters"
    buttons = payload.get("buttons")
    if not isinstance(buttons, list) or not 1 <= len(buttons) <= 3:
        return "(#100) param message[attachment][payload][buttons] must have 1-3 elements"
    for button in buttons:
        if not isinstance(button, dict) or button.get("type") != "web_url":
            return "(#100) Unsupported button type"
        url, title = button.get("url"), button.get("title")
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            return "(#100) param url must be a valid URL"
        if not isinstance(title, str) or not title or len(title) > 20:
            return "(#100) param title must be at most 20 characters"
    return None
