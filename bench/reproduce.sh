#!/usr/bin/env bash
# Rebuild = same digest, on the demo's GPU cell (not a test; issue 35): matrix/local-gpu.yaml's cell
# (paddlepaddle-gpu 2.6.2 on the CUDA 11.8 base made from NVIDIA's wheels) generated, built twice
# with `docker build --no-cache`, each copied with `imgtool copy --reproducible <its
# io.imgtool.source-date-epoch>` into an OCI layout; prints both digests, "reproduced" when they are
# one, else `imgtool diff`'s account (the first differing layer and its files), and the seconds.
# The CPU cell's version of this is image/reproducible_integration_test.cc (run by make test).
#
# Disk: two ~7 GB builds in the engine and two ~3 GB layouts under a private temp folder, all
# removed at the end (the CUDA base and the wheelhouse stay cached).
#
# usage: nice -n 10 bench/reproduce.sh        env: IMGTOOL (the binary)
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
source "$HERE/bench/lib.sh"
bench_imgtool reproduce.sh
WORK=$(mktemp -d /tmp/imgtool-bench-reproduce.XXXXXX)
TAG=imgtool-bench/reproduce:$$
cleanup() { docker rmi -f "$TAG-a" "$TAG-b" >/dev/null 2>&1 || true; rm -rf "$WORK"; }
trap cleanup EXIT
"$HERE/scripts/make-cuda-base.sh" 11.8 >&2
IMGTOOL_GPU_WHEELHOUSE=$("$HERE/scripts/wheelhouse.sh" 3.11 paddlepaddle-gpu==2.6.2 numpy==1.26.4 protobuf==3.20.3 | tail -1)
export IMGTOOL_GPU_WHEELHOUSE
"$IMGTOOL" generate "$HERE/matrix/local-gpu.yaml" --out "$WORK/gen" >&2
CELL=$(ls -d "$WORK"/gen/*/ | head -1)
secs() { python3 -c 'import sys,time; print(f"{time.time()-float(sys.argv[1]):.1f}")' "$1"; }
declare -A BUILD COPY DIGEST
for side in a b; do
  t0=$(date +%s.%N)
  docker build -q --no-cache -t "$TAG-$side" "$CELL" >/dev/null
  BUILD[$side]=$(secs "$t0")
  epoch=$(docker image inspect -f '{{index .Config.Labels "io.imgtool.source-date-epoch"}}' "$TAG-$side")
  t0=$(date +%s.%N)
  DIGEST[$side]=$("$IMGTOOL" copy "docker-daemon:$TAG-$side" "oci:$WORK/layout-$side:x" --reproducible "$epoch" | awk '{print $5}')
  COPY[$side]=$(secs "$t0")
  echo "build $side: ${BUILD[$side]} s, reproducible copy ${COPY[$side]} s, ${DIGEST[$side]} (epoch $epoch)"
  sleep 2
done
if [ "${DIGEST[a]}" = "${DIGEST[b]}" ]; then
  echo "reproduced: ${DIGEST[a]}"
else
  echo "NOT reproduced:"
  "$IMGTOOL" diff "oci:$WORK/layout-a:x" "oci:$WORK/layout-b:x" || true
  exit 1
fi
