"""The exception hierarchy of tuvan: every error it raises on purpose, in one tree.

TuvanError
├── ConfigError              a setting is missing or inconsistent
├── DatabaseError            the database is unreachable or its schema is behind
├── LlmError                 the LLM endpoint failed or answered unusably
├── RetrievalError
│   ├── EmbedderError        an embedder could not load or embed
│   ├── IndexMismatchError   the stored index was built with another model or dimension
│   ├── IngestError          a source could not be read (the caller logs and skips it)
│   └── OcrUnavailableError  Tesseract (or its language data) is not installed
├── ChannelError
│   ├── WebhookAuthError     a webhook's signature or secret does not verify (→ 403)
│   ├── WebhookPayloadError  a webhook's body is not what the platform sends (→ 400)
│   └── SendError            a platform refused or failed a send (retryable or not)
├── ChatRequestError         a web chat request is not what the page sends (→ 400)
│   └── ChatTextTooLongError a question over the page's 2,000 characters (→ 413)
├── AccountError             an admin account request that cannot be done
│   └── LoginThrottledError  too many failed logins; try again later
├── FaqFileError             an FAQ file that cannot be read as documented
└── DatasetError             an evaluation file that cannot be read as documented

A library's own exception raised inside an adapter to travel through that library (the Telegram
adapter's FloodControl, a python-telegram-bot TelegramError) never leaves the adapter: it comes
out as SendError.
"""

from __future__ import annotations


class TuvanError(Exception):
    """Base of every error tuvan raises on purpose."""


class ConfigError(TuvanError):
    pass


class DatabaseError(TuvanError):
    pass


class LlmError(TuvanError):
    pass


class RetrievalError(TuvanError):
    pass


class EmbedderError(RetrievalError):
    pass


class IndexMismatchError(RetrievalError):
    """The index was built with another embedding model or dimension than the configured one."""


class IngestError(RetrievalError):
    pass


class OcrUnavailableError(RetrievalError):
    """Tesseract, or every language it was asked for, is missing: scanned pages get no text."""


class ChannelError(TuvanError):
    pass


class WebhookAuthError(ChannelError):
    pass


class WebhookPayloadError(ChannelError):
    pass


class SendError(ChannelError):
    def __init__(
        self,
        message: str,
        *,
        retryable: bool,
        retry_after: float | None = None,
        status: int | None = None,
        code: str | None = None,
        parts_sent: int = 0,
    ) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.retry_after = retry_after
        self.status = status
        self.code = code  # the platform's own error code, when it gives one
        # Of a reply split into parts, how many were delivered before the failure (counting
        # from the start of the reply): a retry resumes after them instead of repeating them.
        self.parts_sent = parts_sent


class ChatRequestError(TuvanError):
    """The body of ``POST /api/chat`` is not what the page sends (→ 400)."""


class ChatTextTooLongError(ChatRequestError):
    """A question longer than the page lets a visitor type (→ 413)."""


class AccountError(TuvanError):
    """A request about an account that cannot be done (bad e-mail, short password, ...).

    ``code`` names the problem for the web view's translated message (``account.<code>``).
    """

    def __init__(self, message: str, code: str = "invalid") -> None:
        super().__init__(message)
        self.code = code


class LoginThrottledError(AccountError):
    """Too many failed logins for this e-mail or address; try again later."""


class FaqFileError(TuvanError):
    pass


class DatasetError(TuvanError):
    """An evaluation file that cannot be read as documented."""
