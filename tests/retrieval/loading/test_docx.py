"""DOCX files built in the test from their minimal OOXML parts."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from bot.core.errors import IngestError
from retrieval.loading import load_file
from retrieval.loading.docx import load_docx

W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
CONTENT_TYPES = """<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">
<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>
<Default Extension="xml" ContentType="application/xml"/>
<Override PartName="/word/document.xml"
 ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>
</Types>"""
RELS = """<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">
<Relationship Id="rId1" Target="word/document.xml"
 Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument"/>
</Relationships>"""
NUMBERING = f"""<w:numbering xmlns:w="{W}">
<w:abstractNum w:abstractNumId="0"><w:lvl w:ilvl="0"><w:start w:val="1"/>
<w:numFmt w:val="decimal"/><w:lvlText w:val="Điều %1."/></w:lvl></w:abstractNum>
<w:num w:numId="7"><w:abstractNumId w:val="0"/></w:num>
</w:numbering>"""


def paragraph(text: str, style: str | None = None, *, num_id: str | None = None) -> str:
    properties = f'<w:pStyle w:val="{style}"/>' if style else ""
    if num_id:
        properties += f'<w:numPr><w:ilvl w:val="0"/><w:numId w:val="{num_id}"/></w:numPr>'
    return (
        f'<w:p><w:pPr>{properties}</w:pPr><w:r><w:t xml:space="preserve">{text}</w:t></w:r></w:p>'
    )


def table(rows: list[list[str]]) -> str:
    cells = "".join(
        "<w:tr>" + "".join(f"<w:tc>{paragraph(cell)}</w:tc>" for cell in row) + "</w:tr>"
        for row in rows
    )
    return f"<w:tbl>{cells}</w:tbl>"


def write_docx(path: Path, body: str, *, extra: dict[str, str] | None = None) -> Path:
    document = f'<w:document xmlns:w="{W}"><w:body>{body}<w:sectPr/></w:body></w:document>'
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("[Content_Types].xml", CONTENT_TYPES)
        archive.writestr("_rels/.rels", RELS)
        archive.writestr("word/document.xml", document)
        for name, content in (extra or {}).items():
            archive.writestr(name, content)
    return path


BODY = "".join(
    [
        paragraph("Thông báo tuyển sinh 2025", "Title"),
        paragraph("Trường thông báo tuyển sinh đại học chính quy."),
        paragraph("Phương thức xét tuyển", "Heading1"),
        paragraph("Xét tuyển thẳng theo quy chế."),
        paragraph("Học phí", "Heading2"),
        table([["Ngành", "Học phí"], ["Khoa học máy tính", "40.000.000 đ"], ["", ""]]),
        paragraph("Học phí tăng không quá 10% mỗi năm."),
        paragraph("Liên hệ", "Heading1"),
        paragraph("Email: tuyensinh@example.edu.vn"),
    ]
)


def test_docx_sections_follow_heading_styles_and_tables_become_rows(tmp_path: Path) -> None:
    doc = load_file(write_docx(tmp_path / "thong-bao.docx", BODY))

    assert doc.title == "Thông báo tuyển sinh 2025"
    assert doc.language == "vi"
    assert doc.meta["format"] == "docx"
    assert [(s.heading_path, s.page) for s in doc.sections] == [
        ((), None),
        (("Phương thức xét tuyển",), None),
        (("Phương thức xét tuyển", "Học phí"), None),
        (("Liên hệ",), None),
    ]
    assert doc.sections[0].text == "Trường thông báo tuyển sinh đại học chính quy."
    assert doc.sections[2].text == (
        "| Ngành | Học phí |\n| --- | --- |\n| Khoa học máy tính | 40.000.000 đ |\n\n"
        "Học phí tăng không quá 10% mỗi năm."
    )


def test_load_docx_reads_a_docx_directly(tmp_path: Path) -> None:
    path = write_docx(tmp_path / "a.docx", BODY)

    assert load_docx(path).sections == load_file(path).sections


def test_vietnamese_heading_style_names_and_core_title(tmp_path: Path) -> None:
    styles = f"""<w:styles xmlns:w="{W}">
<w:style w:type="paragraph" w:styleId="u1"><w:name w:val="Tiêu đề 1"/></w:style>
<w:style w:type="paragraph" w:styleId="Custom"><w:basedOn w:val="Outline"/></w:style>
<w:style w:type="paragraph" w:styleId="Outline"><w:pPr><w:outlineLvl w:val="1"/></w:pPr></w:style>
</w:styles>"""
    core = """<cp:coreProperties
 xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties"
 xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Quy định học bổng</dc:title>
</cp:coreProperties>"""
    body = paragraph("Đối tượng", "u1") + paragraph("Con", "Custom") + paragraph("Sinh viên.")
    path = write_docx(
        tmp_path / "hb.docx", body, extra={"word/styles.xml": styles, "docProps/core.xml": core}
    )

    doc = load_file(path)

    assert doc.title == "Quy định học bổng"
    assert [(s.heading_path, s.text) for s in doc.sections] == [
        (("Đối tượng", "Con"), "Sinh viên.")
    ]


def test_auto_numbered_articles_get_their_numbers(tmp_path: Path) -> None:
    body = paragraph("Phạm vi", num_id="7") + paragraph("Đối tượng", num_id="7")
    path = write_docx(tmp_path / "qc.docx", body, extra={"word/numbering.xml": NUMBERING})

    assert load_file(path).sections[0].text == "Điều 1. Phạm vi\nĐiều 2. Đối tượng"


def test_deleted_revisions_are_left_out(tmp_path: Path) -> None:
    body = (
        '<w:p><w:r><w:t>Hạn nộp </w:t></w:r><w:del w:id="1"><w:r><w:delText>15/6'
        '</w:delText></w:r></w:del><w:ins w:id="2"><w:r><w:t>30/6</w:t></w:r></w:ins></w:p>'
    )

    assert load_file(write_docx(tmp_path / "r.docx", body)).sections[0].text == "Hạn nộp 30/6"


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"this is not a zip file at all", "not a ZIP"),
        (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 100, "OLE"),
    ],
)
def test_corrupt_docx_is_an_ingest_error(tmp_path: Path, content: bytes, reason: str) -> None:
    path = tmp_path / "bad.docx"
    path.write_bytes(content)

    with pytest.raises(IngestError, match=reason) as error:
        load_file(path)

    assert "bad.docx" in str(error.value)


def test_docx_with_broken_xml_or_no_document_is_an_ingest_error(tmp_path: Path) -> None:
    broken = tmp_path / "broken.docx"
    with zipfile.ZipFile(broken, "w") as archive:
        archive.writestr("_rels/.rels", RELS)
        archive.writestr("word/document.xml", "<w:document><w:body>")
    empty = tmp_path / "empty.docx"
    with zipfile.ZipFile(empty, "w") as archive:
        archive.writestr("hello.txt", "hi")

    with pytest.raises(IngestError, match="corrupt DOCX"):
        load_file(broken)
    with pytest.raises(IngestError, match=r"no word/document\.xml"):
        load_file(empty)


def test_docx_with_a_dtd_is_refused(tmp_path: Path) -> None:
    document = (
        '<!DOCTYPE w [<!ENTITY a "aaaa">]>'
        f'<w:document xmlns:w="{W}"><w:body>{paragraph("&a;")}</w:body></w:document>'
    )
    path = tmp_path / "dtd.docx"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("word/document.xml", document)

    with pytest.raises(IngestError, match="DTD"):
        load_file(path)
