#!/usr/bin/env bash
# The errors the real `openstack` client prints, against upstream Placement
# 16.0.0 and against placement-api: one request of each kind of error
# (a body failing its schema, a bad UUID, a 404, a 409 generation
# conflict, a 409 duplicate uuid, a 406 and a 400 for the version), each
# sent by python-openstackclient with osc-placement (pinned:
# scripts/requirements/osc.txt) to both servers, each on a new SQLite
# database. What the client prints (its last line of the error's
# `detail`) and its exit status must be the same for both, and every
# request must fail.
#
#   scripts/osc-errors.sh [--binary PATH] [--ports FIRST-LAST] [--keep DIR]
#
# osc-placement refuses to send a version it does not know (1.99, 1.a);
# for the 406 and the 400 the client runs with those two added to its
# list, so that the request reaches the server. --binary takes a built
# placement-api (default: cargo builds the debug one); --keep DIR keeps
# the servers' logs. Exit status 0 when every output is the same.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
. scripts/lib.sh

ports= binary= keep=
while [ $# -gt 0 ]; do
  case $1 in
    --binary) binary=$2; shift 2 ;;
    --ports) ports=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "osc-errors.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

scratch osc-errors "$keep"

upstream_venv=$(pinned_venv scripts/requirements/upstream.txt) || { echo "osc-errors.sh: cannot make the upstream virtualenv" >&2; exit 1; }
osc_venv=$(pinned_venv scripts/requirements/osc.txt) || { echo "osc-errors.sh: cannot make the client's virtualenv" >&2; exit 1; }
if [ -z "$binary" ]; then
  cargo build --quiet -p placement --bin placement-api || exit 1
  binary=${CARGO_TARGET_DIR:-$root/target}/debug/placement-api
fi

mkdir -p "$work/upstream"
url=$(db_create sqlite "$work/upstream.db")
upstream_db_sync "$upstream_venv" "$work/upstream" "$url" >"$out/upstream-sync.log" 2>&1 \
  || { echo "osc-errors.sh: upstream's db sync failed (see $out/upstream-sync.log)"; exit 1; }
start_upstream_placement "$upstream_venv" "$work/upstream" "$url" "$out/upstream.log" "$ports" \
  || { echo "osc-errors.sh: upstream did not start (see $out/upstream.log)"; exit 1; }
pids+=("$server_pid")
upstream_url=http://127.0.0.1:$server_port
url=$(db_create sqlite "$work/ours.db")
start_placement_api "$binary" "$url" "$out/ours.log" "$ports" \
  || { echo "osc-errors.sh: placement-api did not start (see $out/ours.log)"; exit 1; }
pids+=("$server_pid")
ours_url=http://127.0.0.1:$server_port

# The client reads OS_* variables; none of the caller's may count.
while read -r name; do unset "$name"; done < <(compgen -e | grep '^OS_')

# osc URL ARGS...: the openstack command against URL (noauth2's admin
# token), with 1.99 and 1.a among osc-placement's known versions.
osc() {
  local url=$1; shift
  HOME=$work "$osc_venv/bin/python" -c '
import sys
from osc_placement import plugin
for version in ("1.99", "1.a"):
    plugin.API_VERSIONS[version] = "osc_placement.http.SessionClient"
from openstackclient.shell import main
sys.exit(main(sys.argv[1:]))
' --os-auth-type admin_token --os-token admin --os-endpoint "$url" "$@"
}

RP=0a0b0c0d-0000-4000-8000-00000000000a
MISSING=0a0b0c0d-0000-4000-8000-00000000dead
AGG=0a0b0c0d-0000-4000-8000-0000000000aa
for url in "$upstream_url" "$ours_url"; do
  osc "$url" --os-placement-api-version 1.20 resource provider create "osc one" --uuid "$RP" \
    >"$out/setup.log" 2>&1 || { echo "osc-errors.sh: cannot create a provider on $url:"; cat "$out/setup.log"; exit 1; }
done

# NAME|VERSION|ARGUMENTS (split on spaces)
cases=(
  "schema|1.2|resource class create fake_class"
  "bad UUID|1.1|resource provider aggregate set $RP --aggregate abc --aggregate efg"
  "404|1.14|resource provider show $MISSING"
  "409 generation conflict|1.19|resource provider aggregate set $RP --aggregate $AGG --generation 99"
  "409 duplicate uuid|1.20|resource provider create osc_two --uuid $RP"
  "406|1.99|resource provider list"
  "400 bad version|1.a|resource provider list"
)
passed=0 failed=0
for case in "${cases[@]}"; do
  IFS='|' read -r name version args <<<"$case"
  read -ra argv <<<"$args"
  up=$(osc "$upstream_url" --os-placement-api-version "$version" "${argv[@]}" 2>&1); up_status=$?
  ours=$(osc "$ours_url" --os-placement-api-version "$version" "${argv[@]}" 2>&1); ours_status=$?
  if [ "$up" == "$ours" ] && [ "$up_status" = "$ours_status" ] && [ "$up_status" != 0 ] && [ -n "$up" ]; then
    echo "same: $name: $up"
    passed=$((passed + 1))
  else
    echo "DIFFERS: $name (openstack --os-placement-api-version $version $args)"
    echo "    upstream (exit $up_status): $up"
    echo "    placement-api (exit $ours_status): $ours"
    failed=$((failed + 1))
  fi
done
echo "osc-errors: $passed passed, $failed failed"
[ "$failed" = 0 ]
