"""The Catalogue page ("Danh mục"): the school's majors, programmes, admission methods and
subject combinations, and the values of its facts tables, as ingest read them from the
knowledge base's tables (retrieval.facts), each with where it was found.

Editors correct an item (its name, code, the abbreviations students use, or hide it), add one,
take a value out of the answers (or put it back) or correct it; what they change is theirs
(origin "staff") and the next ingest never overwrites it. The cells ingest could not read cleanly
are listed per document. The catalogue is exported and imported as a JSON Lines file, one item a
line (admin.catalogue_files); an imported item is staff's.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from aiohttp import web
from sqlalchemy import delete, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from admin import audit
from admin.catalogue_files import MAX_ALIASES, catalogue_lines, item_json, read_catalogue_file
from admin.i18n import add_strings
from admin.web import field, form, me, redirect, render, requires, runtime
from bot.db.models import CatalogueRow, Document, FactRow, StaffRole
from bot.db.models.facts import EXTRACTED, STAFF
from retrieval.facts.book import conflicts
from retrieval.facts.cells import read_number, value_kind
from retrieval.facts.model import CATALOGUE_KINDS
from retrieval.index.facts import fact_of, place_of
from retrieval.text.folding import fold

MAX_IMPORT_BYTES = 1024 * 1024
FACTS_SHOWN = 500
# Read from a table and waiting for staff: a value staff took out is theirs (origin "staff").
_WAITING = FactRow.published.is_(False) & (FactRow.origin == EXTRACTED)

add_strings(
    {
        "cat.title": ("Danh mục", "Catalogue"),
        "cat.intro": (
            "Ngành, chương trình, phương thức và tổ hợp của trường, cùng các số liệu (điểm chuẩn, "
            "chỉ tiêu, tổ hợp) trợ lý đọc được từ bảng trong tài liệu. Trợ lý dùng chúng để trả "
            "lời chính xác câu hỏi kiểu “25 điểm có đỗ ngành X không”, “trường có ngành Y không”. "
            "Mục bạn sửa hoặc thêm sẽ không bị lần nạp tài liệu sau ghi đè.",
            "The school's majors, programmes, methods and combinations, and the values "
            "(cut-offs, quotas, combinations) the assistant read from the documents' tables. It "
            "answers questions such as “can I get into X with 25 points” or “do you offer Y” from "
            "them. What you correct or add is never overwritten by the next ingest.",
        ),
        "cat.kind.major": ("Ngành", "Majors"),
        "cat.kind.programme": ("Chương trình", "Programmes"),
        "cat.kind.method": ("Phương thức xét tuyển", "Admission methods"),
        "cat.kind.combination": ("Tổ hợp", "Subject combinations"),
        "cat.kind.campus": ("Cơ sở", "Campuses"),
        "cat.name": ("Tên", "Name"),
        "cat.code": ("Mã", "Code"),
        "cat.aliases": ("Cách gọi khác (cách nhau bởi dấu phẩy)", "Other names (comma-separated)"),
        "cat.hidden": ("Ẩn", "Hidden"),
        "cat.from": ("Nguồn", "Source"),
        "cat.staff": ("do cán bộ sửa", "set by staff"),
        "cat.add": ("Thêm mục", "Add an item"),
        "cat.kind": ("Loại", "Kind"),
        "cat.facts": ("Số liệu từ bảng", "Values from the tables"),
        "cat.attribute": ("Số liệu", "Value of"),
        "cat.major": ("Ngành", "Major"),
        "cat.programme": ("Chương trình", "Programme"),
        "cat.method": ("Phương thức", "Method"),
        "cat.year": ("Năm", "Year"),
        "cat.value": ("Giá trị", "Value"),
        "cat.standard": ("chuẩn", "standard"),
        "cat.not_offered": ("không xét", "not admitted this way"),
        "cat.in_answers": ("Dùng khi trả lời", "Used in answers"),
        "cat.unpublish": ("Không dùng", "Stop using"),
        "cat.publish": ("Dùng lại", "Use again"),
        "cat.approve": ("Duyệt", "Approve"),
        "cat.waiting": (
            "{n} giá trị đọc từ bảng đang chờ duyệt: trợ lý chưa dùng chúng khi trả lời.",
            "{n} values read from the tables wait for review: the assistant does not answer "
            "with them yet.",
        ),
        "cat.approve_all": ("Duyệt tất cả", "Approve all"),
        "cat.rejected": ("Ô chưa đọc được", "Cells not read"),
        "cat.rejected_help": (
            "Những ô này không được dùng để trả lời; sửa bảng trong tài liệu rồi nạp lại.",
            "These cells are not used in answers; fix the table in the document and re-ingest.",
        ),
        "cat.reason": ("Lý do", "Why"),
        "cat.clashes": ("Số liệu mâu thuẫn", "Values that disagree"),
        "cat.clashes_help": (
            "Các bảng ghi khác nhau cho cùng ngành, chương trình, phương thức và năm: trợ lý không "
            "dùng những giá trị này. Hãy sửa hoặc bỏ dùng giá trị sai.",
            "The tables give different values for one major, programme, method and year: the "
            "assistant uses none of them. Correct the wrong one or stop using it.",
        ),
        "cat.export": ("Tải danh mục (JSONL)", "Download the catalogue (JSONL)"),
        "cat.import": ("Nhập danh mục từ tệp JSONL", "Import a catalogue file (JSONL)"),
        "cat.empty": (
            "Chưa có mục nào: nạp tài liệu có bảng ngành, điểm chuẩn hoặc chỉ tiêu.",
            "Nothing yet: ingest documents with tables of majors, cut-offs or quotas.",
        ),
        "cat.error.name": ("Tên không được để trống.", "The name may not be empty."),
        "cat.error.kind": ("Loại mục không hợp lệ.", "Not a kind of item."),
        "cat.error.value": ("Giá trị phải là một số.", "The value must be a number."),
        "cat.error.file": (
            "Tệp không đọc được: mỗi dòng phải là một mục JSON có kind và name ({reason}).",
            "The file cannot be read: each line must be a JSON item with kind and name ({reason}).",
        ),
        "msg.cat_saved": ("Đã lưu.", "Saved."),
        "msg.cat_imported": ("Đã nhập danh mục.", "The catalogue is imported."),
    }
)


async def _page(
    request: web.Request, *, error: str = "", reason: str = "", status: int = 200
) -> web.Response:
    async with runtime(request).sessionmaker() as session:
        items = (
            await session.scalars(
                select(CatalogueRow).order_by(CatalogueRow.kind, CatalogueRow.name)
            )
        ).all()
        facts = (
            await session.scalars(
                select(FactRow)
                .order_by(FactRow.attribute, FactRow.major, FactRow.year.desc(), FactRow.id)
                .limit(FACTS_SHOWN)
            )
        ).all()
        documents = (
            await session.execute(select(Document.title, Document.source, Document.meta))
        ).all()
        all_published = (await session.scalars(select(FactRow).where(FactRow.published))).all()
        waiting = await session.scalar(select(func.count()).select_from(FactRow).where(_WAITING))
    by_kind: dict[str, list[CatalogueRow]] = defaultdict(list)
    for item in one_each(items):
        by_kind[item.kind].append(item)
    published = list(all_published)
    as_facts = {id(row): fact_of(row) for row in published}
    clashes = [
        [f"{f.text} ({f.place.describe()})" for f in found]
        + [f"{found[0].attribute}, {found[0].major}, {found[0].method or ''} {found[0].year}"]
        for found in conflicts(as_facts.values()).values()
    ]
    rejected = [
        (title or source, cell)
        for title, source, meta in documents
        for cell in ((meta or {}).get("facts") or {}).get("rejected") or []
    ]
    return await render(
        request,
        "catalogue.html",
        {
            "kinds": CATALOGUE_KINDS,
            "by_kind": by_kind,
            "facts": facts,
            "rejected": rejected,
            "clashes": clashes,
            "waiting": waiting or 0,
            "error": error,
            "reason": reason,
            "can_edit": me(request).may(StaffRole.editor),
            "where": lambda raw: place_of(raw or {}).describe() if raw else "",
        },
        status=status,
    )


async def _same_items(session: AsyncSession, kind: str, names: set[str]) -> list[CatalogueRow]:
    folded = {fold(n) for n in names}
    rows = (await session.scalars(select(CatalogueRow).where(CatalogueRow.kind == kind))).all()
    return [r for r in rows if fold(r.name) in folded]


def one_each(items: Sequence[CatalogueRow]) -> list[CatalogueRow]:
    """One item per kind and name (ingest reads a major from every document naming it): staff's
    first, else the one with a code, else the first read."""
    best: dict[tuple[str, str], CatalogueRow] = {}
    for item in items:
        key = (item.kind, fold(item.name))
        held = best.get(key)
        if held is None or _rank(item) > _rank(held):
            best[key] = item
    return sorted(best.values(), key=lambda i: (i.kind, fold(i.name)))


def _rank(item: CatalogueRow) -> tuple[bool, bool]:
    return item.origin == STAFF, item.code is not None


async def catalogue_page(request: web.Request) -> web.Response:
    return await _page(request)


def _aliases(text: str) -> list[str]:
    return list(dict.fromkeys(a.strip() for a in text.split(",") if a.strip()))[:MAX_ALIASES]


@requires(StaffRole.editor)
async def save_item(request: web.Request) -> web.Response:
    data = await form(request)
    name = field(data, "name", 300)
    if not name:
        return await _page(request, error="cat.error.name", status=400)
    async with runtime(request).sessionmaker.begin() as session:
        item = await session.get(CatalogueRow, int(request.match_info["item_id"]))
        if item is None:
            raise web.HTTPNotFound()
        before = item_json(item)
        aliases = _aliases(field(data, "aliases", 2000))
        if fold(item.name) != fold(name) and fold(item.name) not in map(fold, aliases):
            aliases.append(item.name)  # the name the tables use stays a way to ask for it
        # The same item read from other documents gives way to this one.
        await session.execute(
            delete(CatalogueRow).where(
                CatalogueRow.kind == item.kind,
                CatalogueRow.origin != STAFF,
                CatalogueRow.id != item.id,
                CatalogueRow.name.in_(
                    [r.name for r in await _same_items(session, item.kind, {item.name, name})]
                ),
            )
        )
        item.name = name
        item.code = field(data, "code", 64) or None
        item.aliases = aliases
        item.hidden = field(data, "hidden") == "on"
        item.origin = STAFF
        item.updated_by = me(request).email
        await audit.record(
            session, me(request).email, "edit", "catalogue", item.id, before, item_json(item)
        )
    redirect(request, "admin.catalogue", {"msg": "cat_saved"})


@requires(StaffRole.editor)
async def add_item(request: web.Request) -> web.Response:
    data = await form(request)
    kind, name = field(data, "kind", 16), field(data, "name", 300)
    if kind not in CATALOGUE_KINDS:
        return await _page(request, error="cat.error.kind", status=400)
    if not name:
        return await _page(request, error="cat.error.name", status=400)
    async with runtime(request).sessionmaker.begin() as session:
        item = CatalogueRow(
            kind=kind,
            name=name,
            code=field(data, "code", 64) or None,
            aliases=_aliases(field(data, "aliases", 2000)),
            origin=STAFF,
            updated_by=me(request).email,
        )
        session.add(item)
        await session.flush()
        await audit.record(
            session, me(request).email, "add", "catalogue", item.id, None, item_json(item)
        )
    redirect(request, "admin.catalogue", {"msg": "cat_saved"})


@requires(StaffRole.editor)
async def save_fact(request: web.Request) -> web.Response:
    """Take a value out of the answers or put it back, or correct it (staff's from then on)."""
    data = await form(request)
    async with runtime(request).sessionmaker.begin() as session:
        fact = await session.get(FactRow, int(request.match_info["fact_id"]))
        if fact is None:
            raise web.HTTPNotFound()
        before = {"text": fact.text, "published": fact.published}
        action = field(data, "action", 16)
        if action in ("publish", "unpublish"):
            fact.published = action == "publish"
        else:
            text = field(data, "text", 100)
            value = read_number(text, value_kind(fact.attribute))
            if value is None:
                return await _page(request, error="cat.error.value", status=400)
            fact.text, fact.value, fact.offered = text, value, True
        fact.origin = STAFF
        fact.updated_by = me(request).email
        after = {"text": fact.text, "published": fact.published}
        await audit.record(session, me(request).email, "edit", "fact", fact.id, before, after)
    redirect(request, "admin.catalogue", {"msg": "cat_saved"})


@requires(StaffRole.editor)
async def approve_all(request: web.Request) -> web.Response:
    """Publish every value waiting for review (TUVAN_INGEST__FACTS_REVIEW)."""
    await form(request)  # the CSRF token was in it; nothing else is
    async with runtime(request).sessionmaker.begin() as session:
        approved = (
            await session.execute(
                update(FactRow)
                .where(_WAITING)
                .values(published=True, updated_by=me(request).email)
                .returning(FactRow.id)
            )
        ).all()
        after = {"approved": len(approved)}
        await audit.record(session, me(request).email, "approve", "fact", None, None, after)
    redirect(request, "admin.catalogue", {"msg": "cat_saved"})


async def export(request: web.Request) -> web.Response:
    async with runtime(request).sessionmaker() as session:
        items = (
            await session.scalars(select(CatalogueRow).order_by(CatalogueRow.kind, CatalogueRow.id))
        ).all()
    body = catalogue_lines(one_each(items))
    return web.Response(
        body=body.encode("utf-8"),
        content_type="application/x-ndjson",
        charset="utf-8",
        headers={"Content-Disposition": 'attachment; filename="catalogue.jsonl"'},
    )


@requires(StaffRole.editor)
async def import_file(request: web.Request) -> web.Response:
    data = await form(request)
    sent = data.get("file")
    if not isinstance(sent, web.FileField):
        return await _page(request, error="cat.error.file", reason="no file", status=400)
    try:
        raw = sent.file.read(MAX_IMPORT_BYTES + 1)
    finally:
        sent.file.close()
    try:
        if len(raw) > MAX_IMPORT_BYTES:
            raise ValueError("over 1 MB")
        items = read_catalogue_file(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        return await _page(request, error="cat.error.file", reason=str(exc)[:200], status=400)
    async with runtime(request).sessionmaker.begin() as session:
        existing = {
            (r.kind, fold(r.name)): r for r in (await session.scalars(select(CatalogueRow))).all()
        }
        for item in items:
            row = existing.get((item["kind"], fold(item["name"])))
            if row is None:
                row = CatalogueRow(kind=item["kind"], name=item["name"])
                session.add(row)
            row.name, row.code, row.aliases, row.hidden = (
                item["name"], item["code"], item["aliases"], item["hidden"],
            )  # fmt: skip
            row.origin = STAFF
            row.updated_by = me(request).email
        await audit.record(
            session, me(request).email, "import", "catalogue", None, None, {"items": len(items)}
        )
    redirect(request, "admin.catalogue", {"msg": "cat_imported"})


def setup(app: web.Application) -> None:
    r = app.router
    r.add_get("/catalogue", catalogue_page, name="admin.catalogue")
    r.add_get("/catalogue/export", export, name="admin.catalogue_export")
    r.add_post("/catalogue/items", add_item, name="admin.catalogue_add")
    r.add_post(r"/catalogue/items/{item_id:\d+}", save_item, name="admin.catalogue_item")
    r.add_post(r"/catalogue/facts/{fact_id:\d+}", save_fact, name="admin.catalogue_fact")
    r.add_post("/catalogue/import", import_file, name="admin.catalogue_import")
    r.add_post("/catalogue/facts/approve", approve_all, name="admin.catalogue_approve")
