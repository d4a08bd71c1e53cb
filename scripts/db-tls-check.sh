#!/usr/bin/env bash
# placement-api's database connections over TLS, as the URLs of the
# deployment tools ask for them (crates/placement/README.md, "--database"):
# a PostgreSQL and a MariaDB server of this script's own (new instances on
# free ports, in a scratch directory, stopped at the end; the machine's
# servers are not touched), with certificates openssl makes for the run.
#
#  PostgreSQL (libpq's options): sslmode=verify-full with the CA serves;
#  with another CA, or without TLS where the server requires it, refused;
#  a user the server admits only by certificate (pg_hba `cert`) connects
#  with sslcert/sslkey and not without.
#  MariaDB (PyMySQL's options): ssl_ca (the certificate and the name
#  checked) serves; another CA is refused; ssl_disabled=true for a user
#  REQUIRE SSL is refused; a user REQUIRE X509 connects with
#  ssl_cert/ssl_key and not without.
#
# Each case runs `placement-api --database URL db sync` (no auth needed)
# and checks its exit status. Needs root (the servers run as the postgres
# and mysql users) and the machine's PostgreSQL and MariaDB server
# packages; a backend whose server programs are missing is skipped with a
# message.
#
# Usage: scripts/db-tls-check.sh [--binary PATH] [--ports FIRST-LAST]
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
. scripts/lib.sh

binary='' ports=''
while [ $# -gt 0 ]; do
  case $1 in
    --binary) binary=$2; shift 2 ;;
    --ports) ports=$2; shift 2 ;;
    *) echo "db-tls-check.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
if [ -z "$binary" ]; then
  cargo build --quiet -p placement --bin placement-api || exit 1
  binary=${CARGO_TARGET_DIR:-$root/target}/debug/placement-api
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/db-tls-check.XXXXXX")
chmod 755 "$work"
failed=0
fail() { echo "FAIL: $*" >&2; failed=1; }
stops=()
cleanup() {
  local s
  for s in "${stops[@]}"; do eval "$s" >/dev/null 2>&1; done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Certificates: a CA, a server certificate for 127.0.0.1, client
# certificates for the certificate-only users, and another CA.
certs=$work/certs
mkdir -p "$certs"
(
  cd "$certs" || exit 1
  ec=(-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes)
  for ca in ca other-ca; do
    openssl req -x509 -days 1 -subj "/CN=$ca" "${ec[@]}" -keyout "$ca.key" -out "$ca.pem" 2>/dev/null || exit 1
  done
  sign() { # NAME SUBJECT EXTENSION
    openssl req -new -subj "$2" "${ec[@]}" -keyout "$1.key" -out "$1.csr" 2>/dev/null || exit 1
    printf '%s\n' "$3" > "$1.ext"
    openssl x509 -req -in "$1.csr" -CA ca.pem -CAkey ca.key -CAcreateserial -days 1 \
      -extfile "$1.ext" -out "$1.pem" 2>/dev/null || exit 1
  }
  sign server /CN=127.0.0.1 'subjectAltName=IP:127.0.0.1,DNS:localhost'
  sign pgcert /CN=pgcert 'extendedKeyUsage=clientAuth'
  sign x509user /CN=x509user 'extendedKeyUsage=clientAuth'
  chmod 644 ./*.pem ./*.key
) || { echo "db-tls-check.sh: openssl could not make the certificates" >&2; exit 1; }

# expect WHAT 0|fail URL: `db sync` on URL exits 0, or does not.
expect() {
  local what=$1 want=$2 url=$3 out code
  out=$(timeout 60 "$binary" --database "$url" db sync 2>&1)
  code=$?
  # A refusal is said at once: a certificate that does not verify is not
  # tried again as an unreachable server is.
  if [ "$code" = 124 ]; then
    fail "$what: still trying after 60 s"
  elif [ "$want" = 0 ]; then
    [ "$code" = 0 ] && echo "  ok: $what" || fail "$what: exit $code: $out"
  else
    [ "$code" != 0 ] && echo "  ok: $what is refused ($(tail -n 1 <<<"$out" | cut -c1-150))" \
      || fail "$what: connected, expected a refusal"
  fi
}

echo "== PostgreSQL over TLS"
pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
if [ -z "$pgbin" ] || ! id postgres >/dev/null 2>&1; then
  echo "  skipped: no PostgreSQL server programs here"
else
  pg=$work/pg
  install -d -o postgres -m 700 "$pg"
  port=$(free_port "$ports") || exit 1
  su postgres -s /bin/sh -c "'$pgbin/initdb' -D '$pg/data' -A trust -U postgres" >"$work/pg-initdb.log" 2>&1 \
    || { cat "$work/pg-initdb.log" >&2; exit 1; }
  install -o postgres -m 600 "$certs/server.key" "$pg/data/server.key"
  install -o postgres -m 644 "$certs/server.pem" "$pg/data/server.pem"
  install -o postgres -m 644 "$certs/ca.pem" "$pg/data/ca.pem"
  cat >> "$pg/data/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$pg'
ssl = on
ssl_cert_file = 'server.pem'
ssl_key_file = 'server.key'
ssl_ca_file = 'ca.pem'
CONF
  cat > "$pg/data/pg_hba.conf" <<HBA
local all all trust
hostssl all pgcert 127.0.0.1/32 cert
hostssl all all 127.0.0.1/32 trust
hostnossl all all 127.0.0.1/32 reject
HBA
  if su postgres -s /bin/sh -c "'$pgbin/pg_ctl' -D '$pg/data' -l '$pg/log' -w start" >/dev/null 2>&1; then
    stops+=("su postgres -s /bin/sh -c \"'$pgbin/pg_ctl' -D '$pg/data' -m fast stop\"")
    psql -h "$pg" -p "$port" -U postgres -q -c "CREATE USER pgcert" -c "CREATE DATABASE p1" \
      -c "CREATE DATABASE p2 OWNER pgcert" >/dev/null || fail "could not set up the PostgreSQL users"
    base="postgresql://postgres@127.0.0.1:$port"
    expect "sslmode=verify-full with the CA" 0 "$base/p1?sslmode=verify-full&sslrootcert=$certs/ca.pem"
    expect "sslmode=verify-full with another CA" fail "$base/p1?sslmode=verify-full&sslrootcert=$certs/other-ca.pem"
    expect "sslmode=disable where TLS is required" fail "$base/p1?sslmode=disable"
    cert="postgresql://pgcert@127.0.0.1:$port/p2?sslmode=verify-full&sslrootcert=$certs/ca.pem"
    expect "a certificate-only user with sslcert/sslkey" 0 "$cert&sslcert=$certs/pgcert.pem&sslkey=$certs/pgcert.key"
    expect "a certificate-only user without a certificate" fail "$cert"
  else
    fail "the PostgreSQL server did not start: $(tail -n 5 "$pg/log")"
  fi
fi

echo "== MariaDB over TLS"
if ! command -v mariadb-install-db >/dev/null || ! command -v mariadbd >/dev/null || ! id mysql >/dev/null 2>&1; then
  echo "  skipped: no MariaDB server programs here"
else
  my=$work/my
  install -d -o mysql -m 700 "$my"
  port=$(free_port "$ports") || exit 1
  mariadb-install-db --no-defaults --datadir="$my/data" --user=mysql --auth-root-authentication-method=normal \
    --skip-test-db >"$work/my-install.log" 2>&1 || { cat "$work/my-install.log" >&2; exit 1; }
  install -o mysql -m 600 "$certs/server.key" "$my/server.key"
  mariadbd --no-defaults --datadir="$my/data" --user=mysql --bind-address=127.0.0.1 --port="$port" \
    --socket="$my/sock" --pid-file="$my/pid" --ssl-ca="$certs/ca.pem" --ssl-cert="$certs/server.pem" \
    --ssl-key="$my/server.key" --skip-log-bin --innodb-buffer-pool-size=16M >"$my/log" 2>&1 &
  stops+=("kill $!; wait $!")
  if wait_port "$port" $! 60; then
    mariadb --no-defaults -S "$my/sock" -u root -e "
      CREATE DATABASE m1; CREATE DATABASE m2; CREATE DATABASE m3;
      CREATE USER 'tls'@'127.0.0.1' REQUIRE SSL; GRANT ALL ON m1.* TO 'tls'@'127.0.0.1';
      GRANT ALL ON m2.* TO 'tls'@'127.0.0.1';
      CREATE USER 'x509user'@'127.0.0.1' REQUIRE X509; GRANT ALL ON m3.* TO 'x509user'@'127.0.0.1';" \
      || fail "could not set up the MariaDB users"
    base="mysql+pymysql://tls:@127.0.0.1:$port"
    expect "ssl_ca (certificate and name checked)" 0 "$base/m1?charset=utf8&ssl_ca=$certs/ca.pem"
    expect "ssl_ca with ssl_verify_cert=true" 0 "$base/m2?ssl_verify_cert=true&ssl_ca=$certs/ca.pem"
    expect "ssl_ca of another CA" fail "$base/m1?ssl_ca=$certs/other-ca.pem"
    expect "ssl_disabled=true for a user REQUIRE SSL" fail "$base/m1?ssl_disabled=true"
    x509="mysql+pymysql://x509user:@127.0.0.1:$port/m3?ssl_ca=$certs/ca.pem"
    expect "a user REQUIRE X509 with ssl_cert/ssl_key" 0 "$x509&ssl_cert=$certs/x509user.pem&ssl_key=$certs/x509user.key"
    expect "a user REQUIRE X509 without a certificate" fail "$x509"
  else
    fail "the MariaDB server did not start: $(tail -n 5 "$my/log")"
  fi
fi

[ "$failed" = 0 ] && echo "db-tls-check.sh: all passed"
exit "$failed"
