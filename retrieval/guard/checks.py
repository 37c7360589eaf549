"""The guard's checks: the facets of a question and of an FAQ entry, compared by category."""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

from bot.core.errors import ConfigError
from retrieval.guard.categories import Category, Extractor, Policy, pattern_extractor, value_spec
from retrieval.guard.reader import VocabularyReader
from retrieval.guard.verdicts import Conflict, Facets, GuardVerdict, Missing
from retrieval.text.terms import tokens

# Kinds whose values are figures of their own sort: asked for one, another figure is no answer.
_FIGURES = frozenset({"money", "phone", "area", "requirement"})
_SHARE = re.compile(r"\b(?:phan tram|percent|percentage)\b")


class NearMissGuard(VocabularyReader):
    """Compares the facets of a question with those of the FAQ question it matched."""

    def __init__(self, vocabulary: Mapping[str, Any]) -> None:
        self.vocabulary = vocabulary  # as given: a school's catalogue extends it (guard.catalogue)
        self._categories: list[Category] = []
        # Word sequence -> the (category, value) pairs it names; () for an ignored phrase.
        self._aliases: dict[tuple[str, ...], tuple[tuple[str, str], ...]] = {}
        categories = vocabulary.get("categories") or {}
        if not isinstance(categories, Mapping):
            raise ConfigError("guard vocabulary: `categories` must be a mapping")
        for name, spec in categories.items():
            self._categories.append(self._add_category(str(name), spec or {}))
        ignore = vocabulary.get("ignore") or []
        if not isinstance(ignore, list):
            raise ConfigError("guard vocabulary: `ignore` must be a list of phrases")
        for phrase in ignore:
            key = tuple(tokens(str(phrase)))
            if key:
                self._aliases[key] = ()
        self._longest = max((len(k) for k in self._aliases), default=0)
        self._by_name = {c.name: c for c in self._categories}
        kinds = vocabulary.get("kinds") or {}
        try:
            self._kinds = {
                str(k): re.compile(str(v), re.IGNORECASE) for k, v in dict(kinds).items()
            }
        except (TypeError, ValueError, re.error) as exc:
            raise ConfigError(f"guard vocabulary, kinds: {exc}") from exc
        for category in self._categories:
            unknown = {k for ks in category.kinds.values() for k in ks} - set(self._kinds)
            if unknown:
                raise ConfigError(
                    f"guard vocabulary, category {category.name!r}: unknown kinds {sorted(unknown)}"
                )
        try:
            self._asks = {
                str(kind): tuple(re.compile(str(p)) for p in patterns or [])
                for kind, patterns in dict(vocabulary.get("asks") or {}).items()
            }
        except (TypeError, ValueError, re.error) as exc:
            raise ConfigError(f"guard vocabulary, asks: {exc}") from exc
        unknown_kinds = set(self._asks) - set(self._kinds)
        if unknown_kinds:
            raise ConfigError(f"guard vocabulary, asks: unknown kinds {sorted(unknown_kinds)}")
        entities = vocabulary.get("entities") or []
        if not isinstance(entities, list):
            raise ConfigError("guard vocabulary: `entities` must be a list of category names")
        self._entities = tuple(str(e) for e in entities if str(e) in self._by_name)
        # The entity categories a passage unit must name itself (or in its context) to answer
        # a question naming one: another school's figures are never this school's.
        must_name = vocabulary.get("must_name") or []
        if not isinstance(must_name, list):
            raise ConfigError("guard vocabulary: `must_name` must be a list of category names")
        self.named_by_answers = frozenset(str(c) for c in must_name if str(c) in self._by_name)
        self._facet_cache = {}

    def _add_category(self, name: str, spec: Mapping[str, Any]) -> Category:
        try:
            policy = Policy(**(spec.get("policy") or {}))
            if policy.mode not in ("overlap", "equal"):
                raise ValueError(f"policy mode must be overlap or equal, not {policy.mode!r}")
            if policy.covered not in ("always", "each", "if_named", "no"):
                raise ValueError(
                    f"policy covered must be always, each, if_named or no, not {policy.covered!r}"
                )
            patterns: list[Extractor] = []
            kinds: dict[str, tuple[str, ...]] = {}
            generic: set[str] = set()
            for value, aliases in (spec.get("values") or {}).items():
                value = str(value)
                alias_list, value_patterns = value_spec(aliases)
                if isinstance(aliases, Mapping) and aliases.get("kinds"):
                    kinds[value] = tuple(str(k) for k in aliases["kinds"])
                if isinstance(aliases, Mapping) and aliases.get("generic"):
                    generic.add(value)
                # The canonical name is an alias too, unless it is a bare number ("100" for
                # "toàn phần" must not claim every 100 in a question).
                names = alias_list if value.isdigit() else [value, *alias_list]
                for alias in names:
                    key = tuple(tokens(str(alias)))
                    if key:
                        self._aliases[key] = (*self._aliases.get(key, ()), (name, value))
                patterns += [Extractor(re.compile(p), value) for p in value_patterns]
            patterns += [pattern_extractor(p) for p in spec.get("patterns") or []]
            not_after = tuple(tuple(tokens(str(w))) for w in spec.get("not_after") or [])
            not_after_written = tuple(
                tuple(str(w).lower().split()) for w in spec.get("not_after") or []
            )
        except (AttributeError, TypeError, ValueError, re.error) as exc:
            raise ConfigError(f"guard vocabulary, category {name!r}: {exc}") from exc
        label = str(spec.get("label") or name)
        return Category(
            name,
            policy,
            not_after,
            tuple(patterns),
            label,
            MappingProxyType(kinds),
            frozenset(generic),
            not_after_written,
        )

    def for_school(
        self, own_values: Iterable[str], own_phrases: Iterable[str] = ()
    ) -> NearMissGuard:
        """This guard with the deploying school's own names read as nothing (1/4): the
        ``institution`` values its knowledge names as itself (``own_institutions``) and phrases
        from its settings (its name, the abbreviations students use). A question naming the
        school it asks is about names no *other* school."""
        values = frozenset(own_values)
        phrases = tuple(tuple(tokens(p)) for p in own_phrases if tokens(p))
        if not values and not phrases:
            return self
        guard = copy.copy(self)
        aliases = {
            key: tuple(p for p in pairs if not (p[0] == "institution" and p[1] in values))
            for key, pairs in self._aliases.items()
        }
        # An alias that named only the school itself is now an ignored phrase (an empty tuple):
        # matched, so its words are not read by another category either.
        for key in phrases:
            aliases[key] = ()
        guard._aliases = aliases
        guard._longest = max((len(k) for k in aliases), default=0)
        guard._facet_cache = {}
        return guard

    def own_institutions(self, texts: Sequence[str], min_share: float = 0.02) -> frozenset[str]:
        """The ``institution`` values that ``texts`` (the school's FAQ and document titles) name
        often enough to be the school itself: in at least two texts and ``min_share`` of them.
        Another school is named in passing, the school's own name throughout."""
        counts: dict[str, int] = {}
        for text in texts:
            for value in self.facets(text).get("institution", ()):
                counts[value] = counts.get(value, 0) + 1
        least = max(2.0, min_share * len(texts))
        return frozenset(v for v, n in counts.items() if n >= least)

    def label(self, category: str) -> str:
        """A category in staff's words (its ``label`` in the guard section), or its name."""
        found = self._by_name.get(category)
        return found.label if found is not None else category

    def check(
        self, query: str, faq_question: str, answer: str = "", *, mine: Facets | None = None
    ) -> GuardVerdict:
        """Whether the FAQ entry may answer ``query``: no category conflicts with its question,
        and every value asked in a ``covered`` category said by its question or its ``answer``
        (checked only when an answer is given). Its variants say nothing: a phrasing staff add
        does not make the answer say more (the self-check flags a variant the guard refuses).

        With an answer, a value the question names and the entry's question does not is no
        conflict when the answer says it ("Học phí ngành CNTT" and the entry "Học phí chương
        trình chuẩn" whose answer lists the fee of CNTT)."""
        mine = self.facets(query) if mine is None else mine  # the question read once, by the caller
        theirs = self.facets(faq_question)
        said = self._said((faq_question, answer)) if answer else {}
        conflicts = []
        for category in self._categories:
            q = mine.get(category.name, frozenset())
            f = theirs.get(category.name, frozenset())
            if not category.policy.conflicts(q, f) or category.compatible(q, f):
                continue
            if q and not f and not q.isdisjoint(said.get(category.name, ())):
                continue
            conflicts.append(Conflict(category.name, q, f, category.label))
        missing = self._missing(mine, said, answer) if answer else ()
        return GuardVerdict(not conflicts and not missing, tuple(conflicts), missing)

    def asked_kinds(self, question: str) -> frozenset[str]:
        """The kinds of value ``question`` asks for in so many words (`asks`: a date for "khi
        nào", a phone number for "sđt", an amount for "học phí bao nhiêu")."""
        folded = " ".join(tokens(question))
        kinds = {k for k, patterns in self._asks.items() if any(p.search(folded) for p in patterns)}
        if _SHARE.search(folded) or "%" in question:
            # "học bổng được bao nhiêu phần trăm học phí": a share of a fee, not an amount
            kinds.discard("money")
        elif kinds & _FIGURES:
            # "bao nhiêu tiền", "sđt là bao nhiêu", "tối thiểu mấy điểm": an amount, a number or
            # a threshold asked, not any figure ("3 tín chỉ" is no answer to what one credit
            # costs, nor "điểm mỗi môn = … / 3" to the least score one may apply with).
            kinds.discard("quantity")
        if "period" in kinds:
            # "từ ngày nào đến ngày nào": both ends asked, and one deadline gives only one
            kinds.discard("date")
        return frozenset(kinds)

    def hinted_kinds(self, question: str) -> frozenset[str]:
        """The kinds of value of the attributes ``question`` names (an amount for học phí, a
        date for hạn nộp), asked or only mentioned ("nếu nộp sau thời hạn thì sao")."""
        return self.kinds_of(self.facets(question))

    def kinds_of(self, found: Facets) -> frozenset[str]:
        """``hinted_kinds`` of a text read already (its ``facets``)."""
        kinds: set[str] = set()
        for category in self._categories:
            for value in found.get(category.name, ()):
                kinds.update(category.kinds.get(value, ()))
        return frozenset(kinds)

    def asked_attributes(self, question: str) -> frozenset[str]:
        """The ``attribute`` values ``question`` names, less the generic ones ("bao nhiêu
        tiền" asks only for an amount): what a passage answering it must say."""
        return self.attributes_of(self.facets(question))

    def attributes_of(self, found: Facets) -> frozenset[str]:
        """``asked_attributes`` of a text read already (its ``facets``)."""
        category = self._by_name.get("attribute")
        if category is None:
            return frozenset()
        return frozenset(found.get("attribute", ())) - category.generic

    def says_attribute(self, attributes: frozenset[str], text: str) -> bool:
        """Whether ``text`` says one of ``attributes`` (names it, or holds its kind of value:
        an amount says học phí)."""
        if not attributes:
            return True
        if attributes & self.facets(text).get("attribute", frozenset()):
            return True
        category = self._by_name.get("attribute")
        kinds = {k for a in attributes for k in (category.kinds.get(a, ()) if category else ())}
        return bool(kinds) and self.holds(kinds, text)

    def holds(self, kinds: Iterable[str], text: str) -> bool:
        """Whether ``text`` holds a value of one of ``kinds`` (a phone number, a date...)."""
        return any(self._kinds[k].search(text) for k in kinds if k in self._kinds)

    def entities(self, text: str) -> Facets:
        """The values ``text`` names in the `entities` categories: whom or what it is about."""
        return self.entities_of(self.facets(text))

    def entities_of(self, found: Facets) -> Facets:
        """``entities`` of a text read already (its ``facets``)."""
        return {name: found[name] for name in self._entities if name in found}

    def _said(self, texts: Sequence[str]) -> dict[str, set[str]]:
        said: dict[str, set[str]] = {}
        for text in texts:
            for name, values in self.facets(text).items():
                said.setdefault(name, set()).update(values)
        return said

    def _missing(
        self, mine: Facets, said: Mapping[str, set[str]], answer: str
    ) -> tuple[Missing, ...]:
        out = []
        for category in self._categories:
            asked = mine.get(category.name)
            rule = category.policy.covered
            if not asked or rule == "no":
                continue
            found = said.get(category.name, set())
            if rule == "if_named" and not found:
                continue
            unsaid = frozenset(
                v for v in asked if v not in found and not self._holds_kind(category, v, answer)
            )
            # One asked value said is enough for a category read with overlap (a question about
            # "CNTT và KHMT" is answered by an entry about either, as the conflict rule reads it).
            every = rule == "each" or category.policy.mode == "equal"
            if unsaid and (every or len(unsaid) == len(asked)):
                out.append(Missing(category.name, category.label, unsaid))
        return tuple(out)

    def _holds_kind(self, category: Category, value: str, answer: str) -> bool:
        kinds = category.kinds.get(value, ())
        return any(self._kinds[k].search(answer) for k in kinds)

    def missing_from(
        self,
        query: str,
        texts: Sequence[str],
        categories: Iterable[str],
        *,
        mine: Facets | None = None,
    ) -> dict[str, frozenset[str]]:
        """The values ``query`` names in ``categories`` that ``texts`` contradict.

        Tier 2's scope check, with each category's policy read against all the texts at once:
        passages about 2024 do not answer a question about 2025 (years conflict only when both
        sides name one), and this school's documents do not answer a question about another
        school (``query_only``: the passages must name it). The ``faq_only`` and ``equal`` sides
        of a policy do not apply: passages name many things a question does not.
        """
        mine = self.facets(query) if mine is None else mine  # the question read once, by the caller
        wanted = [c for c in self._categories if c.name in set(categories) and mine.get(c.name)]
        if not wanted:
            return {}
        seen: dict[str, set[str]] = {}
        for t in texts:
            for name, values in self.facets(t).items():
                seen.setdefault(name, set()).update(values)
        out: dict[str, frozenset[str]] = {}
        for category in wanted:
            asked, found = mine[category.name], seen.get(category.name, set())
            if (found and asked.isdisjoint(found)) or (not found and category.policy.query_only):
                out[category.name] = asked
        return out
