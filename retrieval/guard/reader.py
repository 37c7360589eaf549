"""Reading a text with the guard's vocabulary: the values each category names in it, and where
it names them (the words that said each value: a question's reading shows staff "hp" for học
phí, bot.answer.read). ``NearMissGuard`` (retrieval.guard.checks) builds the vocabulary and
compares what is read here."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import cache

from retrieval.guard.categories import Category
from retrieval.guard.verdicts import Facets, Span
from retrieval.text.terms import tokens

_HIDDEN = "|"  # stands in for words an earlier match used; no pattern matches across it
_FACET_CACHE = 20_000  # texts whose facets are remembered (FAQ questions, answers, variants)
# A text as read: its facets, its words (``tokens``), and each value with the words that said it
# (category, value, first word, end word); made into characters of the text only when asked.
_Read = tuple[Facets, list[str], list[tuple[str, str, int, int]]]


class VocabularyReader:
    """The reading half of the guard: aliases (longest first), then each category's patterns."""

    _categories: list[Category]
    _aliases: dict[tuple[str, ...], tuple[tuple[str, str], ...]]
    _longest: int
    _by_name: dict[str, Category]
    _facet_cache: dict[str, _Read]

    def facets(self, text: str) -> Facets:
        """The values each category finds in ``text``; categories with none are left out.

        Remembered per text (FAQ questions and answers are read again for every question)."""
        return self._read(text)[0]

    def spans(self, text: str) -> tuple[Span, ...]:
        """Where ``text`` says each value ``facets`` finds: the characters of the words that
        said it, one span per time it is said (a value read out of words that are not whole
        words of ``text``, rarely, has none)."""
        _, words, said = self._read(text)
        return _spans(text, words, said)

    def _read(self, text: str) -> _Read:
        found = self._facet_cache.get(text)
        if found is None:
            if len(self._facet_cache) >= _FACET_CACHE:
                self._facet_cache.clear()
            found = self._facet_cache[text] = self._read_facets(text)
        return found

    def _read_facets(self, text: str) -> _Read:
        """Aliases first, longest first; then each category's patterns over the words left.
        Each value is kept with the words (indexes into ``tokens``) that said it."""
        text = text.replace("%", " phần trăm ")
        words = tokens(text)
        found: dict[str, set[str]] = {}
        said: list[tuple[str, str, int, int]] = []
        # read as written only when a word that rules a name out is met (rarely)
        written = cache(lambda: _as_written(text, words))
        rest, spans = self._match_aliases(words, found, said, written)
        owners: list[tuple[int, int] | None] = []  # made at the first match: most texts have few
        for category in self._categories:
            values = found.setdefault(category.name, set())
            for extractor in category.patterns:
                if extractor.pattern.search(rest) is None:
                    continue
                if not owners:
                    owners = _owners(rest, spans)
                pieces: list[str] = []
                kept: list[tuple[int, int] | None] = []
                last = 0
                for match in extractor.pattern.finditer(rest):
                    value = extractor.read(match)
                    values.add(value)
                    words_of = _words_of(owners[match.start() : match.end()])
                    if words_of is not None:
                        said.append((category.name, value, *words_of))
                    pieces += [rest[last : match.start()], _HIDDEN]
                    kept += [*owners[last : match.start()], words_of]
                    last = match.end()
                # as ``re.sub`` would: each match stands in for the words it used
                rest = "".join([*pieces, rest[last:]])
                owners = [*kept, *owners[last:]]
        facets = {name: frozenset(values) for name, values in found.items() if values}
        return facets, words, said

    def _match_aliases(
        self,
        words: list[str],
        found: dict[str, set[str]],
        said: list[tuple[str, str, int, int]],
        written: Callable[[], _Written | None] | None = None,
    ) -> tuple[str, list[tuple[int, int]]]:
        """Record the aliases in ``words``, longest first (and in ``said``, the words of each);
        return the words left for patterns, and the words each of them stands for."""
        rest: list[str] = []
        spans: list[tuple[int, int]] = []
        i = 0
        while i < len(words):
            for size in range(min(self._longest, len(words) - i), 0, -1):
                key = tuple(words[i : i + size])
                names = self._aliases.get(key)
                if names is None:
                    continue
                for category, value in names:
                    if not self._after_excluded(category, words, i, written):
                        found.setdefault(category, set()).add(value)
                        said.append((category, value, i, i + size))
                rest.append(_HIDDEN)
                spans.append((i, i + size))
                i += size
                break
            else:
                rest.append(words[i])
                spans.append((i, i + 1))
                i += 1
        return " ".join(rest), spans

    def _after_excluded(
        self,
        category: str,
        words: list[str],
        start: int,
        written: Callable[[], _Written | None] | None = None,
    ) -> bool:
        """Whether the alias at ``start`` follows a word that makes it something else ("viện"
        before a major: an institute's name), in its clause, and, where the text is known as
        written, written alike ("nghiên cứu viên | Kỹ thuật Phần mềm" names the major)."""
        spec = self._by_name[category]
        for n, w in enumerate(spec.not_after):
            first = start - len(w)
            if first < 0 or tuple(words[first:start]) != w:
                continue
            known = written() if written is not None else None
            if known is None:
                return True
            forms, breaks = known
            if any(i in breaks for i in range(first + 1, start + 1)):
                continue  # another clause, cell or line
            as_written = spec.not_after_written[n] if n < len(spec.not_after_written) else ()
            said = tuple(forms[first:start])
            if not any(_marked(f) for f in said) or len(as_written) != len(w):
                return True  # written without marks: folded, it is the word
            if said == as_written:
                return True
        return False

    def entity_spans(self, text: str) -> list[tuple[int, int, str]]:
        """Where ``text`` names a value: (first word, end word, category), by index into
        ``text.split()``. Aliases may span words; patterns (years, numbers) are tried one
        word at a time. Used to carry a follow-up's new value into the previous question."""
        owner: list[int] = []
        flat: list[str] = []
        for n, word in enumerate(text.split()):
            for token in tokens(word):
                flat.append(token)
                owner.append(n)
        spans: list[tuple[int, int, str]] = []
        taken: set[int] = set()
        i = 0
        while i < len(flat):
            for size in range(min(self._longest, len(flat) - i), 0, -1):
                names = self._aliases.get(tuple(flat[i : i + size]))
                if names is None:
                    continue
                for name in dict.fromkeys(c for c, _ in names):
                    if not self._after_excluded(name, flat, i):
                        spans.append((owner[i], owner[i + size - 1] + 1, name))
                taken.update(range(owner[i], owner[i + size - 1] + 1))
                i += size
                break
            else:
                i += 1
        for n, word in enumerate(text.split()):
            if n in taken:
                continue
            normal = " ".join(tokens(word))
            for category in self._categories:
                if normal and any(e.pattern.search(normal) for e in category.patterns):
                    spans.append((n, n + 1, category.name))
                    break
        return sorted(spans)

    def unread(self, text: str) -> str:
        """``text`` without the words that name a value (what ``entity_spans`` finds): what is
        left is what the vocabulary does not know, for tier 1's word coverage."""
        taken = {i for start, end, _ in self.entity_spans(text) for i in range(start, end)}
        # A name taken out ends a clause: the words around it do not make a pair.
        return " ".join(w if i not in taken else ";" for i, w in enumerate(text.split()))


# Each token of a text (``tokens``) as written, lower case with its marks ("" where unknown),
# and the tokens that open a clause, cell or line (punctuation or a line break before them).
_Written = tuple[list[str], frozenset[int]]
_WORD = re.compile(r"[^\W_]+")


def _as_written(text: str, words: list[str]) -> _Written | None:
    """The tokens of ``text`` as written, aligned with ``words`` (its ``tokens``), or None when
    they do not align (a number written with separators, a token folding makes two)."""
    forms: list[str] = []
    breaks: set[int] = set()
    gap = False
    for chunk in re.split(r"(\s+)", text):
        if not chunk or chunk.isspace():
            gap = gap or "\n" in chunk
            continue
        folded = tokens(chunk)
        if not folded:
            gap = True  # "|", "–", "…": a separator of its own
            continue
        found = _WORD.findall(chunk.lower())
        if gap or not chunk[0].isalnum():
            breaks.add(len(forms))
        forms += found if len(found) == len(folded) else [""] * len(folded)
        gap = not chunk[-1].isalnum() and chunk[-1] not in ")]"
    return (forms, frozenset(breaks)) if len(forms) == len(words) else None


def _marked(word: str) -> bool:
    return not word.isascii()


def _owners(rest: str, spans: Sequence[tuple[int, int]]) -> list[tuple[int, int] | None]:
    """For each character of ``rest`` (words joined by spaces), the words it stands for (None
    for the spaces between)."""
    owners: list[tuple[int, int] | None] = []
    for word, span in zip(rest.split(" "), spans, strict=True):
        if owners:
            owners.append(None)
        owners += [span] * len(word)
    return owners


def _words_of(owners: Sequence[tuple[int, int] | None]) -> tuple[int, int] | None:
    """The words (first, end) the characters of a match stand for; None for none."""
    spans = [o for o in owners if o is not None]
    if not spans:
        return None
    return min(s for s, _ in spans), max(e for _, e in spans)


def _spans(
    text: str, words: Sequence[str], said: Sequence[tuple[str, str, int, int]]
) -> tuple[Span, ...]:
    """``said`` (a value and the indexes of the ``words`` that said it) as characters of
    ``text``: a word is said by the whitespace-separated run of ``text`` it comes from. None
    when the runs, read one by one, do not give the same words (``tokens`` reads the whole
    text at once)."""
    places: list[tuple[int, int]] = []
    read: list[str] = []
    for run in re.finditer(r"\S+", text):
        mine = tokens(run.group().replace("%", " phần trăm "))
        read += mine
        places += [(run.start(), run.end())] * len(mine)
    if read != list(words):
        return ()
    return tuple(
        dict.fromkeys(
            Span(category, value, places[first][0], places[end - 1][1])
            for category, value, first, end in said
            if end > first
        )
    )
