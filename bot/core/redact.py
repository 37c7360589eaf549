"""Keeping secrets out of messages and logs."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit


def display_url(url: str) -> str:
    """The URL without any user:password part or query (which may carry a key)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def without_secret(message: str, secret: str) -> str:
    return message.replace(secret, "***") if secret else message
