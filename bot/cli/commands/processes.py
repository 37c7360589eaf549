"""``tuvan demo``, ``tuvan serve`` and ``tuvan worker``: the long-running processes
(``bot.processes``), started from the command line.

The web server and the admin are imported when one of these runs, not when ``tuvan`` starts:
they add half a second to every other command (``tuvan --help`` included)."""

from __future__ import annotations

import click

from admin.accounts import ensure_demo_admin
from bot.cli.common import (
    StageLines,
    pass_settings,
    progress,
    user_errors,
    warn_if_empty,
    with_runtime,
)
from bot.core.settings import Settings
from bot.knowledge.demo import load_demo_kb
from bot.runtime import Runtime

host_option = click.option("--host", default=None, help="Default: TUVAN_HOST (127.0.0.1).")
port_option = click.option("--port", default=None, type=int, help="Default: TUVAN_PORT (8080).")


@click.command("demo")
@host_option
@port_option
@click.option("--no-demo-data", is_flag=True, help="Do not load the demo knowledge base.")
@pass_settings
def demo_command(
    settings: Settings, host: str | None, port: int | None, no_demo_data: bool
) -> None:
    """Web chat, webhooks and a worker in one process, on the embedded database."""
    from bot.processes import check_listen, serve

    with user_errors():  # a busy port says so in one line, before the models load
        check_listen(host or settings.host, port or settings.port)

    stages = StageLines()

    async def body(rt: Runtime) -> None:
        if not no_demo_data:
            loaded = await load_demo_kb(
                rt.sessionmaker,
                rt.indexer,
                progress=progress(None, "demo data", "text").update,
                announce=stages,
            )
            if loaded:
                stages.say(f"loaded the demo knowledge base: {loaded}")
        await warn_if_empty(rt)
        if settings.admin.enabled and (account := await ensure_demo_admin(rt)):
            # Shown once, on the operator's own terminal; only the argon2 hash is stored.
            click.echo(
                f"admin at /admin: sign in as {account[0]} with password {account[1]} "
                "(change it: tuvan admin set-password)"
            )
        await serve(rt, host or settings.host, port or settings.port, with_worker=True)

    with_runtime(settings, body, announce=stages)


@click.command("serve")
@host_option
@port_option
@pass_settings
def serve_command(settings: Settings, host: str | None, port: int | None) -> None:
    """Webhooks, web chat, /healthz and /metrics; questions are answered by `tuvan worker`."""
    from bot.processes import check_listen, serve

    with user_errors():
        check_listen(host or settings.host, port or settings.port)

    async def body(rt: Runtime) -> None:
        await warn_if_empty(rt)
        await serve(rt, host or settings.host, port or settings.port)

    with_runtime(settings, body, announce=StageLines())


@click.command("worker")
@pass_settings
def worker_command(settings: Settings) -> None:
    """Answer queued messages and deliver the replies (run one or more, on any machine)."""
    from bot.processes import work

    with_runtime(settings, work, announce=StageLines())
