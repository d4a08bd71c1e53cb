#!/usr/bin/env bash
# Checks placement-api's API reference page (`[openapi] reference_page`,
# at /api-ref) in a real browser: Debian's chromium, headless, driven
# through Debian's chromium-driver by selenium (pinned in
# scripts/requirements/selenium.txt). The page opens, its picker switches
# from 1.0 to 1.39, and /allocation_candidates (added in 1.10) is absent at
# 1.0 and appears at 1.39; every request the browser made went to the
# server, and it logged no error (scripts/reference_page_check.py).
#
#   scripts/reference-page-check.sh [--binary PATH] [--port P]
#
# Installs chromium and chromium-driver with apt-get when they are missing
# (as root on Debian or Ubuntu). Without --binary, the debug placement-api
# is built. The screenshots of both versions are left in
# MV_REFERENCE_SHOTS (default: a temporary directory, kept and printed on
# failure). About 15 seconds once chromium and the virtualenv are there.
#
# Exit status: 0 when every check passes, 1 when one fails, 2 on bad usage.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
. scripts/lib.sh

usage() { echo "reference-page-check.sh: $1 (see --help)" >&2; exit 2; }
binary= port=
while [ $# -gt 0 ]; do
  case $1 in
    --binary) [ $# -ge 2 ] || usage "--binary needs a value"; binary=$2; shift 2 ;;
    --port) [ $# -ge 2 ] || usage "--port needs a value"; port=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) usage "unknown argument $1" ;;
  esac
done

if ! [ -x /usr/bin/chromium ] || ! [ -x /usr/bin/chromedriver ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "installing chromium chromium-driver"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver; } >/dev/null \
      || { echo "reference-page-check.sh: cannot install chromium and chromium-driver" >&2; exit 1; }
  else
    echo "reference-page-check.sh: please install Debian's chromium and chromium-driver" >&2
    exit 1
  fi
fi
venv=$(pinned_venv scripts/requirements/selenium.txt) || { echo "reference-page-check.sh: cannot make the selenium virtualenv" >&2; exit 1; }
if [ -z "$binary" ]; then
  cargo build --quiet -p placement --bin placement-api || exit 1
  binary=${CARGO_TARGET_DIR:-$root/target}/debug/placement-api
fi
[ -x "$binary" ] || usage "no placement-api at $binary"
[ -n "$port" ] || port=$(free_port) || { echo "reference-page-check.sh: no free port" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/reference-page-check.XXXXXX")
shots=${MV_REFERENCE_SHOTS:-$work}
mkdir -p "$shots"
server= status=1
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null
  [ -n "${MV_REFERENCE_SHOTS:-}" ] || [ "$status" != 0 ] || rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

printf '[openapi]\nenabled = true\nreference_page = true\n' >"$work/placement.conf"
"$binary" --bind "127.0.0.1:$port" --database "sqlite:///$work/placement.db" --auth-strategy noauth2 \
  --config-file "$work/placement.conf" >"$work/server.log" 2>&1 &
server=$!
if ! wait_port "$port" "$server" 60; then
  echo "reference-page-check.sh: placement-api did not start; its log:" >&2
  cat "$work/server.log" >&2
  exit 1
fi
timeout 180 "$venv/bin/python" scripts/reference_page_check.py "http://127.0.0.1:$port" "$shots"
status=$?
[ "$status" = 0 ] || echo "reference-page-check: screenshots and the server's log in $work (screenshots in $shots)"
exit "$status"
