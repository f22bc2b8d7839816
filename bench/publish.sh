#!/usr/bin/env bash
# Publish benchmark (not a test): one image from the local engine to a loopback
# docker-registry, side by side in ONE run, interleaved, median of BENCH_RUNS:
#   docker save IMG >/dev/null      the engine's own export (the floor: every
#                                   docker-daemon: reader pays it)
#   imgtool copy docker-daemon:IMG docker://…
#   docker push
#   skopeo copy docker-daemon:IMG docker://…
# then an unchanged re-push (imgtool, warm layer cache, same repository).
#
# Each timed push gets a fresh registry (new port, empty storage) so no tool
# can mount or skip blobs from an earlier run, and imgtool an empty layer cache
# (IMGTOOL_CACHE) so its compression is timed too.
#
# The image: BENCH_IMAGE, else the demo's Paddle image (paddle-local:*), else
# the largest local Paddle image (imgtool-it/paddle:*, imgtool-test/*paddle*),
# else a synthetic one (BENCH_SIZE_MB in BENCH_LAYERS layers, half random, half
# text). It is tagged imgtool-bench/publish:image for the run (so a cleanup
# elsewhere cannot remove it mid-run) and untagged at the end.
#
# usage: bench/publish.sh   env: BENCH_IMAGE, BENCH_RUNS (3), BENCH_REPUSH (5),
#                                BENCH_TRACE=1 (one extra traced imgtool run, timeline summary),
#                                IMGTOOL (path to the binary), BENCH_SIZE_MB (1024), BENCH_LAYERS (4)
# Targets (issue 9): imgtool <= 1.25x docker save, <= 0.27x docker push, <= 0.5x skopeo;
# unchanged re-push <= 0.3 s.
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
RUNS=${BENCH_RUNS:-3}
REPUSH=${BENCH_REPUSH:-5}
source "$HERE/bench/lib.sh"
bench_imgtool publish.sh
command -v skopeo >/dev/null || "$HERE/scripts/install-deps.sh" >/dev/null
for p in docker skopeo docker-registry python3 bc; do
  command -v "$p" >/dev/null || { echo "publish.sh: $p is not installed (scripts/install-deps.sh)" >&2; exit 2; }
done

WORK=$(mktemp -d /tmp/imgtool-bench.XXXXXX)
REG_PID=
IMG=imgtool-bench/publish:image
cleanup() {
  [ -n "$REG_PID" ] && kill "$REG_PID" 2>/dev/null
  wait 2>/dev/null || true
  docker rmi "$IMG" >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT

# --- the image
largest() {  # the largest local image whose repository:tag matches $1
  docker images --format '{{.Size}} {{.Repository}}:{{.Tag}} {{.ID}}' | grep -E " $1" | grep -v '<none>' |
    awk '{s=$1; m=1; if (s ~ /GB$/) m=1000; if (s ~ /kB$/) m=0.001; sub(/[a-zA-Z]+$/, "", s); print s*m, $2}' |
    sort -gr | head -1 | cut -d' ' -f2
}
SRC=${BENCH_IMAGE:-}
[ -z "$SRC" ] && SRC=$(largest 'paddle-local:[^ ]*cpu') || true        # the demo's CPU cell (matrix/local.yaml)
[ -z "$SRC" ] && SRC=$(largest 'imgtool-it/paddle:it-cpu') || true      # the same cell, built by the integration tests
[ -z "$SRC" ] && SRC=$(largest 'imgtool-it/paddle:') || true
[ -z "$SRC" ] && SRC=$(largest 'imgtool-test/[^ ]*paddle') || true
if [ -z "$SRC" ]; then
  SIZE_MB=${BENCH_SIZE_MB:-1024}
  LAYERS=${BENCH_LAYERS:-4}
  BASE=$("$HERE/scripts/make-base.sh" >/dev/null && echo "${IMGTOOL_TEST_BASE:-imgtool-base/debian:bookworm-py3}")
  PER=$(( SIZE_MB / LAYERS ))
  {
    echo "FROM $BASE"
    for i in $(seq 1 "$LAYERS"); do
      echo "RUN mkdir -p /data && head -c $(( PER / 2 ))M /dev/urandom > /data/random$i.bin && (seq 1 100000000 | head -c $(( PER / 2 ))M) > /data/text$i.txt"
    done
  } > "$WORK/Dockerfile"
  echo "no Paddle image found: building a synthetic one (~${SIZE_MB} MiB in $LAYERS layers over $BASE)..." >&2
  docker build -q -t "$IMG" "$WORK" >/dev/null
  SRC="synthetic ${SIZE_MB} MiB"
else
  docker tag "$SRC" "$IMG"
fi
BYTES=$(docker image inspect -f '{{.Size}}' "$IMG")
NLAYERS=$(docker image inspect -f '{{len .RootFS.Layers}}' "$IMG")
echo "image: $SRC ($(( BYTES / 1000000 )) MB, $NLAYERS layers)" >&2

start_registry() {  # fresh storage and port; sets PORT, REG_PID
  if [ -n "$REG_PID" ]; then kill "$REG_PID" 2>/dev/null || true; wait "$REG_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"/reg
  bench_registry "$WORK/reg"
}

now() { date +%s.%N; }
declare -A T
record() { T[$1]="${T[$1]:-} $2"; printf '  %-8s run %s: %6.2f s\n' "$1" "$3" "$2" >&2; }

run_save() {
  local t0; t0=$(now)
  docker save "$IMG" >/dev/null
  record save "$(echo "$(now) - $t0" | bc)" "$1"
}
run_docker() {
  start_registry
  docker tag "$IMG" "127.0.0.1:$PORT/bench/docker:r$1"
  local t0; t0=$(now)
  docker push -q "127.0.0.1:$PORT/bench/docker:r$1" >/dev/null
  record docker "$(echo "$(now) - $t0" | bc)" "$1"
  docker rmi "127.0.0.1:$PORT/bench/docker:r$1" >/dev/null
}
run_skopeo() {
  start_registry
  local t0; t0=$(now)
  skopeo copy -q --dest-tls-verify=false "docker-daemon:$IMG" "docker://127.0.0.1:$PORT/bench/skopeo:r$1" >/dev/null
  record skopeo "$(echo "$(now) - $t0" | bc)" "$1"
}
run_imgtool() {
  start_registry
  rm -rf "$WORK/cache"
  local t0; t0=$(now)
  IMGTOOL_CACHE="$WORK/cache" "$IMGTOOL" copy "docker-daemon:$IMG" "docker://127.0.0.1:$PORT/bench/imgtool:r$1" >/dev/null
  record imgtool "$(echo "$(now) - $t0" | bc)" "$1"
}

for r in $(seq 1 "$RUNS"); do
  for what in save imgtool docker skopeo; do "run_$what" "$r"; done
done

# unchanged re-push: same registry and repository as the last imgtool run, warm cache
start_registry
rm -rf "$WORK/cache"
IMGTOOL_CACHE="$WORK/cache" "$IMGTOOL" copy "docker-daemon:$IMG" "docker://127.0.0.1:$PORT/bench/imgtool:re" >/dev/null
for r in $(seq 1 "$REPUSH"); do
  t0=$(now)
  IMGTOOL_CACHE="$WORK/cache" "$IMGTOOL" copy "docker-daemon:$IMG" "docker://127.0.0.1:$PORT/bench/imgtool:re" >/dev/null
  record repush "$(echo "$(now) - $t0" | bc)" "$r"
done

if [ "${BENCH_TRACE:-0}" = 1 ]; then  # one traced run: where the time goes
  start_registry
  rm -rf "$WORK/cache"
  IMGTOOL_TRACE=1 IMGTOOL_CACHE="$WORK/cache" "$IMGTOOL" copy "docker-daemon:$IMG" \
    "docker://127.0.0.1:$PORT/bench/imgtool:trace" 2>"$WORK/trace" >/dev/null
  echo "traced imgtool run (timeline excerpt):"
  grep -E 'save: GET|first bytes|stream ended|layer [0-9a-f]+: [0-9]+ MiB -> [0-9]{2,}|uploaded \(streamed\)|PATCH done|in the cache|blobs done|manifest stored' "$WORK/trace" |
    sed 's/^imgtool trace /  /' | grep -vE 'layer [0-9a-f]+: 0 MiB' || true
fi

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
S=$(echo "${T[save]}" | median); I=$(echo "${T[imgtool]}" | median)
D=$(echo "${T[docker]}" | median); K=$(echo "${T[skopeo]}" | median); R=$(echo "${T[repush]}" | median)
ok() { [ "$(echo "$1 <= $2" | bc -l)" = 1 ] && echo ok || echo MISSED; }
echo
echo "publish benchmark: $SRC ($(( BYTES / 1000000 )) MB, $NLAYERS layers), median of $RUNS interleaved runs,"
echo "$(nproc) cores, $(. /etc/os-release && echo "$PRETTY_NAME"), docker $(docker version -f '{{.Server.Version}}'), $(docker info -f '{{.Driver}}'), $(date -u +%Y-%m-%dT%H:%MZ)"
printf '  %-34s %8s\n' "step" "seconds"
printf '  %-34s %8.2f\n' "docker save >/dev/null" "$S"
printf '  %-34s %8.2f\n' "imgtool copy docker-daemon: -> docker://" "$I"
printf '  %-34s %8.2f\n' "docker push" "$D"
printf '  %-34s %8.2f\n' "skopeo copy docker-daemon: -> docker://" "$K"
printf '  %-34s %8.3f   (median of %s; target <= 0.3 s: %s)\n' "imgtool unchanged re-push" "$R" "$REPUSH" "$(ok "$R" 0.3)"
printf '  %-34s %8.2f   (target <= 1.25: %s)\n' "imgtool / docker save" "$(echo "$I / $S" | bc -l)" "$(ok "$I / $S" 1.25)"
printf '  %-34s %8.2f   (target <= 0.27: %s)\n' "imgtool / docker push" "$(echo "$I / $D" | bc -l)" "$(ok "$I / $D" 0.27)"
printf '  %-34s %8.2f   (target <= 0.50: %s)\n' "imgtool / skopeo copy" "$(echo "$I / $K" | bc -l)" "$(ok "$I / $K" 0.5)"
