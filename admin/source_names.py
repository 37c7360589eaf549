"""Server paths kept out of staff pages' free text.

A document's ``source`` is a server path for a file (an upload, a folder ingested) and its
address for a web page. Pages name a source as bot.core.citations does for students (the title,
linked to the public address when there is one, else the file's name); ``without_paths`` does
the same inside free text, such as the error an ingestion failed with.
"""

from __future__ import annotations

import re

# A rooted path of two parts or more ("/srv/kb/a.pdf", "C:\\kb\\a.docx", "~/kb/a.md"), not the
# path of a web address ("https://x.vn/a/b.pdf": the slash follows a colon, a slash or a word).
_PATH = re.compile(
    r"(?<![\w:/\\.~-])(?:[A-Za-z]:|~)?[/\\](?:[^\s/\\'\"<>|]+[/\\])+(?P<name>[^\s/\\'\"<>|,;)]+)"
)


def without_paths(text: str) -> str:
    """``text`` with each server path in it shortened to its file's name."""
    return _PATH.sub(lambda m: m.group("name"), text)
