#!/usr/bin/env bash
# Verify-scan benchmark (not a test): the claims scan of `imgtool verify
# --no-smoke` on a signed ~1 GB Paddle image in a loopback docker-registry,
# side by side with what a user would otherwise do to look inside the image:
# `skopeo copy docker://… dir:` then `gzip -dc LAYER | tar -t` over every layer.
# (`docker pull` is not timed: the image was built in this engine, so a pull
# finds every layer already there and measures nothing.) Runs interleaved,
# BENCH_RUNS each (default 3), medians, ratios, and the scan against the
# target of issue 9 (<= 1.5 s for the 1 GB image).
#
# imgtool's scan time is the tool's own: IMGTOOL_TRACE=1 makes verify print
# "verify: N layers scanned in S s" (verify/static_checks.cc); the total is the
# wall time of the whole command (manifest, signature, config, scan, claims).
#
# usage: nice -n 10 bench/verify-scan.sh
#   env: BENCH_IMAGE (default: the largest local cpu image labelled io.imgtool.paddle,
#        i.e. the demo's ~1 GB Paddle image), BENCH_RUNS (3), IMGTOOL (the binary),
#        BENCH_BASELINE (optional: another imgtool binary, e.g. main's, timed too),
#        BENCH_SIG_RUNS (10: signature-only verifies per run, --no-smoke --no-claims --no-sbom; target <= 35 ms)
# imgtool is also timed with IMGTOOL_INFLATE_JOBS=1 (one gzip decoder, no chunks in parallel).
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
RUNS=${BENCH_RUNS:-3}
source "$HERE/bench/lib.sh"
bench_imgtool verify-scan.sh
BASELINE=${BENCH_BASELINE:-}
[ -z "$BASELINE" ] || [ -x "$BASELINE" ] || { echo "verify-scan.sh: BENCH_BASELINE=$BASELINE is not executable" >&2; exit 2; }
for p in docker skopeo docker-registry python3 gzip tar; do
  command -v "$p" >/dev/null || { echo "verify-scan.sh: $p is not installed" >&2; exit 2; }
done
IMG=${BENCH_IMAGE:-$(docker images --filter label=io.imgtool.paddle --filter label=io.imgtool.variant=cpu --format '{{.ID}} {{.Repository}}:{{.Tag}}' |
  while read -r id name; do echo "$(docker image inspect -f '{{.Size}}' "$id") $name"; done | sort -rn | awk 'NR==1{print $2}')}
[ -n "$IMG" ] || { echo "verify-scan.sh: no local image labelled io.imgtool.paddle; run make demo first or set BENCH_IMAGE" >&2; exit 2; }

WORK=$(mktemp -d /tmp/imgtool-bench-verify.XXXXXX)
REG_PID=
cleanup() { [ -n "$REG_PID" ] && kill "$REG_PID" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT

# --- a loopback registry holding the image, signed with a fresh key
bench_registry "$WORK/registry"
REF="docker://127.0.0.1:$PORT/bench/paddle:verify"
"$IMGTOOL" keygen --out "$WORK/key" >/dev/null
echo "pushing $IMG to $REF and signing it..." >&2
IMGTOOL_CACHE="$WORK/cache" "$IMGTOOL" copy "docker-daemon:$IMG" "$REF" >/dev/null
"$IMGTOOL" sign "$REF" --key "$WORK/key.key" >/dev/null

now() { date +%s.%N; }
declare -A T
record() { T[$1]="${T[$1]:-} $2"; printf '  %-14s run %s: %6.2f s\n' "$1" "$3" "$2" >&2; }

verify_with() {  # name binary run [inflate jobs]
  local t0 t1 scan
  t0=$(now)
  IMGTOOL_INFLATE_JOBS=${4:-} IMGTOOL_TRACE=1 "$2" verify "$REF" --key "$WORK/key.pub" --no-smoke >"$WORK/verify.out" 2>"$WORK/$1.trace" ||
    { cat "$WORK/verify.out" "$WORK/$1.trace" >&2; echo "verify-scan.sh: $2 verify failed" >&2; exit 1; }
  t1=$(now)
  record "$1-total" "$(echo "$t1 - $t0" | bc)" "$3"
  scan=$(sed -n 's/.*layers scanned in \([0-9.]*\) s.*/\1/p' "$WORK/$1.trace")
  [ -n "$scan" ] && record "$1-scan" "$scan" "$3"
  return 0
}

# A signature-only verify (--no-smoke --no-claims --no-sbom): what it reads is the manifest, the
# signature and the evidence row's attestation list over one registry session; timed in ms.
verify_signature_only() {  # name binary run
  local t0 t1
  t0=$(now)
  "$2" verify "$REF" --key "$WORK/key.pub" --no-smoke --no-claims --no-sbom >"$WORK/verify-sig.out" 2>&1 ||
    { cat "$WORK/verify-sig.out" >&2; echo "verify-scan.sh: $2 verify (signature only) failed" >&2; exit 1; }
  t1=$(now)
  record "$1-sigonly" "$(echo "$t1 - $t0" | bc)" "$3"
}

skopeo_tar() {  # run
  rm -rf "$WORK/dir"
  local t0 t1 t2
  t0=$(now)
  skopeo copy -q --src-tls-verify=false "${REF}" "dir:$WORK/dir" >/dev/null
  t1=$(now)
  for l in $(python3 -c 'import json,sys; print(" ".join(l["digest"].split(":")[1] for l in json.load(open(sys.argv[1]))["layers"]))' "$WORK/dir/manifest.json"); do
    gzip -dc "$WORK/dir/$l" | tar -t >/dev/null
  done
  t2=$(now)
  record skopeo-copy "$(echo "$t1 - $t0" | bc)" "$1"
  record tar-list "$(echo "$t2 - $t1" | bc)" "$1"
  record skopeo+tar "$(echo "$t2 - $t0" | bc)" "$1"
}

LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
for r in $(seq 1 "$RUNS"); do
  verify_with imgtool "$IMGTOOL" "$r"
  verify_with imgtool1 "$IMGTOOL" "$r" 1
  skopeo_tar "$r"
  [ -n "$BASELINE" ] && verify_with baseline "$BASELINE" "$r"
  for s in $(seq 1 "${BENCH_SIG_RUNS:-10}"); do
    verify_signature_only imgtool "$IMGTOOL" "$r.$s"
    [ -n "$BASELINE" ] && verify_signature_only baseline "$BASELINE" "$r.$s"
  done
done

median() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{a[NR]=$1} END{print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
M() { echo "${T[$1]}" | median; }
layers=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["layers"]))' "$WORK/dir/manifest.json")
blob_mb=$(du -sm --apparent-size "$WORK/dir" | cut -f1)
tar_line=$(sed -n 's/.*layers scanned in .*(\(.*\))/\1/p' "$WORK/imgtool.trace")

echo
echo "verify scan: $IMG, $layers layers ($tar_line; skopeo dir ${blob_mb} MB), $RUNS runs interleaved, medians"
echo "machine: $(nproc) cores, $(. /etc/os-release; echo "$PRETTY_NAME"), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); load average before: ${LOAD0:-?}, after: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-44s %8s\n' "step" "median"
printf '%-44s %7.2fs\n' "imgtool verify --no-smoke: layer scan" "$(M imgtool-scan)"
printf '%-44s %7.2fs\n' "imgtool verify --no-smoke: whole command" "$(M imgtool-total)"
printf '%-44s %7.2fs\n' "  the same, one gzip decoder: layer scan" "$(M imgtool1-scan)"
printf '%-44s %7.2fs\n' "  the same, one gzip decoder: whole command" "$(M imgtool1-total)"
if [ -n "$BASELINE" ]; then
  printf '%-44s %7.2fs\n' "baseline verify --no-smoke: layer scan" "$(M baseline-scan)"
  printf '%-44s %7.2fs\n' "baseline verify --no-smoke: whole command" "$(M baseline-total)"
fi
ms() { echo "$1 * 1000" | bc | xargs printf '%.0f'; }
printf '%-44s %6s ms\n' "imgtool verify, signature only" "$(ms "$(M imgtool-sigonly)")"
[ -n "$BASELINE" ] && printf '%-44s %6s ms\n' "baseline verify, signature only" "$(ms "$(M baseline-sigonly)")"
printf '%-44s %7.2fs\n' "skopeo copy docker:// -> dir:" "$(M skopeo-copy)"
printf '%-44s %7.2fs\n' "gzip -dc | tar -t, every layer" "$(M tar-list)"
printf '%-44s %7.2fs\n' "skopeo copy + tar -t" "$(M skopeo+tar)"
echo
ratio() { echo "scale=2; $1 / $2" | bc; }
echo "ratio skopeo+tar / imgtool verify (whole):   $(ratio "$(M skopeo+tar)" "$(M imgtool-total)")x"
echo "ratio tar -t alone / imgtool layer scan:     $(ratio "$(M tar-list)" "$(M imgtool-scan)")x"
echo "ratio one decoder / parallel (layer scan):   $(ratio "$(M imgtool1-scan)" "$(M imgtool-scan)")x"
[ -n "$BASELINE" ] && [ -n "${T[baseline-total]:-}" ] &&
  echo "ratio baseline / imgtool verify (whole):     $(ratio "$(M baseline-total)" "$(M imgtool-total)")x"
sig=$(ms "$(M imgtool-sigonly)")
echo "target: signature-only verify <= 35 ms: $sig ms -> $([ "$sig" -le 35 ] && echo MET || echo NOT MET)"
scan=$(M imgtool-scan)
verdict=$(echo "$scan <= 1.5" | bc)
echo "target: layer scan <= 1.5 s: $scan s -> $([ "$verdict" = 1 ] && echo MET || echo NOT MET) ($(ratio "$scan" 1.5)x of the target)"
