"""Running the service: what one client may cost, the staff view's logins, the worker's queues
and how long personal data is kept."""

from __future__ import annotations

from pydantic import BaseModel, Field

from bot.core.client_address import client_network


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
    # 6 s for long; 8 at once covers how students start ("ad oi", "cho e hoi", then short
    # questions: seven in ten seconds) and a retry of the page's.
    chat_visitor_per_minute: float = Field(default=10.0, gt=0)
    chat_visitor_burst: int = Field(default=8, ge=1)
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
    # Half a second, then 503 with Retry-After 0: the page's resend keeps its turn, so a new
    # visitor behind a flood from many networks is answered within 2 s (bench/reliability.py).
    answers_wait_s: float = Field(default=0.5, ge=0)
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
