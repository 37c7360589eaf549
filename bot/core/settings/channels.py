"""The channels students write on: Telegram, Messenger, Zalo and the web chat."""

from __future__ import annotations

from pydantic import BaseModel, Field, SecretStr


class TelegramSettings(BaseModel):
    """A bot from @BotFather. Without a token the Telegram webhook answers 404."""

    token: SecretStr | None = None
    # Sent by Telegram in X-Telegram-Bot-Api-Secret-Token; set with `tuvan telegram set-webhook`.
    secret_token: SecretStr | None = None
    api_base: str = "https://api.telegram.org"

    @property
    def enabled(self) -> bool:
        return self.token is not None


class MessengerSettings(BaseModel):
    """A Facebook Page connected to a Meta app. Without a page token the webhook answers 404."""

    page_token: SecretStr | None = None
    app_secret: SecretStr | None = None  # signs X-Hub-Signature-256
    verify_token: SecretStr | None = None  # the GET subscription handshake
    app_id: str | None = None  # our app: echoes from any other app are a person in the Page Inbox
    api_base: str = "https://graph.facebook.com"
    api_version: str = "v21.0"
    staff_pause_minutes: int = 30  # bot stays quiet in a thread after a person replies there
    window_hours: int = 24  # standard messaging window after the user's last message
    # Staff replies past the window go out with the HUMAN_AGENT tag up to this long after the
    # user's last message (Meta allows 7 days; needs the Human Agent permission). 0: never.
    human_agent_hours: int = 168
    quick_replies: int = 3  # related FAQ questions offered under an answer (0: none)

    @property
    def enabled(self) -> bool:
        return self.page_token is not None


class ZaloSettings(BaseModel):
    """A Zalo Official Account. Tokens given here seed the database; refreshed ones live there."""

    app_id: str | None = None
    app_secret: SecretStr | None = None  # header secret_key of the token refresh
    oa_secret_key: SecretStr | None = None  # signs X-ZEvent-Signature
    access_token: SecretStr | None = None
    refresh_token: SecretStr | None = None
    api_base: str = "https://openapi.zalo.me"
    oauth_base: str = "https://oauth.zaloapp.com"
    window_hours: int = 48  # customer-service messages only this long after the user's message
    refresh_before_s: int = 3600  # refresh the access token this long before it expires
    # 👍/👎 under the bot's answers, as two "oa.query.hide" buttons whose tap comes back as a
    # hidden user_send_text carrying the vote (third-party integrations attest this shape, not
    # Zalo's own pages from here). False: answers go as plain text, without buttons. On.
    vote_buttons: bool = True

    @property
    def enabled(self) -> bool:
        return self.app_id is not None and self.oa_secret_key is not None


class WebChatSettings(BaseModel):
    enabled: bool = True
    # Sites allowed to embed the widget (CORS), e.g. ["https://tuyensinh.example.edu.vn"].
    allowed_origins: tuple[str, ...] = ()
    history_messages: int = 50  # shown again after a page reload
    # A visitor id (the browser's key to its conversation) unused this long no longer opens
    # that conversation: the next message starts a new one, and the page forgets the old id.
    visitor_days: int = Field(default=30, ge=1, le=3650)
    # POST /api/ask (one answer as JSON, with scores: for tools and tests) is answered only to
    # "Authorization: Bearer <this token>". Unset (the default): the route answers 404.
    ask_token: SecretStr | None = None
    # An open chat page asks GET /api/chat/updates, held this long (seconds) when nothing new
    # comes; a staff reply answers it at once. Keep it under the idle timeout of any proxy in
    # front (nginx: 60 s).
    updates_wait_s: float = Field(default=25.0, gt=0, le=300)
    # A web chat answer holds its question this long, renewed every third of it while it runs:
    # if the serve process dies mid-answer, the page's retry (the same message id) through
    # another process, or a worker, takes the question over within this long, and a slow
    # answer (an LLM) is never taken over while it runs, so it is paid for once.
    answer_lease_s: float = Field(default=10.0, ge=1, le=600)
