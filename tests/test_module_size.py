"""The code's own rule (docs/house-style.md): a module holds one concept and stays under 400
lines; a longer one is split by concept, not cut in halves. The product's packages, the tests
and the benches are held to it."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("bot", "adapters", "retrieval", "admin", "tests", "bench")
MAX_LINES = 400


def _lengths() -> dict[str, int]:
    return {
        path.relative_to(ROOT).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
        for folder in FOLDERS
        for path in sorted((ROOT / folder).rglob("*.py"))
        if not {".cache", "results"} & set(path.parts)  # the benches' outputs, not code
    }


def test_no_module_is_over_400_lines() -> None:
    lengths = _lengths()
    assert len(lengths) > 300, "found too few modules: is ROOT the repository?"
    offenders = [
        f"{name}: {lines} lines" for name, lines in sorted(lengths.items()) if lines > MAX_LINES
    ]
    assert offenders == []
