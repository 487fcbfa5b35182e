#!/usr/bin/env bash
# The whole test suite: make sure the test services are installed and running, then pytest (args pass through).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/test-deps.sh
exec .venv/bin/python -m pytest "$@"
