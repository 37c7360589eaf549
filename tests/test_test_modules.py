"""The suite's own rule: a test module imports no other (pytest's importlib mode gives each its
own namespace, so an import would load it twice); shared helpers live in ``_support`` modules."""

from __future__ import annotations

import re
from pathlib import Path

_TEST_IMPORT = re.compile(r"^\s*(?:from|import)\s+tests(?:\.\w+)*\.test_\w+")


def test_no_test_module_imports_another() -> None:
    root = Path(__file__).resolve().parent
    offenders = [
        f"{path.relative_to(root)}:{number}"
        for path in sorted(root.rglob("test_*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if _TEST_IMPORT.match(line)
    ]
    assert offenders == []
