"""Every visible string in both languages: the keys templates use exist, texts are complete."""

from __future__ import annotations

import re
import string
from pathlib import Path

from admin.app import create_admin_app
from admin.i18n import LANGUAGES, STRINGS, Translator
from admin.web import NAV
from bot.db.models import StaffRole

TEMPLATES = Path(__file__).parents[2] / "admin" / "templates"
_LITERAL_KEY = re.compile(r"""\bt\(\s*["']([a-z0-9_.]+)["']""")


def used_keys() -> set[str]:
    create_admin_app()  # imports every page module, which adds its words
    keys = set()
    for template in TEMPLATES.glob("*.html"):
        found = _LITERAL_KEY.findall(template.read_text(encoding="utf-8"))
        keys |= {k for k in found if not k.endswith(".")}  # "role." ~ x: the prefixes below
    keys |= {n.label for n in NAV} | {f"role.{r.value}" for r in StaffRole}
    keys |= {f"lang.{code}" for code in LANGUAGES}
    keys |= {f"error.{status}" for status in (400, 403, 404, 429, 503)}
    return keys


def test_every_key_a_template_uses_is_defined() -> None:
    missing = sorted(k for k in used_keys() if k not in STRINGS)
    assert missing == []


def test_every_string_has_both_languages_with_the_same_placeholders() -> None:
    create_admin_app()
    for key, (vi, en) in STRINGS.items():
        assert vi.strip(), key
        assert en.strip(), key
        fields = [{f for _, f, _, _ in string.Formatter().parse(text) if f} for text in (vi, en)]
        assert fields[0] == fields[1], key


def test_translator_falls_back_to_vietnamese_and_formats() -> None:
    assert Translator("xx")("app.logout") == "Đăng xuất"
    assert Translator("en")("common.page", page=2, pages=3, total=60) == "Page 2 of 3 · 60 items"
