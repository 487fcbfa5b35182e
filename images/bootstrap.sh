#!/usr/bin/env bash
# Offline base image: a Debian bookworm minbase root filesystem made with debootstrap and imported into
# the local Docker engine as genui-base:bookworm. For machines that reach no image registry; the
# Dockerfiles under images/ then build FROM it through `--build-arg BASE_IMAGE=genui-base:bookworm`.
# The mirror and the image's apt sources are this machine's own (runner/sandbox/apt_sources.py reads
# /etc/apt/sources.list and sources.list.d/, one-line and deb822); DEBIAN_MIRROR / DEBIAN_SECURITY_MIRROR
# override them. The image also gets this machine's apt proxy setting and CA bundle, so apt and pip work
# inside builds on a machine whose registries are reached through a TLS-intercepting proxy.
# Idempotent: does nothing when an image of this layout already exists (pass --force to rebuild).
set -euo pipefail

BASE_TAG="${GENUI_BASE_IMAGE:-genui-base:bookworm}"
SUITE=bookworm
LAYOUT=2  # bumped whenever what this script puts into the image changes
HERE="$(cd "$(dirname "$0")" && pwd)"
CA_BUNDLE="${GENUI_CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}"

present_layout=$(docker image inspect "$BASE_TAG" --format '{{index .Config.Labels "org.genui.base.layout"}}' 2>/dev/null || true)
if [ "${1:-}" != "--force" ] && [ "$present_layout" = "$LAYOUT" ]; then
  echo "bootstrap: $BASE_TAG already present"
  exit 0
fi
SOURCES="$(python3 "$HERE/../runner/sandbox/apt_sources.py" sources --suite "$SUITE")"
MIRROR="$(python3 "$HERE/../runner/sandbox/apt_sources.py" mirror --suite "$SUITE")"
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
# The same apt layout as the official debian:bookworm-slim image (main, -updates, -security), from this
# machine's sources, so the Dockerfiles' apt steps work unchanged on both bases.
printf '%s\n' "$SOURCES" >"$ROOTFS/etc/apt/sources.list"
cp "$HERE/base/docker-slim.conf" "$ROOTFS/etc/apt/apt.conf.d/docker-slim"
# This machine's apt proxy, if it sets one.
apt-config dump 2>/dev/null | grep -E '^Acquire::(http|https|ftp)::Proxy ' >"$ROOTFS/etc/apt/apt.conf.d/99genui-proxy" || \
  rm -f "$ROOTFS/etc/apt/apt.conf.d/99genui-proxy"
# This machine's CA bundle (its proxy's CA included), where OpenSSL, pip (PIP_CERT) and Node look.
if [ -s "$CA_BUNDLE" ]; then
  mkdir -p "$ROOTFS/etc/ssl/certs"
  cp "$CA_BUNDLE" "$ROOTFS/etc/ssl/certs/ca-certificates.crt"
fi
# A mirror that serves a frozen snapshot has expired Release files; follow the host's apt setting.
if apt-config dump 2>/dev/null | grep -q 'Acquire::Check-Valid-Until "false"'; then
  printf 'Acquire::Check-Valid-Until "false";\nAcquire::Check-Date "false";\n' \
    >"$ROOTFS/etc/apt/apt.conf.d/99genui-snapshot"
fi
rm -rf "$ROOTFS"/var/cache/apt/archives/*.deb "$ROOTFS"/var/lib/apt/lists/*
tar -C "$ROOTFS" --numeric-owner -c . | docker import \
  --change 'ENV LANG=C.UTF-8' --change 'CMD ["bash"]' --change "LABEL org.genui.base.layout=$LAYOUT" \
  --change "LABEL org.genui.base.mirror=$MIRROR" - "$BASE_TAG" >/dev/null
echo "bootstrap: imported $BASE_TAG in $(( $(date +%s) - started ))s"
