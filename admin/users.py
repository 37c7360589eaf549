"""The Users page (admins only): list, create, change role, deactivate and reactivate.

An admin cannot demote or deactivate themself: the last admin would otherwise be able to lock
everyone out of account management (the CLI can still repair anything).
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from admin import audit
from admin.accounts import create_user, list_users, set_active, set_role
from admin.i18n import add_strings
from admin.web import field, form, me, redirect, render, requires, runtime
from bot.core.errors import AccountError
from bot.db.models import StaffRole, StaffUser

add_strings(
    {
        "users.title": ("Tài khoản nhân viên", "Staff accounts"),
        "users.email": ("E-mail", "E-mail"),
        "users.role": ("Vai trò", "Role"),
        "users.active": ("Hoạt động", "Active"),
        "users.last_login": ("Đăng nhập gần nhất", "Last login"),
        "users.never": ("chưa bao giờ", "never"),
        "users.create": ("Tạo tài khoản", "Create an account"),
        "users.password": (
            "Mật khẩu (ít nhất 10 ký tự)",
            "Password (at least 10 characters)",
        ),
        "users.change_role": ("Đổi vai trò", "Change role"),
        "users.deactivate": ("Khoá", "Deactivate"),
        "users.activate": ("Mở khoá", "Reactivate"),
        "users.you": ("(bạn)", "(you)"),
        "users.not_yourself": (
            "Bạn không thể đổi vai trò hoặc khoá chính tài khoản của mình.",
            "You cannot change the role of, or deactivate, your own account.",
        ),
        "users.bad_role": ("Vai trò không hợp lệ.", "Not a valid role."),
        "account.bad_email": ("Địa chỉ e-mail không hợp lệ.", "Not a valid e-mail address."),
        "account.short_password": (
            "Mật khẩu cần ít nhất 10 ký tự.",
            "A password needs at least 10 characters.",
        ),
        "account.long_password": ("Mật khẩu quá dài.", "The password is too long."),
        "account.exists": ("E-mail này đã có tài khoản.", "This e-mail already has an account."),
        "account.invalid": ("Không thực hiện được.", "This cannot be done."),
        "users.roles_help": (
            "Xem: chỉ đọc. Biên tập: sửa câu hỏi thường gặp, tài liệu, trả lời hội thoại. "
            "Quản trị: thêm quản lý tài khoản.",
            "Viewer: reads. Editor: edits the FAQ and documents, replies to conversations. "
            "Admin: also manages accounts.",
        ),
    }
)


def _snapshot(user: StaffUser) -> dict[str, Any]:
    return {"email": user.email, "role": user.role.value, "active": user.active}


async def _page(request: web.Request, *, error: str = "", status: int = 200) -> web.Response:
    async with runtime(request).sessionmaker() as session:
        users = await list_users(session)
    return await render(request, "users.html", {"users": users, "error": error}, status=status)


@requires(StaffRole.admin)
async def users_page(request: web.Request) -> web.Response:
    return await _page(request)


def _role(value: str) -> StaffRole | None:
    return StaffRole.__members__.get(value)


@requires(StaffRole.admin)
async def create(request: web.Request) -> web.Response:
    data = await form(request)
    role = _role(field(data, "role"))
    if role is None:
        return await _page(request, error="users.bad_role", status=400)
    password = data.get("password")
    try:
        async with runtime(request).sessionmaker.begin() as session:
            user = await create_user(
                session, field(data, "email"), password if isinstance(password, str) else "", role
            )
            await audit.record(
                session, me(request).email, "create", "user", user.id, None, _snapshot(user)
            )
    except AccountError as exc:
        return await _page(request, error=f"account.{exc.code}", status=400)
    redirect(request, "admin.users", {"msg": "created"})


async def _change(request: web.Request, action: str) -> web.Response:
    user_id = int(request.match_info["user_id"])
    actor = me(request)
    if user_id == actor.user_id:
        return await _page(request, error="users.not_yourself", status=400)
    data = await form(request)
    async with runtime(request).sessionmaker.begin() as session:
        user = await session.get(StaffUser, user_id)
        if user is None:
            raise web.HTTPNotFound()
        before = _snapshot(user)
        if action == "role":
            role = _role(field(data, "role"))
            if role is None:
                return await _page(request, error="users.bad_role", status=400)
            await set_role(session, user, role)
        else:
            await set_active(session, user, action == "activate")
        await audit.record(session, actor.email, action, "user", user.id, before, _snapshot(user))
    redirect(request, "admin.users", {"msg": "saved"})


@requires(StaffRole.admin)
async def change_role(request: web.Request) -> web.Response:
    return await _change(request, "role")


@requires(StaffRole.admin)
async def deactivate(request: web.Request) -> web.Response:
    return await _change(request, "deactivate")


@requires(StaffRole.admin)
async def activate(request: web.Request) -> web.Response:
    return await _change(request, "activate")


def setup(app: web.Application) -> None:
    app.router.add_get("/users", users_page, name="admin.users")
    app.router.add_post("/users", create, name="admin.users_create")
    app.router.add_post(r"/users/{user_id:\d+}/role", change_role, name="admin.users_role")
    app.router.add_post(
        r"/users/{user_id:\d+}/deactivate", deactivate, name="admin.users_deactivate"
    )
    app.router.add_post(r"/users/{user_id:\d+}/activate", activate, name="admin.users_activate")
