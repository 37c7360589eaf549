"""``tuvan admin ...`` as an operator runs it: the installed command in a subprocess with its own
embedded PostgreSQL in a temporary data dir, the password on standard input (not a terminal)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import psycopg
from argon2 import PasswordHasher

from bot.db.engine import start_embedded

TUVAN = Path(sys.executable).with_name("tuvan")


def tuvan(data_dir: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TUVAN_")}
    env["TUVAN_DATA_DIR"] = str(data_dir)
    return subprocess.run(
        [str(TUVAN), "admin", *args],
        input=stdin,
        cwd=data_dir,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def stored_users(data_dir: Path) -> dict[str, tuple[str, str, bool]]:
    server = start_embedded(data_dir / "pg")
    try:
        url = server.url.replace("postgresql+psycopg://", "postgresql://", 1)
        with psycopg.connect(url) as conn:
            rows = conn.execute(
                "SELECT email, password_hash, role::text, active FROM staff_users"
            ).fetchall()
    finally:
        server.release()
    return {email: (hashed, role, active) for email, hashed, role, active in rows}


def test_create_user_reads_the_password_twice_from_stdin(tmp_path: Path) -> None:
    created = tuvan(
        tmp_path,
        "create-user",
        "Tuyen.Sinh@SHUT.example.vn",
        "--role",
        "admin",
        stdin="mật khẩu đủ dài\nmật khẩu đủ dài\n",
    )
    assert created.returncode == 0, created.stderr
    assert "created tuyen.sinh@shut.example.vn (admin)" in created.stdout
    mismatch = tuvan(
        tmp_path, "create-user", "b@shut.example.vn", stdin="first pass 1\nsecond pass\n"
    )
    assert mismatch.returncode == 1
    assert "the two passwords differ" in mismatch.stderr
    short = tuvan(tmp_path, "create-user", "c@shut.example.vn", stdin="short\nshort\n")
    assert short.returncode == 1
    assert "at least 10 characters" in short.stderr
    once = tuvan(tmp_path, "create-user", "d@shut.example.vn", stdin="only one line\n")
    assert once.returncode == 1
    assert "twice" in once.stderr
    again = tuvan(
        tmp_path,
        "create-user",
        "tuyen.sinh@shut.example.vn",
        stdin="another pw 123\nanother pw 123\n",
    )
    assert again.returncode == 1
    assert "already has an account" in again.stderr
    for result in (mismatch, short, once, again):
        assert "Traceback" not in result.stderr
    users = stored_users(tmp_path)
    assert set(users) == {"tuyen.sinh@shut.example.vn"}
    hashed, role, active = users["tuyen.sinh@shut.example.vn"]
    assert hashed.startswith("$argon2id$")
    assert PasswordHasher().verify(hashed, "mật khẩu đủ dài")
    assert (role, active) == ("admin", True)


def test_list_set_password_and_deactivate(tmp_path: Path) -> None:
    pw = "first password\nfirst password\n"
    assert (
        tuvan(tmp_path, "create-user", "e@shut.example.vn", "--role", "editor", stdin=pw).returncode
        == 0
    )
    listed = tuvan(tmp_path, "list-users")
    assert listed.stdout.split("\n")[0].split("\t") == [
        "e@shut.example.vn",
        "editor",
        "active",
        "never",
    ]
    changed = tuvan(
        tmp_path, "set-password", "E@shut.example.vn", stdin="second password\nsecond password\n"
    )
    assert changed.returncode == 0, changed.stderr
    assert tuvan(tmp_path, "deactivate", "e@shut.example.vn").returncode == 0
    missing = tuvan(tmp_path, "deactivate", "nobody@shut.example.vn")
    assert missing.returncode == 1
    assert "no account for nobody@shut.example.vn" in missing.stderr
    hashed, _, active = stored_users(tmp_path)["e@shut.example.vn"]
    assert PasswordHasher().verify(hashed, "second password")
    assert active is False
