//! The service as a process (crates/placement/README.md, "Stopping and
//! reloading"): SIGTERM lets the request in flight finish, refuses new
//! connections and exits 0; a request that never finishes is dropped at
//! the end of `--shutdown-timeout` and the exit code is 3; a changed
//! policy file is in force without a restart, an invalid one is not.
//! The systemd unit of `deploy/` runs a command that serves, waits for
//! the drain, and passes `systemd-analyze verify` and `security`.
//!
//! The real `placement-api` binary runs on a free loopback port with a
//! temporary SQLite database; requests are written by hand on a
//! `TcpStream`, so that one can be left half sent.

use std::io::{BufRead as _, BufReader, ErrorKind, Read as _, Write as _};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use microversion_test_support::Scratch;

/// A running `placement-api`, killed if a test leaves it running.
struct Service {
    child: Child,
    addr: SocketAddr,
    /// Everything it wrote on stderr and (its log) stdout so far.
    stderr: Arc<Mutex<String>>,
    _dir: Scratch,
}

impl Service {
    /// Starts the binary with `args` on a free port and a new SQLite
    /// file, and waits until it listens.
    fn start(args: &[&str]) -> Service {
        let dir = Scratch::new("placement-lifecycle");
        let database = format!("sqlite:///{}", dir.join("placement.db").display());
        let addr = free_addr();
        let mut all = vec![
            "--bind".to_owned(),
            addr.to_string(),
            "--database".to_owned(),
            database,
            "--auth-strategy".to_owned(),
            "noauth2".to_owned(),
        ];
        all.extend(args.iter().map(|a| (*a).to_owned()));
        Service::spawn(&all, addr, dir)
    }

    /// Starts the binary with exactly `args`, listening on `addr`, and
    /// waits until it listens; `dir` lives as long as the service.
    fn spawn(args: &[String], addr: SocketAddr, dir: Scratch) -> Service {
        let mut child = Command::new(env!("CARGO_BIN_EXE_placement-api"))
            .args(args)
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("placement-api starts");
        let stderr = Arc::new(Mutex::new(String::new()));
        // The log (standard output, as oslo.log's) joins what it says.
        let log = BufReader::new(child.stdout.take().expect("stdout"));
        let logged = Arc::clone(&stderr);
        thread::spawn(move || {
            for line in log.lines().map_while(Result::ok) {
                let mut seen = logged.lock().unwrap();
                seen.push_str(&line);
                seen.push('\n');
            }
        });
        let (listening, on_listening) = std::sync::mpsc::channel();
        let lines = BufReader::new(child.stderr.take().expect("stderr"));
        let seen = Arc::clone(&stderr);
        thread::spawn(move || {
            for line in lines.lines().map_while(Result::ok) {
                if line.starts_with("placement-api listening on") {
                    let _ = listening.send(());
                }
                let mut seen = seen.lock().unwrap();
                seen.push_str(&line);
                seen.push('\n');
            }
        });
        let mut service = Service {
            child,
            addr,
            stderr,
            _dir: dir,
        };
        if on_listening.recv_timeout(Duration::from_secs(60)).is_err() {
            let _ = service.child.kill();
            panic!("placement-api did not start: {}", service.stderr());
        }
        service
    }

    fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Whether the output shows `text` within a few seconds: threads copy
    /// the pipes into [`Self::stderr`], and may not have read a line the
    /// service wrote before it answered when the answer arrives.
    fn said(&self, text: &str) -> bool {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !self.stderr().contains(text) {
            if Instant::now() > deadline {
                return false;
            }
            thread::sleep(Duration::from_millis(20));
        }
        true
    }

    fn connect(&self) -> std::io::Result<TcpStream> {
        let stream = TcpStream::connect(self.addr)?;
        stream.set_read_timeout(Some(Duration::from_secs(60)))?;
        Ok(stream)
    }

    /// Sends a `GET` as `token` and reads its status and body.
    fn get(&self, path: &str, token: &str) -> (u16, String) {
        let mut stream = self.connect().expect("the service accepts");
        stream
            .write_all(head("GET", path, token, 0).as_bytes())
            .expect("the request is sent");
        response(&mut stream)
    }

    fn terminate(&self) {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(status.success(), "kill -TERM failed");
    }

    /// Waits for the process to exit, at most `bound`.
    fn exit_within(&mut self, bound: Duration) -> ExitStatus {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("the process is ours") {
                return status;
            }
            assert!(
                start.elapsed() < bound,
                "still running {bound:?} after SIGTERM: {}",
                self.stderr()
            );
            thread::sleep(Duration::from_millis(50));
        }
    }

    /// Whether connecting is refused, trying for a while: the signal is
    /// handled asynchronously.
    fn refuses_connections(&self) -> bool {
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(30) {
            match TcpStream::connect(self.addr) {
                Err(e) if e.kind() == ErrorKind::ConnectionRefused => return true,
                _ => thread::sleep(Duration::from_millis(20)),
            }
        }
        false
    }
}

/// A port the system just handed out and nobody holds now.
fn free_addr() -> SocketAddr {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
}

impl Drop for Service {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn head(method: &str, path: &str, token: &str, length: usize) -> String {
    format!(
        "{method} {path} HTTP/1.1\r\nhost: placement\r\nx-auth-token: {token}\r\n\
         content-type: application/json\r\ncontent-length: {length}\r\n\r\n"
    )
}

/// Sends the head of a request whose body is read slowly, and waits
/// until the service asks for the body (`100 Continue`): the request is
/// then in flight, its handler reading the body.
fn start_slow_request(stream: &mut TcpStream, length: usize) {
    let head = head("POST", "/resource_providers", "admin", length)
        .replace("\r\n\r\n", "\r\nexpect: 100-continue\r\n\r\n");
    stream.write_all(head.as_bytes()).expect("the head is sent");
    let interim = read_head(stream);
    assert!(
        interim.starts_with("HTTP/1.1 100 "),
        "not asked for the body: {interim:?}"
    );
}

/// Reads a response's status line and headers, up to the blank line.
fn read_head(stream: &mut TcpStream) -> String {
    let mut head = Vec::new();
    let mut byte = [0; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match stream.read(&mut byte) {
            Ok(1) => head.push(byte[0]),
            other => panic!("the response ended early ({other:?}): {head:?}"),
        }
    }
    String::from_utf8(head).expect("a UTF-8 head")
}

/// Reads one response: its status and body (of `content-length` bytes).
fn response(stream: &mut TcpStream) -> (u16, String) {
    let head = read_head(stream);
    let status = head
        .strip_prefix("HTTP/1.1 ")
        .and_then(|rest| rest.get(..3))
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP response: {head:?}"));
    let length = head
        .lines()
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("content-length")
                .then(|| value.trim().parse::<usize>().ok())?
        })
        .unwrap_or_else(|| panic!("no content-length: {head:?}"));
    let mut body = vec![0; length];
    stream.read_exact(&mut body).expect("the body");
    (status, String::from_utf8(body).expect("a UTF-8 body"))
}

/// Whether the service closed the connection (the read sees its end).
fn closed(stream: &mut TcpStream) -> bool {
    matches!(stream.read(&mut [0; 1]), Ok(0))
}

#[test]
fn sigterm_finishes_the_request_in_flight_and_exits_0() {
    let mut service = Service::start(&[]);
    // A keep-alive connection, idle when the signal comes.
    let mut idle = service.connect().expect("the service accepts");
    idle.write_all(head("GET", "/resource_providers", "admin", 0).as_bytes())
        .expect("the request is sent");
    assert_eq!(response(&mut idle).0, 200);

    let body = r#"{"name": "in-flight-at-sigterm"}"#;
    let (first, rest) = body.split_at(10);
    let mut slow = service.connect().expect("the service accepts");
    start_slow_request(&mut slow, body.len());
    slow.write_all(first.as_bytes())
        .expect("the first part is sent");

    service.terminate();
    assert!(
        service.refuses_connections(),
        "new connections are still accepted after SIGTERM"
    );
    assert!(closed(&mut idle), "the idle connection is left open");
    slow.write_all(rest.as_bytes()).expect("the rest is sent");
    let (status, answer) = response(&mut slow);
    assert_eq!(status, 201, "{answer}");
    assert!(
        closed(&mut slow),
        "the connection stays open after its answer"
    );

    let status = service.exit_within(Duration::from_secs(60));
    assert_eq!(status.code(), Some(0), "{}", service.stderr());
}

#[test]
fn a_request_that_never_finishes_is_dropped_after_the_timeout() {
    let timeout = 2;
    let mut service = Service::start(&["--shutdown-timeout", &timeout.to_string()]);
    let mut stuck = service.connect().expect("the service accepts");
    start_slow_request(&mut stuck, 100);
    stuck
        .write_all(b"{\"name\": ")
        .expect("part of the body is sent");

    let signalled = Instant::now();
    service.terminate();
    let bound = Duration::from_secs(3 * timeout);
    let status = service.exit_within(bound);
    let took = signalled.elapsed();
    assert_eq!(status.code(), Some(3), "{}", service.stderr());
    assert!(
        took >= Duration::from_secs(timeout),
        "exited after {took:?}, before the timeout"
    );
    assert!(
        service.said("connections still open were dropped"),
        "{}",
        service.stderr()
    );
}

fn write_policy(path: &Path, check: &str) {
    std::fs::write(
        path,
        format!("\"placement:resource_providers:list\": \"{check}\"\n"),
    )
    .expect("the policy file is written");
}

#[test]
fn a_changed_policy_file_is_in_force_without_a_restart() {
    let dir = Scratch::new("placement-policy-reload");
    let path = dir.join("policy.yaml");
    write_policy(&path, "role:admin");
    let service = Service::start(&["--policy-file", &path.display().to_string()]);
    let list = || service.get("/resource_providers", "alice:proj");
    let (status, body) = list();
    assert_eq!(status, 403, "{body}");

    // The file is looked at once a second at most: wait past that.
    write_policy(&path, "@");
    thread::sleep(Duration::from_millis(1500));
    let (status, body) = list();
    assert_eq!(status, 200, "{body}");

    write_policy(&path, "role:admin or");
    thread::sleep(Duration::from_millis(1500));
    let (status, body) = list();
    assert_eq!(status, 200, "the last good policy stays: {body}");
    let said = format!(
        "policy file {} rule placement:resource_providers:list",
        path.display()
    );
    assert!(service.said(&said), "{}", service.stderr());

    std::fs::remove_file(&path).expect("the policy file is removed");
    thread::sleep(Duration::from_millis(1500));
    let (status, body) = list();
    assert_eq!(status, 200, "the last good policy stays: {body}");
    assert!(
        // The warning for a missing file, not the error for an invalid
        // one above, which ends the same way.
        service.said("(os error 2); the policy loaded before stays in force"),
        "{}",
        service.stderr()
    );
}

/// The systemd unit shipped for operators (DEPLOYMENT.md).
const UNIT: &str = include_str!("../deploy/placement-api@.service");
/// Where the unit expects the binary.
const UNIT_BINARY: &str = "/usr/local/bin/placement-api";

/// The unit's value of `key`, the last one where it is set several times.
fn unit_value(key: &str) -> &'static str {
    UNIT.lines()
        .filter_map(|line| line.strip_prefix(key)?.strip_prefix('='))
        .next_back()
        .unwrap_or_else(|| panic!("the unit sets {key}"))
}

#[test]
fn the_systemd_units_command_serves_and_stops_with_0() {
    let dir = Scratch::new("placement-unit");
    let config = dir.join("placement.conf");
    std::fs::write(
        &config,
        format!(
            "[api]\nauth_strategy = noauth2\n[placement_database]\nconnection = sqlite:///{}\n",
            dir.join("placement.db").display()
        ),
    )
    .expect("the config file is written");
    let addr = free_addr();
    assert_eq!(unit_value("Environment"), "PLACEMENT_HOST=127.0.0.1");
    // What systemd runs for placement-api@PORT, with this test's files.
    let argv: Vec<String> = unit_value("ExecStart")
        .split_whitespace()
        .map(|word| {
            word.replace("${PLACEMENT_HOST}", &addr.ip().to_string())
                .replace("%i", &addr.port().to_string())
                .replace(
                    "/etc/placement/placement.conf",
                    &config.display().to_string(),
                )
        })
        .collect();
    assert_eq!(argv[0], UNIT_BINARY);
    let mut service = Service::spawn(&argv[1..], addr, dir);
    let (status, body) = service.get("/", "admin");
    assert_eq!(status, 200, "{body}");
    service.terminate();
    let status = service.exit_within(Duration::from_secs(60));
    assert_eq!(status.code(), Some(0), "{}", service.stderr());
}

#[test]
fn the_systemd_unit_waits_for_the_drain_before_it_kills() {
    // The drain, then a second for the pools and one for blocking work.
    let drain = placement::config::DEFAULT_SHUTDOWN_TIMEOUT.as_secs() + 2;
    let stop: u64 = unit_value("TimeoutStopSec")
        .parse()
        .expect("TimeoutStopSec in seconds");
    assert!(
        stop > drain,
        "TimeoutStopSec={stop} kills before a {drain} s drain ends"
    );
    assert!(
        unit_value("SuccessExitStatus")
            .split_whitespace()
            .any(|s| s == "3"),
        "exit status 3 (a drain cut short) is a failure for systemd"
    );
}

#[test]
fn the_systemd_unit_passes_systemd_analyze() {
    if Command::new("systemd-analyze")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("systemd-analyze is not installed here: the unit is not checked");
        return;
    }
    let dir = Scratch::new("placement-unit");
    std::fs::write(
        dir.join("placement-api@.service"),
        UNIT.replace(UNIT_BINARY, env!("CARGO_BIN_EXE_placement-api")),
    )
    .expect("the unit is written");
    let instance = dir.join("placement-api@8778.service");
    let verify = Command::new("systemd-analyze")
        .args(["verify", "--man=no"])
        .arg(&instance)
        .output()
        .expect("systemd-analyze runs");
    assert!(
        verify.status.success() && verify.stderr.is_empty(),
        "systemd-analyze verify: {}",
        String::from_utf8_lossy(&verify.stderr)
    );
    // systemd's exposure score, 0 (locked down) to 10; 2.0 and under is "OK".
    let security = Command::new("systemd-analyze")
        .args(["security", "--offline=yes", "--threshold=20"])
        .arg(&instance)
        .output()
        .expect("systemd-analyze runs");
    assert!(
        security.status.success(),
        "exposure above 2.0:\n{}",
        String::from_utf8_lossy(&security.stdout)
    );
}
