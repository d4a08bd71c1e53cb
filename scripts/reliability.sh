#!/usr/bin/env bash
# Reliability checks of placement-api (issue #8), short (CI) or full form:
#   fuzz      the eight cargo-fuzz targets of fuzz/ (15 s each; full: 600 s,
#             after the tests of their harness, fuzz/src)
#   load      mixed-version load, 64 connections (10,000 requests; full 100,000)
#   crash     SIGKILL during allocation writes, restart, check (SQLite and
#             PostgreSQL; 1 round each, full: 5 rounds)
#   badinput  bad-input sweep over every write endpoint, tables unchanged
#             (SQLite and PostgreSQL; MySQL too when in MV_TEST_BACKENDS)
#   cluster   racing allocation writes over 4 instances on one PostgreSQL
#             and one MySQL database (those in MV_TEST_BACKENDS), and over
#             a 3-node Galera cluster with a node killed mid-run
#             (scripts/cluster.sh; 8 s per race and 15 s on Galera; full:
#             30 s and 60 s; Galera is skipped when galera-4 is missing)
#
#   bash scripts/reliability.sh [--full] [--binary PATH] [--only "load crash"]
#
# Needs python3 (standard library only), psql/mysql for those backends
# (scripts/lib.sh: MV_PG_URL, MV_MYSQL_URL), and for fuzzing cargo-fuzz
# (installed with `cargo install cargo-fuzz --locked` when missing; the
# fuzz part is skipped with a message if that fails). Results go to
# stdout as JSON reports; the exit status is 1 if any check failed.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
full=0 binary= only="fuzz load crash badinput cluster"
backends=${MV_TEST_BACKENDS:-sqlite postgresql}
while [ $# -gt 0 ]; do
  case $1 in
    --full) full=1 ;;
    --binary) binary=$2; shift ;;
    --only) only=$2; shift ;;
    *) echo "usage: $0 [--full] [--binary PATH] [--only \"fuzz load crash badinput cluster\"]" >&2; exit 2 ;;
  esac
  shift
done
# The short form builds the fuzz targets without AddressSanitizer, in
# fuzz/'s dev profile (opt-level 1, no debug info, overflow checks on):
# 5.4 minutes on two cores where `-O` in 16 codegen units took 10 to 14,
# itself half the full form's (ASan, one unit); each target still runs
# 0.8-1.2 times the inputs a second, and a stack overflow, a panic, an
# overflow, a 5xx or a hang is still found.
if [ "$full" = 1 ]; then
  fuzz_s=600 requests=100000 rounds=5 load_max=1800 race_s=30 galera_s=60
  fuzz_flags=(-O)
else
  fuzz_s=15 requests=10000 rounds=1 load_max=300 race_s=8 galera_s=15
  fuzz_flags=(--dev -s none)
fi
target=${CARGO_TARGET_DIR:-target}
if [ -z "$binary" ]; then
  cargo build --release -p placement --bin placement-api
  binary=$target/release/placement-api
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/placement-reliability.XXXXXX")
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
failed=()
has() { [[ " $only " == *" $1 "* ]]; }
in_backends() { [[ " $backends " == *" $1 "* ]]; }

if has fuzz; then
  echo "== fuzz (${fuzz_s}s per target)"
  # The harness's own tests (fuzz/src), in an ordinary build of its own:
  # full form only (the build took 9 of CI's minutes; the short runs of
  # the targets below go through the same harness).
  if [ "$full" = 1 ]; then
    if (cd fuzz && cargo test --lib >"$work/fuzz-lib.log" 2>&1); then
      echo "fuzz harness tests: ok"
    else
      tail -30 "$work/fuzz-lib.log"; echo "fuzz harness tests: FAILED"; failed+=("fuzz harness tests")
    fi
  fi
  if ! command -v cargo-fuzz >/dev/null; then
    cargo install cargo-fuzz --locked || echo "SKIPPED fuzzing: cargo-fuzz could not be installed"
  fi
  if command -v cargo-fuzz >/dev/null; then
    # One build for every target; the service's (placement and all it
    # links, with the fuzzer's instrumentation) takes most of it.
    build_start=$SECONDS
    if (cd fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz build "${fuzz_flags[@]}" >"$work/fuzz-build.log" 2>&1); then
      echo "fuzz build: $((SECONDS - build_start)) s"
      for t in version_parse header_decode versions_document \
               body_reader python_schema provider_query candidate_query router; do
        # The committed corpus is the seed; new finds go to a scratch copy.
        mkdir -p "$work/corpus/$t"
        cp -r fuzz/corpus/"$t"/. "$work/corpus/$t/" 2>/dev/null || true
        # -timeout: an input that takes 30 s is a hang of the service.
        if (cd fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz run "${fuzz_flags[@]}" "$t" "$work/corpus/$t" -- \
              -max_total_time="$fuzz_s" -timeout=30 -print_final_stats=1 >"$work/fuzz-$t.log" 2>&1); then
          echo "fuzz $t: ok, $(grep -o 'stat::number_of_executed_units: *[0-9]*' "$work/fuzz-$t.log" | grep -o '[0-9]*$') runs"
        else
          tail -30 "$work/fuzz-$t.log"; echo "fuzz $t: FAILED (input saved under fuzz/artifacts/$t/)"; failed+=("fuzz $t")
        fi
      done
    else
      tail -30 "$work/fuzz-build.log"; echo "fuzz build: FAILED"; failed+=("fuzz build")
    fi
  fi
fi

if has load; then
  echo "== load ($requests requests, 64 connections, SQLite)"
  port=$(free_port "${MV_PORTS:-}")
  "$binary" --bind "127.0.0.1:$port" --database "sqlite:///$work/load.db" --policy legacy --auth-strategy noauth2 \
    >"$work/load-server.log" 2>&1 &
  pids+=($!)
  wait_port "$port" "$!" 60 || { cat "$work/load-server.log"; exit 1; }
  python3 scripts/reliability/load.py --url "http://127.0.0.1:$port" --connections 64 \
    --requests "$requests" --max-seconds "$load_max" || failed+=(load)
fi

if has crash; then
  for backend in sqlite postgresql; do
    in_backends "$backend" || continue
    for round in $(seq "$rounds"); do
      echo "== crash on $backend (round $round of $rounds)"
      name=mvtest_crash_$$_$round
      [ "$backend" = sqlite ] && name=$work/crash-$round.db
      url=$(db_create "$backend" "$name")
      port=$(free_port "${MV_PORTS:-}")
      python3 scripts/reliability/crash.py --binary "$binary" --database "$url" --port "$port" \
        --seconds 8 --log "$work/crash-server.log" || failed+=("crash $backend")
      db_drop "$backend" "$name"
    done
  done
fi

if has badinput; then
  for backend in sqlite postgresql mysql; do
    in_backends "$backend" || continue
    echo "== bad input on $backend"
    name=mvtest_badinput_$$
    [ "$backend" = sqlite ] && name=$work/badinput.db
    url=$(db_create "$backend" "$name")
    port=$(free_port "${MV_PORTS:-}")
    python3 scripts/reliability/badinput.py --binary "$binary" --database "$url" --port "$port" \
      --log "$work/badinput-server.log" || failed+=("badinput $backend")
    db_drop "$backend" "$name"
  done
fi

if has cluster; then
  for backend in postgresql mysql; do
    in_backends "$backend" || continue
    echo "== cluster: 4 instances on one $backend database (${race_s}s)"
    bash scripts/cluster.sh race --backend "$backend" --instances 4 --seconds "$race_s" \
      --binary "$binary" || failed+=("cluster $backend")
  done
  if [ -f /usr/lib/galera/libgalera_smm.so ] && command -v mariadbd >/dev/null && command -v rsync >/dev/null; then
    echo "== cluster: Galera, 3 nodes, node 3 killed and rejoined (${galera_s}s)"
    bash scripts/cluster.sh galera --seconds "$galera_s" --binary "$binary" || failed+=("cluster galera")
  else
    echo "SKIPPED cluster galera: needs galera-4, the MariaDB server and rsync (apt-get install galera-4 mariadb-server rsync)"
  fi
fi

if [ ${#failed[@]} -gt 0 ]; then
  echo "reliability: FAILED: ${failed[*]}"
  exit 1
fi
echo "reliability: all passed"
