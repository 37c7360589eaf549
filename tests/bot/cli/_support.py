"""The ``tuvan`` command as users run it, for the command-line tests: the installed console
script in a subprocess with its own embedded PostgreSQL in a temporary data dir (no
TUVAN_DATABASE_URL), and what it stored, read back from that data dir."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import psycopg

from bot.db.engine import start_embedded

TUVAN = Path(sys.executable).with_name("tuvan")


def tuvan(
    *args: str, data_dir: Path, cwd: Path, extra_env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the installed console script with a clean tuvan environment (no .env: cwd is tmp)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TUVAN_")}
    env.update({"TUVAN_DATA_DIR": str(data_dir), **(extra_env or {})})
    return subprocess.run(
        [str(TUVAN), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=600,
        check=False,
    )


def ok(result: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert result.returncode == 0, f"exit {result.returncode}\n{result.stdout}\n{result.stderr}"
    assert "Traceback" not in result.stderr
    return result


def stored_faq(data_dir: Path) -> list[tuple[object, ...]]:
    """(id, question, answer, status, staff variants, source, source_url, language) from a data
    dir's embedded database, by id."""
    server = start_embedded(data_dir / "pg")
    try:
        url = server.url.replace("postgresql+psycopg://", "postgresql://", 1)
        with psycopg.connect(url) as conn:
            rows = conn.execute(
                """
                SELECT e.external_id, e.question, e.answer, e.status::text,
                       coalesce(array_agg(v.text ORDER BY v.text)
                                FILTER (WHERE v.origin = 'staff'), '{}'),
                       e.source, e.source_url, e.language
                FROM faq_entries e LEFT JOIN faq_variants v ON v.faq_id = e.id
                GROUP BY e.id ORDER BY e.external_id
                """
            ).fetchall()
    finally:
        server.release()
    return [tuple(row) for row in rows]
