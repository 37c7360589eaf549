"""Facts answers across the catalogue: every major it admits to, the majors that take a
combination, the highest or lowest cut-off or quota, two majors compared, whether the school has
a major, and a plain no for a major or programme it does not have."""

from __future__ import annotations

from bot.answer.facts.citing import FactsReply
from bot.answer.facts.question import FactsQuestion
from bot.answer.facts.rows import cell, closest_majors, named_majors, rows_for
from bot.answer.facts.wording import ATTRIBUTE_NAMES, row_label
from bot.core.types import Language
from retrieval.facts.book import FactsBook
from retrieval.facts.model import COMBINATIONS, QUOTA, Fact, Place
from retrieval.text.folding import fold


def majors_taking(combination: str, book: FactsBook, language: Language) -> FactsReply | None:
    """ "Những ngành nào xét D07": the majors whose latest combinations include it."""
    latest: dict[tuple[str, str | None], Fact] = {}
    for f in book.facts:
        if f.attribute == COMBINATIONS:
            key = (fold(f.major), f.programme)
            if key not in latest or f.year > latest[key].year:
                latest[key] = f
    if not latest:
        return None
    taking = [f for f in latest.values() if combination in f.combinations]
    places = [f.place for f in taking] or [next(iter(latest.values())).place]
    names = "; ".join(
        f"{row_label(f, language, method=False, code=True).removeprefix('Ngành ')} ({f.year}) [{n}]"
        for n, f in enumerate(taking, start=1)
    )
    if language == "vi":
        body = (
            f"Các ngành xét tổ hợp {combination}: {names}."
            if taking
            else f"Theo bảng tổ hợp mình có, không ngành nào xét tổ hợp {combination} [1]."
        )
    else:
        body = (
            f"Majors that take {combination}: {names}."
            if taking
            else f"In the combinations table I have, no major takes {combination} [1]."
        )
    return FactsReply(body, places, "majors by combination")


def extreme(asked: FactsQuestion, book: FactsBook, language: Language) -> FactsReply | None:
    """ "Ngành nào điểm chuẩn cao nhất": per method (in the table's order), the major with
    the highest (lowest) value of the latest year; every programme counts."""
    attribute = asked.attribute
    rows = [
        f for f in book.facts
        if f.attribute == attribute and f.offered and f.value is not None
        and (asked.method is None or f.method == asked.method)
        and (asked.programme is None or f.programme == asked.programme)
        and (asked.year is None or f.year == asked.year)
        and (asked.campus is None or f.campus in (asked.campus, None))
    ]  # fmt: skip
    if not rows:
        return None
    year = max(f.year for f in rows)
    by_method: dict[tuple[str | None, str | None], list[Fact]] = {}
    for f in rows:
        if f.year == year:
            by_method.setdefault((f.method, f.campus), []).append(f)
    pick = max if asked.extreme == "highest" else min
    lines: list[str] = []
    places: list[Place] = []
    for facts in by_method.values():
        best = pick(f.value for f in facts if f.value is not None)
        for f in facts:
            if f.value == best:
                places.append(f.place)
                lines.append(f"- {row_label(f, language)}: {f.text} [{len(places)}]")
    name = ATTRIBUTE_NAMES[str(attribute)][0 if language == "vi" else 1]
    if language == "vi":
        word = "cao nhất" if asked.extreme == "highest" else "thấp nhất"
        if attribute == QUOTA:
            word = "nhiều nhất" if asked.extreme == "highest" else "ít nhất"
        lead = f"Ngành có {name} {word} năm {year}:"
    else:
        word = "highest" if asked.extreme == "highest" else "lowest"
        lead = f"The {word} {name} of {year}:"
    return FactsReply("\n".join([lead, *lines]), places, "extreme")


def comparison(asked: FactsQuestion, book: FactsBook, language: Language) -> FactsReply | None:
    """ "Mạng máy tính với ATTT ngành nào chỉ tiêu nhiều hơn": the two values side by side
    for each programme and method both have in one year, and which is higher."""
    attribute = str(asked.attribute)
    first, second = asked.majors[:2]
    a_rows = rows_for(book, first, attribute, asked)
    b_rows = {cell(f): f for f in rows_for(book, second, attribute, asked)}
    pairs = [
        (a, b_rows[cell(a)])
        for a in a_rows
        if cell(a) in b_rows and a.value is not None and b_rows[cell(a)].value is not None
    ]
    if not pairs:
        return None
    lines: list[str] = []
    places: list[Place] = []
    for a, b in pairs:
        places.extend((a.place, b.place))
        n = len(places)
        assert a.value is not None
        assert b.value is not None
        if language == "vi":
            more = "nhiều hơn" if attribute == QUOTA else "cao hơn"
            verdict = (
                f"{a.major} {more}" if a.value > b.value
                else f"{b.major} {more}" if b.value > a.value else "bằng nhau"
            )  # fmt: skip
            label = ", ".join(
                x
                for x in (
                    a.programme and f"chương trình {a.programme}",
                    a.method and f"phương thức {a.method}",
                    a.campus and f"cơ sở {a.campus}",
                )
                if x
            )
            lines.append(
                f"- {a.year}{', ' + label if label else ''}: {a.major} {a.text} [{n - 1}], "
                f"{b.major} {b.text} [{n}]: {verdict}."
            )
        else:
            more = "more" if attribute == QUOTA else "higher"
            verdict = (
                f"{a.major} has {more}" if a.value > b.value
                else f"{b.major} has {more}" if b.value > a.value else "equal"
            )  # fmt: skip
            label = ", ".join(
                x for x in (a.programme, a.method, a.campus and f"{a.campus} campus") if x
            )
            lines.append(
                f"- {a.year}{', ' + label if label else ''}: {a.major} {a.text} [{n - 1}], "
                f"{b.major} {b.text} [{n}]: {verdict}."
            )
    name = ATTRIBUTE_NAMES[attribute][0 if language == "vi" else 1]
    return FactsReply("\n".join([f"{name.capitalize()}:", *lines]), places, "comparison")


def has_major(
    asked: FactsQuestion, standard: bool, book: FactsBook, language: Language
) -> FactsReply | None:
    """Yes, with the major's code, in the programmes its tables list it under when that is
    not the standard one; None when the question names a programme (or the standard one)
    the tables do not list it in: what the documents say answers that."""
    places = []
    lines = []
    for major in asked.majors:
        facts = [f for f in book.facts if fold(f.major) == fold(major.name)]
        programmes = {f.programme for f in facts}
        if asked.programme is not None:
            facts = [f for f in facts if f.programme == asked.programme]
        elif standard and facts:
            facts = [f for f in facts if f.programme is None]
        if (asked.programme is not None or standard) and not facts:
            return None
        only = sorted(p for p in programmes if p) if None not in programmes else []
        code = (
            f" (mã {major.code})"
            if major.code and language == "vi"
            else (f" (code {major.code})" if major.code else "")
        )
        cite = ""
        if facts:
            places.append(facts[0].place)
            cite = f" [{len(places)}]"
        within = ""
        if only and asked.programme is None:
            within = f", hệ {', '.join(only)}" if language == "vi" else f", {', '.join(only)} only"
        lines.append(
            f"Có, trường đào tạo ngành {major.name}{code}{within}{cite}."
            if language == "vi"
            else f"Yes, the school offers {major.name}{code}{within}{cite}."
        )
    return FactsReply("\n".join(lines), places, "has major")


def all_majors(book: FactsBook, language: Language) -> FactsReply | None:
    """ "Trường có những ngành nào": every major of the catalogue, cited by its tables."""
    names = named_majors(book.majors)
    places = list(dict.fromkeys(f.place for f in book.facts))[:1]
    if not names or not places:
        return None
    if language == "vi":
        body = f"Trường tuyển sinh {len(names)} ngành: {'; '.join(names)} [1]."
    else:
        body = f"The school admits to {len(names)} majors: {'; '.join(names)} [1]."
    return FactsReply(body, places, "every major")


def no_such_major(name: str, book: FactsBook, language: Language) -> FactsReply:
    closest = closest_majors(name, book)
    shown = ", ".join(m.name for m in closest)
    if language == "vi":
        body = (
            f"Theo danh mục ngành tuyển sinh mình có, trường chưa đào tạo ngành {name}. "
            + (f"Các ngành gần nhất: {shown}." if closest else "")
            + f"\nCác ngành trường đang tuyển: {', '.join(named_majors(book.majors))}."
        )
    else:
        body = (
            f"In the school's list of majors I have, there is no {name}. "
            + (f"The closest: {shown}." if closest else "")
            + f"\nMajors the school admits to: {', '.join(named_majors(book.majors))}."
        )
    places = list(dict.fromkeys(f.place for f in book.facts))[:1]
    return FactsReply(body, places, "no such major")


def no_such_programme(name: str, book: FactsBook, language: Language) -> FactsReply:
    offered = ", ".join(book.programmes)
    if language == "vi":
        body = f"Theo thông tin tuyển sinh mình có, trường chưa đào tạo hệ {name}." + (
            f" Ngoài chương trình chuẩn, trường có: {offered}." if offered else ""
        )
    else:
        body = f"In the admission information I have, the school has no {name} programme." + (
            f" Besides the standard programme it offers: {offered}." if offered else ""
        )
    places = list(dict.fromkeys(f.place for f in book.facts))[:1]
    return FactsReply(body, places, "no such programme")
