#!/usr/bin/env bash
# Fills a host-side wheelhouse for offline image builds: downloads a package
# and all its dependencies as manylinux x86_64 wheels for one Python version.
# Cached under ~/.cache/imgtool/wheelhouse/<key>/, keyed by the request, so a
# second run downloads nothing. Prints the wheelhouse folder on the last line.
#
# usage: scripts/wheelhouse.sh PYTHON_VERSION REQUIREMENT...
#   e.g. scripts/wheelhouse.sh 3.11 paddlepaddle==3.2.0
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 PYTHON_VERSION REQUIREMENT..." >&2; exit 2; }
PY=$1; shift
SCRIPT_VERSION=1
KEY=$(printf '%s\n' "$PY" "$@" "$SCRIPT_VERSION" | sha256sum | cut -c1-16)
DIR=${IMGTOOL_CACHE:-$HOME/.cache/imgtool}/wheelhouse/$KEY
if [ -f "$DIR/.complete" ]; then echo "$DIR"; exit 0; fi
mkdir -p "$DIR.part"
echo "wheelhouse: downloading $* for Python $PY into $DIR" >&2
python3 -m pip download -q --only-binary=:all: --python-version "$PY" --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
  --platform manylinux1_x86_64 --platform any -d "$DIR.part" "$@" >&2
printf '%s\n' "$@" > "$DIR.part/requirements.txt"
touch "$DIR.part/.complete"
rm -rf "$DIR"; mv "$DIR.part" "$DIR"
echo "$DIR"
