#!/usr/bin/env bash
# Nova's services end to end against upstream Placement 16.0.0 and
# against placement-api: real Nova 34.0.0 (scripts/requirements/nova.txt)
# API, conductor, scheduler and two nova-compute services (fake virt
# driver SmallFakeDriver: 2 VCPU, 8 GiB, 1028 GiB each, allocation ratios
# 1.0; hosts nova-c1 and nova-c2) on RabbitMQ (127.0.0.1:5672,
# guest/guest, a vhost of this run) and SQLite with the cells v2 setup,
# the real Keystone of scripts/keystone.sh (a data directory of this run),
# the real Glance 33.0.0 (scripts/requirements/glance.txt; file store,
# SQLite, behind the Keystone), and a stand-in Neutron (scripts/nova_services.py
# neutron: this machine cannot host Neutron; servers boot with
# `networks: none`, and the stand-in answers Nova's few port and network
# queries with empty lists, as Neutron does for an instance without ports).
#
#   scripts/nova-services.sh [--short] [--binary PATH] [--ports FIRST-LAST] [--keep DIR]
#
# For each server in turn (upstream, then placement-api, each on a new
# SQLite database, behind Keystone, the legacy policy), a new Nova (new
# databases, cells, services) boots servers until the first host is full
# and the next one lands on the other host, resizes one and confirms,
# cold migrates one and confirms, and deletes all
# (scripts/nova_services.py run). After every step what Nova did (status,
# host, flavor of each server; the migrations) and placement's state
# (providers, inventories, traits, aggregates, usages, allocations) are
# recorded; the two records must be the same. --binary takes a built
# placement-api (default: cargo builds the debug one); --keep DIR keeps
# the records and every log. Everything it started is stopped, and the
# vhost removed, on exit. Takes about 5 minutes (see the crate README).
#
# --short runs placement-api only and compares its record with upstream's
# kept in scripts/nova-services-upstream.json (written by a whole run:
# --keep DIR, then DIR/upstream.json); about 3.5 minutes, in CI.
# Exit status 0 when the records are the same, 1 otherwise (the first
# differing step is printed as a diff), 2 on bad usage.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
. scripts/lib.sh

ports= binary= keep= short=
while [ $# -gt 0 ]; do
  case $1 in
    --binary) [ $# -ge 2 ] || { echo "nova-services.sh: --binary needs a path" >&2; exit 2; }; binary=$2; shift 2 ;;
    --ports) [ $# -ge 2 ] || { echo "nova-services.sh: --ports needs FIRST-LAST" >&2; exit 2; }; ports=$2; shift 2 ;;
    --keep) [ $# -ge 2 ] || { echo "nova-services.sh: --keep needs a directory" >&2; exit 2; }; keep=$2; shift 2 ;;
    --short) short=1; shift ;;
    -h|--help) sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "nova-services.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

started=$SECONDS
work=$(mktemp -d "${TMPDIR:-/tmp}/nova-services.XXXXXX")
[ -n "$keep" ] && { mkdir -p "$keep" && keep=$(cd "$keep" && pwd); }
out=${keep:-$work}
vhost=mv-nova-services-$$-$RANDOM
keystone_port= vhost_made= pids=()

# stop_pids: TERM to every process started (their process groups), KILL
# after 15 s.
stop_pids() {
  local p i alive
  for p in "${pids[@]}"; do kill -- "-$p" 2>/dev/null || kill "$p" 2>/dev/null; done
  for i in $(seq 1 150); do
    alive=
    for p in "${pids[@]}"; do
      case $(ps -o stat= -p "$p" 2>/dev/null) in ''|Z*) ;; *) alive=1 ;; esac
    done
    [ -z "$alive" ] && break
    sleep 0.1
  done
  for p in "${pids[@]}"; do kill -KILL -- "-$p" 2>/dev/null; wait "$p" 2>/dev/null; done
  pids=()
}
cleanup() {
  stop_pids
  [ -n "$keystone_port" ] && MV_KEYSTONE_DIR=$work/keystone bash scripts/keystone.sh stop --port "$keystone_port" 2>/dev/null
  [ -n "$vhost_made" ] && timeout 30 rabbitmqctl -q delete_vhost "$vhost" >/dev/null 2>&1
  if [ -n "$keep" ]; then
    cp -r "$work/keystone/keystone.log" "$keep/" 2>/dev/null
  fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

fail() { echo "nova-services.sh: $*" >&2; exit 1; }
# logs_at PATH: PATH when --keep keeps it, else how to keep it.
logs_at() {
  if [ -n "$keep" ]; then echo "$1"; else echo "$(basename "$1"); rerun with --keep DIR to keep the logs"; fi
}

# spawn LOG COMMAND...: runs COMMAND in the background in its own process
# group, its output in LOG; sets spawned_pid.
spawn() {
  local log=$1; shift
  setsid "$@" >"$log" 2>&1 </dev/null &
  spawned_pid=$!
  pids+=("$spawned_pid")
}

upstream_venv=$(pinned_venv scripts/requirements/upstream.txt) || fail "cannot make the upstream virtualenv"
nova_venv=$(pinned_venv scripts/requirements/nova.txt) || fail "cannot make Nova's virtualenv"
glance_venv=$(pinned_venv scripts/requirements/glance.txt) || fail "cannot make Glance's virtualenv"
if [ -z "$binary" ]; then
  cargo build --quiet -p placement --bin placement-api || exit 1
  binary=${CARGO_TARGET_DIR:-$root/target}/debug/placement-api
fi
py=$nova_venv/bin/python
helper=$root/scripts/nova_services.py

# RabbitMQ: a vhost of this run, so that other runs on the broker do not
# see its messages.
timeout 30 rabbitmqctl -q add_vhost "$vhost" >/dev/null || fail "rabbitmqctl add_vhost failed (is RabbitMQ running on 127.0.0.1:5672?)"
vhost_made=1
timeout 30 rabbitmqctl -q set_permissions -p "$vhost" guest '.*' '.*' '.*' >/dev/null || fail "rabbitmqctl set_permissions failed"
transport_url=rabbit://guest:guest@127.0.0.1:5672/$vhost

# Keystone: its own data directory; a nova service user (admin and service
# on project service, as a deployment gives it).
keystone_port=$(free_port "$ports") || fail "no free port"
# One worker: Keystone on SQLite answers 500 ("database is locked") to
# token requests made at the same time, as Nova's services make at start.
env_lines=$(MV_KEYSTONE_WORKERS=1 MV_KEYSTONE_DIR=$work/keystone bash scripts/keystone.sh start --port "$keystone_port" 2>"$out/keystone-start.log") \
  || { keystone_port=; fail "Keystone did not start (see $(logs_at "$out/keystone-start.log"))"; }
eval "$env_lines"
token=$(keystone_token "$KEYSTONE_URL" admin "$KEYSTONE_ADMIN_PASSWORD" \
  '{"project": {"name": "admin", "domain": {"id": "default"}}}') || fail "no admin token from Keystone"
# ks METHOD PATH [BODY]: Keystone's API with the admin token.
ks() {
  curl -sS -f --max-time 30 -X "$1" -H "X-Auth-Token: $token" -H 'Content-Type: application/json' \
    ${3:+--data "$3"} "$KEYSTONE_URL$2"
}
nova_password=$(random_password)
nova_user=$(ks POST /users "{\"user\": {\"name\": \"nova\", \"domain_id\": \"default\", \"password\": \"$nova_password\"}}" \
  | json_field user.id) || fail "could not make the nova user"
for role in admin service; do
  role_id=$(ks GET "/roles?name=$role" | json_field roles.0.id) || fail "no role $role"
  ks PUT "/projects/$KEYSTONE_SERVICE_PROJECT_ID/users/$nova_user/roles/$role_id" >/dev/null || fail "could not give nova the $role role"
done

# Glance: file store, SQLite, behind Keystone (tokens checked with the
# placement service user); the image is public, made by the admin user.
glance_dir=$work/glance
mkdir -p "$glance_dir/images" "$glance_dir/staging" "$glance_dir/tasks"
cp "$glance_venv/etc/glance/glance-api-paste.ini" "$glance_dir/"
cat > "$glance_dir/glance-api.conf" <<CONF
[DEFAULT]
enabled_backends = fs:file
log_file = $out/glance.log
[database]
connection = sqlite:///$glance_dir/glance.db
[glance_store]
default_backend = fs
[fs]
filesystem_store_datadir = $glance_dir/images
[os_glance_staging_store]
filesystem_store_datadir = $glance_dir/staging
[os_glance_tasks_store]
filesystem_store_datadir = $glance_dir/tasks
[paste_deploy]
flavor = keystone
CONF
keystone_authtoken_section | sed '/^\[api\]/,/^\[/{/^\[keystone_authtoken\]/!d}' >> "$glance_dir/glance-api.conf"
"$glance_venv/bin/glance-manage" --config-file "$glance_dir/glance-api.conf" db sync >"$out/glance-sync.log" 2>&1 \
  || fail "glance-manage db sync failed (see $(logs_at "$out/glance-sync.log"))"
glance_port=$(free_port "$ports") || fail "no free port"
spawn "$out/glance-gunicorn.log" env OS_GLANCE_CONFIG_DIR="$glance_dir" "$glance_venv/bin/gunicorn" \
  --bind "127.0.0.1:$glance_port" --workers 1 --no-control-socket glance.wsgi.api:application
wait_port "$glance_port" "$spawned_pid" 90 || fail "Glance did not start (see $out/glance-gunicorn.log, $out/glance.log)"
glance_url=http://127.0.0.1:$glance_port
image=$(curl -sS -f --max-time 30 -H "X-Auth-Token: $token" -H 'Content-Type: application/json' --data \
  '{"name": "tiny", "disk_format": "raw", "container_format": "bare", "visibility": "public"}' \
  "$glance_url/v2/images" | json_field id) || fail "Glance did not make the image"
head -c 1048576 /dev/zero | curl -sS -f --max-time 30 -X PUT -H "X-Auth-Token: $token" -H 'Content-Type: application/octet-stream' \
  --data-binary @- "$glance_url/v2/images/$image/file" || fail "Glance did not take the image's data"

# The stand-in Neutron.
neutron_port=$(free_port "$ports") || fail "no free port"
spawn "$out/neutron.out" "$py" "$helper" neutron --port "$neutron_port" --log "$out/neutron-requests.log"
wait_port "$neutron_port" "$spawned_pid" 30 || fail "the stand-in Neutron did not start"

while read -r name; do unset "$name"; done < <(compgen -e | grep '^OS_')
identity=${KEYSTONE_URL%/v3}

# nova_conf DIR PLACEMENT-DB: Nova's configuration for one run in DIR.
nova_conf() {
  local dir=$1 section
  mkdir -p "$dir/state" "$dir/locks"
  cp "$nova_venv/etc/nova/api-paste.ini" "$dir/api-paste.ini"
  {
    cat <<CONF
[DEFAULT]
transport_url = $transport_url
compute_driver = fake.SmallFakeDriver
state_path = $dir/state
my_ip = 127.0.0.1
cpu_allocation_ratio = 1.0
ram_allocation_ratio = 1.0
disk_allocation_ratio = 1.0
reserved_host_memory_mb = 0
reserved_host_disk_mb = 0
[api_database]
connection = sqlite:///$dir/nova_api.sqlite?timeout=60
[database]
connection = sqlite:///$dir/nova_cell1.sqlite?timeout=60
[oslo_concurrency]
lock_path = $dir/locks
[oslo_messaging_notifications]
driver = noop
[wsgi]
api_paste_config = $dir/api-paste.ini
[api]
auth_strategy = keystone
[vnc]
enabled = false
[scheduler]
discover_hosts_in_cells_interval = -1
workers = 1
[conductor]
workers = 1
[filter_scheduler]
weight_classes = nova.scheduler.weights.ram.RAMWeigher
ram_weight_multiplier = -1.0
[glance]
endpoint_override = $glance_url
[neutron]
endpoint_override = http://127.0.0.1:$neutron_port
[keystone_authtoken]
www_authenticate_uri = $identity
CONF
    for section in keystone_authtoken placement neutron; do
      [ "$section" = keystone_authtoken ] || echo "[$section]"
      cat <<CONF
auth_type = password
auth_url = $identity
username = nova
password = $nova_password
project_name = service
user_domain_name = Default
project_domain_name = Default
region_name = RegionOne
CONF
      [ "$section" = placement ] && echo "valid_interfaces = public"
    done
  } > "$dir/nova.conf"
}

# one NAME: a whole run against the placement server of $placement_url
# (in Keystone's catalog); the record in $out/NAME.json.
one() {
  local name=$1 dir=$work/$1-nova logs=$out/$1-logs host
  mkdir -p "$logs"
  nova_conf "$dir"
  local manage=("$nova_venv/bin/nova-manage" --config-file "$dir/nova.conf")
  {
    "${manage[@]}" api_db sync &&
    "${manage[@]}" cell_v2 map_cell0 --database_connection "sqlite:///$dir/nova_cell0.sqlite?timeout=60" &&
    "${manage[@]}" cell_v2 create_cell --name cell1 --verbose &&
    "${manage[@]}" db sync
  } >"$logs/nova-manage.log" 2>&1 || { echo "nova-services.sh: nova-manage failed (see $(logs_at "$logs/nova-manage.log"))"; return 1; }
  # Nova's processes share these files: write-ahead logging so that the
  # API's reads do not wait for writers, and (the timeout=60 of the URLs)
  # a transaction waits up to 60 s for another's instead of pysqlite's 5 s.
  # The services run from nova_services.py, which makes every transaction
  # take the write lock at its start (see there). WAL is kept in the files.
  "$py" -c 'import sqlite3, sys
for path in sys.argv[1:]:
    sqlite3.connect(path).execute("PRAGMA journal_mode=WAL").fetchall()' \
    "$dir/nova_api.sqlite" "$dir/nova_cell0.sqlite" "$dir/nova_cell1.sqlite" || return 1
  local conf=(--config-file "$dir/nova.conf")
  spawn "$logs/conductor.log" "$py" "$helper" service nova-conductor "${conf[@]}"
  spawn "$logs/scheduler.log" "$py" "$helper" service nova-scheduler "${conf[@]}"
  local api_port
  api_port=$(free_port "$ports") || return 1
  spawn "$logs/api.log" "$py" "$helper" api --config-dir "$dir" --port "$api_port"
  wait_port "$api_port" "$spawned_pid" 90 || { echo "nova-services.sh: Nova's API did not start (see $(logs_at "$logs/api.log"))"; return 1; }
  # The computes one after the other: the first registered is the first
  # the scheduler weighs among equals.
  for host in nova-c1 nova-c2; do
    mkdir -p "$dir/state-$host"
    # Each compute its own state_path: its compute node's UUID is kept there.
    printf '[DEFAULT]\nhost = %s\nstate_path = %s/state-%s\n' "$host" "$dir" "$host" > "$dir/$host.conf"
    spawn "$logs/compute-$host.log" "$py" "$helper" service nova-compute "${conf[@]}" --config-file "$dir/$host.conf"
    "$py" "$helper" wait-provider --placement "$placement_url" --name "$host" \
      || { echo "nova-services.sh: nova-compute $host did not report to placement (see $(logs_at "$logs/compute-$host.log"))"; return 1; }
  done
  # While the services write to the same files: through nova_services.py
  # (IMMEDIATE transactions), and tried three times.
  local try
  for try in 1 2 3; do
    "$py" "$helper" service nova-manage "${conf[@]}" cell_v2 discover_hosts --verbose >>"$logs/nova-manage.log" 2>&1 && break
    [ "$try" = 3 ] && { echo "nova-services.sh: discover_hosts failed (see $(logs_at "$logs/nova-manage.log"))"; return 1; }
    sleep 2
  done
  echo "-- Nova against $name ($placement_url)"
  timeout 600 "$py" "$helper" run --nova "http://127.0.0.1:$api_port/v2.1" --placement "$placement_url" \
    --image "$image" --out "$out/$name.json" \
    || { echo "nova-services.sh: the run against $name failed (logs: ${keep:-use --keep DIR to keep them})"; return 1; }
  stop_pids
  # Glance, the stand-in Neutron and the placement server were stopped
  # with the rest; the next run starts its own placement server, and
  # these two again.
}

# serve_placement NAME: upstream or ours on a new SQLite database behind
# Keystone; sets placement_url and puts it in the catalog.
serve_placement() {
  local name=$1 dir=$work/$1-placement url port
  mkdir -p "$dir"
  url=$(db_create sqlite "$dir/placement.db")
  {
    printf '[DEFAULT]\nlog_file = %s\n' "$out/$name-placement.log.app"
    printf '[placement_database]\nconnection = %s\n' "$url"
    printf '[oslo_policy]\nenforce_new_defaults = false\nenforce_scope = false\n'
    keystone_authtoken_section
    echo "region_name = RegionOne"
  } > "$dir/placement.conf"
  port=$(free_port "$ports") || return 1
  if [ "$name" = upstream ]; then
    upstream_db_sync "$upstream_venv" "$dir" "$url" >"$out/upstream-sync.log" 2>&1 || return 1
    spawn "$out/$name-placement.log" env OS_PLACEMENT_CONFIG_DIR="$dir" "$upstream_venv/bin/gunicorn" \
      --bind "127.0.0.1:$port" --workers 1 --no-control-socket placement.wsgi.api:application
  else
    spawn "$out/$name-placement.log" "$binary" --config-file "$dir/placement.conf" --bind "127.0.0.1:$port"
  fi
  wait_port "$port" "$spawned_pid" 60 || { echo "nova-services.sh: $name placement did not start (see $(logs_at "$out/$name-placement.log"))"; return 1; }
  placement_url=http://127.0.0.1:$port
  MV_KEYSTONE_DIR=$work/keystone bash scripts/keystone.sh endpoint --port "$keystone_port" placement placement "$placement_url" 2>/dev/null \
    || { echo "nova-services.sh: could not put placement in Keystone's catalog"; return 1; }
}

restart_shared() {
  spawn "$out/glance-gunicorn.log" env OS_GLANCE_CONFIG_DIR="$glance_dir" "$glance_venv/bin/gunicorn" \
    --bind "127.0.0.1:$glance_port" --workers 1 --no-control-socket glance.wsgi.api:application
  wait_port "$glance_port" "$spawned_pid" 90 || fail "Glance did not start again"
  spawn "$out/neutron.out" "$py" "$helper" neutron --port "$neutron_port" --log "$out/neutron-requests.log"
  wait_port "$neutron_port" "$spawned_pid" 30 || fail "the stand-in Neutron did not start again"
}

if [ -n "$short" ]; then
  cp scripts/nova-services-upstream.json "$out/upstream.json" || exit 1
else
  serve_placement upstream || exit 1
  one upstream || exit 1
  restart_shared
fi
serve_placement placement-api || exit 1
one placement-api || exit 1

echo "Neutron calls Nova made (the stand-in's log):"
sed -E 's/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/UUID/g; s/\?.*( ->)/?...\1/' \
  "$out/neutron-requests.log" | sort | uniq -c | sed 's/^/  /'
if "$py" scripts/nova_report_client.py compare "$out/upstream.json" "$out/placement-api.json"; then
  echo "nova-services: Nova did the same on both${short:+ (upstream: the record in scripts/nova-services-upstream.json)}, and placement's state was the same after every step ($((SECONDS - started)) s)"
else
  if [ -n "$keep" ]; then
    echo "nova-services: placement-api differs from upstream (records: $out/upstream.json, $out/placement-api.json)"
  else
    echo "nova-services: placement-api differs from upstream (--keep DIR keeps the records and logs)"
  fi
  exit 1
fi
