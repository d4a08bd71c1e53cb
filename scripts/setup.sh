#!/usr/bin/env bash
# Prepares a machine for the comparisons with upstream that scripts/test.sh
# runs: checks (and on Debian or Ubuntu, as root, installs) python3 with
# venv and the psql and mysql clients, makes the pinned virtualenvs
# (scripts/requirements/*.txt: gabbi, upstream Placement, Keystone, schemathesis), and checks that the PostgreSQL and MySQL
# servers of MV_PG_URL and MV_MYSQL_URL answer.
#
#   scripts/setup.sh [BACKEND...]      (default: sqlite postgresql mysql)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

backends=${*:-sqlite postgresql mysql}
missing=()
python3 -c 'import ensurepip, venv' 2>/dev/null || missing+=(python3-venv)
for b in $backends; do
  case $b in
    postgresql) command -v psql >/dev/null || missing+=(postgresql-client) ;;
    mysql) command -v mysql >/dev/null || missing+=(mariadb-client) ;;
  esac
done
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "installing ${missing[*]}"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    echo "setup.sh: please install ${missing[*]}" >&2
    exit 1
  fi
fi

# promtool (checks the metric names, scripts/test.sh): from Debian's
# prometheus package, unpacked into the cache rather than installed (the
# package would start a Prometheus server). Optional: without it the
# check is skipped.
if [ ! -x "$MV_CACHE/promtool" ] && command -v apt-get >/dev/null; then
  ( tmp=$(mktemp -d) && cd "$tmp" && apt-get download -qq prometheus >/dev/null 2>&1       && dpkg-deb --fsys-tarfile prometheus_*.deb | tar -xO ./usr/bin/promtool > promtool \
      && chmod +x promtool && mkdir -p "$MV_CACHE" && mv promtool "$MV_CACHE/promtool"; rm -rf "$tmp" ) \
    || echo "setup.sh: promtool not available (Debian package prometheus); the metric-name check is skipped" >&2
fi

pinned_venv scripts/requirements/gabbi.txt >/dev/null
pinned_venv scripts/requirements/upstream.txt >/dev/null
pinned_venv scripts/requirements/keystone.txt >/dev/null
pinned_venv scripts/requirements/schemathesis.txt >/dev/null

for b in $backends; do
  case $b in
    postgresql)
      psql_cmd -c 'SELECT 1' >/dev/null || {
        echo "setup.sh: no PostgreSQL server at $MV_PG_URL (set MV_PG_URL, or MV_TEST_BACKENDS to leave it out)" >&2; exit 1; } ;;
    mysql)
      mysql_cmd -e 'SELECT 1' >/dev/null || {
        echo "setup.sh: no MySQL server at $MV_MYSQL_URL (set MV_MYSQL_URL, or MV_TEST_BACKENDS to leave it out)" >&2; exit 1; } ;;
  esac
done
echo "setup: ready for $backends"
