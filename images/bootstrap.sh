#!/usr/bin/env bash
# Offline base image: a Debian bookworm minbase root filesystem made with debootstrap and imported into
# the local Docker engine as genui-base:bookworm. For machines that reach no image registry; the
# Dockerfiles under images/ then build FROM it through `--build-arg BASE_IMAGE=genui-base:bookworm`.
# Idempotent: does nothing when the image already exists (pass --force to rebuild).
set -euo pipefail

BASE_TAG="${GENUI_BASE_IMAGE:-genui-base:bookworm}"
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
SUITE=bookworm

if [ "${1:-}" != "--force" ] && docker image inspect "$BASE_TAG" >/dev/null 2>&1; then
  echo "bootstrap: $BASE_TAG already present"
  exit 0
fi
command -v debootstrap >/dev/null 2>&1 || {
  echo "bootstrap: installing debootstrap"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
}

ROOTFS="$(mktemp -d /tmp/genui-rootfs.XXXXXX)"
trap 'rm -rf "$ROOTFS"' EXIT
started=$(date +%s)
echo "bootstrap: debootstrap --variant=minbase $SUITE from $MIRROR"
debootstrap --variant=minbase "$SUITE" "$ROOTFS" "$MIRROR" >"$ROOTFS.log" 2>&1 || {
  tail -20 "$ROOTFS.log"; exit 1
}
rm -f "$ROOTFS.log"
# The same apt layout as the official debian:bookworm-slim image, so the Dockerfiles' apt steps work
# unchanged on both bases.
cat >"$ROOTFS/etc/apt/sources.list" <<SOURCES
deb $MIRROR $SUITE main
deb $MIRROR $SUITE-updates main
deb http://deb.debian.org/debian-security $SUITE-security main
SOURCES
cp "$(dirname "$0")/base/docker-slim.conf" "$ROOTFS/etc/apt/apt.conf.d/docker-slim"
# A mirror that serves a frozen snapshot has expired Release files; follow the host's apt setting.
if apt-config dump 2>/dev/null | grep -q 'Acquire::Check-Valid-Until "false"'; then
  printf 'Acquire::Check-Valid-Until "false";\nAcquire::Check-Date "false";\n' \
    >"$ROOTFS/etc/apt/apt.conf.d/99genui-snapshot"
fi
rm -rf "$ROOTFS"/var/cache/apt/archives/*.deb "$ROOTFS"/var/lib/apt/lists/*
tar -C "$ROOTFS" --numeric-owner -c . | docker import \
  --change 'ENV LANG=C.UTF-8' --change 'CMD ["bash"]' - "$BASE_TAG" >/dev/null
echo "bootstrap: imported $BASE_TAG in $(( $(date +%s) - started ))s"
