"""The branding settings (``TUVAN_BRAND__*``): read from the environment, refused with a line
naming the setting and the reason, and read per language."""

from __future__ import annotations

import os
from pathlib import Path

import click
import pytest
from pydantic import ValidationError

from bot.cli.configuration import load_settings
from bot.core.branding import (
    DARK_INK,
    LIGHT_INK,
    brand_texts,
    contrast,
    ink_on,
    logo_origin,
)
from bot.core.settings import BrandSettings, Settings


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> pytest.MonkeyPatch:
    """No TUVAN_* variable and no .env but the test's own."""
    monkeypatch.chdir(tmp_path)
    for name in list(os.environ):
        if name.upper().startswith("TUVAN_"):
            monkeypatch.delenv(name)
    return monkeypatch


def test_the_defaults_are_a_finished_vietnamese_demo() -> None:
    brand = BrandSettings()
    vi = brand_texts(brand, "vi")
    assert vi.name == "Trường Đại học Công nghệ Sông Hồng"
    assert "{name}" not in vi.welcome
    assert vi.name in vi.welcome
    assert 3 <= len(vi.suggestions) <= 6
    assert vi.privacy_url.startswith("https://")
    en = brand_texts(brand, "en")
    assert en.name in en.welcome
    assert en.suggestions != vi.suggestions


def test_settings_come_from_the_environment_with_the_questions_as_a_json_list(
    clean_env: pytest.MonkeyPatch,
) -> None:
    clean_env.setenv("TUVAN_BRAND__NAME_VI", "Học viện Biển")
    clean_env.setenv("TUVAN_BRAND__COLOR", "#B3261E")
    clean_env.setenv("TUVAN_BRAND__LOGO_URL", "https://cdn.hvb.edu.vn/logo.svg")
    clean_env.setenv(
        "TUVAN_BRAND__SUGGESTIONS_VI", '["Học phí bao nhiêu?", "Hạn nộp hồ sơ?", "Có KTX không?"]'
    )
    clean_env.setenv("TUVAN_BRAND__SUGGESTIONS_EN", "[]")
    brand = Settings().brand
    assert brand.color == "#b3261e"
    assert brand.suggestions_vi == ("Học phí bao nhiêu?", "Hạn nộp hồ sơ?", "Có KTX không?")
    assert brand_texts(brand, "en").suggestions == brand.suggestions_vi  # none in English
    assert brand_texts(brand, "vi").welcome.count("Học viện Biển") == 1
    assert logo_origin(brand) == "https://cdn.hvb.edu.vn"


@pytest.mark.parametrize(
    ("name", "value", "why"),
    [
        ("COLOR", "blue", '"#rrggbb"'),
        ("COLOR", "#12345", '"#rrggbb"'),
        ("LOGO_URL", "http://cdn.example.edu.vn/logo.png", "https (http only from localhost)"),
        ("LOGO_URL", "javascript:alert(1)", "not an http(s) address"),
        ("LOGO_URL", 'https://cdn.example.edu.vn/a".png', "without spaces, quotes"),
        ("LOGO_URL", "https://cdn.example.edu.vn; script-src *", "without spaces, quotes"),
        ("PRIVACY_URL", "javascript:alert(1)", "not an http(s) address"),
        ("SUGGESTIONS_VI", '["Một?", "Hai?"]', "3 to 6 suggested questions, not 2"),
        ("SUGGESTIONS_VI", '["1", "2", "3", "4", "5", "6", "7"]', "not 7"),
        ("SUGGESTIONS_VI", '["Một?", "Một?", "Hai?"]', "must differ"),
        ("SUGGESTIONS_VI", '["Một?", "  ", "Hai?"]', "1 to 120 characters"),
        ("NAME_VI", "", "at least 1 character"),
    ],
)
def test_a_bad_setting_is_one_line_naming_it_and_why(
    clean_env: pytest.MonkeyPatch, name: str, value: str, why: str
) -> None:
    clean_env.setenv(f"TUVAN_BRAND__{name}", value)
    with pytest.raises(click.ClickException) as raised:
        load_settings()
    message = raised.value.format_message()
    [line] = [line for line in message.splitlines() if f"TUVAN_BRAND__{name}:" in line]
    assert why in line
    assert "Traceback" not in message
    assert "errors.pydantic.dev" not in message


def test_a_logo_over_http_is_allowed_from_localhost_only() -> None:
    assert BrandSettings(logo_url="http://127.0.0.1:8000/logo.png").logo_url is not None
    assert logo_origin(BrandSettings(logo_url="http://localhost:81/a.png")) == (
        "http://localhost:81"
    )
    assert BrandSettings(logo_url="  ").logo_url is None
    with pytest.raises(ValidationError):
        BrandSettings(logo_url="http://10.0.0.5/logo.png")


def test_the_text_on_the_primary_colour_stays_legible() -> None:
    assert contrast("#000000", "#ffffff") == pytest.approx(21.0)
    assert ink_on("#1d4f91") == LIGHT_INK  # dark blue: white text
    assert ink_on("#ffdd00") == DARK_INK  # yellow: dark text
    for colour in ("#1d4f91", "#ffdd00", "#b3261e", "#00a86b", "#ff8800"):
        assert contrast(ink_on(colour), colour) >= 4.5  # WCAG AA for normal text
