"""What every chunker shares: one `ChunkSizes` value, checked once, taken by each chunker alike."""

from __future__ import annotations

import dataclasses

import pytest

from bot.core.types import Chunker
from retrieval.chunking import CHUNKERS
from retrieval.chunking.base import ChunkSizes, approx_tokens
from retrieval.loading.document import LoadedDocument, Section

SENTENCE = "Thí sinh nộp hồ sơ xét tuyển trực tuyến trên cổng thông tin của trường trước ngày 30/6."


@pytest.mark.parametrize(
    ("target", "limit", "overlap", "message"),
    [
        (0, 10, 1, "need 0 < target_tokens <= max_tokens, got 0, 10"),
        (20, 10, 1, "need 0 < target_tokens <= max_tokens, got 20, 10"),
        (10, 20, -1, "overlap_sentences must be >= 0, got -1"),
    ],
)
def test_bad_sizes_are_refused_when_they_are_made(
    target: int, limit: int, overlap: int, message: str
) -> None:
    with pytest.raises(ValueError) as refused:
        ChunkSizes(target_tokens=target, max_tokens=limit, overlap_sentences=overlap)
    assert str(refused.value) == message


def test_the_default_sizes_are_the_indexers_and_cannot_change() -> None:
    sizes = ChunkSizes()
    assert (sizes.target_tokens, sizes.max_tokens, sizes.overlap_sentences) == (280, 400, 1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        sizes.max_tokens = 500  # type: ignore[misc]


@pytest.mark.parametrize("name", sorted(CHUNKERS))
def test_every_chunker_is_bounded_by_the_one_sizes_value(name: Chunker) -> None:
    text = "\n\n".join(f"{SENTENCE} Đợt {n}." for n in range(12))
    doc = LoadedDocument("tuyen-sinh.md", "Tuyển sinh", None, "vi", "0" * 64, (Section((), text),))
    sizes = ChunkSizes(target_tokens=40, max_tokens=60, overlap_sentences=0)
    drafts = CHUNKERS[name](doc, count_tokens=approx_tokens, sizes=sizes)
    assert len(drafts) > 3
    assert all(draft.token_count <= 60 for draft in drafts)
    assert [draft.ordinal for draft in drafts] == list(range(len(drafts)))
