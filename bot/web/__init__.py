"""The web process: the application factory (``app``), platform webhooks, health and metrics
(``ops``), one-shot questions (``ask``) and the web chat (``webchat``). Imports ``admin``,
``bot.keys``, ``bot.runtime``, ``bot.channels``, ``bot.answer``, ``bot.conversations`` and below."""
