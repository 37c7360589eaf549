"""CPU seconds spent, for figures that stay comparable on a machine others are using too: wall
time there says more about the neighbours than about the code, CPU time much less.

    main = thread_cpu(); total = process_cpu(); pg = await postgres_cpu(session)
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

_TICK = os.sysconf("SC_CLK_TCK")


def thread_cpu() -> float:
    """CPU seconds of the calling thread (the event loop's, when called from a coroutine)."""
    return time.thread_time()


def process_cpu() -> float:
    """CPU seconds of this process, every thread (the embedding model's included)."""
    return time.process_time()


def _stat(pid: int) -> list[str] | None:
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return raw[raw.rindex(")") + 2 :].split()  # the fields after the command name


def pid_cpu(pid: int) -> float:
    """CPU seconds of process ``pid`` so far (every thread; 0 once it has ended)."""
    fields = _stat(pid)
    return (int(fields[11]) + int(fields[12])) / _TICK if fields else 0.0


async def postgres_cpu(session: AsyncSession) -> float:
    """CPU seconds of the PostgreSQL server behind ``session`` (``server_cpu``)."""
    datadir = (await session.execute(text("SHOW data_directory"))).scalar_one()
    return server_cpu(Path(datadir))


def server_cpu(datadir: Path) -> float:
    """CPU seconds of the PostgreSQL server of ``datadir``: the postmaster, its live backends,
    and the ones that have ended (counted in the postmaster's children's time)."""
    postmaster = int((datadir / "postmaster.pid").read_text().split()[0])
    ticks = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        fields = _stat(int(entry.name))
        if fields is None:
            continue
        pid, parent = int(entry.name), int(fields[1])
        if pid == postmaster:  # utime, stime, cutime, cstime
            ticks += sum(int(f) for f in fields[11:15])
        elif parent == postmaster:
            ticks += int(fields[11]) + int(fields[12])
    return ticks / _TICK
