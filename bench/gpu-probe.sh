#!/usr/bin/env bash
# Runs the smoke probe (smoke/probe/probe.py) directly on a GPU machine -- no
# Docker needed, a Python with CUDA libraries is enough -- and compares, in the
# same run and at the same sizes and precisions, its numbers with PyTorch:
#   bandwidth: probe copy kernel      vs  dst.copy_(src)      (device-to-device)
#   GEMM FP16: cublasGemmEx FP16/FP32 vs  torch.matmul(fp16)  (FP32 accumulate)
#   GEMM FP32: cublasSgemm            vs  torch.matmul(fp32)  (TF32 disabled)
# Byte convention for bandwidth (both sides): bytes read + bytes written, i.e.
# a copy of an N-byte array counts 2N. Times: CUDA events around each
# repetition, warm-up excluded, median of REPS. Target: probe >= 90% of torch.
#
# usage: bench/gpu-probe.sh            (env: PYTHON, REPS=20, GEMM_N=8192,
#                                       BW_BYTES=536870912 per array, OUT=dir)
# exit: 0 all ratios >= 90%, 1 a ratio below, 2 cannot run (no GPU / probe failed).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PY=${PYTHON:-python3}
REPS=${REPS:-20}
GEMM_N=${GEMM_N:-8192}
BW_BYTES=${BW_BYTES:-536870912}
OUT=${OUT:-$(mktemp -d /tmp/gpu-probe.XXXXXX)}
mkdir -p "$OUT"

command -v "$PY" >/dev/null || { echo "gpu-probe: no python ($PY) on PATH; set PYTHON=" >&2; exit 2; }
if ! ls /dev/nvidiactl >/dev/null 2>&1 && ! command -v nvidia-smi >/dev/null 2>&1; then
  echo "gpu-probe: no NVIDIA GPU on this machine (no /dev/nvidiactl, no nvidia-smi); nothing to measure" >&2
  exit 2
fi
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true

echo "gpu-probe: running probe.py (reps $REPS, GEMM n=$GEMM_N, $BW_BYTES bytes per array) -> $OUT/probe.json" >&2
"$PY" "$HERE/smoke/probe/probe.py" --expect-variant gpu --reps "$REPS" --gemm-n "$GEMM_N" --bw-bytes "$BW_BYTES" \
  ${SKIP_PADDLE:+--skip-paddle} > "$OUT/probe.json" 2> "$OUT/probe.stderr" || {
  echo "gpu-probe: probe.py crashed; stderr in $OUT/probe.stderr" >&2; tail -20 "$OUT/probe.stderr" >&2; exit 2; }

REPS=$REPS GEMM_N=$GEMM_N BW_BYTES=$BW_BYTES "$PY" - "$OUT/probe.json" <<'EOF'
import json, os, statistics, sys

probe = json.load(open(sys.argv[1]))
reps, n, bw_bytes = int(os.environ["REPS"]), int(os.environ["GEMM_N"]), int(os.environ["BW_BYTES"])
drv = probe.get("driver", {})
print("device: %s (sm_%s), driver %s / CUDA %s; cuBLAS %s" % (
    drv.get("name"), "".join(map(str, drv.get("cc") or [])), drv.get("driver_branch"), drv.get("driver_cuda"),
    (probe.get("libraries", {}).get("cublas") or {}).get("version")))
for sec in ("driver", "kernels", "blas", "paddle"):
    s = probe.get(sec, {})
    print("  probe %-8s %-7s %s" % (sec, s.get("status"), s.get("reason")))
if drv.get("status") != "ok" or probe.get("kernels", {}).get("status") != "ok":
    print("gpu-probe: the probe's GPU part did not run; see above and %s" % sys.argv[1], file=sys.stderr)
    sys.exit(2)

k, b = probe["kernels"]["bandwidth"], probe.get("blas", {})
mine = {"copy GB/s": k.get("copy_GBps"), "gemm fp16 TFLOP/s": (b.get("gemm_fp16") or {}).get("tflops"),
        "sgemm TFLOP/s": (b.get("sgemm") or {}).get("tflops")}
try:
    import torch
except Exception as e:
    print("gpu-probe: torch is not importable (%s); probe numbers only:" % e)
    for key, v in mine.items():
        print("  %-18s probe %10s" % (key, v))
    sys.exit(2)
if not torch.cuda.is_available():
    print("gpu-probe: torch %s sees no CUDA device (torch.cuda.is_available() is False); probe numbers only" % torch.__version__)
    sys.exit(2)

torch.backends.cuda.matmul.allow_tf32 = False  # sgemm comparison: plain FP32 on both sides

def median_ms(fn):
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    fn()
    torch.cuda.synchronize()
    t = []
    for _ in range(reps):
        s.record(); fn(); e.record(); e.synchronize()
        t.append(s.elapsed_time(e))
    return statistics.median(t)

src = torch.rand(bw_bytes // 4, dtype=torch.float32, device="cuda")
dst = torch.empty_like(src)
theirs = {"copy GB/s": 2 * bw_bytes / (median_ms(lambda: dst.copy_(src)) * 1e-3) / 1e9}
del src, dst
for key, dtype in (("gemm fp16 TFLOP/s", torch.float16), ("sgemm TFLOP/s", torch.float32)):
    a = torch.randn(n, n, device="cuda").to(dtype)
    bb = torch.randn(n, n, device="cuda").to(dtype)
    theirs[key] = 2.0 * n ** 3 / (median_ms(lambda: torch.matmul(a, bb)) * 1e-3) / 1e12
    del a, bb

print("torch %s, CUDA %s; bandwidth counts bytes read + written; medians of %d reps" % (
    torch.__version__, torch.version.cuda, reps))
print("  %-18s %10s %10s %8s" % ("metric", "probe", "torch", "ratio"))
below = False
for key in mine:
    p, t = mine[key], theirs[key]
    ratio = (p / t) if p and t else 0.0
    below |= ratio < 0.90
    print("  %-18s %10.1f %10.1f %7.1f%% %s" % (key, p or 0, t, 100 * ratio, "ok" if ratio >= 0.90 else "BELOW 90%"))
print("peak bandwidth from attributes: %s GB/s" % drv.get("peak_bandwidth_GBps"))
sys.exit(1 if below else 0)
EOF
