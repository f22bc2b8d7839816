#!/usr/bin/env bash
# The sanitizer half of `make test`: ONE clang build (build-fuzz) with ASan+UBSan and
# libFuzzer coverage, where the unit tests (label unit) run under the sanitizers and each
# fuzz target runs a few seconds over its checked-in corpus (label fuzz). The integration
# tests run once, in the normal build, not here (`make test-asan` runs everything under
# ASan+UBSan with gcc). Without clang + libFuzzer this says so and exits 0.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD_FUZZ:-build-fuzz}
JOBS=${JOBS:-$(nproc)}
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
echo 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }' >"$probe/f.cc"
if ! command -v clang++ >/dev/null 2>&1 || ! clang++ -fsanitize=fuzzer "$probe/f.cc" -o "$probe/f" 2>/dev/null; then
  echo "test-sanitized: SKIPPED unit tests under ASan+UBSan and the fuzz runs: clang++ with libFuzzer not found" \
       "(scripts/install-deps.sh installs clang libfuzzer-14-dev libclang-rt-14-dev)" >&2
  exit 0
fi
start=$(date +%s)
CXX=clang++ cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DIMGTOOL_FUZZ=ON \
  -DIMGTOOL_SANITIZE=address,undefined >/dev/null
cmake --build "$BUILD" -j "$JOBS"
echo "test-sanitized: clang ASan+UBSan+fuzz build took $(( $(date +%s) - start )) s"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:detect_stack_use_after_return=0:suppressions=$(cd "$(dirname "$0")/.." && pwd)/tests/sanitizer/asan.supp}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
ctest --test-dir "$BUILD" --output-on-failure -j "$JOBS" -L 'unit|fuzz' --timeout 1200
