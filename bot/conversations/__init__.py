"""The conversation store (contacts, threads, every message in and out) and its queue: one
claim and lease rule for the worker and the web chat. Imports ``bot.db`` and ``bot.core``."""
