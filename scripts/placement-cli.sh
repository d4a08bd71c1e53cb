#!/usr/bin/env bash
# The `placement` command (crates/placement-cli) against upstream
# Placement 16.0.0 and placement-api, each on a new SQLite database with
# noauth2, and beside the real `openstack` client with osc-placement
# (pinned: scripts/requirements/osc.txt):
#
# 1. every command of `placement` runs against both servers, in the same
#    order with the same UUIDs; each must succeed and print the same
#    (-f json, compared with sorted keys) from both;
# 2. on a few commands, `placement ... -f json` and `openstack ... -f json`
#    (the same command, options and version) must print the same columns
#    and values, on both servers.
#
#   scripts/placement-cli.sh [--keystone] [--binary PATH] [--client PATH] [--ports FIRST-LAST] [--keep DIR]
#   scripts/placement-cli.sh --bench [--binary PATH] [--client PATH] [--ports FIRST-LAST]
#
# --bench measures instead, with hyperfine (Debian's package), the wall
# time of `placement resource provider list` and of `openstack resource
# provider list` against the same placement-api holding 20 providers: two
# rounds of 10 runs of each after 2 warm-up runs, the second round in the
# other order (BENCHMARKS.md). Give it a release build of the client.
#
# --keystone runs both servers behind the Keystone of scripts/keystone.sh
# (its KEYSTONE_* variables in the environment: eval "$(bash
# scripts/keystone.sh start)"), the legacy policy, and both clients with
# the Keystone admin's password from a clouds.yaml whose cloud names the
# server (placement_endpoint_override) instead of noauth2's token; the
# comparison with osc-placement is left out then (osc goes to the
# catalog's endpoint whatever clouds.yaml says).
#
# --binary takes a built placement-api, --client a built `placement`
# (default: cargo builds the debug ones); --keep DIR keeps the logs and
# every output. Exit status 0 when every check holds. About 40 seconds
# once the virtualenvs exist.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
. scripts/lib.sh

ports= binary= client= keep= bench= keystone=
while [ $# -gt 0 ]; do
  case $1 in
    --bench) bench=1; shift ;;
    --keystone) keystone=1; shift ;;
    --binary) binary=$2; shift 2 ;;
    --client) client=$2; shift 2 ;;
    --ports) ports=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "placement-cli.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

if [ -n "$keystone" ] && [ -z "${KEYSTONE_URL:-}" ]; then
  echo "placement-cli.sh: --keystone needs KEYSTONE_URL and the other KEYSTONE_* variables: eval \"\$(bash scripts/keystone.sh start)\" first" >&2
  exit 2
fi

scratch placement-cli "$keep"

upstream_venv=$(pinned_venv scripts/requirements/upstream.txt) || { echo "placement-cli.sh: cannot make the upstream virtualenv" >&2; exit 1; }
osc_venv=$(pinned_venv scripts/requirements/osc.txt) || { echo "placement-cli.sh: cannot make the client's virtualenv" >&2; exit 1; }
if [ -z "$binary" ]; then
  cargo build --quiet -p placement --bin placement-api || exit 1
  binary=${CARGO_TARGET_DIR:-$root/target}/debug/placement-api
fi
if [ -z "$client" ]; then
  cargo build --quiet -p placement-cli --bin placement || exit 1
  client=${CARGO_TARGET_DIR:-$root/target}/debug/placement
fi

if [ -n "$bench" ]; then
  command -v hyperfine >/dev/null || { echo "placement-cli.sh: --bench needs hyperfine (apt-get install hyperfine)" >&2; exit 1; }
  url=$(db_create sqlite "$work/bench.db")
  start_placement_api "$binary" "$url" "$out/bench.log" "$ports" \
    || { echo "placement-cli.sh: placement-api did not start (see $out/bench.log)"; exit 1; }
  pids+=("$server_pid")
  endpoint=http://127.0.0.1:$server_port/
  while read -r name; do unset "$name"; done < <(compgen -e | grep '^OS_')
  export XDG_CACHE_HOME=$work/cache HOME=$work
  for i in $(seq 1 20); do
    "$client" --os-endpoint "$endpoint" --os-token admin resource provider create "cn$i" -f value >/dev/null || exit 1
  done
  ours="$client --os-endpoint $endpoint --os-token admin resource provider list"
  theirs="$osc_venv/bin/openstack --os-auth-type admin_token --os-token admin --os-endpoint $endpoint resource provider list"
  echo "client: $client; osc: $("$osc_venv/bin/openstack" --version 2>&1)"
  hyperfine -N --warmup 2 --runs 10 -n placement "$ours" -n openstack "$theirs"
  hyperfine -N --warmup 2 --runs 10 -n openstack "$theirs" -n placement "$ours"
  exit 0
fi

mkdir -p "$work/upstream"
url=$(db_create sqlite "$work/upstream.db")
upstream_db_sync "$upstream_venv" "$work/upstream" "$url" >"$out/upstream-sync.log" 2>&1 \
  || { echo "placement-cli.sh: upstream's db sync failed (see $out/upstream-sync.log)"; exit 1; }
if [ -n "$keystone" ]; then
  keystone_placement_conf "$work/upstream-keystone" "$url" "$out/upstream-keystone.log.app"
  start_upstream_keystone "$upstream_venv" "$work/upstream-keystone" "$out/upstream.log" "$ports"
else
  start_upstream_placement "$upstream_venv" "$work/upstream" "$url" "$out/upstream.log" "$ports"
fi || { echo "placement-cli.sh: upstream did not start (see $out/upstream.log)"; exit 1; }
pids+=("$server_pid")
upstream_url=http://127.0.0.1:$server_port/
url=$(db_create sqlite "$work/ours.db")
if [ -n "$keystone" ]; then
  keystone_placement_conf "$work/ours-keystone" "$url" "$out/ours-keystone.log.app"
  start_placement_api_keystone "$binary" "$work/ours-keystone" "$out/ours.log" "$ports"
else
  start_placement_api "$binary" "$url" "$out/ours.log" "$ports"
fi || { echo "placement-cli.sh: placement-api did not start (see $out/ours.log)"; exit 1; }
pids+=("$server_pid")
ours_url=http://127.0.0.1:$server_port/

if [ -n "$keystone" ]; then
  # Behind Keystone a request without a token is refused by both; the
  # clients authenticate as Keystone's admin, one cloud per server.
  for u in "$upstream_url" "$ours_url"; do
    status=$(curl -s -o /dev/null --max-time 10 -w '%{http_code}' "${u}resource_providers")
    [ "$status" = 401 ] || { echo "placement-cli.sh: $u answered $status without a token, not 401"; exit 1; }
  done
  cloud() {
    cat <<YAML
  $1:
    auth:
      auth_url: ${KEYSTONE_URL%/v3}
      username: $KEYSTONE_ADMIN_USER
      password: $KEYSTONE_ADMIN_PASSWORD
      project_name: $KEYSTONE_ADMIN_PROJECT
      user_domain_name: Default
      project_domain_name: Default
    region_name: ${KEYSTONE_REGION:-RegionOne}
    placement_endpoint_override: $2
YAML
  }
  { echo "clouds:"; cloud upstream "$upstream_url"; cloud ours "$ours_url"; } >"$work/clouds.yaml"
fi

# The clients read OS_* variables; none of the caller's may count.
while read -r name; do unset "$name"; done < <(compgen -e | grep '^OS_')
[ -n "$keystone" ] && export OS_CLIENT_CONFIG_FILE=$work/clouds.yaml

# auth URL: the client options for the server at URL: noauth2's admin
# token, or with --keystone the cloud of clouds.yaml that names it.
auth() {
  if [ -z "$keystone" ]; then
    echo --os-endpoint "$1" --os-token admin
  elif [ "$1" = "$upstream_url" ]; then
    echo --os-cloud upstream
  else
    echo --os-cloud ours
  fi
}
# pl URL ARGS...: our client, its negotiation cache in the work directory.
pl() {
  local url=$1; shift
  # shellcheck disable=SC2046 # auth's words are options
  XDG_CACHE_HOME=$work/cache "$client" $(auth "$url") "$@"
}
# osc URL ARGS...: the openstack command, authenticated as pl is.
osc() {
  local url=$1; shift
  local how=(--os-auth-type admin_token --os-token admin --os-endpoint "$url")
  [ -n "$keystone" ] && how=($(auth "$url"))
  HOME=$work "$osc_venv/bin/openstack" "${how[@]}" "$@"
}
# same TEXT1 TEXT2: equal as JSON documents in any order of keys, of
# rows, and of the CLASS=N items of a text (the servers order the
# classes of a provider differently: a JSON object has no order).
canon='walk(if type == "array" then sort elif type == "string" and test("^[A-Z_0-9]+=")
  then split(",") | sort | join(",") else . end)'
same() {
  [ -n "$1" ] && [ "$(jq -S "$canon" <<<"$1" 2>/dev/null)" == "$(jq -S "$canon" <<<"$2" 2>/dev/null)" ]
}

RP=0a0b0c0d-0000-4000-8000-00000000000a
CHILD=0a0b0c0d-0000-4000-8000-00000000000b
CONSUMER=0a0b0c0d-0000-4000-8000-0000000000c0
PROJECT=0a0b0c0d-0000-4000-8000-0000000000d0
USER=0a0b0c0d-0000-4000-8000-0000000000e0
AGG=0a0b0c0d-0000-4000-8000-0000000000aa

# Every command, in order (split on spaces); "-" first: prints nothing.
commands=(
  "resource provider create compute1 --uuid $RP -f json"
  "resource provider create child --uuid $CHILD --parent-provider $RP -f json"
  "resource provider list -f json"
  "resource provider list --in-tree $RP -f json"
  "resource provider set $RP --name compute-1 -f json"
  "resource provider show $RP -f json"
  "resource provider inventory set $RP --resource VCPU=8 --resource MEMORY_MB=4096 --resource MEMORY_MB:reserved=512 -f json"
  "resource provider inventory set $RP --amend --resource DISK_GB=50 -f json"
  "resource provider inventory class set $RP DISK_GB --total 100 --allocation-ratio 1.5 -f json"
  "resource provider inventory list $RP -f json"
  "resource provider inventory show $RP VCPU -f json"
  "- resource class create CUSTOM_GPU"
  "- resource class set CUSTOM_FPGA"
  "resource class show CUSTOM_GPU -f json"
  "resource class list -f json"
  "- resource class delete CUSTOM_FPGA"
  "- trait create CUSTOM_FAST"
  "trait list --name startswith:CUSTOM_ -f json"
  "trait show CUSTOM_FAST -f json"
  "resource provider trait set $RP --trait CUSTOM_FAST -f json"
  "resource provider trait list $RP -f json"
  "resource provider list --required CUSTOM_FAST -f json"
  "resource provider aggregate set $CHILD --aggregate $AGG -f json"
  "resource provider aggregate list $CHILD -f json"
  "resource provider list --member-of $AGG -f json"
  "resource provider allocation set $CONSUMER --allocation rp=$RP,VCPU=2,MEMORY_MB=1024 --project-id $PROJECT --user-id $USER -f json"
  "resource provider allocation show $CONSUMER -f json"
  "resource provider allocation show $CONSUMER -c project_id -c resources -f json"
  "resource provider usage show $RP -f json"
  "resource usage show $PROJECT --user-id $USER -f json"
  "resource provider show $RP --allocations -f json"
  "allocation candidate list --resource VCPU=4 -f json"
  "allocation candidate list --resource VCPU=4 --limit 1 -f json"
  "allocation candidate list --group 1 --resource VCPU=1 --group 2 --resource MEMORY_MB=512 -f json"
  "resource provider allocation unset $CONSUMER --resource-class MEMORY_MB -f json"
  "- resource provider allocation delete $CONSUMER"
  "- resource provider trait delete $RP"
  "- trait delete CUSTOM_FAST"
  "- resource class delete CUSTOM_GPU"
  "- resource provider inventory delete $RP --resource-class DISK_GB"
  "- resource provider inventory delete $RP"
  "- resource provider delete $CHILD"
  "- resource provider delete $RP"
  "resource provider list -f json"
)
passed=0 failed=0
fail() { echo "DIFFERS: $*"; failed=$((failed + 1)); }
n=0
for line in "${commands[@]}"; do
  n=$((n + 1))
  quiet=
  [[ $line == "- "* ]] && { quiet=1; line=${line#- }; }
  read -ra argv <<<"$line"
  up=$(pl "$upstream_url" "${argv[@]}" 2>"$out/$n.upstream.err"); up_status=$?
  ours=$(pl "$ours_url" "${argv[@]}" 2>"$out/$n.ours.err"); ours_status=$?
  printf '%s\n' "$up" >"$out/$n.upstream.json"; printf '%s\n' "$ours" >"$out/$n.ours.json"
  if [ "$up_status" != 0 ] || [ "$ours_status" != 0 ]; then
    fail "placement $line: exit $up_status on upstream ($(cat "$out/$n.upstream.err")), $ours_status on placement-api ($(cat "$out/$n.ours.err"))"
  elif [ -n "$quiet" ]; then
    if [ -z "$up$ours" ]; then passed=$((passed + 1)); else fail "placement $line printed: $up / $ours"; fi
  elif same "$up" "$ours"; then
    passed=$((passed + 1))
  else
    fail "placement $line"; echo "    upstream: $up"; echo "    placement-api: $ours"
  fi
done
echo "placement against upstream and placement-api: $passed commands the same, $failed differ"

if [ -n "$keystone" ]; then
  # osc takes the endpoint from the catalog whatever clouds.yaml's
  # placement_endpoint_override says, so it cannot be pointed at each
  # server here; the comparison with it runs without --keystone.
  echo "placement-cli: $passed passed, $failed failed (behind Keystone)"
  [ "$failed" = 0 ]
  exit
fi

# osc-placement beside it: the same command line, -f json, on both servers.
for url in "$upstream_url" "$ours_url"; do
  pl "$url" resource provider create compute1 --uuid "$RP" -f value >/dev/null \
    && pl "$url" resource provider inventory set "$RP" --resource VCPU=8 --resource MEMORY_MB=2048 -f value >/dev/null \
    && pl "$url" trait create CUSTOM_FAST \
    && pl "$url" resource provider trait set "$RP" --trait CUSTOM_FAST -f value >/dev/null \
    && pl "$url" resource provider allocation set "$CONSUMER" --allocation "rp=$RP,VCPU=2" \
         --project-id "$PROJECT" --user-id "$USER" -f value >/dev/null \
    || { echo "placement-cli.sh: cannot set up $url"; exit 1; }
done
# VERSION|ARGUMENTS (without a version osc-placement 4.9.1 sends 1.29 or
# the server's maximum, and placement the lowest it needs: both are given)
osc_cases=(
  "1.0|resource provider list"
  "1.29|resource provider list"
  "1.0|resource provider show $RP"
  "1.0|resource provider inventory list $RP"
  "1.0|resource provider usage show $RP"
  "1.0|resource provider allocation show $CONSUMER"
  "1.14|resource provider list --in-tree $RP"
  "1.6|trait list --name startswith:CUSTOM_"
  "1.12|resource provider allocation show $CONSUMER"
  "1.17|allocation candidate list --resource VCPU=1"
)
osc_passed=0
for url in "$upstream_url" "$ours_url"; do
  for case in "${osc_cases[@]}"; do
    IFS='|' read -r version args <<<"$case"
    read -ra argv <<<"$args"
    v=(--os-placement-api-version "$version")
    theirs=$(osc "$url" "${v[@]}" "${argv[@]}" -f json 2>&1)
    ours=$(pl "$url" "${v[@]}" "${argv[@]}" -f json 2>&1)
    if same "$theirs" "$ours"; then
      osc_passed=$((osc_passed + 1))
    else
      fail "openstack ${v[*]} $args -f json ($url)"; echo "    openstack: $theirs"; echo "    placement: $ours"
    fi
  done
done
echo "placement beside openstack (osc-placement): $osc_passed outputs the same"
echo "placement-cli: $((passed + osc_passed)) passed, $failed failed"
[ "$failed" = 0 ]
