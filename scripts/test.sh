#!/usr/bin/env bash
# Every test of the project, as CI runs it: formatting, lints, unit,
# integration, property and doc tests (placement's integration tests on
# every backend), the docs build, and placement-api
# against upstream Placement on each database backend: upstream's gabbi
# suite, the schema, the same database served by both, placement-manage
# and placement-status from each earlier schema revision beside upstream's
# (scripts/manage-check.sh), and the answers to
# the load benchmark's allocation candidate rows, small
# (scripts/bench-load.sh --part candidates --check); on SQLite also
# part of the gabbi suite under /placement beside upstream mounted there
# (scripts/gabbi-prefix.sh; --all runs every file), the errors the real openstack client prints against both, the
# `placement` command against both and beside osc-placement, Nova's
# placement report client against both, a simulated cloud of Nova's
# report clients and scheduler against both (scripts/bench-load.sh --part
# cloud --check), Nova's services end to end on
# placement-api (compared with upstream's record), placement-api against
# its own OpenAPI documents (scripts/openapi-check.sh) and its API
# reference page in headless chromium (scripts/reference-page-check.sh).
#
# MV_TEST_BACKENDS (default "sqlite postgresql mysql") picks the backends;
# MV_PG_URL and MV_MYSQL_URL the servers (scripts/lib.sh); MV_PORTS
# (FIRST-LAST) the ports the test servers may use. The reliability checks
# (scripts/reliability.sh: fuzzing, mixed-version load, crash durability,
# bad input) run in their short form at the end, after a rolling restart
# of two instances behind HAProxy (scripts/rolling-restart.sh), the check of the
# local Keystone (scripts/keystone-check.sh) and the real-Keystone tests:
# keystone-auth's; placement-api behind Keystone beside upstream
# (scripts/keystone-placement.sh); placement-api deployed as the
# deployment tools deploy upstream (scripts/deploy-check.sh);
# microversion-client and the CLI (with
# placement-api and demo services in its catalog:
# scripts/keystone-catalog.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
# Every placement-api the run starts checks its answers against the
# OpenAPI document of their version: a drift answers 500, which fails
# whichever suite met it (the integration tests' servers are set so in
# code, the gabbi runs by flag).
export PLACEMENT_RESPONSE_VALIDATION=error
backends=${MV_TEST_BACKENDS:-sqlite postgresql mysql}
# step NAME: a step's heading, with the seconds since the run began, so
# that a run's log tells what each step took.
step() { echo "== $* [${SECONDS} s]"; }

step "cargo fmt --check"
cargo fmt --all --check
step "cargo clippy"
cargo clippy --workspace --all-targets --all-features -- -D warnings
step "cargo test"
# The one build of the tests: every later step runs what this built
# (built_tests, target/debug), none builds again. Cargo's `-p CRATE` and
# `cargo build` resolve features without the rest of the workspace or
# without the dev-dependencies, and would rebuild (about 4 minutes in all).
cargo test --workspace --all-features
step "cargo doc"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --all-features

step "placement-api against upstream ($backends)"
bash scripts/setup.sh $backends
# The scrape of tests/operations.rs through `promtool check metrics` (2 s).
if [ -x "$MV_CACHE/promtool" ]; then
  step "metric names (promtool check metrics)"
  PLACEMENT_PROMTOOL=$MV_CACHE/promtool cargo test --workspace --all-features --test operations
fi
# The debug binaries and examples the tests above built (`cargo build`
# would build them again, without the dev-dependencies' features).
bin_dir=$(mktemp -d "${TMPDIR:-/tmp}/placement-bin.XXXXXX")
trap 'rm -rf "$bin_dir"' EXIT
cp "${CARGO_TARGET_DIR:-target}/debug/placement-api" "${CARGO_TARGET_DIR:-target}/debug/placement-manage" \
  "${CARGO_TARGET_DIR:-target}/debug/placement-status" "$bin_dir/"
ports=()
[ -n "${MV_PORTS:-}" ] && ports=(--ports "$MV_PORTS")
for backend in $backends; do
  if [ "$backend" != sqlite ]; then
    # The integration tests ran on SQLite files above; here they share one
    # new database of this backend (their servers, starting together, take
    # turns to create the schema), and tests/db_sync.rs races its syncs on
    # another.
    step "cargo test (integration) on $backend"
    url=$(db_create "$backend" mv_cargo_tests)
    empty=$(db_create "$backend" mv_sync_race)
    PLACEMENT_TEST_DATABASE=$url PLACEMENT_TEST_EMPTY_DATABASE=$empty \
      built_tests placement
    db_drop "$backend" mv_cargo_tests
    db_drop "$backend" mv_sync_race
  fi
  step "gabbi on $backend"
  bash scripts/gabbi.sh --database "$backend" --keep-going --binary "$bin_dir/placement-api" "${ports[@]}"
  step "schema on $backend"
  bash scripts/schema-check.sh --database "$backend" --binary "$bin_dir/placement-api"
  step "same database on $backend"
  bash scripts/interop-db.sh --database "$backend" --binary "$bin_dir/placement-api" "${ports[@]}"
  step "placement-manage and placement-status from each earlier revision on $backend (scripts/manage-check.sh)"
  bash scripts/manage-check.sh --database "$backend" --bin-dir "$bin_dir" "${ports[@]}"
  # The candidate rows of the load benchmark, small (about 35 s).
  step "allocation candidates against upstream on $backend (scripts/bench-load.sh --part candidates --check)"
  candidate_ports=()
  [ -n "${MV_PORTS:-}" ] && candidate_ports=(--ports "$MV_PORTS")
  bash scripts/bench-load.sh --part candidates --check --database "$backend" \
    --binary "$bin_dir/placement-api" "${candidate_ports[@]}"
  if [ "$backend" = sqlite ]; then
    step "gabbi under /placement beside upstream mounted there (scripts/gabbi-prefix.sh, short form)"
    bash scripts/gabbi-prefix.sh --binary "$bin_dir/placement-api"
    step "database connections over TLS (scripts/db-tls-check.sh, about a minute)"
    bash scripts/db-tls-check.sh --binary "$bin_dir/placement-api" "${ports[@]}"
    step "the openstack client's errors (scripts/osc-errors.sh)"
    bash scripts/osc-errors.sh --binary "$bin_dir/placement-api" "${ports[@]}"
    step "the placement command against both, beside osc-placement (scripts/placement-cli.sh)"
    bash scripts/placement-cli.sh --binary "$bin_dir/placement-api" --client "${CARGO_TARGET_DIR:-target}/debug/placement" "${ports[@]}"
    step "Nova's placement report client (scripts/nova-report-client.sh)"
    bash scripts/nova-report-client.sh --binary "$bin_dir/placement-api" "${ports[@]}"
    step "a simulated cloud against both (scripts/bench-load.sh --part cloud --check, about a minute)"
    bash scripts/bench-load.sh --part cloud --check --binary "$bin_dir/placement-api" "${candidate_ports[@]}"
    step "Nova's services end to end (scripts/nova-services.sh --short, about 3.5 minutes)"
    bash scripts/nova-services.sh --short --binary "$bin_dir/placement-api" "${ports[@]}"
    # The OpenAPI documents against the server (about 3 minutes).
    step "OpenAPI documents against placement-api (schemathesis)"
    openapi_port=()
    [ -n "${MV_PORTS:-}" ] && openapi_port=(--port "$(free_port "$MV_PORTS")")
    bash scripts/openapi-check.sh --binary "$bin_dir/placement-api" --max-time 20 "${openapi_port[@]}"
    # The API reference page in headless chromium (about 10 seconds).
    step "the API reference page in a browser (scripts/reference-page-check.sh)"
    bash scripts/reference-page-check.sh --binary "$bin_dir/placement-api" "${openapi_port[@]}"
  fi
done
step "a rolling restart behind HAProxy (scripts/rolling-restart.sh)"
rolling_db=sqlite
for b in $backends; do [ "$b" != sqlite ] && { rolling_db=$b; break; }; done
bash scripts/rolling-restart.sh --binary "$bin_dir/placement-api" --database "$rolling_db" "${ports[@]}"
step "Keystone for the keystone tests (scripts/keystone.sh)"
keystone_port=()
[ -n "${MV_PORTS:-}" ] && keystone_port=(--port "$(free_port "$MV_PORTS")")
bash scripts/keystone-check.sh "${keystone_port[@]}"
step "keystone-auth against the real Keystone"
keystone_port=${MV_KEYSTONE_PORT:-35357}
[ -n "${MV_PORTS:-}" ] && keystone_port=$(free_port "$MV_PORTS")
eval "$(bash scripts/keystone.sh start --port "$keystone_port")"
trap 'bash scripts/keystone.sh stop --port "$keystone_port"; rm -rf "$bin_dir"' EXIT
# One test at a time, as for the catalog tests below: two workers of
# Keystone on SQLite now and then answer concurrent token requests with
# 500 ("database is locked").
built_tests keystone-auth --test real_keystone -- --test-threads=1
step "placement-api behind the real Keystone, beside upstream"
bash scripts/keystone-placement.sh --keystone-port "$keystone_port" --binary "$bin_dir/placement-api" "${ports[@]}"
step "deployed as kolla-ansible, openstack-helm, OpenStack-Ansible and devstack deploy upstream (scripts/deploy-check.sh)"
bash scripts/deploy-check.sh --keystone-port "$keystone_port" --bin-dir "$bin_dir" "${ports[@]}"
step "Nova's placement report client behind the real Keystone"
bash scripts/nova-report-client.sh --keystone --binary "$bin_dir/placement-api" "${ports[@]}"
step "the placement command behind the real Keystone, against both (scripts/placement-cli.sh)"
bash scripts/placement-cli.sh --keystone --binary "$bin_dir/placement-api" \
  --client "${CARGO_TARGET_DIR:-target}/debug/placement" "${ports[@]}"
step "microversion-client and the CLI against the real Keystone's catalog"
# placement-api and the demo service as compute and volumev3, in the
# catalog (scripts/keystone-catalog.sh). One test at a time: Keystone's
# SQLite answers "database is locked" to concurrent token requests.
catalog_ports=()
[ -n "${MV_PORTS:-}" ] && catalog_ports=(--ports "$MV_PORTS")
eval "$(bash scripts/keystone-catalog.sh start --port "$keystone_port" "${catalog_ports[@]}" \
  --placement "$bin_dir/placement-api" --demo "${CARGO_TARGET_DIR:-target}/debug/examples/demo")"
trap 'bash scripts/keystone-catalog.sh stop; bash scripts/keystone.sh stop --port "$keystone_port"; rm -rf "$bin_dir"' EXIT
built_tests microversion-client --test real_keystone -- --test-threads=1
built_tests microversion-cli --test real_keystone -- --test-threads=1
built_tests placement-cli --test real_keystone -- --test-threads=1
step "token renewal with 8-second Keystone tokens"
bash scripts/keystone.sh stop --port "$keystone_port"
eval "$(bash scripts/keystone.sh start --port "$keystone_port" --token-expiration 8)"
KEYSTONE_TOKEN_EXPIRATION=8 built_tests microversion-client --test real_keystone -- \
  short_lived_tokens_are_renewed --test-threads=1
bash scripts/keystone-catalog.sh stop
bash scripts/keystone.sh stop --port "$keystone_port"
trap 'rm -rf "$bin_dir"' EXIT
step "reliability (short form)"
MV_TEST_BACKENDS="$backends" bash scripts/reliability.sh --binary "$bin_dir/placement-api"
step "done"
