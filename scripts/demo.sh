#!/usr/bin/env bash
# The main job on the embedded default (`make demo`):
#   0. the fixtures, side by side (`scripts/demo.sh --fixtures`; make demo runs that beside the
#      compile): the Debian base (debootstrap), the CPU and GPU wheelhouses and NVIDIA's wheels
#      (downloads), then the CUDA base on the Debian base; each cached by its inputs;
#   1. a loopback docker-registry on a free port, storage in a temp folder;
#   2. a signing key pair in a temp folder (private key 0600);
#   3. ONE imgtool nightly over matrix/local.yaml (the CPU cell) and matrix/local-gpu.yaml (PyPI
#      paddlepaddle-gpu 2.6.2 on the CUDA 11.8 base scripts/make-cuda-base.sh makes from NVIDIA's
#      PyPI wheels), both cells built at once (-j 2), then each smoked, gated, pushed by digest,
#      signed and tagged (--reproducible: each image normalized, so a rebuild gives the same digest);
#      on a host without a GPU the smoke runs with --no-gpu-host (gpu images
#      judged up to the driver; the report says the GPU part was not run);
#   4. an OCI layout copy of the published images (out/layout) and, side by side,
#   5. signature + claims check of the published tags (imgtool verify);
#   6. the same nightly again: nothing changed, so no build/smoke/push (timed);
#   7. imgtool reproduce of the CPU tag: rebuilt with --no-cache, normalized, the same digest;
#   then a one-screen summary and where the report is. Exits non-zero if any step fails.
#
# Environment: BUILD (build folder, default build), OUT (default out), KEEP_REGISTRY=1 to
# leave the registry running (its address is printed), IMGTOOL_STATE (state folder;
# default the imgtool cache, so later runs are incremental).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
OUT=${OUT:-$ROOT/out}
IMGTOOL=${IMGTOOL:-$BUILD/cli/imgtool}
KEEP_REGISTRY=${KEEP_REGISTRY:-0}
MATRIX=$ROOT/matrix/local.yaml
GPU_MATRIX=$ROOT/matrix/local-gpu.yaml
# No NVIDIA GPU here (no nvidia-smi answering): GPU cells are smoke-tested up to the driver.
GPU_HOST_ARGS=(); nvidia-smi -L >/dev/null 2>&1 || GPU_HOST_ARGS=(--no-gpu-host)
STATE_ARGS=(); [ -n "${IMGTOOL_STATE:-}" ] && STATE_ARGS=(--state "$IMGTOOL_STATE")

die() { echo "demo: $*" >&2; exit 1; }
step() { echo; echo "== $*"; }

CPU_WHEELS=(3.11 paddlepaddle==3.3.1)
GPU_WHEELS=(3.11 paddlepaddle-gpu==2.6.2 numpy==1.26.4 protobuf==3.20.3)
BASE=${IMGTOOL_TEST_BASE:-imgtool-base/debian:bookworm-py3}
# Side by side: debootstrap (the longest) and the downloads; then the CUDA base, which needs the
# Debian base and NVIDIA's wheels. Cached by their inputs: a second run only checks.
fixtures() {
  local pids=() rc=0 p
  "$ROOT/scripts/make-base.sh" "$BASE" >/dev/null & pids+=($!)
  "$ROOT/scripts/wheelhouse.sh" "${CPU_WHEELS[@]}" >/dev/null & pids+=($!)
  "$ROOT/scripts/wheelhouse.sh" "${GPU_WHEELS[@]}" >/dev/null & pids+=($!)
  "$ROOT/scripts/make-cuda-base.sh" --fetch 11.8 >/dev/null & pids+=($!)
  for p in "${pids[@]}"; do wait "$p" || rc=1; done
  [ "$rc" = 0 ] || die "a fixture failed (its error is above)"
  "$ROOT/scripts/make-cuda-base.sh" 11.8 >/dev/null || die "the CUDA base failed (its error is above)"
}
if [ "${1:-}" = --fixtures ]; then fixtures; exit 0; fi

[ -x "$IMGTOOL" ] || die "expected the imgtool binary at $IMGTOOL, found none; fix: make build"
command -v docker-registry >/dev/null || die "docker-registry is not installed; fix: make deps"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/imgtool-demo.XXXXXX")
REG_PID=""
cleanup() {
  if [ -n "$REG_PID" ] && [ "$KEEP_REGISTRY" != 1 ]; then kill "$REG_PID" 2>/dev/null || true; wait "$REG_PID" 2>/dev/null || true; fi
  if [ "$KEEP_REGISTRY" != 1 ]; then rm -rf "$TMP"; fi
}
trap cleanup EXIT

step "loopback registry"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir -p "$TMP/registry"
cat > "$TMP/registry/config.yml" <<YAML
version: 0.1
log: {level: warn}
storage: {filesystem: {rootdirectory: $TMP/registry/data}, delete: {enabled: true}}
http: {addr: 127.0.0.1:$PORT}
YAML
docker-registry serve "$TMP/registry/config.yml" >"$TMP/registry/registry.log" 2>&1 &
REG_PID=$!
for _ in $(seq 1 50); do curl -fsS "http://127.0.0.1:$PORT/v2/" >/dev/null 2>&1 && break; sleep 0.2; done
curl -fsS "http://127.0.0.1:$PORT/v2/" >/dev/null || die "registry did not start; log: $TMP/registry/registry.log"
REGISTRY=127.0.0.1:$PORT/ai
echo "registry $REGISTRY (pid $REG_PID, storage $TMP/registry/data)"

step "signing key"
mkdir -m 700 "$TMP/keys"
"$IMGTOOL" keygen --out "$TMP/keys/release" >/dev/null
echo "key $TMP/keys/release.key ($(stat -c %a "$TMP/keys/release.key")), public $TMP/keys/release.pub"

step "fixtures: base images + wheelhouses"
fixtures
IMGTOOL_WHEELHOUSE=$("$ROOT/scripts/wheelhouse.sh" "${CPU_WHEELS[@]}" | tail -1)
IMGTOOL_GPU_WHEELHOUSE=$("$ROOT/scripts/wheelhouse.sh" "${GPU_WHEELS[@]}" | tail -1)
export IMGTOOL_WHEELHOUSE IMGTOOL_GPU_WHEELHOUSE
echo "wheelhouses $IMGTOOL_WHEELHOUSE $IMGTOOL_GPU_WHEELHOUSE"
echo "bases $BASE, imgtool-base/cuda:11.8-cudnn8-runtime-bookworm"

step "nightly: the CPU and the GPU cell${GPU_HOST_ARGS[*]:+ (${GPU_HOST_ARGS[*]})}"
REPORT=$OUT/demo
t0=$(date +%s.%N)
"$IMGTOOL" nightly "$MATRIX" "$GPU_MATRIX" --registry "$REGISTRY" --key "$TMP/keys/release.key" --report "$REPORT" -j 2 \
  --reproducible "${GPU_HOST_ARGS[@]}" "${STATE_ARGS[@]}" || die "nightly failed; report: $REPORT/report.md"
t1=$(date +%s.%N)

# The published cells, as "repository tag digest" lines.
mapfile -t PUBLISHED < <(python3 - "$REPORT/nightly.json" <<'PY'
import json, sys
cells = json.load(open(sys.argv[1]))["cells"]
for c in cells:
    if c["ok"]:
        ref = c["publish"]["ref"]            # HOST/NS/REPO:TAG
        host = (c["smoke"].get("evidence") or {}).get("host", "none")
        what = "smoke evidence: %s" % host
        if c["variant"] == "gpu" and host != "hardware":
            what = "GPU part never ran on hardware (smoke evidence: %s); promote refuses it without a GPU host's smoke" % host
        # the verify policy: a gpu cell whose GPU part never ran on hardware is judged without
        # hardware evidence (said in its output), everything else under the default policy
        policy = "relaxed" if c["variant"] == "gpu" and host != "hardware" else "default"
        print(ref.rsplit(":", 1)[0], c["tag"], c["publish"]["digest"], policy, what)
PY
)
[ ${#PUBLISHED[@]} -gt 0 ] || die "no cell was published; report: $REPORT/report.md"

# The OCI layout copies and the verifies read the registry side by side (each its own output file);
# a failure of any fails the demo, with its output.
step "OCI layout copy, and verify the published tags (signature + claims, no GPU smoke)"
pids=(); outs=(); done_lines=()
for line in "${PUBLISHED[@]}"; do
  read -r repo tag digest policy _ <<<"$line"
  policy_args=()
  [ "$policy" = relaxed ] && policy_args=(--allow-without-gpu-smoke)
  "$IMGTOOL" copy "docker://$repo:$tag" "oci:$OUT/layout:$tag" >"$TMP/copy-$tag.txt" 2>&1 &
  pids+=($!); outs+=("$TMP/copy-$tag.txt"); done_lines+=("oci:$OUT/layout:$tag")
  "$IMGTOOL" verify "docker://$repo:$tag" --key "$TMP/keys/release.pub" --no-smoke "${policy_args[@]}" \
    >"$TMP/verify-$tag.txt" 2>&1 &
  pids+=($!); outs+=("$TMP/verify-$tag.txt"); done_lines+=("docker://$repo:$tag verified")
done
for i in "${!pids[@]}"; do
  wait "${pids[$i]}" || { cat "${outs[$i]}"; die "failed: ${done_lines[$i]% verified} (output above)"; }
  echo "${done_lines[$i]}"
done

step "nightly again (nothing changed)"
t2=$(date +%s.%N)
"$IMGTOOL" nightly "$MATRIX" "$GPU_MATRIX" --registry "$REGISTRY" --key "$TMP/keys/release.key" --report "$OUT/demo-noop" \
  -j 2 --reproducible "${GPU_HOST_ARGS[@]}" "${STATE_ARGS[@]}" >/dev/null || die "no-op nightly failed; report: $OUT/demo-noop/report.md"
t3=$(date +%s.%N)
NOOP_BUILDS=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["docker_builds"])' "$OUT/demo-noop/nightly.json")

# Rebuild = same digest: the CPU tag rebuilt with --no-cache from the matrix, normalized, compared.
step "reproduce the CPU tag (docker build --no-cache, normalize, compare digests)"
for line in "${PUBLISHED[@]}"; do
  read -r repo tag _ <<<"$line"
  case "$tag" in *gpu*) continue ;; esac
  "$IMGTOOL" reproduce "docker://$repo:$tag" --matrix "$MATRIX" -q | tee "$TMP/reproduce-$tag.txt" \
    || die "the published $tag is not what the matrix builds (above)"
done

step "summary"
sed -n '1,/^## /p' "$REPORT/report.md" | sed '$d'
for f in "$TMP"/verify-*gpu*.txt; do [ -f "$f" ] && { echo "imgtool verify of the GPU cell:"; cat "$f"; }; done
python3 -c 'import sys; a=[float(x) for x in sys.argv[1:5]]
print("nightly: %.1f s; no-op nightly: %.1f s with %s docker build(s)" % (a[1]-a[0], a[3]-a[2], sys.argv[5]))' \
  "$t0" "$t1" "$t2" "$t3" "$NOOP_BUILDS"
for line in "${PUBLISHED[@]}"; do read -r repo tag digest _ what <<<"$line"; echo "published $repo:$tag @ $digest (signed; $what)"; done
echo "report: $REPORT/report.html  ($REPORT/report.md, nightly.json, junit.xml, logs/)"
[ -d "$OUT/layout" ] && echo "OCI layout: $OUT/layout"
if [ "$KEEP_REGISTRY" = 1 ]; then echo "registry left running: $REGISTRY (pid $REG_PID, folder $TMP)"; fi
