"""Syllables of accented text and their counts: the knowledge base's and the general ones that
every installation has (underthesea's lexicon and tagged sample, and our chat phrasing)."""

from __future__ import annotations

import importlib.util
import itertools
import json
import re
import unicodedata
import zlib
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path

from retrieval.text.datafiles import DATA_DIR
from retrieval.text.folding import fold

# A token: a number or a word of letters.
TOKEN = re.compile(r"(\d+(?:[.,/:]\d+)*)|([^\W\d_]+)")
# Between two tokens of one clause only blanks and joiners stand; anything else (a full stop, a
# comma, a bracket, an emoji) starts a new clause, whose first word has no left context.
CLAUSE_BREAK = re.compile(r"[^\w \t\-–—/&+'’]+")
JOINER = re.compile(r"[ \t\-–—/&+'’]*")
LETTERS = re.compile(r"[^\W\d_]+")
BOUNDARY = "<s>"
NUMBER = "<num>"
# One entry of the lexicon, and one word of the general text, against one occurrence in the
# knowledge base. Measured on the dev question sets (docs/benchmarks.md, "Diacritic restoration").
LEXICON_WEIGHT = 0.25
GENERAL_WEIGHT = 0.3
DISCOUNT = 0.75  # Kneser-Ney's absolute discount
_FORMAT = 1


def lower_nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text).lower()


def has_marks(word: str) -> bool:
    """Whether a word carries Vietnamese marks (tones, hats, breves, horns, đ)."""
    return not word.isascii() and fold(word) != word.lower()


def clauses(text: str) -> Iterable[list[str]]:
    """The lower-cased tokens of ``text`` by clause, numbers as one symbol."""
    for part in CLAUSE_BREAK.split(lower_nfc(text)):
        words = [NUMBER if number else word for number, word in TOKEN.findall(part)]
        if words:
            yield words


def _written_with_marks(words: Sequence[str]) -> bool:
    """A clause worth learning from: three or more words and none marked is unaccented
    Vietnamese (a chat-style FAQ variant) or another language."""
    letters = [w for w in words if w != NUMBER]
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
            for words in clauses(text):
                if _written_with_marks(words):
                    unigrams.update(words)
                    bigrams.update(zip([BOUNDARY, *words], [*words, BOUNDARY], strict=True))
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
            words = LETTERS.findall(lower_nfc(line))
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
