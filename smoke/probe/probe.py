#!/usr/bin/env python3
"""imgtool smoke probe: runs inside an image, prints ONE JSON document on stdout.

Contract (see verify/smoke_runner.h for the host side):
  docker run --rm [--gpus SPEC] [--shm-size S] -v <dir>:/imgtool-probe:ro IMAGE \
      python3 /imgtool-probe/probe.py [--expect-variant gpu|cpu] [--expect-cuda 12.6]
      [--gpus-requested none|SPEC] [--nonce STR]

Design constraints: the image is never modified and nothing is compiled for it.
Standard library only (Python 3.6+); the CUDA driver API through ctypes with
explicit versioned symbol names (cuMemAlloc_v2, ...); kernels are PTX text the
driver JIT-compiles (`.target sm_<device CC>` with that target's minimum
`.version`, which every driver that supports the device accepts); cuBLAS,
cuDNN and cudart are the image's own, loaded by soname (also from
site-packages/nvidia/*/lib). Paddle runs in a child process so its prints and
crashes are captured, not mixed into our JSON. The document is printed between
the lines DOC_BEGIN and DOC_END (below); anything else on stdout is not ours.

Every section carries {"status": ok|warn|fail|skipped, "reason": ...}; with no
GPU the probe still reports everything it can and says exactly why the GPU
part could not run. `verdict` is the overall judgement against the expected
variant. The pure decision functions (ptx_*, diagnose_*, judge_*, verdict)
take plain values so tests can call them without a GPU.
"""
import argparse
import ctypes
import errno
import glob
import hashlib
import json
import os
import platform
import re
import stat
import subprocess
import sys
import time

PROBE_VERSION = 2
DOC_BEGIN = "-----BEGIN IMGTOOL PROBE DOCUMENT-----"
DOC_END = "-----END IMGTOOL PROBE DOCUMENT-----"
NONCE_MAX_CHARS = 128
IDENTITY_FILE = "/etc/imgtool/identity.json"  # written by the generator; IMGTOOL_IDENTITY_FILE overrides
IDENTITY_MAX_BYTES = 64 << 10
SHM_MIN_BYTES = 1 << 30  # 1 GiB: enough for a few DataLoader workers; Docker's default is 64 MB
PADDLE_TIMEOUT_S = 600

# --------------------------------------------------------------------------
# Pure decision functions (unit-tested with injected values)
# --------------------------------------------------------------------------

# Minimum PTX ISA version per base target (PTX ISA 9.0 release notes).
PTX_MIN_VERSION = {
    (5, 0): (4, 0), (5, 2): (4, 1), (5, 3): (4, 2),
    (6, 0): (5, 0), (6, 1): (5, 0), (6, 2): (5, 0),
    (7, 0): (6, 0), (7, 2): (6, 1), (7, 5): (6, 3),
    (8, 0): (7, 0), (8, 6): (7, 1), (8, 7): (7, 4), (8, 8): (9, 0), (8, 9): (7, 8),
    (9, 0): (7, 8),
    (10, 0): (8, 6), (10, 3): (8, 8), (11, 0): (9, 0),
    (12, 0): (8, 7), (12, 1): (8, 8),
}


def ptx_target(cc):
    """(target, version, note) for a device compute capability (major, minor).

    A known CC gets its own base target and that target's minimum .version.
    An unknown CC gets the newest known base target below it (base sm_XY PTX
    runs on later architectures); the note says so.
    """
    cc = tuple(cc)
    if cc in PTX_MIN_VERSION:
        return "sm_%d%d" % cc, PTX_MIN_VERSION[cc], ""
    lower = [k for k in PTX_MIN_VERSION if k < cc]
    if not lower:
        raise ValueError("compute capability %d.%d is older than any PTX target this probe knows" % cc)
    best = max(lower)
    note = "sm_%d%d unknown to this probe; using base target sm_%d%d" % (cc + best)
    return "sm_%d%d" % best, PTX_MIN_VERSION[best], note


_GRID_STRIDE = """
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %ntid.x;
  mov.u32 %r3, %tid.x;
  mov.u32 %r4, %nctaid.x;
  mul.wide.u32 %rd4, %r1, %r2;
  cvt.u64.u32 %rd5, %r3;
  add.u64 %rd4, %rd4, %rd5;
  mul.wide.u32 %rd6, %r4, %r2;
  setp.ge.u64 %p1, %rd4, %rd3;
  @%p1 bra $L_{name}_done;
$L_{name}_loop:
{body}
  add.u64 %rd4, %rd4, %rd6;
  setp.lt.u64 %p1, %rd4, %rd3;
  @%p1 bra $L_{name}_loop;
$L_{name}_done:
  ret;
}}
"""

_REGS = """{
  .reg .pred %p<2>;
  .reg .b16 %h<2>;
  .reg .b32 %r<8>;
  .reg .f32 %f<10>;
  .reg .b64 %rd<12>;
"""

# name -> (params, loads of params into %rd1/%rd2/%rd3(n)/%f9/%r6, loop body).
# Index %rd4 runs over elements (or float4 groups for *_v4); %rd3 is the count.
_KERNELS = [
    ("saxpy", ".param .u64 p_y, .param .u64 p_x, .param .f32 p_a, .param .u64 p_n", """
  ld.param.u64 %rd1, [p_y];
  ld.param.u64 %rd2, [p_x];
  ld.param.f32 %f9, [p_a];
  ld.param.u64 %rd3, [p_n];
  cvta.to.global.u64 %rd1, %rd1;
  cvta.to.global.u64 %rd2, %rd2;""", """
  shl.b64 %rd7, %rd4, 2;
  add.u64 %rd8, %rd2, %rd7;
  ld.global.f32 %f1, [%rd8];
  add.u64 %rd9, %rd1, %rd7;
  ld.global.f32 %f2, [%rd9];
  fma.rn.f32 %f3, %f9, %f1, %f2;
  st.global.f32 [%rd9], %f3;"""),
    ("copy_v4", ".param .u64 p_dst, .param .u64 p_src, .param .u64 p_n", """
  ld.param.u64 %rd1, [p_dst];
  ld.param.u64 %rd2, [p_src];
  ld.param.u64 %rd3, [p_n];
  cvta.to.global.u64 %rd1, %rd1;
  cvta.to.global.u64 %rd2, %rd2;""", """
  shl.b64 %rd7, %rd4, 4;
  add.u64 %rd8, %rd2, %rd7;
  ld.global.v4.f32 {%f1, %f2, %f3, %f4}, [%rd8];
  add.u64 %rd9, %rd1, %rd7;
  st.global.v4.f32 [%rd9], {%f1, %f2, %f3, %f4};"""),
    ("triad_v4", ".param .u64 p_a, .param .u64 p_b, .param .u64 p_c, .param .f32 p_s, .param .u64 p_n", """
  ld.param.u64 %rd1, [p_a];
  ld.param.u64 %rd2, [p_b];
  ld.param.u64 %rd10, [p_c];
  ld.param.f32 %f9, [p_s];
  ld.param.u64 %rd3, [p_n];
  cvta.to.global.u64 %rd1, %rd1;
  cvta.to.global.u64 %rd2, %rd2;
  cvta.to.global.u64 %rd10, %rd10;""", """
  shl.b64 %rd7, %rd4, 4;
  add.u64 %rd8, %rd2, %rd7;
  ld.global.v4.f32 {%f1, %f2, %f3, %f4}, [%rd8];
  add.u64 %rd8, %rd10, %rd7;
  ld.global.v4.f32 {%f5, %f6, %f7, %f8}, [%rd8];
  fma.rn.f32 %f1, %f9, %f5, %f1;
  fma.rn.f32 %f2, %f9, %f6, %f2;
  fma.rn.f32 %f3, %f9, %f7, %f3;
  fma.rn.f32 %f4, %f9, %f8, %f4;
  add.u64 %rd9, %rd1, %rd7;
  st.global.v4.f32 [%rd9], {%f1, %f2, %f3, %f4};"""),
]

# Deterministic pseudo-random fill in [-0.5, 0.5): value(i) = ((i*0x9E3779B1 ^ seed) >> 16 & 1023)/1024 - 0.5
_FILL_VALUE = """
  cvt.u32.u64 %r5, %rd4;
  mul.lo.u32 %r5, %r5, 0x9E3779B1;
  xor.b32 %r5, %r5, %r6;
  shr.u32 %r5, %r5, 16;
  and.b32 %r5, %r5, 1023;
  cvt.rn.f32.u32 %f1, %r5;
  fma.rn.f32 %f1, %f1, 0f3A800000, 0fBF000000;"""
_FILL_PARAMS = ".param .u64 p_dst, .param .u64 p_n, .param .u32 p_seed"
_FILL_LOADS = """
  ld.param.u64 %rd1, [p_dst];
  ld.param.u64 %rd3, [p_n];
  ld.param.u32 %r6, [p_seed];
  cvta.to.global.u64 %rd1, %rd1;"""
_KERNELS += [
    ("fill_f32", _FILL_PARAMS, _FILL_LOADS, _FILL_VALUE + """
  shl.b64 %rd7, %rd4, 2;
  add.u64 %rd9, %rd1, %rd7;
  st.global.f32 [%rd9], %f1;"""),
    ("fill_f16", _FILL_PARAMS, _FILL_LOADS, _FILL_VALUE + """
  cvt.rn.f16.f32 %h1, %f1;
  shl.b64 %rd7, %rd4, 1;
  add.u64 %rd9, %rd1, %rd7;
  st.global.b16 [%rd9], %h1;"""),
]
KERNEL_NAMES = [k[0] for k in _KERNELS]


def fill_value(i, seed):
    """Host mirror of the fill kernels' value for element i."""
    h = ((i * 0x9E3779B1) & 0xFFFFFFFF) ^ seed
    return ((h >> 16) & 1023) / 1024.0 - 0.5


def ptx_module(cc):
    """PTX text (NUL not included) for all probe kernels, targeting device cc."""
    target, (vmaj, vmin), _ = ptx_target(cc)
    out = [".version %d.%d" % (vmaj, vmin), ".target %s" % target, ".address_size 64", ""]
    for name, params, loads, body in _KERNELS:
        out.append(".visible .entry %s(%s)" % (name, params))
        out.append(_REGS + loads + _GRID_STRIDE.format(name=name, body=body))
    return "\n".join(out)


def cuda_version_str(v):
    """1000*M + 10*m (cuDriverGetVersion, cudaRuntimeGetVersion) -> 'M.m'."""
    if not v:
        return None
    return "%d.%d" % (v // 1000, (v % 1000) // 10)


def cudnn_version_str(v):
    """cudnnGetVersion(): cuDNN 9 M*10000+m*100+p; cuDNN <=8 M*1000+m*100+p."""
    if not v:
        return None
    if v >= 10000:
        return "%d.%d.%d" % (v // 10000, (v % 10000) // 100, v % 100)
    return "%d.%d.%d" % (v // 1000, (v % 1000) // 100, v % 100)


def parse_version(s):
    """'12.6.3' -> (12, 6, 3); None for anything unparsable."""
    if not s:
        return None
    m = re.match(r"^\s*(\d+(?:\.\d+)*)", str(s))
    return tuple(int(x) for x in m.group(1).split(".")) if m else None


def require_cuda(nvidia_require_cuda):
    """'cuda>=12.6 brand=tesla,driver>=470' -> '12.6' (the image's own claim)."""
    m = re.search(r"cuda>=(\d+\.\d+)", nvidia_require_cuda or "")
    return m.group(1) if m else None


# Minimum driver per CUDA major for minor-version compatibility (CUDA compatibility guide).
MINOR_COMPAT_DRIVER = {11: "450.80.02", 12: "525.60.13", 13: "580.65.06"}


def judge_driver_vs_cuda(driver_cuda, image_cuda, driver_branch=None):
    """Can a driver supporting CUDA `driver_cuda` ('12.2') run the image's CUDA `image_cuda`?"""
    d, i = parse_version(driver_cuda), parse_version(image_cuda)
    if not d or not i:
        return {"status": "skipped", "reason": "image CUDA version unknown (no --expect-cuda, CUDA_VERSION or cudart)"
                if d else "driver version unknown"}
    drv = "host driver %s supports CUDA %s" % (driver_branch or "(branch unknown)", driver_cuda)
    floor = MINOR_COMPAT_DRIVER.get(i[0], "?")
    if d[:2] >= i[:2]:
        return {"status": "ok", "reason": "%s >= image CUDA %s" % (drv, image_cuda)}
    if d[0] == i[0]:
        return {"status": "warn", "code": "minor_version_compat",
                "reason": "%s < image CUDA %s: runs under minor-version compatibility (driver >= %s); "
                          "PTX built by the newer toolkit fails to JIT (CUDA error 222)" % (drv, image_cuda, floor),
                "fix": "upgrade the host driver to one that supports CUDA %s" % image_cuda}
    return {"status": "fail", "code": "driver_too_old",
            "reason": "driver older than the image's CUDA needs: %s, the image's CUDA %s needs a driver for "
                      "CUDA >= %d.0 (>= %s); the CUDA runtime fails with error 35 cudaErrorInsufficientDriver "
                      "\"CUDA driver version is insufficient for CUDA runtime version\"" % (drv, image_cuda, i[0], floor),
            "fix": "upgrade the host driver to >= %s, or use an image built for CUDA <= %s" % (floor, driver_cuda)}


# CUresult of cuInit / cudaError of cudaGetDeviceCount -> (code, explanation, fix).
CUDA_INIT_ERRORS = {
    34: ("stub_library", "libcuda.so.1 is the toolkit's stub library (CUDA_ERROR_STUB_LIBRARY), not the driver",
         "remove /usr/local/cuda/lib64/stubs from LD_LIBRARY_PATH / ld.so.conf in the image"),
    35: ("driver_too_old", "CUDA driver version is insufficient for CUDA runtime version (cudaErrorInsufficientDriver)",
         "upgrade the host driver or use an image built for an older CUDA"),
    100: ("no_device", "no CUDA-capable device is detected",
          "check that --gpus / NVIDIA_VISIBLE_DEVICES selects a device (not 'void' or 'none')"),
    803: ("driver_mismatch", "system has unsupported display driver / cuda driver combination "
          "(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH): the libcuda in the container does not match the host kernel module",
          "do not ship or LD_LIBRARY_PATH a cuda-compat libcuda.so.1; let the NVIDIA runtime inject the host's"),
    804: ("compat_not_supported", "forward compatibility was attempted on non supported HW "
          "(CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE)",
          "forward compatibility (cuda-compat) works on datacenter GPUs only; upgrade the host driver"),
    999: ("unknown", "CUDA_ERROR_UNKNOWN during initialisation (often a driver/kernel-module problem on the host)",
          "check nvidia-smi and dmesg on the host"),
}


def diagnose_init_error(code, name=None, text=None):
    key, why, fix = CUDA_INIT_ERRORS.get(code, ("cuda_error", text or "CUDA error", "see the CUDA error text"))
    return {"status": "fail", "code": key, "fix": fix,
            "reason": "cuInit failed with CUDA error %d %s: %s" % (code, name or "", why)}


def diagnose_no_libcuda(load_error, dev_nodes, env, gpus_requested):
    """Why libcuda.so.1 could not be loaded. env: NVIDIA_* variables; gpus_requested: None|'none'|spec."""
    caps = env.get("NVIDIA_DRIVER_CAPABILITIES")
    cap_set = set((caps or "").replace(" ", "").split(",")) - {""}
    base = "libcuda.so.1 could not be loaded (%s)" % load_error
    if gpus_requested == "none" and not dev_nodes:
        return {"status": "skipped", "code": "no_gpus_flag",
                "reason": "no --gpus: the container was started without --gpus, so Docker injected no GPU device "
                          "and no driver library; " + base,
                "fix": "run with --gpus all (imgtool smoke IMAGE --gpus all)"}
    if not dev_nodes and gpus_requested:
        return {"status": "fail", "code": "nvidia_runtime_missing",
                "reason": "NVIDIA runtime missing on the host: --gpus %s was requested but no /dev/nvidia* device "
                          "appeared in the container, so the NVIDIA container runtime hook did not run; %s"
                          % (gpus_requested, base),
                "fix": "install nvidia-container-toolkit, run `nvidia-ctk runtime configure --runtime=docker`, "
                       "restart docker"}
    if not dev_nodes:
        return {"status": "skipped", "code": "no_gpu_passed",
                "reason": "no GPU in the container: no /dev/nvidia* device and " + base +
                          "; it was started without --gpus (or the host lacks the NVIDIA container runtime)",
                "fix": "run with --gpus all on a host with the NVIDIA Container Toolkit"}
    if not cap_set & {"compute", "all"}:
        return {"status": "fail", "code": "no_compute_capability",
                "reason": "GPU devices are present but NVIDIA_DRIVER_CAPABILITIES=%s lacks 'compute', so the "
                          "runtime mounted no libcuda.so.1; %s" % (caps if caps is not None else "(unset: utility only)", base),
                "fix": "set ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility in the image, or "
                       "--gpus 'all,\"capabilities=compute,utility\"'"}
    return {"status": "fail", "code": "libcuda_missing",
            "reason": "GPU devices %s are present but %s: devices were passed without the NVIDIA runtime "
                      "(e.g. --device) or the driver libraries are not mounted" % (",".join(dev_nodes), base),
            "fix": "use --gpus all with the NVIDIA Container Toolkit instead of --device"}


def judge_shm(total_bytes, min_bytes=SHM_MIN_BYTES):
    """/dev/shm size vs the DataLoader minimum. Too small is a warning: it is a `docker run` setting, not the image's."""
    if total_bytes is None:
        return {"status": "warn", "reason": "/dev/shm is not mounted", "min_bytes": min_bytes,
                "fix": "run with --shm-size 2g (or --ipc=host)"}
    res = {"bytes": total_bytes, "min_bytes": min_bytes}
    if total_bytes >= min_bytes:
        res.update(status="ok", reason="/dev/shm is %s >= %s" % (human_bytes(total_bytes), human_bytes(min_bytes)))
    else:
        res.update(status="warn", fix="run with --shm-size 2g (or --ipc=host)",
                   reason="/dev/shm is %s < %s recommended for DataLoader workers (Docker's default is 64 MB); "
                          "workers die with \"Unexpected BUS error ... insufficient shared memory (shm)\""
                          % (human_bytes(total_bytes), human_bytes(min_bytes)))
    return res


def human_bytes(n):
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return "%.1f %s" % (n / size, unit)
    return "%d B" % n


# Lines Paddle prints that point at an environment problem: (kind, regex).
PADDLE_WARNINGS = [
    ("cudnn_mismatch", r"compiled with CUDNN [\d.]+, but CUDNN version in your machine is [\d.]+"),
    ("cuda_mismatch", r"compiled with CUDA [\d.]+, but CUDA runtime version in your machine is [\d.]+"),
    ("insufficient_driver", r"(?i)driver version is insufficient|cudaErrorInsufficientDriver"),
    ("no_gpu_detected", r"You are using GPU version PaddlePaddle, but there is no GPU detected"),
    ("dynload_failed", r"The third-party dynamic library \(\S+\) that Paddle depends on is not configured correctly"),
    ("cannot_open_library", r"lib\w+\.so[\w.]*: cannot open shared object file"),
    ("driver_mismatch", r"unsupported display driver / cuda driver combination"),
    ("no_kernel_image", r"no kernel image is available for execution on the device"),
    ("unsupported_cc", r"The GPU compute capability in your current machine is \d+, which is not supported by Paddle"),
]


def arch_runs_on(item, dev):
    """Whether one archs entry ("sm_86", "sm_90a", "sm_100f", "compute_80") runs on compute
    capability `dev` ((major, minor)); None for an entry that is not one. CUDA's rules: sm_XY runs
    on X.Z for Z >= Y; sm_XYa only on X.Y exactly; sm_XYf on the family, X.Z for Z >= Y; compute_XY
    (PTX) on any cc >= X.Y, compute_XYa / compute_XYf as their cubins (arch-specific PTX does not
    carry forward)."""
    m = re.match(r"^(sm|compute)_(\d+)([af]?)$", item.strip().lower())
    if not m:
        return None
    a = int(m.group(2))
    own, suffix = (a // 10, a % 10), m.group(3)
    if suffix == "a":
        return tuple(dev) == own
    if suffix == "f" or m.group(1) == "sm":
        return dev[0] == own[0] and dev[1] >= own[1]
    return tuple(dev) >= own


def archs_serve(archs, cc):
    """Whether code compiled for `archs` ("sm_61,sm_86,compute_86", io.imgtool.cuda-archs) runs on a
    GPU of compute capability `cc` ((9, 0)): any entry that runs there (arch_runs_on). None when
    either is unknown or no entry parses (the same rules as core/gpu_arch.h's kernel_gap, plus the
    a/f variants)."""
    if not archs or not cc:
        return None
    runs = [r for r in (arch_runs_on(item, tuple(cc)) for item in archs.split(",")) if r is not None]
    return any(runs) if runs else None


def arch_fix(cc):
    """The fix for Paddle without code for this GPU (no_kernel_image, unsupported_cc, wrong_results)."""
    return ("use an image whose io.imgtool.cuda-archs has sm_%s (or PTX at or below it): a newer Paddle/CUDA build; "
            "`imgtool select --gpu` picks one" % ("%d%d" % tuple(cc) if cc else "XY"))


def no_kernel_image(archs, cc, found_line):
    """The paddle section's failure when Paddle has no kernels for this GPU: the error users meet,
    what the image holds, and the fix."""
    dev = "%d.%d" % tuple(cc) if cc else "this GPU"
    return {"status": "fail", "code": "no_kernel_image",
            "reason": "Paddle has no kernels for compute capability %s (\"no kernel image is available for execution "
                      "on the device\"): the image's GPU code is %s" % (dev, archs or "not labelled (io.imgtool.cuda-archs)"),
            "evidence": found_line, "fix": arch_fix(cc)}


def paddle_warnings(output):
    found = []
    for line in output.splitlines():
        for kind, rx in PADDLE_WARNINGS:
            w = {"kind": kind, "line": line.strip()[:400]}
            if re.search(rx, line) and w not in found:  # run_check's lines are in the tail too
                found.append(w)
    return found


def run_check_outcome(output):
    """('gpu'|'cpu'|None, count) from paddle.utils.run_check() output."""
    m = re.search(r"PaddlePaddle works well on (\d+) (GPU|CPU)s?\.", output)
    return (m.group(2).lower(), int(m.group(1))) if m else (None, 0)


def multi_gpu_failure(output):
    """The reason line when run_check passed on one GPU but failed on several ("" if it did not)."""
    if "installed successfully ONLY for single GPU" not in output:
        return ""
    m = re.search(r"PaddlePaddle meets some problem with (\d+) GPUs", output)
    err = re.search(r"Original Error is:? *(.*)", output)
    return "failed on %s GPUs%s" % (m.group(1) if m else "several",
                                     (" (%s)" % err.group(1).strip()[:300]) if err else "")


def verdict_without_gpu(report):
    sec = lambda k: report.get(k) or {}
    reasons, warnings = [], []
    paddle, libs = sec("paddle"), sec("libraries")
    if paddle.get("status") not in ("ok", "warn"):  # a warn is listed with the warnings below
        reasons.append("paddle: %s" % paddle.get("reason"))
    if libs.get("status") != "ok":
        reasons.append("libraries: %s (the image's loader must find them; fix: ld.so.conf.d + ldconfig or "
                       "LD_LIBRARY_PATH)" % libs.get("reason"))
    warnings.append("GPU part not run: no GPU on this host (--no-gpu-host); driver: %s" % sec("driver").get("reason"))
    warnings += ["%s: %s" % (k, v.get("reason")) for k, v in report.items()
                 if k not in ("driver", "compat", "kernels", "blas") and isinstance(v, dict) and v.get("status") == "warn"]
    return {"status": "fail" if reasons else "pass", "expect_variant": "gpu", "reasons": reasons,
            "warnings": warnings, "gpu_part": "not run (--no-gpu-host)"}


TEST_DOUBLE_NAME = "imgtool fake GPU (test double, not hardware)"  # smoke/probe/testdata/fake_libcuda.c
# Sections the driver double cannot serve: the image's real cudart (and so cuBLAS and Paddle's GPU
# run) calls driver entry points the double does not implement.
NOT_JUDGED_ON_TEST_DOUBLE = ("compat", "blas")


def same_cuda(a, b):
    """'11.8' vs '11.8.89': the same major.minor."""
    pa, pb = parse_version(a or ""), parse_version(b or "")
    return bool(pa) and bool(pb) and pa[:2] == pb[:2]


def verdict_on_test_double(report):
    """--gpu-host test-double: every visible device must be imgtool's driver double (real hardware is
    judged in full, never by this rule); then the double's driver, the probe's PTX kernels on it, the
    image's CUDA libraries (found by its loader) and a GPU Paddle built for the image's CUDA must all
    hold. What the double cannot serve is listed as not judged."""
    sec = lambda k: report.get(k) or {}
    drv, paddle, libs = sec("driver"), sec("paddle"), sec("libraries")
    expect_cuda = sec("expect").get("cuda")
    reasons = []
    devices = drv.get("devices") or []
    real = [d for d in devices if d.get("name") != TEST_DOUBLE_NAME]
    if drv.get("status") != "ok":
        reasons.append("driver: %s" % drv.get("reason"))
    elif real or not devices:
        reasons.append("--gpu-host test-double refused: device %s is %r, not imgtool's driver double; real hardware "
                       "is judged in full (fix: drop --gpu-host test-double)" %
                       ((real[0].get("device"), real[0].get("name")) if real else ("0", drv.get("name"))))
    if not reasons and sec("kernels").get("status") != "ok":
        reasons.append("kernels: %s" % sec("kernels").get("reason"))
    if libs.get("status") != "ok":
        reasons.append("libraries: %s (the image's loader must find them; fix: ld.so.conf.d + ldconfig or "
                       "LD_LIBRARY_PATH)" % libs.get("reason"))
    if "version" not in paddle:
        reasons.append("paddle: %s" % paddle.get("reason"))
    elif paddle.get("compiled_with_cuda") is not True:
        reasons.append("paddle: %s" % paddle.get("reason", "a CPU-only Paddle build in a gpu image"))
    elif expect_cuda and not same_cuda(paddle.get("cuda"), expect_cuda):
        reasons.append("paddle: built for CUDA %s, the image claims CUDA %s" % (paddle.get("cuda"), expect_cuda))
    not_judged = ["%s (%s)" % (k, sec(k).get("reason")) for k in NOT_JUDGED_ON_TEST_DOUBLE if sec(k).get("status") != "ok"]
    if paddle.get("status") != "ok" and "version" in paddle:
        not_judged.append("paddle on the GPU (%s)" % paddle.get("reason"))
    warnings = ["not judged on the GPU test double: %s" % w for w in not_judged]
    warnings += ["%s: %s" % (k, v.get("reason")) for k, v in report.items()
                 if k not in ("driver", "compat", "kernels", "blas", "paddle") and isinstance(v, dict) and v.get("status") == "warn"]
    return {"status": "fail" if reasons else "pass", "expect_variant": "gpu", "reasons": reasons, "warnings": warnings,
            "gpu_part": "test double (%s): driver and PTX kernels judged; cudart, cuBLAS and Paddle on the GPU not judged"
                        % TEST_DOUBLE_NAME}


GPU_HOST_VERDICTS = {"none": verdict_without_gpu, "test-double": verdict_on_test_double}


def cpu_section(info):
    """CPU baseline measured in the Paddle child: a warning (never a failure) when it could not run."""
    model = cpu_model()
    b = info.get("cpu_baseline")
    if not b:
        why = info.get("cpu_baseline_error") or info.get("import_error") or "the Paddle child did not report it"
        return {"status": "warn", "model": model, "reason": "CPU baseline not measured: %s" % why}
    sec = dict(b, model=model, cpus=os.cpu_count())
    sec.update(status="ok", reason="fp32 matmul %.1f GFLOP/s (n=%d), copy %.1f GB/s" %
               (b["matmul_GFLOPs"], b["matmul_n"], b["copy_GBps"]))
    return sec


def cpu_model(cpuinfo="/proc/cpuinfo"):
    try:
        with open(cpuinfo) as f:
            for line in f:
                if line.split(":")[0].strip() in ("model name", "Processor", "cpu model"):
                    return re.sub(r"\s+", " ", line.split(":", 1)[1]).strip()
    except OSError:
        pass
    return platform.machine() or "unknown"


PADDLE_SKIPPED_ON_GPU = "paddle skipped: not a hardware pass of this image"


def verdict(report, expect_variant, gpu_host="gpu"):
    """Overall judgement. A gpu image passes only with a working GPU and a GPU Paddle;
    a cpu image passes when Paddle imports and run_check works on CPU. /dev/shm is a warning.
    gpu_host (--gpu-host, said on purpose, never guessed) changes how far a gpu image is judged:
    "none" (no GPU on this host): up to the driver — GPU Paddle imports, cudart/cuBLAS/cuDNN load —
    and the GPU part not run is a warning that says so; "test-double" (imgtool's driver double):
    up to what the double serves, see verdict_on_test_double."""
    special = GPU_HOST_VERDICTS.get(gpu_host) if expect_variant == "gpu" else None
    if special:
        return special(report)
    reasons, warnings = [], []
    sec = lambda k: report.get(k) or {}
    for k, v in report.items():
        if k == "libraries" and expect_variant == "cpu":
            continue  # a cpu image has no CUDA libraries by design
        if isinstance(v, dict) and v.get("status") == "warn":
            warnings.append("%s: %s" % (k, v.get("reason")) + (" (fix: %s)" % v["fix"] if v.get("fix") else ""))
    paddle = sec("paddle")
    if paddle.get("status") == "skipped" and expect_variant == "gpu" and sec("driver").get("status") == "ok":
        reasons.append(PADDLE_SKIPPED_ON_GPU)
    elif paddle.get("status") in ("fail", "skipped"):
        reasons.append("paddle: %s" % paddle.get("reason"))
    if expect_variant == "gpu":
        drv = sec("driver")
        gpu_keys = ("compat", "kernels", "blas") if drv.get("status") == "ok" else ("driver",)
        for k in gpu_keys:  # when the driver is not usable, its reason is the one that matters
            s = sec(k)
            if s.get("status") in ("fail", "skipped") and (k == "driver" or s.get("status") == "fail"):
                reasons.append("%s: %s" % (k, s.get("reason")) + (" (fix: %s)" % s["fix"] if s.get("fix") else ""))
        rc = paddle.get("run_check") or {}
        if paddle.get("status") in ("ok", "warn") and rc.get("works_on") != "gpu":
            reasons.append("paddle: run_check did not report \"works well on 1 GPU\" (found: %s)" % rc.get("works_on"))
    elif expect_variant == "cpu":
        rc = paddle.get("run_check") or {}
        if paddle.get("status") in ("ok", "warn") and rc.get("works_on") is None:
            reasons.append("paddle: run_check did not report \"works well\" on any device")
    else:
        reasons.append("expected variant unknown (pass --expect-variant gpu|cpu or set IMGTOOL_EXPECT_VARIANT)")
    seen, uniq = set(), []
    for r in reasons:
        if r not in seen:
            seen.add(r)
            uniq.append(r)
    return {"status": "fail" if uniq else "pass", "expect_variant": expect_variant,
            "reasons": uniq, "warnings": warnings}


# --------------------------------------------------------------------------
# Environment, shm, library discovery (no GPU needed)
# --------------------------------------------------------------------------

def os_release():
    try:
        with open("/etc/os-release") as f:
            kv = dict(l.rstrip("\n").split("=", 1) for l in f if "=" in l)
        return "%s %s" % (kv.get("ID", "").strip('"'), kv.get("VERSION_ID", "").strip('"'))
    except OSError:
        return None


def environment_section(args):
    env_keys = ("CUDA_VERSION", "NVIDIA_REQUIRE_CUDA", "NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES",
                "NVIDIA_DISABLE_REQUIRES", "LD_LIBRARY_PATH", "CUDNN_VERSION")
    try:
        glibc = os.confstr("CS_GNU_LIBC_VERSION")
    except (ValueError, OSError):
        glibc = None
    return {"status": "ok", "reason": "%s, %s, python %s" % (os_release(), glibc, platform.python_version()),
            "os": os_release(), "glibc": glibc, "python": platform.python_version(),
            "python_executable": sys.executable, "machine": platform.machine(),
            "env": {k: os.environ[k] for k in env_keys if k in os.environ},
            "dev_nvidia": sorted(glob.glob("/dev/nvidia*")), "gpus_requested": args.gpus_requested}


def identity_section(path):
    """The image's /etc/imgtool/identity.json (the generator's claims): its bytes' sha256 and the parsed
    object, {"missing": true} when absent, or an error string (too large, not a JSON object, unreadable)."""
    res = {"path": path}
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            return dict(res, error="not a regular file")
        with open(path, "rb") as f:
            data = f.read(IDENTITY_MAX_BYTES + 1)
    except OSError as e:
        if e.errno == errno.ENOENT:
            return dict(res, missing=True)
        return dict(res, error="unreadable: %s" % e)
    if len(data) > IDENTITY_MAX_BYTES:
        return dict(res, error="larger than %d KiB" % (IDENTITY_MAX_BYTES >> 10))
    try:
        doc = json.loads(data.decode("utf-8"), parse_constant=reject_json_constant)
    except ValueError as e:  # UnicodeDecodeError is one
        return dict(res, error="not JSON: %s" % str(e)[:300])
    if not isinstance(doc, dict):
        return dict(res, error="not a JSON object (a %s)" % type(doc).__name__)
    return dict(res, sha256=hashlib.sha256(data).hexdigest(), document=doc)


def reject_json_constant(name):
    raise ValueError("%s is not JSON" % name)  # NaN / Infinity: no reader of our document accepts them


def shm_section():
    try:
        st = os.statvfs("/dev/shm")
        return judge_shm(st.f_frsize * st.f_blocks)
    except OSError:
        return judge_shm(None)


PADDLE_PYTHONS = ["/opt/venv/bin/python3", "/opt/conda/bin/python3", "/usr/local/bin/python3", "/usr/bin/python3"]
_SITE_SCRIPT = ("import json,site,sys,importlib.util as u\n"
                "p=[x for x in sys.path if x]\n"
                "try: p+=site.getsitepackages()\nexcept Exception: pass\n"
                "print(json.dumps({'has_paddle': u.find_spec('paddle') is not None, 'path': p}))")


def python_info(exe):
    try:
        out = subprocess.run([exe, "-c", _SITE_SCRIPT], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             timeout=60, universal_newlines=True).stdout
        return json.loads(out.strip().splitlines()[-1])
    except Exception:
        return None


def find_paddle_python():
    """The image's python that can import paddle (ours first, then common venv/conda places)."""
    first = None
    for exe in [sys.executable] + PADDLE_PYTHONS:
        if not exe or not os.path.exists(exe):
            continue
        info = python_info(exe)
        if info is None:
            continue
        first = first or (exe, info)
        if info.get("has_paddle"):
            return exe, info
    return first or (sys.executable, {"has_paddle": False, "path": sys.path})


# Library families: (key, sonames newest first, site-packages nvidia subdirs).
LIBRARIES = [
    ("cudart", ["libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0"], ["cuda_runtime", "cu13"]),
    ("cublas", ["libcublas.so.13", "libcublas.so.12", "libcublas.so.11"], ["cublas", "cu13"]),
    ("cudnn", ["libcudnn.so.9", "libcudnn.so.8"], ["cudnn"]),
]
SYSTEM_LIB_DIRS = ["/usr/local/cuda/lib64", "/usr/local/cuda/targets/x86_64-linux/lib", "/usr/lib/x86_64-linux-gnu"]


def candidate_dirs(site_dirs, subdirs):
    dirs = []
    for sp in site_dirs:
        for sub in subdirs:
            dirs.append(os.path.join(sp, "nvidia", sub, "lib"))
        dirs.append(os.path.join(sp, "paddle", "libs"))
    return [d for d in dirs + SYSTEM_LIB_DIRS if os.path.isdir(d)]


def load_lib(soname, dirs):
    """(CDLL, path) loading by soname through the loader first, then from dirs."""
    errors = []
    for path in [soname] + [os.path.join(d, soname) for d in dirs]:
        if path != soname and not os.path.exists(path):
            continue
        try:
            if path != soname:  # preload siblings (cublasLt) so the loader finds them
                for sib in glob.glob(os.path.join(os.path.dirname(path), "libcublasLt.so.*")):
                    ctypes.CDLL(sib, mode=ctypes.RTLD_GLOBAL)
            lib = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
            return lib, loaded_path(soname) or path
        except OSError as e:
            errors.append(str(e))
    raise OSError("; ".join(errors[:3]))


def loaded_path(soname):
    """Real path of a loaded library, from /proc/self/maps."""
    stem = soname.split(".so")[0] + ".so"
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                p = line.split()[-1]
                if os.path.basename(p).startswith(stem):
                    return p
    except OSError:
        pass
    return None


def lib_version(key, lib):
    v = ctypes.c_int(0)
    if key == "cudart":
        lib.cudaRuntimeGetVersion(ctypes.byref(v))
        return cuda_version_str(v.value)
    if key == "cublas":
        parts = []
        for t in range(3):
            lib.cublasGetProperty(t, ctypes.byref(v))
            parts.append(v.value)
        return "%d.%d.%d" % tuple(parts)
    lib.cudnnGetVersion.restype = ctypes.c_size_t
    return cudnn_version_str(lib.cudnnGetVersion())


def nccl_version_str(code):
    """NCCL_VERSION_CODE: X*1000+Y*100+Z up to 2.8, X*10000+Y*100+Z from 2.9."""
    if code >= 10000:
        return "%d.%d.%d" % (code // 10000, code % 10000 // 100, code % 100)
    return "%d.%d.%d" % (code // 1000, code % 1000 // 100, code % 100)


def nccl_entry(site_dirs):
    """libnccl.so.2 (multi-GPU collectives): found?, path, version via ncclGetVersion."""
    try:
        lib, path = load_lib("libnccl.so.2", candidate_dirs(site_dirs, ["nccl"]))
    except OSError as e:
        return {"found": False, "error": str(e)[:300]}
    v = ctypes.c_int(0)
    try:
        lib.ncclGetVersion(ctypes.byref(v))
        return {"found": True, "path": path, "version": nccl_version_str(v.value)}
    except Exception as e:
        return {"found": True, "path": path, "version": None, "error": str(e)[:300]}


def libraries_section(site_dirs):
    sec, libs = {"status": "ok"}, {}
    for key, sonames, subdirs in LIBRARIES:
        dirs = candidate_dirs(site_dirs, subdirs)
        entry = {"found": False}
        for soname in sonames:
            try:
                lib, path = load_lib(soname, dirs)
            except OSError as e:
                entry.setdefault("errors", []).append(str(e)[:300])
                continue
            entry = {"found": True, "soname": soname, "path": path}
            try:
                entry["version"] = lib_version(key, lib)
            except Exception as e:  # a symbol missing in an odd build
                entry["version_error"] = str(e)
            libs[key] = lib
            break
        sec[key] = entry
    sec["libcudnn_so"] = unversioned_cudnn(site_dirs)
    sec["nccl"] = nccl_entry(site_dirs)  # reported, not required: only multi-GPU runs need it
    missing = [k for k, _, _ in LIBRARIES if not sec[k]["found"]]
    sec["reason"] = "not found: " + ", ".join(missing) if missing else "cudart, cuBLAS and cuDNN found"
    sec["status"] = "ok" if not missing else "warn"
    return sec, libs


def unversioned_cudnn(site_dirs):
    """Whether the unversioned `libcudnn.so` loads (the name Paddle's dynload tries first; UNCONFIRMED per version)."""
    try:
        _, path = load_lib("libcudnn.so", candidate_dirs(site_dirs, ["cudnn"]))
        return {"loads": True, "path": path}
    except OSError as e:
        return {"loads": False, "error": str(e)[:300]}


# --------------------------------------------------------------------------
# CUDA driver API through ctypes (explicit versioned names)
# --------------------------------------------------------------------------

class CudaError(Exception):
    def __init__(self, code, name, text, what):
        Exception.__init__(self, "%s failed: CUDA error %d %s: %s" % (what, code, name, text))
        self.code, self.name, self.text = code, name, text


P, I, U, S = ctypes.c_void_p, ctypes.c_int, ctypes.c_uint, ctypes.c_size_t
_DRIVER_SIGS = {
    "cuInit": [U], "cuDriverGetVersion": [P], "cuDeviceGet": [P, I], "cuDeviceGetCount": [P], "cuDeviceGetName": [P, I, I],
    "cuDeviceGetAttribute": [P, I, I], "cuDeviceTotalMem_v2": [P, I], "cuDeviceGetUuid": [P, I],
    "cuDevicePrimaryCtxRetain": [P, I], "cuDevicePrimaryCtxRelease_v2": [I], "cuCtxSetCurrent": [P],
    "cuModuleLoadDataEx": [P, ctypes.c_char_p, U, P, P], "cuModuleGetFunction": [P, P, ctypes.c_char_p],
    "cuModuleUnload": [P],
    "cuMemAlloc_v2": [P, S], "cuMemFree_v2": [ctypes.c_uint64], "cuMemGetInfo_v2": [P, P],
    "cuMemcpyHtoD_v2": [ctypes.c_uint64, P, S], "cuMemcpyDtoH_v2": [P, ctypes.c_uint64, S],
    "cuLaunchKernel": [P, U, U, U, U, U, U, U, P, P, P],
    "cuEventCreate": [P, U], "cuEventRecord": [P, P], "cuEventSynchronize": [P],
    "cuEventElapsedTime": [P, P, P], "cuEventDestroy_v2": [P], "cuCtxSynchronize": [],
    "cuGetErrorName": [I, P], "cuGetErrorString": [I, P],
}
ATTR_SM_COUNT, ATTR_MEM_CLOCK_KHZ, ATTR_BUS_WIDTH, ATTR_L2, ATTR_CC_MAJOR, ATTR_CC_MINOR = 16, 36, 37, 38, 75, 76


class Driver(object):
    def __init__(self, lib):
        self.lib = lib
        for name, argtypes in _DRIVER_SIGS.items():
            fn = getattr(lib, name, None)  # a missing symbol fails when called, naming it
            if fn is not None:
                fn.argtypes, fn.restype = argtypes, ctypes.c_int

    def _err_text(self, fn, code):
        s = ctypes.c_char_p()
        try:
            fn(code, ctypes.byref(s))
            return (s.value or b"").decode(errors="replace")
        except Exception:
            return ""

    def check(self, rc, what):
        if rc != 0:
            raise CudaError(rc, self._err_text(self.lib.cuGetErrorName, rc),
                            self._err_text(self.lib.cuGetErrorString, rc), what)

    def __getattr__(self, name):  # d.cuX(...) -> checked call
        fn = getattr(self.lib, name)
        return lambda *a: self.check(fn(*a), name)

    def attr(self, attr, dev):
        v = ctypes.c_int()
        self.cuDeviceGetAttribute(ctypes.byref(v), attr, dev)
        return v.value


def driver_branch():
    """The kernel module / libcuda version ('550.54.15'), when visible."""
    try:
        with open("/proc/driver/nvidia/version") as f:
            m = re.search(r"Kernel Module\s+(?:for \S+\s+)?(\d+\.\d+(?:\.\d+)?)", f.read())
            if m:
                return m.group(1)
    except OSError:
        pass
    p = loaded_path("libcuda.so.1") or ""
    m = re.search(r"libcuda\.so\.(\d+\.\d+(?:\.\d+)?)$", os.path.realpath(p)) if p else None
    return m.group(1) if m else None


def driver_section(args, env_sec):
    """(section, Driver or None, device info)."""
    try:
        lib = ctypes.CDLL("libcuda.so.1", mode=ctypes.RTLD_GLOBAL)
    except OSError as e:
        env = env_sec["env"]
        return diagnose_no_libcuda(str(e), env_sec["dev_nvidia"], env, args.gpus_requested), None
    d = Driver(lib)
    v = ctypes.c_int()
    rc = lib.cuDriverGetVersion(ctypes.byref(v))
    sec = {"driver_cuda": cuda_version_str(v.value) if rc == 0 else None, "driver_branch": driver_branch(),
           "libcuda": loaded_path("libcuda.so.1")}
    rc = lib.cuInit(0)
    if rc != 0:
        sec.update(diagnose_init_error(rc, d._err_text(lib.cuGetErrorName, rc), d._err_text(lib.cuGetErrorString, rc)))
        return sec, None
    sec.update(device_info(d, 0))
    sec["devices"] = visible_devices(d)
    sec.update(status="ok", reason="device 0: %s (sm_%d%d)" % (sec["name"], sec["cc"][0], sec["cc"][1]) +
               ("; %d devices visible" % len(sec["devices"]) if len(sec["devices"]) > 1 else ""))
    return sec, d


def visible_devices(d):
    """device_info of every device the container sees (not only device 0)."""
    n = ctypes.c_int(1)
    try:
        d.cuDeviceGetCount(ctypes.byref(n))
    except Exception:
        n.value = 1
    return [device_info(d, i) for i in range(max(1, n.value))]


def device_uuid(d, dev):
    """'GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx', the form nvidia-smi prints (imgtool holds it against
    the host's own list outside the container); None when the driver has no cuDeviceGetUuid."""
    raw = ctypes.create_string_buffer(16)
    try:
        d.cuDeviceGetUuid(raw, dev)
    except (AttributeError, CudaError):
        return None
    h = "".join("%02x" % b for b in bytearray(raw.raw))
    return "GPU-%s-%s-%s-%s-%s" % (h[:8], h[8:12], h[12:16], h[16:20], h[20:])


def device_info(d, ordinal):
    dev = ctypes.c_int()
    d.cuDeviceGet(ctypes.byref(dev), ordinal)
    name = ctypes.create_string_buffer(256)
    d.cuDeviceGetName(name, 256, dev.value)
    mem = ctypes.c_size_t()
    d.cuDeviceTotalMem_v2(ctypes.byref(mem), dev.value)
    a = lambda k: d.attr(k, dev.value)
    khz, bits = a(ATTR_MEM_CLOCK_KHZ), a(ATTR_BUS_WIDTH)
    return {"device": dev.value, "name": name.value.decode(errors="replace"), "uuid": device_uuid(d, dev.value),
            "cc": [a(ATTR_CC_MAJOR), a(ATTR_CC_MINOR)],
            "memory_bytes": mem.value, "sm_count": a(ATTR_SM_COUNT), "l2_bytes": a(ATTR_L2),
            "peak_bandwidth_GBps": round(2.0 * khz * (bits / 8) / 1e6, 1) if khz and bits else None}


def runtime_check(libs):
    """cudaGetDeviceCount through the image's cudart: surfaces error 35 (driver too old) / 803."""
    rt = libs.get("cudart")
    if rt is None:
        return None
    n = ctypes.c_int()
    rc = rt.cudaGetDeviceCount(ctypes.byref(n))
    if rc == 0:
        return {"status": "ok", "device_count": n.value}
    rt.cudaGetErrorString.restype = ctypes.c_char_p
    text = (rt.cudaGetErrorString(rc) or b"").decode(errors="replace")
    res = diagnose_init_error(rc, None, text)
    res["reason"] = "cudaGetDeviceCount failed with error %d: %s" % (rc, text)
    return res


class Gpu(object):
    """A primary context on one device, with the probe's PTX module loaded."""

    def __init__(self, d, dev, cc):
        self.d, self.dev = d, dev
        self.ctx = ctypes.c_void_p()
        d.cuDevicePrimaryCtxRetain(ctypes.byref(self.ctx), dev)
        d.cuCtxSetCurrent(self.ctx)
        self.sms = d.attr(ATTR_SM_COUNT, dev)
        self.ptx = ptx_module(cc)
        self.module, self.fn = self._load(self.ptx), {}
        for name in KERNEL_NAMES:
            f = ctypes.c_void_p()
            d.cuModuleGetFunction(ctypes.byref(f), self.module, name.encode())
            self.fn[name] = f

    def _load(self, ptx):
        log = ctypes.create_string_buffer(8192)
        opts = (ctypes.c_int * 2)(5, 6)  # ERROR_LOG_BUFFER, ERROR_LOG_BUFFER_SIZE_BYTES
        vals = (ctypes.c_void_p * 2)(ctypes.cast(log, ctypes.c_void_p), ctypes.c_void_p(8192))
        mod = ctypes.c_void_p()
        rc = self.d.lib.cuModuleLoadDataEx(ctypes.byref(mod), ptx.encode() + b"\0", 2, opts, vals)
        if rc != 0:
            err = CudaError(rc, self.d._err_text(self.d.lib.cuGetErrorName, rc),
                            self.d._err_text(self.d.lib.cuGetErrorString, rc), "cuModuleLoadDataEx (PTX JIT)")
            err.log = log.value.decode(errors="replace")
            raise err
        return mod

    def alloc(self, nbytes):
        p = ctypes.c_uint64()
        self.d.cuMemAlloc_v2(ctypes.byref(p), nbytes)
        return p.value

    def free(self, *ptrs):
        for p in ptrs:
            self.d.cuMemFree_v2(p)

    def launch(self, name, n_items, *args, block=256):
        grid = max(1, min((n_items + block - 1) // block, self.sms * 16))
        keep = list(args)
        params = (ctypes.c_void_p * len(keep))(*[ctypes.addressof(a) for a in keep])
        self.d.cuLaunchKernel(self.fn[name], grid, 1, 1, block, 1, 1, 0, None, params, None)

    def fill(self, ptr, n, half, seed):
        self.launch("fill_f16" if half else "fill_f32", n, ctypes.c_uint64(ptr), ctypes.c_uint64(n), ctypes.c_uint32(seed))

    def time_ms(self, fn, reps):
        """Per-repetition times (ms) with events; the first (warm-up) run is excluded."""
        e0, e1 = ctypes.c_void_p(), ctypes.c_void_p()
        self.d.cuEventCreate(ctypes.byref(e0), 0)
        self.d.cuEventCreate(ctypes.byref(e1), 0)
        times = []
        for i in range(reps + 1):
            self.d.cuEventRecord(e0, None)
            fn()
            self.d.cuEventRecord(e1, None)
            self.d.cuEventSynchronize(e1)
            ms = ctypes.c_float()
            self.d.cuEventElapsedTime(ctypes.byref(ms), e0, e1)
            if i:
                times.append(ms.value)
        self.d.cuEventDestroy_v2(e0)
        self.d.cuEventDestroy_v2(e1)
        return times

    def close(self):
        try:
            self.d.cuModuleUnload(self.module)
        finally:
            self.d.cuDevicePrimaryCtxRelease_v2(self.dev)


def median(xs):
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])


def saxpy_check(g, n=(1 << 18) + 3):
    x = (ctypes.c_float * n)(*[fill_value(i, 1) for i in range(n)])
    y = (ctypes.c_float * n)(*[fill_value(i, 2) for i in range(n)])
    dx, dy = g.alloc(4 * n), g.alloc(4 * n)
    try:
        g.d.cuMemcpyHtoD_v2(dx, x, 4 * n)
        g.d.cuMemcpyHtoD_v2(dy, y, 4 * n)
        g.launch("saxpy", n, ctypes.c_uint64(dy), ctypes.c_uint64(dx), ctypes.c_float(2.5), ctypes.c_uint64(n))
        out = (ctypes.c_float * n)()
        g.d.cuMemcpyDtoH_v2(out, dy, 4 * n)
    finally:
        g.free(dx, dy)
    err = max(abs(out[i] - (2.5 * x[i] + y[i])) for i in range(n))
    return {"ok": err <= 1e-5, "n": n, "max_abs_err": err}


def bandwidth(g, array_bytes, reps):
    """Stream-style copy (2N bytes: read+write) and triad a=b+s*c (3N bytes), GB/s from the median time."""
    n = array_bytes // 4
    n4 = n // 4
    a, b, c = g.alloc(array_bytes), g.alloc(array_bytes), g.alloc(array_bytes)
    try:
        for i, p in enumerate((a, b, c)):
            g.fill(p, n, False, i)
        copy = lambda: g.launch("copy_v4", n4, ctypes.c_uint64(a), ctypes.c_uint64(b), ctypes.c_uint64(n4))
        triad = lambda: g.launch("triad_v4", n4, ctypes.c_uint64(a), ctypes.c_uint64(b), ctypes.c_uint64(c),
                                 ctypes.c_float(0.4), ctypes.c_uint64(n4))
        res = {}
        for name, fn, nbytes in (("copy", copy, 2 * array_bytes), ("triad", triad, 3 * array_bytes)):
            t = g.time_ms(fn, reps)
            res[name + "_GBps"] = round(nbytes / (median(t) * 1e-3) / 1e9, 1)
            res[name + "_best_GBps"] = round(nbytes / (min(t) * 1e-3) / 1e9, 1)
    finally:
        g.free(a, b, c)
    res.update(array_bytes=array_bytes, reps=reps,
               convention="bytes read + bytes written (copy 2N, triad 3N); median of reps, first excluded")
    return res


def other_devices_saxpy(d, drv):
    """saxpy on devices 1..N-1 (device 0 runs the full kernels section)."""
    out = []
    for dev in (drv.get("devices") or [])[1:]:
        try:
            g = Gpu(d, dev["device"], tuple(dev["cc"]))
            try:
                out.append(dict(saxpy_check(g, n=(1 << 14) + 3), device=dev["device"], name=dev["name"]))
            finally:
                g.close()
        except Exception as e:
            out.append({"device": dev["device"], "name": dev.get("name"), "ok": False, "error": "%s: %s" % (type(e).__name__, e)})
    return out


def kernels_section(d, drv, args):
    cc = tuple(drv["cc"])
    target, ver, note = ptx_target(cc)
    sec = {"ptx": {"target": target, "version": "%d.%d" % ver, "note": note}}
    g = Gpu(d, drv["device"], cc)
    try:
        sec["saxpy"] = saxpy_check(g)
        free, total = ctypes.c_size_t(), ctypes.c_size_t()
        d.cuMemGetInfo_v2(ctypes.byref(free), ctypes.byref(total))
        array = args.bw_bytes or max(256 << 20, 8 * (drv.get("l2_bytes") or 0))
        array = min(array, free.value // 4) // 64 * 64
        sec["bandwidth"] = bandwidth(g, array, args.reps)
    finally:
        g.close()
    sec["other_devices"] = other_devices_saxpy(d, drv)
    bad = [o for o in sec["other_devices"] if not o.get("ok")]
    ok = sec["saxpy"]["ok"] and not bad
    if sec["saxpy"]["ok"] and bad:
        sec.update(status="fail", reason="saxpy wrong or failed on device(s) %s: %s" %
                   (", ".join(str(o["device"]) for o in bad), bad[0].get("error") or "wrong result"))
        return sec
    sec.update(status="ok" if ok else "fail",
               reason="saxpy correct; copy %.0f GB/s, triad %.0f GB/s" % (sec["bandwidth"]["copy_GBps"],
                                                                        sec["bandwidth"]["triad_GBps"])
               if ok else "saxpy result wrong (max abs error %g)" % sec["saxpy"]["max_abs_err"])
    return sec


# --------------------------------------------------------------------------
# cuBLAS (the image's own): small SGEMM checked on host, GemmEx FP16 and SGEMM throughput
# --------------------------------------------------------------------------

R_32F, R_16F, COMPUTE_32F, GEMM_DEFAULT = 0, 2, 68, -1


class Blas(object):
    def __init__(self, lib):
        self.lib, self.h = lib, ctypes.c_void_p()
        self.check(lib.cublasCreate_v2(ctypes.byref(self.h)), "cublasCreate_v2")

    @staticmethod
    def check(rc, what):
        if rc != 0:
            raise RuntimeError("%s failed: cublasStatus %d" % (what, rc))

    def gemm_ex(self, n, a, b, c):
        one, zero = ctypes.c_float(1.0), ctypes.c_float(0.0)
        u = ctypes.c_uint64
        self.check(self.lib.cublasGemmEx(self.h, 0, 0, n, n, n, ctypes.byref(one), u(a), R_16F, n, u(b), R_16F, n,
                                         ctypes.byref(zero), u(c), R_16F, n, COMPUTE_32F, GEMM_DEFAULT), "cublasGemmEx")

    def sgemm(self, n, a, b, c):
        one, zero = ctypes.c_float(1.0), ctypes.c_float(0.0)
        u = ctypes.c_uint64
        self.check(self.lib.cublasSgemm_v2(self.h, 0, 0, n, n, n, ctypes.byref(one), u(a), n, u(b), n,
                                           ctypes.byref(zero), u(c), n), "cublasSgemm_v2")

    def close(self):
        self.lib.cublasDestroy_v2(self.h)


def sgemm_check(g, blas, n=64):
    host = lambda seed: (ctypes.c_float * (n * n))(*[fill_value(i, seed) for i in range(n * n)])
    A, B = host(3), host(4)
    a, b, c = g.alloc(4 * n * n), g.alloc(4 * n * n), g.alloc(4 * n * n)
    try:
        g.d.cuMemcpyHtoD_v2(a, A, 4 * n * n)
        g.d.cuMemcpyHtoD_v2(b, B, 4 * n * n)
        blas.sgemm(n, a, b, c)
        C = (ctypes.c_float * (n * n))()
        g.d.cuMemcpyDtoH_v2(C, c, 4 * n * n)
    finally:
        g.free(a, b, c)
    err = 0.0
    for j in range(n):  # column-major: C[i + j*n] = sum_k A[i + k*n] * B[k + j*n]
        for i in range(n):
            ref = sum(A[i + k * n] * B[k + j * n] for k in range(n))
            err = max(err, abs(C[i + j * n] - ref))
    return {"ok": err <= 1e-3, "n": n, "max_abs_err": err}


def gemm_tflops(g, run, n, elem, reps):
    a, b, c = g.alloc(elem * n * n), g.alloc(elem * n * n), g.alloc(elem * n * n)
    try:
        g.fill(a, n * n, elem == 2, 5)
        g.fill(b, n * n, elem == 2, 6)
        t = g.time_ms(lambda: run(n, a, b, c), reps)
    finally:
        g.free(a, b, c)
    return {"n": n, "reps": reps, "tflops": round(2.0 * n ** 3 / (median(t) * 1e-3) / 1e12, 2),
            "best_tflops": round(2.0 * n ** 3 / (min(t) * 1e-3) / 1e12, 2)}


def blas_section(d, drv, libs, args):
    lib = libs.get("cublas")
    if lib is None:
        return {"status": "fail", "reason": "no cuBLAS library (libcublas.so.11/12/13) found in the image"}
    g = Gpu(d, drv["device"], tuple(drv["cc"]))
    blas = Blas(lib)
    try:
        n = args.gemm_n or (8192 if drv["memory_bytes"] >= (16 << 30) else 4096)
        sec = {"sgemm_check": sgemm_check(g, blas),
               "gemm_fp16": dict(gemm_tflops(g, blas.gemm_ex, n, 2, args.reps),
                                 precision="FP16 in/out, FP32 compute (cublasGemmEx)"),
               "sgemm": dict(gemm_tflops(g, blas.sgemm, n, 4, max(3, args.reps // 4)), precision="FP32 (cublasSgemm)")}
    finally:
        blas.close()
        g.close()
    ok = sec["sgemm_check"]["ok"]
    sec.update(status="ok" if ok else "fail",
               reason="GemmEx FP16 %.1f TFLOP/s, SGEMM %.1f TFLOP/s" % (sec["gemm_fp16"]["tflops"], sec["sgemm"]["tflops"])
               if ok else "SGEMM result wrong (max abs error %g)" % sec["sgemm_check"]["max_abs_err"])
    return sec


# --------------------------------------------------------------------------
# Paddle, in a child process with the image's python
# --------------------------------------------------------------------------

PADDLE_SCRIPT = r'''
import json, platform, re, sys, time
def emit(**kv):
    sys.stdout.write("@@IMGTOOL@@ " + json.dumps(kv) + "\n"); sys.stdout.flush()
emit(python=platform.python_version())
try:
    import paddle
except Exception as e:
    emit(import_error="%s: %s" % (type(e).__name__, e)); sys.exit(0)
def ver(v):  # CPU builds answer False
    return None if str(v) in ("False", "", "None") else str(v)
emit(version=paddle.__version__, compiled_with_cuda=bool(paddle.is_compiled_with_cuda()),
     cuda=ver(paddle.version.cuda()), cudnn=ver(paddle.version.cudnn()))
try:
    emit(gpu_count=int(paddle.device.cuda.device_count()) if paddle.is_compiled_with_cuda() else 0)
except Exception as e:
    emit(gpu_count=0, gpu_count_error=str(e))
sys.stdout.write("@@RUN_CHECK_BEGIN@@\n"); sys.stdout.flush()
try:
    paddle.utils.run_check(); emit(run_check_raised=None)
except Exception as e:
    emit(run_check_raised="%s: %s" % (type(e).__name__, str(e)[:2000]))
sys.stdout.write("@@RUN_CHECK_END@@\n"); sys.stdout.flush()
# Result checks: ops whose answers are known exactly, on gpu:0 when there is one (else on the CPU),
# against NumPy. Every tensor is kept alive (KEEP) so no freed buffer holding a right answer is handed
# to an op whose kernel never runs; inputs come from the host (to_tensor: a copy, not a kernel).
KEEP = []
def T(a):
    t = paddle.to_tensor(a); KEEP.append(t); return t
def host(t):
    KEEP.append(t); return t.numpy()
def first4(a):
    return [v if v == v and abs(v) != float("inf") else str(v) for v in a.reshape(-1)[:4].tolist()]
def compare(op, dev, want, got, tol):
    want, got = np.asarray(want, dtype=np.float64).reshape(-1), np.asarray(got, dtype=np.float64).reshape(-1)
    rec = {"op": op, "device": dev, "expected": first4(want), "found": first4(got), "tol": tol}
    if want.shape != got.shape:
        rec.update(ok=False, max_abs_err=None, note="found %d values, want %d" % (got.size, want.size)); return rec
    err = float(np.max(np.abs(want - got))) if want.size else 0.0
    finite = err == err and err != float("inf")
    rec.update(ok=bool(finite and err <= tol), max_abs_err=err if finite else None)
    return rec
def c_add():
    one = np.ones(16, dtype=np.float32)
    return X + one, host(paddle.add(T(X), T(one))), 1e-6
def c_sum():
    return [X.astype(np.float64).sum()], host(paddle.sum(T(X))), 1e-4
def c_cast():  # one fp16 ulp at |x| < 4 (2^-9): Paddle 2.6.2's CPU cast rounds other than NumPy's
    h = paddle.cast(T(X), "float16"); KEEP.append(h)  # (seen in `make demo`, 2026-11-27); zeros are far off
    return X.astype(np.float16).astype(np.float32), host(paddle.cast(h, "float32")), 0.002
def c_relu():  # [-1, 1/7, -9/7, 3/7, ...]: negatives and positives among the first four
    y = np.where(np.arange(16) % 2 == 0, -(X + np.float32(1)), X).astype(np.float32)
    return np.maximum(y, 0), host(paddle.nn.functional.relu(T(y))), 0.0
def c_randn():
    r = host(paddle.randn([1000000], dtype="float32")).astype(np.float64)
    return [0.0, 1.0], [r.mean(), r.std()], 0.05
def mm_inputs():  # multiples of 1/8: every product and partial sum is exact in fp16 and TF32
    i, k, j = np.arange(32)[:, None], np.arange(48), np.arange(40)
    a = ((3 * i + 5 * k[None, :]) % 11 - 5) / 8.0
    b = ((7 * k[:, None] + 2 * j[None, :]) % 9 - 4) / 8.0
    return a.astype(np.float32), b.astype(np.float32)
def c_matmul(dtype, tol):  # fp16 through astype, as the timed matmul below
    a, b = mm_inputs()
    ta, tb = T(a), T(b)
    if dtype != "float32":
        ta, tb = ta.astype(dtype), tb.astype(dtype); KEEP.extend([ta, tb])
    return a.astype(np.float64).dot(b), host(paddle.matmul(ta, tb)), tol
def c_conv2d():
    c, h, w = np.meshgrid(np.arange(2), np.arange(7), np.arange(7), indexing="ij")
    x = (((7 * c + 3 * h + 5 * w) % 9 - 4) / 8.0).astype(np.float32)[None]
    o, c, kh, kw = np.meshgrid(np.arange(3), np.arange(2), np.arange(3), np.arange(3), indexing="ij")
    wt = (((5 * o + 3 * c + 2 * kh + kw) % 7 - 3) / 8.0).astype(np.float32)
    want = np.zeros((1, 3, 5, 5))
    for oc in range(3):
        for i in range(5):
            for j in range(5):
                want[0, oc, i, j] = np.sum(x[0, :, i:i + 3, j:j + 3].astype(np.float64) * wt[oc])
    return want, host(paddle.nn.functional.conv2d(T(x), T(wt))), 1e-3
CHECKS = [("add", c_add), ("sum", c_sum), ("cast_fp16", c_cast), ("relu", c_relu), ("randn_moments", c_randn),
          ("matmul_fp32", lambda: c_matmul("float32", 1e-3)), ("matmul_fp16", lambda: c_matmul("float16", 0.02)),
          ("conv2d", c_conv2d)]
def run_result_checks():
    gpu = paddle.is_compiled_with_cuda() and paddle.device.cuda.device_count() > 0
    dev = "gpu:0" if gpu else "cpu"
    paddle.set_device(dev)
    plan = [c for c in CHECKS if gpu or c[0] != "matmul_fp16"]  # Paddle's CPU matmul has no fp16 kernel
    emit(checks_device=dev, checks_planned=[c[0] for c in plan])
    for op, fn in plan:
        try:
            rec = compare(op, dev, *fn())
        except Exception as e:
            rec = {"op": op, "device": dev, "ok": False, "error": "%s: %s" % (type(e).__name__, str(e)[:500])}
        emit(check=rec)
try:
    import numpy as np
    X = np.arange(16, dtype=np.float32) / np.float32(7)
    run_result_checks()
except Exception as e:
    emit(checks_error="%s: %s" % (type(e).__name__, str(e)[:2000]))
def loaded_libraries():  # what Paddle's process really mapped (its dlopen names may differ from ours)
    rx = re.compile(r"lib(cuda|cudart|cublas|cublasLt|cudnn\w*|nccl|nvrtc|curand|cusolver|cusparse|cufft)\.so")
    with open("/proc/self/maps") as f:
        paths = set(l.split()[-1] for l in f if len(l.split()) >= 6)
    return sorted(p for p in paths if rx.match(p.rsplit("/", 1)[-1]))
try:
    emit(loaded_libraries=loaded_libraries())
except Exception:
    pass
def matmul(device, n, dtype, reps):
    paddle.set_device(device)
    a = paddle.randn([n, n], dtype="float32").astype(dtype); b = paddle.randn([n, n], dtype="float32").astype(dtype)
    sync = paddle.device.cuda.synchronize if device.startswith("gpu") else (lambda: None)
    c = paddle.matmul(a, b); sync()
    t = []
    for _ in range(reps):
        t0 = time.perf_counter(); c = paddle.matmul(a, b); sync(); t.append(time.perf_counter() - t0)
    t.sort()
    return {"device": device, "n": n, "dtype": dtype, "reps": reps, "tflops": round(2.0 * n ** 3 / t[len(t) // 2] / 1e12, 3)}
try:
    if paddle.is_compiled_with_cuda() and paddle.device.cuda.device_count() > 0:
        emit(matmul=matmul("gpu:0", int(sys.argv[1]), "float16", 20))
    else:
        emit(matmul=matmul("cpu", 512, "float32", 3))
except Exception as e:
    emit(matmul_error="%s: %s" % (type(e).__name__, str(e)[:2000]))
# CPU baseline (every image): fp32 matmul through Paddle and a STREAM-style copy with numpy.
try:
    import numpy as np
    mm = matmul("cpu", int(sys.argv[2]), "float32", 5)
    n = int(sys.argv[3]) // 8
    src, dst = np.ones(n), np.empty(n)
    np.copyto(dst, src)
    t = []
    for _ in range(5):
        t0 = time.perf_counter(); np.copyto(dst, src); t.append(time.perf_counter() - t0)
    emit(cpu_baseline={"matmul_n": mm["n"], "matmul_GFLOPs": round(mm["tflops"] * 1000, 2),
                       "copy_bytes": 8 * n, "copy_GBps": round(2.0 * 8 * n / min(t) / 1e9, 2), "threads": paddle.get_num_threads() if hasattr(paddle, "get_num_threads") else None})
except Exception as e:
    emit(cpu_baseline_error="%s: %s" % (type(e).__name__, str(e)[:2000]))
'''


CPU_MATMUL_N = 1024          # fp32 matmul of the CPU baseline (2n^3 flops)
CPU_COPY_BYTES = 128 << 20   # per array of the CPU copy (far above any L3)


def run_paddle(python, gemm_n, cpu_n=CPU_MATMUL_N, cpu_bytes=CPU_COPY_BYTES):
    try:
        p = subprocess.run([python, "-c", PADDLE_SCRIPT, str(gemm_n), str(cpu_n), str(cpu_bytes)], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=PADDLE_TIMEOUT_S, universal_newlines=True)
        return p.returncode, p.stdout
    except subprocess.TimeoutExpired as e:
        out = e.output.decode(errors="replace") if isinstance(e.output, bytes) else (e.output or "")
        return "timeout", out


def parse_paddle_output(rc, output):
    """Merge the child's @@IMGTOOL@@ records (each `check` record appended to `checks`); the rest is
    Paddle's own output."""
    info, other, checks = {}, [], []
    for line in output.splitlines():
        if not line.startswith("@@IMGTOOL@@ "):
            other.append(line)
            continue
        try:
            rec = json.loads(line[len("@@IMGTOOL@@ "):])
        except ValueError:  # a line cut by a timeout or a crash
            continue
        if "check" in rec:
            checks.append(rec.pop("check"))
        info.update(rec)
    rc_out = output.split("@@RUN_CHECK_BEGIN@@")[-1].split("@@RUN_CHECK_END@@")[0] if "@@RUN_CHECK_BEGIN@@" in output else ""
    info["exit"] = rc
    info["checks"] = checks
    info["run_check_output"] = "\n".join(l for l in rc_out.splitlines() if not l.startswith("@@"))[-4000:]
    info["output_tail"] = "\n".join(other)[-4000:]
    return info


def fmt_values(vals):
    return "[%s]" % ",".join(("%.8g" % v) if isinstance(v, (int, float)) else str(v) for v in (vals or []))


def describe_check(c):
    """'add got [0,0,0,0] want [1,1.1428572,…]' or 'conv2d raised RuntimeError: …'."""
    if c.get("error"):
        return "%s raised %s" % (c.get("op"), c["error"])
    text = "%s got %s want %s" % (c.get("op"), fmt_values(c.get("found")), fmt_values(c.get("expected")))
    if c.get("found") == c.get("expected"):  # the wrong values are further on
        text += " (first values agree; max abs err %s)" % c.get("max_abs_err")
    return text


def on_gpu(check):
    return str(check.get("device", "")).startswith("gpu")


def wrong_results(bad, cc):
    """The failure for result checks not ok on the GPU (Paddle's kernels did not run, or ran wrong)."""
    devs = ", ".join(sorted(set(str(c.get("device")) for c in bad)))
    return {"status": "fail", "code": "wrong_results",
            "reason": "paddle computes wrong results on %s: %s" % (devs, "; ".join(describe_check(c) for c in bad)),
            "fix": arch_fix(cc) + "; when it has, the wrong results are Paddle's or the driver's: report them "
                                  "with this document"}


def unsupported_cc(line, cc):
    """Paddle's own "compute capability NN ... not supported" line: its kernels will not run here."""
    m = re.search(r"machine is (\d+),", line)
    n = int(m.group(1)) if m else None
    dev = (n // 10, n % 10) if n is not None else (tuple(cc) if cc else None)
    return {"status": "fail", "code": "unsupported_cc", "evidence": line,
            "reason": "Paddle says this GPU's compute capability %s is not supported by its build: its own kernels "
                      "do not run here (results come back wrong or zero) whatever run_check printed"
                      % ("%d.%d" % dev if dev else "(unknown)"),
            "fix": arch_fix(dev)}


def missing_checks(info, expect_variant, gpu_present):
    """A gpu image on a GPU must show result checks run on the GPU; the failure when it does not."""
    checks = info.get("checks") or []
    gpu_ops = set(c.get("op") for c in checks if on_gpu(c))
    missing = [op for op in info.get("checks_planned") or [] if op not in set(c.get("op") for c in checks)]
    if expect_variant != "gpu" or not gpu_present or (gpu_ops and not missing):
        return None
    if info.get("checks_error"):
        why = "the result checks could not run: %s" % info["checks_error"]
    elif gpu_ops:
        why = "no result for %s (the paddle child exited %s)" % (", ".join(missing), info.get("exit"))
    elif checks:
        why = "the result checks ran on %s, not on the GPU (Paddle sees %s GPUs)" % (checks[0].get("device"),
                                                                                    info.get("gpu_count"))
    else:
        why = "the paddle child reported no result checks (an older probe, or it stopped: exit %s)" % info.get("exit")
    return {"status": "fail", "code": "no_result_checks", "reason": "no result checks on the GPU: " + why,
            "fix": "run the image's Paddle by hand on this GPU (an op such as paddle.add on gpu:0) to see where it stops"}


def paddle_failures(info, sec, works_on, expect_variant, expect_cuda, device_cc, archs):
    """Every failure of the paddle section, most telling first (the section takes the first)."""
    if info.get("import_error") or "version" not in info:
        why = info.get("import_error") or "the paddle child process exited %s before importing paddle" % info.get("exit")
        return [{"status": "fail", "code": "import_failed", "reason": "import paddle failed: %s" % why}]
    if expect_variant == "gpu" and not info.get("compiled_with_cuda"):
        return [{"status": "fail", "code": "cpu_only_paddle",
                 "reason": "CPU-only Paddle build in a gpu image: paddle.is_compiled_with_cuda() is False "
                           "(paddle %s); expected a CUDA %s build" % (info.get("version"), expect_cuda or "(any)"),
                 "fix": "install paddlepaddle-gpu built for CUDA %s instead of paddlepaddle" % (expect_cuda or "<image CUDA>")}]
    out = []
    multi = multi_gpu_failure(sec["run_check"]["output"] + "\n" + info.get("output_tail", ""))
    if multi:
        out.append({"status": "fail", "code": "multi_gpu",
                    "reason": "paddle.utils.run_check() works ONLY for a single GPU: %s" % multi,
                    "fix": "check that every visible GPU is free and NCCL is installed (libnccl.so.2); "
                           "or run with --gpus device=0 to use one GPU"})
    kinds = dict((w["kind"], w["line"]) for w in reversed(sec["warnings"]))
    if "no_kernel_image" in kinds or (expect_variant == "gpu" and archs_serve(archs, device_cc) is False):
        out.append(no_kernel_image(archs, device_cc, kinds.get("no_kernel_image", info.get("run_check_raised"))))
    if "unsupported_cc" in kinds:
        out.append(unsupported_cc(kinds["unsupported_cc"], device_cc))
    bad = [c for c in sec["checks"] if on_gpu(c) and not c.get("ok")]
    if bad:
        out.append(wrong_results(bad, device_cc))
    if works_on is None:
        out.append({"status": "fail", "code": "run_check_failed", "reason": "paddle.utils.run_check() failed: %s" %
                    (info.get("run_check_raised") or "no \"works well\" line in its output")})
    gpu_present = device_cc is not None or (info.get("gpu_count") or 0) > 0
    return out + [f for f in [missing_checks(info, expect_variant, gpu_present)] if f]


def gate_throughput(sec):
    """paddle.matmul's throughput stands only on a matmul check that passed on its device and dtype."""
    mm = sec.get("matmul")
    if not mm:
        return
    op = "matmul_fp16" if mm.get("dtype") == "float16" else "matmul_fp32"
    ok = [c for c in sec["checks"] if c.get("op") == op and c.get("device") == mm.get("device") and c.get("ok")]
    if not ok:
        del sec["matmul"]
        sec["warnings"].append({"kind": "throughput_unverified",
                                "line": "paddle.matmul throughput (%s on %s) not reported: the %s result check on %s "
                                        "did not pass or did not run" % (mm.get("dtype"), mm.get("device"), op,
                                                                         mm.get("device"))})


PADDLE_FACTS = ("version", "python", "compiled_with_cuda", "cuda", "cudnn", "gpu_count", "matmul", "loaded_libraries")


def judge_paddle(info, expect_variant, expect_cuda, device_cc=None, archs=None):
    """Paddle section from the child's records. `device_cc` (major, minor) and `archs` (the
    image's io.imgtool.cuda-archs) name a missing kernel image for what it is; result checks
    not ok on the GPU fail it whatever run_check printed."""
    sec = {k: info.get(k) for k in PADDLE_FACTS if info.get(k) is not None}
    works_on, count = run_check_outcome(info.get("run_check_output", ""))
    sec["run_check"] = {"works_on": works_on, "devices": count, "raised": info.get("run_check_raised"),
                        "output": info.get("run_check_output", "")}
    sec["warnings"] = paddle_warnings(info.get("output_tail", "") + "\n" + info.get("run_check_output", ""))
    sec["checks"] = list(info.get("checks") or [])
    if info.get("checks_error"):
        sec["checks_error"] = info["checks_error"]
    failures = paddle_failures(info, sec, works_on, expect_variant, expect_cuda, device_cc, archs)
    sec["failures"] = [{"code": f["code"], "reason": f["reason"]} for f in failures]
    if failures:
        sec.update(failures[0])
        sec["reason"] = "; also: ".join(f["reason"] for f in failures)
    else:
        sec.update(status="ok", reason="paddle %s works well on %d %s" % (info["version"], count, works_on.upper()))
        cpu_bad = [c for c in sec["checks"] if not on_gpu(c) and not c.get("ok")]
        if cpu_bad:  # not the GPU's verdict: a warning, the run still judged by run_check
            sec.update(status="warn", code="wrong_results_cpu", fix="report it with the image's Paddle version",
                       reason=sec["reason"] + ", but computes wrong results on cpu: " +
                       "; ".join(describe_check(c) for c in cpu_bad))
    gate_throughput(sec)
    return sec


# --------------------------------------------------------------------------
# Main: sections in order, each guarded; one JSON document on stdout
# --------------------------------------------------------------------------

def guarded(fn, *a):
    try:
        return fn(*a)
    except CudaError as e:
        sec = {"status": "fail", "reason": str(e), "cuda_error": e.code}
        if getattr(e, "log", None):
            sec["jit_log"] = e.log
        return sec
    except Exception as e:
        return {"status": "fail", "reason": "%s: %s" % (type(e).__name__, e)}


def expectation(args, env_sec, libs_sec):
    variant = args.expect_variant or os.environ.get("IMGTOOL_EXPECT_VARIANT") or None
    cuda = args.expect_cuda or os.environ.get("IMGTOOL_EXPECT_CUDA")
    source = "argument/IMGTOOL_EXPECT_CUDA"
    for src, val in (("NVIDIA_REQUIRE_CUDA", require_cuda(env_sec["env"].get("NVIDIA_REQUIRE_CUDA"))),
                     ("CUDA_VERSION", env_sec["env"].get("CUDA_VERSION")),
                     ("cudart", (libs_sec.get("cudart") or {}).get("version"))):
        if not cuda and val:
            cuda, source = val, src
    archs = getattr(args, "expect_archs", None) or os.environ.get("IMGTOOL_EXPECT_ARCHS") or None
    return {"variant": variant, "cuda": cuda, "cuda_source": source if cuda else None, "archs": archs}


def metrics(report):
    """Flat list of throughput metrics for the records store."""
    out = []
    k, b, p = report.get("kernels") or {}, report.get("blas") or {}, report.get("paddle") or {}
    bw = k.get("bandwidth") or {}
    for name, val, unit in (("bandwidth_copy", bw.get("copy_GBps"), "GB/s"),
                            ("bandwidth_triad", bw.get("triad_GBps"), "GB/s"),
                            ("gemm_fp16", (b.get("gemm_fp16") or {}).get("tflops"), "TFLOP/s"),
                            ("sgemm", (b.get("sgemm") or {}).get("tflops"), "TFLOP/s")):
        if val is not None:
            out.append({"metric": name, "value": val, "unit": unit})
    mm = p.get("matmul") or {}
    if mm.get("tflops") is not None and str(mm.get("device", "")).startswith("gpu"):
        out.append({"metric": "paddle_matmul_fp16", "value": mm["tflops"], "unit": "TFLOP/s"})
    # CPU baseline: its own series (device "cpu: <model>"), judged against its own history only.
    c = report.get("cpu") or {}
    dev = "cpu: %s" % c.get("model", "unknown")
    for name, key, unit in (("cpu_matmul_fp32", "matmul_GFLOPs", "GFLOP/s"), ("cpu_bandwidth_copy", "copy_GBps", "GB/s")):
        if c.get(key) is not None:
            out.append({"metric": name, "value": c[key], "unit": unit, "device": dev})
    return out


def run_probe(args):
    report = {"probe": {"version": PROBE_VERSION, "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                        "nonce": args.nonce}}
    report["identity"] = identity_section(os.environ.get("IMGTOOL_IDENTITY_FILE") or IDENTITY_FILE)
    report["environment"] = environment_section(args)
    report["shm"] = shm_section()
    report["run_settings"] = guarded(run_settings_section, args)
    paddle_python, pinfo = find_paddle_python()
    report["environment"]["paddle_python"] = paddle_python
    report["libraries"], libs = libraries_section(pinfo.get("path") or sys.path)
    exp = report["expect"] = expectation(args, report["environment"], report["libraries"])
    try:
        drv, d = driver_section(args, report["environment"])
    except Exception as e:
        drv, d = {"status": "fail", "reason": "%s: %s" % (type(e).__name__, e)}, None
    report["driver"] = drv
    rt = guarded(runtime_check, libs) if d is not None else None
    if rt:
        report["libraries"]["cudart_runtime"] = rt
    why_not = "GPU part not run: see driver (%s)" % (drv.get("code") or drv.get("status"))
    if d is None:
        for k in ("compat", "kernels", "blas"):
            report[k] = {"status": "skipped", "reason": why_not}
    else:
        report["compat"] = judge_driver_vs_cuda(drv.get("driver_cuda"), exp["cuda"], drv.get("driver_branch"))
        if rt and rt.get("status") == "fail" and report["compat"]["status"] != "fail":
            report["compat"] = rt
        report["kernels"] = guarded(kernels_section, d, drv, args)
        report["blas"] = guarded(blas_section, d, drv, libs, args)
    if args.skip_paddle:
        report["paddle"] = {"status": "skipped", "reason": "--skip-paddle"}
    else:
        rc, out = run_paddle(paddle_python, args.gemm_n or 8192)
        info = parse_paddle_output(rc, out)
        report["paddle"] = judge_paddle(info, exp["variant"], exp["cuda"], (drv or {}).get("cc"), exp.get("archs"))
        report["cpu"] = cpu_section(info)
    report["metrics"] = metrics(report)
    report["verdict"] = verdict(report, exp["variant"], "none" if args.no_gpu_host else args.gpu_host)
    return report


# --------------------------------------------------------------------------
# Run settings (imgtool run-config profiles): what the container was given vs
# what the profile promises. Owner: the run-profile work (keep separate from
# the GPU/CPU throughput sections). Below a promise = a warning with the fix:
# it is a `docker run` / Kubernetes setting, not a property of the image.
# --------------------------------------------------------------------------

RUN_SETTING_FIXES = {
    "memlock": "docker run --ulimit memlock=-1 (profile key ulimit.memlock)",
    "stack": "docker run --ulimit stack=67108864 (profile key ulimit.stack)",
    "shm": "docker run --shm-size <size> or --ipc=host (profile key shm_size)",
    "user": "docker run --user <uid:gid> (profile key user)",
}


def judge_limit(name, soft, promised):
    """A resource limit (bytes, -1 = unlimited) against what the profile promised (None = no promise)."""
    have = "unlimited" if soft < 0 else human_bytes(soft)
    res = {"value": soft, "promised": promised}
    if promised is None:
        res.update(status="ok", reason="%s is %s (no promise)" % (name, have))
    elif soft < 0 or (promised >= 0 and soft >= promised):
        res.update(status="ok", reason="%s is %s" % (name, have))
    else:
        want = "unlimited" if promised < 0 else human_bytes(promised)
        res.update(status="warn", reason="%s is %s, below the profile's %s" % (name, have, want), fix=RUN_SETTING_FIXES[name])
    return res


def judge_user(uid, gid, promised):
    """The user the probe runs as against the profile's "uid[:gid]" (None = no promise)."""
    res = {"uid": uid, "gid": gid, "promised": promised}
    me = "%d:%d" % (uid, gid)
    if promised is None:  # no profile promise: report who, judge nothing (as judge_limit does)
        res.update(status="ok", reason="runs as %s%s (no promise)" % (me, " (root)" if uid == 0 else ""))
        return res
    want_uid, _, want_gid = promised.partition(":")
    ok = str(uid) == want_uid and (not want_gid or str(gid) == want_gid)
    res.update(status="ok" if ok else "warn", reason="runs as %s%s" % (me, "" if ok else ", the profile promises %s" % promised))
    if not ok:
        res["fix"] = RUN_SETTING_FIXES["user"]
    return res


def run_settings_section(args):
    import resource
    def soft(which):
        v = resource.getrlimit(which)[0]
        return -1 if v == resource.RLIM_INFINITY else v
    try:
        st = os.statvfs("/dev/shm")
        shm = st.f_frsize * st.f_blocks
    except OSError:
        shm = 0
    items = {
        "memlock": judge_limit("memlock", soft(resource.RLIMIT_MEMLOCK), args.expect_memlock),
        "stack": judge_limit("stack", soft(resource.RLIMIT_STACK), args.expect_stack),
        "shm": judge_limit("shm", shm, args.expect_shm),
        "user": judge_user(os.getuid(), os.getgid(), args.expect_user),
    }
    bad = [k for k, v in items.items() if v["status"] != "ok"]
    out = dict(items)
    out["status"] = "warn" if bad else "ok"
    out["reason"] = "; ".join(items[k]["reason"] for k in bad) if bad else "run settings meet the profile"
    if bad:
        out["fix"] = "; ".join(items[k]["fix"] for k in bad)
    return out


def parse_args(argv):
    ap = argparse.ArgumentParser(description="imgtool smoke probe (prints one JSON document)")
    ap.add_argument("--expect-variant", choices=["gpu", "cpu"])
    ap.add_argument("--expect-cuda", help="the image's claimed CUDA, e.g. 12.6")
    ap.add_argument("--expect-archs", help="the image's io.imgtool.cuda-archs, e.g. sm_61,sm_70,sm_75,sm_80,sm_86")
    ap.add_argument("--gpus-requested", help="what the host passed to docker run --gpus ('none' if nothing)")
    ap.add_argument("--reps", type=int, default=20, help="timed repetitions (the warm-up run is extra)")
    ap.add_argument("--gemm-n", type=int, default=0, help="GEMM size (default 8192, 4096 under 16 GiB)")
    ap.add_argument("--bw-bytes", type=int, default=0, help="bytes per bandwidth array (default max(256 MiB, 8*L2))")
    ap.add_argument("--skip-paddle", action="store_true")
    ap.add_argument("--gpu-host", choices=["gpu", "none", "test-double"], default="gpu",
                    help="what the host offers a gpu image: gpu (judged in full), none (up to the driver), "
                         "test-double (imgtool's driver double: up to what it serves)")
    ap.add_argument("--no-gpu-host", action="store_true",
                    help="the host has no GPU: judge a gpu image up to the driver, report the GPU part as not run")
    # Run-profile promises (imgtool smoke --profile): bytes, -1 = unlimited; user "uid[:gid]".
    ap.add_argument("--expect-memlock", type=int, default=None)
    ap.add_argument("--expect-stack", type=int, default=None)
    ap.add_argument("--expect-shm", type=int, default=None)
    ap.add_argument("--expect-user", default=None)
    ap.add_argument("--nonce", help="echoed as probe.nonce (printable ASCII, at most %d characters; "
                                     "default: $IMGTOOL_PROBE_NONCE)" % NONCE_MAX_CHARS)
    return ap.parse_args(argv)


def check_nonce(value):
    """(nonce or None, refusal or None): printable ASCII, at most NONCE_MAX_CHARS; empty = none."""
    if not value:
        return None, None
    if len(value) > NONCE_MAX_CHARS:
        return None, "%d characters, at most %d" % (len(value), NONCE_MAX_CHARS)
    if any(not (" " <= ch <= "~") for ch in value):
        return None, "printable ASCII only (0x20-0x7e)"
    return value, None


def document_text(report):
    """The one document on stdout, between its sentinel lines (indented JSON: no line of it starts with '-')."""
    return "%s\n%s\n%s\n" % (DOC_BEGIN, json.dumps(report, indent=2, sort_keys=True), DOC_END)


def extract_document(text):
    """The JSON object between the sentinel lines of `text` (a probe's stdout), or None."""
    lines = text.splitlines()
    if DOC_BEGIN not in lines or DOC_END not in lines[lines.index(DOC_BEGIN):]:
        return None
    start = lines.index(DOC_BEGIN) + 1
    try:
        return json.loads("\n".join(lines[start:start + lines[start:].index(DOC_END)]))
    except ValueError:
        return None


def main(argv=None):
    args = parse_args(argv if argv is not None else sys.argv[1:])
    given = args.nonce if args.nonce is not None else os.environ.get("IMGTOOL_PROBE_NONCE")
    args.nonce, refusal = check_nonce(given)
    if refusal:
        sys.stderr.write("probe.py: --nonce (or IMGTOOL_PROBE_NONCE) refused: %s\n" % refusal)
        return 2
    # Libraries may print to fd 1; keep stdout for the document only.
    sys.stdout.flush()
    json_fd = os.dup(1)
    os.dup2(2, 1)
    try:
        report = run_probe(args)
    except Exception as e:  # last resort: still one JSON document
        report = {"probe": {"version": PROBE_VERSION, "nonce": args.nonce}, "error": "%s: %s" % (type(e).__name__, e),
                  "verdict": {"status": "fail", "reasons": ["probe crashed: %s" % e], "warnings": []}}
    sys.stdout.flush()
    data = document_text(report).encode()
    while data:
        data = data[os.write(json_fd, data):]
    return 0


if __name__ == "__main__":
    sys.exit(main())
