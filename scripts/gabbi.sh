#!/usr/bin/env bash
# Runs upstream Placement's own gabbi files (openstack-placement 16.0.0)
# against placement-api, each file on a fresh database and server.
#
#   scripts/gabbi.sh [--database sqlite|postgresql|mysql] [--only REGEX]
#                    [--keep-going] [--ports FIRST-LAST] [--binary PATH]
#                    [--logs DIR]
#
# Every file names a fixture of upstream's, which decides the policy and the
# data: APIFixture and LegacyRBACPolicyFixture run on an empty database with
# the legacy policy, SecureRBACPolicyFixture with the secure one;
# OpenPolicyFixture with a policy file that opens every rule;
# CORSFixture with a config file that allows one origin. The fixtures that
# make data (AllocationFixture, SharedStorageFixture, GranularFixture, the
# NUMA ones, ...) have it built through the API by scripts/gabbi_fixtures.py
# before the file runs, which also sets the variables the file reads. A file
# whose fixture is unknown is listed as skipped. Every server checks its
# answers against the OpenAPI document of their version
# (--response-validation error): a drift between what it answers and what
# it documents answers 500, which fails the test.
#
#   --database    backend (default sqlite). PostgreSQL and MySQL databases
#                 are created and dropped per file on the servers of
#                 MV_PG_URL / MV_MYSQL_URL (see scripts/lib.sh).
#   --only        run the files whose name (without .yaml) matches REGEX.
#   --keep-going  run every file even after an unexpected failure (default:
#                 stop after the file that had one).
#   --ports       listen on ports from this range (default: a port the
#                 system picks).
#   --binary      use this placement-api instead of building it (release).
#   --logs        keep the server and gabbi output of each file here
#                 (default: a temporary directory, removed when all pass).
#
# scripts/gabbi-known-failures.txt lists the tests expected to fail and
# why. The exit status is 0 when every failure is a known one, 1 otherwise
# (or when a server did not start), 2 on bad usage. The last line reads
# "N passed, N failed (N known), N skipped".
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
. scripts/lib.sh

backend=sqlite only=. keep_going=0 ports= binary= logs=
while [ $# -gt 0 ]; do
  case $1 in
    --database) backend=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --keep-going) keep_going=1; shift ;;
    --ports) ports=$2; shift 2 ;;
    --binary) binary=$2; shift 2 ;;
    --logs) logs=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "gabbi.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
case $backend in
  sqlite|postgresql|mysql) ;;
  *) echo "gabbi.sh: --database is sqlite, postgresql or mysql" >&2; exit 2 ;;
esac
port_first= port_last=
if [ -n "$ports" ]; then
  if [[ ! $ports =~ ^([0-9]+)-([0-9]+)$ ]]; then
    echo "gabbi.sh: --ports is FIRST-LAST" >&2; exit 2
  fi
  port_first=${BASH_REMATCH[1]} port_last=${BASH_REMATCH[2]}
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/gabbi.XXXXXX")
[ -n "$logs" ] || logs=$work/logs
mkdir -p "$logs"
server_pid= dbname=
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null; fi
  if [ -n "$dbname" ] && [ "$backend" != sqlite ]; then db_drop "$backend" "$dbname"; fi
  rm -rf "$work/db" "$work/placement-api"
  # The logs stay when something failed unexpectedly.
  if [ "$logs" != "$work/logs" ] || [ "${all_good:-0}" = 1 ]; then rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

venv=$(pinned_venv scripts/requirements/gabbi.txt) || { echo "gabbi.sh: cannot make the gabbi virtualenv" >&2; exit 1; }
gabbits=$(gabbits_dir "$venv") || exit 1
[ -n "$binary" ] || binary=$(release_placement_api "$work") || exit 1
read_known_failures

# start_server NAME POLICY URL [ARG...]: starts placement-api (with the
# extra arguments), sets server_pid and port.
next_port=$port_first
start_server() {
  local name=$1 policy=$2 url=$3 log=$logs/$1.server.log attempt
  shift 3
  for attempt in 1 2 3 4 5; do
    if [ -n "$port_first" ]; then
      while port_open "$next_port"; do
        next_port=$((next_port + 1))
        [ "$next_port" -le "$port_last" ] || next_port=$port_first
      done
      port=$next_port
      next_port=$((next_port + 1))
      [ "$next_port" -le "$port_last" ] || next_port=$port_first
      "$binary" --bind "127.0.0.1:$port" --database "$url" --policy "$policy" --auth-strategy noauth2 --response-validation error "$@" >"$log" 2>&1 &
      server_pid=$!
      wait_port "$port" "$server_pid" 60 && return 0
    else
      : >"$log"
      "$binary" --bind 127.0.0.1:0 --database "$url" --policy "$policy" --auth-strategy noauth2 --response-validation error "$@" >"$log" 2>&1 &
      server_pid=$!
      local tries=600
      port=
      while [ "$tries" -gt 0 ] && kill -0 "$server_pid" 2>/dev/null; do
        port=$(sed -n 's|.*listening on http://127\.0\.0\.1:\([0-9]*\).*|\1|p' "$log")
        [ -n "$port" ] && return 0
        sleep 0.1; tries=$((tries - 1))
      done
    fi
    kill "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null; server_pid=
    grep -q "cannot listen" "$log" || return 1
  done
  return 1
}

uuid() { cat /proc/sys/kernel/random/uuid; }

# OpenPolicyFixture's policy file and CORSFixture's configuration.
"$venv/bin/python" scripts/gabbi_fixtures.py policy crates/placement/data/policy-defaults.json \
  "$work/open-policy.yaml" || exit 1
cat >"$work/cors.conf" <<'EOF'
[cors]
allowed_origin = http://valid.example.com
allow_headers = openstack-api-version
EOF

passed=0 failed=0 failed_known=0 skipped=0
skipped_files=() unexpected=() fixed=()
mkdir -p "$work/db"
n=0
stopped=0
for f in "$gabbits"/*.yaml; do
  name=$(basename "$f" .yaml)
  [[ $name =~ $only ]] || continue
  fixture=$(grep -m1 -oE '^\s+- \w+Fixture' "$f" | tr -d ' -')
  policy=legacy label=legacy data= extra=()
  case $fixture in
    APIFixture|LegacyRBACPolicyFixture) ;;
    SecureRBACPolicyFixture) policy=secure label=secure ;;
    OpenPolicyFixture) label=open extra=(--policy-file "$work/open-policy.yaml") ;;
    CORSFixture) label=cors extra=(--config-file "$work/cors.conf") ;;
    AllocationFixture|SharedStorageFixture|NUMAAggregateFixture|NUMANetworkFixture|\
    DeepNUMANetworkFixture|NonSharedStorageFixture|GranularFixture|NeutronQoSMultiSegmentFixture)
      data=$fixture label="legacy, $fixture" ;;
    *) skipped_files+=("$name ($fixture)"); continue ;;
  esac
  n=$((n + 1))
  if [ "$backend" = sqlite ]; then dbname=$work/db/$name.db; else dbname=mvtest_gabbi_$$_$n; fi
  if ! url=$(db_create "$backend" "$dbname"); then
    echo "$name: cannot create the database" >&2
    unexpected+=("$name (no database)"); failed=$((failed + 1)); dbname=
    [ "$keep_going" = 1 ] && continue || break
  fi
  if ! start_server "$name" "$policy" "$url" "${extra[@]}"; then
    echo "$name: the server did not start (see $logs/$name.server.log)"
    tail -3 "$logs/$name.server.log" | sed 's/^/    /'
    unexpected+=("$name (server did not start)"); failed=$((failed + 1))
    db_drop "$backend" "$dbname"; dbname=
    [ "$keep_going" = 1 ] && continue || break
  fi
  for v in RP_UUID RP_NAME RP_UUID1 RP_NAME1 RP_UUID2 RP_NAME2 PROJECT_ID ADMIN_PROJECT_ID \
           SERVICE_PROJECT_ID USER_ID PROJECT_ID_ALT USER_ID_ALT ALT_USER_ID INSTANCE_UUID \
           MIGRATION_UUID CONSUMER_UUID CONSUMER_ID ALT_CONSUMER_ID PARENT_PROVIDER_UUID \
           ALT_PARENT_PROVIDER_UUID ALT_RP_UUID ALT_RP_NAME; do
    export "$v=$(uuid)"
  done
  export CUSTOM_RES_CLASS=CUSTOM_IRON_NFV CUSTOM_RES_CLASS1=CUSTOM_IRON_NFV1 CUSTOM_RES_CLASS2=CUSTOM_IRON_NFV2
  # The fixture's variables, NAME=VALUE lines (names such as
  # "compute0:ovs_agent" are no shell names, hence env).
  fixture_env=()
  if [ -n "$data" ]; then
    if ! "$venv/bin/python" scripts/gabbi_fixtures.py data "$data" "http://127.0.0.1:$port" \
           "$work/fixture.env" >"$logs/$name.fixture.log" 2>&1; then
      echo "$name: the fixture data could not be made (see $logs/$name.fixture.log)"
      tail -3 "$logs/$name.fixture.log" | sed 's/^/    /'
      unexpected+=("$name (fixture data)"); failed=$((failed + 1))
      kill "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null; server_pid=
      db_drop "$backend" "$dbname"; dbname=
      [ "$keep_going" = 1 ] && continue || break
    fi
    mapfile -t fixture_env <"$work/fixture.env"
  fi
  env "${fixture_env[@]}" "$venv/bin/gabbi-run" "http://127.0.0.1:$port" -- "$f" >"$logs/$name.gabbi.log" 2>&1
  alive=1; kill -0 "$server_pid" 2>/dev/null || alive=0
  kill "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null; server_pid=
  db_drop "$backend" "$dbname"
  dbname=

  fp=0 ff=0 fk=0 fs=0 bad=()
  while IFS= read -r line; do
    test=${line#... * gabbi-runner.}
    test=${test%%: *}
    test=${test#"${name}_"}
    case $line in
      '... ✓ '*|'... o '*)
        fp=$((fp + 1))
        # A test listed by name (not by "*") that passes.
        if [ -n "${known["$name $test"]+x}" ]; then fixed+=("$name $test"); fi ;;
      '... - '*) fs=$((fs + 1)) ;;
      *) ff=$((ff + 1))
         if is_known "$name" "$test"; then fk=$((fk + 1)); else bad+=("$test"); fi ;;
    esac
  done < <(grep -E '^\.\.\. (✓|✗|E|-|o|!) gabbi-runner\.' "$logs/$name.gabbi.log")
  ran=$(sed -n 's/^Ran \([0-9]*\) test.*/\1/p' "$logs/$name.gabbi.log")
  if [ -z "$ran" ] || [ "$ran" != $((fp + ff + fs)) ]; then
    bad+=("(gabbi-run did not finish: see $logs/$name.gabbi.log)")
    ff=$((ff + 1))
  fi
  [ "$alive" = 1 ] || bad+=("(the server died: see $logs/$name.server.log)")
  passed=$((passed + fp)) failed=$((failed + ff)) failed_known=$((failed_known + fk)) skipped=$((skipped + fs))
  status="$fp/$((fp + ff))"
  [ "$fk" -gt 0 ] && status="$status ($fk known failures)"
  echo "$name [$label]: $status"
  if [ "${#bad[@]}" -gt 0 ]; then
    for t in "${bad[@]}"; do echo "    UNEXPECTED: $t"; done
    unexpected+=("$name")
    if [ "$keep_going" = 0 ]; then stopped=1; break; fi
  fi
done

echo "skipped files (their fixture is unknown): ${#skipped_files[@]}"
for s in "${skipped_files[@]}"; do echo "    $s"; done
if [ "${#fixed[@]}" -gt 0 ]; then
  echo "known failures that passed (remove them from scripts/gabbi-known-failures.txt):"
  for t in "${fixed[@]}"; do echo "    $t"; done
fi
[ "$stopped" = 1 ] && echo "stopped after the first file with an unexpected failure (--keep-going runs every file)"
if [ "${#unexpected[@]}" -gt 0 ]; then
  echo "files with unexpected failures: ${unexpected[*]} (logs in $logs)"
fi
echo "$passed passed, $failed failed ($failed_known known), $skipped skipped; ${#skipped_files[@]} files skipped"
if [ "${#unexpected[@]}" -eq 0 ]; then all_good=1; exit 0; fi
exit 1
