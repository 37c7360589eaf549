"""The platforms wired to tuvan: which adapters a process runs, the Zalo token pair, Telegram
long polling. Imports ``adapters``, ``bot.conversations`` and below."""
