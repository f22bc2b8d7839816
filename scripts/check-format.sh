#!/bin/sh
# Every C++ file of the tree as .clang-format writes it (ctest format_test; CI runs it through
# `make test`). --fix rewrites the files in place instead. Needs clang-format-14
# (scripts/install-deps.sh installs it).
set -eu
FIX=0
if [ "${1:-}" = "--fix" ]; then FIX=1; cd "$(dirname "$0")/.."; else cd "${1:-$(dirname "$0")/..}"; fi
CF=$(command -v clang-format-14 || command -v clang-format || true)
[ -n "$CF" ] || { echo "check-format: expected clang-format-14, found none (scripts/install-deps.sh installs it)" >&2; exit 2; }
FILES=$(git ls-files '*.h' '*.cc')
if [ "$FIX" = 1 ]; then
  echo "$FILES" | xargs "$CF" -i
  exit 0
fi
BAD=$(for f in $FILES; do "$CF" --dry-run --Werror "$f" >/dev/null 2>&1 || echo "$f"; done)
if [ -n "$BAD" ]; then
  echo "$BAD" | sed 's/$/: not as .clang-format writes it/'
  echo "check-format: $(echo "$BAD" | wc -l) file(s) differ; run scripts/check-format.sh --fix" >&2
  exit 1
fi
echo "check-format: $(echo "$FILES" | wc -l) files as .clang-format writes them"
