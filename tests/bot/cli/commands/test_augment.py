"""`tuvan augment` as users run it: a subprocess on its own embedded PostgreSQL, the OpenAI stub
on 127.0.0.1 as its LLM (run without blocking the loop that serves the stub)."""

from __future__ import annotations

import asyncio
import os
import re
import sys
from pathlib import Path

from tests.bot.knowledge._support import DORM, FEES, faithful, script
from tests.fakes.openai_stub import OpenAIStub

TUVAN = Path(sys.executable).with_name("tuvan")


async def tuvan(*args: str, data_dir: Path, env: dict[str, str] | None = None) -> tuple[int, str]:
    """Exit code and stdout + stderr of the console script, with a clean tuvan environment."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("TUVAN_")}
    process = await asyncio.create_subprocess_exec(
        str(TUVAN),
        *args,
        cwd=data_dir.parent,
        env={**clean, "TUVAN_DATA_DIR": str(data_dir), **(env or {})},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    out, _ = await asyncio.wait_for(process.communicate(), timeout=600)
    text = out.decode("utf-8")
    assert "Traceback" not in text, text
    return int(process.returncode or 0), text


async def test_without_an_llm_augment_says_what_it_needs_and_fails(tmp_path: Path) -> None:
    code, out = await tuvan("augment", data_dir=tmp_path / "data")
    assert code == 1
    assert "needs an LLM: set TUVAN_LLM__BASE_URL" in out
    assert "nothing to do" in out


async def test_dry_run_then_augment_then_nothing_left(tmp_path: Path, stub: OpenAIStub) -> None:
    data = tmp_path / "data"
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "hoc-phi.md").write_text(FEES, encoding="utf-8")
    (docs / "ky-tuc-xa.md").write_text(DORM, encoding="utf-8")
    code, out = await tuvan("ingest", str(docs), data_dir=data)
    assert code == 0, out
    indexed = re.search(r"indexed 2 documents \((\d+) chunks\)", out)
    assert indexed is not None, out
    chunks = int(indexed.group(1))

    code, out = await tuvan("augment", "--dry-run", data_dir=data)  # no LLM needed
    assert code == 0, out
    assert f"would augment 2 documents: {4 + chunks} jobs, {4 + chunks} LLM calls" in out

    llm = {"TUVAN_LLM__BASE_URL": stub.base_url, "TUVAN_LLM__MODEL": "m"}
    code, out = await tuvan(
        "augment", "--source", str(tmp_path / "nowhere"), data_dir=data, env=llm
    )
    assert code == 1
    assert "no indexed source matches" in out

    script(stub, faithful)
    code, out = await tuvan("augment", data_dir=data, env=llm)
    assert code == 0, out
    assert f"augmented 2 documents: 2 contexts, {chunks} chunks (0 kept as written" in out
    assert f"{4 + chunks} LLM calls" in out
    assert len(stub.requests_to("/v1/chat/completions")) == 4 + chunks

    code, out = await tuvan("augment", data_dir=data, env=llm)
    assert code == 0, out
    assert f"{chunks} chunks were done already; 0 LLM calls" in out
    assert len(stub.requests_to("/v1/chat/completions")) == 4 + chunks
