"""Which addresses ingestion may fetch from, and which hosts an operator allowed: no network."""

from __future__ import annotations

import ipaddress

import pytest
from pydantic import ValidationError

from bot.core.settings import IngestSettings
from retrieval.crawl.addresses import PrivateHostAllowList, address_refusal, parse_address


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        ("169.254.169.254", "link-local"),  # the cloud metadata service
        ("::ffff:127.0.0.1", "loopback (IPv4 127.0.0.1 inside IPv6)"),
        ("::ffff:169.254.169.254", "link-local (IPv4 169.254.169.254 inside IPv6)"),
        ("::ffff:10.0.0.1", "private (RFC 1918) (IPv4 10.0.0.1 inside IPv6)"),
        ("2002:7f00:1::", "loopback (IPv4 127.0.0.1 inside IPv6)"),  # 6to4
        ("64:ff9b::a9fe:a9fe", "link-local (IPv4 169.254.169.254 inside IPv6)"),  # NAT64
        ("::7f00:1", "loopback (IPv4 127.0.0.1 inside IPv6)"),  # IPv4-compatible
        ("127.0.0.1", "loopback"),
        ("127.8.9.10", "loopback"),
        ("::1", "loopback"),
        ("10.20.30.40", "private (RFC 1918)"),
        ("172.16.0.1", "private (RFC 1918)"),
        ("172.31.255.254", "private (RFC 1918)"),
        ("192.168.1.1", "private (RFC 1918)"),
        ("fd12:3456::1", "private (unique local fc00::/7)"),
        ("fe80::1", "link-local"),
        ("100.64.0.1", "shared (CGNAT 100.64.0.0/10)"),
        ("100.127.255.254", "shared (CGNAT 100.64.0.0/10)"),
        ("0.0.0.0", "unspecified"),
        ("::", "unspecified"),
        ("224.0.0.1", "multicast"),
        ("ff02::1", "multicast"),
        ("240.0.0.1", "reserved"),
        ("255.255.255.255", "reserved"),
        ("fec0::1", "site-local"),
        ("192.0.2.10", "special-use, not globally routable"),  # documentation
        ("198.18.0.1", "special-use, not globally routable"),  # benchmarking
        ("2001:db8::1", "special-use, not globally routable"),
    ],
)
def test_non_public_addresses_are_refused(address: str, reason: str) -> None:
    assert address_refusal(ipaddress.ip_address(address)) == reason


@pytest.mark.parametrize(
    "address",
    ["8.8.8.8", "172.32.0.1", "100.128.0.1", "203.162.4.190", "2606:4700::1111", "::ffff:1.1.1.1"],
)
def test_public_addresses_pass(address: str) -> None:
    assert address_refusal(ipaddress.ip_address(address)) is None


@pytest.mark.parametrize(
    ("host", "address"),
    [
        ("[::ffff:127.0.0.1]", "::ffff:127.0.0.1"),
        ("169.254.169.254", "169.254.169.254"),
        ("fe80::1%eth0", "fe80::1"),
        ("tuyensinh.truong.edu.vn", None),
        ("2130706433", None),  # an old numeric form: a name here, refused by the fetcher
    ],
)
def test_hosts_are_read_as_addresses_only_when_they_are_one(host: str, address: str | None) -> None:
    assert parse_address(host) == (ipaddress.ip_address(address) if address else None)


def test_allowed_hosts_match_host_and_port_as_written() -> None:
    allow = PrivateHostAllowList(["intranet.truong.edu.vn", "127.0.0.1:8001", "[fd00::5]:8443"])

    assert allow.allows("Intranet.Truong.edu.vn.", 80)
    assert allow.allows("intranet.truong.edu.vn", 8080)  # no port given: any port
    assert allow.allows("127.0.0.1", 8001)
    assert not allow.allows("127.0.0.1", 8002)  # another port on the same host
    assert not allow.allows("localhost", 8001)  # another name for the same address
    assert allow.allows("[fd00::5]", 8443)
    assert allow.allows("fd00::5", 8443)
    assert not PrivateHostAllowList().allows("127.0.0.1", 8001)


def test_settings_write_allowed_hosts_in_one_form_and_refuse_what_is_no_host() -> None:
    entries = ["Intranet.Truong.edu.vn.", "10.1.2.3:8080", "fd00::5", "[fd00::5]:8443"]
    settings = IngestSettings(allow_private_hosts=entries)
    assert settings.allow_private_hosts == (
        "intranet.truong.edu.vn",
        "10.1.2.3:8080",
        "[fd00::5]",
        "[fd00::5]:8443",
    )
    assert IngestSettings().allow_private_hosts == ()  # safe default: public addresses only
    for bad in ("http://10.1.2.3/", "10.1.2.3:99999", "", "user@10.1.2.3"):
        with pytest.raises(ValidationError):
            IngestSettings(allow_private_hosts=[bad])
