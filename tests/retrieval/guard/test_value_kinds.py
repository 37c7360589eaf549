"""The kinds of value a passage unit holds, as the guard's vocabulary reads them (a date, an
amount...): tier 2 leads a question asking one with a unit that holds it."""

import pytest

from retrieval.guard.checks import NearMissGuard
from retrieval.guard.vocabulary import load_guard


@pytest.fixture(scope="module")
def guard() -> NearMissGuard:
    return load_guard()


@pytest.mark.parametrize(
    ("kind", "text", "holds"),
    [
        ("date", "Học phí nộp chậm nhất ngày 28/8/2026.", True),
        ("date", "Kết quả gửi trong 5 ngày làm việc.", True),
        ("date", "Chương trình học 4 năm.", True),
        # "học kỳ 1 năm học 2026–2027" names a term and a school year, not a time
        ("date", "Mức học phí học kỳ 1 năm học 2026–2027: 16.250.000 đồng", False),
        ("quantity", "Điểm chuẩn ngành CNTT là 27.5 điểm.", True),
        ("quantity", "Học phí 1.050.000 đồng/tín chỉ.", True),
        ("quantity", "Thời gian đào tạo 4 năm.", True),
        # "1.Thí sinh…" numbers a list item; a year is no figure asked "bao nhiêu"
        ("quantity", "VII. ĐĂNG KÝ: 1.Thí sinh đăng ký dự tuyển tại cổng tuyển sinh.", False),
        ("quantity", "Tuyển sinh năm 2025.", False),
        # "một số ngành" is some majors, no count
        ("quantity", "So sánh điểm chuẩn THPT 2024 – 2025 (một số ngành)", False),
        ("quantity", "Mỗi sinh viên được cấp một thẻ.", True),
        ("money", "Học phí ở Úc tham khảo năm 2026 khoảng 34.000 AUD/năm.", True),
        ("money", "Khu đô thị Lộc Phát, Bình Dương.", False),
        ("money", "Lệ phí xét duyệt hồ sơ: 100.000/hồ sơ", True),  # per file: an amount
        ("money", "Với số lượng 3.000 cây trở lên", False),
        ("money", "Học phí 2,5 triệu đồng mỗi tháng", True),
        ("money", "Giá khoảng 500k/tháng", True),
        # "4+1 ngành" is no "1 ngàn" (a thousand)
        ("money", "Chương trình cử nhân – thạc sĩ tích hợp 4+1 ngành Khoa học Máy tính", False),
        ("period", "Nhập học trực tuyến tại nhaphoc.shut.example.vn | 14/8/2026 – 23/8/2026", True),
        ("period", "Thời gian: từ 14/8/2026 đến 23/8/2026.", True),
        ("period", "Nộp lệ phí | 15/7/2026 – 17h00 ngày 21/7/2026", True),
        ("period", "Bắt đầu từ ngày 27/08/2025 đến hết ngày 02/09/2025", True),
        # one deadline is no span
        ("period", "Xác nhận nhập học trước 17h00 ngày 21/8/2026.", False),
        ("period", "Học phí năm học 2026–2027: 32.500.000 đồng", False),
        ("area", "Diện tích | 3,5 ha | 18 ha", True),
        ("area", "phòng sạch tiêu chuẩn ISO 7 rộng 400 m², 120 máy trạm", True),
        ("area", "Ký túc xá 2.400 chỗ, cách trung tâm 2 km.", False),
        ("link", "Website của khoa: khmt.uit.edu.vn", True),
        ("link", "Xem chi tiết tại https://tuyensinh.uit.edu.vn/thong-bao", True),
        ("link", "Điểm trung bình từ 3.5 trở lên.", False),
        ("link", "Liên hệ văn phòng tại TP. Hồ Chí Minh.", False),
        ("time", "Thời gian: từ 24/8/2026 đến 28/8/2026, từ 7h30 đến 16h30 hằng ngày.", True),
        ("time", "Thư viện mở cửa 7:00 – 22:00.", True),
        # days are no time of day
        ("time", "Hồ sơ giấy nộp từ 24/8/2026 đến 28/8/2026.", False),
        ("address", "Địa điểm: Hội trường A, cơ sở chính, số 12 đường Bến Nghé Mới.", True),
        # "tại đây" points back to a place said before it, and says none
        ("address", "Tại đây, sinh viên nộp hồ sơ giấy và nhận đồng phục.", False),
    ],
)
def test_a_unit_holds_a_value_of_a_kind_or_not(
    guard: NearMissGuard, kind: str, text: str, holds: bool
) -> None:
    assert guard.holds({kind}, text) is holds


@pytest.mark.parametrize(
    ("question", "kinds"),
    [
        ("website khoa khoa hoc may tinh la gi", {"link"}),
        ("email phòng đào tạo là gì", {"email"}),
        ("link đăng ký xét tuyển ở đâu ạ", {"link", "address"}),
        # asks how to do something on the web site, not for its address
        ("đăng ký trên website như thế nào", set()),
        # folded "máy tính" asks no figure ("mấy")
        ("Ngành khoa học máy tính học ở đâu", {"address"}),
        ("có mấy ngành", {"quantity"}),
        # an amount asked is not any figure: "3 tín chỉ" does not say what a credit costs
        ("1 tín chỉ ngành khdl bao nhiêu tiền", {"money"}),
        ("học phí ngành cntt bao nhiêu 1 năm", {"money"}),
        ("sđt phòng tuyển sinh là bao nhiêu", {"phone"}),
        ("học bao nhiêu năm", {"quantity"}),
        # a share of the fee is a figure, not an amount ("50% học phí năm thứ nhất")
        ("hoc bong tai nang dc bao nhieu phan tram hoc phi", {"quantity"}),
        ("miễn giảm bao nhiêu % học phí", {"quantity"}),
        # both ends of a span asked: a deadline alone does not answer
        ("nhập học trực tuyến từ ngày nào đến ngày nào", {"period"}),
        ("dang ky ktx tu bao gio den bao gio", {"period"}),
        ("hạn nộp hồ sơ là ngày nào", {"date"}),
        # a time of day: "mấy giờ", "mấy h"; "từ 24/8 đến 28/8" does not answer it
        ("thư viện mở cửa tới mấy giờ", {"time"}),
        ("chuyen cuoi may h v ad", {"time"}),
        ("What time does the library close?", {"time"}),
        # an area asked is not any figure
        ("cơ sở 2 rộng bao nhiêu ha", {"area"}),
        ("dien tich truong bn", {"area"}),
        ("trang nhập học là gì", {"link"}),
        # "trang" alone is no web page
        ("trang phục khi nhập học là gì", set()),
        # a threshold asked: "điểm mỗi môn = … / 3" holds a figure, not the least score
        ("tổng 3 môn phải đc bn điểm mới nộp được", {"requirement"}),
        ("dgnl thi toi thieu may diem", {"requirement"}),
        ("What is the minimum IELTS score?", {"requirement"}),
    ],
)
def test_what_a_question_asks_for(guard: NearMissGuard, question: str, kinds: set[str]) -> None:
    assert guard.asked_kinds(question) == kinds


@pytest.mark.parametrize(
    ("attribute", "text", "says"),
    [
        ("mức lương", "Kỹ thuật Phần mềm: lương khởi điểm bình quân 15,5 triệu đồng/tháng", True),
        # an amount says a fee, but a fee is no salary
        ("mức lương", "Chuẩn – nhóm 1: học phí/năm là 32.500.000 đồng", False),
        ("học phí", "Chuẩn – nhóm 1: 32.500.000 đồng/năm", True),
    ],
)
def test_a_unit_says_an_attribute_by_name_or_by_its_kind_of_value(
    guard: NearMissGuard, attribute: str, text: str, says: bool
) -> None:
    assert guard.says_attribute(frozenset({attribute}), text) is says


@pytest.mark.parametrize(
    ("question", "salary"),
    [
        ("ra truong nganh ktpm luong khoi diem tam bao nhieu", True),
        ("học xong ra trường thì lương thế nào", True),
        # "lương" is a paid leave here, and "lượng" folds like it
        ("Khi kết hôn thì được nghỉ có lương bao nhiêu ngày?", False),
        ("với số lượng bao nhiêu thì bị phạt", False),
        ("học phí chương trình chất lượng cao", False),
    ],
)
def test_a_salary_is_read_only_in_its_longer_forms(
    guard: NearMissGuard, question: str, salary: bool
) -> None:
    assert ("mức lương" in guard.facets(question).get("attribute", frozenset())) is salary
