#!/usr/bin/env bash
# short_run.sh FUZZER CORPUS SECONDS: every checked-in input (crash regressions included),
# then fuzzing for SECONDS. New inputs go to a private temp folder, never into the corpus.
set -euo pipefail
bin=$1 corpus=$2 secs=${3:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"  # crash-* / leak-* files land here and are shown in the log
"$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
  "$work" "$corpus" 2>&1 | tail -25
