"""Staff accounts: argon2id password hashes, login sessions, the login rate limit.

Database functions take the session first and never commit (the caller owns the transaction).
No aiohttp here: the CLI (`tuvan admin ...`) and the web view share these.

A session cookie carries a random token (``secrets.token_urlsafe``); the table stores only its
SHA-256, so a leaked row cannot be replayed. The rate limit counts rows of ``login_attempts``,
so it holds across web processes and restarts; PostgreSQL advisory locks (per client address,
then per e-mail) make count → verify → record one step, so parallel guesses cannot all read the
same count. Hashing is bounded per process (``HASHING_CONCURRENCY``): argon2id takes 64 MiB
each, and 50 parallel logins took serve from 221 to 544 MB.
"""

from __future__ import annotations

import asyncio
import hashlib
import secrets
import weakref
from dataclasses import dataclass
from datetime import timedelta

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError
from sqlalchemy import delete, func, select, text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.core.clock import utcnow
from bot.core.errors import AccountError, LoginThrottledError
from bot.core.settings import AdminSettings
from bot.db.models import LoginAttempt, StaffRole, StaffSession, StaffUser
from bot.runtime import Runtime

MIN_PASSWORD_CHARS = 10
MAX_PASSWORD_CHARS = 1024  # argon2 takes any length; this keeps a request from costing minutes
MAX_EMAIL_CHARS = 320

# argon2-cffi's defaults are argon2id with RFC 9106's low-memory profile; when a later version
# raises them, check_needs_rehash() says so at the next login and the hash is renewed.
_HASHER = PasswordHasher()
# Verified against when the e-mail is unknown, so that both cases take the same time.
_DUMMY_HASH = _HASHER.hash(secrets.token_urlsafe(16))
# Password hashes computed at once in a process, and logins in flight (each holds a database
# connection while it waits for its advisory locks): the rest wait in the event loop.
HASHING_CONCURRENCY = 2


class LoopSemaphore:
    """A semaphore for the running event loop: one limit per process, made on first use in each
    loop (an ``asyncio.Semaphore`` belongs to the loop that first waits on it)."""

    def __init__(self, value: int) -> None:
        self.value = value
        self._by_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore]
        self._by_loop = weakref.WeakKeyDictionary()

    def __call__(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        semaphore = self._by_loop.get(loop)
        if semaphore is None:
            semaphore = self._by_loop[loop] = asyncio.Semaphore(self.value)
        return semaphore


HASHING = LoopSemaphore(HASHING_CONCURRENCY)
LOGINS = LoopSemaphore(HASHING_CONCURRENCY)


@dataclass(frozen=True)
class StaffIdentity:
    """Who is signed in, as the web view needs it for one request."""

    user_id: int
    email: str
    role: StaffRole
    csrf_token: str

    def may(self, role: StaffRole) -> bool:
        return ROLE_RANK[self.role] >= ROLE_RANK[role]


ROLE_RANK = {StaffRole.viewer: 0, StaffRole.editor: 1, StaffRole.admin: 2}


def normalize_email(raw: str) -> str:
    email = raw.strip().lower()
    local, at, domain = email.partition("@")
    if not at or not local or "." not in domain or any(c.isspace() for c in email):
        raise AccountError(f"not an e-mail address: {raw.strip()[:80]!r}", "bad_email")
    if len(email) > MAX_EMAIL_CHARS:
        raise AccountError(
            f"an e-mail address has at most {MAX_EMAIL_CHARS} characters", "bad_email"
        )
    return email


def check_password_rules(password: str) -> None:
    if len(password) < MIN_PASSWORD_CHARS:
        raise AccountError(
            f"a password needs at least {MIN_PASSWORD_CHARS} characters", "short_password"
        )
    if len(password) > MAX_PASSWORD_CHARS:
        raise AccountError(
            f"a password has at most {MAX_PASSWORD_CHARS} characters", "long_password"
        )


async def hash_password(password: str) -> str:
    """argon2id, off the event loop (a hash costs tens of milliseconds of CPU and 64 MiB)."""
    check_password_rules(password)
    async with HASHING():
        return await asyncio.to_thread(_HASHER.hash, password)


async def _verify(password_hash: str, password: str) -> bool:
    def check() -> bool:
        try:
            return _HASHER.verify(password_hash, password)
        except (VerifyMismatchError, VerificationError, InvalidHashError):
            return False

    async with HASHING():
        return await asyncio.to_thread(check)


# -- accounts -----------------------------------------------------------------------------------


async def find_user(session: AsyncSession, email: str) -> StaffUser | None:
    return await session.scalar(select(StaffUser).where(StaffUser.email == email.strip().lower()))


async def create_user(
    session: AsyncSession, email: str, password: str, role: StaffRole
) -> StaffUser:
    address = normalize_email(email)
    if await find_user(session, address) is not None:
        raise AccountError(f"{address} already has an account", "exists")
    user = StaffUser(email=address, password_hash=await hash_password(password), role=role)
    session.add(user)
    await session.flush()
    return user


async def set_password(session: AsyncSession, user: StaffUser, password: str) -> None:
    """A new password signs the account out everywhere."""
    user.password_hash = await hash_password(password)
    await session.execute(delete(StaffSession).where(StaffSession.user_id == user.id))
    await session.flush()


async def set_active(session: AsyncSession, user: StaffUser, active: bool) -> None:
    user.active = active
    if not active:
        await session.execute(delete(StaffSession).where(StaffSession.user_id == user.id))
    await session.flush()


async def list_users(session: AsyncSession) -> list[StaffUser]:
    return list((await session.scalars(select(StaffUser).order_by(StaffUser.email))).all())


# -- logging in ---------------------------------------------------------------------------------


async def _lock(session: AsyncSession, scope: str, value: str) -> None:
    """A transaction-scoped advisory lock on ``scope:value`` (a 64-bit hash of it): held until
    the caller's transaction ends, in every process sharing the database."""
    digest = hashlib.sha256(f"tuvan-login:{scope}:{value}".encode()).digest()
    key = int.from_bytes(digest[:8], "big", signed=True)
    await session.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": key})


async def _recent_failures(
    session: AsyncSession, settings: AdminSettings, email: str, ip: str, network: str | None
) -> tuple[int, int, int, int]:
    """Failures in the window: for the e-mail from this address since its last success there,
    for the address (any e-mail), for the e-mail from every address, and for the network."""
    since = utcnow() - timedelta(minutes=settings.login_window_minutes)
    failed = (LoginAttempt.succeeded.is_(False), LoginAttempt.at > since)
    last_success_here = (
        select(func.max(LoginAttempt.at))
        .where(
            LoginAttempt.email == email,
            LoginAttempt.ip == ip,
            LoginAttempt.succeeded.is_(True),
        )
        .scalar_subquery()
    )
    row = (
        await session.execute(
            select(
                select(func.count())
                .where(
                    LoginAttempt.email == email,
                    LoginAttempt.ip == ip,
                    *failed,
                    LoginAttempt.at > func.coalesce(last_success_here, since),
                )
                .scalar_subquery(),
                select(func.count()).where(LoginAttempt.ip == ip, *failed).scalar_subquery(),
                select(func.count()).where(LoginAttempt.email == email, *failed).scalar_subquery(),
                select(func.count())
                .where(LoginAttempt.network == network, *failed)
                .scalar_subquery(),
            )
        )
    ).one()
    return int(row[0]), int(row[1]), int(row[2]), int(row[3])


async def authenticate(
    session: AsyncSession,
    settings: AdminSettings,
    email: str,
    password: str,
    ip: str,
    network: str | None = None,
) -> StaffUser | None:
    """The active user with this e-mail and password, or None; every try is recorded.

    Raises LoginThrottledError before checking anything once the e-mail from this address, the
    address, its network (``network``), or the e-mail from all addresses has used up its
    failures: a guesser learns nothing more, and costs us no more hashing. Failures lock an
    e-mail only for the addresses they came from: the e-mail's total bound stops every address
    that has failed for it, never one that has not (the owner, signing in from their own).

    Takes advisory locks on the address, then on the e-mail (always in that order: no
    deadlock), held until the caller's transaction ends: the count, the check and the
    recorded attempt are one step, so parallel guesses each see the ones before.
    """
    address = email.strip().lower()[:MAX_EMAIL_CHARS]
    ip = ip[:64]
    await _lock(session, "ip", ip)
    await _lock(session, "email", address)
    here, by_ip, everywhere, by_network = await _recent_failures(
        session, settings, address, ip, network
    )
    if (
        here >= settings.login_failures_per_email
        or by_ip >= settings.login_failures_per_ip
        or (here and everywhere >= settings.login_failures_per_email_total)
        or (network is not None and by_network >= settings.login_failures_per_network)
    ):
        raise LoginThrottledError("too many failed logins; try again later", "throttled")
    user = await find_user(session, address)
    password = password[:MAX_PASSWORD_CHARS]
    ok = await _verify(user.password_hash if user else _DUMMY_HASH, password)
    ok = ok and user is not None and user.active
    session.add(LoginAttempt(email=address, ip=ip, network=network, succeeded=ok, at=utcnow()))
    if not ok or user is None:
        await session.flush()
        return None
    if _HASHER.check_needs_rehash(user.password_hash):
        async with HASHING():
            user.password_hash = await asyncio.to_thread(_HASHER.hash, password)
    user.last_login_at = utcnow()
    # Attempts older than the window count for nothing; a login is a good moment to drop them
    # (a day's worth is kept for whoever investigates a burst of failures).
    keep = timedelta(minutes=max(settings.login_window_minutes, 24 * 60))
    await session.execute(delete(LoginAttempt).where(LoginAttempt.at < utcnow() - keep))
    await session.flush()
    return user


async def sign_in(
    sessionmaker: async_sessionmaker[AsyncSession],
    settings: AdminSettings,
    email: str,
    password: str,
    ip: str,
    network: str | None = None,
) -> str | None:
    """A login over the web: the new session's cookie token, or None for a wrong password;
    LoginThrottledError past the limits. At most ``HASHING_CONCURRENCY`` run at once in a
    process, so that a burst of tries waits in the event loop rather than holding database
    connections while it waits for the advisory locks."""
    async with LOGINS(), sessionmaker.begin() as session:
        user = await authenticate(session, settings, email, password, ip, network)
        return await open_session(session, user, settings.session_hours) if user else None


def _token_hash(token: str) -> str:
    # A cookie that is not UTF-8 arrives as lone surrogates: it hashes to no session.
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


async def open_session(session: AsyncSession, user: StaffUser, hours: float) -> str:
    """A new login for ``user``: returns the cookie's token (only its hash is stored)."""
    now = utcnow()
    # Expired logins are of no use to anyone: drop them while we are here.
    await session.execute(delete(StaffSession).where(StaffSession.expires_at < now))
    token = secrets.token_urlsafe(32)
    session.add(
        StaffSession(
            token_hash=_token_hash(token),
            user_id=user.id,
            csrf_token=secrets.token_urlsafe(32),
            expires_at=now + timedelta(hours=hours),
        )
    )
    await session.flush()
    return token


async def identify(session: AsyncSession, token: str) -> StaffIdentity | None:
    """The signed-in staff member for a cookie's token, if the login is current and active."""
    row = (
        await session.execute(
            select(StaffUser.id, StaffUser.email, StaffUser.role, StaffSession.csrf_token)
            .join(StaffSession, StaffSession.user_id == StaffUser.id)
            .where(
                StaffSession.token_hash == _token_hash(token),
                StaffSession.expires_at > utcnow(),
                StaffUser.active.is_(True),
            )
        )
    ).one_or_none()
    if row is None:
        return None
    return StaffIdentity(row.id, row.email, row.role, row.csrf_token)


async def close_session(session: AsyncSession, token: str) -> None:
    await session.execute(delete(StaffSession).where(StaffSession.token_hash == _token_hash(token)))


async def close_sessions_of(session: AsyncSession, user_id: int) -> None:
    await session.execute(delete(StaffSession).where(StaffSession.user_id == user_id))


async def set_role(session: AsyncSession, user: StaffUser, role: StaffRole) -> None:
    user.role = role
    await session.flush()


DEMO_ADMIN = "admin@demo.tuvan.local"


async def ensure_demo_admin(rt: Runtime) -> tuple[str, str] | None:
    """A first admin account for the demo, with a fresh random password, when no account
    exists yet: (e-mail, password) to show once; None when staff accounts exist already."""
    async with rt.sessionmaker.begin() as session:
        if await session.scalar(select(func.count()).select_from(StaffUser)):
            return None
        password = secrets.token_urlsafe(12)
        await create_user(session, DEMO_ADMIN, password, StaffRole.admin)
    return DEMO_ADMIN, password
