#!/usr/bin/env bash
# A rolling restart behind a load balancer loses no request
# (crates/placement/DEPLOYMENT.md, "Several instances behind a load
# balancer"): two placement-api instances on one database behind HAProxy
# with the shipped crates/placement/deploy/haproxy.cfg (its ports
# replaced), allocation traffic through HAProxy from
# scripts/rolling_restart_load.py, and meanwhile each instance in turn
# stopped with SIGTERM (it must exit 0), started again and waited for,
# for several rounds. Every request must get its success answer: no
# error status, no dropped connection.
#
#   scripts/rolling-restart.sh [--binary PATH] [--database sqlite|postgresql|mysql]
#                              [--rounds N] [--clients N] [--ports FIRST-LAST]
#                              [--keep DIR]
#
# --database (default postgresql) picks where the instances' shared
# database is made (scripts/lib.sh); --rounds (default 2) how many times
# each instance is restarted; --clients (default 12) how many clients send
# at once. Needs haproxy (installed with apt-get when missing and run as
# root). About 20 seconds.
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

binary= backend=postgresql rounds=2 clients=12 ports= keep=
while [ $# -gt 0 ]; do
  case $1 in
    --binary) binary=$2; shift 2 ;;
    --database) backend=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --clients) clients=$2; shift 2 ;;
    --ports) ports=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "rolling-restart.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
case $backend in sqlite|postgresql|mysql) ;; *)
  echo "rolling-restart.sh: --database $backend: use sqlite, postgresql or mysql" >&2; exit 2 ;;
esac

if ! command -v haproxy >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq haproxy) >/dev/null
  fi
  command -v haproxy >/dev/null || { echo "rolling-restart.sh: needs haproxy" >&2; exit 1; }
fi
if [ -z "$binary" ]; then
  cargo build --release -q -p placement --bin placement-api || exit 1
  binary=${CARGO_TARGET_DIR:-target}/release/placement-api
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/rolling-restart.XXXXXX")
out=${keep:-$work}
mkdir -p "$out"
db_name=mvtest_rolling_$$
[ "$backend" = sqlite ] && db_name=$work/placement.db
pids=() load_pid= haproxy_pid=
cleanup() {
  local p
  for p in "${pids[@]}" $load_pid $haproxy_pid; do kill "$p" 2>/dev/null; done
  wait 2>/dev/null
  db_drop "$backend" "$db_name" >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT

url=$(db_create "$backend" "$db_name") || exit 1
# Three distinct free ports: two instances and HAProxy.
picked=()
for _ in 1 2 3; do
  p=$(free_port "$ports" "${picked[@]}") || { echo "rolling-restart.sh: no three free ports" >&2; exit 1; }
  picked+=("$p")
done
api_ports=("${picked[0]}" "${picked[1]}") lb_port=${picked[2]}

# haproxy_sees_up N: waits (at most 30 s) until HAProxy's health checks
# have taken instance N (0 or 1; server apiN+1) back.
haproxy_sees_up() {
  python3 - "$work/haproxy.sock" "api$(($1 + 1))" <<'PY'
import socket, sys, time
deadline = time.monotonic() + 30
while time.monotonic() < deadline:
    s = socket.socket(socket.AF_UNIX)
    s.connect(sys.argv[1])
    s.sendall(b"show stat\n")
    data = b""
    while chunk := s.recv(65536):
        data += chunk
    s.close()
    rows = [line.split(",") for line in data.decode().splitlines()]
    if any(r[:2] == ["placement_api", sys.argv[2]] and r[17] == "UP" for r in rows):
        sys.exit(0)
    time.sleep(0.2)
sys.exit(1)
PY
}

# start_instance N LOG: placement-api number N (0 or 1) on its port.
start_instance() {
  start_placement_api "$binary" "$url" "$2" "${api_ports[$1]}"
  local started=$?
  pids[$1]=$server_pid
  return "$started"
}
for n in 0 1; do
  start_instance "$n" "$out/api$n.log" || { echo "rolling-restart.sh: instance $n did not start"; cat "$out/api$n.log"; exit 1; }
done

sed -e "s/0\.0\.0\.0:8778/127.0.0.1:$lb_port/" \
    -e "s/127\.0\.0\.1:8781/127.0.0.1:${api_ports[0]}/" \
    -e "s/127\.0\.0\.1:8782/127.0.0.1:${api_ports[1]}/" \
    -e "s|^global|global\n    stats socket $work/haproxy.sock|" \
    crates/placement/deploy/haproxy.cfg >"$work/haproxy.cfg"
haproxy -c -q -f "$work/haproxy.cfg" || { echo "rolling-restart.sh: the shipped haproxy.cfg is invalid"; exit 1; }
haproxy -db -f "$work/haproxy.cfg" >"$out/haproxy.log" 2>&1 &
haproxy_pid=$!
wait_port "$lb_port" "$haproxy_pid" 30 || { echo "rolling-restart.sh: haproxy did not start"; cat "$out/haproxy.log"; exit 1; }

python3 scripts/rolling_restart_load.py --workers "$clients" "http://127.0.0.1:$lb_port" "$work/stop" >"$work/load.json" &
load_pid=$!
sleep 2
status=0
for round in $(seq "$rounds"); do
  for n in 0 1; do
    started=$(date +%s.%N)
    kill -TERM "${pids[$n]}"
    wait "${pids[$n]}"; code=$?
    stopped=$(date +%s.%N)
    if [ "$code" != 0 ]; then
      echo "rolling-restart.sh: instance $n exited $code after SIGTERM (expected 0)"; status=1
    fi
    # A log per start: the one before keeps how the instance stopped.
    start_instance "$n" "$out/api$n.round$round.log" \
      || { echo "rolling-restart.sh: instance $n did not start again"; status=1; break 2; }
    awk -v r="$round" -v n="$n" -v a="$started" -v b="$stopped" -v c="$(date +%s.%N)" \
      'BEGIN { printf "round %s, instance %s: stopped in %.2f s, serving again after %.2f s\n", r, n, b - a, c - a }'
    # The other one goes only once the load balancer sends to this one.
    haproxy_sees_up "$n" || { echo "rolling-restart.sh: haproxy never took instance $n back"; status=1; break 2; }
  done
done
touch "$work/stop"
wait "$load_pid"; load_status=$?
load_pid=
summary=$(cat "$work/load.json")
echo "load through haproxy: $summary"
if [ "$load_status" != 0 ]; then
  echo "rolling-restart.sh: requests failed during the restarts (logs: ${keep:-use --keep DIR})"
  status=1
fi
requests=$(printf '%s' "$summary" | python3 -c 'import json, sys; print(json.load(sys.stdin)["requests"])')
if [ "${requests:-0}" -lt 100 ]; then
  echo "rolling-restart.sh: only ${requests:-0} requests were sent; the check proves nothing"; status=1
fi
[ "$status" = 0 ] && echo "rolling-restart.sh: $((rounds * 2)) restarts, $requests requests, every one answered with success"
exit "$status"
