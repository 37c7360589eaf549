"""Exact answers from the school's catalogue and facts tables, before tier 2 (issue 2/4).

Four kinds of question are answered from the tables' values, quoted as the tables write them,
with their year and source, and the documents' disclaimer:

- **score checks** ("em được 25,5 điểm có đỗ ngành Khoa học Dữ liệu không"): the cut-off of the
  latest year that has one, the comparison stated; every programme and method the question
  leaves open is listed with its own comparison, never one picked silently;
- **cut-offs, quotas, combinations** of named majors ("điểm chuẩn ktpm", "ngành TTNT xét tổ hợp
  nào");
- **whether** a major takes a combination or a method ("ngành TTNT có xét học bạ không": the
  table's "—" says no);
- **whether the school has a major** ("trường có ngành Dược không"): a plain no with the
  closest majors it does have, given only when the catalogue is the school's (it names several
  majors) and nothing the search found names the major either.

Anything else, or a question the tables do not hold the value for, goes on to tier 2.

The package: what a question asks (question), the rows it leaves possible (rows), the answers
about named majors' values (values) and across the catalogue (catalogue), their wording
(wording) and citations (citing), and the tier choosing among them (tier).
"""

from __future__ import annotations

from bot.answer.facts.question import (
    MAJOR_CODE,
    TABLE_ATTRIBUTES,
    FactsQuestion,
    offered_name,
    read_facts_question,
)
from bot.answer.facts.rows import closest_majors
from bot.answer.facts.tier import FactsTier

__all__ = [
    "MAJOR_CODE",
    "TABLE_ATTRIBUTES",
    "FactsQuestion",
    "FactsTier",
    "closest_majors",
    "offered_name",
    "read_facts_question",
]
