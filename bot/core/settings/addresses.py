"""The web addresses and hosts the settings accept, checked as they are read."""

from __future__ import annotations

import re
from urllib.parse import SplitResult, urlsplit

LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})


def web_address(value: str) -> SplitResult:
    """An http(s) address with a host and nothing that could break out of an attribute or a
    CSP source (spaces, quotes, angle brackets, user names), or ValueError."""
    text = value.strip()
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"not an http(s) address: {value!r}")
    if re.search(r"[\s\"'<>`\\;,]", text) or "@" in parts.netloc:
        raise ValueError(f"an address without spaces, quotes or user names: {value!r}")
    _ = parts.port  # ValueError for a port that is no port
    return parts


def host_entry(entry: str) -> str:
    """``entry`` written as "host" or "host:port" (lower case, IPv6 in brackets), or ValueError."""
    text = entry.strip().lower()
    if text.count(":") > 1 and not text.startswith("["):
        text = f"[{text}]"  # a bare IPv6 address
    parts = urlsplit(f"//{text}")
    host = (parts.hostname or "").rstrip(".")
    if not host or parts.path or parts.query or parts.fragment or "@" in text:
        raise ValueError(f"not a host or host:port: {entry!r}")
    host = f"[{host}]" if ":" in host else host
    port = parts.port  # ValueError for a port that is no port
    return host if port is None else f"{host}:{port}"
