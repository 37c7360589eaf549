"""How documents are taken in: the chunker, the bounds on hostile or huge files, and which
addresses a crawl may fetch."""

from __future__ import annotations

from pydantic import BaseModel, Field, field_validator

from bot.core.settings.addresses import host_entry
from bot.core.types import ChunkerMode


class IngestSettings(BaseModel):
    # auto: the regulation chunker (Chương/Mục/Điều/Khoản) for documents with that structure,
    # and for the rest the chunker that measured best (retrieval.chunking.AUTO_CHUNKER);
    # or force one: structure (headings, paragraphs, sentences), markdown (the web-site
    # chatbot's heading and blank-line thresholds), legal, semantic (topic shifts between
    # sentences, as the embedder sees them; embeds every sentence).
    chunker: ChunkerMode = "auto"
    # Hostile or huge files. Pages of a PDF past this many are skipped (and logged); the
    # first ones are ingested.
    max_pdf_pages: int = Field(default=500, ge=1)
    # Pixels of one page rendered for OCR: a page that would be bigger at the OCR resolution
    # (300 DPI) is rendered at the DPI that fits (a 7,000 pt poster at ~51 DPI, not 29,000 px
    # square). 25 Mpx is an A3 page at 300 DPI.
    max_page_pixels: int = Field(default=25_000_000, ge=10_000)
    # Seconds of OCR per file: Tesseract gets what is left for each page, and once it is spent
    # the remaining pages keep their text layer (or stay empty), listed in the log and in the
    # document's metadata.
    ocr_budget_s: float = Field(default=120.0, ge=0)
    # Ingestions at a time in one process (the admin's uploads and re-ingests in `serve`); the
    # others wait their turn, so parsing, OCR and embedding never take every core from the
    # webhooks.
    concurrency: int = Field(default=1, ge=1, le=8)
    # Values read from the documents' tables wait for staff ("Danh mục") before tuvan answers
    # with them, like FAQ drafts; a re-ingest keeps published the values it reads unchanged.
    # Off: they are used at once, and staff take out or correct what is wrong.
    facts_review: bool = False
    # Fetching for `tuvan crawl` and `tuvan ingest URL` (retrieval.crawl.fetch): only public
    # addresses, on every redirect hop, except these hosts, which may resolve to private,
    # loopback or link-local ones (a university intranet site on 10.x): "host" (any port) or
    # "host:port", matched against the URL's host as written. Empty (safe): public only.
    allow_private_hosts: tuple[str, ...] = ()
    # A page larger than this is skipped whole, with a log line (a 2 MB page passes).
    max_page_bytes: int = Field(default=5_000_000, ge=1)
    # A linked PDF or DOCX larger than this is skipped whole, with a log line.
    max_file_bytes: int = Field(default=50_000_000, ge=1)
    max_redirects: int = Field(default=5, ge=0, le=20)  # hops followed per fetch, each vetted

    @field_validator("allow_private_hosts")
    @classmethod
    def _host_entries(cls, entries: tuple[str, ...]) -> tuple[str, ...]:
        """Each entry as "host" or "host:port" (lower case, IPv6 in brackets), or an error."""
        return tuple(host_entry(entry) for entry in entries)
