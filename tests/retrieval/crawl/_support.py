"""What the crawler tests share: a small Vietnamese university site, and a crawl of it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from bot.core.settings import IngestSettings, Settings
from retrieval.crawl.crawler import CrawlResult, crawl
from retrieval.crawl.fetch import Fetcher, FetchPolicy
from retrieval.loading.document import LoadedDocument

CHROME_TOP = """
<header class="site-header"><a href="/">Trường Đại học Mẫu</a> Hotline tuyển sinh 1900 1234</header>
<nav><ul><li><a href="/">Trang chủ</a></li><li><a href="/gioi-thieu">Giới thiệu</a></li>
<li><a href="/tuyen-sinh">Tuyển sinh</a></li></ul></nav>
"""
CHROME_BOTTOM = """
<aside>Tin nổi bật: lễ khai giảng</aside>
<footer>Bản quyền © 2025 Trường Đại học Mẫu. Địa chỉ: 1 Đường Mẫu, Hà Nội.</footer>
<script>window.dataLayer = [];</script>
"""
HOC_PHI = """<h1>Học phí năm học 2025–2026</h1>
<p>Học phí chương trình chuẩn là 15 triệu đồng mỗi học kỳ.</p>
<p>Sinh viên được <a href="/tuyen-sinh#hoc-bong">xét học bổng</a> theo kết quả học tập.</p>"""


def page(title: str, main: str) -> str:
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{title}</title></head><body>"
        f"{CHROME_TOP}<main>{main}</main>{CHROME_BOTTOM}</body></html>"
    )


def site_pages(external: str) -> dict[str, str]:
    return {
        "/": page(
            "Trang chủ - Trường Đại học Mẫu",
            """<h1>Chào mừng thí sinh</h1>
            <p>Trường Đại học Mẫu tuyển sinh đại học chính quy năm 2025.</p>
            <ul>
              <li><a href="/tuyen-sinh#phuong-thuc">Phương thức tuyển sinh</a></li>
              <li><a href="/tuyen-sinh?utm_source=facebook&amp;utm_medium=post">Tuyển sinh</a></li>
              <li><a href="/hoc-phi">Học phí</a></li>
              <li><a href="/ban-sao/hoc-phi">Học phí (bản cũ)</a></li>
              <li><a href="/private/noi-bo">Tài liệu nội bộ</a></li>
              <li><a href="/khong-ton-tai">Trang đã xoá</a></li>
              <li><a href="/files/de-an-tuyen-sinh.pdf">Đề án tuyển sinh (PDF)</a></li>
              <li><a href="/anh/so-do.png">Sơ đồ khuôn viên</a></li>
              <li><a href="/chuoi/1">Hướng dẫn nhập học</a></li>
              <li><a href="{external}/gioi-thieu">Trang đối tác</a></li>
            </ul>""".replace("{external}", external),
        ),
        "/gioi-thieu": page(
            "Giới thiệu",
            "<h1>Giới thiệu</h1><p>Trường được thành lập năm 1960, đào tạo 40 ngành.</p>",
        ),
        "/tuyen-sinh": page(
            "Tuyển sinh 2025",
            """<h1>Tuyển sinh 2025</h1><p>Chỉ tiêu năm 2025 là 3.000 sinh viên.</p>
            <h2 id="phuong-thuc">Phương thức</h2>
            <ul><li>Xét tuyển thẳng</li><li>Xét điểm thi tốt nghiệp THPT</li></ul>
            <h2 id="hoc-bong">Học bổng</h2>
            <p>Thủ khoa được miễn học phí năm nhất. Xem <a href="/hoc-phi">học phí</a>.</p>""",
        ),
        "/hoc-phi": page("Học phí", HOC_PHI),
        # The same article under an old path, in a different page frame.
        "/ban-sao/hoc-phi": page("Học phí (lưu trữ)", HOC_PHI),
        "/private/noi-bo": page("Nội bộ", "<p>Tài liệu nội bộ, không công khai.</p>"),
        "/chuoi/1": page(
            "Nhập học bước 1", '<p>Bước 1: nộp hồ sơ. <a href="/chuoi/2">Bước 2</a></p>'
        ),
        "/chuoi/2": page(
            "Nhập học bước 2", '<p>Bước 2: đóng học phí. <a href="/chuoi/3">Bước 3</a></p>'
        ),
        "/chuoi/3": page("Nhập học bước 3", "<p>Bước 3: nhận thẻ sinh viên.</p>"),
    }


@dataclass
class Site:
    base: str  # http://127.0.0.1:port
    requests: list[tuple[str, str]] = field(default_factory=list)  # (Host header, path)

    def url(self, path: str) -> str:
        return self.base + path

    def paths(self) -> list[str]:
        return [path for _, path in self.requests]

    @property
    def policy(self) -> FetchPolicy:
        """The site is on loopback: allowed by its host and port, as an operator would."""
        return FetchPolicy(allow_private_hosts=(self.base.removeprefix("http://"),))

    def settings(self, database_url: str, data_dir: Path) -> Settings:
        ingest = IngestSettings(allow_private_hosts=[self.base.removeprefix("http://")])
        return Settings(_env_file=None, database_url=database_url, data_dir=data_dir, ingest=ingest)


async def run_crawl(site: Site, **options: object) -> CrawlResult:
    options = {"max_depth": 2, "delay_s": 0.005, "concurrency": 2, **options}
    async with Fetcher(site.policy) as fetcher:
        return await crawl([site.url("/")], fetcher=fetcher, **options)  # type: ignore[arg-type]


def by_source(result: CrawlResult, site: Site) -> dict[str, LoadedDocument]:
    return {doc.source.removeprefix(site.base): doc for doc in result.pages}
