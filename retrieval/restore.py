"""Diacritic restoration for questions typed without marks ("hoc phi nganh" → "học phí ngành").

e5 embeds unaccented Vietnamese far from the accented text it was trained on (dense MRR@10 on
ViRHE4QA: 0.67 written, 0.10 folded), so the dense side of search and the FAQ match get the
question with its marks put back. The model is learned from the knowledge base itself (chunks and
FAQ texts, where the school's own words are: "khóa luận", "phúc khảo", "xét tuyển"), backed by
general Vietnamese that every installation has:

- underthesea's Viet74K lexicon (74k words and phrases): which accented forms exist, and the
  syllable pairs inside words;
- the VLSP 2013 sample underthesea ships with its tagger (~70k words of running text): how often
  everyday words are written;
- retrieval/data/phrasing_vi.txt: how students word a question in chat (particles, question
  words, greetings), written for this project.

Method: every folded syllable ("phi") has the forms seen for it ("phi", "phí", "phì", ...); an
interpolated Kneser-Ney syllable bigram model over the pooled counts scores a sequence of forms,
and Viterbi picks the best one for each clause. Words that already carry marks are kept and serve
as context; numbers are one symbol ("05 năm", and a question's "bao nhiêu năm" reads as a number
there); the abbreviations retrieval.text writes out ("cntt", "đc", "v") are kept as typed and read
as their expansion for the words around them.

The general counts are loaded once per process; the knowledge base's counts (``NgramCounts``)
are what a store shares (retrieval.restorer_store serialises them with ``to_bytes``).
"""

from __future__ import annotations

import importlib.util
import itertools
import json
import math
import re
import unicodedata
import zlib
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path

from retrieval.text import DATA_DIR, detect_language, fold

# A token: a number or a word of letters.
_TOKEN = re.compile(r"(\d+(?:[.,/:]\d+)*)|([^\W\d_]+)")
# Between two tokens of one clause only blanks and joiners stand; anything else (a full stop, a
# comma, a bracket, an emoji) starts a new clause, whose first word has no left context.
_CLAUSE_BREAK = re.compile(r"[^\w \t\-–—/&+'’]+")
_JOINER = re.compile(r"[ \t\-–—/&+'’]*")
_LETTERS = re.compile(r"[^\W\d_]+")
_BOUNDARY = "<s>"
_NUMBER = "<num>"
# Question words that stand where the answer's number stands: "bao nhiêu năm" ~ "05 năm".
_QUANTITY = frozenset({"nhiêu", "mấy"})
# A folded syllable with more forms than this keeps the likeliest: rare spellings cost time.
MAX_FORMS = 8
# One entry of the lexicon, and one word of the general text, against one occurrence in the
# knowledge base. Measured on the dev question sets (docs/benchmarks.md, "Diacritic restoration").
LEXICON_WEIGHT = 0.25
GENERAL_WEIGHT = 0.3
DISCOUNT = 0.75  # Kneser-Ney's absolute discount
# The lower-order distribution: Kneser-Ney's continuation counts (in how many contexts a form
# occurs) with this share of plain frequency, which keeps frequent forms of few contexts ("năm"
# after numbers) from losing to forms of many lexicon entries ("nam").
FREQUENCY_SHARE = 0.3
# A question is restored when fewer than this share of its Vietnamese words carry marks: one
# written properly keeps its unmarked words ("cho", "thi", "sinh") as they are.
MARKED_SHARE = 0.5
_FORMAT = 1


def _lower(text: str) -> str:
    return unicodedata.normalize("NFC", text).lower()


def has_marks(word: str) -> bool:
    """Whether a word carries Vietnamese marks (tones, hats, breves, horns, đ)."""
    return not word.isascii() and fold(word) != word.lower()


def _clauses(text: str) -> Iterable[list[str]]:
    """The lower-cased tokens of ``text`` by clause, numbers as one symbol."""
    for part in _CLAUSE_BREAK.split(_lower(text)):
        words = [_NUMBER if number else word for number, word in _TOKEN.findall(part)]
        if words:
            yield words


def _written_with_marks(words: Sequence[str]) -> bool:
    """A clause worth learning from: three or more words and none marked is unaccented
    Vietnamese (a chat-style FAQ variant) or another language."""
    letters = [w for w in words if w != _NUMBER]
    return len(letters) < 3 or any(has_marks(w) for w in letters)


@dataclass
class NgramCounts:
    """Syllable and syllable-pair counts of accented text, and the sums the model needs."""

    unigrams: dict[str, float] = field(default_factory=dict)
    bigrams: dict[tuple[str, str], float] = field(default_factory=dict)

    def add_text(self, text: str) -> None:
        self.add_texts([text])

    def add_texts(self, texts: Iterable[str], weight: float = 1.0) -> NgramCounts:
        unigrams: Counter[str] = Counter()
        bigrams: Counter[tuple[str, str]] = Counter()
        for text in texts:
            for words in _clauses(text):
                if _written_with_marks(words):
                    unigrams.update(words)
                    bigrams.update(zip([_BOUNDARY, *words], [*words, _BOUNDARY], strict=True))
        self.merge(unigrams, bigrams, weight)
        return self

    def merge(
        self,
        unigrams: Mapping[str, float],
        bigrams: Mapping[tuple[str, str], float],
        weight: float = 1.0,
    ) -> None:
        """Add other counts, times ``weight``."""
        for word, c in unigrams.items():
            self.unigrams[word] = self.unigrams.get(word, 0.0) + c * weight
        for pair, c in bigrams.items():
            self.bigrams[pair] = self.bigrams.get(pair, 0.0) + c * weight

    @cached_property
    def discounted(self) -> dict[tuple[str, str], float]:
        """Each pair's count less its Kneser-Ney discount."""
        return {p: c - DISCOUNT * min(1.0, c) for p, c in self.bigrams.items()}

    @cached_property
    def sums(self) -> _Sums:
        # Pair mass after each form, mass discounted after it, and contexts before each form.
        sums = _Sums(total=float(sum(self.unigrams.values())))
        for (a, b), c in self.bigrams.items():
            weight = min(1.0, c)  # a pair seen less than once is discounted in proportion
            sums.left[a] += c
            sums.reserve[a] += DISCOUNT * weight
            sums.continuation[b] += weight
        sums.types = sum(sums.continuation.values())
        return sums

    def to_bytes(self) -> bytes:
        data = {
            "format": _FORMAT,
            "unigrams": self.unigrams,
            "bigrams": [[a, b, c] for (a, b), c in self.bigrams.items()],
        }
        return zlib.compress(json.dumps(data, ensure_ascii=False).encode("utf-8"), 6)

    @classmethod
    def from_bytes(cls, blob: bytes) -> NgramCounts:
        data = json.loads(zlib.decompress(blob).decode("utf-8"))
        if data.get("format") != _FORMAT:
            raise ValueError(f"restorer counts of format {data.get('format')!r}, not {_FORMAT}")
        return cls(dict(data["unigrams"]), {(a, b): c for a, b, c in data["bigrams"]})


@dataclass
class _Sums:
    total: float = 0.0  # unigram mass
    types: float = 0.0  # weighted number of distinct pairs
    left: defaultdict[str, float] = field(default_factory=lambda: defaultdict(float))
    reserve: defaultdict[str, float] = field(default_factory=lambda: defaultdict(float))
    continuation: defaultdict[str, float] = field(default_factory=lambda: defaultdict(float))


@lru_cache(maxsize=1)
def general_counts() -> NgramCounts:
    """The counts every installation shares: lexicon, general text and chat phrasing."""
    counts = NgramCounts()
    lexicon = _underthesea_file("corpus/data/Viet74K.txt")
    if lexicon is not None:
        lexicon_pairs: Counter[tuple[str, str]] = Counter()
        syllables: set[str] = set()
        for line in lexicon.read_text(encoding="utf-8").splitlines():
            words = _LETTERS.findall(_lower(line))
            syllables.update(words)
            lexicon_pairs.update(itertools.pairwise(words))
        # How many entries hold a syllable says nothing of how often it is written ("khởi"
        # starts hundreds of entries, "khối" few): every syllable of the lexicon counts the same.
        counts.merge(dict.fromkeys(syllables, 1.0), lexicon_pairs, LEXICON_WEIGHT)
    sample = _underthesea_file("pipeline/pos_tag/models/pos_crf_vlsp2013_20230303/test_output.txt")
    if sample is not None:
        counts.add_texts(_tagged_sentences(sample), GENERAL_WEIGHT)
    phrasing = (DATA_DIR / "phrasing_vi.txt").read_text(encoding="utf-8").splitlines()
    counts.add_texts(line for line in phrasing if not line.startswith("#"))
    return counts


def _tagged_sentences(path: Path) -> Iterable[str]:
    """Sentences of a CoNLL-style file: a token per line, a blank line between sentences."""
    words: list[str] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        token = line.split("\t", 1)[0]
        if token:
            words.append(token)
        elif words:
            yield " ".join(words)
            words = []
    if words:
        yield " ".join(words)


def _underthesea_file(name: str) -> Path | None:
    # Found without importing underthesea, whose import loads its models (seconds).
    spec = importlib.util.find_spec("underthesea")
    for root in (spec.submodule_search_locations or []) if spec is not None else []:
        path = Path(root) / name
        if path.is_file():
            return path
    return None


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
            fold(k): tuple(_LETTERS.findall(_lower(v))) for k, v in (expansions or {}).items()
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
                if word not in (_BOUNDARY, _NUMBER):
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
        names = (previous, _NUMBER) if previous in _QUANTITY else (previous,)
        found = []
        for name in names:
            context = self._context(name)
            found.append((name, 1.0 / context[0], context[1]) if context else (name, 0.0, 1.0))
        return found

    # -- restoring --

    def forms(self, word: str) -> tuple[str, ...]:
        """The forms an unaccented word may stand for (itself when it is kept as it is)."""
        lower = _lower(word)
        if has_marks(lower):
            return (lower,)
        return self._forms.get(lower, (lower,))

    def needs_restoring(self, text: str) -> bool:
        """Whether ``text`` reads as Vietnamese typed (mostly) without marks."""
        if detect_language(text) != "vi":
            return False
        marked = ambiguous = 0
        for word in _LETTERS.findall(unicodedata.normalize("NFC", text)):
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
                    lattice.append((_NUMBER,))
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
                if form is not None and form != _lower(word):
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
        scores = {_BOUNDARY: 0.0}  # the best log-probability of a path ending in each form
        back: list[dict[str, str]] = []  # per position: form -> the form before it
        for forms in [*lattice, (_BOUNDARY,)]:
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
        form = _BOUNDARY
        path = []
        for pointers in reversed(back[1:]):
            form = pointers[form]
            path.append(form)
        return path[::-1]


def _token_clauses(text: str) -> Iterable[list[re.Match[str]]]:
    """The tokens of an NFC text, grouped by clause."""
    clause: list[re.Match[str]] = []
    for match in _TOKEN.finditer(text):
        if clause and not _JOINER.fullmatch(text, clause[-1].end(), match.start()):
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
