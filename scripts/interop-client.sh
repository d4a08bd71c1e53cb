#!/usr/bin/env bash
# Runs microversion-client against the real OpenStack services, installed
# from PyPI into private virtualenvs and served on loopback only:
#
#   Placement 16.0.0 (gunicorn, SQLite, auth_strategy noauth2)
#   Nova 34.0.0      (compute API only, gunicorn, SQLite, a no-auth paste filter)
#   Ironic 39.0.0    (ironic-api only, SQLite, auth_strategy noauth)
#
# then runs the crate's `probe` example against them (see
# crates/microversion-client/README.md for what it checks and what it showed).
#
# Usage: scripts/interop-client.sh
# Environment:
#   MICROVERSION_INTEROP_DIR  work directory (default ${TMPDIR:-/tmp}/microversion-interop):
#                             virtualenvs, databases, configuration, logs
#   PLACEMENT_PORT NOVA_PORT IRONIC_PORT   loopback ports (18778, 18774, 16385)
#   PYTHON                    the interpreter for the virtualenvs (python3; 3.10 to 3.12)
#
# Needs python3 with venv, curl, cargo, and access to PyPI. The first run
# installs the three services (a few minutes); later runs reuse the
# virtualenvs. Not part of CI.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
work=${MICROVERSION_INTEROP_DIR:-${TMPDIR:-/tmp}/microversion-interop}
python=${PYTHON:-python3}
placement_port=${PLACEMENT_PORT:-18778}
nova_port=${NOVA_PORT:-18774}
ironic_port=${IRONIC_PORT:-16385}

# The versions this script was written and run against.
placement_pins="openstack-placement==16.0.0 os-traits==3.9.0 os-resource-classes==1.1.0"
nova_pins="nova==34.0.0"
ironic_pins="ironic==39.0.0"
gunicorn_pin="gunicorn==23.0.0"

mkdir -p "$work/logs" "$work/etc"
export PIP_CACHE_DIR=${PIP_CACHE_DIR:-$work/pip-cache}

pids=()
cleanup() {
  local pid
  for pid in "${pids[@]}"; do
    kill "$pid" 2>/dev/null || true
  done
}
trap cleanup EXIT

log() { printf '%s\n' "-- $*" >&2; }

# make_venv NAME PACKAGE...: $work/venv-NAME with the packages, installed once.
make_venv() {
  local name=$1; shift
  local dir=$work/venv-$name
  if [ ! -f "$dir/.installed" ]; then
    log "installing $* into $dir (once)"
    rm -rf "$dir"
    "$python" -m venv "$dir"
    "$dir/bin/pip" install --quiet --upgrade pip
    "$dir/bin/pip" install --quiet "$@"
    touch "$dir/.installed"
  fi
  printf '%s\n' "$dir"
}

# wait_for URL: until something answers at URL (60 s at most).
wait_for() {
  local i
  for i in $(seq 1 300); do
    if curl --silent --output /dev/null --max-time 2 "$1"; then
      return 0
    fi
    sleep 0.2
  done
  log "nothing answered at $1; see the logs in $work/logs"
  return 1
}

start_placement() {
  local venv etc
  venv=$(make_venv placement $placement_pins $gunicorn_pin)
  etc=$work/etc/placement
  mkdir -p "$etc"
  cat > "$etc/placement.conf" <<EOF
[DEFAULT]
log_file = $work/logs/placement.log
[api]
auth_strategy = noauth2
[placement_database]
connection = sqlite:///$work/placement.db
[oslo_policy]
enforce_new_defaults = false
enforce_scope = false
EOF
  "$venv/bin/placement-manage" --config-file "$etc/placement.conf" db sync
  OS_PLACEMENT_CONFIG_DIR=$etc "$venv/bin/gunicorn" --bind "127.0.0.1:$placement_port" \
    --workers 1 --error-logfile "$work/logs/placement-gunicorn.log" \
    placement.wsgi.api:application >"$work/logs/placement.out" 2>&1 &
  pids+=($!)
  wait_for "http://127.0.0.1:$placement_port/"
  log "placement on http://127.0.0.1:$placement_port/"
}

start_nova() {
  local venv etc
  venv=$(make_venv nova $nova_pins $gunicorn_pin)
  etc=$work/etc/nova
  mkdir -p "$etc" "$work/nova-locks"
  # Keystone stands aside: a paste filter that trusts the token as the
  # user name ("admin" gets the admin role).
  cat > "$etc/interop_noauth.py" <<'EOF'
"""Trust X-Auth-Token as the user; for loopback interoperability runs only."""
import webob.dec
import webob.exc


def filter_factory(global_conf, **local_conf):
    def wrap(app):
        @webob.dec.wsgify
        def trusting(req):
            user = req.headers.get('X-Auth-Token')
            if not user:
                return webob.exc.HTTPUnauthorized()
            req.headers['X-User-Id'] = user
            req.headers['X-Project-Id'] = user
            req.headers['X-Roles'] = 'admin,member,reader' if user == 'admin' else 'member,reader'
            req.headers['X-Identity-Status'] = 'Confirmed'
            return req.get_response(app)
        return trusting
    return wrap
EOF
  sed -e 's/ authtoken keystonecontext / interop_noauth keystonecontext /' \
    "$venv/etc/nova/api-paste.ini" > "$etc/api-paste.ini"
  printf '\n[filter:interop_noauth]\npaste.filter_factory = interop_noauth:filter_factory\n' \
    >> "$etc/api-paste.ini"
  cat > "$etc/nova.conf" <<EOF
[DEFAULT]
transport_url = fake:/
log_file = $work/logs/nova.log
[api_database]
connection = sqlite:///$work/nova-api.db
[database]
connection = sqlite:///$work/nova.db
[oslo_concurrency]
lock_path = $work/nova-locks
[wsgi]
api_paste_config = $etc/api-paste.ini
EOF
  cat > "$etc/interop_nova_wsgi.py" <<EOF
import os
import sys
os.environ.setdefault('OS_NOVA_CONFIG_DIR', '$etc')
sys.argv = ['nova-api-os-compute']
from nova.wsgi.osapi_compute import application  # noqa: E402,F401
EOF
  "$venv/bin/nova-manage" --config-file "$etc/nova.conf" api_db sync >"$work/logs/nova-db.out" 2>&1
  "$venv/bin/nova-manage" --config-file "$etc/nova.conf" db sync >>"$work/logs/nova-db.out" 2>&1
  PYTHONPATH=$etc OS_NOVA_CONFIG_DIR=$etc "$venv/bin/gunicorn" --bind "127.0.0.1:$nova_port" \
    --workers 1 --error-logfile "$work/logs/nova-gunicorn.log" \
    interop_nova_wsgi:application >"$work/logs/nova.out" 2>&1 &
  pids+=($!)
  wait_for "http://127.0.0.1:$nova_port/"
  log "nova on http://127.0.0.1:$nova_port/v2.1"
}

start_ironic() {
  local venv etc
  venv=$(make_venv ironic $ironic_pins)
  etc=$work/etc/ironic
  mkdir -p "$etc"
  cat > "$etc/ironic.conf" <<EOF
[DEFAULT]
auth_strategy = noauth
rpc_transport = json-rpc
log_file = $work/logs/ironic.log
[api]
host_ip = 127.0.0.1
port = $ironic_port
api_workers = 1
[database]
connection = sqlite:///$work/ironic.db
[json_rpc]
auth_strategy = noauth
EOF
  if [ ! -f "$work/ironic.db" ]; then
    "$venv/bin/ironic-dbsync" --config-file "$etc/ironic.conf" create_schema \
      >"$work/logs/ironic-db.out" 2>&1
  fi
  "$venv/bin/ironic-api" --config-file "$etc/ironic.conf" >"$work/logs/ironic.out" 2>&1 &
  pids+=($!)
  wait_for "http://127.0.0.1:$ironic_port/"
  log "ironic on http://127.0.0.1:$ironic_port/"
}

start_placement
start_nova
start_ironic

log "building the probe example"
cd "$root"
cargo build --quiet -p microversion-client --example probe

log "running the probe"
set +e
RUST_LOG=${RUST_LOG:-microversion_client=debug} \
  cargo run --quiet -p microversion-client --example probe -- --token admin \
  "placement=http://127.0.0.1:$placement_port=resource_providers" \
  "compute=http://127.0.0.1:$nova_port/v2.1=flavors" \
  "compute=http://127.0.0.1:$nova_port/=v2.1/flavors" \
  "compute=http://127.0.0.1:$nova_port/v2=flavors" \
  "baremetal=http://127.0.0.1:$ironic_port/v1=nodes" \
  "baremetal=http://127.0.0.1:$ironic_port/=v1/nodes" 2>&1 \
  | tee "$work/probe-output.txt"
status=${PIPESTATUS[0]}
set -e
log "output saved in $work/probe-output.txt"
exit "$status"
