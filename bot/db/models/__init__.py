"""The store's tables, by area (re-exported here): knowledge (FAQ entries, documents, chunks),
conversations (contacts, messages, answer feedback, answers staff settled, channel tokens),
quarantine (webhook events that could not be stored), staff (accounts, sessions, audit log),
limits (the rate limits' token buckets).

Vectors are declared with the default embedder's dimension; `tuvan reindex` with an embedder of
another dimension changes the column type and rebuilds the HNSW indexes (retrieval.index).
Every schema change goes through an Alembic migration; tests check that both agree.
"""

from bot.db.models.base import EMBEDDING_DIM, NAMING, TSV_EXPR, Base
from bot.db.models.conversations import (
    AnswerFeedback,
    Author,
    ChannelToken,
    Contact,
    Conversation,
    ConversationMode,
    Direction,
    Message,
    MessageStatus,
    SettledAnswer,
)
from bot.db.models.facts import CatalogueRow, FactRow
from bot.db.models.knowledge import (
    Chunk,
    Document,
    DocumentSummary,
    FaqEntry,
    FaqOrigin,
    FaqStatus,
    FaqVariant,
    IndexState,
    TextModel,
    VariantOrigin,
)
from bot.db.models.limits import RateBucket
from bot.db.models.quarantine import QuarantinedEvent
from bot.db.models.staff import AuditEntry, LoginAttempt, StaffRole, StaffSession, StaffUser

__all__ = [
    "EMBEDDING_DIM",
    "NAMING",
    "TSV_EXPR",
    "AnswerFeedback",
    "AuditEntry",
    "Author",
    "Base",
    "CatalogueRow",
    "ChannelToken",
    "Chunk",
    "Contact",
    "Conversation",
    "ConversationMode",
    "Direction",
    "Document",
    "DocumentSummary",
    "FactRow",
    "FaqEntry",
    "FaqOrigin",
    "FaqStatus",
    "FaqVariant",
    "IndexState",
    "LoginAttempt",
    "Message",
    "MessageStatus",
    "QuarantinedEvent",
    "RateBucket",
    "SettledAnswer",
    "StaffRole",
    "StaffSession",
    "StaffUser",
    "TextModel",
    "VariantOrigin",
]
