#!/usr/bin/env bash
# Checks scripts/keystone.sh end to end, with curl against the real
# Keystone, on a fresh data directory that is removed afterwards: every
# user gets a token of its scope, the service user validates them (roles
# with the implied ones: a member is also a reader), Keystone's validation
# policy and answers are those keystonemiddleware relies on (403 for a
# plain reader, 404 for an unknown or revoked token, ?nocatalog), the
# catalog entry command, the idempotent start, and a restart that keeps
# the tokens valid and applies --token-expiration.
#
#   scripts/keystone-check.sh [--port P]   (default: a port the system picks)
#
# Prints one line per check and the time each start took. Exit status: 0
# when every check passed, 1 otherwise, 2 on bad usage.
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

port=
while [ $# -gt 0 ]; do
  case $1 in
    --port) [ $# -ge 2 ] || { echo "keystone-check.sh: --port needs a value" >&2; exit 2; }; port=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "keystone-check.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
[ -n "$port" ] || port=$(free_port)
MV_KEYSTONE_DIR=$(mktemp -d "${TMPDIR:-/tmp}/keystone-check.XXXXXX")
export MV_KEYSTONE_DIR
trap 'bash scripts/keystone.sh stop --port "$port" 2>/dev/null; rm -rf "$MV_KEYSTONE_DIR" "$MV_KEYSTONE_DIR.lock"' EXIT

failures=0
ok() { echo "ok    $1"; }
fail() { echo "FAIL  $1${2:+: $2}"; failures=$((failures + 1)); }

# start_keystone LABEL [ARGS...]: keystone.sh start, timed; loads the variables.
start_keystone() {
  local label=$1 t0 t1 out
  shift
  t0=$(date +%s.%N)
  if ! out=$(bash scripts/keystone.sh start --port "$port" "$@"); then
    fail "$label" "keystone.sh start failed"
    echo "$failures check(s) failed"
    exit 1
  fi
  t1=$(date +%s.%N)
  eval "$out"
  ok "$label ($(python3 -c "print('%.1f' % ($t1 - $t0))") s)"
}

# validate AUTH_TOKEN SUBJECT_TOKEN [QUERY]: GET /v3/auth/tokens; sets
# status and body.
validate() {
  local out
  out=$(curl -sS --max-time 30 -H "X-Auth-Token: $1" -H "X-Subject-Token: $2" \
    -w '\n%{http_code}' "$KEYSTONE_URL/auth/tokens${3:-}") || out=$'\n000'
  status=${out##*$'\n'} body=${out%$'\n'*}
}

# body_has EXPR: the Python expression is true of the last body (t: its
# "token" object, env: the environment).
body_has() {
  printf '%s' "$body" | python3 -c '
import json, os, sys
try:
    t = json.load(sys.stdin).get("token", {})
    sys.exit(0 if eval(sys.argv[1], {"t": t, "env": os.environ}) else 1)
except Exception:
    sys.exit(1)
' "$1"
}

# expect_valid LABEL SUBJECT_TOKEN EXPR: the service user validates the
# token (200) and the body satisfies EXPR.
expect_valid() {
  validate "$service_token" "$2"
  if [ "$status" != 200 ]; then fail "$1" "validation answered $status"
  elif ! body_has "$3"; then fail "$1" "unexpected token: $body"
  else ok "$1"; fi
}

# expect_status LABEL WANT AUTH SUBJECT: validation answers WANT.
expect_status() {
  validate "$3" "$4"
  if [ "$status" = "$2" ]; then ok "$1"; else fail "$1" "validation answered $status, not $2"; fi
}

roles='sorted(r["name"] for r in t["roles"])'
# scope PROJECT: the scope of a token on the project (domain Default).
scope() { printf '{"project": {"name": "%s", "domain": {"id": "default"}}}' "$1"; }

start_keystone "first start on port $port"
started_env=$(bash scripts/keystone.sh env --port "$port")

token() {  # token VAR USER PASSWORD SCOPE
  local value
  if value=$(keystone_token "$KEYSTONE_URL" "$2" "$3" "$4"); then
    printf -v "$1" '%s' "$value"; ok "token of $2"
  else
    printf -v "$1" '%s' invalid; fail "token of $2"
  fi
}
token admin_token "$KEYSTONE_ADMIN_USER" "$KEYSTONE_ADMIN_PASSWORD" "$(scope admin)"
token service_token "$KEYSTONE_SERVICE_USER" "$KEYSTONE_SERVICE_PASSWORD" "$(scope service)"
token member_token "$KEYSTONE_MEMBER_USER" "$KEYSTONE_MEMBER_PASSWORD" "$(scope demo)"
token reader_token "$KEYSTONE_READER_USER" "$KEYSTONE_READER_PASSWORD" "$(scope demo)"
token system_token "$KEYSTONE_SYSTEM_READER_USER" "$KEYSTONE_SYSTEM_READER_PASSWORD" '{"system": {"all": true}}'

expect_valid "admin's token: admin and the implied manager, member, reader" "$admin_token" \
  "$roles == ['admin', 'manager', 'member', 'reader'] and t['project']['id'] == env['KEYSTONE_ADMIN_PROJECT_ID'] and t['user']['id'] == env['KEYSTONE_ADMIN_USER_ID']"
expect_valid "service user's token: service on project service" "$service_token" \
  "$roles == ['service'] and t['project']['id'] == env['KEYSTONE_SERVICE_PROJECT_ID'] and t['user']['id'] == env['KEYSTONE_SERVICE_USER_ID']"
expect_valid "member's token: member and the implied reader on project demo" "$member_token" \
  "$roles == ['member', 'reader'] and t['project']['id'] == env['KEYSTONE_DEMO_PROJECT_ID'] and t['user']['id'] == env['KEYSTONE_MEMBER_USER_ID']"
expect_valid "reader's token: reader only on project demo" "$reader_token" \
  "$roles == ['reader'] and t['project']['id'] == env['KEYSTONE_DEMO_PROJECT_ID'] and t['user']['id'] == env['KEYSTONE_READER_USER_ID']"
expect_valid "system reader's token: reader on the system, no project" "$system_token" \
  "$roles == ['reader'] and t['system'] == {'all': True} and 'project' not in t and t['user']['id'] == env['KEYSTONE_SYSTEM_READER_USER_ID']"
expect_valid "validation with the catalog lists the identity endpoint" "$member_token" \
  "any(s['type'] == 'identity' and {e['interface'] for e in s['endpoints']} == {'public', 'internal', 'admin'} for s in t['catalog'])"
validate "$service_token" "$member_token" '?nocatalog'
if [ "$status" = 200 ] && body_has "'catalog' not in t and 'member' in $roles"; then
  ok "?nocatalog leaves the catalog out"
else
  fail "?nocatalog leaves the catalog out" "$status $body"
fi

expect_status "a system reader may validate a member's token" 200 "$system_token" "$member_token"
expect_status "a member may validate its own token" 200 "$member_token" "$member_token"
expect_status "a reader of the project may not validate a member's token" 403 "$reader_token" "$member_token"
expect_status "an unknown token is 404" 404 "$service_token" "gAAAAABnot-a-real-token"
expect_status "a validation with an unknown token of its own is 401" 401 "gAAAAABnot-a-real-token" "$member_token"

revoked=$(keystone_token "$KEYSTONE_URL" "$KEYSTONE_MEMBER_USER" "$KEYSTONE_MEMBER_PASSWORD" "$(scope demo)") || revoked=invalid
revoke_status=$(curl -s -o /dev/null -w '%{http_code}' --max-time 30 -X DELETE \
  -H "X-Auth-Token: $revoked" -H "X-Subject-Token: $revoked" "$KEYSTONE_URL/auth/tokens")
if [ "$revoke_status" = 204 ]; then ok "a member revokes its token"; else fail "a member revokes its token" "DELETE answered $revoke_status"; fi
expect_status "a revoked token is 404" 404 "$service_token" "$revoked"

if bash scripts/keystone.sh endpoint --port "$port" placement placement "http://127.0.0.1:1/first" \
  && bash scripts/keystone.sh endpoint --port "$port" placement placement "http://127.0.0.1:1/placement"; then
  ok "endpoint command, twice"
else
  fail "endpoint command, twice"
fi
catalog_token=$(keystone_token "$KEYSTONE_URL" "$KEYSTONE_MEMBER_USER" "$KEYSTONE_MEMBER_PASSWORD" "$(scope demo)") || catalog_token=invalid
expect_valid "the catalog has placement once per interface, at the second URL" "$catalog_token" \
  "sorted((e['interface'], e['region_id'], e['url']) for s in t['catalog'] if s['type'] == 'placement' and s['name'] == 'placement' for e in s['endpoints']) == [(i, 'RegionOne', 'http://127.0.0.1:1/placement') for i in ('admin', 'internal', 'public')]"

if out=$(bash scripts/keystone.sh start --port "$port" 2>&1 >/dev/null) && [[ $out == *"already runs"* ]] \
  && [ "$(bash scripts/keystone.sh start --port "$port" 2>/dev/null)" = "$started_env" ]; then
  ok "a second start says Keystone runs and prints the same variables"
else
  fail "a second start says Keystone runs and prints the same variables" "$out"
fi

bash scripts/keystone.sh stop --port "$port" 2>/dev/null
if port_open "$port"; then fail "stop closes the port"; else ok "stop closes the port"; fi
if bash scripts/keystone.sh env --port "$port" >/dev/null 2>&1; then fail "env fails once stopped"; else ok "env fails once stopped"; fi

start_keystone "start again on the same data" --token-expiration 600
expect_valid "tokens issued before the restart stay valid" "$member_token" \
  "t['user']['id'] == env['KEYSTONE_MEMBER_USER_ID']"
token short_token "$KEYSTONE_READER_USER" "$KEYSTONE_READER_PASSWORD" "$(scope demo)"
expect_valid "--token-expiration sets the lifetime of new tokens" "$short_token" \
  "__import__('datetime').datetime.fromisoformat(t['expires_at'].replace('Z', '+00:00')) - __import__('datetime').datetime.fromisoformat(t['issued_at'].replace('Z', '+00:00')) == __import__('datetime').timedelta(seconds=600)"

bash scripts/keystone.sh stop --port "$port" 2>/dev/null
if [ "$failures" -eq 0 ]; then
  echo "every check passed"
else
  echo "$failures check(s) failed"
  exit 1
fi
