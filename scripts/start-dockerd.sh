#!/usr/bin/env bash
# Start a Docker engine when none answers (machines without systemd, e.g. CI containers); idempotent.
# Installs docker.io if dockerd is missing. Waits until `docker info` works (at most ~60 s).
set -euo pipefail

if docker info >/dev/null 2>&1; then
  exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
if ! command -v dockerd >/dev/null 2>&1; then
  echo "start-dockerd: installing docker.io"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq docker.io >/dev/null
fi
LOG="${DOCKERD_LOG:-/tmp/dockerd.log}"
if ! pgrep -x dockerd >/dev/null 2>&1; then
  echo "start-dockerd: starting dockerd (log: $LOG)"
  # setsid + nohup: the daemon outlives this script and the shell that ran it.
  $SUDO setsid nohup dockerd >"$LOG" 2>&1 </dev/null &
fi
for _ in $(seq 1 120); do
  if docker info >/dev/null 2>&1; then
    echo "start-dockerd: engine ready"
    exit 0
  fi
  sleep 0.5
done
echo "start-dockerd: dockerd did not answer within 60 s; last log lines:" >&2
tail -20 "$LOG" >&2 || true
exit 1
