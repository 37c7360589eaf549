"""The malformed requests of the reliability bench's ``bad_inputs`` case (issue 15, item 4, and
the web chat's and /api/ask's own): bad bytes in headers, bodies that are deep, huge, truncated,
not UTF-8 or hold a 5,000-digit integer, wrong content types, bad signatures and signed bodies
that still can't be used. Each is written byte for byte and sent over its own connection, since
a client library would refuse to send most of them.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import json
import time
import uuid
from dataclasses import dataclass

from reliability_stack import ASK_TOKEN, MESSENGER_SECRET, ORIGIN, TELEGRAM_SECRET, ZALO_KEY
from reliability_telegram import telegram_update

DEEP = b"[" * 2000
DEEP_OBJECT = b'{"a":' * 2000 + b"1" + b"}" * 2000
BIG_INT = b"9" * 5000
ZALO_APP = "1234567890"


@dataclass(frozen=True)
class BadRequest:
    name: str
    method: str
    path: str
    headers: bytes  # CRLF-terminated lines; Content-Length is added unless given
    body: bytes = b""


async def send(
    host: str, port: int, request: BadRequest, source: str, timeout_s: float = 60
) -> str:
    """The response's status code as text, or "closed" / "timeout" / "refused"."""
    try:
        reader, writer = await asyncio.open_connection(host, port, local_addr=(source, 0))
    except OSError:
        return "refused"
    try:
        head = f"{request.method} {request.path} HTTP/1.1\r\nHost: {host}:{port}\r\n"
        head += "Connection: close\r\n"
        if b"content-length:" not in request.headers.lower():
            head += f"Content-Length: {len(request.body)}\r\n"
        writer.write(head.encode() + request.headers + b"\r\n" + request.body)
        await writer.drain()
        line = await asyncio.wait_for(reader.readline(), timeout_s)
        parts = line.split()
        return parts[1].decode() if len(parts) > 1 else "closed"
    except TimeoutError:
        return "timeout"
    except OSError:
        return "closed"
    finally:
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()


def _json(value: object) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode()


def _telegram(extra: bytes = b"") -> bytes:
    return f"X-Telegram-Bot-Api-Secret-Token: {TELEGRAM_SECRET}\r\n".encode() + extra


JSON = b"Content-Type: application/json\r\n"


def _messenger_signed(body: bytes) -> bytes:
    digest = hmac.new(MESSENGER_SECRET.encode(), body, hashlib.sha256).hexdigest()
    return JSON + f"X-Hub-Signature-256: sha256={digest}\r\n".encode()


def _messenger_event(mid: str, text: str = "học phí bao nhiêu") -> dict[str, object]:
    now = int(time.time() * 1000)
    return {
        "sender": {"id": "5550001"},
        "recipient": {"id": "1000"},
        "timestamp": now,
        "message": {"mid": mid, "text": text},
    }


def _messenger_body(*events: dict[str, object]) -> bytes:
    entry = {"id": "1000", "time": int(time.time() * 1000), "messaging": list(events)}
    return _json({"object": "page", "entry": [entry]})


def _zalo_signed(body: bytes, timestamp: str) -> bytes:
    digest = hashlib.sha256()
    digest.update(ZALO_APP.encode() + body + timestamp.encode() + ZALO_KEY.encode())
    return JSON + f"X-ZEvent-Signature: mac={digest.hexdigest()}\r\n".encode()


def _zalo_event(text: str) -> tuple[bytes, str]:
    timestamp = str(int(time.time() * 1000))
    body = _json(
        {
            "app_id": ZALO_APP,
            "event_name": "user_send_text",
            "timestamp": timestamp,
            "sender": {"id": "8880001"},
            "recipient": {"id": "9990001"},
            "message": {"msg_id": uuid.uuid4().hex, "text": text},
        }
    )
    return body, timestamp


def _chat(visitor: str = "bench-bad") -> bytes:
    return JSON + f"Origin: {ORIGIN}\r\nX-Visitor-Id: {visitor}\r\n".encode()


def _chat_body(text: str | bytes = "học phí bao nhiêu") -> bytes:
    if isinstance(text, bytes):
        return (
            b'{"visitor_id": "bench-bad", "message_id": "'
            + str(uuid.uuid4()).encode()
            + b'", "text": '
            + text
            + b"}"
        )
    return _json({"visitor_id": "bench-bad", "message_id": str(uuid.uuid4()), "text": text})


ASK = JSON + f"Authorization: Bearer {ASK_TOKEN}\r\n".encode()
FORM = b"Content-Type: application/x-www-form-urlencoded\r\n"


def bad_requests() -> list[BadRequest]:
    """50 malformed requests to the webhooks, the web chat, /api/ask and the admin."""
    update = _json(telegram_update(900_001, 900_001, "học phí bao nhiêu"))
    zalo_nul, zalo_nul_ts = _zalo_event("học phí\u0000 bao nhiêu")
    zalo_ok, _ = _zalo_event("học phí bao nhiêu")
    m_deep = DEEP
    m_bigint = (
        b'{"object": "page", "entry": [{"id": "1000", "time": ' + BIG_INT + b', "messaging": []}]}'
    )
    m_mixed = _messenger_body(
        {"recipient": {"id": "1000"}, "timestamp": 1, "app_roles": {"123": ["automation"]}},
        _messenger_event("m_" + uuid.uuid4().hex),
    )
    m_long_mid = _messenger_body(_messenger_event("m_" + "x" * 300))
    m_nan = b'{"object": "page", "entry": [{"id": "1000", "time": NaN, "messaging": []}]}'
    m_bad_utf8 = b'{"object": "page", "entry": [{"id": "\xff\xfe", "messaging": []}]}'
    t = "/webhooks/telegram"
    m = "/webhooks/messenger"
    z = "/webhooks/zalo"
    return [
        # Telegram
        BadRequest(
            "telegram: secret header \\xff",
            "POST",
            t,
            JSON + b"X-Telegram-Bot-Api-Secret-Token: \xff\r\n",
            update,
        ),
        BadRequest("telegram: no secret header", "POST", t, JSON, update),
        BadRequest(
            "telegram: wrong secret, deep JSON",
            "POST",
            t,
            JSON + b"X-Telegram-Bot-Api-Secret-Token: nope\r\n",
            DEEP,
        ),
        BadRequest("telegram: deep JSON [", "POST", t, _telegram(JSON), DEEP),
        BadRequest("telegram: deep JSON {", "POST", t, _telegram(JSON), DEEP_OBJECT),
        BadRequest(
            "telegram: truncated JSON", "POST", t, _telegram(JSON), update[: len(update) // 2]
        ),
        BadRequest(
            "telegram: not UTF-8",
            "POST",
            t,
            _telegram(JSON),
            b'{"update_id": 900002, "message": {"text": "\xff\xfe"}}',
        ),
        BadRequest(
            "telegram: 5,000-digit update_id",
            "POST",
            t,
            _telegram(JSON),
            b'{"update_id": ' + BIG_INT + b"}",
        ),
        BadRequest("telegram: NaN update_id", "POST", t, _telegram(JSON), b'{"update_id": NaN}'),
        BadRequest(
            "telegram: NUL in the text",
            "POST",
            t,
            _telegram(JSON),
            _json(telegram_update(900_003, 900_003, "học\u0000 phí")),
        ),
        BadRequest(
            "telegram: lone surrogate in the text",
            "POST",
            t,
            _telegram(JSON),
            _json(telegram_update(900_004, 900_004, "x")).replace(b'"x"', b'"\\ud800"'),
        ),
        BadRequest(
            "telegram: update_id a string",
            "POST",
            t,
            _telegram(JSON),
            b'{"update_id": "abc", "message": 7}',
        ),
        BadRequest("telegram: a JSON array", "POST", t, _telegram(JSON), b"[]"),
        BadRequest(
            "telegram: text/plain", "POST", t, _telegram(b"Content-Type: text/plain\r\n"), update
        ),
        BadRequest(
            "telegram: 2 MB body",
            "POST",
            t,
            _telegram(JSON),
            b'{"update_id": 1, "pad": "' + b"a" * 2_000_000 + b'"}',
        ),
        BadRequest(
            "telegram: Content-Length 10^12, short body",
            "POST",
            t,
            _telegram(JSON + b"Content-Length: 1000000000000\r\n"),
            b"{}",
        ),
        # Messenger
        BadRequest(
            "messenger: bad signature, deep JSON",
            "POST",
            m,
            JSON + b"X-Hub-Signature-256: sha256=00\r\n",
            DEEP,
        ),
        BadRequest(
            "messenger: signature header \\xff",
            "POST",
            m,
            JSON + b"X-Hub-Signature-256: \xff\r\n",
            m_mixed,
        ),
        BadRequest("messenger: signed deep JSON", "POST", m, _messenger_signed(m_deep), m_deep),
        BadRequest(
            "messenger: signed 5,000-digit integer",
            "POST",
            m,
            _messenger_signed(m_bigint),
            m_bigint,
        ),
        BadRequest("messenger: signed NaN", "POST", m, _messenger_signed(m_nan), m_nan),
        BadRequest(
            "messenger: signed, not UTF-8", "POST", m, _messenger_signed(m_bad_utf8), m_bad_utf8
        ),
        BadRequest(
            "messenger: event without a sender + a message",
            "POST",
            m,
            _messenger_signed(m_mixed),
            m_mixed,
        ),
        BadRequest(
            "messenger: 300-character mid", "POST", m, _messenger_signed(m_long_mid), m_long_mid
        ),
        BadRequest(
            "messenger: handshake token %FF",
            "GET",
            m + "?hub.mode=subscribe&hub.verify_token=%FF&hub.challenge=1",
            b"",
        ),
        # Zalo
        BadRequest(
            "zalo: bad signature, deep JSON",
            "POST",
            z,
            JSON + b"X-ZEvent-Signature: mac=00\r\n",
            DEEP,
        ),
        BadRequest(
            "zalo: signature header \\xff",
            "POST",
            z,
            JSON + b"X-ZEvent-Signature: mac=\xff\r\n",
            zalo_ok,
        ),
        BadRequest(
            "zalo: bad signature, 5,000-digit timestamp",
            "POST",
            z,
            JSON + b"X-ZEvent-Signature: mac=00\r\n",
            b'{"app_id": "1234567890", "timestamp": ' + BIG_INT + b"}",
        ),
        BadRequest(
            "zalo: bad signature, truncated JSON",
            "POST",
            z,
            JSON + b"X-ZEvent-Signature: mac=00\r\n",
            zalo_ok[:40],
        ),
        BadRequest(
            "zalo: signed, NUL in the text",
            "POST",
            z,
            _zalo_signed(zalo_nul, zalo_nul_ts),
            zalo_nul,
        ),
        # Web chat
        BadRequest("chat: deep JSON", "POST", "/api/chat", _chat(), DEEP),
        BadRequest("chat: deep JSON object", "POST", "/api/chat", _chat(), DEEP_OBJECT),
        BadRequest(
            "chat: 5,000-digit integer text", "POST", "/api/chat", _chat(), _chat_body(BIG_INT)
        ),
        BadRequest("chat: not UTF-8", "POST", "/api/chat", _chat(), _chat_body(b'"\xff\xfe"')),
        BadRequest("chat: lone surrogate", "POST", "/api/chat", _chat(), _chat_body(b'"\\ud800"')),
        BadRequest("chat: truncated JSON", "POST", "/api/chat", _chat(), _chat_body()[:30]),
        BadRequest("chat: 70 KB body", "POST", "/api/chat", _chat(), _chat_body("a" * 70_000)),
        BadRequest(
            "chat: X-Visitor-Id \\xff",
            "POST",
            "/api/chat",
            JSON + f"Origin: {ORIGIN}\r\n".encode() + b"X-Visitor-Id: \xff\r\n",
            _chat_body(),
        ),
        BadRequest(
            "chat: Origin \\xff", "POST", "/api/chat", JSON + b"Origin: \xff\r\n", _chat_body()
        ),
        BadRequest(
            "chat: text/plain from another origin",
            "POST",
            "/api/chat",
            b"Content-Type: text/plain\r\nOrigin: http://evil.example\r\n",
            _chat_body(),
        ),
        BadRequest("chat history: visitor id %FF", "GET", "/api/chat/history?visitor_id=%FF", b""),
        # /api/ask
        BadRequest("ask: deep JSON", "POST", "/api/ask", ASK, DEEP),
        BadRequest(
            "ask: 5,000-digit integer", "POST", "/api/ask", ASK, b'{"question": ' + BIG_INT + b"}"
        ),
        BadRequest(
            "ask: Authorization \\xff",
            "POST",
            "/api/ask",
            JSON + b"Authorization: Bearer \xff\r\n",
            b'{"question": "hoc phi"}',
        ),
        BadRequest("ask: not UTF-8", "POST", "/api/ask", ASK, b'{"question": "\xff"}'),
        # Admin and operations
        BadRequest(
            "admin login: X-CSRF-Token \\xff",
            "POST",
            "/admin/login",
            FORM + b"X-CSRF-Token: \xff\r\n",
            b"email=a%40b.c&password=x",
        ),
        BadRequest(
            "admin login: csrf_token %FF, cookie \\xff",
            "POST",
            "/admin/login",
            FORM + b"Cookie: tuvan_admin_login=\xff\r\n",
            b"csrf_token=%FF&email=a%40b.c&password=x",
        ),
        BadRequest(
            "admin login: broken multipart",
            "POST",
            "/admin/login",
            b"Content-Type: multipart/form-data; boundary=zz\r\n",
            b'--zz\r\nContent-Disposition: form-data; name="email"\r\n\r\nx',
        ),
        BadRequest(
            "admin: session cookie \\xff", "GET", "/admin/", b"Cookie: tuvan_admin_session=\xff\r\n"
        ),
        BadRequest(
            "metrics: Authorization \\xff", "GET", "/metrics", b"Authorization: Bearer \xff\r\n"
        ),
    ]
