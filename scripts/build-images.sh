#!/usr/bin/env bash
# Sandbox images for sandbox=docker, offline: the base image from debootstrap of this machine's own apt
# sources (images/bootstrap.sh), then the build and browser images on it. Their distribution packages are
# resolved to what the sources serve today and the images are tagged by content hash of recipe + resolved
# versions (runner/sandbox/images.py): a re-run builds a new image only when the sources now serve other
# versions (a Chromium security update, say); older images keep their tags. Idempotent.
# More image names may follow: `agent` also builds the agent image (the official coding-agent CLIs, images/agent,
# FROM the build image; about 1 GB from the npm registry the first time), which agent=<cli> runs need.
#   scripts/build-images.sh                                         # offline: BASE_IMAGE=genui-base:bookworm
#   scripts/build-images.sh agent                                   # and the agent image
#   BASE_IMAGE=debian:bookworm-slim@sha256:... scripts/build-images.sh   # normal machine: a registry base
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/start-dockerd.sh
BASE_IMAGE="${BASE_IMAGE:-genui-base:bookworm}"
if [ "$BASE_IMAGE" = "genui-base:bookworm" ]; then
  bash images/bootstrap.sh
fi
PYTHON="${PYTHON:-.venv/bin/python}"
"$PYTHON" -m runner.sandbox.images --refresh --base "$BASE_IMAGE" build browser "$@"
# `genui-build:current` points at the build image just resolved, so `docker build -t genui-runner .` needs no
# argument. It is only a pointer (like `latest`): runs record the content tag and digest, never the alias.
docker tag "$("$PYTHON" -m runner.sandbox.images --tag build)" genui-build:current
