"""How the facts answers write a table's row: its label, a fee with what it is per, a yes or
no, a number in the student's language, and the attributes' names."""

from __future__ import annotations

from bot.core.types import Language
from retrieval.facts.model import COMBINATIONS, CUTOFF, FEE, QUOTA, Fact

ATTRIBUTE_NAMES = {
    CUTOFF: ("điểm chuẩn", "cut-off scores"),
    QUOTA: ("chỉ tiêu", "quotas"),
    FEE: ("học phí", "tuition fees"),
    COMBINATIONS: ("tổ hợp xét tuyển", "subject combinations"),
}


def row_label(fact: Fact, language: Language, *, method: bool = True, code: bool = False) -> str:
    name = (
        f"{fact.major} ({'mã ' if language == 'vi' else 'code '}{fact.code})"
        if code and fact.code
        else fact.major
    )
    parts = [f"Ngành {name}" if language == "vi" else name]
    if fact.programme:
        parts.append(f"chương trình {fact.programme}" if language == "vi" else fact.programme)
    if fact.method and method:
        parts.append(f"phương thức {fact.method}" if language == "vi" else fact.method)
    if fact.campus:
        parts.append(f"cơ sở {fact.campus}" if language == "vi" else f"{fact.campus} campus")
    return ", ".join(parts)


def amount(fact: Fact) -> str:
    """A fee as its table writes it, with what it is per: "32.500.000 đồng/năm"."""
    per = fact.unit.split("/", 1)[1] if fact.unit and "/" in fact.unit else ""
    return f"{fact.text}/{per}" if per and "/" not in fact.text else fact.text


def yes_or_no(yes: bool, fact: Fact, what: str, language: Language) -> str:
    """ "Có, ngành X xét A01 (năm 2025)" or "Không, ngành X không xét A01 (năm 2025)"."""
    label = row_label(fact, language, method=False)
    if language == "vi":
        label = label[:1].lower() + label[1:]
        verb = "xét" if yes else "không xét"
        return f"{'Có' if yes else 'Không'}, {label} {verb} {what} (năm {fact.year})"
    verb = "takes" if yes else "does not take"
    return f"{'Yes' if yes else 'No'}, {label} {verb} {what} ({fact.year})"


def number(value: float, language: Language = "vi") -> str:
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return text.replace(".", ",") if language == "vi" else text
