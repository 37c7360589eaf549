"""The reliability bench's ``crawler`` case: a crawl target and an "internal" target on two
loopback ports, and ``tuvan crawl`` run against the first.

The crawl target's home page links to a 2 MB page (its last sentence a marker), to a page that
302-redirects to the internal target, to the same host on the internal target's port, and to a
PDF there. The internal target counts every request it gets and answers each with a "secret".
The crawl embeds with the LLM stub's ``/v1/embeddings`` (``TUVAN_EMBEDDER=openai:...``), so a
2 MB page takes seconds rather than the default embedder's minutes. The crawl target is allowed
through ``TUVAN_INGEST__ALLOW_PRIVATE_HOSTS`` (host:port) when the code has that setting;
without it, today's crawler fetches loopback anyway.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from aiohttp import web
from reliability_stack import Database, Figure, Processes, base_env

from tests.fakes.openai_stub import start_openai_stub

END_MARKER = "Kết thúc trang dài: mã kiểm tra QZX-2000-END."
SECRET = "Database password: hunter2-internal"
PARAGRAPH = (
    "Ngành {n} của trường tuyển sinh năm 2026 theo phương thức xét điểm thi tốt nghiệp "
    "trung học phổ thông, học bạ và đánh giá năng lực; học phí dự kiến {n}00 nghìn đồng mỗi "
    "tín chỉ, sinh viên được xét học bổng khuyến khích học tập mỗi học kỳ."
)


@dataclass
class Targets:
    internal_hits: list[str] = field(default_factory=list)
    runners: list[web.AppRunner] = field(default_factory=list)
    crawl_port: int = 0
    internal_port: int = 0


def big_page(size: int) -> str:
    paragraphs = []
    total = 0
    n = 1
    while total < size:
        p = f"<h2>Mục {n}</h2><p>{PARAGRAPH.format(n=n)}</p>\n"
        paragraphs.append(p)
        total += len(p.encode())
        n += 1
    return (
        "<html><head><title>Thông tin tuyển sinh chi tiết</title></head><body><main>"
        + "".join(paragraphs)
        + f"<p>{END_MARKER}</p></main></body></html>"
    )


async def start_targets(page_bytes: int) -> Targets:
    targets = Targets()

    async def internal(request: web.Request) -> web.Response:
        targets.internal_hits.append(request.path)
        body = f"<html><head><title>Internal</title></head><body><p>{SECRET}</p></body></html>"
        return web.Response(text=body, content_type="text/html")

    internal_app = web.Application()
    internal_app.router.add_route("*", "/{tail:.*}", internal)
    targets.internal_port = await _serve(targets, internal_app)
    other = f"http://127.0.0.1:{targets.internal_port}"
    big = big_page(page_bytes)

    async def home(request: web.Request) -> web.Response:
        body = (
            "<html><head><title>Tuyển sinh SHUT</title></head><body><main>"
            "<h1>Tuyển sinh 2026</h1><p>Trang chủ tuyển sinh của trường, với các liên kết.</p>"
            '<ul><li><a href="/thong-tin-chi-tiet.html">Thông tin chi tiết</a></li>'
            '<li><a href="/chuyen-trang.html">Trang đã chuyển</a></li>'
            f'<li><a href="{other}/noi-bo.html">Cùng máy, cổng khác</a></li>'
            f'<li><a href="{other}/secret.pdf">Tài liệu PDF</a></li></ul></main></body></html>'
        )
        return web.Response(text=body, content_type="text/html")

    async def detail(request: web.Request) -> web.Response:
        return web.Response(text=big, content_type="text/html")

    async def moved(request: web.Request) -> web.Response:
        raise web.HTTPFound(f"{other}/secret.html")

    async def robots(request: web.Request) -> web.Response:
        return web.Response(text="User-agent: *\nAllow: /\n", content_type="text/plain")

    crawl_app = web.Application()
    crawl_app.router.add_get("/", home)
    crawl_app.router.add_get("/thong-tin-chi-tiet.html", detail)
    crawl_app.router.add_get("/chuyen-trang.html", moved)
    crawl_app.router.add_get("/robots.txt", robots)
    targets.crawl_port = await _serve(targets, crawl_app)
    return targets


async def _serve(targets: Targets, app: web.Application) -> int:
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    targets.runners.append(runner)
    port: int = runner.addresses[0][1]
    return port


async def crawler_case(
    db: Database, procs: Processes, data_dir: Path, *, page_bytes: int
) -> list[Figure]:
    url_db = await db.copy("tpl_blank")
    stub = await start_openai_stub(dimension=384)
    targets = await start_targets(page_bytes)
    env = base_env(url_db, data_dir) | {
        "TUVAN_EMBEDDER": f"openai:{stub.model}",
        "TUVAN_EMBEDDER_BASE_URL": stub.base_url,
        "TUVAN_EMBEDDER_API_KEY": "bench",
        "TUVAN_INGEST__ALLOW_PRIVATE_HOSTS": json.dumps([f"127.0.0.1:{targets.crawl_port}"]),
    }
    start = f"http://127.0.0.1:{targets.crawl_port}/"
    try:
        code = await procs.run(
            ["crawl", start, "--depth", "2", "--delay", "0", "--max-pages", "20"], env
        )
        documents = await db.scalar(url_db, "SELECT count(*) FROM documents")
        home = await db.scalar(
            url_db,
            "SELECT count(*) FROM documents WHERE source LIKE :s",
            s=f"%:{targets.crawl_port}/",
        )
        big_chunks = await db.scalar(
            url_db,
            "SELECT count(*) FROM chunks c JOIN documents d ON d.id = c.document_id "
            "WHERE d.source LIKE '%thong-tin-chi-tiet%'",
        )
        whole = await db.scalar(
            url_db, "SELECT count(*) FROM chunks WHERE text LIKE :m", m="%QZX-2000-END%"
        )
        leaked = await db.scalar(url_db, "SELECT count(*) FROM chunks WHERE text LIKE '%hunter2%'")
    finally:
        for runner in targets.runners:
            await runner.cleanup()
        await stub.close()
    hits = len(targets.internal_hits)
    return [
        Figure(
            "crawler",
            "tuvan crawl exit code / documents indexed",
            f"{code} / {documents} (home page: {'yes' if home else 'no'})",
            "",
            None,
        ),
        Figure(
            "crawler",
            "internal fetches",
            f"{hits} ({', '.join(sorted(set(targets.internal_hits))) or '-'})",
            "0",
            hits == 0,
        ),
        Figure("crawler", "chunks holding the internal secret", leaked, "0", leaked == 0),
        Figure(
            "crawler",
            f"{page_bytes / 1e6:g} MB page indexed whole (its last sentence found)",
            f"{'yes' if whole else 'no'} ({big_chunks} chunks)",
            "yes",
            bool(whole),
        ),
    ]
