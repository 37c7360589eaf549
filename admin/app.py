"""The admin sub-app: templates, static files, the guard, and each page module's routes."""

from __future__ import annotations

import importlib
from pathlib import Path

import aiohttp_jinja2
import jinja2
from aiohttp import web

from admin.keys import JINJA
from admin.middleware import admin_middleware
from admin.web import NAV

STATIC_DIR = Path(__file__).parent / "static"

# Each module has ``setup(app)`` adding its routes (named ``admin.<name>``). Add a page: write
# its module, list it here; its menu entry is in admin.web.NAV.
PAGE_MODULES = (
    "admin.login",
    "admin.users",
    "admin.faq_pages",
    "admin.faq_files",
    "admin.review",
    "admin.tryit",
    "admin.dashboard",
    "admin.recheck",
    "admin.conversations",
    "admin.documents",
    "admin.catalogue",
    "admin.stale",
)


def create_admin_app() -> web.Application:
    """The sub-app mounted at /admin by bot.web.app (it reads ``RUNTIME`` from the parent)."""
    app = web.Application(middlewares=[admin_middleware])
    aiohttp_jinja2.setup(
        app,
        app_key=JINJA,
        loader=jinja2.PackageLoader("admin", "templates"),
        autoescape=True,  # every {{ value }} is HTML-escaped; nothing is marked safe
        undefined=jinja2.StrictUndefined,  # a misspelt variable fails the page (and its test)
        trim_blocks=True,
        lstrip_blocks=True,
    )
    app.router.add_get("", _to_index, name="admin.root")
    app.router.add_static("/static", STATIC_DIR, name="admin.static")
    for name in PAGE_MODULES:
        importlib.import_module(name).setup(app)
    names = {r.name for r in app.router.routes() if r.name}
    if missing := [item.route for item in NAV if item.route not in names]:
        raise RuntimeError(f"menu entries without a page: {', '.join(missing)}")
    return app


async def _to_index(request: web.Request) -> web.Response:
    raise web.HTTPMovedPermanently(str(request.app.router["admin.home"].url_for()))
