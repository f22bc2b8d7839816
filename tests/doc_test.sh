#!/bin/sh
# ctest doc_test: every Markdown file and every header comment of the tree names only files and
# scoped symbols the code has (scripts/check-docs.py), and the checker itself catches a deleted
# file, a symbol that moved to another area and a member that no longer exists, in a made-up tree.
set -eu
SRC=${1:?usage: doc_test.sh SOURCE_DIR}
python3 "$SRC/scripts/check-docs.py" "$SRC"

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mk() {  # mk DOC_FILE DOC_TEXT: a tree with nightly/run.h (run_nightly, Steps::publish) and one doc
  rm -rf "$T/t" && mkdir -p "$T/t/nightly" "$T/t/builder" && cd "$T/t" && git init -q .
  printf 'namespace imgtool::nightly {\nstruct Steps { void publish(); };\nvoid run_nightly();\n}\n' > nightly/run.h
  printf 'namespace imgtool::builder {\nvoid build_cells();\n}\n' > builder/build.h
  mkdir -p "$(dirname "$1")" && printf '%b' "$2" > "$1"
  cd - >/dev/null
}
expect_fail() {  # expect_fail WHAT PATTERN
  if out=$(python3 "$SRC/scripts/check-docs.py" "$T/t" 2>&1); then
    echo "FAIL: $1 passed the check"; exit 1
  fi
  echo "$out" | grep -q "$2" || { echo "FAIL: $1: expected '$2' in: $out"; exit 1; }
  echo "ok: $1"
}
mk README.md 'See `nightly/run.h`, `nightly::run_nightly`, `nightly::Steps::publish` and `builder::build_cells`.\n'
python3 "$SRC/scripts/check-docs.py" "$T/t" >/dev/null || { echo "FAIL: names that exist were refused"; exit 1; }
echo "ok: names that exist pass"
mk README.md 'The driver: `nightly/driver.h`.\n'
expect_fail "a deleted file in a README" 'README.md:1: `nightly/driver.h` names a path the tree does not have'
mk builder/x.h '// The nightly is `builder::run_nightly` (moved to nightly/).\nint x;\n'
expect_fail "a header naming a symbol in the area it left" 'builder/x.h:1: `builder::run_nightly`: builder/ defines no `run_nightly`'
mk builder/y.h '// Publishing: `Steps::push`, see nightly/steps.h.\nint y;\n'
expect_fail "a member that no longer exists" '`Steps::push`: no `push` in the sources'
expect_fail "a plain header path in a header comment" 'builder/y.h:1: `nightly/steps.h` names a path'
mk builder/z.h '// Called from the hook Steps::on_contents (no backticks).\nint z;\n'
expect_fail "a plain Type::member in a header comment" 'builder/z.h:1: `Steps::on_contents`: no `on_contents` in the sources'
