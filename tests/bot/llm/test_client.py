from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from bot.core.errors import ConfigError, LlmError
from bot.core.redact import display_url
from bot.core.settings import LlmSettings
from bot.llm.client import LlmClient, load_prompt
from tests.fakes.openai_stub import OpenAIStub, start_openai_stub

KEY = "sk-test-secret-123"
MESSAGES = [
    {"role": "system", "content": "Trả lời ngắn gọn."},
    {"role": "user", "content": "[1] Hạn nộp hồ sơ là 30/6/2026.\n\nHạn nộp hồ sơ là khi nào?"},
]


def llm_settings(stub: OpenAIStub, **values: Any) -> LlmSettings:
    return LlmSettings(
        base_url=stub.base_url,
        model="chat-test",
        api_key=SecretStr(KEY),
        temperature=0.2,
        max_tokens=123,
        **values,
    )


@pytest.fixture
async def llm(stub: OpenAIStub) -> AsyncIterator[LlmClient]:
    client = LlmClient(llm_settings(stub), max_retries=0)
    try:
        yield client
    finally:
        await client.aclose()


async def test_complete_returns_the_reply_and_sends_the_settings(
    stub: OpenAIStub, llm: LlmClient
) -> None:
    stub.script_chat("Hạn nộp hồ sơ là 30/6/2026 [1].")
    assert await llm.complete(MESSAGES) == "Hạn nộp hồ sơ là 30/6/2026 [1]."
    (request,) = stub.requests
    assert request.path == "/v1/chat/completions"
    assert request.body["model"] == "chat-test"
    assert request.body["messages"] == MESSAGES
    assert request.body["temperature"] == 0.2
    assert request.body["max_tokens"] == 123
    assert not request.body.get("stream")
    assert request.headers["Authorization"] == f"Bearer {KEY}"


async def test_stream_yields_the_reply_in_deltas(stub: OpenAIStub, llm: LlmClient) -> None:
    stub.script_chat("Hạn nộp hồ sơ là 30/6/2026 [1].")
    deltas = [delta async for delta in llm.stream(MESSAGES)]
    assert len(deltas) > 1
    assert "".join(deltas) == "Hạn nộp hồ sơ là 30/6/2026 [1]."
    assert stub.requests[0].body["stream"] is True
    assert stub.requests[0].headers["Authorization"] == f"Bearer {KEY}"


async def test_reply_can_be_computed_from_the_request(stub: OpenAIStub, llm: LlmClient) -> None:
    stub.script_chat(lambda body: body["messages"][-1]["content"][:3])
    assert await llm.complete(MESSAGES) == "[1]"


async def test_http_500_is_an_llm_error_without_the_key(stub: OpenAIStub, llm: LlmClient) -> None:
    stub.fail(500, message=f"internal error for key {KEY}")
    with pytest.raises(LlmError) as caught:
        await llm.complete(MESSAGES)
    message = str(caught.value)
    assert "HTTP 500" in message
    assert stub.base_url in message
    assert KEY not in message
    assert caught.value.__cause__ is not None


async def test_http_error_before_a_stream_is_an_llm_error(stub: OpenAIStub, llm: LlmClient) -> None:
    stub.fail(401, message=f"Incorrect API key provided: {KEY}")
    with pytest.raises(LlmError) as caught:
        async for _ in llm.stream(MESSAGES):
            pass
    assert "HTTP 401" in str(caught.value)
    assert KEY not in str(caught.value)


async def test_error_in_the_middle_of_a_stream_is_an_llm_error(
    stub: OpenAIStub, llm: LlmClient
) -> None:
    stub.script_chat("một hai ba bốn năm", stream_error_after=2)
    received: list[str] = []

    async def consume() -> None:
        async for delta in llm.stream(MESSAGES):
            received.append(delta)

    with pytest.raises(LlmError, match="stub stream failure"):
        await consume()
    assert "".join(received) == "một hai "


async def test_transient_500_is_retried_by_the_client(stub: OpenAIStub) -> None:
    client = LlmClient(llm_settings(stub), max_retries=1)
    stub.fail(503)
    stub.script_chat("ok")
    try:
        assert await client.complete(MESSAGES) == "ok"
    finally:
        await client.aclose()
    assert len(stub.requests) == 2


async def test_timeout_is_an_llm_error(stub: OpenAIStub) -> None:
    client = LlmClient(llm_settings(stub, timeout_s=0.1), max_retries=0)
    stub.script_chat("late", delay_s=0.4)
    try:
        with pytest.raises(LlmError, match="Timeout"):
            await client.complete(MESSAGES)
    finally:
        await client.aclose()


async def test_empty_reply_is_an_llm_error(stub: OpenAIStub, llm: LlmClient) -> None:
    stub.script_chat("")
    with pytest.raises(LlmError, match="empty"):
        await llm.complete(MESSAGES)
    stub.script_chat("")
    with pytest.raises(LlmError, match="empty"):
        async for _ in llm.stream(MESSAGES):
            pass


async def test_unreachable_endpoint_is_an_llm_error() -> None:
    stub = await start_openai_stub()
    settings = llm_settings(stub)
    await stub.close()
    client = LlmClient(settings, max_retries=0)
    try:
        with pytest.raises(LlmError, match="APIConnectionError"):
            await client.complete(MESSAGES)
    finally:
        await client.aclose()


def test_credentials_in_the_base_url_stay_out_of_messages() -> None:
    assert display_url("http://user:pw@127.0.0.1:9/v1?k=s") == "http://127.0.0.1:9/v1"


def test_client_without_base_url_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="TUVAN_LLM__BASE_URL"):
        LlmClient(LlmSettings())


# -- prompts ---------------------------------------------------------------------------------


def test_bundled_answer_prompt_demands_citations_and_no_answer_token() -> None:
    prompt = load_prompt(LlmSettings(), "answer")
    assert "NO_ANSWER" in prompt
    assert "[1]" in prompt
    assert "{" not in prompt  # no placeholders: safe to use as is


def test_bundled_fallback_prompt_forbids_specific_figures() -> None:
    prompt = load_prompt(LlmSettings(), "fallback")
    assert "Never state specific facts" in prompt
    assert "{" not in prompt


def test_prompt_file_replaces_the_answer_prompt(tmp_path: Path) -> None:
    custom = tmp_path / "answer.txt"
    custom.write_text("Chỉ trả lời từ nguồn.\n", encoding="utf-8")
    settings = LlmSettings(prompt_file=custom)
    assert load_prompt(settings, "answer") == "Chỉ trả lời từ nguồn."
    assert "Never state specific facts" in load_prompt(settings, "fallback")


@pytest.mark.parametrize("name", ["nonexistent", "../settings", "Answer"])
def test_unknown_prompt_is_a_config_error(name: str) -> None:
    with pytest.raises(ConfigError):
        load_prompt(LlmSettings(), name)


def test_missing_prompt_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read"):
        load_prompt(LlmSettings(prompt_file=tmp_path / "missing.txt"), "answer")
