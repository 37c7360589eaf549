"""How a tier-1 answer names its source: as a documents answer does, by a title and a public
address, never by the file's name staff typed in the entry's ``source``.

An entry whose source is a document tuvan has ingested cites that document
(``retrieval.faq.sources``): its title, and the address the entry gives or else the document's.
A web address tuvan has not read is linked as it is; a title staff wrote is shown, linked to the
entry's address if it has one. A file tuvan has never read names nothing a student can open:
the entry's address stands for it if there is one, else the answer cites nothing.
"""

from __future__ import annotations

from bot.core.citations import Citation, names_file, public_url
from retrieval.faq.sources import SourceDocument


def faq_citation(
    source: str | None, source_url: str | None, document: SourceDocument | None
) -> Citation | None:
    """Source [1] of an FAQ entry's answer, or None when it names nothing to show."""
    url = public_url((source_url or "").strip() or None)
    if document is not None:
        title = document.title.strip()
        if title and not names_file(title):
            address = url or public_url(document.url)
            return Citation(n=1, title=title, source=document.source, url=address, page=None)
        url = url or public_url(document.url)  # an untitled document: its address, if any
    named = (source or "").strip()
    if public_url(named):
        return Citation(n=1, title=named, source=named, url=url or named, page=None)
    if named and not names_file(named):
        return Citation(n=1, title=named, source="", url=url, page=None)
    if url:
        return Citation(n=1, title=url, source="", url=url, page=None)
    return None
