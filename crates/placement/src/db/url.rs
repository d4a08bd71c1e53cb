//! Upstream's connection URLs (SQLAlchemy's forms) in the driver's forms,
//! with the options deployment tools put in them.
//!
//! kolla-ansible and OpenStack-Ansible write MariaDB URLs with PyMySQL's
//! TLS options (`?ssl_ca=...&ssl_verify_cert=true`), openstack-helm client
//! certificates (`ssl_cert`, `ssl_key`); a PostgreSQL URL carries libpq's
//! (`sslmode`, `sslrootcert`, `sslcert`, `sslkey`). Each is honoured as
//! SQLAlchemy and the Python driver read it, and an option this service
//! cannot honour is refused, never dropped: a TLS setting silently lost
//! would leave the connection unverified.
//!
//! MariaDB, as SQLAlchemy and PyMySQL read the options:
//!
//! | option | effect |
//! |---|---|
//! | `ssl_ca` | TLS required, the server's certificate checked against this CA, and its name (unless `ssl_check_hostname=false`) |
//! | `ssl_cert`, `ssl_key` | TLS required, with this client certificate |
//! | `ssl_verify_cert` | TLS required; `true` checks the certificate (against `ssl_ca`, else the system's roots), `false` does not |
//! | `ssl_verify_identity`, `ssl_check_hostname` | TLS required; the certificate checked, and the server's name in it |
//! | `ssl_disabled=true` | no TLS |
//! | `charset` | `utf8` or `utf8mb4`: the driver's own (utf8mb4) |
//!
//! Without any of them the connection uses TLS when the server offers it,
//! as PyMySQL does.

use std::borrow::Cow;

/// A database URL that cannot be used.
#[derive(Debug)]
pub struct InvalidDatabaseUrl(String);

impl std::fmt::Display for InvalidDatabaseUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for InvalidDatabaseUrl {}

use super::Dialect;

/// The options of a PostgreSQL URL that are passed on (libpq's, which
/// the driver reads under the same names).
const POSTGRES_OPTIONS: &[&str] = &[
    "sslmode",
    "sslrootcert",
    "sslcert",
    "sslkey",
    "application_name",
];

/// The options of a MariaDB URL that are read (PyMySQL's, through
/// SQLAlchemy).
const MYSQL_OPTIONS: &[&str] = &[
    "charset",
    "ssl_ca",
    "ssl_cert",
    "ssl_key",
    "ssl_verify_cert",
    "ssl_verify_identity",
    "ssl_check_hostname",
    "ssl_disabled",
];

/// Translates upstream's connection URLs (SQLAlchemy forms such as
/// `sqlite:///path`, `postgresql+psycopg2://user@host/db`,
/// `mysql+pymysql://user:pw@host/db?charset=utf8`) into the driver's.
///
/// # Errors
///
/// Returns [`InvalidDatabaseUrl`] naming the accepted forms, or an option
/// that cannot be honoured with the accepted ones.
pub fn translate_url(url: &str) -> Result<(Dialect, String), InvalidDatabaseUrl> {
    let (scheme, rest) = url.split_once("://").ok_or_else(|| {
        InvalidDatabaseUrl(format!(
            "invalid database URL {url:?}: expected sqlite:///PATH, postgresql://USER@HOST/DB or mysql+pymysql://USER:PASSWORD@HOST/DB"
        ))
    })?;
    let driver = scheme.split('+').next().unwrap_or(scheme);
    let (base, query) = rest.split_once('?').unwrap_or((rest, ""));
    match driver {
        "sqlite" => {
            // SQLAlchemy: sqlite:///relative.db and sqlite:////absolute.db;
            // the driver wants sqlite://relative.db and sqlite:///absolute.db.
            let path = rest.strip_prefix('/').unwrap_or(rest);
            if path.is_empty() || path == ":memory:" {
                return Ok((Dialect::Sqlite, "sqlite::memory:".to_owned()));
            }
            let (path, _query) = path.split_once('?').unwrap_or((path, ""));
            Ok((Dialect::Sqlite, format!("sqlite://{path}?mode=rwc")))
        }
        "postgresql" | "postgres" => {
            let options = options(url, query, POSTGRES_OPTIONS)?;
            let kept: Vec<String> = options.iter().map(|(k, v)| format!("{k}={v}")).collect();
            Ok((
                Dialect::Postgres,
                with_query(&format!("postgres://{base}"), &kept),
            ))
        }
        "mysql" | "mariadb" => {
            let options = options(url, query, MYSQL_OPTIONS)?;
            let kept = mysql_options(url, &options)?;
            Ok((
                Dialect::MySql,
                with_query(&format!("mysql://{base}"), &kept),
            ))
        }
        other => Err(InvalidDatabaseUrl(format!(
            "unsupported database {other:?} in {url:?}: expected sqlite, postgresql or mysql"
        ))),
    }
}

/// The URL's options, each one of `accepted` (the last of a repeated one
/// counts, as in Python's parsing).
fn options<'q>(
    url: &str,
    query: &'q str,
    accepted: &[&str],
) -> Result<Vec<(&'q str, Cow<'q, str>)>, InvalidDatabaseUrl> {
    let mut options: Vec<(&str, Cow<'_, str>)> = Vec::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        // SQLAlchemy's parse of the query drops an option without a value
        // (openstack-helm ends its TLS URLs with a bare `ssl_verify_cert`).
        if value.is_empty() {
            continue;
        }
        if !accepted.contains(&key) {
            return Err(InvalidDatabaseUrl(format!(
                "the database URL option {key} is not supported by placement-api, which will not start without it; the accepted options are {} (in {})",
                accepted.join(", "),
                redacted(url)
            )));
        }
        options.retain(|(k, _)| *k != key);
        options.push((key, Cow::Borrowed(value)));
    }
    Ok(options)
}

/// The driver's options for PyMySQL's: `ssl-mode` and the files.
fn mysql_options(
    url: &str,
    options: &[(&str, Cow<'_, str>)],
) -> Result<Vec<String>, InvalidDatabaseUrl> {
    let get = |key: &str| options.iter().find(|(k, _)| *k == key).map(|(_, v)| v);
    let flag = |key: &str| -> Result<Option<bool>, InvalidDatabaseUrl> {
        get(key)
            .map(|v| {
                // SQLAlchemy's `asbool`.
                match v.to_ascii_lowercase().as_str() {
                    "true" | "yes" | "on" | "y" | "t" | "1" => Ok(true),
                    "false" | "no" | "off" | "n" | "f" | "0" => Ok(false),
                    _ => Err(InvalidDatabaseUrl(format!(
                        "the database URL option {key}={v} is not a boolean; use true or false (in {})",
                        redacted(url)
                    ))),
                }
            })
            .transpose()
    };
    if let Some(charset) = get("charset") {
        if !matches!(charset.as_ref(), "utf8" | "utf8mb4") {
            return Err(InvalidDatabaseUrl(format!(
                "the database URL option charset={charset} is not supported; the accepted values are utf8 and utf8mb4 (in {})",
                redacted(url)
            )));
        }
    }
    let ca = get("ssl_ca");
    let cert = get("ssl_cert");
    let key = get("ssl_key");
    if cert.is_some() != key.is_some() {
        return Err(InvalidDatabaseUrl(format!(
            "the database URL options ssl_cert and ssl_key go together (in {})",
            redacted(url)
        )));
    }
    let verify_cert = flag("ssl_verify_cert")?;
    let identity = flag("ssl_verify_identity")?.or(flag("ssl_check_hostname")?);
    let tls_asked = ca.is_some() || cert.is_some() || verify_cert.is_some() || identity.is_some();
    if flag("ssl_disabled")? == Some(true) {
        if tls_asked {
            return Err(InvalidDatabaseUrl(format!(
                "the database URL option ssl_disabled=true contradicts its TLS options (in {})",
                redacted(url)
            )));
        }
        return Ok(vec!["ssl-mode=DISABLED".to_owned()]);
    }
    if !tls_asked {
        return Ok(Vec::new());
    }
    // A CA checks the certificate and the name unless told otherwise; an
    // explicit `ssl_verify_cert` decides whether the certificate is
    // checked at all.
    let verify = verify_cert.unwrap_or(ca.is_some()) || identity == Some(true);
    let mode = match (verify, identity.unwrap_or(ca.is_some())) {
        (false, _) => "REQUIRED",
        (true, true) => "VERIFY_IDENTITY",
        (true, false) => "VERIFY_CA",
    };
    let mut kept = vec![format!("ssl-mode={mode}")];
    if let Some(ca) = ca {
        kept.push(format!("ssl-ca={ca}"));
    }
    if let (Some(cert), Some(key)) = (cert, key) {
        kept.push(format!("ssl-cert={cert}"));
        kept.push(format!("ssl-key={key}"));
    }
    Ok(kept)
}

fn with_query(base: &str, options: &[String]) -> String {
    if options.is_empty() {
        base.to_owned()
    } else {
        format!("{base}?{}", options.join("&"))
    }
}

/// `url` without its password, for messages.
pub(crate) fn redacted(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
    match authority.rsplit_once('@') {
        Some((credentials, host)) => match credentials.split_once(':') {
            Some((user, _password)) => format!("{scheme}://{user}:***@{host}/{path}"),
            None => url.to_owned(),
        },
        None => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn driver(url: &str) -> String {
        translate_url(url).unwrap().1
    }

    fn refusal(url: &str) -> String {
        translate_url(url).unwrap_err().to_string()
    }

    #[test]
    fn upstream_urls_translate() {
        assert_eq!(
            translate_url("sqlite:////tmp/p.db").unwrap(),
            (Dialect::Sqlite, "sqlite:///tmp/p.db?mode=rwc".to_owned())
        );
        assert_eq!(driver("sqlite:///p.db"), "sqlite://p.db?mode=rwc");
        assert_eq!(
            translate_url("postgresql+psycopg2://root@127.0.0.1/test").unwrap(),
            (
                Dialect::Postgres,
                "postgres://root@127.0.0.1/test".to_owned()
            )
        );
        assert_eq!(
            translate_url("mysql+pymysql://root:@127.0.0.1/test?charset=utf8").unwrap(),
            (Dialect::MySql, "mysql://root:@127.0.0.1/test".to_owned())
        );
        assert!(refusal("oracle://x/y").contains("expected sqlite, postgresql or mysql"));
        assert!(translate_url("nonsense").is_err());
    }

    #[test]
    fn mariadb_tls_options_as_pymysql_reads_them() {
        let base = "mysql+pymysql://placement:pw@db/placement?charset=utf8";
        // kolla-ansible: a CA, which checks the certificate and the name.
        assert_eq!(
            driver(&format!("{base}&ssl_ca=/etc/ssl/ca.pem")),
            "mysql://placement:pw@db/placement?ssl-mode=VERIFY_IDENTITY&ssl-ca=/etc/ssl/ca.pem"
        );
        // OpenStack-Ansible: the CA and ssl_verify_cert.
        assert_eq!(
            driver(&format!("{base}&ssl_verify_cert=true&ssl_ca=/ca.pem")),
            "mysql://placement:pw@db/placement?ssl-mode=VERIFY_IDENTITY&ssl-ca=/ca.pem"
        );
        assert_eq!(
            driver(&format!("{base}&ssl_ca=/ca.pem&ssl_check_hostname=false")),
            "mysql://placement:pw@db/placement?ssl-mode=VERIFY_CA&ssl-ca=/ca.pem"
        );
        // TLS without a check of the certificate.
        assert_eq!(
            driver(&format!("{base}&ssl_verify_cert=false")),
            "mysql://placement:pw@db/placement?ssl-mode=REQUIRED"
        );
        assert_eq!(
            driver(&format!(
                "{base}&ssl_verify_cert=0&ssl_ca=/ca.pem&ssl_check_hostname=no"
            )),
            "mysql://placement:pw@db/placement?ssl-mode=REQUIRED&ssl-ca=/ca.pem"
        );
        // openstack-helm: a client certificate, and a bare option (no
        // value), which SQLAlchemy drops.
        assert_eq!(
            driver(&format!("{base}&ssl_ca=/ca.pem&ssl_verify_cert")),
            "mysql://placement:pw@db/placement?ssl-mode=VERIFY_IDENTITY&ssl-ca=/ca.pem"
        );
        assert_eq!(
            driver(&format!("{base}&unknown_option=&ssl_verify_cert")),
            "mysql://placement:pw@db/placement"
        );
        assert_eq!(
            driver(&format!(
                "{base}&ssl_ca=/ca.pem&ssl_cert=/c.pem&ssl_key=/c.key"
            )),
            "mysql://placement:pw@db/placement?ssl-mode=VERIFY_IDENTITY&ssl-ca=/ca.pem&ssl-cert=/c.pem&ssl-key=/c.key"
        );
        assert_eq!(
            driver(&format!("{base}&ssl_disabled=true")),
            "mysql://placement:pw@db/placement?ssl-mode=DISABLED"
        );
        for (option, wanted) in [
            (
                "ssl_capath=/etc/ssl",
                "the database URL option ssl_capath is not supported",
            ),
            (
                "read_timeout=5",
                "the database URL option read_timeout is not supported",
            ),
            ("ssl_cert=/c.pem", "ssl_cert and ssl_key go together"),
            (
                "ssl_verify_cert=sure",
                "ssl_verify_cert=sure is not a boolean",
            ),
            ("charset=latin1", "charset=latin1 is not supported"),
            (
                "ssl_disabled=1&ssl_ca=/ca.pem",
                "contradicts its TLS options",
            ),
        ] {
            let e = refusal(&format!("{base}&{option}"));
            assert!(e.contains(wanted), "{option}: {e}");
            assert!(
                e.contains("mysql+pymysql://placement:***@db/placement"),
                "the password is not shown: {e}"
            );
        }
    }

    #[test]
    fn passwords_are_hidden_in_messages() {
        assert_eq!(
            redacted("mysql+pymysql://placement:s3cret@db:3306/placement?ssl_ca=/ca.pem"),
            "mysql+pymysql://placement:***@db:3306/placement?ssl_ca=/ca.pem"
        );
        assert_eq!(
            redacted("postgresql://placement@db/placement"),
            "postgresql://placement@db/placement"
        );
        assert_eq!(
            redacted("sqlite:////var/lib/p.db"),
            "sqlite:////var/lib/p.db"
        );
    }

    #[test]
    fn postgresql_options_are_libpq_s() {
        assert_eq!(
            driver("postgresql://p@db/placement?sslmode=verify-full&sslrootcert=/ca.pem"),
            "postgres://p@db/placement?sslmode=verify-full&sslrootcert=/ca.pem"
        );
        assert_eq!(
            driver("postgresql://p@db/placement?sslcert=/c.pem&sslkey=/c.key&sslmode=require"),
            "postgres://p@db/placement?sslcert=/c.pem&sslkey=/c.key&sslmode=require"
        );
        let e = refusal("postgresql://p:pw@db/placement?sslcrl=/crl.pem");
        assert!(
            e.contains("the database URL option sslcrl is not supported")
                && e.contains("sslmode, sslrootcert, sslcert, sslkey"),
            "{e}"
        );
    }
}
