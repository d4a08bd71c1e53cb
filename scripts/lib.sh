# Shared by the scripts here (sourced): pinned Python virtualenvs, waiting
# for a port, fresh databases on PostgreSQL and MySQL.

# Where the virtualenvs live (made once per requirements file content).
MV_CACHE=${MV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/microversion}

# pinned_venv REQUIREMENTS_FILE: prints the path of a virtualenv holding
# exactly the pinned packages of the file (installed with --no-deps, so
# the file must list every dependency). Made on first use.
pinned_venv() {
  local req=$1 sum dir
  sum=$(sha256sum "$req" | cut -c1-12)
  dir=$MV_CACHE/venv-$(basename "$req" .txt)-$sum
  if [ ! -f "$dir/.done" ]; then
    rm -rf "$dir"
    mkdir -p "$MV_CACHE"
    echo "making $dir (pinned: $req)" >&2
    python3 -m venv "$dir" >&2 || return 1
    "$dir/bin/pip" install -q --disable-pip-version-check --no-deps -r "$req" >&2 || return 1
    touch "$dir/.done"
  fi
  echo "$dir"
}

# port_open PORT: something listens on 127.0.0.1:PORT.
port_open() {
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# wait_port PORT PID [SECONDS]: until PORT accepts connections; fails early
# when PID exits.
wait_port() {
  local port=$1 pid=$2 tries=$(( ${3:-30} * 10 ))
  while [ "$tries" -gt 0 ]; do
    port_open "$port" && return 0
    kill -0 "$pid" 2>/dev/null || return 1
    sleep 0.1
    tries=$((tries - 1))
  done
  return 1
}

# upstream_db_sync VENV DIR URL: upstream's `placement-manage db sync` on
# the database URL (its config file written in DIR).
upstream_db_sync() {
  printf '[placement_database]\nconnection = %s\n' "$3" > "$2/sync.conf"
  "$1/bin/placement-manage" --config-file "$2/sync.conf" db sync
}

# start_upstream_placement VENV DIR URL LOG [FIRST-LAST]: upstream
# Placement (gunicorn, one worker, noauth2, the legacy policy) on the
# database URL, its config in DIR/etc, its output in LOG and its own log
# in LOG.app, listening on a free port (of the range when given). Sets
# server_pid and server_port; fails when it does not start listening.
start_upstream_placement() {
  local venv=$1 conf=$2/etc
  mkdir -p "$conf"
  cat > "$conf/placement.conf" <<CONF
[DEFAULT]
log_file = $4.app
[api]
auth_strategy = noauth2
[placement_database]
connection = $3
[oslo_policy]
enforce_new_defaults = false
enforce_scope = false
CONF
  server_port=$(free_port "${5:-}") || return 1
  OS_PLACEMENT_CONFIG_DIR=$conf "$venv/bin/gunicorn" --bind "127.0.0.1:$server_port" --workers 1 \
    --no-control-socket placement.wsgi.api:application >"$4" 2>&1 &
  server_pid=$!
  wait_port "$server_port" "$server_pid" 60
}

# start_placement_api BINARY URL LOG [FIRST-LAST|PORT]: placement-api
# (noauth2, the legacy policy) on the database URL, its output in LOG, listening
# on a free port (of the range when given), or on PORT. Sets server_pid
# and server_port.
start_placement_api() {
  server_pid=
  case ${4:-} in
    *-*|'') server_port=$(free_port "${4:-}") || return 1 ;;
    *) server_port=$4 ;;
  esac
  "$1" --bind "127.0.0.1:$server_port" --database "$2" --policy legacy --auth-strategy noauth2 >"$3" 2>&1 &
  server_pid=$!
  wait_port "$server_port" "$server_pid" 60
}

# The servers the PostgreSQL and MySQL runs use, in upstream's URL forms
# (without a database name). Databases made by these scripts are named
# mvtest_* and dropped after use.
MV_PG_URL=${MV_PG_URL:-postgresql+psycopg2://postgres@127.0.0.1:5432}
MV_MYSQL_URL=${MV_MYSQL_URL:-mysql+pymysql://root@127.0.0.1:3306}

# _mysql_args: mysql client arguments from MV_MYSQL_URL.
_mysql_args() {
  local rest=${MV_MYSQL_URL#*://} cred hostport user pass host port
  if [[ $rest == *@* ]]; then cred=${rest%%@*}; hostport=${rest#*@}; else cred=root; hostport=$rest; fi
  hostport=${hostport%%/*}
  user=${cred%%:*}; pass=; [[ $cred == *:* ]] && pass=${cred#*:}
  host=${hostport%%:*}; port=3306; [[ $hostport == *:* ]] && port=${hostport#*:}
  printf '%s\n' --protocol=TCP -h "$host" -P "$port" -u "$user"
  [ -n "$pass" ] && printf '%s\n' "-p$pass"
  return 0
}

# mysql_cmd ARGS...: the mysql client on MV_MYSQL_URL's server.
mysql_cmd() {
  local args
  mapfile -t args < <(_mysql_args)
  mysql "${args[@]}" "$@"
}

# psql_cmd ARGS...: psql on MV_PG_URL's server (database postgres).
psql_cmd() {
  PGOPTIONS="-c client_min_messages=warning" psql "postgresql://${MV_PG_URL#*://}/postgres" -X -q -v ON_ERROR_STOP=1 "$@"
}

# db_create BACKEND NAME: makes an empty database and prints its URL
# (upstream's form). SQLite: NAME is a file path.
db_create() {
  case $1 in
    sqlite) rm -f "$2"; echo "sqlite:///$2" ;;
    postgresql)
      psql_cmd -c "DROP DATABASE IF EXISTS $2" -c "CREATE DATABASE $2" >/dev/null || return 1
      echo "$MV_PG_URL/$2" ;;
    mysql)
      mysql_cmd -e "DROP DATABASE IF EXISTS $2; CREATE DATABASE $2" || return 1
      echo "$MV_MYSQL_URL/$2?charset=utf8" ;;
    *) echo "unknown database backend $1" >&2; return 2 ;;
  esac
}

# db_drop BACKEND NAME
db_drop() {
  case $1 in
    sqlite) rm -f "$2" "$2-wal" "$2-shm" ;;
    postgresql) psql_cmd -c "DROP DATABASE IF EXISTS $2 WITH (FORCE)" >/dev/null ;;
    mysql) mysql_cmd -e "DROP DATABASE IF EXISTS $2" ;;
  esac
}

# free_port [FIRST-LAST [TAKEN...]]: prints a port nothing listens on,
# from the range when one is given (empty: one the system picks), and
# none of the TAKEN ports: those picked already for servers that do not
# listen yet.
free_port() {
  local range=${1:-} p first last
  [ $# -gt 0 ] && shift
  local taken=" $* "
  if [ -n "$range" ]; then
    first=${range%-*} last=${range#*-}
    for p in $(seq "$first" "$last"); do
      port_open "$p" || [[ $taken == *" $p "* ]] || { echo "$p"; return 0; }
    done
    return 1
  fi
  while :; do
    p=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    [[ $taken == *" $p "* ]] || { echo "$p"; return 0; }
  done
}

# random_password: a fresh random password (URL-safe characters).
random_password() {
  python3 -c 'import secrets; print(secrets.token_urlsafe(18))'
}

# json_field PATH: from the JSON document on stdin, prints the value at
# PATH (keys and list indexes joined by dots: token.roles.0.name); objects
# and lists are printed as JSON. Fails when the path is missing.
json_field() {
  python3 -c '
import json, sys
value = json.load(sys.stdin)
for key in sys.argv[1].split("."):
    try:
        value = value[int(key)] if isinstance(value, list) else value[key]
    except (KeyError, IndexError, ValueError, TypeError):
        sys.exit("json_field: no %s in the document" % sys.argv[1])
print(value if isinstance(value, str) else json.dumps(value))
' "$1"
}

# keystone_token URL USER PASSWORD SCOPE: a token of USER (domain Default)
# from Keystone at URL (http://HOST:PORT/v3) with password auth and SCOPE,
# the JSON of the request's "scope" ({"project": {...}} or
# {"system": {"all": true}}). Prints the token; fails with Keystone's
# answer on stderr unless it is a 201.
keystone_token() {
  local headers body status token
  headers=$(mktemp) || return 1
  body=$(printf '{"auth": {"identity": {"methods": ["password"], "password": {"user": {"name": "%s", "domain": {"id": "default"}, "password": "%s"}}}, "scope": %s}}' "$2" "$3" "$4" \
    | curl -sS --max-time 30 -D "$headers" -H 'Content-Type: application/json' \
      -w '\n%{http_code}' --data @- "$1/auth/tokens") \
    || { rm -f "$headers"; echo "keystone_token: no answer from $1" >&2; return 1; }
  status=${body##*$'\n'}
  token=$(awk 'tolower($1) == "x-subject-token:" { print $2 }' "$headers" | tr -d '\r')
  rm -f "$headers"
  if [ "$status" != 201 ] || [ -z "$token" ]; then
    echo "keystone_token: $2 got $status: ${body%$'\n'*}" >&2
    return 1
  fi
  echo "$token"
}

# keystone_authtoken_section: placement.conf's [api] auth_strategy =
# keystone and [keystone_authtoken] for the service user of a running
# scripts/keystone.sh (its KEYSTONE_* variables), public interface.
# Upstream Placement and placement-api both read it.
keystone_authtoken_section() {
  local identity=${KEYSTONE_URL%/}
  identity=${identity%/v3}
  cat <<CONF
[api]
auth_strategy = keystone
[keystone_authtoken]
auth_type = password
auth_url = $identity
www_authenticate_uri = $identity
username = $KEYSTONE_SERVICE_USER
password = $KEYSTONE_SERVICE_PASSWORD
project_name = $KEYSTONE_SERVICE_PROJECT
user_domain_name = Default
project_domain_name = Default
interface = public
CONF
}

# keystone_placement_conf DIR DATABASE-URL APP-LOG: DIR/placement.conf,
# read by upstream and placement-api alike, behind the Keystone of a
# running scripts/keystone.sh (keystone_authtoken_section) with the legacy
# policy; APP-LOG is its [DEFAULT] log_file.
keystone_placement_conf() {
  mkdir -p "$1"
  cat > "$1/placement.conf" <<CONF
[DEFAULT]
log_file = $3
[placement_database]
connection = $2
[oslo_policy]
enforce_new_defaults = false
enforce_scope = false
CONF
  keystone_authtoken_section >> "$1/placement.conf"
  echo "region_name = ${KEYSTONE_REGION:-RegionOne}" >> "$1/placement.conf"
}

# start_upstream_keystone VENV CONF-DIR LOG [FIRST-LAST]: upstream
# Placement (gunicorn, one worker) reading CONF-DIR/placement.conf
# (keystone_placement_conf), its output in LOG. Sets server_pid and
# server_port.
start_upstream_keystone() {
  server_port=$(free_port "${4:-}") || return 1
  OS_PLACEMENT_CONFIG_DIR=$2 "$1/bin/gunicorn" --bind "127.0.0.1:$server_port" \
    --workers 1 --no-control-socket placement.wsgi.api:application >"$3" 2>&1 &
  server_pid=$!
  wait_port "$server_port" "$server_pid" 60
}

# start_placement_api_keystone BINARY CONF-DIR LOG [FIRST-LAST]:
# placement-api reading CONF-DIR/placement.conf, as above.
start_placement_api_keystone() {
  server_port=$(free_port "${4:-}") || return 1
  "$1" --config-file "$2/placement.conf" --bind "127.0.0.1:$server_port" >"$3" 2>&1 &
  server_pid=$!
  wait_port "$server_port" "$server_pid" 60
}


# built_tests PACKAGE [--test NAME] [-- ARGS...]: runs what `cargo test
# --all-features -p PACKAGE --tests` (with --test NAME: `--test NAME`)
# runs, from the build `cargo test --workspace --all-features` made:
# scratch NAME [KEEP]: $work, a new folder NAME.XXXXXX under TMPDIR,
# removed at exit; $out, KEEP (made here) when given, else $work; $pids,
# the script's servers, stopped at exit (stop_pids stops them sooner).
scratch() {
  work=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")
  [ -n "${2:-}" ] && mkdir -p "$2"
  out=${2:-$work}
  pids=()
  trap 'stop_pids; rm -rf "$work"' EXIT
  trap 'exit 130' INT TERM
}

# Stops the processes in $pids (each waited for) and empties it.
stop_pids() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
  pids=()
}

# gabbits_dir VENV: the folder of upstream's gabbi files in VENV's
# placement package.
gabbits_dir() {
  "$1/bin/python" -c 'import os, placement.tests.functional as f; print(os.path.join(os.path.dirname(f.__file__), "gabbits"))'
}

# release_placement_api DIR: builds placement-api (release) and prints the
# path of its copy in DIR, so that another build in the same target
# directory cannot change the binary under the run.
release_placement_api() {
  echo "building placement-api (release)" >&2
  cargo build --quiet --release -p placement --bin placement-api || return 1
  cp "${CARGO_TARGET_DIR:-$root/target}/release/placement-api" "$1/placement-api" || return 1
  echo "$1/placement-api"
}

# Reads scripts/gabbi-known-failures.txt ("FILE TEST REASON", TEST "*" for
# every test of FILE) into the array `known`; is_known FILE TEST says
# whether a failure is listed.
read_known_failures() {
  local kfile ktest kreason
  declare -gA known=()
  while read -r kfile ktest kreason; do
    case $kfile in ''|'#'*) continue ;; esac
    known["$kfile $ktest"]=$kreason
  done < scripts/gabbi-known-failures.txt
}
is_known() { [ -n "${known["$1 $2"]+x}" ] || [ -n "${known["$1 *"]+x}" ]; }

# PACKAGE's test binaries (the unit tests of its library and binaries,
# then its integration tests; or the integration test NAME), each in
# PACKAGE's directory as cargo runs them, with ARGS; stops at the first
# that fails. `-p PACKAGE` would resolve the dependencies' features for
# PACKAGE alone and rebuild much of the workspace (up to a minute a call).
built_tests() {
  local package=$1 name= list dir exe label
  local -
  set -o pipefail
  shift
  if [ "${1:-}" = --test ]; then name=$2; shift 2; fi
  case ${1:-} in
    --) shift ;;
    ?*) echo "built_tests: $1: use PACKAGE [--test NAME] [-- ARGS...]" >&2; return 2 ;;
  esac
  list=$(cargo test --workspace --all-features --no-run --quiet --message-format=json-render-diagnostics \
    | python3 -c '
import json, os, subprocess, sys
package, name = sys.argv[1], sys.argv[2]
artifacts = [json.loads(line) for line in sys.stdin]
meta = json.loads(subprocess.run(["cargo", "metadata", "--no-deps", "--format-version", "1"],
                                 check=True, capture_output=True, text=True).stdout)
manifest = {p["manifest_path"] for p in meta["packages"] if p["name"] == package}
if not manifest:
    sys.exit("built_tests: no package %s in the workspace" % package)
found = []
for m in artifacts:
    if m.get("reason") != "compiler-artifact" or m["manifest_path"] not in manifest:
        continue
    kinds = m["target"]["kind"]
    # Examples and benchmarks are built by cargo test, not run.
    order = 2 if "test" in kinds else 1 if "bin" in kinds else None if {"example", "bench"} & set(kinds) else 0
    if order is None or not m["profile"]["test"] or not m["executable"]:
        continue
    if name and (order, m["target"]["name"]) != (2, name):
        continue
    found.append((order, m["target"]["name"], m))
if not found:
    sys.exit("built_tests: %s has no test %s in the build" % (package, name or "target"))
for _, _, m in sorted(found, key=lambda f: f[:2]):
    dir = os.path.dirname(m["manifest_path"])
    source = os.path.relpath(m["target"]["src_path"], dir)
    if "test" not in m["target"]["kind"]:
        source = "unittests " + source
    print("\t".join([dir, m["executable"], source]))
' "$package" "$name") || return 1
  while IFS=$'\t' read -r dir exe label; do
    echo "     Running $label ($exe)"
    (cd "$dir" && "$exe" "$@") || return 1
  done <<<"$list"
}
