#!/usr/bin/env bash
# placement-manage and placement-status against upstream's (openstack-
# placement 16.0.0, from a pinned virtualenv), on databases upstream's own
# migrations created at each earlier schema revision (b4ed3a175331,
# 611cd6dffd7b, b5c396305c25, 422ece571366), holding rows that need the
# online data migrations where the revision allows them
# (scripts/manage_check.py). For each revision, two such databases, one
# for each side:
#
#  1. `placement-status upgrade check` on it: ours prints upstream's table
#     and exits with its code;
#  2. `db sync` on both: the same exit code, the same refusal; when
#     refused, `db online_data_migrations` (once with --max-count 1 at the
#     first revision, then without) on both: the same output and exit
#     code; then `db sync` again, until it passes; `db version` then says
#     the head revision;
#  3. both databases end with the same schema and rows
#     (scripts/db_catalog.py);
#  4. from the first revision (every step and both migrations ran on
#     it), upstream's placement (gunicorn) serves our upgraded database
#     and answers a few GETs as placement-api does on it.
#
#   scripts/manage-check.sh [--database sqlite|postgresql|mysql|all]
#                           [--bin-dir DIR] [--ports FIRST-LAST]
#
# --bin-dir holds placement-manage, placement-status and placement-api
# (default: built here). MV_KEEP=1 keeps the work directory (outputs,
# logs, SQLite files). Exit status 0 when every check passes, 1 otherwise.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
. scripts/lib.sh

backends=sqlite bin_dir= ports=
while [ $# -gt 0 ]; do
  case $1 in
    --database) if [ "$2" = all ]; then backends="sqlite postgresql mysql"; else backends=$2; fi; shift 2 ;;
    --bin-dir) bin_dir=$2; shift 2 ;;
    --ports) ports=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "manage-check.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

work=$(mktemp -d "${TMPDIR:-/tmp}/manage-check.XXXXXX")
pid= made=()
stop_server() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; pid=; fi
}
cleanup() {
  local entry
  stop_server
  for entry in "${made[@]}"; do db_drop ${entry}; done
  [ -n "${MV_KEEP:-}" ] || rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

venv=$(pinned_venv scripts/requirements/upstream.txt) || { echo "manage-check.sh: cannot make the upstream virtualenv" >&2; exit 1; }
py=$venv/bin/python
if [ -z "$bin_dir" ]; then
  cargo build --quiet -p placement --bins || exit 1
  bin_dir=${CARGO_TARGET_DIR:-$root/target}/debug
fi

status=0
fail() { echo "$backend $rev: $*"; status=1; }

# conf SIDE URL: a placement.conf naming the database, for the commands.
conf() {
  mkdir -p "$work/$1"
  printf '[placement_database]\nconnection = %s\n' "$2" > "$work/$1/placement.conf"
  echo "$work/$1/placement.conf"
}

# both NAME ARGS...: runs `placement-manage ARGS` on each side, keeping
# stdout, stderr and the exit code in $work/NAME.{ours,upstream}.*; fails
# when the exit codes or the outputs differ (stderr: its last line, which
# upstream's traceback ends with).
both() {
  local name=$1; shift
  # Each side on its own database: at once.
  { "$bin_dir/placement-manage" --config-file "$ours_conf" "$@" >"$work/$name.ours.out" 2>"$work/$name.ours.err"
    echo $? > "$work/$name.ours.rc"; } &
  "$venv/bin/placement-manage" --config-file "$theirs_conf" "$@" >"$work/$name.upstream.out" 2>"$work/$name.upstream.err"
  echo $? > "$work/$name.upstream.rc"
  wait $!
  if ! cmp -s "$work/$name.ours.rc" "$work/$name.upstream.rc"; then
    fail "$* exits $(cat "$work/$name.ours.rc"), upstream's $(cat "$work/$name.upstream.rc")"
    tail -3 "$work/$name.ours.err" "$work/$name.upstream.err"
    return 1
  fi
  if ! diff -u "$work/$name.upstream.out" "$work/$name.ours.out"; then
    fail "$* prints other than upstream's (- upstream, + ours)"; return 1
  fi
  if ! diff <(tail -1 "$work/$name.upstream.err") <(tail -1 "$work/$name.ours.err") >/dev/null; then
    fail "$* says other than upstream's:"; tail -1 "$work/$name.upstream.err" "$work/$name.ours.err"; return 1
  fi
}

for backend in $backends; do
  for rev in b4ed3a175331 611cd6dffd7b b5c396305c25 422ece571366; do
    start=$SECONDS failed_before=$status status=0
    if [ "$backend" = sqlite ]; then ours=$work/ours-$rev.db theirs=$work/upstream-$rev.db
    else ours=mvtest_manage_ours_$$ theirs=mvtest_manage_upstream_$$; fi
    ours_url=$(db_create "$backend" "$ours") && made+=("$backend $ours") || { fail "cannot create a database"; continue; }
    theirs_url=$(db_create "$backend" "$theirs") && made+=("$backend $theirs") || { fail "cannot create a database"; continue; }
    ours_conf=$(conf ours "$ours_url") theirs_conf=$(conf upstream "$theirs_url")
    "$py" scripts/manage_check.py make "$ours_url" "$rev" >"$work/make-ours.log" 2>&1 &
    maker=$!
    "$py" scripts/manage_check.py make "$theirs_url" "$rev" >"$work/make-upstream.log" 2>&1 \
      || { fail "upstream could not make the database:"; tail -3 "$work/make-upstream.log"; wait; continue; }
    wait $maker || { fail "upstream could not make the database:"; tail -3 "$work/make-ours.log"; continue; }

    # 1. The upgrade checks, on the database as upstream left it.
    { "$bin_dir/placement-status" --config-file "$ours_conf" upgrade check >"$work/status.ours" 2>&1
      echo $? > "$work/status.ours.rc"; } &
    "$venv/bin/placement-status" --config-file "$ours_conf" upgrade check >"$work/status.upstream" 2>&1
    theirs_rc=$?
    wait $!
    ours_rc=$(cat "$work/status.ours.rc")
    [ "$ours_rc" = "$theirs_rc" ] || fail "placement-status exits $ours_rc, upstream's $theirs_rc"
    diff -u "$work/status.upstream" "$work/status.ours" || fail "placement-status prints other than upstream's (- upstream, + ours)"

    # 2. db sync, with the online migrations while it refuses.
    refusals=0 limited=
    [ "$rev" = b4ed3a175331 ] && limited=1
    while both sync db sync; [ "$(cat "$work/sync.ours.rc")" != 0 ]; do
      refusals=$((refusals + 1))
      [ "$refusals" -le 2 ] || { fail "db sync still refused after the online migrations"; break; }
      if [ -n "$limited" ]; then
        both limited db online_data_migrations --max-count 1 || break
        limited=
      fi
      both migrate db online_data_migrations || break
    done
    [ "$(cat "$work/sync.ours.rc" 2>/dev/null)" = 0 ] || { fail "db sync failed"; continue; }
    both after db online_data_migrations || continue
    both version db version || continue
    [ "$(cat "$work/version.ours.out")" = a082b8bb98d0 ] || fail "db version says $(cat "$work/version.ours.out")"

    # 3. The same schema and rows as upstream's upgrade left.
    for side in ours:$ours_url upstream:$theirs_url; do
      for part in schema data; do
        "$py" scripts/db_catalog.py $part "${side#*:}" > "$work/${side%%:*}.$part" &
      done
    done
    wait
    for file in ours.schema ours.data upstream.schema upstream.data; do
      [ -s "$work/$file" ] || fail "cannot read the database ($file)"
    done
    diff -u "$work/upstream.schema" "$work/ours.schema" || fail "the upgraded schemas differ (- upstream, + ours)"
    diff -u "$work/upstream.data" "$work/ours.data" || fail "the upgraded rows differ (- upstream, + ours)"

    # 4. Upstream serves our upgraded database as placement-api does (at
    # the first revision: every step and both migrations ran on it).
    served=
    [ "$rev" = b4ed3a175331 ] && served=", served by upstream alike"
    if [ -z "$served" ]; then
      :
    elif start_upstream_placement "$venv" "$work" "$ours_url" "$work/upstream.log" "$ports"; then
      pid=$server_pid
      "$py" scripts/manage_check.py gets "http://127.0.0.1:$server_port" "$work/gets.upstream"
    else
      fail "upstream did not start on our database:"; tail -5 "$work/upstream.log" "$work/upstream.log.app"
    fi
    stop_server
    if [ -z "$served" ]; then
      :
    elif start_placement_api "$bin_dir/placement-api" "$ours_url" "$work/ours.log" "$ports"; then
      pid=$server_pid
      "$py" scripts/manage_check.py gets "http://127.0.0.1:$server_port" "$work/gets.ours"
    else
      fail "placement-api did not start:"; tail -5 "$work/ours.log"
    fi
    stop_server
    [ -z "$served" ] || diff -u "$work/gets.upstream" "$work/gets.ours" || fail "the answers differ (- upstream, + placement-api)"

    [ "$status" = 0 ] && echo "$backend $rev: upgraded as upstream's ($refusals refusal(s) until the online migrations ran)$served ($((SECONDS - start)) s)"
    [ "$failed_before" = 0 ] || status=1
    db_drop $backend "$ours"; db_drop $backend "$theirs"
  done
done
exit $status
