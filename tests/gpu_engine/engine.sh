#!/usr/bin/env bash
# A second Docker engine for the --gpus tests, with the nvidia-container-runtime-hook double
# (beside this script) on its PATH, so `docker run --gpus` works without a GPU.
#   engine.sh start DIR [DRIVER_VERSION DRIVER_CUDA]   -> prints unix://DIR/docker.sock
#   engine.sh stop DIR
#   engine.sh wipe DIR    stop it and remove its images and containers (ctest's gpu_engine_wipe, after
#                         the last test that uses it: the GPU cell's copy is GBs; the next run loads it again)
# It runs INSIDE ITS OWN NETWORK NAMESPACE (unshare -n): a dockerd started in the host namespace
# deletes the host engine's docker0 bridge when it stops. No bridge, no iptables; containers get
# no network. Data, exec root, pid file and an empty config live under DIR (private, 0700).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
cmd=${1:-}; DIR=${2:-}
[ -n "$cmd" ] && [ -n "$DIR" ] || { echo "usage: $0 start|stop|wipe DIR [DRIVER_VERSION DRIVER_CUDA]" >&2; exit 2; }

stop() {
  [ -f "$DIR/dockerd.pid" ] || return 0
  local pid; pid=$(cat "$DIR/dockerd.pid")
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
  rm -f "$DIR/dockerd.pid"
}

case "$cmd" in
stop) stop; exit 0 ;;
wipe)
  exec 9>"$DIR.lock"; flock 9  # tests/gpu_images.h: the lock of the tests that use it
  stop
  rm -rf "$DIR/data" "$DIR/exec" || { echo "engine.sh: cannot remove $DIR/data (still mounted?)" >&2; exit 1; }
  exit 0 ;;
start) ;;
*) echo "usage: $0 start|stop|wipe DIR" >&2; exit 2 ;;
esac

mkdir -p -m 700 "$DIR" "$DIR/bin" "$DIR/data" "$DIR/exec"
cc -O2 -shared -fPIC -o "$DIR/libcuda.so.1" "$ROOT/smoke/probe/testdata/fake_libcuda.c"
cp "$HERE/nvidia-container-runtime-hook" "$DIR/bin/"
printf '{"driver_version": "%s", "driver_cuda": "%s", "libcuda": "%s"}\n' \
  "${3:-550.54.14}" "${4:-12.4}" "$DIR/libcuda.so.1" > "$DIR/bin/fake-driver.json"
echo '{}' > "$DIR/daemon.json"
SOCK=$DIR/docker.sock
if [ -f "$DIR/dockerd.pid" ] && kill -0 "$(cat "$DIR/dockerd.pid")" 2>/dev/null; then echo "unix://$SOCK"; exit 0; fi
DRIVER=fuse-overlayfs; command -v fuse-overlayfs >/dev/null || DRIVER=vfs
PATH="$DIR/bin:$PATH" setsid unshare -n dockerd --config-file "$DIR/daemon.json" --host "unix://$SOCK" \
  --data-root "$DIR/data" --exec-root "$DIR/exec" --pidfile "$DIR/dockerd.pid" \
  --bridge none --iptables=false --ip-masq=false --storage-driver "$DRIVER" >"$DIR/dockerd.log" 2>&1 < /dev/null &
for _ in $(seq 1 150); do DOCKER_HOST=unix://$SOCK docker version >/dev/null 2>&1 && break; sleep 0.2; done
DOCKER_HOST=unix://$SOCK docker version >/dev/null 2>&1 || { echo "engine.sh: dockerd did not start; log: $DIR/dockerd.log" >&2; tail -5 "$DIR/dockerd.log" >&2; exit 1; }
echo "unix://$SOCK"
