"""Typed keys of the aiohttp application's shared state (one module, so routes can share them)."""

from __future__ import annotations

import aiohttp
from aiohttp import web

from bot.runtime import Runtime

RUNTIME = web.AppKey("runtime", Runtime)
# The process's one client session for platform APIs (connection pooling, one timeout policy).
HTTP = web.AppKey("http", aiohttp.ClientSession)
