#!/usr/bin/env bash
# The request log's cost in instructions, which a shared machine does not
# move: placement-api (a release build, or --binary) under callgrind,
# serving SMALL then LARGE requests on one keep-alive connection, with
# the log on (the default levels, standard output to a file) and off
# (RUST_LOG=warn); the difference between the two counts over LARGE -
# SMALL requests is what one request costs, start-up left out. Rows:
# `GET /` at 1.20 and the 406 of `GET /resource_providers` at 9.99.
# BENCHMARKS.md's "The request log" gives these figures beside the load
# benchmark's (scripts/bench-load.sh --part log).
#
#   scripts/log-instructions.sh [--binary PATH] [--small N] [--large N]
#
# Needs valgrind and python3. About a minute with the defaults (1,000
# and 4,000).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
binary= small=1000 large=4000
while [ $# -gt 0 ]; do
  case $1 in
    --binary) binary=$2; shift 2 ;;
    --small) small=$2; shift 2 ;;
    --large) large=$2; shift 2 ;;
    *) echo "usage: $0 [--binary PATH] [--small N] [--large N]" >&2; exit 2 ;;
  esac
done
if [ "$large" -le "$small" ]; then
  echo "--large must be above --small" >&2; exit 2
fi
command -v valgrind >/dev/null || { echo "needs valgrind (apt-get install valgrind)" >&2; exit 2; }
if [ -z "$binary" ]; then
  cargo build --release -q -p placement --bin placement-api
  binary=${CARGO_TARGET_DIR:-target}/release/placement-api
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/log-instructions.XXXXXX")
trap 'rm -rf "$work"' EXIT

# instructions MODE ROW N: the instructions of a run serving N requests.
instructions() {
  local mode=$1 row=$2 n=$3 level= port run
  [ "$mode" = off ] && level=warn
  port=$(free_port 18220-18239)
  run=$work/$mode-$row-$n
  mkdir -p "$run"
  RUST_LOG=$level valgrind --tool=callgrind --callgrind-out-file="$run/callgrind.out" \
    "$binary" --bind "127.0.0.1:$port" --database "sqlite:///$run/placement.db" \
    --policy legacy --auth-strategy noauth2 >"$run/stdout" 2>"$run/stderr" &
  local pid=$!
  wait_port "$port" "$pid" 120 || { cat "$run/stderr" >&2; exit 1; }
  python3 - "$port" "$row" "$n" <<'PY'
import http.client, sys
port, row, n = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
path, version, status = ("/", "placement 1.20", 200) if row == "root" else ("/resource_providers", "placement 9.99", 406)
conn = http.client.HTTPConnection("127.0.0.1", port)
for _ in range(n):
    conn.request("GET", path, headers={"x-auth-token": "admin", "openstack-api-version": version})
    answer = conn.getresponse()
    answer.read()
    if answer.status != status:
        sys.exit(f"{path} answered {answer.status}, not {status}")
PY
  kill -TERM "$pid"
  wait "$pid" || true
  if [ "$mode" = on ]; then
    local lines
    lines=$(grep -c ' INFO placement.requestlog ' "$run/stdout" || true)
    [ "$lines" = "$n" ] || { echo "the log on wrote $lines lines for $n requests" >&2; exit 1; }
  fi
  grep -m1 '^summary:' "$run/callgrind.out" | awk '{print $2}'
}

echo "placement-api under callgrind: instructions a request, the log on (default levels) and off (RUST_LOG=warn), from $small and $large requests."
echo
echo "| request | log on | log off | the log's cost | off/on |"
echo "|---|---|---|---|---|"
for row in root not_acceptable; do
  declare -A count=()
  for mode in on off; do
    for n in "$small" "$large"; do
      count[$mode.$n]=$(instructions "$mode" "$row" "$n")
    done
  done
  python3 - "$row" "$small" "$large" "${count[on.$small]}" "${count[on.$large]}" \
    "${count[off.$small]}" "${count[off.$large]}" <<'PY'
import sys
row, small, large, on_s, on_l, off_s, off_l = sys.argv[1], *map(int, sys.argv[2:])
on = (on_l - on_s) / (large - small)
off = (off_l - off_s) / (large - small)
name = "`GET /` at 1.20" if row == "root" else "406 (`placement 9.99`)"
print(f"| {name} | {on:,.0f} | {off:,.0f} | {on - off:,.0f} | {off / on:.3f} |")
PY
  unset count
done
