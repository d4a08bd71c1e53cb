#!/usr/bin/env bash
# Compares the schema `placement-api db sync` creates with the one
# upstream's `placement-manage db sync` (openstack-placement 16.0.0)
# creates, on each backend: tables, columns, types, nullability, defaults,
# keys, foreign keys, indexes, sequences and alembic_version, as listed by
# scripts/db_catalog.py. Then checks that upstream's db sync leaves our
# database unchanged.
#
#   scripts/schema-check.sh [--database sqlite|postgresql|mysql|all] [--binary PATH]
#
# PostgreSQL and MySQL databases are created and dropped on the servers of
# MV_PG_URL / MV_MYSQL_URL (scripts/lib.sh). Exit status 0 when every
# backend matches, 1 otherwise.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
. scripts/lib.sh

backends="sqlite postgresql mysql" binary=
while [ $# -gt 0 ]; do
  case $1 in
    --database) [ "$2" = all ] || backends=$2; shift 2 ;;
    --binary) binary=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "schema-check.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

work=$(mktemp -d "${TMPDIR:-/tmp}/schema-check.XXXXXX")
made=()
cleanup() {
  local entry
  for entry in "${made[@]}"; do db_drop ${entry}; done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

venv=$(pinned_venv scripts/requirements/upstream.txt) || { echo "schema-check.sh: cannot make the upstream virtualenv" >&2; exit 1; }
if [ -z "$binary" ]; then
  cargo build --quiet --release -p placement --bin placement-api || exit 1
  cp "${CARGO_TARGET_DIR:-$root/target}/release/placement-api" "$work/placement-api" || exit 1
  binary=$work/placement-api
fi

upstream_sync() {
  printf '[placement_database]\nconnection = %s\n' "$1" > "$work/placement.conf"
  "$venv/bin/placement-manage" --config-file "$work/placement.conf" db sync
}

status=0
for backend in $backends; do
  if [ "$backend" = sqlite ]; then ours=$work/ours.db theirs=$work/upstream.db; else ours=mvtest_schema_ours_$$ theirs=mvtest_schema_upstream_$$; fi
  ours_url=$(db_create "$backend" "$ours") && made+=("$backend $ours") \
    || { echo "$backend: cannot create a database"; status=1; continue; }
  theirs_url=$(db_create "$backend" "$theirs") && made+=("$backend $theirs") \
    || { echo "$backend: cannot create a database"; status=1; continue; }
  if ! "$binary" --database "$ours_url" db sync >/dev/null; then
    echo "$backend: placement-api db sync failed"; status=1; continue
  fi
  if ! upstream_sync "$theirs_url" 2>"$work/upstream.log"; then
    echo "$backend: upstream's db sync failed:"; tail -5 "$work/upstream.log"; status=1; continue
  fi
  "$venv/bin/python" scripts/db_catalog.py schema "$ours_url" > "$work/ours.txt" || { status=1; continue; }
  "$venv/bin/python" scripts/db_catalog.py schema "$theirs_url" > "$work/upstream.txt" || { status=1; continue; }
  "$venv/bin/python" scripts/db_catalog.py data "$ours_url" > "$work/ours-data.txt" || { status=1; continue; }
  if ! diff -u "$work/upstream.txt" "$work/ours.txt" > "$work/schema.diff"; then
    echo "$backend: the schemas differ (- upstream, + placement-api):"
    cat "$work/schema.diff"; status=1; continue
  fi
  # Upstream's db sync on our database must find it current and change
  # nothing.
  if ! upstream_sync "$ours_url" 2>"$work/upstream.log"; then
    echo "$backend: upstream's db sync refused our database:"; tail -5 "$work/upstream.log"; status=1; continue
  fi
  "$venv/bin/python" scripts/db_catalog.py schema "$ours_url" > "$work/ours-after.txt"
  "$venv/bin/python" scripts/db_catalog.py data "$ours_url" > "$work/ours-data-after.txt"
  if ! diff -u "$work/ours.txt" "$work/ours-after.txt" || ! diff -u "$work/ours-data.txt" "$work/ours-data-after.txt"; then
    echo "$backend: upstream's db sync changed our database"; status=1; continue
  fi
  echo "$backend: same schema as upstream ($(grep -c '' "$work/ours.txt") catalog lines); upstream's db sync leaves it unchanged"
done
exit $status
