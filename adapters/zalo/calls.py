"""One POST to a Zalo API, and what can go wrong with it as a ``SendError``: the one mapping of a
failed exchange for the OA API (sending) and the OAuth API (the token refresh).

An HTTP error is ``adapters.sending.http_failure`` (429 and 5xx retryable, with Zalo's
Retry-After), a network error or a timeout is retryable, and an answer that is not a JSON object
is refused. Zalo's own error codes come inside a 200's JSON and mean something different for
each API: their callers read them. The secrets a call carries are taken out of every text that
quotes Zalo's answer.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import aiohttp

from adapters.sending import http_failure, read_json_response, retry_after_seconds
from bot.core.errors import SendError
from bot.core.redact import without_secret


async def post_zalo(
    http: aiohttp.ClientSession,
    url: str,
    what: str,
    *,
    headers: Mapping[str, str],
    secrets: Iterable[str],
    json: Any = None,
    form: Mapping[str, str] | None = None,
    within_s: float | None = None,
    retry_unreadable: bool = True,
) -> dict[str, Any]:
    """The JSON object Zalo answers to ``json`` (or ``form``) posted to ``url``; ``what`` names
    the call in errors; ``within_s`` bounds the whole call (else the session's timeout holds).
    ``retry_unreadable``: whether an answer that is not an object is worth another attempt (not
    for a refresh, whose token Zalo may have spent already)."""
    secrets = tuple(secrets)
    # Left out, not None: aiohttp reads a timeout of None as no timeout at all.
    options: dict[str, Any] = {}
    if within_s is not None:
        options["timeout"] = aiohttp.ClientTimeout(total=within_s)
    try:
        async with http.post(url, json=json, data=form, headers=headers, **options) as response:
            if response.status >= 400:
                detail = scrubbed(await response.text(), secrets)[:200]
                raise http_failure(
                    response.status,
                    what,
                    detail,
                    retry_after_seconds(response.headers.get("Retry-After")),
                )
            data = await read_json_response(response, what)
    except (aiohttp.ClientError, TimeoutError) as exc:
        raise SendError(f"{what}: network error: {type(exc).__name__}", retryable=True) from exc
    if not isinstance(data, dict):
        raise SendError(f"{what}: the answer is not a JSON object", retryable=retry_unreadable)
    return data


def scrubbed(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every one of ``secrets`` taken out."""
    for secret in secrets:
        text = without_secret(text, secret)
    return text
