"""The offline LLM job runner: a concurrency limit, retries with backoff, failures isolated."""

from __future__ import annotations

import asyncio

from bot.core.errors import LlmError
from bot.llm.batch import Estimate, run_batch


async def test_runs_every_item_under_the_concurrency_limit() -> None:
    in_flight = peak = 0

    async def work(item: int) -> int:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0.01)
        in_flight -= 1
        return item * 2

    stored: list[tuple[int, int]] = []

    async def on_done(item: int, value: int) -> None:
        stored.append((item, value))

    result = await run_batch(range(10), work, concurrency=3, on_done=on_done)
    assert peak == 3
    assert sorted(stored) == [(i, i * 2) for i in range(10)]
    assert sorted(result.done) == sorted(stored)
    assert result.failed == []
    assert result.calls == 10


async def test_retries_then_reports_a_failure_without_stopping_the_rest() -> None:
    tries: dict[str, int] = {}

    async def work(item: str) -> str:
        tries[item] = tries.get(item, 0) + 1
        if item == "flaky" and tries[item] < 2:
            raise LlmError("HTTP 500")
        if item == "broken":
            raise LlmError("bad reply")
        return item.upper()

    result = await run_batch(["ok", "flaky", "broken"], work, attempts=3, base_delay=0.001)
    assert sorted(result.done) == [("flaky", "FLAKY"), ("ok", "OK")]
    assert result.failed == [("broken", "bad reply")]
    assert tries == {"ok": 1, "flaky": 2, "broken": 3}
    assert result.calls == 6


def test_estimate_counts_calls_and_tokens() -> None:
    estimate = Estimate()
    estimate.add(
        [{"role": "system", "content": "Tóm tắt"}, {"role": "user", "content": "a b c"}], 100
    )
    estimate.add([{"role": "user", "content": "x"}], 100)
    assert estimate.calls == 2
    assert estimate.max_completion_tokens == 200
    assert 10 <= estimate.prompt_tokens <= 20
    assert "2 LLM calls" in str(estimate)
