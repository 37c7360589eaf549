"""Contrasts learned from the deploying school's own knowledge (1/4).

Two FAQ questions (or two headings of its documents) that say the same thing but one value —
"Điểm chuẩn cơ sở phía **Bắc**" and "Điểm chuẩn cơ sở phía **Nam**", "Sinh viên chương trình
**chuẩn** …" and "Sinh viên chương trình **tiên tiến** …", "xét tuyển cách thứ **hai**" and
"cách thứ **ba**" — show that, in this knowledge base, the word before the value (the *head*:
"phía", "trình", "thứ") takes values that tell otherwise alike entries apart. A question naming
one such value is not answered by an entry that names another after the same head, whatever
the bundled vocabulary (language.yaml, guard) lists for the school: campuses, kinds of programme,
ordinals, methods are learned where the school writes them.

The texts are compared word by word (folded, numbers in words after an ordinal read as digits);
a pair counts when it differs by exactly one replaced run of at most ``MAX_VALUE_WORDS`` words on
each side, the words around it shared, and a word before it.
"""

from __future__ import annotations

import difflib
import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from retrieval.text.terms import tokens

MAX_VALUE_WORDS = 3
MAX_EXTRA_WORDS = 3  # words added or left out besides the value
MIN_SHARED = 0.6  # of the shorter text's words, outside the replaced run
MAX_TEXTS = 4000  # texts compared (FAQ phrasings and document headings); blocked, not all pairs
# "thứ hai" is the second, "thứ ba" the third: after these heads a number word is a number.
_ORDINAL_HEADS = frozenset({"thu", "lan", "dot", "cach", "buoc", "giai", "nhom", "khoi"})
_NUMBER_WORDS = {
    "nhat": "1",
    "mot": "1",
    "hai": "2",
    "nhi": "2",
    "ba": "3",
    "tu": "4",
    "bon": "4",
    "nam": "5",
    "sau": "6",
    "bay": "7",
    "tam": "8",
    "chin": "9",
    "muoi": "10",
}
# Words too common to be a head: a value after them is any word of a sentence.
_NOT_HEADS = frozenset({"la", "va", "co", "cua", "cho", "thi", "o", "tai", "the", "and", "of"})

Value = tuple[str, ...]


def contrast_words(text: str) -> list[str]:
    """The folded words of ``text``, a number word after an ordinal head read as its digit."""
    words = tokens(text)
    return [
        _NUMBER_WORDS.get(w, w) if i and words[i - 1] in _ORDINAL_HEADS else w
        for i, w in enumerate(words)
    ]


@dataclass(frozen=True)
class Contrasts:
    """Heads and the values that follow them in the knowledge base, where two values after one
    head tell two texts apart."""

    values: dict[str, frozenset[Value]] = field(default_factory=dict)

    @property
    def longest(self) -> int:
        return max((len(v) for vs in self.values.values() for v in vs), default=0)

    def named(self, words: Sequence[str]) -> dict[str, frozenset[Value]]:
        """The values ``words`` names after each head (longest value first)."""
        found: dict[str, set[Value]] = {}
        longest = self.longest
        for i, head in enumerate(words[:-1]):
            known = self.values.get(head)
            if not known:
                continue
            for size in range(min(longest, len(words) - i - 1), 0, -1):
                value = tuple(words[i + 1 : i + 1 + size])
                if value in known:
                    found.setdefault(head, set()).add(value)
                    break
        return {h: frozenset(v) for h, v in found.items()}

    def conflicts(
        self, asked: dict[str, frozenset[Value]], entry_words: Sequence[str]
    ) -> list[tuple[str, Value]]:
        """The values a question names (``asked``: ``named`` of its words) that the entry
        contradicts: after the same head it names only other values."""
        theirs = self.named(entry_words)
        out: list[tuple[str, Value]] = []
        for head, values in asked.items():
            other = theirs.get(head)
            if other and values.isdisjoint(other):
                out.extend((head, v) for v in sorted(values))
        return out

    def unsaid(
        self, asked: dict[str, frozenset[Value]], entry_words: Sequence[str]
    ) -> list[tuple[str, Value]]:
        """The values a question names that the entry never says (anywhere in its words)."""
        joined = f" {' '.join(entry_words)} "
        return [
            (head, v)
            for head, values in asked.items()
            for v in sorted(values)
            if f" {' '.join(v)} " not in joined
        ]

    def swaps(self, words: Sequence[str]) -> Iterable[tuple[str, Value, Value, list[str]]]:
        """Each text made by putting another value after a head ``words`` names: (head, the
        value named, the value put instead, the new words). The near misses of an entry."""
        longest = self.longest
        for i, head in enumerate(words[:-1]):
            known = self.values.get(head)
            if not known:
                continue
            for size in range(min(longest, len(words) - i - 1), 0, -1):
                value = tuple(words[i + 1 : i + 1 + size])
                if value not in known:
                    continue
                for other in sorted(known - {value}):
                    yield head, value, other, [*words[: i + 1], *other, *words[i + 1 + size :]]
                break


def learn_contrasts(texts: Iterable[str]) -> Contrasts:
    """The heads and values that tell alike texts apart (see the module docstring).

    Texts are compared within blocks of texts sharing their first two or last two words, so the
    work grows with the texts that could differ by one value, not with all pairs.
    """
    seen: dict[tuple[str, ...], None] = {}
    for text in texts:
        words = tuple(contrast_words(text))
        if 2 <= len(words) <= 40:
            seen.setdefault(words)
        if len(seen) >= MAX_TEXTS:
            break
    blocks: dict[tuple[str, ...], list[tuple[str, ...]]] = {}
    for words in seen:
        blocks.setdefault(("^", *words[:2]), []).append(words)
        blocks.setdefault(("$", *words[-2:]), []).append(words)
    found: dict[str, set[Value]] = {}
    done: set[tuple[tuple[str, ...], tuple[str, ...]]] = set()
    for block in blocks.values():
        for a, b in itertools.combinations(block, 2):
            if (a, b) in done:
                continue
            done.add((a, b))
            pair = _one_value_apart(a, b)
            if pair is not None:
                head, va, vb = pair
                found.setdefault(head, set()).update((va, vb))
    return Contrasts({h: frozenset(v) for h, v in found.items()})


def _one_value_apart(a: Sequence[str], b: Sequence[str]) -> tuple[str, Value, Value] | None:
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    changes = [op for op in matcher.get_opcodes() if op[0] != "equal"]
    replaced = [op for op in changes if op[0] == "replace"]
    if len(replaced) != 1:
        return None
    _, i1, i2, j1, j2 = replaced[0]
    if not (0 < i2 - i1 <= MAX_VALUE_WORDS and 0 < j2 - j1 <= MAX_VALUE_WORDS) or i1 == 0:
        return None
    # Besides the value, a word or two added or left out elsewhere ("để được đăng ký làm" and
    # "để làm") still makes one value apart; more is another sentence.
    extra = sum(max(e1 - s1, e2 - s2) for op, s1, e1, s2, e2 in changes if op != "replace")
    if extra > MAX_EXTRA_WORDS or j1 == 0 or a[i1 - 1] != b[j1 - 1]:
        return None
    shared = len(a) - (i2 - i1) - extra
    if shared < MIN_SHARED * min(len(a), len(b)):
        return None
    head = a[i1 - 1]
    if head in _NOT_HEADS or head.isdigit():
        return None
    return head, tuple(a[i1:i2]), tuple(b[j1:j2])
