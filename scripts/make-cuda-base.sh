#!/usr/bin/env bash
# Makes a local stand-in for nvidia/cuda:<CUDA>-cudnn-runtime on top of the local Debian base
# (scripts/make-base.sh), from NVIDIA's own redistributable wheels on PyPI: the same library set
# (cudart, cuBLAS/cuBLASLt, cuFFT, cuRAND, cuSOLVER, cuSPARSE, NVRTC, nvJPEG, NPP, nvJitLink from
# CUDA 12, NVTX -- libnvToolsExt.so.1 to 12.6, libnvtx3interop.so.1 from 12.9 --, NCCL, cuDNN;
# kb/libraries.yaml runtime_sets), for every CUDA line matrix/kb/cuda_wheels.yaml
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
# prints the image ID on the last line. --fetch only fills the wheelhouse and makes the files layer
# ahead (scripts/cuda-files-layer.py; no base image needed: the demo does it while debootstrap
# runs) and prints the wheelhouse's folder.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
FETCH_ONLY=0; [ "${1:-}" = --fetch ] && { FETCH_ONLY=1; shift; }
[ $# -ge 1 ] || { echo "usage: $0 [--fetch] CUDA [TAG] [BASE]" >&2; exit 2; }
CUDA=$1
BASE=${3:-${IMGTOOL_TEST_BASE:-imgtool-base/debian:bookworm-py3}}
KB=${IMGTOOL_KB:-$ROOT/matrix/kb}/cuda_wheels.yaml
RECIPE=$ROOT/dockerfiles/bases/cuda-runtime.Dockerfile
SCRIPT_VERSION=5

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
# Hash-locked (issue 35): every pinned wheel must be a file PyPI lists for that release, by sha256
# (matrix/kb/cuda_wheels.lock, scripts/lock-cuda-wheels.py); checked before any of its files is used.
LOCK=$(dirname "$KB")/cuda_wheels.lock
check_lock() { python3 "$ROOT/scripts/lock-cuda-wheels.py" check "$LOCK" "$WHEELS" $PINS || exit 2; }
CACHE=${IMGTOOL_CACHE:-$HOME/.cache/imgtool}
LAYER_TOOL=$ROOT/scripts/cuda-files-layer.py
# The files layer made ahead (--fetch, while the Debian base is still being made), by the
# wheelhouse it came from and the tool that made it (a changed tool never hands over an older
# layer); the build takes it (a rename: one taker) and removes it when done.
AHEAD=$CACHE/cuda-context/$(basename "$WHEELS")-$CUDA-$(sha256sum "$LAYER_TOOL" | cut -c1-12)

if [ "$FETCH_ONLY" = 1 ]; then
  # Ahead unless the tag already holds these wheels (then the build most likely has nothing to do).
  have_pins=$(docker image inspect -f '{{ index .Config.Labels "io.imgtool.base.wheels" }}' "$TAG" 2>/dev/null || true)
  if [ "$have_pins" != "$PINS" ] && [ ! -d "$AHEAD" ]; then
    check_lock
    mkdir -p "$CACHE/cuda-context"
    tmp=$(mktemp -d "$CACHE/cuda-context/.layer.XXXXXX")
    if python3 "$LAYER_TOOL" layer "$WHEELS" "$CUDA" "$tmp"; then
      mv -T "$tmp" "$AHEAD" 2>/dev/null || rm -rf "$tmp"
    else
      rm -rf "$tmp"; echo "make-cuda-base: cannot make the files layer from $WHEELS" >&2; exit 1
    fi
  fi
  echo "$WHEELS"; exit 0
fi
BASE_ID=$(docker image inspect -f '{{.Id}}' "$BASE" 2>/dev/null) \
  || { echo "make-cuda-base: base image $BASE not found; fix: scripts/make-base.sh $BASE" >&2; exit 2; }
KEY=$( { printf '%s\n' "$CUDA" "$CUDA_FULL" "$CUDNN_FULL" "$PINS" "$BASE_ID" "$SCRIPT_VERSION"; cat "$RECIPE" "$LAYER_TOOL"; } \
       | sha256sum | cut -c1-16)

have=$(docker image inspect -f '{{ index .Config.Labels "imgtool.base.key" }}' "$TAG" 2>/dev/null || true)
if [ "$have" = "$KEY" ]; then docker image inspect -f '{{.Id}}' "$TAG"; exit 0; fi

# Work folder beside the cache (the layer is GBs: not a tmpfs /tmp).
mkdir -p "$CACHE/cuda-context"
CTX=$(mktemp -d "$CACHE/cuda-context/.build.XXXXXX")
FILES_TAG=imgtool-base/cuda-files:$KEY
trap 'rm -rf "$CTX"; docker image rm "$FILES_TAG" >/dev/null 2>&1 || true' EXIT
echo "make-cuda-base: building $TAG (CUDA $CUDA_FULL, cuDNN $CUDNN_FULL) from $PINS" >&2
# 1. the files: one layer on the base, written by docker load straight into the engine's layer store.
check_lock
if ! mv -T "$AHEAD" "$CTX/image" 2>/dev/null; then
  python3 "$LAYER_TOOL" layer "$WHEELS" "$CUDA" "$CTX/image" \
    || { echo "make-cuda-base: cannot make the files layer from $WHEELS" >&2; exit 1; }
fi
docker save "$BASE" | tar -xO -f - "${BASE_ID#sha256:}.json" >"$CTX/base-config.json" \
  || { echo "make-cuda-base: cannot read the config of $BASE (docker save)" >&2; exit 1; }
python3 "$LAYER_TOOL" image "$CTX/image" "$CTX/base-config.json" "$FILES_TAG"
tar -C "$CTX/image" -cf - . | docker load -q >/dev/null \
  || { echo "make-cuda-base: docker load of the files layer failed" >&2; exit 1; }
rm -rf "$CTX/image"
# 2. the recipe on top: the loader's configuration, nvidia/cuda's env and labels. The labels are
# build args of its one LABEL: a --label each would be one more step of the classic builder.
cp "$RECIPE" "$CTX/Dockerfile"
MAJOR=${CUDA%%.*}
DOCKER_BUILDKIT=0 docker build -q -t "$TAG" \
  --build-arg BASE="$FILES_TAG" --build-arg CUDA_MM="$CUDA" --build-arg CUDA_FULL="$CUDA_FULL" \
  --build-arg CUDNN_FULL="$CUDNN_FULL" --build-arg REQUIRE="cuda>=$CUDA" \
  --build-arg BASE_KEY="$KEY" --build-arg PINS="$PINS" --build-arg CUDA_MAJOR="$MAJOR" \
  "$CTX" >/dev/null
docker image inspect -f '{{.Id}}' "$TAG"
