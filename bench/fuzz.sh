#!/usr/bin/env bash
# bench/fuzz.sh [TARGET…]: runs each libFuzzer target (fuzz/) for RUNS executions or
# FUZZ_SECONDS seconds, whichever comes first, starting from its checked-in corpus, and prints
# one row per target: executions, exec/s, crashes (crash-/leak-/timeout-/oom- files),
# coverage (cov = edges, ft = features) and corpus size. Defaults: RUNS=10000000,
# FUZZ_SECONDS=1200; FUZZ_PARALLEL=N runs N targets at once; FUZZ_TIMEOUT (default 10) is
# libFuzzer's per-input limit in seconds (raise it to pause runs with SIGSTOP: a unit
# stopped longer than it is reported as a timeout); FUZZ_MAX_LEN (default 65536) is the largest
# input libFuzzer makes (the rate falls with it: the JSON targets parse whole inputs). The build is the one
# scripts/test-sanitized.sh makes (build-fuzz, clang, ASan+UBSan). Findings are kept under
# $OUT (default build-fuzz/fuzz-runs/<target>/).
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-10000000}
SECONDS_PER_TARGET=${FUZZ_SECONDS:-1200}
TIMEOUT=${FUZZ_TIMEOUT:-10}
MAX_LEN=${FUZZ_MAX_LEN:-65536}
BUILD=${BUILD_FUZZ:-build-fuzz}
JOBS=${JOBS:-$(nproc)}
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(matrix reference challenge payload manifest layer dsse statement gunzip link)
BIN_DIR=${FUZZ_BIN_DIR:-}  # prebuilt fuzz_<target> binaries: skip the build
if [ -z "$BIN_DIR" ]; then
  # Coverage in every library (scripts/test-sanitized.sh builds the same folder without it: a switch
  # between the two recompiles everything).
  CXX=clang++ cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DIMGTOOL_FUZZ=ON \
    -DIMGTOOL_FUZZ_COVERAGE=ON -DIMGTOOL_SANITIZE=address,undefined >/dev/null
  cmake --build "$BUILD" -j "$JOBS" --target $(printf 'fuzz_%s ' "${targets[@]}") >/dev/null
  BIN_DIR=$BUILD/fuzz
fi
OUT=${OUT:-$BUILD/fuzz-runs}
# One target: its run, then its row in $OUT/<target>/row.
fuzz_one() {
  local t=$1 dir="$OUT/$1" start rc secs execs rate cov ft corp crashes log
  rm -rf "$dir"; mkdir -p "$dir/corpus" "$dir/artifacts"
  log="$dir/log.txt"
  start=$(date +%s)
  set +e
  "$BIN_DIR/fuzz_$t" -runs="$RUNS" -max_total_time="$SECONDS_PER_TARGET" -timeout="$TIMEOUT" -rss_limit_mb=2048 \
    -max_len="$MAX_LEN" -print_final_stats=1 -artifact_prefix="$dir/artifacts/" "$dir/corpus" "fuzz/corpus/$t" >"$log" 2>&1
  rc=$?
  set -e
  secs=$(( $(date +%s) - start ))
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1 || true)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1 || true)
  cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | cut -d' ' -f2 || true)
  ft=$(grep -oE 'ft: [0-9]+' "$log" | tail -1 | cut -d' ' -f2 || true)
  corp=$(grep -oE 'corp: [0-9]+' "$log" | tail -1 | cut -d' ' -f2 || true)
  crashes=$(find "$dir/artifacts" -type f | wc -l)
  printf '%-10s %12s %8s %7s %6s %6s %6s %6s %4s\n' "$t" "${execs:-?}" "${rate:-?}" "$crashes" "${cov:-?}" "${ft:-?}" \
    "${corp:-?}" "$secs" "$rc" >"$dir/row"
}
# FUZZ_PARALLEL targets at once (default 1: each target alone has every core's share).
PARALLEL=${FUZZ_PARALLEL:-1}
for t in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$PARALLEL" ]; do wait -n || true; done
  fuzz_one "$t" &
done
wait
rows=()
for t in "${targets[@]}"; do rows+=("$(cat "$OUT/$t/row")"); done
printf '%-10s %12s %8s %7s %6s %6s %6s %6s %4s\n' TARGET EXECUTIONS EXEC/S CRASHES COV FT CORPUS SECS RC
printf '%s\n' "${rows[@]}"
echo "(runs=$RUNS, at most ${SECONDS_PER_TARGET}s per target, ${TIMEOUT}s per input, inputs up to $MAX_LEN bytes; logs and findings under $OUT/<target>/)"
