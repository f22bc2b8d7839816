#!/bin/sh
# ctest layering_test: the tree keeps ARCHITECTURE.md's layers (scripts/check-layers.py), and the
# checker itself catches an upward include, a cycle and an unknown area in a small made-up tree.
set -eu
SRC=${1:?usage: layering_test.sh SOURCE_DIR}
python3 "$SRC/scripts/check-layers.py" "$SRC"

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mk() {  # mk ARCH_BLOCK FILE CONTENT
  rm -rf "$T/t" && mkdir -p "$T/t" && cd "$T/t" && git init -q .
  printf '# x\n```layers\n%b```\n' "$1" > ARCHITECTURE.md
  mkdir -p "$(dirname "$2")" && printf '%b' "$3" > "$2"
  cd - >/dev/null
}
expect_fail() {  # expect_fail WHAT PATTERN
  if out=$(python3 "$SRC/scripts/check-layers.py" "$T/t" 2>&1); then
    echo "FAIL: $1 passed the check"; exit 1
  fi
  echo "$out" | grep -q "$2" || { echo "FAIL: $1: expected '$2' in: $out"; exit 1; }
  echo "ok: $1"
}
mk 'core:\nimage: core\n' core/a.cc '#include "image/x.h"\n'
expect_fail "core including image (upward)" 'core/a.cc:1: core includes image/'
mk 'core: image\nimage: core\n' core/a.cc '\n'
expect_fail "a cycle in the table" 'a cycle'
mk 'core:\n' zz/a.cc '\n'
expect_fail "an area with no line" 'area zz has no line'
mk 'core:\nimage: core\nimage (tests): \n' image/a_test.cc '#include "tests/fixtures.h"\n#include "core/x.h"\n'
python3 "$SRC/scripts/check-layers.py" "$T/t" >/dev/null || { echo "FAIL: a test including tests/ and a lower area was refused"; exit 1; }
echo "ok: tests may include tests/"
