#!/usr/bin/env bash
# placement-api behind a real Keystone, side by side with upstream
# Placement 16.0.0 behind keystonemiddleware 13.0.1, on the same Keystone:
#
#  1. the policy matrix (scripts/keystone_matrix.py) with real tokens of
#     each role and scope, in the legacy and the secure policy modes:
#     every status equal to upstream's, and the 401's WWW-Authenticate;
#  2. forged identity headers (X-Roles: admin, OpenStack-System-Scope:
#     all, ...) from a reader or member change nothing on placement-api;
#  3. a revoked token is refused once token_cache_time (2 s here) passed;
#  4. Keystone stopped: a new token gets 503 within http_connect_timeout
#     (3 s here), on both; Keystone started again: placement-api serves it
#     without a restart;
#  5. the real `openstack` client (scripts/requirements/osc.txt), with
#     password auth and the endpoint from the catalog (OS_AUTH_URL, ...),
#     creates and lists providers on placement-api; a reader is refused;
#  6. placement-api authenticates with an application credential of the
#     service user (auth_type v3applicationcredential, written under its
#     old name auth_plugin) and serves a user's token;
#  7. placement-api refuses to start with a wrong service password or a
#     region the catalog lacks, naming the cause;
#  and after each matrix, the request log lines of both services are the
#  same (but time, pid, request id, body length), and the token cache
#  metrics of placement-api show hits and misses.
#
# Usage: scripts/keystone-placement.sh --keystone-port P [--binary PATH]
#        [--ports FIRST-LAST]
#        scripts/keystone-placement.sh --print-config
#   (prints a placement.conf for placement-api on the running Keystone)
# Keystone must run on P (scripts/keystone.sh start --port P) with its
# variables in the environment (eval "$(scripts/keystone.sh start ...)");
# step 4 stops and starts it there.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
. scripts/lib.sh

binary='' ports='' keystone_port='' print_config=''
while [ $# -gt 0 ]; do
  case $1 in
    --print-config) print_config=1; shift ;;
    --binary) binary=$2; shift 2 ;;
    --ports) ports=$2; shift 2 ;;
    --keystone-port) keystone_port=$2; shift 2 ;;
    *) echo "keystone-placement.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -n "${KEYSTONE_URL:-}" ] || { echo "keystone-placement.sh: KEYSTONE_URL is not set; eval \"\$(scripts/keystone.sh start)\" first" >&2; exit 2; }
identity=${KEYSTONE_URL%/}
identity=${identity%/v3}

if [ -n "$print_config" ]; then
  keystone_authtoken_section
  exit 0
fi
[ -n "$keystone_port" ] || { echo "keystone-placement.sh: --keystone-port is required" >&2; exit 2; }

scratch keystone-placement
failed=0
fail() { echo "FAIL: $*" >&2; failed=1; }

venv=$(pinned_venv scripts/requirements/upstream.txt) || { echo "keystone-placement.sh: cannot make the upstream virtualenv" >&2; exit 1; }
if [ -z "$binary" ]; then
  cargo build --quiet -p placement --bin placement-api || exit 1
  binary=${CARGO_TARGET_DIR:-$root/target}/debug/placement-api
fi
matrix() { "$venv/bin/python" scripts/keystone_matrix.py "$@"; }

# conf DIR DATABASE NEW_DEFAULTS: a placement.conf for either
# service; both read the same keys.
conf() {
  mkdir -p "$1"
  {
    printf '[DEFAULT]\nlog_file = %s/app.log\n[placement_database]\nconnection = %s\n' "$1" "$2"
    printf '[oslo_policy]\nenforce_new_defaults = %s\nenforce_scope = true\n' "$3"
    keystone_authtoken_section
    printf 'region_name = RegionOne\ntoken_cache_time = 2\nhttp_connect_timeout = 3\n'
  } > "$1/placement.conf"
}

# start_ours NAME NEW_DEFAULTS: sets ours_url and ours_metrics.
start_ours() {
  local dir=$work/$1 port metrics_port
  conf "$dir" "sqlite:///$dir/placement.db" "$2"
  port=$(free_port "$ports") || return 1
  metrics_port=$(free_port "$ports") || return 1
  "$binary" --config-file "$dir/placement.conf" --bind "127.0.0.1:$port" \
    --metrics-bind "127.0.0.1:$metrics_port" >"$dir/out.log" 2>&1 &
  pids+=($!)
  wait_port "$port" $! 60 || { cat "$dir/out.log" >&2; return 1; }
  ours_url=http://127.0.0.1:$port
  ours_metrics=http://127.0.0.1:$metrics_port/metrics
}

# requestlog FILE: the request log lines of FILE without what differs by
# nature (time, pid, request id, body length, the random project ids the
# matrix asks usages of), sorted.
requestlog() {
  sed -nE -e 's/^[0-9-]+ [0-9:.]+ [0-9]+ (INFO placement\.requestlog \[[^ ]+) req-[0-9a-f-]+ (.*) len: [0-9-]+ (microversion: .*)$/\1 REQ \2 len: N \3/' \
    -e 's/project_id=[0-9a-f]{32}/project_id=P/' -e '/^INFO placement\.requestlog/p' "$1" | sort
}

# start_upstream NAME NEW_DEFAULTS: sets upstream_url.
start_upstream() {
  local dir=$work/$1 port
  conf "$dir" "sqlite:///$dir/placement.db" "$2"
  "$venv/bin/placement-manage" --config-file "$dir/placement.conf" db sync >"$dir/sync.log" 2>&1 \
    || { cat "$dir/sync.log" >&2; return 1; }
  port=$(free_port "$ports") || return 1
  OS_PLACEMENT_CONFIG_DIR=$dir "$venv/bin/gunicorn" --bind "127.0.0.1:$port" --workers 1 \
    --no-control-socket placement.wsgi.api:application >"$dir/out.log" 2>&1 &
  pids+=($!)
  wait_port "$port" $! 60 || { cat "$dir/out.log" >&2; return 1; }
  upstream_url=http://127.0.0.1:$port
}

for mode in legacy secure; do
  new_defaults=false
  [ "$mode" = secure ] && new_defaults=true
  start_ours "ours-$mode" "$new_defaults" || { fail "placement-api did not start ($mode)"; continue; }
  start_upstream "upstream-$mode" "$new_defaults" || { fail "upstream did not start ($mode)"; stop_pids; continue; }
  echo "== policy matrix, $mode policy (placement-api $ours_url, upstream $upstream_url)"
  matrix matrix "$ours_url" "$upstream_url" || fail "the $mode policy matrix differs"
  # The same requests went to both: the same request log lines (user,
  # project and domains of each token, status, microversion).
  requestlog "$work/ours-$mode/app.log" > "$work/ours-$mode/requests"
  requestlog "$work/upstream-$mode/app.log" > "$work/upstream-$mode/requests"
  [ -s "$work/ours-$mode/requests" ] || fail "placement-api wrote no request log ($mode)"
  diff "$work/upstream-$mode/requests" "$work/ours-$mode/requests" \
    || fail "the request log lines differ from upstream's ($mode)"
  hits=$(curl -s "$ours_metrics" | sed -n 's/^placement_keystone_token_cache_lookups_total{result="hit"} //p')
  misses=$(curl -s "$ours_metrics" | sed -n 's/^placement_keystone_token_cache_lookups_total{result="miss"} //p')
  echo "  token cache: $hits hits, $misses misses"
  [ "${hits:-0}" -gt 0 ] && [ "${misses:-0}" -gt 0 ] || fail "the token cache metrics show no hits or no misses ($mode)"
  if [ "$mode" = secure ]; then
    echo "== forged identity headers"
    matrix spoof "$ours_url" "$upstream_url" || fail "forged headers changed an answer"
    echo "== revoked token"
    matrix revoke "$ours_url" 2 || fail "a revoked token was still accepted"
    matrix revoke "$upstream_url" 2 || fail "upstream accepted a revoked token"
    echo "== Keystone stopped and started again"
    fresh=$(matrix token) || fail "no token for the outage test"
    bash scripts/keystone.sh stop --port "$keystone_port"
    for target in "ours $ours_url" "upstream $upstream_url"; do
      set -- $target
      read -r code seconds _ < <(matrix status "$2" "$fresh")
      echo "  $1 with Keystone down: $code in ${seconds}s"
      [ "$code" = 503 ] || fail "$1 answered $code with Keystone down, expected 503"
    done
    awk -v s="$seconds" 'BEGIN { exit !(s < 30) }' || fail "upstream took ${seconds}s to answer 503"
    bash scripts/keystone.sh start --port "$keystone_port" >/dev/null \
      || { fail "Keystone did not start again"; stop_pids; break; }
    for target in "ours $ours_url" "upstream $upstream_url"; do
      set -- $target
      read -r code seconds _ < <(matrix status "$2" "$fresh")
      echo "  $1 with Keystone back: $code"
      [ "$code" = 200 ] || fail "$1 answered $code after Keystone came back, expected 200"
    done
  fi
  stop_pids
done

echo "== the openstack client through the catalog"
osc_venv=$(pinned_venv scripts/requirements/osc.txt) || { echo "keystone-placement.sh: cannot make the client's virtualenv" >&2; exit 1; }
if start_ours osc true; then
  bash scripts/keystone.sh endpoint --port "$keystone_port" placement placement "$ours_url" 2>/dev/null \
    || fail "could not put placement-api in the catalog"
  # osc WHO PASSWORD PROJECT ARGS...: openstack with password auth only.
  osc() {
    env -i PATH="$PATH" HOME="$work" OS_AUTH_URL="$identity/v3" OS_IDENTITY_API_VERSION=3 \
      OS_USERNAME="$1" OS_PASSWORD="$2" OS_PROJECT_NAME="$3" OS_USER_DOMAIN_NAME=Default \
      OS_PROJECT_DOMAIN_NAME=Default OS_REGION_NAME=RegionOne OS_INTERFACE=public \
      "$osc_venv/bin/openstack" "${@:4}"
  }
  admin=("$KEYSTONE_ADMIN_USER" "$KEYSTONE_ADMIN_PASSWORD" "$KEYSTONE_ADMIN_PROJECT")
  created=$(osc "${admin[@]}" --os-placement-api-version 1.39 resource provider create osc-compute1 -f value -c uuid 2>&1)
  echo "  created: $created"
  [[ $created =~ ^[0-9a-f-]{36}$ ]] || fail "openstack resource provider create: $created"
  listed=$(osc "${admin[@]}" resource provider list -f value -c uuid -c name 2>&1)
  echo "  listed: $listed"
  [ "$listed" = "$created osc-compute1" ] || fail "openstack resource provider list: $listed"
  refused=$(osc "$KEYSTONE_READER_USER" "$KEYSTONE_READER_PASSWORD" "$KEYSTONE_DEMO_PROJECT" resource provider list 2>&1)
  code=$?
  echo "  a reader: exit $code: $refused"
  [ "$code" = 1 ] && [[ $refused == *"Policy does not allow placement:resource_providers:list to be performed. (HTTP 403)"* ]] \
    || fail "a reader listing providers: exit $code: $refused"
  stop_pids
else
  fail "placement-api did not start for the client"
fi

echo "== the service user's application credential, under keystonemiddleware's old key names"
# The service user makes an application credential of its own (Keystone's
# default policy lets a user do so with a project-scoped token); ours
# authenticates with it (auth_plugin, auth_type's old name, says
# v3applicationcredential) and serves a user's token.
service_scope=$(printf '{"project": {"name": "%s", "domain": {"id": "default"}}}' "$KEYSTONE_SERVICE_PROJECT")
if service_token=$(keystone_token "$identity/v3" "$KEYSTONE_SERVICE_USER" "$KEYSTONE_SERVICE_PASSWORD" "$service_scope"); then
  service_user=$(curl -sS -H "X-Auth-Token: $service_token" -H "X-Subject-Token: $service_token" \
    "$identity/v3/auth/tokens?nocatalog" | json_field token.user.id)
  credential=$(curl -sS -X POST -H "X-Auth-Token: $service_token" -H 'Content-Type: application/json' \
    -d "{\"application_credential\": {\"name\": \"placement-ci-$$\"}}" \
    "$identity/v3/users/$service_user/application_credentials")
  credential_id=$(echo "$credential" | json_field application_credential.id) \
    || fail "Keystone made no application credential: $credential"
  credential_secret=$(echo "$credential" | json_field application_credential.secret)
  dir=$work/appcred
  conf "$dir" "sqlite:///$dir/placement.db" true
  sed -i -E '/^(auth_type|username|password|project_name|user_domain_name|project_domain_name) = /d' "$dir/placement.conf"
  printf 'auth_plugin = v3applicationcredential\napplication_credential_id = %s\napplication_credential_secret = %s\n' \
    "$credential_id" "$credential_secret" >> "$dir/placement.conf"
  port=$(free_port "$ports") || fail "no free port"
  "$binary" --config-file "$dir/placement.conf" --bind "127.0.0.1:$port" >"$dir/out.log" 2>&1 &
  pids+=($!)
  if wait_port "$port" $! 60; then
    fresh=$(matrix token) || fail "no user token for the application credential test"
    read -r code _ < <(matrix status "http://127.0.0.1:$port" "$fresh")
    echo "  placement-api with an application credential: a user's token gets $code"
    [ "$code" = 200 ] || fail "placement-api with an application credential answered $code, expected 200"
  else
    fail "placement-api did not start with an application credential: $(tail -n 3 "$dir/out.log")"
  fi
  stop_pids
else
  fail "no token of the service user"
fi

echo "== start refused with a wrong password or a region the catalog lacks"
for case in "password = wrong" "region_name = Nowhere"; do
  dir=$work/refused
  rm -rf "$dir"
  conf "$dir" "sqlite:///$dir/placement.db" true
  key=${case%% =*}
  sed -i "/^$key = /d" "$dir/placement.conf"
  echo "$case" >> "$dir/placement.conf"
  port=$(free_port "$ports") || { fail "no free port"; break; }
  timeout 60 "$binary" --config-file "$dir/placement.conf" --bind "127.0.0.1:$port" >"$dir/out.log" 2>&1
  code=$?
  message=$(tail -n 1 "$dir/out.log")
  echo "  $case: exit $code: $message"
  [ "$code" = 1 ] || fail "placement-api with $case exited $code, expected 1"
  case $key in
    password) [[ $message == *"refused the service credentials (401)"* ]] || fail "the wrong password was not named: $message" ;;
    region_name) [[ $message == *"no identity endpoint"* ]] || fail "the missing endpoint was not named: $message" ;;
  esac
done

[ "$failed" = 0 ] && echo "keystone-placement.sh: all passed"
exit "$failed"
