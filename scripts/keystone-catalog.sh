#!/usr/bin/env bash
# Services for the client-side Keystone tests: placement-api (noauth2,
# SQLite) and the server crate's demo service as compute (nova profile,
# 2.1 - 2.90) and as block storage (cinder profile, 3.0 - 3.71, listed
# under its alias volumev3), on loopback, registered in the catalog of
# the Keystone that scripts/keystone.sh runs on the port.
#
#   scripts/keystone-catalog.sh start --placement BIN --demo BIN [--port P] [--ports FIRST-LAST]
#   scripts/keystone-catalog.sh stop
#
#   start  starts the three services in the background, waits until they
#          answer, runs `keystone.sh endpoint` for each, and prints export
#          lines (MV_TEST_PLACEMENT_URL, MV_TEST_COMPUTE_URL,
#          MV_TEST_VOLUME_URL, MV_TEST_CATALOG_DIR) on stdout.
#   stop   stops them (the pids are in $MV_TEST_CATALOG_DIR) and removes
#          that directory.
#
#   --placement  the placement-api binary; --demo  the demo example binary
#   (cargo build -p microversion-server --example demo); --port  Keystone's
#   port (as for keystone.sh); --ports  the range to take ports from
#   (default: ports the system picks).
#
# Exit status: 0 on success, 1 on failure, 2 on bad usage.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

usage() { echo "keystone-catalog.sh: $1 (see --help)" >&2; exit 2; }
cmd=${1:-}
case $cmd in
  start|stop) shift ;;
  -h|--help) sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
  *) usage "a command is needed: start or stop" ;;
esac

if [ "$cmd" = stop ]; then
  dir=${MV_TEST_CATALOG_DIR:-}
  [ -n "$dir" ] && [ -f "$dir/.keystone-catalog" ] || usage "MV_TEST_CATALOG_DIR does not name a directory of start"
  for pidfile in "$dir"/*.pid; do
    [ -f "$pidfile" ] && kill "$(cat "$pidfile")" 2>/dev/null || true
  done
  rm -rf "$dir"
  exit 0
fi

placement= demo= keystone_port=() ports=
while [ $# -gt 0 ]; do
  case $1 in
    --placement) [ $# -ge 2 ] || usage "--placement needs a value"; placement=$2; shift 2 ;;
    --demo) [ $# -ge 2 ] || usage "--demo needs a value"; demo=$2; shift 2 ;;
    --port) [ $# -ge 2 ] || usage "--port needs a value"; keystone_port=(--port "$2"); shift 2 ;;
    --ports) [ $# -ge 2 ] || usage "--ports needs a value"; ports=$2; shift 2 ;;
    *) usage "unknown argument $1" ;;
  esac
done
[ -x "$placement" ] || usage "--placement names no executable"
[ -x "$demo" ] || usage "--demo names no executable"

dir=$(mktemp -d "${TMPDIR:-/tmp}/keystone-catalog.XXXXXX")
touch "$dir/.keystone-catalog"
failed() {
  echo "keystone-catalog.sh: $1 (logs in $dir)" >&2
  for pidfile in "$dir"/*.pid; do
    [ -f "$pidfile" ] && kill "$(cat "$pidfile")" 2>/dev/null || true
  done
  exit 1
}

# serve NAME COMMAND...: starts COMMAND with --bind on a free port; sets port.
serve() {
  local name=$1 pid
  shift
  port=$(free_port $ports) || failed "no free port for $name"
  "$@" --bind "127.0.0.1:$port" >"$dir/$name.log" 2>&1 </dev/null &
  pid=$!
  echo "$pid" > "$dir/$name.pid"
  wait_port "$port" "$pid" 60 || failed "$name did not start"
}

serve placement "$placement" --database "sqlite:///$dir/placement.db" --auth-strategy noauth2
placement_url=http://127.0.0.1:$port
serve compute "$demo" --profile nova --service-type compute --min 2.1 --max 2.90
compute_url=http://127.0.0.1:$port
serve volume "$demo" --profile cinder --service-type volume --min 3.0 --max 3.71
volume_url=http://127.0.0.1:$port

bash scripts/keystone.sh endpoint "${keystone_port[@]}" placement placement "$placement_url" || failed "could not register placement"
bash scripts/keystone.sh endpoint "${keystone_port[@]}" compute nova "$compute_url" || failed "could not register compute"
bash scripts/keystone.sh endpoint "${keystone_port[@]}" volumev3 cinderv3 "$volume_url" || failed "could not register volumev3"
cat <<EOV
export MV_TEST_PLACEMENT_URL=$placement_url
export MV_TEST_COMPUTE_URL=$compute_url
export MV_TEST_VOLUME_URL=$volume_url
export MV_TEST_CATALOG_DIR=$dir
EOV
