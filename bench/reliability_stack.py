"""What the reliability bench runs against: one embedded PostgreSQL with a database per case
(copied from a template holding the demo knowledge base), ``tuvan serve`` and ``tuvan worker``
as real subprocesses (the fake Telegram Bot API they send to is in reliability_telegram), and the
HTTP clients, each from its own loopback address (127.0.0.x), so per-address limits tell the
flooding client from a normal visitor.

Nothing here is imported by the product; ``bench/reliability.py`` is the entry point.
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import shutil
import signal
import socket
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bot.core.settings import Settings
from bot.db import migrate
from bot.db.engine import EmbeddedServer, make_engine, make_sessionmaker, start_embedded
from bot.knowledge.demo import demo_kb_dir, load_demo_kb
from bot.knowledge.faq_files import import_faq, read_faq_file
from bot.runtime import build_parts
from retrieval.index.indexer import Indexer
from retrieval.index.state import ensure_index_state

ROOT = Path(__file__).resolve().parents[1]
TUVAN = [sys.executable, "-m", "bot.cli"]
TELEGRAM_SECRET = "bench-secret_0123456789"
TELEGRAM_TOKEN = "123456:BENCH-token_abcdef"
ASK_TOKEN = "bench-ask-token-0123456789abcdef"
METRICS_TOKEN = "bench-metrics-token-0123456789"
ORIGIN = "http://bench.example"
MESSENGER_SECRET = "bench-messenger-app-secret"
ZALO_KEY = "bench-zalo-oa-secret-key"
PENDING = "('received', 'answering', 'queued', 'sending')"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def client(source: str, *, limit: int = 100, timeout_s: float = 60) -> aiohttp.ClientSession:
    """A client session whose connections come from ``source`` (a 127.0.0.x address)."""
    connector = aiohttp.TCPConnector(limit=limit, local_addr=(source, 0), force_close=True)
    return aiohttp.ClientSession(
        connector=connector, timeout=aiohttp.ClientTimeout(total=timeout_s)
    )


@dataclass
class Figure:
    case: str
    name: str
    value: Any
    target: str
    ok: bool | None  # None: a figure with no target


class Database:
    """The embedded server, and the databases the cases run on."""

    def __init__(self, root: Path, server: EmbeddedServer) -> None:
        self.root = root
        self.server = server
        self.made = 0
        self.keep = False
        self.demo = "tpl_demo"  # the template holding the demo knowledge base

    async def names(self) -> list[str]:
        rows = await self.rows(self.server.url, "SELECT datname FROM pg_database")
        return [str(r[0]) for r in rows]

    def close(self) -> None:
        self.server.release()
        if not self.keep:
            shutil.rmtree(self.root, ignore_errors=True)

    def url(self, name: str) -> str:
        return make_url(self.server.url).set(database=name).render_as_string(hide_password=False)

    async def admin(self, sql: str) -> None:
        engine = make_engine(self.server.url)
        try:
            async with engine.connect() as conn:
                conn = await conn.execution_options(isolation_level="AUTOCOMMIT")
                await conn.execute(text(sql))
        finally:
            await engine.dispose()

    async def copy_demo(self) -> str:
        """A new database holding the demo knowledge base (``open_database``'s); its URL."""
        return await self.copy(self.demo)

    async def copy(self, template: str) -> str:
        """A new database copied from ``template``; its URL."""
        self.made += 1
        name = f"case_{self.made}"
        await self.admin(f"CREATE DATABASE {name} TEMPLATE {template}")
        return self.url(name)

    async def scalar(self, url: str, sql: str, **params: Any) -> Any:
        engine = make_engine(url)
        try:
            async with engine.connect() as conn:
                return (await conn.execute(text(sql), params)).scalar()
        finally:
            await engine.dispose()

    async def rows(self, url: str, sql: str, **params: Any) -> list[Any]:
        engine = make_engine(url)
        try:
            async with engine.connect() as conn:
                return list((await conn.execute(text(sql), params)).all())
        finally:
            await engine.dispose()


async def open_database(
    data_dir: Path, keep: Path | None = None, *, documents: bool = True
) -> Database:
    """The server, with two templates: ``tpl_blank`` (migrated, empty) and the demo knowledge
    base, embedded with the default embedder (minutes on a busy machine): ``tpl_demo``, or
    without ``documents`` ``tpl_demo_faq``, the demo FAQ alone (seconds: a smoke run's cases ask
    the FAQ's questions).

    With ``keep``, the server's folder is that one and outlives the run: the templates are made
    once and only migrated on later runs (delete the folder after the demo data changes).
    """
    root = keep or Path(tempfile.mkdtemp(prefix="tuvan-reliability-"))
    db = Database(root, start_embedded(root / "pg"))
    db.keep = keep is not None
    db.demo = "tpl_demo" if documents else "tpl_demo_faq"
    existing = set(await db.names())
    for name in existing:
        if name.startswith("case_"):
            await db.admin(f"DROP DATABASE {name}")
    for name in ("tpl_blank", db.demo):
        if name not in existing:
            await db.admin(f"CREATE DATABASE {name}")
        engine = make_engine(db.url(name))
        try:
            await migrate.upgrade(engine)
            if name == db.demo and name not in existing:
                await _load_demo(engine, data_dir, documents)
        finally:
            await engine.dispose()
    return db


async def _load_demo(engine: AsyncEngine, data_dir: Path, documents: bool) -> None:
    parts = build_parts(Settings(_env_file=None, data_dir=data_dir))
    indexer = Indexer(parts.embedder, parts.processor)
    sessionmaker = make_sessionmaker(engine)
    async with sessionmaker.begin() as session:
        await ensure_index_state(session, indexer.embedder)
    if documents:
        await load_demo_kb(sessionmaker, indexer)
    else:
        drafts = read_faq_file(demo_kb_dir() / "faq.jsonl")
        await import_faq(sessionmaker, indexer, drafts, updated_by="demo")


def demo_questions() -> list[str]:
    path = demo_kb_dir() / "faq.jsonl"
    return [json.loads(line)["question"] for line in path.open(encoding="utf-8") if line.strip()]


def base_env(
    db_url: str, data_dir: Path, telegram_base: str = "", *, all_channels: bool = False
) -> dict[str, str]:
    """The environment of serve and worker: Telegram configured with bench secrets (and with
    ``all_channels`` Messenger and Zalo too, for their webhooks), and the settings later
    versions read (ask and metrics tokens, the allowed origin)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TUVAN_")}
    env.update(
        {
            "TUVAN_DATABASE_URL": db_url,
            "TUVAN_DATA_DIR": str(data_dir),
            "TUVAN_LOG_LEVEL": "WARNING",
            "TUVAN_TELEGRAM__TOKEN": TELEGRAM_TOKEN,
            "TUVAN_TELEGRAM__SECRET_TOKEN": TELEGRAM_SECRET,
            "TUVAN_TELEGRAM__API_BASE": telegram_base or "http://127.0.0.1:9",
            "TUVAN_WEB__ALLOWED_ORIGINS": json.dumps([ORIGIN]),
            "TUVAN_WEB__ASK_TOKEN": ASK_TOKEN,
            "TUVAN_METRICS_TOKEN": METRICS_TOKEN,
        }
    )
    if all_channels:
        env.update(
            {
                "TUVAN_MESSENGER__PAGE_TOKEN": "bench-page-token",
                "TUVAN_MESSENGER__APP_SECRET": MESSENGER_SECRET,
                "TUVAN_MESSENGER__VERIFY_TOKEN": "bench-verify",
                "TUVAN_MESSENGER__API_BASE": "http://127.0.0.1:9",
                "TUVAN_ZALO__APP_ID": "1234567890",
                "TUVAN_ZALO__OA_SECRET_KEY": ZALO_KEY,
                "TUVAN_ZALO__ACCESS_TOKEN": "bench-zalo-access",
                "TUVAN_ZALO__REFRESH_TOKEN": "bench-zalo-refresh",
                "TUVAN_ZALO__API_BASE": "http://127.0.0.1:9",
                "TUVAN_ZALO__OAUTH_BASE": "http://127.0.0.1:9",
            }
        )
    return env


class Processes:
    """``tuvan serve`` and ``tuvan worker`` subprocesses, each ended by its own pid."""

    def __init__(self, log_dir: Path) -> None:
        self.log_dir = log_dir
        self.started: list[asyncio.subprocess.Process] = []
        self.logs: dict[int, Path] = {}  # pid → its log file

    async def run(self, args: list[str], env: dict[str, str], stdin: bytes = b"") -> int:
        """A one-off ``tuvan`` command; its exit code."""
        process = await asyncio.create_subprocess_exec(
            *TUVAN,
            *args,
            env=env,
            cwd=ROOT,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.DEVNULL,
        )
        await process.communicate(stdin)
        return process.returncode or 0

    async def start(
        self, name: str, args: list[str], env: dict[str, str], *, open_files: int = 0
    ) -> asyncio.subprocess.Process:
        """``tuvan <args>`` logging to a file of its own; with ``open_files``, its soft and hard
        open-file limits are that (as a service manager would set them)."""
        self.log_dir.mkdir(parents=True, exist_ok=True)
        path = self.log_dir / f"{name}-{len(self.logs) + 1}.log"

        def limit_files() -> None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (open_files, open_files))

        with path.open("ab") as log:
            process = await asyncio.create_subprocess_exec(
                *TUVAN,
                *args,
                env=env,
                cwd=ROOT,
                stdout=log,
                stderr=log,
                preexec_fn=limit_files if open_files else None,
            )
        self.started.append(process)
        self.logs[process.pid] = path
        return process

    async def worker(
        self, name: str, env: dict[str, str], within_s: float = 180
    ) -> asyncio.subprocess.Process:
        """A ``tuvan worker``, once it says it runs (its embedder loaded)."""
        process = await self.start(name, ["worker"], env)
        log = self.logs[process.pid]
        for _ in range(int(within_s / 0.2)):
            if process.returncode is not None:
                raise RuntimeError(f"tuvan worker exited with {process.returncode}")
            if b"is running" in log.read_bytes():
                return process
            await asyncio.sleep(0.2)
        raise RuntimeError("tuvan worker did not start")

    async def serve(
        self, name: str, env: dict[str, str], *, open_files: int = 0
    ) -> tuple[asyncio.subprocess.Process, str]:
        """A ``tuvan serve`` on a free port, once its /healthz answers; its base URL."""
        port = free_port()
        process = await self.start(name, ["serve", "--port", str(port)], env, open_files=open_files)
        url = f"http://127.0.0.1:{port}"
        await wait_ready(url, process)
        return process, url

    async def kill(self, process: asyncio.subprocess.Process) -> None:
        if process.returncode is None:
            process.send_signal(signal.SIGKILL)
        await process.wait()

    async def stop(self, process: asyncio.subprocess.Process, grace_s: float = 5) -> None:
        """SIGTERM, then SIGKILL after ``grace_s``."""
        if process.returncode is None:
            process.terminate()
            try:
                await asyncio.wait_for(process.wait(), grace_s)
            except TimeoutError:
                await self.kill(process)

    async def stop_all(self) -> None:
        for process in self.started:
            await self.stop(process, grace_s=3)
        self.started.clear()


async def wait_ready(url: str, process: asyncio.subprocess.Process, within_s: float = 180) -> None:
    deadline = time.monotonic() + within_s
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=5)) as http:
        while time.monotonic() < deadline:
            if process.returncode is not None:
                raise RuntimeError(f"tuvan serve exited with {process.returncode}")
            try:
                async with http.get(f"{url}/healthz") as response:
                    if response.status == 200:
                        return
            except (aiohttp.ClientError, TimeoutError):
                pass
            await asyncio.sleep(0.3)
    raise RuntimeError("tuvan serve did not become ready")
