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
# One copy of each wheel on disk: a wheel another wheelhouse already holds with the same bytes (the
# CUDA bases' and the 3.x cells' nvidia-* wheels: 3.3 GB in one run of the suite) becomes a hard
# link to it in wheelhouse/store/<sha256>.whl; .stored marks a wheelhouse done (one made before the
# store is done on its next use). A store file no wheelhouse links any more (link count 1: its
# wheelhouse was removed) goes. ln -f replaces atomically and leaves the wheel as it is when the
# store's copy vanished meanwhile.
store_wheels() {
  local store h w
  store=$(dirname "$DIR")/store
  mkdir -p "$store"
  for w in "$1"/*.whl; do
    h=$(sha256sum "$w" | cut -c1-64)
    if [ -f "$store/$h.whl" ]; then ln -f "$store/$h.whl" "$w" 2>/dev/null || true
    else ln "$w" "$store/$h.whl" 2>/dev/null || true; fi
  done
  find "$store" -maxdepth 1 -name '*.whl' -links 1 -delete 2>/dev/null || true
  touch "$1/.stored"
}
# One filler per key: two tests (or a test and the demo) asking for the same wheelhouse at once
# used to share $DIR.part, and the second `rm -rf "$DIR"; mv` replaced the first's complete
# wheelhouse with a half-downloaded one. The lock is held from the check to the rename.
mkdir -p "$(dirname "$DIR")"
exec 9>"$DIR.lock"
flock 9
# The pip wheel is added to a complete wheelhouse made before the pin existed (same key).
if [ -f "$DIR/.complete" ]; then
  ls "$DIR"/pip-"${PIP_PIN#pip==}"-*.whl >/dev/null 2>&1 || pip_download --no-deps -d "$DIR" "$PIP_PIN"
  [ -f "$DIR/.stored" ] || store_wheels "$DIR"
  echo "$DIR"; exit 0
fi
PART=$(mktemp -d "$DIR.part.XXXXXX")
trap 'rm -rf "$PART"' EXIT
echo "wheelhouse: downloading $* for Python $PY into $DIR" >&2
pip_download -d "$PART" "$@"
pip_download --no-deps -d "$PART" "$PIP_PIN"
printf '%s\n' "$@" > "$PART/requirements.txt"
store_wheels "$PART"
touch "$PART/.complete"
rm -rf "$DIR" "$DIR.part"; mv "$PART" "$DIR"
echo "$DIR"
