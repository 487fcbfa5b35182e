#!/usr/bin/env bash
# Sandbox images for sandbox=docker, offline: the base image from debootstrap (images/bootstrap.sh), then
# the build and browser images on it, tagged by content hash. Idempotent: existing tags are skipped.
#   scripts/build-images.sh                       # offline: BASE_IMAGE=genui-base:bookworm
#   BASE_IMAGE=debian:bookworm-slim@sha256:... scripts/build-images.sh   # normal machine: pinned registry base
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/start-dockerd.sh
BASE_IMAGE="${BASE_IMAGE:-genui-base:bookworm}"
if [ "$BASE_IMAGE" = "genui-base:bookworm" ]; then
  bash images/bootstrap.sh
fi
PYTHON="${PYTHON:-.venv/bin/python}"
"$PYTHON" -m runner.sandbox.images --base "$BASE_IMAGE" build browser
