"""The web process: the aiohttp application, platform webhooks, health and metrics, and the
web chat. Imports ``admin``, ``bot.runtime`` and below."""
