"""A fake Zalo OA API and OAuth server on loopback, for the adapter and the token store.

    fake = await start_zalo_api(access_token="at-0", refresh_token="rt-0")
    settings = ZaloSettings(..., api_base=fake.base_url, oauth_base=fake.base_url)
    fake.script_send(-216)                 # the next send answers HTTP 200 {"error": -216}
    fake.fail_send(503)                    # the next send answers HTTP 503
    fake.script_oauth({"error": -14014, "error_name": "Invalid refresh token"})
    fake.oauth_delay_s = 0.3               # every refresh answers this much later
    fake.sends[-1].headers["access_token"]; fake.sends[-1].body["message"]["text"]
    fake.refreshes[-1].form["refresh_token"]; fake.oauth_calls
    await fake.close()

Like Zalo, it keeps one valid access token and one valid refresh token: a send with another
token gets ``-216`` (HTTP 200), a refresh with a spent refresh token gets an error body, and
each refresh issues ``at-<n>``/``rt-<n>`` and spends the old refresh token.
"""

from __future__ import annotations

import asyncio
import json
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web
from multidict import CIMultiDict

SEND_PATH = "/v3.0/oa/message/cs"
OAUTH_PATH = "/v4/oa/access_token"


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: CIMultiDict[str]
    body: dict[str, Any]  # the JSON body (sends)
    form: dict[str, str]  # the form fields (refreshes)


@dataclass
class ZaloApiFake:
    access_token: str | None  # None: any token is accepted
    refresh_token: str | None  # None: any refresh token is accepted
    oauth_delay_s: float = 0.0
    expires_in: str = "90000"
    requests: list[RecordedRequest] = field(default_factory=list)
    base_url: str = ""
    _sends: deque[tuple[int, dict[str, Any]]] = field(default_factory=deque)
    _oauths: deque[tuple[int, dict[str, Any]]] = field(default_factory=deque)
    _issued: int = 0
    _runner: web.AppRunner | None = None

    # -- scripting ------------------------------------------------------------------------

    def script_send(self, error: int, message: str = "scripted error", *, times: int = 1) -> None:
        """The next ``times`` sends answer HTTP 200 ``{"error": error, "message": message}``."""
        for _ in range(times):
            self._sends.append((200, {"error": error, "message": message}))

    def fail_send(self, status: int, *, times: int = 1) -> None:
        for _ in range(times):
            self._sends.append((status, {"error": -1, "message": f"HTTP {status}"}))

    def script_oauth(self, body: dict[str, Any], status: int = 200) -> None:
        """The next refresh answers ``body`` (and spends nothing)."""
        self._oauths.append((status, body))

    @property
    def sends(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path == SEND_PATH]

    @property
    def refreshes(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path == OAUTH_PATH]

    @property
    def oauth_calls(self) -> int:
        return len(self.refreshes)

    # -- serving --------------------------------------------------------------------------

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post(SEND_PATH, self._send)
        app.router.add_post(OAUTH_PATH, self._oauth)
        return app

    async def close(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def _send(self, request: web.Request) -> web.Response:
        raw = await request.read()
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            body = {"_raw": raw.decode("utf-8", "replace")}
        self._record(request, body=body)
        if self._sends:
            status, answer = self._sends.popleft()
            return web.json_response(answer, status=status)
        token = request.headers.get("access_token")
        if self.access_token is not None and token != self.access_token:
            return web.json_response({"error": -216, "message": "Access token is invalid"})
        user = (body.get("recipient") or {}).get("user_id", "")
        if (problem := _message_problem(body.get("message"))) is not None:
            return web.json_response({"error": -201, "message": problem})
        return web.json_response(
            {
                "error": 0,
                "message": "Success",
                "data": {"message_id": f"zmsg{len(self.sends)}", "user_id": user},
            }
        )

    async def _oauth(self, request: web.Request) -> web.Response:
        form = {k: str(v) for k, v in (await request.post()).items()}
        self._record(request, form=form)
        if self.oauth_delay_s:
            await asyncio.sleep(self.oauth_delay_s)
        if self._oauths:
            status, answer = self._oauths.popleft()
            return web.json_response(answer, status=status)
        if self.refresh_token is not None and form.get("refresh_token") != self.refresh_token:
            return web.json_response(
                {
                    "error": -14014,
                    "error_name": "Invalid parameter",
                    "error_reason": "Invalid refresh token",
                    "error_description": "Refresh token is invalid",
                }
            )
        self._issued += 1
        self.access_token = f"at-{self._issued}"
        self.refresh_token = f"rt-{self._issued}"
        return web.json_response(
            {
                "access_token": self.access_token,
                "refresh_token": self.refresh_token,
                "expires_in": self.expires_in,
            }
        )

    def _record(
        self,
        request: web.Request,
        *,
        body: dict[str, Any] | None = None,
        form: dict[str, str] | None = None,
    ) -> None:
        self.requests.append(
            RecordedRequest(
                request.method, request.path, CIMultiDict(request.headers), body or {}, form or {}
            )
        )


_BUTTON_TYPES = frozenset(
    {"oa.open.url", "oa.query.show", "oa.query.hide", "oa.open.sms", "oa.open.phone"}
)


def _message_problem(message: Any) -> str | None:
    """A customer-service message Zalo would refuse (error -201, invalid parameter): no text,
    or an attachment that is not a template of 1-5 buttons of a known type, each with a title
    and a string payload (for the query buttons)."""
    if not isinstance(message, dict) or not isinstance(message.get("text"), str):
        return "message.text is required"
    if "attachment" not in message:
        return None
    attachment = message["attachment"]
    payload = attachment.get("payload") if isinstance(attachment, dict) else None
    buttons = payload.get("buttons") if isinstance(payload, dict) else None
    if attachment.get("type") != "template" or not isinstance(buttons, list):
        return "attachment must be a template with buttons"
    if not 1 <= len(buttons) <= 5:
        return "a template holds 1-5 buttons"
    for button in buttons:
        if not isinstance(button, dict) or button.get("type") not in _BUTTON_TYPES:
            return "unknown button type"
        if not isinstance(button.get("title"), str) or not button["title"]:
            return "a button needs a title"
        if button["type"].startswith("oa.query") and not isinstance(button.get("payload"), str):
            return "a query button's payload is a string"
    return None


async def start_zalo_api(
    *, access_token: str | None = "at-0", refresh_token: str | None = "rt-0"
) -> ZaloApiFake:
    """Serve a new fake on 127.0.0.1, on a free port. Close it with ``await fake.close()``."""
    fake = ZaloApiFake(access_token=access_token, refresh_token=refresh_token)
    runner = web.AppRunner(fake.app(), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    fake._runner = runner
    fake.base_url = f"http://127.0.0.1:{runner.addresses[0][1]}"
    return fake
