"""The university as the chat presents it: names, colour, logo, welcome, suggested questions
and the privacy note, each checked as it is read."""

from __future__ import annotations

import re

from pydantic import BaseModel, Field, ValidationInfo, field_validator

from bot.core.settings.addresses import LOCAL_HOSTS, web_address


class BrandSettings(BaseModel):
    """The university as the chat presents it: the web page, the widget and the greeting
    (Telegram's /start). Texts in Vietnamese and English, as the page has both; ``{name}`` in
    a welcome stands for the university's name in that language."""

    name_vi: str = Field(default="Trường Đại học Công nghệ Sông Hồng", min_length=1, max_length=120)
    name_en: str = Field(default="Song Hong University of Technology", min_length=1, max_length=120)
    # An image shown beside the name: https (http only on localhost). The page's
    # Content-Security-Policy allows images from its origin. Unset: a built-in mark.
    logo_url: str | None = None
    # Other names students give the school (its abbreviation, a campus's old name): read as
    # the school itself, never as another school (besides the names its FAQ and documents use
    # throughout, which tuvan finds on its own). A JSON list in the environment.
    aliases: tuple[str, ...] = ()
    color: str = "#1d4f91"  # the primary colour, "#rrggbb": header, buttons, the visitor's bubbles
    welcome_vi: str = Field(
        default="Chào bạn! Mình là trợ lý tư vấn tuyển sinh tự động (chatbot) của {name}. Bạn "
        "cứ hỏi về ngành học, học phí, phương thức xét tuyển, hạn nộp hồ sơ, học bổng, ký túc "
        "xá… Mình trả lời theo tài liệu chính thức và ghi rõ nguồn.",
        min_length=1,
        max_length=1000,
    )
    welcome_en: str = Field(
        default="Hello! I'm the automated admissions assistant (a chatbot) of {name}. Ask me "
        "about programmes, tuition, admission methods, deadlines, scholarships, housing… I "
        "answer from official documents and cite them.",
        min_length=1,
        max_length=1000,
    )
    # 3 to 6 questions offered as buttons before the first message (a JSON list in the
    # environment). English: empty shows the Vietnamese ones.
    suggestions_vi: tuple[str, ...] = (
        "Năm 2026 trường xét tuyển theo những phương thức nào?",
        "Học phí chương trình chuẩn năm 2026 là bao nhiêu?",
        "Hạn nộp hồ sơ xét học bạ năm 2026 là khi nào?",
        "Học bổng tuyển sinh năm 2026 gồm những loại nào?",
    )
    suggestions_en: tuple[str, ...] = (
        "What is the tuition fee for international students?",
        "What is the application deadline for international students?",
        "What English level do international students need?",
    )
    # Shown under the chat box from the start (and in the greeting), with a link to the policy.
    privacy_note_vi: str = Field(
        default="Tin nhắn được lưu lại để trả lời và cải thiện việc tư vấn. Bạn đừng gửi thông "
        "tin nhạy cảm (số CCCD, mật khẩu…).",
        min_length=1,
        max_length=400,
    )
    privacy_note_en: str = Field(
        default="Messages are kept to answer you and to improve our advice. Please do not send "
        "sensitive information (ID numbers, passwords…).",
        min_length=1,
        max_length=400,
    )
    privacy_url: str = "https://tuyensinh.shut.example.vn/chinh-sach-bao-mat"

    @field_validator("color")
    @classmethod
    def _hex_colour(cls, value: str) -> str:
        if not re.fullmatch(r"#[0-9a-fA-F]{6}", value.strip()):
            raise ValueError('a colour is written "#rrggbb", e.g. "#1d4f91"')
        return value.strip().lower()

    @field_validator("logo_url")
    @classmethod
    def _logo_address(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        parts = web_address(value)
        if parts.scheme != "https" and parts.hostname not in LOCAL_HOSTS:
            raise ValueError("the logo must be served over https (http only from localhost)")
        return value.strip()

    @property
    def own_names(self) -> tuple[str, ...]:
        """The school's names in both languages and its aliases: never another school."""
        return (self.name_vi, self.name_en, *self.aliases)

    @field_validator("privacy_url")
    @classmethod
    def _privacy_address(cls, value: str) -> str:
        web_address(value)
        return value.strip()

    @field_validator("suggestions_vi", "suggestions_en")
    @classmethod
    def _suggestions(cls, questions: tuple[str, ...], info: ValidationInfo) -> tuple[str, ...]:
        kept = tuple(" ".join(q.split()) for q in questions)
        if not kept and info.field_name == "suggestions_en":
            return kept  # the Vietnamese ones are shown
        if not 3 <= len(kept) <= 6:
            raise ValueError(f"give 3 to 6 suggested questions, not {len(kept)}")
        for question in kept:
            if not 1 <= len(question) <= 120:
                raise ValueError(f"a suggested question has 1 to 120 characters: {question!r}")
        if len(set(kept)) != len(kept):
            raise ValueError("the suggested questions must differ")
        return kept
