#!/usr/bin/env bash
# Load benchmarks on loopback, bounded in time (well under 10 minutes with
# the defaults), each side measured in the same run, alternating:
#
#  layer:     the same route bare, bare with its handler sending the
#             response headers the wire rules require (the layer's
#             version, Vary and request id headers: the fair baseline,
#             checked to answer the layer's header set), and behind the
#             microversion layer with versioned dispatch
#             (examples/bench_target.rs), the order alternating per round;
#  placement: upstream Placement 16.0.0 (pinned virtualenv, gunicorn with 2
#             sync workers, SQLite) against placement-api (SQLite), each on
#             its own fresh database seeded through its API with the same
#             data (scripts/bench_placement.py: 1,000 providers with
#             inventory, 50 consumers of one project), on seven requests;
#             the allocations the PUT row writes are deleted from both
#             databases after it (bench_placement.py forget-load), so the
#             rows after it read the same data on both sides;
#             with --database postgresql or mysql, both services on that
#             server instead (each its own new database on the local
#             PostgreSQL or MariaDB, dropped at the end);
#  candidates: (only when asked for: --part candidates) GET
#             /allocation_candidates at 1.39 on the rows of issue 24,
#             upstream (gunicorn, 2 sync workers) against placement-api,
#             each row on its own two new databases seeded through the
#             APIs (scripts/bench_placement.py seed-candidates, which
#             describes the data and requests): a, 1,000 flat providers,
#             Nova's request (VCPU, MEMORY_MB, DISK_GB, limit=1000); b,
#             10,000 flat providers, the same; c, 1,000 hosts with two NUMA
#             children and a PCI child, a granular request with required
#             traits, same_subtree and group_policy=isolate; d, 1,000 hosts
#             in 10 aggregates, each with a sharing DISK_GB provider; e, a
#             host with 8 single-unit PCI children and 8 groups,
#             group_policy=isolate, [placement] max_allocation_candidates
#             = 1000 on both sides, with each generation strategy (both
#             sides depth-first, upstream's default, then both
#             breadth-first). Before measuring, the answers must agree
#             (bench_placement.py compare: as sets; rows listed in
#             scripts/bench-candidates-known-differences.txt may differ in
#             which valid candidates a cut keeps); any other difference
#             stops the run. A row where upstream's two workers would hold
#             the queue of --connections requests longer than 2.5 s (its
#             request alone over 0.3125 s with 16) is measured with 2
#             connections on both sides, wrk's timeout 4 times upstream's
#             request (10 s at least) and upstream's runs 2.5 times it
#             (--duration at least); the report says which rows. After
#             each of upstream's runs, the script waits for its workers
#             to finish the requests wrk left behind.
#             --rows picks rows ("b e"); --check seeds small versions (50
#             hosts; row e 5 children and groups, no cut) and only
#             compares the answers (about 35 s, no wrk);
#  keystone:  (only when asked for: --part keystone) the cost of Keystone
#             auth with a warm token cache: GET
#             /resource_providers/{uuid}/inventories on placement-api with
#             noauth2 and with auth_strategy = keystone (the same SQLite
#             database), and on upstream behind keystonemiddleware (its
#             in-process cache; gunicorn, 2 workers), all against a local
#             Keystone (scripts/keystone.sh, started and stopped here).
#  scale:     (only when asked for: --part scale) candidate rows at
#             cloud size, on SQLite or PostgreSQL: a, Nova's flat request
#             over 100,000 providers; c, the NUMA/PCI request over 25,000
#             hosts (100,000 providers); --hosts N changes the hosts. Each
#             row's database is made by upstream's db sync, seeded once
#             through placement-api's API (a few minutes) and copied for
#             upstream (the two share the schema: a file copy, or
#             PostgreSQL's CREATE DATABASE ... TEMPLATE). Upstream's request
#             is timed once, alone, bounded by --upstream-limit seconds
#             (default 900); ours once alone, then under load with 2
#             connections (one per core: p99 is then the request's own
#             time, as in the slow rows) for --rounds runs of --duration.
#             Both must answer as many allocation requests. --check seeds
#             a hundredth and asks once on each side, no wrk.
#  cloud:     (only when asked for: --part cloud) a cloud in
#             simulation (crates/placement/examples/cloud.rs): N compute
#             nodes' Nova report clients at their default intervals, each
#             node with --instances instances (8), and a scheduler booting
#             and deleting instances at the rate that keeps the cloud's
#             size (instances living 8 hours), against placement-api and
#             against upstream (gunicorn, 2 sync workers), on SQLite or
#             PostgreSQL. For each N of --nodes (ascending, default "500
#             1000 2000 4000 8000 16000 32000 64000") the one database is
#             seeded on to N nodes through placement-api's API, copied
#             for upstream, and each side still passing plays --duration
#             seconds (default 75: every node's periodic at least once);
#             a side passes with p99 under 250 ms, no error and every boot
#             placed, and is not run at larger N once it fails. About 2
#             minutes per N and side, plus seeding (64,000 nodes: about
#             4 minutes). --check: 100 nodes for 15 s on each side,
#             passing when every request was answered as Nova takes it
#             and every boot placed, whatever the latency (about a
#             minute; instances living 3 minutes, so that boots and
#             deletes come a few a second; upstream's errors are shown,
#             not failed on; with --binary, the generator cargo test
#             built).
#  log:       (only when asked for: --part log) the request log's cost:
#             two placement-api of one build (SQLite), the log on
#             (standard output to a file) and off (RUST_LOG=warn), on GET
#             / at 1.20 and the 406 of GET /resource_providers at 9.99,
#             alternating; with --binary, that build (about 1 minute with
#             the defaults).
#
# Reports req/s, p50 and p99 (medians over the rounds), non-2xx answers,
# peak RSS over the measured runs (VmHWM, reset after seeding; gunicorn:
# master and workers summed) and the ratios, as
# Markdown on stdout; for the layer also the server's CPU time per request
# (user + system of its process over each run, /proc/PID/stat), which the
# load generator sharing the two cores does not move.
#
#   scripts/bench-load.sh [--part layer|placement|all|keystone|candidates|log|scale|cloud]
#                         [--rounds N] [--duration SECONDS] [--connections N]
#                         [--keep DIR] [--pin | --both] [--database sqlite|postgresql|mysql]
#                         [--rows "a b c d e"] [--check] [--binary PATH]
#                         [--ports FIRST-LAST] [--hosts N] [--upstream-limit SECONDS]
#                         [--nodes "N..."] [--instances K]
#
# --pin runs wrk on CPU 0 and every server on CPU 1 (taskset), so that the
# load generator does not take the servers' core: tail latencies then show
# the server rather than the scheduler. Both sides get the same one core.
# --both (with --part layer) runs the layer unpinned, then pinned, and
# reports both: `scripts/bench-load.sh --part layer --rounds 5 --both` is
# BENCHMARKS.md's layer measurement (about 3 minutes, and up to 2 more
# waiting, before each mode, for the one-minute load average to fall
# below 1.5 after the build and the previous mode). The load average
# before each mode is reported with it; above 1.5, the numbers are marked
# provisional.
#
# Needs wrk (installed with apt-get when missing) and python3. Takes about
# rounds * duration * (3 + 14) seconds, plus builds and about a minute of
# seeding. The candidates part takes about 3 minutes of seeding and
# comparing on a quiet machine (upstream on SQLite: row b's 10,000
# providers in about 70 s, row c's 4,000 in about 50 s; twice that on a
# busy one), plus rounds * duration * 10 seconds and the waits for
# upstream to drain for rows a to d, and rounds * (3.5 * E + duration) * 2
# for row e, where E is upstream's time for e's request (11 s on a quiet
# machine): 14 minutes in all with --rounds 3. --binary runs that placement-api
# (scripts/test.sh: its debug build) rather than a release build;
# --ports, the range the candidates part's two servers listen in. With
# --keep DIR, our SQLite databases of the candidate rows stay in DIR
# (ours-ROW.db) for
# crates/placement/examples/bench_requests.rs.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
. scripts/lib.sh

PART=all; ROUNDS=2; DURATION=; CONNECTIONS=16; KEEP=; PIN=0; BOTH=0; DATABASE=sqlite
CANDIDATE_ROWS=; CHECK=0; BINARY=; PORTS=; HOSTS=; UPSTREAM_LIMIT=900
NODES="250 500 1000 2000 4000 8000 16000 32000 64000"; INSTANCES=8; NODES_GIVEN=0; DURATION_GIVEN=0
LIFETIME_HOURS=8
while [ $# -gt 0 ]; do
  case $1 in
    --part) PART=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    --duration) DURATION=$2; DURATION_GIVEN=1; shift 2 ;;
    --connections) CONNECTIONS=$2; shift 2 ;;
    --keep) KEEP=$2; shift 2 ;;
    --pin) PIN=1; shift ;;
    --both) BOTH=1; shift ;;
    --database) DATABASE=$2; shift 2 ;;
    --rows) CANDIDATE_ROWS=$2; shift 2 ;;
    --check) CHECK=1; shift ;;
    --binary) BINARY=$2; shift 2 ;;
    --ports) PORTS=$2; shift 2 ;;
    --hosts) HOSTS=$2; shift 2 ;;
    --upstream-limit) UPSTREAM_LIMIT=$2; shift 2 ;;
    --nodes) NODES=$2; NODES_GIVEN=1; shift 2 ;;
    --instances) INSTANCES=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
case $PART in layer|placement|all|keystone|candidates|log|scale|cloud) ;; *) echo "--part: layer, placement, all, keystone, candidates, log, scale or cloud" >&2; exit 2 ;; esac
# A cloud's run covers its nodes' 60 s period and more; the others 5 s.
if [ -z "$DURATION" ]; then DURATION=5; [ "$PART" = cloud ] && DURATION=75; fi
[ "$PART" = cloud ] && [ "$DATABASE" = mysql ] && { echo "--part cloud: sqlite or postgresql (the copy for upstream)" >&2; exit 2; }
if [ "$PART" = scale ]; then
  CANDIDATE_ROWS=${CANDIDATE_ROWS:-a c}
  for row in $CANDIDATE_ROWS; do
    case $row in a|c) ;; *) echo "--rows with --part scale: a or c" >&2; exit 2 ;; esac
  done
  [ "$DATABASE" = mysql ] && { echo "--part scale: sqlite or postgresql (the copy for upstream)" >&2; exit 2; }
else
  CANDIDATE_ROWS=${CANDIDATE_ROWS:-a b c d e}
  for row in $CANDIDATE_ROWS; do
    case $row in a|b|c|d|e) ;; *) echo "--rows: a, b, c, d or e" >&2; exit 2 ;; esac
  done
  [ -n "$HOSTS" ] && { echo "--hosts is for --part scale" >&2; exit 2; }
fi
[ "$CHECK" = 1 ] && [ "$PART" != candidates ] && [ "$PART" != scale ] && [ "$PART" != cloud ] &&
  { echo "--check is for --part candidates, scale or cloud" >&2; exit 2; }
# The cloud's short form: 100 nodes, 15 s each side.
if [ "$PART" = cloud ] && [ "$CHECK" = 1 ]; then
  [ "$NODES_GIVEN" = 1 ] || NODES=100
  [ "$DURATION_GIVEN" = 1 ] || DURATION=15
  # Instances living 3 minutes: a few boots and deletes a second.
  LIFETIME_HOURS=0.05
fi
case $DATABASE in sqlite|postgresql|mysql) ;; *) echo "--database: sqlite, postgresql or mysql" >&2; exit 2 ;; esac
if [ "$BOTH" = 1 ] && { [ "$PART" != layer ] || [ "$PIN" = 1 ]; }; then
  echo "--both is for --part layer, without --pin" >&2; exit 2
fi

# client and server: command prefixes placing the load generator and the
# servers on their CPUs (empty unless --pin). The database server of
# --database postgresql or mysql is not pinned: it is the machine's own.
client=() server=()
if [ "$PIN" = 1 ] || [ "$BOTH" = 1 ]; then
  if [ "$(nproc)" -lt 2 ] || ! command -v taskset >/dev/null; then
    echo "--pin needs two CPUs and taskset" >&2; exit 2
  fi
  [ "$PIN" = 1 ] && client=(taskset -c 0) server=(taskset -c 1)
fi

if [ "$CHECK" = 0 ] && ! command -v wrk >/dev/null; then
  echo "installing wrk" >&2
  (apt-get update -qq && apt-get install -y -qq wrk) >/dev/null
fi

target=${CARGO_TARGET_DIR:-$root/target}
work=$(mktemp -d "${TMPDIR:-/tmp}/bench-load.XXXXXX")
out=${KEEP:-$work/out}
mkdir -p "$out"
pids=() databases=() keystone_port=
cleanup() {
  local p d
  [ -n "$keystone_port" ] && bash scripts/keystone.sh stop --port "$keystone_port" 2>/dev/null
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  for d in "${databases[@]}"; do db_drop "$DATABASE" "$d" || true; done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# run_wrk OUTFILE URL [wrk arguments...]
run_wrk() {
  local file=$1 url=$2
  shift 2
  local script_args=()
  [ -n "${WRK_SCRIPT_ARGS:-}" ] && script_args=(-- "$WRK_SCRIPT_ARGS")
  # WRK_CONNECTIONS, WRK_DURATION and WRK_TIMEOUT: the candidates part's
  # slow rows (see there).
  "${client[@]}" wrk -t2 -c"${WRK_CONNECTIONS:-$CONNECTIONS}" -d"${WRK_DURATION:-$DURATION}s" \
    --timeout "${WRK_TIMEOUT:-10}s" --latency "$@" "$url" "${script_args[@]}" > "$file"
}

if [ "$PART" = layer ] || [ "$PART" = all ]; then
  cargo build --release -q -p microversion-server --example bench_target
  # The server's CPU time (user + system, clock ticks) over each run: the
  # routes are in one process and measured one at a time, so the change is
  # the measured route's, whatever the client took of the same cores.
  cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
  # layer_mode unpinned|pinned: one bench_target, the three routes in
  # alternating order, $ROUNDS rounds.
  layer_mode() {
    local mode=$1 client=() server=() pid round kind kinds port
    [ "$mode" = pinned ] && client=(taskset -c 0) server=(taskset -c 1)
    local bare bare_headers layered
    bare=$(free_port 18081-18099)
    bare_headers=$(free_port 18081-18099 "$bare")
    layered=$(free_port 18100-18119)
    "${server[@]}" "$target/release/examples/bench_target" --bare "127.0.0.1:$bare" \
      --bare-headers "127.0.0.1:$bare_headers" --layered "127.0.0.1:$layered" 2>/dev/null &
    pid=$!; pids+=($pid)
    wait_port "$bare" "$pid" 30 && wait_port "$bare_headers" "$pid" 30 && wait_port "$layered" "$pid" 30
    # The fair baseline must answer the layer's header set: the same
    # names and values, but for the date and the request id.
    headers_of() {
      curl -sf -o /dev/null -D - -H 'OpenStack-API-Version: placement 1.20' "http://127.0.0.1:$1/resource" |
        tr -d '\r' | sed -E 's/^date: .*/date: -/; s/^(x-openstack-request-id: req-)[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}$/\1UUID/' | sort
    }
    if [ "$(headers_of "$bare_headers")" != "$(headers_of "$layered")" ]; then
      echo "bare-headers and layered answer different headers:" >&2
      diff <(headers_of "$bare_headers") <(headers_of "$layered") >&2 || true
      exit 1
    fi
    for round in $(seq 1 "$ROUNDS"); do
      # Alternate the order from one round to the next: the fair baseline
      # runs just before the layered route, then just after it.
      kinds="bare bare-headers layered"
      [ $((round % 2)) = 0 ] && kinds="layered bare-headers bare"
      for kind in $kinds; do
        case $kind in bare) port=$bare ;; bare-headers) port=$bare_headers ;; layered) port=$layered ;; esac
        before=$(cpu_ticks "$pid")
        run_wrk "$out/layer.$mode.$kind.$round.txt" "http://127.0.0.1:$port/resource" \
          -H 'OpenStack-API-Version: placement 1.20'
        echo "$(( $(cpu_ticks "$pid") - before )) $(getconf CLK_TCK)" > "$out/layer.$mode.$kind.$round.cpu"
      done
    done
    kill "$pid"; wait "$pid" 2>/dev/null || true
  }
  layer_modes=unpinned
  [ "$PIN" = 1 ] && layer_modes=pinned
  [ "$BOTH" = 1 ] && layer_modes="unpinned pinned"
  for mode in $layer_modes; do
    # The machine's load before each mode. The build and the previous
    # mode weigh on the one-minute figure for a minute or so: wait (at
    # most 120 s) for it to fall below 1.5, then record it; above 1.5 the
    # report marks the numbers provisional.
    for _ in $(seq 1 24); do
      awk '{exit !($1 >= 1.5)}' /proc/loadavg || break
      sleep 5
    done
    cut -d' ' -f1-3 /proc/loadavg > "$out/layer.$mode.load"
    layer_mode "$mode"
  done
  echo "$layer_modes" > "$out/layer.modes"
fi

# with_children PID: PID and its children (gunicorn's workers).
with_children() { echo "$1"; pgrep -P "$1" || true; }

# status_kb FIELD PID: /proc/PID/status's FIELD in kB, of PID and its
# children summed.
status_kb() {
  local total=0 p v
  for p in $(with_children "$2"); do
    v=$(awk -v field="$1:" '$1 == field {print $2}' "/proc/$p/status" 2>/dev/null || echo 0)
    total=$((total + ${v:-0}))
  done
  echo "$total"
}

# peak_rss PID: VmHWM in kB of PID and its children.
peak_rss() { status_kb VmHWM "$1"; }

# reset_peak PID: starts the VmHWM of PID and its children anew (Linux's
# clear_refs 5), so that the peak is that of the load run, not of the
# seeding and comparing before it.
reset_peak() {
  local p
  for p in $(with_children "$1"); do
    echo 5 > "/proc/$p/clear_refs" 2>/dev/null || true
  done
}

if [ "$PART" = placement ] || [ "$PART" = all ]; then
  venv=$(pinned_venv scripts/requirements/upstream.txt)
  cargo build --release -q -p placement --bin placement-api
  cp "$target/release/placement-api" "$work/placement-api"

  # Each service's own new database: a file, or a database on the server.
  # (Called in a command substitution: the caller records what to drop.)
  new_database() {
    case $DATABASE in
      sqlite) db_create sqlite "$work/$1.db" ;;
      *) db_create "$DATABASE" "mv_bench_$1" ;;
    esac
  }
  [ "$DATABASE" = sqlite ] || databases=(mv_bench_upstream mv_bench_ours)
  up_url=$(new_database upstream) || { echo "cannot create upstream's $DATABASE database" >&2; exit 1; }
  ours_url=$(new_database ours) || { echo "cannot create our $DATABASE database" >&2; exit 1; }

  # Upstream: its own db sync on its new database, then gunicorn.
  mkdir -p "$work/etc"
  cat > "$work/etc/placement.conf" <<CONF
[DEFAULT]
log_file = $work/upstream-app.log
[api]
auth_strategy = noauth2
[placement_database]
connection = $up_url
[oslo_policy]
enforce_new_defaults = false
enforce_scope = false
CONF
  "$venv/bin/placement-manage" --config-file "$work/etc/placement.conf" db sync >"$work/sync.log" 2>&1
  UP=$(free_port 18120-18139)
  start_upstream() {
    OS_PLACEMENT_CONFIG_DIR=$work/etc "${server[@]}" "$venv/bin/gunicorn" --bind "127.0.0.1:$UP" --workers "$1" \
      --worker-class sync --no-control-socket placement.wsgi.api:application >>"$work/upstream.log" 2>&1 &
    up_pid=$!; pids+=($up_pid)
    wait_port "$UP" "$up_pid" 60 || { cat "$work/upstream.log" >&2; exit 1; }
  }
  # Each upstream worker adds the standard traits and resource classes
  # when it loads the application; two workers doing it at once on a new
  # SQLite database fail ("database is locked"). One worker does it first.
  start_upstream 1
  curl -sf -o /dev/null "http://127.0.0.1:$UP/"
  kill "$up_pid"; wait "$up_pid" || true
  while port_open "$UP"; do sleep 0.1; done
  start_upstream 2
  OURS=$(free_port 18140-18159)
  "${server[@]}" "$work/placement-api" --bind "127.0.0.1:$OURS" --database "$ours_url" \
    --policy legacy --auth-strategy noauth2 >"$work/ours.log" 2>&1 &
  ours_pid=$!; pids+=($ours_pid)
  wait_port "$OURS" "$ours_pid" 60 || { cat "$work/ours.log" >&2; exit 1; }

  echo "seeding both services through their APIs" >&2
  python3 scripts/bench_placement.py seed "http://127.0.0.1:$UP"
  python3 scripts/bench_placement.py seed "http://127.0.0.1:$OURS"
  python3 scripts/bench_placement.py lua "$work/allocations.lua"
  read -r RP PROJECT < <(python3 scripts/bench_placement.py ids)
  # Idle: seeded, before any load.
  echo "$(status_kb VmRSS "$up_pid") $(status_kb VmRSS "$ours_pid")" > "$out/placement.idle"

  # row NAME: the URL path and wrk arguments of each measured request.
  rows="root not_acceptable providers inventories allocations usages candidates"
  row_args() {
    local auth=(-H 'x-auth-token: admin')
    case $1 in
      root) echo_args / ;;
      not_acceptable) echo_args /resource_providers "${auth[@]}" -H 'openstack-api-version: placement 9.99' ;;
      providers) echo_args /resource_providers "${auth[@]}" -H 'openstack-api-version: placement 1.39' ;;
      inventories) echo_args "/resource_providers/$RP/inventories" "${auth[@]}" -H 'openstack-api-version: placement 1.39' ;;
      allocations) echo_args /allocations "${auth[@]}" -H 'openstack-api-version: placement 1.38' \
        -H 'content-type: application/json' -s "$work/allocations.lua" ;;
      usages) echo_args "/usages?project_id=$PROJECT" "${auth[@]}" -H 'openstack-api-version: placement 1.38' ;;
      # Nova's scheduler query: every provider fits, as many as Nova takes.
      candidates) echo_args "/allocation_candidates?resources=VCPU:1,MEMORY_MB:512,DISK_GB:1&limit=1000" "${auth[@]}" \
        -H 'openstack-api-version: placement 1.39' ;;
    esac
  }
  echo_args() { printf '%s\0' "$@"; }
  rss_up=0 rss_ours=0
  reset_peak "$up_pid"; reset_peak "$ours_pid"
  for round in $(seq 1 "$ROUNDS"); do
    for row in $rows; do
      # Alternate which side goes first from one round to the next.
      sides="upstream ours"; [ $((round % 2)) = 0 ] && sides="ours upstream"
      for side in $sides; do
        port=$UP; [ $side = ours ] && port=$OURS
        mapfile -d '' args < <(row_args "$row")
        # The allocations script makes consumer UUIDs from the round.
        WRK_SCRIPT_ARGS=$round run_wrk "$out/placement.$row.$side.$round.txt" \
          "http://127.0.0.1:$port${args[0]}" "${args[@]:1}"
      done
      r=$(peak_rss "$up_pid"); [ "$r" -gt "$rss_up" ] && rss_up=$r
      r=$(peak_rss "$ours_pid"); [ "$r" -gt "$rss_ours" ] && rss_ours=$r
      # Each side wrote as many allocations as it answered (ours some
      # twenty times upstream's); without them again, the rows after this
      # one read the same data on both sides.
      if [ "$row" = allocations ]; then
        "$venv/bin/python" scripts/bench_placement.py forget-load "$up_url"
        "$venv/bin/python" scripts/bench_placement.py forget-load "$ours_url"
      fi
    done
  done
  echo "$rss_up $rss_ours" > "$out/placement.rss"
fi

# copy_placement_api: --binary's placement-api, or a release build, as
# $work/placement-api.
copy_placement_api() {
  if [ -n "$BINARY" ]; then
    cp "$BINARY" "$work/placement-api"
  else
    cargo build --release -q -p placement --bin placement-api
    cp "$target/release/placement-api" "$work/placement-api"
  fi
}

if [ "$PART" = candidates ]; then
  venv=$(pinned_venv scripts/requirements/upstream.txt)
  copy_placement_api
  [ -n "$KEEP" ] && [ "$DATABASE" = sqlite ] && mkdir -p "$KEEP"
  UP=$(free_port "${PORTS:-18120-18139}")
  OURS=$(free_port "${PORTS:-18140-18159}" "$UP")
  up_pid= ours_pid=

  # conf DIR DATABASE-URL STRATEGY MAX: the placement.conf both services
  # read: noauth2, the legacy policy, the candidate search's settings.
  conf() {
    mkdir -p "$1"
    cat > "$1/placement.conf" <<CONF
[DEFAULT]
log_file = $1/app.log
[api]
auth_strategy = noauth2
[placement]
allocation_candidates_generation_strategy = $3
max_allocation_candidates = $4
[placement_database]
connection = $2
[oslo_policy]
enforce_new_defaults = false
enforce_scope = false
CONF
  }
  stop_servers() {
    local p
    for p in $up_pid $ours_pid; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
    while port_open "$UP" || port_open "$OURS"; do sleep 0.1; done
    up_pid= ours_pid=
  }
  # start_servers ROW STRATEGY MAX: both services on the row's databases.
  start_servers() {
    conf "$work/$1/up" "$up_url" "$2" "$3"
    conf "$work/$1/ours" "$ours_url" "$2" "$3"
    # --timeout: gunicorn aborts a sync worker whose request runs past 30 s
    # (its default) and answers its own 500 page; row e's request alone
    # took upstream 15 s depth-first on a quiet machine, 25.6 s on one at
    # 60 % of that speed, and breadth-first takes longer still.
    start_gunicorn() {
      OS_PLACEMENT_CONFIG_DIR=$work/$1/up "${server[@]}" "$venv/bin/gunicorn" --bind "127.0.0.1:$UP" \
        --workers "$2" --worker-class sync --timeout 600 --no-control-socket placement.wsgi.api:application \
        >>"$work/$1/upstream.log" 2>&1 &
      up_pid=$!; pids+=($up_pid)
      wait_port "$UP" "$up_pid" 60 || { cat "$work/$1/upstream.log" >&2; exit 1; }
    }
    # One worker first, which adds the standard traits and classes (two
    # at once on a new SQLite database fail: see the placement part).
    start_gunicorn "$1" 1
    curl -sf -o /dev/null "http://127.0.0.1:$UP/"
    if [ "$CHECK" = 0 ]; then
      kill "$up_pid"; wait "$up_pid" || true
      while port_open "$UP"; do sleep 0.1; done
      start_gunicorn "$1" 2
    fi
    "${server[@]}" "$work/placement-api" --config-file "$work/$1/ours/placement.conf" --bind "127.0.0.1:$OURS" \
      >>"$work/$1/ours.log" 2>&1 &
    ours_pid=$!; pids+=($ours_pid)
    wait_port "$OURS" "$ours_pid" 60 || { cat "$work/$1/ours.log" >&2; exit 1; }
  }

  for row in $CANDIDATE_ROWS; do
    hosts=()
    # --check: 50 hosts; row e 5 children and groups (120 candidates, all
    # of them: no bound cuts, so the answers must be the same).
    [ "$CHECK" = 1 ] && { if [ "$row" = e ]; then hosts=(--width 5); else hosts=(--hosts 50); fi; }
    mkdir -p "$work/$row"
    case $DATABASE in
      sqlite)
        up_url=$(db_create sqlite "$work/$row/upstream.db")
        ours_url=$(db_create sqlite "$work/$row/ours.db") ;;
      *)
        databases+=("mv_bench_${row}_upstream" "mv_bench_${row}_ours")
        up_url=$(db_create "$DATABASE" "mv_bench_${row}_upstream") || { echo "cannot create a $DATABASE database" >&2; exit 1; }
        ours_url=$(db_create "$DATABASE" "mv_bench_${row}_ours") || { echo "cannot create a $DATABASE database" >&2; exit 1; } ;;
    esac
    max=-1 strategies=depth-first
    [ "$row" = e ] && max=1000 strategies="depth-first breadth-first"
    conf "$work/$row/sync" "$up_url" depth-first "$max"
    "$venv/bin/placement-manage" --config-file "$work/$row/sync/placement.conf" db sync >"$work/$row/sync.log" 2>&1
    for strategy in $strategies; do
      label=$row; [ "$row" = e ] && label=e-${strategy%-first}
      start_servers "$row" "$strategy" "$max"
      if [ "$strategy" = depth-first ]; then
        echo "row $row: seeding both services through their APIs" >&2
        python3 scripts/bench_placement.py seed-candidates "$row" "http://127.0.0.1:$UP" "${hosts[@]}" &
        seed_up=$!
        python3 scripts/bench_placement.py seed-candidates "$row" "http://127.0.0.1:$OURS" "${hosts[@]}"
        wait "$seed_up"
      fi
      echo "row $label: comparing the answers" >&2
      # Prints the seconds each side took for the request, alone.
      times=$(python3 scripts/bench_placement.py compare "$row" "http://127.0.0.1:$UP" "http://127.0.0.1:$OURS" \
        --max-candidates "$max" "${hosts[@]}")
      if [ "$CHECK" = 0 ]; then
        path=$(python3 scripts/bench_placement.py query "$row" "${hosts[@]}")
        # A slow row: when upstream's two workers would keep the queue of
        # CONNECTIONS requests longer than a quarter of wrk's 10 s timeout, both
        # sides get 2 connections (one per upstream worker: latency is
        # then the request's own time), a timeout of 4 times upstream's
        # time, and upstream a run long enough for about two requests
        # on each connection (2.5 times its time, DURATION at least).
        read -r t_up _ <<<"$times"
        conns=$CONNECTIONS timeout=10 up_duration=$DURATION
        if python3 -c "import sys; sys.exit(not float(sys.argv[1]) * int(sys.argv[2]) / 2 > 2.5)" "$t_up" "$CONNECTIONS"; then
          conns=2
          timeout=$(python3 -c "import math, sys; print(max(10, math.ceil(4 * float(sys.argv[1]))))" "$t_up")
          up_duration=$(python3 -c "import math, sys; print(max(int(sys.argv[2]), math.ceil(2.5 * float(sys.argv[1]))))" "$t_up" "$DURATION")
        fi
        echo "$conns $up_duration $timeout $t_up" > "$out/candidates.$label.options"
        reset_peak "$up_pid"; reset_peak "$ours_pid"
        for round in $(seq 1 "$ROUNDS"); do
          sides="upstream ours"; [ $((round % 2)) = 0 ] && sides="ours upstream"
          for side in $sides; do
            port=$UP duration=$up_duration; [ $side = ours ] && port=$OURS duration=$DURATION
            WRK_CONNECTIONS=$conns WRK_DURATION=$duration WRK_TIMEOUT=$timeout \
              run_wrk "$out/candidates.$label.$side.$round.txt" "http://127.0.0.1:$port$path" \
              -H 'x-auth-token: admin' -H 'openstack-api-version: placement 1.39'
            # Upstream's sync workers still answer the requests wrk left
            # queued or in flight: wait for them (a GET / waits behind the
            # queue; one more request's time for the other worker), so
            # that they do not slow the next run.
            if [ $side = upstream ]; then
              curl -s -o /dev/null --max-time 600 "http://127.0.0.1:$UP/" || true
              sleep "$t_up"
            fi
          done
        done
        echo "$(peak_rss "$up_pid") $(peak_rss "$ours_pid")" > "$out/candidates.$label.rss"
      fi
      stop_servers
    done
    if [ "$DATABASE" = sqlite ]; then
      if [ -n "$KEEP" ]; then
        cp "$work/$row/ours.db" "$KEEP/ours-$row.db"
        [ -f "$work/$row/ours.db-wal" ] && cp "$work/$row/ours.db-wal" "$KEEP/ours-$row.db-wal"
      fi
      rm -f "$work/$row"/*.db*
    else
      db_drop "$DATABASE" "mv_bench_${row}_upstream" && db_drop "$DATABASE" "mv_bench_${row}_ours"
    fi
  done
  echo "$CANDIDATE_ROWS" > "$out/candidates.rows"
  [ "$CHECK" = 1 ] && { echo "candidate rows $CANDIDATE_ROWS: upstream's answers and ours agree"; exit 0; }
fi

# ours_up DIR URL (the scale and cloud parts): the copied placement-api
# (noauth2, the legacy policy) on the database URL, on port OURS, its
# output in DIR/ours.log, waited for; ours_down stops it.
ours_up() {
  "${server[@]}" "$work/placement-api" --bind "127.0.0.1:$OURS" --database "$2" --policy legacy \
    --auth-strategy noauth2 >>"$1/ours.log" 2>&1 &
  ours_pid=$!; pids+=($ours_pid)
  wait_port "$OURS" "$ours_pid" 120 || { cat "$1/ours.log" >&2; exit 1; }
}
ours_down() {
  kill "$ours_pid"; wait "$ours_pid" 2>/dev/null || true
  while port_open "$OURS"; do sleep 0.1; done
}

if [ "$PART" = scale ]; then
  venv=$(pinned_venv scripts/requirements/upstream.txt)
  copy_placement_api
  UP=$(free_port "${PORTS:-18120-18139}")
  OURS=$(free_port "${PORTS:-18140-18159}" "$UP")
  for row in $CANDIDATE_ROWS; do
    hosts=$HOSTS
    if [ -z "$hosts" ]; then
      hosts=100000; [ "$row" = c ] && hosts=25000
      [ "$CHECK" = 1 ] && hosts=$((hosts / 100))
    fi
    echo "$hosts" > "$out/scale.$row.hosts"
    mkdir -p "$work/$row"
    # One database seeded once, through placement-api's API, on upstream's
    # schema (its db sync); upstream then reads a copy of it.
    case $DATABASE in
      sqlite)
        ours_url=$(db_create sqlite "$work/$row/ours.db")
        up_url=sqlite:///$work/$row/upstream.db ;;
      postgresql)
        databases+=("mv_scale_${row}_ours" "mv_scale_${row}_upstream")
        ours_url=$(db_create postgresql "mv_scale_${row}_ours") || { echo "cannot create a PostgreSQL database" >&2; exit 1; }
        up_url=$MV_PG_URL/mv_scale_${row}_upstream ;;
    esac
    upstream_db_sync "$venv" "$work/$row" "$ours_url" >"$work/$row/sync.log" 2>&1
    ours_up "$work/$row" "$ours_url"
    echo "row $row: seeding $hosts hosts through placement-api's API" >&2
    start=$(date +%s)
    python3 scripts/bench_placement.py seed-candidates "$row" "http://127.0.0.1:$OURS" --hosts "$hosts"
    echo $(( $(date +%s) - start )) > "$out/scale.$row.seeding"
    ours_down
    case $DATABASE in
      sqlite) cp "$work/$row/ours.db" "$work/$row/upstream.db"
              [ -f "$work/$row/ours.db-wal" ] && cp "$work/$row/ours.db-wal" "$work/$row/upstream.db-wal" ;;
      postgresql) psql_cmd -c "CREATE DATABASE mv_scale_${row}_upstream TEMPLATE mv_scale_${row}_ours" >/dev/null ;;
    esac
    # Upstream's request alone, once (one worker; bounded by
    # --upstream-limit), the database to itself.
    mkdir -p "$work/$row/up"
    printf '[DEFAULT]\nlog_file = %s/app.log\n[api]\nauth_strategy = noauth2\n[placement_database]\nconnection = %s\n[oslo_policy]\nenforce_new_defaults = false\nenforce_scope = false\n' \
      "$work/$row/up" "$up_url" > "$work/$row/up/placement.conf"
    OS_PLACEMENT_CONFIG_DIR=$work/$row/up "${server[@]}" "$venv/bin/gunicorn" --bind "127.0.0.1:$UP" --workers 1 \
      --worker-class sync --timeout "$UPSTREAM_LIMIT" --no-control-socket placement.wsgi.api:application \
      >>"$work/$row/upstream.log" 2>&1 &
    up_pid=$!; pids+=($up_pid)
    wait_port "$UP" "$up_pid" 60 || { cat "$work/$row/upstream.log" >&2; exit 1; }
    echo "row $row: upstream's request, once (at most $UPSTREAM_LIMIT s)" >&2
    python3 scripts/bench_placement.py ask "$row" "http://127.0.0.1:$UP" --hosts "$hosts" --timeout "$UPSTREAM_LIMIT" \
      > "$out/scale.$row.upstream"
    kill "$up_pid"; wait "$up_pid" 2>/dev/null || true
    [ "$DATABASE" = postgresql ] && db_drop postgresql "mv_scale_${row}_upstream"
    rm -f "$work/$row"/upstream.db*
    # Ours: a new process; its first request alone, then under load.
    ours_up "$work/$row" "$ours_url"
    python3 scripts/bench_placement.py ask "$row" "http://127.0.0.1:$OURS" --hosts "$hosts" > "$out/scale.$row.ours"
    read -r _ up_count < "$out/scale.$row.upstream"
    read -r _ ours_count < "$out/scale.$row.ours"
    if [ "$up_count" != "$ours_count" ] && [ "${up_count:-}" != "" ] && ! grep -q timeout "$out/scale.$row.upstream"; then
      echo "row $row: upstream answered $up_count allocation requests, ours $ours_count" >&2; exit 1
    fi
    if [ "$CHECK" = 0 ]; then
      path=$(python3 scripts/bench_placement.py query "$row" --hosts "$hosts")
      reset_peak "$ours_pid"
      for round in $(seq 1 "$ROUNDS"); do
        WRK_CONNECTIONS=2 run_wrk "$out/scale.$row.$round.txt" "http://127.0.0.1:$OURS$path" \
          -H 'x-auth-token: admin' -H 'openstack-api-version: placement 1.39'
      done
      peak_rss "$ours_pid" > "$out/scale.$row.rss"
    fi
    ours_down
    [ "$DATABASE" = sqlite ] && rm -f "$work/$row"/*.db*
    [ "$DATABASE" = postgresql ] && db_drop postgresql "mv_scale_${row}_ours"
  done
  echo "$CANDIDATE_ROWS" > "$out/scale.rows"
  if [ "$CHECK" = 1 ]; then
    for row in $CANDIDATE_ROWS; do
      echo "scale row $row ($(cat "$out/scale.$row.hosts") hosts): upstream $(cat "$out/scale.$row.upstream"), ours $(cat "$out/scale.$row.ours") (seconds, allocation requests)"
    done
    exit 0
  fi
fi

if [ "$PART" = cloud ]; then
  venv=$(pinned_venv scripts/requirements/upstream.txt)
  if [ -n "$BINARY" ]; then
    # The generator `cargo test` built beside the debug binaries.
    cp "$BINARY" "$work/placement-api"
    [ -x "$target/debug/examples/cloud" ] ||
      { echo "--binary: build the generator first (cargo test, or cargo build -p placement --example cloud)" >&2; exit 2; }
    cp "$target/debug/examples/cloud" "$work/cloud"
  else
    cargo build --release -q -p placement --bin placement-api --example cloud
    cp "$target/release/placement-api" "$work/placement-api"
    cp "$target/release/examples/cloud" "$work/cloud"
  fi
  UP=$(free_port "${PORTS:-18120-18139}")
  OURS=$(free_port "${PORTS:-18140-18159}" "$UP")
  mkdir -p "$work/cloud-db"
  case $DATABASE in
    sqlite)
      ours_url=$(db_create sqlite "$work/cloud-db/ours.db")
      up_url=sqlite:///$work/cloud-db/upstream.db ;;
    postgresql)
      databases+=(mv_cloud_ours mv_cloud_upstream)
      ours_url=$(db_create postgresql mv_cloud_ours) || { echo "cannot create a PostgreSQL database" >&2; exit 1; }
      up_url=$MV_PG_URL/mv_cloud_upstream ;;
  esac
  upstream_db_sync "$venv" "$work/cloud-db" "$ours_url" >"$work/cloud-db/sync.log" 2>&1
  # passed FILE: the run served every request within the p99 bound, with
  # no error and no boot without a host.
  passed() {
    python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); sys.exit(not (r["p99_ms"] < 250 and r["errors"] == 0 and r["no_valid_host"] == 0))' "$1"
  }
  ours_up "$work/cloud-db" "$ours_url"
  seeded=0 ours_on=1 up_on=1
  for n in $NODES; do
    echo "cloud: $n nodes: seeding (nodes $seeded on) through placement-api" >&2
    "$work/cloud" seed --url "http://127.0.0.1:$OURS" --nodes "$n" --from "$seeded" --instances "$INSTANCES" \
      2>>"$work/cloud-db/seed.log"
    seeded=$n
    # Upstream plays on a copy of the database as it is before ours plays.
    if [ "$up_on" = 1 ]; then
      ours_down
      case $DATABASE in
        sqlite) rm -f "$work/cloud-db"/upstream.db*
                cp "$work/cloud-db/ours.db" "$work/cloud-db/upstream.db"
                [ -f "$work/cloud-db/ours.db-wal" ] && cp "$work/cloud-db/ours.db-wal" "$work/cloud-db/upstream.db-wal" ;;
        postgresql) db_drop postgresql mv_cloud_upstream
                    psql_cmd -c "CREATE DATABASE mv_cloud_upstream TEMPLATE mv_cloud_ours" >/dev/null ;;
      esac
      ours_up "$work/cloud-db" "$ours_url"
    fi
    for side in ours upstream; do
      if [ $side = ours ]; then
        [ "$ours_on" = 1 ] || continue
        port=$OURS pid=$ours_pid
      else
        [ "$up_on" = 1 ] || continue
        mkdir -p "$work/cloud-db/up"
        printf '[DEFAULT]\nlog_file = %s/app.log\n[api]\nauth_strategy = noauth2\n[placement_database]\nconnection = %s\n[oslo_policy]\nenforce_new_defaults = false\nenforce_scope = false\n' \
          "$work/cloud-db/up" "$up_url" > "$work/cloud-db/up/placement.conf"
        OS_PLACEMENT_CONFIG_DIR=$work/cloud-db/up "${server[@]}" "$venv/bin/gunicorn" --bind "127.0.0.1:$UP" \
          --workers 2 --worker-class sync --timeout 600 --no-control-socket placement.wsgi.api:application \
          >>"$work/cloud-db/upstream.log" 2>&1 &
        up_pid=$!; pids+=($up_pid)
        wait_port "$UP" "$up_pid" 60 || { cat "$work/cloud-db/upstream.log" >&2; exit 1; }
        for _ in 1 2 3 4; do curl -s -o /dev/null "http://127.0.0.1:$UP/"; done
        port=$UP pid=$up_pid
      fi
      echo "cloud: $n nodes: $side plays for $DURATION s" >&2
      reset_peak "$pid"
      "$work/cloud" run --url "http://127.0.0.1:$port" --nodes "$n" --instances "$INSTANCES" --seconds "$DURATION" \
        --lifetime-hours "$LIFETIME_HOURS" \
        > "$out/cloud.$side.$n.json"
      peak_rss "$pid" > "$out/cloud.$side.$n.rss"
      if [ $side = upstream ]; then
        kill "$up_pid"; wait "$up_pid" 2>/dev/null || true
        while port_open "$UP"; do sleep 0.1; done
      fi
      if [ "$CHECK" = 1 ]; then
        # The short form asks of ours only that every request was answered
        # as Nova takes it, boots and deletes done, every boot placed
        # (debug builds: no latency bound); upstream's answers are shown
        # (on SQLite its two workers answer some concurrent writes 500,
        # "database is locked").
        python3 - "$out/cloud.$side.$n.json" "$side at $n nodes" "$side" <<'PY' || exit 1
import json, sys
r = json.load(open(sys.argv[1]))
print("%s: %d requests, %d errors, %d boots (%d without a host), %d deletes, p99 %.1f ms"
      % (sys.argv[2], r["requests"], r["errors"], r["boots"], r["no_valid_host"], r["deletes"], r["p99_ms"]))
if r["errors"]:
    print("first errors: %s" % [e[:200] for e in r["first_errors"][:2]], file=sys.stderr)
if sys.argv[3] == "ours" and (r["errors"] or r["no_valid_host"] or not r["boots"] or not r["deletes"]):
    sys.exit(1)
PY
      elif ! passed "$out/cloud.$side.$n.json"; then
        [ $side = ours ] && ours_on=0 || up_on=0
      fi
    done
    [ "$ours_on" = 0 ] && [ "$up_on" = 0 ] && break
  done
  echo "$NODES" > "$out/cloud.nodes"
  echo "$INSTANCES" > "$out/cloud.instances"
  [ "$CHECK" = 1 ] && { echo "the simulated cloud of $NODES nodes: placement-api answered every request as Nova takes it"; exit 0; }
fi

if [ "$PART" = log ]; then
  copy_placement_api
  # Two placement-api of the same build, each on its own SQLite file: the
  # request log on (the default level, standard output to a file, as a
  # service manager would take it), and off (RUST_LOG=warn).
  LOG_ON=$(free_port 18200-18219)
  LOG_OFF=$(free_port 18200-18219 "$LOG_ON")
  for side in on off; do
    port=$LOG_ON; level=
    [ $side = off ] && port=$LOG_OFF level=warn
    RUST_LOG=$level "${server[@]}" "$work/placement-api" --bind "127.0.0.1:$port" \
      --database "sqlite:///$work/log-$side.db" --policy legacy --auth-strategy noauth2 \
      >"$work/log-$side.out" 2>"$work/log-$side.err" &
    pids+=($!)
    wait_port "$port" "$!" 60 || { cat "$work/log-$side.err" >&2; exit 1; }
  done
  for round in $(seq 1 "$ROUNDS"); do
    for row in root not_acceptable; do
      version='placement 1.20'; path=/
      [ $row = not_acceptable ] && version='placement 9.99' path=/resource_providers
      sides="on off"; [ $((round % 2)) = 0 ] && sides="off on"
      for side in $sides; do
        port=$LOG_ON; [ $side = off ] && port=$LOG_OFF
        run_wrk "$out/log.$row.$side.$round.txt" "http://127.0.0.1:$port$path" \
          -H 'x-auth-token: admin' -H "openstack-api-version: $version"
      done
    done
  done
  # The log on wrote one line per answered request.
  lines=$(grep -c ' INFO placement.requestlog ' "$work/log-on.out" || true)
  echo "$lines" > "$out/log.lines"
fi

if [ "$PART" = keystone ]; then
  venv=$(pinned_venv scripts/requirements/upstream.txt)
  cargo build --release -q -p placement --bin placement-api
  cp "$target/release/placement-api" "$work/placement-api"
  keystone_port=$(free_port 18160-18179)
  eval "$(bash scripts/keystone.sh start --port "$keystone_port")"
  # conf DIR AUTH DATABASE: a placement.conf both services read.
  conf() {
    mkdir -p "$1"
    printf '[DEFAULT]\nlog_file = %s/app.log\n[placement_database]\nconnection = %s\n[oslo_policy]\nenforce_new_defaults = false\nenforce_scope = false\n' \
      "$1" "$3" > "$1/placement.conf"
    if [ "$2" = keystone ]; then
      keystone_authtoken_section >> "$1/placement.conf"
    else
      printf '[api]\nauth_strategy = %s\n' "$2" >> "$1/placement.conf"
    fi
  }
  # start NAME PORT COMMAND...: a server in the background, waited for.
  start() {
    local name=$1 port=$2
    shift 2
    "${server[@]}" "$@" >>"$work/$name.log" 2>&1 &
    pids+=($!)
    wait_port "$port" $! 60 || { cat "$work/$name.log" >&2; exit 1; }
  }
  ours_db=sqlite:///$work/ours.db
  NOAUTH=$(free_port 18140-18159)
  start ours-noauth2 "$NOAUTH" "$work/placement-api" --bind "127.0.0.1:$NOAUTH" --database "$ours_db" --policy legacy \
    --auth-strategy noauth2
  conf "$work/ours-keystone" keystone "$ours_db"
  # Upstream: seeded with noauth2 (one worker: see the placement part),
  # then served behind keystonemiddleware.
  conf "$work/up-noauth2" noauth2 "sqlite:///$work/upstream.db"
  conf "$work/up-keystone" keystone "sqlite:///$work/upstream.db"
  "$venv/bin/placement-manage" --config-file "$work/up-noauth2/placement.conf" db sync >"$work/sync.log" 2>&1
  UP=$(free_port 18120-18139)
  OS_PLACEMENT_CONFIG_DIR=$work/up-noauth2 start up-noauth2 "$UP" "$venv/bin/gunicorn" --bind "127.0.0.1:$UP" \
    --workers 1 --no-control-socket placement.wsgi.api:application
  echo "seeding both services through their APIs" >&2
  python3 scripts/bench_placement.py seed "http://127.0.0.1:$UP"
  python3 scripts/bench_placement.py seed "http://127.0.0.1:$NOAUTH"
  read -r RP PROJECT < <(python3 scripts/bench_placement.py ids)
  kill "${pids[-1]}"; wait "${pids[-1]}" || true
  while port_open "$UP"; do sleep 0.1; done
  OS_PLACEMENT_CONFIG_DIR=$work/up-keystone start up-keystone "$UP" "$venv/bin/gunicorn" --bind "127.0.0.1:$UP" \
    --workers 2 --worker-class sync --no-control-socket placement.wsgi.api:application
  OURS=$(free_port 18180-18199)
  start ours-keystone "$OURS" "$work/placement-api" --config-file "$work/ours-keystone/placement.conf" --bind "127.0.0.1:$OURS"
  token=$(keystone_token "$KEYSTONE_URL" "$KEYSTONE_ADMIN_USER" "$KEYSTONE_ADMIN_PASSWORD" \
    "{\"project\": {\"name\": \"$KEYSTONE_ADMIN_PROJECT\", \"domain\": {\"id\": \"default\"}}}")
  path=/resource_providers/$RP/inventories
  for side in "ours-keystone $OURS $token" "upstream-keystone $UP $token" "ours-noauth2 $NOAUTH admin"; do
    set -- $side
    # Warm: the token validated and cached (in each gunicorn worker too).
    for _ in 1 2 3 4; do
      code=$(curl -s -o /dev/null -w '%{http_code}' -H "x-auth-token: $3" -H 'openstack-api-version: placement 1.39' "http://127.0.0.1:$2$path")
      [ "$code" = 200 ] || { echo "$1 answered $code to the warm-up" >&2; exit 1; }
    done
  done
  for round in $(seq 1 "$ROUNDS"); do
    sides="ours-noauth2 ours-keystone upstream-keystone"
    [ $((round % 2)) = 0 ] && sides="upstream-keystone ours-keystone ours-noauth2"
    for side in $sides; do
      case $side in
        ours-noauth2) port=$NOAUTH auth=admin ;;
        ours-keystone) port=$OURS auth=$token ;;
        upstream-keystone) port=$UP auth=$token ;;
      esac
      run_wrk "$out/keystone.$side.$round.txt" "http://127.0.0.1:$port$path" \
        -H "x-auth-token: $auth" -H 'openstack-api-version: placement 1.39'
    done
  done
fi

python3 - "$out" "$ROUNDS" "$PART" "$DATABASE" <<'PY'
import os, re, statistics, sys
out, rounds, part, database = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
# wrk writes a latency of a minute or more in minutes (and hours).
MS_PER_UNIT = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60_000.0, "h": 3_600_000.0}
UNIT = "|".join(MS_PER_UNIT)
def percentile_ms(text, pct):
    value, unit = re.search(rf"{pct}%\s+([\d.]+)({UNIT})\b", text).groups()
    return float(value) * MS_PER_UNIT[unit]
def read(path):
    text = open(path).read()
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
    p50 = percentile_ms(text, 50)
    p99 = percentile_ms(text, 99)
    total = int(re.search(r"(\d+) requests in", text).group(1))
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    sock = re.search(r"Socket errors: (.*)", text)
    statuses = re.search(r"statuses: (.*)", text)
    notes = [f"socket errors: {sock.group(1)}" if sock else "", statuses.group(1) if statuses else ""]
    return rps, p50, p99, total, int(bad.group(1)) if bad else 0, ", ".join(n for n in notes if n)
def median(runs):
    return (statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs),
            statistics.median(r[2] for r in runs), sum(r[3] for r in runs), sum(r[4] for r in runs),
            "; ".join(r[5] for r in runs if r[5]))
if part in ("layer", "all"):
    kinds = ("bare", "bare-headers", "layered")
    modes = open(f"{out}/layer.modes").read().split()
    for mode in modes:
        load = open(f"{out}/layer.{mode}.load").read().split()
        runs = {k: [read(f"{out}/layer.{mode}.{k}.{r}.txt") for r in range(1, rounds + 1)] for k in kinds}
        m = {k: median(runs[k]) for k in kinds}
        def cpu_us(k, r):
            ticks, hz = (int(x) for x in open(f"{out}/layer.{mode}.{k}.{r}.cpu").read().split())
            return ticks / hz * 1e6 / read(f"{out}/layer.{mode}.{k}.{r}.txt")[3]
        cpu = {k: statistics.median(cpu_us(k, r) for r in range(1, rounds + 1)) for k in kinds}
        note = " (above 1.5: provisional numbers)" if float(load[0]) > 1.5 else ""
        print(f"Layer, {mode}, {rounds} rounds (medians); load average before: {', '.join(load)}{note}.")
        print()
        print("| route | req/s | p50 ms | p99 ms | server CPU us per request | non-2xx |")
        print("|---|---|---|---|---|---|")
        for k in kinds:
            print(f"| {k} | {m[k][0]:.0f} | {m[k][1]:.3f} | {m[k][2]:.3f} | {cpu[k]:.2f} | {m[k][4]} |")
        for base in ("bare-headers", "bare"):
            print(f"| ratio layered/{base} | **{m['layered'][0] / m[base][0]:.3f}** | {m['layered'][1] / m[base][1]:.3f} "
                  f"| {m['layered'][2] / m[base][2]:.3f} | {cpu[base] / cpu['layered']:.3f} | |")
        per_round = ", ".join(f"{runs['layered'][r][0] / runs['bare-headers'][r][0]:.3f}" for r in range(rounds))
        print()
        print(f"Ratios divide layered by the baseline (server CPU: baseline / layered, requests per CPU second). "
              f"Each round's req/s ratio layered/bare-headers: {per_round} (target >= 0.97 on the median).")
        print()
if part == "log":
    rows = {"root": "GET / at 1.20", "not_acceptable": "GET /resource_providers at 9.99 (406)"}
    print("placement-api with its request log on (standard output to a file) and off (RUST_LOG=warn), "
          f"{rounds} rounds alternating (medians).")
    print()
    print("| request | log on req/s | log off req/s | on/off | on p50 / p99 ms | off p50 / p99 ms |")
    print("|---|---|---|---|---|---|")
    total = 0
    for row, name in rows.items():
        on = median([read(f"{out}/log.{row}.on.{r}.txt") for r in range(1, rounds + 1)])
        off = median([read(f"{out}/log.{row}.off.{r}.txt") for r in range(1, rounds + 1)])
        total += on[3]
        print(f"| {name} | {on[0]:.0f} | {off[0]:.0f} | **{on[0] / off[0]:.3f}** | {on[1]:.3f} / {on[2]:.3f} "
              f"| {off[1]:.3f} / {off[2]:.3f} |")
    lines = int(open(f"{out}/log.lines").read())
    print()
    print(f"Request lines written by the log on: {lines:,} for {total:,} requests wrk counted "
          "(wrk does not count the requests in flight when a run ends).")
if part == "keystone":
    m = {k: median([read(f"{out}/keystone.{k}.{r}.txt") for r in range(1, rounds + 1)])
         for k in ("ours-noauth2", "ours-keystone", "upstream-keystone")}
    print("GET /resource_providers/{uuid}/inventories, warm token cache, SQLite.")
    print()
    print("| side | req/s | p50 ms | p99 ms | non-2xx (of total) |")
    print("|---|---|---|---|---|")
    for k, v in m.items():
        print(f"| {k} | {v[0]:.0f} | {v[1]:.3f} | {v[2]:.3f} | {v[4]}/{v[3]} |")
    ks, na, up = m["ours-keystone"], m["ours-noauth2"], m["upstream-keystone"]
    print()
    print(f"Keystone auth costs placement-api {(1 - ks[0] / na[0]) * 100:.1f} % of its req/s "
          f"(keystone/noauth2 req/s {ks[0] / na[0]:.3f}, p99 {ks[2] / na[2]:.3f}); "
          f"behind Keystone, ours/upstream req/s {ks[0] / up[0]:.1f}x, p99 ratio {ks[2] / up[2]:.3f}.")
if part == "candidates":
    rows = open(f"{out}/candidates.rows").read().split()
    names = {
        "a": "a. 1,000 flat providers, Nova's request",
        "b": "b. 10,000 flat providers, Nova's request",
        "c": "c. 1,000 hosts, NUMA and PCI children, same_subtree",
        "d": "d. 1,000 hosts, 10 aggregates sharing DISK_GB",
        "e-depth": "e. 8 PCI children, 8 groups, isolate; depth-first",
        "e-breadth": "e. the same, breadth-first",
    }
    print(f"GET /allocation_candidates at 1.39, both services on "
          f"{dict(sqlite='SQLite files', postgresql='the local PostgreSQL', mysql='the local MariaDB')[database]}.")
    print()
    print("| row | req/s upstream / ours | ratio | upstream p50 / p99 ms | ours p50 / p99 ms | p99 ratio | non-2xx upstream / ours (of total) | peak RSS upstream / ours MiB |")
    print("|---|---|---|---|---|---|---|---|")
    for label, name in names.items():
        if label.split("-")[0] not in rows:
            continue
        up = median([read(f"{out}/candidates.{label}.upstream.{r}.txt") for r in range(1, rounds + 1)])
        us = median([read(f"{out}/candidates.{label}.ours.{r}.txt") for r in range(1, rounds + 1)])
        errs = f"{up[4]}/{up[3]} / {us[4]}/{us[3]}"
        if up[5] or us[5]:
            errs += f" (upstream: {up[5] or '-'}; ours: {us[5] or '-'})"
        rss_up, rss_ours = (int(x) for x in open(f"{out}/candidates.{label}.rss").read().split())
        ratio = lambda a, b, f: f.format(a / b) if b else "-"
        print(f"| {name} | {up[0]:,.2f} / {us[0]:,.0f} | {ratio(us[0], up[0], '{:.1f}x')} | {up[1]:,.0f} / {up[2]:,.0f} "
              f"| {us[1]:.1f} / {us[2]:.1f} | {ratio(us[2], up[2], '{:.3f}')} | {errs} "
              f"| {rss_up / 1024:.0f} / {rss_ours / 1024:.0f} |")
    print()
    for label, name in names.items():
        if label.split("-")[0] not in rows:
            continue
        conns, up_duration, timeout, t_up = open(f"{out}/candidates.{label}.options").read().split()
        note = f"upstream's request alone {float(t_up):.2f} s"
        if int(conns) == 2:
            note += (f"; a slow row: 2 connections on both sides, wrk timeout {timeout} s, "
                     f"upstream's runs {up_duration} s")
        print(f"- {name.split('.')[0]}{' ' + label.split('-')[1] + '-first' if '-' in label else ''}: {note}")
if part == "cloud":
    import json, os
    nodes = [int(n) for n in open(f"{out}/cloud.nodes").read().split()]
    instances = open(f"{out}/cloud.instances").read().strip()
    print(f"A cloud in simulation on {dict(sqlite='a SQLite file', postgresql='the local PostgreSQL')[database]}: "
          f"N nodes' report clients ({instances} instances each) and the scheduler's boots and deletes; "
          f"a run passes with p99 < 250 ms, no error and every boot placed.")
    print()
    print("| side | nodes | req/s | p50 / p99 / max ms | errors | boots (no host) / deletes | claim retries | peak RSS MiB | passed |")
    print("|---|---|---|---|---|---|---|---|---|")
    best = {}
    for side in ("ours", "upstream"):
        for n in nodes:
            path = f"{out}/cloud.{side}.{n}.json"
            if not os.path.exists(path):
                continue
            r = json.load(open(path))
            ok = r["p99_ms"] < 250 and r["errors"] == 0 and r["no_valid_host"] == 0
            if ok:
                best[side] = n
            rss = int(open(f"{out}/cloud.{side}.{n}.rss").read())
            print(f"| {side} | {n:,} | {r['per_second']:,.0f} | {r['p50_ms']:.1f} / {r['p99_ms']:.1f} / {r['max_ms']:.0f} "
                  f"| {r['errors']} | {r['boots']} ({r['no_valid_host']}) / {r['deletes']} | {r['claim_retries']} "
                  f"| {rss / 1024:.0f} | {'yes' if ok else 'no'} |")
            for e in r["first_errors"][:2]:
                print(f"|  | | | | {e[:200]} | | | | |")
    print()
    b_ours, b_up = best.get("ours"), best.get("upstream")
    print(f"Largest N served: ours {b_ours or 'none'}, upstream {b_up or 'none'}"
          + (f", ratio {b_ours / b_up:.0f}x" if b_ours and b_up else "")
          + (" (ours passed the largest N tried: more nodes may pass)" if b_ours == nodes[-1] else "") + ".")
    last = max((n for n in nodes if os.path.exists(f"{out}/cloud.ours.{n}.json")), default=None)
    if last:
        r = json.load(open(f"{out}/cloud.ours.{last}.json"))
        print()
        print(f"Ours at {last:,} nodes, by request: " + "; ".join(
            f"{k} {v['requests']:,} (p50 {v['p50_ms']:.1f}, p99 {v['p99_ms']:.1f} ms)" for k, v in r["by_kind"].items()))
if part == "scale":
    names = {"a": "Nova's flat request, limit=1000", "c": "NUMA/PCI hosts, same_subtree, limit=1000"}
    print(f"GET /allocation_candidates at 1.39 on "
          f"{dict(sqlite='a SQLite file', postgresql='the local PostgreSQL')[database]}, seeded once "
          f"through placement-api's API; ours under load with 2 connections, upstream's request once.")
    print()
    print("| row | providers | ours req/s | ours p50 / p99 ms | non-2xx (of total) | peak RSS MiB | ours alone s | upstream alone s | alone ratio | seeding s |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for row in open(f"{out}/scale.rows").read().split():
        hosts = int(open(f"{out}/scale.{row}.hosts").read())
        providers = hosts * (4 if row == "c" else 1)
        us = median([read(f"{out}/scale.{row}.{r}.txt") for r in range(1, rounds + 1)])
        ours_alone = float(open(f"{out}/scale.{row}.ours").read().split()[0])
        up = open(f"{out}/scale.{row}.upstream").read().split()
        if up[0] == "timeout":
            up_alone, ratio = f"over {float(up[1]):.0f}", f"over {float(up[1]) / ours_alone:,.0f}x"
        else:
            up_alone, ratio = f"{float(up[0]):.2f}", f"{float(up[0]) / ours_alone:,.0f}x"
        rss = int(open(f"{out}/scale.{row}.rss").read())
        seeding = open(f"{out}/scale.{row}.seeding").read().strip()
        print(f"| {row}. {names[row]} | {providers:,} ({hosts:,} hosts) | {us[0]:,.1f} | {us[1]:.1f} / {us[2]:.1f} "
              f"| {us[4]}/{us[3]} | {rss / 1024:.0f} | {ours_alone:.3f} | {up_alone} | {ratio} | {seeding} |")
if part in ("placement", "all"):
    names = {
        "root": "GET /",
        "not_acceptable": "GET /resource_providers at 9.99 (406)",
        "providers": "GET /resource_providers (1,000, at 1.39)",
        "inventories": "GET /resource_providers/{uuid}/inventories",
        "allocations": "PUT /allocations/{consumer} (new consumer each)",
        "usages": "GET /usages?project_id= (50 consumers)",
        "candidates": "GET /allocation_candidates (1,000 of 1,000 providers)",
    }
    print(f"Both services on {dict(sqlite='SQLite files', postgresql='the local PostgreSQL', mysql='the local MariaDB')[database]}.")
    print()
    print("| request | upstream req/s | ours req/s | req/s ratio | upstream p50 / p99 ms | ours p50 / p99 ms | p99 ratio ours/upstream | non-2xx upstream / ours (of total) |")
    print("|---|---|---|---|---|---|---|---|")
    for row, name in names.items():
        up = median([read(f"{out}/placement.{row}.upstream.{r}.txt") for r in range(1, rounds + 1)])
        us = median([read(f"{out}/placement.{row}.ours.{r}.txt") for r in range(1, rounds + 1)])
        errs = f"{up[4]}/{up[3]} / {us[4]}/{us[3]}"
        if up[5] or us[5]:
            errs += f" (upstream: {up[5] or '-'}; ours: {us[5] or '-'})"
        print(f"| {name} | {up[0]:.0f} | {us[0]:.0f} | {us[0] / up[0]:.1f}x | {up[1]:.2f} / {up[2]:.2f} | {us[1]:.3f} / {us[2]:.3f} | {us[2] / up[2]:.3f} | {errs} |")
    rss_up, rss_ours = (int(x) for x in open(f"{out}/placement.rss").read().split())
    print()
    print(f"Peak RSS (VmHWM): upstream (gunicorn master + 2 workers) {rss_up / 1024:.1f} MiB, "
          f"placement-api {rss_ours / 1024:.1f} MiB, ratio ours/upstream {rss_ours / rss_up:.3f}.")
    idle_up, idle_ours = (int(x) for x in open(f"{out}/placement.idle").read().split())
    print(f"Idle RSS (VmRSS, seeded, before the load): upstream {idle_up / 1024:.1f} MiB, "
          f"placement-api {idle_ours / 1024:.1f} MiB, ratio ours/upstream {idle_ours / idle_up:.3f}.")
PY
