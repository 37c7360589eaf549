"""The restorer: each folded syllable's accented forms scored by an interpolated Kneser-Ney
bigram model, and the best sequence of a clause found by Viterbi."""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from retrieval.restore.ngrams import (
    BOUNDARY,
    JOINER,
    LETTERS,
    NUMBER,
    TOKEN,
    NgramCounts,
    general_counts,
    has_marks,
    lower_nfc,
)
from retrieval.text.folding import fold
from retrieval.text.language import detect_language

# Question words that stand where the answer's number stands: "bao nhiêu năm" ~ "05 năm".
_QUANTITY = frozenset({"nhiêu", "mấy"})
# A folded syllable with more forms than this keeps the likeliest: rare spellings cost time.
MAX_FORMS = 8
# The lower-order distribution: Kneser-Ney's continuation counts (in how many contexts a form
# occurs) with this share of plain frequency, which keeps frequent forms of few contexts ("năm"
# after numbers) from losing to forms of many lexicon entries ("nam").
FREQUENCY_SHARE = 0.3
# A question is restored when fewer than this share of its Vietnamese words carry marks: one
# written properly keeps its unmarked words ("cho", "thi", "sinh") as they are.
MARKED_SHARE = 0.5


@dataclass(frozen=True)
class Restored:
    text: str
    changed: int  # words given marks


class DiacriticRestorer:
    """Puts the marks back on the unaccented Vietnamese words of a question."""

    def __init__(
        self,
        knowledge: NgramCounts | None = None,
        expansions: Mapping[str, str] | None = None,
        *,
        general: NgramCounts | None = None,
    ) -> None:
        self.knowledge = knowledge or NgramCounts()
        self._parts = (general if general is not None else general_counts(), self.knowledge)
        # Abbreviations retrieval.text writes out ("cntt", "v", "đc"): kept as typed, and read
        # as their expansion for the context of the words around them.
        self.expansions = {
            fold(k): tuple(LETTERS.findall(lower_nfc(v))) for k, v in (expansions or {}).items()
        }
        sums = [p.sums for p in self._parts]
        vocabulary = len(self._parts[0].unigrams) + len(self._parts[1].unigrams) + 1
        self._types = sum(s.types for s in sums) + 0.5 * vocabulary
        self._total = sum(s.total for s in sums) + 0.5 * vocabulary
        # Memos: a process answers many questions with one restorer (bounded by the vocabulary).
        self._lower_memo: dict[str, float] = {}
        self._context_memo: dict[str, tuple[float, float] | None] = {}
        self._forms = self._index_forms()
        general_part, knowledge_part = self._parts
        self._pairs = dict(general_part.discounted)
        for pair, c in knowledge_part.discounted.items():
            self._pairs[pair] = self._pairs.get(pair, 0.0) + c

    def _count(self, word: str) -> float:
        return sum(p.unigrams.get(word, 0.0) for p in self._parts)

    def _continuation(self, word: str) -> float:
        found = self._lower_memo.get(word)
        if found is None:
            found = self._lower_memo[word] = self._lower_order(word)
        return found

    def _lower_order(self, word: str) -> float:
        kn = (sum(p.sums.continuation.get(word, 0.0) for p in self._parts) + 0.5) / self._types
        frequency = (self._count(word) + 0.5) / self._total
        return (1 - FREQUENCY_SHARE) * kn + FREQUENCY_SHARE * frequency

    def _index_forms(self) -> dict[str, tuple[str, ...]]:
        by_fold: dict[str, set[str]] = {}
        for part in self._parts:
            for word in part.unigrams:
                if word not in (BOUNDARY, NUMBER):
                    by_fold.setdefault(fold(word), set()).add(word)
        return {
            key: tuple(sorted(forms, key=lambda w: (-self._continuation(w), w))[:MAX_FORMS])
            for key, forms in by_fold.items()
        }

    def _context(self, previous: str) -> tuple[float, float] | None:
        """(pair mass after ``previous``, share of it left to the lower order), if seen."""
        if previous in self._context_memo:
            return self._context_memo[previous]
        found = self._context_memo[previous] = self._seen_context(previous)
        return found

    def _seen_context(self, previous: str) -> tuple[float, float] | None:
        left = sum(p.sums.left.get(previous, 0.0) for p in self._parts)
        if left <= 0:
            return None
        return left, sum(p.sums.reserve.get(previous, 0.0) for p in self._parts) / left

    def log_p(self, previous: str, word: str) -> float:
        """log P(word | previous) under the interpolated model."""
        lower = self._continuation(word)
        return max(
            math.log(self._pairs.get((context, word), 0.0) * inverse + reserve * lower)
            for context, inverse, reserve in self._contexts(previous)
        )

    def _contexts(self, previous: str) -> list[tuple[str, float, float]]:
        """How ``previous`` conditions the next word: (context, 1 / its pair mass, the share
        left to the lower order); a quantity word also reads as a number."""
        names = (previous, NUMBER) if previous in _QUANTITY else (previous,)
        found = []
        for name in names:
            context = self._context(name)
            found.append((name, 1.0 / context[0], context[1]) if context else (name, 0.0, 1.0))
        return found

    # -- restoring --

    def forms(self, word: str) -> tuple[str, ...]:
        """The forms an unaccented word may stand for (itself when it is kept as it is)."""
        lower = lower_nfc(word)
        if has_marks(lower):
            return (lower,)
        return self._forms.get(lower, (lower,))

    def needs_restoring(self, text: str) -> bool:
        """Whether ``text`` reads as Vietnamese typed (mostly) without marks."""
        if detect_language(text) != "vi":
            return False
        marked = ambiguous = 0
        for word in LETTERS.findall(unicodedata.normalize("NFC", text)):
            if has_marks(word):
                marked += 1
            elif fold(word) not in self.expansions and len(self.forms(word)) > 1:
                ambiguous += 1
        return ambiguous > 0 and marked < MARKED_SHARE * (marked + ambiguous)

    def restore(self, text: str) -> Restored:
        """``text`` with marks on its unaccented words; everything else kept as it was.

        The text comes back in NFC (composed characters), as PostgreSQL and e5 read it best.
        """
        text = unicodedata.normalize("NFC", text)
        pieces: list[str] = []
        changed = 0
        cursor = 0
        for clause in _token_clauses(text):
            lattice: list[tuple[str, ...]] = []
            owner: list[int] = []  # the clause token each position restores; -1: context only
            for i, match in enumerate(clause):
                expansion = self.expansions.get(fold(match.group(0))) if match.group(2) else None
                if match.group(1):
                    lattice.append((NUMBER,))
                    owner.append(-1)
                elif expansion:
                    lattice.extend((w,) for w in expansion)
                    owner.extend([-1] * len(expansion))
                else:
                    lattice.append(self.forms(match.group(0)))
                    owner.append(i)
            best = dict(zip(owner, self._viterbi(lattice), strict=True))
            for i, match in enumerate(clause):
                word = match.group(0)
                form = best.get(i)
                pieces.append(text[cursor : match.start()])
                if form is not None and form != lower_nfc(word):
                    word = _recase(form, word)
                    changed += 1
                pieces.append(word)
                cursor = match.end()
        pieces.append(text[cursor:])
        return Restored("".join(pieces), changed)

    def _viterbi(self, lattice: Sequence[tuple[str, ...]]) -> list[str]:
        if all(len(forms) == 1 for forms in lattice):
            return [forms[0] for forms in lattice]
        pairs, log = self._pairs, math.log
        scores = {BOUNDARY: 0.0}  # the best log-probability of a path ending in each form
        back: list[dict[str, str]] = []  # per position: form -> the form before it
        for forms in [*lattice, (BOUNDARY,)]:
            previous = [(prev, score, self._contexts(prev)) for prev, score in scores.items()]
            step: dict[str, float] = {}
            pointers: dict[str, str] = {}
            for form in forms:
                lower = self._continuation(form)
                best_prev, best = "", -math.inf
                for prev, score, contexts in previous:
                    context, inverse, reserve = contexts[0]
                    p = pairs.get((context, form), 0.0) * inverse + reserve * lower
                    if len(contexts) > 1:  # a quantity word: the number's context too
                        context, inverse, reserve = contexts[1]
                        p = max(p, pairs.get((context, form), 0.0) * inverse + reserve * lower)
                    value = score + log(p)
                    if value > best:
                        best_prev, best = prev, value
                step[form] = best
                pointers[form] = best_prev
            scores = step
            back.append(pointers)
        form = BOUNDARY
        path = []
        for pointers in reversed(back[1:]):
            form = pointers[form]
            path.append(form)
        return path[::-1]


def _token_clauses(text: str) -> Iterable[list[re.Match[str]]]:
    """The tokens of an NFC text, grouped by clause."""
    clause: list[re.Match[str]] = []
    for match in TOKEN.finditer(text):
        if clause and not JOINER.fullmatch(text, clause[-1].end(), match.start()):
            yield clause
            clause = []
        clause.append(match)
    if clause:
        yield clause


def _recase(form: str, original: str) -> str:
    """``form`` in the casing the student typed: "HOC" → "HỌC", "Hoc" → "Học"."""
    if original.isupper() and len(original) > 1:
        return form.upper()
    if original[0].isupper():
        return form[0].upper() + form[1:]
    return form
