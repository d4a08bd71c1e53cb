//! The listeners of `placement-api` (crates/placement/README.md, "Behind
//! a proxy, and the listeners"): HTTPS with a certificate and key, with a
//! client certificate required when a client CA is given, and a Unix
//! socket; each with a real client (reqwest over rustls, curl over the
//! socket) against the real binary. Settings that cannot be honoured stop
//! the start with exit code 2 and the reason.
//!
//! Behind a proxy and under a root path, links and `Location` carry the
//! prefix (and an absolute `Location` the forwarded scheme and host), and
//! the request log shows the forwarded client address, only when
//! `enable_proxy_headers_parsing` is on.
//!
//! The test certificates are made with the `openssl` command.

use std::io::{BufRead as _, BufReader};
use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use microversion_test_support::Scratch;

/// A running `placement-api`, killed if a test leaves it running.
struct Service {
    child: Child,
    output: Arc<Mutex<String>>,
}

impl Service {
    /// Starts the binary with `args` (and noauth2 on a SQLite file in
    /// `dir`), and waits until it says where it listens.
    fn start(dir: &Path, args: &[String]) -> Service {
        let database = format!("sqlite:///{}", dir.join("placement.db").display());
        let mut child = Command::new(env!("CARGO_BIN_EXE_placement-api"))
            .args(["--database", &database, "--auth-strategy", "noauth2"])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("placement-api starts");
        let output = Arc::new(Mutex::new(String::new()));
        // The log (standard output) joins what it says.
        let log = BufReader::new(child.stdout.take().expect("stdout"));
        let logged = Arc::clone(&output);
        thread::spawn(move || {
            for line in log.lines().map_while(Result::ok) {
                logged.lock().unwrap().push_str(&format!("{line}\n"));
            }
        });
        let (listening, on_listening) = std::sync::mpsc::channel();
        let lines = BufReader::new(child.stderr.take().expect("stderr"));
        let seen = Arc::clone(&output);
        thread::spawn(move || {
            for line in lines.lines().map_while(Result::ok) {
                seen.lock().unwrap().push_str(&format!("{line}\n"));
                if line.starts_with("placement-api listening on") {
                    let _ = listening.send(());
                }
            }
        });
        let mut service = Service { child, output };
        if on_listening.recv_timeout(Duration::from_secs(60)).is_err() {
            let _ = service.child.kill();
            panic!("placement-api did not start: {}", service.output());
        }
        service
    }

    fn output(&self) -> String {
        self.output.lock().unwrap().clone()
    }

    /// Whether the output shows `text` within a few seconds (the pipes
    /// are copied by threads).
    fn said(&self, text: &str) -> bool {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !self.output().contains(text) {
            if Instant::now() > deadline {
                return false;
            }
            thread::sleep(Duration::from_millis(20));
        }
        true
    }

    /// SIGTERM, then the exit code (within 30 s).
    fn stop(mut self) -> Option<i32> {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(status.success());
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return status.code();
            }
            assert!(Instant::now() < deadline, "no exit: {}", self.output());
            thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_addr() -> SocketAddr {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free loopback port")
}

/// Runs the binary with `args` expecting it to refuse to start: its exit
/// code and what it said.
fn refused(dir: &Path, args: &[&str]) -> (Option<i32>, String) {
    let database = format!("sqlite:///{}", dir.join("placement.db").display());
    let out = Command::new(env!("CARGO_BIN_EXE_placement-api"))
        .args(["--database", &database, "--auth-strategy", "noauth2"])
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("placement-api runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the openssl command runs (the TLS tests need it)");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A test CA, and a server and a client certificate it signed; the
/// server's for `localhost` and 127.0.0.1.
struct Pki {
    ca: PathBuf,
    server_cert: PathBuf,
    server_key: PathBuf,
    client_cert: PathBuf,
    client_key: PathBuf,
}

fn make_pki(dir: &Path, ca_name: &str) -> Pki {
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-nodes",
    ];
    let ca = format!("{ca_name}.pem");
    let ca_key = format!("{ca_name}.key");
    let subject = format!("/CN={ca_name}");
    let mut args = vec!["req", "-x509"];
    args.extend(ec);
    args.extend([
        "-keyout", &ca_key, "-out", &ca, "-days", "2", "-subj", &subject,
    ]);
    openssl(dir, &args);
    for (name, usage, san) in [
        (
            "server",
            "serverAuth",
            "subjectAltName=DNS:localhost,IP:127.0.0.1\n",
        ),
        ("client", "clientAuth", ""),
    ] {
        let ext = format!("{name}-{ca_name}.ext");
        std::fs::write(
            dir.join(&ext),
            format!("extendedKeyUsage={usage}\nbasicConstraints=CA:FALSE\n{san}"),
        )
        .unwrap();
        let key = format!("{name}-{ca_name}.key");
        let csr = format!("{name}-{ca_name}.csr");
        let cert = format!("{name}-{ca_name}.pem");
        let subject = format!("/CN={name}");
        let mut args = vec!["req"];
        args.extend(ec);
        args.extend(["-keyout", &key, "-out", &csr, "-subj", &subject]);
        openssl(dir, &args);
        openssl(
            dir,
            &[
                "x509",
                "-req",
                "-in",
                &csr,
                "-CA",
                &ca,
                "-CAkey",
                &ca_key,
                "-CAcreateserial",
                "-out",
                &cert,
                "-days",
                "2",
                "-extfile",
                &ext,
            ],
        );
    }
    Pki {
        ca: dir.join(ca),
        server_cert: dir.join(format!("server-{ca_name}.pem")),
        server_key: dir.join(format!("server-{ca_name}.key")),
        client_cert: dir.join(format!("client-{ca_name}.pem")),
        client_key: dir.join(format!("client-{ca_name}.key")),
    }
}

fn client(ca: &Path, identity: Option<(&Path, &Path)>) -> reqwest::Client {
    let ca = reqwest::Certificate::from_pem(&std::fs::read(ca).unwrap()).unwrap();
    let mut builder = reqwest::Client::builder()
        .use_rustls_tls()
        .tls_built_in_root_certs(false)
        .add_root_certificate(ca)
        .timeout(Duration::from_secs(30));
    if let Some((cert, key)) = identity {
        let mut pem = std::fs::read(cert).unwrap();
        pem.extend(std::fs::read(key).unwrap());
        builder = builder.identity(reqwest::Identity::from_pem(&pem).unwrap());
    }
    builder.build().unwrap()
}

fn path_arg(flag: &str, path: &Path) -> [String; 2] {
    [flag.to_owned(), path.display().to_string()]
}

#[tokio::test]
async fn https_with_a_certificate_and_key() {
    let dir = Scratch::new("placement-tls");
    let pki = make_pki(dir.path(), "ca");
    let addr = free_addr();
    let mut args = vec!["--bind".to_owned(), addr.to_string()];
    args.extend(path_arg("--tls-cert-file", &pki.server_cert));
    args.extend(path_arg("--tls-key-file", &pki.server_key));
    let service = Service::start(dir.path(), &args);
    assert!(
        service
            .output()
            .contains(&format!("placement-api listening on https://{addr}")),
        "{}",
        service.output()
    );
    let https = client(&pki.ca, None);
    let base = format!("https://localhost:{}", addr.port());
    let root = https.get(format!("{base}/")).send().await.unwrap();
    assert_eq!(root.status(), 200);
    let body: serde_json::Value = root.json().await.unwrap();
    assert_eq!(body["versions"][0]["id"], "v1.0");
    // webob makes `Location` absolute with the request's scheme: https.
    let created = https
        .put(format!("{base}/traits/CUSTOM_OVER_TLS"))
        .header("x-auth-token", "admin")
        .header("openstack-api-version", "placement 1.6")
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), 201);
    assert_eq!(
        created.headers()["location"],
        format!("https://localhost:{}/traits/CUSTOM_OVER_TLS", addr.port()).as_str()
    );
    // Plain HTTP on the TLS port gets no answer; a client that does not
    // trust the certificate's CA refuses it.
    let plain = reqwest::Client::new()
        .get(format!("http://{addr}/"))
        .timeout(Duration::from_secs(15))
        .send()
        .await;
    assert!(plain.is_err(), "{plain:?}");
    let other = pki_other(dir.path());
    let untrusting = client(&other, None).get(format!("{base}/")).send().await;
    assert!(untrusting.is_err(), "{untrusting:?}");
    assert_eq!(service.stop(), Some(0));
}

/// A CA that signed nothing the service serves.
fn pki_other(dir: &Path) -> PathBuf {
    make_pki(dir, "other-ca").ca
}

#[tokio::test]
async fn https_requiring_a_client_certificate() {
    let dir = Scratch::new("placement-mtls");
    let pki = make_pki(dir.path(), "ca");
    let other = make_pki(dir.path(), "other-ca");
    let addr = free_addr();
    let mut args = vec!["--bind".to_owned(), addr.to_string()];
    args.extend(path_arg("--tls-cert-file", &pki.server_cert));
    args.extend(path_arg("--tls-key-file", &pki.server_key));
    args.extend(path_arg("--tls-client-ca-file", &pki.ca));
    let service = Service::start(dir.path(), &args);
    let url = format!("https://127.0.0.1:{}/", addr.port());
    let with = client(&pki.ca, Some((&pki.client_cert, &pki.client_key)));
    let answer = with.get(&url).send().await.unwrap();
    assert_eq!(answer.status(), 200);
    let without = client(&pki.ca, None).get(&url).send().await;
    assert!(without.is_err(), "{without:?}");
    // A certificate another CA signed is refused too.
    let foreign = client(&pki.ca, Some((&other.client_cert, &other.client_key)))
        .get(&url)
        .send()
        .await;
    assert!(foreign.is_err(), "{foreign:?}");
    assert_eq!(service.stop(), Some(0));
}

#[test]
fn a_unix_socket_with_curl() {
    let dir = Scratch::new("placement-unix");
    let socket = dir.join("placement.sock");
    let service = Service::start(dir.path(), &path_arg("--unix-socket", &socket));
    assert!(
        service.output().contains(&format!(
            "placement-api listening on unix:{}",
            socket.display()
        )),
        "{}",
        service.output()
    );
    let curl = |args: &[&str]| {
        let out = Command::new("curl")
            .args(["-sS", "--max-time", "30", "--unix-socket"])
            .arg(&socket)
            .args(args)
            .output()
            .expect("curl runs (the Unix socket test needs it)");
        assert!(
            out.status.success(),
            "curl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let root = curl(&["http://placement/"]);
    assert!(root.starts_with(r#"{"versions":[{"id":"v1.0""#), "{root}");
    let created = curl(&[
        "-i",
        "-X",
        "PUT",
        "-H",
        "x-auth-token: admin",
        "-H",
        "openstack-api-version: placement 1.6",
        "http://placement/traits/CUSTOM_OVER_UNIX",
    ]);
    assert!(created.starts_with("HTTP/1.1 201"), "{created}");
    assert!(
        created
            .to_ascii_lowercase()
            .contains("location: http://placement/traits/custom_over_unix\r\n"),
        "{created}"
    );
    // A second service cannot take the socket while the first listens.
    let (code, said) = refused(
        dir.path(),
        &["--unix-socket", &socket.display().to_string()],
    );
    assert_eq!(code, Some(1), "{said}");
    assert!(said.contains("another process listens on it"), "{said}");
    assert_eq!(service.stop(), Some(0));
    assert!(!socket.exists(), "the socket file is removed at exit");
    // A stale socket file (its process gone) is replaced.
    let stale = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    drop(stale);
    assert!(socket.exists());
    let service = Service::start(dir.path(), &path_arg("--unix-socket", &socket));
    assert!(curl(&["http://placement/"]).contains("v1.0"));
    assert_eq!(service.stop(), Some(0));
}

#[test]
fn settings_that_cannot_be_honoured_are_refused() {
    let dir = Scratch::new("placement-listen-refused");
    let pki = make_pki(dir.path(), "ca");
    let cert = pki.server_cert.display().to_string();
    let key = pki.server_key.display().to_string();
    let missing = dir.join("missing.pem").display().to_string();
    let not_a_socket = dir.join("file");
    std::fs::write(&not_a_socket, "x").unwrap();
    let not_a_socket = not_a_socket.display().to_string();
    for (args, says) in [
        (
            vec!["--tls-key-file", &key],
            "tls_key_file (--tls-key-file) is set without [server] tls_cert_file".to_owned(),
        ),
        (
            vec!["--tls-cert-file", &cert],
            "tls_cert_file (--tls-cert-file) needs [server] tls_key_file".to_owned(),
        ),
        (
            vec!["--tls-cert-file", &missing, "--tls-key-file", &key],
            format!("TLS certificate file {missing}: cannot be read"),
        ),
        (
            // The key of another certificate.
            vec![
                "--tls-cert-file",
                &cert,
                "--tls-key-file",
                &pki.client_key.display().to_string(),
            ],
            format!("TLS certificate {cert} and key"),
        ),
        (
            vec!["--tls-cert-file", &cert, "--tls-key-file", &cert],
            format!("TLS key file {cert}: no private key in PEM form in it"),
        ),
        (
            vec!["--unix-socket", "/tmp/p.sock", "--bind", "127.0.0.1:1"],
            "are exclusive".to_owned(),
        ),
        (
            vec!["--root-path", "placement"],
            "a root path starts with /".to_owned(),
        ),
    ] {
        let (code, said) = refused(dir.path(), &args);
        assert_eq!(code, Some(2), "{args:?}: {said}");
        assert!(said.contains(&says), "{args:?}: {said}");
    }
    let (code, said) = refused(dir.path(), &["--unix-socket", &not_a_socket]);
    assert_eq!(code, Some(1), "{said}");
    assert!(
        said.contains("the file exists and is not a socket"),
        "{said}"
    );
}

/// A service at `--root-path /placement`, with proxy headers parsing as
/// `parse` says (in a placement.conf).
fn mounted(dir: &Path, parse: bool) -> (Service, String) {
    let conf = dir.join("placement.conf");
    std::fs::write(
        &conf,
        format!(
            "[placement_database]\nconnection = sqlite://\n\
             [oslo_middleware]\nenable_proxy_headers_parsing = {parse}\n"
        ),
    )
    .unwrap();
    let addr = free_addr();
    let mut args = vec!["--bind".to_owned(), addr.to_string()];
    args.extend(path_arg("--config-file", &conf));
    args.extend(["--root-path".to_owned(), "/placement".to_owned()]);
    (Service::start(dir, &args), format!("http://{addr}"))
}

async fn send(request: reqwest::RequestBuilder) -> (u16, reqwest::header::HeaderMap, String) {
    let answer = request
        .header("x-auth-token", "admin")
        .send()
        .await
        .expect("an answer");
    let status = answer.status().as_u16();
    let headers = answer.headers().clone();
    (status, headers, answer.text().await.unwrap())
}

#[tokio::test]
async fn under_a_root_path_behind_a_proxy() {
    let dir = Scratch::new("placement-proxy");
    let (service, base) = mounted(dir.path(), true);
    let http = reqwest::Client::new();
    let host = base.trim_start_matches("http://").to_owned();
    // Only what is under the prefix is served.
    let (status, _, body) = send(http.get(format!("{base}/placement/"))).await;
    assert_eq!(status, 200, "{body}");
    assert!(
        body.contains(r#""links":[{"rel":"self","href":""}]"#),
        "{body}"
    );
    assert_eq!(send(http.get(format!("{base}/placement"))).await.0, 200);
    for outside in ["/", "/resource_providers", "/placementx/traits"] {
        let (status, _, body) = send(http.get(format!("{base}{outside}"))).await;
        assert_eq!(status, 404, "{outside}: {body}");
        assert!(body.contains("served under /placement"), "{body}");
    }
    // Without proxy headers: the request's host, the mount's prefix.
    let uuid = "7d4f2b51-0b7e-4d4a-9c42-6c5f4e0a1b2c";
    let (status, headers, body) = send(
        http.post(format!("{base}/placement/resource_providers"))
            .header("openstack-api-version", "placement 1.20")
            .json(&serde_json::json!({"name": "rp1", "uuid": uuid})),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        headers["location"],
        format!("http://{host}/placement/resource_providers/{uuid}").as_str()
    );
    assert!(
        body.contains(&format!(
            r#""links":[{{"rel":"self","href":"/placement/resource_providers/{uuid}"}},{{"rel":"inventories","href":"/placement/resource_providers/{uuid}/inventories"}}"#
        )),
        "{body}"
    );
    let (_, _, listed) = send(
        http.get(format!("{base}/placement/resource_providers"))
            .header("openstack-api-version", "placement 1.39"),
    )
    .await;
    assert!(
        listed.contains(&format!(
            r#""href":"/placement/resource_providers/{uuid}/allocations""#
        )),
        "{listed}"
    );
    // X-Forwarded-*: scheme, host and a prefix before the mount's.
    let forwarded = |request: reqwest::RequestBuilder| {
        request
            .header("x-forwarded-for", "192.0.2.7")
            .header("x-forwarded-proto", "https")
            .header("x-forwarded-host", "cloud.example:443")
            .header("x-forwarded-prefix", "/edge")
    };
    let (status, headers, _) = send(forwarded(
        http.put(format!("{base}/placement/traits/CUSTOM_PROXIED"))
            .header("openstack-api-version", "placement 1.6"),
    ))
    .await;
    assert_eq!(status, 201);
    assert_eq!(
        headers["location"],
        "https://cloud.example/edge/placement/traits/CUSTOM_PROXIED"
    );
    let (status, headers, _) = send(forwarded(
        http.post(format!("{base}/placement/resource_classes"))
            .header("openstack-api-version", "placement 1.2")
            .json(&serde_json::json!({"name": "CUSTOM_PROXIED"})),
    ))
    .await;
    assert_eq!(status, 201);
    assert_eq!(
        headers["location"],
        "/edge/placement/resource_classes/CUSTOM_PROXIED"
    );
    let (_, _, shown) = send(forwarded(
        http.get(format!("{base}/placement/resource_classes/CUSTOM_PROXIED"))
            .header("openstack-api-version", "placement 1.2"),
    ))
    .await;
    assert_eq!(
        shown,
        r#"{"name": "CUSTOM_PROXIED", "links": [{"rel": "self", "href": "/edge/placement/resource_classes/CUSTOM_PROXIED"}]}"#
            .replace(": ", ":")
            .replace(", ", ",")
    );
    // Forwarded wins over X-Forwarded-*; the log shows its `for`.
    let (status, headers, _) = send(
        http.put(format!("{base}/placement/traits/CUSTOM_RFC7239"))
            .header("openstack-api-version", "placement 1.6")
            .header(
                "forwarded",
                "for=198.51.100.9;proto=https;host=api.example, for=10.0.0.1",
            )
            .header("x-forwarded-for", "192.0.2.99")
            .header("x-forwarded-proto", "http"),
    )
    .await;
    assert_eq!(status, 201);
    assert_eq!(
        headers["location"],
        "https://api.example/placement/traits/CUSTOM_RFC7239"
    );
    assert!(
        service.said(r#"192.0.2.7 "PUT /edge/placement/traits/CUSTOM_PROXIED" status: 201"#),
        "{}",
        service.output()
    );
    assert!(
        service.said(r#"198.51.100.9 "PUT /placement/traits/CUSTOM_RFC7239" status: 201"#),
        "{}",
        service.output()
    );
    assert!(
        service.said(r#"127.0.0.1 "GET /placement/resource_providers" status: 200"#),
        "{}",
        service.output()
    );
    assert_eq!(service.stop(), Some(0));
}

/// With `enable_proxy_headers_parsing` off (the default), the headers
/// change nothing: the links carry the mount's prefix only, and the log
/// shows the connection's address.
#[tokio::test]
async fn proxy_headers_are_ignored_unless_enabled() {
    let dir = Scratch::new("placement-noproxy");
    let (service, base) = mounted(dir.path(), false);
    let host = base.trim_start_matches("http://").to_owned();
    let (status, headers, _) = send(
        reqwest::Client::new()
            .put(format!("{base}/placement/traits/CUSTOM_DIRECT"))
            .header("openstack-api-version", "placement 1.6")
            .header("x-forwarded-for", "192.0.2.7")
            .header("x-forwarded-proto", "https")
            .header("x-forwarded-host", "cloud.example")
            .header("x-forwarded-prefix", "/edge")
            .header("forwarded", "for=198.51.100.9;proto=https"),
    )
    .await;
    assert_eq!(status, 201);
    assert_eq!(
        headers["location"],
        format!("http://{host}/placement/traits/CUSTOM_DIRECT").as_str()
    );
    assert!(
        service.said(r#"127.0.0.1 "PUT /placement/traits/CUSTOM_DIRECT" status: 201"#),
        "{}",
        service.output()
    );
    assert_eq!(service.stop(), Some(0));
}
