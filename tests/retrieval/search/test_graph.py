"""The link graph (retrieval.graph): communities of a small site whose pages carry their links as
the crawler stores them, navigation links dropped, and the hybrid+graph re-ranking."""

from __future__ import annotations

import asyncio
import hashlib

import pytest
from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncSession

from bot.core.settings import GraphSettings, SearchSettings
from bot.db.models import Document
from retrieval.index.documents import index_document
from retrieval.index.indexer import Indexer
from retrieval.loading.document import LoadedDocument, Section
from retrieval.search.graph import (
    PageLinks,
    build_communities,
    communities_of,
    link_graph,
    rerank_by_community,
)
from retrieval.search.hits import Hit
from retrieval.search.hybrid import search_chunks

SITE = "https://tuyensinh.example.edu.vn"
NAVIGATION = [f"{SITE}/", f"{SITE}/lien-he"]  # in every page's menu
# Two topics of six pages, each page linking to the next two of its topic; one link between them.
IT = {
    "cntt-hoc-phi": "Học phí ngành Công nghệ Thông tin năm 2026 là 32 triệu đồng một năm.",
    "cntt-chuong-trinh": "Chương trình đào tạo ngành Công nghệ Thông tin gồm 140 tín chỉ.",
    "cntt-viec-lam": "Sinh viên ngành Công nghệ Thông tin ra trường làm kỹ sư phần mềm.",
    "cntt-xet-tuyen": "Ngành Công nghệ Thông tin xét tuyển tổ hợp A00, A01 và D01.",
    "cntt-giang-vien": "Giảng viên ngành Công nghệ Thông tin có 40 tiến sĩ.",
    "cntt-thuc-tap": "Sinh viên Công nghệ Thông tin thực tập tại doanh nghiệp năm thứ ba.",
}
DORM = {
    "ktx-phi": "Học phí ký túc xá là 500 nghìn đồng mỗi tháng, phòng 4 người.",
    "ktx-dang-ky": "Đăng ký ký túc xá trực tuyến từ ngày 15/8, ưu tiên tân sinh viên.",
    "ktx-noi-quy": "Nội quy ký túc xá: giờ đóng cửa 23 giờ, không nấu ăn trong phòng.",
    "ktx-tien-ich": "Ký túc xá có nhà ăn, phòng giặt và sân thể thao cho sinh viên.",
    "ktx-xe-buyt": "Xe buýt nội bộ chạy từ ký túc xá đến giảng đường mỗi 20 phút.",
    "ktx-an-ninh": "Ký túc xá có bảo vệ 24 giờ và camera ở mọi tầng.",
}
HOME = "Chào mừng các bạn đến với trang tuyển sinh của trường."


def url(slug: str) -> str:
    return f"{SITE}/" if slug == "home" else f"{SITE}/{slug}"


def cluster(slugs: list[str]) -> dict[str, list[str]]:
    n = len(slugs)
    return {s: [url(slugs[(i + 1) % n]), url(slugs[(i + 2) % n])] for i, s in enumerate(slugs)}


def site_links() -> dict[str, list[str]]:
    links = {**cluster(list(IT)), **cluster(list(DORM))}
    links["cntt-viec-lam"].append(url("ktx-an-ninh"))  # the one link between the topics
    links["home"] = [url("cntt-hoc-phi"), url("ktx-phi")]
    for slug in links:
        links[slug] += NAVIGATION
    return links


def page(slug: str, text: str, links: list[str]) -> LoadedDocument:
    return LoadedDocument(
        source=url(slug),
        title=slug,
        url=url(slug),
        language="vi",
        content_hash=hashlib.sha256(text.encode()).hexdigest(),
        sections=(Section((), text),),
        meta={"format": "html", "links": links},
    )


@pytest.fixture
async def site(session: AsyncSession, indexer: Indexer) -> dict[str, int]:
    """The site's pages, a file without links, and a file whose Markdown links reach the site."""
    await session.execute(text("DELETE FROM documents"))  # this test's transaction only
    links = site_links()
    texts = {**IT, **DORM, "home": HOME}
    ids = {}
    for slug, body in texts.items():
        ids[slug] = (
            await index_document(session, indexer, page(slug, body, links[slug]))
        ).document_id
    handbook = LoadedDocument(
        source="/srv/docs/so-tay.md",
        title="Sổ tay",
        url=None,
        language="vi",
        content_hash="h",
        sections=(
            Section(
                (), f"Xem [học phí]({url('cntt-hoc-phi')}), [tín chỉ]({url('cntt-chuong-trinh')})."
            ),
        ),
        meta={"format": "markdown"},
    )
    ids["so-tay"] = (await index_document(session, indexer, handbook)).document_id
    pdf = LoadedDocument(
        "/srv/docs/quy-che.pdf", "Quy chế", None, "vi", "q", (Section((), "Điều 1."),)
    )
    ids["quy-che"] = (await index_document(session, indexer, pdf)).document_id
    return ids


def test_navigation_links_are_dropped_before_communities_are_found() -> None:
    links = site_links()
    ids = {slug: i for i, slug in enumerate(links)}
    pages = [PageLinks(ids[slug], (url(slug),), tuple(links[slug])) for slug in links]
    contact = PageLinks(99, (f"{SITE}/lien-he",), None)  # indexed, its own links unknown
    graph, report = link_graph([*pages, contact], navigation_share=0.3)
    assert report.navigation == sorted(NAVIGATION)  # on every page
    assert (report.documents, report.pages) == (14, 13)  # the contact page is only a target
    # every link but the home page's to itself reaches an indexed document
    assert report.internal == sum(len(v) for v in links.values()) - 1
    assert not graph.has_node(99)
    assert graph.degree(ids["home"]) == 2  # the menu's link to it is gone
    found = communities_of(graph, seed=1, resolution=1.0)
    assert len({found[ids[s]] for s in IT}) == 1
    assert len({found[ids[s]] for s in DORM}) == 1
    assert found[ids["cntt-hoc-phi"]] != found[ids["ktx-phi"]]
    # Kept, the menu would tie every page to the home page (two of them link to it already).
    _, kept = link_graph(pages, navigation_share=1.0)
    assert kept.navigation == []
    assert kept.edges == report.edges + 12 - 2


async def test_a_small_site_splits_into_its_two_topics(
    session: AsyncSession, site: dict[str, int]
) -> None:
    report = await build_communities(session, GraphSettings(navigation_share=0.3, seed=1))
    assert report.navigation == sorted(NAVIGATION)
    rows = dict((await session.execute(select(Document.id, Document.community))).all())
    community = {slug: rows[doc_id] for slug, doc_id in site.items()}
    it = {community[s] for s in IT}
    dorm = {community[s] for s in DORM}
    assert len(it) == 1
    assert len(dorm) == 1
    assert it != dorm
    assert community["quy-che"] is None  # no links at all
    assert community["so-tay"] in it  # its Markdown links point into the IT pages
    again = await build_communities(session, GraphSettings(navigation_share=0.3, seed=1))
    assert again.communities == report.communities  # seeded: the same store, the same answer
    assert dict((await session.execute(select(Document.id, Document.community))).all()) == rows


def hit(document_id: int, chunk_id: int) -> Hit:
    return Hit(
        chunk_id=chunk_id,
        document_id=document_id,
        text=f"chunk {chunk_id}",
        heading_path="",
        page=None,
        ordinal=0,
        external_id=None,
        title="",
        source=str(document_id),
        url=None,
        similarity=0.9,
        score=1.0 / chunk_id,
    )


def test_reranking_groups_the_common_community_and_drops_a_rare_one() -> None:
    # documents 1-3 in community 0, 4 in community 1, 5 a file without one
    communities = {1: 0, 2: 0, 3: 0, 4: 1, 5: None}
    hits = [hit(4, 1), hit(1, 2), hit(5, 3), hit(2, 4), hit(3, 5), hit(6, 6)]
    ranked = rerank_by_community(hits, communities, top_k=5, min_share=0.3)
    # 4 (1 of 4 documents with a community) is dropped; the file keeps its third place;
    # document 6 lies past the top 5 documents and follows unchanged.
    assert [h.document_id for h in ranked] == [1, 2, 5, 3, 6]
    # A rare community is kept when its share is high enough, just ordered after.
    kept = rerank_by_community(hits, communities, top_k=5, min_share=0.2)
    assert [h.document_id for h in kept] == [1, 2, 5, 3, 4, 6]
    # No community shared by two documents: nothing to go by, the order stays.
    lone = {1: 0, 4: 1}
    assert rerank_by_community(hits, lone, top_k=5, min_share=0.3) == hits


async def test_hybrid_graph_drops_a_page_from_the_other_topic(
    session: AsyncSession, indexer: Indexer, site: dict[str, int]
) -> None:
    await build_communities(session, GraphSettings(seed=1))
    question = "Học phí ngành Công nghệ Thông tin bao nhiêu?"
    [vector] = await asyncio.to_thread(indexer.embedder.embed_queries, [question])
    terms = indexer.processor.query_terms(question)
    settings = SearchSettings(graph=GraphSettings(top_k=8, min_share=0.2))

    async def ranked(mode: str) -> list[int]:
        hits = await search_chunks(
            session, vector, terms, settings, limit=8, mode=mode, query_text=question
        )
        return [h.document_id for h in hits]

    hybrid = await ranked("hybrid")
    # "học phí" brings the dorm fee page in: one page of its topic among eight.
    assert site["ktx-phi"] in hybrid
    assert {site[s] for s in IT} <= set(hybrid)
    graph = await ranked("hybrid+graph")
    assert site["ktx-phi"] not in graph
    rest = [d for d in hybrid if d != site["ktx-phi"]]
    assert graph[: len(rest)] == rest  # one community among the rest: their order stays
