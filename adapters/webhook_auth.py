"""Telling a platform's webhook request from a forged one: the comparison every platform's
check ends in."""

from __future__ import annotations

import hmac


def secrets_equal(given: str | bytes | None, expected: str | bytes) -> bool:
    """Constant-time comparison; a missing value never matches (nor does an empty secret).

    A header that is not UTF-8 reaches us with its bytes as lone surrogates (aiohttp decodes
    with ``surrogateescape``): encoded back as they came, it simply does not match. The same
    for an expected value that came from the client too (a cookie).
    """
    if given is None or not expected:
        return False
    a = given.encode("utf-8", "surrogatepass") if isinstance(given, str) else given
    b = expected.encode("utf-8", "surrogatepass") if isinstance(expected, str) else expected
    return hmac.compare_digest(a, b)
