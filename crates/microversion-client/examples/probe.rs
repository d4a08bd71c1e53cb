//! Runs the client against live microversioned services and reports what
//! happened, check by check. `scripts/interop-client.sh` runs it against
//! the real Placement, Nova and Ironic.
//!
//! ```text
//! cargo run -p microversion-client --example probe -- \
//!     [--token TOKEN] SERVICE_TYPE=ENDPOINT=PATH...
//! ```
//!
//! For example `placement=http://127.0.0.1:8778=resource_providers`. For
//! each target it checks discovery, `latest`, an exact version, a version
//! above the server's maximum, the optimistic (406-driven) mode, the mode
//! without negotiation, `require`, and the disk cache; then it probes all
//! endpoints together. It prints one line per check and exits with 1 if
//! any check did not give the expected result.

use std::process::ExitCode;

use microversion::{NegotiationError, ServerVersions, Version, VersionRange};
use microversion_client::{Client, DiskCache, NegotiationMode, Probe};

struct Target {
    service_type: String,
    endpoint: String,
    path: String,
}

#[derive(Default)]
struct Report {
    failed: usize,
}

impl Report {
    fn check(&mut self, ok: bool, what: &str, detail: impl std::fmt::Display) {
        if !ok {
            self.failed += 1;
        }
        println!("[{}] {what}: {detail}", if ok { " ok " } else { "FAIL" });
    }
}

/// A version for the report: `1.39`, or `none`.
fn show(version: Option<Version>) -> String {
    version.map_or_else(|| "none".to_owned(), |v| v.to_string())
}

fn usage() -> ExitCode {
    eprintln!("usage: probe [--token TOKEN] SERVICE_TYPE=ENDPOINT=PATH...");
    ExitCode::from(2)
}

#[tokio::main]
async fn main() -> ExitCode {
    // `RUST_LOG=microversion_client=debug` shows discovery and how each 406
    // was handled.
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .init();
    let mut args = std::env::args().skip(1);
    let mut token = None;
    let mut targets = Vec::new();
    while let Some(arg) = args.next() {
        if arg == "--token" {
            token = args.next();
            continue;
        }
        let mut parts = arg.splitn(3, '=');
        match (parts.next(), parts.next(), parts.next()) {
            (Some(service_type), Some(endpoint), Some(path)) => targets.push(Target {
                service_type: service_type.to_owned(),
                endpoint: endpoint.to_owned(),
                path: path.to_owned(),
            }),
            _ => return usage(),
        }
    }
    if targets.is_empty() {
        return usage();
    }
    let mut report = Report::default();
    for target in &targets {
        println!("== {} at {}", target.service_type, target.endpoint);
        run(target, token.as_deref(), &mut report).await;
    }
    println!("== probe of every endpoint");
    let mut probe = Probe::new().endpoints(targets.iter().map(|t| &t.endpoint));
    if let Some(token) = &token {
        probe = probe.header("x-auth-token", token);
    }
    match probe.run().await {
        Ok(found) => {
            for endpoint in found.endpoints() {
                let versions = match endpoint.versions() {
                    Some(ServerVersions::Microversions(range)) => range.to_string(),
                    Some(ServerVersions::Unversioned) => "no microversions".to_owned(),
                    None => "failed".to_owned(),
                };
                report.check(
                    endpoint.versions().is_some(),
                    "probe",
                    format!("{} -> {versions}", endpoint.endpoint()),
                );
            }
            match found.common() {
                Ok(range) => report.check(true, "common range", range),
                // Different services have different ranges: expected.
                Err(e) => report.check(e.is_no_common_version(), "common range", e),
            }
        }
        Err(e) => report.check(false, "probe", e),
    }
    if report.failed == 0 {
        println!("all checks passed");
        ExitCode::SUCCESS
    } else {
        println!("{} check(s) failed", report.failed);
        ExitCode::FAILURE
    }
}

/// Case 2 of the negotiation list: an endpoint without microversions.
async fn run_unversioned(
    target: &Target,
    token: Option<&str>,
    discovery: &microversion_client::Discovery,
    report: &mut Report,
) {
    let Some(major) = discovery.major() else {
        return report.check(false, "discovery", "no major version in the document");
    };
    report.check(
        true,
        "discovery",
        format!(
            "{} from {} (chosen by {}): no microversions",
            discovery.selected().id,
            discovery.document_url(),
            discovery.matched_by()
        ),
    );
    let Ok(range) = VersionRange::new(Version::new(major, 0), Version::new(major, 200)) else {
        return report.check(false, "range", major);
    };
    let c = match client(target, token, range, NegotiationMode::Discovery) {
        Ok(c) => c,
        Err(e) => return report.check(false, "client", e),
    };
    match c.get(&target.path).version("latest").send().await {
        Ok(res) => report.check(
            res.status().is_success()
                && res.sent_version().is_none()
                && res.version() == Some(Version::new(major, 0)),
            "latest falls back to X.0",
            format!(
                "sent {}, served {}, status {}",
                show(res.sent_version()),
                show(res.version()),
                res.status()
            ),
        ),
        Err(e) => report.check(false, "latest falls back to X.0", e),
    }
    match c
        .get(&target.path)
        .version(Version::new(major, 0))
        .send()
        .await
    {
        Ok(res) => report.check(
            res.status().is_success() && res.sent_version().is_none(),
            "X.0 without a header",
            format!("status {}", res.status()),
        ),
        Err(e) => report.check(false, "X.0 without a header", e),
    }
    match c
        .get(&target.path)
        .version(Version::new(major, 1))
        .send()
        .await
    {
        Err(e) => report.check(
            matches!(
                e.negotiation(),
                Some(NegotiationError::ServerUnversioned { .. })
            ),
            "an explicit X.Y",
            e,
        ),
        Ok(res) => report.check(false, "an explicit X.Y", res.status()),
    }
}

fn client(
    target: &Target,
    token: Option<&str>,
    supported: VersionRange,
    mode: NegotiationMode,
) -> Result<Client, microversion_client::Error> {
    client_with(target, token, supported, mode, None)
}

fn client_with(
    target: &Target,
    token: Option<&str>,
    supported: VersionRange,
    mode: NegotiationMode,
    disk: Option<DiskCache>,
) -> Result<Client, microversion_client::Error> {
    let mut builder = Client::builder()
        .endpoint(&target.endpoint)
        .service_type(&target.service_type)
        .supported_versions(supported)
        .negotiation(mode)
        .timeout(std::time::Duration::from_secs(30));
    if let Some(token) = token {
        builder = builder.header("x-auth-token", token);
    }
    if let Some(disk) = disk {
        builder = builder.disk_cache(disk);
    }
    builder.build()
}

async fn run(target: &Target, token: Option<&str>, report: &mut Report) {
    // Any version: discovery alone does not depend on the client's range.
    let Ok(any) = VersionRange::new(Version::new(1, 0), Version::MAX) else {
        return report.check(false, "range", "1.0 - MAX");
    };
    // 1. Discovery.
    let discovering = match client(target, token, any, NegotiationMode::Discovery) {
        Ok(c) => c,
        Err(e) => return report.check(false, "client", e),
    };
    let discovery = match discovering.discover().await {
        Ok(d) => d,
        Err(e) => return report.check(false, "discovery", e),
    };
    for entry in discovery.entries() {
        println!(
            "       entry {} {} min={} max={} self={}",
            entry.id,
            entry.status,
            entry.min_version.map(|v| v.to_string()).unwrap_or_default(),
            entry.max_version.map(|v| v.to_string()).unwrap_or_default(),
            entry.self_link().unwrap_or("-"),
        );
    }
    let ServerVersions::Microversions(server) = discovery.server_versions() else {
        return run_unversioned(target, token, &discovery, report).await;
    };
    report.check(
        true,
        "discovery",
        format!(
            "{} from {} (chosen by {}): {server}",
            discovery.selected().id,
            discovery.document_url(),
            discovery.matched_by()
        ),
    );
    let (smin, smax) = (server.min(), server.max());
    let major = smax.major();
    let above = Version::new(major, smax.minor() + 1);
    let client_range = VersionRange::new(
        Version::new(major, 0),
        Version::new(major, smax.minor() + 5),
    )
    .unwrap_or(server);

    // 2. latest, with discovery.
    match client(target, token, client_range, NegotiationMode::Discovery) {
        Ok(c) => {
            let c_latest = c.clone();
            match c_latest.get(&target.path).version("latest").send().await {
                Ok(res) => report.check(
                    res.status().is_success() && res.version() == Some(smax),
                    "latest (discovery)",
                    format!(
                        "sent {}, served {}, status {}",
                        show(res.sent_version()),
                        show(res.version()),
                        res.status()
                    ),
                ),
                Err(e) => report.check(false, "latest (discovery)", e),
            }
            // 3. An exact version inside both ranges.
            let middle = Version::new(major, (smin.minor() + smax.minor()) / 2);
            match c.get(&target.path).version(middle).send().await {
                Ok(res) => report.check(
                    res.version() == Some(middle),
                    "exact version",
                    format!(
                        "sent {middle}, served {}, status {}",
                        show(res.version()),
                        res.status()
                    ),
                ),
                Err(e) => report.check(false, "exact version", e),
            }
            // 4. Above the server: refused before sending, naming both.
            match c.get(&target.path).version(above).send().await {
                Err(e) => report.check(
                    matches!(
                        e.negotiation(),
                        Some(NegotiationError::OutsideServerRange { .. })
                    ),
                    "above the server's maximum",
                    e,
                ),
                Ok(res) => report.check(
                    false,
                    "above the server's maximum",
                    format!("unexpectedly sent: {}", res.status()),
                ),
            }
            // 7. require
            match c.require(above).await {
                Err(e) if e.is_gate() => report.check(true, "require above", e),
                other => report.check(false, "require above", format!("{other:?}")),
            }
        }
        Err(e) => report.check(false, "client", e),
    }

    // 5. The optimistic mode: the client's maximum, a 406, one retry.
    match client(target, token, client_range, NegotiationMode::Optimistic) {
        Ok(c) => {
            match c.get(&target.path).version("latest").send().await {
                Ok(res) => report.check(
                    res.attempts() == 2 && res.version() == Some(smax),
                    "latest (optimistic)",
                    format!(
                        "first sent {}, got 406, retried with {}: served {} after {} attempts",
                        client_range.max(),
                        show(res.sent_version()),
                        show(res.version()),
                        res.attempts()
                    ),
                ),
                Err(e) => report.check(false, "latest (optimistic)", e),
            }
            match c.get(&target.path).version("latest").send().await {
                Ok(res) => report.check(
                    res.attempts() == 1,
                    "latest (optimistic, remembered)",
                    format!(
                        "sent {} in {} attempt",
                        show(res.sent_version()),
                        res.attempts()
                    ),
                ),
                Err(e) => report.check(false, "latest (optimistic, remembered)", e),
            }
        }
        Err(e) => report.check(false, "client", e),
    }
    match client(target, token, client_range, NegotiationMode::Optimistic) {
        Ok(c) => match c.get(&target.path).version(above).send().await {
            Err(e) => report.check(
                matches!(
                    e.negotiation(),
                    Some(NegotiationError::OutsideServerRange { .. })
                ),
                "exact above (optimistic: 406, never downgraded)",
                e,
            ),
            Ok(res) => report.check(false, "exact above (optimistic)", res.status()),
        },
        Err(e) => report.check(false, "client", e),
    }

    // 6. Without negotiation: the server's maximum as asked.
    match client(target, token, server, NegotiationMode::Off) {
        Ok(c) => match c.get(&target.path).version("latest").send().await {
            Ok(res) => report.check(
                res.version() == Some(smax),
                "latest (no negotiation)",
                format!(
                    "sent {}, served {}",
                    show(res.sent_version()),
                    show(res.version())
                ),
            ),
            Err(e) => report.check(false, "latest (no negotiation)", e),
        },
        Err(e) => report.check(false, "client", e),
    }

    // 8. The disk cache: one client writes, another reads. The reader is
    // optimistic, a mode that never discovers on its own: what it knows
    // after `version()` came from the file.
    let dir = std::env::temp_dir().join(format!("microversion-probe-{}", std::process::id()));
    let disk = DiskCache::new(&dir);
    let writer = client_with(
        target,
        token,
        client_range,
        NegotiationMode::Discovery,
        Some(disk.clone()),
    );
    let reader = client_with(
        target,
        token,
        client_range,
        NegotiationMode::Optimistic,
        Some(disk.clone()),
    );
    match (writer, reader) {
        (Ok(writer), Ok(reader)) => {
            let wrote = writer.server_versions().await.is_ok();
            let path = disk.path_for(writer.endpoint());
            let read = reader.version().await.is_ok()
                && reader.known_server_versions() == Some(ServerVersions::Microversions(server));
            report.check(
                wrote && read && path.exists(),
                "disk cache",
                format!("written and read back: {}", path.display()),
            );
        }
        (Err(e), _) | (_, Err(e)) => report.check(false, "client", e),
    }
    let _ = std::fs::remove_dir_all(&dir);
}
