#!/usr/bin/env bash
# Installs everything imgtool's build, tests and README commands need on a
# fresh Debian 12 machine. Idempotent and quick when all is present.
set -euo pipefail
# usage: scripts/install-deps.sh [--demo]
#   --demo: only what `make demo` needs (build the imgtool binary, make the fixtures, run the
#   registry): no compilers for the fuzz build, no browser, no test-only Python packages.
DEMO=0; [ "${1:-}" = --demo ] && DEMO=1
APT_PKGS=(cmake ninja-build pkg-config g++ ccache make
  libarchive-dev libssl-dev libcurl4-openssl-dev nlohmann-json3-dev
  libboost-dev libboost-filesystem-dev libboost-system-dev doctest-dev libyaml-cpp-dev libcli11-dev
  libsqlite3-dev libzstd-dev libisal-dev zlib1g-dev
  docker-registry debootstrap openssl curl python3 python3-pip
  python3-yaml)  # scripts/make-cuda-base.sh reads matrix/kb/cuda_wheels.yaml
TEST_APT_PKGS=(docker-compose skopeo umoci apache2-utils
  python3-jwt python3-cryptography  # the test token server (image/testing/token_server.py)
  clang libfuzzer-14-dev libclang-rt-14-dev  # fuzz targets (fuzz/)
  clang-format-14  # ctest format_test (.clang-format)
  fuse-overlayfs iproute2 util-linux gcc  # the GPU test engine (tests/gpu_engine)
  python3-venv  # the spdx-tools venv (SBOM tests, below)
  chromium)  # the nightly report rendered by a real browser (nightly/report_browser_test)
[ "$DEMO" = 1 ] || APT_PKGS+=("${TEST_APT_PKGS[@]}")
missing=()
for p in "${APT_PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: apt-get install ${missing[*]}" >&2
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# The registry package starts a system service on :5000; tests run their own.
if command -v systemctl >/dev/null 2>&1; then systemctl disable --now docker-registry >/dev/null 2>&1 || true; fi
if [ "$DEMO" = 1 ]; then
  docker info >/dev/null 2>&1 || { echo "install-deps: the Docker engine is not reachable (docker info failed)" >&2; exit 1; }
  exit 0
fi
# BuildKit's Dockerfile parser (Go, wrapped for Python) checks generated Dockerfiles.
# kubernetes-validate: offline Kubernetes schema validation of `imgtool run-config --format k8s`
# and of `imgtool plan --emit k8s`.
# check-jsonschema: its vendored GitHub Actions / GitLab CI schemas check `imgtool plan --emit github|gitlab`.
PY_PKGS=("dockerfile==3.4.0" "kubernetes-validate==1.37.0"
  "check-jsonschema==0.39.0")
for spec in "${PY_PKGS[@]}"; do
  name=${spec%%==*}
  python3 -m pip show -q "$name" >/dev/null 2>&1 || python3 -m pip install -q "$spec" 2>/dev/null \
    || python3 -m pip install -q --break-system-packages "$spec"
done
# spdx-tools (pyspdxtools): validates imgtool's SPDX SBOMs in sbom/ tests; its own cached venv.
SPDX_VENV="${IMGTOOL_CACHE:-$HOME/.cache/imgtool}/venv-spdx"
[ -x "$SPDX_VENV/bin/pyspdxtools" ] || { python3 -m venv "$SPDX_VENV" && "$SPDX_VENV/bin/pip" install -q "spdx-tools==0.8.3"; }
docker info >/dev/null 2>&1 || { echo "install-deps: the Docker engine is not reachable (docker info failed)" >&2; exit 1; }
