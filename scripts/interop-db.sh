#!/usr/bin/env bash
# The same database both ways, between upstream Placement 16.0.0 (gunicorn,
# from a pinned virtualenv) and placement-api:
#
#  1. upstream syncs a new database and fills it through its API; the GETs
#     of scripts/interop_db.py are read from upstream, then from
#     placement-api serving the same database: the answers must be
#     identical, and placement-api must leave the database unchanged;
#  2. placement-api creates a new database and fills it through its API;
#     upstream's `placement-manage db sync` must leave it unchanged (schema
#     and rows), upstream must serve it (its start must add nothing) and
#     answer the GETs as placement-api did.
#
#   scripts/interop-db.sh [--database sqlite|postgresql|mysql|all]
#                         [--ports FIRST-LAST] [--binary PATH] [--keep DIR]
#
# Areas placement-api does not serve yet (scripts/interop-pending.txt) are
# neither filled on placement-api nor compared. --keep DIR keeps the
# readings and logs. Exit status 0 when every check passes, 1 otherwise.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
. scripts/lib.sh

backends=sqlite ports= binary= keep=
while [ $# -gt 0 ]; do
  case $1 in
    --database) if [ "$2" = all ]; then backends="sqlite postgresql mysql"; else backends=$2; fi; shift 2 ;;
    --ports) ports=$2; shift 2 ;;
    --binary) binary=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "interop-db.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

work=$(mktemp -d "${TMPDIR:-/tmp}/interop-db.XXXXXX")
[ -n "$keep" ] && mkdir -p "$keep"
out=${keep:-$work}
pid= made=()
stop_server() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; pid=; fi
}
cleanup() {
  local entry
  stop_server
  for entry in "${made[@]}"; do db_drop ${entry}; done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

venv=$(pinned_venv scripts/requirements/upstream.txt) || { echo "interop-db.sh: cannot make the upstream virtualenv" >&2; exit 1; }
py=$venv/bin/python
if [ -z "$binary" ]; then
  cargo build --quiet --release -p placement --bin placement-api || exit 1
  cp "${CARGO_TARGET_DIR:-$root/target}/release/placement-api" "$work/placement-api" || exit 1
  binary=$work/placement-api
fi

# start_upstream URL LOG / start_ours URL LOG: a server on the database,
# its pid in pid and its port in port.
start_upstream() {
  start_upstream_placement "$venv" "$work" "$1" "$2" "$ports"
  local started=$?
  pid=$server_pid port=$server_port
  return $started
}

start_ours() {
  start_placement_api "$binary" "$1" "$2" "$ports"
  local started=$?
  pid=$server_pid port=$server_port
  return $started
}

# snapshot URL NAME: the schema and rows of the database.
snapshot() {
  "$py" scripts/db_catalog.py schema "$1" > "$out/$2.schema" &&
    "$py" scripts/db_catalog.py data "$1" > "$out/$2.data"
}

unchanged() {
  diff -u "$out/$1.schema" "$out/$2.schema" && diff -u "$out/$1.data" "$out/$2.data"
}

fail() { echo "$backend: $*"; status=1; }

status=0
for backend in $backends; do
  b=$backend
  # 1. Upstream's database, served by placement-api.
  name=mvtest_interop_up_$$; [ "$b" = sqlite ] && name=$work/upstream.db
  url=$(db_create "$b" "$name") || { fail "cannot create a database"; continue; }
  made+=("$b $name")
  upstream_db_sync "$venv" "$work" "$url" >"$out/$b-1-sync.log" 2>&1 || { fail "upstream's db sync failed (see $out/$b-1-sync.log)"; continue; }
  start_upstream "$url" "$out/$b-1-upstream.log" || { fail "upstream did not start (see $out/$b-1-upstream.log)"; stop_server; continue; }
  "$py" scripts/interop_db.py fill "http://127.0.0.1:$port" || { fail "filling upstream failed"; stop_server; continue; }
  "$py" scripts/interop_db.py gets "http://127.0.0.1:$port" "$out/$b-1-upstream.json"
  stop_server
  snapshot "$url" "$b-1-before"
  start_ours "$url" "$out/$b-1-ours.log" || { fail "placement-api did not start on upstream's database (see $out/$b-1-ours.log)"; stop_server; continue; }
  "$py" scripts/interop_db.py gets "http://127.0.0.1:$port" "$out/$b-1-ours.json" --skip-pending
  stop_server
  snapshot "$url" "$b-1-after"
  echo "$backend: upstream's database served by placement-api:"
  "$py" scripts/interop_db.py compare "$out/$b-1-upstream.json" "$out/$b-1-ours.json" "$b" | sed 's/^/    /'
  [ "${PIPESTATUS[0]}" = 0 ] || fail "placement-api answers differ from upstream's on upstream's database"
  unchanged "$b-1-before" "$b-1-after" >"$out/$b-1-changes.diff" || fail "placement-api changed upstream's database (see $out/$b-1-changes.diff)"

  # 2. placement-api's database, served by upstream.
  name=mvtest_interop_ours_$$; [ "$b" = sqlite ] && name=$work/ours.db
  url=$(db_create "$b" "$name") || { fail "cannot create a database"; continue; }
  made+=("$b $name")
  start_ours "$url" "$out/$b-2-ours.log" || { fail "placement-api did not start (see $out/$b-2-ours.log)"; stop_server; continue; }
  "$py" scripts/interop_db.py fill "http://127.0.0.1:$port" --skip-pending | sed 's/^/    /' || { fail "filling placement-api failed"; stop_server; continue; }
  "$py" scripts/interop_db.py gets "http://127.0.0.1:$port" "$out/$b-2-ours.json" --skip-pending
  stop_server
  snapshot "$url" "$b-2-ours"
  upstream_db_sync "$venv" "$work" "$url" >"$out/$b-2-sync.log" 2>&1 || { fail "upstream's db sync refused placement-api's database (see $out/$b-2-sync.log)"; continue; }
  snapshot "$url" "$b-2-synced"
  unchanged "$b-2-ours" "$b-2-synced" >"$out/$b-2-sync.diff" || fail "upstream's db sync changed placement-api's database (see $out/$b-2-sync.diff)"
  start_upstream "$url" "$out/$b-2-upstream.log" || { fail "upstream did not start on placement-api's database (see $out/$b-2-upstream.log)"; stop_server; continue; }
  "$py" scripts/interop_db.py gets "http://127.0.0.1:$port" "$out/$b-2-upstream.json"
  stop_server
  snapshot "$url" "$b-2-served"
  unchanged "$b-2-ours" "$b-2-served" >"$out/$b-2-served.diff" || fail "upstream's start changed placement-api's database (see $out/$b-2-served.diff)"
  echo "$backend: placement-api's database, synced and served by upstream:"
  "$py" scripts/interop_db.py compare "$out/$b-2-ours.json" "$out/$b-2-upstream.json" "$b" | sed 's/^/    /'
  [ "${PIPESTATUS[0]}" = 0 ] || fail "upstream's answers differ from placement-api's on placement-api's database"
done
if [ "$status" = 0 ]; then echo "interop-db: every check passed ($backends)"; else echo "interop-db: FAILED"; fi
exit $status
