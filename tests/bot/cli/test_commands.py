"""The ``tuvan`` command as users run it: a subprocess with its own embedded PostgreSQL in a
temporary data dir (no TUVAN_DATABASE_URL). Each run loads the model and starts the server, so
the runs are few and the steps of a test share one data dir. Then FAQ files in-process."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from bot.core.errors import FaqFileError
from bot.db import migrate
from bot.db.models import FaqEntry, FaqStatus, FaqVariant, VariantOrigin
from bot.knowledge.faq_files import read_faq_file, write_faq_file
from tests.bot.cli._support import ok, stored_faq, tuvan

FAQ_ROWS: list[dict[str, Any]] = [
    {
        "id": "t-hoc-bong",
        "question": "Trường có học bổng cho tân sinh viên thủ khoa không?",
        "answer": "Có. Thủ khoa mỗi ngành được miễn 100% học phí năm nhất (Quyết định 12/QĐ-ĐHX).",
        "source": "hoc-bong.md",
        "variants": ["thu khoa co hoc bong ko", "học bổng thủ khoa"],
    },
    {
        "id": "t-xe-buyt",
        "question": "Có xe buýt đưa đón sinh viên từ ký túc xá đến trường không?",
        "answer": "Tuyến xe buýt nội bộ chạy mỗi 20 phút, 6:00–18:00, miễn phí cho sinh viên.",
        "language": "vi",
    },
    {
        "id": "t-nhap",
        "question": "Khi nào công bố lịch nhập học đợt 2?",
        "answer": "Lịch nhập học đợt 2 sẽ công bố sau.",
        "status": "draft",
    },
]


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cli")


@pytest.fixture(scope="module")
def imported(workdir: Path) -> Path:
    """A data dir into which ``tuvan faq import`` loaded FAQ_ROWS."""
    source = workdir / "faq.jsonl"
    source.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in FAQ_ROWS), encoding="utf-8"
    )
    data_dir = workdir / "imported"
    result = ok(tuvan("faq", "import", str(source), data_dir=data_dir, cwd=workdir))
    assert f"imported 3 FAQ entries from {source}" in result.stdout
    # the draft is not checked: it answers nobody yet; every phrasing gets its own entry, from
    # tier 1 or quoted first by tier 2 when tier 1 is not sure enough of a tiny FAQ
    summary = next(line for line in result.stdout.splitlines() if line.startswith("self-check"))
    assert summary.startswith("self-check: 2 entries, 4 phrasings;"), summary
    for clean in (
        "0 not answered by their entry",
        "0 answered by another entry",
        "0 confusable",
        "0 refused by the guard",
    ):
        assert clean in summary
    return data_dir


def test_faq_check_lists_problems_and_ends_with_the_summary(imported: Path, workdir: Path) -> None:
    result = ok(tuvan("faq", "check", data_dir=imported, cwd=workdir))
    lines = result.stdout.strip().splitlines()
    assert lines[-1].startswith("self-check: 2 entries, 4 phrasings;")
    for line in lines[:-1]:  # one tab-separated line per problem: id, kind, phrasing, why
        name, kind, phrasing, why = line.split("\t")
        assert name in {"t-hoc-bong", "t-xe-buyt"}
        assert kind in {"unanswered", "other_entry", "confusable", "guard"}
        assert phrasing
        assert why


def test_ask_json_answers_an_imported_faq_verbatim(imported: Path, workdir: Path) -> None:
    result = ok(tuvan("ask", "--json", FAQ_ROWS[0]["question"], data_dir=imported, cwd=workdir))
    answer = json.loads(result.stdout)  # stdout holds the one JSON object and nothing else
    assert {"tier", "answer", "citations", "faq_id", "scores", "timings_ms"} <= answer.keys()
    assert answer["tier"] == "faq"
    assert answer["answer"] == FAQ_ROWS[0]["answer"]
    assert answer["faq_external_id"] == "t-hoc-bong"
    assert isinstance(answer["faq_id"], int)
    assert answer["citations"] == []  # "hoc-bong.md", a file tuvan never read, names nothing
    assert answer["scores"]["faq"] > 0.9
    assert answer["timings_ms"]["total"] > 0
    assert answer["query"] == {"restored": None, "parts": []}
    assert "is empty" not in result.stderr


def test_ask_json_shows_the_question_restored(imported: Path, workdir: Path) -> None:
    question = "co xe buyt dua don sinh vien tu ky tuc xa den truong khong"
    result = ok(tuvan("ask", "--json", question, data_dir=imported, cwd=workdir))
    answer = json.loads(result.stdout)
    # learned from this store's FAQ (and the general lexicon) on the first question
    assert answer["query"]["restored"] == (
        "có xe buýt đưa đón sinh viên từ ký túc xá đến trường không"
    )
    assert answer["faq_external_id"] == "t-xe-buyt"


def test_faq_export_to_csv_round_trips_into_a_new_data_dir(imported: Path, workdir: Path) -> None:
    exported = workdir / "export.csv"
    result = ok(tuvan("faq", "export", str(exported), data_dir=imported, cwd=workdir))
    assert f"exported 3 FAQ entries to {exported}" in result.stdout
    with exported.open(encoding="utf-8", newline="") as f:
        rows = {r["id"]: r for r in csv.DictReader(f)}
    assert rows["t-hoc-bong"]["variants"] == "thu khoa co hoc bong ko | học bổng thủ khoa"
    assert rows["t-nhap"]["status"] == "draft"

    fresh = workdir / "reimported"
    ok(tuvan("faq", "import", str(exported), data_dir=fresh, cwd=workdir))
    original = stored_faq(imported)
    assert {(row[1], row[2]) for row in original} == {
        (r["question"], r["answer"]) for r in FAQ_ROWS
    }
    assert stored_faq(fresh) == original


def test_db_upgrade_then_ingest_indexes_good_files_and_skips_broken_ones(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    upgraded = ok(tuvan("db", "upgrade", data_dir=data_dir, cwd=tmp_path))
    assert upgraded.stdout.strip() == f"database at {migrate.head_revision()}"
    # Asking an empty store says so, where, and how to fill it (it used to fall back silently).
    empty = ok(tuvan("ask", "--json", "học phí bao nhiêu", data_dir=data_dir, cwd=tmp_path))
    assert json.loads(empty.stdout)["tier"] == "fallback"
    assert f"the knowledge base in the embedded database in {data_dir / 'pg'} is empty" in (
        " ".join(empty.stderr.split())
    )
    assert "`tuvan ingest FOLDER_OR_URL`" in empty.stderr

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "ky-tuc-xa.md").write_text(
        "# Ký túc xá\n\nSinh viên đăng ký ký túc xá trực tuyến trước ngày 15/8.\n"
        "Phí ở ký túc xá là 500.000 đồng mỗi tháng.\n",
        encoding="utf-8",
    )
    (docs / "broken.pdf").write_bytes(b"%PDF-1.7\n\x00\xff garbage, not a PDF \xfe\x01" * 20)
    (docs / "diem-chuan-2025.xlsx").write_bytes(b"not a workbook")
    for name in ("dang-ky.odt", "thong-ke.ods", "gioi-thieu.pptx", "README"):
        (docs / name).write_bytes(b"not read")
    result = ok(tuvan("ingest", str(docs), data_dir=data_dir, cwd=tmp_path))
    assert "indexed 1 documents" in result.stdout
    assert "2 skipped" in result.stdout
    # Files tuvan cannot read are not silently passed over: counted by type.
    assert (
        "not indexed, a type tuvan does not read: 1 (none), 1 .ods, 1 .odt, 1 .pptx"
        in result.stdout
    ), result.stdout
    skipped = [line for line in result.stderr.splitlines() if "skipped" in line]
    assert any("broken.pdf" in line for line in skipped), result.stderr
    assert any("diem-chuan-2025.xlsx: not a readable .xlsx file" in x for x in skipped)

    # Unchanged files cost nothing the second time; sources lists and removes what was indexed.
    again = ok(tuvan("ingest", str(docs / "ky-tuc-xa.md"), data_dir=data_dir, cwd=tmp_path))
    assert "indexed 0 documents (0 chunks), 1 unchanged" in again.stdout
    listed = ok(tuvan("sources", "--json", data_dir=data_dir, cwd=tmp_path))
    [source] = [json.loads(line) for line in listed.stdout.splitlines()]
    assert source["source"].endswith("ky-tuc-xa.md")
    assert (source["state"], source["title"]) == ("indexed", "Ký túc xá")
    assert source["chunks"] >= 1
    ok(tuvan("sources", "remove", source["source"], data_dir=data_dir, cwd=tmp_path))
    gone = tuvan("sources", "remove", source["source"], data_dir=data_dir, cwd=tmp_path)
    assert gone.returncode == 1
    assert "no source" in gone.stderr


@pytest.mark.parametrize(("name", "value"), [("TUVAN_PORT", "abc"), ("TUVAN_LOG_LEVEL", "verbose")])
def test_invalid_setting_is_a_short_error_without_traceback(
    tmp_path: Path, name: str, value: str
) -> None:
    result = tuvan(
        "ask", "học phí?", data_dir=tmp_path / "data", cwd=tmp_path, extra_env={name: value}
    )
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert f"{name}:" in result.stderr
    assert value.upper() in result.stderr.upper()
    assert len(result.stderr.strip().splitlines()) <= 3
    assert not (tmp_path / "data").exists()  # nothing was started


def test_faq_import_of_a_bad_file_names_the_entry_without_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "faq.jsonl"
    bad.write_text(
        '{"question": "Học phí?", "answer": "32.500.000 đồng"}\n{"question": "Hạn nộp?"}\n',
        encoding="utf-8",
    )
    result = tuvan("faq", "import", str(bad), data_dir=tmp_path / "data", cwd=tmp_path)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert "entry 2" in result.stderr
    assert "needs both a question and an answer" in result.stderr


# -- FAQ files in-process ----------------------------------------------------------------------


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_jsonl_rows_become_drafts(tmp_path: Path) -> None:
    path = write(
        tmp_path / "faq.jsonl",
        '{"id": "a1", "question": " Học phí? ", "answer": "32.500.000 đồng", '
        '"url": "https://x.example/hp", "variants": ["hoc phi", " ", "hp"]}\n'
        "\n"
        '{"question": "Hạn nộp?", "answer": "15/7", "status": "Draft"}\n',
    )
    first, second = read_faq_file(path)
    assert (first.external_id, first.question, first.answer) == (
        "a1",
        "Học phí?",
        "32.500.000 đồng",
    )
    assert first.source_url == "https://x.example/hp"
    assert first.variants == ["hoc phi", "hp"]
    assert first.status is FaqStatus.published
    assert second.external_id is None
    assert second.status is FaqStatus.draft


def test_csv_with_bom_reads_pipe_separated_variants(tmp_path: Path) -> None:
    path = tmp_path / "faq.csv"
    path.write_text(
        "id,question,answer,variants\n"
        'k1,Ký túc xá có máy lạnh không?,"Có, phòng 4 người có máy lạnh.",ktx co may lanh ko | phòng KTX có điều hòa không\n'  # noqa: E501
        "k2,Học phí?,32.500.000 đồng,\n",
        encoding="utf-8-sig",  # as spreadsheet programs save it
    )
    first, second = read_faq_file(path)
    assert first.external_id == "k1"
    assert first.answer == "Có, phòng 4 người có máy lạnh."
    assert first.variants == ["ktx co may lanh ko", "phòng KTX có điều hòa không"]
    assert second.variants == []


def test_yaml_list_or_faq_key_is_read(tmp_path: Path) -> None:
    listed = write(
        tmp_path / "a.yaml",
        "- id: 7\n  question: Học phí?\n  answer: 32.500.000 đồng\n  variants: [hp, hoc phi]\n",
    )
    keyed = write(
        tmp_path / "b.yml",
        "faq:\n  - question: Hạn nộp?\n    answer: '15/7'\n    variants: a | b\n",
    )
    [first] = read_faq_file(listed)
    [second] = read_faq_file(keyed)
    assert (first.external_id, first.variants) == ("7", ["hp", "hoc phi"])
    assert (second.answer, second.variants) == ("15/7", ["a", "b"])


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("a.jsonl", '{"question": "q", "answer": "a"}\n{"question": "q2"}\n', "entry 2 needs"),
        ("b.jsonl", '{"question": "q", "answer": "a"}\n\n{"question": "q2", \n', "line 3"),
        ("c.jsonl", '{"question": "q", "answer": "a"}\n["q", "a"]\n', "entry 2 is not an object"),
        ("d.csv", "question,answer\nq,a\nq2,a2\n,a3\n", "entry 3 needs"),
        ("e.yaml", "- question: q\n  answer: a\n  status: secret\n", "entry 1 has status"),
        ("f.yaml", "- question: [unclosed\n", "not valid YAML"),
        ("g.txt", "question,answer\n", "unknown FAQ format"),
    ],
)
def test_bad_rows_raise_faq_file_error_saying_where(
    tmp_path: Path, name: str, text: str, message: str
) -> None:
    path = write(tmp_path / name, text)
    with pytest.raises(FaqFileError, match=message) as caught:
        read_faq_file(path)
    assert str(path) in str(caught.value)


def test_unwritable_export_path_is_a_faq_file_error(tmp_path: Path) -> None:
    with pytest.raises(FaqFileError, match="cannot write"):
        write_faq_file(tmp_path / "missing" / "faq.csv", [])


@pytest.mark.parametrize("suffix", [".jsonl", ".json", ".csv", ".yaml", ".xlsx"])
def test_written_faq_file_reads_back_the_same_entries(tmp_path: Path, suffix: str) -> None:
    entry = FaqEntry(
        external_id="x1",
        question="Học phí ngành CNTT?",
        answer='32.500.000 đồng, "đóng" theo kỳ;\nxem thêm',
        source="hoc-phi.md",
        source_url=None,
        language="vi",
        status=FaqStatus.published,
        variants=[
            FaqVariant(text="hoc phi cntt", origin=VariantOrigin.staff),
            FaqVariant(text="machine made", origin=VariantOrigin.generated),
        ],
    )
    path = tmp_path / f"out{suffix}"
    assert write_faq_file(path, [entry]) == 1
    [draft] = read_faq_file(path)
    assert (draft.external_id, draft.question, draft.answer) == (
        "x1",
        entry.question,
        entry.answer,
    )
    assert draft.source == "hoc-phi.md"
    assert draft.variants == ["hoc phi cntt"]  # generated variants stay behind
