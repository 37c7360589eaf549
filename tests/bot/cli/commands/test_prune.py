"""``tuvan prune`` as an operator runs it: the installed command in a subprocess with its own
embedded PostgreSQL in a temporary data dir, the rows seeded and read back with psycopg."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from bot.db import migrate
from bot.db.engine import make_engine, start_embedded

TUVAN = Path(sys.executable).with_name("tuvan")
RAW = json.dumps({"sender": {"id": "4242", "name": "Nguyễn Thị Lan", "phone": "+84901234567"}})


def tuvan(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TUVAN_")}
    env["TUVAN_DATA_DIR"] = str(data_dir)
    result = subprocess.run(
        [str(TUVAN), "prune", *args],
        cwd=data_dir,
        env=env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, f"exit {result.returncode}\n{result.stdout}\n{result.stderr}"
    assert "Traceback" not in result.stderr
    return result


@pytest.fixture
def database(tmp_path: Path) -> Iterator[str]:
    """A data dir with the schema in place (migrated here: a subprocess costs more), its
    server held for the test: the psycopg URL of its database."""
    server = start_embedded(tmp_path / "pg")
    try:
        asyncio.run(migrated(server.url))
        yield server.url.replace("postgresql+psycopg://", "postgresql://", 1)
    finally:
        server.release()


async def migrated(url: str) -> None:
    engine = make_engine(url)
    try:
        await migrate.upgrade(engine)
    finally:
        await engine.dispose()


def seed(url: str) -> None:
    """One contact quiet for 400 days with 5 year-old messages, one active contact with a
    40-day-old message (raw due) and a recent one, a year-old question still waiting, and
    login attempts old and new."""
    with psycopg.connect(url) as conn:
        for name, quiet in (("old", 400), ("active", 1)):
            conn.execute(
                "WITH k AS (INSERT INTO contacts (channel, external_id, created_at) "
                "VALUES ('web', %(name)s, now() - make_interval(days => %(quiet)s)) RETURNING id) "
                "INSERT INTO conversations (contact_id, channel, last_inbound_at, created_at, "
                "updated_at) SELECT id, 'web', now() - make_interval(days => %(quiet)s), "
                "now() - make_interval(days => %(quiet)s), "
                "now() - make_interval(days => %(quiet)s) FROM k",
                {"name": name, "quiet": quiet},
            )
        rows = [("old", 400, "answered")] * 5
        rows += [("active", 40, "answered"), ("active", 2, "answered"), ("active", 400, "received")]
        for name, days, status in rows:
            conn.execute(
                "INSERT INTO messages (conversation_id, channel, direction, author, text, status, "
                "raw, created_at) SELECT c.id, 'web', 'in', 'user', 'Học phí bao nhiêu?', "
                "CAST(%(status)s AS message_status), CAST(%(raw)s AS jsonb), "
                "now() - make_interval(days => %(days)s) "
                "FROM conversations c JOIN contacts k ON k.id = c.contact_id "
                "WHERE k.external_id = %(name)s",
                {"name": name, "days": days, "status": status, "raw": RAW},
            )
        for days in (31, 45, 1):
            conn.execute(
                "INSERT INTO login_attempts (email, ip, succeeded, at) VALUES "
                "('staff@shut.example.vn', '203.0.113.7', false, "
                "now() - make_interval(days => %(days)s))",
                {"days": days},
            )


def stored(url: str) -> dict[str, object]:
    with psycopg.connect(url) as conn:
        return {
            "contacts": sorted(r[0] for r in conn.execute("SELECT external_id FROM contacts")),
            "messages": conn.execute("SELECT count(*) FROM messages").fetchone(),
            "raw kept": conn.execute(
                "SELECT count(*) FROM messages WHERE raw <> '{}'::jsonb"
            ).fetchone(),
            "login attempts": conn.execute("SELECT count(*) FROM login_attempts").fetchone(),
        }


def test_dry_run_counts_then_prune_removes_in_batches(database: str, tmp_path: Path) -> None:
    seed(database)
    before = stored(database)
    dry = tuvan(tmp_path, "--dry-run").stdout
    assert "messages older than 365 days: 5 would be deleted" in dry
    assert "raw platform payloads older than 30 days: 1 would be emptied" in dry
    assert "quiet for 30 days (with their conversation): 1 would be deleted" in dry
    assert "admin login attempts older than 30 days: 2 would be deleted" in dry
    assert "dry run: nothing was changed" in dry
    assert stored(database) == before
    done = tuvan(tmp_path, "--batch-size", "2").stdout
    assert "messages older than 365 days: 5 deleted" in done
    assert "raw platform payloads older than 30 days: 1 emptied" in done
    assert "(with their conversation): 1 deleted" in done
    assert "admin login attempts older than 30 days: 2 deleted" in done
    # Left: the active contact's recent message, its 40-day-old one (raw emptied) and the
    # question still waiting (payload kept); the newest login attempt.
    assert stored(database) == {
        "contacts": ["active"],
        "messages": (3,),
        "raw kept": (2,),
        "login attempts": (1,),
    }
