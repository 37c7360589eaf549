"""Crawled URLs compared in one form, and the site a URL belongs to."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from urllib.parse import parse_qsl, urlencode, urljoin, urlsplit, urlunsplit

_DEFAULT_PORTS = {"http": 80, "https": 443}
_DEFAULT_ORIGINS = frozenset(_DEFAULT_PORTS.items())
DOCUMENT_SUFFIXES = (".pdf", ".docx")
DOCUMENT_TYPES = frozenset(
    {
        "application/pdf",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    }
)
_TRACKING_PARAMS = frozenset({"fbclid", "gclid", "msclkid", "zarsrc", "_ga"})
# Second-level public suffixes common on the sites tuvan crawls (edu.vn, com.vn...): without the
# full Public Suffix List, "the registered domain" is the last three labels under these.
_SECOND_LEVEL = frozenset({"ac", "co", "com", "edu", "gov", "net", "org", "info", "int"})


def normalise_url(url: str, base: str | None = None) -> str | None:
    """The form two URLs of one page share, or None for what is not an http(s) URL.

    Scheme and host lower-cased, default port, fragment and tracking parameters (utm_*, fbclid...)
    dropped, the other query parameters sorted, a trailing slash dropped except on the root.
    """
    try:
        parts = urlsplit(urljoin(base, url.strip()) if base else url.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").rstrip(".")
    if scheme not in _DEFAULT_PORTS or not host:
        return None
    netloc = f"[{host}]" if ":" in host else host
    if port is not None and port != _DEFAULT_PORTS[scheme]:
        netloc += f":{port}"
    path = re.sub(r"/{2,}", "/", parts.path) or "/"
    if len(path) > 1:
        path = path.rstrip("/") or "/"
    query = sorted(
        (key, value)
        for key, value in parse_qsl(parts.query, keep_blank_values=True)
        if not key.lower().startswith("utm_") and key.lower() not in _TRACKING_PARAMS
    )
    return urlunsplit((scheme, netloc, path, urlencode(query), ""))


def registered_domain(host: str) -> str:
    """ "tuyensinh.hust.edu.vn" → "hust.edu.vn"; an IP address is its own domain."""
    host = host.lower().rstrip(".")
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        labels = host.split(".")
        keep = 3 if len(labels) >= 3 and labels[-2] in _SECOND_LEVEL and len(labels[-1]) == 2 else 2
        return ".".join(labels[-keep:])
    return host


def host_matches(host: str, domains: Iterable[str]) -> bool:
    return any(host == d or host.endswith("." + d) for d in domains)


class SiteScope:
    """Which URLs belong to the crawled site: scheme, host and port together.

    The host is within a start URL's registered domain (or an allowed domain), and the scheme and
    port are that start URL's: another port on the same host is another site (often an internal
    service: a database console, a metrics page). The default ports go together, http:80 with
    https:443, because sites move between the two and link both ways; an allowed domain is
    on-site on them.
    """

    def __init__(self, starts: Iterable[str], allow_domains: Iterable[str] = ()) -> None:
        self.ports: dict[str, set[tuple[str, int]]] = {}
        for url in starts:
            parts = urlsplit(url)
            scheme = parts.scheme.lower()
            port = parts.port or _DEFAULT_PORTS[scheme]
            origins = self.ports.setdefault(registered_domain(parts.hostname or ""), set())
            origins |= _DEFAULT_ORIGINS if (scheme, port) in _DEFAULT_ORIGINS else {(scheme, port)}
        for domain in allow_domains:
            if domain.strip("."):
                self.ports.setdefault(domain.lower().strip("."), set()).update(_DEFAULT_ORIGINS)

    def __contains__(self, url: str) -> bool:
        try:
            parts = urlsplit(url)
            scheme = parts.scheme.lower()
            origin = (scheme, parts.port or _DEFAULT_PORTS[scheme])
        except (ValueError, KeyError):
            return False
        host = (parts.hostname or "").rstrip(".")
        return any(
            origin in origins and host_matches(host, (domain,))
            for domain, origins in self.ports.items()
        )


def is_document_link(url: str) -> bool:
    """A link to a file the loaders read (PDF, DOCX), downloaded rather than crawled."""
    return urlsplit(url).path.lower().endswith(DOCUMENT_SUFFIXES)
