"""The language pack (retrieval.text.pack): every rule that reads its words, run over the table of
cases in tests/data/language_cases.yaml, and a pack that is wrong refused with a message that
names the section and the key."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from bot.answer.read import asking_parts
from bot.answer.reading import read_question
from bot.answer.small_talk import small_talk
from bot.answer.standalone import (
    asks_for_a_subject,
    looks_like_follow_up,
    read_alone,
    referred_category,
    stands_alone,
)
from bot.core.errors import ConfigError
from retrieval.guard.vocabulary import load_guard
from retrieval.query import asks_something, split_question
from retrieval.text.pack import PACK_FILE, load_pack, read_pack
from retrieval.text.vocabulary import load_text_processor

CASES_FILE = Path(__file__).parents[2] / "data" / "language_cases.yaml"
CASES: dict[str, list[dict[str, Any]]] = yaml.safe_load(CASES_FILE.read_text("utf-8"))


def _stands_alone(text: str) -> bool:
    return stands_alone(read_alone(text, load_guard(), load_text_processor()))


def _listing(text: str) -> bool:
    return read_question(text, load_guard()).listing


def _part_asks(text: str) -> bool:
    # A part that asks nothing is read with the one after it: two parts stay two only if it asks.
    return len(asking_parts([(text, text), ("?", "?")])) == 2


RULES: dict[str, Callable[[str], object]] = {
    "small_talk": small_talk,
    "follow_up": looks_like_follow_up,
    "reference": referred_category,
    "which_subject": asks_for_a_subject,
    "asks": asks_something,
    "stands_alone": _stands_alone,
    "listing": _listing,
    "steps": lambda text: read_question(text, load_guard()).steps,
    "parts": lambda text: len(split_question(text, load_text_processor())),
    "part_asks": _part_asks,
}
ROWS = [(rule, row) for rule, rows in CASES.items() for row in rows]


def test_the_table_has_cases_for_every_rule_and_no_other() -> None:
    assert set(CASES) == set(RULES)
    assert all(len(rows) >= 5 for rows in CASES.values())
    assert len(ROWS) >= 60


@pytest.mark.parametrize(("rule", "row"), ROWS, ids=[f"{r}: {row['text']}" for r, row in ROWS])
def test_each_rule_reads_each_case_as_the_table_says(rule: str, row: dict[str, Any]) -> None:
    assert RULES[rule](str(row["text"])) == row["expect"]
    if "listed" in row:
        assert read_question(str(row["text"]), load_guard()).listed == row["listed"]


# -- loading -----------------------------------------------------------------------------------


def _bundled() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(PACK_FILE.read_text("utf-8"))
    return data


def _write(tmp_path: Path, data: dict[str, Any]) -> Path:
    path = tmp_path / "language.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return path


def test_the_bundled_pack_holds_the_guard_vocabulary_and_loads_once() -> None:
    pack = load_pack()
    assert load_pack() is pack
    assert "major" in pack.guard["categories"]
    assert pack.follow_up.subjects[0] == "major"
    assert not (PACK_FILE.parent / "guard.yaml").exists()


def test_a_written_copy_of_the_bundled_pack_reads_the_same(tmp_path: Path) -> None:
    assert read_pack(_write(tmp_path, _bundled())) == load_pack()


def test_a_missing_section_is_named(tmp_path: Path) -> None:
    data = _bundled()
    del data["small_talk"]
    with pytest.raises(ConfigError, match=r"missing sections \['small_talk'\]"):
        read_pack(_write(tmp_path, data))


def test_a_pattern_that_does_not_compile_is_named_with_its_section_and_key(
    tmp_path: Path,
) -> None:
    data = _bundled()
    data["small_talk"]["human"].append("nguoi (that")
    with pytest.raises(ConfigError, match=r"section `small_talk`: `human`\[\d+\] 'nguoi \(that'"):
        read_pack(_write(tmp_path, data))


def test_a_word_with_diacritics_in_a_folded_list_is_refused(tmp_path: Path) -> None:
    data = _bundled()
    data["follow_up"]["starts"] = ["còn"]
    with pytest.raises(
        ConfigError, match=r"section `follow_up`: `starts`\[0\] 'còn' is not folded"
    ):
        read_pack(_write(tmp_path, data))


@pytest.mark.parametrize(
    ("section", "key", "value", "message"),
    [
        ("follow_up", "max_words", "ten", r"`max_words` must be a whole number"),
        ("questions", "anywhere", "bao nhieu", r"`anywhere` must be a non-empty list"),
        ("follow_up", "subjects", ["major", "faculty"], r"\['faculty'\] are not categories"),
        ("listing", "listed", {"nganh": "majors"}, r"`listed`: \['majors'\] are not categories"),
        ("small_talk", "kinds", {"greeting": ["chao"]}, r"expected the kinds"),
        ("facts", "column_methods", {"thpt": "thi THPT"}, r"\['thi THPT'\] are not guard methods"),
        ("facts", "attributes", {"diem chuan": "grade"}, r"\['grade'\] are not kinds of value"),
        ("facts", "attributes", {"Điểm chuẩn": "score"}, r"'Điểm chuẩn' is not folded words"),
    ],
)
def test_an_entry_of_the_wrong_shape_is_named(
    tmp_path: Path, section: str, key: str, value: object, message: str
) -> None:
    data = _bundled()
    data[section][key] = value
    with pytest.raises(ConfigError, match=rf"section `{section}`.*{message}"):
        read_pack(_write(tmp_path, data))


def test_a_missing_key_and_an_unknown_key_are_named(tmp_path: Path) -> None:
    data = _bundled()
    del data["follow_up"]["reference"]["determiners"]
    with pytest.raises(ConfigError, match=r"key `reference`: missing key `determiners`"):
        read_pack(_write(tmp_path, data))
    data = _bundled()
    data["questions"]["anywehre"] = ["bao nhieu"]
    with pytest.raises(ConfigError, match=r"section `questions`: unknown keys \['anywehre'\]"):
        read_pack(_write(tmp_path, data))
