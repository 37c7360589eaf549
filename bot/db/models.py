"""The store: FAQ entries and their variants, documents and their chunks; conversations.

Vectors are declared with the default embedder's dimension; `tuvan reindex` with an embedder of
another dimension changes the column type and rebuilds the HNSW indexes (retrieval.index).
Every schema change goes through an Alembic migration; tests check that both agree.
"""

from __future__ import annotations

import enum
from datetime import datetime
from typing import Any, ClassVar

from pgvector.sqlalchemy import Vector
from sqlalchemy import (
    BigInteger,
    Boolean,
    Computed,
    DateTime,
    Enum,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Text,
    UniqueConstraint,
    func,
)
from sqlalchemy import text as sql_text
from sqlalchemy.dialects.postgresql import JSONB, TSVECTOR
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

EMBEDDING_DIM = 384

# Stable constraint names, so that autogenerate and hand-written migrations agree.
NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

# to_tsvector(regconfig, text) is IMMUTABLE, so it may feed a generated column; the 'simple'
# configuration keeps our own Vietnamese-aware terms (retrieval.text) as they are.
TSV_EXPR = "to_tsvector('simple'::regconfig, coalesce(keyword_text, ''))"


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)
    type_annotation_map: ClassVar[dict[Any, Any]] = {dict[str, Any]: JSONB}


class FaqStatus(enum.StrEnum):
    draft = "draft"
    published = "published"


class VariantOrigin(enum.StrEnum):
    staff = "staff"
    generated = "generated"
    folded = "folded"


class FaqOrigin(enum.StrEnum):
    staff = "staff"  # written or imported by staff
    generated = "generated"  # generated from a document chunk (URAG-F b): a draft until published


def _hnsw_cosine(name: str) -> Index:
    """The ANN index of an ``embedding`` column (retrieval.index rebuilds it on a resize)."""
    return Index(
        name,
        "embedding",
        postgresql_using="hnsw",
        postgresql_with={"m": 16, "ef_construction": 64},
        postgresql_ops={"embedding": "vector_cosine_ops"},
    )


def _now_column() -> Mapped[datetime]:
    return mapped_column(DateTime(timezone=True), server_default=func.now())


class FaqEntry(Base):
    __tablename__ = "faq_entries"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    external_id: Mapped[str | None] = mapped_column(String(200), unique=True)
    question: Mapped[str] = mapped_column(Text)
    answer: Mapped[str] = mapped_column(Text)
    source: Mapped[str | None] = mapped_column(Text)
    source_url: Mapped[str | None] = mapped_column(Text)
    language: Mapped[str] = mapped_column(String(8), default="vi", server_default="vi")
    status: Mapped[FaqStatus] = mapped_column(
        Enum(FaqStatus, name="faq_status"),
        default=FaqStatus.draft,
        server_default=FaqStatus.draft.value,
    )
    keyword_text: Mapped[str] = mapped_column(Text, default="", server_default="")
    tsv: Mapped[Any] = mapped_column(TSVECTOR, Computed(TSV_EXPR, persisted=True))
    embedding: Mapped[Any] = mapped_column(Vector(EMBEDDING_DIM), nullable=True)
    created_at: Mapped[datetime] = _now_column()
    updated_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), server_default=func.now(), onupdate=func.now()
    )
    updated_by: Mapped[str | None] = mapped_column(String(320))
    origin: Mapped[FaqOrigin] = mapped_column(
        Enum(FaqOrigin, name="faq_origin"),
        default=FaqOrigin.staff,
        server_default=FaqOrigin.staff.value,
    )
    # Traceability of a generated entry: the document (removing it removes the entry), the chunk
    # (set NULL when a re-ingest replaces the chunks), the chunk's text and the document version
    # (content hash) it was generated from.
    source_document_id: Mapped[int | None] = mapped_column(
        ForeignKey("documents.id", ondelete="CASCADE")
    )
    source_chunk_id: Mapped[int | None] = mapped_column(
        ForeignKey("chunks.id", ondelete="SET NULL")
    )
    source_text: Mapped[str | None] = mapped_column(Text)
    source_version: Mapped[str | None] = mapped_column(String(64))
    # Set when the source changed after generation: staff should look at it again.
    needs_review: Mapped[bool] = mapped_column(Boolean, default=False, server_default="false")
    review_note: Mapped[str | None] = mapped_column(Text)

    variants: Mapped[list[FaqVariant]] = relationship(
        back_populates="entry", cascade="all, delete-orphan", passive_deletes=True
    )

    __table_args__ = (
        _hnsw_cosine("ix_faq_entries_embedding_hnsw"),
        Index("ix_faq_entries_tsv", "tsv", postgresql_using="gin"),
        Index("ix_faq_entries_status", "status"),
        Index("ix_faq_entries_source_document_id", "source_document_id"),
    )


class FaqVariant(Base):
    __tablename__ = "faq_variants"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    faq_id: Mapped[int] = mapped_column(ForeignKey("faq_entries.id", ondelete="CASCADE"))
    text: Mapped[str] = mapped_column(Text)
    origin: Mapped[VariantOrigin] = mapped_column(
        Enum(VariantOrigin, name="variant_origin"),
        default=VariantOrigin.staff,
        server_default=VariantOrigin.staff.value,
    )
    keyword_text: Mapped[str] = mapped_column(Text, default="", server_default="")
    embedding: Mapped[Any] = mapped_column(Vector(EMBEDDING_DIM), nullable=True)
    created_at: Mapped[datetime] = _now_column()
    # A generated variant: the question text it paraphrased (flagged when that changes).
    source_version: Mapped[str | None] = mapped_column(String(64))
    needs_review: Mapped[bool] = mapped_column(Boolean, default=False, server_default="false")

    entry: Mapped[FaqEntry] = relationship(back_populates="variants")

    __table_args__ = (
        UniqueConstraint("faq_id", "text", name="uq_faq_variants_faq_id_text"),
        _hnsw_cosine("ix_faq_variants_embedding_hnsw"),
        Index("ix_faq_variants_faq_id", "faq_id"),
    )


class Document(Base):
    __tablename__ = "documents"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    source: Mapped[str] = mapped_column(Text, unique=True)  # file path or URL, the identity
    title: Mapped[str] = mapped_column(Text, default="", server_default="")
    url: Mapped[str | None] = mapped_column(Text)  # public link for citations, when known
    language: Mapped[str] = mapped_column(String(8), default="vi", server_default="vi")
    content_hash: Mapped[str] = mapped_column(String(64))
    meta: Mapped[dict[str, Any]] = mapped_column(
        "metadata", JSONB, default=dict, server_default="{}"
    )
    # URAG-D: the document's general context, extracted by the LLM (`tuvan augment`).
    context: Mapped[str | None] = mapped_column(Text)
    # The link-graph community of a crawled page (`tuvan graph`), None for files.
    community: Mapped[int | None] = mapped_column(Integer)
    created_at: Mapped[datetime] = _now_column()
    updated_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), server_default=func.now(), onupdate=func.now()
    )

    chunks: Mapped[list[Chunk]] = relationship(
        back_populates="document", cascade="all, delete-orphan", passive_deletes=True
    )


class Chunk(Base):
    __tablename__ = "chunks"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    document_id: Mapped[int] = mapped_column(ForeignKey("documents.id", ondelete="CASCADE"))
    ordinal: Mapped[int] = mapped_column(Integer)
    page: Mapped[int | None] = mapped_column(Integer)
    heading_path: Mapped[str] = mapped_column(Text, default="", server_default="")
    text: Mapped[str] = mapped_column(Text)  # the original, quoted in answers and citations
    external_id: Mapped[str | None] = mapped_column(String(200))  # pre-cut passage id (eval)
    keyword_text: Mapped[str] = mapped_column(Text, default="", server_default="")
    tsv: Mapped[Any] = mapped_column(TSVECTOR, Computed(TSV_EXPR, persisted=True))
    embedding: Mapped[Any] = mapped_column(Vector(EMBEDDING_DIM), nullable=True)
    token_count: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    # URAG-D: the chunk rewritten with its document's context, with a one-sentence summary in
    # front. When set, it is what is embedded and keyword-indexed; `text` is still what is quoted.
    augmented_text: Mapped[str | None] = mapped_column(Text)

    document: Mapped[Document] = relationship(back_populates="chunks")

    __table_args__ = (
        UniqueConstraint("document_id", "ordinal", name="uq_chunks_document_id_ordinal"),
        _hnsw_cosine("ix_chunks_embedding_hnsw"),
        Index("ix_chunks_tsv", "tsv", postgresql_using="gin"),
        Index("ix_chunks_document_id", "document_id"),
    )


class DocumentSummary(Base):
    """A document's summary (URAG-D, with an LLM): searched first in the summary-first mode."""

    __tablename__ = "document_summaries"

    document_id: Mapped[int] = mapped_column(
        ForeignKey("documents.id", ondelete="CASCADE"), primary_key=True
    )
    summary: Mapped[str] = mapped_column(Text)
    source_version: Mapped[str] = mapped_column(String(64))  # the document's content hash
    keyword_text: Mapped[str] = mapped_column(Text, default="", server_default="")
    tsv: Mapped[Any] = mapped_column(TSVECTOR, Computed(TSV_EXPR, persisted=True))
    embedding: Mapped[Any] = mapped_column(Vector(EMBEDDING_DIM), nullable=True)
    created_at: Mapped[datetime] = _now_column()

    __table_args__ = (
        _hnsw_cosine("ix_document_summaries_embedding_hnsw"),
        Index("ix_document_summaries_tsv", "tsv", postgresql_using="gin"),
    )


class IndexState(Base):
    """Which embedder built the stored vectors (one row), and thresholds calibrated for it."""

    __tablename__ = "index_state"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, default=1)
    embedder: Mapped[str] = mapped_column(Text)
    dimension: Mapped[int] = mapped_column(Integer)
    thresholds: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict, server_default="{}")
    built_at: Mapped[datetime] = _now_column()


class TextModel(Base):
    """A model learned from the knowledge (the diacritic restorer's counts), shared by every
    process: rebuilt by the first one that finds the knowledge changed (``signature``)."""

    __tablename__ = "text_models"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    signature: Mapped[str] = mapped_column(Text)
    data: Mapped[bytes] = mapped_column(LargeBinary)
    built_at: Mapped[datetime] = _now_column()


# -- conversations: one store for every channel -----------------------------------------------


class ConversationMode(enum.StrEnum):
    bot = "bot"  # the bot answers
    human = "human"  # staff took over: the bot stays quiet until handed back


class Direction(enum.StrEnum):
    inbound = "in"
    outbound = "out"


class Author(enum.StrEnum):
    user = "user"
    bot = "bot"
    staff = "staff"


class MessageStatus(enum.StrEnum):
    # inbound: received → answering → answered | skipped | failed
    received = "received"
    answering = "answering"
    answered = "answered"
    skipped = "skipped"  # stored, not answered (an event, a paused thread)
    # outbound: queued → sending → sent | undeliverable | failed
    queued = "queued"
    sending = "sending"
    sent = "sent"
    undeliverable = "undeliverable"  # outside the platform's window, or channel not set up
    failed = "failed"  # attempts exhausted or a permanent error; `error` says why


class Contact(Base):
    __tablename__ = "contacts"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    channel: Mapped[str] = mapped_column(String(16))
    external_id: Mapped[str] = mapped_column(String(200))  # Telegram chat id, PSID, Zalo user id
    name: Mapped[str | None] = mapped_column(Text)
    locale: Mapped[str | None] = mapped_column(String(16))
    created_at: Mapped[datetime] = _now_column()

    __table_args__ = (
        UniqueConstraint("channel", "external_id", name="uq_contacts_channel_external_id"),
    )


class Conversation(Base):
    """One thread per contact; ``mode`` and ``paused_until`` say whether the bot may answer."""

    __tablename__ = "conversations"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    contact_id: Mapped[int] = mapped_column(
        ForeignKey("contacts.id", ondelete="CASCADE"), unique=True
    )
    channel: Mapped[str] = mapped_column(String(16))
    mode: Mapped[ConversationMode] = mapped_column(
        Enum(ConversationMode, name="conversation_mode"),
        default=ConversationMode.bot,
        server_default=ConversationMode.bot.value,
    )
    paused_until: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    last_inbound_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # Since when the student has been waiting for a person (they asked for one); cleared by a
    # staff reply. The admin lists these conversations first.
    waiting_since: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    created_at: Mapped[datetime] = _now_column()
    updated_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), server_default=func.now(), onupdate=func.now()
    )

    __table_args__ = (Index("ix_conversations_updated_at", "updated_at"),)


class Message(Base):
    __tablename__ = "messages"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    conversation_id: Mapped[int] = mapped_column(ForeignKey("conversations.id", ondelete="CASCADE"))
    channel: Mapped[str] = mapped_column(String(16))
    direction: Mapped[Direction] = mapped_column(
        Enum(Direction, name="message_direction", values_callable=lambda e: [m.value for m in e])
    )
    author: Mapped[Author] = mapped_column(Enum(Author, name="message_author"))
    # The platform's id of an inbound event: the dedup key (unique per channel).
    event_id: Mapped[str | None] = mapped_column(String(200))
    kind: Mapped[str] = mapped_column(String(16), default="text", server_default="text")
    text: Mapped[str] = mapped_column(Text, default="", server_default="")
    question: Mapped[str | None] = mapped_column(Text)  # the standalone form of a follow-up
    tier: Mapped[str | None] = mapped_column(String(16))
    citations: Mapped[list[Any]] = mapped_column(JSONB, default=list, server_default="[]")
    details: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict, server_default="{}")
    status: Mapped[MessageStatus] = mapped_column(Enum(MessageStatus, name="message_status"))
    attempts: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    error: Mapped[str | None] = mapped_column(Text)
    lease_until: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    next_attempt_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    reply_to_id: Mapped[int | None] = mapped_column(ForeignKey("messages.id", ondelete="SET NULL"))
    raw: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict, server_default="{}")
    created_at: Mapped[datetime] = _now_column()
    done_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))

    __table_args__ = (
        UniqueConstraint("channel", "event_id", name="uq_messages_channel_event_id"),
        Index("ix_messages_conversation_id_id", "conversation_id", "id"),
        # The work queues: only rows still to do are in these indexes.
        Index(
            "ix_messages_inbox",
            "id",
            postgresql_where=sql_text("status IN ('received', 'answering')"),
        ),
        Index(
            "ix_messages_outbox",
            "id",
            postgresql_where=sql_text("status IN ('queued', 'sending')"),
        ),
        Index("ix_messages_created_at", "created_at"),
    )


class ChannelToken(Base):
    """Platform tokens that rotate (Zalo OA): the current pair, replaced atomically."""

    __tablename__ = "channel_tokens"

    channel: Mapped[str] = mapped_column(String(16), primary_key=True)
    access_token: Mapped[str] = mapped_column(Text)
    refresh_token: Mapped[str] = mapped_column(Text)
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    updated_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), server_default=func.now(), onupdate=func.now()
    )


# -- admin: staff accounts, sessions, the audit log --------------------------------------------


class StaffRole(enum.StrEnum):
    viewer = "viewer"  # reads everything
    editor = "editor"  # also edits the FAQ and documents, replies in conversations
    admin = "admin"  # also manages accounts


class StaffUser(Base):
    __tablename__ = "staff_users"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    email: Mapped[str] = mapped_column(String(320), unique=True)  # stored lower-case
    password_hash: Mapped[str] = mapped_column(Text)  # argon2id
    role: Mapped[StaffRole] = mapped_column(Enum(StaffRole, name="staff_role"))
    active: Mapped[bool] = mapped_column(Boolean, default=True, server_default="true")
    created_at: Mapped[datetime] = _now_column()
    last_login_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class StaffSession(Base):
    """A login: the cookie holds a random token, the table its SHA-256 (a leaked table row
    cannot be replayed); any web process can check it, so the admin scales out too."""

    __tablename__ = "staff_sessions"

    token_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("staff_users.id", ondelete="CASCADE"))
    csrf_token: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = _now_column()
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))

    __table_args__ = (Index("ix_staff_sessions_user_id", "user_id"),)


class LoginAttempt(Base):
    """Failed and successful logins, for the rate limit (shared by every web process)."""

    __tablename__ = "login_attempts"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    email: Mapped[str] = mapped_column(String(320))
    ip: Mapped[str] = mapped_column(String(64))
    succeeded: Mapped[bool] = mapped_column(Boolean)
    at: Mapped[datetime] = _now_column()

    __table_args__ = (
        Index("ix_login_attempts_email_at", "email", "at"),
        Index("ix_login_attempts_ip_at", "ip", "at"),
    )


class AuditEntry(Base):
    """Who changed what, when, with the row before and after (FAQ history reads this)."""

    __tablename__ = "audit_log"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    at: Mapped[datetime] = _now_column()
    actor: Mapped[str] = mapped_column(String(320))  # a staff e-mail, or "cli" / "system"
    action: Mapped[str] = mapped_column(String(32))  # create, update, delete, publish, ...
    entity: Mapped[str] = mapped_column(String(32))  # faq, variant, document, user, ...
    entity_id: Mapped[int | None] = mapped_column(Integer)
    before: Mapped[dict[str, Any] | None] = mapped_column(JSONB)
    after: Mapped[dict[str, Any] | None] = mapped_column(JSONB)

    __table_args__ = (Index("ix_audit_log_entity_entity_id", "entity", "entity_id"),)
