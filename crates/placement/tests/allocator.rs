//! `placement-api` allocates through jemalloc with the settings built in
//! from `.cargo/config.toml` (its peak memory under load depends on them:
//! docs/decisions.md), and `_RJEM_MALLOC_CONF` overrides them when
//! the process starts (crates/placement/README.md). jemalloc lists the
//! options in force when asked to print its statistics at exit.
#![cfg(feature = "jemalloc")]

use std::process::Command;

/// The options jemalloc reports for `placement-api --version` run with
/// `_RJEM_MALLOC_CONF=conf`.
fn options_in_force(conf: &str) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_placement-api"))
        .arg("--version")
        .env("_RJEM_MALLOC_CONF", conf)
        .output()
        .expect("placement-api runs");
    assert!(out.status.success(), "{out:?}");
    let report = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        report.contains("___ Begin jemalloc statistics ___"),
        "no jemalloc statistics: is placement-api built with jemalloc? {report}"
    );
    report
}

/// `option: value` is among the options reported (alone on its line, or
/// followed by the value's source in parentheses).
fn assert_option(report: &str, option: &str) {
    assert!(
        report.lines().map(str::trim).any(|l| l == option
            || l.strip_prefix(option)
                .is_some_and(|rest| rest.starts_with(" ("))),
        "jemalloc does not report `{option}`:\n{report}"
    );
}

#[test]
fn the_built_in_settings_are_in_force() {
    let report = options_in_force("stats_print:true");
    for option in [
        "opt.background_thread: true",
        "opt.narenas: 1",
        "opt.tcache_max: 1024",
        "opt.dirty_decay_ms: 1000",
        "opt.muzzy_decay_ms: 0",
    ] {
        assert_option(&report, option);
    }
}

#[test]
fn the_environment_overrides_one_setting_and_keeps_the_others() {
    let report = options_in_force("stats_print:true,narenas:4");
    assert_option(&report, "opt.narenas: 4");
    assert_option(&report, "opt.tcache_max: 1024");
    assert_option(&report, "opt.background_thread: true");
}
