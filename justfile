# Task runner (`pip install rust-just` ships the binary; the venv's dev extra includes it).
set shell := ["bash", "-euo", "pipefail", "-c"]

python := ".venv/bin/python"

# Install everything on a fresh Debian machine (system packages, venv, web template).
setup:
    bash scripts/setup.sh

# Run an experiment: `just run model=null suite.task_ids=[smoke-todo]`.
run *overrides:
    {{python}} -m runner {{overrides}}

# The whole test suite (what CI runs).
test *args:
    bash scripts/test.sh {{args}}

# Only the fast unit tests (no browser, no builds).
unit:
    {{python}} -m pytest -m "not slow and not browser and not build and not sandbox"

# Open the MLflow UI on the local store.
ui:
    .venv/bin/mlflow ui --backend-store-uri sqlite:///mlruns/mlflow.db --default-artifact-root mlruns/artifacts --workers 1

# Harness overhead against a naive pipeline.
bench:
    {{python}} bench/harness.py

# Sandbox images for sandbox=docker (offline bootstrap + build/browser images of what the apt sources serve; idempotent).
images:
    bash scripts/build-images.sh

# Download the papers' data and the pinned weights for offline runs, e.g. `just pull +experiment=evogenui-table2 model=qwen3-coder`.
pull *overrides:
    .venv/bin/python -m runner.pull {{overrides}}
