#!/usr/bin/env bash
# Reproducible-copy benchmark (not a test; issue 35): what normalization costs on a publish-sized
# copy. One local image copied into a loopback docker-registry, interleaved, BENCH_RUNS each
# (default 3), every run into a fresh repository (no blob skipped as already there):
#   plain, warm     `imgtool copy` as a re-publish: the layer cache holds every layer
#   plain, cold     `imgtool copy` with an empty cache: every layer compressed (a first publish)
#   repro, warm     `imgtool copy --reproducible EPOCH`, the image normalized before: every layer
#                   from the normalized-layer cache (image/normalized_cache.h)
#   repro, renorm   the same with --renormalize (the source's compressed layers still cached): every
#                   layer read, put in path order and gzip'd again
#   repro, cold     `--reproducible` with an empty cache: the save stream's layer tars normalized as they
#                   come, each layer compressed once (image/normalize.h)
#   skopeo          `skopeo copy`, for scale (what a user would otherwise run), each run into a registry
#                   of its own: its blob-info cache would find what its earlier run put in a shared
#                   one and skip compressing and uploading it
# Medians, and the ratios reproducible / plain against the target (<= 1.1x): warm to warm (a
# re-publish) and cold to cold (a first publish).
#
# usage: nice -n 10 bench/reproducible.sh
#   env: BENCH_IMAGE (default: the largest local image labelled io.imgtool.source-date-epoch, else
#        io.imgtool.paddle), BENCH_RUNS (3), IMGTOOL (the binary), BENCH_EPOCH (default: the image's
#        io.imgtool.source-date-epoch, else 1767225600)
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
RUNS=${BENCH_RUNS:-3}
source "$HERE/bench/lib.sh"
bench_imgtool reproducible.sh
largest() {
  docker images --filter "label=$1" --format '{{.Size}} {{.Repository}}:{{.Tag}}' | grep -v '<none>' |
    sort -h | tail -1 | cut -d' ' -f2
}
IMAGE=${BENCH_IMAGE:-$(largest io.imgtool.source-date-epoch)}
[ -n "$IMAGE" ] || IMAGE=$(largest io.imgtool.paddle)
[ -n "$IMAGE" ] || { echo "reproducible.sh: no local imgtool image; run make demo or set BENCH_IMAGE" >&2; exit 2; }
EPOCH=${BENCH_EPOCH:-$(docker image inspect -f '{{index .Config.Labels "io.imgtool.source-date-epoch"}}' "$IMAGE")}
EPOCH=${EPOCH:-1767225600}
WORK=$(mktemp -d /tmp/imgtool-bench-repro.XXXXXX)
REG_PID= SKOPEO_PID=
cleanup() { kill $REG_PID $SKOPEO_PID 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT
bench_registry "$WORK/registry"
secs() { local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null 2>"$WORK/err" || { cat "$WORK/err" >&2; exit 1; }; t1=$(date +%s.%N); python3 -c "print(f'{$t1-$t0:.2f}')"; }
echo "image: $IMAGE ($(docker image inspect -f '{{.Size}}' "$IMAGE" | awk '{printf "%.2f GB", $1/1e9}')), epoch $EPOCH, $RUNS runs"
# Warm-up (untimed): the shared layer cache holds the image's layers and its normalized ones.
secs "$IMGTOOL" copy "docker-daemon:$IMAGE" "docker://127.0.0.1:$PORT/warm/p:t" >/dev/null
secs "$IMGTOOL" copy "docker-daemon:$IMAGE" "docker://127.0.0.1:$PORT/warm/p:r" --reproducible "$EPOCH" >/dev/null
declare -A T
for i in $(seq "$RUNS"); do
  T[plain_warm]+=" $(secs "$IMGTOOL" copy "docker-daemon:$IMAGE" "docker://127.0.0.1:$PORT/plain$i/p:t")"
  T[repro_warm]+=" $(secs "$IMGTOOL" copy "docker-daemon:$IMAGE" "docker://127.0.0.1:$PORT/repro$i/p:t" --reproducible "$EPOCH")"
  T[repro_renorm]+=" $(secs "$IMGTOOL" copy "docker-daemon:$IMAGE" "docker://127.0.0.1:$PORT/renorm$i/p:t" --reproducible "$EPOCH" --renormalize)"
  mkdir -m 700 "$WORK/cache$i"  # an empty cache: every layer compressed, as on a first publish
  T[plain_cold]+=" $(IMGTOOL_CACHE=$WORK/cache$i secs "$IMGTOOL" copy "docker-daemon:$IMAGE" "docker://127.0.0.1:$PORT/cold$i/p:t")"
  rm -rf "$WORK/cache$i" && mkdir -m 700 "$WORK/cache$i"
  T[repro_cold]+=" $(IMGTOOL_CACHE=$WORK/cache$i secs "$IMGTOOL" copy "docker-daemon:$IMAGE" "docker://127.0.0.1:$PORT/rcold$i/p:t" --reproducible "$EPOCH")"
  rm -rf "$WORK/cache$i"
  if command -v skopeo >/dev/null; then
    MAIN_PORT=$PORT MAIN_PID=$REG_PID
    bench_registry "$WORK/skopeo$i" && SKOPEO_PID=$REG_PID REG_PID=$MAIN_PID
    T[skopeo]+=" $(secs skopeo copy -q --dest-tls-verify=false "docker-daemon:$IMAGE" "docker://127.0.0.1:$PORT/skopeo$i/p:t")"
    kill "$SKOPEO_PID" && wait "$SKOPEO_PID" 2>/dev/null || true
    SKOPEO_PID= PORT=$MAIN_PORT
    rm -rf "$WORK/skopeo$i"
  fi
done
python3 - "${T[plain_warm]}" "${T[plain_cold]}" "${T[repro_warm]}" "${T[repro_renorm]}" "${T[repro_cold]}" "${T[skopeo]:-}" <<'PY'
import statistics, sys
names = ["plain, warm cache", "plain, cold cache", "repro, warm cache", "repro, renormalized", "repro, cold cache", "skopeo copy"]
runs = [[float(x) for x in a.split()] for a in sys.argv[1:]]
m = [statistics.median(r) if r else None for r in runs]
for n, r, med in zip(names, runs, m):
    if r: print(f"{n:<22} median {med:7.2f} s  {r}")
ok = lambda r: "met" if r <= 1.1 else "MISSED"
print(f"reproducible / plain (target <= 1.1x): re-publish {m[2]/m[0]:.2f}x (warm / warm: {ok(m[2]/m[0])}), "
      f"first publish {m[4]/m[1]:.2f}x (cold / cold: {ok(m[4]/m[1])}); renormalized / plain warm {m[3]/m[0]:.2f}x")
PY
