#!/usr/bin/env bash
# Every check CI runs, in the order that fails fastest: formatting, lint, the layering contract
# (import-linter, pyproject.toml), types (mypy --strict), then the test suite. Arguments go to
# pytest. Needs `bash scripts/setup.sh --test` first.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=.venv/bin
"$bin/ruff" format --check .
"$bin/ruff" check .
"$bin/lint-imports"
"$bin/mypy"
"$bin/python" -m pytest -q -p no:cacheprovider "$@"
