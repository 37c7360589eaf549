"""The extractive answerer (answer.extractive): a quote never ends on an abbreviation's full stop
(3/6: "… Đại học Quốc gia TP. [1]" / "- Hồ Chí Minh: …"), and the units quoted are the ones
that answer what is asked (3/6: the kind of value, whom it is about, a list, a table row)."""

from __future__ import annotations

import pytest

from bot.answer.extractive import about_first, naming_what_is_asked
from bot.answer.parts import AnswererParts
from bot.answer.reading import read_question
from bot.answer.units import sentences
from retrieval.text.sentences import ends_with_abbreviation
from tests.bot.answer._support import hit, quotes_for


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Trường trực thuộc Đại học Quốc gia TP. Hồ Chí Minh. Trường thành lập năm 2006.",
            ["Trường trực thuộc Đại học Quốc gia TP. Hồ Chí Minh.", "Trường thành lập năm 2006."],
        ),
        (
            "Cố vấn là ThS. Nguyễn Văn An và PGS. TS. Trần Bình. Liên hệ phòng đào tạo.",
            ["Cố vấn là ThS. Nguyễn Văn An và PGS. TS. Trần Bình.", "Liên hệ phòng đào tạo."],
        ),
        (
            "Các ngành CNTT, KHMT v.v. đều xét tuyển. Hạn nộp là 30/6.",
            ["Các ngành CNTT, KHMT v.v. đều xét tuyển.", "Hạn nộp là 30/6."],
        ),
        # a word or a longer acronym before the full stop ends the sentence
        (
            "Trường ở Việt Nam. Thí sinh nộp trực tuyến.",
            ["Trường ở Việt Nam.", "Thí sinh nộp trực tuyến."],
        ),
        (
            "Theo quy định của ĐHQG. Thí sinh nộp hồ sơ.",
            ["Theo quy định của ĐHQG.", "Thí sinh nộp hồ sơ."],
        ),
        # numbers and dates hold
        (
            "Học phí là 40.000.000 đồng. Hạn nộp 15.6.2026 lúc 17h.",
            ["Học phí là 40.000.000 đồng.", "Hạn nộp 15.6.2026 lúc 17h."],
        ),
    ],
)
def test_sentences_do_not_end_on_an_abbreviation(text: str, expected: list[str]) -> None:
    assert sentences(text) == expected


@pytest.mark.parametrize(
    ("text", "abbreviated"),
    [
        ("Quốc gia TP.", True),
        ("gặp ThS.", True),
        ("PGS.", True),
        ("v.v.", True),
        ("(Tp.", True),
        ("Việt Nam.", False),
        ("của ĐHQG.", False),
        ("năm 2026.", False),
        ("là gì?", False),
    ],
)
def test_an_abbreviation_s_full_stop_is_recognised(text: str, abbreviated: bool) -> None:
    assert ends_with_abbreviation(text) is abbreviated


# -- targeted answers (3/6) ------------------------------------------------------------------


CONTACTS = (
    "Phòng Tuyển sinh là đầu mối giải đáp thắc mắc về tuyển sinh.\n"
    "Văn phòng cơ sở 2 hỗ trợ tham quan cơ sở 2 và xe buýt.\n"
    "Hotline tuyển sinh: 028 3999 1234.\n"
    "Trường có 42 câu lạc bộ cho sinh viên."
)


def test_the_unit_holding_the_kind_of_value_asked_leads(parts: AnswererParts) -> None:
    assert quotes_for(parts, "sđt phòng tuyển sinh là j vậy ad", hit(CONTACTS)) == [
        "Hotline tuyển sinh: 028 3999 1234."
    ]


def test_no_unit_holding_the_kind_asked_means_no_answer(parts: AnswererParts) -> None:
    text = "Phòng Tuyển sinh làm việc từ thứ Hai đến thứ Sáu.\nPhòng Tuyển sinh ở Tòa A."
    assert quotes_for(parts, "số điện thoại phòng tuyển sinh là gì", hit(text)) == []
    assert quotes_for(parts, "học phí ngành CNTT bao nhiêu tiền", hit(text)) == []


def test_a_unit_about_another_major_is_never_quoted(parts: AnswererParts) -> None:
    text = (
        "Học phí ngành Khoa học Máy tính là 32.500.000 đồng/năm.\n"
        "Học phí ngành Trí tuệ Nhân tạo là 36.000.000 đồng/năm."
    )
    assert quotes_for(parts, "học phí ngành AI 1 năm", hit(text)) == [
        "Học phí ngành Trí tuệ Nhân tạo là 36.000.000 đồng/năm."
    ]
    assert quotes_for(parts, "học phí ngành an toàn thông tin bao nhiêu", hit(text)) == []


TABLE = (
    "| Tên ngành | Mã ngành | Chỉ tiêu 2026 | Tổ hợp xét tuyển |\n"
    "|---|---|---|---|\n"
    "| Kỹ thuật Phần mềm | 7480103 | 200 | A00, A01 |\n"
    "| Khoa học Máy tính | 7480101 | 240 | A00, A01, D07 |\n"
    "| An toàn Thông tin | 7480202 | 130 | A00, A01, D01 |\n"
)


def test_a_table_row_reads_as_a_line_with_the_asked_column_first(parts: AnswererParts) -> None:
    [quote] = quotes_for(parts, "chỉ tiêu ngành kỹ thuật phần mềm 2026", hit(TABLE))
    assert quote.startswith("Kỹ thuật Phần mềm (7480103): chỉ tiêu 2026 là 200; ")


def test_a_list_question_gets_the_names_of_a_table_on_one_line(parts: AnswererParts) -> None:
    table = hit(TABLE, title="Ngành đào tạo của trường năm 2026", heading="Ngành đào tạo 2026")
    [quote] = quotes_for(parts, "trường có những ngành nào", table)
    assert quote == ("Ngành đào tạo 2026: Kỹ thuật Phần mềm; Khoa học Máy tính; An toàn Thông tin.")
    # No unit naming majors: no answer to "những ngành nào".
    assert quotes_for(parts, "trường có những ngành nào", hit(CONTACTS)) == []


def test_a_list_of_one_major_s_values_gets_its_row_not_the_table_s_names(
    parts: AnswererParts,
) -> None:
    # "những tổ hợp nào" of one major lists combinations: the table's names are majors, so
    # the row of the major asked is quoted, with its combinations.
    table = hit(TABLE, title="Ngành đào tạo của trường năm 2026", heading="Ngành đào tạo 2026")
    [quote] = quotes_for(parts, "ngành khoa học máy tính xét những tổ hợp nào", table)
    assert "Khoa học Máy tính (7480101): " in quote
    assert "A00, A01, D07" in quote


def test_a_list_answer_quotes_no_unit_about_something_else(parts: AnswererParts) -> None:
    # "có mấy loại học bổng": past the lead, a unit must be about scholarships too; the table
    # of room prices for freshmen names no scholarship and is not listed.
    scholarships = hit(
        "Học bổng Vượt khó dành cho tân sinh viên có hoàn cảnh khó khăn: 10.000.000 đồng/suất.",
        title="Học bổng",
        n=1,
    )
    rooms = hit(
        "| Loại phòng cho tân sinh viên | Giá mỗi tháng |\n|---|---|\n"
        "| Phòng 4 người | 850.000 đồng |\n| Phòng 8 người | 550.000 đồng |\n",
        title="Tân sinh viên 2026",
        n=2,
    )
    quotes = quotes_for(parts, "trường có mấy loại học bổng cho tân sinh viên", scholarships, rooms)
    assert quotes
    assert "Vượt khó" in quotes[0]
    assert not any("Phòng 4 người" in q for q in quotes), quotes
    # A second scholarship unit is still listed.
    more = hit("Học bổng Tài năng: 100% học phí năm nhất cho thủ khoa.", title="Học bổng", n=3)
    listed = quotes_for(
        parts, "trường có mấy loại học bổng cho tân sinh viên", scholarships, rooms, more
    )
    assert any("Tài năng" in q for q in listed), listed


def test_a_testimonial_loses_to_a_fact(parts: AnswererParts) -> None:
    text = (
        '"Em học ở cơ sở 2 từ năm nhất, ở cơ sở 2 rất yên tĩnh và em thích thư viện ở đó lắm."\n'
        "Sinh viên năm nhất học tại cơ sở 2 (Bình Dương)."
    )
    [quote] = quotes_for(parts, "năm nhất học ở cơ sở nào", hit(text))
    assert quote == "Sinh viên năm nhất học tại cơ sở 2 (Bình Dương)."


def test_a_list_item_is_quoted_with_the_sentence_it_completes(parts: AnswererParts) -> None:
    text = (
        "1. Người nào trồng cây thuốc phiện thuộc một trong các trường hợp sau đây, thì bị "
        "phạt tù từ 06 tháng đến 03 năm:\n"
        "a) Đã được giáo dục 02 lần;\n"
        "b) Với số lượng từ 500 cây đến dưới 3.000 cây.\n"
        "2. Phạm tội thuộc một trong các trường hợp sau đây, thì bị phạt tù từ 03 năm đến 07 năm:\n"
        "a) Với số lượng 3.000 cây trở lên."
    )
    quotes = quotes_for(
        parts, "trồng từ 500 cây đến dưới 3.000 cây thuốc phiện bị phạt tù bao lâu", hit(text)
    )
    assert quotes
    assert "từ 06 tháng đến 03 năm: Với số lượng từ 500 cây đến dưới 3.000 cây." in quotes[0]


def test_a_factoid_gets_at_most_three_units(parts: AnswererParts) -> None:
    text = "\n".join(f"Học phí ngành CNTT đợt {i} là {30 + i}.000.000 đồng." for i in range(8))
    assert 1 <= len(quotes_for(parts, "học phí ngành CNTT bao nhiêu", hit(text))) <= 3


STEPS = (
    "Tân sinh viên đăng ký ký túc xá trực tuyến từ 14/8/2026 đến 31/8/2026.\n"
    "### Các bước đăng ký\n"
    "1. Đăng nhập cổng sinh viên tại portal.shut.example.vn bằng mã số sinh viên.\n"
    "2. Chọn mục Đăng ký ký túc xá, chọn khu KTX và loại phòng.\n"
    "3. Nộp tiền đặt cọc qua cổng thanh toán. Quá hạn, suất đăng ký sẽ bị hủy.\n"
    "4. Nhận kết quả xếp phòng qua email vào ngày 03/9/2026.\n"
    "Khách đến thăm phải đăng ký tại quầy lễ tân."
)


@pytest.mark.parametrize("question", ["cach dang ki ktx ntn vay", "thủ tục đăng ký ký túc xá"])
def test_a_how_question_gets_the_steps_from_the_first(parts: AnswererParts, question: str) -> None:
    priority = (
        "1. Sinh viên thuộc diện chính sách được xếp chỗ ký túc xá trước.\n"
        "2. Các sinh viên còn lại theo thứ tự đăng ký."
    )
    quotes = quotes_for(parts, question, hit(STEPS), hit(priority, n=2))
    assert sum(" 2. " in q for q in quotes) == 1  # one procedure answers, not every list
    steps = next(q for q in quotes if "Chọn mục" in q)
    assert steps.startswith("Các bước đăng ký: 1. Đăng nhập cổng sinh viên tại portal")
    assert "3. Nộp tiền đặt cọc qua cổng thanh toán. Quá hạn, suất đăng ký sẽ bị hủy. 4." in steps
    assert "Khách đến thăm" not in steps


def test_a_question_of_one_step_gets_that_step(parts: AnswererParts) -> None:
    quotes = quotes_for(parts, "khi nào nhận kết quả xếp phòng qua email", hit(STEPS))
    assert "Nhận kết quả xếp phòng qua email vào ngày 03/9/2026." in quotes
    assert not any("Đăng nhập" in q for q in quotes)


def test_asked_how_a_step_outranks_a_line_sharing_more_words(parts: AnswererParts) -> None:
    intro = "Ký túc xá cơ sở 2 có 2.400 chỗ ở, tân sinh viên đăng ký sớm được ưu tiên."
    quotes = quotes_for(
        parts,
        "ký túc xá đăng ký như thế nào",
        hit(intro, n=1, title="Ký túc xá có bao nhiêu chỗ ở?"),
        hit(STEPS, n=2),
        limit=1,
    )
    assert len(quotes) == 1
    assert quotes[0].startswith("Các bước đăng ký: 1. Đăng nhập")


SECTIONED = (
    "| TT | Tên ngành | Mã ngành | Điểm chuẩn |\n"
    "|---|---|---|---|\n"
    "| Cơ sở Hà Nội | | | |\n"
    "| 1 | Khoa học Máy tính | 7480101 | 26,50 |\n"
    "| 2 | Kỹ thuật Phần mềm | 7480103 | 25,75 |\n"
    "| Cơ sở TP. Hồ Chí Minh | | | |\n"
    "| 3 | Khoa học Máy tính | 7480101 | 24,10 |\n"
)


def test_a_row_naming_a_section_of_a_table_labels_the_rows_under_it(
    parts: AnswererParts,
) -> None:
    # The cut-off asked at one campus is quoted with its campus, and the other campus's row,
    # the same major with another cut-off, never is.
    [quote] = quotes_for(parts, "điểm chuẩn khmt cơ sở hcm", hit(SECTIONED))
    assert quote.startswith("Cơ sở TP. Hồ Chí Minh: Khoa học Máy tính (7480101)")
    assert "24,10" in quote
    assert "26,50" not in quote
    # A list of the table's names leaves its section rows out, and is titled by the table's
    # heading, not by the first section's name.
    table = hit(SECTIONED, title="Điểm chuẩn các ngành", heading="Điểm chuẩn")
    [names] = quotes_for(parts, "điểm chuẩn những ngành nào", table)
    assert names == "Điểm chuẩn: Khoa học Máy tính; Kỹ thuật Phần mềm."


def test_a_passage_naming_what_is_asked_is_among_those_quoted_from(parts: AnswererParts) -> None:
    question = "ra truong nganh ktpm luong khoi diem tam bao nhieu"
    reading = read_question(parts.processor.expand_query(question), parts.guard, parts.processor)
    quotas = [hit(f"| Kỹ thuật Phần mềm | 7480103 | {n}0 |", n=n) for n in range(1, 5)]
    salary = hit(
        "| Kỹ thuật Phần mềm | 97,0% | 15,5 triệu đồng/tháng |",
        title="Cơ hội việc làm",
        heading="Lương khởi điểm bình quân theo ngành",
        n=9,
    )
    kept = naming_what_is_asked([*quotas, salary], reading, parts.guard, 3)
    assert [h.chunk_id for h in kept[:3]] == [1, 2, 9]
    # one already kept names it: the order stays
    same = naming_what_is_asked([salary, *quotas], reading, parts.guard, 3)
    assert [h.chunk_id for h in same] == [9, 1, 2, 3, 4]
    # a question asking no attribute keeps the order too
    plain = read_question("ngành ktpm", parts.guard, parts.processor)
    assert naming_what_is_asked([*quotas, salary], plain, parts.guard, 3) == [*quotas, salary]


def test_a_passage_about_one_part_of_a_question_is_not_put_last_for_another_part(
    parts: AnswererParts,
) -> None:
    # the conversion table is the method PT2's; the second part names học bạ, the first none
    guard = parts.guard
    whole = read_question("ielts 6.5 quy đổi được mấy điểm, hạn nộp học bạ là ngày nào", guard)
    first = read_question("ielts 6.5 quy đổi được mấy điểm", guard)
    second = read_question("hạn nộp học bạ là ngày nào", guard)
    table = hit("IELTS 6.5 được quy đổi 9,5 điểm.", heading="PT2 – Xét điểm thi THPT", n=1)
    other = hit("Hạn nộp hồ sơ học bạ là 15/6/2026.", heading="PT4 – Xét học bạ THPT", n=2)
    assert [h.chunk_id for h in about_first([table, other], whole, guard)] == [2, 1]
    kept = about_first([table, other], whole, guard, [first, second])
    assert [h.chunk_id for h in kept] == [1, 2]
    # about another method than every part: last still
    assert [h.chunk_id for h in about_first([table, other], whole, guard, [second])] == [2, 1]
    # a year one part asks is the whole question's: a passage about another year goes last
    whole = read_question("học bạ có được không, năm 2025 điểm ĐGNL bao nhiêu", guard)
    first = read_question("học bạ có được không", guard)
    second = read_question("năm 2025 điểm ĐGNL bao nhiêu", guard)
    later = hit("Năm 2026 hồ sơ học bạ nộp trực tuyến.", heading="Học bạ 2026", n=3)
    cutoffs = hit("Điểm chuẩn ĐGNL năm 2025 là 950.", heading="Điểm chuẩn 2025", n=4)
    readings = [first, second]
    assert [h.chunk_id for h in about_first([later, cutoffs], whole, guard, readings)] == [3, 4]
    kept = about_first([later, cutoffs], whole, guard, readings, ("year",))
    assert [h.chunk_id for h in kept] == [4, 3]


@pytest.mark.parametrize(
    ("question", "order"),
    [
        # names no programme: the regular one's condition first, the văn bằng 2 page's last
        ("xét học bạ ngành khdl điều kiện tối thiểu bao nhiêu điểm", [2, 1]),
        # names it: the order stays
        ("văn bằng 2 ngành khdl cần điều kiện gì", [1, 2]),
    ],
)
def test_a_passage_headed_by_a_programme_goes_last_when_the_question_names_none(
    parts: AnswererParts, question: str, order: list[int]
) -> None:
    guard = parts.guard
    second_degree = hit(
        "Với ngành Khoa học Dữ liệu, ứng viên cần đã học tối thiểu một học phần Toán cao cấp.",
        title="Chương trình liên thông và văn bằng 2",
        heading="Điều kiện dự tuyển",
        n=1,
    )
    regular = hit(
        "Tổng điểm 3 môn trong tổ hợp xét tuyển đạt từ 24,00 điểm trở lên.",
        heading="PT4 – Xét học bạ THPT",
        n=2,
    )
    reading = read_question(question, guard)
    kept = about_first([second_degree, regular], reading, guard)
    assert [h.chunk_id for h in kept] == order
    # a programme named only in the passage's text (a scholarship's name) is no heading
    talent = hit("Học bổng Tài năng: 50% học phí.", title="Học bổng", heading="Học bổng 2026", n=3)
    plain = read_question("học bổng có mấy loại, điều kiện học bạ thế nào", guard)
    assert about_first([talent, regular], plain, guard) == [talent, regular]
