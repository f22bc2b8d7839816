#!/usr/bin/env bash
# Fills a host-side wheelhouse for offline image builds: downloads a package
# and all its dependencies as manylinux x86_64 wheels for one Python version.
# Cached under ~/.cache/imgtool/wheelhouse/<key>/, keyed by the request, so a
# second run downloads nothing. Prints the wheelhouse folder on the last line.
#
# Platforms: every manylinux_2_N for N 17..28 (glibc <= Debian 12's 2.36; CUDA 13's wheels use
# 2_18, 2_25, 2_27, 2_28 tags), manylinux2014/1 and pure-Python wheels.
#
# Every wheelhouse also holds the pinned pip the templates install before their
# first `pip install` ($PIP_PIN; the same pin as dockerfiles/cell_values.cc's
# pip_pin): an old base's venv pip (focal: 20.0.2) cannot install manylinux_2_x wheels.
#
# usage: scripts/wheelhouse.sh PYTHON_VERSION REQUIREMENT...
#   e.g. scripts/wheelhouse.sh 3.11 paddlepaddle==3.3.1
set -euo pipefail
PIP_PIN=pip==24.3.1
[ $# -ge 2 ] || { echo "usage: $0 PYTHON_VERSION REQUIREMENT..." >&2; exit 2; }
PY=$1; shift
SCRIPT_VERSION=1
KEY=$(printf '%s\n' "$PY" "$@" "$SCRIPT_VERSION" | sha256sum | cut -c1-16)
DIR=${IMGTOOL_CACHE:-$HOME/.cache/imgtool}/wheelhouse/$KEY
pip_download() {
  python3 -m pip download -q --only-binary=:all: --python-version "$PY" --implementation cp \
    $(for v in 28 27 26 25 24 23 22 21 20 19 18 17; do printf -- '--platform manylinux_2_%s_x86_64 ' "$v"; done) \
    --platform manylinux2014_x86_64 \
    --platform manylinux1_x86_64 --platform any "$@" >&2
}
# The pip wheel is added to a complete wheelhouse made before the pin existed (same key).
if [ -f "$DIR/.complete" ]; then
  ls "$DIR"/pip-"${PIP_PIN#pip==}"-*.whl >/dev/null 2>&1 || pip_download --no-deps -d "$DIR" "$PIP_PIN"
  echo "$DIR"; exit 0
fi
mkdir -p "$DIR.part"
echo "wheelhouse: downloading $* for Python $PY into $DIR" >&2
pip_download -d "$DIR.part" "$@"
pip_download --no-deps -d "$DIR.part" "$PIP_PIN"
printf '%s\n' "$@" > "$DIR.part/requirements.txt"
touch "$DIR.part/.complete"
rm -rf "$DIR"; mv "$DIR.part" "$DIR"
echo "$DIR"
