"""The conversation step (1/4): a message is read alone first and takes from the last question
only what it lacks; context stops at small talk and at a pause. Each rule is a row of the table:
(the last question, the message, how it is read, why, what is asked)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from bot.answer.followup import ContextRules, Turn, read_in_context
from bot.answer.parts import AnswererParts

NOW = datetime(2026, 12, 4, 10, 0, tzinfo=UTC)

CASES = [
    # marked follow-ups: the new value put in the last question's place
    (
        "Học phí ngành Khoa học Máy tính năm 2026 là bao nhiêu?",
        "còn ngành Công nghệ Thông tin thì sao?",
        "context",
        "follow_up",
        "Học phí ngành Công nghệ Thông tin năm 2026 là bao nhiêu?",
    ),
    (
        "diem chuan khmt 2025",
        "còn xét dgnl thì lấy bn",
        "context",
        "follow_up",
        "diem chuan khmt 2025 dgnl",
    ),
    # asking the same thing again in its own words, of another method: the year with the major
    (
        "diem chuan khmt 2025",
        "còn xét dgnl thì điểm chuẩn bao nhiêu",
        "context",
        "no_subject",
        "còn xét dgnl thì điểm chuẩn bao nhiêu khmt 2025",
    ),
    # marked, but naming what it asks and asking it in its own words: only what it lacks is
    # taken (a subject), never the last question's other words
    (
        "han dang ky nguyen vong tren he thong cua bo la khi nao",
        "con le phi xet tuyen nop luc nao",
        "alone",
        None,
        "con le phi xet tuyen nop luc nao",
    ),
    (
        "học phí ngành khmt bao nhiêu",
        "còn hạn nộp hồ sơ là khi nào",
        "context",
        "no_subject",
        "còn hạn nộp hồ sơ là khi nào khmt",
    ),
    # "… thì sao" is the follow-up's mark, not a question of its own
    (
        "chỉ tiêu ngành cntt năm nay bn",
        "còn học phí thì sao",
        "context",
        "follow_up",
        "học phí ngành cntt năm nay bn",
    ),
    # a reference: the value the last question named
    (
        "ngành kỹ thuật phần mềm xét tổ hợp nào",
        "ngành đó học phí bao nhiêu",
        "context",
        "reference",
        "ngành kỹ thuật phần mềm học phí bao nhiêu",
    ),
    (
        "truong lien ket voi dh nao o nuoc ngoai",
        "hoc phi ct do bn 1 nam",
        "context",
        "reference",
        "hoc phi ct lien ket bn 1 nam",
    ),
    # "bên đó", "chỗ đó": the last question's subject, of a category the message does not name
    (
        "ct lien ket voi truong ben uc thi hoc phi 2 nam cuoi bn",
        "sang ben do hoc co hb nao ko, giam bn %",
        "context",
        "reference",
        "sang ben lien ket hoc co hb nao ko, giam bn %",
    ),
    (
        "ct lien ket voi truong ben uc thi hoc phi 2 nam cuoi bn",
        "Để được chuyển sang học bên đó thì cần điều kiện gì ạ, ielts phải bao nhiêu?",
        "context",
        "reference",
        "Để được chuyển sang học bên lien ket thì cần điều kiện gì ạ, ielts phải bao nhiêu?",
    ),
    # ...or its topic when it names none ("ktx" is what is asked about, no subject)
    (
        "ktx co so 2 phong 8 nguoi bn 1 thang",
        "chỗ đó có wifi không ad",
        "context",
        "reference",
        "chỗ ktx co so 2 có wifi không ad",
    ),
    # "của nó": the last question's subject, the pronoun's place taken by it
    (
        "nganh httt nam ngoai lay bn diem",
        "ma nganh cua no la j de e ghi nguyen vong v",
        "context",
        "reference",
        "ma nganh cua httt la j de e ghi nguyen vong v",
    ),
    # English: the determiner before its noun; the mark after it stays, the parts with it
    (
        "What IELTS score do I need for the joint program with Kestrel Bay?",
        "ok and how much is the tuition for that program? is it cheaper for locals?",
        "context",
        "reference",
        "ok and how much is the tuition for that joint program? is it cheaper for locals?",
    ),
    # "chương trình đó" is CNTT's clc: the major it lacks comes with it
    (
        "ctr clc nganh cntt hoc phi 1 nam bn",
        "chương trình đó học ở cơ sở nào",
        "context",
        "reference",
        "chương trình clc học ở cơ sở nào cntt",
    ),
    # a follow-up's first clause marks it, however long the rest
    (
        "học phí ngành trí tuệ nhân tạo 1 năm bao nhiêu ạ",
        "Thế còn chương trình clc ngành KHMT thì sao ad, mắc hơn nhiều không?",
        "context",
        "follow_up",
        "học phí ngành KHMT 1 năm bao nhiêu ạ clc",
    ),
    # asking which major is the subject it asks: none is taken
    (
        "thế ngành khdl thì xét những tổ hợp nào, chỉ tiêu nhiu ạ",
        "ad oi nganh nao cua truong tuyen dong sv nhat z",
        "alone",
        None,
        "nganh nao cua truong tuyen dong sv nhat z",
    ),
    # "điểm đó": the one score the last question gave
    (
        "xét đgnl tối thiểu bn điểm mới đc nộp hồ sơ, e thi đợt 1 đc 850",
        "vay vs diem do vo nganh attt co dau ko ad",
        "context",
        "reference",
        "vay vs diem 850 vo nganh attt co dau ko ad",
    ),
    # a message naming its own subject refers to it ("bên đó" is Úc), not to the last one
    (
        "le phi xet ho so van bang 2 la bn",
        "Muốn học chương trình liên kết, 2 năm cuối sang Úc thì bên đó học phí bao nhiêu ạ?",
        "alone",
        None,
        "Muốn học chương trình liên kết, 2 năm cuối sang Úc thì bên đó học phí bao nhiêu ạ?",
    ),
    # "hb đó" after a scholarship the guard reads as a kind of programme ("tài năng")
    (
        "hb tai nang can bao nhieu diem thi thpt",
        "hb đó giảm bn % hp",
        "context",
        "reference",
        "hb tai nang giảm bn % hp",
    ),
    # an attribute asked of nobody: the last question's subject added
    (
        "Điểm chuẩn ngành KHMT năm 2025?",
        "học phí bao nhiêu",
        "context",
        "no_subject",
        "học phí bao nhiêu KHMT",
    ),
    # nothing the vocabulary reads: the last question's topic in front
    (
        "sđt phòng tuyển sinh là gì ạ",
        "thứ 7 có làm việc ko ạ",
        "context",
        "no_subject",
        "phòng tuyển sinh: thứ 7 có làm việc ko ạ",
    ),
    # ...less a count and the words it qualifies: a kind of room was asked, not what follows
    (
        "ktx co so 2 phong 4 nguoi bn 1 thang ad",
        "the dang ky ntn, khi nao mo dang ky vay",
        "context",
        "no_subject",
        "ktx co so 2: the dang ky ntn, khi nao mo dang ky vay",
    ),
    # a subject and no question of its own: the last question asked of it
    (
        "chỉ tiêu ngành cntt năm nay",
        "khmt?",
        "context",
        "no_attribute",
        "chỉ tiêu ngành khmt năm nay",
    ),
    # names its own subject or attribute: never inherits (the leaks of December)
    (
        "chương trình trí tuệ nhân tạo học gì",
        "hp chương trình clc bn 1 năm vậy ad",
        "alone",
        None,
        None,
    ),
    ("học phí ngành ttnt bao nhiêu", "mã ngành kỹ thuật phần mềm là gì ạ", "alone", None, None),
    ("điểm chuẩn khmt 2025", "năm nhất thì học ở cơ sở nào vậy ạ", "alone", None, None),
    (
        "học bổng tân sinh viên có mấy loại",
        "hạn xác nhận nhập học là ngày mấy ạ",
        "alone",
        None,
        None,
    ),
    (
        "Điểm chuẩn ngành TMĐT 2025 xét học bạ",
        "nganh tri tue nhan tao co xet hoc ba ko a",
        "alone",
        None,
        None,
    ),
    (
        "trường có mấy loại học bổng",
        "hb tài năng cần bao nhiêu điểm thi vậy ad",
        "alone",
        None,
        None,
    ),
    (
        "điểm chuẩn khmt 2025",
        "Học phí ngành Kỹ thuật Phần mềm năm học 2026-2027 là bao nhiêu một năm vậy ạ?",
        "alone",
        None,
        None,
    ),
    # an opener asks nothing and takes nothing (before: "hp cntt: ad oi")...
    ("hp cntt bn", "ad oi", "alone", None, None),
    ("điểm chuẩn khmt 2025", "cho e hỏi chút ạ", "alone", None, None),
    # ...and in front of a question it is taken off: the question is read as if asked alone
    (
        "Học phí ngành Khoa học Máy tính năm 2026 là bao nhiêu?",
        "ad ơi, còn ngành Công nghệ Thông tin thì sao?",
        "context",
        "follow_up",
        "Học phí ngành Công nghệ Thông tin năm 2026 là bao nhiêu?",
    ),
    (
        "điểm chuẩn khmt 2025",
        "cho e hỏi học phí ngành ktpm 1 năm bn ạ",
        "alone",
        None,
        "học phí ngành ktpm 1 năm bn ạ",
    ),
]


@pytest.mark.parametrize(("previous", "message", "mode", "why", "asked"), CASES)
def test_a_message_takes_from_the_last_question_only_what_it_lacks(
    parts: AnswererParts,
    previous: str,
    message: str,
    mode: str,
    why: str | None,
    asked: str | None,
) -> None:
    rules = ContextRules(parts.guard, parts.processor)
    reading = read_in_context(message, [Turn(previous, NOW - timedelta(minutes=1))], rules, NOW)
    assert (reading.mode, reading.why) == (mode, why)
    assert reading.asked == (asked or message)
    if mode == "context":
        assert reading.taken
        assert all(t.from_text == previous for t in reading.taken)
    else:
        assert reading.taken == ()


def test_context_stops_at_small_talk_a_pause_and_the_first_message(parts: AnswererParts) -> None:
    rules = ContextRules(parts.guard, parts.processor, pause_s=30 * 60)
    question = "học phí bao nhiêu"
    thanks = Turn("cảm ơn ạ", NOW - timedelta(minutes=1), small_talk=True)
    assert read_in_context(question, [thanks], rules, NOW).stopped == "small_talk"
    old = Turn("điểm chuẩn khmt 2025", NOW - timedelta(hours=2))
    assert read_in_context(question, [old], rules, NOW).stopped == "pause"
    assert read_in_context(question, [], rules, NOW).stopped == "none_before"
    # a thank-you itself is never read with the question before it
    recent = Turn("điểm chuẩn khmt 2025", NOW - timedelta(minutes=1))
    assert read_in_context("cảm ơn ạ", [recent], rules, NOW).mode == "alone"
    # the question after an opener stands alone: the opener gives it nothing
    opener = Turn("ad ơi cho e hỏi", NOW - timedelta(seconds=20), small_talk=True)
    after = read_in_context("học phí bao nhiêu", [recent, opener], rules, NOW)
    assert (after.mode, after.stopped, after.asked) == ("alone", "small_talk", "học phí bao nhiêu")


def test_the_reading_is_stored_as_plain_data(parts: AnswererParts) -> None:
    rules = ContextRules(parts.guard, parts.processor)
    reading = read_in_context(
        "ngành đó học phí bao nhiêu", [Turn("ngành ktpm xét tổ hợp nào")], rules
    )
    data = reading.to_json()
    assert data["mode"] == "context"
    assert data["why"] == "reference"
    assert data["taken"] == [
        {
            "slot": "major",
            "label": "ngành",
            "words": "ktpm",
            "from_text": "ngành ktpm xét tổ hợp nào",
        }
    ]
