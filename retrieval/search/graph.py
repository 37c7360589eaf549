"""The link graph of the indexed pages, its communities, and the re-ranking of the
``hybrid+graph`` search mode (run by retrieval.search.hybrid).

Pages of one site that link to each other tend to be about one thing (a programme, its fees, its
admission rounds). `tuvan graph` builds the graph of links between indexed documents, finds its
communities with Louvain (seeded: the same store gives the same communities) and stores each
page's community in ``Document.community``. The ``hybrid+graph`` mode then runs hybrid search
and re-ranks its top documents by how common their community is among them, dropping the pages
of communities that are rare there: a page that matched the words but sits in another part of
the site. Documents without a community (files, pages nothing links to) keep their place.

Links come from a crawled page's ``meta["links"]`` (its main content's links, retrieval.crawl),
or for other documents from the Markdown links left in their text (``[text](https://...)``, as
in a saved web page); a link counts when it resolves, after the crawler's URL normalisation, to
another indexed document's URL or source. Links found on more than ``navigation_share`` of the
pages are menus, footers or breadcrumbs, not topical links, and are dropped first.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import networkx as nx  # type: ignore[import-untyped]
from networkx.algorithms.community import louvain_communities  # type: ignore[import-untyped]
from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from bot.core.settings import GraphSettings
from bot.db.models import Chunk, Document
from retrieval.crawl.urls import normalise_url
from retrieval.search.hits import Hit

_MARKDOWN_LINK = re.compile(r"\]\((https?://[^)\s]+)")
# A link on so few pages is never navigation, however small the site.
_MIN_NAVIGATION_PAGES = 2


@dataclass(frozen=True)
class PageLinks:
    document_id: int
    addresses: tuple[str, ...]  # the document's own URLs, normalised (url and source)
    links: tuple[str, ...] | None  # where it links to, normalised, each once; None: not known


@dataclass
class GraphReport:
    documents: int = 0
    pages: int = 0  # documents with links (crawled pages, files with Markdown links)
    links: int = 0  # distinct (page, target) links
    internal: int = 0  # ... that resolve to another indexed document
    navigation: list[str] = field(default_factory=list)  # targets dropped as navigation
    edges: int = 0  # linked pairs of documents after the navigation drop
    communities: list[int] = field(default_factory=list)  # their sizes, largest first

    def describe(self) -> str:
        sizes = ", ".join(str(n) for n in self.communities[:10])
        more = ", ..." if len(self.communities) > 10 else ""
        return (
            f"{self.pages} of {self.documents} documents carry links ({self.links} links, "
            f"{self.internal} to indexed documents); {len(self.navigation)} navigation targets "
            f"dropped; {self.edges} edges; {len(self.communities)} communities"
            + (f" of sizes {sizes}{more}" if self.communities else "")
        )


# -- building ------------------------------------------------------------------------------


def link_graph(pages: Sequence[PageLinks], navigation_share: float) -> tuple[Any, GraphReport]:
    """The undirected graph of links between documents (weight: links either way), without
    navigation links; nodes are document ids, isolated documents left out.

    Every document in ``pages`` can be linked to; those with links known (crawled pages, files
    with Markdown links) are the pages the navigation share is counted over.
    """
    owner: dict[str, int] = {}
    for page in pages:
        for address in page.addresses:
            owner.setdefault(address, page.document_id)
    linking = [(p.document_id, p.links) for p in pages if p.links is not None]
    report = GraphReport(documents=len(pages), pages=len(linking))
    linked_from = Counter(target for _, links in linking for target in set(links))
    limit = max(navigation_share * len(linking), _MIN_NAVIGATION_PAGES)
    navigation = {t for t, n in linked_from.items() if n > limit}
    report.navigation = sorted(navigation)
    graph = nx.Graph()
    for document_id, links in linking:
        for target in links:
            report.links += 1
            other = owner.get(target)
            if other is None or other == document_id:
                continue
            report.internal += 1
            if target in navigation:
                continue
            weight = graph.get_edge_data(document_id, other, {}).get("weight", 0)
            graph.add_edge(document_id, other, weight=weight + 1)
    report.edges = graph.number_of_edges()
    return graph, report


def communities_of(graph: Any, *, seed: int, resolution: float) -> dict[int, int]:
    """Document id → community number (0 the largest; ties by the smallest document id)."""
    if graph.number_of_edges() == 0:
        return {}
    found = louvain_communities(graph, weight="weight", resolution=resolution, seed=seed)
    ordered = sorted((sorted(c) for c in found), key=lambda c: (-len(c), c[0]))
    return {doc: number for number, members in enumerate(ordered) for doc in members}


def _addresses(source: str, url: str | None) -> tuple[str, ...]:
    found = (normalise_url(u) for u in (url, source) if u)
    return tuple(dict.fromkeys(a for a in found if a))


def _normalised(links: Iterable[object]) -> tuple[str, ...]:
    found = (normalise_url(link) for link in links if isinstance(link, str))
    return tuple(dict.fromkeys(a for a in found if a))


async def read_pages(session: AsyncSession) -> list[PageLinks]:
    """Every document, with its links where they are known."""
    docs = (
        await session.execute(select(Document.id, Document.source, Document.url, Document.meta))
    ).all()
    from_text: dict[int, list[str]] = {}
    rows = await session.execute(
        select(Chunk.document_id, Chunk.text)
        .where(Chunk.text.contains("](http", autoescape=True))
        .order_by(Chunk.document_id, Chunk.ordinal)
    )
    for document_id, text in rows:
        from_text.setdefault(document_id, []).extend(_MARKDOWN_LINK.findall(text))
    pages = []
    for doc_id, source, url, meta in docs:
        crawled = meta.get("links") if isinstance(meta, Mapping) else None
        links: tuple[str, ...] | None = None
        if isinstance(crawled, list):
            links = _normalised(crawled)
        elif doc_id in from_text:
            links = _normalised(from_text[doc_id])
        pages.append(PageLinks(doc_id, _addresses(source, url), links))
    return pages


async def build_communities(session: AsyncSession, settings: GraphSettings) -> GraphReport:
    """Find the communities of the link graph and store them on the documents (None for a
    document in no linked pair). The caller commits."""
    graph, report = link_graph(await read_pages(session), settings.navigation_share)
    assigned = communities_of(graph, seed=settings.seed, resolution=settings.resolution)
    await session.execute(
        update(Document).where(Document.community.is_not(None)).values(community=None)
    )
    members: dict[int, list[int]] = {}
    for doc_id, number in assigned.items():
        members.setdefault(number, []).append(doc_id)
    for number, ids in sorted(members.items()):
        await session.execute(
            update(Document).where(Document.id.in_(sorted(ids))).values(community=number)
        )
    report.communities = [len(members[n]) for n in sorted(members)]
    await session.flush()
    return report


# -- searching -----------------------------------------------------------------------------


def rerank_by_community(
    hits: Sequence[Hit], communities: Mapping[int, int | None], *, top_k: int, min_share: float
) -> list[Hit]:
    """Re-rank the hits of the first ``top_k`` documents by how many of those documents share
    their community (stable: ties keep the hybrid order) and drop the hits of communities with
    less than ``min_share`` of them, when some community holds two or more. Hits of documents
    without a community keep their positions; later hits follow unchanged."""
    head_docs = list(dict.fromkeys(h.document_id for h in hits))[:top_k]
    counts = Counter(c for d in head_docs if (c := communities.get(d)) is not None)
    if not counts or max(counts.values()) < 2:
        return list(hits)
    total = sum(counts.values())
    in_head = set(head_docs)
    community = {d: c for d in in_head if (c := communities.get(d)) is not None}
    head = [h for h in hits if h.document_id in in_head]
    rest = [h for h in hits if h.document_id not in in_head]
    ranked = sorted(  # stable: the hybrid order within a count
        (h for h in head if h.document_id in community),
        key=lambda h: -counts[community[h.document_id]],
    )
    kept = iter(h for h in ranked if counts[community[h.document_id]] / total >= min_share)
    reordered: list[Hit] = []
    for hit in head:
        if hit.document_id not in community:
            reordered.append(hit)
        elif (nxt := next(kept, None)) is not None:
            reordered.append(nxt)
    return reordered + rest
