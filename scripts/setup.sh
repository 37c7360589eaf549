#!/usr/bin/env bash
# Set up tuvan in ./.venv (idempotent). `--test` adds what the test suite needs.
# torch is installed first, pinned to the CPU build: a bare requirement would pull a
# multi-gigabyte CUDA build in through sentence-transformers.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
extra=""
if [ "${1:-}" = "--test" ]; then
  extra="[test]"
fi

if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
pip() { .venv/bin/python -m pip --disable-pip-version-check -q "$@" 2> >(grep -v "^WARNING: Location" >&2); }
pip install torch==2.13.0
pip install -e ".${extra}"
