#!/usr/bin/env bash
# A MariaDB Galera cluster on loopback for the cluster tests: N mariadbd
# processes (default 3) of the machine's MariaDB server with Debian's
# galera-4 provider, each with its own data directory, socket and ports
# (SQL, group communication, IST, SST) on 127.0.0.1, in the background.
#
#   scripts/galera.sh start  [--dir DIR] [--nodes N]
#   scripts/galera.sh stop   [--dir DIR]
#   scripts/galera.sh status [--dir DIR]
#   scripts/galera.sh kill   [--dir DIR] NODE
#   scripts/galera.sh join   [--dir DIR] NODE
#
#   start   makes the cluster on first use (mariadb-install-db, a root user
#           for 127.0.0.1 without password), bootstraps it from one node
#           (--wsrep-new-cluster: the node safe to bootstrap, else node 1)
#           and starts the others, which join by IST or SST (rsync); waits
#           until every node is Synced. Prints the variables (export lines)
#           on stdout, the rest on stderr, so
#           `eval "$(scripts/galera.sh start)"` works:
#             GALERA_DIR    the data directory
#             GALERA_NODES  the number of nodes
#             GALERA_PORTS  the SQL ports, node 1 first, space-separated
#             GALERA_URLS   mysql+pymysql://root@127.0.0.1:PORT per node
#   stop    stops every node (SIGTERM, the last one stopped is the one
#           safe to bootstrap), and removes nothing.
#   status  one line per node: its number, SQL port, pid (or "stopped"),
#           wsrep_local_state_comment and wsrep_cluster_size; exit status 1
#           when a node is not Synced.
#   kill    SIGKILL to node NODE's mariadbd (what a crash does).
#   join    starts node NODE again (after stop or kill) and waits until it
#           is Synced with the cluster.
#
#   --dir    where the nodes live (default MV_GALERA_DIR, else
#            ${TMPDIR:-/tmp}/microversion-galera); remove it after stop to
#            start afresh. Each node has DIR/nodeK/ with my.cnf, data/,
#            the socket and error.log; DIR/ports.env keeps the ports picked
#            on first start (MV_PORTS, FIRST-LAST, limits them).
#   --nodes  the number of nodes of a new cluster (default 3).
#
# MV_GALERA_TIMEOUT (default 120) is how many seconds a node may take to
# reach Synced. The machine's own MariaDB (3306) is not touched.
#
# Exit status: 0 on success, 1 on failure, 2 on bad usage.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

usage() { echo "galera.sh: $1 (see --help)" >&2; exit 2; }
cmd=${1:-}
case $cmd in
  start|stop|status|kill|join) shift ;;
  -h|--help) sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
  '') usage "a command is needed: start, stop, status, kill or join" ;;
  *) usage "unknown command $cmd" ;;
esac
dir=${MV_GALERA_DIR:-${TMPDIR:-/tmp}/microversion-galera} nodes=3 node=
while [ $# -gt 0 ]; do
  case $1 in
    --dir) [ $# -ge 2 ] || usage "--dir needs a value"; dir=$2; shift 2 ;;
    --nodes) [ $# -ge 2 ] || usage "--nodes needs a value"; nodes=$2; shift 2 ;;
    -*) usage "unknown option $1" ;;
    *) [ -z "$node" ] || usage "unexpected argument $1"; node=$1; shift ;;
  esac
done
[[ $nodes =~ ^[0-9]+$ ]] && [ "$nodes" -ge 1 ] && [ "$nodes" -le 9 ] || usage "--nodes is a number from 1 to 9"
case $cmd in
  kill|join) [[ $node =~ ^[0-9]+$ ]] || usage "$cmd needs a node number" ;;
  *) [ -z "$node" ] || usage "$cmd takes no node number" ;;
esac
timeout=${MV_GALERA_TIMEOUT:-120}
provider=/usr/lib/galera/libgalera_smm.so
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
# As root, the nodes run as the mysql user: the rsync daemon of an SST,
# started by root, would drop to nobody and could not write the data.
run_as=
if [ "$(id -u)" = 0 ]; then
  run_as=mysql
  id mysql >/dev/null 2>&1 || { echo "galera.sh: run as root, the nodes need the mysql user" >&2; exit 1; }
  runuser -u mysql -- test -x "$dir" \
    || { echo "galera.sh: the mysql user cannot reach $dir (a parent directory is closed to it)" >&2; exit 1; }
fi

# The ports: picked once, kept for restarts (the cluster address names them).
if [ -f "$dir/ports.env" ]; then
  . "$dir/ports.env"
elif [ "$cmd" = start ]; then
  taken=" "
  pick() {
    local p
    while :; do
      p=$(free_port "${MV_PORTS:-}") || { echo "galera.sh: no free port" >&2; return 1; }
      [[ $taken == *" $p "* ]] && [ -z "${MV_PORTS:-}" ] && continue
      [[ $taken == *" $p "* ]] && { echo "galera.sh: MV_PORTS has too few free ports" >&2; return 1; }
      taken+="$p "; echo "$p"; return 0
    done
  }
  # free_port with a range gives the first free one: hold each picked port
  # in $taken and skip it by asking again with the range past it.
  if [ -n "${MV_PORTS:-}" ]; then
    first=${MV_PORTS%-*} last=${MV_PORTS#*-}
    pick() {
      local p
      for p in $(seq "$first" "$last"); do
        [[ $taken == *" $p "* ]] && continue
        port_open "$p" && continue
        taken+="$p "; echo "$p"; return 0
      done
      echo "galera.sh: MV_PORTS has too few free ports" >&2; return 1
    }
  fi
  {
    echo "NODES=$nodes"
    for k in $(seq "$nodes"); do
      for kind in SQL GCOMM IST SST; do
        p=$(pick); echo "${kind}_$k=$p"
      done
    done
  } > "$dir/ports.env.new"
  mv "$dir/ports.env.new" "$dir/ports.env"
  . "$dir/ports.env"
else
  echo "galera.sh: no cluster in $dir (run start first)" >&2
  exit 1
fi
[ -z "$node" ] || { [ "$node" -ge 1 ] && [ "$node" -le "$NODES" ]; } || usage "node is a number from 1 to $NODES"

port_of() { local v="${1}_$2"; echo "${!v}"; }
node_dir() { echo "$dir/node$1"; }
pid_of() {
  local f
  f=$(node_dir "$1")/mariadbd.pid
  [ -f "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null && cat "$f"
}
sql() { mariadb --no-defaults -S "$(node_dir "$1")/mariadbd.sock" -u root -N -B -e "$2"; }
wsrep() { sql "$1" "SHOW STATUS LIKE '$2'" 2>/dev/null | cut -f2; }

write_config() {
  local k=$1 d gcomm="" i user=()
  d=$(node_dir "$k")
  for i in $(seq "$NODES"); do gcomm+="${gcomm:+,}127.0.0.1:$(port_of GCOMM "$i")"; done
  mkdir -p "$d"
  [ -n "$run_as" ] && user=("user = $run_as")
  cat > "$d/my.cnf" <<CONF
[mysqld]
${user[*]:-}
datadir = $d/data
socket = $d/mariadbd.sock
pid-file = $d/mariadbd.pid
log-error = $d/error.log
port = $(port_of SQL "$k")
bind-address = 127.0.0.1
skip-name-resolve
character-set-server = utf8mb4
collation-server = utf8mb4_general_ci
binlog_format = ROW
default_storage_engine = InnoDB
innodb_autoinc_lock_mode = 2
innodb_buffer_pool_size = 64M
innodb_log_file_size = 32M
max_connections = 300
wsrep_on = ON
wsrep_provider = $provider
wsrep_cluster_name = microversion-galera
wsrep_cluster_address = gcomm://$gcomm
wsrep_node_name = node$k
wsrep_node_address = 127.0.0.1:$(port_of GCOMM "$k")
wsrep_provider_options = "gmcast.listen_addr=tcp://127.0.0.1:$(port_of GCOMM "$k");ist.recv_addr=127.0.0.1:$(port_of IST "$k");gcache.size=64M"
wsrep_sst_method = rsync
wsrep_sst_receive_address = 127.0.0.1:$(port_of SST "$k")
CONF
}

# start_node K [--wsrep-new-cluster]: starts mariadbd of node K in the
# background and waits until it is Synced.
start_node() {
  local k=$1 d pid waited=0 state
  shift
  d=$(node_dir "$k")
  if pid=$(pid_of "$k"); then
    echo "galera.sh: node $k already runs (pid $pid)" >&2
    return 0
  fi
  rm -f "$d/mariadbd.pid"
  setsid mariadbd --defaults-file="$d/my.cnf" "$@" >>"$d/error.log" 2>&1 < /dev/null &
  while :; do
    state=$(wsrep "$k" wsrep_local_state_comment || true)
    [ "$state" = Synced ] && break
    if [ "$waited" -ge $((timeout * 10)) ]; then
      echo "galera.sh: node $k not Synced after ${timeout} s (state: ${state:-no answer}); log: $d/error.log" >&2
      tail -20 "$d/error.log" >&2
      return 1
    fi
    if [ "$waited" -gt 50 ] && ! pid_of "$k" >/dev/null && ! pgrep -f -- "--defaults-file=$d/my.cnf" >/dev/null; then
      echo "galera.sh: node $k exited; log: $d/error.log" >&2
      tail -20 "$d/error.log" >&2
      return 1
    fi
    sleep 0.1
    waited=$((waited + 1))
  done
  echo "galera.sh: node $k Synced (SQL port $(port_of SQL "$k"), $(wsrep "$k" wsrep_cluster_size) in the cluster)" >&2
}

print_env() {
  local ports="" urls="" k
  for k in $(seq "$NODES"); do
    ports+="${ports:+ }$(port_of SQL "$k")"
    urls+="${urls:+ }mysql+pymysql://root@127.0.0.1:$(port_of SQL "$k")"
  done
  printf 'export GALERA_DIR=%q\nexport GALERA_NODES=%q\nexport GALERA_PORTS=%q\nexport GALERA_URLS=%q\n' \
    "$dir" "$NODES" "$ports" "$urls"
}

case $cmd in
  start)
    command -v mariadbd >/dev/null || { echo "galera.sh: mariadbd is missing (apt-get install mariadb-server)" >&2; exit 1; }
    [ -f "$provider" ] || { echo "galera.sh: $provider is missing (apt-get install galera-4)" >&2; exit 1; }
    command -v rsync >/dev/null || { echo "galera.sh: rsync is missing (apt-get install rsync), the SST method" >&2; exit 1; }
    fresh=0 install_user=()
    [ -n "$run_as" ] && install_user=(--user="$run_as")
    for k in $(seq "$NODES"); do
      write_config "$k"
      [ -n "$run_as" ] && chown -R "$run_as:" "$(node_dir "$k")"
      if [ ! -d "$(node_dir "$k")/data/mysql" ]; then
        fresh=1
        mariadb-install-db --no-defaults --datadir="$(node_dir "$k")/data" --skip-test-db \
          --auth-root-authentication-method=normal "${install_user[@]}" \
          >"$(node_dir "$k")/install.log" 2>&1 \
          || { cat "$(node_dir "$k")/install.log" >&2; exit 1; }
      fi
    done
    running=0
    for k in $(seq "$NODES"); do pid_of "$k" >/dev/null && running=$((running + 1)); done
    if [ "$running" = 0 ]; then
      # The node that stopped last has safe_to_bootstrap: 1; without one
      # (a crash of all), node 1 is made the one.
      first=
      for k in $(seq "$NODES"); do
        grep -qs '^safe_to_bootstrap: 1' "$(node_dir "$k")/data/grastate.dat" && { first=$k; break; }
      done
      if [ -z "$first" ]; then
        first=1
        [ -f "$(node_dir 1)/data/grastate.dat" ] && \
          sed -i 's/^safe_to_bootstrap: 0/safe_to_bootstrap: 1/' "$(node_dir 1)/data/grastate.dat"
      fi
      start_node "$first" --wsrep-new-cluster
      if [ "$fresh" = 1 ]; then
        sql "$first" "CREATE USER IF NOT EXISTS 'root'@'127.0.0.1'; GRANT ALL ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION"
      fi
    fi
    for k in $(seq "$NODES"); do pid_of "$k" >/dev/null || start_node "$k"; done
    print_env
    ;;
  stop)
    # The bootstrap candidate (node 1) stops last.
    for k in $(seq "$NODES" -1 1); do
      if pid=$(pid_of "$k"); then
        kill -TERM "$pid"
        for _ in $(seq $((timeout * 10))); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -0 "$pid" 2>/dev/null && { echo "galera.sh: node $k did not stop; killing it" >&2; kill -KILL "$pid"; }
        echo "galera.sh: node $k stopped" >&2
      fi
    done
    ;;
  status)
    bad=0
    for k in $(seq "$NODES"); do
      if pid=$(pid_of "$k"); then
        state=$(wsrep "$k" wsrep_local_state_comment || true)
        size=$(wsrep "$k" wsrep_cluster_size || true)
        echo "node $k port $(port_of SQL "$k") pid $pid state ${state:-unknown} cluster_size ${size:-?}"
        [ "$state" = Synced ] || bad=1
      else
        echo "node $k port $(port_of SQL "$k") stopped"
        bad=1
      fi
    done
    exit "$bad"
    ;;
  kill)
    pid=$(pid_of "$node") || { echo "galera.sh: node $node is not running" >&2; exit 1; }
    kill -KILL "$pid"
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
    echo "galera.sh: node $node killed (pid $pid)" >&2
    ;;
  join)
    start_node "$node"
    ;;
esac
