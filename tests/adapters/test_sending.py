"""What every adapter's sending shares: splitting long replies, resuming a split reply."""

from __future__ import annotations

import pytest

from adapters.sending import send_parts, split_text
from bot.core.errors import SendError

ANSWER = (
    "Học phí năm học 2026–2027 là 32.500.000 đồng. Sinh viên đóng theo học kỳ!\n\n"
    "Hạn đóng học phí: 15/10. Liên hệ phòng Tài chính: 028 3999 1234. " + "x" * 30 + " hết."
)


@pytest.mark.parametrize("limit", [12, 20, 40, 75, 4096])
def test_split_keeps_every_word_in_order_within_the_limit(limit: int) -> None:
    parts = split_text(ANSWER, limit)
    assert all(0 < len(p) <= limit for p in parts)
    # nothing lost or reordered (a word longer than the limit is the one thing cut inside)
    assert "".join("".join(parts).split()) == "".join(ANSWER.split())


def test_split_prefers_sentence_and_paragraph_borders() -> None:
    parts = split_text(ANSWER, 75)
    assert parts[0] == "Học phí năm học 2026–2027 là 32.500.000 đồng. Sinh viên đóng theo học kỳ!"
    assert parts[1].startswith("Hạn đóng học phí: 15/10.")


def test_short_and_empty_replies() -> None:
    assert split_text("  chào bạn  ", 2000) == ["chào bạn"]
    assert split_text("   ", 2000) == []


async def test_a_failed_part_records_how_many_were_sent_and_a_retry_resumes_after_them() -> None:
    sent: list[str] = []
    fail_at = {1}

    async def send_one(index: int, part: str) -> str | None:
        if index in fail_at:
            fail_at.clear()
            raise SendError("rate limited", retryable=True, retry_after=1)
        sent.append(part)
        return f"id-{index}"

    parts = ["một", "hai", "ba"]
    with pytest.raises(SendError) as caught:
        await send_parts(parts, 0, send_one)
    assert caught.value.parts_sent == 1
    result = await send_parts(parts, caught.value.parts_sent, send_one)
    assert sent == ["một", "hai", "ba"]  # part one went out once
    assert result.external_ids == ("id-1", "id-2")
    assert result.parts == 3
