//! Where `placement-api` listens and under which path: plain TCP (the
//! default), TLS over TCP (rustls), or a Unix socket; and the path prefix
//! of a mount such as devstack's `/placement`.
//!
//! These are settings of this service, not of upstream's: upstream leaves
//! the listener and the mount to its WSGI server (uwsgi's `https` and
//! `socket` options, mod_wsgi's `WSGIScriptAlias`). They are read from the
//! `[server]` group of `placement.conf` and from flags, which win:
//!
//! | key (`[server]`) | flag | meaning |
//! |---|---|---|
//! | `tls_cert_file` | `--tls-cert-file` | PEM certificate chain: serve HTTPS on the bind address |
//! | `tls_key_file` | `--tls-key-file` | PEM private key of that certificate |
//! | `tls_client_ca_file` | `--tls-client-ca-file` | PEM CA certificates: require a client certificate they signed |
//! | `unix_socket` | `--unix-socket` | listen on this Unix socket rather than TCP |
//! | `root_path` | `--root-path` | serve under this path prefix, as under a mount |
//!
//! A combination that cannot be honoured (a key without a certificate,
//! TLS on a Unix socket, `--bind` with a Unix socket) is refused when the
//! settings are loaded; files that cannot be read or parsed are refused
//! before the service starts ([`ServerSettings::tls_config`]).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, bail};
use tokio::net::{TcpListener, TcpStream, UnixListener};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;

use crate::oslo_config::ConfigFiles;

/// The group of `placement.conf` these settings are read from.
pub const GROUP: &str = "server";

/// The keys of [`GROUP`].
pub(crate) const KEYS: &[&str] = &[
    "tls_cert_file",
    "tls_key_file",
    "tls_client_ca_file",
    "unix_socket",
    "root_path",
];

/// The listener and mount settings (see the module's documentation).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ServerSettings {
    /// PEM certificate chain served over TLS.
    pub tls_cert_file: Option<PathBuf>,
    /// PEM private key of [`Self::tls_cert_file`].
    pub tls_key_file: Option<PathBuf>,
    /// PEM CA certificates; when set, a client must present a
    /// certificate one of them signed.
    pub tls_client_ca_file: Option<PathBuf>,
    /// A Unix socket to listen on instead of TCP.
    pub unix_socket: Option<PathBuf>,
    /// The path prefix the service is served under.
    pub root_path: Option<RootPath>,
}

impl ServerSettings {
    /// Reads the `[server]` group of `files`.
    ///
    /// # Errors
    ///
    /// Fails when `root_path` is not a path prefix (naming the file,
    /// group and key).
    pub fn read(files: &ConfigFiles) -> anyhow::Result<ServerSettings> {
        let path = |key: &str| {
            files
                .get(GROUP, key)
                .map(str::trim)
                .filter(|v| !v.is_empty())
                .map(|v| relative_to(files.origin(GROUP, key), v))
        };
        let root_path = match files.get(GROUP, "root_path").map(str::trim) {
            None | Some("") => None,
            Some(v) => Some(v.parse().with_context(|| {
                format!(
                    "{}: [{GROUP}] root_path = {v}",
                    files.origin(GROUP, "root_path").display()
                )
            })?),
        };
        Ok(ServerSettings {
            tls_cert_file: path("tls_cert_file"),
            tls_key_file: path("tls_key_file"),
            tls_client_ca_file: path("tls_client_ca_file"),
            unix_socket: path("unix_socket"),
            root_path,
        })
    }

    /// These settings, each replaced by `overrides`' when that is set.
    #[must_use]
    pub fn overridden_by(self, overrides: ServerSettings) -> ServerSettings {
        ServerSettings {
            tls_cert_file: overrides.tls_cert_file.or(self.tls_cert_file),
            tls_key_file: overrides.tls_key_file.or(self.tls_key_file),
            tls_client_ca_file: overrides.tls_client_ca_file.or(self.tls_client_ca_file),
            unix_socket: overrides.unix_socket.or(self.unix_socket),
            root_path: overrides.root_path.or(self.root_path),
        }
    }

    /// Whether the service is served over TLS.
    #[must_use]
    pub fn is_tls(&self) -> bool {
        self.tls_cert_file.is_some()
    }

    /// Refuses a combination that cannot be honoured; `bind_given` says
    /// whether `--bind` (or `PLACEMENT_BIND`) was given.
    ///
    /// # Errors
    ///
    /// A key without its certificate or the reverse, a client CA without
    /// TLS, TLS on a Unix socket, or `--bind` with a Unix socket.
    pub fn check(&self, bind_given: bool) -> anyhow::Result<()> {
        match (&self.tls_cert_file, &self.tls_key_file) {
            (Some(_), None) => bail!(
                "[{GROUP}] tls_cert_file (--tls-cert-file) needs [{GROUP}] tls_key_file \
                 (--tls-key-file): the private key of the certificate"
            ),
            (None, Some(_)) => bail!(
                "[{GROUP}] tls_key_file (--tls-key-file) is set without [{GROUP}] tls_cert_file \
                 (--tls-cert-file): give the certificate too"
            ),
            _ => {}
        }
        if self.tls_client_ca_file.is_some() && !self.is_tls() {
            bail!(
                "[{GROUP}] tls_client_ca_file (--tls-client-ca-file) needs TLS: set \
                 tls_cert_file and tls_key_file (--tls-cert-file, --tls-key-file) too"
            );
        }
        if let Some(socket) = &self.unix_socket {
            if self.is_tls() {
                bail!(
                    "[{GROUP}] unix_socket (--unix-socket) {} cannot be served over TLS: \
                     leave TLS to the proxy in front of the socket, or listen on TCP",
                    socket.display()
                );
            }
            if bind_given {
                bail!(
                    "--bind and [{GROUP}] unix_socket (--unix-socket) {} are exclusive: \
                     the service listens on one of them",
                    socket.display()
                );
            }
        }
        Ok(())
    }

    /// The TLS configuration of the certificate, key and client CA files,
    /// when TLS is asked for.
    ///
    /// # Errors
    ///
    /// Fails, naming the file, when one cannot be read, holds no
    /// certificate or key, or the key does not match the certificate.
    pub fn tls_config(&self) -> anyhow::Result<Option<Arc<rustls::ServerConfig>>> {
        let (Some(cert_file), Some(key_file)) = (&self.tls_cert_file, &self.tls_key_file) else {
            return Ok(None);
        };
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let certs = read_certificates(cert_file)?;
        let key = {
            use rustls::pki_types::PrivateKeyDer;
            use rustls::pki_types::pem::PemObject as _;
            PrivateKeyDer::from_pem_file(key_file).map_err(|e| {
                anyhow::anyhow!(
                    "TLS key file {}: {}",
                    key_file.display(),
                    pem_error(&e, "no private key")
                )
            })?
        };
        let builder = rustls::ServerConfig::builder_with_provider(Arc::clone(&provider))
            .with_safe_default_protocol_versions()
            .context("the TLS protocol versions")?;
        let builder = match &self.tls_client_ca_file {
            None => builder.with_no_client_auth(),
            Some(ca_file) => {
                let mut roots = rustls::RootCertStore::empty();
                for cert in read_certificates(ca_file)? {
                    roots.add(cert).with_context(|| {
                        format!("TLS client CA file {}: a certificate", ca_file.display())
                    })?;
                }
                let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
                    Arc::new(roots),
                    provider,
                )
                .build()
                .with_context(|| format!("TLS client CA file {}", ca_file.display()))?;
                builder.with_client_cert_verifier(verifier)
            }
        };
        let mut config = builder.with_single_cert(certs, key).with_context(|| {
            format!(
                "TLS certificate {} and key {}",
                cert_file.display(),
                key_file.display()
            )
        })?;
        // The HTTP server speaks HTTP/1.1 only.
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Some(Arc::new(config)))
    }
}

/// A value of a path key, relative to the directory of the file that set
/// it when relative (as `[oslo_policy] policy_file`).
fn relative_to(origin: &Path, value: &str) -> PathBuf {
    let value = PathBuf::from(value);
    match origin.parent() {
        Some(dir) if value.is_relative() && !dir.as_os_str().is_empty() => dir.join(value),
        _ => value,
    }
}

fn read_certificates(
    file: &Path,
) -> anyhow::Result<Vec<rustls::pki_types::CertificateDer<'static>>> {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject as _;
    let certs: Result<Vec<_>, _> = match CertificateDer::pem_file_iter(file) {
        Ok(iter) => iter.collect(),
        Err(e) => Err(e),
    };
    let certs = certs.map_err(|e| {
        anyhow::anyhow!(
            "TLS certificate file {}: {}",
            file.display(),
            pem_error(&e, "no certificate")
        )
    })?;
    if certs.is_empty() {
        bail!(
            "TLS certificate file {}: no PEM certificate in it",
            file.display()
        );
    }
    Ok(certs)
}

fn pem_error(e: &rustls::pki_types::pem::Error, missing: &str) -> String {
    use rustls::pki_types::pem::Error;
    match e {
        Error::Io(io) => format!("cannot be read: {io}"),
        Error::NoItemsFound => format!("{missing} in PEM form in it"),
        other => format!("not valid PEM: {other:?}"),
    }
}

/// The path prefix under which the service is served: `/` then path
/// segments, without a trailing `/` (`/placement`, `/api/placement`), made
/// of the characters a URL path may carry unescaped and `%` escapes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RootPath(Arc<str>);

impl RootPath {
    /// The prefix.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The rest of `path` when it is under this prefix: `/` for the
    /// prefix itself, `/x` for `prefix/x`; `None` otherwise.
    #[must_use]
    pub fn strip<'a>(&self, path: &'a str) -> Option<&'a str> {
        match path.strip_prefix(self.as_str())? {
            "" => Some("/"),
            rest if rest.starts_with('/') => Some(rest),
            _ => None,
        }
    }
}

/// Why a value is not a [`RootPath`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvalidRootPath(&'static str);

impl std::fmt::Display for InvalidRootPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

impl std::error::Error for InvalidRootPath {}

impl std::str::FromStr for RootPath {
    type Err = InvalidRootPath;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let Some(rest) = s.strip_prefix('/') else {
            return Err(InvalidRootPath("a root path starts with /"));
        };
        if rest.is_empty() {
            return Err(InvalidRootPath(
                "a root path of / alone is the root: leave it unset",
            ));
        }
        if rest.ends_with('/') {
            return Err(InvalidRootPath("a root path does not end with /"));
        }
        if rest.split('/').any(str::is_empty) {
            return Err(InvalidRootPath("a root path has no empty segment (//)"));
        }
        let allowed = |b: u8| b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:@/%".contains(&b);
        if !s.bytes().all(allowed) {
            return Err(InvalidRootPath(
                "a root path is made of letters, digits, -._~!$&'()*+,;=:@ and % escapes",
            ));
        }
        Ok(RootPath(s.into()))
    }
}

/// The Unix socket file, removed when the service stops.
#[derive(Debug)]
pub(crate) struct SocketFile(PathBuf);

impl SocketFile {
    pub(crate) fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for SocketFile {
    fn drop(&mut self) {
        if let Err(e) = std::fs::remove_file(&self.0) {
            tracing::warn!("cannot remove the socket {}: {e}", self.0.display());
        }
    }
}

/// Binds the Unix socket `path`. A socket file left by a service that
/// stopped without removing it (nothing accepts on it) is replaced; one a
/// live process listens on, or a file that is not a socket, is refused.
pub(crate) async fn bind_unix(path: &Path) -> anyhow::Result<(UnixListener, SocketFile)> {
    use std::os::unix::fs::FileTypeExt as _;
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        if !meta.file_type().is_socket() {
            bail!(
                "cannot listen on the Unix socket {}: the file exists and is not a socket",
                path.display()
            );
        }
        match tokio::net::UnixStream::connect(path).await {
            Ok(_) => bail!(
                "cannot listen on the Unix socket {}: another process listens on it",
                path.display()
            ),
            Err(_) => std::fs::remove_file(path).with_context(|| {
                format!("cannot remove the stale Unix socket {}", path.display())
            })?,
        }
    }
    let listener = UnixListener::bind(path)
        .with_context(|| format!("cannot listen on the Unix socket {}", path.display()))?;
    Ok((listener, SocketFile(path.to_path_buf())))
}

/// How long a client may take to complete the TLS handshake.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// TLS connections on a TCP listener, as an [`axum::serve::Listener`].
/// Connections are accepted and their handshakes run by a task of their
/// own (each handshake in a task, so that a slow client holds no other
/// back); the listener hands out the connections whose handshake
/// succeeded. Dropping it (the server stopping) closes the TCP listener.
#[derive(Debug)]
pub(crate) struct TlsListener {
    local: SocketAddr,
    ready: tokio::sync::mpsc::Receiver<(TlsStream<TcpStream>, SocketAddr)>,
    _accepting: AbortOnDrop,
}

#[derive(Debug)]
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl TlsListener {
    /// Serves TLS with `config` on `listener`.
    pub(crate) fn new(
        listener: TcpListener,
        config: Arc<rustls::ServerConfig>,
    ) -> std::io::Result<TlsListener> {
        let local = listener.local_addr()?;
        let acceptor = TlsAcceptor::from(config);
        let (sender, ready) = tokio::sync::mpsc::channel(64);
        let accepting = tokio::spawn(async move {
            loop {
                let (tcp, peer) = match listener.accept().await {
                    Ok(accepted) => accepted,
                    Err(e) => {
                        // Out of file descriptors, say: wait, as the
                        // plain listener does, rather than spin.
                        tracing::warn!("cannot accept a connection: {e}");
                        tokio::time::sleep(Duration::from_secs(1)).await;
                        continue;
                    }
                };
                if let Err(e) = tcp.set_nodelay(true) {
                    tracing::warn!("cannot set TCP_NODELAY on an accepted connection: {e}");
                }
                let acceptor = acceptor.clone();
                let sender = sender.clone();
                tokio::spawn(async move {
                    match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(tcp)).await {
                        Ok(Ok(tls)) => {
                            // Fails only when the server stopped.
                            let _ = sender.send((tls, peer)).await;
                        }
                        Ok(Err(e)) => tracing::info!("TLS handshake with {peer} failed: {e}"),
                        Err(_) => tracing::info!(
                            "TLS handshake with {peer} timed out after {} s",
                            HANDSHAKE_TIMEOUT.as_secs()
                        ),
                    }
                });
            }
        });
        Ok(TlsListener {
            local,
            ready,
            _accepting: AbortOnDrop(accepting),
        })
    }
}

impl axum::serve::Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.ready.recv().await {
            Some(accepted) => accepted,
            // The accepting task ended (it only does when aborted): no
            // connection comes any more.
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        Ok(self.local)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_paths() {
        for good in [
            "/placement",
            "/api/placement",
            "/a-b_c.d~e",
            "/%7Eplacement",
        ] {
            let root: RootPath = good.parse().unwrap();
            assert_eq!(root.as_str(), good);
        }
        for (bad, why) in [
            ("placement", "starts with /"),
            ("/", "leave it unset"),
            ("/placement/", "does not end with /"),
            ("/a//b", "no empty segment"),
            ("/a b", "made of letters"),
            ("/a?b", "made of letters"),
            ("/é", "made of letters"),
        ] {
            let err = bad.parse::<RootPath>().unwrap_err();
            assert!(err.to_string().contains(why), "{bad}: {err}");
        }
        let root: RootPath = "/placement".parse().unwrap();
        assert_eq!(root.strip("/placement"), Some("/"));
        assert_eq!(root.strip("/placement/"), Some("/"));
        assert_eq!(root.strip("/placement/traits"), Some("/traits"));
        assert_eq!(root.strip("/placementx/traits"), None);
        assert_eq!(root.strip("/traits"), None);
        assert_eq!(root.strip("/"), None);
    }

    fn settings(cert: bool, key: bool, ca: bool, unix: bool) -> ServerSettings {
        ServerSettings {
            tls_cert_file: cert.then(|| PathBuf::from("c.pem")),
            tls_key_file: key.then(|| PathBuf::from("k.pem")),
            tls_client_ca_file: ca.then(|| PathBuf::from("ca.pem")),
            unix_socket: unix.then(|| PathBuf::from("/run/p.sock")),
            root_path: None,
        }
    }

    #[test]
    fn combinations_that_cannot_be_honoured_are_refused() {
        assert!(settings(false, false, false, false).check(true).is_ok());
        assert!(settings(true, true, false, false).check(true).is_ok());
        assert!(settings(true, true, true, false).check(false).is_ok());
        assert!(settings(false, false, false, true).check(false).is_ok());
        for (s, bind, says) in [
            (
                settings(true, false, false, false),
                false,
                "needs [server] tls_key_file",
            ),
            (
                settings(false, true, false, false),
                false,
                "without [server] tls_cert_file",
            ),
            (settings(false, false, true, false), false, "needs TLS"),
            (
                settings(true, true, false, true),
                false,
                "cannot be served over TLS",
            ),
            (settings(false, false, false, true), true, "are exclusive"),
        ] {
            let err = s.check(bind).unwrap_err();
            assert!(err.to_string().contains(says), "{err}");
        }
    }

    #[test]
    fn flags_override_the_file() {
        let file = settings(true, true, false, false);
        let flags = ServerSettings {
            tls_key_file: Some(PathBuf::from("other.pem")),
            root_path: Some("/placement".parse().unwrap()),
            ..ServerSettings::default()
        };
        let merged = file.overridden_by(flags);
        assert_eq!(merged.tls_cert_file, Some(PathBuf::from("c.pem")));
        assert_eq!(merged.tls_key_file, Some(PathBuf::from("other.pem")));
        assert_eq!(merged.root_path.unwrap().as_str(), "/placement");
    }

    #[test]
    fn unreadable_or_empty_files_are_refused() {
        let dir = std::env::temp_dir().join(format!("placement-tls-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let empty = dir.join("empty.pem");
        std::fs::write(&empty, "not pem\n").unwrap();
        let missing = dir.join("missing.pem");
        let s = ServerSettings {
            tls_cert_file: Some(missing.clone()),
            tls_key_file: Some(empty.clone()),
            ..ServerSettings::default()
        };
        let err = s.tls_config().unwrap_err().to_string();
        assert!(
            err.starts_with(&format!(
                "TLS certificate file {}: cannot be read",
                missing.display()
            )),
            "{err}"
        );
        let s = ServerSettings {
            tls_cert_file: Some(empty.clone()),
            tls_key_file: Some(empty.clone()),
            ..ServerSettings::default()
        };
        let err = s.tls_config().unwrap_err().to_string();
        assert!(err.contains("no PEM certificate in it"), "{err}");
        assert!(ServerSettings::default().tls_config().unwrap().is_none());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
