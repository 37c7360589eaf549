"""``tuvan telegram set-webhook|delete-webhook|poll``: connect the bot from @BotFather.

Webhook and long polling exclude each other (Telegram answers getUpdates with 409 while a webhook
is set). Polling only stores the updates, as the webhook does; the worker answers them.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Awaitable, Callable
from contextlib import suppress

import aiohttp
import click

from adapters.telegram.webhook import delete_webhook, set_webhook
from bot.channels.telegram_polling import poll_into_store
from bot.cli.common import pass_settings, run
from bot.core.settings import Settings, TelegramSettings
from bot.db.engine import database_url, engine_for, make_sessionmaker
from bot.runtime import prepare_database


def _bot(settings: Settings) -> TelegramSettings:
    if settings.telegram.token is None:
        raise click.ClickException(
            "no Telegram bot token: set TUVAN_TELEGRAM__TOKEN to the token from @BotFather"
        )
    return settings.telegram


def _with_http(body: Callable[[aiohttp.ClientSession], Awaitable[None]]) -> None:
    async def main() -> None:
        async with aiohttp.ClientSession() as http:
            await body(http)

    run(main())


@click.group("telegram")
def telegram_group() -> None:
    """Connect the Telegram bot: a webhook (production) or long polling (development)."""


@telegram_group.command("set-webhook")
@click.argument("url")
@click.option("--drop-pending", is_flag=True, help="Discard updates Telegram is holding.")
@pass_settings
def set_webhook_command(settings: Settings, url: str, drop_pending: bool) -> None:
    """Have Telegram post updates to URL (the public https:// address of tuvan's Telegram
    webhook), with TUVAN_TELEGRAM__SECRET_TOKEN in a header of every request."""
    bot = _bot(settings)
    _with_http(lambda http: set_webhook(http, bot, url, drop_pending=drop_pending))
    click.echo(f"Telegram now posts updates to {url}")


@telegram_group.command("delete-webhook")
@click.option("--drop-pending", is_flag=True, help="Discard updates Telegram is holding.")
@pass_settings
def delete_webhook_command(settings: Settings, drop_pending: bool) -> None:
    """Stop Telegram's posts (needed before `tuvan telegram poll`)."""
    bot = _bot(settings)
    _with_http(lambda http: delete_webhook(http, bot, drop_pending=drop_pending))
    click.echo("Telegram webhook deleted")


@telegram_group.command("poll")
@click.option("--timeout", default=30, show_default=True, help="Seconds per long poll.")
@pass_settings
def poll_command(settings: Settings, timeout: int) -> None:
    """Fetch updates by long polling and store them until Ctrl-C (no public URL needed)."""
    bot = _bot(settings)

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            with suppress(NotImplementedError):  # Windows: Ctrl-C interrupts instead
                loop.add_signal_handler(sig, stop.set)
        # Only the database: polling stores updates, it loads no models.
        with database_url(settings) as url:
            async with engine_for(url) as engine:
                await prepare_database(engine, migrate_schema=settings.database_url is None)
                async with aiohttp.ClientSession() as http:
                    click.echo("polling Telegram; Ctrl-C stops", err=True)
                    await poll_into_store(
                        bot,
                        make_sessionmaker(engine),
                        http,
                        stop=stop,
                        timeout=timeout,
                        max_pending=settings.limits.pending_per_conversation,
                    )

    run(main())
