"""Typed keys of the aiohttp application's shared state, in one module so that the web app,
its routes and the admin sub-app share them (the admin's own keys are in ``admin.keys``)."""

from __future__ import annotations

import aiohttp
from aiohttp import web

from adapters.interface import Adapter
from bot.runtime import Runtime

RUNTIME = web.AppKey("runtime", Runtime)
# The process's one client session for platform APIs (connection pooling, one timeout policy).
HTTP = web.AppKey("http", aiohttp.ClientSession)
# The adapters of the channels set up in this process, by channel name.
ADAPTERS = web.AppKey("adapters", dict[str, Adapter])
