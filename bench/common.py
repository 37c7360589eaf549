"""What every bench script shares: a throwaway database, percentiles, the machine, the report.

    from common import bench_database, percentiles, machine

    async with bench_database() as (engine, sessionmaker):
        ...                                   # a fresh, migrated PostgreSQL + pgvector

Bench scripts are run as ``.venv/bin/python bench/<name>.py``, so ``bench/`` is on ``sys.path``
and this module imports as ``common``. Nothing here is imported by the product.
"""

from __future__ import annotations

import json
import math
import os
import platform
import re
import shlex
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
from pgvector.psycopg import register_vector_async
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from bot.core.settings import Settings
from bot.db import migrate
from bot.db.engine import make_engine, make_sessionmaker, start_embedded

BENCH_DIR = Path(__file__).resolve().parent
CACHE_DIR = BENCH_DIR / ".cache"
RESULTS_DIR = BENCH_DIR / "results"
DATASETS = Path("/work/shared/datasets")


# -- database ---------------------------------------------------------------------------------


@asynccontextmanager
async def bench_database(
    *, pool_size: int = 5
) -> AsyncIterator[tuple[AsyncEngine, async_sessionmaker[AsyncSession]]]:
    """A fresh embedded PostgreSQL in a temporary folder, migrated to head; deleted after."""
    # The wheel widens permissions on the data dir's parents: give it a folder of its own.
    root = Path(tempfile.mkdtemp(prefix="tuvan-bench-"))
    server = start_embedded(root / "pg")
    engine = make_engine(server.url, pool_size=pool_size)
    try:
        await migrate.upgrade(engine)
        yield engine, make_sessionmaker(engine)
    finally:
        await engine.dispose()
        server.release()
        shutil.rmtree(root, ignore_errors=True)


def bench_settings(**overrides: Any) -> Settings:
    """Settings with no ``.env`` and no environment surprises: the defaults, plus overrides."""
    data_dir = Path(tempfile.gettempdir()) / "tuvan-bench-data"
    return Settings(_env_file=None, data_dir=data_dir, **overrides)  # type: ignore[call-arg]


async def server_version(engine: AsyncEngine) -> str:
    async with engine.connect() as conn:
        pg = (await conn.execute(text("SHOW server_version"))).scalar_one()
        vec = (
            await conn.execute(text("SELECT extversion FROM pg_extension WHERE extname = 'vector'"))
        ).scalar_one_or_none()
    return f"PostgreSQL {pg}, pgvector {vec}"


async def explain(session: AsyncSession, sql: str, params: dict[str, Any]) -> list[str]:
    """``EXPLAIN (ANALYZE, BUFFERS)`` of ``sql`` with ``params``, one line per plan line."""
    rows = await session.execute(text(f"EXPLAIN (ANALYZE, BUFFERS) {sql}"), params)
    return [r[0] for r in rows]


def plan_summary(plan: Sequence[str]) -> list[str]:
    """The scan and sort nodes of a plan, and its execution time: what says an index was used."""
    keep = ("Scan", "Sort", "Limit", "Join", "Loop", "Time", "Rows", "JIT", "Functions", "Window")
    lines = [_VECTOR_LITERAL.sub("'[…]'::vector", line.rstrip()) for line in plan]
    return [
        line if len(line) <= 240 else line[:240] + " …"
        for line in lines
        if any(k in line for k in keep)
    ]


_VECTOR_LITERAL = re.compile(r"'\[[-0-9.,e+ ]+\]'::vector")


async def raw_connection(engine: AsyncEngine) -> psycopg.AsyncConnection[Any]:
    """A psycopg connection of its own (autocommit, pgvector types), outside the engine's pool:
    for COPY and DDL, so that no pooled connection is left with changed type adapters."""
    url = engine.url.render_as_string(hide_password=False).replace("+psycopg", "", 1)
    conn = await psycopg.AsyncConnection.connect(url, autocommit=True)
    await register_vector_async(conn)
    return conn


async def copy_rows(
    engine: AsyncEngine,
    table: str,
    columns: Sequence[str],
    types: Sequence[str],
    rows: Iterable[Sequence[Any]],
) -> int:
    """Binary ``COPY table (columns) FROM STDIN``: the fast way to load many rows.

    ``types`` are PostgreSQL type names ("int4", "text", "vector"); vectors go as numpy arrays.
    """
    count = 0
    async with await raw_connection(engine) as conn, conn.cursor() as cur:
        sql = f"COPY {table} ({', '.join(columns)}) FROM STDIN (FORMAT BINARY)"
        async with cur.copy(sql) as copy:
            copy.set_types(list(types))
            for row in rows:
                await copy.write_row(row)
                count += 1
    return count


async def drop_indexes(engine: AsyncEngine, names: Sequence[str]) -> dict[str, str]:
    """Drop the named indexes and return their definitions, for ``create_indexes`` after a load."""
    async with await raw_connection(engine) as conn:
        rows = await conn.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE indexname = ANY(%s)", [list(names)]
        )
        defs = {name: definition for name, definition in await rows.fetchall()}
        for name in defs:
            await conn.execute(f"DROP INDEX {name}")
    return defs


async def create_indexes(
    engine: AsyncEngine, defs: dict[str, str], *, maintenance_work_mem: str | None = None
) -> dict[str, dict[str, Any]]:
    """Create each index (seconds taken, server notices), then ANALYZE the tables."""
    out: dict[str, dict[str, Any]] = {}
    async with await raw_connection(engine) as conn:
        notices: list[str] = []
        conn.add_notice_handler(lambda d: notices.append(d.message_primary or ""))
        if maintenance_work_mem:
            await conn.execute(f"SET maintenance_work_mem = '{maintenance_work_mem}'")
        setting = (await (await conn.execute("SHOW maintenance_work_mem")).fetchone() or [""])[0]
        for name, definition in defs.items():
            notices.clear()
            start = time.perf_counter()
            await conn.execute(definition)
            out[name] = {
                "seconds": round(time.perf_counter() - start, 2),
                "maintenance_work_mem": setting,
                "notices": list(notices),
            }
        tables = {d.split(" ON ", 1)[1].split()[0] for d in defs.values()}
        for table in sorted(tables):
            await conn.execute(f"ANALYZE {table}")
    return out


# -- measuring ----------------------------------------------------------------------------------


def percentiles(samples: Sequence[float]) -> dict[str, float]:
    """n, mean, min, p50, p90, p95, p99, max of ``samples`` (nearest-rank on the sorted list)."""
    if not samples:
        return {"n": 0}
    ordered = sorted(samples)

    def rank(p: float) -> float:
        return ordered[min(len(ordered) - 1, max(0, math.ceil(p / 100 * len(ordered)) - 1))]

    return {
        "n": len(ordered),
        "mean": statistics.fmean(ordered),
        "min": ordered[0],
        "p50": rank(50),
        "p90": rank(90),
        "p95": rank(95),
        "p99": rank(99),
        "max": ordered[-1],
    }


@contextmanager
def stopwatch() -> Iterator[Callable[[], float]]:
    """``with stopwatch() as elapsed: ...; elapsed()`` in milliseconds (frozen at the end)."""
    start = time.perf_counter()
    end: list[float] = []

    def elapsed() -> float:
        return ((end[0] if end else time.perf_counter()) - start) * 1000

    try:
        yield elapsed
    finally:
        end.append(time.perf_counter())


_STARTED = time.perf_counter()


def progress(message: str) -> None:
    """A progress line on stderr (the figures go to stdout)."""
    print(f"  [{time.perf_counter() - _STARTED:6.0f} s] {message}", file=sys.stderr, flush=True)


def load_average() -> tuple[float, float, float]:
    return os.getloadavg()


def machine() -> str:
    """'AMD EPYC, 2 cores, 23.4 GiB, Linux 6.1, CPython 3.11.7': what the figures ran on."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = ""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                memory = f", {int(line.split()[1]) / 2**20:.1f} GiB"
                break
    except OSError:
        pass
    return (
        f"{cpu}, {os.cpu_count()} cores{memory}, {platform.system()} {platform.release()}, "
        f"{platform.python_implementation()} {platform.python_version()}"
    )


# -- reporting ----------------------------------------------------------------------------------


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    def cell(value: Any) -> str:
        if isinstance(value, float):
            return f"{value:.1f}" if abs(value) >= 10 else f"{value:.2f}"
        return str(value)

    lines = [
        "| " + " | ".join(headers) + " |",
        "|" + "|".join("---:" if i else "---" for i in range(len(headers))) + "|",
    ]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def command_line() -> str:
    return ".venv/bin/python " + " ".join(
        shlex.quote(a) for a in [os.path.relpath(sys.argv[0], Path.cwd()), *sys.argv[1:]]
    )


class Report:
    """The header (date, machine, command, load), the tables, and the JSON result file."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.started_at = datetime.now(UTC)
        self.load_before = load_average()
        self.data: dict[str, Any] = {
            "benchmark": name,
            "date": self.started_at.isoformat(timespec="seconds"),
            "machine": machine(),
            "command": command_line(),
            "load_average_before": self.load_before,
        }

    def print_header(self, extra: Sequence[str] = ()) -> None:
        print(f"## {self.name}\n")
        print(f"- date: {self.started_at:%Y-%m-%d %H:%M} UTC")
        print(f"- machine: {self.data['machine']}")
        print(f"- command: `{self.data['command']}`")
        print("- load average (1/5/15 min) at start: " + _load(self.load_before))
        for line in extra:
            print(f"- {line}")
        print()

    def finish(self) -> Path:
        self.data["load_average_after"] = load_average()
        self.data["seconds"] = round((datetime.now(UTC) - self.started_at).total_seconds(), 1)
        print(f"\n- load average at end: {_load(self.data['load_average_after'])}")
        print(f"- wall time: {self.data['seconds']} s")
        RESULTS_DIR.mkdir(parents=True, exist_ok=True)
        path = RESULTS_DIR / f"{self.name}.json"
        path.write_text(
            json.dumps(self.data, ensure_ascii=False, indent=2, default=_json_default) + "\n",
            encoding="utf-8",
        )
        print(f"- result: {path.relative_to(BENCH_DIR.parent)}")
        return path


def _load(values: Sequence[float]) -> str:
    return " / ".join(f"{v:.2f}" for v in values)


def _json_default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]
