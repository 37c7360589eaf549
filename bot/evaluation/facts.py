"""Catalogue and facts questions (issue 2/4): score checks, "does the school have X" (yes and
no), score checks that name no major (ambiguous: no verdict may be given), two majors compared,
and lists (the majors taking a combination, the lowest cut-off), each asked as written and folded
and scored on the answer's text.

A cases file is JSON Lines, one question a line::

    {"question": "em được 27,8 điểm thi THPT có đỗ ngành Khoa học máy tính không ạ",
     "kind": "score_check", "name": "Khoa học máy tính", "cutoff": "27.3", "year": 2024,
     "above": true}
    {"question": "trường có ngành Dược không ạ", "kind": "negative", "name": "Dược"}
    {"question": "trường có ngành Khoa học máy tính không ạ", "kind": "positive",
     "name": "Khoa học máy tính"}
    {"question": "em được 25 điểm thì có đỗ không ạ", "kind": "ambiguous"}
    {"question": "điểm chuẩn THPT ngành KHMT với ngành CNTT ngành nào cao hơn",
     "kind": "comparison", "name": "Khoa học máy tính", "other": "Công nghệ thông tin"}
    {"question": "những ngành nào xét tổ hợp D07", "kind": "list",
     "values": ["Khoa học máy tính", "Kỹ thuật phần mềm"]}

A score check is right when a line of the answer about the major (its standard programme: no
"chương trình" named) states the cut-off as the table writes it with the right comparison, and
the answer names the year; it is confidently wrong when it is not right and not the fallback but
states a comparison or a line about the major. A negative is right when it says the school does
not offer the major, and confidently wrong ("yes-like") when any other answer than the fallback
is given. A positive is right when it says yes. An ambiguous one is right when no comparison is
stated. A comparison is right when its first verdict (the standard programme's, listed first)
says ``name`` is higher (more), and confidently wrong when it says ``other`` is. A list is right
when the answer names every one of ``values`` (majors or figures), and confidently wrong when it
answers without one of them."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from bot.answer.replies import Answer
from bot.core.errors import DatasetError
from bot.evaluation.data import json_rows
from retrieval.text.folding import fold

KINDS = ("score_check", "negative", "positive", "ambiguous", "comparison", "list")


@dataclass(frozen=True)
class FactsCase:
    question: str
    kind: str
    name: str = ""
    cutoff: str = ""
    year: int = 0
    above: bool = False
    other: str = ""  # a comparison's lower major
    values: tuple[str, ...] = ()  # what a list must name


@dataclass(frozen=True)
class FactsOutcome:
    case: FactsCase
    form: str  # "written" or "folded"
    asked: str
    tier: str
    answer: str
    right: bool
    wrong: bool


def read_facts_cases(path: Path) -> list[FactsCase]:
    """The cases of ``path``, or DatasetError naming the first bad line."""
    cases = []
    for number, row in json_rows(path):
        where = f"{path}:{number}"
        try:
            case = FactsCase(**row)
        except TypeError as exc:
            raise DatasetError(f"{where}: {exc}") from exc
        if case.kind not in KINDS or not str(case.question).strip():
            raise DatasetError(f"{where}: `kind` must be one of {', '.join(KINDS)}")
        if case.kind == "score_check" and not (case.name and case.cutoff and case.year):
            raise DatasetError(f"{where}: a score check needs `name`, `cutoff` and `year`")
        if case.kind == "comparison" and not (case.name and case.other):
            raise DatasetError(f"{where}: a comparison needs `name` and `other`")
        if case.kind == "list" and not (case.values and isinstance(case.values, list | tuple)):
            raise DatasetError(f"{where}: a list needs `values`")
        cases.append(replace(case, values=tuple(str(v) for v in case.values)))
    return cases


def judge(case: FactsCase, tier: str, answer: str) -> tuple[bool, bool]:
    """(right, confidently wrong) for one answer."""
    folded = fold(answer)
    answered = tier != "fallback"
    if case.kind == "negative":
        said_no = "chua dao tao" in folded or "there is no" in folded
        return said_no, answered and not said_no
    if case.kind == "positive":
        said_yes = folded.startswith(("co, truong dao tao", "yes, the school"))
        return said_yes, "chua dao tao" in folded or "there is no" in folded
    if case.kind == "ambiguous":
        verdict = any(w in folded for w in ("cao hon", "thap hon", " above", " below"))
        return not verdict, verdict
    if case.kind == "comparison":
        first = next((x for x in folded.splitlines() if any(w in x for w in _HIGHER)), "")
        said = {m: any(f"{fold(m)} {w}" in first for w in _HIGHER) for m in (case.name, case.other)}
        return said[case.name], said[case.other]
    if case.kind == "list":
        named = all(fold(v) in folded for v in case.values)
        return named, answered and not named
    name = fold(case.name)
    lines = [
        fold(line)
        for line in answer.splitlines()
        if name in fold(line) and "chuong trinh" not in fold(line)
    ]
    want = "cao hon" if case.above else "thap hon"
    value = fold(case.cutoff)
    right = str(case.year) in answer and any(value in x and want in x for x in lines)
    compared = any("cao hon" in x or "thap hon" in x for x in lines)
    return right, answered and not right and (compared or bool(lines))


_HIGHER = ("cao hon", "nhieu hon", "has higher", "has more")

Ask = Callable[[str], Awaitable[Answer]]


async def ask_facts(
    cases: Sequence[FactsCase], ask: Ask, on_case: Callable[[int], None] | None = None
) -> list[FactsOutcome]:
    """Every case asked as written, then folded."""
    outcomes = []
    for form in ("written", "folded"):
        for case in cases:
            asked = case.question if form == "written" else fold(case.question)
            answer = await ask(asked)
            right, wrong = judge(case, answer.tier, answer.answer)
            outcomes.append(
                FactsOutcome(case, form, asked, answer.tier, answer.answer, right, wrong)
            )
            if on_case is not None:
                on_case(1)
    return outcomes


def facts_report(outcomes: Sequence[FactsOutcome], name: str) -> tuple[dict[str, Any], str]:
    """The figures by form and kind, and every reply that is not right, to read."""
    rows: dict[tuple[str, str], list[int]] = {}
    for o in outcomes:
        counts = rows.setdefault((o.form, o.case.kind), [0, 0, 0])
        counts[0] += 1
        counts[1] += o.right
        counts[2] += o.wrong
    table = [
        {"form": form, "kind": kind, "questions": n, "right": right, "confidently_wrong": wrong}
        for (form, kind), (n, right, wrong) in rows.items()
    ]
    lines = [
        f"# Catalogue and facts questions: {name}",
        "",
        "| form | kind | questions | right | confidently wrong |",
        "|---|---|---:|---:|---:|",
        *(
            f"| {r['form']} | {r['kind']} | {r['questions']} | {r['right']} | "
            f"{r['confidently_wrong']} |"
            for r in table
        ),
        "",
        "## Replies not right",
    ]
    misses = [o for o in outcomes if not o.right]
    for o in misses:
        flag = "CONFIDENTLY WRONG" if o.wrong else "not right"
        lines += ["", f"### {o.case.kind}, {o.form}: {flag}, tier {o.tier}", "",
                  f"- question: {o.asked!r}", "", "```", o.answer, "```"]  # fmt: skip
    if not misses:
        lines += ["", "None."]
    data = {
        "name": name,
        "rows": table,
        "misses": [
            {
                **asdict(o.case),
                "form": o.form,
                "tier": o.tier,
                "answer": o.answer,
                "confidently_wrong": o.wrong,
            }
            for o in misses
        ],
    }
    return data, "\n".join(lines)
