#!/usr/bin/env bash
# scripts/footprint.sh: the disk the suite and the demo hold once they are done -- the host
# engine's images and build cache (docker system df), imgtool's caches under ~/.cache/imgtool (the
# layer cache, bounded by IMGTOOL_LAYER_CACHE_MAX_GB; base rootfs tarballs; wheelhouses; the test
# engine's data under gpu-engine/), the free space left. `make test` prints it at the end.
# Reclaim: `imgtool prune --caches` (layer cache), `docker image prune`, rm -rf ~/.cache/imgtool/<dir>.
set -uo pipefail
CACHE=${IMGTOOL_CACHE:-$HOME/.cache/imgtool}
echo "== disk footprint ($(date -u +%FT%TZ)) =="
if docker info >/dev/null 2>&1; then
  docker system df --format '{{.Type}}\t{{.TotalCount}}\t{{.Size}}\t{{.Reclaimable}}' 2>/dev/null |
    awk -F'\t' '{printf "engine %-14s %4s items %10s (reclaimable %s)\n", $1, $2, $3, $4}'
fi
if [ -d "$CACHE" ]; then
  du -sh "$CACHE" 2>/dev/null | awk '{printf "%-30s %10s\n", "~/.cache/imgtool (all)", $1}'
  for d in "$CACHE"/*/; do
    [ -d "$d" ] || continue
    du -sh "$d" 2>/dev/null | awk -v n="$(basename "$d")" '{printf "  %-28s %10s\n", n, $1}'
  done
fi
df -h "${CACHE%/*}" 2>/dev/null | awk 'NR==2 {printf "free on %s: %s of %s\n", $6, $4, $2}'
