#!/bin/sh
# ctest cuda_wheels_lock_test: the CUDA bases' wheel lock (matrix/kb/cuda_wheels.lock) has a line
# for every wheel the KB pins, and the checker make-cuda-base.sh runs passes a locked file and
# refuses (exit 2, one line naming the file) another file under the same name or a pin the lock lacks.
set -eu
SRC=${1:?usage: cuda_wheels_lock_test.sh SOURCE_DIR}
LOCKER="$SRC/scripts/lock-cuda-wheels.py"
python3 "$LOCKER" covers "$SRC/matrix/kb"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir "$T/wh"
printf 'the locked bytes' > "$T/wh/nvidia_x_cu12-1.0-py3-none-manylinux2014_x86_64.whl"
h=$(sha256sum "$T/wh/nvidia_x_cu12-1.0-py3-none-manylinux2014_x86_64.whl" | cut -c1-64)
printf '# a lock\nnvidia-x-cu12==1.0 --hash=sha256:%s\n' "$h" > "$T/lock"
python3 "$LOCKER" check "$T/lock" "$T/wh" nvidia-x-cu12==1.0
expect_refused() {  # expect_refused WHAT PATTERN ARGS…
  what=$1 pattern=$2; shift 2
  set +e; out=$(python3 "$LOCKER" check "$@" 2>&1); rc=$?; set -e
  [ "$rc" = 2 ] || { echo "FAIL: $what: exit $rc, expected 2 ($out)"; exit 1; }
  echo "$out" | grep -q "$pattern" || { echo "FAIL: $what: '$out' does not say '$pattern'"; exit 1; }
}
expect_refused "a pin the lock lacks" "no lock line for nvidia-y-cu12==2.0" "$T/lock" "$T/wh" nvidia-y-cu12==2.0
printf 'other bytes' > "$T/wh/nvidia_x_cu12-1.0-py3-none-manylinux2014_x86_64.whl"
expect_refused "another file under the locked name" "is not the locked file of nvidia-x-cu12==1.0" \
  "$T/lock" "$T/wh" nvidia-x-cu12==1.0
printf 'nvidia-x-cu12==1.0 --hash=md5:abc\n' > "$T/lock"
expect_refused "a malformed lock line" "lock:1: expected" "$T/lock" "$T/wh" nvidia-x-cu12==1.0
echo "cuda_wheels_lock_test: ok"
