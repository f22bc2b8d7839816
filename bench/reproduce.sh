#!/usr/bin/env bash
# Rebuild = same digest, on the demo's published images (not a test; issue 35): each tag of the
# demo's OCI layout (out/layout: the registry's bytes, copied by make demo) reproduced with
# `imgtool reproduce` -- its cell generated again from the demo's matrix, rebuilt with `docker build
# --no-cache`, normalized with the image's epoch and compared. Prints each outcome and the seconds;
# exit 1 when one is not reproduced. The GPU cell (paddlepaddle-gpu 2.6.2 on the CUDA 11.8 base made
# from NVIDIA's wheels) is the one this is for; the CPU cell's is reproduce_integration_test.
#
# Disk: one ~7 GB rebuild in the engine and its ~3 GB normalized copy under the imgtool cache, both
# removed when each tag is done (the CUDA base and the wheelhouses stay cached).
#
# usage: nice -n 10 bench/reproduce.sh [TAG…]   (default: every tag in $OUT/layout)
#   env: IMGTOOL (the binary), OUT (default out), IMGTOOL_WHEELHOUSE / IMGTOOL_GPU_WHEELHOUSE / IMGTOOL_TEST_BASE
#        as make demo set them (default: the same wheelhouse.sh requests)
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
source "$HERE/bench/lib.sh"
bench_imgtool reproduce.sh
OUT=${OUT:-$HERE/out}
[ -f "$OUT/layout/index.json" ] || { echo "reproduce.sh: no $OUT/layout; run make demo first" >&2; exit 2; }
export IMGTOOL_WHEELHOUSE=${IMGTOOL_WHEELHOUSE:-$("$HERE/scripts/wheelhouse.sh" 3.11 paddlepaddle==3.3.1 | tail -1)}
export IMGTOOL_GPU_WHEELHOUSE=${IMGTOOL_GPU_WHEELHOUSE:-$("$HERE/scripts/wheelhouse.sh" 3.11 paddlepaddle-gpu==2.6.2 numpy==1.26.4 protobuf==3.20.3 | tail -1)}
TAGS=("$@")
[ ${#TAGS[@]} -gt 0 ] || mapfile -t TAGS < <(python3 -c '
import json, sys
for m in json.load(open(sys.argv[1]))["manifests"]:
    t = (m.get("annotations") or {}).get("org.opencontainers.image.ref.name")
    if t: print(t)' "$OUT/layout/index.json")
rc=0
for tag in "${TAGS[@]}"; do
  matrix=$HERE/matrix/local.yaml
  case "$tag" in *gpu*) matrix=$HERE/matrix/local-gpu.yaml ;; esac
  t0=$(date +%s.%N)
  "$IMGTOOL" reproduce "oci:$OUT/layout:$tag" --matrix "$matrix" -q || rc=1
  python3 -c 'import sys,time; print(f"{sys.argv[2]}: {time.time()-float(sys.argv[1]):.1f} s (rebuild --no-cache, normalize, compare)")' "$t0" "$tag"
done
exit $rc
