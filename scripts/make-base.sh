#!/usr/bin/env bash
# Makes a local base image for hosts that cannot pull (no registry reachable):
# a minimal Debian with python3 (+venv, pip) from debootstrap, imported with
# `docker import`. The root filesystem tarball is cached under
# ~/.cache/imgtool/rootfs/<key>.tar, keyed by every input below, so a second
# run (or CI on the same machine) only re-imports.
#
# usage: scripts/make-base.sh [TAG]     (default TAG: imgtool-base/debian:bookworm-py3)
# prints the image ID on the last line.
set -euo pipefail
TAG=${1:-imgtool-base/debian:bookworm-py3}
SUITE=${IMGTOOL_BASE_SUITE:-bookworm}
MIRROR=${IMGTOOL_DEBIAN_MIRROR:-http://deb.debian.org/debian}
# libgomp1: Paddle's CPU wheels load OpenMP; the base carries it so builds need no network.
PKGS=python3,python3-venv,python3-pip,ca-certificates,libgomp1
SCRIPT_VERSION=2
KEY=$(printf '%s\n' "$SUITE" "$MIRROR" "$PKGS" "$SCRIPT_VERSION" | sha256sum | cut -c1-16)
CACHE=${IMGTOOL_CACHE:-$HOME/.cache/imgtool}/rootfs
TARBALL=$CACHE/debian-$SUITE-py3-$KEY.tar

have=$(docker image inspect -f '{{ index .Config.Labels "imgtool.base.key" }}' "$TAG" 2>/dev/null || true)
if [ "$have" = "$KEY" ]; then
  docker image inspect -f '{{.Id}}' "$TAG"
  exit 0
fi

if [ ! -s "$TARBALL" ]; then
  command -v debootstrap >/dev/null || { echo "make-base: debootstrap is not installed (apt-get install debootstrap)" >&2; exit 2; }
  mkdir -p "$CACHE"
  ROOT=$(mktemp -d "$CACHE/root.XXXXXX")
  trap 'rm -rf "$ROOT"' EXIT
  echo "make-base: debootstrap $SUITE into $ROOT (a few minutes, cached afterwards)" >&2
  debootstrap --variant=minbase --include="$PKGS" "$SUITE" "$ROOT" "$MIRROR" >"$ROOT.log" 2>&1 || {
    echo "make-base: debootstrap failed; log: $ROOT.log" >&2; tail -20 "$ROOT.log" >&2; exit 1; }
  rm -f "$ROOT.log"
  # Keep the image small and deterministic: no apt lists, caches or logs.
  rm -rf "$ROOT"/var/lib/apt/lists/* "$ROOT"/var/cache/apt/*.bin "$ROOT"/var/cache/apt/archives/*.deb \
         "$ROOT"/var/log/* "$ROOT"/usr/share/doc/* "$ROOT"/usr/share/man/* "$ROOT"/usr/share/locale/*
  tar --numeric-owner --sort=name -C "$ROOT" -cf "$TARBALL.tmp" .
  mv "$TARBALL.tmp" "$TARBALL"
fi

docker import \
  -c "LABEL imgtool.base.key=$KEY" \
  -c 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  -c 'ENV LANG=C.UTF-8' \
  -c 'CMD ["/bin/bash"]' \
  "$TARBALL" "$TAG" >/dev/null
docker image inspect -f '{{.Id}}' "$TAG"
