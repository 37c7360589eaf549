"""The admin's tables: staff accounts, their sessions, login attempts and the audit log."""

from __future__ import annotations

import enum
from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, Boolean, DateTime, Enum, ForeignKey, Index, Integer, String, Text
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from bot.db.models.base import Base, now_column


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
    created_at: Mapped[datetime] = now_column()
    last_login_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class StaffSession(Base):
    """A login: the cookie holds a random token, the table its SHA-256 (a leaked table row
    cannot be replayed); any web process can check it, so the admin scales out too."""

    __tablename__ = "staff_sessions"

    token_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("staff_users.id", ondelete="CASCADE"))
    csrf_token: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = now_column()
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))

    __table_args__ = (Index("ix_staff_sessions_user_id", "user_id"),)


class LoginAttempt(Base):
    """Failed and successful logins, for the rate limit (shared by every web process)."""

    __tablename__ = "login_attempts"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    email: Mapped[str] = mapped_column(String(320))
    ip: Mapped[str] = mapped_column(String(64))
    # The address's network (bot.core.client_address.client_network), None for no address.
    network: Mapped[str | None] = mapped_column(String(64))
    succeeded: Mapped[bool] = mapped_column(Boolean)
    at: Mapped[datetime] = now_column()

    __table_args__ = (
        Index("ix_login_attempts_email_at", "email", "at"),
        Index("ix_login_attempts_ip_at", "ip", "at"),
        Index("ix_login_attempts_network_at", "network", "at"),
        Index("ix_login_attempts_at", "at"),  # `tuvan prune`: the old ones, without a scan
    )


class AuditEntry(Base):
    """Who changed what, when, with the row before and after (FAQ history reads this)."""

    __tablename__ = "audit_log"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    at: Mapped[datetime] = now_column()
    actor: Mapped[str] = mapped_column(String(320))  # a staff e-mail, or "cli" / "system"
    action: Mapped[str] = mapped_column(String(32))  # create, update, delete, publish, ...
    entity: Mapped[str] = mapped_column(String(32))  # faq, variant, document, user, ...
    entity_id: Mapped[int | None] = mapped_column(Integer)
    before: Mapped[dict[str, Any] | None] = mapped_column(JSONB)
    after: Mapped[dict[str, Any] | None] = mapped_column(JSONB)

    __table_args__ = (Index("ix_audit_log_entity_entity_id", "entity", "entity_id"),)
