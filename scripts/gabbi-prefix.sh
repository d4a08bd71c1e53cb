#!/usr/bin/env bash
# Runs upstream Placement's gabbi files under a path prefix against both
# upstream 16.0.0 (gunicorn with SCRIPT_NAME=/placement, as mounted by
# uwsgi or mod_wsgi) and placement-api (--root-path /placement), each file
# on a fresh SQLite database and server, and compares the results test by
# test: every test must pass on one exactly when it passes on the other.
# gabbi addresses every request under the prefix, and its expectations of
# links and Location headers are upstream's at the root, so the tests that
# look at them fail on both alike: that is the comparison.
#
#   scripts/gabbi-prefix.sh [--only REGEX] [--all] [--binary PATH] [--logs DIR]
#
#   --only    run the files whose name (without .yaml) matches REGEX.
#   --all     every file of the APIFixture and LegacyRBACPolicyFixture
#             (40 files, 681 tests; about 5 minutes; the files whose
#             fixture makes data or another policy are left out). Without
#             it, a representative
#             part: providers, classes, traits, inventories, allocations,
#             aggregates, usages, the root and the microversion files.
#   --binary  use this placement-api instead of building it (release).
#   --logs    keep each server's and gabbi's output here (default: a
#             temporary directory, removed when all agree).
#
# The tests of scripts/gabbi-known-failures.txt (where placement-api and
# upstream's expectations differ at the root) may differ here too. The
# exit status is 0 when every other test agrees, 1 otherwise, 2 on bad
# usage. The last line reads "N tests agree (N pass on both), N differ".
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
. scripts/lib.sh

prefix=/placement
only= all=0 binary= logs=
while [ $# -gt 0 ]; do
  case $1 in
    --only) only=$2; shift 2 ;;
    --all) all=1; shift ;;
    --binary) binary=$2; shift 2 ;;
    --logs) logs=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "gabbi-prefix.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
if [ -z "$only" ]; then
  if [ "$all" = 1 ]; then
    only=.
  else
    only='^(resource-provider|resource-classes|traits|inventory|allocations|aggregate|usage|basic-http|microversion|resource-provider-links)$'
  fi
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/gabbi-prefix.XXXXXX")
[ -n "$logs" ] || logs=$work/logs
mkdir -p "$logs"
server_pid=
stop_server() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null; fi
  server_pid=
}
cleanup() {
  stop_server
  if [ "$logs" != "$work/logs" ] || [ "${all_good:-0}" = 1 ]; then rm -rf "$work"; else rm -rf "$work/db"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

gabbi_venv=$(pinned_venv scripts/requirements/gabbi.txt) || { echo "gabbi-prefix.sh: cannot make the gabbi virtualenv" >&2; exit 1; }
upstream_venv=$(pinned_venv scripts/requirements/upstream.txt) || { echo "gabbi-prefix.sh: cannot make upstream's virtualenv" >&2; exit 1; }
gabbits=$(gabbits_dir "$gabbi_venv") || exit 1
[ -n "$binary" ] || binary=$(release_placement_api "$work") || exit 1
read_known_failures

# run_gabbi NAME SIDE FILE: gabbi-run on http://127.0.0.1:$server_port$prefix,
# its verdicts as "TEST pass|fail" lines in $logs/NAME.SIDE.results.
run_gabbi() {
  local log=$logs/$1.$2.gabbi.log
  "$gabbi_venv/bin/gabbi-run" "http://127.0.0.1:$server_port$prefix" -- "$3" >"$log" 2>&1
  grep -E '^\.\.\. (✓|✗|E|-|o|!) gabbi-runner\.' "$log" | while IFS= read -r line; do
    test=${line#... * gabbi-runner.}
    test=${test%%: *}
    test=${test#"${1}_"}
    case $line in
      '... ✓ '*|'... o '*) echo "$test pass" ;;
      '... - '*) echo "$test skip" ;;
      *) echo "$test fail" ;;
    esac
  done >"$logs/$1.$2.results"
}

agree=0 both_pass=0 differ=0 files=0
bad_files=()
mkdir -p "$work/db"
for f in "$gabbits"/*.yaml; do
  name=$(basename "$f" .yaml)
  [[ $name =~ $only ]] || continue
  fixture=$(grep -m1 -oE '^\s+- \w+Fixture' "$f" | tr -d ' -')
  case $fixture in
    APIFixture|LegacyRBACPolicyFixture) ;;
    *) continue ;;
  esac
  files=$((files + 1))
  for v in RP_UUID RP_NAME RP_UUID1 RP_NAME1 RP_UUID2 RP_NAME2 PROJECT_ID ADMIN_PROJECT_ID \
           SERVICE_PROJECT_ID USER_ID PROJECT_ID_ALT USER_ID_ALT ALT_USER_ID INSTANCE_UUID \
           MIGRATION_UUID CONSUMER_UUID CONSUMER_ID ALT_CONSUMER_ID PARENT_PROVIDER_UUID \
           ALT_PARENT_PROVIDER_UUID ALT_RP_UUID ALT_RP_NAME; do
    export "$v=$(cat /proc/sys/kernel/random/uuid)"
  done
  export CUSTOM_RES_CLASS=CUSTOM_IRON_NFV CUSTOM_RES_CLASS1=CUSTOM_IRON_NFV1 CUSTOM_RES_CLASS2=CUSTOM_IRON_NFV2

  # Upstream, mounted at the prefix.
  mkdir -p "$work/db/$name.upstream"
  url="sqlite:///$work/db/$name.upstream/placement.db"
  if ! upstream_db_sync "$upstream_venv" "$work/db/$name.upstream" "$url" >"$logs/$name.upstream.sync.log" 2>&1 ||
     ! SCRIPT_NAME=$prefix start_upstream_placement "$upstream_venv" "$work/db/$name.upstream" "$url" \
         "$logs/$name.upstream.server.log"; then
    echo "$name: upstream did not start (see $logs/$name.upstream.server.log)"
    stop_server; bad_files+=("$name"); continue
  fi
  run_gabbi "$name" upstream "$f"
  stop_server

  # placement-api at --root-path.
  url="sqlite:///$work/db/$name.ours.db"
  server_port=$(free_port) || exit 1
  "$binary" --bind "127.0.0.1:$server_port" --database "$url" --policy legacy --auth-strategy noauth2 \
    --root-path "$prefix" >"$logs/$name.ours.server.log" 2>&1 &
  server_pid=$!
  if ! wait_port "$server_port" "$server_pid" 60; then
    echo "$name: placement-api did not start (see $logs/$name.ours.server.log)"
    stop_server; bad_files+=("$name"); continue
  fi
  run_gabbi "$name" ours "$f"
  stop_server

  fa=0 fd=0 fp=0 diffs=()
  while read -r test verdict_up verdict_ours; do
    if [ "$verdict_up" = "$verdict_ours" ]; then
      fa=$((fa + 1))
      [ "$verdict_up" = pass ] && fp=$((fp + 1))
    elif is_known "$name" "$test"; then
      fa=$((fa + 1))
    else
      fd=$((fd + 1)); diffs+=("$test: upstream ${verdict_up:-absent}, placement-api ${verdict_ours:-absent}")
    fi
  done < <(join -a1 -a2 -e absent -o 0,1.2,2.2 <(sort "$logs/$name.upstream.results") <(sort "$logs/$name.ours.results"))
  if [ ! -s "$logs/$name.upstream.results" ]; then
    fd=$((fd + 1)); diffs+=("(no verdicts from upstream: see $logs/$name.upstream.gabbi.log)")
  fi
  agree=$((agree + fa)) both_pass=$((both_pass + fp)) differ=$((differ + fd))
  echo "$name: $fa agree ($fp pass on both), $fd differ"
  if [ "$fd" -gt 0 ]; then
    for d in "${diffs[@]}"; do echo "    DIFFERS: $d"; done
    bad_files+=("$name")
  fi
done

if [ "$files" = 0 ]; then echo "gabbi-prefix.sh: no file matches $only" >&2; exit 2; fi
[ "${#bad_files[@]}" -gt 0 ] && echo "files that differ: ${bad_files[*]} (logs in $logs)"
echo "$agree tests agree ($both_pass pass on both), $differ differ; $files files under $prefix"
if [ "${#bad_files[@]}" -eq 0 ]; then all_good=1; exit 0; fi
exit 1
