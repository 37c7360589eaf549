"""Fetching a URL for ingestion: the one way the crawler, `tuvan ingest URL` and the downloads of
linked files reach the network, under these rules:

- http and https only;
- no connection to a non-public address (retrieval.crawl.addresses) unless the operator allowed
  the host. Names are vetted by the session's own resolver, at connect time, and the connector
  gets only the addresses that passed: a name that resolves to a public address once and to
  127.0.0.1 the next time (DNS rebinding) never reaches the second. Address literals, which
  aiohttp does not resolve, are vetted before the request;
- redirects followed here, hop by hop (``allow_redirects=False``), each hop vetted again and, when
  the caller says so, kept on its site; at most ``max_redirects`` of them;
- a body read in full up to a cap, chunk by chunk, and refused whole when larger (``read(n)``
  would return only what happened to be buffered).

Exceptions (``IngestError``s: every caller logs and skips the URL, never crashes):

    FetchError          the URL could not be fetched: network error, timeout, HTTP error
    ├── FetchRefused    refused by the rules; nothing was sent to the refused address
    └── FetchTooLarge   the body is larger than the cap; nothing of it is kept
"""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from types import TracebackType
from urllib.parse import urldefrag, urljoin, urlsplit

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult

from bot.core.errors import IngestError
from bot.core.settings import IngestSettings
from retrieval.crawl.addresses import PrivateHostAllowList, address_refusal, parse_address

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT = aiohttp.ClientTimeout(total=60, sock_connect=15)
HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
_DEFAULT_PORTS = {"http": 80, "https": 443}
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_CHUNK = 64 * 1024
_HINT = " (an operator may allow the host with TUVAN_INGEST__ALLOW_PRIVATE_HOSTS)"


class FetchError(IngestError):
    def __init__(self, url: str, reason: str) -> None:
        super().__init__(f"{url}: {reason}")
        self.url = url
        self.reason = reason


class FetchRefused(FetchError):
    pass


class FetchTooLarge(FetchError):
    pass


@dataclass(frozen=True)
class FetchPolicy:
    """What may be fetched, and how much of it."""

    allow_private_hosts: tuple[str, ...] = ()  # "host" or "host:port" (IngestSettings' form)
    max_page_bytes: int = 5_000_000
    max_file_bytes: int = 50_000_000
    max_redirects: int = 5
    user_agent: str = "tuvan-crawler"

    @classmethod
    def from_settings(cls, settings: IngestSettings) -> FetchPolicy:
        return cls(
            allow_private_hosts=settings.allow_private_hosts,
            max_page_bytes=settings.max_page_bytes,
            max_file_bytes=settings.max_file_bytes,
            max_redirects=settings.max_redirects,
        )


@dataclass(frozen=True)
class Fetched:
    url: str  # after redirects
    status: int
    content_type: str
    charset: str | None
    body: bytes  # empty unless the content type was one asked for


class _AddressRefused(OSError):
    """Raised by the resolver; aiohttp hands it back inside a ClientConnectorError."""


class _VettingResolver(AbstractResolver):
    """``loop.getaddrinfo``, keeping only the addresses ingestion may connect to."""

    def __init__(self, allow: PrivateHostAllowList) -> None:
        self._allow = allow

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        infos = await asyncio.get_running_loop().getaddrinfo(
            host, port, type=socket.SOCK_STREAM, family=family, flags=socket.AI_ADDRCONFIG
        )
        vetted: list[ResolveResult] = []
        refused: list[str] = []
        for info_family, _, proto, _, sockaddr in infos:
            text = str(sockaddr[0])
            address = parse_address(text)
            reason = "not an address" if address is None else address_refusal(address)
            if reason is not None and not self._allow.allows(host, port):
                refused.append(f"{text}, {reason}")
                continue
            vetted.append(
                ResolveResult(
                    hostname=host,
                    host=text,
                    port=port,
                    family=info_family,
                    proto=proto,
                    flags=socket.AI_NUMERICHOST | socket.AI_NUMERICSERV,
                )
            )
        if not vetted:
            raise _AddressRefused(f"{host} resolves to {'; '.join(refused) or 'nothing'}")
        return vetted

    async def close(self) -> None:
        return None


class Fetcher:
    """An HTTP client session under the rules above; use it as ``async with Fetcher(policy)``."""

    def __init__(
        self,
        policy: FetchPolicy | None = None,
        *,
        timeout: aiohttp.ClientTimeout = DEFAULT_TIMEOUT,
        trace_configs: Iterable[aiohttp.TraceConfig] = (),
    ) -> None:
        self.policy = policy or FetchPolicy()
        self._allow = PrivateHostAllowList(self.policy.allow_private_hosts)
        self._timeout = timeout
        self._trace_configs = list(trace_configs)
        self._http: aiohttp.ClientSession | None = None

    async def __aenter__(self) -> Fetcher:
        connector = aiohttp.TCPConnector(resolver=_VettingResolver(self._allow))
        self._http = aiohttp.ClientSession(
            connector=connector,
            timeout=self._timeout,
            trace_configs=self._trace_configs or None,
            headers={"User-Agent": self.policy.user_agent},
        )
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._http is not None:
            await self._http.close()
            self._http = None

    async def get(
        self,
        url: str,
        *,
        read_types: frozenset[str] = HTML_TYPES,
        stay: Callable[[str], bool] | None = None,
        max_bytes: int | None = None,
    ) -> Fetched:
        """Status and type of ``url``, with its body when its type is one of ``read_types``
        and it is no HTTP error. ``stay`` tells which redirect targets may be followed."""
        cap = max_bytes or self.policy.max_page_bytes
        async with self._open(url, stay) as response:
            body = b""
            if response.status < 400 and response.content_type in read_types:
                body = await _read_capped(response, str(response.url), cap)
            return Fetched(
                str(response.url), response.status, response.content_type, response.charset, body
            )

    async def get_file(self, url: str) -> bytes:
        """The whole body of ``url`` (any type), up to ``max_file_bytes``."""
        async with self._open(url, None) as response:
            if response.status >= 400:
                raise FetchError(str(response.url), f"HTTP {response.status}")
            return await _read_capped(response, str(response.url), self.policy.max_file_bytes)

    @asynccontextmanager
    async def _open(
        self, url: str, stay: Callable[[str], bool] | None
    ) -> AsyncIterator[aiohttp.ClientResponse]:
        if self._http is None:
            raise RuntimeError("Fetcher used outside `async with`")
        current = url
        for _ in range(self.policy.max_redirects + 1):
            self._vet(current)
            try:
                response = await self._http.get(current, allow_redirects=False)
            except aiohttp.ClientConnectorError as exc:
                if isinstance(exc.os_error, _AddressRefused):
                    raise FetchRefused(current, f"refused: {exc.os_error}{_HINT}") from exc
                raise FetchError(current, _describe(exc)) from exc
            except (aiohttp.ClientError, TimeoutError) as exc:
                raise FetchError(current, _describe(exc)) from exc
            async with response:
                location = response.headers.get("Location")
                if response.status not in _REDIRECTS or not location:
                    try:
                        yield response
                    except (aiohttp.ClientError, TimeoutError) as exc:
                        raise FetchError(current, _describe(exc)) from exc
                    return
            target = urldefrag(urljoin(current, location)).url
            if stay is not None and not stay(target):
                raise FetchRefused(url, f"redirected off-site to {target}")
            log.debug("fetch: %s redirects to %s", current, target)
            current = target
        raise FetchRefused(url, f"more than {self.policy.max_redirects} redirects")

    def _vet(self, url: str) -> None:
        """Refuse a URL that is not http(s), or whose host is an address that may not be
        fetched; names are vetted when they are resolved."""
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        if scheme not in _DEFAULT_PORTS:
            raise FetchRefused(url, f"refused: {scheme or 'no'} scheme, only http and https")
        try:
            port = parts.port or _DEFAULT_PORTS[scheme]
        except ValueError as exc:
            raise FetchRefused(url, "refused: not a port") from exc
        host = parts.hostname or ""
        address = parse_address(host)
        if not host or (address is None and not any(c.isalpha() for c in host)):
            # "2130706433" or "127.1" would reach 127.0.0.1 through getaddrinfo's old forms.
            raise FetchRefused(url, f"refused: {host or 'no host'} is not a host name")
        reason = address_refusal(address) if address is not None else None
        if reason is not None and not self._allow.allows(host, port):
            raise FetchRefused(url, f"refused: {host} is {reason}, not a public address{_HINT}")


async def _read_capped(response: aiohttp.ClientResponse, url: str, cap: int) -> bytes:
    """The whole body, or FetchTooLarge as soon as it is known to be over ``cap`` bytes."""
    declared = response.content_length
    if declared is not None and declared > cap:
        raise FetchTooLarge(url, f"larger than the cap of {cap:,} bytes ({declared:,} declared)")
    body = bytearray()
    async for chunk in response.content.iter_chunked(_CHUNK):
        body += chunk
        if len(body) > cap:
            raise FetchTooLarge(url, f"larger than the cap of {cap:,} bytes")
    return bytes(body)


def _describe(exc: BaseException) -> str:
    return "timed out" if isinstance(exc, TimeoutError) else f"{type(exc).__name__}: {exc}"
