"""A request written byte for byte, for what a client library would not send: a header that is
not UTF-8 (aiohttp's client encodes header values itself)."""

from __future__ import annotations

import asyncio


async def raw_post(
    host: str,
    port: int,
    path: str,
    headers: bytes,
    body: bytes = b"",
    *,
    content_length: int | None = None,
) -> int:
    """POST ``body`` with ``headers`` (CRLF-terminated lines, as bytes) over a fresh connection
    to 127.0.0.1; the response's status code. ``content_length`` declares another length than
    the body's (a client that announces more than it sends)."""
    reader, writer = await asyncio.open_connection(host, port)
    try:
        head = f"POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n"
        head += f"Content-Length: {len(body) if content_length is None else content_length}\r\n"
        writer.write(head.encode() + headers + b"\r\n" + body)
        await writer.drain()
        status_line = await reader.readline()
        return int(status_line.split()[1])
    finally:
        writer.close()
        await writer.wait_closed()
