"""All configuration, read once from the environment (prefix ``TUVAN_``, nested with ``__``).

Built by the CLI (or a test) and passed down; nothing else reads ``os.environ``. `Settings` is
the root; each section lives in the module of its concept (search, answering, ingest, channels,
brand, operations) and the addresses they accept are checked in one place (addresses). Import
them from here.
"""

from __future__ import annotations

from bot.core.settings.addresses import LOCAL_HOSTS, web_address
from bot.core.settings.answering import AnswerSettings, ContactSettings, LlmSettings
from bot.core.settings.brand import BrandSettings
from bot.core.settings.channels import (
    MessengerSettings,
    TelegramSettings,
    WebChatSettings,
    ZaloSettings,
)
from bot.core.settings.ingest import IngestSettings
from bot.core.settings.operations import (
    AdminSettings,
    LimitsSettings,
    RetentionSettings,
    WorkerSettings,
)
from bot.core.settings.root import Settings
from bot.core.settings.search import (
    EmbedderSettings,
    GraphSettings,
    SearchSettings,
    TextSettings,
)

__all__ = [
    "LOCAL_HOSTS",
    "AdminSettings",
    "AnswerSettings",
    "BrandSettings",
    "ContactSettings",
    "EmbedderSettings",
    "GraphSettings",
    "IngestSettings",
    "LimitsSettings",
    "LlmSettings",
    "MessengerSettings",
    "RetentionSettings",
    "SearchSettings",
    "Settings",
    "TelegramSettings",
    "TextSettings",
    "WebChatSettings",
    "WorkerSettings",
    "ZaloSettings",
    "web_address",
]
