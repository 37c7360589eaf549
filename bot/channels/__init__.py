"""The platforms wired to tuvan, where they need the database: the Zalo token pair kept in
``channel_tokens`` (``zalo_tokens``) and Telegram long polling into the conversation store
(``telegram_polling``). Imports ``adapters``, ``bot.conversations`` and below (``bot.db``,
``bot.core``)."""
