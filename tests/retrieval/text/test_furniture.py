"""retrieval.text.furniture: the lines never quoted as an answer, from a table of cases
(furniture_cases.yaml), and the word lists it reads, checked when loaded."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from bot.core.errors import ConfigError
from retrieval.text.furniture import WORD_LISTS, PageLine, furniture, furniture_words
from retrieval.text.vocabulary import read_word_lists

CASES: list[dict[str, Any]] = yaml.safe_load(
    (Path(__file__).with_name("furniture_cases.yaml")).read_text(encoding="utf-8")
)
_LINK_ITEM = re.compile(r"^\* \[([^\]]+)\]\(.*\)$")


def page_line(line: str) -> PageLine:
    """A case's line as the answerer reads it: list markers and link syntax gone."""
    if link := _LINK_ITEM.match(line):
        return PageLine(link.group(1), item=True, link=True)
    if line.startswith(("- ", "* ")):
        return PageLine(line[2:], item=True)
    return PageLine(line)


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_furniture_is_told_by_its_shape(case: dict[str, Any]) -> None:
    lines = case["lines"]
    found = furniture([page_line(line) for line in lines])
    assert [lines[i] for i in sorted(found)] == case["furniture"]


def test_the_bundled_word_lists_load() -> None:
    words = furniture_words()
    assert "doc lap tu do hanh phuc" in words.mottos
    assert "chia se" in words.navigation


OTHERS = (
    "document_types: []\nlegal_basis: []\nlegal_documents: []\naddressing: []\nsignatures: []\n"
)


@pytest.mark.parametrize(
    "content",
    [
        "mottos: [a]\n",  # lists missing
        f"mottos: []\n{OTHERS}navigation: x\n",  # not a list
        f"mottos: ['']\n{OTHERS}navigation: []\n",  # an empty phrase
        f"mottos: []\n{OTHERS}navigation: []\nmenu: []\n",  # a list nobody reads
    ],
)
def test_a_malformed_word_list_file_is_refused(tmp_path: Path, content: str) -> None:
    path = tmp_path / "furniture.yaml"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ConfigError, match=r"furniture\.yaml"):
        read_word_lists(path, WORD_LISTS)
