#!/usr/bin/env bash
# `make demo` from cold, for two revisions side by side in one run on this machine, as a ratio:
#
#   bench/demo-cold.sh REV_BEFORE [REV_AFTER]     (default REV_AFTER: HEAD)
#
# Each revision runs in a detached worktree of its own (its own build/ and out/), one after the
# other, each from the same cold start:
#   - imgtool's cache is a fresh folder (IMGTOOL_CACHE): no state, no layer cache, no records; only
#     the DOWNLOADS are shared with ~/.cache/imgtool (the wheelhouses with NVIDIA's and Paddle's wheels,
#     the debootstrap rootfs tarball), so the number measures imgtool and Docker, not the network;
#   - the demo's images are removed (paddle-local:*, imgtool-base/*, imgtool-stage/*) and the
#     dangling ones pruned, so the Debian base is imported, the CUDA base and both cells built anew.
# The compile that `make demo` does counts, with ccache off for both (CCACHE_DISABLE=1): a fresh
# machine has no compiler cache, and a shared one would favour whichever revision was compiled last.
# On a truly fresh machine add the downloads (about 2 GB of wheels) and debootstrap to both sides.
# Each side's log gets phase times from the cache folder's timestamps: before the nightly (compile
# and fixtures, side by side), the nightly, after it (OCI layout copy, verify, the no-op nightly).
#
# Prints each side's wall time and after/before; OUT=dir keeps both demos' logs (default a temp folder).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BEFORE=${1:?usage: bench/demo-cold.sh REV_BEFORE [REV_AFTER]}
AFTER=${2:-HEAD}
OUT=${OUT:-$(mktemp -d /tmp/demo-cold.XXXXXX)}
DL=${HOME}/.cache/imgtool
mkdir -p "$OUT"

cold() {  # cold CACHE_DIR
  docker images --format '{{.Repository}}:{{.Tag}}' | grep -E '^(paddle-local|imgtool-base/|imgtool-stage/)' |
    xargs -r docker image rm -f >/dev/null 2>&1 || true
  docker image prune -f >/dev/null
  rm -rf "$1" && mkdir -p "$1" && chmod 700 "$1"
  for d in wheelhouse rootfs; do [ -d "$DL/$d" ] && ln -s "$DL/$d" "$1/$d"; done
}

run_demo() {  # run_demo NAME REV -> prints seconds
  local name=$1 rev=$2 wt="$OUT/wt-$1" cache="$OUT/cache-$1"
  git -C "$ROOT" worktree remove --force "$wt" >/dev/null 2>&1 || true
  git -C "$ROOT" worktree add --detach "$wt" "$rev" >/dev/null
  cold "$cache"
  local t0 t1 rc=0
  t0=$(date +%s.%N)
  (cd "$wt" && CCACHE_DISABLE=1 IMGTOOL_CACHE="$cache" make demo) >"$OUT/$name.log" 2>&1 || rc=$?
  t1=$(date +%s.%N)
  git -C "$ROOT" worktree remove --force "$wt" >/dev/null 2>&1 || true
  [ "$rc" = 0 ] || { echo "demo-cold: make demo at $rev failed (rc $rc); log: $OUT/$name.log" >&2; exit 1; }
  phases "$name" "$cache" "$t0" "$t1" >&2
  python3 -c "import sys; print('%.1f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$t0" "$t1"
}

# phases NAME CACHE T0 T1: the nightly starts when it makes CACHE/logs and ends with its last state.db write.
phases() {
  python3 - "$@" <<'PY'
import os, sys
name, cache, t0, t1 = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
try:
    start, end = os.stat(os.path.join(cache, "logs")).st_mtime, os.stat(os.path.join(cache, "state.db")).st_mtime
    print("demo-cold: %s: before the nightly %.0f s, nightly %.0f s, after it %.0f s" % (name, start - t0, end - start, t1 - end))
except OSError as e:
    print("demo-cold: %s: no phase times (%s)" % (name, e))
PY
}

echo "demo-cold: $(git -C "$ROOT" rev-parse --short "$BEFORE") (before) vs $(git -C "$ROOT" rev-parse --short "$AFTER") (after); logs in $OUT" >&2
b=$(run_demo before "$BEFORE")
a=$(run_demo after "$AFTER")
python3 - "$b" "$a" <<'PY'
import sys
b, a = float(sys.argv[1]), float(sys.argv[2])
fmt = lambda s: "%d min %02d s" % (s // 60, s % 60)
print("make demo, cold (downloads cached): before %s, after %s, after/before %.2f" % (fmt(b), fmt(a), a / b))
PY
