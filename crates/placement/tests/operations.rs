//! What an operator watches (crates/placement/README.md, "Metrics" and
//! "Request log"): the real `placement-api` binary on loopback, with a
//! `placement.conf` turning the metrics on and naming the log file; a
//! known sequence of requests, then the scraped counts and the log lines,
//! text (upstream's, byte for byte but the time and pid) and JSON; and
//! what an operator changes: the range of microversions served
//! (`[microversions]`), at the start and on SIGHUP, and what raising its
//! minimum would break (`microversion impact` on the counters).
//!
//! With `PLACEMENT_PROMTOOL` naming `promtool`, the scraped text is also
//! checked by `promtool check metrics` (scripts/test.sh sets it when
//! Debian's `prometheus` package is installed).

use std::io::{BufRead as _, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, mpsc};
use std::time::Duration;

use microversion_test_support::Scratch;
use placement::config::{KEYSTONE_NEEDS_SETTINGS, NOAUTH2_WARNING};

/// A running `placement-api`, killed when dropped.
struct Service {
    child: Child,
    base: String,
    metrics: Option<String>,
    /// Its standard output, line by line.
    stdout: mpsc::Receiver<String>,
}

impl Drop for Service {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Service {
    fn start(dir: &Path, conf: &str, args: &[&str]) -> Service {
        Service::start_reading(dir, conf, args, None)
    }

    /// As [`Service::start`]; with `hold`, its standard output is not read
    /// until `hold` receives (or its sender goes): the pipe fills, as one
    /// to a stalled service manager would.
    fn start_reading(
        dir: &Path,
        conf: &str,
        args: &[&str],
        hold: Option<mpsc::Receiver<()>>,
    ) -> Service {
        let conf_path = dir.join("placement.conf");
        let database = format!("sqlite:///{}", dir.join("placement.db").display());
        std::fs::write(
            &conf_path,
            format!("{conf}\n[placement_database]\nconnection = {database}\n"),
        )
        .unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_placement-api"))
            .args(["--config-file", conf_path.to_str().unwrap()])
            .args(["--bind", "127.0.0.1:0", "--policy", "legacy"])
            .args(["--auth-strategy", "noauth2"])
            .args(args)
            .env_remove("RUST_LOG")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("placement-api starts");
        let (lines, stderr) = mpsc::channel();
        let err = BufReader::new(child.stderr.take().unwrap());
        std::thread::spawn(move || {
            for line in err.lines().map_while(Result::ok) {
                let _ = lines.send(line);
            }
        });
        let (out_lines, stdout) = mpsc::channel();
        let out = BufReader::new(child.stdout.take().unwrap());
        std::thread::spawn(move || {
            if let Some(hold) = hold {
                let _ = hold.recv();
            }
            for line in out.lines().map_while(Result::ok) {
                let _ = out_lines.send(line);
            }
        });
        let mut metrics = None;
        let mut seen = String::new();
        loop {
            let Ok(line) = stderr.recv_timeout(Duration::from_secs(60)) else {
                let _ = child.kill();
                let _ = child.wait();
                panic!("placement-api did not start: {seen}");
            };
            seen.push_str(&line);
            seen.push('\n');
            if let Some(url) = line.strip_prefix("placement-api metrics on ") {
                metrics = Some(url.to_owned());
            }
            if let Some(url) = line.strip_prefix("placement-api listening on ") {
                return Service {
                    child,
                    base: url.to_owned(),
                    metrics,
                    stdout,
                };
            }
        }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// SIGTERM, then the exit code (within 60 s).
    fn stop(&mut self) -> Option<i32> {
        let sent = Command::new("kill")
            .args(["-TERM", &self.pid().to_string()])
            .status()
            .expect("kill runs");
        assert!(sent.success(), "SIGTERM to placement-api");
        for _ in 0..600 {
            if let Some(status) = self.child.try_wait().expect("placement-api is waited for") {
                return status.code();
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("placement-api was still running 60 s after SIGTERM");
    }
}

/// One request as the test sent it, and what the log should say of it.
struct Sent {
    /// `METHOD /path?query` as the log shows it.
    request: String,
    status: u16,
    len: usize,
    microversion: &'static str,
    request_id: String,
    global: &'static str,
    identity: &'static str,
}

async fn send(
    client: &reqwest::Client,
    base: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
) -> (u16, usize, String) {
    let mut req = client.request(method.parse().unwrap(), format!("{base}{path}"));
    for (name, value) in headers {
        req = req.header(*name, *value);
    }
    let resp = req.send().await.expect("the service answers");
    let status = resp.status().as_u16();
    let request_id = resp
        .headers()
        .get("x-openstack-request-id")
        .expect("every response has a request id")
        .to_str()
        .unwrap()
        .to_owned();
    let body = resp.bytes().await.unwrap();
    (status, body.len(), request_id)
}

const NOVA: &str = "python-novaclient/18.13.1 keystoneauth1/5.18.1";
const OSC: &str = "osc-placement/4.9.1 keystoneauth1/5.18.1";
const GLOBAL: &str = "req-8e9b7c65-3d71-4f5a-9d2a-1c2b3d4e5f60";

/// One request of the sequence: method, path, headers, then the status,
/// served version, global request id and user identity the log shows.
type Step = (
    &'static str,
    &'static str,
    Vec<(&'static str, &'static str)>,
    u16,
    &'static str,
    &'static str,
    &'static str,
);

/// The known sequence: who asks, at which version, and what they get.
async fn known_sequence(base: &str) -> Vec<Sent> {
    let client = reqwest::Client::new();
    let admin = ("x-auth-token", "admin");
    let steps: Vec<Step> = vec![
        (
            "GET",
            "/",
            vec![("user-agent", OSC)],
            200,
            "1.0",
            "None",
            "- - - - - -",
        ),
        (
            "GET",
            "/resource_providers",
            vec![
                admin,
                ("user-agent", NOVA),
                ("openstack-api-version", "placement 1.39"),
            ],
            200,
            "1.39",
            "None",
            "admin admin - - - -",
        ),
        (
            "GET",
            "/resource_providers?name=compute%201",
            vec![
                admin,
                ("user-agent", NOVA),
                ("openstack-api-version", "placement 1.39"),
            ],
            200,
            "1.39",
            "None",
            "admin admin - - - -",
        ),
        (
            "GET",
            "/resource_providers",
            vec![admin, ("user-agent", OSC)],
            200,
            "1.0",
            "None",
            "admin admin - - - -",
        ),
        (
            "GET",
            "/resource_providers",
            vec![
                admin,
                ("user-agent", OSC),
                ("openstack-api-version", "placement 2.0"),
            ],
            406,
            "-",
            "None",
            "admin admin - - - -",
        ),
        (
            "GET",
            "/resource_providers",
            vec![("user-agent", OSC)],
            401,
            "-",
            "None",
            "- - - - - -",
        ),
        (
            "PUT",
            "/resource_classes/CUSTOM_OPS",
            vec![
                ("x-auth-token", "alice:proj1"),
                ("user-agent", OSC),
                ("openstack-api-version", "placement 1.7"),
            ],
            403,
            "1.7",
            "None",
            "alice proj1 - - - -",
        ),
        (
            "PUT",
            "/resource_classes/CUSTOM_OPS",
            vec![
                admin,
                ("user-agent", OSC),
                ("openstack-api-version", "placement 1.7"),
            ],
            201,
            "1.7",
            "None",
            "admin admin - - - -",
        ),
        (
            "GET",
            "/resource_providers/9a3f0fb4-5b9e-4d32-9f1c-4a51e2a0c0de",
            vec![
                admin,
                ("user-agent", NOVA),
                ("openstack-api-version", "placement 1.39"),
            ],
            404,
            "1.39",
            "None",
            "admin admin - - - -",
        ),
        (
            "GET",
            "/nothing",
            vec![admin, ("user-agent", NOVA)],
            404,
            "1.0",
            "None",
            "admin admin - - - -",
        ),
        (
            "GET",
            "/traits?name=startswith:HW_CPU_X86_AVX",
            vec![
                admin,
                ("user-agent", NOVA),
                ("openstack-api-version", "placement 1.6"),
                ("x-openstack-request-id", GLOBAL),
            ],
            200,
            "1.6",
            GLOBAL,
            "admin admin - - - -",
        ),
    ];
    let mut sent = Vec::new();
    for (method, path, headers, status, microversion, global, identity) in steps {
        let (got, len, request_id) = send(&client, base, method, path, &headers).await;
        assert_eq!(got, status, "{method} {path}");
        // The log shows the path decoded, as WSGI's PATH_INFO has it.
        let request = format!("{method} {path}");
        sent.push(Sent {
            request,
            status,
            len,
            microversion,
            request_id,
            global,
            identity,
        });
    }
    sent
}

/// The value of the sample `series` (name and labels, as written).
fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|line| line.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

#[tokio::test]
async fn metrics_count_a_known_sequence_and_the_text_log_is_upstreams() {
    let dir = Scratch::new("placement-operations");
    let log = dir.join("placement.log");
    let mut service = Service::start(
        dir.path(),
        &format!(
            "[DEFAULT]\ndebug = false\nlog_file = {}\n[metrics]\nbind = 127.0.0.1:0\n",
            log.display()
        ),
        &[],
    );
    let sent = known_sequence(&service.base).await;
    let metrics_url = service.metrics.clone().expect("metrics are on");
    let resp = reqwest::get(&metrics_url).await.unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(
        resp.headers()["content-type"],
        "text/plain; version=0.0.4; charset=utf-8"
    );
    let text = resp.text().await.unwrap();
    let p = |labels: &str| format!("{{service_type=\"placement\",{labels}}}");
    let expected = [
        (
            "microversion_client_versions_total",
            p("client=\"python-novaclient\",version=\"1.39\""),
            3.0,
        ),
        (
            "microversion_client_versions_total",
            p("client=\"python-novaclient\",version=\"1.0\""),
            1.0,
        ),
        (
            "microversion_client_versions_total",
            p("client=\"python-novaclient\",version=\"1.6\""),
            1.0,
        ),
        // `/`, `/resource_providers`, and the 401 (its version was served).
        (
            "microversion_client_versions_total",
            p("client=\"osc-placement\",version=\"1.0\""),
            3.0,
        ),
        (
            "microversion_client_versions_total",
            p("client=\"osc-placement\",version=\"1.7\""),
            2.0,
        ),
        (
            "microversion_client_requests_total",
            p("client=\"osc-placement\",outcome=\"unsupported\""),
            1.0,
        ),
        (
            "microversion_http_requests_total",
            p("route=\"/resource_providers\",method=\"GET\",status=\"200\",version=\"1.39\""),
            2.0,
        ),
        (
            "microversion_http_requests_total",
            p("route=\"/resource_providers\",method=\"GET\",status=\"200\",version=\"1.0\""),
            1.0,
        ),
        (
            "microversion_http_requests_total",
            p(
                "route=\"/resource_providers/{uuid}\",method=\"GET\",status=\"404\",version=\"1.39\"",
            ),
            1.0,
        ),
        (
            "microversion_http_requests_total",
            p("route=\"/resource_classes/{name}\",method=\"PUT\",status=\"403\",version=\"1.7\""),
            1.0,
        ),
        (
            "microversion_http_requests_total",
            p("route=\"/resource_classes/{name}\",method=\"PUT\",status=\"201\",version=\"1.7\""),
            1.0,
        ),
        (
            "microversion_http_requests_total",
            p("route=\"/\",method=\"GET\",status=\"200\",version=\"1.0\""),
            1.0,
        ),
        (
            "microversion_http_requests_total",
            p("route=\"unmatched\",method=\"GET\",status=\"406\",version=\"none\""),
            1.0,
        ),
        (
            "microversion_http_requests_total",
            p("route=\"unmatched\",method=\"GET\",status=\"404\",version=\"1.0\""),
            1.0,
        ),
        (
            "microversion_http_request_duration_seconds_count",
            p("route=\"/resource_providers\""),
            3.0,
        ),
        (
            "microversion_http_request_duration_seconds_bucket",
            p("route=\"/resource_providers\",le=\"+Inf\""),
            3.0,
        ),
        (
            "microversion_negotiations_total",
            p("outcome=\"unsupported\""),
            1.0,
        ),
        (
            "placement_db_pool_max_connections",
            "{pool=\"write\"}".to_owned(),
            1.0,
        ),
        (
            "placement_db_pool_connections",
            "{pool=\"write\",state=\"in_use\"}".to_owned(),
            0.0,
        ),
        (
            "placement_db_pool_waits_total",
            "{pool=\"write\"}".to_owned(),
            0.0,
        ),
        (
            "placement_allocation_write_conflicts_total",
            String::new(),
            0.0,
        ),
        (
            "placement_allocation_write_retries_total",
            String::new(),
            0.0,
        ),
        (
            "placement_allocation_write_failures_total",
            String::new(),
            0.0,
        ),
    ];
    for (name, labels, value) in expected {
        let series = format!("{name}{labels}");
        assert_eq!(sample(&text, &series), Some(value), "{series} in\n{text}");
    }
    // No Keystone, no token cache family.
    assert!(!text.contains("placement_keystone_token_cache"), "{text}");
    // Only /metrics is served there.
    let other = metrics_url.replace("/metrics", "/");
    assert_eq!(reqwest::get(&other).await.unwrap().status(), 404);
    if let Some(promtool) = std::env::var_os("PLACEMENT_PROMTOOL") {
        let file = dir.join("metrics.txt");
        std::fs::write(&file, &text).unwrap();
        let out = Command::new(promtool)
            .args(["check", "metrics"])
            .stdin(std::fs::File::open(&file).unwrap())
            .output()
            .expect("promtool runs");
        assert!(
            out.status.success() && out.stdout.is_empty() && out.stderr.is_empty(),
            "promtool check metrics: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    // The log: noauth2's warning at the start, then one line per request,
    // in order, upstream's text; nothing on standard output. (Read after
    // a graceful stop: the log's own thread writes the lines.)
    let pid = service.pid().to_string();
    assert_eq!(service.stop(), Some(0));
    let lines = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = lines.lines().collect();
    assert_eq!(lines.len(), sent.len() + 1, "{lines:#?}");
    let (warning, lines) = lines.split_first().unwrap();
    assert!(
        warning.ends_with(&format!(
            " {pid} WARNING placement.app [-] {NOAUTH2_WARNING}"
        )),
        "{warning}"
    );
    for (line, sent) in lines.iter().zip(&sent) {
        // `2026-11-24 07:41:10.162 16449 ` then the rest.
        let (stamp, rest) = line.split_at(24);
        assert!(
            stamp.len() == 24
                && stamp.as_bytes().iter().enumerate().all(|(i, b)| match i {
                    4 | 7 => *b == b'-',
                    10 | 23 => *b == b' ',
                    13 | 16 => *b == b':',
                    19 => *b == b'.',
                    _ => b.is_ascii_digit(),
                }),
            "{line}"
        );
        let path = &sent.request;
        let expected = format!(
            "{pid} INFO placement.requestlog [{} {} {}] 127.0.0.1 \"{path}\" status: {} len: {} microversion: {}",
            sent.global, sent.request_id, sent.identity, sent.status, sent.len, sent.microversion
        );
        assert_eq!(rest, expected);
    }
    assert!(service.stdout.try_recv().is_err());
}

#[tokio::test]
async fn debug_and_json_from_the_flags_go_to_standard_output() {
    let dir = Scratch::new("placement-operations-json");
    // No [metrics]: off, and nothing said about it.
    let service = Service::start(dir.path(), "[DEFAULT]\n", &["--debug", "--log-json"]);
    assert_eq!(service.metrics, None);
    let client = reqwest::Client::new();
    let (status, len, request_id) = send(
        &client,
        &service.base,
        "GET",
        "/resource_providers?name=x",
        &[
            ("x-auth-token", "admin:proj9"),
            ("openstack-api-version", "placement 1.39"),
        ],
    )
    .await;
    assert_eq!(status, 200);
    let mut events = Vec::new();
    while events.len() < 2 {
        let line = service
            .stdout
            .recv_timeout(Duration::from_secs(10))
            .expect("the request is logged");
        let event: serde_json::Value = serde_json::from_str(&line).expect("a JSON line");
        if event["target"] == "placement.requestlog" {
            events.push(event);
        }
    }
    // The debug line at the start, then the request's line.
    assert_eq!(events[0]["level"], "DEBUG");
    assert_eq!(
        events[0]["message"],
        "Starting request: 127.0.0.1 \"GET /resource_providers?name=x\""
    );
    assert_eq!(events[0]["request_id"], request_id.as_str());
    assert_eq!(events[1]["level"], "INFO");
    assert_eq!(
        events[1]["message"],
        format!(
            "127.0.0.1 \"GET /resource_providers?name=x\" status: 200 len: {len} microversion: 1.39"
        )
    );
    assert_eq!(events[1]["request_id"], request_id.as_str());
    assert_eq!(events[1]["global_request_id"], "None");
    assert_eq!(events[1]["user_identity"], "admin proj9 - - - -");
    assert!(events[1]["timestamp"].is_string());
}

/// Requests `GET /` `per_task` times from each of `tasks` tasks at once,
/// counting the 200 answers in `answered` as they come.
async fn hammer(base: &str, tasks: usize, per_task: usize, answered: Arc<AtomicUsize>) {
    let client = reqwest::Client::new();
    let mut handles = Vec::new();
    for _ in 0..tasks {
        let (client, url, answered) = (client.clone(), format!("{base}/"), answered.clone());
        handles.push(tokio::spawn(async move {
            for _ in 0..per_task {
                let resp = client.get(&url).send().await.expect("an answer");
                if resp.status() == 200 {
                    answered.fetch_add(1, Ordering::Relaxed);
                }
                resp.bytes().await.expect("a body");
            }
        }));
    }
    for handle in handles {
        handle.await.unwrap();
    }
}

/// The request log lines of `lines` for `GET /` answered 200.
fn root_lines<'a>(lines: impl Iterator<Item = &'a str>) -> usize {
    lines
        .filter(|line| {
            line.contains(" INFO placement.requestlog ")
                && line.contains("] 127.0.0.1 \"GET /\" status: 200 len: ")
        })
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_request_line_is_written_before_a_graceful_stop_ends() {
    // The log's own thread writes the lines; a stop right after a burst
    // of requests still finds each one's line in the file.
    let dir = Scratch::new("placement-operations-burst");
    let log = dir.join("placement.log");
    let mut service = Service::start(
        dir.path(),
        &format!("[DEFAULT]\nlog_file = {}\n", log.display()),
        &[],
    );
    let answered = Arc::new(AtomicUsize::new(0));
    hammer(&service.base, 16, 250, answered.clone()).await;
    assert_eq!(answered.load(Ordering::Relaxed), 4_000);
    assert_eq!(service.stop(), Some(0));
    let text = std::fs::read_to_string(&log).unwrap();
    assert_eq!(root_lines(text.lines()), 4_000, "{}", log.display());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_log_reader_makes_requests_wait_and_loses_no_line() {
    // Standard output to a reader that takes nothing for a while: the pipe
    // and the log's buffer fill, then requests wait for room rather than
    // drop their lines; once the reader reads again, every line arrives.
    let dir = Scratch::new("placement-operations-stalled");
    let (release, hold) = mpsc::channel();
    let mut service = Service::start_reading(dir.path(), "[DEFAULT]\n", &[], Some(hold));
    let answered = Arc::new(AtomicUsize::new(0));
    // More lines than the pipe and the buffer (2 MiB, about 11,000 of
    // these lines) hold.
    let load = tokio::spawn({
        let (base, answered) = (service.base.clone(), answered.clone());
        async move { hammer(&base, 16, 1_000, answered).await }
    });
    // Until the answers stop coming (the buffer is full), at most 120 s.
    let mut last = usize::MAX;
    for _ in 0..240 {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let now = answered.load(Ordering::Relaxed);
        if now == last || load.is_finished() {
            break;
        }
        last = now;
    }
    assert!(
        !load.is_finished(),
        "16,000 requests were answered while nothing read the log"
    );
    release.send(()).unwrap();
    load.await.unwrap();
    assert_eq!(answered.load(Ordering::Relaxed), 16_000);
    assert_eq!(service.stop(), Some(0));
    // To the end of standard output: the reader ends with the process.
    let lines: Vec<String> = service.stdout.iter().collect();
    assert_eq!(root_lines(lines.iter().map(String::as_str)), 16_000);
}

#[test]
fn a_log_file_that_cannot_be_opened_is_a_usage_error() {
    let dir = Scratch::new("placement-operations-badlog");
    let conf = dir.join("placement.conf");
    std::fs::write(
        &conf,
        format!(
            "[DEFAULT]\nlog_file = {}\n",
            dir.join("missing-dir/placement.log").display()
        ),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_placement-api"))
        .args([
            "--config-file",
            conf.to_str().unwrap(),
            "--bind",
            "127.0.0.1:0",
            "--database",
            "sqlite://",
            "--auth-strategy",
            "noauth2",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("cannot open the log file") && stderr.contains("missing-dir/placement.log"),
        "{stderr}"
    );
    std::fs::write(&conf, "[metrics]\nbind = localhost\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_placement-api"))
        .args(["--config-file", conf.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("[metrics] bind = localhost is not an address and port"),
        "{stderr}"
    );
}

/// Runs the binary in `dir` (where the development database would be
/// created) with `args` and no auth strategy from the environment, to
/// its exit; one that is still running after 60 s (serving, where it
/// should have refused) is killed and fails the test.
fn run_in(dir: &Path, args: &[&str]) -> std::process::Output {
    let child = Command::new(env!("CARGO_BIN_EXE_placement-api"))
        .current_dir(dir)
        .args(["--bind", "127.0.0.1:0"])
        .args(args)
        .env_remove("PLACEMENT_AUTH_STRATEGY")
        .env_remove("PLACEMENT_DATABASE")
        .env_remove("PLACEMENT_CONFIG_FILE")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("placement-api runs");
    let pid = child.id();
    let (done, exited) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(child.wait_with_output());
    });
    match exited.recv_timeout(Duration::from_secs(60)) {
        Ok(output) => output.expect("placement-api's output is read"),
        Err(_) => {
            let _ = Command::new("kill").arg(pid.to_string()).status();
            panic!("placement-api {args:?} was still running after 60 s");
        }
    }
}

#[test]
fn it_refuses_to_serve_open_unless_noauth2_is_asked_for() {
    let dir = Scratch::new("placement-operations-secure");
    // No configuration at all: keystone, which has no settings.
    let out = run_in(dir.path(), &[]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!("placement-api: {KEYSTONE_NEEDS_SETTINGS}\n")
    );
    assert!(
        !dir.join("placement.db").exists(),
        "nothing is created before the refusal"
    );
    // A file as kolla-ansible, OpenStack-Ansible and openstack-helm write
    // it (no [api] section) but without [keystone_authtoken]: the same.
    let conf = dir.join("placement.conf");
    std::fs::write(
        &conf,
        format!(
            "[DEFAULT]\ndebug = false\n[placement_database]\nconnection = sqlite:///{}\n",
            dir.join("p.db").display()
        ),
    )
    .unwrap();
    let out = run_in(dir.path(), &["--config-file", conf.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(KEYSTONE_NEEDS_SETTINGS),
        "{out:?}"
    );
    // A file that names no database is refused, as upstream refuses it.
    std::fs::write(&conf, "[api]\nauth_strategy = noauth2\n").unwrap();
    let out = run_in(dir.path(), &["--config-file", conf.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("[placement_database] connection is not set"),
        "{out:?}"
    );
    // db sync needs no auth: it creates the schema of the named database.
    let db = dir.join("synced.db");
    let out = run_in(
        dir.path(),
        &[
            "--database",
            &format!("sqlite:///{}", db.display()),
            "db",
            "sync",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "database created\n");
    assert!(db.exists());
}

#[test]
fn noauth2_on_the_development_database_says_so_when_asked_for() {
    let dir = Scratch::new("placement-operations-dev");
    let mut child = Command::new(env!("CARGO_BIN_EXE_placement-api"))
        .current_dir(dir.path())
        .args(["--bind", "127.0.0.1:0", "--auth-strategy", "noauth2"])
        .env_remove("PLACEMENT_DATABASE")
        .env_remove("PLACEMENT_CONFIG_FILE")
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("placement-api starts");
    let mut said = String::new();
    let stderr = BufReader::new(child.stderr.take().unwrap());
    for line in stderr.lines().map_while(Result::ok) {
        said.push_str(&line);
        said.push('\n');
        if line.starts_with("placement-api listening on ") {
            break;
        }
    }
    let _ = child.kill();
    let mut log = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take().unwrap(), &mut log).unwrap();
    let _ = child.wait();
    assert!(said.contains("placement-api listening on "), "{said}");
    assert!(
        said.contains(
            "placement-api: warning: no configuration file and no --database: serving the \
             embedded SQLite database sqlite:///placement.db (placement.db in the working \
             directory), for development only\n"
        ),
        "{said}"
    );
    assert!(dir.join("placement.db").exists());
    // The log (standard output) carries both warnings.
    assert!(log.contains("for development only"), "{log}");
    assert!(
        log.contains(&format!(" WARNING placement.app [-] {NOAUTH2_WARNING}")),
        "{log}"
    );
}

#[tokio::test]
async fn configuration_is_found_where_oslo_config_finds_it() {
    let dir = Scratch::new("placement-operations-found");
    // OS_PLACEMENT_CONFIG_DIR's placement.conf (as upstream's WSGI
    // application reads it), policy.yaml beside it with no policy_file
    // set (as OpenStack-Ansible and openstack-helm drop it), and a
    // placement.conf.d in ~/.placement/ (helm renders a part of the
    // configuration into placement.conf.d).
    let etc = dir.join("etc");
    std::fs::create_dir_all(&etc).unwrap();
    std::fs::write(
        etc.join("placement.conf"),
        format!(
            "[api]\nauth_strategy = noauth2\n[placement_database]\nconnection = sqlite:///{}\n\
             [oslo_middleware]\nmax_request_body_size = 1000\n",
            dir.join("p.db").display()
        ),
    )
    .unwrap();
    std::fs::write(
        etc.join("policy.yaml"),
        "\"placement:resource_providers:list\": \"!\"\n",
    )
    .unwrap();
    let conf_d = dir.join("home/.placement/placement.conf.d");
    std::fs::create_dir_all(&conf_d).unwrap();
    std::fs::write(
        conf_d.join("50-size.conf"),
        "[oslo_middleware]\nmax_request_body_size = 100\nmax_requst_body_size = 1\n",
    )
    .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_placement-api"))
        .current_dir(dir.path())
        .args(["--bind", "127.0.0.1:0"])
        .env("OS_PLACEMENT_CONFIG_DIR", &etc)
        .env("HOME", dir.join("home"))
        .env_remove("PLACEMENT_AUTH_STRATEGY")
        .env_remove("PLACEMENT_DATABASE")
        .env_remove("PLACEMENT_CONFIG_FILE")
        .env_remove("PLACEMENT_MAX_BODY_SIZE")
        .env_remove("PLACEMENT_POLICY_FILE")
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("placement-api starts");
    let mut said = String::new();
    let mut base = None;
    for line in BufReader::new(child.stderr.take().unwrap())
        .lines()
        .map_while(Result::ok)
    {
        said.push_str(&line);
        said.push('\n');
        if let Some(url) = line.strip_prefix("placement-api listening on ") {
            base = Some(url.to_owned());
            break;
        }
    }
    let Some(base) = base else {
        let _ = child.kill();
        panic!("placement-api did not start: {said}");
    };
    let client = reqwest::Client::new();
    let admin = [("x-auth-token", "admin")];
    // policy.yaml was found: listing providers is refused.
    let (status, _, _) = send(&client, &base, "GET", "/resource_providers", &admin).await;
    // placement.conf.d's value won over placement.conf's: 100 bytes.
    let big = format!("{{\"name\": \"{}\"}}", "x".repeat(150));
    let too_large = client
        .post(format!("{base}/resource_classes"))
        .header("x-auth-token", "admin")
        .header("content-type", "application/json")
        .body(big)
        .send()
        .await
        .unwrap()
        .status()
        .as_u16();
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(status, 403, "{said}");
    assert_eq!(too_large, 413, "{said}");
    // The misspelt key is named, with its file, and does not stop the start.
    assert!(
        said.contains(&format!(
            "placement-api: warning: {}: [oslo_middleware] max_requst_body_size is not a setting of this service: ignored",
            conf_d.join("50-size.conf").display()
        )),
        "{said}"
    );
}

/// `GET path` at `version` (no header when `None`), as noauth2's admin:
/// the status, the version header, and the body.
async fn get_at(base: &str, path: &str, version: Option<&str>) -> (u16, String, serde_json::Value) {
    let mut request = reqwest::Client::new()
        .get(format!("{base}{path}"))
        .header("x-auth-token", "admin");
    if let Some(version) = version {
        request = request.header("openstack-api-version", format!("placement {version}"));
    }
    let response = request.send().await.expect("an answer");
    let status = response.status().as_u16();
    let header = response
        .headers()
        .get("openstack-api-version")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    (status, header, response.json().await.expect("a JSON body"))
}

/// The `min_version` and `max_version` of the versions document.
async fn advertised(base: &str) -> (String, String) {
    let (status, _, body) = get_at(base, "/", None).await;
    assert_eq!(status, 200, "{body}");
    let entry = &body["versions"][0];
    assert_eq!(entry["version"], entry["max_version"], "{body}");
    (
        entry["min_version"].as_str().unwrap().to_owned(),
        entry["max_version"].as_str().unwrap().to_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_operators_range_is_what_clients_discover_negotiate_and_are_refused_outside() {
    let dir = Scratch::new("placement-operations-range");
    let service = Service::start(
        dir.path(),
        "[microversions]\nmin_version = 1.10\nmax_version = 1.36\n[openapi]\nenabled = true\nreference_page = true\n",
        &[],
    );
    let base = &service.base;
    assert_eq!(advertised(base).await, ("1.10".into(), "1.36".into()));
    // `latest` is the cap; no header is the raised minimum.
    let (status, header, _) = get_at(base, "/resource_providers", Some("latest")).await;
    assert_eq!((status, header.as_str()), (200, "placement 1.36"));
    let (status, header, _) = get_at(base, "/resource_providers", None).await;
    assert_eq!((status, header.as_str()), (200, "placement 1.10"));
    // Below the minimum and above the cap: 406 naming the served range.
    for refused in ["1.9", "1.37", "1.39"] {
        let (status, _, body) = get_at(base, "/resource_providers", Some(refused)).await;
        assert_eq!(status, 406, "{refused}: {body}");
        let error = &body["errors"][0];
        assert_eq!(error["min_version"], "1.10", "{body}");
        assert_eq!(error["max_version"], "1.36", "{body}");
        assert!(
            error["detail"]
                .as_str()
                .unwrap()
                .ends_with(&format!("Unacceptable version header: {refused}")),
            "{body}"
        );
    }
    // The documents follow: `latest` is 1.36, 1.37 is refused as above.
    let (status, _, document) = get_at(base, "/openapi.json?version=latest", None).await;
    assert_eq!(status, 200);
    assert_eq!(document["info"]["version"], "1.36", "{}", document["info"]);
    let (status, _, _) = get_at(base, "/openapi.json?version=1.37", None).await;
    assert_eq!(status, 406);
    // The whole range's document is the served range's: `/usages` (from
    // 1.9) is gone at 1.10 and later only in its ranges, and nothing is
    // marked below 1.10 or above 1.36.
    let (status, _, whole) = get_at(base, "/openapi.json", None).await;
    assert_eq!(status, 200);
    assert_eq!(
        whole["info"]["x-openstack"]["min-ver"], "1.10",
        "{}",
        whole["info"]
    );
    assert_eq!(whole["info"]["x-openstack"]["max-ver"], "1.36");
    assert!(whole["paths"]["/usages"]["get"]["x-openstack"].is_null());
    let text = whole.to_string();
    for outside in ["\"1.9\"", "\"1.37\"", "\"1.39\""] {
        assert!(!text.contains(outside), "{outside} in the whole document");
    }
    // The reference page offers 1.10 to 1.36.
    let page = reqwest::get(format!("{base}/api-ref"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        page.contains(r#"<option value="1.36" selected>1.36</option>"#),
        "{page}"
    );
    assert!(page.contains(r#"<option value="1.10">1.10</option>"#));
    assert!(
        !page.contains(r#"<option value="1.9">"#) && !page.contains(r#"<option value="1.37">"#)
    );
    assert!(page.contains("1.10 - 1.36 (x-openstack)"));

    // A client of 1.0 to 1.39 asking for `latest` agrees on the cap.
    let client = microversion_client::Client::builder()
        .endpoint(base)
        .service_type("placement")
        .supported_versions(microversion::VersionRange::from_static("1.0", "1.39"))
        .version("latest")
        .header("x-auth-token", "admin")
        .build()
        .unwrap();
    let negotiated = client.version().await.expect("a version both support");
    assert_eq!(negotiated.header(), Some(microversion::Version::new(1, 36)));
    let listed = client.get("resource_providers").send().await.unwrap();
    assert_eq!(listed.status(), 200);
    assert_eq!(listed.version(), Some(microversion::Version::new(1, 36)));

    // The conformance checker passes on the narrowed service.
    let report = microversion_cli::check::Check::new(base.as_str(), "placement")
        .profile(microversion::Profile::Placement)
        .token("admin")
        .no_proxy()
        .run()
        .await
        .expect("the check runs");
    let failed: Vec<_> = report
        .rows()
        .iter()
        .filter(|row| row.status() == microversion_cli::check::Status::Fail)
        .map(|row| {
            format!(
                "{} [{}]: {} / {}",
                row.rule(),
                row.id(),
                row.seen(),
                row.expected()
            )
        })
        .collect();
    assert!(failed.is_empty(), "{failed:#?}\n{}", report.to_table());
}

/// Waits (at most 10 s) for a line of standard output containing `text`.
fn wait_for_line(service: &Service, text: &str) -> String {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match service.stdout.recv_timeout(left) {
            Ok(line) if line.contains(text) => return line,
            Ok(_) => {}
            Err(_) => panic!("no log line containing {text:?} within 10 s"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sighup_applies_a_new_range_and_keeps_the_old_one_when_the_file_is_wrong() {
    let dir = Scratch::new("placement-operations-sighup");
    let service = Service::start(dir.path(), "[DEFAULT]\n", &[]);
    let base = &service.base;
    assert_eq!(advertised(base).await, ("1.0".into(), "1.39".into()));
    let database = format!("sqlite:///{}", dir.join("placement.db").display());
    let rewrite = |microversions: &str| {
        std::fs::write(
            dir.join("placement.conf"),
            format!(
                "[microversions]\n{microversions}\n[placement_database]\nconnection = {database}\n"
            ),
        )
        .unwrap();
    };
    let hangup = || {
        let sent = Command::new("kill")
            .args(["-HUP", &service.pid().to_string()])
            .status()
            .expect("kill runs");
        assert!(sent.success());
    };

    rewrite("max_version = 1.20");
    hangup();
    let line = wait_for_line(&service, "SIGHUP: serving microversions 1.0 to 1.20");
    assert!(line.contains(" INFO placement "), "{line}");
    assert_eq!(advertised(base).await, ("1.0".into(), "1.20".into()));
    let (status, header, _) = get_at(base, "/resource_providers", Some("latest")).await;
    assert_eq!((status, header.as_str()), (200, "placement 1.20"));
    let (status, _, body) = get_at(base, "/resource_providers", Some("1.21")).await;
    assert_eq!(status, 406);
    assert_eq!(body["errors"][0]["max_version"], "1.20");

    // A range outside the code's: logged, and the range stays.
    rewrite("max_version = 1.40");
    hangup();
    let line = wait_for_line(&service, "SIGHUP: settings not reloaded");
    assert!(
        line.contains(" ERROR placement ")
            && line.contains("still serving microversions 1.0 to 1.20")
            && line.contains(
                "served range 1.0 - 1.40 is not inside the range the code implements, 1.0 - 1.39"
            ),
        "{line}"
    );
    assert_eq!(advertised(base).await, ("1.0".into(), "1.20".into()));

    // Without the section: the whole range again.
    rewrite("");
    hangup();
    wait_for_line(&service, "SIGHUP: serving microversions 1.0 to 1.39");
    assert_eq!(advertised(base).await, ("1.0".into(), "1.39".into()));
    let (status, header, _) = get_at(base, "/resource_providers", Some("latest")).await;
    assert_eq!((status, header.as_str()), (200, "placement 1.39"));
}

#[test]
fn a_range_it_cannot_serve_refuses_to_start_naming_what_is_accepted() {
    let dir = Scratch::new("placement-operations-badrange");
    let conf = dir.join("placement.conf");
    let cases = [
        (
            "max_version = 1.40",
            "[microversions]: served range 1.0 - 1.40 is not inside the range the code implements, 1.0 - 1.39",
        ),
        (
            "min_version = 1.30\nmax_version = 1.20",
            "[microversions]: min_version 1.30 is above max_version 1.20",
        ),
        (
            "min_version = 1.x",
            "[microversions] min_version = 1.x is not a version (",
        ),
    ];
    for (section, expected) in cases {
        std::fs::write(
            &conf,
            format!("[microversions]\n{section}\n[placement_database]\nconnection = sqlite://\n"),
        )
        .unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_placement-api"))
            .args(["--config-file", conf.to_str().unwrap()])
            .args(["--bind", "127.0.0.1:0", "--auth-strategy", "noauth2"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{section}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(expected) && stderr.contains("placement.conf"),
            "{section}: {stderr}"
        );
    }
}

/// `count` requests of `GET /resource_providers` from one client, four at
/// a time: its `User-Agent`, its noauth2 token (`user:project`, an
/// administrator) and the version header it sends, if any. Returns the
/// statuses seen.
async fn client_load(
    base: &str,
    user_agent: &str,
    token: &str,
    version: Option<&str>,
    count: usize,
) -> Vec<u16> {
    let client = reqwest::Client::builder()
        .no_proxy()
        .user_agent(user_agent)
        .build()
        .unwrap();
    let one = || {
        // An administrator of the token's project: the legacy policy
        // lets only administrators list providers.
        let mut req = client
            .get(format!("{base}/resource_providers"))
            .header("x-auth-token", token)
            .header("x-roles", "admin");
        if let Some(v) = version {
            req = req.header("openstack-api-version", v);
        }
        async move { req.send().await.unwrap().status().as_u16() }
    };
    let mut statuses = Vec::new();
    while statuses.len() < count {
        let batch = (count - statuses.len()).min(4);
        statuses.extend(futures_util::future::join_all((0..batch).map(|_| one())).await);
    }
    statuses
}

#[tokio::test]
async fn impact_names_the_clients_a_raised_minimum_would_refuse() {
    let dir = Scratch::new("placement-operations-impact");
    let service = Service::start(dir.path(), "[metrics]\nbind = 127.0.0.1:0\n", &[]);
    let base = service.base.as_str();
    let metrics = service.metrics.clone().expect("metrics are on");
    // A mixed load, the clients at once: an old tool pinned to 1.5, Nova's
    // scheduler at 1.36, curl sending no version, osc at latest, and a
    // client asking for a version the service does not have.
    let (old, nova, curl, osc, broken) = tokio::join!(
        client_load(base, "old-tool/0.9", "ops:p-old", Some("placement 1.5"), 24),
        client_load(
            base,
            "nova-scheduler/34.0",
            "nova:service",
            Some("placement 1.36"),
            40
        ),
        client_load(base, "curl/8.5.0", "dev:p-dev", None, 12),
        client_load(
            base,
            "osc-placement/4.6 keystoneauth1/5",
            "admin",
            Some("placement latest"),
            8
        ),
        client_load(base, "broken/1", "x:p-x", Some("placement 1.99"), 4),
    );
    for statuses in [&old, &nova, &curl, &osc] {
        assert!(statuses.iter().all(|s| *s == 200), "{statuses:?}");
    }
    assert!(broken.iter().all(|s| *s == 406), "{broken:?}");
    let baseline = dir.join("before.prom");
    let scrape = reqwest::get(&metrics).await.unwrap().text().await.unwrap();
    std::fs::write(&baseline, &scrape).unwrap();
    assert!(
        scrape.contains(
            "microversion_client_asked_total{service_type=\"placement\",client=\"old-tool\",project=\"p-old\",version=\"1.5\",asked=\"exact\"} 24\n"
        ),
        "{scrape}"
    );
    assert!(scrape.contains(
        "microversion_client_asked_total{service_type=\"placement\",client=\"curl\",project=\"p-dev\",version=\"1.0\",asked=\"none\"} 12\n"
    ));
    assert!(scrape.contains(
        "microversion_client_asked_total{service_type=\"placement\",client=\"osc-placement\",project=\"admin\",version=\"1.39\",asked=\"latest\"} 8\n"
    ));

    let timeout = Duration::from_secs(10);
    let min = microversion::Version::new(1, 20);
    let impact = microversion_cli::impact::Query::new(min)
        .read(&metrics, timeout)
        .await
        .expect("the counters are read");
    assert_eq!(impact.requests(), 24 + 40 + 12 + 8);
    assert_eq!(impact.refused_requests(), 24);
    assert_eq!(impact.changed_requests(), 12);
    assert_eq!(
        impact.refused_of("old-tool", "p-old"),
        [(microversion::Version::new(1, 5), 24)].into()
    );
    assert!(impact.refused_of("nova-scheduler", "service").is_empty());
    let table = impact.to_table();
    assert!(table.contains("old-tool  p-old    24 at 1.5"), "{table}");
    assert!(table.contains("curl      p-dev    -"), "{table}");
    assert!(table.contains("12 at 1.0 (would get 1.20)"), "{table}");
    assert!(!table.contains("nova-scheduler"), "{table}");
    let json = impact.to_json();
    assert_eq!(json["refused_requests"], 24);
    assert_eq!(json["clients"][1]["client"], "old-tool");
    assert_eq!(json["clients"][1]["refused"]["1.5"], 24);

    // Raised above Nova's 1.36, the scheduler breaks too.
    let above_nova = microversion_cli::impact::Query::new(microversion::Version::new(1, 37))
        .read(&metrics, timeout)
        .await
        .unwrap();
    assert_eq!(above_nova.refused_requests(), 24 + 40);

    // Since a baseline: only what came after it.
    client_load(base, "old-tool/0.9", "ops:p-old", Some("placement 1.5"), 3).await;
    let since = microversion_cli::impact::Query::new(min)
        .baseline(baseline.to_str().unwrap())
        .hours(1.0)
        .read(&metrics, timeout)
        .await
        .unwrap();
    assert_eq!((since.refused_requests(), since.changed_requests()), (3, 0));
    assert_eq!(since.requests(), 3);

    // An empty range is no question.
    let err = microversion_cli::impact::Query::new(min)
        .max(microversion::Version::new(1, 10))
        .read(&metrics, timeout)
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "--max 1.10 is below --min 1.20: the range would be empty"
    );
}
