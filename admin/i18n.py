"""The admin's words in Vietnamese and English: one dictionary, key → (vi, en).

Templates write ``{{ t("faq.title") }}``; parameters go through ``str.format``
(``t("faq.imported", n=3)``). Autoescaping applies to the result, so a parameter holding user
text is escaped like everything else; translations hold no HTML. A page module of its own adds
its words with ``add_strings({...})`` at import time. tests/admin/test_i18n.py checks that every
key a template uses exists and that no text is missing in either language.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

LANGUAGES = ("vi", "en")
DEFAULT_LANGUAGE = "vi"

STRINGS: dict[str, tuple[str, str]] = {
    # the frame
    "app.title": ("Quản trị tuvan", "tuvan admin"),
    "app.skip": ("Bỏ qua thanh điều hướng", "Skip to content"),
    "app.signed_in_as": ("Đăng nhập: {email} ({role})", "Signed in as {email} ({role})"),
    "app.logout": ("Đăng xuất", "Log out"),
    "app.language": ("Ngôn ngữ", "Language"),
    "lang.vi": ("Tiếng Việt", "Tiếng Việt"),
    "lang.en": ("English", "English"),
    "nav.dashboard": ("Tổng quan", "Dashboard"),
    "nav.faq": ("Câu hỏi thường gặp", "FAQ"),
    "nav.review": ("Duyệt", "Review"),
    "nav.tryit": ("Thử hỏi", "Try it"),
    "nav.recheck": ("Cần xem lại", "To look at again"),
    "nav.conversations": ("Hội thoại", "Conversations"),
    "nav.documents": ("Tài liệu", "Documents"),
    "nav.catalogue": ("Danh mục", "Catalogue"),
    "nav.stale": ("Cần cập nhật", "To update"),
    "nav.users": ("Tài khoản", "Users"),
    "role.viewer": ("xem", "viewer"),
    "role.editor": ("biên tập", "editor"),
    "role.admin": ("quản trị", "admin"),
    # errors
    "error.title": ("Có lỗi", "Something went wrong"),
    "error.400": ("Yêu cầu không hợp lệ.", "The request is not valid."),
    "error.403": (
        "Bạn không có quyền làm việc này, hoặc biểu mẫu đã hết hạn (hãy tải lại trang).",
        "You may not do this, or the form has expired (reload the page).",
    ),
    "error.404": ("Không tìm thấy trang hoặc mục này.", "This page or item does not exist."),
    "error.405": ("Phương thức không được hỗ trợ.", "This method is not allowed here."),
    "error.413": ("Tệp hoặc biểu mẫu quá lớn.", "The file or form is too large."),
    "error.429": (
        "Đăng nhập sai quá nhiều lần. Vui lòng thử lại sau {minutes} phút.",
        "Too many failed logins. Please try again in {minutes} minutes.",
    ),
    "error.503": (
        "Cơ sở dữ liệu tạm thời không truy cập được. Vui lòng thử lại sau.",
        "The database is unavailable for a moment. Please try again.",
    ),
    "error.back": ("Quay lại", "Go back"),
    # login
    "login.title": ("Đăng nhập", "Log in"),
    "login.email": ("E-mail", "E-mail"),
    "login.password": ("Mật khẩu", "Password"),
    "login.submit": ("Đăng nhập", "Log in"),
    "login.failed": ("E-mail hoặc mật khẩu không đúng.", "Wrong e-mail or password."),
    "msg.logged_out": ("Bạn đã đăng xuất.", "You have logged out."),
    "msg.saved": ("Đã lưu.", "Saved."),
    "msg.deleted": ("Đã xoá.", "Deleted."),
    "msg.published": ("Đã xuất bản: mục này trả lời ngay.", "Published: it answers now."),
    "msg.unpublished": ("Đã chuyển về bản nháp.", "Back to draft: it no longer answers."),
    "msg.created": ("Đã tạo.", "Created."),
    "msg.variant_added": ("Đã thêm cách hỏi.", "Phrasing added."),
    "msg.variant_removed": ("Đã xoá cách hỏi.", "Phrasing removed."),
    "msg.approved": ("Đã duyệt và xuất bản.", "Approved and published."),
    "msg.rejected": ("Đã loại bỏ.", "Rejected."),
    "msg.nothing_selected": ("Chưa chọn mục nào.", "Nothing was selected."),
    # common words
    "common.save": ("Lưu", "Save"),
    "common.cancel": ("Huỷ", "Cancel"),
    "common.delete": ("Xoá", "Delete"),
    "common.search": ("Tìm", "Search"),
    "common.filter": ("Lọc", "Filter"),
    "common.all": ("Tất cả", "All"),
    "common.yes": ("Có", "Yes"),
    "common.no": ("Không", "No"),
    "common.none": ("(không có)", "(none)"),
    "common.previous": ("Trang trước", "Previous"),
    "common.next": ("Trang sau", "Next"),
    "common.page": ("Trang {page}/{pages} · {total} mục", "Page {page} of {pages} · {total} items"),
    "common.confirm_delete": (
        "Xoá hẳn mục này? Không thể hoàn tác.",
        "Delete this for good? This cannot be undone.",
    ),
    "common.actions": ("Thao tác", "Actions"),
    "common.when": ("Thời điểm", "When"),
    "common.who": ("Người thực hiện", "Who"),
    "common.select": ("Chọn", "Select"),
    "common.select_all": ("Chọn tất cả", "Select all"),
}


def add_strings(strings: Mapping[str, tuple[str, str]]) -> None:
    """Add a page module's words; a key may not be given two different texts."""
    for key, texts in strings.items():
        if len(texts) != len(LANGUAGES) or not all(texts):
            raise ValueError(f"admin string {key!r} needs a text in each of {LANGUAGES}")
        if STRINGS.get(key, texts) != texts:
            raise ValueError(f"admin string {key!r} is already defined differently")
        STRINGS[key] = texts


class Translator:
    """``t(key, **params)`` in one language; an unknown key shows as itself (and a test fails)."""

    def __init__(self, language: str) -> None:
        self.language = language if language in LANGUAGES else DEFAULT_LANGUAGE
        self._index = LANGUAGES.index(self.language)

    def __call__(self, key: str, **params: Any) -> str:
        texts = STRINGS.get(key)
        if texts is None:
            return key
        text = texts[self._index]
        return text.format(**params) if params else text

    def knows(self, key: str) -> bool:
        return key in STRINGS
