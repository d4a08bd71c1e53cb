#!/usr/bin/env bash
# placement-api deployed as kolla-ansible, openstack-helm,
# OpenStack-Ansible and devstack deploy upstream Placement, behind the real
# Keystone, on MariaDB: each tool's placement.conf (the keys its templates
# write, rendered here), found where oslo.config finds it with no option
# given (`~/.placement/`, the first place searched, stands in for
# `/etc/placement/`, which this script does not write), then the commands
# the tool runs, as it runs them:
#
#   placement-manage db sync                      (exit 0)
#   placement-manage db online_data_migrations    (exit 0)
#   placement-status upgrade check                (exit 0)
#   placement-api                                 (Keystone: no [api] section
#                                                  in kolla's, helm's, OSA's)
#
# and a request through the catalog with the openstack client: a provider
# created and listed by the admin; without a token, 401. Per tool besides:
# kolla's database options (max_retries = -1, pool) and proxy headers;
# helm's [keystone_authtoken] in placement.conf.d with the old key
# auth_uri, and policy.yaml beside placement.conf (a rule of it refuses
# trait listing); OSA's pool settings and policy.yaml; devstack's mount
# under /placement with `[api] auth_strategy = keystone` written out.
#
# Usage: scripts/deploy-check.sh --keystone-port P --bin-dir DIR
#        [--ports FIRST-LAST]
# Keystone must run on P (eval "$(scripts/keystone.sh start --port P)").
# DIR holds placement-api, placement-manage and placement-status.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
. scripts/lib.sh

bin_dir='' ports='' keystone_port=''
while [ $# -gt 0 ]; do
  case $1 in
    --bin-dir) bin_dir=$2; shift 2 ;;
    --ports) ports=$2; shift 2 ;;
    --keystone-port) keystone_port=$2; shift 2 ;;
    *) echo "deploy-check.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -n "${KEYSTONE_URL:-}" ] || { echo "deploy-check.sh: KEYSTONE_URL is not set; eval \"\$(scripts/keystone.sh start)\" first" >&2; exit 2; }
[ -n "$keystone_port" ] && [ -n "$bin_dir" ] || { echo "deploy-check.sh: --keystone-port and --bin-dir are required" >&2; exit 2; }
bin_dir=$(cd "$bin_dir" && pwd) || exit 2
identity=${KEYSTONE_URL%/}
identity=${identity%/v3}

scratch deploy-check
failed=0
fail() { echo "FAIL: $*" >&2; failed=1; }
osc_venv=$(pinned_venv scripts/requirements/osc.txt) || { echo "deploy-check.sh: cannot make the client's virtualenv" >&2; exit 1; }

# osc ARGS...: the openstack client as the admin, the endpoint from the
# catalog, password auth only.
osc() {
  env -i PATH="$PATH" HOME="$work" OS_AUTH_URL="$identity/v3" OS_IDENTITY_API_VERSION=3 \
    OS_USERNAME="$KEYSTONE_ADMIN_USER" OS_PASSWORD="$KEYSTONE_ADMIN_PASSWORD" \
    OS_PROJECT_NAME="$KEYSTONE_ADMIN_PROJECT" OS_USER_DOMAIN_NAME=Default \
    OS_PROJECT_DOMAIN_NAME=Default OS_REGION_NAME=RegionOne OS_INTERFACE=public \
    "$osc_venv/bin/openstack" "$@"
}

# authtoken KEY-FOR-THE-PUBLIC-URI: [keystone_authtoken] as the tools
# write it (memcache keys included: served by the in-process cache here).
authtoken() {
  cat <<CONF
[keystone_authtoken]
$1 = $identity
auth_url = $identity
auth_type = password
project_domain_id = default
user_domain_id = default
project_name = $KEYSTONE_SERVICE_PROJECT
username = $KEYSTONE_SERVICE_USER
password = $KEYSTONE_SERVICE_PASSWORD
region_name = RegionOne
interface = public
service_type = placement
memcache_security_strategy = ENCRYPT
memcache_secret_key = not-used-here
memcached_servers = 127.0.0.1:11211
CONF
}

# render TOOL DIR URL: TOOL's placement.conf (and conf.d, policy.yaml) in DIR.
render() {
  local tool=$1 dir=$2 url=$3
  mkdir -p "$dir"
  case $tool in
    kolla)
      cat > "$dir/placement.conf" <<CONF
[DEFAULT]
debug = False
log_file = $dir/placement-api.log
state_path = $dir

[oslo_middleware]
enable_proxy_headers_parsing = true

[oslo_concurrency]
lock_path = \$state_path/lock

[placement_database]
connection = $url
connection_recycle_time = 10
max_overflow = 1000
max_pool_size = 1
max_retries = -1

[cache]
backend = oslo_cache.memcache_pool
enabled = True
memcache_servers = 127.0.0.1:11211

$(authtoken www_authenticate_uri)
CONF
      ;;
    helm)
      cat > "$dir/placement.conf" <<CONF
[DEFAULT]
log_file = $dir/placement-api.log

[placement_database]
connection = $url

[oslo_policy]
enforce_new_defaults = false
enforce_scope = false
CONF
      mkdir -p "$dir/placement.conf.d"
      authtoken auth_uri > "$dir/placement.conf.d/01-keystone.conf"
      printf '"placement:traits:list": "!"\n' > "$dir/policy.yaml"
      ;;
    osa)
      cat > "$dir/placement.conf" <<CONF
[DEFAULT]
debug = False
log_file = $dir/placement-api.log

[placement_database]
connection = $url
max_overflow = 50
max_pool_size = 5
pool_timeout = 30
connection_recycle_time = 600

$(authtoken www_authenticate_uri)
insecure = False
service_token_roles_required = True
service_token_roles = service
CONF
      printf '"placement:resource_providers:create": "role:admin"\n' > "$dir/policy.yaml"
      ;;
    devstack)
      cat > "$dir/placement.conf" <<CONF
[DEFAULT]
debug = True
log_file = $dir/placement-api.log

[api]
auth_strategy = keystone

[placement_database]
connection = $url

[server]
root_path = /placement

$(authtoken www_authenticate_uri)
CONF
      ;;
  esac
}

for tool in kolla helm osa devstack; do
  echo "== $tool"
  home=$work/$tool/home
  dir=$home/.placement
  url=$(db_create mysql "mv_deploy_$tool") || { fail "$tool: no database"; continue; }
  render "$tool" "$dir" "$url"
  # run NAME COMMAND...: as the tool runs it, with nothing but HOME.
  run() {
    local name=$1 out code
    shift
    out=$(cd "$work" && env -u OS_PLACEMENT_CONFIG_DIR HOME="$home" timeout 120 "$@" 2>&1)
    code=$?
    echo "  $name: exit $code"
    [ "$code" = 0 ] || fail "$tool: $name exited $code: $out"
  }
  run "placement-manage db sync" "$bin_dir/placement-manage" db sync
  run "placement-manage db online_data_migrations" "$bin_dir/placement-manage" db online_data_migrations
  run "placement-status upgrade check" "$bin_dir/placement-status" upgrade check
  port=$(free_port "$ports") || { fail "no free port"; break; }
  (cd "$work" && exec env -u OS_PLACEMENT_CONFIG_DIR HOME="$home" "$bin_dir/placement-api" \
    --bind "127.0.0.1:$port" >"$work/$tool.out" 2>&1) &
  pids+=($!)
  if ! wait_port "$port" $! 60; then
    fail "$tool: placement-api did not start: $(tail -n 5 "$work/$tool.out")"
    stop_pids
    db_drop mysql "mv_deploy_$tool"
    continue
  fi
  endpoint=http://127.0.0.1:$port
  [ "$tool" = devstack ] && endpoint=$endpoint/placement
  bash scripts/keystone.sh endpoint --port "$keystone_port" placement placement "$endpoint" 2>/dev/null \
    || fail "$tool: could not put placement-api in the catalog"
  unauthenticated=$(curl -s -o /dev/null -w '%{http_code}' "$endpoint/resource_providers")
  echo "  without a token: $unauthenticated"
  [ "$unauthenticated" = 401 ] || fail "$tool: a request without a token got $unauthenticated, expected 401"
  created=$(osc --os-placement-api-version 1.39 resource provider create "deploy-$tool" -f value -c uuid 2>&1)
  listed=$(osc resource provider list -f value -c name 2>&1)
  echo "  through the catalog: created $created, listed $listed"
  [[ $created =~ ^[0-9a-f-]{36}$ ]] && [ "$listed" = "deploy-$tool" ] \
    || fail "$tool: the provider was not created and listed through the catalog"
  if [ "$tool" = helm ]; then
    refused=$(osc --os-placement-api-version 1.6 trait list 2>&1)
    echo "  policy.yaml beside placement.conf: $refused"
    [[ $refused == *"(HTTP 403)"* ]] || fail "helm: policy.yaml was not in force: $refused"
  fi
  sed -n 's/^placement-api: warning: /  start-up warning: /p' "$work/$tool.out"
  stop_pids
  db_drop mysql "mv_deploy_$tool"
done

[ "$failed" = 0 ] && echo "deploy-check.sh: all passed"
exit "$failed"
