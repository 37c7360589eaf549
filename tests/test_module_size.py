"""The code's own rule (docs/house-style.md): a module of the product holds one concept and stays
under 400 lines; a longer one is split by concept, not cut in halves."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("bot", "adapters", "retrieval", "admin")
MAX_LINES = 400
# Over the limit for now, each with the reason; the test fails once one is back under it, so
# that it leaves this list.
ALLOWED = {
    # Being changed by the conversation-step work of 4/4 while the core was tidied: split next.
    "bot/answer/followup.py",
}


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
        f"{name}: {lines} lines"
        for name, lines in sorted(lengths.items())
        if lines > MAX_LINES and name not in ALLOWED
    ]
    assert offenders == []


def test_every_allowed_module_is_still_over_the_limit() -> None:
    lengths = _lengths()
    back_under = [name for name in sorted(ALLOWED) if lengths.get(name, 0) <= MAX_LINES]
    assert back_under == []
