# A local stand-in for nvidia/cuda:<CUDA>-cudnn<N>-runtime on a Debian base, made from NVIDIA's
# own redistributable wheels (PyPI nvidia-*-cuXX), for hosts that cannot pull nvidia/cuda.
# Built by scripts/make-cuda-base.sh; the pins come from matrix/kb/cuda_wheels.yaml.
# Layout as nvidia/cuda: libraries under /usr/local/cuda-<mm>/targets/x86_64-linux/lib
# (= /usr/local/cuda/lib64), found by the dynamic loader through /etc/ld.so.conf.d +
# ldconfig; /usr/local/nvidia/lib{,64} on LD_LIBRARY_PATH for the driver the runtime injects.
# BASE is the Debian base plus ONE layer of files, /usr/local/cuda-<mm>/, that
# scripts/cuda-files-layer.py makes on the host from the wheels (zip files streamed into a tar: the
# stdlib's zipfile, no pip) and `docker load` writes into the engine's layer store: redist/ (every
# wheel's files, dist-info folders kept, so the image says which NVIDIA packages and versions it
# carries; no __pycache__), targets/x86_64-linux/lib/ (links to the libraries), lib64 ->
# targets/x86_64-linux/lib. Not a COPY: through a build container's fuse-overlayfs, that took most
# of the base's build time (and both cores) here. This recipe adds what the files need to be found.
ARG BASE
FROM ${BASE}
ARG CUDA_MM
ARG CUDA_FULL
ARG CUDNN_FULL
ARG REQUIRE
ARG CUDA_MAJOR
ARG PINS
ARG BASE_KEY
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
      io.imgtool.base.kind="cuda-runtime-from-pypi-redistributables" \
      io.imgtool.base.cuda="${CUDA_MM}" \
      io.imgtool.base.cuda-major="${CUDA_MAJOR}" \
      io.imgtool.base.cudnn="${CUDNN_FULL}" \
      io.imgtool.base.wheels="${PINS}" \
      imgtool.base.key="${BASE_KEY}"
