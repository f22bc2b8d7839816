#!/usr/bin/env python3
"""STAND-IN (test double) for a paddlepaddle-gpu 3.x wheel: NOT Paddle.

Paddle's 3.x GPU wheels live on Paddle's own index, which cannot be reached here. This writes a
wheel that looks to pip and to imgtool's gate like the real one, so a 3.x cell's own recipe
installs the real nvidia-* wheels from PyPI beside it and the gate judges them:

  usage: make-paddle-gpu-standin.py --cuda 12.6|13.0 [--version 3.3.1] --out DIR  -> prints the wheel's path
         make-paddle-gpu-standin.py --cuda 12.6|13.0 --print-requires  -> what a wheelhouse for it needs

- METADATA: Name paddlepaddle-gpu; the CPU wheel's own requirements (paddlepaddle 3.3.1 from PyPI,
  read 2026-11-27) plus the nvidia-* pins of Paddle's setup.py PADDLE_CUDA_INSTALL_REQUIREMENTS for
  that nvcc key, each with its Linux x86_64 marker (matrix/kb/sources/paddle-3x-wheels.md section 1a:
  "12.6" confirmed for 3.0.0/3.2.0/3.3.1 by pip output; "13.0" from Manfredss/Paddle-MPS-Dev setup.py
  @ 8a1472b3, one pin corroborated for 3.3.1 cu130: UNCONFIRMED). Summary says it is a stand-in.
- paddle/version/__init__.py: the 3.3.1 CPU wheel's file with the GPU build's values (cuda_version,
  cudnn_version; with_pip_cuda_libraries = 'ON' as that wheel reports).
- paddle/libs/libphi.so and paddle/base/libpaddle.so: stubs compiled here whose dynamic sections
  follow the 3.3.1 wheel's (readelf -d: libphi.so RUNPATH $ORIGIN/../../nvidia/cuda_runtime/lib:
  $ORIGIN:$ORIGIN/../libs; libpaddle.so RUNPATH = every nvidia/*/lib folder + $ORIGIN/../libs/,
  NEEDED libphi.so) plus, for a GPU build, NEEDED libcudart.so.<major> (Linux GPU builds link the
  CUDA runtime shared: CMakeLists.txt @ develop 84b6a44d, kb/sources/paddle-dynload.md; UNCONFIRMED
  at the tag), and the dlopen strings of phi/backends/dynload (the pip branch @ 84b6a44d for CUDA 12;
  for CUDA 13 the KB's sonames, UNCONFIRMED). No GPU code, no Python API: `import paddle` prints
  that it is a stand-in and provides nothing.
"""
import argparse
import base64
import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile

LINUX = "; platform_system == 'Linux' and platform_machine == 'x86_64'"
CPU_REQUIRES = ["httpx", "numpy>=1.21", "protobuf>=3.20.2", "Pillow", "opt_einsum==3.3.0", "networkx",
                "typing_extensions", "safetensors>=0.6.0", 'setuptools; python_version >= "3.12"']
# PADDLE_CUDA_INSTALL_REQUIREMENTS (paddle-3x-wheels.md 1a); cufile, cusparselt and nvjitlink included.
PINS = {
    "12.6": {"cudnn": "9.5.1", "requires": [
        "nvidia-cuda-runtime-cu12==12.6.77", "nvidia-cuda-cupti-cu12==12.6.80", "nvidia-cudnn-cu12==9.5.1.17",
        "nvidia-cublas-cu12==12.6.4.1", "nvidia-cufft-cu12==11.3.0.4", "nvidia-curand-cu12==10.3.7.77",
        "nvidia-cusolver-cu12==11.7.1.2", "nvidia-cusparse-cu12==12.5.4.2", "nvidia-cusparselt-cu12==0.6.3",
        "nvidia-nccl-cu12==2.25.1", "nvidia-nvtx-cu12==12.6.77", "nvidia-nvjitlink-cu12==12.6.85",
        "nvidia-cuda-nvrtc-cu12==12.6.77", "nvidia-cufile-cu12==1.11.1.6"]},
    "13.0": {"cudnn": "9.13.0", "requires": [
        "nvidia-cuda-runtime==13.0.88", "nvidia-cuda-cupti==13.0.85", "nvidia-cudnn-cu13==9.13.0.50",
        "nvidia-cublas==13.0.2.14", "nvidia-cufft==12.0.0.61", "nvidia-curand==10.4.0.35",
        "nvidia-cusolver==12.0.4.66", "nvidia-cusparse==12.6.3.3", "nvidia-cusparselt-cu13==0.8.1",
        "nvidia-nccl-cu13==2.28.3", "nvidia-nvtx==13.0.85", "nvidia-nvjitlink==13.0.88",
        "nvidia-cuda-nvrtc==13.0.88", "nvidia-cufile==1.15.1.6"]},
}
# dlopen strings (phi/backends/dynload/dynamic_loader.cc, pip branch).
DLOPEN = {
    "12": ["libcublas.so.12", "libcublasLt.so.12", "libcudnn.so.9", "libcurand.so.10", "libcusolver.so.11",
           "libcusparse.so.12", "libcufft.so.11", "libcupti.so.12", "libnccl.so;libnccl.so.2", "libnvrtc.so",
           "libnvjpeg.so", "libnvToolsExt.so", "libcuda.so", "libnvinfer.so", "libcusparseLt.so"],
    "13": ["libcublas.so.13", "libcublasLt.so.13", "libcudnn.so.9", "libcurand.so.10", "libcusolver.so.12",
           "libcusparse.so.12", "libcufft.so.12", "libcupti.so.13", "libnccl.so;libnccl.so.2", "libnvrtc.so",
           "libnvjpeg.so", "libnvToolsExt.so", "libcuda.so", "libnvinfer.so", "libcusparseLt.so"],
}
NVIDIA_DIRS = ["cuda_runtime", "cuda_nvrtc", "cublas", "cudnn", "curand", "cusparse", "nvjitlink", "cuda_cupti",
               "cuda_runtime", "cufft", "cufft", "cusolver", "nccl", "nvtx"]
BANNER = "STAND-IN for paddlepaddle-gpu (imgtool test double): not Paddle"


def cc(out, source, args):
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "stub.c")
        with open(src, "w") as f:
            f.write(source)
        subprocess.run(["cc", "-shared", "-fPIC", "-O1", "-o", out, src, *args], check=True)


def stubs(tmp, cuda):
    major = cuda.split(".")[0]
    # A library only to link against, so the stubs carry NEEDED libcudart.so.<major> (never shipped).
    os.makedirs(os.path.join(tmp, "link"))
    cc(os.path.join(tmp, "link", "libcudart.so." + major), "int cudart_stub;", ["-Wl,-soname,libcudart.so." + major])
    names = ",\n".join('  "%s"' % n for n in DLOPEN[major])
    phi = os.path.join(tmp, "libphi.so")
    cc(phi, "/* %s */\nconst char* const imgtool_standin_dlopen_names[] = {\n%s\n};\n"
            "const char* imgtool_standin(void) { return \"%s\"; }\n" % (BANNER, names, BANNER),
       ["-Wl,-soname,libphi.so", "-Wl,--enable-new-dtags",
        "-Wl,-rpath,$ORIGIN/../../nvidia/cuda_runtime/lib:$ORIGIN:$ORIGIN/../libs",
        "-L" + os.path.join(tmp, "link"), "-Wl,--no-as-needed", "-l:libcudart.so." + major])
    runpath = ":".join("$ORIGIN/../../nvidia/%s/lib" % d for d in NVIDIA_DIRS) + ":$ORIGIN/../libs/"
    libpaddle = os.path.join(tmp, "libpaddle.so")
    cc(libpaddle, "extern const char* imgtool_standin(void);\nconst char* PyInit_libpaddle(void) "
                  "{ return imgtool_standin(); }\n",
       ["-Wl,-soname,libpaddle.so", "-Wl,--enable-new-dtags", "-Wl,-rpath," + runpath, "-L" + tmp,
        "-Wl,--no-as-needed", "-l:libphi.so"])
    return phi, libpaddle


def version_file(version, cuda, cudnn):
    major, minor, patch = version.split(".")
    return f"""# STAND-IN (imgtool test double) of the file Paddle's setup.py generates; values of a {version} cu{cuda.replace('.', '')} build.
full_version     = '{version}'
major            = '{major}'
minor            = '{minor}'
patch            = '{patch}'
nccl_version     = '0'
rc               = '0'
cuda_version     = '{cuda}'
cudnn_version    = '{cudnn}'
hip_version      = None
is_tagged        = True
commit           = 'imgtool-stand-in'
with_mkl         = 'ON'
cinn_version     = 'False'
tensorrt_version = 'None'
with_pip_cuda_libraries = 'ON'
with_pip_tensorrt       = 'OFF'
compiled_cuda_archs     = []

def cuda():
    return cuda_version

def cudnn():
    return cudnn_version

def cuda_archs():
    return compiled_cuda_archs
"""


def record_line(path, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def main():
    ap = argparse.ArgumentParser(description=BANNER)
    ap.add_argument("--cuda", required=True, choices=sorted(PINS))
    ap.add_argument("--version", default="3.3.1")
    ap.add_argument("--out")
    ap.add_argument("--print-requires", action="store_true")
    a = ap.parse_args()
    pins = PINS[a.cuda]
    if a.print_requires:  # for Python 3.11: the setuptools requirement's marker is false there
        print("\n".join(pins["requires"] + [r for r in CPU_REQUIRES if ";" not in r]))
        return 0
    if not a.out:
        ap.error("--out DIR is required")
    dist = f"paddlepaddle_gpu-{a.version}.dist-info"
    requires = CPU_REQUIRES + [p + LINUX for p in pins["requires"]]
    metadata = "\n".join(["Metadata-Version: 2.1", "Name: paddlepaddle-gpu", "Version: " + a.version,
                          "Summary: " + BANNER + f" (cu{a.cuda.replace('.', '')} requirements of the real wheel)",
                          "License: Apache-2.0"] + ["Requires-Dist: " + r for r in requires]) + "\n"
    with tempfile.TemporaryDirectory() as tmp:
        phi, libpaddle = stubs(tmp, a.cuda)
        files = {
            "paddle/__init__.py": (f'print("{BANNER}")\n__version__ = "{a.version}"\nSTAND_IN = True\n').encode(),
            "paddle/version/__init__.py": version_file(a.version, a.cuda, pins["cudnn"]).encode(),
            "paddle/libs/libphi.so": open(phi, "rb").read(),
            "paddle/base/libpaddle.so": open(libpaddle, "rb").read(),
            f"{dist}/METADATA": metadata.encode(),
            f"{dist}/WHEEL": b"Wheel-Version: 1.0\nGenerator: imgtool stand-in\nRoot-Is-Purelib: false\n"
                             b"Tag: cp311-cp311-manylinux1_x86_64\n",
            f"{dist}/top_level.txt": b"paddle\n",
        }
        record = [record_line(p, d) for p, d in files.items()] + [f"{dist}/RECORD,,"]
        files[f"{dist}/RECORD"] = ("\n".join(record) + "\n").encode()
        os.makedirs(a.out, exist_ok=True)
        wheel = os.path.join(a.out, f"paddlepaddle_gpu-{a.version}-cp311-cp311-manylinux1_x86_64.whl")
        with zipfile.ZipFile(wheel + ".tmp", "w", zipfile.ZIP_DEFLATED) as z:
            for p, d in files.items():
                info = zipfile.ZipInfo(p, date_time=(2026, 1, 1, 0, 0, 0))
                info.external_attr = (0o755 if p.endswith(".so") else 0o644) << 16
                info.compress_type = zipfile.ZIP_DEFLATED
                z.writestr(info, d)
        os.replace(wheel + ".tmp", wheel)
    print(wheel)


if __name__ == "__main__":
    sys.exit(main())
