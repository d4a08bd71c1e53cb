#!/usr/bin/env bash
# A real Keystone (30.0.0, scripts/requirements/keystone.txt) on loopback
# for the Keystone tests: Fernet tokens, SQLite, gunicorn on 127.0.0.1,
# in the background.
#
#   scripts/keystone.sh start [--port P] [--token-expiration SECONDS]
#   scripts/keystone.sh stop  [--port P]
#   scripts/keystone.sh env   [--port P]
#   scripts/keystone.sh endpoint [--port P] TYPE NAME URL
#
#   start     starts Keystone (a no-op when it already runs on the port),
#             waits until it answers, and on first use bootstraps it and
#             makes the users below. Prints the variables (export lines)
#             on stdout, everything else on stderr, so
#             `eval "$(scripts/keystone.sh start)"` works.
#   stop      stops it. Its data stays: the next start serves the same
#             users, projects and keys, so tokens issued before stay valid.
#   env       prints the variables of a running Keystone.
#   endpoint  puts a service in the catalog: TYPE (placement, ...), NAME,
#             and URL for the public, internal and admin interfaces of
#             RegionOne. Run again, it updates the URL.
#
#   --port              listen on 127.0.0.1:P (default 35357, or
#                       MV_KEYSTONE_PORT).
#   --token-expiration  lifetime of new tokens in seconds (default 3600).
#
# Data, configuration and logs are in MV_KEYSTONE_DIR (default
# ${TMPDIR:-/tmp}/microversion-keystone-P); remove it (after stop) to start
# afresh. The log is keystone.log there; its path is printed on failure.
# MV_KEYSTONE_WORKERS (default 2) sets the gunicorn workers and
# MV_KEYSTONE_TIMEOUT (default 90) the seconds start waits for Keystone.
#
# Users (domain Default), their roles (bootstrap makes admin, manager,
# member, reader and service; admin implies manager, manager implies
# member, member implies reader: tokens list the implied roles too)
# and the variables that name them, written to keystone.env in the data
# directory (its path is in KEYSTONE_ENV):
#   KEYSTONE_URL               http://127.0.0.1:P/v3 (the catalog's
#                              identity endpoint is http://127.0.0.1:P)
#   KEYSTONE_REGION            RegionOne
#   KEYSTONE_ADMIN_USER        admin: admin on project admin
#   KEYSTONE_SERVICE_USER      placement: service on project service (what
#                              a service's keystone_authtoken user needs to
#                              validate tokens)
#   KEYSTONE_MEMBER_USER       demo-member: member on project demo
#   KEYSTONE_READER_USER       demo-reader: reader on project demo
#   KEYSTONE_SYSTEM_READER_USER  system-reader: reader on the system (all)
# and for each of ADMIN SERVICE MEMBER READER SYSTEM_READER:
# KEYSTONE_<WHO>_PASSWORD and KEYSTONE_<WHO>_USER_ID; the projects'
# KEYSTONE_{ADMIN,SERVICE,DEMO}_PROJECT (names) and ..._PROJECT_ID. The
# passwords are made at random on first start.
#
# Exit status: 0 on success, 1 on failure, 2 on bad usage.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

usage() { echo "keystone.sh: $1 (see --help)" >&2; exit 2; }
cmd=${1:-}
case $cmd in
  start|stop|env|endpoint) shift ;;
  -h|--help) sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
  '') usage "a command is needed: start, stop, env or endpoint" ;;
  *) usage "unknown command $cmd" ;;
esac
port=${MV_KEYSTONE_PORT:-35357} expiration=3600 args=()
while [ $# -gt 0 ]; do
  case $1 in
    --port) [ $# -ge 2 ] || usage "--port needs a value"; port=$2; shift 2 ;;
    --token-expiration) [ $# -ge 2 ] || usage "--token-expiration needs a value"; expiration=$2; shift 2 ;;
    -*) usage "unknown option $1" ;;
    *) args+=("$1"); shift ;;
  esac
done
[[ $port =~ ^[0-9]+$ ]] && [ "$port" -ge 1 ] && [ "$port" -le 65535 ] || usage "--port is a number from 1 to 65535"
[[ $expiration =~ ^[0-9]+$ ]] && [ "$expiration" -ge 1 ] || usage "--token-expiration is a positive number of seconds"
if [ "$cmd" = endpoint ]; then
  [ "${#args[@]}" -eq 3 ] || usage "endpoint takes TYPE NAME URL"
elif [ "${#args[@]}" -gt 0 ]; then
  usage "unexpected argument ${args[0]}"
fi

dir=${MV_KEYSTONE_DIR:-${TMPDIR:-/tmp}/microversion-keystone-$port}
url=http://127.0.0.1:$port
log=$dir/keystone.log pidfile=$dir/keystone.pid envfile=$dir/keystone.env
timeout=${MV_KEYSTONE_TIMEOUT:-90} workers=${MV_KEYSTONE_WORKERS:-2}
[[ $timeout =~ ^[0-9]+$ ]] && [ "$timeout" -ge 1 ] || usage "MV_KEYSTONE_TIMEOUT is a positive number of seconds"
[[ $workers =~ ^[0-9]+$ ]] && [ "$workers" -ge 1 ] || usage "MV_KEYSTONE_WORKERS is a positive number"

# running: the gunicorn master of the pid file is alive.
running() {
  local pid
  pid=$(cat "$pidfile" 2>/dev/null) || return 1
  [[ $pid =~ ^[0-9]+$ ]] && ps -p "$pid" -o args= 2>/dev/null | grep -q gunicorn
}

# failed MESSAGE: says what failed and where the log is, with its end.
failed() {
  echo "keystone.sh: $1 (log: $log)" >&2
  [ -f "$log" ] && tail -n 20 "$log" | sed 's/^/  | /' >&2
  exit 1
}

# print_env: the variables, from the file bootstrap wrote.
print_env() {
  cat "$envfile"
  echo "export KEYSTONE_ENV=$envfile"
}

# stop_keystone: TERM to the master, then KILL after 20 s.
stop_keystone() {
  local pid i
  running || { rm -f "$pidfile"; return 0; }
  pid=$(cat "$pidfile")
  kill "$pid" 2>/dev/null || true
  for i in $(seq 1 200); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    echo "keystone.sh: Keystone (pid $pid) did not stop in 20 s; killing it" >&2
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$pidfile"
}

# api METHOD PATH [BODY]: Keystone's API with the admin token $token;
# prints the answer's body, fails unless it is a 2xx.
api() {
  local out status
  out=$(curl -sS --max-time 30 -X "$1" -H "X-Auth-Token: $token" \
    -H 'Content-Type: application/json' ${3:+--data "$3"} -w '\n%{http_code}' "$url/v3$2") \
    || { echo "keystone.sh: $1 $2: no answer" >&2; return 1; }
  status=${out##*$'\n'} out=${out%$'\n'*}
  case $status in
    2??) printf '%s\n' "$out" ;;
    *) echo "keystone.sh: $1 $2 answered $status: $out" >&2; return 1 ;;
  esac
}

# admin_token PASSWORD: sets token, a token of the admin user on project
# admin.
admin_token() {
  token=$(keystone_token "$url/v3" admin "$1" '{"project": {"name": "admin", "domain": {"id": "default"}}}')
}

# ensure_endpoint SERVICE_ID INTERFACE URL: one endpoint of the service for
# the interface in RegionOne, at URL.
ensure_endpoint() {
  local found
  found=$(api GET "/endpoints?service_id=$1&interface=$2&region_id=RegionOne" \
    | python3 -c 'import json, sys; e = json.load(sys.stdin)["endpoints"]; print(e[0]["id"] if e else "")') || return 1
  if [ -n "$found" ]; then
    api PATCH "/endpoints/$found" "{\"endpoint\": {\"url\": \"$3\"}}" >/dev/null
  else
    api POST /endpoints "{\"endpoint\": {\"service_id\": \"$1\", \"interface\": \"$2\", \"url\": \"$3\", \"region_id\": \"RegionOne\"}}" >/dev/null
  fi
}

case $cmd in
  stop)
    stop_keystone
    echo "keystone.sh: Keystone on port $port stopped" >&2
    exit 0 ;;
  env)
    running && [ -f "$dir/.done" ] || { echo "keystone.sh: no Keystone runs on port $port" >&2; exit 1; }
    print_env
    exit 0 ;;
  endpoint)
    running && [ -f "$dir/.done" ] || { echo "keystone.sh: no Keystone runs on port $port" >&2; exit 1; }
    . "$envfile"
    admin_token "$KEYSTONE_ADMIN_PASSWORD" || failed "no token for the admin user"
    type=${args[0]} name=${args[1]} endpoint_url=${args[2]}
    [[ $type =~ ^[A-Za-z0-9_-]+$ ]] || usage "TYPE is letters, digits, - and _"
    [[ $name =~ ^[A-Za-z0-9_-]+$ ]] || usage "NAME is letters, digits, - and _"
    [[ $endpoint_url =~ ^https?://[^\"\\[:space:]]+$ ]] || usage "URL is an http or https URL"
    service=$(api GET "/services?type=$type" \
      | python3 -c 'import json, sys; print(next((s["id"] for s in json.load(sys.stdin)["services"] if s["name"] == sys.argv[1]), ""))' "$name") \
      || failed "could not list the services"
    [ -n "$service" ] || service=$(api POST /services "{\"service\": {\"type\": \"$type\", \"name\": \"$name\"}}" | json_field service.id) \
      || failed "could not make the service"
    for interface in public internal admin; do
      ensure_endpoint "$service" "$interface" "$endpoint_url" || failed "could not set the $interface endpoint"
    done
    echo "keystone.sh: catalog: $type ($name) at $endpoint_url, RegionOne, public/internal/admin" >&2
    exit 0 ;;
esac

# start
mkdir -p "$(dirname "$dir")"
exec 9>"$dir.lock"
flock -w "$timeout" 9 || failed "another keystone.sh holds $dir.lock"
if running; then
  [ -f "$dir/.done" ] || failed "a Keystone (pid $(cat "$pidfile")) runs on port $port but was never set up; stop it first"
  echo "keystone.sh: Keystone already runs on port $port (pid $(cat "$pidfile"))" >&2
  print_env
  exit 0
fi
port_open "$port" && failed "port $port is taken by another program"
venv=$(pinned_venv scripts/requirements/keystone.txt) || failed "could not make the Keystone virtualenv"

if [ ! -f "$dir/.done" ]; then
  # Begins afresh, but never removes a directory this script did not make.
  if [ -d "$dir" ] && [ -n "$(ls -A "$dir")" ] && [ ! -f "$dir/.keystone-sh" ]; then
    failed "$dir is not empty and not a data directory of keystone.sh"
  fi
  rm -rf "$dir"
  mkdir -p "$dir"
  touch "$dir/.keystone-sh"
fi
# Written at every start, so that --token-expiration applies.
cat > "$dir/keystone.conf" <<EOF
[DEFAULT]
use_stderr = true
[database]
connection = sqlite:///$dir/keystone.db
[token]
provider = fernet
expiration = $expiration
[fernet_tokens]
key_repository = $dir/fernet-keys/
[credential]
key_repository = $dir/credential-keys/
EOF
# Keystone's app parses sys.argv with oslo.config, so gunicorn takes no
# arguments: it reads ./gunicorn.conf.py.
cat > "$dir/gunicorn.conf.py" <<EOF
wsgi_app = "keystone.wsgi.api:application"
bind = "127.0.0.1:$port"
workers = $workers
control_socket_disable = True
raw_env = ["OS_KEYSTONE_CONFIG_FILES=$dir/keystone.conf"]
EOF

if [ ! -f "$dir/.done" ]; then
  admin_password=$(random_password)
  manage=("$venv/bin/keystone-manage" --config-file "$dir/keystone.conf")
  owner=(--keystone-user "$(id -un)" --keystone-group "$(id -gn)")
  echo "keystone.sh: setting up Keystone in $dir" >&2
  {
    "${manage[@]}" db_sync &&
    "${manage[@]}" fernet_setup "${owner[@]}" &&
    "${manage[@]}" credential_setup "${owner[@]}" &&
    OS_BOOTSTRAP_PASSWORD=$admin_password "${manage[@]}" bootstrap \
      --bootstrap-admin-url "$url" --bootstrap-internal-url "$url" \
      --bootstrap-public-url "$url" --bootstrap-region-id RegionOne
  } >>"$log" 2>&1 || failed "keystone-manage failed"
fi

(cd "$dir" && exec setsid "$venv/bin/gunicorn" >>"$log" 2>&1 </dev/null 9>&-) &
pid=$!
echo "$pid" > "$pidfile"
waited=0
until curl -s -o /dev/null --max-time 2 -f "$url/v3"; do
  kill -0 "$pid" 2>/dev/null || { rm -f "$pidfile"; failed "Keystone exited at start"; }
  [ "$waited" -lt $((timeout * 5)) ] || { stop_keystone; failed "Keystone did not answer on $url/v3 in $timeout s"; }
  sleep 0.2
  waited=$((waited + 1))
done

if [ ! -f "$dir/.done" ]; then
  setup() {
    admin_token "$admin_password" || return 1
    local admin_project service_project demo_project
    declare -A roles
    for role in admin member reader service; do
      roles[$role]=$(api GET "/roles?name=$role" | json_field roles.0.id) || return 1
    done
    admin_project=$(api GET "/projects?name=admin" | json_field projects.0.id) || return 1
    service_project=$(api POST /projects '{"project": {"name": "service", "domain_id": "default"}}' | json_field project.id) || return 1
    demo_project=$(api POST /projects '{"project": {"name": "demo", "domain_id": "default"}}' | json_field project.id) || return 1
    admin_id=$(api GET "/users?name=admin" | json_field users.0.id) || return 1
    # user NAME: makes the user with a random password; sets id, password.
    user() {
      password=$(random_password)
      id=$(api POST /users "{\"user\": {\"name\": \"$1\", \"domain_id\": \"default\", \"password\": \"$password\"}}" | json_field user.id)
    }
    user placement && service_id=$id service_password=$password || return 1
    api PUT "/projects/$service_project/users/$service_id/roles/${roles[service]}" >/dev/null || return 1
    user demo-member && member_id=$id member_password=$password || return 1
    api PUT "/projects/$demo_project/users/$member_id/roles/${roles[member]}" >/dev/null || return 1
    user demo-reader && reader_id=$id reader_password=$password || return 1
    api PUT "/projects/$demo_project/users/$reader_id/roles/${roles[reader]}" >/dev/null || return 1
    user system-reader && system_reader_id=$id system_reader_password=$password || return 1
    api PUT "/system/users/$system_reader_id/roles/${roles[reader]}" >/dev/null || return 1
    cat > "$envfile" <<EOF
export KEYSTONE_URL=$url/v3
export KEYSTONE_REGION=RegionOne
export KEYSTONE_ADMIN_USER=admin
export KEYSTONE_ADMIN_USER_ID=$admin_id
export KEYSTONE_ADMIN_PASSWORD=$admin_password
export KEYSTONE_ADMIN_PROJECT=admin
export KEYSTONE_ADMIN_PROJECT_ID=$admin_project
export KEYSTONE_SERVICE_USER=placement
export KEYSTONE_SERVICE_USER_ID=$service_id
export KEYSTONE_SERVICE_PASSWORD=$service_password
export KEYSTONE_SERVICE_PROJECT=service
export KEYSTONE_SERVICE_PROJECT_ID=$service_project
export KEYSTONE_DEMO_PROJECT=demo
export KEYSTONE_DEMO_PROJECT_ID=$demo_project
export KEYSTONE_MEMBER_USER=demo-member
export KEYSTONE_MEMBER_USER_ID=$member_id
export KEYSTONE_MEMBER_PASSWORD=$member_password
export KEYSTONE_READER_USER=demo-reader
export KEYSTONE_READER_USER_ID=$reader_id
export KEYSTONE_READER_PASSWORD=$reader_password
export KEYSTONE_SYSTEM_READER_USER=system-reader
export KEYSTONE_SYSTEM_READER_USER_ID=$system_reader_id
export KEYSTONE_SYSTEM_READER_PASSWORD=$system_reader_password
EOF
  }
  setup && chmod 600 "$envfile" || { stop_keystone; failed "could not make the projects and users (the next start begins afresh)"; }
  touch "$dir/.done"
fi
echo "keystone.sh: Keystone on $url/v3 (pid $pid; variables: . $envfile)" >&2
print_env
