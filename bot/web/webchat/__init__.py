"""The web chat: a page, an embeddable widget, and answers streamed as server-sent events.

Modules: ``protocol`` (the request and response shapes), ``handlers`` (the routes),
``feedback`` (a visitor's 👍/👎), ``answering`` (a message claimed, answered and stored once),
``updates`` (the long poll that brings staff replies), ``visitors`` (the visitor id and its
expiry), ``pages`` and ``csp`` (the page, the widget and their Content-Security-Policy),
``cors``, ``replies`` (the API's JSON responses); the files in ``static/``. Imports
``bot.runtime``, ``bot.keys``, ``bot.answer``, ``bot.conversations`` and below.

The web chat is answered inline, in the serve process: the browser is waiting on the request
(the messaging platforms go through the queue and the worker instead). Every web message still
lands in the one conversation store: the visitor's message as an inbound row (channel "web",
``external_user_id`` the visitor id, ``event_id`` the client's message id) and the reply as an
outbound row (author bot, status sent) whose ``reply_to_id`` is the question's row.

Embedding on the university's site — one line; the site's origin must be listed in
``TUVAN_WEB__ALLOWED_ORIGINS`` (the page may only be framed by those sites, and only they may
call the API from their own pages)::

    <script src="https://bot.example/widget.js" async></script>

Optional attributes on that tag: ``data-lang="vi"|"en"`` (else the browser's language),
``data-position="left"`` (else bottom right).

``POST /api/chat`` takes ``{"visitor_id": "...", "message_id": "<uuid>", "text": "..."}`` and
answers with ``text/event-stream``::

    event: meta      {"tier": "documents"}                   the tier, once known (LLM mode)
    event: token     {"text": "..."}                         a piece of the reply, to append
    event: replace   {"reason": "..."}                       drop what was streamed so far
    event: done      {"message_id", "reply_id", "answer", "tier", "language", "citations",
                      "handover"}                            always last; ``answer`` is final

The message id is the idempotency key: the same id posted again is not answered again — the
stored reply comes back as a single ``done`` (after waiting for the first request if it is still
answering; 409 if it takes longer than ``duplicate_wait_s``). A message id already used by
another visitor, or for another text, is a 409.

A refusal for being busy says when to come back: 429 (the address's, network's or visitor's
bucket is empty, or the conversation has too many questions waiting) and 503 (no answer place
free; ``0``: at once, the resend keeping its turn) carry ``Retry-After`` in seconds. The page
keeps the question, says the assistant is busy, and sends it again then (a quarter of a second at
the soonest) with the same message id; a question held by the conversation's cap is
stored, and that resend answers it once the earlier ones are. Only 413 means the text is too
long.

``GET /api/chat/history`` with the header ``X-Visitor-Id: ...`` (never in the URL: proxies log
URLs) gives ``{"messages": [...], "human": bool, "expired": bool}``: the last messages, and
whether staff have the conversation. ``GET /api/chat/updates?since=<message id>`` (same header)
is the page's long poll (``updates``): it answers ``{"changed", "newest"}`` as soon as the
conversation has a newer message (a staff reply, stored through any serve process, wakes it by
NOTIFY), else after ``TUVAN_WEB__UPDATES_WAIT_S``; the page then reads the history, so a staff
reply shows at once without the student typing. ``expired``: the id was not used
for ``TUVAN_WEB__VISITOR_DAYS`` and no longer opens its conversation (``visitors``); the page
then forgets it and starts clean, as its "Cuộc trò chuyện mới" button does.

``POST /api/chat/feedback`` (``feedback``) takes the visitor's 👍/👎 on an answer:
``{"reply_id": ..., "value": 1 | -1}`` with ``X-Visitor-Id``; the history gives each message's
``vote`` (null, 1 or -1), so that the page shows the choice again after a reload.

Citations come as ``{"n", "title", "url", "page"}``: a title and a web address, never the
server's path of a file.

"""
