"""Facts answers about the values of the majors a question names: a score set against their
cut-offs, their cut-offs, quotas, fees or combinations, and whether they take a combination or
a method."""

from __future__ import annotations

from dataclasses import dataclass

from bot.answer.facts.citing import FactsReply
from bot.answer.facts.question import FactsQuestion
from bot.answer.facts.rows import rows_for, rows_for_all, year_held
from bot.answer.facts.wording import ATTRIBUTE_NAMES, amount, number, row_label, yes_or_no
from bot.core.types import Language
from retrieval.facts.book import FactsBook
from retrieval.facts.model import COMBINATIONS, CUTOFF, FEE, Fact, Place


@dataclass(frozen=True)
class Now:
    """What "now" is for one question: the admission year, and the documents' sentence on when
    its cut-offs are published (if the search found one)."""

    admission_year: int
    publication: tuple[str, Place] | None


def score_check(
    asked: FactsQuestion, book: FactsBook, language: Language, now: Now
) -> FactsReply | None:
    score = asked.score
    assert score is not None  # checked by the caller
    asked, missing = year_held(asked, book, CUTOFF)
    lines: list[str] = []
    places: list[Place] = []
    for major in asked.majors:
        rows = rows_for(book, major, CUTOFF, asked, on_scale_of=score)
        if not rows:
            return None
        for fact in rows:
            places.append(fact.place)
            lines.append(_compared(fact, score, len(places), language))
    year = max(f.year for f in rows_for_all(book, asked.majors, CUTOFF, asked, score))
    lead = (
        f"So với điểm chuẩn năm {year} (mới nhất mình có), {number(score)} điểm của bạn:"
        if language == "vi"
        else f"Against the {year} cut-off (the latest I have), your {number(score)} points:"
    )
    caveat = _caveat(year, missing, places, language, now)
    body = "\n".join([lead, *lines, "", caveat])
    return FactsReply(body, places, "score check")


def _compared(fact: Fact, score: float, n: int, language: Language) -> str:
    label = row_label(fact, language)
    if not fact.offered:
        return (
            f"- {label}: không xét theo phương thức này [{n}]."
            if language == "vi"
            else f"- {label}: not admitted this way [{n}]."
        )
    assert fact.value is not None
    gap = round(score - fact.value, 2)
    if language == "vi":
        verdict = (
            f"cao hơn {number(gap)} điểm"
            if gap > 0
            else f"thấp hơn {number(-gap)} điểm"
            if gap < 0
            else "bằng điểm chuẩn"
        )
        return f"- {label}: điểm chuẩn {fact.text} [{n}], {number(score)} {verdict}."
    verdict = (
        f"{number(gap, 'en')} above"
        if gap > 0
        else f"{number(-gap, 'en')} below"
        if gap < 0
        else "equal to the cut-off"
    )
    return f"- {label}: cut-off {fact.text} [{n}], {number(score, 'en')} is {verdict}."


def values(asked: FactsQuestion, book: FactsBook, language: Language) -> FactsReply | None:
    attribute = asked.attribute
    assert attribute is not None
    asked, missing = year_held(asked, book, attribute)
    lines: list[str] = []
    places: list[Place] = []
    held: set[int] = set()
    for major in asked.majors:
        rows = rows_for(book, major, attribute, asked)
        if not rows:
            return None
        for fact in rows:
            held.add(fact.year)
            places.append(fact.place)
            value = (
                ", ".join(fact.combinations)
                if attribute == COMBINATIONS
                else amount(fact)
                if attribute == FEE
                else fact.text
                if fact.offered
                else ("không xét" if language == "vi" else "not admitted this way")
            )
            label = row_label(fact, language, code=True)  # the table gives the code
            lines.append(f"- {label}, {fact.year}: {value} [{len(places)}]")
    name = ATTRIBUTE_NAMES[attribute][0 if language == "vi" else 1]
    lead = f"{name.capitalize()}:"
    if missing is not None:
        lead = (
            f"Mình chưa có {name} năm {missing}; {name} mới nhất mình có:"
            if language == "vi"
            else f"I do not have the {missing} {name} yet; the latest I have:"
        )
    # "so 2024 vs 2025": the years named that no row quoted has are said to be missing
    absent = ", ".join(str(y) for y in sorted(asked.years - held))
    if absent and missing is None:
        lines.append(
            f"Mình chưa có {name} năm {absent}."
            if language == "vi"
            else f"I do not have the {absent} {name}."
        )
    return FactsReply("\n".join([lead, *lines]), places, attribute)


def whether(asked: FactsQuestion, book: FactsBook, language: Language) -> FactsReply | None:
    lines: list[str] = []
    places: list[Place] = []
    for major in asked.majors:
        if asked.combination:
            rows = rows_for(book, major, COMBINATIONS, asked)
            if not rows:
                return None
            fact = rows[0]
            places.append(fact.place)
            listed = ", ".join(fact.combinations)
            more = (
                f"; các tổ hợp xét tuyển: {listed}"
                if language == "vi"
                else f"; combinations: {listed}"
            )
            lines.append(
                yes_or_no(asked.combination in fact.combinations, fact, asked.combination, language)
                + f"{more} [{len(places)}]."
            )
            continue
        rows = [f for f in rows_for(book, major, CUTOFF, asked) if f.method == asked.method]
        if not rows or rows[0].year < book.newest_year:
            # A "—" in a past round's table: this year's rule is in the documents.
            return None
        for fact in rows:
            places.append(fact.place)
            cutoff = ""
            if fact.offered:
                cutoff = (
                    f", điểm chuẩn {fact.text}" if language == "vi" else f", cut-off {fact.text}"
                )
            lines.append(
                yes_or_no(fact.offered, fact, str(fact.method), language)
                + f"{cutoff} [{len(places)}]."
            )
    return FactsReply("\n".join(lines), places, "whether")


def _caveat(
    year: int, missing: int | None, places: list[Place], language: Language, now: Now
) -> str:
    """That this is an earlier year's cut-off, this year's not being known yet (with the
    documents' word on when it is published), or that later ones may differ."""
    current = missing or (now.admission_year if year < now.admission_year else None)
    if current is None:
        return (
            f"Điểm chuẩn các năm sau có thể khác năm {year}: bạn chỉ nên xem đây là tham khảo."
            if language == "vi"
            else f"Later cut-offs may differ from {year}'s: take this as a guide only."
        )
    said = (
        f"Điểm chuẩn năm {current} chưa có trong dữ liệu của mình (có thể chưa được công "
        f"bố); điểm chuẩn năm {year} chỉ để bạn tham khảo."
        if language == "vi"
        else f"The {current} cut-off is not in my data (it may not be published yet); "
        f"the {year} one is a guide only."
    )
    if now.publication is not None and current == now.admission_year:
        sentence, place = now.publication
        places.append(place)
        said += f" {sentence} [{len(places)}]"
    return said
