"""The staff web view at /admin: an aiohttp sub-app, server-rendered with Jinja2.

Mounted by ``bot.web.app.create_app`` when ``TUVAN_ADMIN__ENABLED`` (default true); accounts come
from ``tuvan admin create-user EMAIL --role admin|editor|viewer``.

Modules: ``app`` (the sub-app), ``middleware`` (login, CSRF, roles, security headers, error
pages), ``web`` (what handlers use), ``i18n`` (the words, vi/en), ``accounts`` (argon2id
hashes, sessions, the login rate limit), ``audit`` (the change log), then one module per page.

How to add a page
-----------------
1. **Module and routes.** Write ``admin/<page>.py`` with ``setup(app: web.Application)`` adding
   its routes, each named ``admin.<page>`` or ``admin.<page>_<action>`` (the menu highlights
   the page for both), and list the module in ``admin.app.PAGE_MODULES``. Paths are relative to
   the sub-app: ``app.router.add_get("/documents", handler, name="admin.documents")`` serves
   ``/admin/documents``. Add the page's menu entry to ``admin.web.NAV``: the sub-app refuses
   to start when a menu entry has no route.
2. **Role guard.** Every route needs a login (``tests/admin/test_security.py`` enumerates them
   all). A GET needs ``viewer`` and any other method ``editor`` unless the handler says
   otherwise: ``@requires(StaffRole.admin)`` from ``admin.web``. The middleware checks before
   the handler runs; ``me(request)`` is the signed-in ``StaffIdentity`` (email, role).
3. **CSRF.** Every POST/PUT/PATCH/DELETE must carry the session's token, or it is refused with
   403 before the handler runs. In a form: ``{% import "macros.html" as m with context %}`` then
   ``{{ m.csrf() }}`` inside the ``<form method="post">``; from script: header ``X-CSRF-Token``
   with the value of ``<meta name="csrf-token">``. After a POST, answer with
   ``redirect(request, "admin.<page>", {"msg": "saved"})`` (303; ``msg`` names a ``msg.*``
   string shown as a notice).
4. **Template.** ``admin/templates/<page>.html`` starting with ``{% extends "base.html" %}`` and
   filling ``{% block title %}`` and ``{% block content %}``; render with
   ``await render(request, "<page>.html", {...})``. Autoescape is on: never use ``|safe`` on
   anything a user or a document wrote. No inline ``<script>`` or ``style=`` (the CSP blocks
   them): behaviour goes in ``admin/static/admin.js``, looks in ``admin/static/admin.css``.
   Give controls a ``<label for>`` and things tests look for a ``data-testid``.
5. **Words.** Every visible string is ``{{ t("<page>.<what>") }}``; define the module's words
   with ``add_strings({"<page>.title": ("Tiêu đề", "Title"), ...})`` from ``admin.i18n`` at
   import time (Vietnamese first). ``tests/admin/test_i18n.py`` fails on a key a template uses
   but nobody defined.
6. **Changes are audited.** Write ``await audit.record(session, me(request).email, action,
   entity, entity_id, before, after)`` in the same transaction as the change.
7. **Tests** in ``tests/admin/`` use the fixtures of its conftest (``viewer``, ``editor``,
   ``admin`` browsers, ``make_staff``, ``browser``): real HTTP, real PostgreSQL.
"""
