"""The chat model: any OpenAI-compatible ``/v1/chat/completions`` endpoint, and its prompts.

Every failure of the endpoint (HTTP status, connection, timeout, malformed or empty reply)
becomes an ``LlmError`` whose message names the endpoint but never the API key.
"""

from __future__ import annotations

import logging
import re
from collections.abc import AsyncIterator, Mapping, Sequence
from importlib import resources
from typing import TYPE_CHECKING, cast

from bot.core.errors import ConfigError, LlmError
from bot.core.redact import display_url, without_secret
from bot.core.settings import LlmSettings

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletionMessageParam

log = logging.getLogger(__name__)

Message = Mapping[str, str]  # {"role": "system" | "user" | "assistant", "content": ...}

_PROMPT_NAME = re.compile(r"[a-z][a-z0-9_]*")


def load_prompt(settings: LlmSettings, name: str) -> str:
    """The system prompt ``name``: ``settings.prompt_file`` for "answer" when set, otherwise
    the bundled ``bot/prompts/<name>.txt``."""
    if name == "answer" and settings.prompt_file is not None:
        try:
            return settings.prompt_file.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"cannot read prompt file {settings.prompt_file}: {exc}") from exc
    if not _PROMPT_NAME.fullmatch(name):
        raise ConfigError(f"invalid prompt name {name!r}")
    resource = resources.files("bot.llm") / "prompts" / f"{name}.txt"
    try:
        return resource.read_text(encoding="utf-8").strip()
    except FileNotFoundError as exc:
        raise ConfigError(f"no bundled prompt named {name!r}") from exc


class LlmClient:
    """One ``openai.AsyncOpenAI`` client (its connection pool) for the life of the app.

    Uses the widely supported ``max_tokens`` and ``temperature`` parameters (vLLM, Ollama,
    llama.cpp and OpenAI's chat models accept them). The openai client retries connection
    errors, 408/409/429 and 5xx ``max_retries`` times with back-off before we see an error.
    """

    def __init__(self, settings: LlmSettings, *, max_retries: int = 2) -> None:
        if not settings.base_url:
            raise ConfigError("the LLM is not configured: set TUVAN_LLM__BASE_URL")
        self._settings = settings
        self._secret = settings.api_key.get_secret_value()
        self._where = display_url(settings.base_url)
        # Imported with the first client: the package takes half a second to import, which a
        # process with no LLM configured (the default) should not pay.
        import openai

        self._failures: tuple[type[Exception], ...] = (openai.OpenAIError, ValueError)
        self._client = openai.AsyncOpenAI(
            base_url=settings.base_url,
            # The client refuses an empty key; local servers (Ollama, llama.cpp) need none.
            api_key=self._secret or "unused",
            timeout=settings.timeout_s,
            max_retries=max_retries,
        )

    @property
    def model(self) -> str:
        return self._settings.model

    def _error(self, exc: Exception) -> LlmError:
        detail = without_secret(str(exc), self._secret)
        status = getattr(exc, "status_code", None)
        prefix = f"HTTP {status}: " if status is not None else ""
        return LlmError(
            f"LLM endpoint {self._where} (model {self.model!r}) failed: "
            f"{prefix}{type(exc).__name__}: {detail}"
        )

    @staticmethod
    def _messages(messages: Sequence[Message]) -> list[ChatCompletionMessageParam]:
        return cast("list[ChatCompletionMessageParam]", [dict(m) for m in messages])

    async def complete(self, messages: Sequence[Message]) -> str:
        """The whole reply to ``messages``."""
        try:
            response = await self._client.chat.completions.create(
                model=self.model,
                messages=self._messages(messages),
                temperature=self._settings.temperature,
                max_tokens=self._settings.max_tokens,
                stream=False,
            )
        except self._failures as exc:
            raise self._error(exc) from exc
        choices = getattr(response, "choices", None)
        if not choices or not choices[0].message.content:
            raise LlmError(f"LLM endpoint {self._where} returned an empty reply")
        choice = choices[0]
        if choice.finish_reason == "length":
            log.warning("LLM reply cut at max_tokens=%d", self._settings.max_tokens)
        return str(choice.message.content)

    async def stream(self, messages: Sequence[Message]) -> AsyncIterator[str]:
        """The reply to ``messages`` as it is generated, one text delta at a time."""
        got_text = False
        try:
            chunks = await self._client.chat.completions.create(
                model=self.model,
                messages=self._messages(messages),
                temperature=self._settings.temperature,
                max_tokens=self._settings.max_tokens,
                stream=True,
            )
            async with chunks:
                async for chunk in chunks:
                    # Some servers send a last chunk with usage only and no choices.
                    if not chunk.choices:
                        continue
                    delta = chunk.choices[0].delta.content
                    if delta:
                        got_text = True
                        yield delta
        except self._failures as exc:
            raise self._error(exc) from exc
        if not got_text:
            raise LlmError(f"LLM endpoint {self._where} streamed an empty reply")

    async def aclose(self) -> None:
        await self._client.close()
