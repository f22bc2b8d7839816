#!/usr/bin/env bash
# Reproducible-copy benchmark (not a test; issue 35): what normalization costs on a publish-sized
# copy. One local image copied into a loopback docker-registry, interleaved, BENCH_RUNS each
# (default 3): `imgtool copy` as the nightly publishes today (with its layer cache warm, and with
# an empty one: every layer compressed, as on a first publish), and `imgtool copy --reproducible
# EPOCH` (each layer read once, spooled, written in path order, gzip'd by the same compressor), and
# for scale `skopeo copy` (what a user would otherwise run). Medians and the ratio
# reproducible / plain against the target (<= 1.1x). Every run writes a fresh repository, so no
# blob is skipped as already there.
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
REG_PID=
cleanup() { [ -z "$REG_PID" ] || kill "$REG_PID" 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT
bench_registry "$WORK/registry"
secs() { local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null 2>"$WORK/err" || { cat "$WORK/err" >&2; exit 1; }; t1=$(date +%s.%N); python3 -c "print(f'{$t1-$t0:.2f}')"; }
plain=() cold=() repro=() skopeo_t=()
echo "image: $IMAGE ($(docker image inspect -f '{{.Size}}' "$IMAGE" | awk '{printf "%.2f GB", $1/1e9}')), epoch $EPOCH, $RUNS runs"
for i in $(seq "$RUNS"); do
  plain+=("$(secs "$IMGTOOL" copy "docker-daemon:$IMAGE" "docker://127.0.0.1:$PORT/plain$i/p:t")")
  mkdir -m 700 "$WORK/cache$i"  # an empty layer cache: every layer compressed, as on a first publish
  cold+=("$(IMGTOOL_CACHE=$WORK/cache$i secs "$IMGTOOL" copy "docker-daemon:$IMAGE" "docker://127.0.0.1:$PORT/cold$i/p:t")")
  rm -rf "$WORK/cache$i"
  repro+=("$(secs "$IMGTOOL" copy "docker-daemon:$IMAGE" "docker://127.0.0.1:$PORT/repro$i/p:t" --reproducible "$EPOCH")")
  if command -v skopeo >/dev/null; then
    skopeo_t+=("$(secs skopeo copy -q --dest-tls-verify=false "docker-daemon:$IMAGE" "docker://127.0.0.1:$PORT/skopeo$i/p:t")")
  fi
done
python3 - "${plain[*]}" "${repro[*]}" "${skopeo_t[*]:-}" "${cold[*]}" <<'PY'
import statistics, sys
p, r = [float(x) for x in sys.argv[1].split()], [float(x) for x in sys.argv[2].split()]
s = [float(x) for x in sys.argv[3].split()] if sys.argv[3].strip() else []
c = [float(x) for x in sys.argv[4].split()]
mp, mr, mc = statistics.median(p), statistics.median(r), statistics.median(c)
print(f"imgtool copy (layer cache)   median {mp:6.2f} s  {p}")
print(f"imgtool copy (cold cache)    median {mc:6.2f} s  {c}")
print(f"imgtool copy --reproducible  median {mr:6.2f} s  {r}")
if s: print(f"skopeo copy                  median {statistics.median(s):6.2f} s  {s}")
print(f"reproducible / plain: {mr/mp:.2f}x with the layer cache, {mr/mc:.2f}x against a cold one (target <= 1.1x)")
PY
