"""``tuvan admin ...``: staff accounts of the web admin (/admin), from the server's shell.

The first admin account can only be made here; later ones also from the Users page. Passwords
are never arguments (they would land in the shell history and in ``ps``): they are typed twice
at a prompt, or read as two lines from standard input when it is not a terminal (scripts:
``printf '%s\\n%s\\n' "$PW" "$PW" | tuvan admin create-user ...``).
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from typing import TypeVar

import click
from sqlalchemy.ext.asyncio import AsyncSession

from admin import audit
from admin.accounts import (
    check_password_rules,
    create_user,
    find_user,
    list_users,
    normalize_email,
    set_active,
    set_password,
)
from bot.cli.common import pass_settings, run
from bot.core.errors import AccountError
from bot.core.settings import Settings
from bot.db.engine import database_url, engine_for, make_sessionmaker
from bot.db.models import StaffRole
from bot.runtime import prepare_database

T = TypeVar("T")
ACTOR = "cli"


def read_password() -> str:
    """The new password, given twice: at a hidden prompt, or as two lines of standard input."""
    stdin = sys.stdin
    if stdin.isatty():
        password = str(
            click.prompt("Password", hide_input=True, confirmation_prompt="Repeat the password")
        )
    else:
        lines = [stdin.readline(), stdin.readline()]
        if not lines[1]:
            raise click.ClickException(
                "expected the password twice, on two lines of standard input"
            )
        first, second = (line.rstrip("\r\n") for line in lines)
        if first != second:
            raise click.ClickException("the two passwords differ")
        password = first
    try:
        check_password_rules(password)
    except AccountError as exc:
        raise click.ClickException(str(exc)) from exc
    return password


def with_session(settings: Settings, body: Callable[[AsyncSession], Awaitable[T]]) -> T:
    """Run ``body`` in one transaction on the database alone (no model is loaded: fast)."""

    async def main() -> T:
        with database_url(settings) as url:
            async with engine_for(url) as engine:
                await prepare_database(engine, migrate_schema=settings.database_url is None)
                async with make_sessionmaker(engine).begin() as session:
                    return await body(session)

    return run(main())


@click.group("admin")
def admin_group() -> None:
    """Staff accounts of the web admin (/admin)."""


@admin_group.command("create-user")
@click.argument("email")
@click.option(
    "--role",
    type=click.Choice([r.value for r in StaffRole]),
    default=StaffRole.viewer.value,
    show_default=True,
    help="viewer reads; editor also edits; admin also manages accounts.",
)
@pass_settings
def create_user_command(settings: Settings, email: str, role: str) -> None:
    """Create an account for EMAIL (the password is asked twice)."""
    try:
        address = normalize_email(email)
    except AccountError as exc:
        raise click.ClickException(str(exc)) from exc
    password = read_password()

    async def body(session: AsyncSession) -> None:
        user = await create_user(session, address, password, StaffRole(role))
        after = {"email": user.email, "role": user.role.value, "active": True}
        await audit.record(session, ACTOR, "create", "user", user.id, None, after)

    with_session(settings, body)
    click.echo(f"created {address} ({role})")


@admin_group.command("list-users")
@pass_settings
def list_users_command(settings: Settings) -> None:
    """List the accounts: e-mail, role, active, last login."""

    async def body(session: AsyncSession) -> list[tuple[str, str, bool, str]]:
        return [
            (
                u.email,
                u.role.value,
                u.active,
                u.last_login_at.strftime("%Y-%m-%d %H:%M") if u.last_login_at else "never",
            )
            for u in await list_users(session)
        ]

    rows = with_session(settings, body)
    if not rows:
        click.echo("no accounts yet: tuvan admin create-user EMAIL --role admin", err=True)
    for email, role, active, last in rows:
        click.echo(f"{email}\t{role}\t{'active' if active else 'inactive'}\t{last}")


def _change(settings: Settings, email: str, action: str, password: str | None = None) -> None:
    async def body(session: AsyncSession) -> None:
        user = await find_user(session, email)
        if user is None:
            raise click.ClickException(f"no account for {email.strip().lower()}")
        before = {"active": user.active}
        if password is not None:
            await set_password(session, user, password)
            await audit.record(session, ACTOR, "set_password", "user", user.id)
            return
        await set_active(session, user, action == "activate")
        await audit.record(session, ACTOR, action, "user", user.id, before, {"active": user.active})

    with_session(settings, body)


@admin_group.command("set-password")
@click.argument("email")
@pass_settings
def set_password_command(settings: Settings, email: str) -> None:
    """Give EMAIL a new password (asked twice); its logins end."""
    password = read_password()
    _change(settings, email, "set_password", password)
    click.echo(f"password of {email.strip().lower()} changed")


@admin_group.command("deactivate")
@click.argument("email")
@pass_settings
def deactivate_command(settings: Settings, email: str) -> None:
    """Stop EMAIL from logging in (its logins end); the history keeps its name."""
    _change(settings, email, "deactivate")
    click.echo(f"{email.strip().lower()} deactivated")


@admin_group.command("activate")
@click.argument("email")
@pass_settings
def activate_command(settings: Settings, email: str) -> None:
    """Let a deactivated EMAIL log in again."""
    _change(settings, email, "activate")
    click.echo(f"{email.strip().lower()} activated")
