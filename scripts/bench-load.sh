#!/usr/bin/env bash
# Load benchmark on loopback, bounded in time: the same route bare and
# behind the microversion layer, alternating, in one run. Reports req/s
# and p99 of each and their ratios (layered / bare), as Markdown.
#
#   scripts/bench-load.sh [--rounds N] [--duration SECONDS] [--connections N]
#
# Needs wrk (installed with apt-get when missing). Takes about
# rounds * 2 * duration seconds plus a release build.
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=3; DURATION=5; CONNECTIONS=16
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) ROUNDS=$2; shift 2 ;;
    --duration) DURATION=$2; shift 2 ;;
    --connections) CONNECTIONS=$2; shift 2 ;;
    *) echo "unknown argument $1 (expected --rounds, --duration, --connections)" >&2; exit 2 ;;
  esac
done

if ! command -v wrk >/dev/null; then
  echo "installing wrk" >&2
  (apt-get update -qq && apt-get install -y -qq wrk) >/dev/null
fi

cargo build --release -q -p microversion-server --example bench_target
BARE=127.0.0.1:18081; LAYERED=127.0.0.1:18082
target/release/examples/bench_target --bare $BARE --layered $LAYERED 2>/dev/null &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
for _ in $(seq 1 50); do
  curl -s -o /dev/null "http://$BARE/resource" && curl -s -o /dev/null "http://$LAYERED/resource" && break
  sleep 0.1
done

out=$(mktemp -d)
for round in $(seq 1 "$ROUNDS"); do
  for kind in bare layered; do
    addr=$BARE; [ $kind = layered ] && addr=$LAYERED
    wrk -t2 -c"$CONNECTIONS" -d"${DURATION}s" --latency \
      -H 'OpenStack-API-Version: placement 1.20' "http://$addr/resource" > "$out/$kind.$round.txt"
  done
done

python3 - "$out" "$ROUNDS" <<'PY'
import re, statistics, sys, glob
out, rounds = sys.argv[1], int(sys.argv[2])
def unit(v, u):
    return float(v) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[u]
def read(path):
    text = open(path).read()
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
    p99 = re.search(r"99%\s+([\d.]+)(us|ms|s)", text)
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    if errors:
        sys.exit(f"{path}: {errors.group(1)} error responses")
    return rps, unit(*p99.groups())
res = {k: [read(f"{out}/{k}.{r}.txt") for r in range(1, rounds + 1)] for k in ("bare", "layered")}
med = {k: (statistics.median(x[0] for x in v), statistics.median(x[1] for x in v)) for k, v in res.items()}
print("| route | req/s (median) | p99 ms (median) |")
print("|---|---|---|")
for k in ("bare", "layered"):
    print(f"| {k} | {med[k][0]:.0f} | {med[k][1]:.3f} |")
print(f"| ratio layered/bare | {med['layered'][0] / med['bare'][0]:.3f} | {med['layered'][1] / med['bare'][1]:.3f} |")
PY
