#!/usr/bin/env bash
# Checks placement-api against its own OpenAPI documents with schemathesis
# (pinned in scripts/requirements/schemathesis.txt): for each version, the
# document `placement-api openapi --version X.Y` prints is the contract,
# and a placement-api on a fresh SQLite database is tested with it.
#
#   scripts/openapi-check.sh [--binary PATH] [--versions "1.0 1.10 ..."]
#                            [--max-time SECONDS] [--max-examples N] [--port P]
#
# Per version, two bounded runs (examples, coverage and fuzzing phases):
#   - positive: requests the document allows (the version header always
#     set to the document's version); no 5xx, every status documented,
#     every content type and body as the document of that version says;
#   - negative: requests the document forbids; no 5xx.
# Defaults: versions 1.0 1.10 1.20 1.29 1.39, at most 25 examples per
# operation and 30 seconds per run (half that for the negative run),
# seed MV_OPENAPI_SEED (fixed by default, so runs repeat). Without
# --binary, the debug placement-api is built. Reports go to
# MV_OPENAPI_REPORTS (default: a temporary directory, printed on failure).
#
# Exit status: 0 when every run passes, 1 when one fails, 2 on bad usage.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
. scripts/lib.sh

usage() { echo "openapi-check.sh: $1 (see --help)" >&2; exit 2; }
binary= versions="1.0 1.10 1.20 1.29 1.39" max_time=30 max_examples=25 port=
while [ $# -gt 0 ]; do
  case $1 in
    --binary) [ $# -ge 2 ] || usage "--binary needs a value"; binary=$2; shift 2 ;;
    --versions) [ $# -ge 2 ] || usage "--versions needs a value"; versions=$2; shift 2 ;;
    --max-time) [ $# -ge 2 ] || usage "--max-time needs a value"; max_time=$2; shift 2 ;;
    --max-examples) [ $# -ge 2 ] || usage "--max-examples needs a value"; max_examples=$2; shift 2 ;;
    --port) [ $# -ge 2 ] || usage "--port needs a value"; port=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) usage "unknown argument $1" ;;
  esac
done
[[ $max_time =~ ^[0-9]+$ ]] && [ "$max_time" -ge 2 ] || usage "--max-time is a number of seconds, at least 2"
[[ $max_examples =~ ^[0-9]+$ ]] && [ "$max_examples" -ge 1 ] || usage "--max-examples is a positive number"
seed=${MV_OPENAPI_SEED:-20261124}

work=$(mktemp -d "${TMPDIR:-/tmp}/openapi-check.XXXXXX")
reports=${MV_OPENAPI_REPORTS:-$work/reports}
mkdir -p "$reports"
server=
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null
  [ -n "${MV_OPENAPI_REPORTS:-}" ] || [ "${status:-1}" != 0 ] || rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

venv=$(pinned_venv scripts/requirements/schemathesis.txt) || { echo "openapi-check.sh: cannot make the schemathesis virtualenv" >&2; exit 1; }
if [ -z "$binary" ]; then
  cargo build --quiet -p placement --bin placement-api || exit 1
  binary=${CARGO_TARGET_DIR:-$root/target}/debug/placement-api
fi
[ -x "$binary" ] || usage "no placement-api at $binary"
[ -n "$port" ] || port=$(free_port) || { echo "openapi-check.sh: no free port" >&2; exit 1; }

"$binary" --bind "127.0.0.1:$port" --database "sqlite:///$work/placement.db" --auth-strategy noauth2 \
  >"$work/server.log" 2>&1 &
server=$!
if ! wait_port "$port" "$server" 60; then
  echo "openapi-check.sh: placement-api did not start; its log:" >&2
  cat "$work/server.log" >&2
  exit 1
fi

status=0 passed=0 failed=0
run() {
  local version=$1 mode=$2 checks=$3 seconds=$4 log
  log=$reports/$version-$mode.txt
  # From the scratch directory: schemathesis keeps a cache where it runs.
  if (cd "$work" && exec timeout $((seconds + 60)) "$venv/bin/schemathesis" run "$work/openapi-$version.json" \
      --url "http://127.0.0.1:$port" -H "X-Auth-Token: admin" \
      --mode "$mode" --checks "$checks" --phases examples,coverage,fuzzing \
      --max-examples "$max_examples" --max-time "$seconds" --seed "$seed" \
      --generation-database none --no-color --workers 1) >"$log" 2>&1; then
    echo "ok: $version $mode ($(grep -E '^  [0-9]+ generated' "$log" | sed 's/^ *//'))"
    passed=$((passed + 1))
  else
    echo "FAILED: $version $mode; the report follows ($log)"
    sed -n '/^=* FAILURES =*$/,$p' "$log" | head -150
    failed=$((failed + 1)) status=1
  fi
}
for version in $versions; do
  if ! "$binary" openapi --version "$version" >"$work/openapi-$version.json"; then
    echo "FAILED: placement-api openapi --version $version"
    failed=$((failed + 1)) status=1
    continue
  fi
  run "$version" positive \
    not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance \
    "$max_time"
  run "$version" negative not_a_server_error $((max_time / 2))
done
if [ "$status" != 0 ]; then
  echo "openapi-check: reports in $reports; the server's log is $work/server.log"
fi
echo "openapi-check: $passed passed, $failed failed"
exit "$status"
