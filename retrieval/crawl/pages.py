"""One fetched HTML page: its main content as Markdown with absolute links, then a document."""

from __future__ import annotations

import hashlib
import warnings
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urljoin, urlsplit

from bs4 import BeautifulSoup, MarkupResemblesLocatorWarning, Tag, XMLParsedAsHTMLWarning
from markdownify import MarkdownConverter

from bot.core.clock import utcnow
from bot.core.errors import IngestError
from retrieval.loading.document import LoadedDocument
from retrieval.loading.markdown import read_markdown
from retrieval.text.language import detect_language

# Page chrome: by element, by ARIA landmark role, and by the class/id names site themes use for
# the same things when they are plain <div>s (whole tokens only: "menu-item" inside an article
# stays).
_CHROME_TAGS = (
    "script", "style", "noscript", "template", "svg", "iframe", "form", "button",
    "nav", "header", "footer", "aside",
)  # fmt: skip
_CHROME_ROLES = frozenset({"navigation", "banner", "contentinfo", "complementary", "search"})
_CHROME_NAMES = frozenset(
    {"header", "footer", "nav", "navbar", "menu", "sidebar", "breadcrumb", "breadcrumbs"}
    | {"site-header", "site-footer", "cookie-banner", "skip-link"}
)


@dataclass(frozen=True)
class ExtractedPage:
    """What a page holds once its chrome is dropped."""

    title: str
    markdown: str
    links: tuple[str, ...]  # absolute URLs of the main content's links, in order
    all_links: tuple[str, ...]  # ... and of the whole page's, menus included


class _Converter(MarkdownConverter):
    """ATX headings and "-" bullets, as the Markdown loader reads them; images dropped (alt text
    alone says little and bare images are noise in chunks)."""

    def __init__(self) -> None:
        super().__init__(heading_style="ATX", bullets="-", strip=["img"])


def _is_chrome(tag: Tag) -> bool:
    if tag.name in _CHROME_TAGS or (tag.get("role") or "") in _CHROME_ROLES:
        return True
    names = {*tag.get_attribute_list("class"), tag.get("id") or ""}
    return any(str(name).lower() in _CHROME_NAMES for name in names)


def extract_page(html: bytes | str, url: str, *, encoding: str | None = None) -> ExtractedPage:
    """Title, main content as Markdown (links made absolute) and links of one HTML page."""
    with warnings.catch_warnings():
        # XHTML pages and near-empty bodies are parsed as HTML on purpose.
        warnings.simplefilter("ignore", XMLParsedAsHTMLWarning)
        warnings.simplefilter("ignore", MarkupResemblesLocatorWarning)
        soup = BeautifulSoup(
            html, "html.parser", from_encoding=encoding if isinstance(html, bytes) else None
        )
    base_tag = soup.find("base", href=True)
    base = urljoin(url, str(base_tag["href"])) if isinstance(base_tag, Tag) else url
    all_links: list[str] = []
    for anchor in soup.find_all("a", href=True):
        href = str(anchor["href"]).strip()
        if href.lower().startswith(("javascript:", "data:")):
            anchor.unwrap()
            continue
        absolute = urljoin(base, href)
        anchor["href"] = absolute
        all_links.append(absolute)
    title_tag = soup.find("title")
    title = " ".join(title_tag.get_text().split()) if title_tag else ""
    for tag in [t for t in soup.find_all(True) if _is_chrome(t)]:
        if not tag.decomposed:
            tag.decompose()
    mains = soup.find_all("main") or soup.select('[role="main"]')
    articles = soup.find_all("article")
    root = mains[0] if mains else articles[0] if len(articles) == 1 else (soup.body or soup)
    if not title:
        h1 = root.find("h1")
        title = " ".join(h1.get_text().split()) if h1 else ""
    markdown = _Converter().convert_soup(root)
    links = tuple(str(a["href"]) for a in root.find_all("a", href=True))
    return ExtractedPage(title, markdown.strip(), links, tuple(all_links))


def page_document(page: ExtractedPage, url: str, *, links: list[str], depth: int) -> LoadedDocument:
    """A crawled page as the indexer takes it; sections cut from its Markdown headings."""
    try:
        parsed = read_markdown(Path(urlsplit(url).path or "index"), page.markdown.encode())
    except IngestError:
        parsed = None
    sections = tuple(parsed.sections) if parsed else ()
    title = page.title or (parsed.title if parsed else "") or url
    body = "\n".join(section.text for section in sections)
    return LoadedDocument(
        source=url,
        title=title,
        url=url,
        language=detect_language(f"{title}\n{body}"),
        content_hash=markdown_hash(page.markdown),
        sections=sections,
        meta={
            "format": "html",
            "links": links,
            "crawled_at": utcnow().isoformat(),
            "depth": depth,
        },
    )


def markdown_hash(markdown: str) -> str:
    return hashlib.sha256(" ".join(markdown.split()).encode()).hexdigest()
