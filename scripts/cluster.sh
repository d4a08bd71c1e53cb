#!/usr/bin/env bash
# Several placement-api instances on one database, with racing allocation
# writes spread over all of them (scripts/reliability/cluster.py checks
# no over-allocation, no lost acknowledged write, every conflict resolved
# by a retry, no 5xx):
#
#   bash scripts/cluster.sh race   --backend postgresql|mysql [--instances N]
#   bash scripts/cluster.sh galera [--no-kill]
#   bash scripts/cluster.sh bench
#
#   race    N instances (default 4) on one new database of the backend
#           (the servers of scripts/lib.sh: MV_PG_URL, MV_MYSQL_URL); the
#           instances' allocation write counters (/metrics) must show
#           retries, each conflict retried or given up.
#   galera  a three-node Galera cluster (scripts/galera.sh, in a fresh
#           directory, stopped and removed at the end), one instance on
#           each node; after a third of the run node 3 is killed with
#           SIGKILL, stays down 3 s, and joins again: its instance must
#           answer 503 promptly and the others keep serving; every
#           acknowledged write must be on every node afterwards.
#           --no-kill: the racing writes only.
#   bench   throughput of 1, 2 and 4 instances on PostgreSQL and on MySQL
#           (a race of --seconds each), one table row per run.
#
# Options: --binary PATH (default: target/release/placement-api, built
# when missing), --seconds S (default 20; bench 10), --writers W (default
# 16). MV_PORTS (FIRST-LAST) limits the ports used. Each run prints
# cluster.py's JSON report; the exit status is 1 when a check failed.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

usage() { echo "cluster.sh: $1 (see --help)" >&2; exit 2; }
cmd=${1:-}
case $cmd in
  race|galera|bench) shift ;;
  -h|--help) sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
  '') usage "a command is needed: race, galera or bench" ;;
  *) usage "unknown command $cmd" ;;
esac
backend= instances=4 binary= seconds= writers=16 kill=1
while [ $# -gt 0 ]; do
  case $1 in
    --backend) [ $# -ge 2 ] || usage "--backend needs a value"; backend=$2; shift 2 ;;
    --instances) [ $# -ge 2 ] || usage "--instances needs a value"; instances=$2; shift 2 ;;
    --binary) [ $# -ge 2 ] || usage "--binary needs a value"; binary=$2; shift 2 ;;
    --seconds) [ $# -ge 2 ] || usage "--seconds needs a value"; seconds=$2; shift 2 ;;
    --writers) [ $# -ge 2 ] || usage "--writers needs a value"; writers=$2; shift 2 ;;
    --no-kill) kill=0; shift ;;
    *) usage "unknown option $1" ;;
  esac
done
[[ $instances =~ ^[1-9][0-9]?$ ]] || usage "--instances is a number from 1 to 99"
[[ $writers =~ ^[1-9][0-9]*$ ]] || usage "--writers is a positive number"
[ -z "$seconds" ] || [[ $seconds =~ ^[1-9][0-9]*$ ]] || usage "--seconds is a positive number"
if [ "$cmd" = race ]; then
  case $backend in postgresql|mysql) ;; '') usage "race needs --backend" ;; *) usage "--backend is postgresql or mysql" ;; esac
fi
if [ -z "$binary" ]; then
  binary=${CARGO_TARGET_DIR:-target}/release/placement-api
  [ -x "$binary" ] || cargo build --release -p placement --bin placement-api
fi
[ -x "$binary" ] || usage "no placement-api at $binary"

work=$(mktemp -d "${TMPDIR:-/tmp}/placement-cluster.XXXXXX")
pids=() dbs=() galera_dir=
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  for db in "${dbs[@]}"; do db_drop "${db%%:*}" "${db#*:}" >/dev/null 2>&1 || true; done
  if [ -n "$galera_dir" ]; then
    bash scripts/galera.sh stop --dir "$galera_dir" || true
    rm -rf "$galera_dir"
  fi
  rm -rf "$work"
}
trap cleanup EXIT

# start_instances URL...: one placement-api per database URL; the first
# creates the schema before the others start (on Galera the sync's
# GET_LOCK is local to a node, so syncs on two nodes at once would race);
# sets urls.
start_instances() {
  local i=0 u port mport started=() taken=()
  urls=() metrics=()
  for u in "$@"; do
    # Not the same port twice when two are picked before either listens.
    port=$(free_port "${MV_PORTS:-}" "${taken[@]}") || return 1
    mport=$(free_port "${MV_PORTS:-}" "${taken[@]}" "$port") || return 1
    taken+=("$port" "$mport")
    i=$((i + 1))
    "$binary" --bind "127.0.0.1:$port" --metrics-bind "127.0.0.1:$mport" --database "$u" --policy legacy --auth-strategy noauth2 \
      >"$work/api-$i.log" 2>&1 &
    pids+=($!)
    metrics+=("http://127.0.0.1:$mport/metrics")
    started+=($!)
    urls+=("http://127.0.0.1:$port")
    [ "$i" = 1 ] || continue
    wait_port "$port" "$!" 60 || { cat "$work/api-$i.log" >&2; return 1; }
  done
  for i in "${!urls[@]}"; do
    wait_port "${urls[$i]##*:}" "${started[$i]}" 60 || { cat "$work/api-$((i + 1)).log" >&2; return 1; }
  done
}

# sql_command BACKEND DB [PORT]: a command reading SQL on stdin (for --sql).
sql_command() {
  case $1 in
    postgresql) echo "psql postgresql://${MV_PG_URL#*://}/$2 -X -q -A -t -F | -v ON_ERROR_STOP=1" ;;
    mysql) echo "mysql $(_mysql_args | tr '\n' ' ') -N -B $2" ;;
    galera) echo "mariadb --no-defaults --protocol=TCP -h 127.0.0.1 -P $3 -u root -N -B $2" ;;
  esac
}

# race BACKEND N SECONDS: a race of N instances on a new database.
race() {
  local backend=$1 n=$2 secs=$3 name url args=() u
  name=mvtest_cluster_$$_$n
  url=$(db_create "$backend" "$name")
  dbs+=("$backend:$name")
  local list=()
  for _ in $(seq "$n"); do list+=("$url"); done
  start_instances "${list[@]}"
  for u in "${urls[@]}"; do args+=(--url "$u"); done
  python3 scripts/reliability/cluster.py "${args[@]}" --sql "$(sql_command "$backend" "$name")" \
    --writers "$writers" --seconds "$secs" --max-request-seconds 30 || return 1
  write_conflict_metrics
}

# write_conflict_metrics: the allocation write counters of every
# instance's /metrics, summed: the race must have made writes try again,
# and each conflict is either followed by a retry or ends the write
# (conflicts = retries + writes that gave up).
write_conflict_metrics() {
  local m text
  for m in "${metrics[@]}"; do
    text+=$(curl -fsS "$m") || { echo "cluster.sh: no metrics at $m" >&2; return 1; }
    text+=$'\n'
  done
  python3 -c '
import sys
sums = {}
for line in sys.stdin:
    name, _, value = line.rpartition(" ")
    if name.startswith("placement_allocation_write_"):
        sums[name] = sums.get(name, 0) + float(value)
conflicts, retries, failures = (int(sums.get(f"placement_allocation_write_{k}_total", 0))
                                for k in ("conflicts", "retries", "failures"))
print(f"metrics of all instances: {conflicts} write conflicts, {retries} retries, {failures} gave up",
      file=sys.stderr)
ok = retries >= 1 and conflicts == retries + failures
if not ok:
    print("cluster.sh: the allocation write counters do not add up (or no retry was counted)", file=sys.stderr)
sys.exit(0 if ok else 1)' <<<"$text"
}

stop_instances() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  pids=()
}

case $cmd in
  race)
    race "$backend" "$instances" "${seconds:-20}"
    ;;
  bench)
    failed=0
    printf '| database | instances | requests/s | PUT/s | PUT p50 ms | PUT p99 ms | acknowledged | 409 capacity | 409 conflicts (all resolved) |\n|---|---|---|---|---|---|---|---|---|\n' > "$work/table"
    for backend in postgresql mysql; do
      for n in 1 2 4; do
        echo "== $backend, $n instance(s)" >&2
        if race "$backend" "$n" "${seconds:-10}" > "$work/report.json"; then :; else failed=1; fi
        cat "$work/report.json" >&2
        python3 - "$backend" "$n" "$work/report.json" >> "$work/table" <<'PY'
import json, sys
r = json.load(open(sys.argv[3]))
c = r["counts"]
name = {"postgresql": "PostgreSQL", "mysql": "MariaDB"}[sys.argv[1]]
print(f"| {name} | {sys.argv[2]} | {r['requests_per_s']:,} | {r['puts_per_s']:,} | {r['put_p50_ms']} "
      f"| {r['put_p99_ms']} | {c['acked']:,} | {c['refused_capacity']:,} | {c['conflicts_409']:,} |")
PY
        stop_instances
        for db in "${dbs[@]}"; do db_drop "${db%%:*}" "${db#*:}" >/dev/null 2>&1 || true; done
        dbs=()
      done
    done
    cat "$work/table"
    exit "$failed"
    ;;
  galera)
    galera_dir=$work/galera
    # The nodes may run as another user (galera.sh): let it reach its dir.
    chmod 711 "$work"
    galera_env=$(bash scripts/galera.sh start --dir "$galera_dir")
    eval "$galera_env"
    read -r -a gports <<< "$GALERA_PORTS"
    name=mvtest_galera
    mariadb --no-defaults --protocol=TCP -h 127.0.0.1 -P "${gports[0]}" -u root -e "CREATE DATABASE $name"
    list=() sqls=()
    for p in "${gports[@]}"; do
      list+=("mysql+pymysql://root@127.0.0.1:$p/$name?charset=utf8")
      sqls+=(--sql "$(sql_command galera "$name" "$p")")
    done
    start_instances "${list[@]}"
    args=()
    for u in "${urls[@]}"; do args+=(--url "$u"); done
    secs=${seconds:-20}
    if [ "$kill" = 1 ]; then
      last=${#gports[@]}
      args+=(--kill-cmd "bash scripts/galera.sh kill --dir $galera_dir $last"
             --rejoin-cmd "bash scripts/galera.sh join --dir $galera_dir $last"
             --killed-url "${urls[$((last - 1))]}" --kill-after "$((secs / 3))" --down-seconds 3)
    fi
    status=0
    python3 scripts/reliability/cluster.py "${args[@]}" "${sqls[@]}" \
      --writers "$writers" --seconds "$secs" --max-request-seconds 30 || status=1
    # The conflicts Galera met: transactions that failed certification at
    # commit, and local ones aborted by a replicated write (both reach
    # placement-api as MySQL's deadlock, 1213, and are retried).
    k=0
    for p in "${gports[@]}"; do
      k=$((k + 1))
      echo "galera node $k: $(mariadb --no-defaults --protocol=TCP -h 127.0.0.1 -P "$p" -u root -N -B -e \
        "SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_local_cert_failures', 'wsrep_local_bf_aborts', 'wsrep_cluster_size')" \
        | tr '\t\n' '= ')" >&2
    done
    if [ "$kill" = 1 ]; then
      log=$galera_dir/node${#gports[@]}/error.log
      if grep -q "IST received" "$log"; then how=IST; elif grep -q "SST received\|SST succeeded" "$log"; then how=SST; else how=unknown; fi
      echo "galera node ${#gports[@]} rejoined by $how" >&2
    fi
    exit "$status"
    ;;
esac
