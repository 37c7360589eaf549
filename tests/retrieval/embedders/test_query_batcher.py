"""Questions asked at the same moment embedded in one call of the model (QueryBatcher)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence

import numpy as np
import pytest

from retrieval.embedders.base import FloatArray, QueryBatcher


class SlowModel:
    """A stand-in for the model: each text's vector is its length; each call takes a while."""

    def __init__(self, fail_on: str = "") -> None:
        self.calls: list[list[str]] = []
        self.fail_on = fail_on
        self.lock = threading.Lock()

    def __call__(self, texts: Sequence[str]) -> FloatArray:
        with self.lock:
            self.calls.append(list(texts))
        threading.Event().wait(0.05)
        if self.fail_on in texts:
            raise RuntimeError("the model failed")
        return np.array([[float(len(t))] for t in texts], dtype=np.float32)


async def test_a_lone_question_runs_at_once_and_a_busy_moment_shares_calls() -> None:
    model = SlowModel()
    batcher = QueryBatcher(model)
    alone = await batcher.embed(["học phí"])
    assert alone.tolist() == [[7.0]]
    asked = [["a" * n, "b" * n] for n in range(1, 9)]
    got = await asyncio.gather(*(batcher.embed(texts) for texts in asked))
    # each caller gets its own texts' vectors, in order
    assert [g.tolist() for g in got] == [[[float(n)], [float(n)]] for n in range(1, 9)]
    # the lone one ran alone; the eight asked at one moment shared one call
    assert [len(c) for c in model.calls] == [1, 16]


async def test_a_batch_stays_under_its_size_and_an_error_reaches_its_callers_only() -> None:
    model = SlowModel(fail_on="boom")
    batcher = QueryBatcher(model, max_texts=3)
    first = asyncio.create_task(batcher.embed(["x"]))
    await asyncio.sleep(0)
    rest = [asyncio.create_task(batcher.embed([t])) for t in ("boom", "yy", "zzz", "wwww")]
    assert (await first).tolist() == [[1.0]]
    results = await asyncio.gather(*rest, return_exceptions=True)
    assert all(len(c) <= 3 for c in model.calls)
    # "boom", "yy" and "zzz" shared the failed call (three texts at most); "wwww" did not
    assert [len(c) for c in model.calls] == [1, 3, 1]
    assert all(isinstance(r, RuntimeError) for r in results[:3])
    assert [r.tolist() for r in results[3:]] == [[[4.0]]]  # type: ignore[union-attr]


@pytest.mark.parametrize("rounds", [2])
def test_a_batcher_serves_one_event_loop_after_another(rounds: int) -> None:
    batcher = QueryBatcher(SlowModel())
    for _ in range(rounds):
        got = asyncio.run(batcher.embed(["abc"]))
        assert got.tolist() == [[3.0]]


async def test_a_question_asked_lately_is_not_embedded_again() -> None:
    model = SlowModel()
    batcher = QueryBatcher(model, recent=2)
    first = await batcher.embed(["điểm chuẩn cntt", "học phí"])
    again = await batcher.embed(["học phí", "điểm chuẩn cntt", "học phí"])
    assert again.tolist() == [[7.0], [15.0], [7.0]]
    assert first.tolist() == [[15.0], [7.0]]
    assert model.calls == [["điểm chuẩn cntt", "học phí"]]  # the second ask cost no call
    # Only the two asked most lately are kept ("học phí" was asked last): a third pushes out
    # the least recent.
    await batcher.embed(["ký túc xá"])
    await batcher.embed(["học phí"])
    await batcher.embed(["điểm chuẩn cntt"])
    assert model.calls[1:] == [["ký túc xá"], ["điểm chuẩn cntt"]]
    batcher.forget()
    await batcher.embed(["ký túc xá"])
    assert model.calls[-1] == ["ký túc xá"]
