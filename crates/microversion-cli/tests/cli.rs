//! The `microversion` binary against loopback servers: exit codes, what
//! goes to standard output and standard error, output formats, the
//! version sources and the negotiation cache.

mod common;

use std::process::Command;

use common::{API_SIG, CINDER, Demo, Fault, Server};
use microversion::Version;
use microversion_test_support::{Scratch, SeenRequest};
use serde_json::Value;

/// One run of the binary.
#[derive(Debug)]
struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

/// Runs `microversion args` with a clean environment: no proxy, no
/// `OS_*` variable, and the cache (XDG and home) in `cache`.
fn run_with(args: &[&str], env: &[(&str, &str)], cache: &Scratch) -> Run {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_microversion"));
    cmd.args(args);
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy().into_owned();
        if name.starts_with("OS_") || name.to_ascii_lowercase().ends_with("_proxy") {
            cmd.env_remove(&name);
        }
    }
    cmd.env("XDG_CACHE_HOME", cache.join("xdg"));
    cmd.env("HOME", cache.join("home"));
    for (name, value) in env {
        cmd.env(name, value);
    }
    let out = cmd.output().expect("the binary runs");
    Run {
        code: out.status.code().expect("an exit code"),
        stdout: String::from_utf8(out.stdout).expect("UTF-8 stdout"),
        stderr: String::from_utf8(out.stderr).expect("UTF-8 stderr"),
    }
}

fn run(args: &[&str]) -> Run {
    run_with(args, &[], &Scratch::new("run"))
}

fn url(server: &Server, path: &str) -> String {
    format!("{}{}", server.url, path.trim_start_matches('/'))
}

/// The standard header values the server received at `path`.
fn versions_sent(server: &Server, path: &str) -> Vec<Option<String>> {
    server
        .log
        .to(&[path])
        .iter()
        .map(|s| {
            s.headers
                .get("openstack-api-version")
                .map(|v| v.to_str().unwrap().to_owned())
        })
        .collect()
}

// --- Usage and help ---

#[test]
fn help_documents_every_command_and_the_exit_codes() {
    let r = run(&["--help"]);
    assert_eq!(r.code, 0, "{r:?}");
    for text in [
        "version-list",
        "request",
        "check",
        "Exit codes:",
        "0  success",
        "1  `check` found failures",
        "Keystone refused the credentials",
        "2  usage, input, configuration or connection error",
    ] {
        assert!(r.stdout.contains(text), "{text}: {}", r.stdout);
    }
    for (command, options) in [
        (
            "version-list",
            &[
                "--service-type",
                "--format",
                "--token",
                "--os-cloud",
                "--os-auth-url",
                "OS_PASSWORD",
            ][..],
        ),
        (
            "request",
            &[
                "--request",
                "--data",
                "--header",
                "--api-version",
                "OS_<SERVICE_TYPE>_API_VERSION",
                "--include",
                "--no-cache",
                "--endpoint",
                "--fail",
            ][..],
        ),
        (
            "check",
            &[
                "--service-type",
                "--profile",
                "--path",
                "junit",
                "api-sig, placement, nova, ironic or cinder",
            ][..],
        ),
    ] {
        let r = run(&[command, "--help"]);
        assert_eq!(r.code, 0, "{command}: {r:?}");
        assert!(r.stdout.contains("Exit codes:"), "{command}: {}", r.stdout);
        for option in options {
            assert!(
                r.stdout.contains(option),
                "{command} {option}: {}",
                r.stdout
            );
        }
    }
    let r = run(&["--version"]);
    assert_eq!(r.code, 0);
    assert!(r.stdout.starts_with("microversion 0."), "{}", r.stdout);
}

#[test]
fn usage_errors_exit_with_2() {
    for args in [
        &[][..],
        &["frobnicate"][..],
        &["request"][..],
        &["version-list"][..],
        &["check", "http://127.0.0.1:1/"][..],
        &[
            "check",
            "http://127.0.0.1:1/",
            "--service-type",
            "x",
            "--profile",
            "keystone",
        ][..],
        &["version-list", "http://127.0.0.1:1/", "-f", "yaml"][..],
        &["request", "http://127.0.0.1:1/", "--timeout", "0"][..],
    ] {
        let r = run(args);
        assert_eq!(r.code, 2, "{args:?}: {r:?}");
        assert!(r.stdout.is_empty(), "{args:?}: {}", r.stdout);
        assert!(!r.stderr.is_empty(), "{args:?}");
    }
}

#[test]
fn bad_urls_are_input_errors() {
    let r = run(&["version-list", "not-a-url"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .contains("microversion: error: invalid URL \"not-a-url\""),
        "{}",
        r.stderr
    );
    let r = run(&["request", "ftp://h/x", "--api-version", "None"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("expected an http or https URL"),
        "{}",
        r.stderr
    );
    if !cfg!(feature = "rustls") {
        let r = run(&[
            "check",
            "https://127.0.0.1:1/",
            "--service-type",
            "placement",
        ]);
        assert_eq!(r.code, 2);
        assert!(r.stderr.contains("no TLS support"), "{}", r.stderr);
    }
}

// --- version-list ---

/// The API-SIG demo with a narrower range.
const NARROW: Demo = Demo {
    min: Version::new(1, 2),
    max: Version::new(1, 30),
    ..API_SIG
};

#[test]
fn version_list_shows_each_endpoint_and_the_common_range() {
    let (a, b) = (API_SIG.start(), NARROW.start());
    let r = run(&[
        "version-list",
        &a.url,
        &b.url,
        "--service-type",
        "placement",
    ]);
    assert_eq!(r.code, 0, "{r:?}");
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(
        lines[0].split_whitespace().collect::<Vec<_>>(),
        ["ENDPOINT", "ID", "STATUS", "MIN", "MAX", "NOTE"]
    );
    assert_eq!(
        lines[1].split_whitespace().collect::<Vec<_>>(),
        [a.url.as_str(), "v1.0", "CURRENT", "1.0", "1.39", "*"]
    );
    assert_eq!(
        lines[2].split_whitespace().collect::<Vec<_>>(),
        [b.url.as_str(), "v1.2", "CURRENT", "1.2", "1.30", "*"]
    );
    assert!(
        r.stdout
            .contains("\nCommon placement microversion range: 1.2 - 1.30\n"),
        "{}",
        r.stdout
    );
    assert!(r.stderr.is_empty(), "{}", r.stderr);
}

#[test]
fn version_list_shows_a_failing_endpoint_in_its_row_and_goes_on() {
    let (a, b) = (API_SIG.start(), NARROW.start());
    let dead = common::dead_url();
    let r = run(&["version-list", &a.url, &dead, &b.url]);
    assert_eq!(r.code, 2, "{r:?}");
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert!(lines[1].starts_with(&a.url), "{}", r.stdout);
    let failed: Vec<&str> = lines[2].split_whitespace().collect();
    assert_eq!(
        failed[..5],
        [dead.as_str(), "-", "ERROR", "-", "-"],
        "{}",
        r.stdout
    );
    assert!(
        lines[2].contains("error sending request") && lines[2].contains("onnection refused"),
        "{}",
        lines[2]
    );
    assert!(lines[3].starts_with(&b.url), "{}", r.stdout);
    assert!(
        r.stdout.contains(
            "Common microversion range of the 2 endpoints that answered (1 failed): 1.2 - 1.30"
        ),
        "{}",
        r.stdout
    );
    assert_eq!(
        r.stderr,
        "microversion: error: some endpoints could not be read\n"
    );
}

#[test]
fn version_list_json() {
    let (a, nova) = (API_SIG.start(), common::NOVA.start());
    let dead = common::dead_url();
    let r = run(&["version-list", &a.url, &nova.url, &dead, "-f", "json"]);
    assert_eq!(r.code, 2, "{r:?}");
    let v: Value = serde_json::from_str(&r.stdout).expect("JSON");
    assert_eq!(v["service_type"], Value::Null);
    let endpoints = v["endpoints"].as_array().unwrap();
    assert_eq!(endpoints.len(), 3);
    for e in endpoints {
        let mut keys: Vec<&String> = e.as_object().unwrap().keys().collect();
        keys.sort();
        assert_eq!(keys, ["document_url", "endpoint", "error", "versions"]);
    }
    assert_eq!(endpoints[0]["endpoint"], a.url.as_str());
    assert_eq!(endpoints[0]["error"], Value::Null);
    assert_eq!(
        endpoints[0]["versions"],
        serde_json::json!([{"id": "v1.0", "status": "CURRENT", "min_version": "1.0", "max_version": "1.39", "served": true}])
    );
    // Nova's v2.0 (its legacy root, without microversions), then v2.1.
    assert_eq!(endpoints[1]["versions"][0]["id"], "v2.0");
    assert_eq!(endpoints[1]["versions"][0]["status"], "SUPPORTED");
    assert_eq!(endpoints[1]["versions"][1]["id"], "v2.1");
    assert_eq!(endpoints[1]["versions"][1]["max_version"], "2.104");
    assert!(
        endpoints[2]["error"]
            .as_str()
            .unwrap()
            .contains("error sending request")
    );
    assert_eq!(endpoints[2]["versions"], serde_json::json!([]));
    assert_eq!(v["common"], Value::Null);
    assert!(
        v["common_error"]
            .as_str()
            .unwrap()
            .starts_with("no common version: "),
        "{}",
        v["common_error"]
    );
}

// --- request ---

#[test]
fn request_prints_status_headers_and_body_with_include() {
    let server = API_SIG.start();
    let r = run(&[
        "request",
        "-i",
        &url(&server, "/widgets"),
        "--service-type",
        "placement",
    ]);
    assert_eq!(r.code, 0, "{r:?}");
    let (head, body) = r
        .stdout
        .split_once("\n\n")
        .expect("a blank line after the headers");
    let mut lines = head.lines();
    assert_eq!(lines.next(), Some("HTTP/1.1 200 OK"));
    let headers: Vec<&str> = lines.collect();
    assert!(
        headers.contains(&"openstack-api-version: placement 1.39"),
        "{headers:?}"
    );
    assert!(
        headers.contains(&"content-type: application/json"),
        "{headers:?}"
    );
    let body: Value = serde_json::from_str(body).unwrap();
    assert_eq!(body["widgets"][0]["color"], "red");
    assert_eq!(
        r.stderr,
        "API version: placement 1.39 (latest by default; the server supports 1.0 - 1.39)\n"
    );
    assert_eq!(
        versions_sent(&server, "/widgets"),
        [Some("placement 1.39".to_owned())]
    );
}

#[test]
fn request_without_include_prints_the_body_only() {
    let server = API_SIG.start();
    let r = run(&[
        "request",
        &url(&server, "/widgets"),
        "--service-type",
        "placement",
        "--api-version",
        "1.0",
    ]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(r.stdout, r#"{"widgets":[{"id":1,"name":"sprocket"}]}"#);
    // 1.0 is the major without microversions: no header is sent.
    assert_eq!(versions_sent(&server, "/widgets"), [None]);
    assert!(
        r.stderr
            .starts_with("API version: no version header (1.0 from --api-version"),
        "{}",
        r.stderr
    );
}

#[test]
fn the_version_comes_from_the_environment() {
    let server = API_SIG.start();
    let cache = Scratch::new("env");
    let target = url(&server, "/widgets");
    let env = [("OS_PLACEMENT_API_VERSION", "1.2")];
    let r = run_with(
        &["request", &target, "--service-type", "placement"],
        &env,
        &cache,
    );
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stderr
            .contains("placement 1.2 (1.2 from OS_PLACEMENT_API_VERSION;"),
        "{}",
        r.stderr
    );
    // The option wins over the environment.
    let r = run_with(
        &[
            "request",
            &target,
            "--service-type",
            "placement",
            "--api-version",
            "1.5",
        ],
        &env,
        &cache,
    );
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(
        versions_sent(&server, "/widgets"),
        [
            Some("placement 1.2".to_owned()),
            Some("placement 1.5".to_owned())
        ]
    );
    // Dashes become underscores; the alias block-storage sends `volume`.
    let cinder = CINDER.start();
    let r = run_with(
        &[
            "request",
            &url(&cinder, "/v3/widgets"),
            "--service-type",
            "block-storage",
        ],
        &[("OS_BLOCK_STORAGE_API_VERSION", "3.latest")],
        &cache,
    );
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stderr
            .contains("volume 3.71 (3.latest from OS_BLOCK_STORAGE_API_VERSION;"),
        "{}",
        r.stderr
    );
    let sent = &cinder.log.to(&["/v3/widgets"])[0];
    assert_eq!(sent.headers["openstack-api-version"], "volume 3.71");
    assert_eq!(sent.headers["openstack-volume-microversion"], "3.71");
}

#[test]
fn invalid_versions_are_rejected_before_anything_is_sent() {
    let server = API_SIG.start();
    let target = url(&server, "/widgets");
    let cache = Scratch::new("invalid");
    for (args, env) in [
        (vec!["--api-version", "spam"], vec![]),
        (vec!["--api-version", "2.01"], vec![]),
        (vec![], vec![("OS_PLACEMENT_API_VERSION", "l33t")]),
        (vec![], vec![("OS_PLACEMENT_API_VERSION", "1.2.3.4.5")]),
    ] {
        let mut all = vec!["request", target.as_str(), "--service-type", "placement"];
        all.extend(&args);
        let r = run_with(&all, &env, &cache);
        assert_eq!(r.code, 2, "{all:?} {env:?}: {r:?}");
        assert!(r.stderr.contains("invalid version \""), "{}", r.stderr);
        assert!(
            r.stderr.contains("expected X.Y, X.latest or latest"),
            "{}",
            r.stderr
        );
        assert!(r.stdout.is_empty());
    }
    let r = run_with(
        &["request", &target, "--service-type", "placement"],
        &[("OS_PLACEMENT_API_VERSION", "spam")],
        &cache,
    );
    assert_eq!(
        r.stderr,
        "microversion: error: invalid OS_PLACEMENT_API_VERSION: invalid version \"spam\": expected X.Y, X.latest or latest (or None for no microversion)\n"
    );
    assert_eq!(server.log.len(), 0, "{:?}", server.log.all());
}

#[test]
fn versions_the_server_lacks_fail_after_discovery_only() {
    let server = API_SIG.start();
    let r = run(&[
        "request",
        &url(&server, "/widgets"),
        "--service-type",
        "placement",
        "--api-version",
        "1.50",
    ]);
    assert_eq!(r.code, 2, "{r:?}");
    assert_eq!(
        r.stderr,
        format!(
            "microversion: error: version 1.50 is not supported by {} (it supports 1.0 - 1.39)\n",
            server.url
        )
    );
    assert_eq!(server.log.to(&["/widgets"]).len(), 0);
    assert_eq!(server.log.to(&["/"]).len(), 1);
}

#[test]
fn request_needs_a_service_type_for_a_microversion() {
    let server = API_SIG.start();
    let r = run(&["request", &url(&server, "/widgets")]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .contains("version latest (by default) needs --service-type"),
        "{}",
        r.stderr
    );
    assert_eq!(server.log.len(), 0);
    // None sends nothing to negotiate: the headers go as given.
    let r = run(&[
        "request",
        &url(&server, "/widgets"),
        "--api-version",
        "None",
        "-H",
        "OpenStack-API-Version: placement 1.7",
    ]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(
        versions_sent(&server, "/widgets"),
        [Some("placement 1.7".to_owned())]
    );
    assert_eq!(
        r.stderr,
        "API version: no version header (None from --api-version)\n"
    );
    // With a microversion, the version headers are the client's.
    let r = run(&[
        "request",
        &url(&server, "/widgets"),
        "--service-type",
        "placement",
        "-H",
        "openstack-api-version: placement 1.7",
    ]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("the version headers are negotiated"),
        "{}",
        r.stderr
    );
    assert_eq!(server.log.len(), 1);
}

#[test]
fn request_sends_bodies_methods_headers_and_tokens() {
    let server = API_SIG.start();
    let target = url(&server, "/widgets");
    let r = run(&[
        "request",
        &target,
        "--service-type",
        "placement",
        "-d",
        r#"{"name": "gear"}"#,
        "-H",
        "X-Trace: on",
        "--token",
        "s3cret",
    ]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(r.stdout, r#"{"id":2,"name":"gear"}"#);
    let scratch = Scratch::new("body");
    let file = scratch.join("body.json");
    std::fs::write(&file, r#"{"name": "cog"}"#).unwrap();
    let data = format!("@{}", file.display());
    let r = run(&[
        "request",
        "-i",
        "-X",
        "post",
        &target,
        "--service-type",
        "placement",
        "--api-version",
        "1.1",
        "-d",
        &data,
    ]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stdout.starts_with("HTTP/1.1 201 Created\n"),
        "{}",
        r.stdout
    );
    let posts: Vec<SeenRequest> = server.log.to(&["/widgets"]);
    assert_eq!(posts.len(), 2);
    assert!(
        posts
            .iter()
            .all(|p| p.method == "POST" && p.headers["content-type"] == "application/json")
    );
    assert_eq!(posts[0].headers["x-trace"], "on");
    assert_eq!(posts[0].headers["x-auth-token"], "s3cret");
    let r = run(&[
        "request",
        &target,
        "--service-type",
        "placement",
        "-d",
        "@/nonexistent/body.json",
    ]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .contains("cannot read the body from /nonexistent/body.json"),
        "{}",
        r.stderr
    );
    let r = run(&[
        "request",
        &target,
        "--service-type",
        "placement",
        "-H",
        "no colon",
    ]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("expected \"Name: value\""),
        "{}",
        r.stderr
    );
}

#[test]
fn request_reads_the_body_from_standard_input() {
    use std::io::Write;
    use std::process::Stdio;

    let server = API_SIG.start();
    let cache = Scratch::new("stdin");
    let mut child = Command::new(env!("CARGO_BIN_EXE_microversion"))
        .args([
            "request",
            &url(&server, "/widgets"),
            "--service-type",
            "placement",
            "--no-cache",
            "-d",
            "@-",
        ])
        .env("XDG_CACHE_HOME", cache.path())
        .env_remove("http_proxy")
        .env_remove("HTTP_PROXY")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(br#"{"name": "from stdin"}"#)
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        r#"{"id":2,"name":"from stdin"}"#
    );
}

#[test]
fn fail_turns_an_error_status_into_exit_1() {
    let server = API_SIG.start();
    let missing = url(&server, "/nothing-here");
    let r = run(&["request", &missing, "--service-type", "placement"]);
    assert_eq!(r.code, 0, "{r:?}");
    let body: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(body["errors"][0]["status"], 404);
    let r = run(&["request", &missing, "--service-type", "placement", "--fail"]);
    assert_eq!(r.code, 1, "{r:?}");
    let r = run(&[
        "request",
        &url(&server, "/widgets"),
        "--service-type",
        "placement",
        "--fail",
    ]);
    assert_eq!(r.code, 0, "{r:?}");
}

#[test]
fn request_to_a_dead_server_is_a_connection_error() {
    let r = run(&[
        "request",
        &format!("{}widgets", common::dead_url()),
        "--service-type",
        "placement",
    ]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .starts_with("microversion: error: placement at http://127.0.0.1:"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("onnection refused"), "{}", r.stderr);
}

// --- The negotiation cache ---

#[test]
fn the_cache_is_written_under_xdg_cache_home_and_reused() {
    let server = API_SIG.start();
    let cache = Scratch::new("cache");
    let target = url(&server, "/widgets");
    for _ in 0..2 {
        let r = run_with(
            &["request", &target, "--service-type", "placement"],
            &[],
            &cache,
        );
        assert_eq!(r.code, 0, "{r:?}");
    }
    // One discovery for two requests.
    assert_eq!(server.log.to(&["/"]).len(), 1);
    assert_eq!(server.log.to(&["/widgets"]).len(), 2);
    let dir = cache.join("xdg").join("microversion");
    let files: Vec<_> = std::fs::read_dir(&dir)
        .expect("the cache directory")
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let text = std::fs::read_to_string(files[0].as_ref().unwrap().path()).unwrap();
    let record: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(record["endpoint"], server.url.trim_end_matches('/'));
    assert_eq!(record["max_version"], "1.39");
    assert!(
        !cache.join("home").exists(),
        "nothing under HOME when XDG_CACHE_HOME is set"
    );
}

#[test]
fn without_xdg_cache_home_the_cache_is_under_home() {
    let server = API_SIG.start();
    let cache = Scratch::new("home");
    let r = run_with(
        &[
            "request",
            &url(&server, "/widgets"),
            "--service-type",
            "placement",
        ],
        &[("XDG_CACHE_HOME", "")],
        &cache,
    );
    assert_eq!(r.code, 0, "{r:?}");
    let dir = cache.join("home").join(".cache").join("microversion");
    assert_eq!(
        std::fs::read_dir(&dir)
            .expect("~/.cache/microversion")
            .count(),
        1
    );
}

#[test]
fn no_cache_neither_reads_nor_writes_it() {
    let server = API_SIG.start();
    let cache = Scratch::new("nocache");
    let target = url(&server, "/widgets");
    for _ in 0..2 {
        let r = run_with(
            &[
                "request",
                &target,
                "--service-type",
                "placement",
                "--no-cache",
            ],
            &[],
            &cache,
        );
        assert_eq!(r.code, 0, "{r:?}");
    }
    assert_eq!(server.log.to(&["/"]).len(), 2);
    assert!(!cache.join("xdg").exists());
    // A cache written before is not read either.
    let r = run_with(
        &["request", &target, "--service-type", "placement"],
        &[],
        &cache,
    );
    assert_eq!(r.code, 0);
    assert_eq!(server.log.to(&["/"]).len(), 3);
    let r = run_with(
        &[
            "request",
            &target,
            "--service-type",
            "placement",
            "--no-cache",
        ],
        &[],
        &cache,
    );
    assert_eq!(r.code, 0);
    assert_eq!(server.log.to(&["/"]).len(), 4);
}

// --- check ---

#[test]
fn check_passes_a_conforming_server_and_fails_a_broken_one() {
    let good = API_SIG.start();
    let r = run(&[
        "check",
        &good.url,
        "--service-type",
        "placement",
        "--profile",
        "api-sig",
        "--path",
        "/widgets",
    ]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert!(r.stdout.starts_with(&format!("Checking placement at {}, versioned path {}widgets, judged against the api-sig profile\nRange: 1.0 - 1.39, from the versions document", good.url, good.url)), "{}", r.stdout);
    assert!(r.stdout.contains("\nSTATUS  RULE  CHECK"), "{}", r.stdout);
    assert!(
        r.stdout.contains(" failed, 0 warnings, 0 skipped\n"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains(" 0 failed"), "{}", r.stdout);
    let broken = API_SIG.start_broken(Fault::NoVary);
    let r = run(&["check", &broken.url, "--service-type", "placement"]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    let vary = r
        .stdout
        .lines()
        .find(|l| l.contains("Vary (default)"))
        .expect("a Vary row");
    assert!(vary.starts_with("FAIL    9     Vary (default)"), "{vary}");
    assert!(vary.contains("no Vary header"), "{vary}");
}

#[test]
fn check_json_shape() {
    let broken = API_SIG.start_broken(Fault::OkInsteadOf406);
    let r = run(&[
        "check",
        &broken.url,
        "--service-type",
        "placement",
        "-f",
        "json",
    ]);
    assert_eq!(r.code, 1, "{r:?}");
    let v: Value = serde_json::from_str(&r.stdout).expect("JSON");
    assert_eq!(v["endpoint"], broken.url.as_str());
    assert_eq!(v["service_type"], "placement");
    assert_eq!(v["judge"], "wire.md");
    assert_eq!(v["range"]["min_version"], "1.0");
    assert_eq!(v["range"]["max_version"], "1.39");
    let checks = v["checks"].as_array().unwrap();
    let summary = &v["summary"];
    let count = |s: &str| checks.iter().filter(|c| c["status"] == s).count();
    for (key, status) in [
        ("pass", "PASS"),
        ("fail", "FAIL"),
        ("warn", "WARN"),
        ("skip", "SKIP"),
    ] {
        assert_eq!(summary[key], count(status), "{key}");
    }
    for c in checks {
        let mut keys: Vec<&String> = c.as_object().unwrap().keys().collect();
        keys.sort();
        assert_eq!(keys, ["expected", "id", "rule", "seen", "status", "title"]);
        assert!((1..=13).contains(&c["rule"].as_u64().unwrap()));
    }
    let above = checks.iter().find(|c| c["id"] == "above-max").unwrap();
    assert_eq!(above["status"], "FAIL");
    assert_eq!(above["rule"], 6);
    assert_eq!(above["seen"], "200 OK");
    assert_eq!(above["expected"], "406 Not Acceptable (wire.md)");
}

#[test]
fn check_junit_is_well_formed() {
    let broken = common::NOVA.start_broken(Fault::LegacyWins);
    let r = run(&[
        "check",
        &broken.url,
        "--service-type",
        "compute",
        "--profile",
        "nova",
        "--path",
        "/v2.1/widgets",
        "-f",
        "junit",
    ]);
    assert_eq!(r.code, 1, "{r:?}");
    let doc = roxmltree::Document::parse(&r.stdout).expect("well-formed XML");
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "testsuites");
    let suite = root
        .children()
        .find(|n| n.has_tag_name("testsuite"))
        .expect("a test suite");
    let cases: Vec<_> = suite
        .children()
        .filter(|n| n.has_tag_name("testcase"))
        .collect();
    let attr = |name| suite.attribute(name).unwrap().parse::<usize>().unwrap();
    assert_eq!(attr("tests"), cases.len());
    let failures: Vec<_> = cases
        .iter()
        .filter(|c| c.children().any(|n| n.has_tag_name("failure")))
        .collect();
    assert_eq!(attr("failures"), failures.len());
    assert!(!failures.is_empty());
    let legacy = cases
        .iter()
        .find(|c| {
            c.attribute("name")
                .unwrap()
                .ends_with("[legacy-standard-wins]")
        })
        .expect("the legacy case");
    assert_eq!(legacy.attribute("classname"), Some("wire.md.rule-07"));
    let failure = legacy
        .children()
        .find(|n| n.has_tag_name("failure"))
        .expect("it failed");
    assert!(
        failure.text().unwrap().contains("expected: version 2.104"),
        "{:?}",
        failure.text()
    );
    let judge = suite
        .descendants()
        .find(|n| n.has_tag_name("property") && n.attribute("name") == Some("judge"))
        .unwrap();
    assert_eq!(judge.attribute("value"), Some("the nova profile"));
}

#[test]
fn check_of_a_dead_server_is_a_connection_error() {
    let r = run(&["check", &common::dead_url(), "--service-type", "placement"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stdout.is_empty());
    assert!(
        r.stderr
            .starts_with("microversion: error: cannot reach http://127.0.0.1:"),
        "{}",
        r.stderr
    );
}

/// `microversion diff`: two versions of a live server's documents, and
/// two document files.
#[test]
fn diff_lists_what_differs_and_what_breaks() {
    use http::StatusCode;
    use microversion::{Change, VersionRange};
    use microversion_server::openapi::{
        ApiDescription, DOCUMENTS_PATH, Documents, OperationDoc, ResponseDoc,
    };
    use microversion_server::{Microversions, VersionedRouter};
    use serde_json::json;

    const INITIAL: Change = Change::new("1.0", "Initial version.");
    const GADGETS: Change = Change::new("1.1", "Adds GET /gadgets; widgets lose their title.");

    let api = Microversions::builder("widgets", VersionRange::from_static("1.0", "1.1"))
        .build()
        .unwrap();
    let router = VersionedRouter::<()>::new()
        .get("/widgets", INITIAL.since(), || async { "[]" })
        .get("/gadgets", GADGETS.since(), || async { "[]" });
    let widget = |titled: bool| {
        let mut properties = json!({"id": {"type": "integer"}});
        if titled {
            properties["title"] = json!({"type": "string"});
        }
        ResponseDoc::json(
            "The widgets",
            json!({"type": "object", "properties": properties}),
        )
    };
    let description = ApiDescription::builder(&api)
        .routes(&router)
        .operation(
            OperationDoc::get("/widgets")
                .response(INITIAL.until(GADGETS), StatusCode::OK, widget(true))
                .response(GADGETS.since(), StatusCode::OK, widget(false)),
        )
        .operation(OperationDoc::get("/gadgets").response(
            GADGETS.since(),
            StatusCode::OK,
            ResponseDoc::json("The gadgets", json!({"type": "array"})),
        ))
        .build()
        .unwrap();
    let server = common::start(Documents::new(description.clone(), &api).router(DOCUMENTS_PATH));

    let out = run(&["diff", "--url", &server.url, "1.0", "1.1"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(
        out.stdout,
        "+ GET /gadgets added\n\
         - GET /widgets: 200 response body `title` removed  [breaks clients of OLD]\n\
         2 differences from 1.0 to 1.1; 1 breaks clients of 1.0\n"
    );
    let same = run(&["diff", "--url", &server.url, "1.1", "latest"]);
    assert_eq!(
        (same.code, same.stdout.as_str()),
        (0, "1.1 and latest describe the same API\n")
    );

    let scratch = Scratch::new("diff");
    let file = |name: &str, version: u32| {
        let path = scratch.join(name);
        let document = description.at(Version::new(1, version)).unwrap().to_value();
        std::fs::write(&path, document.to_string()).unwrap();
        path.to_string_lossy().into_owned()
    };
    let (old, new) = (file("old.json", 0), file("new.json", 1));
    let json_out = run(&["diff", "-f", "json", &old, &new]);
    assert_eq!(json_out.code, 1);
    let listed: Value = serde_json::from_str(&json_out.stdout).unwrap();
    assert_eq!(listed[1]["operation"], "GET /widgets");
    assert_eq!(listed[1]["part"], "200 response body `title`");
    assert_eq!(listed[1]["change"], "removed");
    assert_eq!(listed[1]["breaking"], true);

    let bad = scratch.join("bad.json");
    std::fs::write(&bad, "{\"not\": \"openapi\"}").unwrap();
    let refused = run(&["diff", &old, &bad.to_string_lossy()]);
    assert_eq!(refused.code, 2);
    assert!(
        refused
            .stderr
            .contains("is not an OpenAPI document: it has no \"openapi\" and \"paths\""),
        "{}",
        refused.stderr
    );
}
