"""Messenger's Page webhook: Meta's subscription handshake (GET) and the body's signature.

https://developers.facebook.com/docs/messenger-platform/webhooks
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping

from adapters.webhook_auth import secrets_equal
from bot.core.errors import WebhookAuthError
from bot.core.messages import RawRequest
from bot.core.settings import MessengerSettings

SIGNATURE_HEADER = "X-Hub-Signature-256"
_SIGNATURE_PREFIX = "sha256="


def handshake_challenge(settings: MessengerSettings, raw: RawRequest) -> str:
    """The ``hub.challenge`` to answer (as text/plain, 200) to Meta's subscription check."""
    expected = settings.verify_token
    if (
        raw.method.upper() != "GET"
        or raw.query.get("hub.mode") != "subscribe"
        or expected is None
        or not secrets_equal(raw.query.get("hub.verify_token"), expected.get_secret_value())
    ):
        raise WebhookAuthError("messenger: subscription check with a wrong verify token")
    challenge = raw.query.get("hub.challenge")
    if not challenge:
        raise WebhookAuthError("messenger: subscription check without hub.challenge")
    return challenge


def verify_signature(settings: MessengerSettings, raw: RawRequest) -> None:
    """``WebhookAuthError`` unless ``X-Hub-Signature-256`` is the body's HMAC-SHA256 under the
    app secret."""
    # The algorithm is fixed: a header naming another one ("sha1=") is rejected, never
    # followed. The HMAC is over the body's bytes as sent: Meta signs JSON with escaped
    # unicode ("\u1ecd"), which a re-serialisation would not reproduce.
    secret = settings.app_secret
    if secret is None or not secret.get_secret_value():
        raise WebhookAuthError("messenger: no app secret configured to check signatures")
    given = _header(raw.headers, SIGNATURE_HEADER)
    if given is None:
        raise WebhookAuthError(f"messenger: no {SIGNATURE_HEADER} header")
    if not given.startswith(_SIGNATURE_PREFIX):
        raise WebhookAuthError(f"messenger: {SIGNATURE_HEADER} is not sha256")
    expected = hmac.new(secret.get_secret_value().encode(), raw.body, hashlib.sha256).hexdigest()
    digest = given[len(_SIGNATURE_PREFIX) :].strip().lower()
    if not hmac.compare_digest(digest.encode("utf-8", "replace"), expected.encode()):
        raise WebhookAuthError("messenger: signature does not match the body")


def _header(headers: Mapping[str, str], name: str) -> str | None:
    value = headers.get(name)
    if value is None:  # a plain dict rather than the CIMultiDict RawRequest asks for
        lowered = name.lower()
        value = next((v for k, v in headers.items() if k.lower() == lowered), None)
    return value
