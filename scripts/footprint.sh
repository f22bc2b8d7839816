#!/usr/bin/env bash
# scripts/footprint.sh: the disk the suite and the demo hold once they are done -- the host
# engine's images and build cache (docker system df), imgtool's caches under ~/.cache/imgtool (the
# layer cache, bounded by IMGTOOL_LAYER_CACHE_MAX_GB; base rootfs tarballs; wheelhouses and their
# shared store; the test engine's data under gpu-engine/, wiped after the suite), their total
# against the target, the free space left. `make test` prints it at the end.
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
# The total against the target of issue 34 (engine images + imgtool's caches, after the suite and
# the demo): IMGTOOL_DISK_TARGET_GB, default 35. Said, never failed on: the disk is shared.
to_gb() { awk '{v=$1; u=v; sub(/[0-9.]+/, "", u); sub(/[A-Za-z]+$/, "", v);
  f = u=="TB" ? 1000 : u=="GB" ? 1 : u=="MB" ? 0.001 : u=="kB" ? 0.000001 : 0; printf "%.1f\n", v*f}'; }
images_gb=$(docker system df --format '{{.Type}} {{.Size}}' 2>/dev/null | awk '$1=="Images"{print $2}' | to_gb)
cache_gb=$(du -sk "$CACHE" 2>/dev/null | awk '{printf "%.1f", $1*1024/1e9}')
target=${IMGTOOL_DISK_TARGET_GB:-35}
awk -v i="${images_gb:-0}" -v c="${cache_gb:-0}" -v t="$target" 'BEGIN {
  printf "total: %.1f GB (engine images %.1f + caches %.1f): %s the %s GB target\n", i+c, i, c, (i+c <= t ? "within" : "OVER"), t }'
df -h "${CACHE%/*}" 2>/dev/null | awk 'NR==2 {printf "free on %s: %s of %s\n", $6, $4, $2}'
