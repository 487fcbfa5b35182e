#!/usr/bin/env bash
# One-time set-up on a fresh Debian machine: system packages, the Python environment, the web template.
# Idempotent: re-running only installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

# System packages: Chromium's headless shell, which renders every run, and the full browser, to watch one
# (browser.headless=false), with fonts for stable screenshots; bubblewrap (the local sandbox), git (runner.pull
# fetches the papers' data at pinned commits), Node/npm.
packages=(chromium-headless-shell chromium fonts-liberation bubblewrap git)
command -v node >/dev/null 2>&1 || packages+=(nodejs npm)
missing=()
for package in "${packages[@]}"; do
  dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# Python environment (3.11-3.13) with pinned dependencies.
PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e '.[dev,cluster,embeddings]'

# The web template's node_modules, installed once and shared read-only by every build; then a self-check.
.venv/bin/python -m runner.prepare

# sandbox=docker: a Docker engine and the content-hashed sandbox images (built offline from a
# debootstrap base here). Not needed by the default run, so a machine without Docker still gets set up.
if ! bash scripts/build-images.sh; then
  echo "setup: warning: the Docker sandbox images were not built; sandbox=docker is unavailable (docs/docker.md)" >&2
fi
