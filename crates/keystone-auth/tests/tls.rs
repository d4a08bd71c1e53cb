//! KeystoneClient against the fake Keystone over https, as
//! `[keystone_authtoken]`'s `cafile`, `certfile`, `keyfile` and `insecure`
//! set it up: Keystone's certificate checked against the CA file, the
//! client's certificate presented when Keystone asks for one. The
//! certificates are made for each run by the `openssl` command.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use support::FakeKeystone;

/// A CA, a server certificate for 127.0.0.1 and a client certificate, all
/// signed by the CA, in a new directory.
struct Certificates {
    dir: PathBuf,
}

impl Certificates {
    fn make() -> Option<Certificates> {
        if Command::new("openssl").arg("version").output().is_err() {
            return None;
        }
        let dir = std::env::temp_dir().join(format!(
            "keystone-auth-tls-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let run = |args: &[&str]| {
            let out = Command::new("openssl")
                .args(args)
                .current_dir(&dir)
                .output()
                .expect("openssl runs");
            assert!(out.status.success(), "openssl {args:?}: {out:?}");
        };
        let ec = [
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
        ];
        let mut ca = vec!["req", "-x509", "-days", "1", "-subj", "/CN=test CA"];
        ca.extend(ec);
        ca.extend(["-keyout", "ca.key", "-out", "ca.pem"]);
        run(&ca);
        for (name, extension) in [
            ("server", "subjectAltName=IP:127.0.0.1"),
            ("client", "extendedKeyUsage=clientAuth"),
        ] {
            let (key, csr, pem) = (
                format!("{name}.key"),
                format!("{name}.csr"),
                format!("{name}.pem"),
            );
            let subject = format!("/CN={name}");
            let mut request = vec!["req", "-new", "-subj", &subject];
            request.extend(ec);
            request.extend(["-keyout", &key, "-out", &csr]);
            run(&request);
            std::fs::write(dir.join(format!("{name}.ext")), format!("{extension}\n")).unwrap();
            let ext = format!("{name}.ext");
            run(&[
                "x509",
                "-req",
                "-in",
                &csr,
                "-CA",
                "ca.pem",
                "-CAkey",
                "ca.key",
                "-CAcreateserial",
                "-days",
                "1",
                "-extfile",
                &ext,
                "-out",
                &pem,
            ]);
        }
        Some(Certificates { dir })
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// Keystone's TLS: its certificate, and when `client_ca` is set, a
    /// client certificate signed by the CA required.
    fn server_config(&self, require_client: bool) -> Arc<rustls::ServerConfig> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let certs = certs(&self.path("server.pem"));
        let key = PrivateKeyDer::from_pem_file(self.path("server.key")).unwrap();
        let builder = rustls::ServerConfig::builder_with_provider(Arc::clone(&provider))
            .with_safe_default_protocol_versions()
            .unwrap();
        let config = if require_client {
            let mut roots = rustls::RootCertStore::empty();
            for cert in certs_of(&self.path("ca.pem")) {
                roots.add(cert).unwrap();
            }
            let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
                Arc::new(roots),
                provider,
            )
            .build()
            .unwrap();
            builder
                .with_client_cert_verifier(verifier)
                .with_single_cert(certs, key)
        } else {
            builder.with_no_client_auth().with_single_cert(certs, key)
        };
        Arc::new(config.unwrap())
    }
}

impl Drop for Certificates {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn certs(path: &Path) -> Vec<CertificateDer<'static>> {
    certs_of(path)
}

fn certs_of(path: &Path) -> Vec<CertificateDer<'static>> {
    CertificateDer::pem_file_iter(path)
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

#[tokio::test]
async fn cafile_checks_keystone_and_certfile_answers_its_request() {
    let Some(c) = Certificates::make() else {
        eprintln!("no openssl command here: the TLS settings are not checked");
        return;
    };
    // Keystone's certificate, checked against cafile.
    let ks = FakeKeystone::start_tls(c.server_config(false)).await;
    let token = ks.project_token("alice", "p1", &["member"]);
    let trusting = ks
        .client_builder()
        .ca_file(c.path("ca.pem"))
        .build()
        .unwrap();
    assert_eq!(trusting.validate(&token).await.unwrap().user_id, "alice-id");
    // Without cafile the test CA is not trusted: Keystone is unreachable.
    let e = ks
        .client_builder()
        .build()
        .unwrap()
        .authenticate()
        .await
        .unwrap_err();
    assert!(e.is_unavailable(), "{e:?}");
    // insecure skips the check.
    let insecure = ks.client_builder().insecure(true).build().unwrap();
    assert!(insecure.authenticate().await.is_ok());

    // A Keystone that asks for a client certificate: certfile and keyfile.
    let ks = FakeKeystone::start_tls(c.server_config(true)).await;
    let with_cert = ks
        .client_builder()
        .ca_file(c.path("ca.pem"))
        .client_identity(c.path("client.pem"), c.path("client.key"))
        .build()
        .unwrap();
    let token = ks.project_token("bob", "p1", &["member"]);
    assert_eq!(with_cert.validate(&token).await.unwrap().user_id, "bob-id");
    let without = ks
        .client_builder()
        .ca_file(c.path("ca.pem"))
        .build()
        .unwrap();
    let e = without.authenticate().await.unwrap_err();
    assert!(e.is_unavailable(), "{e:?}");

    // Unreadable or mismatched files are named when the client is built.
    let e = ks
        .client_builder()
        .client_identity(c.path("client.pem"), c.path("missing.key"))
        .build()
        .unwrap_err();
    assert_eq!(e.setting(), "keyfile");
    let e = ks
        .client_builder()
        .client_identity(c.path("ca.key"), c.path("client.key"))
        .build()
        .unwrap_err();
    assert_eq!(e.setting(), "certfile");
}
