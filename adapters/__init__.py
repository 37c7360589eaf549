"""The messaging platforms tuvan answers on: one package per platform, and what they share.

``interface`` is the contract every adapter implements (``Adapter``); ``webhook_auth``,
``payloads`` and ``sending`` are the pieces the platforms share (a constant-time secret check,
reading platform JSON, splitting a reply and sending it part by part). ``telegram``,
``messenger`` and ``zalo`` each hold one platform: its adapter class in the package's
``__init__`` and the webhook, event reading and platform API in modules beside it.

Adapters import only ``bot.core`` (import-linter holds it): never the database, the worker or
the web app. Verify and parse are pure (bytes in, values out); sends go over HTTP.
"""
