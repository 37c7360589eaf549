#!/usr/bin/env bash
# Set up tuvan in ./.venv (idempotent). `--test` adds what the test suite needs.
# Tesseract (Vietnamese + English) is installed with apt-get when missing and run as root: it
# OCRs scanned PDF pages. Without it those pages are loaded without text.
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

if command -v tesseract >/dev/null && tesseract --list-langs 2>/dev/null | grep -x vie >/dev/null; then
  :
elif [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tesseract-ocr tesseract-ocr-vie
else
  echo "note: tesseract-ocr and tesseract-ocr-vie are not installed (needs root and apt-get);" >&2
  echo "      scanned PDF pages will be loaded without OCR." >&2
fi

# The admin's browser tests drive Debian's Chromium through Playwright (no browser download).
if [ -n "$extra" ] && ! command -v chromium >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium
  else
    echo "note: chromium is not installed (needs root and apt-get); browser tests will fail." >&2
  fi
fi
