# A local stand-in for nvidia/cuda:<CUDA>-cudnn<N>-runtime on a Debian base, made from NVIDIA's
# own redistributable wheels (PyPI nvidia-*-cuXX), for hosts that cannot pull nvidia/cuda.
# Built by scripts/make-cuda-base.sh; the pins come from matrix/kb/cuda_wheels.yaml.
# Layout as nvidia/cuda: libraries under /usr/local/cuda-<mm>/targets/x86_64-linux/lib
# (= /usr/local/cuda/lib64), found by the dynamic loader through /etc/ld.so.conf.d +
# ldconfig; /usr/local/nvidia/lib{,64} on LD_LIBRARY_PATH for the driver the runtime injects.
ARG BASE
FROM ${BASE} AS unpack
ARG CUDA_MM
COPY wheels/ /tmp/nvidia-wheels/
# Wheels are zip files: unpacked with the stdlib (no pip, no network). The dist-info folders
# stay, so the image says which NVIDIA packages (and versions) it carries.
RUN set -eu; d=/usr/local/cuda-${CUDA_MM}; lib=$d/targets/x86_64-linux/lib; \
    mkdir -p "$d/redist" "$lib"; \
    for w in /tmp/nvidia-wheels/*.whl; do python3 -m zipfile -e "$w" "$d/redist/"; done; \
    for f in "$d"/redist/nvidia/*/lib/lib*.so*; do ln -s "../../../redist/${f#$d/redist/}" "$lib/"; done; \
    ln -s libcudnn.so.8 "$lib/libcudnn.so"; \
    ln -s targets/x86_64-linux/lib "$d/lib64"; \
    find "$d/redist" -name '__pycache__' -prune -exec rm -rf {} +

FROM ${BASE}
ARG CUDA_MM
ARG CUDA_FULL
ARG CUDNN_FULL
ARG REQUIRE
COPY --from=unpack /usr/local/cuda-${CUDA_MM} /usr/local/cuda-${CUDA_MM}
RUN ln -s "cuda-${CUDA_MM}" /usr/local/cuda \
 && printf '%s\n' /usr/local/cuda/targets/x86_64-linux/lib /usr/local/cuda/lib64 > /etc/ld.so.conf.d/000_cuda.conf \
 && printf '%s\n' /usr/local/nvidia/lib /usr/local/nvidia/lib64 > /etc/ld.so.conf.d/nvidia.conf \
 && ldconfig
ENV CUDA_VERSION=${CUDA_FULL} \
    NV_CUDNN_VERSION=${CUDNN_FULL} \
    PATH=/usr/local/nvidia/bin:/usr/local/cuda/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    LD_LIBRARY_PATH=/usr/local/nvidia/lib:/usr/local/nvidia/lib64 \
    NVIDIA_VISIBLE_DEVICES=all \
    NVIDIA_DRIVER_CAPABILITIES=compute,utility \
    NVIDIA_REQUIRE_CUDA=${REQUIRE}
LABEL com.nvidia.cudnn.version="${CUDNN_FULL}" \
      com.nvidia.cuda.version="${CUDA_FULL}" \
      io.imgtool.base.kind="cuda-runtime-from-pypi-redistributables"
