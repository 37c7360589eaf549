"""A synthetic but realistic Vietnamese admissions FAQ: majors × attributes × years.

Each entry is a formal question ("Năm 2025 ngành Khoa học máy tính tuyển bao nhiêu chỉ tiêu?")
with a templated answer; its variants are the ways students type the same question: chat
openings and endings, the major's short form (khmt, cntt), the year as "năm 2025" or "2025",
and about a third without diacritics. Held-out queries come from the same phrasings with another
seed, minus every text already stored, so a query is never a stored text verbatim.

The entries differ only by major, attribute or year, which is the hard case both for the vector
index (thousands of near-duplicates) and for the near-miss guard (same wording, other major).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from retrieval.text.folding import fold

# (name, short forms students type, code)
MAJORS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("Khoa học máy tính", ("khmt", "KHMT"), "7480101"),
    ("Kỹ thuật máy tính", ("ktmt", "KTMT"), "7480106"),
    ("Công nghệ thông tin", ("cntt", "CNTT"), "7480201"),
    ("Kỹ thuật phần mềm", ("ktpm", "KTPM"), "7480103"),
    ("An toàn thông tin", ("attt", "ATTT", "an ninh mạng"), "7480202"),
    ("Hệ thống thông tin", ("httt", "HTTT"), "7480104"),
    ("Khoa học dữ liệu", ("khdl", "data science"), "7460108"),
    ("Trí tuệ nhân tạo", ("AI", "ttnt"), "7480107"),
    ("Mạng máy tính và truyền thông dữ liệu", ("mmtt", "mạng máy tính"), "7480102"),
    ("Thương mại điện tử", ("tmđt", "TMĐT", "ecommerce"), "7340122"),
    ("Truyền thông đa phương tiện", ("ttđpt", "multimedia"), "7320104"),
    ("Thiết kế vi mạch", ("vi mạch", "tkvm"), "7520209"),
    ("Kỹ thuật điện tử viễn thông", ("điện tử viễn thông", "đtvt"), "7520207"),
    ("Kỹ thuật điều khiển và tự động hóa", ("tự động hóa", "tđh"), "7520216"),
    ("Kỹ thuật cơ điện tử", ("cơ điện tử",), "7520114"),
    ("Logistics và quản lý chuỗi cung ứng", ("logistics", "chuỗi cung ứng"), "7510605"),
    ("Quản trị kinh doanh", ("qtkd", "QTKD"), "7340101"),
    ("Kinh doanh quốc tế", ("kdqt", "KDQT"), "7340120"),
    ("Marketing", ("mkt", "marketing"), "7340115"),
    ("Tài chính ngân hàng", ("tcnh", "tài chính - ngân hàng"), "7340201"),
    ("Kế toán", ("kế toán", "ke toan"), "7340301"),
    ("Luật kinh tế", ("luật kt", "luật kinh tế"), "7380107"),
    ("Ngôn ngữ Anh", ("nna", "tiếng anh"), "7220201"),
    ("Thiết kế đồ họa", ("đồ họa", "graphic design"), "7210403"),
    ("Công nghệ sinh học", ("cnsh", "CNSH"), "7420201"),
)

YEARS = (2023, 2024, 2025, 2026)

# attribute -> (formal question, [student phrasings], answer); {m} major, {y} year
ATTRIBUTES: dict[str, tuple[str, tuple[str, ...], str]] = {
    "chỉ tiêu": (
        "Năm {y} ngành {m} tuyển bao nhiêu chỉ tiêu?",
        (
            "chỉ tiêu ngành {m} {y}",
            "chỉ tiêu ngành {m} năm {y} là bao nhiêu",
            "ngành {m} {y} tuyển bao nhiêu sinh viên",
            "{y} ngành {m} lấy bao nhiêu sv",
            "năm {y} trường tuyển bao nhiêu chỉ tiêu cho ngành {m}",
            "số lượng tuyển ngành {m} năm {y}",
            "ngành {m} năm {y} có bao nhiêu chỉ tiêu",
            "chi tieu {m} {y} bn",
        ),
        "Năm {y} ngành {m} (mã ngành {c}) dự kiến tuyển {n} chỉ tiêu.",
    ),
    "điểm chuẩn": (
        "Điểm chuẩn ngành {m} năm {y} là bao nhiêu?",
        (
            "điểm chuẩn {m} {y}",
            "điểm chuẩn ngành {m} năm {y} bao nhiêu",
            "năm {y} ngành {m} lấy bao nhiêu điểm",
            "điểm trúng tuyển ngành {m} năm {y}",
            "bao nhiêu điểm thì đậu ngành {m} năm {y}",
            "{y} điểm chuẩn ngành {m} là mấy",
            "ngành {m} năm {y} điểm chuẩn cao không",
            "diem chuan {m} {y} bn",
        ),
        "Điểm chuẩn ngành {m} năm {y} theo kết quả thi tốt nghiệp THPT là {s} điểm.",
    ),
    "học phí": (
        "Học phí ngành {m} năm {y} là bao nhiêu?",
        (
            "học phí ngành {m} {y}",
            "học phí {m} năm {y} bao nhiêu một năm",
            "ngành {m} năm {y} đóng bao nhiêu tiền",
            "mức thu học phí ngành {m} năm {y}",
            "học ngành {m} năm {y} tốn bao nhiêu tiền",
            "học phí {m} khóa {y} là bao nhiêu",
            "năm {y} học phí ngành {m} có tăng không",
            "hoc phi {m} {y} bn",
        ),
        "Học phí dự kiến năm học {y}-{y1} của ngành {m} là {f}.000.000 đồng/năm.",
    ),
    "tổ hợp": (
        "Ngành {m} năm {y} xét tuyển những tổ hợp môn nào?",
        (
            "tổ hợp xét tuyển ngành {m} {y}",
            "ngành {m} năm {y} xét khối nào",
            "khối thi ngành {m} năm {y}",
            "năm {y} ngành {m} xét tổ hợp gì",
            "ngành {m} {y} có xét khối D01 không",
            "môn xét tuyển ngành {m} năm {y}",
            "tổ hợp môn của ngành {m} năm {y} là gì",
            "to hop {m} {y}",
        ),
        "Năm {y} ngành {m} xét tuyển các tổ hợp {t}.",
    ),
    "phương thức": (
        "Năm {y} ngành {m} xét tuyển theo những phương thức nào?",
        (
            "phương thức xét tuyển ngành {m} {y}",
            "ngành {m} năm {y} có mấy phương thức xét tuyển",
            "năm {y} vào ngành {m} bằng cách nào",
            "các phương thức tuyển sinh ngành {m} năm {y}",
            "ngành {m} {y} có xét học bạ không",
            "xét tuyển ngành {m} năm {y} như thế nào",
            "năm {y} ngành {m} xét những phương thức gì",
            "phuong thuc xet tuyen {m} {y}",
        ),
        "Năm {y} ngành {m} xét tuyển theo {k} phương thức: tuyển thẳng, đánh giá năng lực "
        "và kết quả thi tốt nghiệp THPT.",
    ),
    "cơ hội việc làm": (
        "Sinh viên tốt nghiệp ngành {m} khóa {y} có cơ hội việc làm như thế nào?",
        (
            "ngành {m} khóa {y} ra trường làm gì",
            "cơ hội việc làm ngành {m} khóa {y}",
            "học ngành {m} khóa {y} ra trường có dễ xin việc không",
            "tốt nghiệp ngành {m} khóa {y} làm nghề gì",
            "việc làm sau khi học ngành {m} khóa {y}",
            "ngành {m} khóa {y} ra làm ở đâu",
            "vị trí việc làm của ngành {m} khóa {y}",
            "co hoi viec lam {m} khoa {y}",
        ),
        "Sinh viên ngành {m} khóa {y} có thể làm việc tại các doanh nghiệp, viện nghiên cứu "
        "và cơ quan nhà nước; tỉ lệ có việc làm sau 1 năm khoảng {p}%.",
    ),
    "thời gian đào tạo": (
        "Ngành {m} khóa {y} học trong bao lâu?",
        (
            "ngành {m} khóa {y} học mấy năm",
            "thời gian đào tạo ngành {m} khóa {y}",
            "học ngành {m} khóa {y} bao lâu thì ra trường",
            "ngành {m} khóa {y} học bao nhiêu năm",
            "khóa {y} ngành {m} kéo dài bao lâu",
            "ngành {m} khóa {y} mấy năm thì tốt nghiệp",
            "thời gian học ngành {m} khóa {y} là bao lâu",
            "nganh {m} khoa {y} hoc may nam",
        ),
        "Ngành {m} khóa {y} đào tạo trong {d} năm ({k2} học kỳ) theo hệ thống tín chỉ.",
    ),
    "học bổng": (
        "Năm {y} ngành {m} có những học bổng nào cho tân sinh viên?",
        (
            "học bổng ngành {m} {y}",
            "năm {y} ngành {m} có học bổng không",
            "học bổng tân sinh viên ngành {m} năm {y}",
            "ngành {m} năm {y} có học bổng toàn phần không",
            "điều kiện nhận học bổng ngành {m} năm {y}",
            "năm {y} vào ngành {m} có được học bổng không",
            "các loại học bổng ngành {m} năm {y}",
            "hoc bong {m} {y}",
        ),
        "Năm {y} tân sinh viên ngành {m} có thể nhận học bổng khuyến khích học tập và "
        "học bổng tuyển sinh trị giá {h}.000.000 đồng.",
    ),
    "chương trình đào tạo": (
        "Chương trình đào tạo ngành {m} khóa {y} gồm những môn học gì?",
        (
            "ngành {m} khóa {y} học những môn gì",
            "chương trình đào tạo ngành {m} khóa {y}",
            "học ngành {m} khóa {y} thì học gì",
            "khung chương trình ngành {m} khóa {y}",
            "ngành {m} khóa {y} học những gì",
            "các môn học của ngành {m} khóa {y}",
            "môn học chính ngành {m} khóa {y}",
            "chuong trinh dao tao {m} khoa {y}",
        ),
        "Chương trình đào tạo ngành {m} khóa {y} gồm {tc} tín chỉ: khối kiến thức đại cương, "
        "cơ sở ngành, chuyên ngành và khóa luận tốt nghiệp.",
    ),
    "mã ngành": (
        "Mã ngành {m} năm {y} là gì?",
        (
            "mã ngành {m} {y}",
            "mã xét tuyển ngành {m} năm {y}",
            "năm {y} ngành {m} có mã ngành là gì",
            "ngành {m} năm {y} mã bao nhiêu",
            "cho em xin mã ngành {m} năm {y}",
            "mã ngành của {m} năm {y} là số mấy",
            "năm {y} mã xét tuyển {m} là gì",
            "ma nganh {m} {y}",
        ),
        "Năm {y} ngành {m} có mã xét tuyển {c}.",
    ),
}

OPENINGS = (
    "",
    "",
    "",
    "Cho em hỏi ",
    "Dạ cho em hỏi ",
    "ad ơi ",
    "Em chào thầy cô, ",
    "Trường ơi ",
    "mn cho mình hỏi ",
    "Xin hỏi ",
    "cho e hỏi ",
    "Anh chị ơi, ",
    "Chào ad, ",
)
ENDINGS = ("", "", "?", " ạ", " ạ?", " vậy ạ", " v ad", " ạ, em cảm ơn", " nhỉ", " ad ơi")
COMBINATIONS = ("A00, A01, D01, D07", "A00, A01, D01", "A00, A01, D07, X06", "A01, D01, D07")


@dataclass(frozen=True)
class FaqItem:
    external_id: str
    question: str
    answer: str
    variants: tuple[str, ...]
    major: str
    attribute: str
    year: int


def _fill(template: str, major: str, year: int) -> str:
    return template.format(m=major, y=year)


def _answer(template: str, major: str, code: str, year: int, rnd: random.Random) -> str:
    return template.format(
        m=major,
        y=year,
        y1=year + 1,
        c=code,
        n=rnd.randrange(60, 400, 10),
        s=f"{rnd.uniform(22, 28.5):.2f}".replace(".", ","),
        f=rnd.randrange(30, 60),
        t=rnd.choice(COMBINATIONS),
        k=rnd.randint(3, 6),
        p=rnd.randint(85, 98),
        d="4",
        k2="8",
        h=rnd.choice((10, 15, 20, 30)),
        tc=rnd.randrange(125, 160),
    )


def _phrasing(
    templates: tuple[str, ...], name: str, short: tuple[str, ...], year: int, rnd: random.Random
) -> str:
    template = rnd.choice(templates)
    major = rnd.choice((name, name.lower(), name.lower(), *short))
    text = _fill(template, major, year)
    if rnd.random() < 0.3:
        text = text.replace(f"năm {year}", str(year))
    text = rnd.choice(OPENINGS) + text + rnd.choice(ENDINGS)
    if text and rnd.random() < 0.5:
        text = text[0].upper() + text[1:]
    if rnd.random() < 0.35:
        text = fold(text)  # typed without diacritics
    return text


def build_faq(entries: int, variants_per_entry: int, *, seed: int = 7) -> list[FaqItem]:
    """``entries`` FAQ items (≤ 1,000) with ``variants_per_entry`` distinct variants each."""
    rnd = random.Random(seed)
    combos = [(m, a, y) for y in YEARS for a in ATTRIBUTES for m in MAJORS]
    if entries > len(combos):
        raise ValueError(f"at most {len(combos)} entries")
    rnd.shuffle(combos)
    items = []
    for n, ((name, short, code), attribute, year) in enumerate(combos[:entries], start=1):
        formal, phrasings, answer = ATTRIBUTES[attribute]
        question = _fill(formal, name, year)
        variants: dict[str, None] = {}
        for _ in range(variants_per_entry * 50):
            if len(variants) == variants_per_entry:
                break
            text = _phrasing(phrasings, name, short, year, rnd)
            if text != question:
                variants[text] = None
        items.append(
            FaqItem(
                external_id=f"synth-{n:04d}",
                question=question,
                answer=_answer(answer, name, code, year, rnd),
                variants=tuple(variants),
                major=name,
                attribute=attribute,
                year=year,
            )
        )
    return items


def held_out_queries(items: list[FaqItem], count: int, *, seed: int = 11) -> list[tuple[str, str]]:
    """``count`` (query, expected external_id) pairs phrased like the variants, none stored."""
    rnd = random.Random(seed)
    stored = {t for item in items for t in (item.question, *item.variants)}
    majors = {name: short for name, short, _ in MAJORS}
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    while len(out) < count:
        item = rnd.choice(items)
        _, phrasings, _ = ATTRIBUTES[item.attribute]
        text = _phrasing(phrasings, item.major, majors[item.major], item.year, rnd)
        if text not in stored and text not in seen:
            seen.add(text)
            out.append((text, item.external_id))
    return out
