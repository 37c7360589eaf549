"""The code's own rule (docs/house-style.md): a module of the product holds one concept and stays
under 400 lines; a longer one is split by concept, not cut in halves."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("bot", "adapters", "retrieval", "admin")
MAX_LINES = 400


def _lengths() -> dict[str, int]:
    return {
        path.relative_to(ROOT).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
    }


def test_no_module_of_the_product_is_over_400_lines() -> None:
    lengths = _lengths()
    assert len(lengths) > 100, "found too few modules: is ROOT the repository?"
    offenders = [
        f"{name}: {lines} lines" for name, lines in sorted(lengths.items()) if lines > MAX_LINES
    ]
    assert offenders == []
