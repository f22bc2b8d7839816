#!/usr/bin/env bash
# Runs the smoke probe (smoke/probe/probe.py) directly on a GPU machine -- no
# Docker needed, a Python with CUDA libraries is enough -- and compares it with
# PyTorch in ONE run, interleaved A/B/A/B (ROUNDS rounds: the probe, then torch,
# then the probe again …, so clock and thermal drift fall on both sides alike),
# at the same sizes and precisions and on IDENTICAL input data (torch fills its
# tensors with the probe's own deterministic fill, value(i) = ((i*0x9E3779B1 ^
# seed) >> 16 & 1023)/1024 - 0.5, seeds as the probe's: copy 0 and 1, GEMM A 5,
# B 6; checked against probe.py's host mirror before anything is timed):
#   bandwidth: probe copy kernel      vs  dst.copy_(src)      (device-to-device)
#   GEMM FP16: cublasGemmEx FP16/FP32 vs  torch.matmul(fp16)  (FP32 accumulate)
#   GEMM FP32: cublasSgemm            vs  torch.matmul(fp32)  (TF32 disabled)
# Byte convention for bandwidth (both sides): bytes read + bytes written, i.e.
# a copy of an N-byte array counts 2N. Times: CUDA events around each
# repetition, warm-up excluded, median of REPS (sgemm: REPS/4, as the probe);
# per side, the median of the rounds' medians. Target: probe >= 90% of torch.
# Writes OUT/probe-round<i>.json (the probe's documents) and OUT/ratios.json.
#
# usage: bench/gpu-probe.sh            (env: PYTHON, REPS=20, ROUNDS=3, GEMM_N=8192,
#                                       BW_BYTES=536870912 per array, OUT=dir, SKIP_PADDLE=1)
# exit: 0 all ratios >= 90%, 1 a ratio below, 2 cannot run (no GPU / probe failed).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PY=${PYTHON:-python3}
REPS=${REPS:-20}
ROUNDS=${ROUNDS:-3}
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

REPS=$REPS ROUNDS=$ROUNDS GEMM_N=$GEMM_N BW_BYTES=$BW_BYTES PROBE="$HERE/smoke/probe/probe.py" OUT="$OUT" \
  SKIP_PADDLE=${SKIP_PADDLE:-} "$PY" - <<'PYEOF'
import importlib.util, json, os, statistics, subprocess, sys

reps, rounds = int(os.environ["REPS"]), int(os.environ["ROUNDS"])
n, bw_bytes, out = int(os.environ["GEMM_N"]), int(os.environ["BW_BYTES"]), os.environ["OUT"]
spec = importlib.util.spec_from_file_location("probe", os.environ["PROBE"])
probe_mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(probe_mod)


def run_probe(i):
    path = os.path.join(out, "probe-round%d.json" % i)
    cmd = [sys.executable, os.environ["PROBE"], "--expect-variant", "gpu", "--reps", str(reps), "--gemm-n", str(n),
           "--bw-bytes", str(bw_bytes)] + (["--skip-paddle"] if os.environ.get("SKIP_PADDLE") else [])
    with open(path, "w") as f, open(path + ".stderr", "w") as e:
        if subprocess.call(cmd, stdout=f, stderr=e) != 0:
            print("gpu-probe: probe.py crashed in round %d; stderr in %s.stderr" % (i, path), file=sys.stderr)
            sys.exit(2)
    p = probe_mod.extract_document(open(path).read())  # the document between the probe's sentinel lines
    if p is None:
        print("gpu-probe: no probe document in round %d (%s)" % (i, path), file=sys.stderr)
        sys.exit(2)
    if p.get("driver", {}).get("status") != "ok" or p.get("kernels", {}).get("status") != "ok":
        for sec in ("driver", "kernels", "blas"):
            s = p.get(sec, {})
            print("  probe %-8s %-7s %s" % (sec, s.get("status"), s.get("reason")), file=sys.stderr)
        print("gpu-probe: the probe's GPU part did not run (%s)" % path, file=sys.stderr)
        sys.exit(2)
    k, b = p["kernels"]["bandwidth"], p.get("blas", {})
    return p, {"copy GB/s": k.get("copy_GBps"), "gemm fp16 TFLOP/s": (b.get("gemm_fp16") or {}).get("tflops"),
               "sgemm TFLOP/s": (b.get("sgemm") or {}).get("tflops")}


try:
    import torch
except Exception as e:
    print("gpu-probe: torch is not importable (%s)" % e, file=sys.stderr)
    sys.exit(2)
if not torch.cuda.is_available():
    print("gpu-probe: torch %s sees no CUDA device" % torch.__version__, file=sys.stderr)
    sys.exit(2)
torch.backends.cuda.matmul.allow_tf32 = False  # sgemm comparison: plain FP32 on both sides
torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False  # FP32 accumulate, as the probe's GemmEx


def probe_fill(count, seed, dtype):
    """The probe's fill kernels' values, made by torch on the GPU."""
    i = torch.arange(count, device="cuda", dtype=torch.int64)
    h = ((i * 0x9E3779B1) & 0xFFFFFFFF) ^ seed
    return (((h >> 16) & 1023).to(torch.float32) / 1024.0 - 0.5).to(dtype)


# The same data on both sides: torch's fill equals probe.py's host mirror, element for element.
sample = probe_fill(4096, 5, torch.float32).cpu().tolist()
if any(sample[j] != probe_mod.fill_value(j, 5) for j in range(4096)):
    print("gpu-probe: torch's fill differs from the probe's; the comparison would not be on identical data", file=sys.stderr)
    sys.exit(2)


def median_ms(fn, r):
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    fn()
    torch.cuda.synchronize()
    t = []
    for _ in range(r):
        s.record(); fn(); e.record(); e.synchronize()
        t.append(s.elapsed_time(e))
    return statistics.median(t)


def run_torch():
    res = {}
    src, dst = probe_fill(bw_bytes // 4, 0, torch.float32), probe_fill(bw_bytes // 4, 1, torch.float32)
    res["copy GB/s"] = 2 * bw_bytes / (median_ms(lambda: dst.copy_(src), reps) * 1e-3) / 1e9
    del src, dst
    for key, dtype, r in (("gemm fp16 TFLOP/s", torch.float16, reps), ("sgemm TFLOP/s", torch.float32, max(3, reps // 4))):
        a, bb = probe_fill(n * n, 5, dtype).view(n, n), probe_fill(n * n, 6, dtype).view(n, n)
        res[key] = 2.0 * n ** 3 / (median_ms(lambda: torch.matmul(a, bb), r) * 1e-3) / 1e12
        del a, bb
    torch.cuda.empty_cache()
    return res


mine, theirs, first = [], [], None
for i in range(1, rounds + 1):  # A/B/A/B
    p, m = run_probe(i)
    first = first or p
    mine.append(m)
    theirs.append(run_torch())
    print("round %d: %s" % (i, "; ".join("%s probe %.1f torch %.1f" % (k, m[k] or 0, theirs[-1][k]) for k in m)))

drv = first.get("driver", {})
print("device: %s (sm_%s), driver %s / CUDA %s; cuBLAS %s; torch %s (CUDA %s)" % (
    drv.get("name"), "".join(map(str, drv.get("cc") or [])), drv.get("driver_branch"), drv.get("driver_cuda"),
    (first.get("libraries", {}).get("cublas") or {}).get("version"), torch.__version__, torch.version.cuda))
print("A/B/A/B over %d rounds on identical input data; bandwidth counts bytes read + written; medians of %d reps"
      % (rounds, reps))
print("  %-18s %10s %10s %8s     %s" % ("metric", "probe", "torch", "ratio", "per-round ratios"))
below, summary = False, {}
for key in mine[0]:
    p = statistics.median([m[key] or 0 for m in mine])
    t = statistics.median([x[key] for x in theirs])
    ratio = p / t if p and t else 0.0
    per = ["%.1f%%" % (100 * (m[key] or 0) / x[key]) for m, x in zip(mine, theirs)]
    below |= ratio < 0.90
    summary[key] = {"probe": p, "torch": t, "ratio": ratio, "rounds": per}
    print("  %-18s %10.1f %10.1f %7.1f%% %-9s %s" % (key, p, t, 100 * ratio, "ok" if ratio >= 0.90 else "BELOW 90%",
                                                  " ".join(per)))
print("peak bandwidth from attributes: %s GB/s" % drv.get("peak_bandwidth_GBps"))
json.dump(summary, open(os.path.join(out, "ratios.json"), "w"), indent=1)
sys.exit(1 if below else 0)
PYEOF
