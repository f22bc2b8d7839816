#!/usr/bin/env bash
# Makes a local stand-in for nvidia/cuda:<CUDA>-cudnn-runtime on top of the local Debian base
# (scripts/make-base.sh), from NVIDIA's own redistributable wheels on PyPI: the same library set
# (cudart, cuBLAS/cuBLASLt, cuFFT, cuRAND, cuSOLVER, cuSPARSE, NVRTC, nvJPEG, NPP, nvJitLink from
# CUDA 12, NCCL, cuDNN; kb/libraries.yaml runtime_sets), for every CUDA line matrix/kb/cuda_wheels.yaml
# pins (11.8, 12.6, 12.9, 13.0, 13.5). The wheels are fetched on the host by scripts/wheelhouse.sh
# (cached under ~/.cache/imgtool/wheelhouse/<key>); the recipe is dockerfiles/bases/cuda-runtime.Dockerfile.
# `imgtool verify docker-daemon:TAG --no-signature --no-smoke` checks the result: every library
# resolves through the loader at its pinned version (rows base.<lib>).
# The image carries the label imgtool.base.key = hash of every input (pins, recipe, base image
# ID, this script): a second run with the same inputs builds nothing.
#
# usage: scripts/make-cuda-base.sh [--fetch] CUDA [TAG] [BASE]
#   e.g. scripts/make-cuda-base.sh 11.8   -> imgtool-base/cuda:11.8-cudnn8-runtime-bookworm
#        scripts/make-cuda-base.sh 13.0   -> imgtool-base/cuda:13.0-cudnn9-runtime-bookworm
# prints the image ID on the last line. --fetch only fills the wheelhouse and unpacks the build
# context ahead (no base image needed: the demo does it while debootstrap runs) and prints the
# wheelhouse's folder.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
FETCH_ONLY=0; [ "${1:-}" = --fetch ] && { FETCH_ONLY=1; shift; }
[ $# -ge 1 ] || { echo "usage: $0 [--fetch] CUDA [TAG] [BASE]" >&2; exit 2; }
CUDA=$1
BASE=${3:-${IMGTOOL_TEST_BASE:-imgtool-base/debian:bookworm-py3}}
KB=${IMGTOOL_KB:-$ROOT/matrix/kb}/cuda_wheels.yaml
RECIPE=$ROOT/dockerfiles/bases/cuda-runtime.Dockerfile
SCRIPT_VERSION=4

# "cuda_full cudnn_full pkg==ver..." for this CUDA, or one clear line and exit 2.
read -r CUDA_FULL CUDNN_FULL PINS < <(python3 - "$KB" "$CUDA" <<'PY'
import sys, yaml
kb, cuda = sys.argv[1], sys.argv[2]
rows = (yaml.safe_load(open(kb)) or {}).get("cuda_wheels") or []
for r in rows:
    if str(r.get("cuda")) == cuda:
        pins = " ".join(f'{w["package"]}=={w["version"]}' for w in r["wheels"])
        print(r["cuda_full"], r["cudnn"], pins)
        break
else:
    have = ", ".join(str(r.get("cuda")) for r in rows) or "none"
    print(f"{kb}: no cuda_wheels entry for CUDA {cuda} (have: {have})", file=sys.stderr)
    sys.exit(2)
PY
) || exit 2
[ -n "${PINS:-}" ] || exit 2
CUDNN_MAJOR=${CUDNN_FULL%%.*}
TAG=${2:-imgtool-base/cuda:$CUDA-cudnn$CUDNN_MAJOR-runtime-bookworm}

# shellcheck disable=SC2086
WHEELS=$("$ROOT/scripts/wheelhouse.sh" 3.11 $PINS | tail -1)
CACHE=${IMGTOOL_CACHE:-$HOME/.cache/imgtool}
# The build context unpacked ahead (--fetch, while the Debian base is still being made), by the
# wheelhouse it came from; the build takes it (a rename: one taker) and removes it when done.
UNPACKED=$CACHE/cuda-context/$(basename "$WHEELS")
LIB=targets/x86_64-linux/lib

unpack() {  # unpack DIR: the wheels' libraries as /usr/local/cuda-X.Y/ will hold them
  mkdir -p "$1/cuda/redist" "$1/cuda/$LIB"
  local pids=() p w
  for w in "$WHEELS"/nvidia_*.whl; do python3 -m zipfile -e "$w" "$1/cuda/redist/" & pids+=($!); done
  for p in "${pids[@]}"; do wait "$p" || { echo "make-cuda-base: cannot unpack a wheel of $WHEELS" >&2; return 1; }; done
  ( cd "$1/cuda"
    for f in redist/nvidia/*/lib/lib*.so*; do ln -s "../../../$f" "$LIB/"; done
    ln -s "$LIB" lib64
    find redist -name '__pycache__' -prune -exec rm -rf {} + )
}

if [ "$FETCH_ONLY" = 1 ]; then
  # Unpack ahead unless the tag already holds these wheels (then the build most likely has nothing to do).
  have_pins=$(docker image inspect -f '{{ index .Config.Labels "io.imgtool.base.wheels" }}' "$TAG" 2>/dev/null || true)
  if [ "$have_pins" != "$PINS" ] && [ ! -d "$UNPACKED" ]; then
    mkdir -p "$CACHE/cuda-context"
    tmp=$(mktemp -d "$CACHE/cuda-context/.unpack.XXXXXX")
    if unpack "$tmp"; then mv -T "$tmp" "$UNPACKED" 2>/dev/null || rm -rf "$tmp"; else rm -rf "$tmp"; exit 1; fi
  fi
  echo "$WHEELS"; exit 0
fi
BASE_ID=$(docker image inspect -f '{{.Id}}' "$BASE" 2>/dev/null) \
  || { echo "make-cuda-base: base image $BASE not found; fix: scripts/make-base.sh $BASE" >&2; exit 2; }
KEY=$( { printf '%s\n' "$CUDA" "$CUDA_FULL" "$CUDNN_FULL" "$PINS" "$BASE_ID" "$SCRIPT_VERSION"; cat "$RECIPE"; } \
       | sha256sum | cut -c1-16)

have=$(docker image inspect -f '{{ index .Config.Labels "imgtool.base.key" }}' "$TAG" 2>/dev/null || true)
if [ "$have" = "$KEY" ]; then docker image inspect -f '{{.Id}}' "$TAG"; exit 0; fi

CTX=$(mktemp -d "${TMPDIR:-/tmp}/imgtool-cuda-base.XXXXXX")
trap 'rm -rf "$CTX"' EXIT
if mv -T "$UNPACKED" "$CTX/ahead" 2>/dev/null; then
  mv "$CTX/ahead/cuda" "$CTX/cuda" && rmdir "$CTX/ahead"
else
  unpack "$CTX" || exit 1
fi
cp "$RECIPE" "$CTX/Dockerfile"
echo "make-cuda-base: building $TAG (CUDA $CUDA_FULL, cuDNN $CUDNN_FULL) from $PINS" >&2
MAJOR=${CUDA%%.*}
# The labels are build args of the recipe's one LABEL: a --label each would be one more step of
# the classic builder (a container created and committed on a 3.7 GB image).
DOCKER_BUILDKIT=0 docker build -q -t "$TAG" \
  --build-arg BASE="$BASE" --build-arg CUDA_MM="$CUDA" --build-arg CUDA_FULL="$CUDA_FULL" \
  --build-arg CUDNN_FULL="$CUDNN_FULL" --build-arg REQUIRE="cuda>=$CUDA" \
  --build-arg BASE_KEY="$KEY" --build-arg PINS="$PINS" --build-arg CUDA_MAJOR="$MAJOR" \
  "$CTX" >/dev/null
docker image inspect -f '{{.Id}}' "$TAG"
