#!/usr/bin/env bash
# Gzip decode benchmark (not a test): imgtool's layer decoder (image/inflate.h) on one
# gzip blob, with one decoder and with every core (image/gunzip_parallel.h), side by side
# with `gzip -dc` and `pigz -dc` when installed, output discarded; BENCH_RUNS (3)
# interleaved runs, medians, ratios. The blob is a layer as imgtool pushed it (compress.h
# writes the full-flush marks the parallel decoder cuts at), e.g. the biggest file under a
# loopback registry's storage after bench/verify-scan.sh or `make demo`.
#
# usage: bench/gunzip.sh BLOB      env: BENCH_RUNS (3), GUNZIP_BENCH (the built gunzip_bench)
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
BLOB=${1:?usage: bench/gunzip.sh BLOB}
RUNS=${BENCH_RUNS:-3}
BIN=${GUNZIP_BENCH:-}
if [ -z "$BIN" ]; then
  for c in "$HERE"/build*/image/gunzip_bench; do [ -x "$c" ] && BIN=$c && break; done
fi
[ -x "${BIN:-}" ] || { echo "gunzip.sh: build it first (cmake --build build --target gunzip_bench) or set GUNZIP_BENCH" >&2; exit 2; }
[ -r "$BLOB" ] || { echo "gunzip.sh: cannot read $BLOB" >&2; exit 2; }
CORES=$(nproc)
now() { date +%s.%N; }
declare -A T
record() { T[$1]="${T[$1]:-} $2"; }
for r in $(seq 1 "$RUNS"); do
  for j in 1 "$CORES"; do
    read -r mib secs chunks < <("$BIN" "$BLOB" "$j")
    record "imgtool-$j" "$secs"
    echo "  imgtool, $j decoder(s), run $r: $secs s ($mib MiB, $chunks chunks in parallel)" >&2
  done
  t0=$(now); gzip -dc "$BLOB" >/dev/null; record gzip "$(echo "$(now) - $t0" | bc)"
  if command -v pigz >/dev/null; then t0=$(now); pigz -dc "$BLOB" >/dev/null; record pigz "$(echo "$(now) - $t0" | bc)"; fi
done
median() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{a[NR]=$1} END{print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
M() { echo "${T[$1]}" | median; }
echo
echo "gzip decode: $BLOB ($(du -m --apparent-size "$BLOB" | cut -f1) MB, $mib MiB decoded), $RUNS runs interleaved, medians"
echo "machine: $CORES cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); load average: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-40s %8.2fs\n' "imgtool, 1 decoder" "$(M imgtool-1)"
printf '%-40s %8.2fs\n' "imgtool, $CORES decoders" "$(M "imgtool-$CORES")"
printf '%-40s %8.2fs\n' "gzip -dc" "$(M gzip)"
[ -n "${T[pigz]:-}" ] && printf '%-40s %8.2fs\n' "pigz -dc" "$(M pigz)"
ratio() { echo "scale=2; $1 / $2" | bc; }
echo "ratio 1 decoder / $CORES decoders: $(ratio "$(M imgtool-1)" "$(M "imgtool-$CORES")")x"
echo "ratio gzip -dc / imgtool ($CORES):   $(ratio "$(M gzip)" "$(M "imgtool-$CORES")")x"
