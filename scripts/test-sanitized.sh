#!/usr/bin/env bash
# The suite under the sanitizers: ONE clang build (build-fuzz) with ASan+UBSan, libFuzzer's
# coverage in the fuzz targets only, in which ctest runs
#   - every test (unit, integration, and each fuzz target a few seconds over its checked-in
#     corpus) by default: `make test-asan`, and `make test` when CI=true, so CI runs the
#     integration tests once, under the sanitizers;
#   - only the labels in SANITIZED_LABELS when set (`make test-sanitized`: 'unit|fuzz').
# Without clang + libFuzzer: the label-restricted run says so and exits 0; the whole-suite run
# exits 2 (it must never pass by skipping everything).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD_FUZZ:-build-fuzz}
JOBS=${JOBS:-$(nproc)}
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
echo 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }' >"$probe/f.cc"
LABELS=${SANITIZED_LABELS:-}
if ! command -v clang++ >/dev/null 2>&1 || ! clang++ -fsanitize=fuzzer "$probe/f.cc" -o "$probe/f" 2>/dev/null; then
  echo "test-sanitized: ${LABELS:+SKIPPED tests labelled $LABELS: }clang++ with libFuzzer not found" \
       "(scripts/install-deps.sh installs clang libfuzzer-14-dev libclang-rt-14-dev)" >&2
  [ -n "$LABELS" ] && exit 0
  exit 2
fi
# The GPU integration tests run the gcc release imgtool (tests/CMakeLists.txt says why): the one
# `make build-cli` has just built (the Makefile builds it first). HEAVY_TEST_IMGTOOL= (empty) gives
# them this build's sanitized imgtool instead.
HEAVY=${HEAVY_TEST_IMGTOOL-$(pwd)/${BUILD_RELEASE:-build}/cli/imgtool}
[ -n "$HEAVY" ] && [ ! -x "$HEAVY" ] && HEAVY=
start=$(date +%s)
# Without libFuzzer's coverage in the libraries (IMGTOOL_FUZZ_COVERAGE=OFF, CMakeLists.txt says why):
# bench/fuzz.sh turns it back on for its long runs.
CXX=clang++ cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DIMGTOOL_FUZZ=ON \
  -DIMGTOOL_FUZZ_COVERAGE=OFF -DIMGTOOL_SANITIZE=address,undefined -DIMGTOOL_HEAVY_TEST_IMGTOOL="$HEAVY" >/dev/null
cmake --build "$BUILD" -j "$JOBS"
echo "test-sanitized: clang ASan+UBSan+fuzz build took $(( $(date +%s) - start )) s"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:detect_stack_use_after_return=0:suppressions=$(cd "$(dirname "$0")/.." && pwd)/tests/sanitizer/asan.supp}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
echo "test-sanitized: the GPU integration tests run imgtool ${HEAVY:-of this sanitized build}"
start=$(date +%s)
ctest --test-dir "$BUILD" --output-on-failure -j "$JOBS" ${LABELS:+-L "$LABELS"} --timeout 2400
echo "test-sanitized: ctest${LABELS:+ -L $LABELS} under ASan+UBSan took $(( $(date +%s) - start )) s"
