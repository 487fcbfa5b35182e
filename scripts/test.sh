#!/usr/bin/env bash
# The whole test suite: make sure the test services are installed and running, then pytest (args pass through).
# -rs and tests/conftest.py list every skipped test with its reason; with CI=true a test whose set-up component
# (Chromium, bubblewrap, Docker + images, the vLLM venv, SLURM) is missing fails instead of skipping.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/test-deps.sh
exec .venv/bin/python -m pytest -rs "$@"
