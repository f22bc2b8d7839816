#!/usr/bin/env bash
# Publish benchmark (not a test): push one ~1 GiB multi-layer image to fresh
# repositories on a loopback docker-registry with `docker push`, `skopeo copy
# docker-daemon:` and `imgtool copy docker-daemon:`, several runs each,
# interleaved; print median times and ratios; then time an unchanged re-push.
#
# Each timed push gets a fresh registry (new port, empty storage) so no tool
# can mount or skip blobs from an earlier run, and imgtool gets an empty layer
# cache (IMGTOOL_CACHE) so its compression is timed too.
#
# usage: bench/publish.sh            env: BENCH_SIZE_MB (default 1024), BENCH_RUNS (3),
#                                         BENCH_LAYERS (4), IMGTOOL (path to the binary)
# Targets: imgtool <= 1/3 of docker push, <= 1/2 of skopeo; unchanged re-push <= 0.3 s.
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
SIZE_MB=${BENCH_SIZE_MB:-1024}
RUNS=${BENCH_RUNS:-3}
LAYERS=${BENCH_LAYERS:-4}
IMGTOOL=${IMGTOOL:-}
if [ -z "$IMGTOOL" ]; then
  for c in "$HERE"/build*/cli/imgtool; do [ -x "$c" ] && IMGTOOL=$c && break; done
fi
[ -x "${IMGTOOL:-}" ] || { echo "publish.sh: build imgtool first (cmake --build build --target imgtool) or set IMGTOOL" >&2; exit 2; }
for p in docker skopeo docker-registry python3; do
  command -v "$p" >/dev/null || { echo "publish.sh: $p is not installed" >&2; exit 2; }
done

WORK=$(mktemp -d /tmp/imgtool-bench.XXXXXX)
REG_PID=
cleanup() { [ -n "$REG_PID" ] && kill "$REG_PID" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT

# --- the image: base + LAYERS layers, each half random (incompressible), half text
BASE=$("$HERE/scripts/make-base.sh" >/dev/null && echo "${IMGTOOL_TEST_BASE:-imgtool-base/debian:bookworm-py3}")
PER=$(( SIZE_MB / LAYERS ))
IMG=imgtool-bench/publish:${SIZE_MB}m
{
  echo "FROM $BASE"
  for i in $(seq 1 "$LAYERS"); do
    echo "RUN mkdir -p /data && head -c $(( PER / 2 ))M /dev/urandom > /data/random$i.bin && (seq 1 100000000 | head -c $(( PER / 2 ))M) > /data/text$i.txt"
  done
} > "$WORK/Dockerfile"
echo "building $IMG (~${SIZE_MB} MiB in $LAYERS layers over $BASE)..." >&2
docker build -q -t "$IMG" "$WORK" >/dev/null

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

start_registry() {  # fresh storage and port; sets PORT, REG_PID
  [ -n "$REG_PID" ] && { kill "$REG_PID" 2>/dev/null; wait "$REG_PID" 2>/dev/null || true; }
  PORT=$(free_port)
  local d="$WORK/reg-$PORT"
  mkdir -p "$d/storage"
  printf 'version: 0.1\nlog:\n  level: error\n  accesslog:\n    disabled: true\nstorage:\n  filesystem:\n    rootdirectory: %s\nhttp:\n  addr: 127.0.0.1:%s\n' \
    "$d/storage" "$PORT" > "$d/config.yml"
  docker-registry serve "$d/config.yml" >"$d/log" 2>&1 &
  REG_PID=$!
  for _ in $(seq 1 100); do (exec 3<>/dev/tcp/127.0.0.1/$PORT) 2>/dev/null && return 0; sleep 0.05; done
  echo "registry did not start" >&2; exit 1
}

now() { date +%s.%N; }
declare -A T
record() { T[$1]="${T[$1]:-} $2"; printf '  %-8s run %s: %6.2f s\n' "$1" "$3" "$2" >&2; }

push_docker() {
  docker tag "$IMG" "127.0.0.1:$PORT/bench/docker:r$1"
  local t0; t0=$(now)
  docker push -q "127.0.0.1:$PORT/bench/docker:r$1" >/dev/null
  record docker "$(echo "$(now) - $t0" | bc)" "$1"
  docker rmi -f "127.0.0.1:$PORT/bench/docker:r$1" >/dev/null
}
push_skopeo() {
  local t0; t0=$(now)
  skopeo copy -q --dest-tls-verify=false "docker-daemon:$IMG" "docker://127.0.0.1:$PORT/bench/skopeo:r$1" >/dev/null
  record skopeo "$(echo "$(now) - $t0" | bc)" "$1"
}
push_imgtool() {
  rm -rf "$WORK/cache"
  local t0; t0=$(now)
  IMGTOOL_CACHE="$WORK/cache" "$IMGTOOL" copy "docker-daemon:$IMG" "docker://127.0.0.1:$PORT/bench/imgtool:r$1" >/dev/null
  record imgtool "$(echo "$(now) - $t0" | bc)" "$1"
}

for r in $(seq 1 "$RUNS"); do
  for tool in docker skopeo imgtool; do
    start_registry
    "push_$tool" "$r"
  done
done

# unchanged re-push: same registry and repository as the last imgtool run, warm cache
for r in $(seq 1 5); do
  t0=$(now)
  IMGTOOL_CACHE="$WORK/cache" "$IMGTOOL" copy "docker-daemon:$IMG" "docker://127.0.0.1:$PORT/bench/imgtool:r$RUNS" >/dev/null
  record repush "$(echo "$(now) - $t0" | bc)" "$r"
done

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
D=$(echo "${T[docker]}" | median); S=$(echo "${T[skopeo]}" | median)
I=$(echo "${T[imgtool]}" | median); R=$(echo "${T[repush]}" | median)
echo
echo "publish benchmark: ${SIZE_MB} MiB, $LAYERS layers, $RUNS runs each (median), $(nproc) cores"
printf '  docker push          %7.2f s\n' "$D"
printf '  skopeo copy          %7.2f s\n' "$S"
printf '  imgtool copy         %7.2f s\n' "$I"
printf '  imgtool re-push      %7.3f s   (unchanged image, target <= 0.3 s)\n' "$R"
printf '  imgtool/docker       %7.2f     (target <= 0.33)\n' "$(echo "$I / $D" | bc -l)"
printf '  imgtool/skopeo       %7.2f     (target <= 0.50)\n' "$(echo "$I / $S" | bc -l)"
