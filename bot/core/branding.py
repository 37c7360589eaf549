"""The university's branding (``BrandSettings``) read for one language, and what a page needs
to show it: the text colour that stays legible on the primary colour, the logo's origin."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from bot.core.settings import BrandSettings
from bot.core.types import Language

DARK_INK = "#1f2328"
LIGHT_INK = "#ffffff"


@dataclass(frozen=True)
class BrandTexts:
    """The branding's texts in one language."""

    name: str
    welcome: str
    suggestions: tuple[str, ...]
    privacy_note: str
    privacy_url: str


def brand_texts(brand: BrandSettings, language: Language) -> BrandTexts:
    if language == "en":
        name = brand.name_en
        welcome = brand.welcome_en
        suggestions = brand.suggestions_en or brand.suggestions_vi
        note = brand.privacy_note_en
    else:
        name, welcome = brand.name_vi, brand.welcome_vi
        suggestions, note = brand.suggestions_vi, brand.privacy_note_vi
    return BrandTexts(
        name=name,
        welcome=welcome.replace("{name}", name),
        suggestions=suggestions,
        privacy_note=note,
        privacy_url=brand.privacy_url,
    )


def _luminance(colour: str) -> float:
    """WCAG 2's relative luminance of "#rrggbb"."""
    channels = []
    for i in (1, 3, 5):
        c = int(colour[i : i + 2], 16) / 255
        channels.append(c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4)
    red, green, blue = channels
    return 0.2126 * red + 0.7152 * green + 0.0722 * blue


def contrast(first: str, second: str) -> float:
    """WCAG 2's contrast ratio of two "#rrggbb" colours (1 to 21)."""
    light, dark = sorted((_luminance(first), _luminance(second)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def ink_on(colour: str) -> str:
    """White or near-black, whichever reads better on ``colour`` (a university may pick a
    light yellow as well as a dark blue)."""
    return LIGHT_INK if contrast(LIGHT_INK, colour) >= contrast(DARK_INK, colour) else DARK_INK


def logo_origin(brand: BrandSettings) -> str | None:
    """The logo's origin as a CSP source ("https://cdn.example.edu.vn:8443"), or None."""
    if brand.logo_url is None:
        return None
    parts = urlsplit(brand.logo_url)
    return f"{parts.scheme}://{parts.netloc.lower()}"
