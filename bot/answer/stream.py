"""What ``Answerer.answer_stream()`` yields: the tier, pieces of text, a retraction, the answer."""

from __future__ import annotations

from dataclasses import dataclass

from bot.answer.replies import Answer
from bot.core.types import Tier


@dataclass(frozen=True)
class StreamMeta:
    """The tier the streamed text belongs to (a ``StreamReplace`` may still change it)."""

    tier: Tier


@dataclass(frozen=True)
class StreamToken:
    """The next piece of the reply's body, to append to what was shown."""

    text: str


@dataclass(frozen=True)
class StreamReplace:
    """Drop the text streamed so far: the final answer is another one."""

    reason: str


@dataclass(frozen=True)
class StreamDone:
    """The final answer, exactly as ``answer()`` returns it; always the last event."""

    answer: Answer


StreamEvent = StreamMeta | StreamToken | StreamReplace | StreamDone
