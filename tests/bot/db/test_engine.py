"""The embedded PostgreSQL (bot.db.engine.start_embedded): started in a fresh folder, shared by
several processes, kept across runs, stopped by the last holder. Real servers, real processes."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import psutil
import psycopg
import pytest

from bot.db.engine import EmbeddedServer, start_embedded

# A second tuvan process: attach, report what it got, hold the server until told to let go.
HOLDER = """
import json, sys
from pathlib import Path
from bot.db.engine import start_embedded

server = start_embedded(Path(sys.argv[1]))
print(json.dumps({"url": server.url, "postmaster": server.handle.get_pid()}), flush=True)
sys.stdin.readline()
server.release()
print("released", flush=True)
"""


def start_holder(datadir: Path) -> subprocess.Popen[str]:
    """Another process holding the server (the HOLDER script)."""
    return subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(datadir)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def libpq(url: str) -> str:
    return url.replace("postgresql+psycopg://", "postgresql://", 1)


def query(server: EmbeddedServer, sql: str) -> list[tuple[object, ...]]:
    with psycopg.connect(libpq(server.url), autocommit=True) as conn:
        cursor = conn.execute(sql)
        return cursor.fetchall() if cursor.description else []


def postmaster_pid(datadir: Path) -> int | None:
    """The pid in postmaster.pid, None when there is no file (PostgreSQL removes it on stop)."""
    pidfile = datadir / "postmaster.pid"
    if not pidfile.exists():
        return None
    return int(pidfile.read_text().splitlines()[0])


def postmasters(datadir: Path) -> list[psutil.Process]:
    """Live postmasters of ``datadir`` (the children rename themselves; only it keeps -D)."""
    found = []
    for proc in psutil.process_iter(["name", "cmdline"]):
        cmdline = proc.info["cmdline"] or []
        if proc.info["name"] == "postgres" and str(datadir) in cmdline:
            found.append(proc)
    return found


def is_running(pid: int) -> bool:
    try:
        return bool(psutil.Process(pid).status() != psutil.STATUS_ZOMBIE)
    except psutil.NoSuchProcess:
        return False


def exits(pid: int) -> bool:
    """Whether the process is gone within a few seconds (the postmaster removes its pid file
    just before it exits, so right after a stop it may still be there for a moment)."""
    try:
        psutil.Process(pid).wait(timeout=10)
    except psutil.NoSuchProcess:
        pass
    except psutil.TimeoutExpired:
        return False
    return True


def stop_leftovers(datadir: Path) -> None:
    """A failed test must not leave a server behind."""
    for proc in postmasters(datadir):
        proc.kill()
        proc.wait(10)
    (datadir / "postmaster.pid").unlink(missing_ok=True)
    (datadir / ".handle_pids.json").unlink(missing_ok=True)


@pytest.fixture(scope="module")
def initialised(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data dir initialised once (initdb takes seconds), stopped; the tests below restart it."""
    # A folder of its own: the wheel widens permissions on the data dir's parents.
    path = (tmp_path_factory.mktemp("pg") / "data").resolve()
    start_embedded(path).release()
    return path


@pytest.fixture
def datadir(initialised: Path) -> Iterator[Path]:
    assert postmaster_pid(initialised) is None
    yield initialised
    stop_leftovers(initialised)


def test_fresh_data_dir_is_initialised_and_served(tmp_path: Path) -> None:
    datadir = (tmp_path / "pg" / "data").resolve()
    try:
        fresh_data_dir_is_served(datadir)
    finally:
        stop_leftovers(datadir)


def fresh_data_dir_is_served(datadir: Path) -> None:
    assert not datadir.exists()
    server = start_embedded(datadir)
    try:
        assert (datadir / "PG_VERSION").read_text().strip() == "18"
        assert server.url.startswith("postgresql+psycopg://")
        assert f"host={datadir}" in server.url  # a Unix socket in the data dir, no TCP port
        pid = postmaster_pid(datadir)
        assert pid is not None
        assert is_running(pid)
        assert query(
            server,
            "SELECT count(*) FROM pg_available_extensions WHERE name IN ('vector', 'unaccent')",
        ) == [(2,)]
    finally:
        server.release()
    assert postmaster_pid(datadir) is None
    assert exits(pid)


def test_second_process_attaches_and_the_last_holder_stops_the_server(datadir: Path) -> None:
    first = start_embedded(datadir)
    holder = None
    try:
        pid = postmaster_pid(datadir)
        assert pid is not None
        holder = start_holder(datadir)
        assert holder.stdout is not None
        watchdog = threading.Timer(120, holder.kill)  # a hung child must not hang the suite
        watchdog.start()
        try:
            line = holder.stdout.readline()
        finally:
            watchdog.cancel()
        assert line, holder.communicate(timeout=30)[1]
        attached = json.loads(line)
        assert attached == {"url": first.url, "postmaster": pid}
        assert [p.pid for p in postmasters(datadir)] == [pid]

        first.release()  # the other process still holds it
        assert postmaster_pid(datadir) == pid
        assert query(first, "SELECT 1") == [(1,)]

        out, err = holder.communicate("\n", timeout=30)
        assert holder.returncode == 0, err
        assert out.strip() == "released"
        assert postmaster_pid(datadir) is None
        assert exits(pid)
        assert postmasters(datadir) == []
    finally:
        if holder is not None and holder.poll() is None:
            holder.kill()
            holder.wait()
        first.release()


def test_data_survives_a_stop_and_the_next_run(datadir: Path) -> None:
    server = start_embedded(datadir)
    try:
        query(server, "CREATE TABLE kept (note text)")
        query(server, "INSERT INTO kept VALUES ('Học phí 2026')")
        first_pid = postmaster_pid(datadir)
    finally:
        server.release()
    assert postmaster_pid(datadir) is None

    again = start_embedded(datadir)
    try:
        assert postmaster_pid(datadir) not in (None, first_pid)
        assert query(again, "SELECT note FROM kept") == [("Học phí 2026",)]
    finally:
        again.release()
    assert postmaster_pid(datadir) is None


def test_two_holders_in_one_process_keep_the_server_until_both_release(datadir: Path) -> None:
    web = start_embedded(datadir)
    worker = start_embedded(datadir)
    try:
        web.release()
        assert query(worker, "SELECT 1") == [(1,)]
        web.release()  # a second release of the same handle changes nothing
        assert query(worker, "SELECT 1") == [(1,)]
    finally:
        worker.release()
        web.release()
    assert postmaster_pid(datadir) is None


def test_a_holder_that_died_does_not_keep_the_server_up(datadir: Path) -> None:
    holder = start_holder(datadir)
    try:
        assert holder.stdout is not None
        line = holder.stdout.readline()
        assert line, holder.communicate(timeout=30)[1]
        pid = json.loads(line)["postmaster"]
    finally:
        holder.kill()  # dies holding the server, as after SIGKILL or OOM
        holder.communicate(timeout=30)
    assert postmaster_pid(datadir) == pid  # nobody stopped it

    server = start_embedded(datadir)
    assert postmaster_pid(datadir) == pid  # attached to the orphan
    server.release()
    assert postmaster_pid(datadir) is None
    assert exits(pid)
