# Sourced by the bench/ scripts: what each of them wrote again before (finding the imgtool under
# test, starting a loopback docker-registry). Needs $HERE (the source tree).

# bench_imgtool NAME: IMGTOOL is $IMGTOOL, else the first build*/cli/imgtool of the tree; exit 2
# with one line naming the script otherwise.
bench_imgtool() {
  IMGTOOL=${IMGTOOL:-}
  if [ -z "$IMGTOOL" ]; then
    for c in "$HERE"/build*/cli/imgtool; do [ -x "$c" ] && IMGTOOL=$c && break; done
  fi
  [ -x "${IMGTOOL:-}" ] ||
    { echo "$1: build imgtool first (cmake --build build --target imgtool) or set IMGTOOL" >&2; exit 2; }
}

# bench_registry DIR: a docker-registry on a free loopback port, storage DIR/storage, its log
# DIR/log; sets PORT and REG_PID (the caller stops it) and returns once it accepts connections
# (exit 1 when it does not).
bench_registry() {
  local d=$1
  PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  mkdir -p "$d/storage"
  printf 'version: 0.1\nlog:\n  level: error\n  accesslog:\n    disabled: true\nstorage:\n  filesystem:\n    rootdirectory: %s\nhttp:\n  addr: 127.0.0.1:%s\n' \
    "$d/storage" "$PORT" >"$d/config.yml"
  docker-registry serve "$d/config.yml" >"$d/log" 2>&1 &
  REG_PID=$!
  for _ in $(seq 1 100); do (exec 3<>/dev/tcp/127.0.0.1/"$PORT") 2>/dev/null && return 0; sleep 0.05; done
  echo "docker-registry did not start on 127.0.0.1:$PORT (log: $d/log)" >&2
  exit 1
}
