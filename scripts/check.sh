#!/usr/bin/env bash
# Every check CI runs, in the order that fails fastest: formatting, lint, the layering contract
# (import-linter, pyproject.toml), types (mypy --strict), the test suite on both cores
# (pytest-xdist, a file per worker), then every bench's --quick run (bench/quick.py; a broken
# bench fails the build). The benches run after the tests, not beside them: a few tests time
# what they check (a crawler's spacing, a worker's drain), and two loads on two cores made them
# fail now and then. Arguments go to pytest, and then the benches are skipped (a developer
# running some tests). Needs `bash scripts/setup.sh --test` first.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=.venv/bin
"$bin/ruff" format --check .
"$bin/ruff" check .
"$bin/lint-imports"
"$bin/mypy"
"$bin/python" -m pytest -q -p no:cacheprovider -n 2 --dist loadfile "$@"
if [ "$#" -eq 0 ]; then
    mkdir -p bench/results
    if "$bin/python" bench/quick.py > bench/results/quick.log 2>&1; then
        tail -n 3 bench/results/quick.log
    else
        cat bench/results/quick.log
        echo "a bench's --quick run failed (bench/results/quick.log)" >&2
        exit 1
    fi
fi
