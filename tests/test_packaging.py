"""What an installed tuvan (``pip install .``, the container image) carries: every file the code
reads beside its modules must be listed in pyproject.toml's package data. The diacritic
restorer's phrasing file was not, and a non-editable install failed on its first question."""

from __future__ import annotations

import fnmatch
import subprocess
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("bot", "adapters", "retrieval", "admin", "migrations")


def test_every_data_file_of_the_packages_is_installed() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    package_data: dict[str, list[str]] = config["tool"]["setuptools"]["package-data"]
    tracked = subprocess.run(
        ["git", "ls-files", *PACKAGES], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    missing = []
    for name in tracked:
        if name.endswith(".py"):
            continue
        covered = any(
            name.startswith(package.replace(".", "/") + "/")
            and fnmatch.fnmatch(name.removeprefix(package.replace(".", "/") + "/"), pattern)
            for package, patterns in package_data.items()
            for pattern in patterns
        )
        if not covered:
            missing.append(name)
    assert tracked, "git ls-files found nothing"
    assert missing == []
