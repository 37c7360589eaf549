"""The payload of a 👍/👎 button (bot.core.votes): read back exactly, with the answer's
language, within Telegram's 64 bytes, and nothing else taken for a vote; the buttons' words
and the thanks in both languages, within the platforms' limits."""

from __future__ import annotations

import pytest

from bot.core.messages import Vote
from bot.core.types import Language
from bot.core.votes import (
    DOWN,
    LABELS,
    NOT_TAKEN,
    THANKS,
    UP,
    read_vote,
    read_vote_payload,
    vote_payload,
)

LANGUAGES: tuple[Language, ...] = ("vi", "en")


def test_a_payload_names_the_answer_and_the_vote_and_reads_back() -> None:
    assert vote_payload(1234, UP) == "tuvan-vote:1234:up:vi"
    assert read_vote_payload(vote_payload(1234, DOWN)) == (1234, DOWN)
    assert read_vote_payload(f"  {vote_payload(7, UP)}\n") == (7, UP)


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_payload_carries_the_answers_language_back(language: Language) -> None:
    payload = vote_payload(88, DOWN, language)
    assert payload == f"tuvan-vote:88:down:{language}"
    assert read_vote(payload, ack_id="cbq-1") == Vote(88, DOWN, "cbq-1", language)


def test_a_payload_of_the_buttons_sent_before_languages_is_read_as_vietnamese() -> None:
    assert read_vote("tuvan-vote:12:up") == Vote(12, UP, None, "vi")


def test_the_largest_answer_id_fits_telegrams_callback_data() -> None:
    payload = vote_payload(2**63 - 1, DOWN, "en")
    assert len(payload.encode()) <= 64
    assert read_vote_payload(payload) == (2**63 - 1, DOWN)


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_words_fit_the_platforms_limits(language: Language) -> None:
    # Messenger: a quick reply's title at most 20 characters; Telegram: answerCallbackQuery's
    # text at most 200 (core.telegram.org/bots/api#answercallbackquery).
    assert all(len(label) <= 20 for label in LABELS[language].values())
    assert len(THANKS[language]) + 2 <= 200  # and the thumb after it
    assert len(NOT_TAKEN[language]) <= 200


def test_the_english_words_are_not_the_vietnamese_ones() -> None:
    assert THANKS["vi"] == "Cảm ơn bạn đã góp ý!"
    assert THANKS["en"] != THANKS["vi"]
    assert NOT_TAKEN["en"] != NOT_TAKEN["vi"]
    assert set(LABELS["en"].values()).isdisjoint(LABELS["vi"].values())


@pytest.mark.parametrize(
    "text",
    [
        "👍",
        "tuvan-vote:12:maybe",
        "tuvan-vote:0:up",
        "tuvan-vote:012:up",
        "tuvan-vote:-3:down",
        "tuvan-vote:9223372036854775808:up",  # past PostgreSQL's bigint
        "tuvan-vote:12:up please",
        "Học phí tuvan-vote:12:up",
        "TUVAN-VOTE:12:UP",
        "tuvan-vote:12:up:fr",
        "tuvan-vote:12:up:",
    ],
)
def test_anything_else_is_not_a_vote(text: str) -> None:
    assert read_vote_payload(text) is None


def test_a_vote_is_up_or_down() -> None:
    with pytest.raises(ValueError, match="1"):
        vote_payload(5, 0)
