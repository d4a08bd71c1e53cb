#!/usr/bin/env bash
# Nova's own placement client against upstream Placement 16.0.0 and
# against placement-api: scripts/nova_report_client.py drives
# nova.scheduler.client.report.SchedulerReportClient (nova 34.0.0, pinned:
# scripts/requirements/nova.txt) the way nova-compute and the scheduler do
# (nested provider trees, inventory/trait/aggregate sync, allocation
# candidates with granular groups, claims and generation conflicts,
# migration moves, a reshape, deletes), once against each server, each on
# a new SQLite database. The placement state (providers, inventories,
# traits, aggregates, allocations, usages) and what the client returned or
# raised are recorded after every step; the two records must be the same.
#
#   scripts/nova-report-client.sh [--keystone] [--binary PATH] [--ports FIRST-LAST] [--keep DIR]
#
# Both servers run with noauth2 and Nova's [placement] uses keystoneauth's
# admin_token plugin (token "admin"). With --keystone both run behind the
# Keystone of scripts/keystone.sh (its variables in the environment:
# eval "$(scripts/keystone.sh start)"), the legacy policy, and Nova
# authenticates as that Keystone's service user (password plugin, each
# server's URL as endpoint_override) as nova-compute does. --binary takes a built placement-api
# (default: cargo builds the debug one); --keep DIR keeps the records, the
# Nova logs and the servers' logs. Exit status 0 when the records are the
# same; otherwise the first differing step is printed as a diff.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
. scripts/lib.sh

ports= binary= keep= keystone=
while [ $# -gt 0 ]; do
  case $1 in
    --binary) binary=$2; shift 2 ;;
    --ports) ports=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    --keystone) keystone=--keystone; shift ;;
    -h|--help) sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "nova-report-client.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

if [ -n "$keystone" ] && [ -z "${KEYSTONE_URL:-}" ]; then
  echo "nova-report-client.sh: --keystone needs KEYSTONE_URL and the other KEYSTONE_* variables: eval \"\$(scripts/keystone.sh start)\" first" >&2
  exit 2
fi

scratch nova-report-client "$keep"

upstream_venv=$(pinned_venv scripts/requirements/upstream.txt) || { echo "nova-report-client.sh: cannot make the upstream virtualenv" >&2; exit 1; }
nova_venv=$(pinned_venv scripts/requirements/nova.txt) || { echo "nova-report-client.sh: cannot make Nova's virtualenv" >&2; exit 1; }
if [ -z "$binary" ]; then
  cargo build --quiet -p placement --bin placement-api || exit 1
  binary=${CARGO_TARGET_DIR:-$root/target}/debug/placement-api
fi

mkdir -p "$work/upstream"
url=$(db_create sqlite "$work/upstream.db")
upstream_db_sync "$upstream_venv" "$work/upstream" "$url" >"$out/upstream-sync.log" 2>&1 \
  || { echo "nova-report-client.sh: upstream's db sync failed (see $out/upstream-sync.log)"; exit 1; }
if [ -n "$keystone" ]; then
  keystone_placement_conf "$work/upstream-keystone" "$url" "$out/upstream-keystone.log.app"
  start_upstream_keystone "$upstream_venv" "$work/upstream-keystone" "$out/upstream.log" "$ports"
else
  start_upstream_placement "$upstream_venv" "$work/upstream" "$url" "$out/upstream.log" "$ports"
fi || { echo "nova-report-client.sh: upstream did not start (see $out/upstream.log)"; exit 1; }
pids+=("$server_pid")
upstream_url=http://127.0.0.1:$server_port

url=$(db_create sqlite "$work/ours.db")
if [ -n "$keystone" ]; then
  keystone_placement_conf "$work/ours-keystone" "$url" "$out/ours-keystone.log.app"
  start_placement_api_keystone "$binary" "$work/ours-keystone" "$out/ours.log" "$ports"
else
  start_placement_api "$binary" "$url" "$out/ours.log" "$ports"
fi || { echo "nova-report-client.sh: placement-api did not start (see $out/ours.log)"; exit 1; }
pids+=("$server_pid")
ours_url=http://127.0.0.1:$server_port

if [ -n "$keystone" ]; then
  # Behind Keystone a request without a token must be refused by both.
  for u in "$upstream_url" "$ours_url"; do
    status=$(curl -s -o /dev/null --max-time 10 -w '%{http_code}' "$u/resource_providers")
    [ "$status" = 401 ] || { echo "nova-report-client.sh: $u answered $status without a token, not 401"; exit 1; }
  done
fi

# Nova reads OS_* variables through keystoneauth; none of the caller's may count.
while read -r name; do unset "$name"; done < <(compgen -e | grep '^OS_')

# drive NAME URL: the steps against URL, recorded in $out/NAME.json.
drive() {
  mkdir -p "$out/$1-nova"
  echo "-- Nova's report client against $1 ($2)"
  PYTHONHASHSEED=0 PYTHONWARNINGS=ignore timeout 300 "$nova_venv/bin/python" scripts/nova_report_client.py run \
    $keystone --url "$2" --out "$out/$1.json" --workdir "$out/$1-nova" \
    || { echo "nova-report-client.sh: the run against $1 failed (Nova's log: $out/$1-nova/nova-report-client.log)"; return 1; }
}
drive upstream "$upstream_url" || exit 1
drive placement-api "$ours_url" || exit 1

if "$nova_venv/bin/python" scripts/nova_report_client.py compare "$out/upstream.json" "$out/placement-api.json"; then
  echo "nova-report-client: the same placement state after every step"
else
  if [ -n "$keep" ]; then
    echo "nova-report-client: placement-api differs from upstream (records: $out/upstream.json, $out/placement-api.json)"
  else
    echo "nova-report-client: placement-api differs from upstream (--keep DIR keeps the records and logs)"
  fi
  exit 1
fi
