#!/usr/bin/env bash
# Nightly-with-nothing-changed benchmark (not a test; issue 9, target 4):
#   a 24-cell nightly whose cells are all built, smoked, gated and published already
#   must finish in <= 2 s with 0 docker builds and 0 pushes.
#
# What it does, honestly:
#   * 24 CPU cells, buildable here offline from the local base (scripts/make-base.sh) and the
#     paddlepaddle 3.3.1 wheelhouse (scripts/wheelhouse.sh). This host has ONE Paddle wheel and
#     ONE Python, so a single matrix cannot expand to 24 distinct cells; instead the script writes
#     24 one-cell matrix files that differ only in their tag template ("{paddle}-noop01" …
#     "{paddle}-noop24"), runs `imgtool generate` on each, and puts the 24 generated cell folders
#     into ONE generated folder (the nightly's input contract: D/<tag>/{Dockerfile,cell.json,…}).
#     The cells share their first stage (the wheel install), so the 24 builds of the first run are
#     classic-builder cache hits except the final label layers; each cell is still its own image
#     (own tag label, own image ID), smoked, gated, signed and pushed on its own.
#   * A loopback docker-registry (fresh storage), a fresh key pair, a fresh state folder and
#     records file: nothing of the user's is read or written.
#   * Run 1 (setup, not timed): `imgtool nightly CELLS` builds, smokes, gates, publishes all 24.
#   * Run 2 (timed, BENCH_RUNS times): the same nightly, nothing changed.
#   * Side by side: what a user would otherwise run for "rebuild and republish the same 24 images":
#     `docker build` (all cache hits) + `docker push` per cell, timed once (BENCH_BASELINE=0 skips it).
#   Builds and pushes are counted from imgtool's own report (nightly.json: docker_builds, cells'
#   publish.status == "published"), never guessed.
#
# usage: bench/nightly-noop.sh     env: IMGTOOL (binary), BENCH_CELLS (24), BENCH_RUNS (3),
#                                       BENCH_BASELINE (1), IMGTOOL_TRACE=1 to see where time goes
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
CELLS=${BENCH_CELLS:-24}
RUNS=${BENCH_RUNS:-3}
BASELINE=${BENCH_BASELINE:-1}
TARGET_S=2
source "$HERE/bench/lib.sh"
bench_imgtool nightly-noop.sh
for p in docker docker-registry python3 curl; do
  command -v "$p" >/dev/null || { echo "nightly-noop.sh: $p is not installed (fix: scripts/install-deps.sh)" >&2; exit 2; }
done

WORK=$(mktemp -d /tmp/imgtool-bench-noop.XXXXXX)
chmod 700 "$WORK"
REG_PID=
cleanup() {
  [ -n "$REG_PID" ] && { kill "$REG_PID" 2>/dev/null; wait "$REG_PID" 2>/dev/null || true; }
  # the bench's own images only (repository paddle-noop and its registry names)
  docker images --format '{{.Repository}}:{{.Tag}}' | grep -E '(^|/)paddle-noop:' | xargs -r docker image rm >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT

# --- fixtures: the local base and the wheelhouse (cached after the first call)
BASE=${IMGTOOL_TEST_BASE:-imgtool-base/debian:bookworm-py3}
"$HERE/scripts/make-base.sh" "$BASE" >/dev/null
WHEELHOUSE=${IMGTOOL_TEST_WHEELHOUSE:-$("$HERE/scripts/wheelhouse.sh" 3.11 paddlepaddle==3.3.1 | tail -1)}

# --- loopback registry, key
bench_registry "$WORK/registry"
REGISTRY=127.0.0.1:$PORT/bench
mkdir -m 700 "$WORK/keys"
"$IMGTOOL" keygen --out "$WORK/keys/release" >/dev/null

# --- 24 cells: one-cell matrices that differ only in their tag, generated into one folder
mkdir -p "$WORK/matrix" "$WORK/cells"
for i in $(seq -w 1 "$CELLS"); do
  cat > "$WORK/matrix/noop$i.yaml" <<YAML
description: "nightly-noop bench cell $i (bench/nightly-noop.sh)"
repository: paddle-noop
tag_template: {cpu: "{paddle}-noop$i"}
axes: {variant: cpu, paddle: "3.3.1", python: "3.11", os: debian12, flavor: runtime}
defaults:
  python_from: base
  base_image: "$BASE"
  wheelhouse: "$WHEELHOUSE"
YAML
  "$IMGTOOL" generate "$WORK/matrix/noop$i.yaml" --out "$WORK/gen$i" >/dev/null
  mv "$WORK/gen$i"/3.3.1-noop$i "$WORK/cells/"
  rm -rf "$WORK/gen$i"
done
[ "$(ls "$WORK/cells" | wc -l)" -eq "$CELLS" ] || { echo "nightly-noop.sh: expected $CELLS generated cells" >&2; exit 1; }

nightly() {  # $1 = report folder
  "$IMGTOOL" nightly "$WORK/cells" --registry "$REGISTRY" --key "$WORK/keys/release.key" --report "$1" \
    --state "$WORK/state" --records "$WORK/records.db" -j 2
}
# "seconds builds pushes" from a report's nightly.json
counts() {
  python3 - "$1/nightly.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
cells = r["cells"]
pushes = sum(1 for c in cells if c["publish"]["status"] == "published")
bad = [c["tag"] for c in cells if not c.get("ok")]
if bad: sys.exit("cells not ok: " + ", ".join(bad))
print(len(cells), r["docker_builds"], pushes)
PY
}
now() { date +%s.%N; }

echo "run 1 (setup, not timed): build, smoke, gate, publish $CELLS cells…" >&2
t0=$(now); nightly "$WORK/r1" >"$WORK/r1.log" 2>&1 || { tail -20 "$WORK/r1.log"; exit 1; }; t1=$(now)
read -r n1 b1 p1 < <(counts "$WORK/r1")
echo "run 1: $n1 cells, $b1 docker builds, $p1 pushes, $(python3 -c "print(f'{$t1-$t0:.1f}')") s" >&2

ROWS=()
for k in $(seq 1 "$RUNS"); do
  t0=$(now); nightly "$WORK/r2-$k" >"$WORK/r2-$k.log" 2>&1 || { tail -20 "$WORK/r2-$k.log"; exit 1; }; t1=$(now)
  read -r n b p < <(counts "$WORK/r2-$k")
  ROWS+=("$(python3 -c "print(f'{$t1-$t0:.3f}')") $n $b $p")
done
[ "${IMGTOOL_TRACE:-}" = 1 ] && { echo "--- trace of the last no-op run:"; grep -E '^\[trace|^trace' "$WORK/r2-$RUNS.log" | tail -60 || true; }

BASE_S=""
if [ "$BASELINE" = 1 ]; then
  echo "baseline: docker build (cache hits) + docker push of the same $CELLS cells…" >&2
  t0=$(now)
  for d in "$WORK"/cells/*/; do
    tag=$(basename "$d")
    docker build -q -t "127.0.0.1:$PORT/bench/paddle-noop-docker:$tag" "$d" >/dev/null
    docker push -q "127.0.0.1:$PORT/bench/paddle-noop-docker:$tag" >/dev/null
  done
  t1=$(now)
  BASE_S=$(python3 -c "print(f'{$t1-$t0:.3f}')")
  docker images --format '{{.Repository}}:{{.Tag}}' | grep '/paddle-noop-docker:' | xargs -r docker image rm >/dev/null 2>&1 || true
fi

python3 - "$TARGET_S" "$BASE_S" "$CELLS" "${ROWS[@]}" <<'PY'
import statistics, sys
target, base, cells = float(sys.argv[1]), sys.argv[2], int(sys.argv[3])
rows = [r.split() for r in sys.argv[4:]]
print(f"nightly with nothing changed, {cells} cells (bench/nightly-noop.sh)")
print(f"{'run':<28}{'seconds':>9}{'cells':>7}{'docker builds':>15}{'pushes':>8}")
for k, (s, n, b, p) in enumerate(rows, 1):
    print(f"{'imgtool nightly (no-op) #' + str(k):<28}{float(s):>9.3f}{n:>7}{b:>15}{p:>8}")
med = statistics.median(float(r[0]) for r in rows)
print(f"{'imgtool median':<28}{med:>9.3f}")
if base:
    print(f"{'docker build + docker push':<28}{float(base):>9.3f}{cells:>7}{cells:>15}{cells:>8}")
    print(f"ratio imgtool / docker build+push: {med / float(base):.3f}")
print(f"ratio to the {target:g} s target: {med / target:.2f} ({'MET' if med <= target else 'OVER'}); "
      f"builds {max(int(r[2]) for r in rows)}, pushes {max(int(r[3]) for r in rows)} (target 0, 0)")
PY
