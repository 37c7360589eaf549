"""How the crawler normalises addresses and finds a host's registered domain: no network."""

from __future__ import annotations

import pytest

from retrieval.crawl.urls import normalise_url, registered_domain


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("HTTP://Truong.EDU.vn:80/tuyen-sinh/#muc-2", "http://truong.edu.vn/tuyen-sinh"),
        ("https://truong.edu.vn:443", "https://truong.edu.vn/"),
        ("https://truong.edu.vn:8443/a", "https://truong.edu.vn:8443/a"),
        ("https://truong.edu.vn/a?b=2&utm_source=zalo&a=1&fbclid=x", "https://truong.edu.vn/a?a=1&b=2"),
        ("mailto:tuyensinh@truong.edu.vn", None),
        ("javascript:void(0)", None),
    ],
)  # fmt: skip
def test_urls_are_normalised(raw: str, expected: str | None) -> None:
    assert normalise_url(raw) == expected


def test_relative_links_resolve_against_the_page() -> None:
    assert normalise_url("../hoc-phi", "https://a.edu.vn/tuyen-sinh/2025/") == (
        "https://a.edu.vn/tuyen-sinh/hoc-phi"
    )


@pytest.mark.parametrize(
    ("host", "domain"),
    [
        ("tuyensinh.hust.edu.vn", "hust.edu.vn"),
        ("www.ptit.edu.vn", "ptit.edu.vn"),
        ("news.example.com", "example.com"),
        ("127.0.0.1", "127.0.0.1"),
    ],
)
def test_registered_domain(host: str, domain: str) -> None:
    assert registered_domain(host) == domain
