"""Replies explained in the staff's words from the structured ``why`` stored with them (not by
translating the English reason): the outcome in plain words, apart from how the FAQ entries
were weighed and the figures, both kept for "Chi tiết kỹ thuật"."""

from __future__ import annotations

from typing import Any

from admin.explanations import explain_error, explain_reply
from admin.i18n import Translator
from bot.conversations.store import HELD_ERROR

VI = Translator("vi")
EN = Translator("en")
GUARD_STEP = {
    "result": "guard",
    "faq_id": 10,
    "similarity": 0.93,
    "conflicts": [],
    "missing": [{"category": "attribute", "label": "điều được hỏi", "values": ["học phí"]}],
}


def details(why: dict[str, Any], reason: str = "some English reason") -> dict[str, Any]:
    return {"why": why, "reason": reason, "timings_ms": {"total": 812.4}}


def test_an_faq_answer_names_its_entry() -> None:
    why = {"faq": [{"result": "accepted", "faq_id": 18, "similarity": 0.97}]}
    said = explain_reply(VI, "faq", details(why, "accepted"), 0.97, 0.925)
    assert said.text == "Trả lời từ câu hỏi thường gặp #18."
    assert said.steps == []  # an entry that answered needs no weighing told
    assert ("Điểm", "0.970 (ngưỡng 0.925)") in said.figures
    assert ("Ghi chú của hệ thống", "accepted") in said.figures
    assert ("Thời gian trả lời", "812 ms") in said.figures
    verbatim = {"faq": [{"result": "verbatim", "faq_id": 18}]}
    assert "hỏi đúng một cách hỏi đã lưu" in explain_reply(VI, "faq", details(verbatim)).text


def test_a_documents_answer_after_no_close_entry() -> None:
    why = {
        "faq": [{"result": "similarity", "faq_id": 7, "similarity": 0.84, "threshold": 0.925}],
        "documents": {"result": "answered", "how": "extractive", "passages": 5},
    }
    said = explain_reply(VI, "documents", details(why, "5 chunks passed t_doc"))
    assert said.sentences == ["Trả lời từ tài liệu: trích nguyên văn (5 đoạn)"]
    assert said.steps == ["Không tìm thấy câu hỏi đủ giống (gần nhất: mục #7)"]
    assert "0.84" not in said.text
    assert "t_doc" not in said.text
    english = explain_reply(EN, "documents", details(why))
    assert english.steps == ["No FAQ entry is close enough (the nearest: #7)"]
    assert "5 passages" in english.text


def test_the_passage_that_is_an_entrys_answer_is_a_step() -> None:
    why = {
        "faq": [{"result": "unsure", "faq_id": 10, "similarity": 0.97}],
        "documents": {"result": "answered", "passages": 5, "faq_passage": 10},
    }
    said = explain_reply(VI, "documents", details(why))
    assert said.text == "Trả lời từ tài liệu: trích nguyên văn (5 đoạn)."
    assert said.steps == [
        "Mục #10 gần nhất nhưng tuvan chưa đủ chắc chắn để trả lời nguyên văn",
        "Đoạn đầu tiên là câu trả lời của mục #10",
    ]


def test_the_guards_reasons_are_said_from_its_structure() -> None:
    conflict = {
        "result": "guard",
        "faq_id": 2,
        "conflicts": [
            {
                "category": "major",
                "label": "ngành",
                "question": ["Kỹ thuật máy tính"],
                "entry": ["Khoa học máy tính"],
            },
            {"category": "year", "label": "năm", "question": ["2024"], "entry": []},
        ],
        "missing": [],
    }
    why = {
        "faq": [GUARD_STEP, conflict],
        "documents": {"result": "below", "best": 0.71, "threshold": 0.8},
    }
    said = explain_reply(VI, "fallback", details(why))
    # what the student got, plainly; how the entries were weighed, for "Chi tiết kỹ thuật"
    assert said.sentences == [
        "Không có đoạn tài liệu nào đủ giống câu hỏi",
        "Chưa trả lời được: gửi thông tin liên hệ của phòng tuyển sinh",
    ]
    assert said.steps == [
        "Mục #10: câu hỏi hỏi về học phí nhưng mục này không nói về học phí",
        "Mục #2: câu hỏi nói về Kỹ thuật máy tính (ngành), mục này nói về Khoa học máy tính",
        "Mục #2 không nói về 2024 (năm) mà câu hỏi nhắc tới",
    ]


def test_why_the_documents_gave_nothing() -> None:
    def docs(documents: dict[str, Any]) -> str:
        return explain_reply(VI, "fallback", details({"faq": [], "documents": documents})).text

    scope = {"result": "out_of_scope", "named": [{"label": "năm", "values": ["2024"]}]}
    assert "Câu hỏi nói về 2024 (năm) nhưng tài liệu tìm được không nói" in docs(scope)
    assert "Tìm được 3 đoạn tài liệu liên quan" in docs({"result": "abstained", "passages": 3})
    assert "không trích đúng nguồn" in docs({"result": "not_cited", "passages": 2})
    assert docs({"result": "below"}).startswith("Không có đoạn tài liệu nào đủ giống")
    no_entry = explain_reply(VI, "fallback", details({"faq": [], "documents": {}}))
    assert no_entry.steps == ["Chưa có câu hỏi thường gặp nào gần với câu hỏi này"]


def test_replies_that_needed_no_search_and_old_replies() -> None:
    assert explain_reply(VI, "fallback", details({"small_talk": "human"})).text == (
        "Người hỏi muốn gặp cán bộ tư vấn: gửi thông tin liên hệ."
    )
    assert (
        "không phải câu hỏi" in explain_reply(VI, "fallback", details({"not_a_question": 1})).text
    )
    assert "Có lỗi khi trả lời" in explain_reply(VI, "fallback", details({"error": "X"})).text
    old = {"reason": "similarity 0.844 below t_faq 0.925; documents: best similarity 0.5"}
    said = explain_reply(VI, "fallback", old)
    assert said.text == "Chưa trả lời được."
    assert ("Ghi chú của hệ thống", old["reason"]) in said.figures


def test_stored_errors_in_plain_words() -> None:
    assert explain_error(VI, "staff answering").text.startswith("Nhân viên đang tiếp quản")
    assert explain_error(VI, HELD_ERROR).text.startswith("Tạm giữ")
    other = explain_error(VI, "TimeoutError: the LLM took too long")
    assert other.text == "Có trục trặc khi xử lý tin nhắn này."
    assert other.figures == [("Lỗi", "TimeoutError: the LLM took too long")]
